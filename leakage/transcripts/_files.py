"""Reading transcript files: files, directories and globs of JSON, JSONL and Parquet, gzip
or not. ``leakage score``, the service's jobs and ``leakage batch`` all read through here.

``iter_records`` streams one :class:`RawRecord` per record without parsing it into a
transcript: a JSONL line stays text until it is parsed (:func:`to_transcript`; in a batch,
by the parent for a local pool, by the actor on Ray); :func:`iter_transcripts` does both.
A record is identified by its file and its position in the file (``record``, from 0, blank
JSONL lines not counted, the index adapters are given), which stays stable between runs and
is what ``--resume`` keys on.

Parquet inputs hold either one string column ``record`` (or ``transcript``, ``json``) with a
JSON record per row, or one column per top-level field of the record (nested structs and
lists); in the latter, null fields are dropped (outside ``meta``), since a table that mixes
Chameleon and SpyGame rows has a null ``words`` in every Chameleon row.
"""

from __future__ import annotations

import glob
import gzip
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from leakage.errors import InputTooLarge, InvalidInput, InvalidTranscript
from leakage.transcripts._limits import DEFAULT_LIMITS, ReadLimits
from leakage.transcripts._load import (
    AnyTranscript,
    _locate,
    _records,
    check_input_format,
    convert_record,
    parse_record,
)

KINDS = (".json", ".jsonl", ".ndjson", ".parquet", ".eval")
_JSON_COLUMNS = ("record", "transcript", "json")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One input record, not yet parsed: what a worker needs to turn it into a report."""

    source: str
    """The file, as an absolute path."""
    record: int
    """Position of the record in the file, from 0."""
    label: int | str
    """How an error names the record: ``line 12``, ``row 3``, or the position in a JSON
    array (an int, as errors give it)."""
    payload: Any
    """JSON text, an already parsed record, or the ``InvalidInput`` met while reading it."""


def kind_of(path: Path) -> str | None:
    """``.json`` / ``.jsonl`` / ``.parquet`` / ``.eval`` (an Inspect eval log) for a readable
    input (``.gz`` looked through), by its name; :func:`iter_file` then reads a ``.json`` or
    ``.eval`` file by what it holds (:func:`content_kind`)."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in KINDS:
        return None
    return ".jsonl" if suffixes[-1] == ".ndjson" else suffixes[-1]


def expand_inputs(inputs: Iterable[str | Path]) -> list[Path]:
    """Files named, found under directories (recursively) or matched by globs, in order.

    A name that is neither a file, a directory nor a glob matching something is kept, so that
    reading it reports the problem as a record error.
    """
    out: dict[Path, None] = {}
    for item in inputs:
        text = str(item)
        path = Path(text).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and kind_of(p))
        elif not path.exists() and _GLOB_CHARS & set(text):
            found = sorted(
                Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file()
            )
            if not found:
                found = [path]
        else:
            found = [path]
        for p in found:
            out.setdefault(p.resolve(), None)
    return list(out)


class _Capped(io.RawIOBase):
    """A decompressed stream that raises ``InputTooLarge`` once more than ``limit`` bytes
    have come out of it (a gzip file of a few kilobytes can inflate to gigabytes)."""

    def __init__(self, inner: IO[bytes], limit: int, name: str) -> None:
        self._inner, self._limit, self._name, self._seen = inner, limit, name, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        # read1: what is there, so that the lines before a truncated end are still read
        data = self._inner.read1(len(buffer))  # type: ignore[attr-defined]
        n = len(data)
        buffer[:n] = data
        self._seen += n
        if self._seen > self._limit:
            raise InputTooLarge(
                [("", f"{self._name} decompresses to more than {self._limit:,} bytes "
                  "(max_expanded_bytes)")]
            )  # fmt: skip
        return int(n)

    def close(self) -> None:
        self._inner.close()
        super().close()


