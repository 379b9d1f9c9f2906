"""Describers: a word in, two or three sentences on its meaning out (or None when unknown).

One structural protocol, ``Describer``; implementations: ``WordNetDescriber`` (offline
default, in ``_wordnet.py``), ``FileDescriber`` (descriptions the user supplies) and
``LLMDescriber`` (a local model or an OpenAI-compatible endpoint, through the LLM layer).
``CachedDescriber`` keeps the descriptions of a ``VersionedDescriber`` in SQLite across runs,
keyed by describer name, version and word.

The kinds are the registry ``DESCRIBERS`` (``wordnet``, ``llm``, ``file``), which
``leakage splits build --describer`` offers; another distribution adds one by an entry point
in the group ``leakage.describers`` naming a factory that takes keyword options::

    [project.entry-points."leakage.describers"]
    mydescriber = "mypackage.describe:MyDescriber"
"""

from __future__ import annotations

import csv
import inspect
import json
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO, runtime_checkable

from leakage._registry import Registry
from leakage.errors import BackendUnavailable, InvalidInput

DESCRIPTION_PROMPT = (
    "Describe the word or phrase '{word}' in two or three sentences: its core meaning, how "
    "it is used, and what distinguishes it from similar things. Do not use the word itself."
)
"""What an LLM describer will be asked (Gu et al.'s recipe); also a recipe for writing a
``--descriptions`` file with any LLM."""


@runtime_checkable
class Describer(Protocol):
    """Anything that describes words."""

    name: str
    """Identity for reports and cache keys, e.g. ``wordnet`` or ``file:descriptions.jsonl``."""

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        """A description per distinct word; None when the describer does not know the word."""
        ...


@runtime_checkable
class VersionedDescriber(Describer, Protocol):
    """A describer whose answers stay the same while its ``version`` does, so they can be
    kept across runs (``CachedDescriber``); one that reads them from elsewhere (a file) has
    none."""

    version: str
    """Changes whenever what it says about a word may change."""


def _norm(word: str) -> str:
    return " ".join(word.split()).casefold()


