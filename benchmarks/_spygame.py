"""SpyGame / Undercover measurements: statement-level word evidence and the round-1 spy hunt.

Statements: for every statement, ``d = loglik(civilian word) - loglik(spy word)`` from the
backend (the pair only, no distractors). Accuracy: does ``d`` favour the speaker's own word
(ties count half). ROC AUC: ``d`` as a score separating civilian speakers (positive) from
spy speakers.

Round 1: ``Report.summary.spy_top_after_round1`` from ``score_transcript`` (the n_spies most
suspect players after every first-round statement) against the LLM players' own first-round
votes. Chance differs by figure: the posterior's top pick is one of n players (k/n), a voter
picks among the n-1 others (k/(n-1)), and the top-k set holds a spy with chance
1 - C(n-k, k)/C(n, k). ``posterior_in_civilian_voter_seat_hit`` puts the posterior in each
civilian voter's seat (its most suspect player other than the voter) so that it meets the
votes at the same chance. The voter's-seat and vote hit rates carry 95% percentile intervals
over resampled games (400 resamples, seed 0), and so does their paired difference (seat hits
minus vote hits over the same civilian votes).
``spy_posterior_auc``: every player's P(spy) after the last first-round statement, pooled over
games with spies positive, as a civilian-vs-spy ROC AUC (interval over resampled games, seed 2).
It is the statement AUC with the round's context a voter has: the other statements of the
round and the pair structure (a known-assignment posterior ranks the players of a game by
``d``, relative to one another).

Outliers (backends that can embed text, e.g. the embedding backend): ``Step.outlier_scores``
after the last first-round statement (how far each player's description sits from the
others') and ``Summary.outlier_top_after_round1``, against the same votes and chances. The
outlier keys appear only when the reports carry outlier scores, so a backend without them
(co-occurrence) writes the same keys as before.
"""

from __future__ import annotations

from collections import Counter
from math import comb
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks._stats import bootstrap_ci, own_word_accuracy, roc_auc
from leakage import ScoreOptions, SpyGameTranscript, score_transcript


def statement_table(games: list[SpyGameTranscript], backend: Any) -> dict[str, np.ndarray]:
    d, civ, rnd, game = [], [], [], []
    for gi, t in enumerate(games):
        if not t.turns:
            continue
        ll = backend.loglik([x.text for x in t.turns], [t.words.civilian, t.words.spy])
        d.append(ll[:, 0] - ll[:, 1])
        civ += [t.player(x.player).role == "civilian" for x in t.turns]
        rnd += [x.round or 0 for x in t.turns]
        game += [gi] * len(t.turns)
    return {
        "d": np.concatenate(d) if d else np.empty(0),
        "civilian": np.array(civ, dtype=bool),
        "round": np.array(rnd, dtype=np.int64),
        "game": np.array(game, dtype=np.int64),
    }


def statement_metrics(
    table: dict[str, np.ndarray], *, round_only: int | None = None, seed: int = 0, ci: bool = True
) -> dict[str, Any]:
    keep = np.ones(table["d"].size, bool) if round_only is None else table["round"] == round_only
    d, civ, game = table["d"][keep], table["civilian"][keep], table["game"][keep]
    out: dict[str, Any] = {
        "statements": int(d.size),
        "civilian_statements": int(civ.sum()),
        "spy_statements": int((~civ).sum()),
        "games": len(np.unique(game)),
        "accuracy": round(own_word_accuracy(d, civ), 3),
        "roc_auc": round(roc_auc(d, civ), 3),
        "tie_fraction": round(float(np.mean(d == 0)), 3) if d.size else None,
    }
    if ci and d.size:
        groups = np.unique(game)
        by_game = [np.flatnonzero(game == g) for g in groups]

        def pick(idx: np.ndarray) -> np.ndarray:
            return np.concatenate([by_game[i] for i in idx])

        out["accuracy_ci95"] = bootstrap_ci(
            lambda idx: own_word_accuracy(d[pick(idx)], civ[pick(idx)]), len(groups), seed=seed
        )
        out["roc_auc_ci95"] = bootstrap_ci(
            lambda idx: roc_auc(d[pick(idx)], civ[pick(idx)]), len(groups), seed=seed + 1
        )
        out["ci_method"] = "percentile bootstrap over games, 400 resamples"
    return out


