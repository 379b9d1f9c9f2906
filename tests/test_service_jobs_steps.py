"""A service job is a ``leakage batch`` run: the same step table (``leakage.steps/1``) written
by the same engine, and every view answered from that table alone (issue 40).

- the same files through ``leakage batch`` and through a path job give identical tables;
- deleting a finished job's upload leaves its by-model and by-speaker views unchanged (no
  view reads the job's input again);
- a running job's refresh reads only the parts committed since the last one;
- a job stored before step tables (reports in SQLite, no results folder) gets its table once,
  rebuilt from its stored reports, and shows what a freshly scored job shows;
- a server given a Ray address (``LEAKAGE_RAY_ADDRESS``) scores its jobs on that cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLES
from .test_service import Api, settings_for, wait_job

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

INPUTS = ["chameleon_batch.jsonl", "spygame_fruit.json", "spygame_two_spies.json"]
VIEWS = [
    ("curves", {"by": "model", "replicates": 200}),
    ("curves", {"by": "speaker", "replicates": 200}),
    ("compare", {}),
    ("compare", {"a": "claude", "b": "gpt-4o", "replicates": 200}),
    ("plane", {"replicates": 200}),
]


def _table(folder: Path) -> Any:
    return pq.read_table(sorted((folder / "steps").glob("part-*.parquet")))


def _views(api: Api, job_id: str) -> list[Any]:
    out = []
    for view, params in VIEWS:
        r = api.get(f"/v1/jobs/{job_id}/{view}", params=params)
        assert r.status_code == 200, r.text
        out.append(r.json())
    return out


def test_leakage_batch_and_a_path_job_write_the_same_step_table(
    tmp_path: Path, default_index: Path, shared_home: Path
):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    for name in INPUTS:
        shutil.copy(EXAMPLES / name, allowed / name)
    files = [str(allowed / n) for n in INPUTS]
    out = tmp_path / "batch"
    cli = subprocess.run(
        [sys.executable, "-m", "leakage", "batch", *files, "--out", str(out), "--workers", "0"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "LEAKAGE_HOME": str(shared_home)},
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    api = Api(settings_for(tmp_path / "svc", default_index, allowed_paths=[allowed]))
    try:
        r = api.post("/v1/jobs", json={"paths": files})
        assert r.status_code == 202, r.text
        job = wait_job(api, r.json()["id"], timeout=300)
        assert job["state"] == "done" and job["failed"] == 0, job
        folder = api.state.store.results_dir(job["id"])
        want, got = _table(out), _table(folder)
        assert got.schema.metadata == want.schema.metadata == {b"format": b"leakage.steps/1"}
        assert got.num_rows == want.num_rows > 0
        assert got.equals(want)
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["status"] == "complete" and manifest["totals"]["games"] == job["ok"]
    finally:
        api.close()


def test_deleting_a_finished_jobs_upload_leaves_its_views(tmp_path: Path, default_index: Path):
    api = Api(settings_for(tmp_path, default_index))
    try:
        body = (EXAMPLES / "chameleon_batch.jsonl").read_bytes()
        r = api.post("/v1/jobs", content=body, headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 202, r.text
        job_id = wait_job(api, r.json()["id"])["id"]
        before = _views(api, job_id)
        groups = before[0]["groups"] + before[1]["groups"]
        assert "(none)" not in groups and "(none) · non-chameleon" not in groups
        assert {"claude", "gpt-4o"} <= set(before[2]["models"])
        (upload,) = api.state.store.get(job_id).paths
        Path(upload).unlink()
        api.state.steps.forget(job_id)  # read again from the results folder alone
        assert _views(api, job_id) == before
        game = api.get(f"/v1/jobs/{job_id}/records").json()["records"][0]
        one = api.get(f"/v1/jobs/{job_id}/games", params={"game_id": game["game_id"]}).json()
        assert one["report"] is not None and one["transcript"] is None  # only it needs the input
        assert one["transcript_note"] == "the job's input is no longer on the server"
    finally:
        api.close()


def test_a_job_stored_before_step_tables_gets_one_from_its_reports(
    tmp_path: Path, default_index: Path
):
    api = Api(settings_for(tmp_path, default_index))
    try:
        body = b"".join((EXAMPLES / n).read_bytes().strip() + b"\n" for n in INPUTS[:1])
        body += json.dumps(json.loads((EXAMPLES / INPUTS[1]).read_text())).encode() + b"\n"
        r = api.post("/v1/jobs", content=body, headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 202, r.text
        job_id = wait_job(api, r.json()["id"])["id"]
        fresh = _views(api, job_id)
        records = api.get(f"/v1/jobs/{job_id}/records").json()
        folder = api.state.store.results_dir(job_id)
        scored = _table(folder)
        # the job as a server before this change stored it: its reports, no results folder
        shutil.rmtree(folder)
        api.state.steps.forget(job_id)
        assert _views(api, job_id) == fresh
        assert api.get(f"/v1/jobs/{job_id}/records").json() == records
        rebuilt = _table(folder)  # written once, by the engine's writer
        assert rebuilt.schema.equals(scored.schema, check_metadata=True)
        assert rebuilt.drop_columns(["source", "record"]).equals(
            scored.drop_columns(["source", "record"])
        )
        assert set(rebuilt["source"].to_pylist()) == {"stored reports"}
        parts = list((folder / "steps").glob("part-*.parquet"))
        api.state.steps.forget(job_id)
        assert _views(api, job_id) == fresh and list((folder / "steps").glob("*")) == parts
        # without the input, a player's agent is not in its report: the model is left null
        shutil.rmtree(folder)
        (upload,) = api.state.store.get(job_id).paths
        Path(upload).unlink()
        api.state.steps.forget(job_id)
        r = api.get(f"/v1/jobs/{job_id}/curves", params={"by": "model", "replicates": 200})
        by_model = r.json()
        assert "(none)" in by_model["groups"] and by_model["games"] == fresh[0]["games"]
    finally:
        api.close()


def test_a_refresh_reads_only_the_parts_committed_since_the_last(
    tmp_path: Path, leakage_home: Path
):
    from leakage.batch import BatchJob, run_batch
    from leakage_service.job_steps import StepCache

    done = tmp_path / "done"
    run_batch(
        BatchJob(
            inputs=[EXAMPLES / "chameleon_batch.jsonl"], out=done, workers=0, chunk_size=2,
            checkpoint_games=1,
        )
    )  # fmt: skip
    parts = sorted((done / "steps").glob("part-*.parquet"))
    assert len(parts) >= 3
    running = tmp_path / "running"
    (running / "steps").mkdir(parents=True)
    cache = StepCache()
    assert cache.get("j", running).table.num_rows == 0
    for n, part in enumerate(parts, start=1):  # the engine commits part after part
        shutil.copy(part, running / "steps" / part.name)
        held = cache.get("j", running)
        assert cache.parts_read == n  # the new part only, not those read before
        assert held.table.equals(pq.read_table(parts[:n]))
    cache.get("j", running)
    assert cache.parts_read == len(parts)  # nothing new: nothing read


@pytest.fixture(scope="module")
def local_ray(shared_home: Path):
    """A local Ray cluster, started here and stopped after (workers inherit LEAKAGE_HOME)."""
    pytest.importorskip("ray")
    import ray

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LEAKAGE_HOME", str(shared_home))
        context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield context.address_info["address"]
    ray.shutdown()


def test_a_server_with_a_ray_address_scores_its_jobs_there(
    tmp_path: Path, default_index: Path, local_ray: str
):
    import ray

    body = (EXAMPLES / "chameleon_batch.jsonl").read_bytes() + b'{"not": "a transcript"}\n'
    tables = {}
    for name, kw in (("local", {}), ("ray", {"ray_address": local_ray})):
        api = Api(settings_for(tmp_path / name, default_index, **kw))
        try:
            r = api.post("/v1/jobs", content=body, params={"top_k": 2})
            assert r.status_code == 202, r.text
            job = wait_job(api, r.json()["id"], timeout=300)
            assert (job["state"], job["ok"], job["failed"]) == ("done", 6, 1), job
            folder = api.state.store.results_dir(job["id"])
            manifest = json.loads((folder / "manifest.json").read_text())
            assert manifest["engine"] == ("ray" if kw else "local")
            assert "variables" not in json.dumps(manifest["backend_options"])
            tables[name] = (
                _table(folder).drop_columns(["source"]),
                [json.loads(x) for x in _ndjson(api, job["id"])],
            )
        finally:
            api.close()
    assert ray.is_initialized()  # the server joined the cluster; it did not start its own
    order = [("record", "ascending"), ("step", "ascending")]
    assert tables["ray"][0].sort_by(order).equals(tables["local"][0].sort_by(order))
    assert tables["ray"][1] == tables["local"][1]  # the same reports and error line


def _ndjson(api: Api, job_id: str) -> list[str]:
    return api.get(f"/v1/jobs/{job_id}/results").text.splitlines()