class FileDescriber:
    """Descriptions from a file: JSONL lines ``{"word": ..., "description": ...}`` or a CSV
    with the header ``word,description``. Words match exactly, else case-insensitively with
    spaces collapsed; a word the file lacks is unknown. ``"description": null`` also marks
    a word unknown."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"file:{self.path.name}"
        self._exact: dict[str, str | None] = {}
        self._loose: dict[str, str | None] = {}
        self._read()

    def _add(self, word: object, desc: object, line: int) -> None:
        where = f"{self.path}: line {line}"
        if not isinstance(word, str) or not word.strip():
            raise InvalidInput(f"{where}: field 'word': expected a non-empty string")
        if desc is not None and (not isinstance(desc, str) or not desc.strip()):
            raise InvalidInput(
                f"{where}: field 'description': expected a non-empty string (or null for an "
                "unknown word)"
            )
        text = desc.strip() if isinstance(desc, str) else None
        word = word.strip()
        if word in self._exact and self._exact[word] != text:
            raise InvalidInput(f"{where}: word {word!r} is described twice, differently")
        self._exact[word] = text
        self._loose.setdefault(_norm(word), text)

    def _read(self) -> None:
        try:
            with self.path.open(encoding="utf-8-sig", newline="") as fh:
                if self.path.suffix.lower() in (".csv", ".tsv"):
                    self._read_csv(fh, "\t" if self.path.suffix.lower() == ".tsv" else ",")
                else:
                    self._read_jsonl(fh)
        except OSError as err:
            raise InvalidInput(f"{self.path}: cannot read descriptions: {err}") from err
        except UnicodeDecodeError as err:
            raise InvalidInput(f"{self.path}: not UTF-8 text: {err}") from err

    def _read_jsonl(self, fh: TextIO) -> None:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise InvalidInput(f"{self.path}: line {i}: not JSON: {err.msg}") from err
            if not isinstance(rec, dict):
                raise InvalidInput(
                    f'{self.path}: line {i}: expected an object {{"word": ..., '
                    f'"description": ...}}, got {type(rec).__name__}'
                )
            for field in ("word", "description"):
                if field not in rec:
                    raise InvalidInput(f"{self.path}: line {i}: field {field!r} is missing")
            self._add(rec["word"], rec["description"], i)

    def _read_csv(self, fh: TextIO, delimiter: str) -> None:
        reader = csv.reader(fh, delimiter=delimiter)
        header = next(reader, None)
        names = [h.strip().lower() for h in header or []]
        if "word" not in names or "description" not in names:
            raise InvalidInput(
                f"{self.path}: line 1: the header must have the columns word,description "
                f"(found {', '.join(header or []) or 'nothing'})"
            )
        w, d = names.index("word"), names.index("description")
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) <= max(w, d):
                raise InvalidInput(
                    f"{self.path}: line {reader.line_num}: expected {len(names)} fields, "
                    f"got {len(row)}"
                )
            self._add(row[w], row[d], reader.line_num)

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for w in words:
            key = w.strip()
            out[w] = self._exact[key] if key in self._exact else self._loose.get(_norm(w))
        return out


_SENTENCE = re.compile(r"\S.*?[.!?][\"')\]]*(?=\s|$)")


def whole_sentences(text: str, most: int = 3) -> str:
    """The first ``most`` whole sentences of ``text`` (whitespace collapsed), without a
    trailing unfinished one (an answer cut at ``max_tokens``); the text as it is when it
    holds no whole sentence."""
    text = " ".join(text.split())
    found = _SENTENCE.findall(text)
    return " ".join(found[:most]) if found else text


DEFAULT_LLM_MODEL = "smollm2-135m"
"""The LLM describer's local model: the bundled instruct model."""


class LLMDescriber:
    """Descriptions written by an LLM through the LLM layer (``DESCRIPTION_PROMPT``).

    ``client`` is any ``leakage.llm.LLMClient``: a local model (default SmolLM2-135M-Instruct,
    the bundled instruct model; a base model such as Gemma-3-270M continues text rather than
    answering) or an OpenAI-compatible endpoint (``open_llm(model, endpoint=URL)``). Greedy
    decoding, so a word's description is reproducible. The answer is cut to its first three
    whole sentences (an answer cut at ``max_tokens`` loses its unfinished last sentence); an
    answer of fewer than three words counts as unknown.
    """

    name = "llm"
    version = "2"
    max_tokens = 160

    def __init__(self, client: Any = None, *, model: str = DEFAULT_LLM_MODEL) -> None:
        if client is None:
            from leakage.llm import open_llm

            client = open_llm(model)
        self.client = client
        self.name = f"llm:{client.name}"

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        from leakage.llm import Message

        out: dict[str, str | None] = {}
        for word in dict.fromkeys(words):
            gen = self.client.generate(
                [Message("user", DESCRIPTION_PROMPT.format(word=word))],
                max_tokens=self.max_tokens,
            )
            text = whole_sentences(gen.text)
            out[word] = text if len(text.split()) >= 3 else None
        return out


# -- the kinds of describer --------------------------------------------------------------


def _llm(
    *,
    model: str | None = None,
    endpoint: str | None = None,
    llm_cache: str | None = None,
    variables: Mapping[str, str] | None = None,
    device: str = "auto",
) -> LLMDescriber:
    """``LLMDescriber`` over ``leakage.llm.open_llm``: the bundled SmolLM2-135M-Instruct, a
    GGUF file or model folder, or ``endpoint``'s model (default there: LEAKAGE_LLM_MODEL),
    its answers cached in ``llm_cache`` (default ``Paths.llm_responses``). ``variables``:
    the endpoint's ``LEAKAGE_LLM_*`` values as the caller read them (the command line's
    settings; ``None``: the environment). ``device``: where a local model runs (``auto``,
    ``cpu``, ``cuda``, ``cuda:N``, ``mps``; an endpoint's model runs elsewhere)."""
    from leakage.llm import open_llm

    client = open_llm(
        model or (None if endpoint else DEFAULT_LLM_MODEL),
        endpoint=endpoint,
        cache_path=llm_cache,
        variables=variables,
        device="auto" if endpoint else device,
    )
    return LLMDescriber(client)


