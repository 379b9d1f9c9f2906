"""Bad records the OpenAPI schema cannot describe, mixed into the fuzzer's transcript bodies.

Schemathesis draws bodies from the schema and serialises them with ``json.dumps``, so it never
sends a lone surrogate escape (``"\\ud800"``, in a string or a key), an integer of more than
4,300 digits (Python's json refuses to read it, and ``json.dumps`` to write it), an object
nested thousands deep, a duplicate key, an escaped NUL in a clue, candidate or distractor,
look-alike candidates (Latin ``Tennis`` beside ``Tеnnis`` with a Cyrillic е, ``Café`` in NFC
and NFD) or ``true`` for a round; nor (issue 37, part B) a candidate with an invisible
character (``Go\u200blf``), a round written as a string (``"1"``), or an escaped NUL in a
preview's ``clue``; nor a record of thousands of players, nor an Inspect ``.eval`` log (a
bomb declaring gigabytes, or one with a damaged sample: issue 37, part A). Each of these is
a *poison*: ``poison_case`` writes the body
of a case as raw JSON text with one of them in one record, and the check in
``_fuzz_checks`` then asks what the service promises:

- ``POST /v1/score`` and ``POST /v1/score/preview``: a 4xx, never a 5xx;
- ``POST /v1/score/batch`` and ``POST /v1/jobs`` (JSON array or JSONL): the poisoned record
  is one error line, and the known-good records put beside it (the shipped examples) each
  get their report, in a batch's stream and in a job that ends ``done``;
- a job's ``{"path": ...}`` request: a 4xx.

The poisoned record is a shipped example or a record the fuzzer drew; a known-good example
lets the check also say where the error must point (the poison's field or a part holding
it, e.g. ``turns[0]`` for a repeated key of ``turns[0]``, never an unrelated field).

Where a case is poisoned, it carries the header ``X-Fuzz-Poison: KIND`` (the service ignores
it), so that a run's report counts the poisoned requests and their answers by kind
(``benchmarks.service_fuzz.read_report``). What the check expects of a poisoned body is
kept here, by the body's SHA-256, for the check to find (one process runs generation and
checks).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from benchmarks._big_records import ck_arena

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "corpora" / "examples"
HEADER = "X-Fuzz-Poison"
T = TypeVar("T")

KINDS = (
    "lone_surrogate",
    "surrogate_key",
    "huge_integer",
    "deep_nesting",
    "duplicate_key",
    "nul",
    "look_alike",
    "nfc_nfd",
    "boolean_round",
    # issue 37, part B
    "zero_width",
    "string_round",
)
# -- issue 37 (part A): a record of thousands of players (the duplicate-player checks were
# quadratic), and Inspect .eval uploads to POST /v1/jobs that are bombs (a member declaring
# gigabytes: a 4xx, 413) or have one damaged sample (bad CRC-32, or inflating past its
# declared size: that record fails alone, the known-good games beside it are scored)
ISSUE_37A_KINDS = ("many_players", "archive_bomb", "archive_damaged")
KINDS += ISSUE_37A_KINDS
ARCHIVE_KINDS = ("archive_bomb", "archive_damaged")
# -- end of issue 37 (part A) --
UNITS = ("\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\ud83d\\ud83d", "\\ude00\\ud83d")
"""Lone surrogates as a client escapes them: high, low, two highs, a pair the wrong way."""
HOMOGLYPHS = dict(
    zip(
        "aceopxyABEHKMOT",
        "\u0430\u0441\u0435\u043e\u0440\u0445\u0443"
        "\u0391\u0392\u0395\u0397\u039a\u039c\u039f\u03a4",
        strict=True,
    )
)
"""Latin letters and their Cyrillic or Greek twins."""
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e")
"""Invisible format characters (Unicode category Cf): zero-width space, non-joiner, joiner,
word joiner, BOM, soft hyphen, left-to-right mark."""

Path_ = tuple[str | int, ...]


def _examples() -> list[dict[str, Any]]:
    docs = [json.loads(p.read_text("utf-8")) for p in sorted(EXAMPLES.glob("*.json"))]
    lines = (EXAMPLES / "chameleon_batch.jsonl").read_text("utf-8").splitlines()
    return docs + [json.loads(x) for x in lines if x.strip()]


GOOD = _examples()
"""Known-good records: the shipped examples, each scored by the service as it is."""
GOOD_BY_ID = {g["id"]: g for g in GOOD}


@dataclass(frozen=True)
class Poison:
    """What a poisoned body holds and what the service must answer."""

    kind: str
    operation: str
    records: int | None = None
    """Records in the body (a batch or an upload); ``None`` for one transcript."""
    bad: int | None = None
    """The poisoned record's position."""
    good: dict[int, str] = field(default_factory=dict)
    """Position -> id of each known-good example in the body."""
    path: Path_ | None = None
    """Where the poison is in the bad record, when that record is a known-good example (so
    that nothing else in it can be the error); ``None`` for a drawn record."""
    prefix: str = ""
    """The fields' prefix on this operation (``body.transcript.`` on the preview)."""


