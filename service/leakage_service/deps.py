"""Dependencies the routes share (FastAPI ``Annotated`` aliases)."""

from __future__ import annotations

import re
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


_CONVERTER = re.compile(r"{(\w+):\w+}")


class _Query:
    """The query parameters of one operation in its OpenAPI description: all of them, and
    those that take one value (not an array); ``described`` is False for a route left out
    of the description (the explorer's page, which keeps its own state in the query)."""

    def __init__(self, operation: dict[str, Any] | None) -> None:
        params = [p for p in (operation or {}).get("parameters", ()) if p.get("in") == "query"]
        self.described = operation is not None
        self.names = frozenset(p["name"] for p in params)
        self.single = frozenset(p["name"] for p in params if not _is_array(p.get("schema", {})))


def _query(app: FastAPI, path: str, method: str) -> _Query:
    """The operation's ``_Query``, read once per operation and kept on the app."""
    known: dict[tuple[str, str], _Query] | None = getattr(app.state, "query_params", None)
    if known is None:
        known = app.state.query_params = {}
    if (path, method) not in known:
        described = _CONVERTER.sub(r"{\1}", path)  # the schema's {game_id}, not {game_id:path}
        operation = app.openapi().get("paths", {}).get(described, {}).get(method.lower())
        known[(path, method)] = _Query(operation)
    return known[(path, method)]


def _single_valued(app: FastAPI, path: str, method: str) -> frozenset[str]:
    """The query parameters the OpenAPI description of an operation gives one value."""
    return _query(app, path, method).single


def one_value_each(request: Request) -> None:
    """A 422 naming a query parameter the operation does not take (FastAPI would ignore it,
    so ``?limt=5`` or ``?backnd=judge`` would be answered as if it were not there), or one
    given more than once where the operation takes one value: FastAPI would keep the last
    (``?top_k=x&top_k=9`` read as 9), so a client's mistake, or a value placed first to pass
    a filter, would go unseen. Parameters that are lists (``distractors``) repeat as before.
    Only ``/v1`` routes are this strict: the probes and ``/metrics`` ignore a query (a
    scraper may add one), and the explorer's page keeps its own state there."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not request.url.query:
        return
    query = _query(request.app, route.path, request.method)
    for key, _ in request.query_params.multi_items():
        if query.described and key not in query.names and route.path.startswith("/v1/"):
            takes = ", ".join(sorted(query.names)) or "none"
            raise ServiceError(
                422, "invalid_request",
                f"{key}: unknown query parameter (this route takes: {takes}); a misspelt "
                "option would otherwise be ignored", field=key,
            )  # fmt: skip
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key in seen and key in _single_valued(request.app, route.path, request.method):
            raise ServiceError(
                422, "invalid_request", f"{key}: given more than once; give it once", field=key
            )
        seen.add(key)
