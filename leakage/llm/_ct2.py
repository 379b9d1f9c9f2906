"""``CTranslate2LM``: the local causal LMs of ``LocalLM`` run by CTranslate2 (int8 on a CPU).

The LLM client kind ``ctranslate2`` (``open_llm(kind="ctranslate2")``, ``client_kind`` of the
judge and the listener), and the default local kind on a CPU without native bf16
(``leakage.llm.default_local_kind``). It is built from the same model names and paths as ``LocalLM``
(``gemma-3-270m``, ``smollm2-135m``, a GGUF file, a transformers folder, a hub name in the
local cache): the transformers folder (a GGUF is converted to one first, ``_gguf``) is
converted once more, to a CTranslate2 model, into ``ct2-<quantization>-<key>`` beside the
converted GGUF folder (``<models_dir>/<name>``), ``key`` naming the source folder and its
files. A conversion is written into a temporary folder and renamed into place once complete,
under a lock: a conversion killed half-way is never read.

Scores are ``LocalLM``'s, over the same token ids (``_BoundaryTokens``: BOS, the prompt's
trailing spaces moved into each continuation, the boundary split): Σ log P(continuation
tokens | prompt), natural log. CTranslate2 gives the raw logits at the last position of each
prompt (``generate_batch(max_length=1, include_prompt_in_result=False,
return_logits_vocab=True)`` over prompts of one token length, so the whole prompt goes through
the decoder in one pass and one position is projected onto the vocabulary); the normaliser is
computed here in numpy (a torch call between two CTranslate2 calls leaves torch's OpenMP
threads spinning on the cores CTranslate2 needs). A continuation's later tokens are read the
same way after the prompt and the continuation's first tokens (one prompt pass per prefix,
shared by the continuations that start alike), or, for long continuations, where that costs
more than projecting every position, from ``score_batch`` over prompt + continuation.

``compute_type``: ``int8`` (default: int8 weights and matrix products, the rest in float32 on
a CPU), ``int8_float32`` (the same on a CPU), ``float32`` (reproduces torch fp32 to 1e-5
nats) or ``auto`` (CTranslate2's fastest for the device). docs/benchmarks.md ("Quantised CPU
runtimes for the listener") measures int8 against torch fp32 on CK-Arena.

The device policy is the library's (``leakage._runtime``): ``auto`` (a CUDA device when
CTranslate2 sees one, else the CPU), ``cpu``, ``cuda``, ``cuda:N``; ``mps`` and a CUDA device
that is not there are ``DeviceUnavailable``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from leakage._runtime import (
    RuntimeChoice,
    check_device,
    cpu_name,
    open_model_runtime,
    pass_budget,
    prepare_model_runtime,
)
from leakage.errors import BackendUnavailable, DeviceUnavailable
from leakage.llm._base import Generation, GenerationParams, Message
from leakage.llm._gguf import (
    DEFAULT_MODEL,
    INSTALL_HINT,
    ModelSource,
    convert_once,
    default_cache_dir,
    ensure_converted,
    resolve_source,
)
from leakage.llm._local._generate import _eos_ids, _first_stop, prompt_tokens
from leakage.llm._local._score import _BoundaryTokens, boundary_specials

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from leakage.llm._base import GenerationOptions

log = logging.getLogger(__name__)

COMPUTE_TYPES = ("int8", "int8_float32", "float32", "auto")
"""The ``compute_type`` options (CTranslate2's names)."""
CT2_HINT = "pip install 'leakage[llm]' (ctranslate2>=4.8,<5; `make test` installs it)"
_FORMAT = "1"  # bump when the converted folder's layout or the conversion changes
_MARKER = "leakage-ct2.json"


def _import_ct2() -> Any:
    """The ctranslate2 module, after the process settings every model runtime gets; missing,
    ``BackendUnavailable`` with the install hint."""
    prepare_model_runtime()
    try:
        import ctranslate2
    except ImportError as err:
        raise BackendUnavailable(
            f"the ctranslate2 LLM client needs the ctranslate2 package: {CT2_HINT}"
        ) from err
    return ctranslate2


def resolve_ct2_device(device: str, ct2: Any) -> tuple[str, int]:
    """(CTranslate2 device, device index) for a ``device`` option: ``cpu``, or ``cuda`` and
    the index ``cuda:N`` names (``cuda``: 0, the first CUDA_VISIBLE_DEVICES names); ``auto``
    is ``cuda`` 0 where CTranslate2 sees a CUDA device. ``mps`` and a CUDA device that is not
    there are ``DeviceUnavailable``."""
    wanted = check_device(device)
    if wanted == "cpu":
        return "cpu", 0
    if wanted == "mps":
        raise DeviceUnavailable(
            "device 'mps' was asked for, but CTranslate2 runs on cpu and cuda only; "
            "device cpu or auto runs here (or the local client, which runs on mps)"
        )
    count = int(ct2.get_cuda_device_count())
    if wanted == "auto":
        return ("cuda", 0) if count else ("cpu", 0)
    index = 0 if wanted == "cuda" else int(wanted.partition(":")[2])
    if index < count:
        return "cuda", index
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    seen = f"{count} CUDA device{'' if count == 1 else 's'}" if count else "no CUDA device"
    raise DeviceUnavailable(
        f"device {device.strip()!r} was asked for, but ctranslate2 {ct2.__version__} sees "
        f"{seen}"
        + (f" with CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "")
        + "; device cpu or auto runs here"
    )


# -- the converted model -----------------------------------------------------------------


def transformers_folder(
    source: ModelSource, cache_dir: Path | None, models_dir: str | os.PathLike[str] | None
) -> tuple[Path, str | None]:
    """(the transformers folder of ``source``, what it was converted from): a GGUF converted
    once (as ``LocalLM`` does, into the same folder), a folder as it is, a hub name's
    snapshot in the local Hugging Face cache (nothing is downloaded)."""
    if source.gguf is not None:
        cache = cache_dir or default_cache_dir(source.gguf.name, models_dir=models_dir)
        return ensure_converted(source.gguf, cache), source.gguf.origin
    if source.folder is not None:
        return source.folder, None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(str(source.hub_id), local_files_only=True)), None
    except Exception as err:  # not in the cache (or huggingface_hub missing)
        raise BackendUnavailable(
            f"language model {source.hub_id!r} is not on this machine and nothing is "
            "downloaded at run time: pass a transformers folder or a GGUF file, or put the "
            f"model in the Hugging Face cache (HF_HOME) ({err.__class__.__name__})"
        ) from err


def _source_key(folder: Path) -> str:
    """What identifies a transformers folder's weights: its path and the size and
    modification time of its files."""
    folder = folder.resolve()
    parts = [str(folder), _FORMAT]
    for path in sorted(folder.iterdir()):
        if path.is_file():
            stat = path.stat()
            parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:12]


