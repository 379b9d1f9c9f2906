"""Game metrics users compare, per game and over games with bootstrap confidence intervals.

Every metric is a ratio: per game a ``(numerator, denominator)`` pair, over games the sum of
numerators over the sum of denominators, with a percentile bootstrap over *games*. A metric
a game's log cannot support is ``None`` for that game, and a metric no game supports is
reported as not available, with the reason (never estimated from something else). The one
exception to "a ratio" is MAgIC's Deception, a weighted sum of two ratios (see below).

**A metric named after a paper computes that paper's definition** (paper, section, equation
in its docstring here, in :data:`METRIC_SOURCES` and in ``docs/games.md``). Where the project
has a useful variant of its own, it carries its own name and the source ``ours``.

Papers: Kim et al., "Microscopic analysis on LLM players via social deduction game" (SpyFall,
one spy; section IV); Gu et al., "Role-aware evaluation and continual adaptation of LLM agents
in social deduction games" (section 6.1); Xu et al., MAgIC (section 3.2); Karabag & Topcu,
the Chameleon game. Where a paper plays one spy and a log has several (CK-Arena: two), "the
spy" is read as "the spies" as each docstring below says.

Not computed, because neither engine nor any supported log plays what they need: Kim's Guess
Success (GS), Information Catching (IC) and Information Deduction (ID) need the spy's guess of
the hidden location (SpyFall's guess action), and Accusation Rate (AR) needs the turn leader's
accusation action; word SpyGame has descriptions and votes only.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from leakage._stats import percentile_interval, ratio_draws, ratio_of_sums
from leakage.transcripts import ChameleonTranscript, SpyGameTranscript

Pair = tuple[float, float]
GameMetrics = dict[str, Pair | None]

SR_MAX_K = 6
"""SR@k for k = 1 .. 6: Gu et al. play at most six rounds and plot SR@k to round 6."""
MAGIC_LAMBDA = 0.25
"""λ of MAgIC's Deception (section 3.2: "Here we assign λ = 0.25")."""

CHAMELEON_METRICS = (
    "valid_game_ratio",
    "identification_rate",
    "non_chameleon_win_rate",
    "second_chance_guess_rate",
    "judgement",
    "deception",
    "reasoning",
    "self_awareness",
)
SPY_METRICS = (
    # Kim et al. (section IV)
    "spy_win_rate",
    "average_survival_rounds",
    "notice_rate",
    "caught_rate",
    "vote_rate",
    "vote_entropy_bits",
    # Gu et al. (section 6.1)
    "self_detection_rate",
    *(f"sr_at_{k}" for k in range(1, SR_MAX_K + 1)),
    "voting_pressure",
    "vsr",
    # MAgIC (section 3.2)
    "judgement",
    "deception",
    "self_awareness",
    "reasoning",
    *(
        _OURS := (
            "civilian_win_rate",
            "player_rounds_civilian",
            "player_rounds_spy",
            "spy_elimination_rate",
            "turnout",
            "round_vote_entropy_bits",
            "spy_vote_share",
            "civilian_elimination_rate",
            "civilian_plurality_on_spy",
            "spy_safe_round_rate",
            "civilian_suspect_accuracy",
            "spy_word_inference",
            "civilian_word_inference",
            "spy_self_report_rate",
        )
    ),
)

_KIM = "Kim et al., sec. IV"
_GU = "Gu et al., sec. 6.1"
_MAGIC = "MAgIC (Xu et al.), sec. 3.2"
_KT = "Karabag & Topcu"
METRIC_SOURCES: dict[str, str] = {
    "valid_game_ratio": _KT,
    "identification_rate": _KT,
    "non_chameleon_win_rate": _KT,
    "second_chance_guess_rate": _KT,
    "spy_win_rate": f"{_KIM}-A (WR); {_GU}",
    "average_survival_rounds": f"{_GU}; {_KIM}-A (LR)",
    "notice_rate": f"{_KIM}-B (NR), adapted",
    "caught_rate": f"{_KIM}-C (CR)",
    "vote_rate": f"{_KIM}-C (VR)",
    "vote_entropy_bits": f"{_KIM}-C (VE)",
    "self_detection_rate": _GU,
    **{f"sr_at_{k}": f"{_GU} (SR@K)" for k in range(1, SR_MAX_K + 1)},
    "voting_pressure": _GU,
    "vsr": f"{_GU} (VSR)",
    "judgement": f"{_MAGIC}, S_J",
    "deception": f"{_MAGIC}, S_D",
    "self_awareness": f"{_MAGIC}, S_self",
    "reasoning": f"{_MAGIC}, S_R",
    **dict.fromkeys(_OURS, "ours"),
}
"""Where each metric's definition comes from (``ours``: the project's own)."""

