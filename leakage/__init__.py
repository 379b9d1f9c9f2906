"""leakage: how much each clue in an LLM word game reveals the secret.

Data flows one way: transcript -> (adapter) -> game model -> backend matrix -> posterior
engine -> report. The names below are the public API; everything else is private.

Importing the package is cheap: each name is imported from its module on first use (PEP 562),
so that ``leakage guess`` and ``leakage --help`` do not load numpy, pydantic and the backends
they do not need. ``from leakage import X`` gives the same object as before.
"""

from typing import TYPE_CHECKING

from leakage.errors import LeakageError

__version__ = "0.1.0"

# name -> the module it is imported from on first use.
_LAZY = {
    "LikelihoodBackend": "leakage.backends",
    "backend_names": "leakage.backends",
    "create_backend": "leakage.backends",
    "register_backend": "leakage.backends",
    "Paths": "leakage.paths",
    "SpyTrace": "leakage.posterior",
    "Trace": "leakage.posterior",
    "posterior_trace": "leakage.posterior",
    "spy_posterior": "leakage.posterior",
    "Report": "leakage.reports",
    "Step": "leakage.reports",
    "Summary": "leakage.reports",
    "ScoreOptions": "leakage.scoring",
    "score_many": "leakage.scoring",
    "score_transcript": "leakage.scoring",
    "ChameleonTranscript": "leakage.transcripts",
    "SpyGameTranscript": "leakage.transcripts",
    "load_transcripts": "leakage.transcripts",
    "parse_transcript": "leakage.transcripts",
}

__all__ = [
    "ChameleonTranscript",
    "LeakageError",
    "LikelihoodBackend",
    "Paths",
    "Report",
    "ScoreOptions",
    "SpyGameTranscript",
    "SpyTrace",
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

if TYPE_CHECKING:
    from leakage.backends import LikelihoodBackend, backend_names, create_backend, register_backend
    from leakage.paths import Paths
    from leakage.posterior import SpyTrace, Trace, posterior_trace, spy_posterior
    from leakage.reports import Report, Step, Summary
    from leakage.scoring import ScoreOptions, score_many, score_transcript
    from leakage.transcripts import (
        ChameleonTranscript,
        SpyGameTranscript,
        load_transcripts,
        parse_transcript,
    )
else:

    def __getattr__(name: str) -> object:
        if name in _LAZY:
            import importlib

            value = getattr(importlib.import_module(_LAZY[name]), name)
            globals()[name] = value  # later look-ups skip this function
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
