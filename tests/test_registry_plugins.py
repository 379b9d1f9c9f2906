"""Plug-ins of an installed distribution, as another package ships them: a real ``dist-info``
with entry points in ``leakage.backends``, ``leakage.count_sources`` and ``leakage.encoders``
on the path of a fresh ``leakage`` process. What they add is offered by the command line's
choices (and its help) and can be used; nothing in this repository names them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leakage._registry import Registry

from .conftest import EXAMPLES

GAME = str(EXAMPLES / "chameleon_sports.json")

PLUGIN = '''
import hashlib

import numpy as np


class FlatBackend:
    name = "flat"

    def __init__(self, level):
        self.level = level

    def info(self):
        return {"backend": self.name, "level": self.level}

    def loglik(self, clues, candidates, *, category=None):
        return np.full((len(clues), len(candidates)), self.level)


def make_flat(*, level: float = -1.0):
    return FlatBackend(level)


class TallySource:
    """Counts that grow with the letters of a query (a stand-in for a search API)."""

    name = "tally"
    key_env = ("TALLY_KEY",)

    @classmethod
    def open(cls, *, budget=None):
        return cls()

    def total(self):
        return 1e6

    def counts(self, queries):
        return [10 * len(query) + sum(map(len, query)) for query in queries]

    def uncached(self, queries):
        return list(dict.fromkeys(queries))

    def info(self):
        return {"source": self.name, "kind": "tally"}


class HashEncoder:
    def __init__(self, model, *, precision="auto", threads=None):
        self.name = f"hash/{model}"
        self.dimension = 16

    def encode_batch(self, texts):
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8)
            for t in texts
        ]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), 16) - 127.5
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def info(self):
        return {"model": self.name, "dimension": self.dimension, "hashed": True}
'''

ENTRY_POINTS = """
[leakage.backends]
flat = leakage_test_plugin:make_flat

[leakage.count_sources]
tally = leakage_test_plugin:TallySource

[leakage.encoders]
hash = leakage_test_plugin:HashEncoder
"""


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding an installed distribution with the three entry points."""
    root = tmp_path_factory.mktemp("site")
    (root / "leakage_test_plugin.py").write_text(PLUGIN)
    info = root / "leakage_test_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: leakage-test-plugin\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root


def run(*args: str, plugin: Path, home: Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200", "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "leakage", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_plugins_are_choices_of_the_command_line(plugin: Path, tmp_path: Path):
    help_text = run("score", "--help", plugin=plugin, home=tmp_path).stdout
    assert "answers, cooccurrence, embedding, ensemble, flat, judge or listener" in help_text
    assert "google-cse, infini-gram, local, serpapi or tally" in help_text
    p = run("score", GAME, "-b", "nope", plugin=plugin, home=tmp_path)
    assert p.returncode == 2
    assert "'nope' is not one of 'answers', 'cooccurrence', 'embedding', 'ensemble'," in p.stderr


def test_a_backend_from_a_plugin_scores(plugin: Path, tmp_path: Path):
    p = run(
        "score", GAME, "-b", "flat", "-O", "level=-3", "-f", "json", plugin=plugin, home=tmp_path
    )
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    assert report["backend"] == "flat"
    assert report["backend_info"] == {"backend": "flat", "level": -3.0}
    # equal likelihoods: the posterior stays uniform
    assert report["summary"]["final_entropy_bits"] == pytest.approx(4.0)  # 16 candidates


def test_a_count_source_from_a_plugin_gives_the_counts(plugin: Path, tmp_path: Path):
    p = run("score", GAME, "--source", "tally", "-f", "json", plugin=plugin, home=tmp_path)
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    assert report["backend_info"]["count_source"] == {"source": "tally", "kind": "tally"}
    dry = run("score", GAME, "--source", "tally", "--dry-run", plugin=plugin, home=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "tally" in dry.stdout


def test_an_encoder_from_a_plugin_embeds(plugin: Path, tmp_path: Path):
    args = ("-b", "embedding", "-O", "encoder_kind=hash", "-O", "disk_cache=false")
    p = run("score", GAME, *args, "-f", "json", plugin=plugin, home=tmp_path)
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    info = report["backend_info"]
    assert info["model"] == "hash/all-MiniLM-L6-v2" and info["hashed"] is True
    bad = run(
        "score", GAME, "-b", "embedding", "-O", "encoder_kind=nope", plugin=plugin, home=tmp_path
    )
    assert bad.returncode != 0
    assert "unknown encoder 'nope'; available: hash, sentence-transformers" in bad.stderr


def test_listing_the_names_imports_none_of_them(tmp_path: Path):
    """The package's own are declared by module path: listing the backends and the count
    sources (what the command line's choices ask) loads no numerical library, no backend."""
    script = (
        "import sys\n"
        "from leakage.backends import backend_names\n"
        "from leakage.backends.cooccurrence import count_source_names\n"
        "names = backend_names() + count_source_names()\n"
        "heavy = [m for m in ('numpy', 'pydantic', 'httpx', 'torch', 'leakage.corpus',\n"
        "    'leakage.llm', 'leakage.backends.judge', 'leakage.backends.cooccurrence._backend')\n"
        "    if m in sys.modules]\n"
        "print(names, heavy)\n"
    )
    env = {**os.environ, "LEAKAGE_HOME": str(tmp_path)}
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("[]"), p.stdout
    assert "'listener'" in p.stdout and "'infini-gram'" in p.stdout


def test_a_declared_item_is_imported_on_first_look_up_only():
    reg: Registry[object] = Registry(
        "leakage.test-nothing",
        builtin={"later": "leakage_no_such_module_xyz:make", "json": "json:dumps"},
    )
    assert reg.names() == ["json", "later"] and "later" in reg
    import json as json_module

    assert reg["json"] is json_module.dumps
    with pytest.raises(ModuleNotFoundError, match="leakage_no_such_module_xyz"):
        reg["later"]
    del reg["later"]
    assert reg.names() == ["json"]
