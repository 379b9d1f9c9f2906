"""Which runtime a local model gets when none is named (``default_local_kind``), what holds
torch below AVX-512 (``cpu_isa_capped``), and the shipped ensemble fit that goes with the
rows its LLM members compute (``llm_rows``). The clients themselves: tests/test_llm_ct2.py."""

from __future__ import annotations

from typing import Any

import pytest

from leakage import _runtime
from leakage.backends.ensemble import (
    SHIPPED_WEIGHTS,
    default_weights_path,
    llm_rows,
    read_weights,
)
from leakage.llm import default_local_kind


@pytest.mark.parametrize(
    ("env", "capped"),
    [
        ({}, None),
        ({"ATEN_CPU_CAPABILITY": "avx2"}, "ATEN_CPU_CAPABILITY=avx2"),
        ({"ATEN_CPU_CAPABILITY": "default"}, "ATEN_CPU_CAPABILITY=default"),
        ({"ATEN_CPU_CAPABILITY": "avx512"}, None),
        ({"ONEDNN_MAX_CPU_ISA": "avx2"}, "ONEDNN_MAX_CPU_ISA=AVX2"),
        ({"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_VNNI"}, "ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI"),
        ({"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16"}, None),
        ({"ONEDNN_MAX_CPU_ISA": "ALL"}, None),
    ],
)
def test_what_holds_torch_below_bf16(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], capped: str | None
):
    for name in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _runtime.cpu_isa_capped() == capped
    if capped:  # a CPU with bf16, held below it, computes as one without
        assert not _runtime.cpu_supports_bf16()


