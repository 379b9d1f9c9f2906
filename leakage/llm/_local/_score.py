"""Scoring: prompts and continuations tokenised at their boundary, prompts batched by
length, continuations run through the decoder passes, every position projected onto the
vocabulary, the log-probabilities summed per (prompt, continuation)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.llm._local._passes import _DecoderPasses
from leakage.llm._local._state import _PromptStates

# Prompt tokens (padding included) per prompt-encoding forward pass: the device's
# ``PassBudget.prompt_tokens`` (4,096 on a CPU, 65,536 on a GPU).


class _BoundaryTokens:
    """The prompt and continuation tokens of a scoring call, split at their boundary as the
    module docstring of ``leakage.llm._local`` says: shared by ``LocalLM`` and the other
    clients that score over the same tokenizer (``CTranslate2LM``), so that every runtime
    scores the same token ids. Reads the tokenizer and the BOS / start tokens
    (``boundary_specials``)."""

    _tok: Any
    _bos: list[int]
    _start: list[int]

    def _tokenize_groups(
        self, groups: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[tuple[list[list[int]], list[list[list[int]]]]]:
        """Per (prompts, continuations) group: the prompt tokens (with BOS) and, per prompt,
        each continuation's tokens. One tokenizer call for all the prompts and
        one for all the joined prompt + continuation strings (the listener asks about
        thousands of one-prompt groups at once: a call per group cost more host time than a
        GPU spends on the group)."""
        tok = self._tok
        moved = [[(p.rstrip(" "), p[len(p.rstrip(" ")) :]) for p in ps] for ps, _ in groups]
        flat_prompts = [p for group in moved for p, _ in group]
        joint = [
            p + space + c
            for group, (_, conts) in zip(moved, groups, strict=True)
            for p, space in group
            for c in conts
        ]

        def ids(texts: list[str]) -> list[list[int]]:
            return list(tok(texts, add_special_tokens=False)["input_ids"]) if texts else []

        all_prompts, all_joint = ids(flat_prompts), ids(joint)
        out = []
        at_p = at_j = 0
        for group, (_, continuations) in zip(moved, groups, strict=True):
            n_p, n_j = len(group), len(group) * len(continuations)
            out.append(
                self._split_pairs(
                    group,
                    continuations,
                    all_prompts[at_p : at_p + n_p],
                    all_joint[at_j : at_j + n_j],
                )
            )
            at_p, at_j = at_p + n_p, at_j + n_j
        return out

    def _split_pairs(
        self,
        moved: list[tuple[str, str]],
        continuations: Sequence[str],
        enc_prompts: list[list[int]],
        enc_joint: list[list[int]],
    ) -> tuple[list[list[int]], list[list[list[int]]]]:
        """One group's prompt tokens and continuation tokens from its share of the batched
        tokenisation (see ``_tokenize_groups``)."""
        tok = self._tok
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


class _Scoring(_DecoderPasses, _BoundaryTokens):
    """``score``, ``score_many``, ``score_groups``, ``score_each`` of ``LocalLM``."""

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
            asked = [(k, g) for k, g in enumerate(groups) if len(g[0]) and len(g[1])]
            tokens = self._tokenize_groups([g for _, g in asked])
            for (k, (prompts, _)), (prompt_ids, cont_ids) in zip(asked, tokens, strict=True):
                rows.append([(k, i, prompt_ids[i], cont_ids[i]) for i in range(len(prompts))])
            if pool:
                rows = [[r for group in rows for r in group]]
            found: list[tuple[list[tuple[int, int, list[int], list[list[int]]]], Any, Any]] = []
            for group in rows:
                lengths = [len(r[2]) for r in group]
                for batch in _length_groups(lengths, self._budget.prompt_tokens):
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
                logp = (self._logit_of(h, target) - lse[:n]).double().cpu().numpy()
                lse = lse[n:]
                np.add.at(block.reshape(-1), owner.cpu().numpy(), logp)
            # First tokens: predicted by each prompt's last state.
            firsts = [
                (g, c, cont[0]) for g, row in enumerate(conts) for c, cont in enumerate(row) if cont
            ]
            if firsts:
                g_idx, c_idx, tokens = (np.array(x) for x in zip(*firsts, strict=True))
                g_dev = torch.from_numpy(g_idx).to(self.device)
                first = (
                    self._logit_of(states.last[g_dev], torch.from_numpy(tokens).to(self.device))
                    - states.lse[g_dev]
                )
                block[g_idx, c_idx] += first.double().cpu().numpy()
            blocks.append(block)
        return blocks


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


def boundary_specials(tok: Any, model_type: str) -> tuple[list[int], list[int]]:
    """(BOS, start) of a tokenizer: the BOS prepended to every prompt when the tokenizer adds
    it by itself or the model is a Gemma (trained with it), and the token an empty prompt is
    conditioned on when there is no BOS (the BOS, else the EOS)."""
    bos = tok.bos_token_id
    adds_bos = bos is not None and tok("a")["input_ids"][:1] == [bos]
    with_bos = [bos] if bos is not None and (adds_bos or model_type.startswith("gemma")) else []
    start = bos if bos is not None else tok.eos_token_id
    return with_bos, [start] if start is not None else []
