"""Starting the command line is cheap: ``import leakage`` and ``import leakage.cli`` load no
numerical library, and ``leakage guess`` on vocabulary clues loads only what it uses (issue 15:
a warm ``guess`` in <= 2 s). Each check runs in a fresh interpreter, since this one has
imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Never on the path of `import leakage.cli`, `leakage --help` nor `leakage guess` on clues
# of the vocabulary: model runtimes, the service, and the libraries of the other commands.
NEVER = (
    "torch",
    "transformers",
    "sentence_transformers",
    "sklearn",
    "fastapi",
    "leakage_service",
    "leakage.batch",
    "leakage.calibration",
    "leakage.curves",
    "leakage.games",
    "leakage.reports",
    "leakage.scoring",
    "leakage.splits",
    "leakage.transcripts",
)
# Also not on the path of `import leakage.cli` and `leakage --help`: what `guess` itself needs
# (numpy, FAISS, pydantic, the index and encoders) and every library module a command uses.
NOT_AT_STARTUP = (
    *NEVER,
    "numpy",
    "pydantic",
    "faiss",
    "httpx",
    "leakage.backends",
    "leakage.corpus",
    "leakage.encoders",
    "leakage.llm",
    "leakage.posterior",
    "leakage.vocab",
)

# Runs the CLI's entry point, then prints the modules the process imported on stderr.
_MAIN = """
import json, sys
from leakage.cli import main
sys.argv = ["leakage", *sys.argv[1:]]
try:
    main()
finally:
    sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def _modules(
    script: str, *args: str, home: Path
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200"}
    p = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert "MODULES " in p.stderr, p.stderr
    return p, set(json.loads(p.stderr.rpartition("MODULES ")[2]))


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in modules]


def test_importing_the_package_and_the_cli_loads_no_library(tmp_path: Path):
    script = (
        "import json, sys\n"
        "import leakage\n"
        "after_package = sorted(sys.modules)\n"
        "import leakage.cli\n"
        "sys.stderr.write('PACKAGE ' + json.dumps(after_package) + '\\n')\n"
        "sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
    )
    p, modules = _modules(script, home=tmp_path)
    assert p.returncode == 0, p.stderr
    package = set(json.loads(p.stderr.split("PACKAGE ")[1].split("\n")[0]))
    assert [m for m in package if m.startswith("leakage.") and m != "leakage.errors"] == []
    assert _loaded(package, NOT_AT_STARTUP) == []
    assert _loaded(modules, NOT_AT_STARTUP) == []


def test_help_loads_no_library_and_lists_every_command(tmp_path: Path):
    p, modules = _modules(_MAIN, "--help", home=tmp_path)
    assert p.returncode == 0, p.stderr
    for command in ("score", "batch", "calibrate", "play", "schema", "serve", "guess", "vocab"):
        assert f" {command} " in p.stdout
    assert _loaded(modules, NOT_AT_STARTUP) == []


def test_guess_on_vocabulary_clues_loads_only_what_it_uses(tmp_path: Path):
    import numpy as np

    from leakage.vocab import VectorIndex

    words = ["puck", "ice", "hockey", "goalie", "rink", "zebra", "stripes", "mane", "tennis"]
    vectors = np.random.default_rng(0).normal(size=(len(words), 16))
    VectorIndex.build(words, vectors, model="test-words", kind="flat").save(tmp_path / "v")

    args = ("guess", "puck", "ice", "--secret", "hockey", "--vocab", str(tmp_path / "v"))
    p, modules = _modules(_MAIN, *args, home=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "guesses from 'puck', 'ice' among 7 words" in p.stdout
    assert "secret 'hockey': rank" in p.stdout
    assert _loaded(modules, ("numpy", "faiss", "leakage.vocab")) == [
        "numpy",
        "faiss",
        "leakage.vocab",
    ]
    assert _loaded(modules, NEVER) == []


def test_names_of_the_package_are_imported_on_first_use():
    import importlib

    import leakage

    assert set(leakage.__all__) == {"LeakageError", "__version__", *leakage._LAZY}
    for name, module in leakage._LAZY.items():
        assert getattr(leakage, name) is getattr(importlib.import_module(module), name), name
    assert set(leakage.__all__) <= set(dir(leakage))
    with pytest.raises(AttributeError, match="no attribute 'score_transcripts'"):
        leakage.score_transcripts  # noqa: B018
    namespace: dict[str, object] = {}
    exec("from leakage import *", namespace)
    assert namespace["create_backend"] is leakage.create_backend
    assert namespace["LeakageError"] is leakage.errors.LeakageError


def test_defaults_written_out_in_the_cli_agree_with_the_library():
    from leakage.backends.embedding import DEFAULT_TAU
    from leakage.cli import splits as splits_cli
    from leakage.cli import vocab as vocab_cli
    from leakage.encoders import DEFAULT_MODEL
    from leakage.splits import GU_EASY_BELOW, GU_HARD_ABOVE

    assert vocab_cli.DEFAULT_MODEL == DEFAULT_MODEL
    assert vocab_cli.DEFAULT_TAU == DEFAULT_TAU
    assert (splits_cli.GU_HARD_ABOVE, splits_cli.GU_EASY_BELOW) == (GU_HARD_ABOVE, GU_EASY_BELOW)
