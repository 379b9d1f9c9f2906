"""The reader's strength: how often a backend names the secret on a reference set.

A leakage figure is a lower bound set by the reader that computes it: a weaker reader reports
less leakage than a stronger player would draw from the same clues. So every figure should say
which reader made it and how strong that reader is. This module measures the strength on a
reference set shipped with the project, keeps the measured figures of the shipped backends
(``leakage/data/reader_strength.json``, written by ``python -m benchmarks.reader_strength``)
and writes the sentence reports show (:func:`lower_bound_note`).

The reference set ``attribute-cards``: 8-word cards whose clues are an answerer's yes/no
answers to a guesser's questions (clembench ``guesswhat``, read by the ``clembench-guesswhat``
adapter: "Is the target word a type of beverage? Yes."); top-1 is whether the posterior after
all answers puts the target first (ties count against it; chance 1/8). The games are the
episodes of the frozen clembench instances of the project's dev sample
(``instance_side``), which no fit of the project was chosen on. Episodes from
*clembench-runs* by the clembench authors (clp-research), github clembench/clembench-runs,
licensed CC BY 4.0 (``leakage/data/README.md``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from leakage.backends.base import LikelihoodBackend
    from leakage.transcripts import ChameleonTranscript

REFERENCE_SETS = {"attribute-cards": "reference_attribute_cards.json"}
"""Reference sets by name: the file in ``leakage/data``."""
STRENGTH_FILE = "reader_strength.json"
COMMAND = "python -m benchmarks.reader_strength"
"""The command that measures the shipped backends and writes ``STRENGTH_FILE``."""
DESCRIPTION = {"attribute-cards": "8-word cards with yes/no answers as clues"}


class ReaderStrength(BaseModel):
    """A reader's measured strength on one reference set."""

    model_config = ConfigDict(extra="forbid")

    reader: str
    """The backend's name (``ensemble``, ``answers``, ...)."""
    reference: str
    """The reference set's name (``REFERENCE_SETS``)."""
    games: int
    top1: float
    """Share of games whose posterior after all clues puts the secret first (ties against)."""
    top1_ci: list[float]
    """Wilson 95% interval of ``top1``."""
    chance: float
    """1 / the number of candidates (the mean over games)."""
    measured: str | None = None
    """When and where (the date, the machine's precision)."""


def reference_games(name: str = "attribute-cards") -> list[ChameleonTranscript]:
    """The games of a shipped reference set."""
    from leakage.transcripts import ChameleonTranscript

    if name not in REFERENCE_SETS:
        from leakage.errors import InvalidInput

        raise InvalidInput(f"no reference set {name!r}; there is {', '.join(REFERENCE_SETS)}")
    text = (files("leakage") / "data" / REFERENCE_SETS[name]).read_text(encoding="utf-8")
    return [ChameleonTranscript.model_validate(r) for r in json.loads(text)]


def _wilson(hits: int, n: int, z: float = 1.96) -> list[float]:
    if n == 0:
        return [float("nan"), float("nan")]
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return [round(centre - half, 3), round(centre + half, 3)]


def measure_strength(
    backend: LikelihoodBackend,
    games: Sequence[ChameleonTranscript] | None = None,
    *,
    reference: str = "attribute-cards",
) -> ReaderStrength:
    """``backend``'s top-1 of the secret after all counted clues on the reference set (or on
    ``games``), scored as ``leakage score`` scores them (the non-chameleons' turns)."""
    from leakage.scoring import score_transcript

    chosen = list(games) if games is not None else reference_games(reference)
    scored = [g for g in chosen if g.secret is not None]
    hits = 0
    for g in scored:
        report = score_transcript(g, backend)
        hits += int(report.summary.final_secret_rank == 1)
    n = len(scored)
    chance = sum(1 / len(g.candidates) for g in scored) / n if n else float("nan")
    return ReaderStrength(
        reader=backend.name,
        reference=reference,
        games=n,
        top1=round(hits / n, 3) if n else float("nan"),
        top1_ci=_wilson(hits, n),
        chance=round(chance, 3),
    )


def shipped_strengths() -> dict[str, ReaderStrength]:
    """The measured strengths of the shipped backends (empty when the file is absent)."""
    try:
        text = (files("leakage") / "data" / STRENGTH_FILE).read_text(encoding="utf-8")
    except OSError:
        return {}
    doc: dict[str, Any] = json.loads(text)
    return {k: ReaderStrength.model_validate(v) for k, v in doc["readers"].items()}


def lower_bound_note(reader: str | None) -> str:
    """The sentence a report shows beside its leakage figures: leakage is a lower bound set
    by ``reader``, and that reader's measured strength when the project measured it."""
    if not reader:
        return "Leakage is a lower bound set by the reader (the backend) that computed it."
    found = shipped_strengths().get(reader)
    head = f"Leakage is a lower bound set by the reader that computed it, {reader}"
    if found is None:
        return f"{head}; its strength was not measured on the project's reference set ({COMMAND})."
    lo, hi = found.top1_ci
    return (
        f"{head}, which names the secret on {DESCRIPTION.get(found.reference, found.reference)} "
        f"{found.top1:.0%} of the time ({found.games} games, 95% interval {lo:.0%}-{hi:.0%}, "
        f"chance {found.chance:.1%}; reference set {found.reference}, {COMMAND}). A stronger "
        "reader would find more."
    )
