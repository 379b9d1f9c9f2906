"""One home for every file: ``leakage.paths`` resolves ``LEAKAGE_HOME`` (the only place that
reads it), ``Paths`` names every location under a home, and a library function given an
explicit path reads no environment variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from leakage.paths import HOME_VARIABLE, Paths, default_home, default_paths, resolve_home

LOCATIONS = {
    "index": "corpus/default.sqlite",
    "embeddings": "embeddings.sqlite",
    "web_counts": "web-counts.sqlite",
    "llm_responses": "llm-responses.sqlite",
    "models": "models",
    "descriptions": "descriptions.sqlite",
    "vocab": "vocab",
    "games": "games",
    "jobs": "service/jobs.sqlite",
    "uploads": "service/uploads",
    "backend_loads": "service/backend-loads.json",
}


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``LEAKAGE_HOME`` pointing at a folder that nothing given explicit paths may touch."""
    home = tmp_path / "elsewhere"
    monkeypatch.setenv(HOME_VARIABLE, str(home))
    return home


def test_every_location_lies_under_the_home(tmp_path: Path):
    paths = Paths(tmp_path)
    for name, rel in LOCATIONS.items():
        assert getattr(paths, name) == tmp_path / rel, name
    assert paths.model("gemma-3-270m") == tmp_path / "models" / "gemma-3-270m"
    assert not any(tmp_path.iterdir())  # naming a location creates nothing


def test_the_home_comes_from_the_argument_then_the_variable_then_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv(HOME_VARIABLE, raising=False)
    assert resolve_home() == default_home() == Path.home() / ".cache" / "leakage"
    monkeypatch.setenv(HOME_VARIABLE, "  ")
    assert resolve_home() == default_home()
    monkeypatch.setenv(HOME_VARIABLE, str(tmp_path / "env"))
    assert resolve_home() == tmp_path / "env"
    assert default_paths() == Paths(tmp_path / "env")
    assert resolve_home(tmp_path / "given") == tmp_path / "given"
    assert resolve_home(environ={HOME_VARIABLE: "~/x"}) == Path.home() / "x"
    assert Paths.from_env({}) == Paths(default_home())


def test_the_library_defaults_follow_the_variable(tmp_path: Path, monkeypatch):
    from leakage.corpus import default_index_path
    from leakage.encoders import default_cache_path
    from leakage.llm._gguf import default_cache_dir
    from leakage.splits import default_description_cache_path
    from leakage.vocab import default_vocab_dir

    monkeypatch.setenv(HOME_VARIABLE, str(tmp_path))
    paths = Paths(tmp_path)
    assert default_index_path() == paths.index
    assert default_cache_path() == paths.embeddings
    assert default_description_cache_path() == paths.descriptions
    assert default_cache_dir("smollm2") == paths.model("smollm2")
    assert default_cache_dir("smollm2", models_dir=tmp_path / "m") == tmp_path / "m" / "smollm2"
    assert default_vocab_dir("all-MiniLM-L6-v2") == paths.vocab / "all-minilm-l6-v2-wordfreq-50000"
    assert (
        default_vocab_dir("m", home=tmp_path / "h")
        == Paths(tmp_path / "h").vocab / "m-wordfreq-50000"
    )


def test_explicit_paths_never_touch_the_home_the_variable_names(
    elsewhere: Path, tmp_path: Path, default_index: Path
):
    from leakage.backends import create_backend
    from leakage.backends.cooccurrence import open_count_source
    from leakage.encoders import CachedEncoder
    from leakage.splits import CachedDescriber
    from leakage.vocab import default_vocab_dir

    mine = Paths(tmp_path / "mine")
    backend = create_backend("cooccurrence", index=default_index)
    backend.close()
    web = open_count_source("infini-gram", cache_path=mine.web_counts)
    web.close()

    class Words:
        name = "words"
        version = "1"

        def describe(self, words):
            return {w: f"a {w}" for w in words}

    described = CachedDescriber(Words(), mine.descriptions).describe(["golf"])
    assert described == {"golf": "a golf"}

    class Fixed:
        name = "fixed"
        dimension = 2

        def encode_batch(self, texts):
            import numpy as np

            return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

        encode = encode_batch

    encoder = CachedEncoder(Fixed(), cache_path=mine.embeddings)
    encoder.encode(["golf"])
    encoder.close()
    assert default_vocab_dir("m", home=mine.home).parent == mine.vocab
    assert mine.descriptions.exists() and mine.embeddings.exists()
    assert not elsewhere.exists()


def test_service_settings_put_every_cache_under_its_home(tmp_path: Path, elsewhere: Path):
    pytest.importorskip("leakage_service")
    from leakage_service.settings import Settings

    settings = Settings(home=tmp_path)
    assert settings.paths == Paths(tmp_path)
    for name, rel in LOCATIONS.items():
        assert getattr(settings.paths, name) == tmp_path / rel, name
    assert settings.index_path == tmp_path / "corpus" / "default.sqlite"
    assert settings.jobs_path == tmp_path / "service" / "jobs.sqlite"
    assert settings.uploads_dir == tmp_path / "service" / "uploads"
    moved = Settings(home=tmp_path, index=tmp_path / "i.sqlite", jobs_db=tmp_path / "j/j.sqlite")
    assert (moved.index_path, moved.jobs_path) == (tmp_path / "i.sqlite", tmp_path / "j/j.sqlite")
    assert moved.uploads_dir == tmp_path / "j" / "uploads"
    assert Settings.from_env({HOME_VARIABLE: str(tmp_path)}).paths == Paths(tmp_path)
    assert Settings.from_env({}).home == default_home()  # not the process's LEAKAGE_HOME


def test_leakage_home_is_set_for_the_test_that_asks_for_it_only(tmp_path: Path):
    """tests/conftest.py's ``leakage_home`` once set the variable for the rest of the session,
    so a later test saw it or not depending on the order the tests ran in."""
    import os
    import shutil
    import subprocess
    import sys

    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_order.py").write_text(
        "import os\n\n\n"
        "def test_asks(leakage_home):\n"
        "    assert os.environ['LEAKAGE_HOME'] == str(leakage_home)\n\n\n"
        "def test_does_not_ask(default_index):\n"
        "    assert 'LEAKAGE_HOME' not in os.environ\n"
    )
    env = {k: v for k, v in os.environ.items() if k != HOME_VARIABLE}
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         str(tmp_path / "test_order.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 passed" in p.stdout
