"""Dependencies the routes share (FastAPI ``Annotated`` aliases)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.routing import APIRoute

from leakage_service.errors import ServiceError
from leakage_service.inputs import ScoreParams
from leakage_service.state import ServiceState


def get_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.service
    if not state.ready or state.store is None:
        raise ServiceError(
            503, "not_ready", "the server is starting or stopping", headers={"Retry-After": "1"}
        )
    return state


State = Annotated[ServiceState, Depends(get_state)]
Params = Annotated[ScoreParams, Query()]


def _is_array(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "array":
        return True
    return any(_is_array(s) for s in schema.get("anyOf", ()))


def _single_valued(app: FastAPI, path: str, method: str) -> frozenset[str]:
    """The query parameters the OpenAPI description of an operation gives one value (not an
    array), read once per operation and kept on the app."""
    known: dict[tuple[str, str], frozenset[str]] | None = getattr(
        app.state, "single_valued_query", None
    )
    if known is None:
        known = app.state.single_valued_query = {}
    if (path, method) not in known:
        operation = app.openapi().get("paths", {}).get(path, {}).get(method.lower(), {})
        known[(path, method)] = frozenset(
            p["name"]
            for p in operation.get("parameters", ())
            if p.get("in") == "query" and not _is_array(p.get("schema", {}))
        )
    return known[(path, method)]


def one_value_each(request: Request) -> None:
    """A 422 naming a query parameter given more than once where the operation takes one
    value: FastAPI would keep the last (``?top_k=x&top_k=9`` read as 9), so a client's
    mistake, or a value placed first to pass a filter, would go unseen. Parameters that are
    lists (``distractors``) repeat as before."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not request.url.query:
        return
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key in seen and key in _single_valued(request.app, route.path, request.method):
            raise ServiceError(
                422, "invalid_request", f"{key}: given more than once; give it once", field=key
            )
        seen.add(key)
