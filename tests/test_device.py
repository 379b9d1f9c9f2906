"""The device policy (``leakage._runtime``): ``auto | cpu | cuda | cuda:N | mps`` for every
model the project loads.

No GPU is at hand here (nor in CI), so the device path is proven on the CPU in two ways:

- every tensor the local LLM makes while scoring names its device: run with
  torch's default device set to ``meta``, a tensor created without one lands there and the
  call fails (a meta tensor has no data), so the scores coming out equal to today's means
  nothing was left to the default; on a GPU the same omission would put an index tensor on
  the CPU beside CUDA weights;
- what torch reports is faked (a CUDA build seeing one device) to check how ``auto``,
  ``cuda:N`` and the precision resolve, and what a missing device says.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from leakage import _runtime
from leakage._runtime import (
    CPU_BUDGET,
    GPU_BUDGET,
    check_device,
    open_model_runtime,
    pass_budget,
    resolve_device,
    resolve_precision,
)
from leakage.errors import BackendUnavailable, DeviceUnavailable

torch = pytest.importorskip("torch")

LISTENER = "Description: {}\nThe word being described is:"


@contextmanager
def default_device_meta() -> Iterator[None]:
    """Tensors made without a device land on ``meta`` (no data: using one fails)."""
    torch.set_default_device("meta")
    try:
        yield
    finally:
        torch.set_default_device(None)


@pytest.fixture(scope="module")
def lm(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from leakage.llm import LocalLM

    cache = tmp_path_factory.mktemp("device-models") / "smollm2"
    return LocalLM("smollm2-135m", precision="fp32", device="cpu", cache_dir=cache)


# -- the spellings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "spelled"),
    [("auto", "auto"), ("CPU", "cpu"), (" cuda ", "cuda"), ("cuda:3", "cuda:3"), ("mps", "mps")],
)
def test_a_device_is_one_of_the_policy_spellings(given: str, spelled: str) -> None:
    assert check_device(given) == spelled


@pytest.mark.parametrize("bad", ["gpu", "cuda:", "cuda:x", "cuda:-1", "tpu", "", "cpu:0"])
def test_any_other_spelling_is_a_value_error_naming_them(bad: str) -> None:
    with pytest.raises(ValueError, match=r"device must be auto, cpu, cuda, cuda:N or mps"):
        check_device(bad)


# -- resolving against what torch sees --------------------------------------------------------


def fake_torch(devices: int, *, cuda: str | None = "12.4", bf16: bool = True) -> Any:
    """torch as a CUDA build seeing ``devices`` GPUs (``cuda=None``: a CPU-only build)."""
    return SimpleNamespace(
        __version__="2.13.0",
        version=SimpleNamespace(cuda=cuda),
        cuda=SimpleNamespace(
            is_available=lambda: devices > 0,
            device_count=lambda: devices,
            current_device=lambda: 0,
            is_bf16_supported=lambda: bf16,
        ),
        backends=SimpleNamespace(
            mps=SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
        ),
    )


def test_auto_is_the_first_cuda_device_when_torch_sees_one_else_the_cpu() -> None:
    assert resolve_device("auto", fake_torch(2)) == "cuda:0"
    assert resolve_device("auto", fake_torch(0)) == "cpu"
    assert resolve_device("auto", torch) == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cuda", fake_torch(2)) == "cuda:0"
    assert resolve_device("cuda:1", fake_torch(2)) == "cuda:1"


def test_a_device_that_is_not_there_says_what_torch_found() -> None:
    with pytest.raises(DeviceUnavailable) as err:
        resolve_device("cuda:1", fake_torch(1))
    assert str(err.value) == (
        "device 'cuda:1' was asked for, but torch 2.13.0 (CUDA 12.4) sees 1 CUDA device "
        "(cuda:0); device cpu or auto runs here"
    )
    with pytest.raises(DeviceUnavailable, match="sees no CUDA device"):
        resolve_device("cuda", fake_torch(0))
    with pytest.raises(DeviceUnavailable, match=r"a CPU-only build\) cannot use one"):
        resolve_device("cuda", fake_torch(0, cuda=None))
    with pytest.raises(DeviceUnavailable, match=r"'mps' was asked for.*built without MPS"):
        resolve_device("mps", fake_torch(0))
    assert issubclass(DeviceUnavailable, BackendUnavailable)  # exit 3, a 503


def test_auto_precision_is_bf16_on_a_gpu_that_has_it() -> None:
    assert resolve_precision("auto", "cuda:0", fake_torch(1, bf16=True)) == "bf16"
    assert resolve_precision("auto", "cuda:0", fake_torch(1, bf16=False)) == "fp32"
    assert resolve_precision("auto", "mps") == "fp32"
    assert resolve_precision("fp32", "cuda:0", fake_torch(1)) == "fp32"
    cpu = "bf16" if _runtime.cpu_supports_bf16() else "fp32"
    assert resolve_precision("auto") == resolve_precision("auto", "cpu") == cpu


def test_the_budget_grows_with_the_device() -> None:
    assert pass_budget("cpu") is CPU_BUDGET
    assert pass_budget("cuda:0") is GPU_BUDGET
    for field in ("prompt_tokens", "step_tokens", "head_rows", "call_prompts", "encoder_tokens"):
        assert getattr(GPU_BUDGET, field) >= 16 * getattr(CPU_BUDGET, field)


def test_the_runtime_records_device_runtime_and_precision() -> None:
    runtime = open_model_runtime("x", "HINT", precision="fp32", device="cpu")
    described = runtime.describe()
    assert described["device"] == "cpu" and described["precision"] == "fp32"
    assert described["runtime"].startswith(f"torch {torch.__version__}")
    assert described["device_name"] == _runtime.cpu_name() != ""
    with pytest.raises(ValueError, match="device must be"):
        open_model_runtime("x", "HINT", device="gpu")


def test_asking_for_a_missing_device_fails_before_any_weights_load(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    from leakage.encoders import SentenceTransformerEncoder
    from leakage.llm import LocalLM

    with pytest.raises(DeviceUnavailable, match="'cuda' was asked for"):
        LocalLM("smollm2-135m", device="cuda", cache_dir=tmp_path / "never")
    assert not (tmp_path / "never").exists()  # the GGUF was not even converted
    with pytest.raises(DeviceUnavailable, match="'cuda:1' was asked for"):
        SentenceTransformerEncoder(device="cuda:1")


# -- the device path on the CPU ---------------------------------------------------------------


def test_every_tensor_the_local_llm_makes_names_its_device(lm: Any) -> None:
    """Listener (``score_each``), judge (``score_groups``: two groups, so their later tokens
    share one packed pass), the per-row path, the shortlist normaliser and generation, each
    with torch's default device on ``meta``: the scores are those of the plain run."""
    words = [" tennis", " basketballs", " golf clubs"]
    each = [(LISTENER.format(c), words) for c in ("a ball", "")]
    groups = [
        (["Secret: tennis.", "Secret: golf, a longer prompt"], [" racket", " green grass"]),
        (["Secret: chess."], [" a board of squares", " king"]),
    ]

    def run() -> list[Any]:
        lm._states.clear()
        out = [*lm.score_each(each), *lm.score_groups(groups)]
        window = lm._window
        lm._window = 1  # every prompt reaches the window: one row per continuation
        try:
            out += lm.score_groups(groups)
        finally:
            lm._window = window
        lm.normaliser = "shortlist"
        try:
            out += lm.score_each(each)
        finally:
            lm.normaliser = "exact"
        greedy = lm.generate("The capital of France is", max_tokens=4).text
        sampled = lm.generate("Name a fruit:", max_tokens=4, temperature=0.8, seed=3).text
        return [*out, greedy, sampled]

    plain = run()
    with default_device_meta():
        on_device = run()
    for a, b in zip(plain[:-2], on_device[:-2], strict=True):
        np.testing.assert_allclose(b, a, atol=1e-6)
    assert on_device[-2:] == plain[-2:]
    assert plain[0].shape == (3,) and np.all(np.isfinite(plain[0]))