@pytest.fixture
def no_bf16_cpu(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(_runtime, "cpu_supports_bf16", lambda: False)
    monkeypatch.setattr(_runtime, "cuda_may_be_present", lambda: False)
    return monkeypatch


def test_int8_is_the_default_only_where_the_cpu_lacks_bf16(no_bf16_cpu: pytest.MonkeyPatch):
    pytest.importorskip("ctranslate2")
    assert default_local_kind() == "ctranslate2"
    assert default_local_kind(device="cpu", threads=2, models_dir="/m") == "ctranslate2"
    # one option away: torch fp32 (or bf16), and options only torch's client takes
    assert default_local_kind(precision="fp32") == "local"
    assert default_local_kind(precision="bf16") == "local"
    assert default_local_kind(normaliser="shortlist") == "local"
    # a GPU, or MPS, runs torch
    assert default_local_kind(device="cuda") == "local"
    assert default_local_kind(device="mps") == "local"
    no_bf16_cpu.setattr(_runtime, "cpu_supports_bf16", lambda: True)
    assert default_local_kind() == "local"


def test_without_ctranslate2_torch_runs(no_bf16_cpu: pytest.MonkeyPatch):
    no_bf16_cpu.setattr(_runtime, "find_spec", lambda name: None)
    assert default_local_kind() == "local"


def test_the_llm_layer_opens_the_client_the_decision_names(no_bf16_cpu: pytest.MonkeyPatch):
    """``default_local_kind`` is ``decide_runtime``'s client: one decision, in one place."""
    pytest.importorskip("ctranslate2")
    decided = _runtime.decide_runtime()
    assert decided == _runtime.RuntimeChoice("ctranslate2", "auto", "int8")
    assert decided.rows == "int8" and default_local_kind() == decided.client
    assert _runtime.decide_runtime("cpu", "fp32") == _runtime.RuntimeChoice("local", "cpu", "fp32")
    assert _runtime.decide_runtime(ctranslate2_takes=False).client == "local"


def test_auto_is_the_cpu_only_without_cuda(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_runtime, "cuda_may_be_present", lambda: False)
    assert _runtime.device_is_cpu("auto") and _runtime.device_is_cpu("cpu")
    assert not _runtime.device_is_cpu("cuda:1") and not _runtime.device_is_cpu("mps")
    with pytest.raises(ValueError, match="device must be"):
        _runtime.device_is_cpu("gpu")


class _Member:
    def __init__(self, runtime: _runtime.RuntimeChoice | None) -> None:
        self.runtime = runtime

    def info(self) -> dict[str, Any]:
        # what info() says is not what the fit is chosen by
        return {"backend": "x", "llm": {"backend": "ctranslate2", "precision": "int8"}}


def test_the_fit_follows_the_rows_the_llm_members_compute():
    torch_rows = _runtime.RuntimeChoice("local", "cpu", "fp32")
    ct2 = _runtime.RuntimeChoice("ctranslate2", "cpu", "int8")
    assert llm_rows({"a": _Member(None), "b": _Member(torch_rows)}) == ""
    assert llm_rows({"a": _Member(None), "b": _Member(ct2)}) == "int8"
    int8_f32 = _runtime.RuntimeChoice("ctranslate2", "cpu", "int8_float32")
    assert llm_rows({"b": _Member(int8_f32)}) == "int8"
    # CTranslate2 float32 gives torch fp32's numbers, and its fit
    f32 = _runtime.RuntimeChoice("ctranslate2", "cpu", "float32")
    assert llm_rows({"b": _Member(f32)}) == ""


def test_both_shipped_fits_pool_the_same_members():
    """The int8 fit was made as the torch fit was (docs/benchmarks.md: `leakage calibrate` on
    CK-Arena statements, the word type on Codenames dev items, the sentence_card type on the
    dev words of `benchmarks.studies.chameleon_cards`), on int8 rows."""
    assert set(SHIPPED_WEIGHTS) == {"", "int8"}
    torch_fit = read_weights(default_weights_path())
    int8_fit = read_weights(default_weights_path("int8"))
    assert int8_fit.members == torch_fit.members
    assert (
        set(int8_fit.item_types)
        == set(torch_fit.item_types)
        == {
            "word",
            "sentence_card",
            "question_answer",
        }
    )
    assert int8_fit.weights["judge"] == 0 and int8_fit.weights["listener"] > 0
    # the answers member reads question-answer clues only (weight 0 on the other types)
    four = [n for n in int8_fit.members if n != "answers"]
    assert all(int8_fit.item_types["word"].weights[n] > 0 for n in four)
    assert int8_fit.item_types["word"].weights["answers"] == 0
    card, torch_card = int8_fit.item_types["sentence_card"], torch_fit.item_types["sentence_card"]
    assert all(card.weights[n] > 0 for n in four) and card.weights["answers"] == 0
    assert all(torch_card.weights[n] > 0 for n in four) and torch_card.weights["answers"] == 0
    assert card.fitted_on["member_info"]["judge"]["llm"]["precision"] == "int8"
    assert torch_card.fitted_on["member_info"]["judge"]["llm"]["precision"] == "fp32"
    assert card.fitted_on["member_info"]["listener"]["llm"]["precision"] == "int8"
    assert torch_card.fitted_on["member_info"]["listener"]["llm"]["precision"] == "fp32"
    assert card.scales != torch_card.scales  # fitted on int8 rows, not copied
    for name in ("listener", "judge"):
        assert int8_fit.member_info[name]["llm"]["backend"] == "ctranslate2"
        assert int8_fit.member_info[name]["llm"]["precision"] == "int8"
    assert int8_fit.weights != torch_fit.weights  # fitted, not copied


class _Client:
    """A client as the judge sees one: a name, its info() and, for a local one, its runtime."""

    name = "m"

    def __init__(self, runtime: _runtime.RuntimeChoice | None) -> None:
        if runtime is not None:
            self.runtime = runtime

    def info(self) -> dict[str, Any]:
        return {"model": self.name}


def test_the_judge_carries_and_records_its_clients_runtime():
    from leakage.backends.judge import JudgeBackend

    int8 = _runtime.RuntimeChoice("ctranslate2", "cpu", "int8")
    judge = JudgeBackend(_Client(int8), direction="listener")
    assert judge.runtime == int8 and llm_rows({"listener": judge}) == "int8"
    assert judge.info()["runtime"] == {
        "client": "ctranslate2", "device": "cpu", "precision": "int8", "rows": "int8"
    }  # fmt: skip
    endpoint = JudgeBackend(_Client(None))
    assert endpoint.runtime is None and "runtime" not in endpoint.info()
    assert llm_rows({"judge": endpoint}) == ""
