"""Sentence clues on a Chameleon card (issue 30): dev data, a frozen split, the baseline.

**Items.** A *card item* is a Chameleon game whose clues are sentences and whose candidates are
a card of 8-25 words, as in MAgIC's Chameleon games:

- *CK-Arena on a card*: the civilians' statements of a CK-Arena Undercover game
  (``../shared/data/ck-arena-dev/logs``, 227 games by 22 LLMs, read in place with the
  ``ck-arena`` adapter) about their word w, where w stands on a Chameleon card; the card's
  words are the candidates, w the secret. Cards: the product's own set
  (``leakage/data/chameleon_cards.json``, 28 x 16, MIT) first, then
  ``../shared/data/chameleon-cards/cards.json`` (62 cards of 8 or 16 words from game clones,
  chatarena / MAgIC, LLMChameleon); a card with the same words as one already taken is
  skipped. Per game and card there are items of m = 1, 2 and 3 clues: the first m civilian
  statements in the order spoken (the posterior after 1, 2, 3 clues of one game, as the
  published Chameleon curves are drawn). A statement that names the secret (the word, case
  folded, at word boundaries) is left out, as a referee would.
- *CK-Arena on the pair* (for comparison): the same statements against the game's two words,
  m = 1, 2, 3: what the shipped statement fit was fitted on (two candidates).
- *MAgIC's printed example game* (``benchmarks/fixtures/magic_countries_uk.json``, typed in
  by hand with its citation): Countries, secret United Kingdom, clues "It's in Europe.",
  "It's an island.", "It has a monarchy.", candidates the 8-word Countries card of the MAgIC
  / chatarena Chameleon environment (United States, Canada, Brazil, United Kingdom, France,
  Germany, Japan, Australia). Reported as the rank of the secret per predictor.

Counts on the 227 dev logs (2026-11-27): 753 card items (251 per m) from 102 games, 29 secret
words, 35 cards (33 of 16 words, 2 of 8; 81 of the 251 game x card pairs on the shipped
cards, 170 on the shared ones); 681 pair items (227 per m); 5 civilian statements naming
their word left out; 1 MAgIC game.

Licences (``../shared/data/README.md``): CK-Arena logs "none stated: evaluation only"; shared
cards mixed, mostly "none stated: evaluation only" (each record names its own); the shipped
cards MIT (this project's); the MAgIC example is one printed example from a paper, cited.
Nothing from ``../shared`` is copied into the repository: items are built in memory on each
run, and the result file holds ids, counts and figures only.

**Frozen split.** Items about one secret word share statements (m = 1 is a prefix of m = 3;
one game's statements stand on every card holding its word; the other games of that word are
the same pair), so the split is by the secret word, not by item:
``leakage.calibration.dev_frozen_split`` over ``card-word:<word, case folded>`` (SHA-256, one
third frozen). Nothing is tuned on the frozen side; parts 2-3 of issue 30 fit on dev only.
The shipped ensemble's statement fit was fitted on 159 of the same 227 CK-Arena games as
pair items (docs/calibration.md): these sentences are not new to it, the card is.

**Figures.** Per item set, m and side: top-1 (ties split), top-3, log loss (nats), each with a
95% percentile bootstrap interval that resamples secret words (items of one word together:
1,000 resamples, seed 0). Members: co-occurrence, embedding, the speaker judge and the
listener, library defaults (LLM runtime: the default for this CPU; a member of the shipped
fit left out of ``--members`` is built on demand, ``OnDemand``); the shipped ensemble
and, for comparison, the shipped *word* fit applied to these items, both pooling the members'
rows already computed (``RowMemo``: each (statement, candidates) row is computed once for
m = 1, 2, 3 and every pool). The posterior after m clues is the normalised sum of the m
rows (uniform prior), checked against ``score_transcript`` on the first items.

**The sentence_card fit** (``--write-weights PATH [--base PATH]``, as
``benchmarks.adversary`` writes the word fit): the ``sentence_card`` item type's temperatures
and weights, fitted with ``leakage.calibration.calibrate_on`` on the card items of the **dev**
words only (every m pooled: an item is the sum of its m centred rows, so that the fitted
multipliers are those that make the posterior after m clues best, correlated clues included),
measured on the frozen words; written into the base file (default: the shipped one for the
members' LLM rows) with its other fits kept, and used as the shipped ensemble for the figures.
``ensemble_statement_fit`` is the same file without its sentence_card entry (the pool before);
``shipped_minus_before`` the paired differences per m, resampling secret words.

``python -m benchmarks.studies.chameleon_cards`` (``--members cooccurrence,embedding`` scores only
those two as members, but the shipped pool weighs all four on sentence clues, so it builds the
listener and the judge on demand, ``OnDemand``, and is not much faster; ``--no-pair`` skips
the pair items; ``--precision fp32`` runs the LLM members and the embedding in torch fp32, the
rows of the shipped torch fit).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.common import (
    SHARED_DATA,
    Stopwatch,
    bootstrap_draws,
    chameleon_item,
    fold,
    shipped_fit,
)
from benchmarks.studies._cli import member_list, study_parser, write_study

MEMBERS = ("cooccurrence", "embedding", "judge", "listener")
CLUES = (1, 2, 3)
N_BOOT = 1000
SEED = 0
CHECK_ITEMS = 3
"""Items per item set whose posterior is checked against ``score_transcript``."""
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "magic_countries_uk.json"
SHIPPED_CARDS = "leakage/data/chameleon_cards.json"
SHIPPED_LICENCE = "MIT (written for this project)"
CK_ARENA_LICENCE = "none stated: evaluation only (../shared/data/README.md)"
WORD_FIT = "ensemble_word_fit_everywhere"
"""The shipped word fit (one-word Codenames clues) applied to every item: for comparison."""
BEFORE = "ensemble_statement_fit"
"""The ensemble's file without its sentence_card fit: sentence clues on a card pooled with the
statement fit (CK-Arena pairs), as before the type had a fit of its own."""
CARD_TYPE = "sentence_card"
SPLIT_RULE = "dev/frozen: leakage.calibration.dev_frozen_split over card-word:<secret>"


@dataclass(frozen=True)
class CardSource:
    """One card and where it comes from."""

    source: str
    category: str
    words: tuple[str, ...]
    licence: str


@dataclass(frozen=True)
class Item:
    """One item: a Chameleon transcript with m sentence clues, and what it was built from."""

    transcript: Any
    group: str
    """The split and bootstrap unit: ``card-word:<secret, case folded>``."""
    m: int
    kind: str
    """``card`` or ``pair``."""
    card: CardSource | None
    game_id: str


def load_cards(shared: Path | None = None) -> list[CardSource]:
    """The shipped cards, then the shared ones (when ``shared`` exists), each word set once."""
    from leakage.games import load_cards as shipped

    cards = [CardSource(SHIPPED_CARDS, c.category, c.words, SHIPPED_LICENCE) for c in shipped()]
    if shared is not None and shared.exists():
        for rec in json.loads(shared.read_text(encoding="utf-8")):
            cards.append(
                CardSource(
                    f"shared:{rec['source']}",
                    rec["category"],
                    tuple(rec["words"]),
                    rec.get("license", "none stated"),
                )
            )
    out, seen = [], set()
    for c in cards:
        key = frozenset(fold(w) for w in c.words)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def names_word(text: str, word: str) -> bool:
    """Whether ``text`` says ``word`` (case folded, at word boundaries; a plural too)."""
    pattern = r"(?<![\w])" + re.escape(fold(word)) + r"(?:s|es)?(?![\w])"
    return re.search(pattern, fold(text)) is not None


def civilian_statements(game: Any) -> list[str]:
    """The civilians' statements in the order spoken, without those naming their word."""
    word = game.words.civilian
    return [
        t.text
        for t in game.turns
        if game.player(t.player).role == "civilian" and not names_word(t.text, word)
    ]


