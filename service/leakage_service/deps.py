"""Dependencies the routes share (FastAPI ``Annotated`` aliases)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

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
