"""Constrained answers from a local model: the model chooses, the rules decide what it may say.

Small local models rarely follow a reply form (the bundled SmolLM2 played 0 valid games of 5
when asked to): they write sentences, repeat the prompt or name nobody. Instead of asking
again, the answer is drawn from what the rules allow:

* a choice among fixed options (a vote among the other players, a guess among the
  candidates): each option's log-likelihood after the prompt and ``Answer:``
  (:meth:`LLMClient.score`, exact teacher forcing), the most likely one;
* a one-word clue: greedy decoding whose first token is restricted to what can start an
  allowed word. The model's first tokens are taken in order of probability (``generate``
  with ``top_logprobs``); one that is not letters, a single letter, a stop word (or
  ``answer``, the reply form's own word) or a forbidden word is skipped; the first that
  remains is completed greedily (the free answer already holds the completion of the most
  likely one) and cut at its first character that is not a letter, so every answer is one
  word; when the completed word is forbidden (the ``banned`` words: the secret, words said
  before) the next first token is tried. No retry prompt, no sampling: one or two
  ``generate`` calls in the usual case.

The prompt is the chat the model would see (its chat template when it has one, else the
messages joined by blank lines, as :meth:`LocalLM.generate` builds it) followed by
``Answer:``, so the model is scored where the reply form puts the answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from leakage.corpus import STOPWORDS
from leakage.llm import LLMClient, Message, SupportsTokenizer

_LETTERS = re.compile(r"[^\W\d_]+")
_NOT_CLUES = STOPWORDS | {"answer"}
"""Stop words, and the reply form's own word (a base model tends to repeat it)."""


def chat_text(client: LLMClient, messages: Sequence[Message]) -> str | None:
    """The text a local model reads for ``messages``, ending in ``Answer:``; None for a
    client whose tokenizer is not here (``SupportsTokenizer``: an endpoint has none)."""
    if not isinstance(client, SupportsTokenizer):
        return None
    tok = client.tokenizer
    if getattr(tok, "chat_template", None):
        chat = [{"role": m.role, "content": m.content} for m in messages]
        text = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        return f"{text}Answer:"
    return "\n\n".join(m.content for m in messages) + "\n\nAnswer:"


def choose(client: Any, prompt: str, options: Sequence[str]) -> tuple[str, list[float]]:
    """The option with the highest log-likelihood after ``prompt`` (and all the scores)."""
    if not options:
        raise ValueError("nothing to choose from")
    scores = [float(x) for x in client.score(prompt, [f" {o}" for o in options])]
    best = max(range(len(options)), key=scores.__getitem__)
    return options[best], scores


def one_word(
    client: Any,
    prompt: str,
    banned: Collection[str],
    *,
    first_tokens: int = 40,
    max_tokens: int = 4,
) -> tuple[str | None, dict[str, Any]]:
    """The allowed one-word answer greedy decoding reaches when its first token is restricted
    to the words the rules allow (see the module doc), and how it was found; None when no
    first token the model ranks in its top ``first_tokens`` leads to one."""
    keys = {b.casefold() for b in banned}

    def allowed(word: str) -> bool:
        return len(word) >= 2 and word.casefold() not in keys | _NOT_CLUES

    def word_of(text: str) -> str:
        found = _LETTERS.match(text.lstrip())
        return found.group(0) if found else ""

    free = client.generate(prompt, max_tokens=max_tokens, top_logprobs=first_tokens)
    firsts = sorted((free.top_logprobs or [{}])[0].items(), key=lambda kv: -kv[1])
    greedy = word_of(free.text)
    tried: list[str] = []
    for token, logprob in firsts:
        start = word_of(token)
        if start != token.strip() or not allowed(start):
            continue  # not letters, a single letter, a stop word or a forbidden word
        if greedy.casefold().startswith(start.casefold()):
            word = greedy  # the free answer began with this token
        else:
            word = word_of(start + client.generate(f"{prompt} {start}", max_tokens=max_tokens).text)
        tried.append(word)
        if allowed(word):
            return word, {"first_token": token, "logprob": logprob, "rejected": tried[:-1]}
    return None, {"rejected": tried}
