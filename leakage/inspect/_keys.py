"""Names shared by the tasks, the scorer and the log reader (no inspect_ai import here)."""

from __future__ import annotations

from leakage.transcripts.adapters.inspect_log import INSTALL_HINT, TRANSCRIPT_KEY

__all__ = ["GAME_ROLES", "INSTALL_HINT", "TRANSCRIPT_KEY", "require_inspect"]

GAME_ROLES = {
    "chameleon": {"chameleon": "chameleon", "non-chameleon": "non_chameleon"},
    "spygame": {"civilian": "civilian", "spy": "spy"},
}
"""Each game's engine roles -> the Inspect model role that plays them (``--model-role``)."""


def require_inspect() -> None:
    """``ModuleNotFoundError`` naming the extra to install when inspect_ai is missing."""
    try:
        import inspect_ai  # noqa: F401
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"leakage's Inspect tasks and scorer need inspect_ai: {INSTALL_HINT}"
        ) from err
