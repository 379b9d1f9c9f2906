"""Uploaded Inspect AI logs: told apart from JSON and JSONL by their first bytes, checked at
submission, and read into games for the explorer.

A ``.eval`` log is a zip archive and a JSON log (``inspect eval --log-format json``) one
object, so neither is read like the other uploads (UTF-8 JSON records): the server saves it
as a ``.eval`` file and reads it with ``inspect_ai.log`` (the ``inspect`` extra). A log whose
samples carry no game (the log of another task) is refused at submission with a 422 naming
the sample and the field that is missing, rather than becoming a job whose every record
fails. Everything here blocks: call it on a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from leakage.errors import InvalidInput, InvalidTranscript
from leakage.transcripts import AnyTranscript, ReadLimits, iter_file, to_transcript
from leakage.transcripts.adapters.inspect_log import (
    HEAD_BYTES,
    ZIP_MAGIC,
    InspectAdapter,
    eval_records,
    log_format,
)

__all__ = ["HEAD_BYTES", "ZIP_MAGIC", "LogGames", "check_log", "log_format", "read_games"]


def _unplaced(err: InvalidTranscript, path: Path, field: str) -> InvalidTranscript:
    """``err`` (of its class: ``InputTooLarge`` stays one, a 413) without the server's path
    of the upload (Inspect's messages may hold it), a problem of the whole file placed on
    the request part ``field``."""
    where = str(path)
    problems = [(f or field, m.replace(where, "the upload")) for f, m in err.problems]
    return type(err)(problems, record=err.record)


def check_log(path: Path, *, field: str = "body", limits: ReadLimits | None = None) -> None:
    """``InvalidTranscript`` (a 422) unless the Inspect log at ``path`` is readable and one of
    its samples carries a game; the error of its first sample otherwise, naming the sample
    (``record``) and the missing field. Stops at the first sample that carries one. A file
    that is not a readable log is an error of ``field``, the request part that carried it
    (``body``, or a multipart ``file``). Read under ``limits`` (the server's ``max_log_*``
    settings): an archive whose directory declares more is refused before any member is
    read, with ``InputTooLarge`` (a 413) naming the member."""
    adapter = InspectAdapter()
    first: InvalidTranscript | None = None
    try:
        for label, record in eval_records(path, limits or ReadLimits()):
            if isinstance(record, InvalidTranscript):  # a sample that cannot be read
                first = first or InvalidTranscript(record.problems, record=label)
                continue
            try:
                adapter.convert(record, path=None, index=0)
            except InvalidTranscript as err:
                first = first or InvalidTranscript(err.problems, record=label)
                continue
            return
    except InvalidTranscript as err:
        raise _unplaced(err, path, field) from None
    if first is None:  # eval_records raises for a log without samples
        raise InvalidTranscript([("samples", "the log has no samples")])
    raise _unplaced(first, path, field)


@dataclass
class LogGames:
    """The games of an uploaded file, as far as a page shows them."""

    games: list[AnyTranscript] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    """``{"record": label, "message": ...}`` per record that is not a game."""
    left_out: int = 0
    """Games past ``limit``, not read."""


def read_games(
    path: Path,
    *,
    input_format: str,
    limit: int,
    name: str | None = None,
    limits: ReadLimits | None = None,
) -> LogGames:
    """The games of the saved upload ``path`` (an Inspect log in either format, or JSON /
    JSONL records of ``input_format``), at most ``limit``. ``name``: the file's name where
    the client had it (a bare name, no folder): the adapters see it as the file the records
    came from, as they see a file the command line reads (CK-Arena's and Liang's game ids
    end with it), and errors name it; the server's path of the upload is in neither. A
    compressed file is read under ``limits`` (the server's ``max_log_*`` settings)."""
    out = LogGames()
    shown = name or f"upload{path.suffix}"
    prefix = f"{path}: "
    for raw in iter_file(path, limits=limits or ReadLimits()):
        item = to_transcript(replace(raw, source=shown), input_format)
        if isinstance(item, InvalidInput):
            message = str(item).replace(prefix, "").replace(str(path), shown)
            message = message.removeprefix(f"{shown}: ")
            out.errors.append({"record": raw.label, "message": message})
        elif len(out.games) < limit:
            out.games.append(item)
        else:
            out.left_out += 1
    return out