def card_items(
    games: Sequence[Any], cards: Sequence[CardSource], *, clues: Sequence[int] = CLUES
) -> list[Item]:
    """Items of the civilians' statements of each SpyGame ``games`` against every card in
    ``cards`` that holds their word (the card's spelling is the secret), one per m in
    ``clues`` that the game has statements for."""
    at: dict[str, list[CardSource]] = {}
    for c in cards:
        for w in c.words:
            at.setdefault(fold(w), []).append(c)
    items = []
    for g in games:
        said = civilian_statements(g)
        for card in at.get(fold(g.words.civilian), []):
            secret = next(w for w in card.words if fold(w) == fold(g.words.civilian))
            group = f"card-word:{fold(secret)}"
            for m in clues:
                if len(said) < m:
                    continue
                item_id = f"card:{card.source}:{card.category}|{g.id}|m{m}"
                meta = {"m": m, "game": g.id, "card_source": card.source}
                t = chameleon_item(item_id, card.category, card.words, secret, said[:m], meta)
                items.append(Item(t, group, m, "card", card, g.id))
    return items


def pair_items(games: Sequence[Any], *, clues: Sequence[int] = CLUES) -> list[Item]:
    """The same statements against their game's pair (civilian word, spy word)."""
    items = []
    for g in games:
        said = civilian_statements(g)
        for m in clues:
            if len(said) < m:
                continue
            pair = [g.words.civilian, g.words.spy]
            meta = {"m": m, "game": g.id}
            t = chameleon_item(f"pair|{g.id}|m{m}", "pair", pair, g.words.civilian, said[:m], meta)
            items.append(Item(t, f"card-word:{fold(g.words.civilian)}", m, "pair", None, g.id))
    return items


