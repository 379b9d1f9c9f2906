"""The MyThes English thesaurus as short documents: one per sense line of an entry.

MyThes (Debian ``mythes-en-us``, a permissive licence) lists for each headword its senses
with synonyms and generic / related terms. It is optional: when the machine does not have
it the default corpus is WordNet alone, and the index records which sources it holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from leakage.errors import CorpusError

MYTHES_PATHS = (
    Path("/usr/share/mythes/th_en_US_v2.dat"),
    Path("/usr/share/hunspell/th_en_US_v2.dat"),
)
_MARKERS = (" (generic term)", " (related term)", " (similar term)", " (antonym)")


def find_mythes() -> Path | None:
    """The MyThes data file if the machine has one."""
    return next((p for p in MYTHES_PATHS if p.is_file()), None)


def mythes_documents(path: Path) -> Iterator[str]:
    """One document per sense: the headword and that sense's terms."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            fh.readline()  # encoding line
            head = ""
            for line in fh:
                line = line.rstrip("\n")
                if not line.startswith("("):
                    head = line.partition("|")[0]
                    continue
                terms = line.split("|")[1:]
                cleaned = []
                for t in terms:
                    for m in _MARKERS:
                        t = t.replace(m, "")
                    cleaned.append(t)
                yield head + " ; " + ", ".join(cleaned)
    except OSError as err:
        raise CorpusError(f"{path}: cannot read MyThes file: {err.strerror}") from err
