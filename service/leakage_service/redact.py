"""What the service sends about itself carries no server file path: a backend's ``info()``
(in every report's ``backend_info`` and in ``GET /v1/backends``) names the index, the
corpus files and the model folders it was built from, which are the server's business. The
CLI's reports keep them."""

from __future__ import annotations

import re
from typing import Any

_ABSOLUTE_PATH = re.compile(
    r"(?<=')(?:~|[A-Za-z]:)?[/\\][^']*(?=')"  # quoted, spaces and all: '/a b/c'
    r"|(?<![\w.:/~'-])(?:~|[A-Za-z]:)?[/\\][^\s()'\",;]*"
)
"""An absolute (or home-relative) file path inside a string: quoted, or after a start, a
space or a bracket, so URLs (``http://h/p``) and model ids (``org/model``) are left alone."""


def redact_paths(value: Any) -> Any:
    """``value`` (a backend's ``info()``, a message) with every server file path replaced
    by its last part: ``/srv/leakage/corpus/default.sqlite`` -> ``default.sqlite``. The
    names stay (model, index, corpus); where they live on the server does not leave it."""
    if isinstance(value, str):
        return _ABSOLUTE_PATH.sub(_last_part, value) if ("/" in value or "\\" in value) else value
    if isinstance(value, dict):
        return {k: redact_paths(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_paths(v) for v in value]
    return value


def _last_part(m: re.Match[str]) -> str:
    parts = [p for p in re.split(r"[/\\]", m.group()) if p and p not in ("~", ".", "..")]
    parts = [p for p in parts if not re.fullmatch(r"[A-Za-z]:", p)]
    return parts[-1] if parts else m.group()
