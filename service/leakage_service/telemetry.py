"""The service's telemetry: its Prometheus metrics (served at ``/metrics``), one registry per
app (so that several apps in one process, as in the tests, never share or clash)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

_LATENCY_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip


class _JobStates(Collector):
    """``leakage_jobs{state}``, read from the job store at scrape time."""

    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("leakage_jobs", "Jobs in the store by state.", labels=["state"])
        for state, n in sorted(self._counts().items()):
            family.add_metric([state], n)
        yield family


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "leakage_http_requests",
            "HTTP requests by route template, method and status.",
            ["route", "method", "status"],
            registry=r,
        )
        self.latency = Histogram(
            "leakage_http_request_duration_seconds",
            "HTTP request latency by route template, method and status.",
            ["route", "method", "status"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.backend_latency = Histogram(
            "leakage_backend_score_seconds",
            "Time to score one game, by backend (lock wait excluded).",
            ["backend"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.games = Counter(
            "leakage_games_scored",
            "Games scored, by backend and outcome (ok or error).",
            ["backend", "outcome"],
            registry=r,
        )
        self.cache = Counter(
            "leakage_cache_requests",
            "Cache look-ups by cache (report: whole reports; embedding: texts) and result.",
            ["cache", "result"],
            registry=r,
        )
        self.queue_depth = Gauge(
            "leakage_queue_depth", "Scoring tasks waiting for a thread.", registry=r
        )
        self.queue_running = Gauge(
            "leakage_queue_running", "Scoring tasks running on a thread.", registry=r
        )
        self.queue_rejected = Counter(
            "leakage_queue_rejected", "Requests turned away because the queue was full.", registry=r
        )
        self.slow_depth = Gauge(
            "leakage_slow_queue_depth",
            "Slow tasks (splits, report pages of jobs) waiting for a thread of the slow pool.",
            registry=r,
        )
        self.slow_running = Gauge(
            "leakage_slow_running",
            "Slow tasks (splits, report pages of jobs) running on a thread of the slow pool.",
            registry=r,
        )
        self.slow_rejected = Counter(
            "leakage_slow_rejected",
            "Slow requests (splits, report pages of jobs) turned away: the slow pool was full.",
            registry=r,
        )
        self.rate_limited = Counter(
            "leakage_rate_limited",
            "Requests refused (429) by the rate limit or the failed-authentication limit.",
            registry=r,
        )

    def watch_jobs(self, counts: Callable[[], dict[str, int]]) -> None:
        self.registry.register(_JobStates(counts))

    def cache_hits(self, cache: str, hits: int, misses: int) -> None:
        if hits:
            self.cache.labels(cache, "hit").inc(hits)
        if misses:
            self.cache.labels(cache, "miss").inc(misses)
