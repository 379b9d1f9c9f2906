"""``POST /v1/splits``: word pairs -> hard / medium / easy splits (as ``leakage splits build``).

A request is bounded as scoring is: its cost (``SplitsCost``: what the embedding model will
read) is checked before any work against ``max_splits_cost``, and for WordNet again once the
descriptions are written; it has the scoring deadline (``score_timeout``), checked between
chunks, after which the work stops; and it holds the embedding backend's lock one chunk of
descriptions at a time (``_PacedEncoder``), so that scoring requests on that backend are
served in between instead of waiting for the whole build.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from fastapi import APIRouter
from numpy.typing import NDArray

from leakage.errors import BackendUnavailable, InvalidInput, UnknownBackend
from leakage_service.deps import State
from leakage_service.errors import ScoreTimeout, ServiceError
from leakage_service.inputs import StrictJsonRoute
from leakage_service.schemas import (
    ScoredPair,
    SplitsRequest,
    SplitsResponse,
    UnknownPair,
    error_responses,
)
from leakage_service.state import ServiceState

if TYPE_CHECKING:
    from leakage.backends import LikelihoodBackend
    from leakage.encoders import CachedEncoder
    from leakage.splits import Describer, PairTable
    from leakage_service.runtime import BackendSlot

router = APIRouter(prefix="/v1", tags=["splits"], route_class=StrictJsonRoute)
_describer_lock = threading.Lock()  # WordNetDescriber opens and closes its files per call


class SuppliedDescriber:
    """Descriptions sent with the request; a word without one is unknown."""

    name = "supplied"
    version = ""

    def __init__(self, descriptions: dict[str, str]) -> None:
        self._exact = descriptions
        self._loose = {" ".join(w.split()).casefold(): d for w, d in descriptions.items()}

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        return {
            w: self._exact.get(w) or self._loose.get(" ".join(w.split()).casefold())
            for w in dict.fromkeys(words)
        }


DESCRIPTION_COST = 64
"""Units of embedding one description besides its bytes: MiniLM takes about 3 ms a text
whatever its length, as long as 64 bytes of prose (``benchmarks.service_splits``)."""
WORDNET_BYTES = 128
"""Bytes a word that WordNet will describe counts before it is described: about their mean
(123 over 3,000 random lemmas, 130 over CK-Arena's words; the longest 373)."""
CHUNK_TEXTS = 64
CHUNK_UNITS = 16_384
"""A chunk of descriptions embedded under one hold of the embedding backend's lock: at most
this many texts and units (one text at least), about half a second of MiniLM on two cores,
which is as long as a scoring request on that backend waits for a splits request."""
HANDOFF_SECONDS = 0.005
"""Pause after each chunk with the lock released: a ``threading.Lock`` is not fair, and the
thread that releases it would usually take it back before a waiting request wakes."""


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class SplitsCost:
    """The work a splits request asks of the embedding model: ``texts x DESCRIPTION_COST +
    text_bytes`` units. Before describing, ``texts`` are the distinct words and their bytes
    those of the descriptions supplied (``WORDNET_BYTES`` each for WordNet's); once described,
    the distinct descriptions to embed and their bytes. Bytes stand for tokens (no model reads
    more tokens than bytes); MiniLM reads at most 256 tokens of a text, so a description much
    longer than a kilobyte is over-counted."""

    pairs: int
    texts: int
    text_bytes: int
    describer: str
    """``supplied``, ``wordnet`` (described) or ``wordnet-estimate`` (not yet)."""

    @property
    def units(self) -> int:
        return self.texts * DESCRIPTION_COST + self.text_bytes

    @property
    def field(self) -> str:
        """The request part that makes the cost: the descriptions where their bytes weigh
        more than the words, else the pairs."""
        if self.describer == "supplied" and self.text_bytes > self.texts * DESCRIPTION_COST:
            return "body.descriptions"
        return "body.pairs"

    def explain(self) -> str:
        """How ``units`` came about, for an error message."""
        head = f"{self.pairs:,} pairs: "
        if self.describer == "wordnet-estimate":
            return (
                f"{head}{self.texts:,} words x ({DESCRIPTION_COST} + {WORDNET_BYTES} bytes of a "
                f"WordNet description, about their mean) = {self.units:,} units"
            )
        if self.describer == "supplied":
            what = f"{self.texts:,} words x {DESCRIPTION_COST} + {self.text_bytes:,} bytes of "
            what += "the descriptions supplied for them"
        else:
            what = f"{self.texts:,} descriptions x {DESCRIPTION_COST} + {self.text_bytes:,} "
            what += f"bytes of their {self.describer} descriptions"
        return f"{head}{what} = {self.units:,} units"

    @classmethod
    def of_request(cls, table: PairTable, supplied: SuppliedDescriber | None) -> SplitsCost:
        """Before any work: the distinct words, with the bytes of their supplied descriptions
        (a word without one costs its ``DESCRIPTION_COST`` all the same), or WordNet's
        estimate."""
        words = list(dict.fromkeys(w for p in table.pairs for w in (p.a, p.b)))
        if supplied is None:
            return cls(len(table.pairs), len(words), len(words) * WORDNET_BYTES, "wordnet-estimate")
        said = supplied.describe(words).values()
        size = sum(_bytes(d.strip()) for d in said if d)
        return cls(len(table.pairs), len(words), size, "supplied")

    @classmethod
    def of_texts(cls, pairs: int, texts: Sequence[str], describer: str) -> SplitsCost:
        """Once described: the descriptions to embed."""
        distinct = list(dict.fromkeys(texts))
        return cls(pairs, len(distinct), sum(_bytes(t) for t in distinct), describer)


class SplitsTooLarge(ServiceError):
    def __init__(self, cost: SplitsCost, limit: int) -> None:
        fix = "fewer pairs"
        if cost.describer == "supplied":
            fix += " or shorter descriptions"
        super().__init__(
            413,
            "splits_too_large",
            f"{cost.explain()}; at most {limit:,} per request (LEAKAGE_MAX_SPLITS_COST): send "
            f"{fix}, or run `leakage splits build`, which has no limit",
            field=cost.field,
        )


class SplitsTimeout(ServiceError):
    def __init__(self, seconds: float, retry_after: int) -> None:
        super().__init__(
            503,
            "timeout",
            f"splitting took longer than this server allows ({seconds:g} s, "
            f"LEAKAGE_SCORE_TIMEOUT); retry in {retry_after} s with fewer pairs, or run "
            "`leakage splits build`, which has no deadline",
            headers={"Retry-After": str(retry_after)},
        )


class _Bound:
    """One request's limits, checked on its worker thread: the cost and the deadline."""

    def __init__(self, limit: int, seconds: float, deadline: float) -> None:
        self.limit = limit
        self.seconds = seconds
        self.deadline = deadline

    def check_cost(self, cost: SplitsCost) -> None:
        if cost.units > self.limit:
            raise SplitsTooLarge(cost, self.limit)

    def left(self) -> float:
        """Seconds to the deadline; ``ScoreTimeout`` once it has passed."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.expired()
        return left

    def expired(self) -> ScoreTimeout:
        return ScoreTimeout(self.seconds, max(1, math.ceil(self.seconds)))


class _PacedDescriber:
    """A describer asked once the deadline is checked, holding ``lock`` (if any) while it
    describes. In one call: WordNet reads its index files on each (about 0.5 s on two
    cores), and the cost limit bounds the words already (the default: 1,302 words at most,
    which WordNet describes in about half a second)."""

    def __init__(self, describer: Describer, bound: _Bound, lock: threading.Lock | None) -> None:
        self.describer = describer
        self.name = describer.name
        self.version = str(getattr(describer, "version", ""))
        self._bound = bound
        self._lock = lock

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        self._bound.left()
        if self._lock is None:
            return self.describer.describe(words)
        with self._lock:
            return self.describer.describe(words)


class _PacedEncoder:
    """The embedding backend's encoder as ``build_splits`` gets it in the service: the
    descriptions' cost is checked first (``SplitsCost.of_texts``), then they are embedded a
    chunk at a time (``CHUNK_TEXTS``, ``CHUNK_UNITS``), each under the backend's lock taken
    with the deadline, which is checked before each chunk."""

    def __init__(
        self, encoder: CachedEncoder, slot: BackendSlot, bound: _Bound, pairs: int, describer: str
    ) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.dimension = encoder.dimension
        self._slot = slot
        self._bound = bound
        self._pairs = pairs
        self._describer = describer

    def info(self) -> dict[str, Any]:
        return self.encoder.info()

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self._bound.check_cost(SplitsCost.of_texts(self._pairs, texts, self._describer))
        # shortest first: texts of one length in a chunk pad little (CK-Arena's WordNet
        # descriptions: 5.5 s sorted, 7.6 s in input order, 7.0-7.5 s in one call)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts = [np.empty((0, self.dimension), dtype=np.float32)]
        for n, chunk in enumerate(_chunks([texts[i] for i in order])):
            if n:
                time.sleep(HANDOFF_SECONDS)  # let a waiting scoring request take the lock
            lock = self._slot.lock
            if not lock.acquire(timeout=self._bound.left()):
                raise self._bound.expired()
            try:
                parts.append(self.encoder.encode(chunk))
            finally:
                lock.release()
        vecs = np.concatenate(parts)
        out = np.empty_like(vecs)
        out[order] = vecs
        return out


def _chunks(texts: Sequence[str]) -> Iterator[list[str]]:
    """``texts`` in order, cut into chunks of at most ``CHUNK_TEXTS`` texts and
    ``CHUNK_UNITS`` units (a longer text alone)."""
    chunk: list[str] = []
    units = 0
    for text in texts:
        size = DESCRIPTION_COST + _bytes(text)
        if chunk and (len(chunk) == CHUNK_TEXTS or units + size > CHUNK_UNITS):
            yield chunk
            chunk, units = [], 0
        chunk.append(text)
        units += size
    if chunk:
        yield chunk


_OPTIONS = {
    "--descriptions FILE": "descriptions",
    "--hard-above": "hard_above",
    "--easy-below": "easy_below",
    "--sample": "sample",
    "--seed": "seed",
}
"""The library's words for ``leakage splits build`` options -> the request's fields."""
_OPTION = re.compile("|".join(re.escape(o) for o in _OPTIONS))


def _http_words(text: str) -> str:
    """A library message or note with the command line's options named as request fields."""
    return _OPTION.sub(lambda m: _OPTIONS[m.group()], text)


def _wordnet(state: ServiceState):  # type: ignore[no-untyped-def]
    if state.describer is None:
        from leakage.splits import CachedDescriber, WordNetDescriber

        state.describer = CachedDescriber(WordNetDescriber(), state.settings.paths.descriptions)
    return state.describer


def _encoder(backend: LikelihoodBackend) -> CachedEncoder:
    """The embedding backend's encoder (a plug-in registered as ``embedding`` that is not
    the library's has none to lend)."""
    from leakage.backends.embedding import EmbeddingBackend

    if not isinstance(backend, EmbeddingBackend):
        raise BackendUnavailable(
            "splits embed descriptions with the library's embedding backend; the one "
            f"registered here is {type(backend).__module__}.{type(backend).__qualname__}"
        )
    return backend.encoder


def _build(state: ServiceState, req: SplitsRequest, deadline: float) -> SplitsResponse:
    from leakage.splits import SPLITS, PairTable, build_splits

    settings = state.settings
    bound = _Bound(settings.max_splits_cost, settings.score_timeout, deadline)
    table = PairTable.from_pairs(
        [(" ".join(a.split()), " ".join(b.split())) for a, b in req.pairs], columns=("a", "b")
    )
    table = PairTable(table.pairs, columns=table.columns, source="request", format="json")
    supplied = SuppliedDescriber(req.descriptions) if req.descriptions else None
    bound.check_cost(SplitsCost.of_request(table, supplied))  # before any work
    try:
        slot = state.backends.get("embedding")
    except UnknownBackend as err:
        raise BackendUnavailable(
            f"splits embed descriptions with the embedding backend: {err}"
        ) from None
    encoder = _encoder(slot.backend)
    if supplied is not None:
        describer = _PacedDescriber(supplied, bound, None)
    else:
        with _describer_lock:
            wordnet = _wordnet(state)
        describer = _PacedDescriber(wordnet, bound, _describer_lock)
    try:
        result = build_splits(
            table,
            describer,
            _PacedEncoder(encoder, slot, bound, len(table.pairs), describer.name),
            method=req.method,
            hard_above=req.hard_above,
            easy_below=req.easy_below,
            sample_size=req.sample,
            seed=req.seed,
        )
    except InvalidInput as err:
        message = _http_words(str(err))
        found = _OPTION.search(str(err))
        field = f"body.{_OPTIONS[found.group()]}" if found else "body"
        raise ServiceError(422, "invalid_input", message, field=field) from None
    result.summary.notes = [_http_words(n) for n in result.summary.notes]
    sims = result.similarities
    return SplitsResponse(
        summary=result.summary,
        splits={
            name: [
                ScoredPair(
                    a=result.known[i].a, b=result.known[i].b, similarity=round(float(sims[i]), 4)
                )
                for i in result.selected[name]
            ]
            for name in SPLITS
        },
        unknown=[UnknownPair(a=p.a, b=p.b, unknown_words=ws) for p, ws in result.unknown],
        descriptions=result.descriptions,
    )


@router.post(
    "/splits",
    summary="Hard / medium / easy splits of word pairs",
    response_model=SplitsResponse,
    responses=error_responses(401, 413, 422, 429, 503),
)
async def splits(req: SplitsRequest, state: State) -> SplitsResponse:
    """Rank pairs by how similar their words' descriptions are (WordNet, or the ones sent)
    and cut them into hard (most similar), medium and easy."""
    with suppress(UnknownBackend):  # _build says that splits need it
        await state.backends.loaded("embedding", state.settings.backend_load_wait)
    timeout = state.settings.score_timeout
    deadline = time.monotonic() + timeout
    try:
        return await state.slow.run(_build, state, req, deadline, timeout=timeout)
    except ScoreTimeout as err:
        retry_after = int((err.headers or {}).get("Retry-After", "1"))
        raise SplitsTimeout(timeout, retry_after) from None
