"""The adversary on human one-clue guesses (Codenames) and on the Chameleon card probes.

Items: ``../shared/data/codenames-guess-val/games.jsonl``, 377 one-clue Chameleon games made
from Codenames Duet turns: a person's one-word hint, the 13-25 words left on the board as
candidates, the word the human guesser picked as the secret. They are split once, by a stable
hash of the item id (``leakage.calibration.dev_frozen_split``), into *dev* (253 items, where
calibration is fitted and anything may be tuned) and *frozen* (124 items, only reported).
The 52 card probes of ``benchmarks/_probes.py`` (16 candidates, one clue each) are scored the
same way.

Every backend scores every item through the library: the calibration item path
(``extract_items`` + ``member_rows``: the backend's bulk ``prepare`` hook, then ``loglik`` per
game), and the first items are checked against ``score_transcript``'s posterior. Ensembles are the
library's ``EnsembleBackend`` over those members' rows (``Replay``), with a weights file: the
shipped one, and the CK-Arena statement fit applied to every item (the ensemble as it was
before per-type calibration); their time is not measured (it is the members' time).

Per predictor and split: top-1 (ties split: t candidates tied at the top holding the truth
count 1/t), top-3 and mean reciprocal rank (the expectation under random tie-breaking), log
loss (nats; uniform is ln K), ECE (15 equal-width bins, ``leakage.calibration``), each with a
95% percentile bootstrap interval over items (1,000 resamples, seed 0), and the ECE a
perfectly calibrated predictor with the same confidences would show on this many items
(labels drawn from its own posteriors, mean of 200 draws): ECE on ~120 items is biased
upwards, and this is its floor. Items of one board share the clue giver; the intervals treat
items as independent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.common import (
    Stopwatch,
    ck_arena_games,
    default_index,
    shared_data,
    shipped_fit,
    write_result,
)

MEMBERS = ("cooccurrence", "embedding", "judge", "listener")
"""Members scored on the Codenames items and pooled by the word fit."""
SPY_MEMBERS = ("cooccurrence", "embedding", "listener")
"""Members scored on CK-Arena statements (the shipped statement fit gives the speaker judge
weight 0 there: see ``ck_arena``)."""
N_BOOT = 1000
SEED = 0
BEFORE = "ensemble_statement_fit_everywhere"
"""The ensemble as before per-type calibration: the file's top-level fit on every item."""
SPLIT_RULE = "dev/frozen: leakage.calibration.dev_frozen_split (SHA-256 of the item id)"
CHECK_ITEMS = 5
"""Items whose posterior is checked against ``score_transcript`` per backend."""


# -- items -----------------------------------------------------------------------------------


def load_codenames(path: Path) -> list[Any]:
    from leakage import load_transcripts

    games, errors = load_transcripts([path], input_format="leakage")
    if errors:
        raise ValueError(f"{path}: {len(errors)} unreadable records, first: {errors[0]}")
    return games


def probe_transcripts(cards: list[dict[str, Any]]) -> list[Any]:
    """The card probes as one-clue Chameleon games (as ``_probes.evaluate_probes`` builds them)."""
    from benchmarks._probes import PROBES, find_card, probe_transcript

    return [probe_transcript(i, p, find_card(cards, p)) for i, p in enumerate(PROBES)]


# -- metrics ---------------------------------------------------------------------------------


def rank_figures(
    probs: NDArray[np.float64], truth: NDArray[np.int64]
) -> dict[str, NDArray[np.float64]]:
    """Per item: top-1, top-3 and reciprocal rank, each its expectation over random tie-breaks.

    With g candidates strictly above the truth and t tied with it (itself included), its rank
    is uniform on g+1 .. g+t.
    """
    p_true = probs[np.arange(truth.size), truth][:, None]
    close = np.isclose(probs, p_true, rtol=1e-9, atol=0.0) & (probs > 0)
    above = (probs > p_true) & ~close
    g = above.sum(axis=1)
    t = close.sum(axis=1)
    top1 = np.zeros(truth.size)
    top3 = np.zeros(truth.size)
    rr = np.zeros(truth.size)
    for i in range(truth.size):
        ranks = np.arange(g[i] + 1, g[i] + t[i] + 1, dtype=np.float64)
        top1[i] = np.mean(ranks <= 1)
        top3[i] = np.mean(ranks <= 3)
        rr[i] = np.mean(1.0 / ranks)
    return {"top1": top1, "top3": top3, "rr": rr}


