"""MAgIC's PGM-aware agent for The Chameleon (Xu et al., section 4; Figure 5; Table 4).

As for SpyGame (:mod:`leakage.games.agents.pgm`), the agent keeps one random variable per
player, its two-hop understanding (equation 1: "I think Player 1 is more suspicious";
"I think now Player 2 thinks: ..."), states it in every reflection and decides conditioned on
it (equation 3). Here the PGM is explicit and numeric, over the card's association table
(log P(clue | candidate), the table the scripted agents use):

* **the clue model.** A non-chameleon's clue c is drawn from P(c | secret). The chameleon does
  not know the secret, so its clue is drawn as for a uniformly drawn candidate,
  (1/K) Σ_w P(c | w) (the marginal D^ch of Karabag & Topcu's Proposition 1). A spoken clue's
  *likelihood ratio* for the secret s is LR(c; s) = (1/K) Σ_w P(c | w) / P(c | s) =
  1 / (K P(s | c)): how badly the clue fits s (above 1 it fits the chameleon better than a
  player who knows s); a player who has not spoken has ratio 1. (A chameleon that imitates
  the clues before it would draw from Σ_w π(w) P(c | w) instead, π its posterior; once π is
  sure, every clue then has ratio about 1 and the model cannot tell clues apart, while
  players who know the secret still judge a clue by how well it fits it.)
* **a non-chameleon** knows s, so (uniform prior over the other players, one chameleon)
  ``beliefs``: P(k is the chameleon) ∝ the product of LR(c; s) over k's clues, for every
  other player k (0 for itself). Two-hop, ``others_beliefs[q]``: what q believes, from q's
  seat: if q is the chameleon (probability P(q)) it knows it, so all its mass is on itself;
  otherwise q knows s too and computes the same model with its own clue left out. ``thinks[q]``
  is the player q most suspects (never q).
* **the chameleon** keeps ``secret_beliefs``, the posterior over the candidates given the
  others' clues (the posterior chameleon's inference, uniform prior) and ``secret_guess``,
  its maximum. Two-hop: every other player is a non-chameleon who knows s, so
  ``others_beliefs[q]`` is q's model above averaged over s under the chameleon's posterior;
  ``others_beliefs[q][me]`` is how much q suspects it.

Acting on them (MAgIC's PGM decision prompts, Table 4). **Reflect**: ``self`` (the told
role), ``suspect`` (the player it would vote for now), ``thinks``, ``others_beliefs``, and
``beliefs`` (a non-chameleon) or ``secret_guess`` / ``secret_beliefs`` (the chameleon).
**Vote**: a non-chameleon votes for the most likely chameleon; the chameleon for the
non-chameleon the others suspect most (the mean of their second-order beliefs; "defraud
trust from the target"). **Guess**: the chameleon's most probable candidate.

**Clue**, the non-chameleon (the trade-off of the revealing and leakage-aware agents, decided
with the PGM): among the table clues that do not give the secret away (the rules allow a
clue said before), it
keeps those that (1) leave the chameleon's P(secret) at most ``budget`` and (2) make the
secret its most probable word with belief at most ``top_risk``, both *expected under its
beliefs about who the chameleon is* (the chameleon hears every clue but its own, so each
other player's view is weighted by P(that player is the chameleon)); among those it says the
clue after which its fellow non-chameleons suspect it least (its second-order model: each
other player q, weighted by P(q is not the chameleon), with the clue's ratio added to its
own evidence). Conditions are dropped (2) first, then (1), when no clue meets them; with
none left it says the clue that leaks least. "Increase the suspiciousness of the target":
the most recognisable clue within the leak budget lowers its own suspicion relative to
the suspect's. **Clue**, the chameleon ("blend in and defraud trust"): the table clue (one
said before included) after which the others' expected suspicion of it (under its posterior over the
secret) is lowest; as the first speaker that is a general clue, after specific clues an
associate of the secret it believes in.

:class:`PGMChameleonPlayer` is the scripted agent. :class:`PGMChameleonLLMAgent` keeps the
same beliefs, votes, guesses and reflections and has an LLM (an endpoint or a bundled local
model) say its clue: the prompt states the PGM in MAgIC's words and the PGM decision prompt
of its role. A local model answers under the rules' constraints (one allowed word, as the
``local`` player); an endpoint's answer must be one word that is not said before, not the
secret (a non-chameleon) and not a card word (the chameleon) (MAgIC's moderator: "You cannot
repeat what others has said"), else it is asked again with
the reason (``retries``) and then the scripted clue is said (``last_move``: ``fallback``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.games._types import ChameleonObservation, parse_one_word
from leakage.games.agents._association import (
    AssociationTable,
    AssociationTables,
    gives_away,
)
from leakage.games.agents._common import TableAgent, pick
from leakage.games.agents._constrained import chat_text, one_word
from leakage.games.agents.llm import ask_until_read, extract_answer
from leakage.llm import LLMClient, Message
from leakage.posterior import normalize_log

Vector = NDArray[np.float64]
Matrix = NDArray[np.float64]


@dataclass(frozen=True)
class ChameleonBeliefs:
    """One player's PGM at one decision (see the module doc)."""

    player: str
    chameleon: bool
    """Whether the player is the chameleon (told by the game)."""
    beliefs: dict[str, float] | None
    """A non-chameleon's P(chameleon) of every player (itself 0); None for the chameleon."""
    others: dict[str, dict[str, float]]
    """Second order: for each other player, what I think it believes (P(chameleon))."""
    thinks: dict[str, str]
    """For each other player, whom I think it suspects most."""
    secret: dict[str, float] | None
    """The chameleon's posterior over the candidates; None for a non-chameleon."""

    @property
    def suspect(self) -> str:
        """Whom I would vote for now: the most likely chameleon, or, as the chameleon, the
        player the others suspect most."""
        if self.beliefs is not None:
            return _top({p: v for p, v in self.beliefs.items() if p != self.player})
        players = [p for p in next(iter(self.others.values())) if p != self.player]
        mean = {
            p: float(np.mean([b[p] for q, b in self.others.items() if q != p] or [0.0]))
            for p in players
        }
        return _top(mean)

    @property
    def target(self) -> str:
        """MAgIC's ``{target_player}``: the suspect, or, as the chameleon, the player who
        suspects it most."""
        if self.beliefs is not None:
            return self.suspect
        return _top({q: b[self.player] for q, b in self.others.items()})

    @property
    def secret_guess(self) -> str | None:
        return _top(self.secret) if self.secret else None

    def reflection(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "self": "chameleon" if self.chameleon else "non-chameleon",
            "suspect": self.suspect,
            "thinks": dict(self.thinks),
            "others_beliefs": {q: _rounded(b) for q, b in self.others.items()},
        }
        if self.beliefs is not None:
            out["beliefs"] = _rounded(self.beliefs)
        if self.secret is not None:
            out["secret_guess"] = self.secret_guess
            out["secret_beliefs"] = _rounded(self.secret)
        return out


