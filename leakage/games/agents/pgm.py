"""MAgIC's PGM-aware agent for SpyGame (Xu et al., section 4): it keeps explicit beliefs
about the other players, and about what each of them believes, and acts on them.

MAgIC's agent B keeps one random variable per player, "the dialogue context understanding
from [that] player's perspective according to Player B" (the two-hop understanding, 4.1:
"I think A is the undercover"; "I think C thinks A is the undercover"), states it before it
acts, and decides conditioned on it (equation 3). Here the PGM is explicit and numeric:

* **first order**, ``beliefs``: P(player is the spy) for every living player, oneself
  included, given every statement and every earlier vote. The hypotheses are (the spy k,
  the civilians' word a, the spy's word b) over the card's words (one spy, the Gu et al.
  game): my own word fixes a when k is not me and b when it is; the other word is
  marginalised under a uniform prior. A player's statements are scored by the card's
  association table (log P(statement | word), the scoring library's likelihoods; a sentence
  outside the vocabulary is scored by the table's backend), an eliminated player's
  statements count as a civilian's. A vote by a civilian names the spy with probability
  ``vote_trust`` and another player otherwise; the spy's vote is uniform. When the variant
  tells roles (``obs.role``), one's own role is known.
* **second order**, ``others_beliefs``: what each other player q believes, the same model
  run from q's seat (q's statements are its own, mine are evidence), mixed over what I
  believe q's word and role are (the civilians' word if q is a civilian, the spy's word if
  q is the spy); ``thinks[q]`` is the player q most suspects.

Acting on them (MAgIC's PGM decision prompts, Table 4): **reflect** states ``self``
("spy" when I am the most likely spy), ``suspect`` (the most likely spy among the others),
``other_word`` (the other group's most likely word), ``thinks``, ``beliefs`` and
``others_beliefs``. **Vote**: believing myself a civilian, the most likely spy; believing
myself the spy, the player the others suspect most (their mean second-order belief), so as
not to stand out. **Describe**: a civilian gives the vocabulary word that best tells its
word from the spy's believed word; a spy ("blend in and defraud trust") gives, among the
strongest associates of the civilians' believed word, the one after which the others'
belief that it is the spy is lowest (the second-order model with that statement added).

:class:`PGMSpyPlayer` is the scripted agent (association tables, no LLM). :class:`PGMSpyLLMAgent`
keeps the same beliefs and has an LLM (an endpoint or a bundled local model) write its
descriptions from them: the prompt states the PGM in MAgIC's words and gives the PGM
decision prompt of the role it believes it has. A description that is not one line or says
the player's word is asked again with the reason (``retries``); if it still fails, the
scripted description is said and ``last_move`` records it (``mode: "fallback"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.games._types import SpyObservation
from leakage.games.agents._association import (
    AssociationTable,
    AssociationTables,
    fold,
    gives_away,
)
from leakage.games.agents.llm import ask_until_read, extract_answer
from leakage.llm import LLMClient, Message
from leakage.posterior import normalize_log

Vector = NDArray[np.float64]


@dataclass(frozen=True)
class Beliefs:
    """One player's PGM at one decision (see the module doc)."""

    player: str
    spy: dict[str, float]
    """P(spy) of every living player, the player included (sums to 1)."""
    others: dict[str, dict[str, float]]
    """Second order: for each other living player, what I think it believes (``spy``-like)."""
    thinks: dict[str, str]
    """For each other living player, whom I think it suspects most."""
    other_word: str | None
    """The other group's most likely word (the spy's if I believe I am a civilian)."""
    believes_spy: bool

    @property
    def suspect(self) -> str:
        others = {p: v for p, v in self.spy.items() if p != self.player}
        return _top(others)

    def reflection(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "self": "spy" if self.believes_spy else "civilian",
            "suspect": self.suspect,
            "thinks": dict(self.thinks),
            "beliefs": {p: round(v, 6) for p, v in self.spy.items()},
            "others_beliefs": {
                q: {p: round(v, 6) for p, v in b.items()} for q, b in self.others.items()
            },
        }
        if self.other_word is not None:
            out["other_word"] = self.other_word
        return out

    def vote(self) -> str:
        """The most likely spy, or, believing myself the spy, whom the others suspect most."""
        if not self.believes_spy:
            return self.suspect
        mean = {
            p: float(np.mean([b[p] for b in self.others.values()]))
            for p in self.spy
            if p != self.player
        }
        return _top(mean)


