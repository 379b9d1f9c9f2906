"""Resume after ``kill -9``: no game lost, none scored (or written) twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leakage.batch import BatchJob, run_batch
from leakage.batch._output import ResultsDir, checkpoints

from .batch_helpers import game_keys, many_games, read_steps

pytest.importorskip("pyarrow")

N_GAMES = 3000


def _start(src: Path, out: Path, home: Path, *extra: str) -> subprocess.Popen[bytes]:
    """The command in the background; its standard error goes to ``stderr.txt`` beside out."""
    env = {**os.environ, "LEAKAGE_HOME": str(home)}
    with (out.parent / "stderr.txt").open("wb") as log:
        return subprocess.Popen(
            [
                sys.executable, "-m", "leakage", "batch", str(src), "--out", str(out),
                "--workers", "1", "--chunk-size", "20", "--checkpoint-games", "60",
                "--no-progress", *extra,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # its own process group: the kill takes the worker too
        )  # fmt: skip


def _kill_after(proc: subprocess.Popen[bytes], out: Path, commits: int) -> None:
    deadline = time.monotonic() + 120
    while checkpoints(out) < commits:
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _committed_state(out: Path) -> tuple[int, int]:
    """(games in the ledger, games in the Parquet parts and reports) after recovery."""
    results = ResultsDir(out)  # recovery runs on open
    games, _ = results.committed_count()
    results.close()
    table = read_steps(out)
    keys = game_keys(table)
    assert set(keys.values()) <= {1}
    reports = (out / "reports.jsonl").read_text().splitlines()
    assert len(reports) == len(keys)
    return games, len(keys)


def test_kill_9_twice_then_resume_loses_nothing_and_repeats_nothing(
    tmp_path: Path, leakage_home: Path
):
    src = many_games(tmp_path / "games.jsonl", N_GAMES)
    out = tmp_path / "out"

    proc = _start(src, out, leakage_home)
    _kill_after(proc, out, commits=2)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "running"  # it really died mid-run
    ledger, written = _committed_state(out)
    assert 0 < ledger == written < N_GAMES

    proc = _start(src, out, leakage_home, "--resume")
    _kill_after(proc, out, commits=checkpoints(out) + 3)
    ledger2, written2 = _committed_state(out)
    assert ledger < ledger2 == written2 < N_GAMES

    proc = _start(src, out, leakage_home, "--resume")
    assert proc.wait(timeout=300) == 0, (tmp_path / "stderr.txt").read_text()

    table = read_steps(out)
    keys = game_keys(table)
    assert sorted(keys) == [(str(src.resolve()), i) for i in range(N_GAMES)]
    assert set(keys.values()) == {1}  # every game exactly once
    assert table.num_rows == sum(len(json.loads(x)["turns"]) for x in src.read_text().splitlines())
    ids = [json.loads(x)["game_id"] for x in (out / "reports.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == N_GAMES
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and len(manifest["runs"]) == 3
    assert manifest["totals"] == {"games": N_GAMES, "failed": 0}
    assert manifest["runs"][-1]["skipped"] == ledger2


def test_recovery_cuts_torn_tails_and_stray_parts(tmp_path: Path, leakage_home: Path):
    src = many_games(tmp_path / "g.jsonl", 30)
    out = tmp_path / "out"
    run_batch(BatchJob(inputs=[src], out=out, workers=0, checkpoint_games=10, chunk_size=10))
    parts = sorted(p.name for p in (out / "steps").iterdir())
    size = (out / "reports.jsonl").stat().st_size
    # What a kill between writing and committing leaves behind:
    with (out / "reports.jsonl").open("a") as fh:
        fh.write('{"format": "leakage.report/1", "game_id": "torn')
    (out / "errors.jsonl").write_text('{"half": ')
    (out / "steps" / "part-00099.parquet").write_bytes(b"PAR1 not committed")
    (out / "steps" / ".part-1-2.tmp").write_bytes(b"partial")
    (out / "steps" / "notes.txt").write_text("not ours: left alone")
    ResultsDir(out).close()
    assert (out / "reports.jsonl").stat().st_size == size
    assert (out / "errors.jsonl").stat().st_size == 0
    assert sorted(p.name for p in (out / "steps").iterdir()) == sorted([*parts, "notes.txt"])
