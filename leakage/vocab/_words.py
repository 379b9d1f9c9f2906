"""Word lists for an open vocabulary: ``wordfreq:N`` or a text file with one word per line.

``wordfreq:N`` takes ``wordfreq.top_n_list("en", N)`` (the N most frequent English words,
lower-cased) and keeps the alphabetic ones of length >= 2: digits, contractions ("don't"),
abbreviations ("u.s") and one-letter words go, so the list holds a little fewer than N
words (48,032 for N = 50,000 with wordfreq 3.1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from leakage.errors import BackendUnavailable, InvalidInput

INSTALL_HINT = "pip install 'leakage[embedding]'"
WORDFREQ_PREFIX = "wordfreq:"
DEFAULT_WORDS = "wordfreq:50000"


@dataclass(frozen=True)
class WordList:
    """Words in order, and where they came from (recorded in the index metadata)."""

    words: list[str]
    source: str
    """``wordfreq:N`` or ``file:/absolute/path``."""


def keep_word(word: str) -> bool:
    """The ``wordfreq:N`` filter: alphabetic, at least two letters."""
    return len(word) >= 2 and word.isalpha()


def wordfreq_words(n: int, *, lang: str = "en") -> list[str]:
    """The alphabetic words of length >= 2 among wordfreq's ``n`` most frequent."""
    if n < 1:
        raise InvalidInput(f"wordfreq:{n}: N must be a positive number of words")
    try:
        from wordfreq import top_n_list
    except ImportError as err:
        raise BackendUnavailable(f"word lists from wordfreq need it: {INSTALL_HINT}") from err
    return [w for w in top_n_list(lang, n) if keep_word(w)]


def read_word_file(path: str | Path) -> list[str]:
    """Words from a UTF-8 text file, one per line (phrases allowed).

    Surrounding whitespace is stripped; blank lines and lines starting with ``#`` are
    skipped; repeated words are kept once, in first-seen order.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise InvalidInput(
            f"{path}: no such file; a word list is wordfreq:N or a text file with one word per line"
        ) from err
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from err
    except OSError as err:
        raise InvalidInput(f"{path}: cannot read the word list ({err.strerror})") from err
    words = [s for line in text.splitlines() if (s := line.strip()) and not s.startswith("#")]
    words = list(dict.fromkeys(words))
    if not words:
        raise InvalidInput(f"{path}: the word list is empty (one word per line expected)")
    return words


def load_words(spec: str | Path) -> WordList:
    """``wordfreq:N`` or the path of a word file (see ``read_word_file``)."""
    text = str(spec)
    if text.startswith(WORDFREQ_PREFIX):
        count = text.removeprefix(WORDFREQ_PREFIX)
        if not count.isdigit():
            raise InvalidInput(f"{text}: expected wordfreq:N with N a number, e.g. wordfreq:50000")
        return WordList(wordfreq_words(int(count)), f"{WORDFREQ_PREFIX}{int(count)}")
    path = Path(text).expanduser()
    return WordList(read_word_file(path), f"file:{path.resolve()}")


def merge_words(words: Sequence[str], extra: Iterable[str]) -> list[str]:
    """``words`` followed by those of ``extra`` (e.g. a game's candidates) not already there.

    Matching ignores case, so the candidate "Tennis" is not added beside "tennis".
    """
    seen = {w.casefold() for w in words}
    merged = list(words)
    for word in extra:
        word = word.strip()
        if word and word.casefold() not in seen:
            seen.add(word.casefold())
            merged.append(word)
    return merged
