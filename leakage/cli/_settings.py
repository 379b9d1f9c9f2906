"""The command line's settings: the variables it reads, in one pydantic-settings model, read
when a command needs them (:func:`leakage.cli.cli_paths`, :func:`leakage.cli.cli_variables`).

``LEAKAGE_HOME``, the LLM endpoint (``LEAKAGE_LLM_BASE_URL``, ``LEAKAGE_LLM_MODEL``,
``LEAKAGE_LLM_API_KEY`` or ``OPENAI_API_KEY``) and the web count sources' keys
(``SERPAPI_API_KEY``, ``GOOGLE_API_KEY``, ``GOOGLE_CSE_ID``). The commands hand the values to
the library explicitly (:func:`leakage.cli.cli_variables`: the ``variables`` option of the
backends, the LLM agents and the describers), so none of the library's ``from_env``
factories runs under the command line. Keys are ``SecretStr``: the settings' repr and
errors never show them. The service has its own settings (``leakage_service.settings``),
which also refuse an unknown ``LEAKAGE_*`` variable; the command line ignores the service's
variables.

This module imports pydantic-settings (about 0.1 s of imports on top of pydantic), so the
command line loads it only where a command reads a setting, and only when one of the
variables it reads is set (``LEAKAGE_*`` or a key's, :data:`leakage.cli.OTHER_VARIABLES`):
with none, they are the model's defaults, which ``cli_paths`` and ``cli_variables`` give
without it (``leakage guess`` is meant to answer within 2 s; tests/test_settings_cli.py
checks that the two agree).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, field_validator
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

    llm_base_url: str | None = Field(default=None, validation_alias="LEAKAGE_LLM_BASE_URL")
    """``LEAKAGE_LLM_BASE_URL``: an OpenAI-compatible endpoint's base URL, where a command
    uses an endpoint without ``--llm-endpoint`` (default: OpenAI's API when a key is set)."""

    llm_model: str | None = Field(default=None, validation_alias="LEAKAGE_LLM_MODEL")
    """``LEAKAGE_LLM_MODEL``: the endpoint's model name, where no ``--model`` names one."""

    llm_api_key: SecretStr | None = Field(default=None, validation_alias="LEAKAGE_LLM_API_KEY")
    """``LEAKAGE_LLM_API_KEY``: the endpoint's key (sent as a bearer token)."""

    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    """``OPENAI_API_KEY``: the endpoint's key when ``LEAKAGE_LLM_API_KEY`` is unset."""

    serpapi_api_key: SecretStr | None = Field(default=None, validation_alias="SERPAPI_API_KEY")
    """``SERPAPI_API_KEY``: the ``serpapi`` count source's key."""

    google_api_key: SecretStr | None = Field(default=None, validation_alias="GOOGLE_API_KEY")
    """``GOOGLE_API_KEY``: the ``google-cse`` count source's key."""

    google_cse_id: str | None = Field(default=None, validation_alias="GOOGLE_CSE_ID")
    """``GOOGLE_CSE_ID``: the ``google-cse`` count source's engine id (cx)."""

    @field_validator(
        "llm_base_url",
        "llm_model",
        "llm_api_key",
        "openai_api_key",
        "serpapi_api_key",
        "google_api_key",
        "google_cse_id",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        if isinstance(value, str):
            return value.strip() or None
        return value

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

    def variables(self) -> dict[str, str]:
        """The library's variables that are set, by name, with their values (keys revealed:
        this goes to the library's ``variables`` options, never to output)."""
        out: dict[str, str] = {}
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if name == "home" or value is None:
                continue
            alias = field.validation_alias
            assert isinstance(alias, str)
            out[alias] = value.get_secret_value() if isinstance(value, SecretStr) else value
        return out
