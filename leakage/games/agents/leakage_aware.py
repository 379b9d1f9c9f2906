"""The leakage-aware non-chameleon: it asks what each clue would leak before saying it.

The adversary is the chameleon that plays: it hears every clue but its own and infers the
secret from them (the posterior chameleon, :mod:`leakage.games.agents.posterior`). The
speaker does not know who the chameleon is, so for each proposal (up to ``proposals``
recognisable clues of the card's table, from the secret's strongest to its weakest
associates, or an LLM's proposals through ``proposer``) it asks an *oracle* for the
posterior the chameleon would hold after the clues said so far plus that clue, once for
every other player that could be the chameleon (that player's clue left out; a player yet
to speak hears them all), and counts the worst of them. It keeps the proposals that

1. leave the adversary's probability of the secret at most ``budget`` whoever the
   chameleon is,
2. are more likely under the secret than under the other candidates on their own, so the
   fellow players, who know the secret, can still recognise the clue: by default more
   likely than under the *average* other candidate (``recognise="mean"``); ``"max"``
   asks for more likely than under *every* other candidate, and
3. with ``hide_top=True`` (default), do not make the secret the adversary's most probable
   candidate, whoever the chameleon is,

and says the one with the widest recognition margin. When none meets all three it drops
the third, then the first; failing those it says the proposal that leaks least.

What that guarantees: the chameleon's posterior after all clues is the one the last
non-chameleon to speak computed for the true chameleon (the chameleon's own clue never
counts, and nobody speaks after the last non-chameleon but, possibly, the chameleon). So
whenever that speaker kept condition 1, the chameleon's P(secret) when it guesses is at most
``budget``, provided the oracle infers as the chameleon does: the default
:class:`TableOracle` runs the posterior chameleon's own inference on the same association
tables. (An earlier version scored the hypothetical transcript with every clue said,
the chameleon's too: the chameleon's decoy clue diluted the secret, so the agent believed
itself under budget while the real adversary held P(secret) 0.41 on average.)

Why not ``"max"`` and no third condition, the literal reading: a clue whose most likely
reading is the secret makes the secret the maximum-posterior guess, so a chameleon that
guesses the maximum posterior is right whatever the budget; in the 200-game tournament of
docs/games.md that agent never won against the posterior chameleon.

Oracles: :class:`TableOracle` (default) is the posterior chameleon's inference;
:class:`LibraryOracle` scores the hypothetical transcript with
:func:`leakage.scoring.score_transcript`; :class:`ServiceOracle` sends it to a running
``leakage`` service (``POST {base_url}/v1/score``, body ``leakage.transcript/1``) and reads
the report's posterior. This is the feedback loop the service exists for. Each
hypothetical transcript marks the players whose clues the chameleon hears as
non-chameleons, so both score exactly those clues.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from leakage.backends.base import LikelihoodBackend
from leakage.errors import LLMError
from leakage.games._types import ChameleonObservation
from leakage.games.agents._association import AssociationTables, gives_away
from leakage.games.agents._common import TableAgent, vote_least_associated, vote_reflection
from leakage.games.agents.posterior import heard_posterior
from leakage.transcripts import ChameleonTranscript


class LeakageOracle(Protocol):
    """Posterior over the candidates after a (hypothetical) transcript."""

    def posteriors(self, transcripts: Sequence[ChameleonTranscript]) -> list[dict[str, float]]:
        """The final posterior of each transcript (candidate -> probability)."""
        ...


class TableOracle:
    """The posterior chameleon's inference: its association tables, the non-chameleons'
    clues, a uniform prior (:func:`~leakage.games.agents.posterior.heard_posterior`)."""

    def __init__(self, tables: AssociationTables) -> None:
        self.tables = tables

    def posteriors(self, transcripts: Sequence[ChameleonTranscript]) -> list[dict[str, float]]:
        out = []
        for t in transcripts:
            table = self.tables.get(t.candidates, t.category)
            hidden = {p.id for p in t.players if p.role == "chameleon"}
            post = heard_posterior(table, [x.text for x in t.turns if x.player not in hidden])
            out.append(dict(zip(table.candidates, post.tolist(), strict=True)))
        return out


class LibraryOracle:
    """Posteriors from the scoring library with a local backend."""

    def __init__(self, backend: LikelihoodBackend) -> None:
        self.backend = backend

    def posteriors(self, transcripts: Sequence[ChameleonTranscript]) -> list[dict[str, float]]:
        from leakage.scoring import score_transcript

        out = []
        for t in transcripts:
            report = score_transcript(t, self.backend)
            out.append(dict(report.steps[-1].posterior) if report.steps else {})
        return out


class ServiceOracle:
    """Posteriors from a ``leakage`` HTTP service (client mode)."""

    def __init__(
        self,
        base_url: str,
        *,
        backend: str = "cooccurrence",
        client: Any = None,
        timeout: float = 30.0,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.backend = backend
        self._client: httpx.Client = client or httpx.Client(timeout=timeout)

    def posteriors(self, transcripts: Sequence[ChameleonTranscript]) -> list[dict[str, float]]:
        import httpx

        out = []
        url = f"{self.base_url}/v1/score"
        for t in transcripts:
            try:
                r = self._client.post(
                    url,
                    params={"backend": self.backend},
                    content=t.model_dump_json(exclude_none=True),
                    headers={"content-type": "application/json"},
                )
            except httpx.HTTPError as err:
                raise LLMError(f"{url}: the leakage service did not answer: {err}") from err
            if r.status_code != 200:
                raise LLMError(f"{url}: HTTP {r.status_code}: {r.text[:200]}")
            steps = r.json().get("steps") or []
            out.append({k: float(v) for k, v in steps[-1]["posterior"].items()} if steps else {})
        return out


Proposer = Callable[[ChameleonObservation], list[str]]


def adversary_views(obs: ChameleonObservation, clue: str) -> list[tuple[tuple[str, str], ...]]:
    """The clues the chameleon would have heard once ``clue`` is said, one view per other
    player it could be (views that coincide kept once): that player's clue left out."""
    spoken = (*obs.clues, (obs.player, clue))
    views = (tuple(pc for pc in spoken if pc[0] != q) for q in obs.players if q != obs.player)
    return list(dict.fromkeys(views))