def _top(scores: Mapping[str, float]) -> str:
    """The key with the highest score; exact ties go to the first key in order."""
    best = max(scores.values())
    return next(p for p, v in scores.items() if v == best)


def _logmeanexp(x: Vector) -> float:
    return float(np.logaddexp.reduce(x) - np.log(x.size)) if x.size else 0.0


class PGMSpyPlayer:
    """The scripted PGM-aware SpyGame player (see module doc)."""

    def __init__(
        self,
        tables: AssociationTables,
        *,
        vote_trust: float = 0.4,
        shortlist: int = 30,
        name: str = "pgm",
    ) -> None:
        if not 0.0 < vote_trust < 1.0:
            raise ValueError("vote_trust must be in (0, 1)")
        self.tables = tables
        self.vote_trust = vote_trust
        self.shortlist = shortlist
        self.name = name
        self.last_beliefs: Beliefs | None = None

    # -- the PGM -----------------------------------------------------------------------

    def _table(self, obs: SpyObservation) -> AssociationTable:
        return self.tables.for_word(obs.word, obs.category)

    @staticmethod
    def _evidence(obs: SpyObservation, table: AssociationTable) -> dict[str, Vector]:
        """Each player's statements as summed log P(statements | word) over the card."""
        texts: dict[str, list[str]] = {}
        for s in obs.statements:
            texts.setdefault(s.player, []).append(s.text)
        return {p: table.rows(t).sum(axis=0) for p, t in texts.items()}

    def _vote_loglik(self, obs: SpyObservation, viewer: str, k: str) -> float:
        """log P(earlier votes not cast by ``viewer`` | the spy is ``k``)."""
        out = 0.0
        for voter, target, rnd in obs.votes:
            if voter == viewer:
                continue
            m = len(obs.players) - sum(1 for _, r in obs.eliminated if r < rnd)
            if voter == k or m <= 2:
                out += -np.log(max(m - 1, 1))
            elif target == k:
                out += np.log(self.vote_trust)
            else:
                out += np.log((1.0 - self.vote_trust) / (m - 2))
        return out

    def _spy_posterior(
        self,
        obs: SpyObservation,
        ev: Mapping[str, Vector],
        viewer: str,
        w: int,
        role: str | None,
    ) -> dict[str, float]:
        """P(spy = k) for every living k, seen from ``viewer`` holding word index ``w``."""
        K = len(next(iter(ev.values()))) if ev else 0
        others_w = np.array([c for c in range(K) if c != w], dtype=int)
        heard = {p: v for p, v in ev.items() if p != viewer}
        total = sum(heard.values(), np.zeros(K))
        logp: dict[str, float] = {}
        for k in obs.alive:
            if role is not None and (k == viewer) != (role == "spy"):
                continue
            if K < 2:
                lp = 0.0
            elif k == viewer:  # everyone else is a civilian holding some a != w
                lp = _logmeanexp(total[others_w])
            else:  # the civilians hold w; k holds some b != w
                lk = heard.get(k, np.zeros(K))
                lp = float((total - lk)[w]) + _logmeanexp(lk[others_w])
            logp[k] = lp + self._vote_loglik(obs, viewer, k)
        post = dict(zip(logp, normalize_log(np.array(list(logp.values()))), strict=True))
        return {p: float(post.get(p, 0.0)) for p in obs.alive}

    def _word_dists(
        self, ev: Mapping[str, Vector], viewer: str, w: int, K: int
    ) -> tuple[Vector, dict[str, Vector]]:
        """Given my word index ``w``: the civilians' word if I am the spy, and each other
        player's word if it is the spy (uniform prior over the other words)."""
        mask = np.full(K, -np.inf)
        mask[[c for c in range(K) if c != w]] = 0.0
        heard = {p: v for p, v in ev.items() if p != viewer}
        total = sum(heard.values(), np.zeros(K))
        civ = normalize_log(total + mask) if K > 1 else np.ones(K)
        spy = {
            p: normalize_log(heard.get(p, np.zeros(K)) + mask) if K > 1 else np.ones(K)
            for p in ev.keys() | {viewer}
        }
        return civ, spy

    def beliefs(self, obs: SpyObservation, ev: Mapping[str, Vector] | None = None) -> Beliefs:
        """The PGM of ``obs.player`` now (``ev``: the statements' evidence, for what-ifs)."""
        table = self._table(obs)
        if ev is None:
            ev = self._evidence(obs, table)
        K = len(table.candidates)
        ev = {p: ev.get(p, np.zeros(K)) for p in {*ev, *obs.alive}}
        me, w = obs.player, table.column(obs.word)
        spy = self._spy_posterior(obs, ev, me, w, obs.role)
        civ_word, spy_word = self._word_dists(ev, me, w, K)
        roles = obs.role is not None
        others: dict[str, dict[str, float]] = {}
        for q in obs.alive:
            if q == me:
                continue
            # q's word and role under my hypotheses: I am the spy (q a civilian holding the
            # civilians' word), q is the spy (holding the spy's word), or neither (q holds mine)
            parts = [
                (spy[me], civ_word, "civilian"),
                (spy[q], spy_word[q], "spy"),
                (1.0 - spy[me] - spy[q], np.eye(K)[w], "civilian"),
            ]
            mix = dict.fromkeys(obs.alive, 0.0)
            for weight, dist, role in parts:
                if weight <= 1e-12:
                    continue
                for c in np.flatnonzero(dist > 1e-9):
                    view = self._spy_posterior(obs, ev, q, int(c), role if roles else None)
                    for p, v in view.items():
                        mix[p] += weight * float(dist[c]) * v
            z = sum(mix.values())
            others[q] = {p: v / z for p, v in mix.items()}
        thinks = {q: _top({p: v for p, v in b.items() if p != q}) for q, b in others.items()}
        believes_spy = spy[me] > max(v for p, v in spy.items() if p != me)
        if believes_spy:
            dist = civ_word
        else:  # the spy's word, averaged over who the spy is
            rest = [p for p in obs.alive if p != me]
            mass = sum(spy[p] for p in rest)
            dist = sum((spy[p] * spy_word[p] for p in rest), np.zeros(K)) / max(mass, 1e-12)
        other = table.candidates[int(np.argmax(dist))] if K > 1 else None
        return Beliefs(me, spy, others, thinks, other, bool(believes_spy))

    # -- acting on it ------------------------------------------------------------------

    def _fresh(self, obs: SpyObservation, table: AssociationTable) -> list[int]:
        said = {fold(s.text) for s in obs.statements}
        return [
            i
            for i, c in enumerate(table.clues)
            if fold(c) not in said and not gives_away(c, obs.word)
        ]

    def describe(self, obs: SpyObservation, b: Beliefs) -> str:
        table = self._table(obs)
        fresh = self._fresh(obs, table)
        if not fresh or len(table.candidates) < 2:
            return "something you know well"
        w = table.column(obs.word)
        L = table.loglik[fresh]
        if not b.believes_spy:
            # tell my word from the spy's believed word
            spy_dist = self._other_dist(obs, table, b)
            score = L[:, w] - np.log(np.exp(L) @ spy_dist + 1e-300)
            return table.clues[fresh[int(np.argmax(score))]]
        civ = table.column(b.other_word) if b.other_word else w
        post = table.posterior[fresh, civ]
        short = np.argsort(-post, kind="stable")[: self.shortlist]
        base = self._evidence(obs, table)
        best, best_key = fresh[int(short[0])], (np.inf, 0.0)
        for j in short:
            i = fresh[int(j)]
            ev = dict(base)
            ev[obs.player] = ev.get(obs.player, np.zeros(len(table.candidates))) + table.loglik[i]
            seen = [
                self._spy_posterior(obs, ev, q, civ, "civilian" if obs.role else None)[obs.player]
                for q in obs.alive
                if q != obs.player
            ]
            key = (float(np.mean(seen)), -float(post[j]))
            if key < best_key:
                best, best_key = i, key
        return table.clues[best]

    def _other_dist(self, obs: SpyObservation, table: AssociationTable, b: Beliefs) -> Vector:
        K = len(table.candidates)
        ev = self._evidence(obs, table)
        _, spy_word = self._word_dists(ev, obs.player, table.column(obs.word), K)
        rest = [p for p in obs.alive if p != obs.player and p in spy_word]
        mass = sum(b.spy[p] for p in rest)
        if mass <= 1e-12:
            d = np.ones(K)
            d[table.column(obs.word)] = 0.0
            return d / d.sum()
        return sum((b.spy[p] * spy_word[p] for p in rest), np.zeros(K)) / mass

    def __call__(self, obs: SpyObservation, /) -> str:
        b = self.beliefs(obs)
        self.last_beliefs = b
        if obs.phase == "describe":
            return self.describe(obs, b)
        if obs.phase == "reflect":
            return json.dumps(b.reflection())
        return b.vote()


