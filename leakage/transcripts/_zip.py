"""Zip archives (Inspect's ``.eval`` logs) read under :class:`ReadLimits`.

The directory is read with ``zipfile``; before any member is read, every entry's declared
sizes are checked (``max_members``, ``max_member_bytes``, ``max_expanded_bytes`` over all
entries, ``max_ratio``). A member is then read here rather than by ``zipfile``, whose zstd
support (the ``zipfile-zstd`` patch Inspect installs; Inspect writes zstd) inflates each 4 KiB
read whole, however far it expands: deflate through ``zlib`` with a cap on each call's
output, zstd through ``zstandard``'s stream reader, both in chunks of 64 KiB, counted as they
come. A member that inflates past its declared size, ends short of it or fails its CRC-32 is
an error naming it, as is one read past the file's deadline.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from leakage.errors import InputTooLarge, InvalidTranscript
from leakage.transcripts._limits import RATIO_FLOOR, Deadline, ReadLimits

CHUNK = 1 << 16
_LOCAL = struct.Struct("<4s22xHH")
"""A local file header: its signature, then (after 22 bytes) the lengths of the name and the
extra field that come between it and the member's data."""
_STORED, _DEFLATED, _ZSTD = 0, 8, 93
_METHODS = {_STORED: "stored", _DEFLATED: "deflate", _ZSTD: "zstd"}


def _too_large(member: str, message: str) -> InputTooLarge:
    """The error of a member past a limit; its field is the member (``header.json``)."""
    return InputTooLarge([(member, message)])


def _damaged(member: str, message: str) -> InvalidTranscript:
    return InvalidTranscript([(member, f"{message} (a damaged or forged archive)")])


class Archive:
    """A zip archive whose directory passed the limits; :meth:`chunks` reads a member."""

    def __init__(self, path: Path, limits: ReadLimits, deadline: Deadline) -> None:
        self._fh: IO[bytes] = path.open("rb")
        try:
            self._zip = zipfile.ZipFile(self._fh)
        except BaseException:
            self._fh.close()
            raise
        self.limits = limits
        self.deadline = deadline
        try:
            self._check_directory()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._zip.close()
        self._fh.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def names(self) -> list[str]:
        """The members' names, each once, in the directory's order."""
        return list(dict.fromkeys(self._zip.namelist()))

    def _check_directory(self) -> None:
        lim = self.limits
        entries = self._zip.infolist()
        if len(entries) > lim.max_members:
            raise InputTooLarge(
                [("", f"the archive lists {len(entries):,} members; at most "
                  f"{lim.max_members:,} (max_members)")]
            )  # fmt: skip
        total = 0
        for info in entries:
            name, size = info.filename, info.file_size
            if size > lim.max_member_bytes:
                raise _too_large(
                    name, f"declares {size:,} bytes once decompressed; at most "
                    f"{lim.max_member_bytes:,} a member (max_member_bytes)",
                )  # fmt: skip
            ratio = size / max(info.compress_size, 1)
            if size >= RATIO_FLOOR and ratio > lim.max_ratio:
                raise _too_large(
                    name, f"declares {size:,} bytes from {info.compress_size:,} compressed "
                    f"(a ratio of {ratio:,.0f}); at most {lim.max_ratio:,g} (max_ratio)",
                )  # fmt: skip
            total += size
            if total > lim.max_expanded_bytes:
                raise _too_large(
                    name, f"brings the archive to {total:,} bytes once decompressed; at most "
                    f"{lim.max_expanded_bytes:,} (max_expanded_bytes)",
                )  # fmt: skip

    def chunks(self, name: str) -> Iterator[bytes]:
        """The member ``name`` decompressed, in chunks; its size and CRC-32 checked once
        the last chunk is read. ``KeyError`` when there is no such member."""
        info = self._zip.getinfo(name)
        if info.flag_bits & 0x1:
            raise InvalidTranscript([(name, "encrypted; Inspect writes no encrypted log")])
        method = _METHODS.get(info.compress_type)
        if method is None:
            raise InvalidTranscript(
                [(name, f"compression method {info.compress_type}, which Inspect does "
                  "not write (it writes zstd or deflate)")]
            )  # fmt: skip
        raw = _Span(self._fh, self._data_start(info), info.compress_size)
        if info.compress_type == _STORED:
            pieces: Iterator[bytes] = iter(lambda: raw.read(CHUNK), b"")
        elif info.compress_type == _DEFLATED:
            pieces = _inflate(raw)
        else:
            pieces = _unzstd(raw)
        crc, size = 0, 0
        for piece in _named(pieces, name):
            size += len(piece)
            if size > info.file_size:
                raise _damaged(
                    name, f"decompresses past the {info.file_size:,} bytes its directory entry "
                    "declares",
                )  # fmt: skip
            self.deadline.check(name)
            crc = zlib.crc32(piece, crc)
            yield piece
        if size != info.file_size:
            raise _damaged(
                name, f"decompresses to {size:,} bytes; its directory entry declares "
                f"{info.file_size:,}",
            )  # fmt: skip
        if crc != info.CRC:
            raise _damaged(
                name, f"bad CRC-32: {crc:08x}, its directory entry declares {info.CRC:08x}"
            )

    def _data_start(self, info: zipfile.ZipInfo) -> int:
        self._fh.seek(info.header_offset)
        head = self._fh.read(_LOCAL.size)
        if len(head) < _LOCAL.size:
            raise _damaged(info.filename, "its local header is cut short")
        magic, name_len, extra_len = _LOCAL.unpack(head)
        if magic != b"PK\x03\x04":
            raise _damaged(info.filename, "no local header where its directory entry points")
        return info.header_offset + _LOCAL.size + name_len + extra_len


