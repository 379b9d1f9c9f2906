"""Corpora for the co-occurrence backend: the default WordNet + MyThes corpus, user files,
and the SQLite FTS5 index they are counted in."""

from leakage.corpus._index import (
    IndexInfo,
    build_index,
    default_documents,
    default_index_path,
    file_documents,
    read_meta,
)
from leakage.corpus._mythes import find_mythes, mythes_documents
from leakage.corpus._text import STOPWORDS, clue_terms, normalize_phrase
from leakage.corpus._wordnet import find_wordnet_dir, parse_wordnet_line, wordnet_documents

__all__ = [
    "STOPWORDS",
    "IndexInfo",
    "build_index",
    "clue_terms",
    "default_documents",
    "default_index_path",
    "file_documents",
    "find_mythes",
    "find_wordnet_dir",
    "mythes_documents",
    "normalize_phrase",
    "parse_wordnet_line",
    "read_meta",
    "wordnet_documents",
]
