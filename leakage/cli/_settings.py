"""The command line's settings: the ``LEAKAGE_*`` variables it reads, in one pydantic-settings
model, read when a command needs them (:func:`leakage.cli.cli_paths`).

Only ``LEAKAGE_HOME`` so far. The LLM endpoint (``LEAKAGE_LLM_*``) and the web sources' keys
are still read by the library's ``from_env`` factories that the commands call. The service
has its own settings (``leakage_service.settings``), which also refuse an unknown
``LEAKAGE_*`` variable; the command line ignores the service's variables.

This module imports pydantic-settings (about 0.1 s of imports on top of pydantic), so the
command line loads it only where a command reads a setting, and only when some ``LEAKAGE_*``
variable is set: with none, they are the model's defaults, which ``cli_paths`` gives without
it (``leakage guess`` is meant to answer within 2 s; tests/test_settings_cli.py checks that
the two agree).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from leakage.paths import HOME_VARIABLE, Paths, default_home


class CliSettings(BaseSettings):
    """What the command line reads from the environment (names are case-sensitive; other
    variables are ignored)."""

    model_config = SettingsConfigDict(
        case_sensitive=True, extra="ignore", frozen=True, use_attribute_docstrings=True
    )

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