def _open_binary(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> IO[bytes]:
    """The file's bytes, gzip undone (for a ``.gz`` name, at most ``max_expanded_bytes``)."""
    if path.suffix.lower() != ".gz":
        return path.open("rb")
    # gzip.open(path) owns (and closes) the file it opens; _Capped closes it.
    inner = gzip.open(path, "rb")  # noqa: SIM115
    capped = _Capped(inner, limits.max_expanded_bytes, path.name)  # type: ignore[arg-type]
    return io.BufferedReader(capped)


def _open_text(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> IO[str]:
    return io.TextIOWrapper(_open_binary(path, limits), encoding="utf-8-sig", newline=None)


def _stop_label(index: int) -> str:
    """How an error record placed after ``index`` records read from the file is named."""
    return str(index) if index == 0 else f"{index} (reading stopped here)"


def _file_error(source: str, index: int, message: str) -> RawRecord:
    """An error record placed after the records already read from the file."""
    error = InvalidTranscript([("", message)], source=source)
    return RawRecord(source, index, _stop_label(index), error)


def _jsonl(path: Path, source: str, limits: ReadLimits) -> Iterator[RawRecord]:
    index = 0
    with _open_text(path, limits) as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                yield RawRecord(source, index, f"line {lineno}", line)
                index += 1
    if index == 0:
        yield _file_error(source, 0, "empty file")


def _json(path: Path, source: str, limits: ReadLimits) -> Iterator[RawRecord]:
    with _open_text(path, limits) as fh:
        text = fh.read()
    for index, (label, record) in enumerate(_records(text, path)):
        yield RawRecord(source, index, label, record)


def _drop_nulls(value: Any, *, inside_meta: bool = False) -> Any:
    if isinstance(value, dict):
        return {
            k: _drop_nulls(v, inside_meta=inside_meta or k == "meta")
            for k, v in value.items()
            if v is not None or inside_meta
        }
    if isinstance(value, list):
        return [_drop_nulls(v, inside_meta=inside_meta) for v in value]
    return value


def _parquet(path: Path, source: str, limits: ReadLimits) -> Iterator[RawRecord]:
    import pyarrow.parquet as pq

    with _open_binary(path, limits) as fh:
        pf = pq.ParquetFile(fh)
        names = pf.schema_arrow.names
        column = next((c for c in _JSON_COLUMNS if names == [c]), None)
        index = 0
        for batch in pf.iter_batches(batch_size=1024):
            rows = batch.column(0).to_pylist() if column else batch.to_pylist()
            for row in rows:
                payload = row if column else _drop_nulls(row)
                yield RawRecord(source, index, f"row {index}", payload)
                index += 1


def _from_pyarrow(err: Exception) -> bool:
    """Whether ``err`` is one of pyarrow's: a damaged or foreign Parquet file."""
    return type(err).__module__.startswith("pyarrow")


def _eval(path: Path, source: str, limits: ReadLimits) -> Iterator[RawRecord]:
    """An Inspect eval log: one record per sample (``adapters.inspect_log``); a sample that
    cannot be read is an error record of its own."""
    from leakage.transcripts.adapters.inspect_log import eval_records

    index = 0
    try:
        for label, record in eval_records(path, limits):
            if isinstance(record, InvalidTranscript):
                record = record.located(source=source, record=label)
            yield RawRecord(source, index, label, record)
            index += 1
    except InvalidTranscript as err:
        yield RawRecord(source, index, err.record or index, err.located(source=source))


_READERS = {".jsonl": _jsonl, ".json": _json, ".parquet": _parquet, ".eval": _eval}


def content_kind(path: Path, kind: str) -> str:
    """A ``.json`` or ``.eval`` file's kind by its first bytes: ``.eval`` for an Inspect log
    in either of Inspect's formats (a zip archive, or a JSON log written with ``--log-format
    json``), else ``.json``; other kinds (and gzipped files, which Inspect does not write)
    as named."""
    if kind not in (".json", ".eval") or path.suffix.lower() == ".gz":
        return kind
    from leakage.transcripts.adapters.inspect_log import HEAD_BYTES, log_format

    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return kind  # reading it for real reports the problem
    return ".eval" if log_format(head) else kind


def iter_file(path: Path, *, limits: ReadLimits = DEFAULT_LIMITS) -> Iterator[RawRecord]:
    """The records of one file; a file that cannot be read (or stops being readable) yields
    one error record after the good ones. A compressed file (``.eval``, ``.gz``) is read
    under ``limits``: past them, that error is an ``InputTooLarge``."""
    source = str(path)
    kind = kind_of(path)
    if kind is None:
        msg = (
            "not a JSON, JSONL, Parquet or Inspect eval file (.json, .jsonl, .parquet, .eval, "
            ".gz of those)"
        )
        yield _file_error(source, 0, msg)
        return
    n = 0
    try:
        for rec in _READERS[content_kind(path, kind)](path, source, limits):
            yield rec
            n += 1
    except InvalidTranscript as err:  # a .gz file past the limits
        yield RawRecord(source, n, _stop_label(n), err.located(source=source))
    except OSError as err:  # gzip's BadGzipFile and EOFError included
        yield _file_error(source, n, f"cannot read file: {err.strerror or err}")
    except EOFError as err:
        yield _file_error(source, n, f"cannot read file: truncated ({err})")
    except UnicodeDecodeError as err:
        yield _file_error(source, n, f"not UTF-8 text (byte {err.start}); re-save it as UTF-8")
    except Exception as err:
        if not _from_pyarrow(err):
            raise
        yield _file_error(source, n, f"cannot read Parquet: {err}")


def iter_records(
    paths: Iterable[Path], *, limits: ReadLimits = DEFAULT_LIMITS
) -> Iterator[RawRecord]:
    for path in paths:
        yield from iter_file(path, limits=limits)


def count_records(path: Path) -> int:
    """A quick estimate of how many records a file holds (for the progress bar's ETA).

    A file that cannot be read counts as one record: reading it for real turns the problem
    into an error line (:func:`iter_file`), and the rest of the batch goes on.
    """
    kind = kind_of(path)
    try:
        if kind == ".parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        if kind == ".jsonl":
            with _open_text(path) as fh:
                return sum(1 for line in fh if line.strip())
    except (OSError, EOFError, UnicodeDecodeError):  # a truncated gzip raises EOFError
        return 1
    except Exception as err:
        if not _from_pyarrow(err):
            raise
        return 1
    return 1


def to_transcript(raw: RawRecord, input_format: str = "auto") -> AnyTranscript | InvalidInput:
    """Parse and convert one record (what ``iter_transcripts`` does for one record)."""
    payload = raw.payload
    if isinstance(payload, InvalidInput):
        return payload
    if isinstance(payload, str):
        payload = parse_record(payload, source=raw.source, record=raw.label)
        if isinstance(payload, InvalidInput):
            return payload
    try:
        return convert_record(
            payload, input_format=input_format, path=Path(raw.source), index=raw.record
        )
    except InvalidInput as err:
        return _locate(err, raw.source, raw.label)


def iter_transcripts(
    paths: Iterable[str | Path],
    *,
    input_format: str = "auto",
    limits: ReadLimits = DEFAULT_LIMITS,
) -> Iterator[AnyTranscript | InvalidInput]:
    """Yield a transcript or an ``InvalidInput`` (naming file, record, field) per record, in
    file order: the files, directories (searched recursively) and globs of ``paths``;
    compressed files (Inspect's ``.eval``, ``.gz``) read under ``limits``."""
    check_input_format(input_format)
    for raw in iter_records(expand_inputs(paths), limits=limits):
        yield to_transcript(raw, input_format)


def load_transcripts(
    paths: Iterable[str | Path],
    *,
    input_format: str = "auto",
    limits: ReadLimits = DEFAULT_LIMITS,
) -> tuple[list[AnyTranscript], list[InvalidInput]]:
    """Read every record; return the good transcripts and the errors, in file order."""
    good: list[AnyTranscript] = []
    bad: list[InvalidInput] = []
    for item in iter_transcripts(paths, input_format=input_format, limits=limits):
        if isinstance(item, InvalidInput):
            bad.append(item)
        else:
            good.append(item)
    return good, bad
