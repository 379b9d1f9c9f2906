"""Taboo first clues over the open vocabulary: the vocabulary as bare words or as glosses.

**Why.** In clembench's taboo a describer defines a target without its taboo words ("This is
the time of year when days are shortest and nights are longest."); the guesser has no card.
The open-vocabulary adversary (``OpenVocabulary``, docs/vocab.md) ranks every word of the
vocabulary by the cosine of its vector with the clue's. A definition is nearer the target's
own definition than the bare word, so the vocabulary can be embedded as ``"word: its first
WordNet gloss"`` (``leakage vocab build --texts gloss``).

**Data.** The taboo dev sample of ``../shared/data/clembench-dev`` (clembench-runs v1.6,
CC BY 4.0; Episodes from *clembench-runs* by the clembench authors (clp-research), github
clembench/clembench-runs, licensed CC BY 4.0. Changes: episodes selected, texts extracted to
JSONL. Benchmark: Chalamalasetti et al. 2023), each raw ``interactions.json`` read by the
``clembench-taboo`` adapter; the first clue the game master passed on (an episode whose first
reply was rejected has none and is left out). Sides by instance (``instance_side``).

**What is measured.** For the default vocabulary (``wordfreq:50000``, 48,032 words; the
bundled all-MiniLM-L6-v2; an exact ``numpy`` index) embedded both ways: the target's rank
among the vocabulary after the first clue (``OpenVocabulary.rank_of``; the clue's own words
left out, as ``leakage guess`` does; a target outside the vocabulary embedded the same way
and ranked among V + 1), top-1, top-10 and the median rank, on dev and frozen instances and
all, with 95% intervals resampling instances. No re-ranking by the ensemble's members (the
shortlist + re-rank is issue 39's); the ranking is the plain embedding one.

**The clue's own words** (``WordForms``): a word the clue says is not the target (a describer
may not say it). Since this study's second run (2026-11-27) ``OpenVocabulary`` leaves out each
word of a clue of several words and its inflections; ``gloss_clue_words_kept`` is the glossed
reading with them left in (``exclude_forms=False``: for a sentence clue, the reading before).

**Mixtures, fitted on dev** (``--no-mix`` skips them): each vocabulary word w scored as

    s(w) = a · cos(clue, gloss of w) + b · cos(clue, w) + c · max over senses cos(clue, "w: gloss
    of that sense") + d · Zipf(w)

(the senses: the first six WordNet senses of any part of speech, ``sense_texts``; Zipf:
``wordfreq.zipf_frequency``, Taboo targets are common words), softmax over the words ranked;
(a, b, c, d) fitted by the mean log-probability of the target on the dev clues (Nelder-Mead),
subsets of the four terms; ranks exact. Each mixture is paired with the glossed reading
(``*_vs_gloss``, instance-resampled intervals). Cost: seconds per clue of scoring the whole
vocabulary (the clue embedded once; the senses' 67,000 texts embedded once beforehand:
``senses_embed_seconds``).

**As ``leakage guess`` ranks by default** (``--no-rerank`` skips it): the shortlist of 200
re-ranked by co-occurrence + the index's embedding with the word fit's weights
(``ShortlistPosterior``, ``reranked_guess``), over the bare words (``guess``'s default
vocabulary: ``word_reranked``, paired with the same before the clue-words rule,
``word_reranked_clue_words_kept``) and over the glosses (``gloss_reranked``).

``python -m benchmarks.studies.taboo_vocab`` (builds both indexes under ``$LEAKAGE_HOME/vocab`` when
absent: a few minutes each on 2 busy cores). Results in ``benchmarks/results/taboo_vocab.json``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
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
from leakage.backends.answers import sense_texts
from leakage.encoders import open_encoder
from leakage.paths import default_paths
from leakage.transcripts import ChameleonTranscript
from leakage.transcripts.adapters.clembench import instance_key, instance_side
from leakage.vocab import (
    OpenVocabulary,
    ShortlistPosterior,
    VectorIndex,
    build_vocabulary,
    default_vocab_dir,
    gloss_text,
    load_words,
    reranked_guess,
    vocabulary_pool,
)

WORDS = "wordfreq:50000"
MODEL = "all-MiniLM-L6-v2"
SENSES = 6
"""How many WordNet senses of a word the ``senses`` term reads."""


def first_clues() -> list[dict[str, Any]]:
    root, rows = clembench_dev("taboo")
    out = []
    for row in rows:
        path = root / "raw" / f"v1.6__{row['model']}__{row['experiment']}__{row['episode']}.json"
        t = clembench_transcript(path, "taboo")
        assert isinstance(t, ChameleonTranscript)
        describer = next(p.id for p in t.players if p.role == "non-chameleon")
        clues = [x.text for x in t.turns if x.player == describer]
        if not clues:
            continue
        out.append(
            {
                "clue": clues[0],
                "target": str(t.secret),
                "instance": instance_key("taboo", row["experiment"], row["episode"]),
                "side": instance_side("taboo", row["experiment"], row["episode"]),
                "guesser_right_after_it": bool(row["turns"] and row["turns"][0]["guess"])
                and str(row["turns"][0]["guess"]).strip(" |").casefold() == t.secret.casefold()
                if t.secret
                else False,
            }
        )
    return out


def vocabulary(texts: str, encoder: Any) -> tuple[VectorIndex, float | None]:
    """The default vocabulary embedded as ``texts``, built (numpy kind) when absent."""
    folder = default_vocab_dir(encoder.name, WORDS, texts=texts)
    folder = folder.with_name(folder.name + "-numpy")
    if (folder / "meta.json").exists():
        return VectorIndex.load(folder), None
    start = time.perf_counter()
    index = build_vocabulary(load_words(WORDS), encoder, kind="numpy", texts=texts)  # type: ignore[arg-type]
    index.save(folder)
    return index, time.perf_counter() - start


def _groups(items: Sequence[dict[str, Any]], side: str) -> tuple[list[int], list[list[int]]]:
    idx = [i for i, x in enumerate(items) if side == "all" or x["side"] == side]
    inst = sorted({items[i]["instance"] for i in idx})
    return idx, [[i for i in idx if items[i]["instance"] == k] for k in inst]


def figures(
    items: Sequence[dict[str, Any]], ranks: Sequence[int], base: Sequence[int] | None = None
) -> dict[str, Any]:
    """top-1, top-10 and median rank per side with instance-resampled intervals; with
    ``base``, the paired differences of top-1 and top-10 against it (``*_vs_base``)."""
    r = np.array(ranks)
    out: dict[str, Any] = {}
    for side in ("dev", "frozen", "all"):
        idx, groups = _groups(items, side)

        def stat(f: Any, x: Any = r, groups: list[list[int]] = groups) -> Any:
            return lambda pick: float(f(np.array([x[i] for k in pick for i in groups[k]])))

        n = len(groups)
        out[side] = {
            "clues": len(idx),
            "instances": n,
            "top1": round(float((r[idx] == 1).mean()), 3),
            "top1_ci": bootstrap_ci(stat(lambda x: (x == 1).mean()), n, seed=1),
            "top10": round(float((r[idx] <= 10).mean()), 3),
            "top10_ci": bootstrap_ci(stat(lambda x: (x <= 10).mean()), n, seed=2),
            "median_rank": float(np.median(r[idx])),
            "median_rank_ci": bootstrap_ci(stat(np.median), n, seed=3),
        }
        if base is not None:
            b = np.array(base)
            for k, cut in (("top1", 1), ("top10", 10)):
                d = (r <= cut).astype(float) - (b <= cut)
                out[side][f"{k}_vs_base"] = round(float(d[idx].mean()), 3)
                out[side][f"{k}_vs_base_ci"] = bootstrap_ci(stat(np.mean, d), n, seed=4)
    return out


def first_sense_free_texts(words: Sequence[str]) -> tuple[list[str], NDArray[np.intp]]:
    """The ``"word: gloss"`` texts of every word's first WordNet senses (``sense_texts``,
    six of any part of speech) other than the one the glossed index holds, and the row of
    the word each belongs to."""
    texts: list[str] = []
    owner: list[int] = []
    for i, w in enumerate(words):
        first = gloss_text(w)
        for t in sense_texts(w, SENSES):
            if t != first:
                texts.append(t)
                owner.append(i)
    return texts, np.array(owner, dtype=np.intp)


TERMS = ("gloss", "word", "senses", "zipf")
MIXES = (
    ("gloss", "word"),
    ("gloss", "zipf"),
    ("gloss", "word", "zipf"),
    ("senses", "word", "zipf"),
    ("gloss", "senses", "word", "zipf"),
)


class Terms:
    """The four terms of every vocabulary word for each clue, the words ranked and the
    target's row (see the module docstring)."""

    def __init__(self, items: Sequence[dict[str, Any]], encoder: Any) -> None:
        from wordfreq import zipf_frequency

        word_index, _ = vocabulary("word", encoder)
        gloss_index, _ = vocabulary("gloss", encoder)
        if word_index.words != gloss_index.words:
            raise Skip("the word and gloss indexes hold different words; rebuild them")
        by_word = OpenVocabulary(word_index, encoder)
        by_gloss = OpenVocabulary(gloss_index, encoder)
        zipf = np.array([zipf_frequency(w, "en") for w in word_index.words])
        start = time.perf_counter()
        texts, owner = first_sense_free_texts(word_index.words)
        raw = encoder.encoder if hasattr(encoder, "encoder") else encoder
        senses = np.concatenate(
            [raw.encode_batch(texts[k : k + 2048]) for k in range(0, len(texts), 2048)]
        ).astype(np.float32)
        self.senses_embed_seconds = time.perf_counter() - start
        self.sense_texts = len(texts)
        self.terms: list[NDArray[np.float64]] = []
        self.ranked: list[NDArray[np.bool_]] = []
        self.target: list[int] = []
        start = time.perf_counter()
        for x in items:
            gloss = by_gloss.similarities([x["clue"]])
            query = encoder.encode([x["clue"]])[0]
            best = gloss.copy()
            np.maximum.at(best, owner, senses @ (query / np.linalg.norm(query)))
            self.terms.append(np.stack([gloss, by_word.similarities([x["clue"]]), best, zipf]))
            mask = by_gloss.ranked([x["clue"]])
            row = gloss_index.position(x["target"])
            if row is None:
                raise Skip(f"target {x['target']!r} is not in {WORDS}")
            mask[row] = True
            self.ranked.append(mask)
            self.target.append(row)
        self.seconds_per_clue = (time.perf_counter() - start) / len(items)

    def ranks(self, weights: NDArray[np.float64]) -> list[int]:
        out = []
        for t, mask, row in zip(self.terms, self.ranked, self.target, strict=True):
            s = weights @ t
            out.append(int((s[mask] >= s[row]).sum()))
        return out

    def loss(self, weights: NDArray[np.float64], idx: Sequence[int]) -> float:
        """Mean -log P(target) over the clues ``idx`` (softmax over the words ranked)."""
        total = 0.0
        for i in idx:
            s = weights @ self.terms[i]
            ranked = s[self.ranked[i]]
            top = ranked.max()
            total += top + np.log(np.exp(ranked - top).sum()) - s[self.target[i]]
        return total / len(idx)

    def fit(self, terms: Sequence[str], idx: Sequence[int]) -> NDArray[np.float64]:
        from scipy.optimize import minimize

        use = np.array([t in terms for t in TERMS], dtype=float)
        start = np.array([20.0, 5.0, 5.0, 0.5]) * use
        res = minimize(
            lambda w: self.loss(w * use, idx),
            start,
            method="Nelder-Mead",
            options={"maxiter": 400, "xatol": 1e-2, "fatol": 1e-4},
        )
        return np.asarray(res.x * use, dtype=np.float64)


