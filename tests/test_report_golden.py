"""Reports of the example games, the same as when they were recorded (tests/golden/).

Every writer of ``leakage.report/1`` is covered: ``leakage score`` (``--format json`` and
``jsonl``), ``leakage batch`` (``reports.jsonl``), ``POST /v1/score`` with the request
options that reshape a report (``top_k``, ``distractors``) and ``POST /v1/score/batch``,
all with the co-occurrence backend on the default index.

The comparison is exact for everything but numbers (key order included); floating-point
numbers agree to 1e-9 relative, so that another machine's last bits do not fail it. The
byte format of each writer is checked on its own: the JSON format is what
``json.dumps(..., indent=2)`` writes, every other writer what pydantic's serialiser does.
Where and when the default index was built (``backend_info.count_source``) is left out.

To record the reports again after a deliberate change of format or figures, run this file
with ``LEAKAGE_TEST_RECORD_GOLDEN=1`` and review the diff of tests/golden/reports.json.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from .conftest import EXAMPLES

GOLDEN = Path(__file__).parent / "golden" / "reports.json"
INPUTS = [
    EXAMPLES / "chameleon_sports.json",
    EXAMPLES / "spygame_fruit.json",
    EXAMPLES / "spygame_two_spies.json",
    EXAMPLES / "chameleon_batch.jsonl",
]
SAME_AS_CLI_JSON = ("cli jsonl", "batch reports.jsonl")
"""Not recorded: :func:`test_the_writers_agree` holds them to the CLI's JSON format."""
RECORD = os.environ.get("LEAKAGE_TEST_RECORD_GOLDEN") == "1"


def _run(*args: str, home: Path) -> str:
    env = {**os.environ, "LEAKAGE_HOME": str(home)}
    p = subprocess.run(
        [sys.executable, "-m", "leakage", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def _pydantic_lines(text: str) -> list[Any]:
    """The JSON lines of ``text``, each checked to be what pydantic's serialiser writes."""
    out = []
    for line in text.splitlines():
        doc = json.loads(line)
        assert to_json(doc, inf_nan_mode="null").decode() == line
        out.append(doc)
    return out


def _normalised(report: dict[str, Any]) -> dict[str, Any]:
    report = copy.deepcopy(report)
    source = report["backend_info"].get("count_source", {})
    for key in ("index", "sources", "built_at"):
        if key in source:
            source[key] = "<this test session's default index>"
    return report


def _same(got: Any, want: Any, where: str = "") -> None:
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), where
        for key, value in want.items():
            _same(got[key], value, f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            _same(a, b, f"{where}[{i}]")
    else:
        assert type(got) is type(want) and got == want, where


@pytest.fixture(scope="module")
def produced(shared_home: Path, default_index: Path, tmp_path_factory) -> dict[str, Any]:
    from leakage_service import Settings

    from .test_service import Api

    files = [str(p) for p in INPUTS]
    out: dict[str, Any] = {}
    text = _run("score", *files, "--format", "json", home=shared_home)
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    out["cli json"] = json.loads(text)
    text = _run(
        "score", *files, "--format", "json", "--include-chameleon",
        "--spy-assignment", "marginalise", home=shared_home,
    )  # fmt: skip
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    out["cli json, include chameleon, marginalise"] = json.loads(text)
    text = _run("score", *files, "--format", "jsonl", home=shared_home)
    out["cli jsonl"] = _pydantic_lines(text)

    batch = tmp_path_factory.mktemp("batch") / "out"
    _run("batch", *files, "--out", str(batch), "--workers", "0", home=shared_home)
    lines = _pydantic_lines((batch / "reports.jsonl").read_text(encoding="utf-8"))
    out["batch reports.jsonl"] = sorted(lines, key=lambda r: r["game_id"])

    home = tmp_path_factory.mktemp("svc")
    api = Api(Settings(home=home, index=default_index, preload=["cooccurrence"]))
    try:
        sports, spy = (EXAMPLES / "chameleon_sports.json", EXAMPLES / "spygame_two_spies.json")
        for name, path, params in [
            ("service chameleon", sports, {}),
            (
                "service chameleon, top_k, distractors",
                sports,
                [("top_k", "3"), ("distractors", "Badminton"), ("distractors", "Squash")],
            ),
            (
                "service spygame, top_k, distractors, marginalise",
                spy,
                {"top_k": "2", "distractors": "Cherry", "spy_assignment": "marginalise"},
            ),
        ]:
            r = api.post("/v1/score", params=params, content=path.read_bytes())
            assert r.status_code == 200, r.text
            (out[name],) = _pydantic_lines(r.text)
        r = api.post(
            "/v1/score/batch",
            params={"top_k": "4"},
            content=(EXAMPLES / "chameleon_batch.jsonl").read_bytes(),
            headers={"content-type": "application/x-ndjson"},
        )
        assert r.status_code == 200, r.text
        out["service batch, top_k"] = _pydantic_lines(r.text)
    finally:
        api.close()
    return out


def test_reports_are_the_recorded_ones(produced: dict[str, Any]):
    got = {
        name: [_normalised(r) for r in v] if isinstance(v, list) else _normalised(v)
        for name, v in produced.items()
        if name not in SAME_AS_CLI_JSON
    }
    if RECORD:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert list(got) == list(want)
    for name in want:
        _same(got[name], want[name], name)


def test_the_writers_agree(produced: dict[str, Any]):
    """The CLI's two formats and the batch write the same reports; the service's without
    request options is the CLI's but for the server's file paths."""
    by_id = {r["game_id"]: r for r in produced["cli jsonl"]}
    assert produced["cli json"] == produced["cli jsonl"]
    assert produced["batch reports.jsonl"] == sorted(by_id.values(), key=lambda r: r["game_id"])
    service = produced["service chameleon"]
    cli = by_id[service["game_id"]]
    assert service["backend_info"]["count_source"]["index"] == "default.sqlite"
    assert {**service, "backend_info": None} == {**cli, "backend_info": None}
