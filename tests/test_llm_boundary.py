"""The transformers internals ``LocalLM`` relies on (leakage/llm/_local/_passes.py, _model.py,
_generate.py), checked on the installed transformers with tiny randomly initialised models
built in-process: nothing is downloaded or read from disk but what the test writes.

pyproject.toml bounds transformers to >=4.57,<6 (constraints.txt pins the tested release).
``from_pretrained(dtype=)``
(huggingface/transformers#39782) and ``DynamicCache(config=)`` building sliding-window layers
(#40039, #40276) arrived in 4.56, the per-layer cache with ``layers[i].keys/values`` (#39106)
in 4.54; but 4.56.0's ``get_decoder()`` returns None for causal LMs (#40815). 5.24 renames
the forward's ``past_key_values`` to ``cache`` (the old name warns, to go in 5.40): the passes
use the keyword the installed version's signature names (``cache_keyword``). These tests
pass on 4.57.0 and 5.24.0 and fail on 4.56.0 (naming get_decoder and the passes that use it). An
upgrade that changes one of them fails here, with the API named, before the judge's numbers
silently change.
"""

from __future__ import annotations

import copy
import inspect
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from leakage.llm._local._state import cache_keyword  # noqa: E402  (after the skips above)

VOCAB = 64


def _llama() -> Any:
    return transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )


def _gemma3() -> Any:
    """Gemma 3's text model (the bundled Gemma-3-270M): a sliding-window layer and a global one."""
    return transformers.Gemma3TextConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=8,
        max_position_embeddings=128,
        sliding_window=16,
        layer_types=["sliding_attention", "full_attention"],
    )


CONFIGS = {"llama": _llama, "gemma3": _gemma3}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def model(request: pytest.FixtureRequest) -> Any:
    torch.manual_seed(0)
    config = CONFIGS[request.param]()
    config._attn_implementation = "sdpa"
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def _api(name: str, ok: bool, detail: str = "") -> None:
    assert ok, f"transformers {transformers.__version__}: LocalLM relies on {name}; {detail}"


def _kv(module: Any, cache: Any) -> dict[str, Any]:
    """The cache as the keyword argument ``LocalLM`` passes it by."""
    return {cache_keyword(module): cache}


def _prompt_cache(model: Any, ids: Any) -> Any:
    """A prompt's KV cache the way ``_encode_prompts`` builds it."""
    cache = transformers.DynamicCache(config=model.config)
    with torch.inference_mode():
        model.get_decoder()(input_ids=ids, **_kv(model.get_decoder(), cache), use_cache=True)
    return cache


def test_the_forward_takes_the_cache_by_the_keyword_read_off_its_signature(model: Any):
    """``cache`` where the installed version names it (5.24 on), ``past_key_values`` before;
    the same for the decoder and the whole model (the scoring passes use the one, generation
    the other). The suite turns warnings into errors, so a deprecated name fails here too."""
    for module in (model, model.get_decoder()):
        keyword = cache_keyword(module)
        params = inspect.signature(module.forward).parameters
        _api(
            f"{type(module).__name__}.forward({keyword}=...)",
            keyword in params and keyword in ("cache", "past_key_values"),
            f"forward takes {sorted(params)}",
        )
    assert cache_keyword(model) == cache_keyword(model.get_decoder())


def test_get_decoder_is_the_base_model(model: Any):
    """Scoring runs the decoder without the head (``get_decoder()``) and projects only where
    needed; 4.56.0 returned None here for causal LMs (huggingface/transformers#40815)."""
    decoder = model.get_decoder()
    _api(
        "model.get_decoder() (the decoder stack without the LM head)",
        decoder is not None and decoder is model.model,
        f"got {type(decoder).__name__}",
    )


def test_the_attention_implementation_is_readable(model: Any):
    _api(
        "config._attn_implementation",
        getattr(model.config, "_attn_implementation", None) == "sdpa",
        "it decides between the packed (SDPA, boolean 4-D mask) and per-row passes",
    )


def test_a_dynamic_cache_exposes_its_layers_keys_and_values(model: Any):
    ids = torch.randint(0, VOCAB, (3, 5))
    cache = _prompt_cache(model, ids)
    layers = getattr(cache, "layers", None)
    _api("DynamicCache(config=...).layers", isinstance(layers, list | tuple), f"got {layers!r}")
    assert layers is not None
    _api("one cache layer per decoder layer", len(layers) == model.config.num_hidden_layers)
    for layer in layers:
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        _api(
            "DynamicCache.layers[i].keys / .values as (batch, heads, tokens, head_dim) tensors",
            isinstance(keys, torch.Tensor) and isinstance(values, torch.Tensor),
            f"layer {type(layer).__name__} has keys={type(keys)}, values={type(values)}",
        )
        assert isinstance(keys, torch.Tensor)
        _api(
            "cache layer keys of shape (batch, heads, tokens, head_dim)",
            keys.shape[:3] == (3, model.config.num_key_value_heads, 5),
            f"got {tuple(keys.shape)}",
        )