def test_the_device_path_on_the_cpu_gives_todays_scores(lm: Any, tmp_path: Path) -> None:
    """``device="auto"`` on a machine without a GPU is the CPU, the same model and numbers."""
    if torch.cuda.is_available():
        pytest.skip("auto is a CUDA device here")
    from leakage.llm import LocalLM

    auto = LocalLM("smollm2-135m", precision="fp32", cache_dir=Path(lm.source).parent)
    assert auto.device == lm.device == "cpu"
    items = [(LISTENER.format("a racket sport"), [" tennis", " chess"])]
    lm._states.clear()
    np.testing.assert_array_equal(auto.score_each(items)[0], lm.score_each(items)[0])


def test_the_local_llm_reports_device_runtime_and_precision(lm: Any) -> None:
    info = lm.info()
    assert info["device"] == "cpu" and info["precision"] == "fp32" and info["dtype"] == "float32"
    assert info["runtime"].startswith("torch ") and info["device_name"]
    assert lm.call_prompts == CPU_BUDGET.call_prompts


def test_the_encoder_runs_on_its_device_in_token_budget_batches() -> None:
    """sentence-transformers moves each batch to the model's device itself (its tokenizer
    makes the tensors, so the ``meta`` check does not apply): the model is where it was
    asked to be, and batches cut by another budget give the same vectors."""
    from leakage.encoders import SentenceTransformerEncoder

    small = SentenceTransformerEncoder(device="cpu", precision="fp32", batch_tokens=64)
    whole = SentenceTransformerEncoder(device="cpu", precision="fp32")
    assert str(small._model.device) == "cpu" and whole.batch_tokens == CPU_BUDGET.encoder_tokens
    texts = ["a", "a much longer sentence about the game of tennis and its rackets", "chess"] * 9
    np.testing.assert_allclose(small.encode_batch(texts), whole.encode_batch(texts), atol=1e-5)
    info = small.info()
    assert info["device"] == "cpu" and info["batch_tokens"] == 64 and info["runtime"]


def test_encoder_batches_hold_the_token_budget() -> None:
    from leakage.encoders._st import token_batches

    lengths = [5, 40, 3, 12, 12, 200, 7]
    batches = token_batches(lengths, 40)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert max(lengths[i] for i in b) * len(b) <= 40 or len(b) == 1
    assert [lengths[b[0]] for b in batches] == sorted(lengths[b[0]] for b in batches)
    assert token_batches([], 10) == []
