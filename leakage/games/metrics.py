"""Game metrics users compare, per game and over games with bootstrap confidence intervals.

Every metric is a ratio: per game a ``(numerator, denominator)`` pair, over games the sum of
numerators over the sum of denominators, with a percentile bootstrap over *games*. A metric
a game's log cannot support is ``None`` for that game, and a metric no game supports is
reported as not available, with the reason (never estimated from something else).

Chameleon (Karabag & Topcu): ``valid_game_ratio``, ``identification_rate`` (the chameleon is
accused), ``non_chameleon_win_rate``, ``second_chance_guess_rate`` (a caught chameleon
guesses the secret). Invalid games count only in the first.

SpyGame, per Kim et al. (adapted from SpyFall to word SpyGame): ``civilian_win_rate``,
``living_rounds_civilian`` / ``living_rounds_spy`` (rounds a player took part in; the spy's
is Gu et al.'s average survival rounds), ``guess_success`` (a spy's guess of the civilians'
word: our games have none, so only logs that record one), ``notice_rate`` (civilian
reflections that name a spy as suspect), ``information_catching`` (spies' reflections whose
``other_word`` is the civilians' word), ``deduction`` (civilians' reflections whose
``other_word`` is the spy's word), ``caught_rate`` (spies eliminated), ``accusation_rate``
(civilian votes that target a spy), ``vote_rate`` (valid votes among the votes the living
players owed), ``vote_entropy_bits`` (mean entropy of a round's vote targets). Per Gu et al.:
``spy_win_rate``, ``self_detection_rate`` (spies' reflections that say "spy"), ``sr_at_k``
(spies still in after round k, k = 1, 2, 3), ``voting_pressure`` (share of all votes cast at
spies), ``civilian_elimination_rate`` (eliminations that hit a civilian). MAgIC:
``judgement`` (voting rounds whose plurality of civilian votes is a spy), ``deception``
(voting rounds a living spy survives), and credit-based win rates per model
(:func:`credit_win_rates`: the winning side shares one credit per game equally).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from leakage.transcripts import ChameleonTranscript, SpyGameTranscript

Pair = tuple[float, float]
GameMetrics = dict[str, Pair | None]

CHAMELEON_METRICS = (
    "valid_game_ratio",
    "identification_rate",
    "non_chameleon_win_rate",
    "second_chance_guess_rate",
)
SPY_METRICS = (
    "civilian_win_rate",
    "spy_win_rate",
    "living_rounds_civilian",
    "living_rounds_spy",
    "guess_success",
    "notice_rate",
    "information_catching",
    "deduction",
    "self_detection_rate",
    "caught_rate",
    "accusation_rate",
    "vote_rate",
    "vote_entropy_bits",
    "sr_at_1",
    "sr_at_2",
    "sr_at_3",
    "voting_pressure",
    "civilian_elimination_rate",
    "judgement",
    "deception",
)
_WHY = {
    "valid_game_ratio": "the log does not say which games were invalid (meta.outcome)",
    "identification_rate": "no accused player (meta.accused) and no untied vote",
    "non_chameleon_win_rate": "the chameleon's guess or the accused is not recorded",
    "second_chance_guess_rate": "no caught chameleon with a recorded guess",
    "guess_success": "the games record no spy guess of the civilians' word",
    "notice_rate": "the log has no reflections (meta.reflections)",
    "information_catching": "no reflection states the other group's word",
    "deduction": "no reflection states the other group's word",
    "self_detection_rate": "the log has no reflections, or the players were told their roles",
}


def _outcome(t: ChameleonTranscript | SpyGameTranscript) -> str | None:
    value = t.meta.get("outcome")
    return value if isinstance(value, str) else None


def _accused(t: ChameleonTranscript) -> str | None:
    if "accused" in t.meta:
        return t.meta["accused"]
    counts = Counter(v.target for v in t.votes)
    if not counts:
        return None
    (top, n), *rest = counts.most_common()
    return None if rest and rest[0][1] == n else top


def chameleon_game_metrics(t: ChameleonTranscript) -> GameMetrics:
    out: GameMetrics = dict.fromkeys(CHAMELEON_METRICS)
    outcome = _outcome(t)
    if outcome is not None:
        out["valid_game_ratio"] = (float(outcome != "invalid"), 1.0)
        if outcome == "invalid":
            return out
    accused = _accused(t)
    if accused is None:
        return out
    caught = accused in t.chameleons()
    out["identification_rate"] = (float(caught), 1.0)
    if not caught:
        out["non_chameleon_win_rate"] = (0.0, 1.0)
    elif t.chameleon_guess is not None and t.secret is not None:
        right = t.chameleon_guess == t.secret
        out["non_chameleon_win_rate"] = (float(not right), 1.0)
        out["second_chance_guess_rate"] = (float(right), 1.0)
    return out


def _rounds(t: SpyGameTranscript) -> int:
    played = t.meta.get("rounds_played")
    if isinstance(played, int):
        return played
    rounds = [x.round for x in t.turns if x.round is not None]
    rounds += [v.round for v in t.votes if v.round is not None]
    rounds += [e.round for e in t.eliminations]
    return max(rounds, default=0)


def _entropy_bits(counts: Iterable[int]) -> float:
    c = np.array(list(counts), dtype=float)
    p = c / c.sum()
    return float(-(p * np.log2(p)).sum())


def _ratio(num: float, den: float) -> Pair | None:
    return (num, den) if den > 0 else None


def _reflection_ratio(
    refl: list[dict[str, Any]],
    roles: Mapping[str, str],
    role: str,
    hit: Callable[[dict[str, Any]], bool],
) -> Pair | None:
    mine = [r for r in refl if roles.get(r.get("player", "")) == role]
    return _ratio(sum(hit(r) for r in mine), len(mine))


def spygame_game_metrics(t: SpyGameTranscript) -> GameMetrics:
    out: GameMetrics = dict.fromkeys(SPY_METRICS)
    if _outcome(t) == "invalid":
        return out
    roles = {p.id: p.role for p in t.players}
    spies = t.spies()
    n_rounds = _rounds(t)
    out_round = {e.player: e.round for e in t.eliminations}
    winner = t.meta.get("winner_role")
    if winner in ("civilian", "spy"):
        out["civilian_win_rate"] = (float(winner == "civilian"), 1.0)
        out["spy_win_rate"] = (float(winner == "spy"), 1.0)
    for role in ("civilian", "spy"):
        ids = [p for p, r in roles.items() if r == role]
        lived = sum(out_round.get(p, n_rounds) for p in ids)
        out[f"living_rounds_{role}"] = _ratio(lived, len(ids)) if n_rounds else None
    out["caught_rate"] = _ratio(sum(p in out_round for p in spies), len(spies))
    for k in (1, 2, 3):
        still_in = sum(out_round.get(p, math.inf) > k for p in spies)
        out[f"sr_at_{k}"] = _ratio(still_in, len(spies))
    if t.eliminations:
        civ = sum(roles[e.player] == "civilian" for e in t.eliminations)
        out["civilian_elimination_rate"] = (civ, len(t.eliminations))

    votes = [v for v in t.votes if v.round is not None]
    if votes:
        civ_votes = [v for v in votes if roles[v.voter] == "civilian"]
        out["accusation_rate"] = _ratio(sum(v.target in spies for v in civ_votes), len(civ_votes))
        out["voting_pressure"] = _ratio(sum(v.target in spies for v in votes), len(votes))
        by_round: dict[int, list[Any]] = defaultdict(list)
        for v in votes:
            by_round[v.round].append(v)  # type: ignore[index]
        owed = 0
        judged = deceived = spy_rounds = 0
        entropies = []
        for rnd, vs in by_round.items():
            alive = [p for p in roles if out_round.get(p, math.inf) >= rnd]
            owed += len(alive)
            entropies.append(_entropy_bits(Counter(v.target for v in vs).values()))
            civ_targets = Counter(v.target for v in vs if roles[v.voter] == "civilian")
            if civ_targets:
                top = max(civ_targets.values())
                judged += any(p in spies for p, n in civ_targets.items() if n == top)
            if any(p in spies for p in alive):
                spy_rounds += 1
                deceived += not any(out_round.get(p) == rnd for p in spies)
        out["vote_rate"] = _ratio(len(votes), owed)
        out["vote_entropy_bits"] = (sum(entropies), len(entropies))
        out["judgement"] = _ratio(judged, len(by_round))
        out["deception"] = _ratio(deceived, spy_rounds)

    refl = t.meta.get("reflections")
    if isinstance(refl, list) and refl:
        out["notice_rate"] = _reflection_ratio(
            refl, roles, "civilian", lambda r: r.get("suspect") in spies
        )
        if not t.meta.get("roles_known"):
            out["self_detection_rate"] = _reflection_ratio(
                refl, roles, "spy", lambda r: r.get("self") == "spy"
            )
        said = [r for r in refl if isinstance(r.get("other_word"), str)]
        fold = str.casefold
        out["information_catching"] = _reflection_ratio(
            said, roles, "spy", lambda r: fold(r["other_word"]) == fold(t.words.civilian)
        )
        out["deduction"] = _reflection_ratio(
            said, roles, "civilian", lambda r: fold(r["other_word"]) == fold(t.words.spy)
        )
    guesses = t.meta.get("spy_guesses")
    if isinstance(guesses, list) and guesses:
        right = sum(str(g).casefold() == t.words.civilian.casefold() for g in guesses)
        out["guess_success"] = (right, len(guesses))
    return out


def game_metrics(t: ChameleonTranscript | SpyGameTranscript) -> GameMetrics:
    """The per-game ``(numerator, denominator)`` of every metric of the game's kind."""
    if isinstance(t, ChameleonTranscript):
        return chameleon_game_metrics(t)
    return spygame_game_metrics(t)


