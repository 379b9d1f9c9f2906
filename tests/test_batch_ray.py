"""The Ray engine in local mode: the same Parquet, reports and errors as the local engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leakage.batch import BatchJob, run_batch

from .batch_helpers import game_keys, many_games, read_steps, sorted_rows
from .conftest import EXAMPLES

pytest.importorskip("ray")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module", autouse=True)
def local_ray(shared_home: Path):
    """One local Ray for the module (started with LEAKAGE_HOME set: workers inherit it);
    the engine joins a Ray that is already running and leaves it running."""
    import ray

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LEAKAGE_HOME", str(shared_home))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_engine_matches_the_local_engine_and_resumes(tmp_path: Path, leakage_home: Path):
    src = tmp_path / "in"
    src.mkdir()
    many_games(src / "games.jsonl.gz", 60, gz=True)
    lines = many_games(tmp_path / "plain.jsonl", 8).read_text().splitlines()
    pq.write_table(pa.table({"record": lines}), src / "games.parquet")
    (src / "fruit.json").write_text((EXAMPLES / "spygame_fruit.json").read_text())
    (src / "bad.jsonl").write_text('{"format": "leakage.transcript/1"}\n')
    # A cut gzip and a missing file: error lines, not a failed dataset (Ray's own reader
    # would stop everything on either).
    whole = (src / "games.jsonl.gz").read_bytes()
    (src / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    inputs = [src, tmp_path / "missing.jsonl"]

    local = run_batch(BatchJob(inputs=inputs, out=tmp_path / "local", workers=0))
    assert local.failed == 3 and local.games > 69
    ray_out = tmp_path / "ray"
    on_ray = run_batch(BatchJob(inputs=inputs, out=ray_out, engine="ray", workers=1, chunk_size=16))
    assert (on_ray.games, on_ray.failed) == (local.games, local.failed)
    assert sorted_rows(read_steps(ray_out)) == sorted_rows(read_steps(tmp_path / "local"))
    errors = [json.loads(x) for x in (ray_out / "errors.jsonl").read_text().splitlines()]
    local_errors = [
        json.loads(x) for x in (tmp_path / "local" / "errors.jsonl").read_text().splitlines()
    ]
    assert sorted(errors, key=str) == sorted(local_errors, key=str)
    assert sorted((Path(e["source"]).name, e["label"]) for e in errors) == [
        ("bad.jsonl", "line 1"), ("cut.jsonl.gz", f"{local.games - 69} (reading stopped here)"),
        ("missing.jsonl", "0"),
    ]  # fmt: skip
    manifest = json.loads((ray_out / "manifest.json").read_text())
    assert manifest["engine"] == "ray" and manifest["status"] == "complete"


def test_ray_resume_leaves_out_what_the_ledger_holds(tmp_path: Path, leakage_home: Path):
    many_games(tmp_path / "a.jsonl", 40)
    many_games(tmp_path / "b.jsonl.gz", 25, gz=True)
    out = tmp_path / "out"
    # A first run that covered a.jsonl only (locally), then the whole job resumed on Ray.
    run_batch(BatchJob(inputs=[tmp_path / "a.jsonl"], out=out, workers=0))
    again = run_batch(
        BatchJob(inputs=[tmp_path], out=out, engine="ray", workers=1, resume=True, chunk_size=8)
    )
    assert (again.games, again.skipped) == (25, 40)
    keys = game_keys(read_steps(out))
    assert set(keys.values()) == {1}
    assert sorted((Path(s).name, r) for s, r in keys) == sorted(
        [("a.jsonl", i) for i in range(40)] + [("b.jsonl.gz", i) for i in range(25)]
    )


def test_ray_model_stage_gives_the_local_engines_rows_and_reports(
    tmp_path: Path, leakage_home: Path
):
    """A backend that embeds: its actor answers the likelihood rows and the statement
    vectors, CPU tasks compute posteriors, outlier scores and reports from them, and the
    results are the local engine's."""
    src = tmp_path / "in"
    src.mkdir()
    for name in ("spygame_fruit.json", "spygame_two_spies.json", "chameleon_sports.json"):
        (src / name).write_text((EXAMPLES / name).read_text())
    local = run_batch(
        BatchJob(inputs=[src], out=tmp_path / "local", backend="embedding", workers=0)
    )
    on_ray = run_batch(
        BatchJob(inputs=[src], out=tmp_path / "ray", backend="embedding", engine="ray",
                 workers=1, chunk_size=2)
    )  # fmt: skip
    assert (on_ray.games, on_ray.failed) == (local.games, local.failed) == (3, 0)
    # A Ray actor of one CPU runs torch on one thread, the test's process on more: the
    # vectors may differ in their last bits (more so without native bf16), so numbers are
    # compared to a tolerance, everything else exactly.
    ray_rows = sorted_rows(read_steps(tmp_path / "ray"))
    local_rows = sorted_rows(read_steps(tmp_path / "local"))
    assert len(ray_rows) == len(local_rows)
    for got, want in zip(ray_rows, local_rows, strict=True):
        assert _numbers(got) == pytest.approx(_numbers(want), abs=1e-4, nan_ok=True)
        assert _shape(got) == _shape(want)

    def reports(out: Path) -> list[dict]:
        lines = (out / "reports.jsonl").read_text().splitlines()
        found = sorted((json.loads(x) for x in lines), key=lambda r: r["game_id"])
        for r in found:  # a Ray actor of one CPU runs torch on one thread
            del r["backend_info"]["threads"]
        return found

    for got, want in zip(reports(tmp_path / "ray"), reports(tmp_path / "local"), strict=True):
        assert _numbers(got) == pytest.approx(_numbers(want), abs=1e-4)
        assert _shape(got) == _shape(want)
    assert any("outlier" in json.dumps(r) for r in reports(tmp_path / "ray"))
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["backend_info"]["device"] == "cpu"
    assert manifest["runs"][-1]["device"] == "auto"


def _numbers(doc: object) -> list[float]:
    """Every number in a JSON document, in order."""
    if isinstance(doc, dict):
        return [x for v in doc.values() for x in _numbers(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in _numbers(v)]
    if isinstance(doc, int | float) and not isinstance(doc, bool):
        return [float(doc)]
    return []


def _shape(doc: object) -> object:
    """A JSON document with its numbers left out (keys, strings, nesting kept)."""
    if isinstance(doc, dict):
        return {k: _shape(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_shape(v) for v in doc]
    return None if isinstance(doc, int | float) and not isinstance(doc, bool) else doc
