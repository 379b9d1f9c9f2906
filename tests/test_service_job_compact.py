"""A done job's step table is compacted into one Parquet part (``StepCache.compact``), so
that opening it after a restart reads one file rather than one per chunk (issue 40: a
finished 1,000-game job's curves and comparison in under 1 s): its views are the same as
those of the parts, and a job finished before compaction is compacted when first viewed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leakage.batch import BatchJob, run_batch

from .conftest import EXAMPLES
from .test_service import Api, settings_for, wait_job
from .test_service_jobs_steps import _table, _views

pa = pytest.importorskip("pyarrow")

BODY = (EXAMPLES / "chameleon_batch.jsonl").read_bytes()


def _parts(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "steps").glob("part-*.parquet"))


def test_a_done_job_is_compacted_and_shows_what_its_parts_show(tmp_path: Path, default_index: Path):
    api = Api(settings_for(tmp_path, default_index, job_chunk_size=2))
    try:
        r = api.post("/v1/jobs", content=BODY, headers={"content-type": "application/x-ndjson"})
        job_id = wait_job(api, r.json()["id"])["id"]
        folder = api.state.store.results_dir(job_id)
        assert _parts(folder) == ["part-00000-00002.parquet"]  # three chunks of two games
        compacted, views = _table(folder), _views(api, job_id)
        # the same job as it was before compaction (its three parts, as a job finished
        # before this change has them): first viewed, it is compacted, with the same views
        old = tmp_path / "old"
        job = api.state.store.get(job_id)
        run_batch(
            BatchJob(
                inputs=job.paths, out=old, workers=0, chunk_size=2, checkpoint_games=1,
                shape=job.params.shape(),
            )
        )  # fmt: skip
        assert len(_parts(old)) == 3 and _table(old).equals(compacted)
        shutil.copy(folder / "offsets.json", old)
        shutil.rmtree(folder)
        shutil.copytree(old, folder)
        api.state.steps.forget(job_id)
        assert _views(api, job_id) == views
        assert _parts(folder) == ["part-00000-00002.parquet"]
        assert _table(folder).equals(compacted)
    finally:
        api.close()