def _ci(stat: Callable[[NDArray[np.int64]], float], n: int, rng_seed: int) -> list[float]:
    rng = np.random.default_rng(rng_seed)
    values = np.array([stat(rng.integers(0, n, n)) for _ in range(N_BOOT)])
    lo, hi = np.quantile(values, [0.025, 0.975])
    return [round(float(lo), 4), round(float(hi), 4)]


def calibrated_ece_floor(probs: NDArray[np.float64], *, draws: int = 200, seed: int = 0) -> float:
    """Mean ECE of a predictor that is calibrated by construction: truths drawn from its own
    posteriors, the same confidences and item count."""
    from leakage.calibration import expected_calibration_error

    rng = np.random.default_rng(seed)
    cum = np.cumsum(probs, axis=1)
    out = []
    for _ in range(draws):
        u = rng.random(probs.shape[0])[:, None] * cum[:, -1:]
        drawn = np.minimum((cum < u).sum(axis=1), probs.shape[1] - 1)
        out.append(expected_calibration_error(probs, drawn))
    return round(float(np.mean(out)), 4)


def sharpening(
    probs: NDArray[np.float64], truth: NDArray[np.int64], *, resamples: int = 200
) -> tuple[float, list[float]]:
    """The multiplier a that, applied to the log-posteriors (softmax(a · log p)), minimises
    the log loss on these items, with a 95% bootstrap interval: 1 when the posteriors are
    calibrated in scale, above 1 when they are too flat (under-confident), below 1 when too
    sharp. A one-number test of calibration that does not depend on bins."""
    from leakage.calibration import fit_multipliers

    mask = probs > 0
    logp = np.where(mask, np.log(np.where(mask, probs, 1.0)), 0.0)
    centred = np.where(mask, logp - (logp.sum(1, keepdims=True) / mask.sum(1, keepdims=True)), 0)

    def fit(idx: NDArray[np.int64]) -> float:
        (a,) = fit_multipliers(centred[idx][None], mask[idx], truth[idx], init=np.ones(1))
        return float(a)

    rng = np.random.default_rng(SEED)
    n = truth.size
    values = [fit(rng.integers(0, n, n)) for _ in range(resamples)]
    lo, hi = np.quantile(values, [0.025, 0.975])
    return round(fit(np.arange(n)), 4), [round(float(lo), 4), round(float(hi), 4)]


def figures(probs: NDArray[np.float64], truth: NDArray[np.int64]) -> dict[str, Any]:
    """Every figure of one predictor on one set of items, with 95% bootstrap intervals."""
    from leakage.calibration import expected_calibration_error, item_log_loss

    per = rank_figures(probs, truth)
    per["log_loss"] = item_log_loss(probs, truth)
    n = truth.size
    out: dict[str, Any] = {"items": int(n)}
    for k, v in per.items():
        name = {"rr": "mrr"}.get(k, k)
        out[name] = round(float(v.mean()), 4)
        out[f"{name}_ci95"] = _ci(lambda idx, v=v: float(v[idx].mean()), n, SEED)
    out["ece"] = round(expected_calibration_error(probs, truth), 4)
    out["ece_ci95"] = _ci(lambda idx: expected_calibration_error(probs[idx], truth[idx]), n, SEED)
    out["ece_if_calibrated"] = calibrated_ece_floor(probs)
    out["sharpening"], out["sharpening_ci95"] = sharpening(probs, truth)
    out["mean_confidence"] = round(float(probs.max(axis=1).mean()), 4)
    out["uniform_log_loss"] = round(float(np.log((probs > 0).sum(axis=1)).mean()), 4)
    return out


# -- scoring ---------------------------------------------------------------------------------


