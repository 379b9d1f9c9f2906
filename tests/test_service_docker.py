"""The Docker image's build and start steps, run without Docker (there is no engine here):
the Dockerfile's shape, and the same ``docker/prepare.sh`` and ``docker/start.sh`` it runs,
against a temporary LEAKAGE_HOME."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from .conftest import EXAMPLES, REPO
from .test_service_server import Server

DOCKERFILE = REPO / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [x.strip() for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    return [(x.split(None, 1)[0].upper(), x.split(None, 1)[1]) for x in lines]


def test_dockerfile_shape():
    ins = _instructions()
    kinds = [k for k, _ in ins]
    assert re.fullmatch(r"python:3\.\d+-slim", dict(ins)["FROM"])
    users = [v for k, v in ins if k == "USER"]
    assert users and users[-1] not in ("root", "0")
    # prepare runs as the service user, after the install, before the command
    runs = [v for k, v in ins if k == "RUN"]
    assert any("docker/prepare.sh" in r for r in runs)
    assert kinds.index("USER") < max(i for i, (k, v) in enumerate(ins) if "prepare.sh" in v)
    assert any("pip install" in r and "[${EXTRAS}]" in r for r in runs)
    assert "HEALTHCHECK" in kinds and "/healthz" in dict(ins)["HEALTHCHECK"]
    assert "docker/start.sh" in dict(ins)["CMD"]
    for script in ("prepare.sh", "start.sh"):
        path = REPO / "docker" / script
        assert os.access(path, os.X_OK), f"{path} is not executable"
        assert path.read_text().startswith("#!/bin/sh")


def test_prepare_and_start_without_docker(tmp_path: Path, default_index: Path):
    home = tmp_path / "home"
    (home / "corpus").mkdir(parents=True)
    # the index step finds an index and keeps it (building one takes a while; the build
    # itself is tested with `leakage corpus build`)
    os.symlink(default_index, home / "corpus" / "default.sqlite")
    env = {**os.environ, "LEAKAGE_HOME": str(home), "PYTHON": sys.executable}
    p = subprocess.run(
        ["sh", str(REPO / "docker" / "prepare.sh")],
        env={**env, "LEAKAGE_PREPARE": "index embedding"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert "index:" in p.stdout and "is there" in p.stdout and "embedding:" in p.stdout
    assert (home / "embeddings.sqlite").exists()

    bad = subprocess.run(
        ["sh", str(REPO / "docker" / "start.sh")],
        env={k: v for k, v in env.items() if k != "LEAKAGE_HOME"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "LEAKAGE_HOME" in bad.stderr

    server_env = {**env, "LEAKAGE_HOST": "127.0.0.1", "LEAKAGE_PRELOAD": "cooccurrence"}
    server = Server(
        server_env, tmp_path / "server.log", command=["sh", str(REPO / "docker" / "start.sh")]
    )
    try:
        assert httpx.get(server.url + "/healthz").json() == {"status": "ok"}
        assert httpx.get(server.url + "/readyz").status_code == 200
        body = (EXAMPLES / "chameleon_sports.json").read_bytes()
        r = httpx.post(server.url + "/v1/score", content=body, timeout=30)
        assert r.status_code == 200 and r.json()["summary"]["final_secret_rank"] == 1
    finally:
        assert server.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    assert (home / "service" / "jobs.sqlite").exists()
