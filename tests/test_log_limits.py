"""Inspect logs (and gzip files) read under ``ReadLimits`` (issue 37): what an archive declares
is checked before anything is read, what it inflates to while reading, and only a sample's
id, epoch and game are kept. The hostile logs are built in memory (``benchmarks._archives``):
a member that declares a gibibyte is refused without being expanded, and the members that
really expand are small ones read under lowered limits, so that every test here takes
milliseconds."""

from __future__ import annotations

import gzip
import json
import random
import time
import tracemalloc
from pathlib import Path

import pytest

from benchmarks._archives import (
    bad_crc,
    crc_of,
    declared_bomb,
    eval_log,
    lying_member,
    member,
    patch_member,
    with_member,
)
from leakage.errors import InputTooLarge, InvalidTranscript
from leakage.transcripts import ReadLimits, iter_transcripts
from leakage.transcripts._scan import ScanError, Scanner

from .conftest import EXAMPLES

GAME = json.loads((EXAMPLES / "chameleon_sports.json").read_text(encoding="utf-8"))
GAMES = [dict(GAME, id=f"g{i}") for i in range(3)]
MiB = 1 << 20


def _read(tmp_path: Path, data: bytes, name: str = "run.eval", **kw) -> list:
    path = tmp_path / name
    path.write_bytes(data)
    return list(iter_transcripts([path], **kw))


def _ids(items: list) -> list:
    return [x.id if not isinstance(x, Exception) else type(x).__name__ for x in items]


def test_a_hand_built_log_reads_as_inspect_writes_it(tmp_path: Path):
    assert _ids(_read(tmp_path, eval_log(GAMES))) == ["g0", "g1", "g2"]


@pytest.mark.parametrize("member", ["header.json", "samples/2_epoch_1.json"])
def test_a_member_that_declares_a_gibibyte_is_refused_before_it_is_read(
    tmp_path: Path, member: str
):
    (err,) = _read(tmp_path, declared_bomb(GAMES, member, 1 << 30))
    assert isinstance(err, InputTooLarge) and err.error_type == "input_too_large"
    assert err.problems[0][0] == member  # the field is the member
    text = str(err)
    assert "run.eval" in text and "1,073,741,824" in text and "max_member_bytes" in text
    # nothing was read: the member holds a few hundred bytes, not what it declares


def test_the_whole_archive_is_held_to_its_expanded_total(tmp_path: Path):
    limits = ReadLimits(max_expanded_bytes=2000)
    (err,) = _read(tmp_path, eval_log(GAMES), limits=limits)
    assert isinstance(err, InputTooLarge) and "max_expanded_bytes" in str(err)
    assert err.problems[0][0].startswith("samples/")  # the member that crosses it


def test_a_member_that_expands_a_thousandfold_is_refused(tmp_path: Path):
    data = eval_log(GAMES, messages_pad={1: 2 * MiB})
    (err,) = _read(tmp_path, data, limits=ReadLimits(max_ratio=100))
    assert isinstance(err, InputTooLarge) and "max_ratio" in str(err)
    assert err.problems[0][0] == "samples/2_epoch_1.json"
    # under the default ratio (deflate stays under 1,030) the same log is read
    assert _ids(_read(tmp_path, data)) == ["g0", "g1", "g2"]


def test_an_archive_of_too_many_members_is_refused(tmp_path: Path):
    (err,) = _read(tmp_path, eval_log(GAMES), limits=ReadLimits(max_members=3))
    assert isinstance(err, InputTooLarge) and "4 members" in str(err)


def test_a_member_that_inflates_past_what_it_declares_fails_alone(tmp_path: Path):
    items = _read(tmp_path, lying_member(GAMES, 1, 4 * MiB))
    assert _ids(items) == ["g0", "InvalidTranscript", "g2"]
    err = items[1]
    assert err.record == "sample 2" and "samples/2_epoch_1.json" in str(err)
    assert "decompresses past the" in str(err) and "declares" in str(err)


def test_a_sample_with_a_bad_crc_fails_alone_and_a_header_with_one_stops_the_file(
    tmp_path: Path,
):
    items = _read(tmp_path, bad_crc(GAMES, 1))
    assert _ids(items) == ["g0", "InvalidTranscript", "g2"]
    assert "bad CRC-32" in str(items[1]) and "samples/2_epoch_1.json" in str(items[1])
    data = eval_log(GAMES)
    (err,) = _read(tmp_path, patch_member(data, "header.json", crc=crc_of(data, "header.json") ^ 1))
    assert isinstance(err, InvalidTranscript) and err.problems[0][0] == "header.json"
    assert "bad CRC-32" in str(err)


