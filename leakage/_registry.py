"""``Registry``: names to plug-ins, filled by the package and by installed distributions.

Every extension point of the package is one ``Registry`` (likelihood backends, count sources,
encoders, transcript adapters, ...). The package declares its own plug-ins the way another
distribution does, as ``name -> "module:attribute"`` (``builtin``): the module is imported
when that name is first looked up, so listing the names (a command line's choices) imports
none of them. Another distribution adds its own without touching leakage, by an entry point
in the group the registry reads::

    [project.entry-points."leakage.backends"]
    mybackend = "mypackage.backend:make_backend"

Entry points are loaded on the first look-up of a name the package does not have, or when
the names are listed (never at ``import leakage``). A name the package has wins over an entry
point of the same name; an entry point that cannot be loaded is skipped with a warning, and
``failed`` keeps why. ``register`` adds an item at run time (a test, a notebook).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger("leakage")


def load_target(target: str) -> Any:
    """The object ``"package.module:attribute"`` names (``attribute`` may be dotted, as in an
    entry point's value: ``"pkg.mod:Class.method"``); a bare module path names the module."""
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module.strip())
    for part in attr.strip().split(".") if attr.strip() else ():
        obj = getattr(obj, part)
    return obj


class Registry(MutableMapping[str, T]):
    """Name -> item (a factory, an adapter), read like a dict."""

    def __init__(
        self,
        group: str,
        *,
        load: Callable[[Any], T] | None = None,
        builtin: Mapping[str, str] | None = None,
    ) -> None:
        """``group``: the entry-point group read for plug-ins of other distributions;
        ``load`` turns the object an entry point (or a ``builtin`` target) names into an
        item (default: the object itself); ``builtin``: the package's own, name ->
        ``"module:attribute"``, imported on first look-up."""
        self.group = group
        self._load = load
        self._items: dict[str, T] = {}
        self._declared: dict[str, str] = dict(builtin or {})
        self._loaded = False
        self.failed: dict[str, str] = {}
        """Entry points of the group that could not be loaded: name -> why."""

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` (replacing one there)."""
        self._items[name] = item
        return item

    def declare(self, name: str, target: str) -> None:
        """Add ``"module:attribute"`` under ``name``, imported when ``name`` is looked up."""
        self._items.pop(name, None)
        self._declared[name] = target

    def names(self) -> list[str]:
        """Every name, sorted (entry points included); imports none of the package's own."""
        return sorted(self)

    def pick(self, name: str, what: str) -> T:
        """The item ``name``, or a ``LeakageError`` a user can read: ``UnknownBackend``
        listing the names there are, ``BackendUnavailable`` saying why an installed plug-in
        of that name cannot be loaded. ``what`` names the kind (``"count source"``)."""
        from leakage.errors import BackendUnavailable, UnknownBackend

        try:
            return self[name]
        except KeyError:
            if name in self.failed:
                raise BackendUnavailable(
                    f"{what} {name!r} cannot be loaded: {self.failed[name]}"
                ) from None
            raise UnknownBackend(
                f"unknown {what} {name!r}; available: {', '.join(self.names())}"
            ) from None

    def create(self, name: str, /, **options: Any) -> Any:
        """Call the factory registered as ``name`` with ``options``; ``KeyError`` if none."""
        factory = self[name]
        if not callable(factory):
            raise TypeError(f"{self.group}: {name!r} is not a factory")
        return factory(**options)

    def _item(self, obj: Any) -> T:
        return self._load(obj) if self._load is not None else obj  # type: ignore[no-any-return]

    def _entry_points(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        import importlib.metadata  # here: it costs a tenth of a second to import

        for ep in importlib.metadata.entry_points(group=self.group):
            if ep.name in self._items or ep.name in self._declared:
                continue
            try:
                self._items[ep.name] = self._item(ep.load())
            except Exception as err:  # a broken plug-in must not break the others
                self.failed[ep.name] = f"entry point {ep.value!r} ({self.group}): {err}"
                log.warning("skipped %s: %s", ep.name, self.failed[ep.name])

    # -- the mapping -------------------------------------------------------------------

    def __getitem__(self, name: str) -> T:
        if name in self._items:
            return self._items[name]
        if name in self._declared:
            item = self._item(load_target(self._declared[name]))
            # the module may have registered the name while it was imported; this wins
            self._items[name] = item
            return item
        self._entry_points()
        return self._items[name]

    def __setitem__(self, name: str, item: T) -> None:
        self._items[name] = item

    def __delitem__(self, name: str) -> None:
        if name not in self._items and name not in self._declared:
            raise KeyError(name)
        self._items.pop(name, None)
        self._declared.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        self._entry_points()
        return iter(list(dict.fromkeys([*self._declared, *self._items])))

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __contains__(self, name: object) -> bool:
        if name in self._items or name in self._declared:
            return True
        self._entry_points()
        return name in self._items

    def reload(self) -> None:
        """Read the entry points again on the next look-up (after installing a plug-in)."""
        self._loaded = False
