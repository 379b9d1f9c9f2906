"""The command line's settings: the variables it reads, in one pydantic-settings model, read
when a command needs them (:func:`leakage.cli.cli_paths`, :func:`leakage.cli.cli_variables`).

``LEAKAGE_HOME`` and the library's variables (:class:`leakage.variables.LibraryVariables`:
the LLM endpoint's ``LEAKAGE_LLM_*`` and ``OPENAI_API_KEY``, the web count sources' keys),
which the service's settings (``leakage_service.settings``) extend too. The commands hand the
values to the library explicitly (:func:`leakage.cli.cli_variables`: the ``variables``
option of the backends, the LLM agents and the describers), so none of the library's
``from_env`` factories runs under the command line. The service's settings also refuse an
unknown ``LEAKAGE_*`` variable; the command line ignores the service's variables.

This module imports pydantic-settings (about 0.1 s of imports on top of pydantic), so the
command line loads it only where a command reads a setting, and only when one of the
variables it reads is set (``LEAKAGE_*`` or a key's, :data:`leakage.cli.OTHER_VARIABLES`):
with none, they are the model's defaults, which ``cli_paths`` and ``cli_variables`` give
without it (``leakage guess`` is meant to answer within 2 s; tests/test_settings_cli.py
checks that the two agree).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from leakage.paths import HOME_VARIABLE, Paths, default_home
from leakage.variables import LibraryVariables


class CliSettings(LibraryVariables):
    """What the command line reads from the environment: ``LEAKAGE_HOME`` and the library's
    variables (:class:`leakage.variables.LibraryVariables`). Names are case-sensitive; other
    variables are ignored."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore")

    home: Path = Field(default_factory=default_home, validation_alias=HOME_VARIABLE)
    """``LEAKAGE_HOME`` (blank: unset): the folder of every file leakage keeps
    (:class:`leakage.paths.Paths`; default ``~/.cache/leakage``)."""

    @field_validator("home", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        if isinstance(value, str):
            return value.strip() or default_home()
        return value

    @field_validator("home")
    @classmethod
    def _expand_user(cls, value: Path) -> Path:
        return value.expanduser()

    @property
    def paths(self) -> Paths:
        """Every location under ``home``."""
        return Paths(self.home)
