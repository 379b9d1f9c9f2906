"""The library's JSON reader (leakage.transcripts._json) and the transcript rules it works
with: what Python's ``json`` reads but a report cannot be written from (lone surrogates,
integers of more than 4,300 digits, NaN, repeated keys), each named by its field, and the
text rules of a game (NUL, look-alike candidates, round numbers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from leakage.errors import InvalidTranscript
from leakage.transcripts import load_transcripts, parse_transcript
from leakage.transcripts._json import (
    MAX_INT_DIGITS,
    DuplicateKeys,
    HugeInt,
    deeper_than,
    json_problems,
    loads,
)
from leakage.transcripts._models import meta_problems, mixed_scripts, text_problem

from .conftest import EXAMPLES

SPORTS: dict[str, Any] = json.loads((EXAMPLES / "chameleon_sports.json").read_text("utf-8"))


def _game(**changes: Any) -> dict[str, Any]:
    game = json.loads(json.dumps(SPORTS))
    game.update(changes)
    return game


def _fields(err: InvalidTranscript) -> list[str]:
    return [f for f, _ in err.problems]


# -- loads: nothing read fails but what is malformed ------------------------------------------


def test_loads_keeps_an_over_long_integer_as_its_digit_count():
    doc, flagged = loads('{"n": -' + "9" * 4301 + ', "ok": ' + "9" * MAX_INT_DIGITS + "}")
    assert flagged
    assert isinstance(doc["n"], HugeInt) and doc["n"].digits == 4301
    assert doc["ok"] == int("9" * MAX_INT_DIGITS)  # 4,300 digits still read as an int
    with pytest.raises(ValueError, match="4300 digits"):  # what json.loads does instead
        json.loads('{"n": ' + "9" * 4301 + "}")


def test_loads_keeps_a_repeated_key_and_its_last_value():
    doc, flagged = loads('{"a": 1, "b": {"c": 1, "c": 2, "c": 3}, "a": 4}')
    assert flagged
    assert isinstance(doc, DuplicateKeys) and doc.repeated == ["a"] and doc["a"] == 4
    assert isinstance(doc["b"], DuplicateKeys) and doc["b"].repeated == ["c"]


def test_loads_flags_surrogate_escapes_and_non_finite_numbers_only():
    assert loads('{"a": "caf\\u00e9", "b": [1.5, 2]}') == ({"a": "café", "b": [1.5, 2]}, False)
    assert loads('{"a": "\\ud83d\\ude00"}')[1]  # a pair: looked at, and found fine
    assert json_problems(loads('{"a": "\\ud83d\\ude00"}')[0]) == []
    for text in ('{"a": NaN}', '{"a": -Infinity}', '{"a": 1e999}', '["\\uDC00"]'):
        assert loads(text)[1], text


def test_malformed_and_too_deep_json_still_raise():
    with pytest.raises(json.JSONDecodeError):
        loads('{"a": }')
    with pytest.raises(RecursionError):
        loads('{"a":' * 100_000 + "1" + "}" * 100_000)


# -- json_problems: each problem named by its field ------------------------------------------


def test_json_problems_name_each_field_shallowest_first():
    doc, _ = loads(
        '{"turns": [{"text": "\\ud800"}], "meta": {"n": '
        + "1" * 4400
        + ', "x y": NaN, "\\udc00": 1}, "k": 1, "k": 2}'
    )
    found = json_problems(doc)
    assert [f for f, _ in found] == [
        "k",
        'meta["\\udc00"]',  # a key's problem is found with its object's keys
        "meta.n",
        'meta["x y"]',
        "turns[0].text",
    ]
    messages = dict(found)
    assert messages["k"].startswith("given more than once in its object")
    assert messages["meta.n"].startswith("an integer of 4,400 digits; at most 4,300")
    assert messages['meta["x y"]'].startswith("NaN is not a JSON number")
    assert messages['meta["\\udc00"]'].startswith("key: lone surrogate \\udc00 at character 0")
    assert messages["turns[0].text"].startswith("lone surrogate \\ud800 at character 0")


def test_json_problems_find_a_python_callers_huge_int_and_stop_at_the_limit():
    assert json_problems({"a": 10**4300}) == [
        ("a", "an integer of 4,301 digits; at most 4,300 (send a long number as a string)")
    ]
    assert json_problems({"a": 10**4300 - 1, "b": True}) == []
    assert len(json_problems([float("nan")] * 10, limit=3)) == 3


def test_depth_is_counted_from_the_document():
    assert not deeper_than([[1]], 2) and deeper_than([[[1]]], 2)
    assert not deeper_than("text", 0)
    assert json_problems({"a": [{"b": 1}]}, max_depth=2) == [
        ("a[0]", "nested more than 2 levels deep")
    ]
    doc, _ = loads('{"a": {"b": {}}}')
    assert deeper_than(doc, 2)
    problems = json_problems(doc, max_depth=2)
    assert doc == {"a": {"b": {}}} and problems == [("a.b", "nested more than 2 levels deep")]
    doc, flagged = loads('{"a": 1}')
    assert (doc, flagged, deeper_than(doc, 2)) == ({"a": 1}, False, False)


# -- the transcript's own rules ---------------------------------------------------------------


def test_text_problems():
    assert text_problem("plain café text") is None
    assert text_problem("ab\x00c") is not None and "NUL character (U+0000) at character 2" in str(
        text_problem("ab\x00c")
    )
    assert str(text_problem("x\ud800")).startswith("lone surrogate \\ud800 at character 1")


@pytest.mark.parametrize(
    ("where", "value", "field"),
    [
        ("turn", "a\x00b", "turns[0].text"),
        ("turn", "\ud800", "turns[0].text"),
        ("candidate", "Ten\x00nis", "candidates[2]"),
        ("candidate", "\udfff", "candidates[2]"),
        ("category", "Sp\x00rts", "category"),
    ],
)
def test_a_game_with_nul_or_a_lone_surrogate_names_the_field(where: str, value: str, field: str):
    game = _game()
    if where == "turn":
        game["turns"][0]["text"] = value
    elif where == "candidate":
        game["candidates"][2] = value
    else:
        game["category"] = value
    with pytest.raises(InvalidTranscript) as err:
        parse_transcript(game)
    assert field in _fields(err.value)
    str(err.value).encode("utf-8")  # the message itself is writable


def test_meta_problems_one_per_kind_with_paths():
    found = meta_problems({"a": "\ud800", "b": {"c": 10**5000}, "d": [float("inf"), float("nan")]})
    assert [f for f, _ in found] == ["meta.a", "meta.b.c", "meta.d[0]"]


def test_mixed_scripts_are_look_alikes_one_script_is_a_word():
    assert mixed_scripts("T\u0435nnis") == ["CYRILLIC", "LATIN"]  # Cyrillic е
    assert mixed_scripts("\u03b1pple") == ["GREEK", "LATIN"]
    assert mixed_scripts("Tennis") == [] and mixed_scripts("Теннис") == []
    assert mixed_scripts("Café") == [] and mixed_scripts("東京タワー") == []


def test_look_alike_and_differently_encoded_candidates_are_refused():
    game = _game()
    game["candidates"][5] = "T\u0435nnis"
    with pytest.raises(InvalidTranscript) as err:
        parse_transcript(game)
    assert "candidates[5]" in _fields(err.value)
    assert "mixes Cyrillic and Latin letters" in str(err.value)

    game = _game()
    game["candidates"][5], game["candidates"][6] = "Cafe\u0301", "Caf\u00e9"  # NFD, NFC
    with pytest.raises(InvalidTranscript) as err:
        parse_transcript(game)
    assert "candidates" in _fields(err.value)
    assert "'Cafe\\u0301', 'Caf\\xe9'" in str(err.value)

    game = _game()
    game["candidates"][5] = "\uff34\uff45\uff4e\uff4e\uff49\uff53"  # full-width Tennis
    with pytest.raises(InvalidTranscript, match="duplicate candidates"):
        parse_transcript(game)


@pytest.mark.parametrize("value", [True, False, 0, 2**53])
def test_a_round_is_a_number_from_1_never_a_boolean(value: Any):
    game = _game()
    game["turns"][0]["round"] = value
    with pytest.raises(InvalidTranscript) as err:
        parse_transcript(game)
    assert _fields(err.value) == ["turns[0].round"]


def test_a_file_with_bad_records_keeps_the_good_ones(tmp_path: Path):
    good = json.dumps(_game(id="good"))
    line = json.dumps(_game(id="x"))
    bad = [
        line.replace('"round": 1', '"round": ' + "7" * 4301, 1),
        line.replace('"meta": {', '"meta": {"k": 1, "k": 2, ', 1),
        line.replace(json.dumps(SPORTS["turns"][0]["text"]), '"\\ud800"', 1),
        '{"a":' * 5000 + "1" + "}" * 5000,
    ]
    jsonl = tmp_path / "games.jsonl"
    jsonl.write_text("\n".join([good, *bad, good.replace('"good"', '"good2"')]) + "\n")
    array = tmp_path / "games.json"
    array.write_text("[" + ",".join([good, *bad]) + "]")
    for path, n_good in ((jsonl, 2), (array, 1)):
        games, errors = load_transcripts([path])
        assert [g.id for g in games] == ["good", "good2"][:n_good]
        assert len(errors) == 4, errors
        fields = [_fields(e)[0] for e in errors if isinstance(e, InvalidTranscript)]
        assert fields == ["turns[0].round", "meta.k", "turns[0].text", ""]


def test_a_jsonl_record_holding_a_raw_line_separator_is_one_record(tmp_path: Path):
    """JSON allows U+2028, U+2029, U+0085 and form feeds raw inside a string; JSONL lines end
    at "\\n" only (``str.splitlines`` would cut such a record in two and lose it)."""
    game = _game(id="sep")
    game["turns"][0]["text"] = "ball\u2028game\x85x\u2029y"
    text = json.dumps(game, ensure_ascii=False) + "\r\n" + json.dumps(_game(id="next")) + "\n"
    path = tmp_path / "games.json"  # JSONL under a .json name: read line by line
    path.write_text(text, encoding="utf-8")
    games, errors = load_transcripts([path])
    assert errors == [] and [g.id for g in games] == ["sep", "next"]
    assert games[0].turns[0].text == "ball\u2028game\x85x\u2029y"