POISONS: dict[bytes, Poison] = {}


def lookup(body: object) -> Poison | None:
    return POISONS.get(hashlib.sha256(body).digest()) if isinstance(body, bytes) else None


class Draw:
    """Choices from hypothesis (``data.draw``) or from a seeded ``random.Random``."""

    def __init__(self, draw: Callable[[Any], Any] | None = None, seed: int = 0) -> None:
        self._draw = draw
        self._rng = random.Random(seed)

    def choice(self, items: Sequence[T]) -> T:
        if self._draw is not None:
            from hypothesis import strategies as st

            return self._draw(st.sampled_from(items))
        return self._rng.choice(items)

    def integer(self, lo: int, hi: int) -> int:
        if self._draw is not None:
            from hypothesis import strategies as st

            return self._draw(st.integers(lo, hi))
        return self._rng.randint(lo, hi)


# -- where a poison can go ------------------------------------------------------------------


def _nodes(doc: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    out = [(path, doc)]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _nodes(v, (*path, i))
    return out


def _clue_or_word(path: Path_) -> bool:
    """A turn's text, a candidate or a distractor: where an escaped NUL is refused."""
    if len(path) == 3 and path[0] == "turns" and path[2] == "text":
        return True
    return len(path) == 2 and path[0] in ("candidates", "distractors")


def _targets(kind: str, doc: Any, whole: bool) -> list[tuple[Path_, Any]]:
    """The places in ``doc`` where ``kind`` can go (``whole``: the record itself too)."""
    nodes = _nodes(doc)
    if kind == "lone_surrogate":
        return [(p, v) for p, v in nodes if isinstance(v, str)]
    if kind == "surrogate_key" or kind == "duplicate_key":
        return [(p, v) for p, v in nodes if isinstance(v, dict) and (v or kind == "surrogate_key")]
    if kind in ("huge_integer", "deep_nesting"):
        return [(p, v) for p, v in nodes if p or whole]
    if kind == "nul":
        return [(p, v) for p, v in nodes if isinstance(v, str) and _clue_or_word(p)]
    if kind in ("look_alike", "nfc_nfd", "zero_width"):
        return [
            (p, v) for p, v in nodes
            if p in (("candidates",), ("distractors",)) and isinstance(v, list) and v
            and all(isinstance(x, str) for x in v)
        ]  # fmt: skip
    if kind == "many_players":  # the record replaced whole (issue 37, part A)
        return [((), doc)] if whole else []
    if kind in ("boolean_round", "string_round"):
        return [
            (p, v) for p, v in nodes
            if len(p) == 3 and p[0] in ("turns", "votes", "eliminations") and p[2] == "round"
            and isinstance(v, int)
        ]  # fmt: skip
    raise ValueError(kind)


def _look_alike(word: str, draw: Draw) -> str:
    spots = [i for i, c in enumerate(word) if c in HOMOGLYPHS]
    if not spots:
        return word + HOMOGLYPHS["o"]  # beside word + "o", added with it
    i = draw.choice(spots)
    return word[:i] + HOMOGLYPHS[word[i]] + word[i + 1 :]


def _edit(kind: str, value: Any, path: Path_, draw: Draw) -> tuple[Callable[[Any], str], Path_]:
    """How to write the node at ``path`` with the poison, and the poison's own path."""
    text = _json_text
    if kind == "lone_surrogate":
        at, unit = draw.integer(0, len(value)), draw.choice(UNITS)
        return (lambda v: text(v[:at])[:-1] + unit + text(v[at:])[1:]), path
    if kind == "nul":
        at = draw.integer(0, len(value))
        return (lambda v: text(v[:at])[:-1] + "\\u0000" + text(v[at:])[1:]), path
    if kind == "huge_integer":
        digits = "1" + "0" * draw.integer(4300, 6000)
        sign = draw.choice(("", "-"))
        return (lambda v: sign + digits), path
    if kind == "deep_nesting":
        depth = draw.integer(1_000, 12_000)
        if draw.choice(("object", "list")) == "object":
            deep = '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)
        else:
            deep = "[" * depth + "]" * depth
        return (lambda v: deep), path
    if kind == "boolean_round":
        word = draw.choice(("true", "false"))
        return (lambda v: word), path
    if kind == "string_round":  # the same number, as a string
        return (lambda v: text(str(v))), path
    if kind == "many_players":  # issue 37 (part A): the last player repeats the first's id
        n = draw.integer(1_000, 3_000)  # the corpus has 20,000 (tests/test_bad_input_corpus)
        many = json.dumps(ck_arena(n, duplicate_last=True))
        return (lambda v: many), (*path, "game_record", "players", n - 1, "player_id")
    if kind == "surrogate_key":  # a key added (renaming one would also drop a field)
        keys = list(value)
        like = draw.choice([*keys, "note"])
        at, unit = draw.integer(0, len(like)), draw.choice(UNITS)
        raw_key = text(like[:at])[:-1] + unit + text(like[at:])[1:]
        where = draw.integer(0, len(keys))

        def with_key(v: dict[str, Any]) -> str:
            items = [f"{text(k)}: {_render(x)}" for k, x in v.items()]
            items.insert(where, f"{raw_key}: {text('x')}")
            return "{" + ", ".join(items) + "}"

        return with_key, (*path, json.loads(raw_key))
    if kind == "duplicate_key":
        key = draw.choice(list(value))
        again = draw.choice(("same", "other"))

        def twice(v: dict[str, Any]) -> str:
            items = []
            for k, x in v.items():
                items.append(f"{text(k)}: {_render(x)}")
                if k == key:
                    other = _render(x) if again == "same" else text("other")
                    items.append(f"{text(k)}: {other}")
            return "{" + ", ".join(items) + "}"

        return twice, (*path, key)
    if kind in ("look_alike", "nfc_nfd", "zero_width"):
        word = draw.choice(value)
        if kind == "zero_width":  # the word with an invisible character inside, beside it
            at = draw.integer(0, len(word))
            extra = [word[:at] + draw.choice(INVISIBLE) + word[at:]]
        elif kind == "look_alike":
            extra = [_look_alike(word, draw)]
            if extra[0] == word + HOMOGLYPHS["o"]:
                extra.insert(0, word + "o")
        else:
            extra = [word + "\u00e9", word + "e\u0301"]
        return (lambda v: _render([*v, *extra])), (*path, len(value) + len(extra) - 1)
    raise ValueError(kind)


def _json_text(value: Any) -> str:
    return json.dumps(value)


def _render(doc: Any, path: Path_ = (), at: Path_ | None = None, edit: Any = None) -> str:
    """``doc`` as JSON text, the node at ``at`` written by ``edit``."""
    if at is not None and path == at:
        return edit(doc)
    if isinstance(doc, dict):
        inner = ", ".join(f"{_json_text(k)}: {_render(v, (*path, k), at, edit)}"
                          for k, v in doc.items())  # fmt: skip
        return "{" + inner + "}"
    if isinstance(doc, list):
        return "[" + ", ".join(_render(v, (*path, i), at, edit) for i, v in enumerate(doc)) + "]"
    return _json_text(doc)


def poison_record(kind: str, doc: Any, draw: Draw, *, whole: bool) -> tuple[str, Path_] | None:
    """``doc`` as JSON text with ``kind`` in it, and where; ``None`` when it has no place."""
    targets = _targets(kind, doc, whole)
    if not targets:
        return None
    path, value = draw.choice(targets)
    edit, where = _edit(kind, value, path, draw)
    return _render(doc, at=path, edit=edit), where


# -- whole bodies ---------------------------------------------------------------------------

TRANSCRIPT_OPS = ("POST /v1/score", "POST /v1/score/preview", "POST /v1/score/batch",
                  "POST /v1/jobs")  # fmt: skip
BODY_TYPES = ("application/json", "application/x-ndjson")


def poison_body(label: str, media_type: str, body: Any, draw: Draw) -> tuple[bytes, Poison] | None:
    """A raw body for the operation ``label`` with one poisoned record (see the module
    docstring), from the body the fuzzer drew; ``None`` where this body has no place for
    one (then the case is sent as drawn)."""
    kind = draw.choice(KINDS)
    if kind in ARCHIVE_KINDS:  # issue 37 (part A): an Inspect log instead of the drawn body
        return _archive_body(kind, label, draw)
    if label == "POST /v1/score" or label == "POST /v1/score/preview":
        preview = label.endswith("preview")
        if preview and not isinstance(body, dict):
            return None
        if preview and kind == "nul" and isinstance(body.get("clue"), str) and draw.integer(0, 1):
            return _nul_clue(label, body, draw)
        made, known = _poisoned(kind, body.get("transcript") if preview else body, draw)
        if made is None:
            return None
        text, where = made
        if preview:  # the request's other fields as drawn
            rest = [f"{_json_text(k)}: {_render(v)}" for k, v in body.items() if k != "transcript"]
            text = "{" + ", ".join([f'"transcript": {text}', *rest]) + "}"
        prefix = "body.transcript." if preview else ""
        return text.encode(), Poison(kind, label, path=where if known else None, prefix=prefix)
    if label == "POST /v1/jobs" and isinstance(body, dict) and ({"path", "paths"} & set(body)):
        made = poison_record(kind, body, draw, whole=False)
        return None if made is None else (made[0].encode(), Poison(kind, label))
    drawn: list[Any] = []
    if media_type == "application/json":
        drawn = body if isinstance(body, list) else [body]
    made, known = _poisoned(kind, next((r for r in drawn if isinstance(r, dict)), None), draw)
    if made is None:
        return None
    bad_text, where = made
    goods = [GOOD[draw.integer(0, len(GOOD) - 1)] for _ in range(draw.integer(1, 2))]
    items: list[tuple[str, str | None]] = [(_render(r), None) for r in drawn]
    items += [(_render(g), g["id"]) for g in goods]
    order = list(range(len(items) + 1))
    shuffled = [order.pop(draw.integer(0, len(order) - 1)) for _ in range(len(order))]
    texts: list[str] = []
    good: dict[int, str] = {}
    bad = 0
    for pos, i in enumerate(shuffled):
        if i == len(items):
            bad = pos
            texts.append(bad_text)
        else:
            text, game_id = items[i]
            texts.append(text)
            if game_id is not None:
                good[pos] = game_id
    if media_type == "application/json":
        raw = "[" + ", ".join(texts) + "]"
    else:
        raw = "\n".join(texts) + "\n"
    poison = Poison(kind, label, records=len(texts), bad=bad, good=good,
                    path=where if known else None)  # fmt: skip
    return raw.encode(), poison


def _nul_clue(label: str, body: dict[str, Any], draw: Draw) -> tuple[bytes, Poison]:
    """A preview body whose ``clue`` holds an escaped NUL (issue 37, part B: it was scored);
    the error must name ``body.clue``."""
    clue = body["clue"]
    at = draw.integer(0, len(clue))
    raw_clue = _json_text(clue[:at])[:-1] + "\\u0000" + _json_text(clue[at:])[1:]
    rest = [f"{_json_text(k)}: {_render(v)}" for k, v in body.items() if k != "clue"]
    text = "{" + ", ".join([f'"clue": {raw_clue}', *rest]) + "}"
    return text.encode(), Poison("nul", label, path=("clue",), prefix="body.")


# -- issue 37 (part A): Inspect .eval uploads that are bombs or have a damaged sample ------


def _archive_body(kind: str, label: str, draw: Draw) -> tuple[bytes, Poison]:
    """A ``.eval`` log of known-good games: a bomb (a member declaring 1 to 4 GiB, refused
    whole with a 4xx), or one sample damaged (bad CRC-32, or inflating 1 MiB past its
    declared size), which fails alone while the others are scored. On the routes that read
    JSON alone (``/v1/score``, ``/preview``, ``/batch``), either is a 4xx."""
    from benchmarks._archives import bad_crc, declared_bomb, lying_member

    games = [GOOD[draw.integer(0, len(GOOD) - 1)] for _ in range(draw.integer(1, 3))]
    if kind == "archive_bomb":
        member = draw.choice(("header.json", f"samples/{len(games)}_epoch_1.json"))
        size = draw.integer(1 << 30, (1 << 32) - 1)
        return declared_bomb(games, member, size), Poison(kind, label)
    bad = draw.integer(0, len(games))
    games.insert(bad, GOOD[draw.integer(0, len(GOOD) - 1)])
    if draw.choice(("crc", "lying")) == "crc":
        raw = bad_crc(games, bad)
    else:
        raw = lying_member(games, bad, 1 << 20)
    if label != "POST /v1/jobs":
        return raw, Poison(kind, label)
    good = {i: g["id"] for i, g in enumerate(games) if i != bad}
    return raw, Poison(kind, label, records=len(games), bad=bad, good=good)


# -- end of issue 37 (part A) --


def _base(drawn: Any, draw: Draw) -> tuple[Any, bool]:
    """The record to poison: a known-good example, or the record the fuzzer drew."""
    if drawn is None or draw.choice((True, False)):
        return GOOD[draw.integer(0, len(GOOD) - 1)], True
    return drawn, False


def _poisoned(kind: str, drawn: Any, draw: Draw) -> tuple[tuple[str, Path_] | None, bool]:
    """A whole poisoned record made from :func:`_base`'s record (from a known-good one when
    the drawn record has no place for ``kind``), or None; and whether it is a known-good one
    (its poisoned path is known)."""
    base, known = _base(drawn, draw)
    made = poison_record(kind, base, draw, whole=True)
    if made is None and not known:  # no place in the drawn record: a known-good one
        base, known = GOOD[draw.integer(0, len(GOOD) - 1)], True
        made = poison_record(kind, base, draw, whole=True)
    return made, known


def remember(raw: bytes, poison: Poison) -> None:
    POISONS[hashlib.sha256(raw).digest()] = poison


# -- what the service names -----------------------------------------------------------------


def field_parts(field: str) -> list[str | int] | None:
    """``turns[0].text`` -> ``["turns", 0, "text"]``; ``meta["\\ud800"]`` -> ``["meta",
    "\\ud800"]``; ``None`` when the field is not spelt that way."""
    parts: list[str | int] = []
    i = 0
    while i < len(field):
        if field[i] == "[":
            end = field.find("]", i)
            if end < 0:
                return None
            inner = field[i + 1 : end]
            if inner.isdigit():
                parts.append(int(inner))
            else:
                try:
                    key = json.loads(inner)
                except ValueError:
                    return None
                if not isinstance(key, str):
                    return None
                parts.append(key)
            i = end + 1
        else:
            if field[i] == ".":
                i += 1
            j = i
            while j < len(field) and field[j] not in ".[":
                j += 1
            parts.append(field[i:j])
            i = j
    return parts


def points_at(field: str | None, poison: Poison) -> bool:
    """Whether an error's field points at the poison: no field or ``body`` (the record or
    the body as a whole, e.g. one too deep to read), or the poison's path or a part holding
    it (``turns[0]`` for a repeated key of ``turns[0]``, ``candidates`` for a look-alike)."""
    if field in (None, "body") or poison.path is None:  # the record, or the body, as a whole
        return True
    if poison.prefix:
        head = poison.prefix.rstrip(".")
        if field == head:
            return True
        if field.startswith(poison.prefix):
            field = field[len(poison.prefix) :]
        elif field.startswith(head + "["):  # a quoted key: body.transcript["\ud800x"]
            field = field[len(head) :]
        else:
            return False
    parts = field_parts(field)
    if parts is None or not parts:
        return False
    return list(poison.path[: len(parts)]) == parts
