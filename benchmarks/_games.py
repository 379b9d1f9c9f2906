"""Synthetic Chameleon games for the throughput benchmark, generated from a seed.

Each game: one card of the project's card set (``leakage/data/chameleon_cards.json``, 16
words), a secret drawn uniformly from it, 4 players of whom one (a random seat) is the
chameleon, and one clue per player in seat order (4 clues).

Clues come from WordNet 3.0 (the same files the default corpus is built from), so that they
are words related to the secret the way a player's clue is, and so that they vary from game
to game (a game rarely repeats another's clue set, which is what makes a warm count cache
matter). A candidate's *clue pool* is every content word of the glosses of the synsets that
have the candidate as a lemma, plus those synsets' other one-word lemmas and the one-word
lemmas of the synsets they point to (hypernyms, hyponyms, parts, domains, ...), with
repetition, so that a word found in several synsets is drawn more often. Words that give the
secret away (sharing a four-letter prefix with one of its words, ``swimmer`` for
``Swimming``) are left out, as a player would. The synsets of a candidate are looked up by
the whole name, then by its last word, each also without a plural ``s`` (``Religious
Studies`` falls back to ``study``, which is crude); a name found in none of them uses the
synsets whose gloss mentions it, then the pool of the category name, then the pooled pools of
the card. A non-chameleon draws from the secret's pool; the chameleon, who does not know the
secret, bluffs with a word from the pool of another candidate of the card.

This is a load generator, not a model of players: the clues are plausible and varied, which
is what a throughput figure needs; their quality is not measured here.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from leakage import ChameleonTranscript
from leakage.corpus import STOPWORDS, wordnet_documents
from leakage.transcripts import Player, Turn

CARDS = Path(__file__).resolve().parents[1] / "leakage" / "data" / "chameleon_cards.json"
_ALPHA = re.compile(r"[a-z]+")


def _fold(text: str) -> str:
    """Lower case, diacritics and apostrophes stripped, words joined by single spaces."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(_ALPHA.findall(plain.casefold().replace("'", "")))


def _variants(phrase: str) -> list[str]:
    """The phrase, then its last word, each also without a plural ``s``."""
    out = [phrase]
    last = phrase.rsplit(" ", 1)[-1]
    if last != phrase:
        out.append(last)
    for v in list(out):
        if v.endswith("ies"):
            out.append(v[:-3] + "y")
        elif v.endswith("s") and not v.endswith("ss"):
            out.append(v[:-1])
    return out


def _gives_away(word: str, secret: str) -> bool:
    return any(word[:4] == s[:4] for s in secret.split() if len(s) >= 3)


def load_cards(path: Path = CARDS) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))


def clue_pools(cards: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Clue pool of every word on the cards (keyed by the word as printed) and of each category."""
    wanted: dict[str, list[str]] = defaultdict(list)  # folded phrase -> printed names
    for card in cards:
        wanted[_fold(card["category"])].append(card["category"])
        for w in card["words"]:
            wanted[_fold(w)].append(w)
    docs = [d.split(" ; ") for d in wordnet_documents()]
    by_lemma: dict[str, list[int]] = defaultdict(list)
    for i, parts in enumerate(docs):
        for lemma in parts[0].split(", "):
            by_lemma[_fold(lemma)].append(i)

    def pool_of(phrase: str, doc_ids: list[int]) -> list[str]:
        words: list[str] = []
        for i in doc_ids:
            lemmas, gloss, related = (docs[i] + ["", ""])[:3]
            words += [w for w in _ALPHA.findall(gloss.split(";")[0].casefold()) if len(w) >= 3]
            for field in (lemmas, related):
                words += [
                    x for x in (_fold(lem) for lem in field.split(", ")) if x and " " not in x
                ]
        return [w for w in words if w not in STOPWORDS and not _gives_away(w, phrase)]

    glosses: list[str] | None = None
    pools: dict[str, list[str]] = {}
    for phrase, names in wanted.items():
        ids = next((by_lemma[v] for v in _variants(phrase) if v in by_lemma), [])
        if not ids:  # no synset of its own: the synsets whose gloss names it
            if glosses is None:
                glosses = [f" {_fold(parts[1] if len(parts) > 1 else '')} " for parts in docs]
            ids = [i for i, g in enumerate(glosses) if f" {phrase} " in g]
        pool = pool_of(phrase, ids[:50])
        for name in names:
            pools[name] = pool
    for card in cards:
        words = card["words"]
        fallback = pools[card["category"]] or [x for w in words for x in pools[w]]
        for w in words:
            if not pools[w]:
                pools[w] = fallback
    return pools


def generate_games(
    n_games: int, seed: int, *, n_players: int = 4, cards_path: Path = CARDS
) -> tuple[list[ChameleonTranscript], dict[str, object]]:
    """``n_games`` Chameleon transcripts and facts about them (pool sizes, distinct clues)."""
    rng = np.random.default_rng(seed)
    cards = load_cards(cards_path)
    pools = clue_pools(cards)
    games = []
    for g in range(n_games):
        card = cards[int(rng.integers(len(cards)))]
        words = list(card["words"])
        secret = words[int(rng.integers(len(words)))]
        chameleon = int(rng.integers(n_players))
        players, turns = [], []
        for seat in range(n_players):
            pid = f"p{seat + 1}"
            if seat == chameleon:
                others = [w for w in words if w != secret]
                pool = pools[others[int(rng.integers(len(others)))]]
            else:
                pool = pools[secret]
            if seat == chameleon:
                players.append(Player(id=pid, role="chameleon"))
            else:
                players.append(Player(id=pid, role="non-chameleon"))
            turns.append(Turn(player=pid, text=pool[int(rng.integers(len(pool)))], round=1))
        games.append(
            ChameleonTranscript(
                id=f"synthetic-{seed}-{g}",
                game="chameleon",
                category=card["category"],
                candidates=words,
                secret=secret,
                players=players,
                turns=turns,
            )
        )
    facts = {
        "cards": len(cards),
        "distinct_clues": len({t.text for g in games for t in g.turns}),
        "distinct_clue_sets": len({tuple(t.text for t in g.turns) for g in games}),
        "median_pool_size": float(np.median([len(pools[w]) for c in cards for w in c["words"]])),
        "words_on_category_fallback": sorted(
            w for c in cards for w in c["words"] if pools[w] is pools[c["category"]]
        ),
    }
    return games, facts


def chameleon_game(
    gid: str, candidates: list[str], clues: list[str], *, one_speaker: bool = False
) -> dict[str, Any]:
    """A Chameleon transcript of ``clues`` on ``candidates`` (the secret is the first), said
    by one non-chameleon each, or all by ``p1`` with ``one_speaker``."""
    speakers = ["p1"] * len(clues) if one_speaker else [f"p{i + 1}" for i in range(len(clues))]
    return {
        "format": "leakage.transcript/1",
        "game": "chameleon",
        "id": gid,
        "category": "Things",
        "candidates": candidates,
        "secret": candidates[0],
        "players": [{"id": "p0", "role": "chameleon"}]
        + [{"id": p, "role": "non-chameleon"} for p in dict.fromkeys(speakers)],
        "turns": [{"player": p, "text": c} for p, c in zip(speakers, clues, strict=True)],
    }
