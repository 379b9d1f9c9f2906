"""A batch run closes the backend it built: in the calling process when the run ends, in a
Ray actor when Ray Data lets the actor go; a backend given to a ``Scorer`` is its caller's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from leakage.backends import base
from leakage.batch import BatchJob, run_batch
from leakage.batch._worker import Scorer, ScorerSpec

from .conftest import EXAMPLES


class Recording:
    """A backend that records being closed and refuses to score once it is."""

    name = "recording"

    def __init__(self) -> None:
        self.closed = 0
        self.scored = 0

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        assert not self.closed, "scored after it was closed"
        self.scored += 1
        return np.zeros((len(clues), len(candidates)))

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[Recording]:
    """The ``recording`` backends created while the test runs."""
    made: list[Recording] = []

    def factory() -> Recording:
        made.append(Recording())
        return made[-1]

    monkeypatch.setitem(base.BACKENDS, "recording", factory)
    return made


def test_a_batch_in_the_calling_process_closes_its_backend_when_it_ends(
    built: list[Recording], tmp_path: Path
):
    job = BatchJob(
        inputs=[EXAMPLES / "chameleon_batch.jsonl"],
        out=tmp_path / "out",
        backend="recording",
        workers=0,
        chunk_size=2,
    )
    stats = run_batch(job)
    assert stats.games == 6
    (backend,) = built
    assert backend.scored == 6 and backend.closed == 1


def test_a_scorer_closes_only_the_backend_it_built(built: list[Recording]):
    mine = Scorer(ScorerSpec("recording", {}))
    mine.close()
    given = Recording()
    Scorer(ScorerSpec("recording", {}), backend=given).close()
    assert [b.closed for b in built] == [1] and given.closed == 0


def test_the_ray_actor_closes_its_backend_when_it_is_let_go(
    built: list[Recording], monkeypatch: pytest.MonkeyPatch
):
    pytest.importorskip("ray")
    import leakage._runtime
    from leakage.batch import _ray

    # the actor's process set-up, not wanted in the test's own process
    monkeypatch.setattr(_ray, "tune_gc", lambda: None)
    monkeypatch.setattr(leakage._runtime, "prepare_model_runtime", lambda: None)
    actor = _ray._ModelActor(ScorerSpec("recording", {}))
    (backend,) = built
    assert backend.closed == 0
    del actor
    assert backend.closed == 1


class Marking(Recording):
    """A ``Recording`` that leaves a file behind when it is closed (in another process)."""

    def __init__(self, mark: str) -> None:
        super().__init__()
        self.mark = mark

    def close(self) -> None:
        super().close()
        Path(self.mark).touch()


def _init_with_marking(spec: ScorerSpec) -> None:
    """A pool worker's initializer: ``marking`` registered there, then the usual one."""
    from leakage.batch._worker import init_process

    base.register_backend("marking")(Marking)
    init_process(spec)


def test_a_pool_worker_closes_its_backend_when_the_pool_stops(tmp_path: Path):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from leakage.batch._worker import score_in_process

    mark = tmp_path / "closed"
    spec = ScorerSpec("marking", {"mark": str(mark)})
    pool = ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_with_marking,
        initargs=(spec,),
    )
    try:
        assert pool.submit(score_in_process, [], []).result(timeout=60).fatal is None
        assert not mark.exists()
    finally:
        pool.shutdown(wait=True)
    assert mark.exists()