def _rounded(d: Mapping[str, float]) -> dict[str, float]:
    return {k: round(float(v), 6) for k, v in d.items()}


def _top(scores: Mapping[str, float]) -> str:
    """The key with the highest score; exact ties go to the first key in order."""
    best = max(scores.values())
    return next(p for p, v in scores.items() if v == best)


def _softmax_rows(x: Matrix) -> Matrix:
    return normalize_log(x)


def _log_ratio(rows: Matrix) -> Matrix:
    """log LR(c; s) = log((1/K) Σ_w P(c | w)) - log P(c | s) of each row, for every s."""
    if rows.shape[0] == 0:
        return rows
    mean = np.logaddexp.reduce(rows, axis=1) - np.log(rows.shape[1])
    return mean[:, None] - rows


class PGMChameleonPlayer(TableAgent):
    """The scripted PGM-aware Chameleon player, either role (see module doc)."""

    name = "pgm"

    def __init__(
        self,
        tables: AssociationTables,
        *,
        budget: float = 0.25,
        top_risk: float = 0.1,
        name: str = "pgm",
    ) -> None:
        super().__init__(tables)
        if not 0.0 < budget <= 1.0:
            raise ValueError(f"budget is a probability in (0, 1], got {budget}")
        if not 0.0 <= top_risk <= 1.0:
            raise ValueError(f"top_risk is a probability in [0, 1], got {top_risk}")
        self.budget = budget
        self.top_risk = top_risk
        self.name = name
        self.last_beliefs: ChameleonBeliefs | None = None
        self.last_choice: dict[str, Any] | None = None

    # -- the PGM -----------------------------------------------------------------------

    @staticmethod
    def _log_ratios(table: AssociationTable, obs: ChameleonObservation) -> Matrix:
        """The spoken clues' log LR(c_t; s) for every s (clues x candidates)."""
        K = len(table.candidates)
        rows = table.rows([c for _, c in obs.clues]) if obs.clues else np.zeros((0, K))
        return _log_ratio(rows)

    @staticmethod
    def _evidence(obs: ChameleonObservation, lr: Matrix) -> Matrix:
        """M[k, s]: player k's summed log LR over its clues (players in speaking order)."""
        idx = {p: i for i, p in enumerate(obs.players)}
        M = np.zeros((len(obs.players), lr.shape[1]))
        for t, (p, _) in enumerate(obs.clues):
            M[idx[p]] += lr[t]
        return M

    @staticmethod
    def _views(M: Matrix, viewer: int) -> Matrix:
        """P(k is the chameleon | s) seen by a non-chameleon ``viewer`` that knows s, for
        every s: players x candidates, the viewer's row 0."""
        x = M.copy()
        x[viewer] = -np.inf
        return normalize_log(x.T).T

    def beliefs(self, obs: ChameleonObservation) -> ChameleonBeliefs:
        table = self.table(obs)
        M = self._evidence(obs, self._log_ratios(table, obs))
        players = list(obs.players)
        me = players.index(obs.player)
        views = {q: self._views(M, i) for i, q in enumerate(players) if i != me}
        if obs.secret is not None:  # a non-chameleon
            s = table.column(obs.secret)
            mine = self._views(M, me)[:, s]
            beliefs = dict(zip(players, mine.tolist(), strict=True))
            others: dict[str, dict[str, float]] = {}
            for q, v in views.items():
                own = np.zeros(len(players))
                own[players.index(q)] = 1.0
                mix = beliefs[q] * own + (1.0 - beliefs[q]) * v[:, s]
                others[q] = dict(zip(players, mix.tolist(), strict=True))
            secret = None
        else:  # the chameleon: the others know s; I average over my posterior
            pi = self.posterior(obs, table)
            beliefs = None
            others = {
                q: dict(zip(players, (v @ pi).tolist(), strict=True)) for q, v in views.items()
            }
            secret = dict(zip(table.candidates, pi.tolist(), strict=True))
        thinks = {q: _top({p: x for p, x in b.items() if p != q}) for q, b in others.items()}
        return ChameleonBeliefs(obs.player, obs.secret is None, beliefs, others, thinks, secret)

    @staticmethod
    def posterior(obs: ChameleonObservation, table: AssociationTable) -> Vector:
        """The chameleon's P(candidate | the others' clues), uniform prior."""
        heard = [c for p, c in obs.clues if p != obs.player]
        if not heard:
            return np.full(len(table.candidates), 1.0 / len(table.candidates))
        return normalize_log(table.rows(heard).sum(axis=0))

    # -- acting on it ------------------------------------------------------------------

    @staticmethod
    def _allowed(obs: ChameleonObservation, table: AssociationTable) -> list[int]:
        """The table clues it may say: all of them (the rules let a clue be repeated), but
        for a non-chameleon none that gives the secret away."""
        secret = obs.secret or ""
        return [i for i, c in enumerate(table.clues) if not (secret and gives_away(c, secret))]

    def _suspicion(self, obs: ChameleonObservation, M: Matrix, x_me: Matrix) -> dict[str, Matrix]:
        """P(I am the chameleon) in each other player's eyes (a non-chameleon knowing s)
        once I say each clue: {q: clues x candidates}, ``x_me``: my clue's log LR."""
        players = list(obs.players)
        me = players.index(obs.player)
        out = {}
        for i, q in enumerate(players):
            if i == me:
                continue
            rest = [k for k in range(len(players)) if k not in (i, me)]
            z = np.logaddexp.reduce(M[rest], axis=0) if rest else np.full(M.shape[1], -np.inf)
            x = M[me][None, :] + x_me
            out[q] = np.exp(x - np.logaddexp(x, z[None, :]))
        return out

    def clue(self, obs: ChameleonObservation, b: ChameleonBeliefs) -> str:
        table = self.table(obs)
        fresh = self._allowed(obs, table)
        if not fresh:
            return table.clues[0] if table.clues else "thing"
        rows = table.loglik[fresh]
        M = self._evidence(obs, self._log_ratios(table, obs))
        susp = self._suspicion(obs, M, _log_ratio(rows))
        if b.secret is not None:  # the chameleon: the others' expected suspicion of me
            pi = np.array(list(b.secret.values()))
            score = np.mean([s @ pi for s in susp.values()], axis=0)
            i = pick(-score, obs.seed)
            self.last_choice = {"suspicion": float(score[i]), "chosen": table.clues[fresh[i]]}
            return table.clues[fresh[i]]
        assert b.beliefs is not None
        s = table.column(obs.secret or "")
        weights = {q: 1.0 - b.beliefs[q] for q in susp}
        total = sum(weights.values()) or 1.0
        mine: Vector = sum((w * susp[q][:, s] for q, w in weights.items()), np.zeros(len(fresh)))
        mine = mine / total
        # what the chameleon would hear: every clue but its own, and this one
        leak, top = np.zeros(len(fresh)), np.zeros(len(fresh))
        for k, p_k in b.beliefs.items():
            if k == obs.player or p_k <= 0.0:
                continue
            heard = [c for p, c in obs.clues if p != k]
            base = table.rows(heard).sum(axis=0) if heard else np.zeros(len(table.candidates))
            post = _softmax_rows(base[None, :] + rows)
            leak += p_k * post[:, s]
            top += p_k * (post.argmax(axis=1) == s)
        under, hidden = leak <= self.budget, top <= self.top_risk
        for ok in (under & hidden, under, hidden):
            if ok.any():
                idx = np.flatnonzero(ok)
                i = int(idx[pick(-mine[idx], obs.seed)])
                break
        else:
            i = pick(-leak, obs.seed)
        self.last_choice = {
            "chosen": table.clues[fresh[i]],
            "leak": float(leak[i]),
            "top": float(top[i]),
            "suspicion": float(mine[i]),
            "under_budget": bool(under[i]),
        }
        return table.clues[fresh[i]]

    def vote(self, obs: ChameleonObservation, b: ChameleonBeliefs) -> str:
        return b.suspect

    def __call__(self, obs: ChameleonObservation, /) -> str:
        b = self.beliefs(obs)
        self.last_beliefs = b
        if obs.phase == "reflect":
            return json.dumps(b.reflection())
        if obs.phase == "vote":
            return self.vote(obs, b)
        if obs.phase == "guess":
            table = self.table(obs)
            return table.candidates[pick(self.posterior(obs, table), obs.seed)]
        return self.clue(obs, b)


