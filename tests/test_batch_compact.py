"""``leakage.batch.compact_steps``: a results directory's parts rewritten as one, the same
rows in the same order, and a compaction cut short at any moment leaves the directory as
it was or as it is after (its ledger is the commit point), and ``--resume`` goes on."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from leakage.batch import BatchJob, compact_steps, run_batch

from .conftest import EXAMPLES

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")

GAMES = EXAMPLES / "chameleon_batch.jsonl"


def _parts(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "steps").glob("part-*.parquet"))


def _table(out: Path) -> Any:
    """The step table as ``leakage report`` reads it (the folder as a dataset)."""
    return ds.dataset(out / "steps", format="parquet").to_table()


def _run(out: Path, **kw: Any) -> Any:
    job = BatchJob(inputs=[GAMES], out=out, workers=0, chunk_size=2, checkpoint_games=1, **kw)
    return run_batch(job)


def test_compaction_rewrites_the_parts_as_one_with_the_same_rows(
    tmp_path: Path, leakage_home: Path
):
    out = tmp_path / "out"
    _run(out)
    before, parts = _table(out), _parts(out)
    assert len(parts) == 3
    assert compact_steps(out)
    assert _parts(out) == ["part-00000-00002.parquet"]
    after = _table(out)
    assert after.equals(before)
    assert after.schema.metadata == {b"format": b"leakage.steps/1"}
    assert not compact_steps(out)  # one part: nothing to do
    stats = _run(out, resume=True)  # a resumed run after it: nothing left to score
    assert (stats.games, stats.skipped) == (0, 6) and _table(out).equals(before)


def test_a_compaction_cut_short_leaves_the_table_whole(
    tmp_path: Path, leakage_home: Path, monkeypatch: pytest.MonkeyPatch
):
    out = tmp_path / "out"
    _run(out)
    before = _table(out)
    # cut short after the rename, before the ledger's commit: the new part is not named
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    assert compact_steps(twin)
    parts = _parts(out)
    shutil.copy(twin / "steps" / "part-00000-00002.parquet", out / "steps")
    assert len(_parts(out)) == 4
    _run(out, resume=True)  # opening the directory drops the part its ledger does not name
    assert _parts(out) == parts and _table(out).equals(before)
    # cut short after the ledger's commit, before the old parts are deleted
    again = tmp_path / "again"
    _run(again)
    real_unlink = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self.name.startswith("part-"):
            raise OSError("killed")
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(OSError, match="killed"):
        compact_steps(again)
    monkeypatch.undo()
    assert len(_parts(again)) == 4  # the three parts and the one: the ledger names the one
    assert not compact_steps(again)  # opened again: the parts it no longer names are dropped
    assert _parts(again) == ["part-00000-00002.parquet"]
    assert _table(again).equals(_table(out))