def _first_round_votes(t: SpyGameTranscript) -> list[Any]:
    rounds = [v.round for v in t.votes if v.round is not None]
    return [v for v in t.votes if v.round == min(rounds)] if rounds else []


def _seat_hit(suspicion: dict[str, float], voter: str, spies: set[str]) -> float:
    """Whether the voter's most suspect other player is a spy; a tie counts as a random pick."""
    others = {p: q for p, q in suspicion.items() if p != voter}
    top = max(others.values())
    leaders = [p for p, q in others.items() if q == top]
    return sum(p in spies for p in leaders) / len(leaders)


def spy_round1(
    games: list[SpyGameTranscript], backend: Any, *, spy_assignment: str = "known"
) -> dict[str, Any]:
    """Round-1 spy posterior (and outlier scores, when there are any) vs round-1 votes."""
    options = ScoreOptions(spy_assignment=spy_assignment)
    rows: list[dict[str, Any]] = []
    outlier_score: list[float] = []  # every player's outlier score after round 1, all games
    outlier_spy: list[bool] = []
    # Every player's P(spy) after round 1, by game: the spy posterior as a civilian-vs-spy score.
    suspicion_of: list[NDArray[np.float64]] = []
    spy_of: list[NDArray[np.bool_]] = []
    for t in games:
        report = score_transcript(t, backend, options)
        s = report.summary
        spies = t.spies()
        n, k = len(t.players), len(spies)
        votes = _first_round_votes(t)
        civ_votes = [v for v in votes if t.player(v.voter).role == "civilian"]
        # The posterior in a civilian voter's seat: its most suspect player other than the
        # voter, after the last first-round statement (same chance as the vote, k / (n-1)).
        first = t.turns[0].round if t.turns else None
        end_r1 = [st for st in report.steps if st.round == first]
        suspicion = (end_r1[-1].spy_posterior or {}) if end_r1 else {}
        if suspicion:
            suspicion_of.append(np.array(list(suspicion.values()), dtype=np.float64))
            spy_of.append(np.array([p in spies for p in suspicion], dtype=bool))
        seat_hits = [_seat_hit(suspicion, v.voter, spies) for v in civ_votes if len(suspicion) > 1]
        ranked = sorted(suspicion.values(), reverse=True)
        # The summary's top-k list breaks a tie at its boundary by player order.
        tie = len(ranked) > k and (ranked[0] == ranked[1] or ranked[k - 1] == ranked[k])
        tally = Counter(v.target for v in votes)
        top = max(tally.values()) if tally else 0
        leaders = [p for p, c in tally.items() if c == top]
        row: dict[str, Any] = {
            "set_hit": s.spy_hit_after_round1,
            "top1_hit": None if not s.spy_top_after_round1 else s.spy_top_after_round1[0] in spies,
            "chance_set": 1 - comb(n - k, k) / comb(n, k),
            "chance_top1": k / n,
            "chance_vote": k / (n - 1),
            "tie_at_top": tie,
            "has_votes": bool(votes),
            "civ_votes": len(civ_votes),
            "civ_vote_hits": sum(v.target in spies for v in civ_votes),
            "seat_hits": sum(seat_hits),
            # A tie for the most votes is broken at random in the game: expected hit.
            "plurality_hit": (sum(p in spies for p in leaders) / len(leaders)) if leaders else None,
        }
        outliers = end_r1[-1].outlier_scores if end_r1 else None
        if outliers and s.outlier_top_after_round1:
            row["outlier_top1_hit"] = s.outlier_top_after_round1[0] in spies
            row["outlier_set_hit"] = s.outlier_hit_after_round1
            row["outlier_seat_hits"] = sum(
                _seat_hit(outliers, v.voter, spies) for v in civ_votes if len(outliers) > 1
            )
            outlier_score.extend(outliers.values())
            outlier_spy.extend(p in spies for p in outliers)
        rows.append(row)

    def mean(key: str, sub: list[dict[str, Any]]) -> float | None:
        vals = [r[key] for r in sub if r.get(key) is not None]
        return round(float(np.mean(vals)), 3) if vals else None

    voted = [r for r in rows if r["has_votes"]]
    n_civ = sum(r["civ_votes"] for r in voted)
    votes_of = np.array([r["civ_votes"] for r in voted], dtype=np.float64)

    def ratio_ci(key: str) -> list[float] | None:
        """95% percentile interval of sum(key) / civilian votes over resampled games."""
        if not n_civ:
            return None
        hits = np.array([r[key] for r in voted], dtype=np.float64)
        return bootstrap_ci(
            lambda g: float(hits[g].sum() / votes_of[g].sum()) if votes_of[g].sum() else np.nan,
            len(voted),
            seed=0,
        )

    def pooled_auc(g: NDArray[np.int64]) -> float:
        return roc_auc(
            np.concatenate([suspicion_of[i] for i in g]), np.concatenate([spy_of[i] for i in g])
        )

    everyone = np.arange(len(suspicion_of))
    out: dict[str, Any] = {
        "games": len(rows),
        "spy_assignment": spy_assignment,
        "spy_posterior_auc": round(pooled_auc(everyone), 3) if suspicion_of else None,
        "spy_posterior_auc_ci95": bootstrap_ci(pooled_auc, len(suspicion_of), seed=2)
        if suspicion_of
        else None,
        "posterior_top_set_hit": mean("set_hit", rows),
        "posterior_top_set_chance": mean("chance_set", rows),
        "posterior_top1_hit": mean("top1_hit", rows),
        "posterior_top1_chance": mean("chance_top1", rows),
        "games_with_tie_at_top_after_round1": sum(r["tie_at_top"] for r in rows),
        "games_with_round1_votes": len(voted),
        "games_without_votes_skipped": len(rows) - len(voted),
        "on_games_with_votes": {
            "posterior_top_set_hit": mean("set_hit", voted),
            "posterior_top1_hit": mean("top1_hit", voted),
            "civilian_votes": n_civ,
            "civilian_vote_hit": round(sum(r["civ_vote_hits"] for r in voted) / n_civ, 3)
            if n_civ
            else None,
            "posterior_in_civilian_voter_seat_hit": round(
                sum(r["seat_hits"] for r in voted) / n_civ, 3
            )
            if n_civ
            else None,
            "posterior_in_civilian_voter_seat_hit_ci95": ratio_ci("seat_hits"),
            "civilian_vote_hit_ci95": ratio_ci("civ_vote_hits"),
            "paired_seat_minus_vote_ci95": bootstrap_ci(
                lambda g: (
                    float(
                        (np.array([r["seat_hits"] - r["civ_vote_hits"] for r in voted])[g]).sum()
                        / votes_of[g].sum()
                    )
                    if votes_of[g].sum()
                    else np.nan
                ),
                len(voted),
                seed=0,
            )
            if n_civ
            else None,
            "civilian_vote_chance": mean("chance_vote", voted),
            "plurality_target_hit": mean("plurality_hit", voted),
        },
    }
    with_outliers = [r for r in rows if "outlier_top1_hit" in r]
    if with_outliers:
        voted_o = [r for r in with_outliers if r["has_votes"]]
        n_civ_o = sum(r["civ_votes"] for r in voted_o)
        out["outliers_after_round1"] = {
            "games": len(with_outliers),
            "top1_hit": mean("outlier_top1_hit", with_outliers),
            "top1_chance": mean("chance_top1", with_outliers),
            "top_set_hit": mean("outlier_set_hit", with_outliers),
            "top_set_chance": mean("chance_set", with_outliers),
            "spy_vs_civilian_auc_pooled": round(
                roc_auc(np.array(outlier_score), np.array(outlier_spy)), 3
            ),
            "on_games_with_votes": {
                "games": len(voted_o),
                "top1_hit": mean("outlier_top1_hit", voted_o),
                "top_set_hit": mean("outlier_set_hit", voted_o),
                "civilian_votes": n_civ_o,
                "outlier_in_civilian_voter_seat_hit": round(
                    sum(r["outlier_seat_hits"] for r in voted_o) / n_civ_o, 3
                )
                if n_civ_o
                else None,
                "civilian_vote_hit": round(sum(r["civ_vote_hits"] for r in voted_o) / n_civ_o, 3)
                if n_civ_o
                else None,
                "civilian_vote_chance": mean("chance_vote", voted_o),
            },
            "notes": [
                "top1/top_set: Summary.outlier_top_after_round1 (the n_spies highest outlier "
                "scores after the last first-round statement) holds a spy",
                "voter's seat: for each civilian round-1 vote, the most outlying player other "
                "than the voter (ties count as a random pick), same chance as the vote",
                "spy_vs_civilian_auc_pooled: every player's outlier score after round 1, "
                "pooled over games, spies positive",
            ],
        }
    return out