def ct2_folder(folder: Path, quantization: str, cache_dir: Path) -> Path:
    """Where the CTranslate2 model of ``folder`` in ``quantization`` lives (it may not exist
    yet)."""
    return cache_dir / f"ct2-{quantization}-{_source_key(folder)}"


def ensure_ct2_converted(
    folder: Path,
    quantization: str,
    cache_dir: Path,
    convert: Callable[[Path, Path, str], None] | None = None,
) -> Path:
    """The CTranslate2 model of the transformers ``folder`` (weights in ``quantization``:
    ``int8`` or ``float32``), converted first if needed, once.

    ``convert(folder, out, quantization)`` writes the model (default: ``convert_to_ct2``)
    into a temporary folder, which is renamed into place after a marker file is written: a
    folder without the marker (a conversion killed half-way) is never used, and converted
    again. A lock file makes a second process wait instead of converting too."""
    target = ct2_folder(folder, quantization, cache_dir)

    def write(scratch: Path, out: Path) -> dict[str, Any]:
        log.warning(
            "converting %s to a CTranslate2 model (%s) once (%s)", folder, quantization, target
        )
        (convert or convert_to_ct2)(folder, out, quantization)
        return {
            "format": _FORMAT,
            "source": str(folder),
            "quantization": quantization,
            "ctranslate2": _ct2_version(),
        }

    if convert_once(target, _MARKER, write, lock=f".{target.name}.lock"):
        _remove_stale(cache_dir, keep=target)
    return target


