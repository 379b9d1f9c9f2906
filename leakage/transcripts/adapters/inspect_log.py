"""Inspect AI eval logs of the ``leakage/chameleon`` and ``leakage/spygame`` tasks: one
record per sample, the game its store keeps under ``leakage_transcript``.

A log is read with ``inspect_ai.log`` (the ``inspect`` extra): its header for the task's
name, then its samples one at a time, without their messages and events. Both of Inspect's
log formats are read, told apart by content (:func:`log_format`), not by the file's name:
``.eval`` (a zip archive) and ``.json`` (``inspect eval --log-format json``). Each sample
becomes one record, labelled ``sample <id> (epoch <n>)``, holding the task, the sample's id
and epoch and what the sample keeps under ``leakage_transcript`` (its store, else its
metadata: a dataset of logged games). The adapter validates that ``leakage.transcript/1``
record; a sample without one (the log of another task) is an error naming the file, the
sample and the field that is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from leakage.errors import InvalidTranscript
from leakage.transcripts._models import ChameleonTranscript, SpyGameTranscript
from leakage.transcripts._native import parse_transcript

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
_SKIPPED = {"messages", "events", "attachments"}
"""Sample fields the adapter does not need (the bulk of a log), left unread where the log
format allows."""


def log_format(head: bytes) -> Literal["eval", "json"] | None:
    """Which Inspect log ``head`` (the first :data:`HEAD_BYTES` of a file) begins: ``eval``
    (a zip archive), ``json`` (an object whose first keys are ``version``, ``status`` and
    ``eval``, as Inspect writes them), or None."""
    if head.startswith(ZIP_MAGIC):
        return "eval"
    return "json" if _JSON_LOG.match(head) else None


def eval_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(label, record)`` per sample of the eval log ``path`` (either format);
    ``InvalidTranscript`` (no record) when the file cannot be read as one."""
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ModuleNotFoundError:
        raise InvalidTranscript(
            [("", f"reading an Inspect eval log needs inspect_ai: {INSTALL_HINT}")]
        ) from None
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
    try:
        header = read_eval_log(str(path), header_only=True, format=fmt)
    except Exception as err:  # inspect_ai raises plain ValueErrors, zip and JSON errors
        raise InvalidTranscript([("", f"not a readable Inspect eval log: {err}")]) from None
    task = header.eval.task
    n = 0
    samples = read_eval_log_samples(
        str(path), all_samples_required=False, format=fmt, exclude_fields=_SKIPPED
    )
    while True:
        try:
            sample = next(samples, None)
        except Exception as err:  # a damaged archive member or sample: zip, JSON, pydantic
            raise InvalidTranscript(
                [("samples", f"sample {n + 1} of the Inspect eval log is not readable: {err}")]
            ) from None
        if sample is None:
            break
        n += 1
        record = {
            _MARK: {"task": task, "id": sample.id, "epoch": sample.epoch},
            "store": {TRANSCRIPT_KEY: sample.store.get(TRANSCRIPT_KEY)},
            "metadata": {TRANSCRIPT_KEY: (sample.metadata or {}).get(TRANSCRIPT_KEY)},
        }
        yield f"sample {sample.id} (epoch {sample.epoch})", record
    if n == 0:
        raise InvalidTranscript(
            [("samples", f"the log of task {task!r} has no samples (status {header.status})")]
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
        try:
            return parse_transcript(data)
        except InvalidTranscript as err:
            prefix = f"{field}.{TRANSCRIPT_KEY}"
            raise InvalidTranscript(
                [(f"{prefix}.{f}" if f else prefix, m) for f, m in err.problems]
            ) from None
