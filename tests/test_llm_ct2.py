"""``CTranslate2LM`` (the LLM client kind ``ctranslate2``) against ``LocalLM`` on the real
bundled models: float32 gives torch fp32's scores (within what fp32 arithmetic promises for
these models, ``tests/numerics.py``), int8 close to them, the listener the same ranking; the
device policy; a conversion killed half-way is never used.

SmolLM2-135M is converted from its GGUF once for the module (shared by both clients), then to
CTranslate2 float32 and int8 (about 10 s each); Gemma-3-270M once, for the listener (about
50 s with its conversions). About 2 min in all on 2 cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage.errors import BackendUnavailable, DeviceUnavailable, InvalidInput
from leakage.llm import LLMClient, LocalLM, open_llm

from .test_llm_local import scores_atol

pytest.importorskip("ctranslate2")
torch = pytest.importorskip("torch")

from leakage.llm._ct2 import CTranslate2LM, _source_key, ensure_ct2_converted  # noqa: E402

PROMPTS = [
    'Category: Sports. Secret word: Tennis. When people hear the word "Tennis", '
    'the first word that comes to mind is "',
    "Description: A sport played with an oval-shaped ball.\nThe word being described is:",
    "Secret word: Golf. The player says: ",  # a trailing space, moved into each continuation
    "Description: \nThe word being described is:  ",  # two
    "",
]
CONTINUATIONS = [
    " rugby",
    'racket"',
    " pomegranate",  # several tokens: read one prompt pass per prefix
    'a long green course with holes and flags, walked for hours"',  # long: score_batch
    "",
]

INT8_ATOL = 2.0
"""How far int8 scores may be from torch fp32's here, in nats per continuation token.
Measured on this CPU (AMD EPYC, AVX-512): SmolLM2 on these prompts up to 1.24 a token (mean
0.19), Gemma on listener prompts up to 1.18 for one token and 2.45 over ten (0.25 a token):
int8 weights, and int8 activations quantised on the fly in every matrix product, the 49k- or
262k-row output embedding included, move each log-probability by tenths of a nat, sometimes
more than one (docs/benchmarks.md measured a mean |Δ| of 0.55 on the PMI entries of CK-Arena
games). Another CPU's int8 kernels (AVX2, VNNI) round otherwise, hence the margin; scores
from a misread token or a misaligned vocabulary are off by 5 to 20 nats. What must survive
is the ranking (the listener test)."""


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ct2-models")


@pytest.fixture(scope="module")
def smol_torch(models: Path) -> LocalLM:
    return LocalLM("smollm2-135m", precision="fp32", device="cpu", models_dir=models)


@pytest.fixture(scope="module")
def smol_f32(models: Path, smol_torch: LocalLM) -> CTranslate2LM:
    return CTranslate2LM("smollm2-135m", compute_type="float32", device="cpu", models_dir=models)


@pytest.fixture(scope="module")
def smol_int8(models: Path, smol_torch: LocalLM) -> CTranslate2LM:
    return CTranslate2LM("smollm2-135m", compute_type="int8", device="cpu", models_dir=models)


def test_is_an_llm_client_and_says_what_it_runs(smol_f32: CTranslate2LM, models: Path):
    assert isinstance(smol_f32, LLMClient)
    info = smol_f32.info()
    assert info["backend"] == "ctranslate2" and info["compute_type"] == "float32"
    assert info["device"] == "cpu" and str(info["runtime"]).startswith("ctranslate2 4.")
    assert info["vocab_size"] == 49152 and info["threads"] == smol_f32.threads
    assert Path(str(info["model_dir"])).parent == models / "smollm2-135m"  # beside the GGUF's


def test_float32_scores_are_torch_fp32s(smol_f32: CTranslate2LM, smol_torch: LocalLM):
    """The same token ids (BOS, trailing spaces moved, the boundary split) and the same
    arithmetic: score_many, score_each and score agree with LocalLM in fp32, for one-token,
    several-token (prompt pass per prefix) and long (score_batch) continuations, and an
    empty one scores 0."""
    lengths = [len(smol_torch.tokenizer(c)["input_ids"]) for c in CONTINUATIONS]
    assert not smol_f32._by_prefix(20, max(lengths)) and smol_f32._by_prefix(20, 2)
    desired = smol_torch.score_many(PROMPTS, CONTINUATIONS)
    actual = smol_f32.score_many(PROMPTS, CONTINUATIONS)
    assert actual.shape == (len(PROMPTS), len(CONTINUATIONS))
    atol = scores_atol(smol_torch, desired)  # other batch shapes round otherwise too
    np.testing.assert_allclose(actual, desired, rtol=0, atol=atol)
    # an empty continuation scores 0, unless the prompt's trailing spaces moved into it
    assert (actual[[0, 1, 4], -1] == 0).all() and (actual[[2, 3], -1] < 0).all()
    each = smol_f32.score_each([(p, CONTINUATIONS[i:]) for i, p in enumerate(PROMPTS)])
    for i, row in enumerate(each):
        np.testing.assert_allclose(row, actual[i, i:], rtol=0, atol=atol)
    assert smol_f32.score(PROMPTS[2], CONTINUATIONS) == pytest.approx(list(actual[2]), abs=atol)
    groups = smol_f32.score_groups([(PROMPTS[:2], CONTINUATIONS[:2]), ([], ["x"]), (PROMPTS, [])])
    assert [g.shape for g in groups] == [(2, 2), (0, 1), (5, 0)]
    np.testing.assert_allclose(groups[0], actual[:2, :2], rtol=0, atol=atol)


def test_int8_scores_are_close(smol_int8: CTranslate2LM, smol_torch: LocalLM):
    desired = smol_torch.score_many(PROMPTS, CONTINUATIONS)
    actual = smol_int8.score_many(PROMPTS, CONTINUATIONS)
    assert smol_int8.info()["compute_type"] == "int8"
    tokens = np.array(
        [
            [len(c) for c in row]
            for row in smol_torch._tokenize_groups([(PROMPTS, CONTINUATIONS)])[0][1]
        ]
    )
    error = np.abs(actual - desired)
    assert (error <= INT8_ATOL * np.maximum(tokens, 1)).all()
    assert error.max() > 1e-3  # quantised: not the float32 model


def test_generation_is_torchs_greedy(smol_f32: CTranslate2LM, smol_torch: LocalLM):
    prompt = "The capital of France is"
    ours = smol_f32.generate(prompt, max_tokens=8, top_logprobs=2)
    theirs = smol_torch.generate(prompt, max_tokens=8, top_logprobs=2)
    assert ours.text == theirs.text and ours.prompt_tokens == theirs.prompt_tokens
    assert ours.top_logprobs is not None and len(ours.top_logprobs) == ours.completion_tokens
    assert ours.top_logprobs[0].keys() == theirs.top_logprobs[0].keys()  # type: ignore[index]
    cut = smol_f32.generate(prompt, max_tokens=8, stop=".")
    assert "." not in cut.text and cut.text == ours.text.split(".")[0]
    a = smol_f32.generate(prompt, max_tokens=6, temperature=1.0, seed=3)
    assert a == smol_f32.generate(prompt, max_tokens=6, temperature=1.0, seed=3)


def test_open_llm_builds_and_shares_it(smol_int8: CTranslate2LM, models: Path):
    client = open_llm("smollm2-135m", kind="ctranslate2", device="cpu", models_dir=str(models))
    assert isinstance(client, CTranslate2LM) and client.compute_type == "int8"
    again = open_llm("smollm2-135m", kind="ctranslate2", device="cpu", models_dir=str(models))
    assert again is client
    fp32 = open_llm(
        "smollm2-135m", kind="ctranslate2", precision="fp32", device="cpu", models_dir=str(models)
    )
    assert fp32.info()["compute_type"] == "float32"
    with pytest.raises(InvalidInput, match="precision 'bf16'"):
        open_llm("smollm2-135m", kind="ctranslate2", precision="bf16")
    with pytest.raises(InvalidInput, match="normaliser is an option of the 'local'"):
        open_llm("smollm2-135m", kind="ctranslate2", normaliser="shortlist")


def test_devices_that_are_not_there(models: Path):
    with pytest.raises(DeviceUnavailable, match="cpu and cuda only"):
        CTranslate2LM("smollm2-135m", device="mps", models_dir=models)
    import ctranslate2

    missing = f"cuda:{ctranslate2.get_cuda_device_count()}"
    with pytest.raises(DeviceUnavailable, match=rf"{missing}.*device cpu or auto runs here"):
        CTranslate2LM("smollm2-135m", device=missing, models_dir=models)
    with pytest.raises(ValueError, match="device must be"):
        CTranslate2LM("smollm2-135m", device="tpu", models_dir=models)
    with pytest.raises(ValueError, match="compute_type must be"):
        CTranslate2LM("smollm2-135m", compute_type="int4", models_dir=models)


def test_without_ctranslate2_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import fails
    with pytest.raises(BackendUnavailable, match=r"pip install 'leakage\[llm\]'"):
        CTranslate2LM("smollm2-135m", device="cpu")


_HALF_WAY = """
import os, signal, sys
from pathlib import Path
from leakage.llm._ct2 import ensure_ct2_converted

