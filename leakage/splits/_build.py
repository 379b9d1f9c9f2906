"""``build_splits``: describe both words of every pair, embed, score, partition, sample."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Final, Literal, cast

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from leakage.encoders import Encoder
from leakage.errors import InvalidInput
from leakage.splits._describers import Describer, VersionedDescriber
from leakage.splits._pairs import Pair, PairTable
from leakage.splits._partition import (
    GU_EASY_BELOW,
    GU_HARD_ABOVE,
    METHODS,
    SPLITS,
    sample,
    terciles,
    thresholds,
)

FORMAT: Final = "leakage.splits/1"
Method = Literal["terciles", "thresholds"]


class SimilarityStats(BaseModel):
    """How many pairs, and their similarity range and mean (None when there are none)."""

    count: int
    min: float | None = None
    max: float | None = None
    mean: float | None = None

    @classmethod
    def of(cls, values: NDArray[np.float64]) -> SimilarityStats:
        if values.size == 0:
            return cls(count=0)
        return cls(
            count=int(values.size),
            min=round(float(values.min()), 4),
            max=round(float(values.max()), 4),
            mean=round(float(values.mean()), 4),
        )


class UnknownWords(BaseModel):
    """Pairs left out because the describer does not know one of their words."""

    pairs: int
    words: list[str]
    """Each unknown word once, in input order."""


class Duplicate(BaseModel):
    """A pair occurring more than once (either order, any case); every copy is kept."""

    pair: tuple[str, str]
    lines: list[int]


class SampleInfo(BaseModel):
    """``n`` pairs per split drawn with ``seed``; the split CSVs then hold the sample."""

    n: int
    seed: int


class SplitSummary(BaseModel):
    """``summary.json``: what was split, how, and what came out."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["leakage.splits/1"] = FORMAT
    leakage_version: str
    input: str
    input_format: str
    columns: tuple[str, str]
    """The input's pair columns (the first two columns of every output CSV)."""
    pairs_read: int
    method: Method
    cut_points: dict[str, float | None]
    """``hard_medium`` and ``medium_easy``: hard above the first, easy below the second.
    Terciles: midpoints between neighbouring pairs; thresholds: the values given."""
    counts: dict[str, int]
    """Pairs per split (before sampling), and ``unknown``."""
    similarity: dict[str, SimilarityStats]
    """Per split and ``all`` (before sampling)."""
    sample: SampleInfo | None = None
    model: str
    dimension: int
    describer: str
    describer_version: str
    unknown: UnknownWords
    duplicates: list[Duplicate]
    notes: list[str]


@dataclass
class SplitResult:
    """Everything ``write_splits`` writes."""

    table: PairTable
    known: list[Pair]
    """Pairs both of whose words were described, in input order."""
    similarities: NDArray[np.float64]
    """Cosine similarity of each known pair's two descriptions."""
    splits: dict[str, list[int]]
    """Indices into ``known`` per split, most similar first."""
    selected: dict[str, list[int]]
    """What the split files hold: ``splits``, or the sample of it."""
    unknown: list[tuple[Pair, list[str]]]
    """Pairs with an unknown word, and which of their words were unknown."""
    descriptions: dict[str, str]
    """Description of every known word of the input, in input order."""
    summary: SplitSummary


