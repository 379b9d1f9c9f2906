"""Where leakage keeps its files: one home folder, and every location under it.

:class:`Paths` names each location of a home (the default index, every cache, the jobs).
The command line and the service read ``LEAKAGE_HOME`` through their pydantic-settings
models (``leakage.cli._settings.CliSettings``, ``leakage_service.settings.Settings``) and
hand explicit paths to the library. A library function given a path uses that path and
reads no environment variable; the defaults of its public signatures
(``default_index_path()``, ``default_cache_path()``, ...) are :func:`default_paths`, kept
for code that passes nothing, and :func:`resolve_home` is the one place in the library that
reads ``LEAKAGE_HOME`` for them. :func:`default_home` (``~/.cache/leakage``) is the default
of all three.

Only the standard library is imported here: the command line resolves its paths before it
loads anything else (tests/test_cli_startup.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

HOME_VARIABLE = "LEAKAGE_HOME"
"""The environment variable naming the home folder."""


def default_home() -> Path:
    """``~/.cache/leakage``: the home when ``LEAKAGE_HOME`` is unset or blank."""
    return Path.home() / ".cache" / "leakage"


def resolve_home(
    home: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """The home folder: ``home`` when given, else ``LEAKAGE_HOME`` from ``environ``
    (default ``os.environ``), else :func:`default_home`. ``~`` is expanded."""
    if home is None or not str(home).strip():
        env = os.environ if environ is None else environ
        home = env.get(HOME_VARIABLE, "").strip() or default_home()
    return Path(home).expanduser()


@dataclass(frozen=True)
class Paths:
    """Every location under one home folder (nothing is created until something is written).

    ``Paths(home)`` for an explicit home; :meth:`from_env` (or :func:`default_paths`) for the
    one ``LEAKAGE_HOME`` names.
    """

    home: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "home", Path(self.home).expanduser())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Paths:
        """The paths of the home ``LEAKAGE_HOME`` names (:func:`resolve_home`)."""
        return cls(resolve_home(environ=environ))

    @property
    def index(self) -> Path:
        """The default co-occurrence index (built from the bundled corpora when missing)."""
        return self.home / "corpus" / "default.sqlite"

    @property
    def embeddings(self) -> Path:
        """The embedding cache (SQLite, by model and text)."""
        return self.home / "embeddings.sqlite"

    @property
    def web_counts(self) -> Path:
        """The web count sources' cache of hit counts."""
        return self.home / "web-counts.sqlite"

    @property
    def llm_responses(self) -> Path:
        """The OpenAI-compatible endpoint's cache of answers."""
        return self.home / "llm-responses.sqlite"

    @property
    def models(self) -> Path:
        """Converted GGUF models, one folder each (:meth:`model`)."""
        return self.home / "models"

    def model(self, name: str) -> Path:
        """The converted folder of the GGUF model ``name``."""
        return self.models / name

    @property
    def descriptions(self) -> Path:
        """The describers' cache (``leakage splits``)."""
        return self.home / "descriptions.sqlite"

    @property
    def vocab(self) -> Path:
        """Vocabulary indexes for ``leakage guess``, one folder each."""
        return self.home / "vocab"

    @property
    def games(self) -> Path:
        """Association tables of the played cards (``leakage play``)."""
        return self.home / "games"

    @property
    def service(self) -> Path:
        """The service's own folder."""
        return self.home / "service"

    @property
    def jobs(self) -> Path:
        """The service's job store (SQLite)."""
        return self.service / "jobs.sqlite"

    @property
    def uploads(self) -> Path:
        """The service's job uploads."""
        return self.service / "uploads"

    @property
    def backend_loads(self) -> Path:
        """How long each backend took to load last time (JSON), for the service's estimate
        of a first load still under way."""
        return self.service / "backend-loads.json"


def default_paths() -> Paths:
    """The paths of the home ``LEAKAGE_HOME`` names, read now (the library's defaults)."""
    return Paths.from_env()