_REFLECTIONS = "the log has no reflections (meta.reflections)"
_UNTOLD = (
    "the log has no reflections stating a role (meta.reflections' 'self'), or SpyGame players "
    "were told their roles"
)
_WHY = {
    "valid_game_ratio": "the log does not say which games were invalid (meta.outcome)",
    "identification_rate": "no accused player (meta.accused) and no untied vote",
    "non_chameleon_win_rate": "the chameleon's guess or the accused is not recorded",
    "second_chance_guess_rate": "no caught chameleon with a recorded guess",
    "notice_rate": "no reflection states the other group's word (other_word)",
    "caught_rate": "no game that the spies lost (meta.winner_role)",
    "self_detection_rate": _UNTOLD,
    "self_awareness": _UNTOLD,
    "reasoning": (
        "no reflection states whom the player thinks the others suspect (reflections' "
        "'thinks', MAgIC's second-order analysis)"
    ),
    "deception": "no game with a known winner (meta.winner_role / meta.accused)",
    "civilian_suspect_accuracy": _REFLECTIONS,
    "spy_word_inference": "no reflection states the other group's word (other_word)",
    "civilian_word_inference": "no reflection states the other group's word (other_word)",
    "spy_self_report_rate": _UNTOLD,
}
_COMPOSITES: dict[str, tuple[tuple[str, float], ...]] = {
    "deception": (("deception_wins", 1.0), ("deception_wrong_guesses", MAGIC_LAMBDA)),
}
"""Metrics that are weighted sums of ratios: ``{name: ((component, weight), ...)}``. The first
component must be supported; a later one that no game supports adds 0 (MAgIC's Undercover
has no code guesses, so its Deception is the first term alone)."""


def _outcome(t: ChameleonTranscript | SpyGameTranscript) -> str | None:
    value = t.meta.get("outcome")
    return value if isinstance(value, str) else None


def _ratio(num: float, den: float) -> Pair | None:
    return (num, den) if den > 0 else None


def _entropy_bits(counts: Iterable[int]) -> float:
    c = np.array(list(counts), dtype=float)
    p = c / c.sum()
    return float(-(p * np.log2(p)).sum())


def _reflections(t: ChameleonTranscript | SpyGameTranscript) -> list[dict[str, Any]]:
    refl = t.meta.get("reflections")
    if not isinstance(refl, list):
        return []
    return [r for r in refl if isinstance(r, dict) and isinstance(r.get("player"), str)]


def _judgement(votes: Sequence[Any], judges: set[str], bad: set[str]) -> Pair | None:
    """MAgIC S_J = n_cv / n_v (section 3.2): the votes cast by the side that hunts (civilians,
    non-chameleons) that hit the hunted side (spies, chameleon), over those votes."""
    mine = [v for v in votes if v.voter in judges]
    return _ratio(sum(v.target in bad for v in mine), len(mine))


