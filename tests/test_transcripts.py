"""The native format ``leakage.transcript/1``: models, consistency checks, loader, JSON Schema."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from leakage.errors import InvalidInput, InvalidTranscript, UnknownInputFormat
from leakage.transcripts import (
    ChameleonTranscript,
    SpyGameTranscript,
    iter_transcripts,
    load_transcripts,
    parse_transcript,
    transcript_json_schema,
)

Record = dict[str, Any]


def chameleon() -> Record:
    return {
        "format": "leakage.transcript/1",
        "game": "chameleon",
        "id": "cham-1",
        "category": "Sports",
        "candidates": ["Football", "Tennis", "Golf", "Rugby", "Boxing", "Cricket"],
        "secret": "Tennis",
        "players": [
            {"id": "ann", "role": "non-chameleon", "agent": "gpt-4o"},
            {"id": "bob", "role": "chameleon", "agent": "llama"},
            {"id": "cy", "role": "non-chameleon"},
            {"id": "di", "role": "non-chameleon"},
        ],
        "turns": [
            {"player": "ann", "text": "racket"},
            {"player": "bob", "text": "ball"},
            {"player": "cy", "text": "Wimbledon"},
            {"player": "di", "text": "serve"},
        ],
        "votes": [{"voter": "ann", "target": "bob"}, {"voter": "bob", "target": "cy"}],
        "meta": {"matchup": "gpt-4o vs llama"},
    }


def spygame() -> Record:
    return {
        "format": "leakage.transcript/1",
        "game": "spygame",
        "id": "spy-1",
        "words": {"civilian": "sun", "spy": "moon"},
        "distractors": ["star"],
        "players": [
            {"id": "1", "role": "civilian", "word": "sun"},
            {"id": "2", "role": "spy", "word": "moon"},
            {"id": "3", "role": "civilian"},
            {"id": "4", "role": "spy", "word": "moon"},
        ],
        "turns": [
            {"player": "1", "text": "It is hot.", "round": 1},
            {"player": "2", "text": "It shines at night.", "round": 1},
        ],
        "votes": [{"voter": "1", "target": "2", "round": 1}],
        "eliminations": [{"player": "2", "round": 1}],
    }


def test_valid_chameleon_record() -> None:
    t = parse_transcript(chameleon())
    assert isinstance(t, ChameleonTranscript)
    assert t.chameleons() == {"bob"}
    assert [turn.text for turn in t.turns] == ["racket", "ball", "Wimbledon", "serve"]
    assert t.player("ann").agent == "gpt-4o"


def test_valid_spygame_record_with_two_spies() -> None:
    t = parse_transcript(spygame())
    assert isinstance(t, SpyGameTranscript)
    assert t.spies() == {"2", "4"}
    assert t.candidates == ["sun", "moon", "star"]
    assert t.word_of("3") == "sun"
    assert t.word_of("4") == "moon"


@pytest.mark.parametrize("make", [chameleon, spygame])
def test_round_trip_through_json(make: Callable[[], Record]) -> None:
    t = parse_transcript(make())
    again = parse_transcript(json.loads(t.model_dump_json()))
    assert again == t


def test_format_tag_is_optional_in_a_direct_parse() -> None:
    record = chameleon()
    del record["format"]
    assert parse_transcript(record).format == "leakage.transcript/1"


def _set(path: str, value: Any) -> Callable[[Record], None]:
    """A mutation that sets a dotted path (``players.1.role``) in a record."""

    def mutate(record: Record) -> None:
        *parents, last = path.split(".")
        node: Any = record
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _delete(key: str) -> Callable[[Record], None]:
    return lambda record: record.pop(key)


INCONSISTENT = [
    # (make, mutation, field named, words in the message)
    (chameleon, _set("turns.1.player", "zed"), "turns[1].player", "unknown player 'zed'"),
    (spygame, _set("turns.0.player", "9"), "turns[0].player", "unknown player '9'"),
    (chameleon, _set("secret", "Chess"), "secret", "not among the candidates"),
    (chameleon, _set("candidates.2", "tennis "), "candidates", "duplicate candidates"),
    (chameleon, _set("candidates.0", "  "), "candidates[0]", "empty candidate"),
    (chameleon, _set("turns.2.text", "   "), "turns[2].text", "empty text"),
    (spygame, _set("turns.1.text", ""), "turns[1].text", "empty text"),
    (chameleon, _set("players.1.role", "spy"), "players[1].role", "does not belong"),
    (spygame, _set("players.0.role", "chameleon"), "players[0].role", "does not belong"),
    (chameleon, _set("players.1.role", "non-chameleon"), "players", "no player has role"),
    (spygame, _set("players.1.word", "sun"), "players[1].word", "expected 'moon'"),
    (spygame, _set("players.0.word", "moon"), "players[0].word", "expected 'sun'"),
    (spygame, _set("words.spy", "Sun"), "words", "the same"),
    (spygame, _set("distractors", ["Moon"]), "distractors", "duplicate candidates"),
    (spygame, _set("players.3.role", "civilian"), "players[3].word", "expected 'sun'"),
    (chameleon, _set("players.2.id", "ann"), "players", "'ann' appears 2 times"),
    (spygame, _set("players.3.id", "1"), "players", "'1' appears 2 times"),
    (chameleon, _set("votes.1.target", "nobody"), "votes[1].target", "unknown player"),
    (spygame, _set("votes.0.voter", "7"), "votes[0].voter", "unknown player"),
    (spygame, _set("eliminations.0.player", "8"), "eliminations[0].player", "unknown player"),
]


def test_spygame_without_a_spy() -> None:
    record = spygame()
    for p in record["players"]:
        p["role"], p["word"] = "civilian", "sun"
    record["players"][0]["word"] = None
    with pytest.raises(InvalidTranscript) as info:
        parse_transcript(record)
    assert ("players", "no player has role 'spy'") in info.value.problems


MALFORMED = [
    (chameleon, _delete("category"), "category", "Field required"),
    (spygame, _delete("words"), "words", "Field required"),
    (chameleon, _delete("game"), "game", "missing"),
    (chameleon, _set("game", "poker"), "game", "must be 'chameleon' or 'spygame'"),
    (chameleon, _set("secrte", "Tennis"), "secrte", "Extra inputs"),
    (chameleon, _set("players.0.id", 3), "players[0].id", "valid string"),
    (spygame, _set("turns.0.round", 0), "turns[0].round", "greater than or equal to 1"),
    (spygame, _set("players", [{"id": "1", "role": "spy"}]), "players", "at least 2"),
    (chameleon, _set("format", "leakage.transcript/2"), "format", "leakage.transcript/1"),
]


@pytest.mark.parametrize(("make", "mutate", "field", "words"), INCONSISTENT + MALFORMED)
def test_inconsistent_or_malformed_record_names_the_field(
    make: Callable[[], Record], mutate: Callable[[Record], None], field: str, words: str
) -> None:
    record = make()
    mutate(record)
    with pytest.raises(InvalidTranscript) as info:
        parse_transcript(record)
    assert any(f == field and words in msg for f, msg in info.value.problems), info.value.problems


def test_every_problem_is_reported_at_once() -> None:
    record = chameleon()
    record["turns"][0]["player"] = "x"
    record["votes"][0]["target"] = "y"
    record["secret"] = "Chess"
    with pytest.raises(InvalidTranscript) as info:
        parse_transcript(record)
    fields = {f for f, _ in info.value.problems}
    assert {"turns[0].player", "votes[0].target", "secret"} <= fields


def test_a_non_object_record_is_rejected() -> None:
    with pytest.raises(InvalidTranscript) as info:
        parse_transcript(["not", "an", "object"])
    assert info.value.problems == [("", "expected a JSON object, got list")]


# --- loader ----------------------------------------------------------------------------------


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _problems(err: InvalidInput) -> list[tuple[str, str]]:
    assert isinstance(err, InvalidTranscript), err
    return err.problems


def test_load_single_object_file(tmp_path: Path) -> None:
    good, bad = load_transcripts([_write(tmp_path / "a.json", [chameleon()])])
    assert [t.id for t in good] == ["cham-1"]
    assert bad == []


def test_gzip_parquet_globs_and_empty_files_read_as_the_batch_reads_them(tmp_path: Path) -> None:
    """``load_transcripts`` (``leakage score``, service jobs) reads what ``leakage batch``
    reads: gzip, Parquet, globs; an empty JSONL file is an error, not silence."""
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = "".join(json.dumps(r) + "\n" for r in (chameleon(), spygame()))
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    pq.write_table(pa.table({"record": [json.dumps(chameleon())]}), tmp_path / "b.parquet")
    (tmp_path / "c.jsonl").write_text("\n\n", encoding="utf-8")
    good, bad = load_transcripts(
        [str(tmp_path / "*.gz"), tmp_path / "b.parquet", tmp_path / "c.jsonl"]
    )
    assert [t.id for t in good] == ["cham-1", "spy-1", "cham-1"]
    assert len(bad) == 1 and "c.jsonl" in str(bad[0]) and "empty file" in str(bad[0])


def test_malformed_json_gives_one_error_with_its_position(tmp_path: Path) -> None:
    text = json.dumps(chameleon(), indent=2).replace('"category"', '"category" "x",', 1)
    path = tmp_path / "broken.json"
    path.write_text(text, encoding="utf-8")
    good, bad = load_transcripts([path])
    assert good == []
    assert len(bad) == 1
    assert bad[0].source == str(path)
    ((field, msg),) = _problems(bad[0])
    assert field == ""
    assert msg.startswith("malformed JSON") and "line" in msg


def test_non_utf8_bytes_are_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(json.dumps(chameleon()).replace("Golf", "G\u00f6lf").encode("latin-1"))
    good, bad = load_transcripts([path])
    assert good == []
    ((_, msg),) = _problems(bad[0])
    assert "not UTF-8" in msg and "re-save" in msg


def test_utf8_with_bom_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(chameleon()).encode("utf-8"))
    good, bad = load_transcripts([path])
    assert len(good) == 1 and bad == []


@pytest.mark.parametrize("content", ["", "   \n\n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(content, encoding="utf-8")
    good, bad = load_transcripts([path])
    assert good == []
    assert _problems(bad[0]) == [("", "empty file")]


def test_json_array_of_records_labels_the_bad_one(tmp_path: Path) -> None:
    broken = spygame()
    broken["turns"][0]["player"] = "ghost"
    path = tmp_path / "many.json"
    path.write_text(json.dumps([chameleon(), broken, spygame()]), encoding="utf-8")
    good, bad = load_transcripts([path])
    assert [t.id for t in good] == ["cham-1", "spy-1"]
    assert len(bad) == 1
    assert bad[0].record == 1
    assert ("turns[0].player", "unknown player 'ghost'") in _problems(bad[0])
    assert f"{path}, record 1: turns[0].player" in str(bad[0])


def test_jsonl_with_a_bad_line_still_yields_the_good_lines(tmp_path: Path) -> None:
    second = spygame()
    second["id"] = "spy-2"
    path = tmp_path / "batch.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(chameleon()),
                '{"format": "leakage.transcript/1", "game": ',  # cut short
                "",
                json.dumps(spygame()),
                json.dumps({**second, "words": {"civilian": "sun", "spy": "sun"}}),
                json.dumps(second),
            ]
        ),
        encoding="utf-8",
    )
    good, bad = load_transcripts([path])
    assert [t.id for t in good] == ["cham-1", "spy-1", "spy-2"]
    assert [e.record for e in bad] == ["line 2", "line 5"]
    assert _problems(bad[0])[0][1].startswith("malformed JSON")
    assert ("words", "the civilian and spy words are the same") in _problems(bad[1])


def test_a_json_file_holding_jsonl_is_read_line_by_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "lines.json", [chameleon(), spygame()])
    good, bad = load_transcripts([path])
    assert [t.id for t in good] == ["cham-1", "spy-1"]
    assert bad == []


def test_directories_are_expanded_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    second = {**spygame(), "id": "spy-2"}
    _write(tmp_path / "sub" / "deeper" / "c.jsonl", [second])
    _write(tmp_path / "sub" / "b.json", [spygame()])
    _write(tmp_path / "a.json", [chameleon()])
    (tmp_path / "notes.txt").write_text("not a transcript", encoding="utf-8")
    good, bad = load_transcripts([tmp_path])
    assert [t.id for t in good] == ["cham-1", "spy-1", "spy-2"]
    assert bad == []


def test_a_missing_file_is_an_error_not_an_exception(tmp_path: Path) -> None:
    good, bad = load_transcripts(
        [tmp_path / "nope.json", _write(tmp_path / "a.json", [chameleon()])]
    )
    assert len(good) == 1
    assert "cannot read file" in _problems(bad[0])[0][1]


def test_unrecognised_records_do_not_stop_the_batch(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    _write(path, [{"hello": "world"}, chameleon()])
    items = list(iter_transcripts([path]))
    assert isinstance(items[0], UnknownInputFormat)
    assert "line 1" in str(items[0])
    assert isinstance(items[1], ChameleonTranscript)


def test_native_record_without_format_tag_gets_field_errors(tmp_path: Path) -> None:
    record = chameleon()
    del record["format"]
    record["secret"] = "Chess"
    good, bad = load_transcripts([_write(tmp_path / "a.json", [record])])
    assert good == []
    assert any(f == "secret" for f, _ in _problems(bad[0]))


def test_unknown_input_format_is_refused_up_front(tmp_path: Path) -> None:
    with pytest.raises(UnknownInputFormat, match="choose one of"):
        load_transcripts([tmp_path], input_format="nonsense")


def test_forced_native_format_does_not_try_adapters(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.json", [{"game_record": {"concept_pair": {}, "players": []}}])
    good, bad = load_transcripts([path], input_format="leakage")
    assert good == []
    assert any(f == "game" for f, _ in _problems(bad[0]))


# --- JSON Schema -----------------------------------------------------------------------------

_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}
_KEYWORDS = {
    "$id", "$ref", "$defs", "title", "description", "default", "type", "const", "enum",
    "properties", "required", "additionalProperties", "items", "minItems", "minLength",
    "minimum", "maximum", "anyOf", "oneOf", "discriminator",
}  # fmt: skip


def _walk(node: Any, schema: dict[str, Any], where: str) -> None:
    """Check the keywords, types and references of one schema node and its subschemas."""
    assert isinstance(node, dict), where
    assert set(node) <= _KEYWORDS, f"{where}: unexpected keywords {set(node) - _KEYWORDS}"
    if "type" in node:
        assert node["type"] in _TYPES, where
    if "$ref" in node:
        prefix = "#/$defs/"
        assert node["$ref"].startswith(prefix), where
        assert node["$ref"][len(prefix) :] in schema["$defs"], f"{where}: dangling $ref"
    for key, sub in node.get("properties", {}).items():
        _walk(sub, schema, f"{where}.{key}")
    assert set(node.get("required", [])) <= set(node.get("properties", {})), where
    for key in ("items",):
        if isinstance(node.get(key), dict):
            _walk(node[key], schema, f"{where}[]")
    if isinstance(node.get("additionalProperties"), dict):
        _walk(node["additionalProperties"], schema, f"{where}{{}}")
    for key in ("anyOf", "oneOf"):
        for i, sub in enumerate(node.get(key, [])):
            _walk(sub, schema, f"{where}.{key}[{i}]")


def test_json_schema_is_well_formed_with_both_variants() -> None:
    schema = json.loads(json.dumps(transcript_json_schema()))  # JSON-serialisable
    assert schema["title"] == "leakage.transcript/1"
    assert schema["$id"].endswith("leakage.transcript/1")
    refs = {sub["$ref"] for sub in schema["oneOf"]}
    assert refs == {"#/$defs/ChameleonTranscript", "#/$defs/SpyGameTranscript"}
    assert schema["discriminator"]["propertyName"] == "game"
    assert set(schema["discriminator"]["mapping"]) == {"chameleon", "spygame"}
    for name, sub in schema["$defs"].items():
        _walk(sub, schema, name)
    _walk({k: v for k, v in schema.items() if k != "$defs"}, schema, "root")
    for name in ("ChameleonTranscript", "SpyGameTranscript"):
        variant = schema["$defs"][name]
        assert variant["additionalProperties"] is False  # a typo is an error
        assert variant["properties"]["format"]["const"] == "leakage.transcript/1"
    assert schema["$defs"]["Player"]["properties"]["id"]["description"]  # field docstrings


def test_json_schema_accepts_valid_and_rejects_invalid_records_with_jsonschema() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    schema = transcript_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for record in (chameleon(), spygame()):
        validator.validate(record)
    broken = copy.deepcopy(chameleon())
    broken["secrte"] = "x"
    assert not validator.is_valid(broken)
