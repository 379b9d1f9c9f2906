"""Schemathesis over the HTTP service: every check, every phase (examples, coverage, fuzzing,
stateful), against a real ``leakage serve`` on 127.0.0.1.

The server runs in a child process with a temporary ``LEAKAGE_HOME`` (the default
co-occurrence index is read where it is, built first if missing), the co-occurrence and
embedding backends enabled (splits need the embedding model) and the report cache off, so
that every case reaches the scoring code. Schemathesis runs as its command line does
(``schemathesis run``, with the config written by ``config_toml``) and writes an NDJSON
report; from it this script counts the cases generated, the check failures (unique per
operation, check and message) and the responses of 500 or more, which it also counts in
the server's own access log. The hooks mix bad records the schema cannot describe into the
transcript bodies (lone surrogates, huge integers, deep nesting, repeated keys, NUL,
look-alike candidates: ``benchmarks/_fuzz_poison.py``), checked by ``_fuzz_checks``; the
report counts those requests by kind and status (``poisoned``). The run is bounded by
``--max-seconds`` and by the number of examples per operation and phase. After it, the
requests schemathesis cannot send go over raw sockets (``benchmarks/_fuzz_wire.py``: stalled
bodies, hang-ups, a malformed chunked body, a trailing slash with a foreign ``Host``,
``HEAD``), on a server whose ``LEAKAGE_BODY_TIMEOUT`` is ``WIRE_BODY_TIMEOUT``; their
findings are the report's ``wire``.

    .venv/bin/python -m benchmarks.service_fuzz                  # >= 10,000 cases, ~20 min
    .venv/bin/python -m benchmarks.service_fuzz --max-examples 6 --max-seconds 60

Exit status 0 when no response was a server error and no check failed; 1 otherwise. The
results go to ``benchmarks/results/service_fuzz.json``. A short run is a test
(``tests/test_service_hardening.py``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._fuzz_poison import HEADER as POISON_HEADER

REPO = Path(__file__).resolve().parents[1]
CHECKS_MODULE = "benchmarks._fuzz_checks"
TRANSCRIPT_PATHS = ("/v1/score", "/v1/score/batch", "/v1/jobs")
COMPARE_PATH = "/v1/jobs/{job_id}/compare"
WIRE_BODY_TIMEOUT = 2.0
"""The fuzzed server's ``LEAKAGE_BODY_TIMEOUT``: short, so that the stalled bodies of the
wire pass are answered soon (schemathesis sends whole bodies, which it never delays)."""


def config_toml(*, max_examples: int, max_seconds: float, seed: int | None) -> str:
    """The schemathesis config: every check (the built-in ones and ``transcript_rules_only``
    from ``_fuzz_checks``), every phase, the stateful phase inferring its links from the
    ``Location`` headers and the shared parameters, no response slower than the service's
    own deadline (30 s, ``LEAKAGE_SCORE_TIMEOUT``); on the operations that read transcripts
    a schema-valid body may be refused with 422 for a rule JSON Schema cannot express,
    which ``transcript_rules_only`` checks instead (see that module)."""
    lines = [
        f'hooks = "{CHECKS_MODULE}"',
        f"max-time = {max_seconds:g}",
        "request-timeout = 60",
        "workers = 1",
        *([f"seed = {seed}"] if seed is not None else []),
        "[checks]",
        "max_response_time = 30",  # the service's own deadline (LEAKAGE_SCORE_TIMEOUT)
        "[generation]",
        f"max-examples = {max_examples}",
        "[phases.stateful]",
        "max-steps = 12",
        'inference.algorithms = ["location-headers", "dependency-analysis"]',
        "[[operations]]",
        f"include-path = {json.dumps(list(TRANSCRIPT_PATHS))}",
        'include-method = "POST"',
        "[operations.checks.positive_data_acceptance]",
        'expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]',
        # two query parameters that go together (a and b: both or neither, two different
        # models), which JSON Schema cannot say; ``compare_pairing_only`` keeps it to that
        "[[operations]]",
        f"include-path = {json.dumps(COMPARE_PATH)}",
        'include-method = "GET"',
        "[operations.checks.positive_data_acceptance]",
        'expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]',
    ]
    return "\n".join(lines) + "\n"


@dataclass
class FuzzResult:
    cases: int = 0
    """Test cases schemathesis generated and sent."""
    by_phase: dict[str, int] = field(default_factory=dict)
    by_status: dict[str, int] = field(default_factory=dict)
    """Responses by status code."""
    server_errors: int = 0
    """Responses of 500 or more."""
    failures: list[dict[str, str]] = field(default_factory=list)
    """Unique check failures: operation, check, message."""
    poisoned: dict[str, dict[str, int]] = field(default_factory=dict)
    """Requests carrying a bad record the schema cannot describe (``_fuzz_poison``), by kind
    and status code."""
    errors: int = 0
    """Scenarios that errored (a crash of the runner or the connection, not a check)."""
    seconds: float = 0.0
    report: str = ""

    def summary(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "by_phase": self.by_phase,
            "by_status": self.by_status,
            "server_errors": self.server_errors,
            "check_failures": len(self.failures),
            "failures": self.failures,
            "poisoned": self.poisoned,
            "errors": self.errors,
            "seconds": round(self.seconds, 1),
        }


def _decode(payload: Any) -> str:
    if isinstance(payload, dict) and "$base64" in payload:
        return base64.b64decode(payload["$base64"]).decode("utf-8", "replace")
    return "" if payload is None else str(payload)


def read_report(path: Path) -> FuzzResult:
    """Counts from schemathesis' NDJSON report."""
    result = FuzzResult(report=str(path))
    phases: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    poisoned: Counter[tuple[str, str]] = Counter()
    seen: set[tuple[str, str, str]] = set()
    for line in path.read_text(encoding="utf-8").split("\n"):  # (not at U+2028 in a string)
        if not line.strip():
            continue
        event = json.loads(line)
        done = event.get("ScenarioFinished")
        if done is None:
            continue
        if done.get("status") == "error":
            result.errors += 1
        recorder = done.get("recorder", {})
        phases[done.get("phase", "?")] += len(recorder.get("cases", {}))
        for interaction in recorder.get("interactions", {}).values():
            response = interaction.get("response") or {}
            if "status_code" in response:
                statuses[str(response["status_code"])] += 1
                kind = _header(interaction.get("request", {}), POISON_HEADER)
                if kind is not None:
                    poisoned[(kind, str(response["status_code"]))] += 1
        for case_id, checks in recorder.get("checks", {}).items():
            for check in checks:
                if check.get("status") != "failure":
                    continue
                failure = check.get("failure_info", {}).get("failure", {})
                label = failure.get("operation") or recorder.get("label", "?")
                message = failure.get("title", "") + ": " + failure.get("message", "")
                key = (label, check["name"], message[:500])
                if key in seen:
                    continue
                seen.add(key)
                interaction = recorder.get("interactions", {}).get(case_id, {})
                request = interaction.get("request", {})
                response = interaction.get("response") or {}
                result.failures.append(
                    {
                        "operation": label,
                        "check": check["name"],
                        "message": message[:500],
                        "request": f"{request.get('method')} {request.get('uri', '')}"[:500],
                        "body": _decode(request.get("body"))[:500],
                        "status": str(response.get("status_code")),
                        "response": _decode(response.get("content"))[:500],
                    }
                )
    result.cases = sum(phases.values())
    result.by_phase = dict(phases)
    result.by_status = dict(sorted(statuses.items()))
    result.server_errors = sum(n for s, n in statuses.items() if int(s) >= 500)
    for (kind, status), n in sorted(poisoned.items()):
        result.poisoned.setdefault(kind, {})[status] = n
    return result