def load_fixture(path: Path = FIXTURE) -> Any:
    """MAgIC's printed United Kingdom game as a transcript."""
    from leakage import load_transcripts

    games, errors = load_transcripts([path], input_format="leakage")
    if errors or len(games) != 1:
        raise ValueError(f"{path}: not one valid transcript: {errors}")
    return games[0]


def split(items: Sequence[Item]) -> dict[str, str]:
    """Each item's group -> ``dev`` or ``frozen`` (``dev_frozen_split`` over the groups)."""
    from leakage.calibration import dev_frozen_split

    dev, frozen = dev_frozen_split(sorted({i.group for i in items}))
    return {**dict.fromkeys(dev, "dev"), **dict.fromkeys(frozen, "frozen")}


# -- scoring ---------------------------------------------------------------------------------


class Scored:
    """One item set with each predictor's posterior after all of an item's clues."""

    def __init__(self, name: str, items: Sequence[Item]) -> None:
        from leakage.calibration import extract_items

        self.name = name
        self.items = list(items)
        self.games, skipped = extract_items([i.transcript for i in self.items])
        if skipped or len(self.games) != len(self.items):
            raise ValueError(f"{name}: games skipped: {skipped}")
        self.posteriors: dict[str, list[NDArray[np.float64]]] = {}
        self.rows: dict[str, list[NDArray[np.float64]]] = {}
        """Each predictor's centred rows per item (m clues x candidates)."""
        self.seconds: dict[str, float] = {}

    def score(self, name: str, backend: Any) -> None:
        from leakage.calibration import member_rows
        from leakage.posterior import normalize_log

        with Stopwatch() as sw:
            rows = member_rows(backend, self.games)
        self.seconds[name] = round(sw.seconds, 2)
        self.rows[name] = rows
        self.posteriors[name] = [normalize_log(r.sum(axis=0)) for r in rows]
        self._check(name, backend)

    def _check(self, name: str, backend: Any) -> None:
        """The first items' posteriors equal ``score_transcript``'s after the last clue."""
        from benchmarks.adversary import check_posteriors

        firsts = self.items[:CHECK_ITEMS]
        check_posteriors(
            name, backend, [i.transcript for i in firsts], self.posteriors[name][: len(firsts)]
        )

    def arrays(
        self, name: str, select: Sequence[int]
    ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        from benchmarks.adversary import padded

        return padded(
            [self.posteriors[name][i] for i in select], [self.games[i].truth[0] for i in select]
        )


def grouped_figures(
    probs: NDArray[np.float64], truth: NDArray[np.int64], groups: Sequence[str]
) -> dict[str, Any]:
    """top-1, top-3 and log loss with 95% intervals resampling ``groups`` (secret words)."""
    from benchmarks.adversary import rank_figures
    from leakage.calibration import item_log_loss

    per = rank_figures(probs, truth)
    values = {"top1": per["top1"], "top3": per["top3"], "log_loss": item_log_loss(probs, truth)}
    draws = bootstrap_draws(groups, N_BOOT, SEED)
    out: dict[str, Any] = {"items": int(truth.size), "secret_words": len(set(groups))}
    for k, v in values.items():
        out[k] = round(float(v.mean()), 4)
        lo, hi = np.quantile([v[d].mean() for d in draws], [0.025, 0.975])
        out[f"{k}_ci95"] = [round(float(lo), 4), round(float(hi), 4)]
    out["uniform_log_loss"] = round(float(np.log((probs > 0).sum(axis=1)).mean()), 4)
    return out


def report(scored: Scored, sides: Mapping[str, str]) -> dict[str, Any]:
    """Figures per predictor, m and side (dev, frozen, all)."""
    out: dict[str, Any] = {}
    for predictor in scored.posteriors:
        out[predictor] = {}
        for m in CLUES:
            for side in ("dev", "frozen", "all"):
                select = [
                    n
                    for n, it in enumerate(scored.items)
                    if it.m == m and side in ("all", sides[it.group])
                ]
                if not select:
                    continue
                probs, truth = scored.arrays(predictor, select)
                groups = [scored.items[n].group for n in select]
                out[predictor][f"m{m}_{side}"] = grouped_figures(probs, truth, groups)
    if {"ensemble", BEFORE} <= set(scored.posteriors):
        out["shipped_minus_before"] = {
            f"m{m}_{side}": paired(scored, "ensemble", BEFORE, m, side, sides)
            for m in CLUES
            for side in ("dev", "frozen")
        }
    return out


def paired(
    scored: Scored, a: str, b: str, m: int, side: str, sides: Mapping[str, str]
) -> dict[str, Any]:
    """Per-item differences ``a - b`` of log loss and top-1 after m clues on one side, with
    95% intervals resampling secret words (the same resamples for both predictors)."""
    from benchmarks.adversary import rank_figures
    from leakage.calibration import item_log_loss

    select = [n for n, it in enumerate(scored.items) if it.m == m and sides[it.group] == side]
    pa, truth = scored.arrays(a, select)
    pb, _ = scored.arrays(b, select)
    draws = bootstrap_draws([scored.items[n].group for n in select], N_BOOT, SEED)
    out: dict[str, Any] = {"items": len(select)}
    for name, d in (
        ("log_loss", item_log_loss(pa, truth) - item_log_loss(pb, truth)),
        ("top1", rank_figures(pa, truth)["top1"] - rank_figures(pb, truth)["top1"]),
    ):
        out[name] = round(float(d.mean()), 4)
        lo, hi = np.quantile([d[x].mean() for x in draws], [0.025, 0.975])
        out[f"{name}_ci95"] = [round(float(lo), 4), round(float(hi), 4)]
    return out


def calibration_by_m(scored: Scored, predictor: str, sides: Mapping[str, str]) -> dict[str, Any]:
    """Per m and side, the multiplier of the log-posteriors after m clues that would make them
    best (``benchmarks.adversary.sharpening``: 1 when calibrated in scale, above 1 when too
    flat), with a 95% interval over items: whether one set of per-clue temperatures serves
    m = 1, 2 and 3."""
    from benchmarks.adversary import sharpening

    out: dict[str, Any] = {}
    for m in CLUES:
        for side in ("dev", "frozen"):
            select = [
                n for n, it in enumerate(scored.items) if it.m == m and sides[it.group] == side
            ]
            probs, truth = scored.arrays(predictor, select)
            a, ci = sharpening(probs, truth)
            out[f"m{m}_{side}"] = {"multiplier": a, "ci95": ci}
    return out


def fit_card_type(scored: Scored, sides: Mapping[str, str], members: Sequence[str]) -> Any:
    """The ``sentence_card`` type's temperatures and weights, fitted on the card items of the
    dev words only (``calibrate_on``: the library's fitting code), measured on the frozen
    words. Every m is pooled: an item is the sum of its m centred rows (the pool is linear in
    the rows, so multipliers fitted there are per-clue multipliers that make the posterior
    after m clues best). Items with a clue of another type are left out."""
    from leakage.backends.ensemble import item_type
    from leakage.calibration import GameItems, build_item_set, calibrate_on

    keep = [
        n
        for n, it in enumerate(scored.items)
        if all(
            item_type(t.text, len(it.transcript.candidates)) == CARD_TYPE
            for t in it.transcript.turns
        )
    ]
    games = [
        GameItems(
            scored.items[n].transcript.id,
            "chameleon",
            [f"m{scored.items[n].m}"],
            scored.games[n].candidates,
            scored.games[n].category,
            scored.games[n].truth[:1],
        )
        for n in keep
    ]
    summed = {name: [scored.rows[name][n].sum(axis=0)[None] for n in keep] for name in members}
    items = build_item_set(games, summed)
    in_train = np.array([sides[scored.items[n].group] == "dev" for n in keep])
    return calibrate_on(items, in_train, seed=SEED, split=SPLIT_RULE)


def write_card_weights(
    result: Any,
    path: Path,
    member_info: Mapping[str, Any],
    base_path: Path | None = None,
    rows: str = "",
) -> Path:
    """``benchmarks.adversary.write_type_fit`` of the ``sentence_card`` type fitted on the
    dev words' card items."""
    from benchmarks.adversary import write_type_fit

    return write_type_fit(
        CARD_TYPE,
        result,
        path,
        member_info,
        fitted_on={
            "paths": [
                "../shared/data/ck-arena-dev/logs",
                SHIPPED_CARDS,
                "../shared/data/chameleon-cards/cards.json",
            ],
            "input_format": "ck-arena civilians' statements on Chameleon cards",
            "pooled": "m = 1, 2, 3; an item is the sum of its m centred rows",
        },
        note="CK-Arena civilians' statements (m = 1-3) against a Chameleon card of 8-16 words "
        "holding their word (the truth), fitted on the dev words, measured on the frozen words",
        command="python -m benchmarks.studies.chameleon_cards",
        base_path=base_path,
        rows=rows,
    )


def secret_rank(transcript: Any, backend: Any) -> dict[str, Any]:
    """Where ``backend`` ranks the secret of ``transcript`` after all its clues."""
    from leakage import ScoreOptions, score_transcript

    post = score_transcript(transcript, backend, ScoreOptions()).steps[-1].posterior
    order = sorted(post, key=lambda w: -post[w])
    return {
        "rank": order.index(transcript.secret) + 1,
        "of": len(order),
        "p_secret": round(post[transcript.secret], 4),
        "order": [[w, round(post[w], 4)] for w in order],
    }


class OnDemand:
    """A member of the shipped fit that was not scored as a member: built (library defaults)
    the first time the pool asks it, and asked only for the items the pool needs it on (the
    statement fit gives the speaker judge weight 0; a clue of at most two words against a card
    is a ``word`` item, where the word fit weighs it). ``rows`` counts the rows it computed."""

    def __init__(self, name: str, precision: str = "auto") -> None:
        self.name = name
        self.precision = precision
        self.backend: Any = None
        self.rows = 0

    def info(self) -> dict[str, Any]:
        if self.backend is None:
            return {"backend": self.name, "built": False}
        info: dict[str, Any] = self.backend.info()
        return info

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> Any:
        if self.backend is None:
            from benchmarks.adversary import RowMemo, build_members

            built, _ = build_members([self.name], self.precision, self.precision)
            self.backend = RowMemo(built[self.name])
        self.rows += len(clues)
        return self.backend.loglik(clues, candidates, category=category)


def pools(
    members: Mapping[str, Any], weights_file: Path | None = None, precision: str = "auto"
) -> tuple[dict[str, Any], str]:
    """The shipped ensemble over ``members`` (or the one of ``weights_file``), the same file
    without its sentence_card fit (``BEFORE``, when it has one) and, when every member it uses
    was run, its word fit applied to every item. A member of the file that was not run stands
    in as ``OnDemand``."""
    from leakage.backends.ensemble import EnsembleBackend

    path, fitted = shipped_fit(members, weights_file)
    full = {n: members.get(n) or OnDemand(n, precision) for n in fitted.members}
    shipped = EnsembleBackend.from_weights(fitted, full, weights_file=str(path))
    out: dict[str, Any] = {"ensemble": shipped}
    if CARD_TYPE in fitted.item_types:
        types = {k: v for k, v in fitted.item_types.items() if k != CARD_TYPE}
        before = fitted.model_copy(update={"item_types": types})
        out[BEFORE] = EnsembleBackend.from_weights(before, full, weights_file=str(path))
    used = list(shipped.members)
    if all(n in members for n in used):
        weights, scales = fitted.fit_for("word")
        out[WORD_FIT] = EnsembleBackend(
            {n: members[n] for n in used},
            {n: weights[n] for n in used},
            {n: scales[n] for n in used},
            weights_file=str(path),
        )
    return out, str(path)


def _summary(scored: Scored) -> dict[str, Any]:
    from leakage.backends.ensemble import item_type

    by_m = {f"m{m}": sum(1 for i in scored.items if i.m == m) for m in CLUES}
    sources: dict[str, int] = {}
    for i in scored.items:
        if i.card is not None and i.m == 1:
            sources[i.card.source] = sources.get(i.card.source, 0) + 1
    return {
        "items": len(scored.items),
        "items_by_m": by_m,
        "games": len({i.game_id for i in scored.items}),
        "secret_words": len({i.group for i in scored.items}),
        "cards": len({(i.card.source, i.card.category) for i in scored.items if i.card}),
        "m1_items_by_card_source": sources,
        "card_licences": sorted({i.card.licence for i in scored.items if i.card}),
        "items_with_a_word_type_clue": sum(
            any(item_type(t.text, len(i.transcript.candidates)) == "word" for t in turns)
            for i in scored.items
            for turns in [i.transcript.turns]
        ),
    }


def _print(title: str, block: Mapping[str, Any]) -> None:
    print(f"  {title}")
    for predictor, cells in block.items():
        if predictor == "shipped_minus_before":
            for cell, d in cells.items():
                print(
                    f"    shipped - before {cell:<9} n={d['items']:<4} top-1 {d['top1']:+.3f} "
                    f"{d['top1_ci95']}  log loss {d['log_loss']:+.3f} {d['log_loss_ci95']}"
                )
            continue
        for cell, f in cells.items():
            if cell.endswith("_all"):
                continue
            print(
                f"    {predictor:<30} {cell:<9} n={f['items']:<4} words={f['secret_words']:<3} "
                f"top-1 {f['top1']:.3f} {f['top1_ci95']}  top-3 {f['top3']:.3f}  "
                f"log loss {f['log_loss']:.3f} {f['log_loss_ci95']} "
                f"(uniform {f['uniform_log_loss']:.3f})",
                flush=True,
            )


def run(
    members: Sequence[str] = MEMBERS,
    pair: bool = True,
    write_weights: Path | None = None,
    base: Path | None = None,
    precision: str = "auto",
) -> dict[str, Any]:
    """Score every member and pool; ``write_weights``: also write the weights file ``base``
    (default: the shipped one for the members' rows) with the sentence_card type fitted on
    this run's dev card items, and measure with it; ``precision``: the LLM members' and the
    embedding's (``fp32``: torch in fp32, the rows the shipped torch fit was made on)."""
    from benchmarks.adversary import RowMemo, build_members
    from benchmarks.common import ck_arena_games
    from leakage.backends.ensemble import llm_rows
    from leakage.runtime import cpu_supports_bf16

    start = time.perf_counter()
    logs, games = ck_arena_games()
    cards_path = SHARED_DATA / "chameleon-cards" / "cards.json"
    cards = load_cards(cards_path)
    sets = {"card": Scored("card", card_items(games, cards))}
    if pair:
        sets["pair"] = Scored("pair", pair_items(games))
    sides = split([i for s in sets.values() for i in s.items])
    uk = load_fixture()
    dropped = sum(
        1
        for g in games
        for t in g.turns
        if g.player(t.player).role == "civilian" and names_word(t.text, g.words.civilian)
    )
    data = {
        "ck_arena_games": len(games),
        "civilian_statements_naming_the_secret_left_out": dropped,
        "cards_after_dedup": len(cards),
        "licences": {"ck_arena_logs": CK_ARENA_LICENCE},
        **{name: _summary(s) for name, s in sets.items()},
        "groups": {
            side: sorted(g for g, v in sides.items() if v == side) for side in ("dev", "frozen")
        },
        "magic_uk_game": {"path": str(FIXTURE.relative_to(FIXTURE.parents[2])), "items": 1},
    }
    print(
        f"chameleon_cards: {data['card']['items']} card items "
        f"({data['card']['items_by_m']}) from {data['card']['games']} CK-Arena games, "
        f"{data['card']['secret_words']} secret words on {data['card']['cards']} cards; "
        f"{len(data['groups']['frozen'])} of {len(sides)} words frozen; bf16: "
        f"{cpu_supports_bf16()}",
        flush=True,
    )
    # fp32 rows throughout for the torch fit: MiniLM too, which runs in bf16 by default here
    backends, load = build_members(members, precision, embedding_precision=precision)
    memo = {n: RowMemo(b) for n, b in backends.items()}
    uk_ranks: dict[str, Any] = {}
    for name, backend in memo.items():
        for s in sets.values():
            s.score(name, backend)
        uk_ranks[name] = secret_rank(uk, backend)
        print(
            f"  {name}: load {load[name]:.1f} s, "
            + ", ".join(f"{k} {s.seconds[name]:.1f} s" for k, s in sets.items())
            + f"; UK game rank {uk_ranks[name]['rank']} of 8",
            flush=True,
        )
    refit = None
    if write_weights is not None:
        refit = fit_card_type(sets["card"], sides, list(memo))
        info = {n: b.info() for n, b in backends.items()}
        wrote = write_card_weights(refit, write_weights, info, base, rows=llm_rows(backends))
        print(f"  sentence_card fit on dev: {refit.verdict()}; wrote {wrote}", flush=True)
    pooled, weights_file = pools(memo, write_weights, precision)
    for name, backend in pooled.items():
        for s in sets.values():
            s.score(name, backend)
        uk_ranks[name] = secret_rank(uk, backend)
    results: dict[str, Any] = {
        "cpu_supports_bf16": cpu_supports_bf16(),
        "data": data,
        "backends": {n: b.info() for n, b in {**backends, **pooled}.items()},
        "asked_on_demand_rows": {
            n: b.rows for n, b in pooled["ensemble"].members.items() if isinstance(b, OnDemand)
        },
        "seconds": {"load": load, **{k: s.seconds for k, s in sets.items()}},
        "magic_uk_game": uk_ranks,
        **{k: report(s, sides) for k, s in sets.items()},
        "calibration_by_m": {
            p: calibration_by_m(sets["card"], p, sides) for p in ("ensemble", BEFORE) if p in pooled
        },
    }
    if refit is not None:
        results["sentence_card_fit"] = {
            "temperatures": refit.temperatures,
            "weights": refit.weights,
            "train_items": refit.train_items,
            "test_items": refit.test_items,
            "held_out": {k: m.summary() for k, m in refit.metrics.items()},
            "verdict": refit.verdict(),
        }
    for k in sets:
        _print(f"{k} items (m clues, dev / frozen)", results[k])
    print("  MAgIC United Kingdom game (8 candidates): rank of the secret, P(secret), top 3")
    for name, r in uk_ranks.items():
        top = ", ".join(f"{w} {p:.2f}" for w, p in r["order"][:3])
        print(f"    {name:<30} {r['rank']} of {r['of']}  P={r['p_secret']:.3f}  ({top})")
    for name, cells in results["calibration_by_m"].items():
        print(f"  {name}: multiplier to calibrate the card posteriors after m clues")
        for cell, c in cells.items():
            print(f"    {cell:<9} {c['multiplier']:.3f} {c['ci95']}")
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    params = {
        "members": list(members),
        "llm_precision": precision,
        "logs": str(logs),
        "cards": [SHIPPED_CARDS, str(cards_path)],
        "weights_file": weights_file,
        "base": str(base) if base else None,
        "split": "leakage.calibration.dev_frozen_split over card-word:<secret> (1/3 frozen)",
        "bootstrap": {"resamples": N_BOOT, "seed": SEED, "level": 0.95, "unit": "secret word"},
        "command": "python -m benchmarks.studies.chameleon_cards"
        + ("" if tuple(members) == MEMBERS else f" --members {','.join(members)}")
        + ("" if pair else " --no-pair")
        + ("" if precision == "auto" else f" --precision {precision}")
        + (f" --base {base}" if base else "")
        + (f" --write-weights {write_weights}" if write_weights else ""),
    }
    path = write_study("chameleon_cards", backends, precision, params, results)
    print(f"  wrote {path}")
    return results


if __name__ == "__main__":
    parser = study_parser(
        "chameleon_cards",
        __doc__,
        members=MEMBERS,
        members_help="comma-separated members to score (default: all four, which the shipped "
        "ensemble pools on sentence clues and on words; the judge takes about 8 minutes on the "
        "card items in bf16 here)",
        precision_help="the LLM members' and the embedding's precision (fp32: torch in fp32, "
        "the rows of the shipped torch fit); results in chameleon_cards_<precision>.json",
    )
    parser.add_argument("--no-pair", action="store_true", help="skip the pair items")
    parser.add_argument(
        "--write-weights",
        type=Path,
        metavar="PATH",
        help="also write the shipped weights file with the sentence_card type fitted on the "
        "dev words here, and measure with it",
    )
    parser.add_argument(
        "--base",
        type=Path,
        metavar="PATH",
        help="with --write-weights: the weights file whose other fits are kept (default: the "
        "shipped one for the members' LLM rows)",
    )
    args = parser.parse_args()
    run(
        member_list(args.members),
        pair=not args.no_pair,
        write_weights=args.write_weights,
        base=args.base,
        precision=args.precision,
    )
