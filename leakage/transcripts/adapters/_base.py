"""The adapter protocol and registry: third-party log formats in, ``Transcript`` out.

Another distribution adds a format with an entry point in the group ``leakage.adapters``
naming an adapter class (built once, as the package's own are).
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


ADAPTERS: Registry[Adapter] = Registry(
    "leakage.adapters",
    load=_build,
    builtin={
        "ck-arena": "leakage.transcripts.adapters.ck_arena:CKArenaAdapter",
        "spygame-liang": "leakage.transcripts.adapters.spygame_liang:SpyGameLiangAdapter",
        "inspect": "leakage.transcripts.adapters.inspect_log:InspectAdapter",
        "textarena-taboo": "leakage.transcripts.adapters.textarena_taboo:TabooAdapter",
        "clembench-guesswhat": "leakage.transcripts.adapters.clembench:GuessWhatAdapter",
        "clembench-taboo": "leakage.transcripts.adapters.clembench:TabooAdapter",
    },
)
"""The adapters by ``--input-format`` name: the package's own (each class imported and built
when first asked for) and those of installed distributions (entry-point group
``leakage.adapters``, each naming an adapter class)."""


def register_adapter(factory: Callable[[], Adapter]) -> Callable[[], Adapter]:
    """Class decorator: instantiate the adapter and register it under its ``name`` (at run
    time: a test, a notebook; a distribution declares an entry point instead)."""
    adapter = factory()
    ADAPTERS.register(adapter.name, adapter)
    return factory
