"""Reading a few fields of a large JSON document from a stream, skipping the rest unheld.

An Inspect log's sample keeps its game in a few kilobytes (``store.leakage_transcript``)
beside megabytes of ``messages`` and ``events``. A JSON parser builds every value it meets,
even one its caller then drops: ``ijson``'s C backend, which Inspect reads logs with, holds a
skipped string whole and takes time quadratic in its length (64 MB: 19 s). :class:`Scanner`
walks the document's structure instead, chunk by chunk: a value the caller asks for is kept
(its text, up to a limit, then parsed by ``json``), any other is skipped with regular
expressions and byte counts, holding one chunk at a time, in time linear in its length. A
skipped value is checked only for what skipping needs: strings closed, brackets balanced
(not matched by kind: ``[}`` passes there); a kept value is read by ``json`` in full.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_WS = re.compile(rb"[ \t\r\n]*+")
_STRING_BODY = re.compile(rb'(?:[^"\\]++|\\.)*+', re.DOTALL)
"""The inside of a string up to its closing quote (or to a lone backslash or the end of the
buffer, where the next chunk continues it)."""
_FLAT = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
"""A run of bytes that are not brackets, complete strings included (the inside of a
container between its brackets)."""
_ANY = re.compile(rb'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
"""Everything up to a string that does not end in the buffer."""
_ESCAPES = re.compile(rb"\\.", re.DOTALL)
_STRINGS = re.compile(rb'"[^"]*+"')
_BRACKET = re.compile(rb"[\[\]{}]")
_SCALAR = re.compile(rb"[^ \t\r\n,:\[\]{}\"]*+")
"""A number, ``true``, ``false`` or ``null`` (checked by ``json`` when kept)."""
_QUOTE = ord('"')
_OPEN = frozenset(b"[{")


class ScanError(ValueError):
    """The document is not JSON where the scanner looked (``offset``: bytes from its start)."""

    def __init__(self, message: str, offset: int) -> None:
        self.offset = offset
        super().__init__(f"{message} at byte {offset:,}")


class Scanner:
    """A pull reader over ``chunks`` (the document's bytes in order).

    ``fields()`` walks an object (yielding its keys) and ``items()`` an array; after each key
    or item the caller reads the value with ``keep()``, walks into it with ``fields()`` or
    ``items()``, or leaves it, and it is skipped. ``kind()`` says what the next value is.
    ``finish()`` reads what follows the document (whitespace only) to the end of the stream.
    """

    def __init__(self, chunks: Iterator[bytes], *, max_keep: int) -> None:
        self._chunks = chunks
        self._buf = b""
        self._pos = 0
        self._base = 0  # bytes of the stream before _buf
        self._eof = False
        self._max_keep = max_keep
        self._keep: list[bytes] | None = None
        self._mark = 0  # where in _buf the value being kept continues
        self._kept = 0
        self._values = 0  # values consumed so far (to tell whether a caller read one)

    # -- the buffer ---------------------------------------------------------------------

    def _offset(self) -> int:
        return self._base + self._pos

    def _error(self, message: str) -> ScanError:
        return ScanError(message, self._offset())

    def _more(self) -> bool:
        """The next chunk appended to what is left of the buffer; False at the stream's end.
        Consumed bytes are dropped, or moved to the value being kept."""
        if self._eof:
            return False
        chunk = next(self._chunks, None)
        if chunk is None:
            self._eof = True
            return False
        if self._keep is not None:
            self._hold(self._buf[self._mark : self._pos])
            self._mark = 0
        self._base += self._pos
        self._buf = self._buf[self._pos :] + chunk
        self._pos = 0
        return True

    def _hold(self, piece: bytes) -> None:
        assert self._keep is not None
        self._kept += len(piece)
        if self._kept > self._max_keep:
            raise KeptTooLarge(self._max_keep)
        self._keep.append(piece)

    def _peek(self) -> int | None:
        """The next byte that is not whitespace (None at the end), not consumed."""
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._more():
                return None

    def _expect(self, byte: bytes, what: str) -> None:
        if self._peek() != byte[0]:
            raise self._error(f"expected {what}")
        self._pos += 1

    # -- skipping -----------------------------------------------------------------------

    def _skip_string(self) -> None:
        self._pos += 1  # the opening quote
        while True:
            self._pos = _STRING_BODY.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf) and self._buf[self._pos] == _QUOTE:
                self._pos += 1
                return
            # the end of the buffer, or a backslash whose escaped byte is in the next chunk
            if not self._more():
                raise self._error("unterminated string")

    def _skip_scalar(self) -> None:
        start = self._offset()
        while True:
            self._pos = _SCALAR.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf) or not self._more():
                break
        if self._offset() == start:
            raise self._error("expected a value")

    def _skip_container(self) -> None:
        """Past the bracket that closes the one at the current position, in C code a buffer
        at a time: the buffer's complete strings and escapes cut out (two regular
        expressions), its brackets summed (numpy) to the depth after it. Only the buffer in
        which the container closes is walked run by run (``_walk``) to find where."""
        self._pos += 1
        depth = 1
        while True:
            buf, pos = self._buf, self._pos
            end = _ANY.match(buf, pos).end()  # type: ignore[union-attr]
            after = _depth_after(buf[pos:end], depth)
            if after <= 0:
                self._walk(depth)
                return
            depth, self._pos = after, end
            if end < len(buf):  # a string the next chunk continues
                self._skip_string()
            elif not self._more():
                raise self._error("unterminated array or object")

    def _walk(self, depth: int) -> None:
        """Past the bracket that brings ``depth`` to 0, which the buffer holds: runs of
        strings and other bytes skipped by one regular expression, quote-free runs of
        brackets counted, the closing one found by a running sum."""
        while True:
            self._pos = _FLAT.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            buf, pos = self._buf, self._pos
            if pos < len(buf) and buf[pos] == _QUOTE:  # cannot happen: the buffer closes
                raise self._error("unterminated string")
            quote = buf.find(b'"', pos)
            end = len(buf) if quote < 0 else quote
            closed, depth = _close(buf, pos, end, depth)
            if closed >= 0:
                self._pos = closed
                return
            if quote < 0:
                raise self._error("unterminated array or object")
            self._pos = end

    def _skip_value(self) -> None:
        c = self._peek()
        if c is None:
            raise self._error("expected a value, found the end")
        if c == _QUOTE:
            self._skip_string()
        elif c in _OPEN:
            self._skip_container()
        else:
            self._skip_scalar()
        self._values += 1

    def skip(self) -> None:
        """Skip the next value."""
        self._skip_value()

    # -- reading ------------------------------------------------------------------------

    def kind(self) -> str | None:
        """``object``, ``array``, ``string`` or ``scalar``: what the next value is."""
        c = self._peek()
        if c is None:
            return None
        return {0x7B: "object", 0x5B: "array", _QUOTE: "string"}.get(c, "scalar")

    def keep_text(self) -> str:
        """The next value's JSON text (at most ``max_keep`` bytes; ``KeptTooLarge`` past
        it), not parsed."""
        if self._peek() is None:
            raise self._error("expected a value, found the end")
        self._keep, self._mark, self._kept = [], self._pos, 0
        try:
            self._skip_value()
            self._hold(self._buf[self._mark : self._pos])
            data = b"".join(self._keep)
        finally:
            self._keep = None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ScanError("not UTF-8 text", self._offset() - len(data) + err.start) from None

    def keep(self) -> Any:
        """The next value, parsed by ``json``."""
        try:
            return json.loads(self.keep_text())
        except json.JSONDecodeError as err:
            raise self._error(f"malformed JSON ({err.msg})") from None
        except ValueError as err:  # an integer of more than 4,300 digits
            raise self._error(f"not a value JSON readers agree on ({err})") from None
        except RecursionError:
            raise self._error("JSON nested too deeply to read") from None

    def fields(self) -> Iterator[str]:
        """The keys of the object that comes next; after each, its value is to be read (or
        is skipped)."""
        self._expect(b"{", "an object")
        self._values += 1
        if self._peek() == 0x7D:
            self._pos += 1
            return
        while True:
            if self._peek() != _QUOTE:
                raise self._error("expected a key")
            key = self._key()
            self._expect(b":", "':' after a key")
            before = self._values
            yield key
            if self._values == before:
                self._skip_value()
            c = self._peek()
            self._pos += 1
            if c == 0x7D:
                return
            if c != 0x2C:
                self._pos -= 1
                raise self._error("expected ',' or '}'")

    def items(self) -> Iterator[int]:
        """The positions of the items of the array that comes next (from 0); each item is
        to be read after it is yielded (or is skipped)."""
        self._expect(b"[", "an array")
        self._values += 1
        if self._peek() == 0x5D:
            self._pos += 1
            return
        i = 0
        while True:
            before = self._values
            yield i
            if self._values == before:
                self._skip_value()
            i += 1
            c = self._peek()
            self._pos += 1
            if c == 0x5D:
                return
            if c != 0x2C:
                self._pos -= 1
                raise self._error("expected ',' or ']'")

    def _key(self) -> str:
        max_keep, self._max_keep = self._max_keep, min(self._max_keep, KEY_BYTES)
        try:
            key = json.loads(self.keep_text())
        except KeptTooLarge:
            raise self._error(f"a key longer than {KEY_BYTES:,} bytes") from None
        except json.JSONDecodeError as err:
            raise self._error(f"malformed key ({err.msg})") from None
        finally:
            self._max_keep = max_keep
        self._values -= 1  # a key is not a value
        return str(key)

    def finish(self) -> None:
        """Read to the end of the stream: only whitespace may follow the document."""
        if self._peek() is not None:
            raise self._error("more after the end of the JSON document")


def _depth_after(region: bytes, depth: int) -> int:
    """The bracket depth after ``region`` (which holds only complete strings) entered at
    ``depth``; 0 or less when the region closes the container somewhere in it."""
    import numpy as np

    if not _BRACKET.search(region):  # e.g. a run of strings
        return depth
    flat = _STRINGS.sub(b"", _ESCAPES.sub(b"", region)) if b'"' in region else region
    opens = flat.count(b"[") + flat.count(b"{")
    closes = flat.count(b"]") + flat.count(b"}")
    if closes < depth:  # cannot close here: no need to know where
        return depth + opens - closes
    run = np.frombuffer(flat, np.uint8)
    step = (run == 0x5B).astype(np.int32) + (run == 0x7B) - (run == 0x5D) - (run == 0x7D)
    level = np.cumsum(step, dtype=np.int64)
    return 0 if int(level.min()) <= -depth else depth + int(level[-1])


def _close(buf: bytes, pos: int, end: int, depth: int) -> tuple[int, int]:
    """Where in ``buf[pos:end]`` (no quote in it) the bracket that brings ``depth`` to 0 ends
    (-1: none does), and the depth after the run."""
    import numpy as np

    run = np.frombuffer(buf, np.uint8, end - pos, pos)
    step = (run == 0x5B).astype(np.int32) + (run == 0x7B) - (run == 0x5D) - (run == 0x7D)
    level = np.cumsum(step, dtype=np.int64) + depth
    hit = np.flatnonzero(level == 0)  # steps of one: the first 0 is the closing bracket
    if hit.size:
        return pos + int(hit[0]) + 1, 0
    return -1, int(level[-1])


KEY_BYTES = 64 * 1024
"""Longest key the scanner reads (an Inspect key is a word)."""


class KeptTooLarge(Exception):
    """A kept value is longer than the scanner's ``max_keep``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"a value longer than {limit:,} bytes")