def _reasoning(
    refl: list[dict[str, Any]], bad: set[str], analysts: set[str] | None = None
) -> Pair | None:
    """MAgIC S_R = (n_c_gold + n_c_inter) / (n_gold + n_inter) (section 3.2).

    A reflection's ``suspect`` is the player's own analysis ("I think Player xx is
    undercover"), checked against the gold roles: right when the suspect is on the hunted
    side. Its ``thinks`` (``{other player: whom I think they suspect}``) is the second-order
    analysis ("I think {other} thinks Player xx is undercover"), checked against that other
    player's own ``suspect`` in its last reflection of the same round; a claim about a player
    who stated no suspect that round cannot be checked and is not counted. ``None`` unless
    some reflection carries ``thinks``: without it the ratio would be the gold part alone,
    which is not MAgIC's metric. ``analysts``: the players whose suspects are role analyses
    (default: all; in The Chameleon the non-chameleons, since the chameleon knows the roles
    and its suspect is whom it points at, which the second-order claims are checked against).
    """
    if not any(isinstance(r.get("thinks"), dict) for r in refl):
        return None
    own: dict[tuple[Any, str], str] = {}
    for r in refl:
        if isinstance(r.get("suspect"), str):
            own[(r.get("round"), r["player"])] = r["suspect"]
    gold = [
        r["suspect"]
        for r in refl
        if isinstance(r.get("suspect"), str) and (analysts is None or r["player"] in analysts)
    ]
    n_c_gold = sum(s in bad for s in gold)
    n_inter = n_c_inter = 0
    for r in refl:
        thinks = r.get("thinks")
        if not isinstance(thinks, dict):
            continue
        for other, claimed in thinks.items():
            actual = own.get((r.get("round"), other))
            if actual is None or other == r["player"]:
                continue
            n_inter += 1
            n_c_inter += claimed == actual
    return _ratio(n_c_gold + n_c_inter, len(gold) + n_inter)


# -- Chameleon --------------------------------------------------------------------------


def _accused(t: ChameleonTranscript) -> str | None:
    if "accused" in t.meta:
        return t.meta["accused"]
    counts = Counter(v.target for v in t.votes)
    if not counts:
        return None
    (top, n), *rest = counts.most_common()
    return None if rest and rest[0][1] == n else top


def chameleon_game_metrics(t: ChameleonTranscript) -> GameMetrics:
    """Karabag & Topcu's rates and MAgIC's Chameleon-side metrics of one game.

    Invalid games count only in ``valid_game_ratio``. MAgIC (section 3.2): ``judgement``
    = non-chameleons' votes at the chameleon / non-chameleons' votes (S_J; a chameleon's vote
    has no right answer); ``deception`` components: ``deception_wins`` = the chameleon won
    (n_wuc / n_uc) and ``deception_wrong_guesses`` = the chameleon's code guess is wrong
    (n_wcg / n_cg); ``reasoning`` from ``meta.reflections`` when they carry ``thinks`` (the
    gold part from the non-chameleons' suspects: the chameleon knows who it is, its suspect
    is whom it points at); ``self_awareness`` (S_self = n_cr / n_rt) from the reflections'
    stated roles. The Chameleon tells each player its role (as MAgIC's does, Figure 5, and
    MAgIC reports Self-awareness over its Chameleon and Undercover games), so S_self here
    measures whether a player keeps the role it was told (1 by construction for a scripted
    agent), not whether it infers it.
    """
    out: GameMetrics = dict.fromkeys(
        [n for n in CHAMELEON_METRICS if n not in _COMPOSITES]
        + [c for n in CHAMELEON_METRICS for c, _ in _COMPOSITES.get(n, ())]
    )
    outcome = _outcome(t)
    if outcome is not None:
        out["valid_game_ratio"] = (float(outcome != "invalid"), 1.0)
        if outcome == "invalid":
            return out
    chameleons = t.chameleons()
    judges = {p.id for p in t.players if p.role == "non-chameleon"}
    out["judgement"] = _judgement(t.votes, judges, chameleons)
    refl = _reflections(t)
    out["reasoning"] = _reasoning(refl, chameleons, judges)
    stated = [r for r in refl if r.get("self") in ("chameleon", "non-chameleon")]
    roles = {p.id: p.role for p in t.players}
    out["self_awareness"] = _ratio(
        sum(r["self"] == roles.get(r["player"]) for r in stated), len(stated)
    )
    if t.chameleon_guess is not None and t.secret is not None:
        out["deception_wrong_guesses"] = (float(t.chameleon_guess != t.secret), 1.0)
    accused = _accused(t)
    if accused is None:
        return out
    caught = accused in chameleons
    out["identification_rate"] = (float(caught), 1.0)
    if not caught:
        out["non_chameleon_win_rate"] = (0.0, 1.0)
    elif t.chameleon_guess is not None and t.secret is not None:
        right = t.chameleon_guess == t.secret
        out["non_chameleon_win_rate"] = (float(not right), 1.0)
        out["second_chance_guess_rate"] = (float(right), 1.0)
    won = out["non_chameleon_win_rate"]
    if won is not None:
        out["deception_wins"] = (1.0 - won[0], 1.0)
    return out


