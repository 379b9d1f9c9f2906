"""The command line the card studies share (``benchmarks.studies._cli``): the command a result
records and the result file a run writes."""

from __future__ import annotations

import json

import pytest

import benchmarks.common
from benchmarks.studies._cli import member_list, study_command, study_parser, write_study

MEMBERS = ("cooccurrence", "embedding")


def test_the_command_names_only_what_is_not_the_default():
    assert study_command("word_cards", "auto", MEMBERS, MEMBERS) == (
        "python -m benchmarks.studies.word_cards"
    )
    assert study_command("word_cards", "bf16", ("embedding",), MEMBERS, " --min-zipf 2") == (
        "python -m benchmarks.studies.word_cards --members embedding --precision bf16 --min-zipf 2"
    )
    assert study_command("definition_member", "fp32") == (
        "python -m benchmarks.studies.definition_member --precision fp32"
    )


def test_the_parser_reads_members_and_precision():
    parser = study_parser("word_cards", "doc", precision_help="p", members=MEMBERS)
    args = parser.parse_args(["--members", " embedding, ,judge", "--precision", "fp32"])
    assert (member_list(args.members), args.precision) == (("embedding", "judge"), "fp32")
    assert member_list(parser.parse_args([]).members) == MEMBERS
    with pytest.raises(SystemExit):
        study_parser("x", None, precision_help="p").parse_args(["--members", "a"])


@pytest.mark.parametrize(("precision", "name"), [("auto", "s.json"), ("fp32", "s_fp32.json")])
def test_a_run_off_the_default_rows_writes_apart(tmp_path, monkeypatch, precision, name):
    monkeypatch.setattr(benchmarks.common, "RESULTS", tmp_path)
    path = write_study("s", {}, precision, {"a": 1}, {"b": 2})
    assert path == tmp_path / name
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert (doc["benchmark"], doc["parameters"], doc["results"]) == (name[:-5], {"a": 1}, {"b": 2})
