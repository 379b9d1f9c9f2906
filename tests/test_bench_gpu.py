"""The GPU benchmark (``benchmarks/gpu.py``) on the CPU at tiny sizes: a handful of synthetic
games, random-weight models built from the bundled configurations, every part, the results
file's fields; and the skip without a CUDA device."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentence_transformers")

from benchmarks import BENCHMARKS, common, gpu
from benchmarks.__main__ import main as benchmarks_main

TINY = [
    "--device", "cpu", "--synthetic", "--games", "2", "--warmup-games", "0",
    "--statements", "24", "--warmup-statements", "0", "--posterior-games", "20",
]  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One tiny CPU run (the models built once, kept in its work folder), its results file
    written to a temporary folder instead of benchmarks/results."""
    root = tmp_path_factory.mktemp("gpu-bench")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(common, "RESULTS", root / "results")
        gpu.run([*TINY, "--work-dir", str(root / "models")])
    doc = json.loads((root / "results" / "gpu_cpu.json").read_text(encoding="utf-8"))
    return {"doc": doc, "models": root / "models"}


def test_registered() -> None:
    assert "gpu" in BENCHMARKS


def test_results_file_has_the_fields(smoke: dict[str, Any]) -> None:
    doc = smoke["doc"]
    assert doc["benchmark"] == "gpu_cpu"
    assert doc["parameters"]["games"] == 2 and doc["parameters"]["device"] == "cpu"
    r = doc["results"]
    assert r["device"]["device"] == "cpu" and r["device"]["device_name"]
    assert r["runtime"].startswith("torch ")
    assert r["precision"] in ("fp32", "bf16")  # auto: bf16 where the CPU has it natively
    assert r["random_weights"] is True
    assert "synthetic" in r["games"]["source"]
    for part in ("listener", "encoder", "posterior"):
        assert "error" not in r[part], r[part]
    listener = r["listener"]
    assert listener["games"] == 2 and listener["games_per_s"] > 0
    assert listener["info"]["device"] == "cpu"
    assert listener["info"]["precision"] == r["precision"]
    assert listener["rows_finite"] is True and listener["rows_shape_ok"] is True
    work = listener["work"]
    # The stand-in BPE keeps CK-Arena's prompt length (24.07 Gemma tokens with BOS) roughly.
    assert 15 < work["tokens_per_listener_prompt"] < 35
    assert work["decoder_tokens"] >= work["prompt_tokens"] > 0
    assert listener["model"]["vocab"] == 262144 and listener["model"]["hidden"] == 640
    assert listener["gflop_per_game"] > 0 and listener["tflop_per_s"] > 0
    encoder = r["encoder"]
    assert encoder["statements"] == 24 and encoder["statements_per_s"] > 0
    assert encoder["dimension"] == 384 and encoder["vectors_finite"] is True
    assert 5 < encoder["tokens_per_statement"] < 30
    posterior = r["posterior"]
    assert posterior["games"] == 20 and posterior["rows_from_listener"] == 2
    assert posterior["engine"]["games_per_s"] > 0
    assert posterior["score_transcript"]["games_per_s"] > 0


def test_random_weight_listener_scores(smoke: dict[str, Any]) -> None:
    """The random-weight Gemma-shaped model, through the library's listener: finite scores,
    one row per statement and one column per candidate."""
    from leakage.backends import create_backend
    from leakage.llm import LocalLM

    llm = LocalLM(str(smoke["models"] / "gemma-3-270m-random"), device="cpu")
    assert llm.info()["vocab_size"] == 262144
    backend = create_backend("listener", client=llm)
    games = gpu.synthetic_games(1, seed=5)
    backend.prepare([(g.texts, g.candidates, None) for g in games])
    for g in games:
        rows = backend.loglik(g.texts, g.candidates)
        assert rows.shape == (len(g.turns), 2)
        assert np.isfinite(rows).all()


def test_synthetic_games_have_ck_arenas_shape() -> None:
    games = gpu.synthetic_games(400, seed=1)
    assert games == gpu.synthetic_games(400, seed=1)
    assert 12.5 < np.mean([len(g.turns) for g in games]) < 13.7  # CK-Arena: 13.11
    assert all(len(g.players) == 6 and len(g.spies) == 2 for g in games)
    texts = [t for g in games for t in g.texts]
    assert len(set(texts)) == len(texts)  # prepare reads each distinct prompt once
    more = gpu.more_games(games[:3], 7)
    assert len(more) == 7 and len({t for g in more for t in g.texts}) == sum(
        len(g.turns) for g in more
    )


def test_configs_are_small_and_carry_no_weights() -> None:
    files = [p for p in gpu.CONFIGS.rglob("*") if p.is_file()]
    assert files and all(p.stat().st_size < 8192 for p in files)
    assert all(p.suffix in (".json", ".md") for p in files)


def _no_cuda() -> bool:
    import torch

    return not torch.cuda.is_available()


@pytest.mark.skipif(not _no_cuda(), reason="a CUDA device is here: the benchmark would run")
def test_skips_without_cuda(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(common.Skip, match=r"no CUDA device is present.*--device cpu"):
        gpu.run([])
    assert benchmarks_main(["gpu"]) == 0
    out = capsys.readouterr().out
    assert "gpu: skipped: no CUDA device is present" in out


def test_the_larger_listener_shape_is_llama_3_1_8b() -> None:
    """``--listener-config llama-3.1-8b`` builds Llama-3.1-8B's shape: counted on the meta
    device (no memory), 8.03B parameters, 6.98B of them outside the two embeddings."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    args = gpu.parse(["--listener-config", "llama-3.1-8b"])
    assert args.listener_config == "llama-3.1-8b"
    config = AutoConfig.from_pretrained(str(gpu.CONFIGS / args.listener_config))
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    embeddings = model.get_input_embeddings().weight.numel() * 2  # untied output
    assert total == 8_030_261_248
    assert total - embeddings == 6_979_588_096
    assert config.rope_parameters["rope_type"] == "llama3"