# -- SpyGame ----------------------------------------------------------------------------


def _rounds(t: SpyGameTranscript) -> int:
    played = t.meta.get("rounds_played")
    if isinstance(played, int):
        return played
    rounds = [x.round for x in t.turns if x.round is not None]
    rounds += [v.round for v in t.votes if v.round is not None]
    rounds += [e.round for e in t.eliminations]
    return max(rounds, default=0)


def _by_vote(t: SpyGameTranscript, player: str) -> bool:
    """Whether the players' vote eliminated ``player`` (CK-Arena also removes players by a
    judge's score, ``metric``, or an audience model; the engines and Liang et al.'s logs
    eliminate by vote only and record no cause)."""
    causes = t.meta.get("elimination_causes")
    if isinstance(causes, dict) and player in causes:
        return causes[player] == "vote"
    return True


def _per_role_reflections(
    refl: list[dict[str, Any]],
    roles: Mapping[str, str],
    role: str,
    hit: Callable[[dict[str, Any]], bool],
) -> Pair | None:
    mine = [r for r in refl if roles.get(r["player"]) == role]
    return _ratio(sum(hit(r) for r in mine), len(mine))


def spygame_game_metrics(t: SpyGameTranscript) -> GameMetrics:
    """Every SpyGame metric of one game as ``(numerator, denominator)`` (see ``SPY_METRICS``
    and :data:`METRIC_SOURCES`; the definitions are in the comments below)."""
    out: GameMetrics = dict.fromkeys(
        [n for n in SPY_METRICS if n not in _COMPOSITES]
        + [c for n in SPY_METRICS for c, _ in _COMPOSITES.get(n, ())]
    )
    if _outcome(t) == "invalid":
        return out
    roles = {p.id: p.role for p in t.players}
    spies = t.spies()
    civilians = {p for p, r in roles.items() if r == "civilian"}
    n_rounds = _rounds(t)
    out_round = {e.player: e.round for e in t.eliminations}

    # Kim IV-A WR = games the spy wins / games (= Gu 6.1 spy win rate); MAgIC 3.2 Deception's
    # first term n_wuc / n_uc is the same count (Undercover has no code guesses, so S_D is it).
    winner = t.meta.get("winner_role")
    if winner in ("civilian", "spy"):
        out["spy_win_rate"] = (float(winner == "spy"), 1.0)
        out["deception_wins"] = (float(winner == "spy"), 1.0)
        out["civilian_win_rate"] = (float(winner == "civilian"), 1.0)  # ours: 1 - WR
    # Gu 6.1 average survival rounds = "the average number of rounds that a game lasts" (and
    # Kim IV-A LR = "the average number of turns played across all games").
    if n_rounds:
        out["average_survival_rounds"] = (float(n_rounds), 1.0)
        # ours: rounds a player took part in (its elimination round, else rounds played)
        for role in ("civilian", "spy"):
            ids = [p for p, r in roles.items() if r == role]
            lived = sum(out_round.get(p, n_rounds) for p in ids)
            out[f"player_rounds_{role}"] = _ratio(lived, len(ids))
    # Kim IV-C CR = games in which the spy was caught in a vote / games lost. The spies lose
    # when the last of them goes; caught when that game-ending elimination was the vote's.
    if winner == "civilian":
        gone = [out_round[s] for s in spies if s in out_round]
        last = max(gone, default=None)
        caught = any(out_round.get(s) == last and _by_vote(t, s) for s in spies)
        out["caught_rate"] = (float(last is not None and caught), 1.0)
    out["spy_elimination_rate"] = _ratio(sum(p in out_round for p in spies), len(spies))  # ours
    # Gu 6.1 SR@K = games in which the spy is still alive at the end of round K; per spy when
    # a game has several. A spy never eliminated is alive (the game ended with it in).
    for k in range(1, SR_MAX_K + 1):
        still_in = sum(out_round.get(p, math.inf) > k for p in spies)
        out[f"sr_at_{k}"] = _ratio(still_in, len(spies))
    if t.eliminations:  # ours: eliminations (any cause) that hit a civilian
        civ = sum(roles[e.player] == "civilian" for e in t.eliminations)
        out["civilian_elimination_rate"] = (civ, len(t.eliminations))

    votes = [v for v in t.votes if v.round is not None]
    if votes:
        civ_votes = [v for v in votes if v.voter in civilians]
        # Kim IV-C VR = votes the spy received from citizens / votes, excluding the spy's.
        out["vote_rate"] = _ratio(sum(v.target in spies for v in civ_votes), len(civ_votes))
        # MAgIC 3.2 S_J = correct votes / votes, as a civilian: the same count in Undercover.
        out["judgement"] = _judgement(votes, civilians, spies)
        # Kim IV-C VE = entropy of the citizens' votes of each game, averaged over games (bits).
        if civ_votes:
            targets = Counter(v.target for v in civ_votes)
            out["vote_entropy_bits"] = (_entropy_bits(targets.values()), 1.0)
        by_round: dict[int, list[Any]] = defaultdict(list)
        for v in votes:
            by_round[v.round].append(v)  # type: ignore[index]
        n_voting = len(by_round)
        at_spies = sum(v.target in spies for v in votes)
        # Gu 6.1 voting pressure = votes the spy receives per round, over all rounds and games
        # (voting rounds; with several spies, votes at any spy).
        out["voting_pressure"] = (at_spies, n_voting)
        out["spy_vote_share"] = (at_spies, len(votes))  # ours: share of all votes at spies
        # Gu 6.1 VSR = voting rounds in which a civilian is eliminated (by that vote).
        vsr = sum(
            any(out_round.get(c) == rnd and _by_vote(t, c) for c in civilians) for rnd in by_round
        )
        out["vsr"] = (vsr, n_voting)
        owed = 0
        plurality = safe = spy_rounds = 0
        entropies = []
        for rnd, vs in by_round.items():
            # ours: turnout owed by the players still in at the vote (one eliminated this
            # round by something other than the vote, CK-Arena's judge, was out before it)
            owed += sum(
                out_round.get(p, math.inf) > rnd or (out_round[p] == rnd and _by_vote(t, p))
                for p in roles
            )
            entropies.append(_entropy_bits(Counter(v.target for v in vs).values()))
            civ_targets = Counter(v.target for v in vs if v.voter in civilians)
            if civ_targets:
                top = max(civ_targets.values())
                plurality += any(p in spies for p, n in civ_targets.items() if n == top)
            if any(out_round.get(p, math.inf) >= rnd for p in spies):
                spy_rounds += 1
                safe += not any(out_round.get(p) == rnd for p in spies)
        out["turnout"] = _ratio(len(votes), owed)
        out["round_vote_entropy_bits"] = (sum(entropies), len(entropies))  # ours
        out["civilian_plurality_on_spy"] = _ratio(plurality, n_voting)  # ours
        out["spy_safe_round_rate"] = _ratio(safe, spy_rounds)  # ours

    refl = _reflections(t)
    out["reasoning"] = _reasoning(refl, spies)  # MAgIC 3.2 S_R
    if refl:
        # ours: civilians' reflections whose suspect is a spy
        out["civilian_suspect_accuracy"] = _per_role_reflections(
            refl, roles, "civilian", lambda r: r.get("suspect") in spies
        )
        if not t.meta.get("roles_known"):
            stated = [r for r in refl if r.get("self") in ("civilian", "spy")]
            # MAgIC 3.2 S_self = correct role identifications / role identifications (all).
            out["self_awareness"] = _ratio(
                sum(r["self"] == roles.get(r["player"]) for r in stated), len(stated)
            )
            # Gu 6.1 self-detection = spy games in which the spy infers it is the spy by the
            # end of the game: its last stated role; per spy that stated one.
            final = {r["player"]: r["self"] for r in stated if r["player"] in spies}
            out["self_detection_rate"] = _ratio(sum(s == "spy" for s in final.values()), len(final))
            out["spy_self_report_rate"] = _per_role_reflections(  # ours: per reflection
                stated, roles, "spy", lambda r: r["self"] == "spy"
            )
        said = [r for r in refl if isinstance(r.get("other_word"), str)]
        if said:
            fold = str.casefold
            # Kim IV-B NR = games in which the spy detected the hidden location / games;
            # adapted: the civilians' word is the hidden location, and a spy notices it when
            # one of its reflections names it as the other group's word (per spy).
            civ_word = fold(t.words.civilian)
            noticed = {r["player"] for r in said if fold(r["other_word"]) == civ_word}
            out["notice_rate"] = _ratio(len(noticed & spies), len(spies))
            # ours, per reflection: each side names the other side's word
            out["spy_word_inference"] = _per_role_reflections(
                said, roles, "spy", lambda r: fold(r["other_word"]) == civ_word
            )
            out["civilian_word_inference"] = _per_role_reflections(
                said, roles, "civilian", lambda r: fold(r["other_word"]) == fold(t.words.spy)
            )
    return out


