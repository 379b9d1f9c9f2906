"""The built wheels work without the source tree.

The wheels of the library (``leakage``) and of the service (``leakage-service``, ``service/``)
are built from a copy of the sources with the dev venv's setuptools (``pip wheel --no-deps
--no-build-isolation --no-index``: nothing is downloaded) and installed with ``--no-deps``
into a fresh venv made here. There ``leakage score --backend ensemble`` must use the weights
shipped inside the package, ``leakage play chameleon`` must deal from the shipped card set,
and ``python -m leakage_service`` / ``leakage serve`` must find the service.

Why a ``.pth`` file: installing torch, transformers and the rest into a new venv would take
minutes and need the network. The fresh venv's site-packages gets a ``.pth`` file whose one
line is the dev venv's site-packages, so third-party packages are found there. A plain path
line is only appended to ``sys.path``: the ``.pth`` files *inside* that folder (the editable
installs' finders, which map ``leakage`` to the source tree) are not run, and the fresh
site-packages comes first, so ``leakage`` and ``leakage_service`` are imported from the
wheels. ``test_the_wheels_are_what_the_fresh_venv_imports`` checks exactly that, and every
command runs with ``cwd`` outside the repository so that the tree is not on ``sys.path``.

The ensemble's judge member loads Gemma-3-270M converted into ``$LEAKAGE_HOME/models``: the
session's ``leakage_home`` is used, as in ``tests/test_judge.py``, so that it is converted
once per session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from leakage.backends.ensemble import SHIPPED_WEIGHTS
from leakage.llm import default_local_kind
from leakage.transcripts import ChameleonTranscript, load_transcripts

from .conftest import EXAMPLES, REPO
from .test_service_server import SPORTS, Server, server_env

DATA = REPO / "leakage" / "data"
_NOT_SOURCES = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "dist", "*.egg-info")


@dataclass(frozen=True)
class FreshVenv:
    root: Path
    python: Path
    bin: Path
    site: Path
    """The fresh venv's site-packages."""
    build_seconds: float

    def env(self, home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        return {
            **env,
            "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.root),
            "LEAKAGE_HOME": str(home),
            "COLUMNS": "200",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }


def _copy_sources(dst: Path) -> tuple[Path, Path]:
    """The two projects' sources, without build artefacts.

    Not built in place: that writes build/ and *.egg-info into the shared tree, and a stale
    build/lib there could put files into the wheel that the tree no longer has."""
    lib = dst / "src"
    lib.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, lib / name)
    shutil.copytree(REPO / "leakage", lib / "leakage", ignore=_NOT_SOURCES)
    shutil.copytree(REPO / "service", lib / "service", ignore=_NOT_SOURCES)
    return lib, lib / "service"


def _run(cmd: list[str | Path], **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    work = tmp_path_factory.mktemp("wheel")
    lib, service = _copy_sources(work)
    wheels = work / "wheels"
    start = time.perf_counter()
    p = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-w", wheels, lib, service],
        cwd=work, timeout=600,
    )  # fmt: skip
    build_seconds = time.perf_counter() - start
    assert p.returncode == 0, p.stdout + p.stderr
    built = sorted(wheels.glob("*.whl"))
    assert [w.name.split("-")[0] for w in built] == ["leakage", "leakage_service"]

    root = work / "venv"
    p = _run([sys.executable, "-m", "venv", "--without-pip", root], cwd=work, timeout=300)
    assert p.returncode == 0, p.stderr
    python = root / "bin" / "python"
    p = _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
         "--disable-pip-version-check", *built],
        cwd=work, timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    p = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work)
    site = Path(p.stdout.strip())
    assert site.is_dir() and site.is_relative_to(root), p.stderr
    dev_site = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "_dev_site_packages.pth").write_text("".join(f"{d}\n" for d in dev_site))
    return FreshVenv(root, python, root / "bin", site, build_seconds)


