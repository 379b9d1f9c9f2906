"""Several human one-word clues for one secret on a 16-word card: the word fit after m = 1, 2, 3.

**What is measured.** The shipped ensemble pools one-word clues with its ``word`` item type
(``leakage/backends/ensemble.py``), whose per-clue temperatures were fitted on *one-clue*
Codenames items (``benchmarks.adversary --write-weights``). A Chameleon game has several
one-word clues about one secret, and the posterior after m clues is the normalised sum of the
m rows: this benchmark checks that the same temperatures serve m = 2 and 3 as well as m = 1
(top-1, top-3, log loss after m clues and the multiplier that would calibrate them).

**Data.** There is no multi-clue one-word human data, so it is built from
``../shared/data/codenames-guess-val/games.jsonl`` (377 one-clue items by people, read with
``benchmarks.adversary.load_codenames``: a person's one-word hint on a Codenames Duet board,
13-25 board words as candidates, the word the human guesser picked as the secret; Cultural
Codes, Shaikh et al. 2023, SALT-NLP/codenames, licence "none stated: evaluation only",
``../shared/data/README.md``). Nothing from ``../shared`` is copied into the repository: the
cards are built in memory on each run, and the result file holds secrets, item ids, counts and
figures only.

**Construction** (deterministic; ``word_cards``):

- Items are grouped by secret (case folded). A secret with at least 3 items has its items
  ordered by id (the number at the end of the id, which is the file order); their hints are
  read in that order, a hint equal to the secret or to an earlier one (case folded) is
  skipped, and the first 3 remaining are clues 1, 2, 3. A secret with fewer than 3 such hints
  is left out (counted), so every secret has an item for each of m = 1, 2, 3 (the first m
  clues: m = 1 is a prefix of m = 2 and of m = 3).
- The card: the secret and 15 distractors drawn from the other board words (case folded,
  duplicates once, the secret excluded) of the 3 items whose hints are the clues (the words
  people saw beside the secret); the draw and the order of the 16 words are seeded by the
  SHA-256 of the secret (``random.Random``, stable across runs and machines). A secret with
  fewer than 15 such words gets them all (card sizes are reported). One card per secret, the
  same for m = 1, 2, 3.
- Each item is a Chameleon transcript (category ``Codenames board`` as ``load_codenames``'
  records): m clue givers saying the clues in order and a silent chameleon, so only the clues
  count; ``leakage.calibration.extract_items`` sees m clues and the secret as the truth.

Counts on the 377 items (2026-11-27): 96 secrets; 62 with 3 distinct hints (25 have fewer
than 3 items, 9 fewer than 3 distinct hints); 186 items (62 per m) from 186 Codenames items;
every card 16 words (distractor pools of 42 words or more); 3 frozen, 19 dev, 40 mixed secrets.

**Themed cards** (``themed_items``; ``themed_cards`` in the results). The cards above hold
random board words; a real Chameleon card holds one category (Animals, Jobs), whose words
share associations. So the same hints are also put on the Chameleon cards that hold their
secret (``benchmarks.studies.chameleon_cards.load_cards``: the product's cards, then the shared
ones, each word set once): each distinct hint alone (m = 1), and the first 2 and 3 hints of a secret
that has them, against every card holding it, the card's words the candidates. 10 secrets
stand on a card (alien, centaur, green, opera, scientist, soul, superhero, unicorn, war,
wind): 80 items (54 / 14 / 12 for m = 1 / 2 / 3); an item's side is frozen when all its hints
come from frozen items, dev when all from dev items, mixed otherwise. Figures per m and side
with intervals resampling secret words.

**Split.** ``leakage.calibration.dev_frozen_split`` over the 377 Codenames item ids is the
split the shipped word fit was fitted on (its dev items were in the fit, its frozen items
never). A secret is *frozen* when all 3 items whose hints it uses are frozen items, *dev* when
all are dev items, *mixed* otherwise. Frozen is the held-out side for the shipped word fit;
with one third of the items frozen, few secrets have all three frozen, and the frozen figures
are reported with their (wide) intervals anyway.

**Figures.** Every member (``--members``, default co-occurrence, embedding, the speaker judge
and the listener, library defaults; ``--precision`` as ``benchmarks.studies.chameleon_cards``)
scores every item through the library (``extract_items`` + ``member_rows``) behind a
``RowMemo`` (each (clue, candidates) row once); the shipped ensemble is
``EnsembleBackend.from_weights`` of the shipped file for the members' rows over the memoised
members (every clue here is a ``word`` item, so it pools with the word fit; a member of the
fit not in ``--members`` is built on demand). The posterior after m clues is the normalised
sum of the m centred rows (uniform prior), checked against ``score_transcript`` on the first
3 items. Per predictor, m and side (frozen, dev, mixed, all): top-1 (ties split), top-3, log
loss (nats), each with a 95% percentile interval resampling secret words (1,000 resamples,
seed 0), and the uniform log loss; the change in top-1 and log loss from m = 1 to 2 and 2 to
3, paired by secret word with the same resamples; the multiplier of the log-posteriors that
would calibrate them after m clues (``benchmarks.adversary.sharpening``: 1 calibrated, above
1 too flat, below 1 too sharp) with its 95% interval over items, for the shipped ensemble per
side and for each member on all the secrets.

``python -m benchmarks.studies.word_cards`` (``--members cooccurrence,embedding`` for a cheap run;
``--precision fp32`` for the rows of the shipped torch fit); results in
``benchmarks/results/word_cards[_<rows>].json``.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import bootstrap_draws, chameleon_item, fold
from benchmarks.studies._cli import member_list, study_command, study_parser, write_study
from benchmarks.studies.chameleon_cards import Item, Scored

MEMBERS = ("cooccurrence", "embedding", "judge", "listener")
CLUES = (1, 2, 3)
CARD_SIZE = 16
"""The secret and 15 distractors, as a Chameleon card."""
CATEGORY = "Codenames board"
SIDES = ("frozen", "dev", "mixed", "all")
LICENCE = "none stated: evaluation only (../shared/data/README.md)"
SPLIT_RULE = (
    "leakage.calibration.dev_frozen_split over the 377 Codenames item ids; a secret is frozen "
    "when all its 3 items are frozen, dev when all are dev, mixed otherwise"
)


@dataclass(frozen=True)
class WordCard:
    """One secret: its clues, the Codenames items they come from and its card."""

    secret: str
    clues: tuple[str, ...]
    sources: tuple[str, ...]
    """The ids of the items whose hints are ``clues``, in the same order."""
    candidates: tuple[str, ...]
    side: str
    """``frozen``, ``dev`` or ``mixed`` (see the module docstring)."""
    distractor_pool: int
    """How many other board words the distractors were drawn from."""


def _number(item_id: str) -> int:
    """The number at the end of a Codenames item id (``codenames-guess-val-193`` -> 193)."""
    return int(item_id.rsplit("-", 1)[1])


def hint(game: Any) -> str:
    """The one-word hint of a Codenames item: its non-empty clue turn."""
    said = [t.text for t in game.turns if t.text.strip()]
    if len(said) != 1:
        raise ValueError(f"{game.id}: expected one non-empty turn, got {len(said)}")
    return str(said[0])


def seed_of(secret: str) -> int:
    """A stable seed from the secret (SHA-256 of its case-folded UTF-8)."""
    return int.from_bytes(hashlib.sha256(fold(secret).encode("utf-8")).digest()[:8], "big")


def word_cards(
    games: Sequence[Any], *, clues: int = max(CLUES), size: int = CARD_SIZE
) -> tuple[list[WordCard], dict[str, Any]]:
    """One card per secret with at least ``clues`` items and ``clues`` distinct hints (the
    module docstring's rule), in the order of the secrets' first items; and what was left
    out."""
    from leakage.calibration import dev_frozen_split

    _, frozen_ids = dev_frozen_split([g.id for g in games])
    frozen = set(frozen_ids)
    by_secret: dict[str, list[Any]] = {}
    for g in sorted(games, key=lambda g: _number(g.id)):
        by_secret.setdefault(fold(g.secret), []).append(g)
    cards: list[WordCard] = []
    too_few_items: list[str] = []
    too_few_hints: list[str] = []
    for key, items in by_secret.items():
        if len(items) < clues:
            too_few_items.append(key)
            continue
        used: list[Any] = []
        seen: set[str] = set()
        for g in items:
            h = fold(hint(g))
            if h == key or h in seen:
                continue
            seen.add(h)
            used.append(g)
            if len(used) == clues:
                break
        if len(used) < clues:
            too_few_hints.append(key)
            continue
        secret = used[0].secret
        pool = sorted({fold(w) for g in used for w in g.candidates} - {key})
        rng = random.Random(seed_of(secret))
        words = [secret, *rng.sample(pool, min(size - 1, len(pool)))]
        rng.shuffle(words)
        sides = {"frozen" if g.id in frozen else "dev" for g in used}
        cards.append(
            WordCard(
                secret=secret,
                clues=tuple(hint(g) for g in used),
                sources=tuple(g.id for g in used),
                candidates=tuple(words),
                side=sides.pop() if len(sides) == 1 else "mixed",
                distractor_pool=len(pool),
            )
        )
    left_out = {
        "secrets": len(by_secret),
        "secrets_with_fewer_items": len(too_few_items),
        "secrets_with_fewer_distinct_hints": sorted(too_few_hints),
    }
    return cards, left_out


def build_items(cards: Sequence[WordCard], *, clues: Sequence[int] = CLUES) -> list[Item]:
    """The items of ``cards``: per card, one Chameleon transcript per m with its first m
    clues (card-major, m-minor), grouped by ``word:<secret, case folded>``."""

    items = []
    for c in cards:
        group = f"word:{fold(c.secret)}"
        for m in clues:
            meta = {"m": m, "secret": c.secret, "sources": list(c.sources[:m]), "side": c.side}
            t = chameleon_item(
                f"word-card:{fold(c.secret)}|m{m}",
                CATEGORY,
                c.candidates,
                c.secret,
                c.clues[:m],
                meta,
            )
            items.append(Item(t, group, m, "word", None, ",".join(c.sources[:m])))
    return items


def load(path: Path) -> tuple[list[WordCard], list[Item], dict[str, Any]]:
    """Cards, items and the construction's counts from the Codenames file at ``path``."""
    from benchmarks.adversary import load_codenames

    games = load_codenames(path)
    cards, left_out = word_cards(games)
    items = build_items(cards)
    sizes: dict[str, int] = {}
    for c in cards:
        sizes[str(len(c.candidates))] = sizes.get(str(len(c.candidates)), 0) + 1
    counts = {
        "codenames_items": len(games),
        **left_out,
        "secrets_used": len(cards),
        "secrets_by_side": {s: sum(c.side == s for c in cards) for s in SIDES[:3]},
        "items": len(items),
        "items_by_m": {f"m{m}": sum(i.m == m for i in items) for m in CLUES},
        "codenames_items_used": len({s for c in cards for s in c.sources}),
        "card_sizes": sizes,
        "distractor_pool_min": min((c.distractor_pool for c in cards), default=0),
    }
    return cards, items, counts


def themed_items(games: Sequence[Any], cards: Sequence[Any]) -> tuple[list[Item], dict[str, str]]:
    """Codenames hints on a themed card: for every Chameleon card (``chameleon_cards.load_cards``)
    that holds a secret (the word a guesser picked), the card's words are the candidates and
    the secret's distinct hints (items in id order, a hint equal to the secret skipped) the
    clues: m = 1 is each hint alone, m = 2 and 3 the first 2 and 3 hints of a secret that has
    them. The distractors are the card's own category (Animals, Jobs, ...), as in a real game,
    not board words. Returns the items and each item's side (``frozen`` when all its hints
    come from frozen Codenames items, ``dev`` when all from dev items, else ``mixed``)."""
    from leakage.calibration import dev_frozen_split

    _, frozen_ids = dev_frozen_split([g.id for g in games])
    frozen = set(frozen_ids)
    by_secret: dict[str, list[Any]] = {}
    for g in sorted(games, key=lambda g: _number(g.id)):
        h = fold(hint(g))
        known = {fold(hint(x)) for x in by_secret.get(fold(g.secret), [])}
        if h != fold(g.secret) and h not in known:
            by_secret.setdefault(fold(g.secret), []).append(g)
    items: list[Item] = []
    sides: dict[str, str] = {}
    for card in cards:
        on_card = {fold(w): w for w in card.words}
        for key, used in by_secret.items():
            if key not in on_card:
                continue
            runs = [[g] for g in used] + [used[:m] for m in CLUES[1:] if len(used) >= m]
            for run in runs:
                m = len(run)
                ids = [g.id for g in run]
                side = {"frozen" if i in frozen else "dev" for i in ids}
                name = f"themed:{card.source}|{card.category}|{key}|m{m}|{ids[0]}"
                meta = {"m": m, "secret": on_card[key], "sources": ids, "card": card.source}
                t = chameleon_item(
                    name, card.category, card.words, on_card[key], [hint(g) for g in run], meta
                )
                items.append(Item(t, f"themed:{key}", m, "word", None, ",".join(ids)))
                sides[t.id] = side.pop() if len(side) == 1 else "mixed"
    return items, sides


# -- figures ---------------------------------------------------------------------------------


def _select(scored: Scored, sides: Mapping[str, str], m: int, side: str) -> list[int]:
    return [
        n for n, it in enumerate(scored.items) if it.m == m and side in ("all", sides[it.group])
    ]


def report(scored: Scored, sides: Mapping[str, str]) -> dict[str, Any]:
    """Per predictor: figures per m and side, the paired gains m -> m + 1 and the multiplier
    to calibrate after m clues (the shipped ensemble's on every side, a member's on all the
    secrets: each multiplier is 201 fits)."""
    from benchmarks.adversary import sharpening
    from benchmarks.studies.chameleon_cards import grouped_figures

    out: dict[str, Any] = {}
    for predictor in scored.posteriors:
        block: dict[str, Any] = {"figures": {}, "gain": {}, "calibration": {}}
        for side in SIDES:
            for m in CLUES:
                select = _select(scored, sides, m, side)
                if not select:
                    continue
                probs, truth = scored.arrays(predictor, select)
                groups = [scored.items[n].group for n in select]
                block["figures"][f"m{m}_{side}"] = grouped_figures(probs, truth, groups)
                if predictor == "ensemble" or side == "all":
                    a, ci = sharpening(probs, truth)
                    block["calibration"][f"m{m}_{side}"] = {"multiplier": a, "ci95": ci}
            for m in CLUES[:-1]:
                if _select(scored, sides, m, side):
                    block["gain"][f"m{m}to{m + 1}_{side}"] = gain(
                        scored, predictor, m, m + 1, side, sides
                    )
        out[predictor] = block
    return out


def themed_report(scored: Scored, sides: Mapping[str, str]) -> dict[str, Any]:
    """Per predictor, m and side (by item), figures with intervals resampling secret words."""
    from benchmarks.studies.chameleon_cards import grouped_figures

    out: dict[str, Any] = {}
    for predictor in scored.posteriors:
        block: dict[str, Any] = {}
        for side in SIDES:
            for m in CLUES:
                select = [
                    n
                    for n, it in enumerate(scored.items)
                    if it.m == m and side in ("all", sides[it.transcript.id])
                ]
                if select:
                    probs, truth = scored.arrays(predictor, select)
                    groups = [scored.items[n].group for n in select]
                    block[f"m{m}_{side}"] = grouped_figures(probs, truth, groups)
        out[predictor] = block
    return out


def gain(
    scored: Scored, predictor: str, a: int, b: int, side: str, sides: Mapping[str, str]
) -> dict[str, Any]:
    """Per secret word, top-1 and log loss after ``b`` clues minus after ``a``, with 95%
    intervals resampling secret words (``bootstrap_draws``: the same draws as the figures)."""
    from benchmarks.adversary import rank_figures
    from benchmarks.studies.chameleon_cards import N_BOOT, SEED
    from leakage.calibration import item_log_loss

    sa, sb = _select(scored, sides, a, side), _select(scored, sides, b, side)
    groups = [scored.items[n].group for n in sa]
    if groups != [scored.items[n].group for n in sb]:
        raise ValueError(f"m = {a} and m = {b} items are not paired by secret word")
    pa, truth = scored.arrays(predictor, sa)
    pb, _ = scored.arrays(predictor, sb)
    draws = bootstrap_draws(groups, N_BOOT, SEED)
    out: dict[str, Any] = {"secret_words": len(groups)}
    for name, d in (
        ("top1", rank_figures(pb, truth)["top1"] - rank_figures(pa, truth)["top1"]),
        ("log_loss", item_log_loss(pb, truth) - item_log_loss(pa, truth)),
    ):
        out[name] = round(float(d.mean()), 4)
        lo, hi = np.quantile([d[x].mean() for x in draws], [0.025, 0.975])
        out[f"{name}_ci95"] = [round(float(lo), 4), round(float(hi), 4)]
    return out


def _print(results: Mapping[str, Any]) -> None:
    for predictor, block in results.items():
        print(f"  {predictor}")
        for side in SIDES:
            for m in CLUES:
                f = block["figures"].get(f"m{m}_{side}")
                if f is None:
                    continue
                c = block["calibration"].get(f"m{m}_{side}")
                cal = f"  multiplier {c['multiplier']:.2f} {c['ci95']}" if c else ""
                print(
                    f"    {side:<6} m={m} words={f['secret_words']:<3} top-1 {f['top1']:.3f} "
                    f"{f['top1_ci95']}  top-3 {f['top3']:.3f}  log loss {f['log_loss']:.3f} "
                    f"{f['log_loss_ci95']} (uniform {f['uniform_log_loss']:.3f}){cal}"
                )
            for m in CLUES[:-1]:
                g = block["gain"].get(f"m{m}to{m + 1}_{side}")
                if g is not None:
                    print(
                        f"    {side:<6} m {m}->{m + 1}: top-1 {g['top1']:+.3f} {g['top1_ci95']}  "
                        f"log loss {g['log_loss']:+.3f} {g['log_loss_ci95']}"
                    )
        print(flush=True)


def run(members: Sequence[str] = MEMBERS, precision: str = "auto") -> dict[str, Any]:
    """Score every member and the shipped ensemble on the word cards; write the results."""
    from benchmarks.adversary import RowMemo, build_members, load_codenames
    from benchmarks.common import shared_data
    from benchmarks.studies.chameleon_cards import OnDemand, load_cards
    from leakage.backends.ensemble import (
        EnsembleBackend,
        default_weights_path,
        item_type,
        llm_rows,
        read_weights,
    )
    from leakage.runtime import cpu_supports_bf16

    start = time.perf_counter()
    path = shared_data("codenames-guess-val", "games.jsonl")
    cards, items, counts = load(path)
    types = {
        item_type(t.text, len(i.transcript.candidates)) for i in items for t in i.transcript.turns
    }
    if types != {"word"}:
        raise ValueError(f"expected only word items, got {sorted(types)}")
    sides = {f"word:{fold(c.secret)}": c.side for c in cards}
    print(
        f"word_cards: {counts['secrets_used']} secrets with 3 distinct hints of "
        f"{counts['secrets']} ({counts['secrets_by_side']}), {counts['items']} items "
        f"({counts['items_by_m']}), card sizes {counts['card_sizes']}; bf16: "
        f"{cpu_supports_bf16()}",
        flush=True,
    )
    if counts["secrets_by_side"]["frozen"] < 8:
        print(
            f"  note: only {counts['secrets_by_side']['frozen']} frozen secrets; their "
            "intervals are wide",
            flush=True,
        )
    scored = Scored("word_cards", items)
    backends, load_s = build_members(members, precision, embedding_precision=precision)
    memo = {n: RowMemo(b) for n, b in backends.items()}
    for name, backend in memo.items():
        scored.score(name, backend)
        print(f"  {name}: load {load_s[name]:.1f} s, scored {scored.seconds[name]:.1f} s")
    weights_file = default_weights_path(llm_rows(backends))
    fitted = read_weights(weights_file)
    full = {n: memo.get(n) or OnDemand(n, precision) for n in fitted.members}
    pool = EnsembleBackend.from_weights(fitted, full, weights_file=str(weights_file))
    scored.score("ensemble", pool)
    themed, themed_sides = themed_items(
        load_codenames(path), load_cards(shared_data("chameleon-cards", "cards.json"))
    )
    on_cards = Scored("themed", themed)
    for name, backend in {**memo, "ensemble": pool}.items():
        on_cards.score(name, backend)
    results: dict[str, Any] = {
        "cpu_supports_bf16": cpu_supports_bf16(),
        "data": {
            **counts,
            "licence": LICENCE,
            "cards": [
                {
                    "secret": c.secret,
                    "side": c.side,
                    "clues": list(c.clues),
                    "sources": list(c.sources),
                    "card_size": len(c.candidates),
                }
                for c in cards
            ],
        },
        "backends": {n: b.info() for n, b in {**backends, "ensemble": pool}.items()},
        "shipped_word_fit": pool.info().get("item_types", {}).get("word"),
        "asked_on_demand_rows": {n: b.rows for n, b in full.items() if isinstance(b, OnDemand)},
        "seconds": {"load": load_s, "score": scored.seconds},
        "predictors": report(scored, sides),
        "themed_cards": {
            "items": len(themed),
            "items_by_m": {f"m{m}": sum(i.m == m for i in themed) for m in CLUES},
            "secret_words": sorted({i.group.split(":", 1)[1] for i in themed}),
            "cards": len({i.transcript.meta["card"] for i in themed}),
            "predictors": themed_report(on_cards, themed_sides),
        },
    }
    _print(results["predictors"])
    print(
        f"  themed cards: {results['themed_cards']['items']} items "
        f"({results['themed_cards']['items_by_m']}), secrets "
        f"{results['themed_cards']['secret_words']}"
    )
    for predictor, block in results["themed_cards"]["predictors"].items():
        for cell, f in block.items():
            if cell.endswith("_all"):
                print(
                    f"    {predictor:<13} {cell:<7} n={f['items']:<3} words={f['secret_words']:<3}"
                    f" top-1 {f['top1']:.3f} {f['top1_ci95']}  log loss {f['log_loss']:.3f}"
                    f" (uniform {f['uniform_log_loss']:.3f})"
                )
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    params = {
        "members": list(members),
        "llm_precision": precision,
        "codenames": str(path),
        "weights_file": str(weights_file),
        "card_size": CARD_SIZE,
        "split": SPLIT_RULE,
        "bootstrap": {"resamples": 1000, "seed": 0, "level": 0.95, "unit": "secret word"},
        "command": study_command("word_cards", precision, members, MEMBERS),
    }
    out = write_study("word_cards", backends, precision, params, results)
    print(f"  wrote {out}")
    return results


if __name__ == "__main__":
    args = study_parser(
        "word_cards",
        __doc__,
        members=MEMBERS,
        members_help="comma-separated members to score (default: all four, the members of the "
        "word fit; one of the fit left out is built on demand for the ensemble)",
        precision_help="the LLM members' and the embedding's precision (fp32: torch in fp32, "
        "the rows of the shipped torch fit); results in word_cards_<precision>.json",
    ).parse_args()
    run(member_list(args.members), precision=args.precision)
