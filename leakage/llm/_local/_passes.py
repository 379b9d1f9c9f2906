"""Decoder passes over KV caches: prompts encoded into left-padded caches (a shared prefix
encoded once), and the continuations' later tokens teacher-forced after them: packed into
one row per prompt under a block-diagonal mask (SDPA), one row per continuation with a copy
of the cache otherwise, or the rows of several prompt groups in one packed pass.

The transformers internals scoring relies on are all used here (``DynamicCache`` built from
per-layer tensors, its ``layers[i].keys/values``, ``batch_repeat_interleave``,
``batch_select_indices``, deep copies, ``config._attn_implementation``, the forward's cache
keyword: ``cache_keyword``); the generation uses ``DynamicCache(config=)``.
tests/test_llm_boundary.py checks each on the installed transformers.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from leakage._runtime import padded_batches
from leakage.llm._local._head import _VocabularyHead
from leakage.llm._local._state import _PromptStates

_MIN_SHARED_SAVING = 32
"""Encode a shared prompt prefix once when that saves at least this many tokens."""
# Continuation tokens (padding included) per scoring forward pass: the device's
# ``PassBudget.step_tokens`` (1,024 on a CPU). Index tensors (ids, targets, positions, masks)
# are filled element by element on the CPU and moved to the model's device once per pass.


class _DecoderPasses(_VocabularyHead):
    """Prompt encoding and continuation passes (``LocalLM``'s KV-cache methods)."""

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
        where = torch.tensor([[i, g] for _, i, g in rows], device=self.device)
        out: list[list[Any]] = [[] for _ in items]
        for h, target, owner in self._later_packed(merged, conts_all, n_max):
            item, g = where[owner // n_max].unbind(-1)
            col = owner % n_max
            for i in item.unique().tolist():
                sel = item == i
                local = g[sel] * len(items[i][1][0]) + col[sel]
                out[i].append((h[sel], target[sel], local))
        return out

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
        dev = self.device
        if shared:
            self._decoder(
                input_ids=torch.tensor([prompts[0][:shared]], device=dev),
                **{self._cache_kw: cache},
                use_cache=True,
            )
            cache.batch_repeat_interleave(len(prompts))
        lens = torch.tensor([len(p) for p in prompts], device="cpu")
        width = int(lens.max()) - shared
        ids = torch.full((len(prompts), width), self._pad, dtype=torch.long, device="cpu")
        mask = torch.ones((len(prompts), shared + width), dtype=torch.long, device="cpu")
        for row, p in enumerate(prompts):  # left padding: every prompt ends at the last column
            ids[row, width - len(p) + shared :] = torch.tensor(p[shared:], device="cpu")
            mask[row, shared : shared + width - len(p) + shared] = 0
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, shared:]
        mask = mask.to(dev)
        hidden = self._decoder(
            input_ids=ids.to(dev),
            attention_mask=mask,
            position_ids=positions.to(dev),
            **{self._cache_kw: cache},
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

    def _later_packed(
        self, states: _PromptStates, conts: list[list[list[int]]], n_cont: int
    ) -> list[tuple[Any, Any, Any]]:
        """All of a prompt's continuations in one row after it, each seeing only the prompt
        and itself (a block-diagonal causal mask), positions restarting after the prompt: one
        decoder pass, no copies of the prompt's cache, no padding between continuations."""
        torch = self._torch
        width = int(states.mask.shape[1])
        found: list[tuple[Any, Any, Any]] = []
        prompt_mask = states.mask.bool().cpu()
        spans = [sum(len(c) - 1 for c in row if len(c) > 1) for row in conts]
        # consecutive rows whose padded size (rows x longest span) stays within the budget
        for group in padded_batches(range(len(spans)), spans, self._budget.step_tokens):
            span = max(sum(len(c) - 1 for c in conts[g] if len(c) > 1) for g in group)
            n = len(group)
            inp = torch.full((n, span), self._pad, dtype=torch.long, device="cpu")
            target = torch.zeros((n, span), dtype=torch.long, device="cpu")
            positions = torch.zeros((n, span), dtype=torch.long, device="cpu")
            owner = torch.full((n, span), -1, dtype=torch.long, device="cpu")  # into out.flat
            # queries attend to the prompt (padding queries too, so that no row is empty)
            mask = torch.zeros((n, 1, span, width + span), dtype=torch.bool, device="cpu")
            mask[:, 0, :, :width] = prompt_mask[group, None, :]
            for k, g in enumerate(group):
                at = 0
                for c, seq in enumerate(conts[g]):
                    m = len(seq) - 1
                    if m <= 0:
                        continue
                    inp[k, at : at + m] = torch.tensor(seq[:-1], device="cpu")
                    target[k, at : at + m] = torch.tensor(seq[1:], device="cpu")
                    positions[k, at : at + m] = int(states.lens[g]) + torch.arange(m, device="cpu")
                    owner[k, at : at + m] = g * n_cont + c
                    block = mask[k, 0, at : at + m, width + at : width + at + m]
                    block.copy_(torch.ones((m, m), dtype=torch.bool, device="cpu").tril())
                    at += m
            cache = copy.deepcopy(states.cache)  # the pass appends to it; the original is kept
            dev = self.device
            if n < len(conts):
                cache.batch_select_indices(torch.tensor(group, device=dev))
            hidden = self._decoder(
                input_ids=inp.to(dev),
                attention_mask=mask.to(dev),
                position_ids=positions.to(dev),
                **{self._cache_kw: cache},
                use_cache=True,
            ).last_hidden_state
            real = owner >= 0
            found.append((hidden[real.to(dev)], target[real].to(dev), owner[real].to(dev)))
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
        steps = [len(conts[g][c]) - 1 for g, c in later]  # ascending: the rows sorted by length
        for chunk in padded_batches(later, steps, self._budget.step_tokens):
            seqs = [conts[g][c] for g, c in chunk]
            span = max(len(s) for s in seqs) - 1
            inp = torch.full((len(chunk), span), self._pad, dtype=torch.long, device="cpu")
            target = torch.zeros((len(chunk), span), dtype=torch.long, device="cpu")
            owner = torch.full((len(chunk), span), -1, dtype=torch.long, device="cpu")
            for k, ((g, c), seq) in enumerate(zip(chunk, seqs, strict=True)):
                inp[k, : len(seq) - 1] = torch.tensor(seq[:-1], device="cpu")
                target[k, : len(seq) - 1] = torch.tensor(seq[1:], device="cpu")
                owner[k, : len(seq) - 1] = g * n_cont + c
            dev = self.device
            rows = torch.tensor([g for g, _ in chunk], device="cpu")
            cache = copy.deepcopy(states.cache)
            cache.batch_select_indices(rows.to(dev))
            hidden = self._decoder(
                input_ids=inp.to(dev),
                attention_mask=torch.cat(
                    [states.mask[rows.to(dev)], (owner >= 0).long().to(dev)], dim=1
                ),
                position_ids=(states.lens[rows, None] + torch.arange(span, device="cpu")).to(dev),
                **{self._cache_kw: cache},
                use_cache=True,
            ).last_hidden_state
            real = owner >= 0
            found.append((hidden[real.to(dev)], target[real].to(dev), owner[real].to(dev)))
        return found


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