def pgm_text(b: Beliefs) -> str:
    """The PGM in MAgIC's words (Table 4: "I think Player xx is undercover, because"; "I
    think {other} thinks Player xx is undercover"), with the probabilities."""
    lines = [f"As {b.player}, I think:"]
    for p, v in sorted(b.spy.items(), key=lambda x: -x[1]):
        lines.append(f"- {'I am' if p == b.player else p + ' is'} the spy with probability {v:.2f}")
    lines.append("As for other players' thoughts:")
    for q, t in b.thinks.items():
        lines.append(f"- I think {q} thinks {t} is the spy ({b.others[q][t]:.2f})")
    if b.other_word:
        lines.append(f"I think the other group's word may be {b.other_word!r}.")
    return "\n".join(lines)


@dataclass(frozen=True)
class PGMPrompts:
    """MAgIC's Undercover prompts (Table 4): the global prompt, then the PGM and the PGM
    decision prompt of the role the player believes it has."""

    system: str = (
        "You are {player}, playing Undercover (who is the spy?) with {n_players} players. "
        "Every player gets one word; the undercover's word differs from the others' (related). "
        "Each round every living player describes their word in one short sentence without "
        "saying it; then everyone votes and the most voted is out. Your word is {word}."
    )
    describe: str = (
        "Statements so far:\n{statements}\n\nYour analysis (PGM):\n{pgm}\n\n{decision}\n"
        "Describe your word in one short sentence without saying it. "
        "Reply in the form 'Answer: <sentence>'."
    )
    civilian: str = (
        "{player}, according to your analysis you are not the undercover: give a more specific "
        "clue about your word, to increase the suspiciousness of {target}."
    )
    spy: str = (
        "{player}, according to your analysis you are the undercover: blend in and defraud "
        "trust from {target}. Try to give a clue describing the others' word ({other_word})."
    )


