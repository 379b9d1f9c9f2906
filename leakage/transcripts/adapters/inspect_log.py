"""Inspect AI eval logs of the ``leakage/chameleon`` and ``leakage/spygame`` tasks: one
record per sample, the game its store keeps under ``leakage_transcript``.

Both of Inspect's log formats are read, told apart by content (:func:`log_format`), not by
the file's name: ``.eval`` (a zip archive: ``header.json``, or ``_journal/start.json`` for a
log still running, then a member ``samples/<id>_epoch_<n>.json`` per sample) and ``.json``
(``inspect eval --log-format json``: one object whose ``samples`` array holds them). Each
sample becomes one record, labelled ``sample <id> (epoch <n>)``, holding the task, the
sample's id and epoch and what the sample keeps under ``leakage_transcript`` (its store,
else its metadata: a dataset of logged games), in the order Inspect reads them (epoch, then
id). The adapter validates that ``leakage.transcript/1`` record; a sample without one (the
log of another task) is an error naming the file, the sample and the field that is missing,
and so is a sample that cannot be read (the others are still read).

The logs are read here rather than by ``inspect_ai.log``: a sample's game is a few kilobytes
beside megabytes of messages and events, and Inspect's reader parses those it is told to
exclude anyway (``ijson``: time quadratic in a long string's length, the string held whole),
reads a ``.eval`` member whole whatever size it declares, and reads a JSON log whole once per
sample. Here an archive's declared sizes are checked before any member is read, each member
is inflated in chunks against its declared size and CRC-32 (``_zip``), and only the fields a
record needs are kept, the rest skipped unheld (``_scan``), all under a
:class:`~leakage.transcripts.ReadLimits` (``_limits``): an input past them is an
``InputTooLarge`` naming the member.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from leakage.errors import InputTooLarge, InvalidTranscript
from leakage.transcripts._json import json_problems, loads
from leakage.transcripts._limits import DEFAULT_LIMITS, Deadline, ReadLimits
from leakage.transcripts._models import ChameleonTranscript, SpyGameTranscript
from leakage.transcripts._native import parse_transcript
from leakage.transcripts._scan import KeptTooLarge, ScanError, Scanner
from leakage.transcripts._zip import CHUNK, Archive

TRANSCRIPT_KEY = "leakage_transcript"
"""Where a sample keeps its game (store, else metadata)."""
INSTALL_HINT = "pip install 'leakage[inspect]'"
_MARK = "inspect_sample"
ZIP_MAGIC = b"PK\x03\x04"
"""How a ``.eval`` log (a zip archive) begins."""
HEAD_BYTES = 4096
"""Bytes :func:`log_format` needs."""
_JSON_LOG = re.compile(
    rb'\A(\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*\d+\s*,'
    rb'\s*"status"\s*:\s*"\w*"\s*,\s*"eval"\s*:\s*\{'
)
"""How Inspect begins a JSON log: its first keys, in the order it writes them."""
HEADER_JSON = "header.json"
START_JSON = "_journal/start.json"
"""The header of a ``.eval`` log still being written (Inspect reads it when there is no
``header.json``)."""
_SAMPLE_MEMBER = re.compile(r"samples/(?P<id>.+)_epoch_(?P<epoch>\d{1,9})\.json")
_NOT_A_LOG = "not a readable Inspect eval log"


def log_format(head: bytes) -> Literal["eval", "json"] | None:
    """Which Inspect log ``head`` (the first :data:`HEAD_BYTES` of a file) begins: ``eval``
    (a zip archive), ``json`` (an object whose first keys are ``version``, ``status`` and
    ``eval``, as Inspect writes them), or None."""
    if head.startswith(ZIP_MAGIC):
        return "eval"
    return "json" if _JSON_LOG.match(head) else None


def eval_records(
    path: Path, limits: ReadLimits = DEFAULT_LIMITS
) -> Iterator[tuple[str, dict[str, Any] | InvalidTranscript]]:
    """``(label, record)`` per sample of the eval log ``path`` (either format), read under
    ``limits``; a sample that cannot be read comes as ``(label, InvalidTranscript)`` and
    the next is read. ``InvalidTranscript`` (no record) when the file cannot be read as a
    log, ``InputTooLarge`` when it is past ``limits`` (from its declared sizes before
    anything is read, else where reading finds it)."""
    with path.open("rb") as fh:
        fmt = log_format(fh.read(HEAD_BYTES))
    if fmt is None:
        raise InvalidTranscript(
            [
                (
                    "",
                    "not an Inspect eval log: neither a .eval archive (a zip) nor a JSON log "
                    "(an object that begins with Inspect's version, status and eval keys)",
                )
            ]
        )
    deadline = limits.deadline(path.name)
    read = _archive_records if fmt == "eval" else _json_log_records
    yield from deadline.timed(read(path, limits, deadline))


def _archive_records(
    path: Path, limits: ReadLimits, deadline: Deadline
) -> Iterator[tuple[str, dict[str, Any] | InvalidTranscript]]:
    try:
        archive = Archive(path, limits, deadline)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as err:
        raise InvalidTranscript([("", f"{_NOT_A_LOG}: {err}")]) from None
    with archive:
        names = archive.names()
        header = next((n for n in (HEADER_JSON, START_JSON) if n in names), None)
        if header is None:
            raise InvalidTranscript(
                [("", f"{_NOT_A_LOG}: the archive has neither {HEADER_JSON} nor {START_JSON}")]
            )
        scanner = Scanner(archive.chunks(header), max_keep=limits.max_member_bytes)
        task, status = _header(scanner, header)
        members = sorted(
            (_order(m["id"], int(m["epoch"])), m.string)
            for name in names
            if (m := _SAMPLE_MEMBER.fullmatch(name))
        )
        for n, (_, name) in enumerate(members, start=1):
            scanner = Scanner(archive.chunks(name), max_keep=limits.max_member_bytes)
            yield _record(scanner, task, n, name, limits, whole=True)
    if not members:
        raise InvalidTranscript(
            [("samples", f"the log of task {task!r} has no samples (status {status})")]
        )


def _order(sample_id: str, epoch: int) -> tuple[int, str]:
    """Inspect's order of samples (``sort_samples``): epoch, then id, a number's zero-filled."""
    return epoch, sample_id.zfill(20) if sample_id.isdigit() else sample_id


def _header(scanner: Scanner, member: str) -> tuple[Any, Any]:
    """The task's name and the log's status, from ``header.json`` (or ``start.json``)."""
    head: dict[str, Any] = {"task": None, "status": "started"}
    try:
        for key in scanner.fields():
            _head_field(scanner, key, head)
        scanner.finish()
    except ScanError as err:
        raise InvalidTranscript([("", f"{_NOT_A_LOG}: {member}: {err}")]) from None
    except KeptTooLarge as err:
        raise InputTooLarge([(member, f"a field of {err} (max_member_bytes)")]) from None
    if not isinstance(head["task"], str):
        raise InvalidTranscript([("", f"{_NOT_A_LOG}: {member}: eval.task is not a string")])
    return head["task"], head["status"]


def _head_field(scanner: Scanner, key: str, head: dict[str, Any]) -> bool:
    """Keep the log's ``status`` and ``eval.task`` in ``head`` when ``key`` (the field the
    scanner is at) is one of theirs; False for any other field (left to the caller)."""
    if key == "status":
        head["status"] = scanner.keep()
    elif key == "eval" and scanner.kind() == "object":
        for field in scanner.fields():
            if field == "task":
                head["task"] = scanner.keep()
    else:
        return False
    return True


def _record(
    scanner: Scanner, task: str, n: int, member: str, limits: ReadLimits, *, whole: bool
) -> tuple[str, dict[str, Any] | InvalidTranscript]:
    """The ``n``th sample (read by ``scanner``) as a record, or the error that says why it
    cannot be read. ``whole``: the sample is the whole document (an archive member)."""
    label = f"sample {n}"
    where = f"{member}: " if whole else ""
    try:
        sample = _sample(scanner)
        if whole:
            scanner.finish()
    except KeptTooLarge as err:
        raise InputTooLarge(
            [(member, f"sample {n}: {TRANSCRIPT_KEY} is {err} (max_member_bytes)")]
        ) from None
    except ScanError as err:
        if not whole:
            raise  # the rest of a JSON log cannot be found: the file stops here
        return label, _unreadable(n, f"{where}{err}")
    except ValueError as err:
        return label, _unreadable(n, f"{where}{err}")
    except InputTooLarge:
        raise
    except InvalidTranscript as err:  # a damaged archive member: the next one is read
        return label, _unreadable(n, "; ".join(f"{f}: {m}" if f else m for f, m in err.problems))
    label = f"sample {sample['id']} (epoch {sample['epoch']})"
    record = {
        _MARK: {"task": task, "id": sample["id"], "epoch": sample["epoch"]},
        "store": {TRANSCRIPT_KEY: None},
        "metadata": {TRANSCRIPT_KEY: None},
    }
    for field in ("store", "metadata"):
        text = sample.get(field)
        if text is not None:
            try:
                doc, flagged = loads(text)
            except RecursionError:
                doc, flagged = None, False
                problem = (f"{field}.{TRANSCRIPT_KEY}", "JSON nested too deeply to read")
                return label, InvalidTranscript([problem])
            record[field][TRANSCRIPT_KEY] = doc
            if flagged:
                record[_MARK]["flagged"] = True
    return label, record


def _unreadable(n: int, why: str) -> InvalidTranscript:
    return InvalidTranscript(
        [("samples", f"sample {n} of the Inspect eval log is not readable: {why}")]
    )


def _sample(scanner: Scanner) -> dict[str, Any]:
    """A sample's id and epoch, and the text of the game it keeps in its store and its
    metadata (``leakage_transcript``, where there is one); everything else skipped. The
    sample is read to its end before a problem is raised (``ValueError``), so that the
    scanner can go on with the next."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    for key in scanner.fields():
        if key in ("id", "epoch", "store", "metadata") and key in out:
            problems.append(f"{key}: given more than once")
        elif key in ("id", "epoch"):
            out[key] = scanner.keep()
        elif key in ("store", "metadata"):
            out[key] = None
            if scanner.kind() == "object":
                for field in scanner.fields():
                    if field == TRANSCRIPT_KEY:
                        out[key] = scanner.keep_text()
            elif scanner.keep() is not None:
                problems.append(f"{key}: expected an object")
    sample_id, epoch = out.get("id"), out.get("epoch")
    if isinstance(sample_id, bool) or not isinstance(sample_id, int | str):
        got = repr(sample_id)[:60] if "id" in out else None
        problems.append(f"id: expected a string or an integer, got {got}" if got else "id: missing")
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        got = repr(epoch)[:60] if "epoch" in out else None
        problems.append(f"epoch: expected an integer, got {got}" if got else "epoch: missing")
    if problems:
        raise ValueError("; ".join(problems))
    return out


