"""Keyword difficulty partitioner (Gu et al.): word pairs cut into hard / medium / easy.

Each word of a pair is described in two or three sentences (WordNet offline by default, a
file, later an LLM), the descriptions are embedded, and the pairs are ranked by the cosine
similarity of their two descriptions: the most similar pairs are the hardest to tell apart.
``build_splits`` does the work and ``write_splits`` writes it; ``leakage splits build`` is
the command. ``read_split`` reads the split files back (``leakage play spygame
--pairs-from``). Importing this package imports neither torch nor matplotlib.
"""

from leakage.splits._build import (
    FORMAT,
    Duplicate,
    SampleInfo,
    SimilarityStats,
    SplitResult,
    SplitSummary,
    UnknownWords,
    build_splits,
)
from leakage.splits._describers import (
    DESCRIBERS,
    DESCRIPTION_PROMPT,
    CachedDescriber,
    Describer,
    FileDescriber,
    LLMDescriber,
    VersionedDescriber,
    create_describer,
    default_description_cache_path,
    describer_options,
)
from leakage.splits._output import write_histogram, write_splits
from leakage.splits._pairs import KNOWN_COLUMNS, LIST_COLUMNS, Pair, PairTable, read_pairs
from leakage.splits._partition import (
    GU_EASY_BELOW,
    GU_HARD_ABOVE,
    METHODS,
    SPLITS,
    order,
    sample,
    tercile_sizes,
    terciles,
    thresholds,
)
from leakage.splits._read import SplitPair, draw_pairs, read_split
from leakage.splits._wordnet import WordNetDescriber

__all__ = [
    "DESCRIBERS",
    "DESCRIPTION_PROMPT",
    "FORMAT",
    "GU_EASY_BELOW",
    "GU_HARD_ABOVE",
    "KNOWN_COLUMNS",
    "LIST_COLUMNS",
    "METHODS",
    "SPLITS",
    "CachedDescriber",
    "Describer",
    "Duplicate",
    "FileDescriber",
    "LLMDescriber",
    "Pair",
    "PairTable",
    "SampleInfo",
    "SimilarityStats",
    "SplitPair",
    "SplitResult",
    "SplitSummary",
    "UnknownWords",
    "VersionedDescriber",
    "WordNetDescriber",
    "build_splits",
    "create_describer",
    "default_description_cache_path",
    "describer_options",
    "draw_pairs",
    "order",
    "read_pairs",
    "read_split",
    "sample",
    "tercile_sizes",
    "terciles",
    "thresholds",
    "write_histogram",
    "write_splits",
]
