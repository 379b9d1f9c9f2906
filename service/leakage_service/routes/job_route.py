"""What the jobs' routes share: their router and its route class (a 405 that names every
method the path accepts), the job id parameter and the lookup of a job (404 when there is
none)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from leakage_service.errors import ServiceError
from leakage_service.jobs import Job
from leakage_service.state import ServiceState

JobId = Annotated[
    str,
    PathParam(pattern=r"^[0-9a-f]{32}$", description="The id POST /v1/jobs returned."),
]


def job_or_404(state: ServiceState, job_id: str) -> Job:
    """The job, or a 404 ``job_not_found``."""
    assert state.store is not None
    job = state.store.get(job_id)
    if job is None:
        raise ServiceError(404, "job_not_found", f"no job {job_id!r} on this server", field="id")
    return job


class JobRoute(APIRoute):
    """A route whose 405 names every method its path accepts. Starlette answers a 405 from
    the first route whose path matches, which knows its own methods only (a PUT on
    ``/v1/jobs/{id}`` would say ``Allow: GET`` though DELETE is served too)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.methods and scope["method"] not in self.methods:
            methods: set[str] = set()
            for route in router.routes:
                if isinstance(route, APIRoute) and route.matches(scope)[0] is not Match.NONE:
                    methods |= route.methods or set()
            allowed = sorted(methods)
            raise HTTPException(
                405,
                f"{scope['method']} is not allowed on {self.path}; it accepts {', '.join(allowed)}",
                headers={"Allow": ", ".join(allowed)},
            )
        await super().handle(scope, receive, send)


router = APIRouter(prefix="/v1/jobs", tags=["jobs"], route_class=JobRoute)
"""The jobs' routes: submission, status and results (``routes.jobs``), then the explorer's
views of a job (``routes.job_views``, registered after them)."""