def test_a_huge_skipped_field_is_read_past_without_being_held(tmp_path: Path):
    """A sample's 32 MiB ``messages`` string: skipped in chunks, never held whole (the peak
    of Python allocations stays far below its size), and the game after it is read. (Spaces
    deflate 1,026 to 1, past the default ``max_ratio``, which is lifted here.)"""
    data = eval_log(GAMES, messages_pad={1: 32 * MiB})
    path = tmp_path / "big.eval"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        items = list(iter_transcripts([path], limits=ReadLimits(max_ratio=1e9)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert _ids(items) == ["g0", "g1", "g2"]
    assert peak < 4 * MiB, peak


def test_a_log_read_past_its_deadline_stops_naming_the_member(tmp_path: Path):
    data = eval_log(GAMES, messages_pad={1: 8 * MiB})
    items = _read(tmp_path, data, limits=ReadLimits(max_seconds=1e-6))
    err = items[-1]
    assert isinstance(err, InputTooLarge) and "max_seconds" in str(err), items
    assert err.problems[0][0] in ("header.json", "samples/1_epoch_1.json", "samples/2_epoch_1.json")


def test_the_deadline_counts_reading_not_the_time_records_spend_with_the_caller(tmp_path: Path):
    path = tmp_path / "run.eval"
    path.write_bytes(eval_log(GAMES))
    got = []
    for item in iter_transcripts([path], limits=ReadLimits(max_seconds=0.5)):
        got.append(item)
        time.sleep(0.3)  # a job scoring the game: 0.9 s in all, past the deadline
    assert _ids(got) == ["g0", "g1", "g2"]


def test_a_gzip_file_is_held_to_the_expanded_total(tmp_path: Path):
    line = json.dumps(GAME).encode() + b"\n"
    path = tmp_path / "games.jsonl.gz"
    path.write_bytes(gzip.compress(line * 200))
    assert len(list(iter_transcripts([path]))) == 200
    items = list(iter_transcripts([path], limits=ReadLimits(max_expanded_bytes=50 * len(line))))
    assert isinstance(items[-1], InputTooLarge) and "max_expanded_bytes" in str(items[-1])
    assert str(path) in str(items[-1])
    assert 0 < len(items) - 1 <= 50  # the records before the limit are kept


def test_a_sample_whose_id_or_epoch_is_wrong_fails_alone(tmp_path: Path):
    data = eval_log(GAMES)
    name = "samples/2_epoch_1.json"
    sample = member(data, name).replace(b'"epoch": 1', b'"epoch": {"not": 1}')
    items = _read(tmp_path, with_member(data, name, sample))
    assert _ids(items) == ["g0", "InvalidTranscript", "g2"]
    assert "epoch: expected an integer" in str(items[1]) and items[1].record == "sample 2"


# -- the scanner --------------------------------------------------------------------------


def _chunks(data: bytes, size: int):
    for i in range(0, len(data), size):
        yield data[i : i + size]


@pytest.mark.parametrize("size", [1, 2, 7, 4096])
def test_the_scanner_keeps_what_it_is_asked_for_and_skips_the_rest(size: int):
    doc = {
        "a": ['x"y\\', {"b": [[], {}, "]}"]}, 1.5e3, None, True],
        "keep": {"k": ["é", {"z": "\\u0000"}], "n": -12},
        "c": "[{" * 50,
    }
    raw = json.dumps(doc, ensure_ascii=False).encode()
    scanner = Scanner(_chunks(raw, size), max_keep=1 << 20)
    got = {key: scanner.keep() for key in scanner.fields() if key == "keep"}
    scanner.finish()
    assert got == {"keep": doc["keep"]}


@pytest.mark.parametrize(
    "raw",
    [b'{"a": "x', b'{"a": [[]', b'{"a": 1 "b": 2}', b'{"a": 1} x', b'{"a": }', b'["a"]'],
)
def test_the_scanner_says_where_a_document_is_not_json(raw: bytes):
    scanner = Scanner(iter([raw]), max_keep=100)
    with pytest.raises(ScanError, match="at byte"):
        for _ in scanner.fields():
            pass
        scanner.finish()


def test_the_scanner_agrees_with_json_on_random_documents():
    """Random documents (strings with quotes, backslashes and brackets in them, nesting,
    every scalar), cut into random chunks: each top-level value kept is what ``json``
    reads, whatever was skipped before it."""
    rng = random.Random(37)

    def value(depth: int = 0) -> object:
        r = rng.random()
        if depth > 4 or r < 0.3:
            return rng.choice([1, -2.5e3, True, None, "", 'a"b\\', "é\n\\\\", "[{]}", "x" * 300])
        if r < 0.65:
            return [value(depth + 1) for _ in range(rng.randint(0, 5))]
        keys = ["a", "[", "}", '"q']
        return {rng.choice(keys) + str(i): value(depth + 1) for i in range(rng.randint(0, 5))}

    def chunks(data: bytes, most: int):
        i = 0
        while i < len(data):
            n = rng.randint(1, most)
            yield data[i : i + n]
            i += n

    for _ in range(500):
        doc = {f"k{i}": value() for i in range(rng.randint(1, 6))}
        want = rng.choice(list(doc))
        raw = json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]))
        scanner = Scanner(chunks(raw.encode(), rng.choice([1, 3, 17, 4096])), max_keep=1 << 20)
        got = {key: scanner.keep() for key in scanner.fields() if key == want}
        scanner.finish()
        assert got == {want: doc[want]}, raw[:300]


@pytest.mark.parametrize(
    ("where", "old", "new", "stops"),
    [
        ("header.json", b'"status": "success"', b'"status": ' + b"9" * 5000, True),
        ("samples/1_epoch_1.json", b'"epoch": 1', b'"epoch": ' + b"9" * 5000, False),
        ("samples/1_epoch_1.json", b'"id": 1', b'"id": ' + b"[" * 5000 + b"]" * 5000, False),
        ("samples/1_epoch_1.json", b'"id": 1', b'"id": 1, "id": 2', False),
    ],
    ids=["huge-status", "huge-epoch", "deep-id", "repeated-id"],
)
def test_json_no_reader_agrees_on_is_an_error_not_a_crash(
    tmp_path: Path, where: str, old: bytes, new: bytes, stops: bool
):
    data = eval_log(GAMES)
    items = _read(tmp_path, with_member(data, where, member(data, where).replace(old, new, 1)))
    if stops:  # the header: the file cannot be read
        (err,) = items
        assert isinstance(err, InvalidTranscript) and "header.json" in str(err), err
    else:  # a sample: that record alone
        assert _ids(items) == ["InvalidTranscript", "g1", "g2"], items
        assert "samples/1_epoch_1.json" in str(items[0])