@dataclass(frozen=True)
class MetricRow:
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    games: int
    """Games that support the metric."""
    reason: str | None = None
    """Why the metric is not available (value None)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "games": self.games,
            **({"reason": self.reason} if self.reason else {}),
        }


def aggregate(
    per_game: Sequence[GameMetrics],
    names: Sequence[str],
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[MetricRow]:
    """Σ numerators / Σ denominators with a percentile bootstrap over games."""
    rng = np.random.default_rng(seed)
    rows = []
    for name in names:
        pairs = [g[name] for g in per_game if g.get(name) is not None]
        if not pairs:
            why = _WHY.get(name, "no game records what this metric needs")
            rows.append(MetricRow(name, None, None, None, 0, why))
            continue
        arr = np.array(pairs, dtype=float)
        num, den = arr[:, 0], arr[:, 1]
        value = float(num.sum() / den.sum())
        idx = rng.integers(len(arr), size=(n_boot, len(arr)))
        with np.errstate(invalid="ignore", divide="ignore"):
            boots = num[idx].sum(axis=1) / den[idx].sum(axis=1)
        boots = boots[np.isfinite(boots)]
        tail = (1 - confidence) / 2 * 100
        lo, hi = np.percentile(boots, [tail, 100 - tail]) if boots.size else (value, value)
        rows.append(MetricRow(name, value, float(lo), float(hi), len(arr)))
    return rows


def metrics_table(
    transcripts: Sequence[ChameleonTranscript | SpyGameTranscript],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, list[MetricRow]]:
    """Aggregated metrics per game kind present (``chameleon`` and/or ``spygame``)."""
    out: dict[str, list[MetricRow]] = {}
    for kind, cls, names in (
        ("chameleon", ChameleonTranscript, CHAMELEON_METRICS),
        ("spygame", SpyGameTranscript, SPY_METRICS),
    ):
        games = [game_metrics(t) for t in transcripts if isinstance(t, cls)]
        if games:
            out[kind] = aggregate(games, names, n_boot=n_boot, seed=seed)
    return out


def credit_win_rates(transcripts: Iterable[SpyGameTranscript]) -> dict[str, dict[str, float]]:
    """MAgIC-style credits per model: each valid game with a winner gives its winning side one
    credit, shared equally among that side's players; rate = credits / games played."""
    credits: dict[str, float] = defaultdict(float)
    games: dict[str, int] = defaultdict(int)
    for t in transcripts:
        winner = t.meta.get("winner_role")
        if _outcome(t) == "invalid" or winner not in ("civilian", "spy"):
            continue
        side = [p for p in t.players if p.role == winner]
        for p in t.players:
            model = p.agent or "unknown"
            games[model] += 1
            if p.role == winner:
                credits[model] += 1 / len(side)
    return {
        m: {"credits": credits[m], "games": games[m], "rate": credits[m] / games[m]}
        for m in sorted(games)
    }