def run(*, mix: bool = True, rerank: bool = True) -> dict[str, Any]:
    items = first_clues()
    encoder = open_encoder(MODEL, cache_path=str(default_paths().embeddings))
    results: dict[str, Any] = {
        "clues": len(items),
        "guessers_right_after_first_clue": round(
            float(np.mean([x["guesser_right_after_it"] for x in items])), 3
        ),
    }
    for texts in ("word", "gloss"):
        index, built = vocabulary(texts, encoder)
        vocab = OpenVocabulary(index, encoder)
        start = time.perf_counter()
        ranks = [vocab.rank_of(x["target"], [x["clue"]]).rank for x in items]
        results[texts] = {
            **figures(items, ranks),
            "vocabulary": len(index),
            "build_seconds": None if built is None else round(built, 1),
            "seconds_per_clue": round((time.perf_counter() - start) / len(items), 4),
            "ranks": ranks,
        }
        if texts == "gloss":
            kept = [
                vocab.rank_of(x["target"], [x["clue"]], exclude_forms=False).rank for x in items
            ]
            results["gloss_clue_words_kept"] = {**figures(items, kept), "ranks": kept}
            results["gloss"] = {**results["gloss"], **figures(items, ranks, kept)}
    if rerank:
        for texts, keep in (("word", True), ("word", False), ("gloss", False)):
            index, _ = vocabulary(texts, encoder)
            vocab = OpenVocabulary(index, encoder)
            pool = vocabulary_pool(vocab, ["cooccurrence", "embedding"])
            search = ShortlistPosterior(vocab, pool, shortlist=200)
            start = time.perf_counter()
            found = []
            for x in items:
                guessed = reranked_guess(
                    search, [x["clue"]], top=1, secret=x["target"], exclude_forms=not keep
                )
                assert guessed.secret is not None
                found.append(guessed.secret.rank)
            name = f"{texts}_reranked" + ("_clue_words_kept" if keep else "")
            before = results.get("word_reranked_clue_words_kept", {}).get("ranks")
            results[name] = {
                **figures(items, found, before if texts == "word" and not keep else None),
                "seconds_per_clue": round((time.perf_counter() - start) / len(items), 4),
                "ranks": found,
            }
    if not mix:
        return results
    terms = Terms(items, encoder)
    dev = [i for i, x in enumerate(items) if x["side"] == "dev"]
    base = results["gloss"]["ranks"]
    results["mixtures"] = {}
    for chosen in MIXES:
        weights = terms.fit(chosen, dev)
        ranks = terms.ranks(weights)
        results["mixtures"]["+".join(chosen)] = {
            "weights": dict(zip(TERMS, (round(float(w), 3) for w in weights), strict=True)),
            "dev_mean_log_p": round(-terms.loss(weights, dev), 4),
            **figures(items, ranks, base),
            "ranks": ranks,
        }
    results["mix_seconds_per_clue"] = round(terms.seconds_per_clue, 4)
    results["senses_embed_seconds"] = round(terms.senses_embed_seconds, 1)
    results["sense_texts"] = terms.sense_texts
    return results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-mix", action="store_true", help="skip the fitted mixtures")
    ap.add_argument("--no-rerank", action="store_true", help="skip the re-ranked readings")
    args = ap.parse_args(argv)
    try:
        results = run(mix=not args.no_mix, rerank=not args.no_rerank)
    except Skip as err:
        print(f"skipped: {err}")
        return 0
    path = write_result("taboo_vocab", {"words": WORDS, "model": MODEL}, results)
    names = ["word", "gloss_clue_words_kept", "gloss", "word_reranked_clue_words_kept"]
    names += ["word_reranked", "gloss_reranked"]
    shown = {k: results[k] for k in names if k in results}
    shown |= results.get("mixtures", {})
    for name, figs in shown.items():
        for side in ("dev", "frozen", "all"):
            r = figs[side]
            paired = (
                f" vs base top1 {r['top1_vs_base']} {r['top1_vs_base_ci']} "
                f"top10 {r['top10_vs_base']} {r['top10_vs_base_ci']}"
                if "top1_vs_base" in r
                else ""
            )
            print(
                f"{name:24s} {side:6s} n={r['clues']:3d} top1 {r['top1']} {r['top1_ci']} "
                f"top10 {r['top10']} {r['top10_ci']} median {r['median_rank']}{paired}"
            )
    print("->", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