def _file_chunks(path: Path, deadline: Deadline) -> Iterator[bytes]:
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            deadline.check()
            yield chunk


def _json_log_records(
    path: Path, limits: ReadLimits, deadline: Deadline
) -> Iterator[tuple[str, dict[str, Any] | InvalidTranscript]]:
    scanner = Scanner(_file_chunks(path, deadline), max_keep=limits.max_member_bytes)
    head: dict[str, Any] = {"task": None, "status": None}
    n = 0
    try:
        for key in scanner.fields():
            if _head_field(scanner, key, head):
                continue
            if key == "samples" and scanner.kind() == "array":
                task = head["task"]
                if not isinstance(task, str):
                    raise ScanError("eval.task is not a string before the samples", 0)
                for _ in scanner.items():
                    n += 1
                    yield _record(scanner, task, n, "samples", limits, whole=False)
        scanner.finish()
    except ScanError as err:
        if n:
            problem = f"sample {n} of the Inspect eval log is not readable: {err}"
            raise InvalidTranscript([("samples", problem)]) from None
        raise InvalidTranscript([("", f"{_NOT_A_LOG}: {err}")]) from None
    except KeptTooLarge as err:
        raise InputTooLarge([("", f"a field of {err} (max_member_bytes)")]) from None
    if n == 0:
        task, status = head["task"], head["status"]
        raise InvalidTranscript(
            [("samples", f"the log of task {task!r} has no samples (status {status})")]
        )