def pgm_text(b: ChameleonBeliefs) -> str:
    """The PGM in MAgIC's words (Table 4: "As {player}, I think: {other} is more
    suspicious"; "I think now {other} thinks: ..."), with the probabilities."""
    lines = [f"As {b.player}, I think:"]
    if b.beliefs is not None:
        for p, v in sorted(b.beliefs.items(), key=lambda x: -x[1]):
            if p != b.player:
                lines.append(f"- {p} is the chameleon with probability {v:.2f}")
    else:
        lines.append("- I am the chameleon; the secret word may be:")
        for w, v in sorted((b.secret or {}).items(), key=lambda x: -x[1])[:5]:
            lines.append(f"  {w} ({v:.2f})")
    lines.append("As for other players' thoughts:")
    for q, t in b.thinks.items():
        line = f"- I think now {q} thinks {t} is the most suspicious ({b.others[q][t]:.2f})"
        if b.chameleon:
            line += f"; {q} suspects me with probability {b.others[q][b.player]:.2f}"
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class PGMChameleonPrompts:
    """MAgIC's Chameleon prompts (Table 4): the global prompt, then the PGM and the PGM
    decision prompt of the player's role."""

    system: str = (
        "You are {player}, playing a game of the Chameleon with {n_players} players. "
        "There are two roles in the game, chameleon and non-chameleon. The topic of the secret "
        "word is {category}; the secret is one of: {candidates}. It is revealed to the "
        "non-chameleons; the chameleon does not know it. If you are not a chameleon, your goal "
        "is to reveal the chameleon without exposing the secret word. If you are a chameleon, "
        "you aim to blend in with other players, avoid being caught, and figure out the secret "
        "word. Each player gives one clue word in turn; then everyone votes for the player "
        "most likely the chameleon; a caught chameleon guesses the secret. {role_line}"
    )
    non_chameleon_line: str = "You are not chameleon. The word is: {secret}."
    chameleon_line: str = "You are the chameleon!"
    clue: str = (
        "Clues so far:\n{clues}\n\nYour analysis (PGM):\n{pgm}\n\n{decision}\n"
        "Give your clue: one word, never the secret word itself, not a word said before. "
        "Reply in the form 'Answer: <word>'."
    )
    non_chameleon: str = (
        "{player}, you are a non-chameleon, your target is to increase the suspiciousness of "
        "the {target}. For example, by giving more specific clues than the {target}. "
        "Remember don't reveal the secret code."
    )
    chameleon: str = (
        "{player}, you are a chameleon, and your target is to blend in and defraud trust from "
        "the {target}, try to describe the same word as other players. If you are the first "
        "clue giver, try to be general in case you expose yourself. If you guessed the secret "
        "code, try to give a specific clue about the word. If other players' clues are "
        "general, try to give a clue similar to the {target}'s."
    )


