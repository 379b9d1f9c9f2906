"""The adapter protocol and registry: third-party log formats in, ``Transcript`` out.

Another distribution adds a format with an entry point in the group ``leakage.adapters``
naming an adapter class (built once, as ``register_adapter`` builds the package's own).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from leakage._registry import Registry
from leakage.transcripts._models import ChameleonTranscript, SpyGameTranscript


class Adapter(Protocol):
    """Reads one record of a third-party log format into a transcript."""

    name: str
    """The ``--input-format`` name."""

    def sniff(self, record: Any) -> bool:
        """True when ``record`` (parsed JSON) looks like this format."""
        ...

    def convert(
        self, record: Any, *, path: Path | None, index: int
    ) -> ChameleonTranscript | SpyGameTranscript:
        """Convert one record; raise ``InvalidTranscript`` naming the field when it cannot."""
        ...


def _build(factory: Callable[[], Adapter]) -> Adapter:
    return factory()


ADAPTERS: Registry[Adapter] = Registry("leakage.adapters", load=_build)


def register_adapter(factory: Callable[[], Adapter]) -> Callable[[], Adapter]:
    """Class decorator: instantiate the adapter and register it under its ``name``."""
    adapter = factory()
    ADAPTERS.register(adapter.name, adapter)
    return factory