class PGMSpyLLMAgent(PGMSpyPlayer):
    """The PGM-aware player whose descriptions an LLM writes from its beliefs."""

    def __init__(
        self,
        tables: AssociationTables,
        client: LLMClient,
        prompts: PGMPrompts = PGMPrompts(),
        *,
        retries: int = 2,
        max_tokens: int = 48,
        **kw: Any,
    ) -> None:
        super().__init__(tables, name=f"pgm:llm:{client.name}", **kw)
        self.client = client
        self.prompts = prompts
        self.retries = retries
        self.max_tokens = max_tokens
        self.last_move: dict[str, Any] | None = None

    def describe(self, obs: SpyObservation, b: Beliefs) -> str:
        p = self.prompts
        target = b.suspect if not b.believes_spy else b.vote()
        decision = (p.spy if b.believes_spy else p.civilian).format(
            player=obs.player, target=target, other_word=b.other_word or "unknown"
        )
        statements = "\n".join(f"{s.player}: {s.text}" for s in obs.statements) or "(none yet)"
        fields = {"player": obs.player, "n_players": len(obs.players), "word": obs.word}
        messages = [
            Message("system", p.system.format(**fields)),
            Message(
                "user",
                p.describe.format(
                    statements=statements, pgm=pgm_text(b), decision=decision, word=obs.word
                ),
            ),
        ]
        got = ask_until_read(
            self.client,
            messages,
            lambda reply: _description(reply, obs.word),
            retries=self.retries,
            max_tokens=self.max_tokens,
        )
        if got.answer is not None:
            self.last_move = {"mode": "generated", "tries": got.tries}
            return got.answer
        self.last_move = {"mode": "fallback", "rejected": got.why}
        return super().describe(obs, b)


def _description(reply: str, word: str) -> tuple[str | None, str]:
    """The one-line description in ``reply``, or None and why it cannot be said."""
    lines = [x.strip().strip('"') for x in extract_answer(reply).splitlines() if x.strip()]
    if not lines:
        return None, "is empty"
    text = " ".join(lines[0].split()[:30])
    if f" {fold(word)} " in f" {fold(text)} ":
        return None, f"says your word {word!r}"
    return text, ""
