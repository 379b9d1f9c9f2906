"""Sanity probes on the third-party Chameleon cards: one clue, one card, one expected word.

The list was written before any probe was scored and has not been edited since to improve
the figures: each clue is the first association a person would give for the expected word,
the card is one on which that word appears. Some probes are deliberately ambiguous on their
card (``racket`` with Tennis, Squash and Badminton; ``bat`` with Baseball and Cricket;
``wheel`` with every vehicle): that is what real clues look like, and the expected word is the
one most people would name.

A card is named by a prefix of its ``source`` and its ``category`` (both as in ``cards.json``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from benchmarks._stats import wilson_ci
from leakage import ChameleonTranscript, ScoreOptions, score_transcript
from leakage.calibration import expected_calibration_error, log_loss
from leakage.transcripts import Player, Turn


class Probe(NamedTuple):
    clue: str
    source: str
    """Prefix of the card's ``source`` field."""
    category: str
    expected: str


_SAJJAD = "sajjad2881/chameleon"
_KARABAG = "mustafakarabag/LLMChameleon"
_POTLAPALLI = "sai-ram-potlapalli/chameleon_game"

PROBES: tuple[Probe, ...] = (
    # Sports
    Probe("racket", _KARABAG, "Sports", "Tennis"),
    Probe("puck", _KARABAG, "Sports", "Ice Hockey"),
    Probe("shuttlecock", _KARABAG, "Sports", "Badminton"),
    Probe("swim", _POTLAPALLI, "Sports", "Swimming"),
    Probe("arrow", _POTLAPALLI, "Sports", "Archery"),
    Probe("bat", _SAJJAD, "Sports", "Baseball"),
    Probe("gloves", _SAJJAD, "Sports", "Boxing"),
    Probe("wave", _SAJJAD, "Sports", "Surfing"),
    # Transportation / vehicles
    Probe("saddle", _SAJJAD, "Transportation", "Horse"),
    Probe("rails", _SAJJAD, "Transportation", "Train"),
    Probe("wings", _SAJJAD, "Transportation", "Airplane"),
    Probe("wheel", _SAJJAD, "Vehicles", "Car"),
    Probe("pedal", _SAJJAD, "Vehicles", "Bicycle"),
    Probe("underwater", _SAJJAD, "Vehicles", "Submarine"),
    # Animals
    Probe("mane", _SAJJAD, "Animals", "Lion"),
    Probe("trunk", _SAJJAD, "Animals", "Elephant"),
    Probe("pouch", _SAJJAD, "Animals", "Kangaroo"),
    Probe("bamboo", _SAJJAD, "Animals", "Panda"),
    Probe("tentacle", _SAJJAD, "Animals", "Octopus"),
    Probe("stripes", _SAJJAD, "Animals", "Tiger"),
    # Fruits
    Probe("yellow", _SAJJAD, "Fruits", "Banana"),
    Probe("sour", _SAJJAD, "Fruits", "Lemon"),
    Probe("cider", _SAJJAD, "Fruits", "Apple"),
    Probe("prune", _SAJJAD, "Fruits", "Plum"),
    # Instruments
    Probe("bow", _SAJJAD, "Instruments", "Violin"),
    Probe("keys", _SAJJAD, "Instruments", "Piano"),
    Probe("slide", _SAJJAD, "Instruments", "Trombone"),
    Probe("squeeze", _SAJJAD, "Instruments", "Accordion"),
    # Jobs
    Probe("hospital", _SAJJAD, "Jobs", "Doctor"),
    Probe("fire", _SAJJAD, "Jobs", "Firefighter"),
    Probe("court", _SAJJAD, "Jobs", "Lawyer"),
    Probe("teeth", _SAJJAD, "Jobs", "Dentist"),
    Probe("cockpit", _SAJJAD, "Jobs", "Pilot"),
    # Tools
    Probe("nail", _SAJJAD, "Tools", "Hammer"),
    Probe("screw", _SAJJAD, "Tools", "Screwdriver"),
    Probe("dig", _SAJJAD, "Tools", "Shovel"),
    Probe("leaves", _SAJJAD, "Tools", "Rake"),
    # Weather, flowers, furniture
    Probe("umbrella", _SAJJAD, "Weather", "Rainy"),
    Probe("twister", _SAJJAD, "Weather", "Tornado"),
    Probe("thorn", _SAJJAD, "Flowers", "Rose"),
    Probe("pillow", _SAJJAD, "Furniture", "Bed"),
    # Places
    Probe("Eiffel", _SAJJAD, "Cities", "Paris"),
    Probe("pyramid", _SAJJAD, "Countries", "Egypt"),
    Probe("pasta", _SAJJAD, "Countries", "Italy"),
    # Drinks, vegetables, creatures, games
    Probe("caffeine", _SAJJAD, "Drinks", "Coffee"),
    Probe("bubbles", _SAJJAD, "Drinks", "Champagne"),
    Probe("tears", _SAJJAD, "Vegetables", "Onion"),
    Probe("Halloween", _SAJJAD, "Vegetables", "Pumpkin"),
    Probe("fangs", _SAJJAD, "MythicalCreatures", "Vampire"),
    Probe("horn", _SAJJAD, "MythicalCreatures", "Unicorn"),
    Probe("checkmate", _SAJJAD, "BoardGames", "Chess"),
    Probe("hotel", _SAJJAD, "BoardGames", "Monopoly"),
)


