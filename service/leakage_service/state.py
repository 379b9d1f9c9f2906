"""``ServiceState``: everything the routes share for the app's lifetime (settings, backends,
scoring threads, the slow pool, report cache, job store and worker). ``create_app`` builds
it; the lifespan starts and stops it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from leakage.errors import BackendUnavailable
from leakage_service.job_steps import StepCache, rebuild_from_reports
from leakage_service.job_worker import JobWorker
from leakage_service.jobs import JobStore, Retention, housekeeping
from leakage_service.runtime import Backends, ReportCache, ScoringPool
from leakage_service.settings import Settings
from leakage_service.telemetry import Metrics

log = logging.getLogger("leakage.service")


class ServiceState:
    """Everything the routes share; built by ``create_app``, filled in by the lifespan."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.backends = Backends(settings, self.metrics)
        self.pool = ScoringPool(settings.workers, settings.queue_size, self.metrics)
        self.slow = ScoringPool(settings.slow_workers, settings.slow_queue, self.metrics, slow=True)
        self.cache = ReportCache(settings.report_cache_bytes, self.metrics)
        self.store: JobStore | None = None
        self.steps = StepCache(missing=self._rebuild)
        """The step tables of the jobs viewed last (``job_steps``)."""
        self.worker: JobWorker | None = None
        self.ready = False
        self.describer: Any = None

    def _rebuild(self, job_id: str, folder: Path) -> None:
        """A job stored before step tables gets one from its reports (``job_steps``)."""
        if self.store is not None:
            rebuild_from_reports(
                self.store, job_id, folder, self.settings.read_limits(),
                [Path(p) for p in self.settings.allowed_paths],
            )  # fmt: skip

    def start(self) -> None:
        """Blocking start-up work (run on a thread by the lifespan)."""
        s = self.settings
        if s.index is None and not s.index_path.exists():
            from leakage.corpus import build_index, default_documents

            log.info("building the default index at %s", s.index_path)
            docs, sources = default_documents()
            build_index(s.index_path, docs, sources=sources)
        for name in s.preload:
            try:
                self.backends.get(name)
            except BackendUnavailable as err:
                if name == "cooccurrence":
                    raise
                log.warning("backend %s not loaded: %s", name, err)
        _load_step_readers()
        self.store = JobStore(s.jobs_path, s.uploads_dir)
        recovered = self.store.recover(s.on_restart)
        if recovered:
            verb = "resuming" if s.on_restart == "resume" else "marked failed:"
            log.info("%s %d job(s) the last server left unfinished", verb, recovered)
        retention = Retention(max_age_days=s.job_max_age_days, max_bytes=s.job_max_bytes)
        housekeeping(self.store, retention, start=True)
        self.store.close()  # this thread's connection; each thread opens its own
        self.metrics.watch_jobs(self.store.counts)
        self.worker = JobWorker(
            self.store,
            self.backends,
            allowed=s.allowed_paths,
            retention=retention,
            limits=s.read_limits(),
            ray_address=s.ray_address,
            chunk_size=s.job_chunk_size,
            on_done=self.steps.compact,
        )
        self.worker.start()

    def stop(self) -> None:
        """Stop the job worker first (its job goes back to the queue while the backends
        are still open), then the scoring threads, then close what they used."""
        if self.worker is not None and not self.worker.stop():
            # Closing the backends under a game in hand would fail it; the process exit
            # ends the thread, and the next start finds the job running and recovers it.
            log.warning("the job worker did not stop in time; its job is left running")
            self.pool.shutdown()
            self.slow.shutdown()
            return
        self.pool.shutdown()
        self.slow.shutdown()
        self.backends.close()
        if self.store is not None:
            self.store.close()

    def readiness(self) -> list[str]:
        problems = []
        if not self.ready:
            problems.append("starting or stopping")
        if self.worker is None or not self.worker.alive:
            problems.append("the job worker is not running")
        for name in self.settings.preload:
            if name not in self.backends.slots and name not in self.backends.failed:
                problems.append(f"backend {name} not loaded")
        if "cooccurrence" not in self.backends.slots:
            problems.append("backend cooccurrence not loaded")
        return problems


def _load_step_readers() -> None:
    """Import what reads and writes the jobs' step tables (pyarrow: about a second) at
    start-up, as the backends are loaded, rather than in the first job view a client opens;
    nothing when the ``batch`` extra is not installed (jobs then say what is missing)."""
    try:
        import pyarrow.compute
        import pyarrow.dataset
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        pass
