"""Game transcripts: the ``leakage.transcript/1`` models, loading, and third-party adapters."""

from leakage.transcripts._files import iter_transcripts, load_transcripts
from leakage.transcripts._limits import ReadLimits
from leakage.transcripts._load import (
    AnyTranscript,
    convert_record,
    input_formats,
    parse_transcript,
)
from leakage.transcripts._models import (
    MAX_META_DEPTH,
    TRANSCRIPT_FORMAT,
    ChameleonTranscript,
    Elimination,
    Player,
    SpyGameTranscript,
    SpyWords,
    Transcript,
    Turn,
    Vote,
    pair_key,
    transcript_json_schema,
)

__all__ = [
    "MAX_META_DEPTH",
    "TRANSCRIPT_FORMAT",
    "AnyTranscript",
    "ChameleonTranscript",
    "Elimination",
    "Player",
    "ReadLimits",
    "SpyGameTranscript",
    "SpyWords",
    "Transcript",
    "Turn",
    "Vote",
    "convert_record",
    "input_formats",
    "iter_transcripts",
    "load_transcripts",
    "pair_key",
    "parse_transcript",
    "transcript_json_schema",
]
