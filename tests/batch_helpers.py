"""Inputs and checks shared by the batch and curve tests."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

from .conftest import EXAMPLES


def example_records() -> list[dict[str, Any]]:
    """The six Chameleon games of ``corpora/examples/chameleon_batch.jsonl``, parsed."""
    lines = (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def many_games(path: Path, n: int, *, gz: bool = False) -> Path:
    """``n`` Chameleon games (the examples, cycled, each with its own id) as JSONL."""
    base = example_records()
    text = "".join(
        json.dumps({**base[i % len(base)], "id": f"{base[i % len(base)]['id']}-{i}"}) + "\n"
        for i in range(n)
    )
    if gz:
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def read_steps(out: Path) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(out / "steps")


def game_keys(table: Any) -> Counter[tuple[str, int]]:
    """How many distinct games per (source, record), counted once per game."""
    pairs = zip(table["source"].to_pylist(), table["record"].to_pylist(), strict=True)
    steps = zip(pairs, table["step"].to_pylist(), strict=True)
    return Counter(key for key, step in steps if step == 0)


def sorted_rows(table: Any) -> list[dict[str, Any]]:
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: (r["source"], r["record"], r["step"]))