def test_a_dynamic_cache_built_from_per_layer_tensors(model: Any):
    """``_later_joint`` stacks rows of several prompt caches into one:
    ``DynamicCache(ddp_cache_data=[(keys, values) per layer], config=...)``."""
    ids = torch.randint(0, VOCAB, (2, 6))
    source = _prompt_cache(model, ids)
    data = [(x.keys.flip(0), x.values.flip(0)) for x in source.layers]
    try:
        built = transformers.DynamicCache(ddp_cache_data=data, config=model.config)
    except TypeError as err:
        _api("DynamicCache(ddp_cache_data=..., config=...)", False, str(err))
    _api("DynamicCache(ddp_cache_data=...) keeps the layer count", len(built.layers) == len(data))
    for layer, (keys, values) in zip(built.layers, data, strict=True):
        _api(
            "DynamicCache(ddp_cache_data=...) holds the given keys and values",
            torch.equal(layer.keys, keys) and torch.equal(layer.values, values),
        )
    with torch.inference_mode():  # and the decoder continues from it as from the original
        nxt = torch.randint(0, VOCAB, (2, 1))
        want = model(input_ids=torch.cat([ids.flip(0), nxt], 1)).logits[:, -1]
        got = model(input_ids=nxt, **_kv(model, built), use_cache=True).logits[:, -1]
    _api(
        "a DynamicCache built from tensors continues the sequence",
        torch.allclose(got, want, atol=1e-5),
    )


def test_batch_repeat_interleave_and_batch_select_indices(model: Any):
    ids = torch.randint(0, VOCAB, (1, 4))
    cache = _prompt_cache(model, ids)
    before = [x.keys.clone() for x in cache.layers]
    cache.batch_repeat_interleave(3)
    for layer, keys in zip(cache.layers, before, strict=True):
        _api(
            "DynamicCache.batch_repeat_interleave(n)",
            layer.keys.shape[0] == 3 and all(torch.equal(layer.keys[i], keys[0]) for i in range(3)),
            f"batch became {layer.keys.shape[0]}",
        )
    mixed = _prompt_cache(model, torch.randint(0, VOCAB, (3, 4)))
    rows = [x.keys.clone() for x in mixed.layers]
    mixed.batch_select_indices(torch.tensor([2, 0]))
    for layer, keys in zip(mixed.layers, rows, strict=True):
        _api(
            "DynamicCache.batch_select_indices(indices)",
            layer.keys.shape[0] == 2 and torch.equal(layer.keys, keys[[2, 0]]),
        )


def test_a_deep_copied_cache_is_independent(model: Any):
    """The continuation passes extend a deep copy; the kept prompt cache must not grow."""
    ids = torch.randint(0, VOCAB, (2, 4))
    cache = _prompt_cache(model, ids)
    copied = copy.deepcopy(cache)
    with torch.inference_mode():
        model.get_decoder()(
            input_ids=torch.randint(0, VOCAB, (2, 3)),
            **_kv(model.get_decoder(), copied),
            use_cache=True,
        )
    _api(
        "copy.deepcopy(DynamicCache) gives an independent cache",
        all(x.keys.shape[2] == 4 for x in cache.layers)
        and all(x.keys.shape[2] == 7 for x in copied.layers),
    )


def test_a_boolean_4d_mask_under_sdpa_scores_two_continuations_in_one_row(model: Any):
    """``_later_packed``: two continuations after one cached prompt in one row, each seeing
    the prompt and itself only (a block-diagonal boolean mask, positions restarting after
    the prompt), equal the two run on their own."""
    prompt = torch.randint(0, VOCAB, (1, 5))
    a, b = torch.randint(0, VOCAB, (1, 3)), torch.randint(0, VOCAB, (1, 2))
    decoder = model.get_decoder()
    with torch.inference_mode():
        want = [
            decoder(input_ids=torch.cat([prompt, c], 1)).last_hidden_state[0, 5:] for c in (a, b)
        ]
        cache = _prompt_cache(model, prompt)
        mask = torch.zeros((1, 1, 5, 10), dtype=torch.bool)
        mask[..., :5] = True
        mask[0, 0, :3, 5:8] = torch.ones((3, 3), dtype=torch.bool).tril()
        mask[0, 0, 3:, 8:] = torch.ones((2, 2), dtype=torch.bool).tril()
        got = decoder(
            input_ids=torch.cat([a, b], 1),
            attention_mask=mask,
            position_ids=torch.tensor([[5, 6, 7, 5, 6]]),
            **_kv(decoder, cache),
            use_cache=True,
        ).last_hidden_state[0]
    _api(
        "a boolean 4-D attention_mask with a KV cache and position_ids under SDPA",
        torch.allclose(got[:3], want[0], atol=1e-5) and torch.allclose(got[3:], want[1], atol=1e-5),
        "the packed continuation pass no longer equals separate passes",
    )


def test_logits_to_keep(model: Any):
    ids = torch.randint(0, VOCAB, (1, 6))
    with torch.inference_mode():
        full = model(input_ids=ids).logits
        last = model(input_ids=ids, logits_to_keep=1).logits
    _api(
        "model(..., logits_to_keep=1) (generation)",
        last.shape[1] == 1 and torch.allclose(last[0, -1], full[0, -1], atol=1e-5),
    )


def test_from_pretrained_takes_dtype(model: Any, tmp_path: Path):
    """``from_pretrained(dtype=torch.bfloat16)`` loads in bf16 (before 4.56 the keyword was
    ``torch_dtype`` and ``dtype`` was not understood: the model would load in float32)."""
    model.save_pretrained(tmp_path)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, dtype=torch.bfloat16, local_files_only=True
    )
    _api(
        "AutoModelForCausalLM.from_pretrained(dtype=...)",
        loaded.dtype == torch.bfloat16,
        f"loaded as {loaded.dtype}",
    )
