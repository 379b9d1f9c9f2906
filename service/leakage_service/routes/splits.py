"""``POST /v1/splits``: word pairs -> hard / medium / easy splits (as ``leakage splits build``)."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fastapi import APIRouter

from leakage.errors import BackendUnavailable, InvalidInput, UnknownBackend
from leakage_service.deps import State
from leakage_service.errors import ServiceError
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

router = APIRouter(prefix="/v1", tags=["splits"])
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


def _build(state: ServiceState, req: SplitsRequest) -> SplitsResponse:
    from leakage.splits import SPLITS, PairTable, build_splits

    try:
        slot = state.backends.get("embedding")
    except UnknownBackend as err:
        raise BackendUnavailable(
            f"splits embed descriptions with the embedding backend: {err}"
        ) from None
    table = PairTable.from_pairs(
        [(" ".join(a.split()), " ".join(b.split())) for a, b in req.pairs], columns=("a", "b")
    )
    table = PairTable(table.pairs, columns=table.columns, source="request", format="json")
    with _describer_lock, slot.lock:
        describer = SuppliedDescriber(req.descriptions) if req.descriptions else _wordnet(state)
        try:
            result = build_splits(
                table,
                describer,
                _encoder(slot.backend),
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
    return await state.pool.run(_build, state, req)
