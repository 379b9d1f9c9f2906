"""Turning clues and candidates into the phrases that count sources are asked about."""

from __future__ import annotations

import re
from functools import lru_cache

# Function words and filler that carry no topical signal in a clue. Kept short on purpose:
# content words such as "played" or "small" do carry signal in SpyGame descriptions.
_STOPWORDS_TEXT = """
a an the and or but nor so yet if then than that this these those there here of in on at
to for from by with without within into onto upon over under about above below between
among through during before after as is are was were be been being am do does did doing
done have has had having will would shall should can could may might must it its it's
itself they them their theirs themselves he him his she her hers we us our ours you your
yours i me my mine what which who whom whose when where why how all any both each few more
most other some such no not only own same too very just also often usually commonly
typically something someone thing things one ones kind type sort way used use using
made make makes really quite rather lot lots many much well like s t
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)


@lru_cache(maxsize=262144)
def normalize_phrase(text: str) -> str:
    """Lower-case words separated by single spaces: ``"Ice  Hockey"`` -> ``"ice hockey"``."""
    return " ".join(w.casefold() for w in _WORD.findall(text.replace("_", " ")))


@lru_cache(maxsize=65536)
def clue_terms(clue: str) -> tuple[str, ...]:
    """The phrases a clue is reduced to.

    A one-word clue is itself. Anything longer keeps its content words (stopwords dropped),
    each its own term; hyphenated compounds (``oval-shaped``) stay one phrase. A clue made
    only of stopwords falls back to all its words, so no clue is reduced to nothing.
    """
    words = [w.casefold() for w in _WORD.findall(clue)]
    if len(words) <= 1:
        return tuple(words)
    content = [w for w in words if w.replace("’", "'") not in STOPWORDS]
    seen: dict[str, None] = {}
    for w in content or words:
        seen.setdefault(normalize_phrase(w), None)
    return tuple(t for t in seen if t)