def test_the_wheels_are_what_the_fresh_venv_imports(venv: FreshVenv, tmp_path: Path):
    script = """
import json, sys
from importlib.metadata import distribution, entry_points
import leakage, leakage_service
from leakage.backends.ensemble import default_weights_path
from leakage.games._cards import shipped_cards_file
(serve,) = entry_points(group="leakage.service", name="serve")
serve = serve.load()
print(json.dumps({
    "leakage": leakage.__file__,
    "leakage_service": leakage_service.__file__,
    "serve": sys.modules[serve.__module__].__file__,
    "dist": str(distribution("leakage").locate_file("leakage/__init__.py")),
    "weights": str(default_weights_path()),
    "cards": str(shipped_cards_file()),
    "editable": sorted(m for m in sys.modules if "editable" in m),
    "path": sys.path,
}))
"""
    p = _run([venv.python, "-c", script], cwd=tmp_path, env=venv.env(tmp_path), timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    for key in ("leakage", "leakage_service", "serve", "dist", "weights", "cards"):
        path = Path(got[key]).resolve()
        assert path.is_relative_to(venv.site.resolve()), (key, path)
        assert not path.is_relative_to(REPO), (key, path)
    assert got["editable"] == []  # the dev venv's editable finders were not run
    assert not any(Path(p).resolve() == REPO for p in got["path"] if p)
    # the shipped data is in the wheel as it is in the tree
    for name in (
        "ensemble_weights.json",
        "ensemble_weights_int8.json",
        "chameleon_cards.json",
        "README.md",
    ):
        assert (venv.site / "leakage" / "data" / name).read_bytes() == (DATA / name).read_bytes()


def llm_rows_of(members: dict[str, Any]) -> str:
    """``SHIPPED_WEIGHTS``'s key for a report's members (``leakage.backends.ensemble.llm_rows``
    over their recorded info)."""
    for info in members.values():
        llm = info.get("llm") or {}
        if llm.get("backend") == "ctranslate2" and str(llm.get("precision")).startswith("int8"):
            return "int8"
    return ""


def test_score_ensemble_uses_the_shipped_weights(
    venv: FreshVenv, leakage_home: Path, tmp_path: Path
):
    p = _run(
        [venv.bin / "leakage", "score", EXAMPLES / "chameleon_sports.json",
         "--backend", "ensemble", "-f", "json"],
        cwd=tmp_path, env=venv.env(leakage_home), timeout=900,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    info = report["backend_info"]
    assert report["backend"] == "ensemble"
    # the shipped fit for the rows the LLM members computed: int8 on a CPU without bf16
    rows = llm_rows_of(info["members"])
    name = SHIPPED_WEIGHTS[rows]
    shipped = json.loads((DATA / name).read_text(encoding="utf-8"))
    assert info["weights_file"] == str(venv.site / "leakage" / "data" / name)
    assert rows == ("int8" if default_local_kind() == "ctranslate2" else "")
    assert info["weights"] == shipped["weights"] and info["scales"] == shipped["scales"]
    assert info["notes"] == []
    assert list(info["members"]) == shipped["members"]
    assert shipped["members"] == ["cooccurrence", "embedding", "listener", "judge", "answers"]
    assert info["members"]["judge"]["model"] == "gemma-3-270m"
    assert info["members"]["listener"]["direction"] == "listener"
    assert info["members"]["cooccurrence"]["count_source"]["index"] == str(
        leakage_home / "corpus" / "default.sqlite"
    )
    assert [s["counted"] for s in report["steps"]] == [True, True, False, True]
    for s in report["steps"]:
        assert sum(s["posterior"].values()) == pytest.approx(1.0)
    assert report["secret"] == "Tennis" and report["summary"]["final_secret_rank"] == 1


def test_play_deals_from_the_shipped_cards(venv: FreshVenv, leakage_home: Path, tmp_path: Path):
    out = tmp_path / "games.jsonl"
    p = _run(
        [venv.bin / "leakage", "play", "chameleon", "--games", "2", "--seed", "7", "-o", out],
        cwd=tmp_path, env=venv.env(leakage_home), timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "2 chameleon games" in p.stdout
    games, errors = load_transcripts([out])
    assert errors == []
    assert [g.id for g in games] == ["chameleon-7-0", "chameleon-7-1"]
    cards = {
        c["category"]: c["words"]
        for c in json.loads((DATA / "chameleon_cards.json").read_text(encoding="utf-8"))
    }
    for g in games:
        assert isinstance(g, ChameleonTranscript)
        assert sorted(g.candidates) == sorted(cards[g.category]), g.id
        assert g.secret in g.candidates and len(g.chameleons()) == 1
        assert len(g.turns) == 4


def test_the_service_wheel_runs(venv: FreshVenv, default_index: Path, tmp_path: Path):
    env = venv.env(tmp_path)
    p = _run([venv.python, "-m", "leakage_service", "--help"], cwd=tmp_path, env=env, timeout=120)
    assert p.returncode == 0 and "usage: python -m leakage_service" in p.stdout, p.stderr
    p = _run([venv.bin / "leakage", "serve", "--help"], cwd=tmp_path, env=env, timeout=120)
    assert p.returncode == 0 and "--port" in p.stdout, p.stderr
    # `leakage serve` for real: the launcher finds the service through its entry point
    server = Server(
        {**server_env(tmp_path, default_index), "PYTHONPATH": "", "PATH": env["PATH"]},
        tmp_path / "server.log",
        command=[str(venv.bin / "leakage"), "serve", "--host", "127.0.0.1"],
    )
    try:
        r = httpx.post(server.url + "/v1/score", content=SPORTS, timeout=60)
        assert r.status_code == 200, r.text
        rep = r.json()
        assert rep["game_id"] == "example-chameleon-sports" and rep["backend"] == "cooccurrence"
    finally:
        server.stop()
