"""Shared fixtures.

The third-party reference data lives beside the repository in ``../shared/data`` (see its
README); it is not redistributable, so it is never copied here. CI always has it; a developer
machine may not, and the tests that need it skip with the reason instead of failing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ``../shared/data``; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared reference data at {SHARED_DATA}, which is absent")
    return SHARED_DATA


REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "corpora" / "examples"


@pytest.fixture(scope="session")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home folder for the whole session holding the real default index (built once). It
    sets no environment variable: pass it explicitly (``Paths(shared_home)``, ``env=``), or
    ask for ``leakage_home`` to have it as ``LEAKAGE_HOME`` during one test."""
    from leakage.corpus import build_index, default_documents
    from leakage.paths import Paths

    home = tmp_path_factory.mktemp("leakage-home")
    docs, sources = default_documents()
    build_index(Paths(home).index, docs, sources=sources)
    return home


@pytest.fixture
def leakage_home(shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``shared_home`` as ``LEAKAGE_HOME`` for this test only (unset again after it, so no
    test depends on which ran before it)."""
    monkeypatch.setenv("LEAKAGE_HOME", str(shared_home))
    return shared_home


@pytest.fixture(scope="session")
def default_index(shared_home: Path) -> Path:
    from leakage.paths import Paths

    return Paths(shared_home).index


@pytest.fixture(scope="session")
def cooccurrence(default_index: Path):
    """The co-occurrence backend on the real default index."""
    from leakage.backends import create_backend

    backend = create_backend("cooccurrence", index=default_index)
    yield backend
    backend.source.close()


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2 (real model, loaded once), cached in memory only."""
    from leakage.encoders import CachedEncoder, SentenceTransformerEncoder

    return CachedEncoder(SentenceTransformerEncoder("all-MiniLM-L6-v2"))


@pytest.fixture
def from_env_refused(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The library's ``from_env`` factories (the web count sources', the OpenAI-compatible
    client's) fail when called: what the command line or the service opens must get its keys
    and endpoint from their settings, as the ``variables`` option."""
    from leakage.backends.cooccurrence._engines import (
        GoogleCseSource,
        InfiniGramSource,
        SerpApiSource,
    )
    from leakage.backends.cooccurrence._web import WebCountSource
    from leakage.llm import OpenAICompatibleClient

    def refuse(cls: type, **kw: object) -> None:
        raise AssertionError(f"{cls.__name__}.from_env was called")

    for source in (WebCountSource, SerpApiSource, GoogleCseSource, InfiniGramSource):
        monkeypatch.setattr(source, "from_env", classmethod(refuse))
    monkeypatch.setattr(OpenAICompatibleClient, "from_env", classmethod(refuse))
    return monkeypatch


@pytest.fixture(scope="session")
def words(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small word file for the open seats, the spy's seat's vocabulary in tests (embedded in
    memory with the bundled MiniLM)."""
    from leakage.vocab import merge_words, wordfreq_words

    path = tmp_path_factory.mktemp("vocab") / "words.txt"
    extra = ["violin", "cello", "viola", "harp", "fiddle", "orchestra", "bow", "piano"]
    path.write_text("\n".join(merge_words(wordfreq_words(400), extra)) + "\n", "utf-8")
    return str(path)
