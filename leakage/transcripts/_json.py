"""Reading JSON records so that one bad record fails alone, naming its field.

Python's ``json`` reads a few things that are not JSON text a report can be written from, and
fails on one that is: a lone surrogate escape (``"\\ud800"``, a string no UTF-8 encoder can
write), an integer of more than 4,300 digits (``int`` refuses to convert it, so ``json.loads``
raises ``ValueError`` for the whole text), NaN and Infinity (not JSON numbers), duplicate keys
in an object (the last one silently wins) and nesting deep enough to exhaust the recursion
limit. ``loads`` reads a text without failing on any of these but the last, keeping what it
found as markers; ``json_problems`` walks the result and names each problem's field
(``turns[0].text``, ``meta.scores``), so that the reader of a file, a request body or a job
turns the record into one error and goes on with the next.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

MAX_INT_DIGITS: Final = 4300
"""Python's limit on converting an integer to or from decimal text (``sys.get_int_max_str_digits``
by default): a longer integer can be neither read nor written as JSON."""

_BIG: Final = 10**MAX_INT_DIGITS
"""The smallest integer of more than ``MAX_INT_DIGITS`` digits."""
_BIG_BITS: Final = _BIG.bit_length()
_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class HugeInt:
    """An integer literal too long for ``int`` (kept as its digit count), found by ``loads``."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"HugeInt({self.digits} digits)"


class DuplicateKeys(dict[str, Any]):
    """An object in which at least one key appears twice (the last value kept, as ``json``
    does), with the repeated keys, found by ``loads``."""

    __slots__ = ("repeated",)

    def __init__(self, pairs: list[tuple[str, Any]], repeated: list[str]) -> None:
        super().__init__(pairs)
        self.repeated = repeated


class _Reader:
    """The hooks of one ``json.loads`` call, noting whether anything needs ``json_problems``."""

    __slots__ = ("flagged",)

    def __init__(self) -> None:
        self.flagged = False

    def integer(self, text: str) -> int | HugeInt:
        digits = len(text) - (text[0] == "-")
        if digits <= MAX_INT_DIGITS:
            return int(text)
        self.flagged = True
        return HugeInt(digits)

    def real(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):  # 1e999
            self.flagged = True
        return value

    def constant(self, name: str) -> float:
        self.flagged = True
        return float(name)

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        self.flagged = True
        counts: dict[str, int] = {}
        for k, _ in pairs:
            counts[k] = counts.get(k, 0) + 1
        return DuplicateKeys(pairs, [k for k, n in counts.items() if n > 1])


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate (half of a pair, or alone: ``json_problems`` tells which)."""


def loads(text: str) -> tuple[Any, bool]:
    """``json.loads`` that keeps an over-long integer as ``HugeInt`` and an object with a
    repeated key as ``DuplicateKeys`` instead of failing or dropping a value, and says
    whether the result may hold anything ``json_problems`` finds but nesting (when it says
    False, only ``deeper_than`` is left to ask). Malformed JSON still raises
    ``json.JSONDecodeError``, nesting past the recursion limit ``RecursionError``."""
    reader = _Reader()
    doc = json.loads(
        text,
        parse_int=reader.integer,
        parse_float=reader.real,
        parse_constant=reader.constant,
        object_pairs_hook=reader.pairs,
    )
    return doc, reader.flagged or _SURROGATE_ESCAPE.search(text) is not None


def deeper_than(doc: Any, max_depth: int) -> bool:
    """Whether ``doc`` nests objects and arrays more than ``max_depth`` levels deep (a fast
    walk over the containers alone, without paths)."""
    if not isinstance(doc, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(doc, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        value, depth = pop()
        if depth > max_depth:
            return True
        for item in value.values() if type(value) is not list else value:
            if isinstance(item, dict | list):
                push((item, depth + 1))
    return False


def sub_path(path: str, key: object) -> str:
    """``meta.a[3]``; a key that is not plain is quoted (JSON, cut to 64 characters), with the
    separators of a problems list (``;`` and ``:``) and any lone surrogate escaped."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(key, str) and _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    quoted = json.dumps(str(key)[:64]).replace(";", "\\u003b").replace(":", "\\u003a")
    return f"{path}[{quoted}]"


def surrogate_problem(text: str) -> str | None:
    """What is wrong with ``text`` when it holds a lone surrogate, else None."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"lone surrogate \\u{ord(found.group()):04x} at character {found.start()}: not Unicode "
        "text (half of a UTF-16 pair escaped on its own); send the character itself or both "
        "halves of its pair"
    )


def _non_finite(value: float) -> str:
    name = "NaN" if math.isnan(value) else ("-" if value < 0 else "") + "Infinity"
    return f"{name} is not a JSON number: send a finite number"


def _huge(digits: int) -> str:
    return (
        f"an integer of {digits:,} digits; at most {MAX_INT_DIGITS:,} (send a long number as "
        "a string)"
    )


def json_problems(
    doc: Any, *, max_depth: int | None = None, limit: int = 5
) -> list[tuple[str, str]]:
    """Where ``doc`` (what ``loads`` returned, or any parsed JSON) holds a lone surrogate (in a
    string or a key), an over-long integer, NaN or Infinity, a repeated key, or nests deeper
    than ``max_depth``: ``(field, message)`` pairs, shallowest first, at most ``limit``.
    Walked without recursion, so any depth is safe."""
    problems: list[tuple[str, str]] = []
    level: list[tuple[Any, str]] = [(doc, "")]
    depth = 1
    while level and len(problems) < limit:
        deeper: list[tuple[Any, str]] = []
        for value, path in level:
            kind = type(value)
            if kind is str:
                if not value.isascii() and (why := surrogate_problem(value)):
                    problems.append((path, why))
            elif kind is float:
                if not math.isfinite(value):
                    problems.append((path, _non_finite(value)))
            elif kind is HugeInt:
                problems.append((path, _huge(value.digits)))
            elif kind is int and value.bit_length() >= _BIG_BITS and abs(value) >= _BIG:
                # a Python caller's int (``loads`` makes a HugeInt of one): str() refuses it
                problems.append((path, _huge(int(value.bit_length() * math.log10(2)) + 1)))
            elif isinstance(value, dict | list):
                if max_depth is not None and depth > max_depth:
                    problems.append((path, f"nested more than {max_depth} levels deep"))
                    continue
                if isinstance(value, list):
                    deeper.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
                    continue
                if isinstance(value, DuplicateKeys):
                    problems += [
                        (sub_path(path, key), "given more than once in its object (JSON readers "
                         "differ on which value wins): give each key once")
                        for key in value.repeated[:3]
                    ]  # fmt: skip
                for key, item in value.items():
                    where = sub_path(path, key)
                    if not key.isascii() and (why := surrogate_problem(key)):
                        problems.append((where, f"key: {why}"))
                    deeper.append((item, where))
        level = deeper
        depth += 1
    return problems[:limit]