def _version() -> str:
    try:
        return version("leakage")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def build_splits(
    pairs: PairTable,
    describer: Describer,
    encoder: Encoder,
    *,
    method: str = "terciles",
    hard_above: float = GU_HARD_ABOVE,
    easy_below: float = GU_EASY_BELOW,
    sample_size: int | None = None,
    seed: int = 0,
) -> SplitResult:
    """Describe, embed and score every pair, then partition (and sample) them.

    Pairs with a word the describer does not know are kept aside in ``unknown``; it is an
    ``InvalidInput`` error when no pair at all can be scored.
    """
    if method not in METHODS:
        raise InvalidInput(f"unknown method {method!r}: choose {' or '.join(METHODS)}")
    # Option errors before any describing or embedding.
    if method == "thresholds" and easy_below > hard_above:
        raise InvalidInput(f"easy_below ({easy_below}) must not exceed hard_above ({hard_above})")
    if sample_size is not None and (sample_size < 1 or seed < 0):
        raise InvalidInput(
            f"sample size must be 1 or more and seed 0 or more: {sample_size}, {seed}"
        )
    if not pairs.pairs:
        raise InvalidInput(f"{pairs.source}: no pairs to split")
    words = list(dict.fromkeys(w for p in pairs.pairs for w in (p.a, p.b)))
    said = describer.describe(words)
    desc = {w: d.strip() for w in words if isinstance(d := said.get(w), str) and d.strip()}

    known: list[Pair] = []
    unknown: list[tuple[Pair, list[str]]] = []
    for p in pairs.pairs:
        missing = [w for w in (p.a, p.b) if w not in desc]
        if missing:
            unknown.append((p, missing))
        else:
            known.append(p)
    unknown_words = list(dict.fromkeys(w for _, ws in unknown for w in ws))
    if not known:
        shown = ", ".join(unknown_words[:10]) + (" ..." if len(unknown_words) > 10 else "")
        raise InvalidInput(
            f"{pairs.source}: none of the {len(pairs.pairs)} pairs could be scored: the "
            f"{describer.name} describer knows no description for {shown}; supply "
            "descriptions with --descriptions FILE"
        )

    sims = _similarities(known, desc, encoder)
    texts = [(p.a, p.b) for p in known]
    if method == "terciles":
        splits, cuts = terciles(sims, texts)
    else:
        splits, cuts = thresholds(sims, texts, hard_above=hard_above, easy_below=easy_below)
    selected = sample(splits, sample_size, seed) if sample_size is not None else splits

    notes = list(pairs.notes)
    if method == "thresholds":
        if (hard_above, easy_below) == (GU_HARD_ABOVE, GU_EASY_BELOW) and "bge-m3" not in (
            encoder.name.lower()
        ):
            notes.append(
                f"thresholds {GU_HARD_ABOVE} / {GU_EASY_BELOW} are Gu et al.'s cut points for "
                f"BGE-M3 embeddings of LLM-written descriptions; {encoder.name} similarities "
                "lie on another scale, so these cut points do not transfer: prefer terciles "
                "or calibrate --hard-above / --easy-below"
            )
        notes.extend(f"the {s} split is empty" for s in SPLITS if not splits[s])

    summary = SplitSummary(
        leakage_version=_version(),
        input=pairs.source,
        input_format=pairs.format,
        columns=pairs.columns,
        pairs_read=len(pairs.pairs),
        method=cast(Method, method),
        cut_points={k: None if v is None else round(v, 4) for k, v in cuts.items()},
        counts={**{s: len(splits[s]) for s in SPLITS}, "unknown": len(unknown)},
        similarity={
            **{s: SimilarityStats.of(sims[splits[s]]) for s in SPLITS},
            "all": SimilarityStats.of(sims),
        },
        sample=None if sample_size is None else SampleInfo(n=sample_size, seed=seed),
        model=encoder.name,
        dimension=encoder.dimension,
        describer=describer.name,
        describer_version=(
            str(describer.version) if isinstance(describer, VersionedDescriber) else ""
        ),
        unknown=UnknownWords(pairs=len(unknown), words=unknown_words),
        duplicates=[Duplicate(pair=pair, lines=lines) for pair, lines in pairs.duplicates()],
        notes=notes,
    )
    return SplitResult(
        table=pairs,
        known=known,
        similarities=sims,
        splits=splits,
        selected=selected,
        unknown=unknown,
        descriptions=desc,
        summary=summary,
    )


def _similarities(known: list[Pair], desc: dict[str, str], encoder: Encoder) -> NDArray[np.float64]:
    """Cosine similarity of each pair's two descriptions (each distinct text embedded once)."""
    texts = list(dict.fromkeys(desc[w] for p in known for w in (p.a, p.b)))
    vecs = np.asarray(encoder.encode_batch(texts), dtype=np.float64)
    if vecs.shape != (len(texts), encoder.dimension):
        raise ValueError(f"encoder {encoder.name} returned shape {vecs.shape} for {len(texts)}")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    row = {t: i for i, t in enumerate(texts)}
    a = vecs[[row[desc[p.a]] for p in known]]
    b = vecs[[row[desc[p.b]] for p in known]]
    return np.clip(np.einsum("ij,ij->i", a, b), -1.0, 1.0)
