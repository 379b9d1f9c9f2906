"""Reports written one at a time are the same bytes as the whole list written at once."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from leakage.reports import Report, ReportWriter, open_report_writer, print_reports
from leakage.scoring import score_many
from leakage.transcripts import load_transcripts

from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def reports(cooccurrence) -> list[Report]:
    games, errors = load_transcripts(
        [EXAMPLES / "chameleon_sports.json", EXAMPLES / "spygame_two_spies.json"]
    )
    assert not errors
    # A name and a text beyond ASCII: the JSON format escapes them, JSONL does not.
    first = games[0].model_copy(update={"id": "jeu-\u00e9t\u00e9 \u2603"})
    return list(score_many([first, *games[1:]], cooccurrence))


def _whole(reports: list[Report], fmt: str) -> str:
    """What ``leakage score`` wrote before it streamed: the whole list at the end."""
    if fmt == "json":
        return json.dumps([r.model_dump(mode="json") for r in reports], indent=2) + "\n"
    if fmt == "jsonl":
        return "".join(r.model_dump_json() + "\n" for r in reports)
    buf = io.StringIO()
    print_reports(reports, Console(file=buf, width=160, color_system=None))
    return buf.getvalue()


@pytest.mark.parametrize("fmt", ["json", "jsonl", "table"])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_one_at_a_time_is_the_whole_list(reports: list[Report], fmt, n: int, tmp_path: Path):
    chosen = reports[:n]
    out = tmp_path / f"r.{fmt}"
    with open_report_writer(fmt, out) as writer:
        for r in chosen:
            writer.write(r)
    assert writer.written == n
    assert out.read_text(encoding="utf-8") == _whole(chosen, fmt)
    if fmt == "json":
        assert json.loads(out.read_text(encoding="utf-8")) == [
            r.model_dump(mode="json") for r in chosen
        ]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_each_report_is_out_before_the_next_is_scored(reports: list[Report], fmt):
    buf = io.StringIO()
    writer = ReportWriter(buf, fmt)
    writer.write(reports[0])
    assert buf.getvalue().count('"game_id"') == 1
    writer.write(reports[1])
    writer.close()
    writer.close()  # a second close adds nothing
    assert buf.getvalue() == _whole(reports[:2], fmt)
    with pytest.raises(ValueError, match="closed"):
        writer.write(reports[0])


def test_a_run_that_stops_leaves_a_complete_document(reports: list[Report], tmp_path: Path):
    out = tmp_path / "r.json"
    with pytest.raises(RuntimeError), open_report_writer("json", out) as writer:
        writer.write(reports[0])
        raise RuntimeError("budget spent")
    assert json.loads(out.read_text(encoding="utf-8")) == [reports[0].model_dump(mode="json")]


def test_standard_output(reports: list[Report], capsys):
    with open_report_writer("jsonl") as writer:
        writer.write(reports[0])
    assert capsys.readouterr().out == _whole(reports[:1], "jsonl")


def test_unknown_format():
    with pytest.raises(ValueError, match="table, json or jsonl"):
        ReportWriter(io.StringIO(), "csv")  # type: ignore[arg-type]
