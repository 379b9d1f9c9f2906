"""How much a compressed input may expand to and how long reading one file may take.

A few kilobytes of zip or gzip can declare, or inflate to, gigabytes: a ``.eval`` archive
whose ``header.json`` is a gibibyte of spaces is a 1 MB upload. Every reader of compressed
inputs (``.eval`` archives, ``.gz`` files) reads under a :class:`ReadLimits`: checked from
the sizes an archive's directory declares before any member is read, and enforced again while
reading (a member that inflates past what it declared, a file that takes too long), so that
an input costs at most the limits in memory and time whatever it claims. Past a limit,
reading stops with :class:`leakage.errors.InputTooLarge` naming the file and member.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

from leakage.errors import InputTooLarge

T = TypeVar("T")
MiB = 1 << 20
RATIO_FLOOR = MiB
"""Members smaller than this once expanded are not held to ``max_ratio``: a small JSON
member of repeated keys compresses well and costs nothing to read."""


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """Limits on reading one compressed input file (``leakage score``, ``leakage batch`` and
    the library read under the defaults; the service under its ``LEAKAGE_MAX_LOG_*``
    settings).

    The defaults admit any log the project's Inspect tasks write (a game's sample member is
    tens of kilobytes) with room to spare, and bound a hostile file to seconds of work."""

    max_member_bytes: int = 256 * MiB
    """Most bytes one archive member may expand to (its declared size, and what it
    inflates to); also the most a value the reader keeps (a sample's game) may take."""
    max_expanded_bytes: int = 2048 * MiB
    """Most bytes all members of one archive together (or one ``.gz`` file) may expand to."""
    max_ratio: float = 1000.0
    """Most a member of ``RATIO_FLOOR`` or more may expand per compressed byte (deflate
    reaches about 1,030 at best; a leakage/chameleon log's members, JSON under zstd, 2 to
    6)."""
    max_members: int = 100_000
    """Most entries an archive's directory may list."""
    max_seconds: float | None = None
    """Most seconds reading one Inspect log may take (None: no deadline): time spent reading
    it, not the time its records spend with the caller; checked as each chunk of 64 KiB is
    read, so a file is given up within a chunk of its deadline."""

    def deadline(self, where: str) -> Deadline:
        """A clock for reading the file ``where`` (named in the error)."""
        return Deadline(self.max_seconds, where)


DEFAULT_LIMITS = ReadLimits()


class Deadline:
    """When reading a file must stop: ``ReadLimits.max_seconds`` of time spent reading it.
    The time its records spend with the caller (a job scoring each game before it asks
    for the next) does not count: the reader pauses the clock while a record is out."""

    __slots__ = ("_seconds", "_since", "_spent", "_where")

    def __init__(self, seconds: float | None, where: str) -> None:
        self._seconds = seconds
        self._where = where
        self._spent = 0.0
        self._since: float | None = time.monotonic()

    def pause(self) -> None:
        if self._since is not None:
            self._spent += time.monotonic() - self._since
            self._since = None

    def resume(self) -> None:
        if self._since is None:
            self._since = time.monotonic()

    def check(self, member: str = "") -> None:
        """``InputTooLarge`` once the time spent reading is past the limit."""
        if self._seconds is None:
            return
        running = 0.0 if self._since is None else time.monotonic() - self._since
        if self._spent + running > self._seconds:
            raise InputTooLarge(
                [
                    (
                        member,
                        f"reading {self._where} took longer than {self._seconds:g} s "
                        "(the limit on reading one file: max_seconds); split the log or "
                        "raise the limit",
                    )
                ]
            )

    def timed(self, records: Iterator[T]) -> Iterator[T]:
        """``records``, the clock running only while the next one is read."""
        while True:
            self.resume()
            try:
                item = next(records)
            except StopIteration:
                return
            finally:
                self.pause()
            yield item