def _header(request: dict[str, Any], name: str) -> str | None:
    for key, value in (request.get("headers") or {}).items():
        if key.lower() == name.lower():
            return value[0] if isinstance(value, list) else str(value)
    return None


def run_schemathesis(
    url: str,
    workdir: Path,
    *,
    max_examples: int,
    max_seconds: float,
    seed: int | None = None,
) -> FuzzResult:
    """``schemathesis run`` against ``url`` (a server already up), every check and phase;
    bounded by ``max_seconds`` (and a hard stop a minute later)."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "schemathesis.toml"
    config.write_text(config_toml(max_examples=max_examples, max_seconds=max_seconds, seed=seed))
    reports = workdir / "report"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config),
        "run", f"{url}/openapi.json", "--checks", "all",
        "--phases", "examples,coverage,fuzzing,stateful",
        "--report", "ndjson", "--report-dir", str(reports), "--no-color",
    ]  # fmt: skip
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    start = time.perf_counter()
    with (workdir / "schemathesis.log").open("wb") as log:
        proc = subprocess.run(
            command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
            timeout=max_seconds + 120, check=False,
        )  # fmt: skip
    found = sorted(reports.glob("*.ndjson"))
    if not found:
        raise RuntimeError(
            f"schemathesis wrote no report (exit {proc.returncode}); see {workdir}/schemathesis.log"
        )
    result = read_report(found[-1])
    result.seconds = time.perf_counter() - start
    return result


def _access_statuses(log: Path) -> Counter[int]:
    """Statuses in the server's structured access log (one JSON line per request)."""
    out: Counter[int] = Counter()
    # split on newlines only: a logged path may hold U+2028 or \x85, which splitlines() breaks on
    for line in log.read_text(encoding="utf-8", errors="replace").split("\n"):
        if '"event": "request"' in line:
            try:
                out[int(json.loads(line)["status"])] += 1
            except (ValueError, KeyError):
                continue
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.service_fuzz", description=__doc__)
    parser.add_argument("--max-examples", type=int, default=100, help="per operation and phase")
    parser.add_argument("--max-seconds", type=float, default=1800, help="schemathesis' time limit")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)

    from benchmarks.common import Server, default_index, write_result

    index = default_index()
    tmp = Path(tempfile.mkdtemp(prefix="leakage-fuzz-"))
    home = tmp / "home"
    home.mkdir()
    settings = {
        "LEAKAGE_PRELOAD": "cooccurrence,embedding",
        "LEAKAGE_BACKENDS": "cooccurrence,embedding",
        "LEAKAGE_REPORT_CACHE_BYTES": "0",
        "LEAKAGE_API_KEYS": None,  # the fuzzer sends no key
        "LEAKAGE_BODY_TIMEOUT": str(WIRE_BODY_TIMEOUT),
    }
    server_log = tmp / "server.log"
    with Server(home, index, settings, log=server_log, ready_seconds=180) as server:
        print(f"fuzzing {server.url} (LEAKAGE_HOME={home}) ...", flush=True)
        result = run_schemathesis(
            server.url, tmp / "schemathesis", max_examples=args.max_examples,
            max_seconds=args.max_seconds, seed=args.seed,
        )  # fmt: skip
        from benchmarks._fuzz_wire import run_wire

        wire = run_wire(server.url, WIRE_BODY_TIMEOUT)
    logged = _access_statuses(server_log)
    summary = result.summary()
    summary["wire"] = wire
    summary["server_log_requests"] = sum(logged.values())
    # the stalled bodies' 503s are what the service promises them
    summary["server_log_5xx"] = sum(n for s, n in logged.items() if s >= 500) - wire["expected_5xx"]
    print(json.dumps({k: v for k, v in summary.items() if k != "failures"}, indent=2))
    for problem in wire["problems"]:
        print(f"FAILED wire: {problem}")
    for f in result.failures:
        print(f"FAILED {f['operation']} {f['check']}: {f['message'][:200]}")
        print(f"    {f['request'][:200]}\n    -> {f['status']} {f['response'][:200]}")
    write_result(
        "service_fuzz",
        {"max_examples": args.max_examples, "max_seconds": args.max_seconds, "seed": args.seed},
        summary,
    )
    ok = not result.failures and not result.server_errors and not summary["server_log_5xx"]
    ok = ok and not wire["problems"]
    print("no server error, no check failure" if ok else "FAILED", f"({result.cases:,} cases)")
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"kept {tmp}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