def _remove_stale(cache_dir: Path, *, keep: Path) -> None:
    """Remove the complete conversions here whose source folder is gone (a GGUF converted
    again after it changed removes its older transformers folder, ``_gguf``)."""
    for old in cache_dir.glob("ct2-*"):
        marker = old / _MARKER
        if old == keep or not marker.is_file():
            continue
        try:
            source = Path(json.loads(marker.read_text())["source"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not source.exists():
            log.info("removing stale conversion %s", old)
            shutil.rmtree(old, ignore_errors=True)


def _ct2_version() -> str | None:
    try:
        import ctranslate2
    except ImportError:
        return None
    return str(ctranslate2.__version__)


def convert_to_ct2(folder: Path, out: Path, quantization: str) -> None:
    """``TransformersConverter(folder).convert(out, quantization=...)``, float32 weights read,
    with the RoPE bases the converter reads set from the configuration (``_rope_checked``)."""
    open_model_runtime(
        "converting a model for CTranslate2 needs torch and transformers ({missing} missing)",
        INSTALL_HINT,
        precision="fp32",
    )
    _import_ct2()
    from ctranslate2.converters import TransformersConverter

    class _Converter(TransformersConverter):  # type: ignore[misc]
        def load_model(self, model_class: Any, path: str, **kwargs: Any) -> Any:
            model = super().load_model(model_class, path, **kwargs)
            _rope_checked(model.config)
            return model

    try:
        _Converter(str(folder), load_as_float16=False).convert(str(out), quantization=quantization)
    except (ValueError, NotImplementedError) as err:  # no converter for this architecture
        raise BackendUnavailable(
            f"{folder}: CTranslate2 cannot convert this model ({err}); the local client runs it"
        ) from err


def _rope_checked(config: Any) -> None:
    """Set the RoPE bases CTranslate2's converter reads as attributes (``rope_theta``, and
    ``rope_local_base_freq`` for Gemma 3's sliding layers) from ``rope_parameters``, where
    transformers 5 configurations keep them (the converter would otherwise take its
    defaults, right for Gemma-3-270M only); a RoPE type other than ``default`` (scaled RoPE)
    is refused rather than converted on assumptions."""
    text = getattr(config, "text_config", None) or config
    params = getattr(text, "rope_parameters", None)
    if not params:
        return  # a configuration that still has rope_theta: the converter reads it
    per_type = dict(params) if all(isinstance(v, dict) for v in params.values()) else {"": params}
    for kind, p in per_type.items():
        if p.get("rope_type", "default") != "default" or "rope_theta" not in p:
            raise BackendUnavailable(
                f"CTranslate2 conversion: RoPE parameters {p!r}{f' ({kind})' if kind else ''} "
                "are not converted here (only the default RoPE); the local client runs it"
            )
    unknown = set(per_type) - {"", "full_attention", "sliding_attention"}
    if unknown:
        raise BackendUnavailable(
            f"CTranslate2 conversion: RoPE parameters for {sorted(unknown)} are not converted "
            "here; the local client runs it"
        )
    full = per_type.get("") or per_type.get("full_attention")
    for cfg in {id(config): config, id(text): text}.values():
        if full is not None:
            cfg.rope_theta = float(full["rope_theta"])
        if "sliding_attention" in per_type:
            cfg.rope_local_base_freq = float(per_type["sliding_attention"]["rope_theta"])


def _cost_ratio(config: dict[str, Any]) -> float:
    """Projecting one position onto the vocabulary over running one token through the
    decoder (multiply-adds, from the configuration): 1.7 for Gemma-3-270M, 0.26 for
    SmolLM2-135M. 1 when the configuration does not say."""
    cfg = config.get("text_config") or config
    try:
        h, layers = int(cfg["hidden_size"]), int(cfg["num_hidden_layers"])
        heads = int(cfg["num_attention_heads"])
        head_dim = int(cfg.get("head_dim") or h // heads)
        kv = int(cfg.get("num_key_value_heads") or heads)
        inner = int(cfg.get("intermediate_size") or 4 * h)
        layer = 2 * h * heads * head_dim + 2 * h * kv * head_dim + 3 * h * inner
        return float(cfg["vocab_size"]) * h / (layers * layer)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return 1.0


def _usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform says), at least 1."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity is not None else os.cpu_count() or 1)


def _logits_rows(values: Any, ct2: Any) -> NDArray[np.float32]:
    """A CTranslate2 ``StorageView`` of logits as a float32 numpy vector (copied to the host
    from a GPU)."""
    if getattr(values, "device", "cpu") != "cpu":
        values = values.to_device(ct2.Device.cpu)
    return np.asarray(values, dtype=np.float32).reshape(-1)


def _log_normaliser(row: NDArray[np.float32]) -> float:
    """log Σ exp of a row of logits, exp in float32, summed in float64 (in numpy: see the
    module docstring)."""
    top = float(row.max())
    return float(np.log(np.exp(row - top).sum(dtype=np.float64))) + top


# -- the client --------------------------------------------------------------------------


class CTranslate2LM(_BoundaryTokens):
    """An ``LLMClient`` over a local causal LM run by CTranslate2 (see the module docstring).

    ``model``: as ``LocalLM``'s. ``compute_type``: ``int8`` (default), ``int8_float32``,
    ``float32`` or ``auto``. ``threads``: CTranslate2's intra-op threads on a CPU (default:
    the cores this process may use). ``device``: ``auto``, ``cpu``, ``cuda``, ``cuda:N``.
    ``models_dir``: where converted models live (default ``Paths.models``); ``cache_dir``:
    the model's own folder there (default ``<models_dir>/<name>``). ``seed``: the sampler's,
    for ``generate`` at ``temperature`` > 0 without a seed of its own.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        compute_type: str = "int8",
        threads: int | None = None,
        device: str = "auto",
        models_dir: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        seed: int = 0,
    ) -> None:
        if compute_type not in COMPUTE_TYPES:
            raise ValueError(f"compute_type must be one of {', '.join(COMPUTE_TYPES)}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1 (got {threads})")
        check_device(device)
        ct2 = self._ct2 = _import_ct2()
        where, index = resolve_ct2_device(device, ct2)
        try:
            from transformers import AutoTokenizer
        except ImportError as err:
            raise BackendUnavailable(
                f"the ctranslate2 LLM client reads the model's tokenizer with transformers: "
                f"{INSTALL_HINT}"
            ) from err
        source = resolve_source(model)
        self.name = source.name
        cache = Path(cache_dir) if cache_dir else None
        folder, self.converted_from = transformers_folder(source, cache, models_dir)
        self.source = str(folder)
        quantization = "float32" if compute_type == "float32" else "int8"
        home = cache or default_cache_dir(source.name, models_dir=models_dir)
        self.model_dir = ensure_ct2_converted(folder, quantization, home)
        self._tok: Any = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        config = json.loads((folder / "config.json").read_text())
        model_type = str((config.get("text_config") or config).get("model_type", ""))
        self._bos, self._start = boundary_specials(self._tok, model_type)
        self.threads = threads or _usable_cores()
        self.device = "cpu" if where == "cpu" else f"cuda:{index}"
        self._generator = ct2.Generator(
            str(self.model_dir),
            device=where,
            device_index=index,
            compute_type=compute_type,
            intra_threads=self.threads if where == "cpu" else 0,
        )
        self.compute_type = compute_type
        self._budget = pass_budget(self.device)
        self._names: list[str] = list(self._tok.convert_ids_to_tokens(list(range(len(self._tok)))))
        self._vocab_size = self._check_vocabulary()
        self._ratio = _cost_ratio(config)
        eos_ids = config.get("eos_token_id")
        try:
            from transformers import GenerationConfig

            eos_ids = GenerationConfig.from_pretrained(str(folder)).eos_token_id
        except OSError:  # no generation_config.json: the model's
            pass
        self._eos = _eos_ids(eos_ids, self._tok.eos_token_id)
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()

    def _check_vocabulary(self) -> int:
        """The model's vocabulary size, after checking that its token strings are the
        tokenizer's, id for id (tokens are handed to CTranslate2 as strings), each once."""
        path = self.model_dir / "vocabulary.json"
        if path.is_file():
            vocab = json.loads(path.read_text())
        else:
            text = (self.model_dir / "vocabulary.txt").read_text(encoding="utf-8")
            vocab = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
        names = self._names
        if vocab[: len(names)] != names or len(set(names)) != len(names):
            raise BackendUnavailable(
                f"{self.model_dir}: the CTranslate2 vocabulary does not match the tokenizer "
                "id for id; the local client runs this model"
            )
        return len(vocab)

    @property
    def call_prompts(self) -> int:
        """Prompts a bulk caller (the listener's ``prepare``) hands ``score_each`` per call:
        the device's ``PassBudget.call_prompts``."""
        return self._budget.call_prompts

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer."""
        return self._tok

    def info(self) -> dict[str, object]:
        name = cpu_name() if self.device == "cpu" else f"CUDA device {self.device[5:]}"
        out: dict[str, object] = {
            "model": self.name,
            "backend": "ctranslate2",
            "source": self.source,
            "converted_from": self.converted_from,
            "model_dir": str(self.model_dir),
            "device": self.device,
            "device_name": name,
            "runtime": f"ctranslate2 {self._ct2.__version__}",
            "precision": self.compute_type,
            "compute_type": self.compute_type,
            "compute_type_used": str(self._generator.compute_type),
            "threads": self.threads,
            "vocab_size": self._vocab_size,
            "bos": bool(self._bos),
            "chat_template": bool(self._tok.chat_template),
        }
        if os.environ.get("CT2_FORCE_CPU_ISA"):
            out["cpu_isa"] = os.environ["CT2_FORCE_CPU_ISA"]
        return out

    @property
    def runtime(self) -> RuntimeChoice:
        """Where and how this model runs: CTranslate2, its device and compute type."""
        return RuntimeChoice("ctranslate2", self.device, self.compute_type)

    # -- scoring --------------------------------------------------------------------------

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        """Σ log P(continuation tokens | prompt) for each continuation (natural log)."""
        return [float(x) for x in self.score_many([prompt], continuations)[0]]

    def score_many(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> NDArray[np.float64]:
        """``out[i, j]`` = Σ log P(``continuations[j]`` | ``prompts[i]``), shape (P, C)."""
        return self.score_groups([(prompts, continuations)])[0]

    def score_groups(
        self, groups: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[NDArray[np.float64]]:
        """``score_many`` for several (prompts, continuations) groups, batched together."""
        outs = [np.zeros((len(p), len(c)), dtype=np.float64) for p, c in groups]
        asked = [k for k, (p, c) in enumerate(groups) if len(p) and len(c)]
        tokens = self._tokenize_groups([groups[k] for k in asked])
        pairs = [(p, c) for pids, cids in tokens for p, c in zip(pids, cids, strict=True)]
        rows = iter(self._score_tokens(pairs))
        for k in asked:
            for i in range(outs[k].shape[0]):
                outs[k][i, :] = next(rows)
        return outs

    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[NDArray[np.float64]]:
        """``out[k][j]`` = Σ log P(``items[k][1][j]`` | ``items[k][0]``): the listener's bulk
        path, every item's prompt batched with the others of its token length."""
        out = [np.zeros(len(c), dtype=np.float64) for _, c in items]
        asked = [k for k, (_, c) in enumerate(items) if len(c)]
        tokens = self._tokenize_groups([([items[k][0]], items[k][1]) for k in asked])
        scored = self._score_tokens([(pids[0], cids[0]) for pids, cids in tokens])
        for k, row in zip(asked, scored, strict=True):
            out[k] = row
        return out

    def _by_prefix(self, prompt_len: int, cont_len: int) -> bool:
        """Whether a continuation's later tokens are cheaper read one prompt pass per prefix
        (a pass over prompt + the first j tokens, one position projected) than from one
        ``score_batch`` over prompt + continuation (every position projected)."""
        if cont_len <= 1:
            return True
        prefix = (cont_len - 1) * (prompt_len + cont_len / 2 + self._ratio)
        return prefix <= (prompt_len + cont_len) * (1 + self._ratio)

    def _score_tokens(
        self, pairs: Sequence[tuple[list[int], list[list[int]]]]
    ) -> list[NDArray[np.float64]]:
        """Σ log P per (prompt ids, [continuation ids]): the next-token distributions after
        every prefix needed (each once), and ``score_batch`` for the long continuations."""
        wanted: dict[tuple[int, ...], set[int]] = {}
        whole: dict[tuple[int, ...], None] = {}
        for p, conts in pairs:
            for c in conts:
                if not c:
                    continue
                if self._by_prefix(len(p), len(c)):
                    for k, token in enumerate(c):
                        wanted.setdefault((*p, *c[:k]), set()).add(token)
                else:
                    whole[(*p, *c)] = None
        with self._lock:
            after = self._next_logprobs(wanted)
            scored = self._sequence_logprobs(list(whole))
        out = []
        for p, conts in pairs:
            row = np.zeros(len(conts), dtype=np.float64)
            for j, c in enumerate(conts):
                if not c:
                    continue
                if self._by_prefix(len(p), len(c)):
                    row[j] = sum(after[(*p, *c[:k])][t] for k, t in enumerate(c))
                else:
                    row[j] = float(np.sum(scored[(*p, *c)][len(p) - 1 :], dtype=np.float64))
            out.append(row)
        return out

    def _next_logprobs(
        self, wanted: dict[tuple[int, ...], set[int]]
    ) -> dict[tuple[int, ...], dict[int, float]]:
        """log P(token | prefix) for the tokens asked after each prefix: prefixes of one
        length at a time, as many per ``generate_batch`` call as the device's budget takes
        (prompt tokens, and positions projected)."""
        by_len: dict[int, list[tuple[int, ...]]] = {}
        for prefix in wanted:
            by_len.setdefault(len(prefix), []).append(prefix)
        names, ct2 = self._names, self._ct2
        out: dict[tuple[int, ...], dict[int, float]] = {}
        for length, group in sorted(by_len.items()):
            rows = max(1, min(self._budget.head_rows, self._budget.prompt_tokens // length))
            for at in range(0, len(group), rows):
                keys = group[at : at + rows]
                results = self._generator.generate_batch(
                    [[names[t] for t in key] for key in keys],
                    max_length=1,
                    include_prompt_in_result=False,
                    return_logits_vocab=True,
                )
                for key, result in zip(keys, results, strict=True):
                    logits = _logits_rows(result.logits[0][0], ct2)  # [hypothesis][step]
                    lse = _log_normaliser(logits)
                    out[key] = {t: float(logits[t]) - lse for t in wanted[key]}
        return out

    def _sequence_logprobs(
        self, sequences: list[tuple[int, ...]]
    ) -> dict[tuple[int, ...], NDArray[np.float64]]:
        """log P(token t+1 | tokens up to t) along each sequence (``score_batch``), sequences
        of one length per call: CTranslate2 4.8.5 fails on Gemma 3 with sequences of unequal
        length in one batch ("Length mask has size ... different than the current batch
        size"), and equal lengths need no padding anyway."""
        by_len: dict[int, list[tuple[int, ...]]] = {}
        for seq in sequences:
            by_len.setdefault(len(seq), []).append(seq)
        names = self._names
        out: dict[tuple[int, ...], NDArray[np.float64]] = {}
        for length, group in sorted(by_len.items()):
            rows = max(1, self._budget.step_tokens // length)
            for at in range(0, len(group), rows):
                keys = group[at : at + rows]
                results = self._generator.score_batch(
                    [[names[t] for t in seq] for seq in keys], max_input_length=0
                )
                for seq, result in zip(keys, results, strict=True):
                    out[seq] = np.asarray(result.log_probs, dtype=np.float64)
        return out

    # -- generation -----------------------------------------------------------------------

    def generate(
        self, messages: Sequence[Message] | str, **options: Unpack[GenerationOptions]
    ) -> Generation:
        """Greedy at ``temperature`` 0 (CTranslate2's decoding loop over its KV cache), else
        sampled from the whole vocabulary here (``seed``, or the client's sampler: a
        CTranslate2 seed does not reach its worker threads, so its sampler cannot be
        replayed) over one prompt pass per token, slower; as ``LocalLM.generate``: a chat
        through the tokenizer's chat template when it has one, a string completed as it is;
        ``top_logprobs`` per generated token, before temperature. Stop strings end it."""
        params = GenerationParams.of(**options)
        ids = prompt_tokens(self._tok, self._bos, self._start, messages)
        stops = [s for s in params.stop if s]
        produced: list[int] = []
        rows: list[NDArray[np.float32]] = []
        with self._lock:
            if params.temperature > 0:
                rng = np.random.default_rng(params.seed) if params.seed is not None else self._rng
                for _ in range(params.max_tokens):
                    logits = self._next_logits(ids + produced)
                    scaled = (logits - logits.max()) / params.temperature
                    p = np.exp(scaled.astype(np.float64))
                    token = int(rng.choice(len(p), p=p / p.sum()))
                    rows.append(logits)
                    produced.append(token)
                    if token in self._eos or self._stopped(produced, stops):
                        break
            else:

                def step(result: Any) -> bool:
                    produced.append(int(result.token_id))
                    return int(result.token_id) in self._eos or self._stopped(produced, stops)

                result = self._generator.generate_batch(
                    [[self._names[t] for t in ids]],
                    max_length=params.max_tokens,
                    include_prompt_in_result=False,
                    end_token=sorted(self._eos) or None,
                    return_end_token=True,
                    return_logits_vocab=params.top_logprobs > 0,
                    callback=step,
                )[0]
                if params.top_logprobs > 0:  # [hypothesis][step]
                    rows = [_logits_rows(v, self._ct2) for v in result.logits[0]]
        ended = bool(produced) and produced[-1] in self._eos
        text = self._tok.decode(produced[:-1] if ended else produced, skip_special_tokens=True)
        cut = _first_stop(text, stops)
        if cut is not None:
            text = text[:cut]
        tops: list[dict[str, float]] = []
        for logits in rows[: len(produced)] if params.top_logprobs > 0 else []:
            logp = logits - _log_normaliser(logits)
            top: dict[str, float] = {}
            for t in np.argsort(-logp, kind="stable")[: params.top_logprobs]:
                top.setdefault(self._tok.decode([int(t)]), float(logp[t]))
            tops.append(top)
        return Generation(
            text=text,
            prompt_tokens=len(ids),
            completion_tokens=len(produced),
            top_logprobs=tops if params.top_logprobs > 0 else None,
        )

    def _stopped(self, produced: list[int], stops: list[str]) -> bool:
        if not stops:
            return False
        return _first_stop(self._tok.decode(produced, skip_special_tokens=True), stops) is not None

    def _next_logits(self, ids: list[int]) -> NDArray[np.float32]:
        """The raw next-token logits after ``ids`` (one prompt pass)."""
        result = self._generator.generate_batch(
            [[self._names[t] for t in ids]],
            max_length=1,
            include_prompt_in_result=False,
            return_logits_vocab=True,
        )[0]
        return _logits_rows(result.logits[0][0], self._ct2)


__all__ = ["COMPUTE_TYPES", "CTranslate2LM", "ensure_ct2_converted", "resolve_ct2_device"]