def _hypothetical(
    obs: ChameleonObservation, heard: Sequence[tuple[str, str]]
) -> ChameleonTranscript:
    """A transcript of the clues an adversary heard, their speakers marked non-chameleons; a
    silent placeholder holds the chameleon role the format requires."""
    ids = list(dict.fromkeys(p for p, _ in heard))
    players = [{"id": p, "role": "non-chameleon"} for p in ids]
    players.append({"id": "?adversary", "role": "chameleon"})
    return ChameleonTranscript.model_validate(
        {
            "game": "chameleon",
            "id": "hypothetical",
            "players": players,
            "turns": [{"player": p, "text": c} for p, c in heard],
            "category": obs.category,
            "candidates": list(obs.candidates),
            "secret": obs.secret,
        }
    )


class LeakageAwareAgent(TableAgent):
    """Non-chameleon that keeps the adversary's P(secret) under ``budget`` (see module doc)."""

    name = "leakage-aware"

    def __init__(
        self,
        tables: AssociationTables,
        oracle: LeakageOracle | None = None,
        *,
        budget: float = 0.25,
        proposals: int = 24,
        proposer: Proposer | None = None,
        recognise: str = "mean",
        hide_top: bool = True,
    ) -> None:
        super().__init__(tables)
        if not 0 < budget <= 1:
            raise ValueError(f"budget is a probability in (0, 1], got {budget}")
        if recognise not in ("mean", "max"):
            raise ValueError(f"recognise is 'mean' or 'max', got {recognise!r}")
        self.recognise = recognise
        self.hide_top = hide_top
        self.oracle: LeakageOracle = oracle if oracle is not None else TableOracle(tables)
        self.budget = budget
        self.proposals = proposals
        self.proposer = proposer
        self.last_choice: dict[str, Any] | None = None
        """What the last clue decision saw: proposals, worst-case leak and top flag over the
        adversary views, margin, the chosen clue and whether it kept the budget."""

    def _margin(self, rows: np.ndarray, s: int) -> np.ndarray:
        """log P(clue | secret) minus the mean (or the largest) log P(clue | other)."""
        others = np.delete(rows, s, axis=1)
        return rows[:, s] - (
            others.mean(axis=1) if self.recognise == "mean" else others.max(axis=1)
        )

    def _proposals(self, obs: ChameleonObservation) -> list[str]:
        if self.proposer is not None:
            said = self.proposer(obs)
        else:
            # The recognisable vocabulary clues, spread from the strongest to the weakest
            # associate of the secret.
            table = self.table(obs)
            s = table.column(obs.secret or "")
            mine = np.flatnonzero(self._margin(table.loglik, s) > 0)
            if mine.size == 0:
                mine = np.arange(len(table.clues))
            order = mine[np.argsort(-table.posterior[mine, s], kind="stable")]
            pick = np.unique(np.linspace(0, order.size - 1, min(self.proposals, order.size)))
            said = [table.clues[order[int(i)]] for i in pick]
        return [c for c in dict.fromkeys(said) if c and not gives_away(c, obs.secret or "")]

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        table = self.table(obs)
        secret = obs.secret or ""
        if obs.phase == "vote":
            return vote_least_associated(obs, table, secret)
        clues = self._proposals(obs) or list(table.clues[:1])
        views = [adversary_views(obs, c) for c in clues]
        posts = self.oracle.posteriors([_hypothetical(obs, v) for vs in views for v in vs])
        leak, top = np.zeros(len(clues)), np.zeros(len(clues), dtype=bool)
        at = 0
        for i, vs in enumerate(views):
            for p in posts[at : at + len(vs)]:
                leak[i] = max(leak[i], p.get(secret, 1.0))
                top[i] |= not p or max(p, key=p.__getitem__) == secret
            at += len(vs)
        margin = self._margin(table.rows(clues), table.column(secret))
        under, known = leak <= self.budget, margin > 0
        hidden = ~top if self.hide_top else np.ones_like(top)
        for ok in (under & known & hidden, under & known, known & hidden):
            if ok.any():
                i = int(np.flatnonzero(ok)[np.argmax(margin[ok])])
                break
        else:
            i = int(np.argmin(leak))
        self.last_choice = {
            "proposals": clues,
            "views": len(views[i]),
            "leak": leak.tolist(),
            "top": top.tolist(),
            "margin": margin.tolist(),
            "chosen": clues[i],
            "under_budget": bool(under[i]),
        }
        return clues[i]
