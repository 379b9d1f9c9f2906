"""``--device`` on every command that loads a model, ``LEAKAGE_DEVICE`` in the service, and
how a batch spreads its workers over GPUs: checked here, where torch sees no CUDA device
(nor in CI), through the same code paths a GPU machine takes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .cli_support import run_leakage
from .conftest import EXAMPLES

pytest.importorskip("torch")


def run(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_leakage(*args, home=home, env=env, timeout=300)


@pytest.fixture(scope="module")
def no_cuda() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")


GAME = str(EXAMPLES / "chameleon_sports.json")


@pytest.mark.parametrize(
    "args",
    [
        ("score", GAME, "-b", "embedding"),
        ("score", GAME, "-b", "listener"),
        ("score", GAME, "-b", "ensemble"),
        ("batch", GAME, "-b", "embedding", "--no-progress", "-o", "{tmp}/out"),
        ("calibrate", str(EXAMPLES / "chameleon_batch.jsonl"), "--members", "embedding"),
        ("vocab", "build", "--words", "{tmp}/words.txt", "--out", "{tmp}/vocab"),
        ("guess", "a racket sport"),
        ("splits", "build", "{tmp}/pairs.json", "-o", "{tmp}/splits", "--describer", "llm"),
        ("play", "chameleon", "--games", "1", "--agents", "non-chameleon=local,chameleon=local"),
        ("serve", "--port", "0"),
    ],
    ids=["score-embedding", "score-listener", "score-ensemble", "batch", "calibrate", "vocab",
         "guess", "splits", "play", "serve"],
)  # fmt: skip
def test_a_device_that_is_not_there_is_exit_3_with_one_line(
    args: tuple[str, ...], shared_home: Path, tmp_path: Path, no_cuda: None
) -> None:
    (tmp_path / "words.txt").write_text("tennis\nchess\n")
    (tmp_path / "pairs.json").write_text('[["tennis", "squash"], ["apple", "pear"]]')
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    p = run(*argv, "--device", "cuda", home=shared_home)
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    said = [line for line in p.stderr.splitlines() if "device 'cuda' was asked for" in line]
    assert len(said) == 1 and "CPU-only build" in said[0], p.stderr


def test_a_device_that_is_no_device_is_a_usage_error(shared_home: Path) -> None:
    p = run("score", GAME, "-b", "embedding", "--device", "gpu", home=shared_home)
    assert p.returncode == 2 and "device must be auto, cpu, cuda, cuda:N or mps" in p.stderr


def test_a_backend_without_models_takes_no_device(shared_home: Path) -> None:
    p = run("score", GAME, "--device", "cpu", home=shared_home)
    assert p.returncode == 2 and "device" in p.stderr


@pytest.mark.parametrize("flag", [("--device", "cpu"), ("--precision", "fp32")])
def test_a_model_option_for_an_endpoint_is_a_usage_error_not_a_traceback(
    flag: tuple[str, str], shared_home: Path
) -> None:
    """The endpoint's model runs elsewhere: a local model's option is refused in one line."""
    p = run(
        "score", GAME, "-b", "judge", "--llm-endpoint", "http://127.0.0.1:9", *flag,
        home=shared_home,
    )  # fmt: skip
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    said = p.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"error: {flag[0][2:]} is an option of the ")
    assert "'local'" in said[0] and "not of 'openai'" in said[0]


def test_the_device_runs_and_is_recorded_in_the_report(shared_home: Path) -> None:
    p = run("score", GAME, "-b", "embedding", "--device", "cpu", "-f", "json", home=shared_home)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)[0]["backend_info"]
    assert info["device"] == "cpu" and info["runtime"].startswith("torch ")
    assert info["precision"] in ("fp32", "bf16")


# -- batch: one worker per GPU ------------------------------------------------------------------


def test_workers_get_one_gpu_each() -> None:
    from leakage.batch._worker import ScorerSpec, worker_devices

    spec = ScorerSpec("embedding", {})
    assert worker_devices(spec, 2, 2) == ["cuda:0", "cuda:1"]
    assert worker_devices(spec, 3, 2) == ["cuda:0", "cuda:1", "cuda:0"]
    assert worker_devices(ScorerSpec("embedding", {}, device="cuda:1"), 2, 2) == ["cuda:1"] * 2
    assert worker_devices(ScorerSpec("embedding", {}, device="cpu"), 2, 2) == ["cpu", "cpu"]


def test_no_gpu_is_looked_for_where_no_model_loads() -> None:
    from leakage.batch._worker import ScorerSpec, loads_models, visible_gpus

    assert not loads_models("cooccurrence") and loads_models("embedding")
    assert loads_models("ensemble") and loads_models("listener")
    assert visible_gpus(ScorerSpec("cooccurrence", {})) == 0
    assert visible_gpus(ScorerSpec("embedding", {}, device="cpu")) == 0


def test_the_local_engine_hands_each_worker_its_gpu(
    shared_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_cuda: None
) -> None:
    """Two GPUs faked in the parent: the pool starts one worker per GPU, each building its
    backend on its own device; here torch has none, so each worker says which it was given
    and the run stops cleanly (exit 3 on the command line)."""
    from leakage.batch import BatchJob, _engines, run_batch
    from leakage.errors import DeviceUnavailable

    monkeypatch.setenv("LEAKAGE_HOME", str(shared_home))
    monkeypatch.setattr(_engines, "visible_gpus", lambda spec: 2)
    job = BatchJob(
        inputs=[GAME], out=tmp_path / "out", backend="embedding", workers=None, chunk_size=1
    )
    with pytest.raises(DeviceUnavailable, match=r"device 'cuda:[01]' was asked for"):
        run_batch(job)
    engine = _engines.local_engine(_engines.ScorerSpec("embedding", {}), None)
    try:
        assert isinstance(engine, _engines.ProcessEngine)
        assert engine.workers == 2 and engine.devices == ["cuda:0", "cuda:1"]
    finally:
        engine.close()


def test_ray_puts_one_actor_on_each_gpu() -> None:
    from leakage.batch._ray import gpu_plan
    from leakage.batch._worker import ScorerSpec
    from leakage.errors import DeviceUnavailable, InvalidInput

    listener = ScorerSpec("listener", {})
    assert gpu_plan(listener, 4.0, None) == (4, 1.0)  # one model per GPU
    assert gpu_plan(listener, 4.0, 2) == (2, 1.0)
    assert gpu_plan(listener, 0.0, None) == (1, 0.0)  # zero GPUs: CPU actors, same path
    assert gpu_plan(listener, 0.0, 3) == (3, 0.0)
    assert gpu_plan(ScorerSpec("cooccurrence", {}), 4.0, None) == (1, 0.0)
    assert gpu_plan(ScorerSpec("listener", {}, device="cpu"), 4.0, 2) == (2, 0.0)
    with pytest.raises(DeviceUnavailable, match="the Ray cluster has no GPU"):
        gpu_plan(ScorerSpec("listener", {}, device="cuda"), 0.0, None)
    with pytest.raises(InvalidInput, match="Ray assigns each actor its GPU"):
        gpu_plan(ScorerSpec("listener", {}, device="cuda:1"), 2.0, None)


# -- the service ------------------------------------------------------------------------------


def test_the_service_device_setting(tmp_path: Path, no_cuda: None) -> None:
    from leakage.errors import DeviceUnavailable, InvalidInput
    from leakage_service.runtime import Backends
    from leakage_service.server import check_device_setting
    from leakage_service.settings import Settings
    from leakage_service.telemetry import Metrics

    with pytest.raises(InvalidInput, match="LEAKAGE_DEVICE"):
        Settings.from_env({"LEAKAGE_DEVICE": "gpu", "LEAKAGE_HOME": str(tmp_path)})
    settings = Settings.from_env({"LEAKAGE_DEVICE": "CUDA:0", "LEAKAGE_HOME": str(tmp_path)})
    assert settings.device == "cuda:0"
    with pytest.raises(DeviceUnavailable, match="'cuda:0' was asked for"):
        check_device_setting(settings)
    backends = Backends(settings, Metrics())
    assert backends.options("embedding")["device"] == "cuda:0"
    assert backends.options("listener")["device"] == "cuda:0"
    assert "device" not in backends.options("cooccurrence")
    assert backends.options("ensemble")["judge"]["device"] == "cuda:0"
    auto = Backends(Settings.from_env({"LEAKAGE_HOME": str(tmp_path)}), Metrics())
    assert "device" not in auto.options("embedding")
    check_device_setting(auto.settings)  # auto: nothing to check
