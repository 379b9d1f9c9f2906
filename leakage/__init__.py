"""leakage: how much each clue in an LLM word game reveals the secret.

Data flows one way: transcript -> (adapter) -> game model -> backend matrix -> posterior
engine -> report. The names below are the public API; everything else is private.
"""

from leakage.backends import LikelihoodBackend, backend_names, create_backend, register_backend
from leakage.errors import LeakageError
from leakage.posterior import Trace, posterior_trace, spy_posterior
from leakage.reports import Report, Step, Summary
from leakage.scoring import ScoreOptions, score_many, score_transcript
from leakage.transcripts import (
    ChameleonTranscript,
    SpyGameTranscript,
    load_transcripts,
    parse_transcript,
)

__version__ = "0.1.0"

__all__ = [
    "ChameleonTranscript",
    "LeakageError",
    "LikelihoodBackend",
    "Report",
    "ScoreOptions",
    "SpyGameTranscript",
    "Step",
    "Summary",
    "Trace",
    "__version__",
    "backend_names",
    "create_backend",
    "load_transcripts",
    "parse_transcript",
    "posterior_trace",
    "register_backend",
    "score_many",
    "score_transcript",
    "spy_posterior",
]
