"""The environment variables the library's own ``from_env`` factories would read, as one
pydantic-settings model that the command line's settings (``leakage.cli._settings``) and the
service's (``leakage_service.settings``) extend.

The command line and the service read them and hand them to the library explicitly, as the
``variables`` option of the backends, the LLM agents and the describers
(:meth:`LibraryVariables.variables`), so no library code reads the environment under either.
They are the LLM endpoint's (``LEAKAGE_LLM_BASE_URL``, ``LEAKAGE_LLM_MODEL``,
``LEAKAGE_LLM_API_KEY``, ``OPENAI_API_KEY``) and the web count sources' keys
(``SERPAPI_API_KEY``, ``GOOGLE_API_KEY``, ``GOOGLE_CSE_ID``). Keys are ``SecretStr``: a
settings object's repr and its errors never show them. A blank value is unset.

This module imports pydantic-settings (about 0.1 s): the command line loads it only when one
of these variables (or another ``LEAKAGE_*``) is set.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class LibraryVariables(BaseSettings):
    """The library's variables, each under its exact name (``validation_alias``)."""

    model_config = SettingsConfigDict(use_attribute_docstrings=True, frozen=True)

    llm_base_url: str | None = Field(default=None, validation_alias="LEAKAGE_LLM_BASE_URL")
    """``LEAKAGE_LLM_BASE_URL``: an OpenAI-compatible endpoint's base URL, where no option
    names one (default: OpenAI's API when a key is set)."""

    llm_model: str | None = Field(default=None, validation_alias="LEAKAGE_LLM_MODEL")
    """``LEAKAGE_LLM_MODEL``: the endpoint's model name, where no option names one."""

    llm_api_key: SecretStr | None = Field(default=None, validation_alias="LEAKAGE_LLM_API_KEY")
    """``LEAKAGE_LLM_API_KEY``: the endpoint's key (sent as a bearer token; never shown)."""

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

    def variables(self) -> dict[str, str]:
        """The library's variables that are set, by name, with their values (keys revealed:
        this goes to the library's ``variables`` options, never to output)."""
        out: dict[str, str] = {}
        for name, field in LibraryVariables.model_fields.items():
            value = getattr(self, name)
            if value is None:
                continue
            alias = field.validation_alias
            assert isinstance(alias, str)
            out[alias] = value.get_secret_value() if isinstance(value, SecretStr) else value
        return out