class Table:
    """One set of items (games) with each predictor's centred rows and posteriors."""

    def __init__(self, name: str, transcripts: Sequence[Any]) -> None:
        from leakage.calibration import extract_items

        self.name = name
        self.transcripts = list(transcripts)
        self.games, skipped = extract_items(self.transcripts)
        if skipped or len(self.games) != len(self.transcripts):
            raise ValueError(f"{name}: games skipped: {skipped}")
        if any(len(g.clues) != 1 for g in self.games):
            raise ValueError(f"{name}: every item must have exactly one counted clue")
        self.ids = [g.game_id for g in self.games]
        self.rows: dict[str, list[NDArray[np.float64]]] = {}
        self.seconds: dict[str, float] = {}

    def score(self, name: str, backend: Any) -> None:
        from leakage.calibration import member_rows

        with Stopwatch() as sw:
            self.rows[name] = member_rows(backend, self.games)
        self.seconds[name] = round(sw.seconds, 2)
        self._check(name, backend)

    def _check(self, name: str, backend: Any) -> None:
        """The first items' posteriors equal ``score_transcript``'s (the library's path)."""
        from leakage.posterior import normalize_log

        firsts = [normalize_log(r[0]) for r in self.rows[name][:CHECK_ITEMS]]
        check_posteriors(name, backend, self.transcripts[:CHECK_ITEMS], firsts)

    def probs(
        self, name: str, select: Sequence[int]
    ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        from leakage.posterior import normalize_log

        return padded(
            [normalize_log(self.rows[name][i][0]) for i in select],
            [self.games[i].truth[0] for i in select],
        )


def check_posteriors(
    name: str, backend: Any, transcripts: Sequence[Any], posteriors: Sequence[NDArray[np.float64]]
) -> None:
    """Each posterior equals ``score_transcript``'s after the transcript's last turn (the
    library's own path), or ``AssertionError`` names the predictor and the item."""
    from leakage import ScoreOptions, score_transcript

    for t, got in zip(transcripts, posteriors, strict=True):
        step = score_transcript(t, backend, ScoreOptions()).steps[-1]
        want = np.array([step.posterior[w] for w in t.candidates])
        if not np.allclose(got, want, atol=1e-6):
            raise AssertionError(f"{name}: {t.id}: posterior differs from score_transcript")


def padded(
    posteriors: Sequence[NDArray[np.float64]], truths: Sequence[int]
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Posteriors over different numbers of candidates as one zero-padded array, and the
    truths' indices."""
    probs = np.zeros((len(posteriors), max(p.size for p in posteriors)))
    for n, p in enumerate(posteriors):
        probs[n, : p.size] = p
    return probs, np.asarray(truths, dtype=np.int64)


class Replay:
    """A member backend that answers with the rows it already gave for these tables' items
    (centred; centring changes no posterior and the ensemble centres again)."""

    def __init__(self, backend: Any, tables: Sequence[Table]) -> None:
        self.name = backend.name
        self._info = backend.info()
        self._rows: dict[tuple[tuple[str, ...], tuple[str, ...]], NDArray[np.float64]] = {}
        for t in tables:
            for g, r in zip(t.games, t.rows[backend.name], strict=True):
                self._rows[(tuple(g.clues), tuple(g.candidates))] = r

    def info(self) -> dict[str, Any]:
        return self._info

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        return self._rows[(tuple(clues), tuple(candidates))]


class RowMemo:
    """A backend that computes each (clue, candidates) row once and answers again from it.

    Exact for backends whose row for a clue does not depend on the other clues of the call
    (co-occurrence, embedding, the judge in likelihood mode, the listener: all of this
    benchmark's), so that the statement table, the known and the marginalised spy hunt and
    the ensemble read the same rows without scoring them four times."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.name = backend.name
        self._rows: dict[tuple[str, tuple[str, ...], str | None], NDArray[np.float64]] = {}
        self.embed = getattr(backend, "embed", None)

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = self.backend.info()
        return info

    def prepare(self, games: Any) -> None:
        """The backend's own hook, for the games with a row not computed yet."""
        hook = getattr(self.backend, "prepare", None)
        todo = [
            (clues, candidates, category)
            for clues, candidates, category in games
            if any((c, tuple(candidates), category) not in self._rows for c in clues)
        ]
        if callable(hook) and todo:
            hook(todo)

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        key = tuple(candidates)
        todo = [c for c in dict.fromkeys(clues) if (c, key, category) not in self._rows]
        if todo:
            rows = self.backend.loglik(todo, candidates, category=category)
            for c, r in zip(todo, rows, strict=True):
                self._rows[(c, key, category)] = np.asarray(r, dtype=np.float64)
        if not clues:
            return np.zeros((0, len(candidates)))
        return np.stack([self._rows[(c, key, category)] for c in clues])


LLM_MEMBERS = ("judge", "listener")


def build_members(
    names: Sequence[str], precision: str = "auto", embedding_precision: str = "auto"
) -> tuple[dict[str, Any], dict[str, float]]:
    """Each member backend with the library defaults (the LLM members' ``precision`` and the
    embedding's ``embedding_precision`` aside), and its load time in seconds."""
    from leakage import create_backend

    backends: dict[str, Any] = {}
    load: dict[str, float] = {}
    for n in names:
        opts: dict[str, Any] = {"index": default_index()} if n == "cooccurrence" else {}
        if n in LLM_MEMBERS and precision != "auto":
            opts["precision"] = precision
        if n == "embedding" and embedding_precision != "auto":
            opts["precision"] = embedding_precision
        with Stopwatch() as sw:
            backends[n] = create_backend(n, **opts)
        load[n] = round(sw.seconds, 2)
    return backends, load


def ensembles(members: Mapping[str, Any], weights_file: Path | None = None) -> dict[str, Any]:
    """The ensembles to compare, built on the loaded members: as shipped, and with the
    statement fit (the file's default weights) on every item."""
    from leakage.backends.ensemble import EnsembleBackend

    path, fitted = shipped_fit(members, weights_file)
    out = {"ensemble": EnsembleBackend.from_weights(fitted, members, weights_file=str(path))}
    if fitted.item_types:
        out[BEFORE] = EnsembleBackend.from_weights(
            fitted.without_item_types(), members, weights_file=str(path)
        )
    return out


def fit_word_type(table: Table, frozen_ids: Sequence[str], members: Sequence[str]) -> Any:
    """The ``word`` item type's temperatures and weights, fitted on the dev items only
    (``calibrate_on``: the library's fitting code), measured on the frozen items."""
    from leakage.calibration import build_item_set, calibrate_on, item_types

    if set(item_types(table.games)) != {"word"}:
        raise ValueError(f"{table.name}: not every item is of the word type")
    centred = {n: [r - r.mean(axis=-1, keepdims=True) for r in table.rows[n]] for n in members}
    items = build_item_set(table.games, centred)
    frozen = set(frozen_ids)
    in_train = np.array([g.game_id not in frozen for g in table.games])
    return calibrate_on(items, in_train, seed=SEED, split=SPLIT_RULE)


def write_type_fit(
    kind: str,
    result: Any,
    path: Path,
    member_info: Mapping[str, Any],
    *,
    fitted_on: Mapping[str, Any],
    note: str,
    command: str,
    base_path: Path | None = None,
    rows: str = "",
) -> Path:
    """Write the weights file ``base_path`` (default: the shipped one for the members'
    ``rows``, ``leakage.backends.ensemble.llm_rows``) with ``result`` as its fit for item type
    ``kind`` (the rest kept; members the base lacks get weight 0 in its other fits) to
    ``path``. ``fitted_on`` gets the counts of ``result``, the command and the members'
    settings added."""
    from leakage.backends.ensemble import default_weights_path, read_weights
    from leakage.calibration import with_type_fit

    base = read_weights(base_path or default_weights_path(rows))
    doc = with_type_fit(
        base,
        kind,
        result,
        fitted_on={
            **fitted_on,
            "games": len(result.train_games) + len(result.test_games),
            "items": result.train_items + result.test_items,
            "command": command
            + (f" --base {base_path}" if base_path else "")
            + " --write-weights PATH",
            "member_info": dict(member_info),
        },
        note=note,
        member_info={n: i for n, i in member_info.items() if n not in base.members},
    )
    path.write_text(json.dumps(doc.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    return path


def write_word_weights(
    result: Any,
    path: Path,
    codenames_path: Path,
    member_info: Mapping[str, Any],
    base_path: Path | None = None,
    rows: str = "",
) -> Path:
    """``write_type_fit`` of the ``word`` type fitted on the Codenames dev items."""
    return write_type_fit(
        "word",
        result,
        path,
        member_info,
        fitted_on={
            "paths": [f"../shared/data/{codenames_path.parent.name}/{codenames_path.name}"],
            "input_format": "leakage",
        },
        note="one-word clues by people against 13-25 Codenames board words (the word the "
        "human guesser picked as the truth), fitted on the dev split, measured on the frozen",
        command="python -m benchmarks.adversary",
        base_path=base_path,
        rows=rows,
    )


def ck_arena(members: Mapping[str, Any], weights_file: Path | None = None) -> dict[str, Any]:
    """The round-1 spy hunt and the statement figures on the CK-Arena dev logs
    (``benchmarks._spygame.spygame_block``, as `docs/benchmarks.md` measures the LLM voters),
    for each member of ``SPY_MEMBERS`` and the shipped ensemble over them (its statement fit;
    a member it gives weight 0 on statements is built but never asked)."""
    from benchmarks._spygame import print_spygame, spygame_block
    from leakage.backends.ensemble import EnsembleBackend
    from leakage.scoring import prepare

    logs, games = ck_arena_games()
    memo = {n: RowMemo(b) for n, b in members.items()}
    path, fitted = shipped_fit(members, weights_file)
    pooled = EnsembleBackend.from_weights(fitted, memo, weights_file=str(path))
    out: dict[str, Any] = {"games": len(games), "logs": str(logs), "seconds": {}}
    for name, backend in {**{n: memo[n] for n in SPY_MEMBERS}, "ensemble": pooled}.items():
        with Stopwatch() as sw:
            prepare(games, backend)  # the library's bulk hook, as `leakage score` calls it
            out[name] = spygame_block(games, backend, seed=SEED, ci=True)
        out["seconds"][name] = round(sw.seconds, 1)
        print_spygame(f"CK-Arena dev, {name} ({len(games)} games, {sw.seconds:.0f} s)", out[name])
    return out


def report(table: Table, sides: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for predictor in table.rows:
        out[predictor] = {}
        for side, select in sides.items():
            probs, truth = table.probs(predictor, select)
            out[predictor][side] = figures(probs, truth)
    if {"ensemble", BEFORE} <= set(table.rows):
        out["shipped_minus_before"] = {
            side: paired(table, "ensemble", BEFORE, select) for side, select in sides.items()
        }
    return out


def paired(table: Table, a: str, b: str, select: Sequence[int]) -> dict[str, Any]:
    """Per-item differences a - b of log loss and top-1, with 95% bootstrap intervals over
    items (the same resampled items for both predictors)."""
    from leakage.calibration import item_log_loss

    pa, truth = table.probs(a, select)
    pb, _ = table.probs(b, select)
    out: dict[str, Any] = {}
    for name, d in (
        ("log_loss", item_log_loss(pa, truth) - item_log_loss(pb, truth)),
        ("top1", rank_figures(pa, truth)["top1"] - rank_figures(pb, truth)["top1"]),
    ):
        out[name] = round(float(d.mean()), 4)
        out[f"{name}_ci95"] = _ci(lambda idx, d=d: float(d[idx].mean()), d.size, SEED)
    return out


def _print(title: str, block: Mapping[str, Any]) -> None:
    print(f"  {title}")
    for predictor, sides in block.items():
        if predictor == "shipped_minus_before":
            print(f"    shipped - before: {sides}")
            continue
        for side, f in sides.items():
            print(
                f"    {predictor:<34} {side:<6} n={f['items']:<3} top-1 {f['top1']:.3f} "
                f"{f['top1_ci95']}  top-3 {f['top3']:.3f}  MRR {f['mrr']:.3f}  "
                f"log loss {f['log_loss']:.3f} {f['log_loss_ci95']}  ECE {f['ece']:.3f} "
                f"{f['ece_ci95']} (floor {f['ece_if_calibrated']:.3f})",
                flush=True,
            )


def run(
    write_weights: Path | None = None,
    base: Path | None = None,
    ck: bool = True,
    precision: str = "auto",
) -> dict[str, Any]:
    """Measure every backend; ``write_weights``: also write the weights file ``base`` (default:
    the shipped one) with the word type refitted on this run's dev items there, and measure
    with it (how the shipped fit was made); ``ck``: also the CK-Arena spy hunt; ``precision``:
    the LLM members' (``fp32``: torch in fp32, where the default would be int8)."""
    from leakage.backends.ensemble import llm_rows
    from leakage.calibration import dev_frozen_split
    from leakage.runtime import cpu_supports_bf16

    codenames_path = shared_data("codenames-guess-val", "games.jsonl")
    cards_path = shared_data("chameleon-cards", "cards.json")
    start = time.perf_counter()
    codenames = Table("codenames", load_codenames(codenames_path))
    probes = Table("probes", probe_transcripts(json.loads(cards_path.read_text("utf-8"))))
    dev_ids, frozen_ids = dev_frozen_split(codenames.ids)
    at = {g: i for i, g in enumerate(codenames.ids)}
    sides = {
        "dev": [at[g] for g in dev_ids],
        "frozen": [at[g] for g in frozen_ids],
        "all": list(range(len(codenames.ids))),
    }
    print(
        f"adversary: {len(codenames.ids)} codenames items ({len(dev_ids)} dev, "
        f"{len(frozen_ids)} frozen), {len(probes.ids)} card probes; bf16: {cpu_supports_bf16()}",
        flush=True,
    )
    members, load = build_members(MEMBERS, precision)
    for name, backend in members.items():
        codenames.score(name, backend)
        probes.score(name, backend)
        print(
            f"  {name}: load {load[name]:.1f} s, codenames {codenames.seconds[name]:.1f} s, "
            f"probes {probes.seconds[name]:.1f} s",
            flush=True,
        )
    refit = fit_word_type(codenames, frozen_ids, MEMBERS)
    if write_weights is not None:
        info = {n: b.info() for n, b in members.items()}
        wrote = write_word_weights(
            refit, write_weights, codenames_path, info, base, rows=llm_rows(members)
        )
        print(f"  wrote {wrote}")
    # The ensembles pool the members' rows just computed (``Replay``): the judge's prompt cache
    # holds 512 prompts, and these items bring about 8,300, so a live judge would score them
    # all again for each ensemble (about 15 min each here, and the same numbers).
    pools = ensembles(
        {n: Replay(b, [codenames, probes]) for n, b in members.items()}, write_weights
    )
    for name, backend in pools.items():
        codenames.score(name, backend)
        probes.score(name, backend)
    results: dict[str, Any] = {
        "cpu_supports_bf16": cpu_supports_bf16(),
        "backends": {n: b.info() for n, b in {**members, **pools}.items()},
        "seconds": {
            "load": load,
            "codenames": codenames.seconds,
            "probes": probes.seconds,
        },
        "word_refit_on_dev": {
            "temperatures": refit.temperatures,
            "weights": refit.weights,
            "verdict": refit.verdict(),
            "shipped_word_fit": pools["ensemble"].info()["item_types"].get("word"),
        },
        "codenames": report(codenames, sides),
        "probes": report(probes, {"all": list(range(len(probes.ids)))}),
    }
    _print("codenames", results["codenames"])
    _print("card probes", results["probes"])
    if ck:
        results["ck_arena"] = ck_arena(members, write_weights)
        results["seconds"]["ck_arena"] = results["ck_arena"].pop("seconds")
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    params = {
        "llm_precision": precision,
        "codenames": str(codenames_path),
        "cards": str(cards_path),
        "split": "leakage.calibration.dev_frozen_split (SHA-256 of the item id, 1/3 frozen)",
        "dev_items": len(dev_ids),
        "frozen_items": len(frozen_ids),
        "frozen_ids": frozen_ids,
        "bootstrap": {"resamples": N_BOOT, "seed": SEED, "level": 0.95, "unit": "item"},
    }
    # int8 rows (CTranslate2, the default where the CPU lacks bf16) are measured apart from
    # torch's, so that both figures stay on record
    rows = llm_rows(members) or ("" if precision == "auto" else precision)
    path = write_result("adversary" + (f"_{rows}" if rows else ""), params, results)
    print(f"  wrote {path}")
    return results


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.adversary", description=__doc__)
    parser.add_argument(
        "--write-weights",
        type=Path,
        metavar="PATH",
        help="also write the shipped weights file with the word type refitted on dev here",
    )
    parser.add_argument(
        "--base",
        type=Path,
        metavar="PATH",
        help="with --write-weights: the weights file whose other fits are kept (default: the "
        "shipped one), e.g. the statement fit `leakage calibrate` wrote",
    )
    parser.add_argument(
        "--no-ck-arena", action="store_true", help="skip the CK-Arena spy hunt (the listener)"
    )
    parser.add_argument(
        "--precision",
        choices=("auto", "fp32", "bf16"),
        default="auto",
        help="the LLM members' precision (fp32: torch in fp32, which a CPU without bf16 would "
        "otherwise run in int8); results in adversary_<precision>.json",
    )
    args = parser.parse_args()
    run(args.write_weights, args.base, ck=not args.no_ck_arena, precision=args.precision)
