"""Generation: greedy or sampled decoding over a KV cache, with stop strings and the top
log-probabilities per generated token."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from leakage.llm._base import Generation, GenerationParams, Message
from leakage.llm._local._state import _LocalState

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from leakage.llm._base import GenerationOptions


class _Generation(_LocalState):
    """``generate`` of ``LocalLM``."""

    # -- generation -----------------------------------------------------------------------

    def generate(
        self, messages: Sequence[Message] | str, **options: Unpack[GenerationOptions]
    ) -> Generation:
        """Greedy at ``temperature`` 0, else sampled (``seed``, or the client's generator);
        ``options`` are ``GenerationParams``' fields.

        A chat goes through the tokenizer's chat template when it has one (SmolLM2-Instruct);
        a base model (Gemma-3-270M) gets the messages' contents joined by blank lines. A
        string is completed as it is. ``top_logprobs`` gives, per generated token, the most
        likely tokens (decoded) and their log-probabilities before temperature.
        """
        params = GenerationParams.of(**options)
        torch = self._torch
        from transformers import DynamicCache

        ids = self._prompt_tokens(messages)
        stops = [s for s in params.stop if s]
        seed, temperature, top_logprobs = params.seed, params.temperature, params.top_logprobs
        generator = torch.Generator().manual_seed(seed) if seed is not None else self._generator
        produced: list[int] = []
        tops: list[dict[str, float]] = []
        text = ""
        with self._lock, torch.inference_mode():
            cache = DynamicCache(config=self._config)
            step_input = torch.tensor([ids], device=self.device)
            for _ in range(params.max_tokens):
                logits = (
                    self._model(
                        input_ids=step_input,
                        **{self._cache_kw: cache},
                        use_cache=True,
                        logits_to_keep=1,
                    )
                    .logits[0, -1]
                    .float()
                )
                logp = torch.log_softmax(logits, dim=-1)
                if temperature > 0:
                    probs = torch.softmax(logits / temperature, dim=-1).cpu()  # CPU generator
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
                step_input = torch.tensor([[token]], device=self.device)
        return Generation(
            text=text,
            prompt_tokens=len(ids),
            completion_tokens=len(produced),
            top_logprobs=tops if top_logprobs > 0 else None,
        )

    def _prompt_tokens(self, messages: Sequence[Message] | str) -> list[int]:
        return prompt_tokens(self._tok, self._bos, self._start, messages)


def prompt_tokens(
    tok: Any, bos: list[int], start: list[int], messages: Sequence[Message] | str
) -> list[int]:
    """The token ids ``generate`` starts from: a chat through the tokenizer's chat template
    when it has one, else the messages' contents joined by blank lines; a string as it is.
    ``bos`` and ``start``: ``boundary_specials`` of the tokenizer."""
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
        return ids or list(start)
    return bos + ids if bos or ids else list(start)


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
