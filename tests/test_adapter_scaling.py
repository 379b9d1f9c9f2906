"""No adapter or transcript validator does work super-linear in the size of one record
(issue 37: CK-Arena's and Taboo's duplicate-player checks compared every pair, 118 s for a
record of 20,000 players; SpyGame-Liang's templates backtracked, 10 s for a 96 KB vote).

The measure is deterministic: the Python steps (lines, calls, returns: ``sys.settrace``
events) that reading a record of n and of 4n players takes, in every frame, the library's and
the standard library's. Work linear in n grows about 4-fold, quadratic work 16-fold; the
bound is 6. Work inside C code (a regular expression, pydantic-core) takes no Python steps:
the regular expressions of the templates are held to the same ratio in CPU time instead,
over texts long enough (50,000 to 200,000 characters) that the ratio of linear work (about
4) stands far from that of quadratic work (about 16) whatever the machine's load. The
figures themselves are in ``python -m benchmarks.service_limits --scenarios adapters``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks._big_records import BUILDERS, ck_arena, liang_long_texts, taboo
from leakage.errors import InvalidTranscript
from leakage.transcripts import convert_record

N = 250
GROWTH = 6.0
"""Most the steps may grow when the record grows 4-fold (linear: about 4; quadratic: 16)."""


def _steps(fn: Callable[[], Any]) -> int:
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def _convert(record: Any, fmt: str) -> Callable[[], Any]:
    def run() -> Any:
        try:
            return convert_record(record, input_format=fmt)
        except InvalidTranscript as err:
            return err

    return run


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_reading_a_record_takes_steps_linear_in_its_players(fmt: str):
    build = BUILDERS[fmt]
    _convert(build(8), fmt)()  # imports and caches out of the way
    small, large = (_steps(_convert(build(n), fmt)) for n in (N, 4 * N))
    assert not isinstance(_convert(build(N), fmt)(), InvalidTranscript)  # the happy path
    assert large / small < GROWTH, (fmt, small, large)


@pytest.mark.parametrize(("fmt", "build"), [("ck-arena", ck_arena), ("textarena-taboo", taboo)])
def test_a_duplicate_player_last_is_found_in_linear_steps(fmt: str, build: Any):
    records = [build(n, duplicate_last=True) for n in (N, 4 * N)]
    errors = [_convert(r, fmt)() for r in records]
    assert all(isinstance(e, InvalidTranscript) and "twice" in str(e) for e in errors), errors
    small, large = (_steps(_convert(r, fmt)) for r in records)
    assert large / small < GROWTH, (fmt, small, large)


def _cpu(fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def test_the_spygame_liang_templates_read_long_texts_in_linear_time():
    fmt = "spygame-liang"
    small, large = (_convert(liang_long_texts(n), fmt) for n in (50_000, 200_000))
    assert isinstance(large(), InvalidTranscript)  # the vote fits no template
    ratio = _cpu(large) / _cpu(small)
    assert ratio < 8, ratio


def test_preparing_a_game_for_scoring_takes_steps_linear_in_its_players():
    """What scoring takes from a transcript before any backend runs (each speaker's word and
    role): ``word_of`` per player searched the players each time."""
    from leakage.scoring import ScoreOptions, game_input, report_context

    games = [convert_record(BUILDERS["leakage"](n)) for n in (N, 4 * N)]

    def prepare(game: Any) -> Callable[[], Any]:
        return lambda: (game_input(game, ScoreOptions()), report_context(game))

    prepare(games[0])()
    small, large = (_steps(prepare(g)) for g in games)
    assert large / small < GROWTH, (small, large)