DescriberFactory = Callable[..., Describer]
DESCRIBERS: Registry[DescriberFactory] = Registry(
    "leakage.describers",
    builtin={
        "wordnet": "leakage.splits._wordnet:WordNetDescriber",
        "llm": "leakage.splits._describers:_llm",
        "file": "leakage.splits._describers:FileDescriber",
    },
)
"""The kinds of describer: name -> factory(**options) (``file`` takes ``path``, ``llm``
``model``, ``endpoint`` and ``llm_cache``, ``wordnet`` ``wordnet_dir``)."""


def describer_options(name: str) -> dict[str, bool]:
    """The options the describer ``name`` takes: option -> whether it must be given;
    ``UnknownBackend`` names the describers there are."""
    params = inspect.signature(DESCRIBERS.pick(name, "describer")).parameters.values()
    return {
        p.name: p.default is p.empty
        for p in params
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


def create_describer(name: str, **options: Any) -> Describer:
    """The describer ``name`` made with ``options`` (``DESCRIBERS``)."""
    return DESCRIBERS.pick(name, "describer")(**options)


# -- cache -----------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS descriptions (
    describer TEXT NOT NULL,
    version TEXT NOT NULL,
    word TEXT NOT NULL,
    description TEXT,
    PRIMARY KEY (describer, version, word)
) WITHOUT ROWID;
"""
_CHUNK = 500  # SQLite host parameters per SELECT


def default_description_cache_path() -> Path:
    """``$LEAKAGE_HOME/descriptions.sqlite`` (:attr:`leakage.paths.Paths.descriptions` of the
    home ``LEAKAGE_HOME`` names, default ``~/.cache/leakage``)."""
    from leakage.paths import default_paths

    return default_paths().descriptions


class CachedDescriber:
    """Wraps a describer: what it said about a word (including "unknown") is kept in SQLite
    and reused while the describer's ``name`` and ``version`` stay the same."""

    def __init__(self, describer: Describer, cache_path: str | Path) -> None:
        self.describer = describer
        self.name = describer.name
        self.version = describer.version if isinstance(describer, VersionedDescriber) else ""
        self.cache_path = Path(cache_path)
        self.described = 0
        """How many words this instance asked the wrapped describer about (cache misses)."""

    def _connect(self) -> sqlite3.Connection:
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.cache_path, timeout=30)
            con.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as err:
            raise BackendUnavailable(
                f"{self.cache_path}: cannot open the description cache: {err}; set "
                "LEAKAGE_HOME to a writable directory"
            ) from err
        return con

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        wanted = list(dict.fromkeys(words))
        con = self._connect()
        try:
            found: dict[str, str | None] = {}
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                rows = con.execute(
                    "SELECT word, description FROM descriptions WHERE describer = ? AND "
                    f"version = ? AND word IN ({','.join('?' * len(chunk))})",
                    [self.name, self.version, *chunk],
                ).fetchall()
                found.update(rows)
            missing = [w for w in wanted if w not in found]
            if missing:
                fresh = self.describer.describe(missing)
                self.described += len(missing)
                with con:
                    con.executemany(
                        "INSERT OR REPLACE INTO descriptions VALUES (?, ?, ?, ?)",
                        [(self.name, self.version, w, fresh.get(w)) for w in missing],
                    )
                found.update({w: fresh.get(w) for w in missing})
        finally:
            con.close()
        return {w: found[w] for w in wanted}
