"""Hidden states onto the vocabulary: logits, one token's logit, the normaliser (log Σ exp
over the vocabulary, exact or through the ``shortlist``), and the check that this
reproduces the model's own head."""

from __future__ import annotations

from typing import Any

from leakage.errors import BackendUnavailable
from leakage.llm._local._state import _LocalState

NORMALISERS = ("exact", "shortlist")
_SHORTLIST_RANK = 128
"""Rank of the output embedding's approximation that picks the shortlist (``shortlist``)."""
_SHORTLIST_TOP = 4096
"""Tokens per position, by the low-rank logit, whose logits are then computed exactly."""
# Positions projected onto the vocabulary at once: the device's ``PassBudget.head_rows``
# (128 on a CPU, 2,048 on a GPU). Each pass reads the whole output embedding (335 MB for
# Gemma in bf16), so fewer, larger passes are faster; the buffers grow to the largest pass
# seen (on a CPU at most 128 x 262k x 6 bytes = 200 MB for Gemma in bf16).


class _VocabularyHead(_LocalState):
    """The output embedding applied where scoring needs it (``LocalLM``'s head methods)."""

    def _check_head(self, model: str) -> None:
        """Scoring projects hidden states itself (only where needed); make sure it computes
        what the model's own forward pass does, for this architecture."""
        torch = self._torch
        ids = torch.tensor(
            [self._bos + self._tok("The secret word is", add_special_tokens=False)["input_ids"]],
            device=self.device,
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

    def _logits(self, hidden: Any) -> Any:
        """float32 next-token logits for hidden states (N <= head rows, H): the model's head.

        Written into buffers kept between calls: a fresh 100 MB tensor per call costs as much
        in page faults as the exponentials (measured: 64 rows of Gemma, 68 ms -> 44 ms).
        """
        torch = self._torch
        n = hidden.shape[0]
        if self._raw is None or self._raw.shape[0] < n:
            self._raw = torch.empty(
                (n, self._vocab_size), dtype=self._head_w.dtype, device=self.device
            )
            if self._head_w.dtype != torch.float32:
                self._f32 = torch.empty(
                    (n, self._vocab_size), dtype=torch.float32, device=self.device
                )
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
        """float32 log Σ_v exp(logit_v) for hidden states (N, H), the budget's head rows at a
        time: over the whole vocabulary, or with the ``shortlist`` normaliser (unless
        ``exact``)."""
        torch = self._torch
        parts = []
        for chunk in hidden.split(self._budget.head_rows):
            if self.normaliser == "shortlist" and not exact:
                logits = self._shortlist_logits(chunk)
            else:
                logits = self._logits(chunk)
            top = logits.amax(-1, keepdim=True)
            parts.append(logits.sub_(top).exp_().sum(-1).log_() + top[:, 0])
        return torch.cat(parts) if parts else torch.zeros(0, device=self.device)

    def _shortlist_logits(self, hidden: Any) -> Any:
        """float32 logits (N <= head rows, V) for the ``shortlist`` normaliser: every token's
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
            self._approx = torch.empty(
                (n, self._vocab_size), dtype=torch.float32, device=self.device
            )
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