def game_metrics(t: ChameleonTranscript | SpyGameTranscript) -> GameMetrics:
    """The per-game ``(numerator, denominator)`` of every metric of the game's kind (a
    weighted-sum metric such as ``deception`` appears as its components)."""
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

    @property
    def source(self) -> str | None:
        """Where the definition comes from (:data:`METRIC_SOURCES`)."""
        return METRIC_SOURCES.get(self.metric)

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "games": self.games,
            "source": self.source,
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
    """Σ numerators / Σ denominators with a percentile bootstrap over games (a composite
    metric: Σ weight · Σ numerators / Σ denominators of its components, each replicate's
    components over the same games). The metrics draw from one generator, in ``names``
    order."""
    rng = np.random.default_rng(seed)
    rows = []
    for name in names:
        parts = _COMPOSITES.get(name, ((name, 1.0),))
        games = [g for g in per_game if g.get(parts[0][0]) is not None]
        if not games:
            why = _WHY.get(name, "no game records what this metric needs")
            rows.append(MetricRow(name, None, None, None, 0, why))
            continue
        # (games, 2) numerators and denominators per component
        arrs = [np.array([g.get(p) or (0.0, 0.0) for g in games], dtype=float) for p, _ in parts]
        num = np.stack([a[:, 0] for a in arrs], axis=1)
        den = np.stack([a[:, 1] for a in arrs], axis=1)
        draws = ratio_draws(num, den, replicates=n_boot, rng=rng)
        value = 0.0
        boots = np.zeros(n_boot)
        for i, ((_, weight), arr) in enumerate(zip(parts, arrs, strict=True)):
            if i and not arr[:, 1].sum():
                continue  # a later component that no game has adds nothing
            value += weight * float(ratio_of_sums(arr[:, 0], arr[:, 1]))
            boots += weight * (np.nan_to_num(draws[:, i], nan=0.0) if i else draws[:, i])
        boots[~np.isfinite(boots)] = np.nan
        low, high = percentile_interval(boots, confidence)
        # no replicate drew a game with the metric: the interval is the point
        lo, hi = (value, value) if np.isnan(low) else (float(low), float(high))
        rows.append(MetricRow(name, value, lo, hi, len(games)))
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
    """Credits per model, the project's own scheme (not MAgIC's appendix A.1, which scores a
    challenger's role against GPT-4 with outcome credits [3, 0, 2] / [0, 3, 1]): each valid
    game with a winner gives its winning side one credit, shared equally among that side's
    seats; rate = credits / games the model played. A model seated several times in one game
    plays that game once (and gets the credit of each of its winning seats)."""
    credits: dict[str, float] = defaultdict(float)
    games: dict[str, int] = defaultdict(int)
    for t in transcripts:
        winner = t.meta.get("winner_role")
        if _outcome(t) == "invalid" or winner not in ("civilian", "spy"):
            continue
        side = [p for p in t.players if p.role == winner]
        for model in {p.agent or "unknown" for p in t.players}:
            games[model] += 1
        for p in side:
            credits[p.agent or "unknown"] += 1 / len(side)
    return {
        m: {"credits": credits[m], "games": games[m], "rate": credits[m] / games[m]}
        for m in sorted(games)
    }
