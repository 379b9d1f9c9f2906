"""The budgeted concurrent fetch shared by the web count sources and the remote LLM client
(leakage._http.fetch_all, QueryBudget), exercised directly; tests/test_web_sources.py and
tests/test_llm_remote.py check it through its two users."""

from __future__ import annotations

import ast
import asyncio

import pytest

from leakage._http import FLUSH_EVERY, Fetched, QueryBudget, fetch_all

from .conftest import REPO


class Refused(Exception):
    """The kind of failure the caller stops on (an API refusal)."""


def _run(
    todo: dict[str, int],
    *,
    budget: int | None = None,
    concurrency: int = 1,
    fail_on: frozenset[str] = frozenset(),
    bug_on: frozenset[str] = frozenset(),
) -> tuple[Fetched[int] | Exception, list[list[str]], list[str], QueryBudget]:
    """fetch_all over ``todo`` (key -> number; the answer is the number squared)."""
    stored: list[list[str]] = []
    sent: list[str] = []
    spend = QueryBudget(budget)

    async def send(n: int) -> int:
        key = f"k{n}"
        sent.append(key)
        await asyncio.sleep(0)
        if key in fail_on:
            raise Refused(key)
        if key in bug_on:
            raise KeyError(key)
        return n * n

    async def go() -> Fetched[int]:
        return await fetch_all(
            todo,
            send,
            gate=asyncio.Semaphore(concurrency),
            charge=lambda: None if spend.take() else "the budget is spent",
            store=lambda batch: stored.append([key for key, _, _ in batch]),
            failure=(Refused,),
        )

    try:
        result: Fetched[int] | Exception = asyncio.run(go())
    except Exception as exc:  # the test inspects what came out
        result = exc
    return result, stored, sent, spend


def _todo(n: int) -> dict[str, int]:
    return {f"k{i}": i for i in range(n)}


def test_everything_is_answered_and_stored_in_batches():
    n = 2 * FLUSH_EVERY + 3
    result, stored, sent, spend = _run(_todo(n), concurrency=3)
    assert isinstance(result, Fetched)
    assert result.starved is None
    assert result.answered == {f"k{i}": i * i for i in range(n)}
    assert [len(batch) for batch in stored] == [FLUSH_EVERY, FLUSH_EVERY, 3]
    assert sorted(k for batch in stored for k in batch) == sorted(_todo(n))
    assert spend.spent == n == len(sent)


def test_a_spent_budget_stops_the_batch_and_keeps_what_was_answered():
    result, stored, sent, spend = _run(_todo(10), budget=4)
    assert isinstance(result, Fetched)
    assert result.starved == "the budget is spent"
    assert result.answered == {f"k{i}": i * i for i in range(4)}
    assert [k for batch in stored for k in batch] == ["k0", "k1", "k2", "k3"]
    assert sent == ["k0", "k1", "k2", "k3"]
    assert spend.spent == spend.limit == 4 and spend.remaining == 0


def test_requests_in_flight_when_the_budget_runs_out_finish():
    result, stored, sent, _ = _run(_todo(10), budget=3, concurrency=4)
    assert isinstance(result, Fetched) and result.starved is not None
    assert len(result.answered) == 3 == len(sent)
    assert sorted(k for batch in stored for k in batch) == sorted(result.answered)


def test_the_first_failure_is_raised_after_the_answers_are_stored():
    result, stored, sent, _ = _run(_todo(8), fail_on=frozenset({"k2"}))
    assert isinstance(result, Refused) and str(result) == "k2"
    assert [k for batch in stored for k in batch] == ["k0", "k1"]
    assert sent == ["k0", "k1", "k2"]  # nothing new goes out after a failure


def test_a_bug_is_raised_as_itself_not_as_an_exception_group():
    result, stored, _, _ = _run(_todo(3), bug_on=frozenset({"k1"}))
    assert type(result) is KeyError
    assert [k for batch in stored for k in batch] == ["k0"]


def test_the_query_budget():
    budget = QueryBudget(2)
    assert [budget.take() for _ in range(3)] == [True, True, False]
    assert budget.spent == 2 and budget.remaining == 0
    unlimited = QueryBudget()
    assert all(unlimited.take() for _ in range(100)) and unlimited.remaining is None
    with pytest.raises(ValueError, match="cannot be negative"):
        QueryBudget(-1)


def test_the_llm_layer_imports_nothing_from_the_backends():
    """llm -> backends was the LLM side of the backends <-> llm subpackage cycle (the remote
    client took QueryBudget from a count source's private module); any import counts,
    function-level ones included."""
    offenders = []
    for path in sorted((REPO / "leakage" / "llm").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            offenders += [
                (path.name, n) for n in names if n.startswith("leakage.backends") or n == "backends"
            ]
    assert offenders == []
