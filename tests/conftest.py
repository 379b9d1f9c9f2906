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
def leakage_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LEAKAGE_HOME for the whole session, holding the real default index (built once)."""
    import os

    from leakage.corpus import build_index, default_documents

    home = tmp_path_factory.mktemp("leakage-home")
    docs, sources = default_documents()
    build_index(home / "corpus" / "default.sqlite", docs, sources=sources)
    old = os.environ.get("LEAKAGE_HOME")
    os.environ["LEAKAGE_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("LEAKAGE_HOME", None)
    else:
        os.environ["LEAKAGE_HOME"] = old


@pytest.fixture(scope="session")
def default_index(leakage_home: Path) -> Path:
    return leakage_home / "corpus" / "default.sqlite"


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