def find_card(cards: list[dict[str, Any]], probe: Probe) -> dict[str, Any]:
    for card in cards:
        if (
            str(card["source"]).startswith(probe.source)
            and card["category"] == probe.category
            and probe.expected in card["words"]
        ):
            return card
    raise LookupError(f"no {probe.source} card {probe.category!r} holds {probe.expected!r}")


def probe_transcript(i: int, probe: Probe, card: dict[str, Any]) -> ChameleonTranscript:
    """Probe ``i`` on its card as a one-clue Chameleon game (a silent chameleon)."""
    return ChameleonTranscript(
        id=f"probe-{i}",
        game="chameleon",
        category=card["category"],
        candidates=list(card["words"]),
        secret=probe.expected,
        players=[Player(id="a", role="non-chameleon"), Player(id="c", role="chameleon")],
        turns=[Turn(player="a", text=probe.clue)],
    )


def evaluate_probes(
    cards: list[dict[str, Any]], backend: Any, probes: tuple[Probe, ...] = PROBES
) -> dict[str, Any]:
    """Score each probe as a one-clue Chameleon game; top-3 words and the expected word's rank.

    The rank is ``Step.secret_rank`` (ties count against the expected word, so a flat
    posterior ranks it last, not first).
    """
    rows = []
    posteriors: list[list[float]] = []
    truths: list[int] = []
    for i, p in enumerate(probes):
        card = find_card(cards, p)
        t = probe_transcript(i, p, card)
        step = score_transcript(t, backend, ScoreOptions()).steps[0]
        posteriors.append([step.posterior[w] for w in card["words"]])
        truths.append(list(card["words"]).index(p.expected))
        ranked = sorted(step.posterior.items(), key=lambda kv: -kv[1])
        flat = max(step.posterior.values()) - min(step.posterior.values()) < 1e-12
        rows.append(
            {
                "clue": p.clue,
                "card": f"{p.source}: {p.category}",
                "expected": p.expected,
                "rank": step.secret_rank,
                "expected_probability": round(step.secret_probability or 0.0, 3),
                "top3": [[w, round(q, 3)] for w, q in ranked[:3]],
                "flat": flat,
            }
        )
    ranks = np.array([r["rank"] for r in rows])
    width = max(len(p) for p in posteriors)
    probs = np.array([p + [0.0] * (width - len(p)) for p in posteriors])
    truth = np.array(truths)
    return {
        "probes": len(rows),
        "cards": len({r["card"] for r in rows}),
        "top1": round(float(np.mean(ranks <= 1)), 3),
        "top1_ci95_wilson": wilson_ci(float(np.sum(ranks <= 1)), len(rows)),
        "top3": round(float(np.mean(ranks <= 3)), 3),
        "top3_ci95_wilson": wilson_ci(float(np.sum(ranks <= 3)), len(rows)),
        "mean_reciprocal_rank": round(float(np.mean(1.0 / ranks)), 3),
        "flat_posteriors": sum(r["flat"] for r in rows),
        "log_loss": round(log_loss(probs, truth), 4),
        "ece": round(expected_calibration_error(probs, truth), 3),
        "rows": rows,
    }
