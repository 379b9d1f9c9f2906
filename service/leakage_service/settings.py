"""The service's settings: one object, read once from ``LEAKAGE_*`` environment variables.

``Settings`` is a pydantic-settings ``BaseSettings``: ``Settings.from_env()`` reads the
environment through pydantic-settings' environment source (``LEAKAGE_`` + the upper-case
field name) and is what ``leakage serve`` and ``create_app()`` use; a ``Settings``
built directly (``Settings(home=...)``, as the tests do) takes the values it is given and
reads no variable. Every file the service keeps lies under ``home`` (``Settings.paths``, a
:class:`leakage.paths.Paths`), unless ``index`` or ``jobs_db`` names another place; the
service hands these paths to the library explicitly. So it does the LLM endpoint
(``LEAKAGE_LLM_*``, ``OPENAI_API_KEY``) and the web count sources' keys (``SERPAPI_API_KEY``,
``GOOGLE_API_KEY``, ``GOOGLE_CSE_ID``): they are settings too (keys as ``SecretStr``), given
to the backends as their ``variables`` option (``Settings.variables``), so none of the
library's ``from_env`` factories runs in the service.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from leakage.errors import InvalidInput, validation_problems
from leakage.paths import Paths, default_home
from leakage.transcripts import ReadLimits
from leakage.variables import LibraryVariables

ENV_PREFIX = "LEAKAGE_"

OTHER_VARIABLES: dict[str, str] = {
    "LEAKAGE_HOST": "docker/start.sh (--host; the image sets it)",
    "LEAKAGE_PORT": "docker/start.sh (--port) and the image's health check (Dockerfile)",
    "LEAKAGE_PREPARE": "docker/prepare.sh (which steps run; the image build sets it)",
}
"""``LEAKAGE_*`` variables that are not settings but that the project reads elsewhere (name:
who reads it). ``Settings.from_env`` refuses any other ``LEAKAGE_*`` variable, so that a
misspelt setting (``LEAKAGE_API_KEYS`` without its S) stops the server instead of being
ignored; a new variable read anywhere in the project belongs here."""


def _proxy_address(value: str) -> str:
    """A trusted proxy as uvicorn's ``forwarded_allow_ips`` reads it: ``*``, an address or a
    network (its host bits zero). uvicorn takes anything else as a literal name that a TCP
    peer never has, so a typo would silently trust nobody: refused here instead."""
    if value == "*":
        return value
    try:
        return str(ipaddress.ip_network(value) if "/" in value else ipaddress.ip_address(value))
    except ValueError:
        pass
    try:
        hint = f"; did you mean {ipaddress.ip_network(value, strict=False)}?"
    except ValueError:
        hint = ""
    raise ValueError(
        f"{value!r} is not an IP address, a network (its host bits zero) or *: give the "
        f"proxies' addresses, e.g. 10.0.0.5,172.16.0.0/12,::1{hint}"
    )


class Settings(LibraryVariables):
    """Everything an operator can set. Environment: ``LEAKAGE_`` + the upper-case field name,
    or for the library's variables (:class:`leakage.variables.LibraryVariables`, which this
    extends: the LLM endpoint's and the web count sources' keys) their own names; lists are
    comma-separated (paths: ``os.pathsep``-separated); a blank value is unset."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        # LEAKAGE_ + the upper-case field name; from_env refuses any other case first
        case_sensitive=False,
        extra="forbid",
        use_attribute_docstrings=True,
        populate_by_name=True,  # Settings(serpapi_api_key=...) as well as the variable's name
        frozen=True,
        # lists are comma-separated (_split_lists), not JSON
        enable_decoding=False,
    )

    home: Path = Field(default_factory=default_home)
    """``LEAKAGE_HOME`` (default ``~/.cache/leakage``): the folder of every file the service
    keeps (``paths``): the default index (``corpus/default.sqlite``), the embedding and
    description caches, and ``service/`` (jobs, uploads). The judge's caches (converted GGUF
    models, LLM answers) and the web count cache follow it only where the backends'
    options carry them (``runtime.Backends.options``)."""
    jobs_db: Path | None = None
    """SQLite file of the jobs and their results (default ``$LEAKAGE_HOME/service/jobs.sqlite``)."""
    index: Path | None = None
    """Co-occurrence index (default ``$LEAKAGE_HOME/corpus/default.sqlite``, built if missing)."""
    api_keys: list[Annotated[str, Field(min_length=1, pattern=r"^\S+$")]] = Field(
        default_factory=list
    )
    """Accepted API keys (``Authorization: Bearer KEY`` or ``X-API-Key``); empty: no auth.
    ``LEAKAGE_API_KEYS`` set but blank (or only commas) is an error, never "no auth"."""
    allowed_paths: list[Path] = Field(default_factory=list)
    """Server-side folders a job may read from (``POST /v1/jobs`` with ``{"path": ...}``)."""
    cors_origins: list[str] = Field(default_factory=list)
    """Origins allowed by CORS (``*`` for any); empty: no CORS headers."""
    preload: list[str] = Field(default_factory=lambda: ["cooccurrence", "embedding"])
    """Backends created at start-up. ``cooccurrence`` must load; the others are skipped (and
    reported by ``/v1/backends``) when their extra is missing."""
    backends: list[str] | None = None
    """Backends a request may use (created on first use when not preloaded); default: all."""
    workers: int = Field(default=2, ge=1, le=64)
    """Scoring threads."""
    device: str = "auto"
    """Where the models of the embedding, judge and listener backends (and the ensemble's)
    run: ``auto`` (a CUDA GPU when torch sees one, else the CPU), ``cpu``, ``cuda``,
    ``cuda:N`` or ``mps``. A device that is not there makes those backends unavailable
    (``/v1/backends`` and their 503 say what torch found); no silent fall-back to the CPU."""
    queue_size: int = Field(default=64, ge=0)
    """Scoring tasks that may wait for a thread; past this a request gets 503 + Retry-After."""
    slow_workers: int = Field(default=1, ge=1, le=64)
    """Threads of the slow pool, apart from the scoring threads: ``/v1/splits`` and the
    report pages of jobs (``report.html``, ``curves``, ``plane``, ``compare``) run there, so
    that they never hold a scoring thread. One by default: on a 2-core machine each of
    them keeps a core busy, and the scoring threads need the other."""
    slow_queue: int = Field(default=8, ge=0)
    """Slow tasks that may wait for a thread of the slow pool; past this a splits request or
    report page gets 503 ``queue_full`` + Retry-After."""
    body_timeout: float = Field(default=10.0, gt=0)
    """Seconds the server waits for the next part of a request body; a body that stops
    arriving (a client that declared 1,000 bytes and sent 5) gets 503 ``timeout``, and the
    request ends there. Each wait is bounded, so a body that keeps arriving, however slowly,
    is read (the size limits bound it)."""
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    """Largest request body for ``/v1/score``, ``/v1/score/batch`` and ``/v1/splits``."""
    max_upload_bytes: int = Field(default=256 * 1024 * 1024, ge=1024)
    """Largest job upload (``POST /v1/jobs``)."""
    # -- what an uploaded (or path job's) Inspect log or .gz file may expand to ----------
    max_log_member_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    """Most bytes one member of an Inspect ``.eval`` archive may expand to (the size its
    directory declares, checked before anything is read, and what it inflates to); past it
    the upload is a 413 ``input_too_large`` naming the member (in a job, that record's
    error). Also the most a sample's game may take."""
    max_log_bytes: int = Field(default=1024 * 1024 * 1024, ge=1024)
    """Most bytes all members of one ``.eval`` archive together (or one ``.gz`` file of a
    path job) may expand to; past it a 413 naming the member that crosses it."""
    max_log_ratio: float = Field(default=1000.0, ge=1)
    """Most a member of 1 MiB or more may expand per compressed byte; past it a 413."""
    log_read_timeout: float = Field(default=30.0, gt=0)
    """Seconds reading one Inspect log may take (reading only: not the time a job spends
    scoring its games); past it a 413 (in a job, the file's last record is that error).
    The size limits bound a log to a few seconds; this bounds what they cannot foresee."""
    # -- end of the log limits -------------------------------------------------------------
    rate_limit: float = Field(default=0.0, ge=0)
    """Requests per minute per API key (per client address without keys; requests refused
    for a missing or wrong key count against their client address); 0: no limit."""
    rate_burst: int = Field(default=20, ge=1)
    """How many requests a key may send at once before the rate limit applies."""
    auth_failure_limit: float = Field(default=30.0, ge=0)
    """Failed authentication attempts (requests refused 401 for a missing or wrong key) per
    minute per client address, whatever ``rate_limit`` says; an address past it (and its
    burst) gets 429 + Retry-After for every ``/v1`` request, a valid key included, until the
    allowance refills (refusing before the key is checked is what stops the guessing);
    0: no limit."""
    auth_failure_burst: int = Field(default=10, ge=1)
    """How many failed authentication attempts an address may make at once."""
    trusted_proxies: list[Annotated[str, AfterValidator(_proxy_address)]] = Field(
        default_factory=list
    )
    """Addresses or networks (``10.0.0.5``, ``172.16.0.0/12``, ``::1``; ``*`` for every peer)
    of the reverse proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` headers are
    believed (uvicorn's ``forwarded_allow_ips``): a request from one of them counts as coming
    from the client the header names, for the limits per client address and the access log.
    Empty (the default): no forwarded header is believed, whoever sends it, so that a client
    cannot pick the address its failed key attempts count against."""
    report_cache_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    """Bytes of serialised reports kept in memory, keyed by request (body, backend, options),
    least recently used dropped first; 0: off."""
    max_candidates: int = Field(default=1000, ge=2)
    """Most candidate words one game may have (a Chameleon card with the request's
    distractors, a SpyGame pair with its distractors); more is a 422 naming the field."""
    max_text_chars: int = Field(default=2000, ge=1)
    """Longest clue or statement (characters); longer is a 422 naming the turn."""
    max_turns: int = Field(default=1000, ge=1)
    """Most turns one game may have; more is a 422."""
    max_game_chars: int = Field(default=20_000, ge=1)
    """Most characters of turn text one game may have, all turns together; more is a 422.
    Bounds what every backend reads (the embedding model encodes every character)."""
    max_game_cost: int = Field(default=1_000_000, ge=1)
    """Most work one game may ask of a backend, in units of candidates x (bytes of turn text
    + 32) + bytes of the candidates (``inputs.GameCost``: the LLM judge encodes a prompt for
    each candidate, then reads every clue token after it), times 250 on the judge and the
    ensemble (``leakage.backends.costs`` on their factories); once the judge is loaded, a
    token of its model counts as 5 bytes where that is more. More is a 422. Measured on this
    2-core machine under a load of 3 to 5 by ``python -m benchmarks.service_game_cost``: a
    unit takes the co-occurrence backend about 4 us of CPU with a cold cache (a game at the
    limit: 3.3 s) and the judge 4 to 5 ms of CPU, whatever the text (a game at its 4,000
    units: 20 s of CPU, 10 s on two free cores). Every shipped example, played game and
    CK-Arena dev log (at most 3,971 units) fits on every backend."""
    score_timeout: float = Field(default=30.0, gt=0)
    """Seconds a ``/v1/score`` request may take, queue wait included (and a
    ``/v1/score/batch`` request until its stream starts); past it the request gets 503 +
    Retry-After, a task still queued never runs, and one waiting for its backend gives up.
    A game already being scored is finished (the size limits bound it)."""
    backend_load_wait: float = Field(default=5.0, ge=0)
    """Seconds a scoring or splits request waits for its backend's first load (the judge's
    model can take a minute or more) before its deadline (``score_timeout``) starts; past it
    the request gets 503 ``backend_loading`` + Retry-After with the time so far and the last
    load's, while the load goes on in the background for the requests after it."""
    max_splits_cost: int = Field(default=250_000, ge=1)
    """Most work one ``/v1/splits`` request may ask of the embedding model, in units of
    64 per description + its UTF-8 bytes (``routes.splits.SplitsCost``; a word WordNet will
    describe counts 128 bytes, about their mean, until it is described). Checked before any
    work, and for WordNet again once the descriptions are written, before any is embedded;
    more is a 413 naming ``pairs`` or ``descriptions``. Measured on this 2-core machine (bf16)
    under a load of 4 to 5 by ``python -m benchmarks.service_splits``: MiniLM takes 35 to 55 us
    a unit; a request at the limit (110 pairs, 1 KB descriptions: 239,360 units) about 11 s
    alone, and CK-Arena's 527 pairs with WordNet (182,208 units) about 8 s, under the
    scoring deadline (``score_timeout``), which a splits request has too."""
    job_max_age_days: float = Field(default=7.0, ge=0)
    """Finished jobs (and their results and uploads) older than this are deleted; 0: kept."""
    job_max_bytes: int = Field(default=1024 * 1024 * 1024, ge=0)
    """Total size of stored job results and uploads; past it the oldest finished jobs are
    deleted first; 0: no limit."""
    allow_public_without_keys: bool = False
    """Serve on an address other than loopback without API keys (refused by default)."""
    max_batch_games: int = Field(default=10_000, ge=1)
    """Most games one ``/v1/score/batch`` request may carry (more: use a job)."""
    on_restart: Literal["resume", "fail"] = "resume"
    """What happens to a job that was running when the server stopped."""
    ray_address: str | None = None
    """A Ray cluster that scores the jobs (``ray://host:10001``, ``host:6379``, or ``auto``:
    the cluster this machine belongs to), with the engine of ``leakage batch --engine ray``;
    its actors build their own backend. Unset: jobs are scored in the server's process with
    its loaded backend. Needs the ``batch`` extra (Ray) on the server and the cluster."""
    job_chunk_size: int = Field(default=16, ge=1, le=10_000)
    """Records a job scores, stores and commits to its step table together: a running
    job's views and progress move by this many records."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """The service's log level, in either case (``INFO`` is ``info``)."""

    def read_limits(self) -> ReadLimits:
        """The limits Inspect logs and ``.gz`` files are read under (``max_log_*``)."""
        return ReadLimits(
            max_member_bytes=self.max_log_member_bytes,
            max_expanded_bytes=self.max_log_bytes,
            max_ratio=self.max_log_ratio,
            max_seconds=self.log_read_timeout,
        )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Built directly, a Settings is what it is given; the environment is read by
        # from_env alone, which checks the names first (a misspelt setting stops the server).
        return (init_settings,)

    @field_validator(
        "api_keys", "cors_origins", "preload", "backends", "trusted_proxies", mode="before"
    )
    @classmethod
    def _split_lists(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("allowed_paths", mode="before")
    @classmethod
    def _split_paths(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(os.pathsep) if part.strip()]
        return value

    @field_validator("device", mode="before")
    @classmethod
    def _checked_device(cls, value: object) -> object:
        from leakage.runtime import check_device

        return check_device(value) if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_case_level(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @classmethod
    def variable_names(cls) -> dict[str, str]:
        """Field name -> the variable that sets it."""
        return {
            name: field.validation_alias
            if isinstance(field.validation_alias, str)
            else ENV_PREFIX + name.upper()
            for name, field in cls.model_fields.items()
        }

    @property
    def paths(self) -> Paths:
        """Every location under ``home`` (:class:`leakage.paths.Paths`)."""
        return Paths(self.home)

    @property
    def jobs_path(self) -> Path:
        return self.jobs_db or self.paths.jobs

    @property
    def uploads_dir(self) -> Path:
        return self.jobs_path.parent / "uploads"

    @property
    def index_path(self) -> Path:
        return self.index or self.paths.index

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``LEAKAGE_*`` variables (``environ`` defaults to ``os.environ``);
        ``overrides`` (e.g. command-line options) win. Bad values raise ``InvalidInput``
        naming the variable, and so does a ``LEAKAGE_*`` variable that is neither a setting
        nor in ``OTHER_VARIABLES`` (a misspelt setting must not be silently ignored)."""
        env = os.environ if environ is None else environ
        unknown = _unknown_variables(env, list(cls.variable_names().values()))
        if unknown:
            raise InvalidInput(
                f"bad service setting: {'; '.join(unknown)}; fix or unset "
                f"{'it' if len(unknown) == 1 else 'them'} (the settings: docs/service.md, "
                "Configuration)"
            )
        keys = env.get(ENV_PREFIX + "API_KEYS")
        if keys is not None and not keys.replace(",", "").strip():
            # fail closed: a blank key list must not turn authentication off
            raise InvalidInput(
                f"bad service setting: {ENV_PREFIX}API_KEYS is set but holds no key "
                f"({keys!r}); give comma-separated keys, or unset it to serve without keys"
            )
        values = _Environment(cls, env)()
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**values)
        except ValidationError as err:
            problems = "; ".join(
                f"{ENV_PREFIX}{f.upper()}: {m}" for f, m in validation_problems(err, dotted=True)
            )
            raise InvalidInput(f"bad service setting: {problems}") from None


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source over ``environ`` (``Settings.from_env``'s
    mapping) rather than ``os.environ``: values are stripped, and a blank one is unset."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        # looked up lower-cased, as pydantic-settings does when names are not case-sensitive
        self.env_vars = {
            name.lower(): value.strip()
            for name, value in environ.items()
            # other than LEAKAGE_* (any case: from_env has refused a wrong one), only the
            # exact names the library documents (SERPAPI_API_KEY, not serpapi_api_key)
            if value.strip() and (name.upper().startswith(ENV_PREFIX) or name.isupper())
        }


def _unknown_variables(env: Mapping[str, str], settings: list[str]) -> list[str]:
    """One phrase per ``LEAKAGE_*`` variable in ``env`` (any case) that is neither one of
    ``settings`` nor in ``OTHER_VARIABLES``, naming the closest known name."""
    known = [*settings, *OTHER_VARIABLES]
    suffixes = {name.removeprefix(ENV_PREFIX): name for name in known}
    found = []
    for name in sorted(env):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or name in known:
            continue
        shown = name if name.isidentifier() else repr(name)
        close = difflib.get_close_matches(upper.removeprefix(ENV_PREFIX), suffixes, n=1)
        if close and suffixes[close[0]] == upper:
            hint = f"did you mean {upper}? variable names are case-sensitive"
        elif close:
            hint = f"did you mean {suffixes[close[0]]}?"
        else:
            hint = "no setting has a similar name"
        found.append(f"unknown variable {shown} ({hint})")
    return found


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once (``create_app()`` without arguments uses them)."""
    return Settings.from_env()