class PGMChameleonLLMAgent(PGMChameleonPlayer):
    """The PGM-aware Chameleon player whose clues an LLM says from its beliefs."""

    def __init__(
        self,
        tables: AssociationTables,
        client: LLMClient,
        prompts: PGMChameleonPrompts = PGMChameleonPrompts(),
        *,
        retries: int = 2,
        max_tokens: int = 24,
        **kw: Any,
    ) -> None:
        super().__init__(tables, name=f"pgm:llm:{client.name}", **kw)
        self.client = client
        self.prompts = prompts
        self.retries = retries
        self.max_tokens = max_tokens
        self.last_move: dict[str, Any] | None = None

    def messages(self, obs: ChameleonObservation, b: ChameleonBeliefs) -> list[Message]:
        p = self.prompts
        role_line = (
            p.chameleon_line
            if obs.secret is None
            else p.non_chameleon_line.format(secret=obs.secret)
        )
        decision = (p.chameleon if b.chameleon else p.non_chameleon).format(
            player=obs.player, target=b.target
        )
        clues = "\n".join(f"{q}: {c}" for q, c in obs.clues) or "(none yet)"
        system = p.system.format(
            player=obs.player,
            n_players=len(obs.players),
            category=obs.category,
            candidates=", ".join(obs.candidates),
            role_line=role_line,
        )
        user = p.clue.format(clues=clues, pgm=pgm_text(b), decision=decision)
        return [Message("system", system), Message("user", user)]

    def banned(self, obs: ChameleonObservation) -> dict[str, str]:
        """Words the clue must not be, each with the reason."""
        out = dict.fromkeys((c for _, c in obs.clues), "was said before")
        if obs.secret is None:
            out |= dict.fromkeys(obs.candidates, "is a card word; it could be the secret")
        else:
            out[obs.secret] = "is the secret"
        return out

    def clue(self, obs: ChameleonObservation, b: ChameleonBeliefs) -> str:
        messages = self.messages(obs, b)
        banned = self.banned(obs)
        prompt = chat_text(self.client, messages)
        if prompt is not None:  # a local model: one allowed word, constrained
            word, how = one_word(self.client, prompt, banned)
            if word is not None:
                self.last_move = {"mode": "one-word", **how}
                return word
            why = "no allowed word among the model's first tokens"
        else:
            got = ask_until_read(
                self.client,
                messages,
                lambda reply: _clue(reply, banned),
                retries=self.retries,
                max_tokens=self.max_tokens,
            )
            if got.answer is not None:
                self.last_move = {"mode": "generated", "tries": got.tries}
                return got.answer
            why = got.why
        self.last_move = {"mode": "fallback", "rejected": why}
        return super().clue(obs, b)


def _clue(reply: str, banned: Mapping[str, str]) -> tuple[str | None, str]:
    """The one-word clue in ``reply`` and why it cannot be said ('' when it can)."""
    word = parse_one_word(extract_answer(reply))
    if word is None:
        return None, "is not exactly one word"
    reasons = {k.casefold(): v for k, v in banned.items()}
    if word.casefold() in reasons:
        return None, f"is not allowed ({word!r} {reasons[word.casefold()]})"
    return word, ""
