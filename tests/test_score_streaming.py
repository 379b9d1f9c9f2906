"""``leakage score`` streams: each report is written as soon as it is scored, the games are read
as they are needed, and a run that stops early says how far it got."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import leakage.backends
import leakage.scoring
from leakage.cli import app
from leakage.errors import BudgetExhausted


def _game(i: int) -> str:
    return json.dumps(
        {
            "game": "chameleon",
            "id": f"g{i}",
            "category": "c",
            "players": [{"id": "a", "role": "non-chameleon"}, {"id": "b", "role": "chameleon"}],
            "candidates": ["x", "y"],
            "secret": "x",
            "turns": [{"player": "a", "text": f"clue{i}"}],
        }
    )


class Watching:
    """A backend that calls ``seen(clue)`` before it scores each game."""

    name = "watching"

    def __init__(self, seen: Callable[[str], None]) -> None:
        self.seen = seen
        self.closed = False

    def info(self) -> dict[str, Any]:
        return {"name": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        for clue in clues:
            self.seen(clue)
        return np.zeros((len(clues), len(candidates)))

    def close(self) -> None:
        self.closed = True


def _use(monkeypatch: pytest.MonkeyPatch, backend: Watching) -> None:
    @contextmanager
    def open_backend(name: str, **options: Any) -> Iterator[Watching]:
        try:
            yield backend
        finally:
            backend.close()

    monkeypatch.setattr(leakage.backends, "open_backend", open_backend)
    # two games a chunk (the default is 1000), so that five games make three chunks
    monkeypatch.setitem(leakage.scoring.score_many.__kwdefaults__, "chunk", 2)


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_each_report_is_in_the_file_before_the_next_chunk_is_scored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str
):
    games = tmp_path / "g.jsonl"
    games.write_text("".join(_game(i) + "\n" for i in range(5)))
    out = tmp_path / f"r.{fmt}"
    written: dict[str, str] = {}

    def seen(clue: str) -> None:
        written[clue] = out.read_text() if out.exists() else ""

    backend = Watching(seen)
    _use(monkeypatch, backend)
    r = CliRunner().invoke(app, ["score", str(games), "-f", fmt, "-o", str(out)])
    assert r.exit_code == 0, r.output
    # game 2 opens the second chunk: games 0 and 1 are written by then, game 2 is not
    assert '"game_id":"g1"' in written["clue2"].replace(" ", "")
    assert '"game_id":"g2"' not in written["clue2"].replace(" ", "")
    assert "g0" not in written["clue0"]
    reports = (
        json.loads(out.read_text())
        if fmt == "json"
        else [json.loads(line) for line in out.read_text().splitlines()]
    )
    assert [x["game_id"] for x in reports] == [f"g{i}" for i in range(5)]
    assert backend.closed


def test_a_budget_stop_says_how_many_of_all_games_were_scored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """The games after the stop are still counted (and their bad records said), and what
    was scored before it is a complete JSON array."""
    games = tmp_path / "g.jsonl"
    games.write_text("".join(_game(i) + "\n" for i in range(5)) + "{not json\n")
    out = tmp_path / "r.json"

    def seen(clue: str) -> None:
        if clue == "clue2":
            raise BudgetExhausted("the budget of 3 queries is spent.", done=3, budget=3)

    _use(monkeypatch, Watching(seen))
    r = CliRunner().invoke(app, ["score", str(games), "-f", "json", "-o", str(out)])
    assert r.exit_code == 5, r.output
    assert "Scored 2 of 5 games" in r.output
    assert "record line 6: malformed JSON" in r.output
    assert [x["game_id"] for x in json.loads(out.read_text())] == ["g0", "g1"]


def test_games_are_read_as_they_are_scored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The first chunk is scored when only its games have been read, not the whole input;
    a bad record in a later file is still said and counted."""
    import leakage.transcripts

    first, later = tmp_path / "a.jsonl", tmp_path / "b.json"
    first.write_text("".join(_game(i) + "\n" for i in range(3)))
    later.write_text("{not json")
    read = 0
    iter_transcripts = leakage.transcripts.iter_transcripts

    def counting(*args: Any, **kwargs: Any) -> Iterator[Any]:
        nonlocal read
        for item in iter_transcripts(*args, **kwargs):
            read += 1
            yield item

    monkeypatch.setattr(leakage.transcripts, "iter_transcripts", counting)
    read_when: dict[str, int] = {}
    _use(monkeypatch, Watching(lambda clue: read_when.setdefault(clue, read)))
    r = CliRunner().invoke(app, ["score", str(first), str(later), "-f", "jsonl"])
    assert r.exit_code == 2, r.output
    assert "b.json: malformed JSON" in r.output
    assert "1 bad record(s) skipped; 3 game(s) scored." in r.output
    assert read_when == {"clue0": 2, "clue1": 2, "clue2": 4}
