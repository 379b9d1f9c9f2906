"""``GET /v1/jobs/{id}/compare``: two models compared where they met, the numbers of
``leakage report --compare`` (``leakage.curves._compare.paired_difference``) from a job's
stored reports, and bad input answered 404 (a job or model not there) / 422 naming what is
there, never a 500."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from leakage.curves._compare import paired_difference
from leakage.curves._data import load_steps

from .conftest import EXAMPLES
from .test_curves_models_plane import api, job_id  # noqa: F401 (fixtures)
from .test_service import Api, assert_error

pytest.importorskip("pyarrow")


def test_without_models_it_lists_the_models_present(api: Api, job_id: str):  # noqa: F811
    got = api.get(f"/v1/jobs/{job_id}/compare").json()
    assert (got["games"], got["failed"]) == (6, 1)
    assert got["rows"] == []
    # the players' agents that said counted clues (a chameleon's clues are not counted)
    assert {"gpt-4o", "claude"} <= set(got["models"])
    assert set(got["colours"]) == set(got["models"])
    assert all(c.startswith("#") and len(c) == 7 for c in got["colours"].values())


def test_compare_is_the_librarys_paired_difference(
    api: Api,  # noqa: F811
    job_id: str,  # noqa: F811
    tmp_path: Path,
    leakage_home: Path,
):
    from leakage.batch import BatchJob, run_batch

    run_batch(BatchJob(inputs=[EXAMPLES / "chameleon_batch.jsonl"], out=tmp_path / "b", workers=0))
    steps = load_steps(tmp_path / "b", "speaker")
    a, b = "claude", "gpt-4o"  # both non-chameleons in example-chameleon-sea-creatures
    want = paired_difference(steps, a, b, replicates=300)
    got = api.get(f"/v1/jobs/{job_id}/compare", params={"a": a, "b": b, "replicates": 300}).json()
    assert [r["role"] for r in got["rows"]] == [r["role"] for r in want]
    assert got["rows"][-1]["role"] == "(all roles)"
    for g, w in zip(got["rows"], want, strict=True):
        for key, value in w.items():
            if isinstance(value, float) and math.isnan(value):
                assert g[key] is None, key  # JSON has no NaN: null
            else:
                assert g[key] == pytest.approx(value), (key, g, w)
    shared = [r for r in got["rows"] if r["shared_games"]]
    assert shared, "claude and gpt-4o never met"
    for r in shared:
        assert r["difference_low"] <= r["difference_bits"] <= r["difference_high"]
        assert r["mean_gain_a_low"] <= r["mean_gain_a"] <= r["mean_gain_a_high"]
        assert r["mean_gain_b_low"] <= r["mean_gain_b"] <= r["mean_gain_b_high"]
        assert r["difference_bits"] == pytest.approx(r["mean_gain_a"] - r["mean_gain_b"])
    # swapped, the difference changes sign
    back = api.get(f"/v1/jobs/{job_id}/compare", params={"a": b, "b": a, "replicates": 300})
    for g, h in zip(got["rows"], back.json()["rows"], strict=True):
        if g["difference_bits"] is not None:
            assert h["difference_bits"] == pytest.approx(-g["difference_bits"])


def test_compare_bad_input(api: Api, job_id: str):  # noqa: F811
    url = f"/v1/jobs/{job_id}/compare"
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/compare"), 404, "job_not_found", "id")
    assert_error(api.get("/v1/jobs/nope/compare"), 422, "?")
    err = assert_error(
        api.get(url, params={"a": "gpt-4o", "b": "nobody"}), 404, "model_not_found", "b"
    )
    assert (
        "'nobody'" in err["message"] and "gpt-4o" in err["message"] and "claude" in err["message"]
    )
    err = assert_error(
        api.get(url, params={"a": "nobody", "b": "gpt-4o"}), 404, "model_not_found", "a"
    )
    assert "models here:" in err["message"]
    err = assert_error(
        api.get(url, params={"a": "gpt-4o", "b": "gpt-4o"}), 422, "invalid_input", "b"
    )
    assert "itself" in err["message"]
    assert_error(api.get(url, params={"a": "gpt-4o"}), 422, "invalid_input", "b")
    assert_error(api.get(url, params={"b": "gpt-4o"}), 422, "invalid_input", "a")
    assert_error(api.get(url, params={"a": ""}), 422, "?")
    assert_error(api.get(url, params={"a": "x" * 501, "b": "y"}), 422, "?")
    assert_error(api.get(url, params={"a": "gpt-4o", "b": "claude", "replicates": 5}), 422, "?")
