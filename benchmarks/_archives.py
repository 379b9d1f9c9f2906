"""Inspect ``.eval`` logs built by hand, good and hostile, for the tests, the bad-input
corpus, the fuzzer and ``benchmarks.service_limits`` (issue 37): the shape Inspect writes
(``header.json``, one ``samples/<id>_epoch_<n>.json`` member per sample keeping its game in
``store.leakage_transcript``), made in memory in milliseconds, without running an eval.

The hostile ones: a member whose directory entry declares more than it holds
(:func:`patch_member`), a bomb that really expands (:func:`eval_log` with ``pad``: a
``header.json`` or a sample's ``messages`` of N spaces, streamed through the compressor, so
that a gibibyte costs a second and a megabyte of memory), a member that inflates past what it
declares, and one whose CRC-32 is wrong.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Sequence
from typing import Any

CENTRAL = b"PK\x01\x02"
LOCAL = b"PK\x03\x04"
TASK = "leakage/chameleon"


def header_json(task: str = TASK, sample_ids: Sequence[Any] = (), epochs: int = 1) -> bytes:
    """A ``header.json`` with the keys a reader needs (Inspect's own has many more)."""
    doc = {
        "version": 2,
        "status": "success",
        "eval": {
            "created": "2026-11-27T00:00:00+00:00",
            "task": task,
            "dataset": {"samples": len(sample_ids), "sample_ids": list(sample_ids)},
            "config": {"epochs": epochs},
            "model": "mockllm/model",
        },
    }
    return json.dumps(doc).encode()


def sample_json(sample_id: Any, epoch: int, game: dict[str, Any] | None) -> bytes:
    """A sample member: its game in its store (no game: the sample of another task)."""
    store = {"leakage_transcript": game} if game is not None else {}
    doc = {
        "id": sample_id,
        "epoch": epoch,
        "input": "Play.",
        "target": "",
        "messages": [{"role": "user", "content": "Play."}],
        "metadata": {},
        "store": store,
        "events": [],
    }
    return json.dumps(doc).encode()


def _write_padded(
    zf: zipfile.ZipFile, name: str, doc: bytes, pad: int, where: bytes, *, keep: bool
) -> None:
    """``doc`` with ``pad`` spaces before ``where`` (text in it, kept or, for a marker, not),
    streamed into the archive."""
    before, after = doc.split(where, 1)
    after = where + after if keep else after
    with zf.open(name, "w", force_zip64=pad > 1 << 30) as fh:
        fh.write(before)
        block = b" " * (1 << 20)
        left = pad
        while left > 0:
            fh.write(block[: min(left, len(block))])
            left -= len(block)
        fh.write(after)


def eval_log(
    games: Sequence[dict[str, Any] | None],
    *,
    task: str = TASK,
    compression: int = zipfile.ZIP_DEFLATED,
    header_pad: int = 0,
    messages_pad: dict[int, int] | None = None,
) -> bytes:
    """A ``.eval`` log (zip bytes) with one sample per game (ids 1, 2, ..., epoch 1).
    ``header_pad``: spaces inside ``header.json`` (a bomb of that size); ``messages_pad``:
    ``{sample index: spaces}`` in that sample's ``messages`` string."""
    ids = list(range(1, len(games) + 1))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        header = header_json(task, ids)
        if header_pad:
            _write_padded(zf, "header.json", header, header_pad, b'"model"', keep=True)
        else:
            zf.writestr("header.json", header)
        for i, (sid, game) in enumerate(zip(ids, games, strict=True)):
            name = f"samples/{sid}_epoch_1.json"
            doc = sample_json(sid, 1, game)
            pad = (messages_pad or {}).get(i, 0)
            if pad:
                doc = doc.replace(b'"messages": [{"role": "user", "content": "Play."}]',
                                  b'"messages": "@@pad@@"')  # fmt: skip
                _write_padded(zf, name, doc, pad, b"@@pad@@", keep=False)
            else:
                zf.writestr(name, doc)
    return buf.getvalue()


def _entries(data: bytes) -> dict[str, tuple[int, int]]:
    """Each member's (central directory offset, local header offset)."""
    out = {}
    at = data.find(CENTRAL)
    while at >= 0:
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, at + 28)
        local = struct.unpack_from("<I", data, at + 42)[0]
        name = data[at + 46 : at + 46 + name_len].decode()
        out[name] = (at, local)
        at = data.find(CENTRAL, at + 46 + name_len + extra_len + comment_len)
    return out


def patch_member(
    data: bytes, name: str, *, file_size: int | None = None, crc: int | None = None
) -> bytes:
    """``data`` (a zip without zip64 entries) with what the directory entry and the local
    header of member ``name`` declare changed: its decompressed size, its CRC-32."""
    out = bytearray(data)
    central, local = _entries(data)[name]
    if file_size is not None:
        struct.pack_into("<I", out, central + 24, file_size)
        struct.pack_into("<I", out, local + 22, file_size)
    if crc is not None:
        struct.pack_into("<I", out, central + 16, crc)
        struct.pack_into("<I", out, local + 14, crc)
    return bytes(out)


def crc_of(data: bytes, name: str) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.getinfo(name).CRC


def size_of(data: bytes, name: str) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.getinfo(name).file_size


def declared_bomb(
    games: Sequence[dict[str, Any] | None], member: str, size: int = 1 << 30
) -> bytes:
    """A log whose ``member`` declares ``size`` bytes (a gibibyte) but holds its own few:
    what a reader that trusts the directory would allocate for. Refused before reading."""
    return patch_member(eval_log(games), member, file_size=size)


def lying_member(games: Sequence[dict[str, Any] | None], index: int, pad: int) -> bytes:
    """A log whose sample ``index`` inflates to ``pad`` bytes more than its directory entry
    declares (the size it declares is that of the sample without its padding)."""
    name = f"samples/{index + 1}_epoch_1.json"
    honest = eval_log(games)
    padded = eval_log(games, messages_pad={index: pad})
    return patch_member(padded, name, file_size=size_of(honest, name))


def bad_crc(games: Sequence[dict[str, Any] | None], index: int) -> bytes:
    """A log whose sample ``index`` fails its CRC-32 (the directory's, one bit off)."""
    name = f"samples/{index + 1}_epoch_1.json"
    data = eval_log(games)
    return patch_member(data, name, crc=crc_of(data, name) ^ 1)


def with_member(data: bytes, name: str, content: bytes) -> bytes:
    """``data`` with member ``name`` holding ``content`` (an honest entry: sizes, CRC)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[name] = content
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    return buf.getvalue()


def member(data: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.read(name)