class _Span:
    """``length`` bytes of ``fh`` from ``start``, read in order (a member's compressed data)."""

    def __init__(self, fh: IO[bytes], start: int, length: int) -> None:
        self._fh, self._at, self._left = fh, start, length

    @property
    def exhausted(self) -> bool:
        return self._left <= 0

    def read(self, n: int = -1) -> bytes:
        n = self._left if n < 0 else min(n, self._left)
        if n <= 0:
            return b""
        self._fh.seek(self._at)
        data = self._fh.read(n)
        self._at += len(data)
        self._left = 0 if not data else self._left - len(data)
        return data


def _inflate(raw: _Span) -> Iterator[bytes]:
    """Raw deflate, at most ``CHUNK`` bytes of output a call."""
    d = zlib.decompressobj(-15)
    pending = b""
    while not d.eof:
        if not pending:
            pending = raw.read(CHUNK)
        out = d.decompress(pending, CHUNK)
        pending = d.unconsumed_tail
        if out:
            yield out
        elif not pending and raw.exhausted:
            break  # no input left and nothing more came out: the stream is cut short


def _unzstd(raw: _Span) -> Iterator[bytes]:
    """zstd frames one after another (Inspect starts a new one every 200 MiB), read through
    ``zstandard``'s stream reader, which fills at most the buffer it is asked to."""
    try:
        import zstandard
    except ModuleNotFoundError:
        raise InvalidTranscript(
            [("", "a zstd-compressed .eval log needs zstandard: pip install 'leakage[inspect]'")]
        ) from None
    reader = zstandard.ZstdDecompressor().stream_reader(
        raw,  # type: ignore[arg-type]  # it calls read(), all a source needs
        read_size=CHUNK,
        read_across_frames=True,
        closefd=False,
    )
    while chunk := reader.read(CHUNK):
        yield chunk


def _named(pieces: Iterator[bytes], name: str) -> Iterator[bytes]:
    """``pieces``, a decompressor's error turned into one naming the member."""
    try:
        yield from pieces
    except InvalidTranscript as err:
        raise InvalidTranscript([(name, m) for _, m in err.problems]) from None
    except (zlib.error, EOFError, OSError) as err:  # zstandard.ZstdError is an Exception
        raise _damaged(name, f"its compressed data cannot be read ({err})") from None
    except Exception as err:
        if type(err).__module__.split(".")[0] != "zstandard":
            raise
        raise _damaged(name, f"its compressed data cannot be read ({err})") from None
