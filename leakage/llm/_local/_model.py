"""``LocalLM``: loading a causal LM (bundled, GGUF, folder or hub name already here), what
it is, and its parts put together (scoring, generation)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from leakage._runtime import RuntimeChoice, load_local_weights, open_model_runtime
from leakage.llm._gguf import (
    DEFAULT_MODEL,
    GEMMA,
    INSTALL_HINT,
    SMOLLM2,
    default_cache_dir,
    ensure_converted,
    resolve_source,
)
from leakage.llm._local._generate import _eos_ids, _Generation
from leakage.llm._local._head import NORMALISERS
from leakage.llm._local._score import _Scoring, boundary_specials
from leakage.llm._local._state import _PromptStates, cache_keyword


class LocalLM(_Scoring, _Generation):
    """An ``LLMClient`` over a local causal LM (transformers).

    ``model``: ``"gemma-3-270m"`` (default), ``"smollm2-135m"``, a ``.gguf`` file, a
    transformers model folder, or a Hugging Face hub name already in the local cache (nothing
    is downloaded). ``device``: ``auto`` (a CUDA device when torch sees one, else the CPU),
    ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (``leakage._runtime``: one that is not there is
    ``DeviceUnavailable``); passes are cut by the device's token budget
    (``leakage._runtime.PassBudget``). ``precision``: ``fp32``, ``bf16``, or ``auto`` (bf16
    on a GPU that has it and where the CPU has native bf16 arithmetic). ``normaliser``:
    ``exact`` (default: log Σ exp over the whole vocabulary) or ``shortlist`` (exact over the
    tokens that a low-rank approximation of the output embedding ranks highest, the
    approximation elsewhere: about 1.5x faster for Gemma on a CPU without bf16, approximate;
    docs/llm.md gives its measured error). ``threads``
    sets torch's intra-op threads (process-wide).
    ``cache_dir`` holds the converted GGUF folder (default ``<models_dir>/<name>``, and
    ``models_dir`` defaults to ``$LEAKAGE_HOME/models``: ``Paths.models``).
    ``seed`` seeds the sampler used when ``temperature > 0``. ``prompt_cache``: how many
    encoded prompts (KV states) are kept between ``score_many`` calls, so that games over the
    same candidates encode their prompts once (about 0.6 MB per Gemma prompt of 35 tokens;
    512 covers 32 cards of 16 words; 0 keeps none).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        precision: str = "auto",
        threads: int | None = None,
        cache_dir: str | Path | None = None,
        seed: int = 0,
        prompt_cache: int = 512,
        normaliser: str = "exact",
        models_dir: str | Path | None = None,
        device: str = "auto",
    ) -> None:
        if normaliser not in NORMALISERS:
            raise ValueError(f"normaliser must be one of {', '.join(NORMALISERS)}")
        runtime = open_model_runtime(
            "the local LLM backend needs torch and transformers",
            INSTALL_HINT,
            precision=precision,
            threads=threads,
            device=device,
        )
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch = self._torch = runtime.torch
        source = resolve_source(model)
        self.name = source.name
        self.converted_from: str | None = None
        load_from: str
        if source.gguf is not None:
            cache = (
                Path(cache_dir)
                if cache_dir
                else default_cache_dir(source.gguf.name, models_dir=models_dir)
            )
            folder = ensure_converted(source.gguf, cache)
            load_from, self.converted_from = str(folder), source.gguf.origin
        elif source.folder is not None:
            load_from = str(source.folder)
        else:
            load_from = str(source.hub_id)
        self.source = load_from
        self.threads = runtime.threads
        self.precision = runtime.precision
        self.device = runtime.device
        self._runtime = runtime
        self._budget = runtime.budget

        def load(path: str, **kw: Any) -> tuple[Any, Any]:
            tokenizer = AutoTokenizer.from_pretrained(path, **kw)
            return tokenizer, AutoModelForCausalLM.from_pretrained(path, dtype=runtime.dtype, **kw)

        def not_here(why: str) -> str:
            if source.hub_id is None:
                return f"{load_from}: cannot load the model ({why})"
            return (  # a hub name that is not in the local cache
                f"language model {model!r} is not on this machine and nothing is downloaded at "
                f"run time. Get the weights where the hub is reachable (`hf download {model} "
                "--local-dir DIR`), copy DIR here and pass it as the model, or put them in the "
                f"Hugging Face cache (HF_HOME). Bundled models: {GEMMA}, {SMOLLM2} ({why})"
            )

        self._tok: Any
        self._model: Any
        self._tok, self._model = load_local_weights(load, load_from, not_here=not_here)
        self._model.to(self.device).eval()
        self._config = self._model.config
        self._decoder = self._model.get_decoder()
        self._cache_kw = cache_keyword(self._decoder)
        self.normaliser = normaliser
        self._low_rank: tuple[Any, Any] | None = None  # see _low_rank_factors
        head = self._model.get_output_embeddings()
        self._head_w = head.weight
        self._head_b = getattr(head, "bias", None)
        self._softcap = float(getattr(self._config, "final_logit_softcapping", None) or 0.0)
        window = getattr(self._config, "sliding_window", None)
        self._window = int(window) - 1 if window else 1 << 62
        self._vocab_size = int(self._head_w.shape[0])
        self._raw: Any = None  # vocabulary-sized logit buffers, see _logits
        self._f32: Any = None
        self._approx: Any = None  # the same for the shortlist normaliser
        tok = self._tok
        model_type = str(getattr(self._config, "model_type", ""))
        self._bos, self._start = boundary_specials(tok, model_type)
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self._pad = int(pad or 0)
        self._eos = _eos_ids(self._model.generation_config.eos_token_id, tok.eos_token_id)
        self._generator = torch.Generator().manual_seed(seed)  # samples on the CPU
        self._lock = threading.Lock()
        self._cache_prompts = prompt_cache
        self._states: OrderedDict[tuple[tuple[int, ...], ...], _PromptStates] = OrderedDict()
        self._check_head(model)

    @property
    def call_prompts(self) -> int:
        """Prompts a bulk caller (the judge's ``prepare``) should hand ``score_each`` per
        call to fill this device: ``PassBudget.call_prompts`` (256 on a CPU)."""
        return self._budget.call_prompts

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer."""
        return self._tok

    @property
    def hf_model(self) -> Any:
        """The transformers causal LM (in eval mode)."""
        return self._model

    # -- reporting ------------------------------------------------------------------------

    @property
    def runtime(self) -> RuntimeChoice:
        """Where and how this model runs: torch, its device and precision."""
        return RuntimeChoice("local", self.device, self.precision)

    def info(self) -> dict[str, object]:
        return {
            "model": self.name,
            "backend": "transformers",
            "source": self.source,
            "converted_from": self.converted_from,
            **self._runtime.describe(),
            "normaliser": self.normaliser,
            "dtype": str(self._model.dtype).removeprefix("torch."),
            "threads": self._torch.get_num_threads(),
            "vocab_size": self._vocab_size,
            "bos": bool(self._bos),
            "chat_template": bool(self._tok.chat_template),
        }