def killed(folder, out, quantization):
    out.mkdir(parents=True)
    (out / "model.bin").write_bytes(b"half a model")
    os.kill(os.getpid(), signal.SIGKILL)

ensure_ct2_converted(Path(sys.argv[1]), "int8", Path(sys.argv[2]), convert=killed)
"""


def test_a_conversion_killed_half_way_is_not_used(tmp_path: Path):
    source, cache = tmp_path / "model", tmp_path / "cache"
    source.mkdir()
    (source / "config.json").write_text("{}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _HALF_WAY, str(source), str(cache)], env=env, check=False
    )
    assert done.returncode == -9
    assert not list(cache.glob("ct2-*"))  # only the scratch folder is left
    assert [p.name.startswith(".tmp-ct2-int8-") for p in cache.glob(".tmp-*")] == [True]
    calls: list[Path] = []

    def convert(folder: Path, out: Path, quantization: str) -> None:
        calls.append(folder)
        out.mkdir(parents=True)
        (out / "model.bin").write_bytes(b"a whole model")

    # a folder in the target's place without the marker (never complete) is replaced too
    target = cache / f"ct2-int8-{_source_key(source)}"
    target.mkdir()
    (target / "model.bin").write_bytes(b"half")
    assert ensure_ct2_converted(source, "int8", cache, convert=convert) == target
    assert (target / "model.bin").read_bytes() == b"a whole model" and len(calls) == 1
    assert ensure_ct2_converted(source, "int8", cache, convert=convert) == target
    assert len(calls) == 1  # converted once
    (source / "config.json").write_text('{"changed": 1}')  # other weights: another folder
    assert ensure_ct2_converted(source, "int8", cache, convert=convert) != target
    assert target.is_dir()  # its source folder is still there
    moved = source.rename(tmp_path / "moved")  # the source gone: its conversions go too
    newest = ensure_ct2_converted(moved, "int8", cache, convert=convert)
    assert [p.name for p in cache.glob("ct2-*")] == [newest.name]


CLEAR = {
    "A yellow fruit that monkeys love to eat.": "banana",
    "A sport played with an oval-shaped ball and tries.": "rugby",
    "A large grey animal with a trunk.": "elephant",
    "You play it with keys, black and white.": "piano",
}


def test_the_listener_on_gemma_ranks_as_torch_does(tmp_path_factory: pytest.TempPathFactory):
    """The listener's rows (clues x candidates, PMI against the empty description) through
    ``client_kind="ctranslate2"`` (int8, Gemma-3-270M) have the torch listener's shape and
    put the described word first for clear clues, in bulk (``prepare``) and clue by clue."""
    from leakage.backends import create_backend

    models = str(tmp_path_factory.mktemp("ct2-gemma"))
    ours = create_backend("listener", client_kind="ctranslate2", device="cpu", models_dir=models)
    theirs = create_backend("listener", precision="fp32", device="cpu", models_dir=models)
    assert ours.info()["llm"]["backend"] == "ctranslate2"  # type: ignore[attr-defined]
    clues, words = list(CLEAR), list(CLEAR.values())
    rows: dict[str, Any] = {}
    for name, backend in (("ours", ours), ("theirs", theirs)):
        one_by_one = backend.loglik(clues, words)
        backend.prepare([(clues, words, None)])  # type: ignore[attr-defined]
        rows[name] = backend.loglik(clues, words)
        np.testing.assert_allclose(rows[name], one_by_one, rtol=0, atol=1e-3)
    assert rows["ours"].shape == rows["theirs"].shape == (len(clues), len(words))
    assert rows["theirs"].argmax(axis=1).tolist() == list(range(len(clues)))
    assert rows["ours"].argmax(axis=1).tolist() == list(range(len(clues)))
    # two scores a PMI entry (measured: up to 1.30 on these clues)
    assert np.abs(rows["ours"] - rows["theirs"]).max() < 2 * INT8_ATOL


def test_without_bf16_the_default_local_client_is_int8(
    monkeypatch: pytest.MonkeyPatch, smol_int8: CTranslate2LM, models: Path
):
    """On a CPU without native bf16 a local model with no kind named runs CTranslate2 int8
    (docs/benchmarks.md); ``precision="fp32"`` keeps torch in fp32, one option away."""
    from leakage import _runtime

    monkeypatch.setattr(_runtime, "cpu_supports_bf16", lambda: False)
    client = open_llm("smollm2-135m", device="cpu", models_dir=str(models))
    assert isinstance(client, CTranslate2LM) and client.info()["precision"] == "int8"
    fp32 = open_llm("smollm2-135m", precision="fp32", device="cpu", models_dir=str(models))
    assert isinstance(fp32, LocalLM) and fp32.info()["precision"] == "fp32"
    monkeypatch.setattr(_runtime, "cpu_supports_bf16", lambda: True)
    assert isinstance(open_llm("smollm2-135m", device="cpu", models_dir=str(models)), LocalLM)
