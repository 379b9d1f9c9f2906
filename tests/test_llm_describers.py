"""The kinds of describer are a registry (``leakage.splits.DESCRIBERS``, entry-point group
``leakage.describers``: simulated here), and ``leakage splits build --describer`` offers what
it lists: a describer another distribution adds is chosen, listed in the help and cached like
the package's own."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from leakage.errors import UnknownBackend
from leakage.splits import (
    DESCRIBERS,
    FileDescriber,
    VersionedDescriber,
    create_describer,
    describer_options,
)
from tests.cli_support import invoke_leakage
from tests.plugin_support import fake_entry_points


class LengthDescriber:
    """Describes a word by its length (a describer another distribution adds)."""

    name = "length"
    version = "1"
    asked: ClassVar[list[str]] = []

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        LengthDescriber.asked += list(words)
        return {w: f"A word of {len(w)} letters, written {w}. It is a word." for w in words}


@pytest.fixture
def length_describer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The describer ``length``, from a (simulated) installed distribution; the command's
    choices are asked again before and after."""
    from leakage.cli.splits import DESCRIBER_NAMES

    DESCRIBERS.reload()
    monkeypatch.setattr(DESCRIBER_NAMES, "_values", None)
    LengthDescriber.asked = []
    fake_entry_points(monkeypatch, "leakage.describers", length=f"{__name__}:LengthDescriber")
    yield
    DESCRIBERS.pop("length", None)
    DESCRIBERS.reload()


def build(*args: str, home: Path) -> tuple[int, str]:
    r = invoke_leakage("splits", "build", *args, home=home, env={"COLUMNS": "200"})
    return r.exit_code, r.output


def pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text("civilian,spy\ncat,dog\nsun,moon\nant,bee\n", encoding="utf-8")
    return path


def test_the_package_describers_and_their_options(tmp_path: Path):
    assert {"file", "llm", "wordnet"} <= set(DESCRIBERS.names())
    assert describer_options("file") == {"path": True}
    assert describer_options("llm") == {
        "model": False,
        "endpoint": False,
        "llm_cache": False,
        "variables": False,
        "device": False,
    }
    assert describer_options("wordnet") == {"wordnet_dir": False}
    with pytest.raises(UnknownBackend, match="unknown describer 'nope'; available: file"):
        describer_options("nope")
    path = tmp_path / "d.jsonl"
    path.write_text('{"word": "cat", "description": "A pet."}\n', encoding="utf-8")
    described = create_describer("file", path=path)
    assert isinstance(described, FileDescriber) and described.describe(["cat"]) == {"cat": "A pet."}
    # what a file says is read again each run: not kept in the description cache
    assert not isinstance(described, VersionedDescriber)
    assert isinstance(create_describer("wordnet"), VersionedDescriber)


def test_a_describer_from_an_entry_point_is_offered_by_the_command(
    length_describer, tmp_path: Path
):
    code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o"),
                         "--describer", "length", home=tmp_path)  # fmt: skip
    assert code == 0, output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["describer"] == "length" and summary["counts"]["unknown"] == 0
    assert sorted(LengthDescriber.asked) == sorted(["cat", "dog", "sun", "moon", "ant", "bee"])
    # it has a version: its descriptions are kept, and a second run asks it nothing
    code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o2"),
                         "--describer", "length", home=tmp_path)  # fmt: skip
    assert code == 0, output
    assert len(LengthDescriber.asked) == 6

    code, output = build("--help", home=tmp_path)
    assert "Where descriptions come from: file, length, llm or wordnet" in output
    # the describer flags belong to the describers that take them
    code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o3"),
                         "--describer", "length", "--llm-model", "m", home=tmp_path)  # fmt: skip
    assert code == 2 and "--llm-model" in output and "is for --describer llm, not length" in output


def test_a_describer_the_registry_does_not_have_is_a_usage_error(tmp_path: Path):
    code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o"),
                         "--describer", "length", home=tmp_path)  # fmt: skip
    assert code == 2
    assert "'length' is not one of 'file', 'llm', 'wordnet'" in " ".join(output.split())
    assert not (tmp_path / "o").exists()
