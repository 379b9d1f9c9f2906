"""``--agents`` specs: one agent name per role, ``non-chameleon=revealing,chameleon=posterior``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from leakage.errors import InvalidInput
from leakage.games._types import Agent

if TYPE_CHECKING:
    from leakage.llm import LLMClient

CHAMELEON_AGENTS: dict[str, tuple[str, ...]] = {
    "non-chameleon": (
        "revealing",
        "concealing",
        "amb",
        "trivial",
        "leakage-aware",
        "pgm",
        "llm",
        "local",
    ),
    "chameleon": ("posterior", "random", "copy", "amb", "pgm", "llm", "local"),
}
SPY_AGENTS: dict[str, tuple[str, ...]] = {
    "civilian": ("associative", "vague", "pgm", "llm", "local"),
    "spy": ("associative", "vague", "pgm", "llm", "local"),
}
for _table in (CHAMELEON_AGENTS, SPY_AGENTS):  # cheatsheet:llm[:MODEL], cheatsheet:local[:MODEL]
    for _role in _table:
        _table[_role] += ("cheatsheet",)
DEFAULTS = {
    "chameleon": {"non-chameleon": "revealing", "chameleon": "posterior"},
    "spygame": {"civilian": "associative", "spy": "associative"},
}


def parse_spec(game: str, spec: str | None) -> dict[str, str]:
    """Role -> agent name; roles not named keep the defaults. ``llm:MODEL`` and
    ``local:MODEL`` name a model (the endpoint's, or a bundled local one)."""
    table = CHAMELEON_AGENTS if game == "chameleon" else SPY_AGENTS
    out = dict(DEFAULTS[game])
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        role, eq, name = part.partition("=")
        role, name = role.strip(), name.strip()
        if not eq or role not in table:
            raise InvalidInput(
                f"--agents: {part.strip()!r}: expected ROLE=AGENT with ROLE one of "
                f"{', '.join(table)}"
            )
        if name.partition(":")[0] not in table[role]:
            raise InvalidInput(
                f"--agents: unknown agent {name!r} for {role}; choose one of "
                f"{', '.join(table[role])} (llm:MODEL, local:MODEL name a model)"
            )
        if name.partition(":")[0] == "cheatsheet" and name.split(":")[1:2] not in (
            ["llm"],
            ["local"],
        ):
            raise InvalidInput(
                f"--agents: {name!r}: a cheatsheet wraps an LLM player: "
                "cheatsheet:llm[:MODEL] or cheatsheet:local[:MODEL]"
            )
        out[role] = name
    return out


@dataclass
class AgentFactory:
    """Builds the named agents, sharing one backend, one table cache and one LLM client.

    :meth:`close` (or ``with AgentFactory(...) as factory:``) closes what the factory
    opened itself when the run ends: the default co-occurrence backend and the cheatsheet's
    encoder. A backend or an encoder given to it stays open: it is its giver's to close."""

    backend: Any = None
    """A likelihood backend (default: the co-occurrence backend on the default index)."""
    llm_endpoint: str | None = None
    service_url: str | None = None
    budget: float = 0.25
    table_cache: Path | None = None
    """Where association tables are kept between runs (default: in memory only)."""
    memory: Path | None = None
    """Cheatsheet agents: the directory of their memories, one file per game and role
    (default: in memory only, for the run)."""
    curate_every: int = 5
    lessons: str = "auto"
    """Cheatsheet agents: who writes lessons and curates: ``llm``, ``rules`` or ``auto`` (the
    LLM for an endpoint, the rules for a local model)."""
    encoder: Any = None
    """Cheatsheet agents: the embedding encoder (default: the bundled all-MiniLM-L6-v2)."""
    llm_cache: Path | None = None
    """LLM agents on an endpoint: a file where its answers are kept and reused (a request
    already answered is not sent again, as for the judge: ``Paths.llm_responses``); default:
    none, every request is sent."""
    models_dir: Path | None = None
    """Local LLM agents: where a GGUF model is converted (default ``Paths.models``)."""
    device: str = "auto"
    """Local LLM agents and the cheatsheet agents' encoder: where their models run
    (``auto``: a CUDA device when torch sees one; ``cpu``, ``cuda``, ``cuda:N``, ``mps``)."""
    variables: Mapping[str, str] | None = None
    """LLM agents on an endpoint: the values of ``LEAKAGE_LLM_*`` (and ``OPENAI_API_KEY``) as
    the caller read them (the command line's settings); default: the environment."""
    _tables: Any = None
    _clients: dict[str, LLMClient] = field(default_factory=dict)
    _opened: list[Any] = field(default_factory=list)
    """What this factory opened and closes (``close``)."""

    def close(self) -> None:
        """Close the backend and the encoder this factory opened (idempotent)."""
        while self._opened:
            self._opened.pop().close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tables(self) -> Any:
        from leakage.games.agents._association import AssociationTables

        if self._tables is None:
            if self.backend is None:
                from leakage.backends import SupportsClose, create_backend

                self.backend = create_backend("cooccurrence")
                if isinstance(self.backend, SupportsClose):
                    self._opened.append(self.backend)
            self._tables = AssociationTables(self.backend, cache_dir=self.table_cache)
        return self._tables

    def client(self, name: str) -> LLMClient:
        """The LLM client an agent name names (``llm[:MODEL]``: the endpoint's, its answers
        kept in ``llm_cache`` when set; ``local[:MODEL]``: a model run here, converted into
        ``models_dir``), picked by ``leakage.llm.open_llm`` and built once per name. A local
        model is shared with every other user of the same one in the process."""
        if name not in self._clients:
            from leakage.llm import open_llm

            kind, _, model = name.partition(":")
            if kind == "local":
                self._clients[name] = open_llm(
                    model or None,
                    kind="local",
                    models_dir=None if self.models_dir is None else str(self.models_dir),
                    device=self.device,
                )
            else:
                self._clients[name] = open_llm(
                    model or None,
                    kind="openai",
                    endpoint=self.llm_endpoint,
                    cache_path=None if self.llm_cache is None else str(self.llm_cache),
                    cache=self.llm_cache is not None,
                    variables=self.variables,
                )
        return self._clients[name]

    def oracle(self) -> Any:
        from leakage.games.agents.leakage_aware import LibraryOracle, ServiceOracle

        if self.service_url:
            return ServiceOracle(self.service_url)
        _ = self.tables  # makes the default backend
        return LibraryOracle(self.backend)

    def cheatsheet(self, game: str, name: str, role: str | None) -> Agent:
        """``cheatsheet:llm[:MODEL]`` / ``cheatsheet:local[:MODEL]``: the LLM player with a
        Dynamic Cheatsheet, its memory in ``memory/GAME.ROLE.json`` when ``memory`` is set."""
        from leakage.games.agents import cheatsheet as cs

        inner_name = name.partition(":")[2]
        if self.encoder is None:
            from leakage.encoders import open_encoder

            self.encoder = open_encoder(device=self.device)
            self._opened.append(self.encoder)
        lessons = self.lessons
        if lessons == "auto":
            lessons = "rules" if inner_name.startswith("local") else "llm"
        if lessons not in ("llm", "rules"):
            raise InvalidInput(f"cheatsheet lessons: {lessons!r}; choose llm, rules or auto")
        client = self.client(inner_name) if lessons == "llm" else None
        path = None
        if self.memory is not None:
            path = self.memory / f"{game}.{role or 'any'}.json"
        return cs.CheatsheetAgent(
            self.build(game, inner_name),
            cs.Cheatsheet(self.encoder),
            lessons=cs.LLMLessons(client) if client is not None else cs.rule_lessons,
            curator=cs.LLMCurator(client) if client is not None else None,
            curate_every=self.curate_every,
            path=path,
        )

    def build(
        self, game: str, name: str, *, partner: Agent | None = None, role: str | None = None
    ) -> Agent:
        """The named agent; ``partner``: the non-chameleons' agent, which ``copy`` imitates;
        ``role``: the role it plays (names a cheatsheet's memory file)."""
        from leakage.games.agents import llm, scripted
        from leakage.games.agents.leakage_aware import LeakageAwareAgent
        from leakage.games.agents.posterior import PosteriorChameleon
        from leakage.games.agents.spy import AssociativeSpyPlayer

        kind = name.partition(":")[0]
        if kind == "pgm":
            return self.pgm(game, name)
        if kind == "cheatsheet":
            return self.cheatsheet(game, name, role)
        if kind in ("llm", "local"):
            cls = llm.ChameleonLLMAgent if game == "chameleon" else llm.SpyLLMAgent
            return cls(self.client(name))  # type: ignore[return-value]
        makers: dict[str, Callable[[], Agent]] = {
            "revealing": lambda: scripted.RevealingAgent(self.tables),
            "concealing": lambda: scripted.ConcealingAgent(self.tables),
            "amb": scripted.AmbiguousAgent,
            "trivial": scripted.TrivialAgent,
            "copy": lambda: scripted.CopyingChameleon(_partner(partner)),
            "random": lambda: scripted.RandomChameleon(self.tables),
            "posterior": lambda: PosteriorChameleon(self.tables),
            "leakage-aware": lambda: LeakageAwareAgent(
                self.tables, self.oracle(), budget=self.budget
            ),
            "associative": lambda: AssociativeSpyPlayer(self.tables),
            "vague": lambda: AssociativeSpyPlayer(self.tables, reveal=4, name="vague"),
        }
        return makers[name]()

    def pgm(self, game: str, name: str) -> Agent:
        """``pgm`` (scripted beliefs and moves) or ``pgm:llm[:MODEL]`` / ``pgm:local[:MODEL]``
        (the same beliefs; the LLM writes the descriptions / clues): MAgIC's PGM-aware
        player, for SpyGame and for The Chameleon (either role; the non-chameleon keeps the
        factory's ``budget``)."""
        from leakage.games.agents.pgm import PGMSpyLLMAgent, PGMSpyPlayer
        from leakage.games.agents.pgm_chameleon import PGMChameleonLLMAgent, PGMChameleonPlayer

        inner = name.partition(":")[2]
        if inner and inner.partition(":")[0] not in ("llm", "local"):
            raise InvalidInput(
                f"--agents: {name!r}: the PGM-aware agent is pgm, pgm:llm[:MODEL] or "
                "pgm:local[:MODEL]"
            )
        if game == "chameleon":
            if not inner:
                return PGMChameleonPlayer(self.tables, budget=self.budget)
            return PGMChameleonLLMAgent(self.tables, self.client(inner), budget=self.budget)
        if not inner:
            return PGMSpyPlayer(self.tables)
        return PGMSpyLLMAgent(self.tables, self.client(inner))  # type: ignore[return-value]

    def agents(self, game: str, spec: str | None) -> dict[str, Agent]:
        """One agent per role; the chameleon is built last, knowing the non-chameleons'
        agent (Karabag & Topcu's chameleon knows their strategy, not the secret)."""
        out: dict[str, Agent] = {}
        for role, name in sorted(parse_spec(game, spec).items(), key=lambda r: r[0] == "chameleon"):
            out[role] = self.build(game, name, partner=out.get("non-chameleon"), role=role)
        return out


def _partner(partner: Agent | None) -> Agent:
    if partner is None:
        raise InvalidInput(
            "the copy chameleon imitates the non-chameleons' agent: build it with "
            "AgentFactory.agents (or pass partner=)"
        )
    return partner