def spygame_block(
    games: list[SpyGameTranscript], backend: Any, *, seed: int, ci: bool
) -> dict[str, Any]:
    """Statement figures (all rounds, round 1) and the round-1 spy hunt (known, marginalised)."""
    table = statement_table(games, backend)
    return {
        "statements_all_rounds": statement_metrics(table, seed=seed, ci=ci),
        "statements_round1": statement_metrics(table, round_only=1, seed=seed, ci=ci),
        "spy_after_round1": spy_round1(games, backend),
        "spy_after_round1_marginalised": spy_round1(games, backend, spy_assignment="marginalise"),
    }


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def print_spygame(label: str, block: dict[str, Any]) -> None:
    a, r1 = block["statements_all_rounds"], block["statements_round1"]
    print(
        f"  {label}: own-word accuracy {fmt(a['accuracy'])} (round 1: {fmt(r1['accuracy'])}), "
        f"civilian-vs-spy AUC {fmt(a['roc_auc'])} (round 1: {fmt(r1['roc_auc'])}) over "
        f"{a['statements']} statements, {a['tie_fraction']:.0%} tied"
    )
    s = block["spy_after_round1"]
    v = s["on_games_with_votes"]
    print(
        f"    spy after round 1: top suspect is a spy in {fmt(s['posterior_top1_hit'])} of "
        f"{s['games']} games (chance {fmt(s['posterior_top1_chance'])}); top-{{n spies}} set "
        f"holds one in {fmt(s['posterior_top_set_hit'])} (chance "
        f"{fmt(s['posterior_top_set_chance'])})"
    )
    print(
        f"    on the {s['games_with_round1_votes']} games with votes "
        f"({s['games_without_votes_skipped']} without, skipped): posterior top-1 "
        f"{fmt(v['posterior_top1_hit'])}; civilian votes hit a spy {fmt(v['civilian_vote_hit'])}"
        f" {v.get('civilian_vote_hit_ci95')} vs the posterior in the voter's seat "
        f"{fmt(v['posterior_in_civilian_voter_seat_hit'])} "
        f"{v.get('posterior_in_civilian_voter_seat_hit_ci95')} (seat - vote "
        f"{v.get('paired_seat_minus_vote_ci95')}; chance {fmt(v['civilian_vote_chance'])}); "
        f"plurality target "
        f"{fmt(v['plurality_target_hit'])}"
    )
    print(
        f"    every player's P(spy) after round 1 as a civilian-vs-spy score: AUC "
        f"{fmt(s['spy_posterior_auc'])} {s['spy_posterior_auc_ci95']}"
    )
    m = block["spy_after_round1_marginalised"]
    print(
        f"    word assignment marginalised: top-1 {fmt(m['posterior_top1_hit'])}, voter's seat "
        f"{fmt(m['on_games_with_votes']['posterior_in_civilian_voter_seat_hit'])}"
    )
    o = s.get("outliers_after_round1")
    if o:
        ov = o["on_games_with_votes"]
        print(
            f"    outlier score after round 1: top-1 is a spy in {fmt(o['top1_hit'])} of "
            f"{o['games']} games (chance {fmt(o['top1_chance'])}), top set "
            f"{fmt(o['top_set_hit'])} (chance {fmt(o['top_set_chance'])}); in the voter's seat "
            f"{fmt(ov['outlier_in_civilian_voter_seat_hit'])} vs the votes "
            f"{fmt(ov['civilian_vote_hit'])} (chance {fmt(ov['civilian_vote_chance'])})"
        )