class InspectAdapter:
    """One sample of an Inspect eval log (:func:`eval_records`) into its transcript."""

    name = "inspect"

    def sniff(self, record: Any) -> bool:
        return isinstance(record, dict) and isinstance(record.get(_MARK), dict)

    def convert(
        self, record: Any, *, path: Path | None, index: int
    ) -> ChameleonTranscript | SpyGameTranscript:
        if not self.sniff(record):
            raise InvalidTranscript(
                [(_MARK, "not a sample of an Inspect eval log; pass the .eval file itself")]
            )
        info = record[_MARK]
        for field in ("store", "metadata"):
            data = (record.get(field) or {}).get(TRANSCRIPT_KEY)
            if data is not None:
                break
        else:
            raise InvalidTranscript(
                [
                    (
                        f"store.{TRANSCRIPT_KEY}",
                        f"missing: sample {info.get('id')!r} of task {info.get('task')!r} "
                        "carries no game (neither its store nor its metadata has "
                        f"{TRANSCRIPT_KEY!r}); only logs of leakage/chameleon, "
                        "leakage/spygame, or tasks whose samples keep a "
                        "leakage.transcript/1 record there, can be scored",
                    )
                ]
            )
        if info.get("flagged"):
            problems = json_problems(data)
            if problems:
                prefix = f"{field}.{TRANSCRIPT_KEY}"
                raise InvalidTranscript([(f"{prefix}{_sub(f)}", m) for f, m in problems])
        try:
            return parse_transcript(data)
        except InvalidTranscript as err:
            prefix = f"{field}.{TRANSCRIPT_KEY}"
            raise InvalidTranscript(
                [(f"{prefix}.{f}" if f else prefix, m) for f, m in err.problems]
            ) from None


def _sub(path: str) -> str:
    return path if not path or path.startswith("[") else f".{path}"
