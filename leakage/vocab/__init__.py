"""Open vocabularies: a vector index over many words, and what an adversary would guess.

``VectorIndex`` searches unit vectors by inner product (numpy, or FAISS flat / HNSW / IVF,
``auto`` picking by size), saves to a directory and loads back, checking the model.
``OpenVocabulary`` ranks a whole vocabulary (``wordfreq:50000`` by default) given clues:
the top guesses, and the rank of the secret without the candidate list; a clue that is a
vocabulary word takes its vector from the index, and ``LazyEncoder`` opens the model only
for the others; a clue's own forms (``WordForms``) are left out with it.
``ShortlistPosterior`` is the open vocabulary as a seat's candidate set: a shortlist from the
index re-ranked by a likelihood backend (the calibrated ensemble or some of its members,
``vocabulary_pool``), the words left out keeping their mass. See docs/vocab.md.

Importing this package imports neither FAISS nor torch.
"""

from leakage.vocab._forms import WordForms
from leakage.vocab._index import (
    AUTO_RULE,
    INDEX_KINDS,
    VectorIndex,
    VocabMeta,
    choose_kind,
    exact_top_k,
    ivf_nlist,
    read_meta,
)
from leakage.vocab._open import (
    Guess,
    GuessResult,
    LazyEncoder,
    OpenVocabulary,
    WordRank,
    build_vocabulary,
    default_vocab_dir,
    embed_words,
)
from leakage.vocab._shortlist import (
    DEFAULT_SHORTLIST,
    WORD_MEMBERS,
    IndexEmbedding,
    OpenPosterior,
    ShortlistPosterior,
    reranked_guess,
    vocabulary_pool,
)
from leakage.vocab._texts import VOCAB_TEXTS, VocabTexts, gloss_text, word_texts
from leakage.vocab._words import (
    DEFAULT_WORDS,
    WordList,
    keep_word,
    load_words,
    merge_words,
    read_word_file,
    wordfreq_words,
)

__all__ = [
    "AUTO_RULE",
    "DEFAULT_SHORTLIST",
    "DEFAULT_WORDS",
    "INDEX_KINDS",
    "VOCAB_TEXTS",
    "WORD_MEMBERS",
    "Guess",
    "GuessResult",
    "IndexEmbedding",
    "LazyEncoder",
    "OpenPosterior",
    "OpenVocabulary",
    "ShortlistPosterior",
    "VectorIndex",
    "VocabMeta",
    "VocabTexts",
    "WordForms",
    "WordList",
    "WordRank",
    "build_vocabulary",
    "choose_kind",
    "default_vocab_dir",
    "embed_words",
    "exact_top_k",
    "gloss_text",
    "ivf_nlist",
    "keep_word",
    "load_words",
    "merge_words",
    "read_meta",
    "read_word_file",
    "reranked_guess",
    "vocabulary_pool",
    "word_texts",
    "wordfreq_words",
]
