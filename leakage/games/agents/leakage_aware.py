"""The leakage-aware non-chameleon: it asks what each clue would leak before saying it.

For each proposal (up to ``proposals`` recognisable clues of the card's table, from the
secret's strongest to its weakest associates, or an LLM's proposals through ``proposer``),
an *oracle* returns the posterior an adversary would hold after the transcript so far plus
that clue. The agent keeps the proposals that

1. leave the adversary's probability of the secret at most ``budget``,
2. are more likely under the secret than under the other candidates on their own, so the
   fellow players, who know the secret, can still recognise the clue: by default more
   likely than under the *average* other candidate (``recognise="mean"``); ``"max"``
   asks for more likely than under *every* other candidate, and
3. with ``hide_top=True`` (default), do not make the secret the adversary's most probable
   candidate,

and says the one with the widest recognition margin. When none meets all three it drops
the third, then the first; failing those it says the proposal that leaks least.

Why not ``"max"`` and no third condition, the literal reading: a clue whose most likely
reading is the secret makes the secret the maximum-posterior guess, so a chameleon that
guesses the maximum posterior is right whatever the budget; in the 200-game tournament of
docs/games.md that agent never won against the posterior chameleon.

Oracles: :class:`LibraryOracle` scores the hypothetical transcript with
:func:`leakage.scoring.score_transcript`; :class:`ServiceOracle` sends it to a running
``leakage`` service (``POST {base_url}/v1/score``, body ``leakage.transcript/1``) and reads
the report's posterior. This is the feedback loop the service exists for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from leakage.backends.base import LikelihoodBackend
from leakage.errors import LLMError
from leakage.games._types import ChameleonObservation
from leakage.games.agents._association import AssociationTables, gives_away
from leakage.games.agents._common import TableAgent, vote_least_associated
from leakage.transcripts import ChameleonTranscript


class LeakageOracle(Protocol):
    """Posterior over the candidates after a (hypothetical) transcript."""

    def posteriors(self, transcripts: Sequence[ChameleonTranscript]) -> list[dict[str, float]]:
        """The final posterior of each transcript (candidate -> probability)."""
        ...


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


def _hypothetical(obs: ChameleonObservation, clue: str) -> ChameleonTranscript:
    """The transcript so far plus ``clue``, as the adversary would score it: every clue said
    counts (the speaker cannot tell who the chameleon is); a silent placeholder holds the
    chameleon role the format requires."""
    spoken = [*obs.clues, (obs.player, clue)]
    ids = list(dict.fromkeys(p for p, _ in spoken))
    players = [{"id": p, "role": "non-chameleon"} for p in ids]
    players.append({"id": "?adversary", "role": "chameleon"})
    return ChameleonTranscript.model_validate(
        {
            "game": "chameleon",
            "id": "hypothetical",
            "players": players,
            "turns": [{"player": p, "text": c} for p, c in spoken],
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
        oracle: LeakageOracle,
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
        self.oracle = oracle
        self.budget = budget
        self.proposals = proposals
        self.proposer = proposer
        self.last_choice: dict[str, Any] | None = None
        """What the last clue decision saw: proposals, leak, margin (for tests and logs)."""

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
        table = self.table(obs)
        secret = obs.secret or ""
        if obs.phase == "vote":
            return vote_least_associated(obs, table, secret)
        clues = self._proposals(obs) or list(table.clues[:1])
        posts = self.oracle.posteriors([_hypothetical(obs, c) for c in clues])
        leak = np.array([p.get(secret, 1.0) for p in posts])
        top = np.array([bool(p) and max(p, key=p.__getitem__) == secret for p in posts])
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
            "leak": leak.tolist(),
            "top": top.tolist(),
            "margin": margin.tolist(),
            "chosen": clues[i],
        }
        return clues[i]
