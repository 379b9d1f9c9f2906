"""``Registry``: names to plug-ins, filled by the package and by installed distributions.

The package registers its own (likelihood backends, transcript adapters) as it imports them.
Another distribution adds its own without touching leakage, by an entry point in the group
the registry reads (``leakage.backends``, ``leakage.adapters``)::

    [project.entry-points."leakage.backends"]
    mybackend = "mypackage.backend:make_backend"

Entry points are loaded on the first look-up (never at ``import leakage`` unless a module asks
for the names then). A name the package registers itself wins over an entry point of the same
name; an entry point that cannot be loaded is skipped with a warning, and ``failed`` keeps why.
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger("leakage")


class Registry(MutableMapping[str, T]):
    """Name -> item (a factory, an adapter), read like a dict."""

    def __init__(self, group: str, *, load: Callable[[Any], T] | None = None) -> None:
        """``group``: the entry-point group read on first look-up; ``load`` turns the object
        an entry point names into an item (default: the object itself)."""
        self.group = group
        self._load = load
        self._items: dict[str, T] = {}
        self._loaded = False
        self.failed: dict[str, str] = {}
        """Entry points of the group that could not be loaded: name -> why."""

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` (replacing one there)."""
        self._items[name] = item
        return item

    def names(self) -> list[str]:
        """Every name, sorted (entry points included)."""
        return sorted(self)

    def create(self, name: str, /, **options: Any) -> Any:
        """Call the factory registered as ``name`` with ``options``; ``KeyError`` if none."""
        factory = self[name]
        if not callable(factory):
            raise TypeError(f"{self.group}: {name!r} is not a factory")
        return factory(**options)

    def _entry_points(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for ep in importlib.metadata.entry_points(group=self.group):
            if ep.name in self._items:
                continue
            try:
                obj = ep.load()
                self._items[ep.name] = self._load(obj) if self._load is not None else obj
            except Exception as err:  # a broken plug-in must not break the others
                self.failed[ep.name] = f"entry point {ep.value!r} ({self.group}): {err}"
                log.warning("skipped %s: %s", ep.name, self.failed[ep.name])

    # -- the mapping -------------------------------------------------------------------

    def __getitem__(self, name: str) -> T:
        if name not in self._items:
            self._entry_points()
        return self._items[name]

    def __setitem__(self, name: str, item: T) -> None:
        self._items[name] = item

    def __delitem__(self, name: str) -> None:
        del self._items[name]

    def __iter__(self) -> Iterator[str]:
        self._entry_points()
        return iter(list(self._items))

    def __len__(self) -> int:
        self._entry_points()
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        if name not in self._items:
            self._entry_points()
        return name in self._items

    def reload(self) -> None:
        """Read the entry points again on the next look-up (after installing a plug-in)."""
        self._loaded = False
