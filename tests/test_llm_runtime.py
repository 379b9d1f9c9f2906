"""The preamble every model load shares (``leakage._runtime``): the sentence encoder, the local
LLM and the GGUF conversion set up torch through ``open_model_runtime`` and read weights
through ``load_local_weights``; what each says when something is missing is unchanged."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from leakage import _runtime
from leakage._runtime import load_local_weights, open_model_runtime
from leakage.errors import BackendUnavailable

pytest.importorskip("torch")


@pytest.fixture
def without(monkeypatch: pytest.MonkeyPatch):
    """``without(name)``: importing the module ``name`` fails, as if it were not installed."""
    real = importlib.import_module

    def make(*names: str) -> None:
        def import_module(name: str, *args: Any) -> Any:
            if name in names:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return real(name, *args)

        monkeypatch.setattr(_runtime.importlib, "import_module", import_module)

    return make


def test_the_runtime_resolves_the_precision_and_sets_the_threads():
    import torch

    before = torch.get_num_threads()
    try:
        runtime = open_model_runtime("x needs torch", "HINT", precision="fp32", threads=1)
        assert runtime.torch is torch and runtime.threads == 1
        assert runtime.precision == "fp32" and runtime.dtype is torch.float32
        assert open_model_runtime("x", "HINT", precision="bf16").dtype is torch.bfloat16
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="precision must be auto, fp32 or bf16"):
        open_model_runtime("x", "HINT", precision="fp64")


def test_a_missing_module_is_unavailable_with_the_install_hint(without):
    without("no_such_module_xyz")
    with pytest.raises(BackendUnavailable) as err:
        open_model_runtime("y needs z ({missing} missing)", "HINT", modules=["no_such_module_xyz"])
    assert str(err.value) == "y needs z (no_such_module_xyz missing): HINT"


def test_each_loader_says_what_it_needs(without, tmp_path: Path):
    from leakage.encoders._st import SentenceTransformerEncoder
    from leakage.llm import LocalLM
    from leakage.llm._gguf import convert_gguf

    without("sentence_transformers", "accelerate")
    with pytest.raises(BackendUnavailable, match=r"^the embedding backend needs torch and sen"):
        SentenceTransformerEncoder()
    with pytest.raises(
        BackendUnavailable,
        match=r"^converting a GGUF model needs torch, transformers, gguf and accelerate "
        r"\(accelerate missing\): pip install 'leakage\[llm\]'",
    ):
        convert_gguf(tmp_path / "m.gguf", tmp_path / "out")
    without("transformers")
    with pytest.raises(BackendUnavailable, match=r"^the local LLM backend needs torch and trans"):
        LocalLM("smollm2-135m", cache_dir=tmp_path)


def test_weights_are_read_from_this_machine_only():
    asked: list[tuple[str, dict[str, Any]]] = []

    def load(path: str, **kw: Any) -> str:
        asked.append((path, kw))
        return "model"

    assert load_local_weights(load, Path("/m"), not_here=str) == "model"
    assert asked == [("/m", {"local_files_only": True})]

    def missing(path: str, **kw: Any) -> str:
        raise OSError("We couldn't connect to the hub\nand more")

    with pytest.raises(BackendUnavailable, match=r"^gone \(OSError: We couldn't connect"):
        load_local_weights(missing, "org/m", not_here=lambda why: f"gone ({why})")
