"""The LLM judge backend: a language model says how likely each clue is under each secret.

Two modes:

``likelihood`` (default)
    log P(clue | the secret is w) from a causal LM, summed over the clue's tokens, after a
    prompt that states the game, the category and the secret. Each candidate's prompt is
    encoded once and its KV cache reused across the clues (``score_many``). The prompt ends
    with a colon and the clue follows after a space (``' {clue}'``), so a one-word clue is
    usually one whole-word token: after an opening quote the tokenizer splits words into
    pieces (``"racket`` -> ``r|acket``), which favoured candidates sharing the clue's first
    letter (measured: Chameleon probes top-1 0.50 with the quoted form, 0.65 with this one;
    docs/llm.md). Nothing is appended after the clue: a one-token clue is then scored from
    the prompt's last state alone, which is also what makes the judge fast.
    Length effects: the same clue text is scored under every candidate, so the number of
    tokens (and any length bias) is the same across a row; only the candidate-dependent part
    survives the normalisation over candidates. Rows of different clues are never compared.

``elicitation``
    The judge is shown the category, the candidates and the clues so far and states a
    probability for each candidate. With ``top_logprobs`` from the endpoint, the options are
    lettered and the distribution is read from the log-probabilities of the first answer
    token; otherwise the answer must be a JSON object ``{candidate: probability}``, parsed
    strictly and retried when invalid. The judge's posterior after clue i, p_i, becomes the
    log-likelihood row log p_i − log p_{i−1} (p_0 uniform), so the posterior engine
    reproduces exactly what the judge said.

**Direction** (likelihood mode). ``speaker`` (default): log P(clue | secret), as above: one
prompt per candidate, every clue token scored and normalised over the vocabulary.
``listener``: the other way round, log P(secret | clue) − log P(secret | no clue): one prompt
per clue (``LISTENER_PROMPT``), each candidate scored as the continuation (``' {word}'``),
minus the same after the prompt with an empty description. By Bayes' rule this pointwise
mutual information is log P(clue | secret) − log P(clue), the speaker's row up to a constant
per clue, which cancels in the posterior; subtracting the empty-description prompt removes
the model's prior for each word. The listener reads each clue once whatever the number of
candidates and scores one-token words from the prompt's last state: against a pair, one
decoder pass over the statement and one projection onto the vocabulary, where the speaker
runs the statement under both words and normalises every statement token (docs/llm.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from string import ascii_uppercase
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from leakage._runtime import RuntimeChoice
from leakage.backends.base import Closing, Device, Precision, costs
from leakage.errors import LLMError
from leakage.llm import (
    LLMClient,
    Message,
    SupportsScoreEach,
    SupportsScoreGroups,
    SupportsScoreMany,
    SupportsTokenizer,
    open_llm,  # also importable from here, where it was before leakage.llm had it
)

Mode = Literal["likelihood", "elicitation"]
Direction = Literal["speaker", "listener"]
Normaliser = Literal["exact", "shortlist"]
"""The local model's normaliser (``leakage.llm._local.NORMALISERS``)."""
MODES: tuple[str, ...] = get_args(Mode)
DIRECTIONS: tuple[str, ...] = get_args(Direction)

CHAMELEON_PROMPT = (
    "Category: {category}. When people hear the secret word, the first word that comes to "
    "mind is said.\nSecret word: {word}. First word that comes to mind:"
)
"""The association prompt for one-word clues; the clue follows as ``CLUE_TEMPLATE``. Only
its end names the candidate, so the part every candidate's prompt shares (encoded once) is
long and each candidate adds about eight tokens."""

DESCRIPTION_PROMPT = (
    "In a word game, a player who knows the secret word describes it without saying it.\n"
    "Secret word: {word}. The player says:"
)
"""For sentence clues (SpyGame statements) and games without a category."""

LISTENER_PROMPT = "Description: {clue}\nThe word being described is:"
"""The ``listener`` direction's prompt: a clue (or a statement), then each candidate as
``' {word}'``; also asked with an empty description, whose scores are subtracted."""

CLUE_TEMPLATE = " {clue}"
"""How a clue continues the prompt: after a space, nothing after it (see the module doc)."""

_LOG_FLOOR = -30.0
_PREPARE_GROUPS = 64
"""(prompts, clues) groups scored per ``score_groups`` call in ``prepare`` (bounds memory),
for a client that scores ``_PREPARE_PROMPTS`` prompts a call; scaled with its own
``call_prompts`` (``LocalLM``: the device's budget, 32x more on a GPU)."""
_PREPARE_PROMPTS = 256
"""Listener prompts scored per ``score_each`` call in ``prepare`` unless the client says how
many fill its device (``call_prompts``): their KV states live until the call ends (about
1 MB per CK-Arena statement with Gemma in fp32)."""


def _per_call(client: object) -> int:
    """Prompts per bulk call the client asks for (``call_prompts``), else ``_PREPARE_PROMPTS``."""
    value = getattr(client, "call_prompts", None)
    return value if isinstance(value, int) and value > 0 else _PREPARE_PROMPTS


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}")


def _strip_fence(text: str) -> str:
    text = text.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    return fence.group(1) if fence else text


def parse_distribution(text: str, candidates: Sequence[str]) -> NDArray[np.float64]:
    """A strict reading of ``{candidate: probability}``: every key a candidate (any case),
    every value a non-negative number, a positive sum; missing candidates get 0."""
    try:
        obj = json.loads(_strip_fence(text))
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err.msg}") from None
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object mapping each candidate to a probability")
    index = {c.casefold(): i for i, c in enumerate(candidates)}
    p = np.zeros(len(candidates))
    for key, value in obj.items():
        i = index.get(str(key).strip().casefold())
        if i is None:
            raise ValueError(f"{key!r} is not a candidate")
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise ValueError(f"probability of {key!r} must be a non-negative number")
        p[i] = float(value)
    if not np.isfinite(p).all() or p.sum() <= 0:
        raise ValueError("probabilities must have a positive finite sum")
    return p / p.sum()


class JudgeBackend(Closing):
    """An LLM as a likelihood backend (see the module docstring for the two modes).

    ``close()`` drops the answers kept by ``prepare``. The LLM client is not closed: a
    local model is shared between backends by ``open_llm`` and freed when no backend holds
    it, and the remote client opens its connections and cache per call.
    """

    name = "judge"

    def __init__(
        self,
        client: LLMClient,
        *,
        mode: Mode = "likelihood",
        prompt: str | None = None,
        clue_template: str = CLUE_TEMPLATE,
        max_retries: int = 2,
        direction: Direction = "speaker",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        _check_direction(direction)
        if direction == "listener" and prompt is not None and "{clue}" not in prompt:
            raise ValueError("a listener prompt must contain {clue}")
        self.direction = direction
        self.client = client
        self.mode = mode
        self.prompt = prompt
        if "{clue}" not in clue_template:
            raise ValueError("clue_template must contain {clue}")
        self.clue_template = clue_template
        self.max_retries = max_retries
        self._prepared: dict[tuple[tuple[str, ...], str], NDArray[np.float64]] = {}
        self.failures = 0
        """Elicitation answers that stayed invalid after the retries (rows left flat)."""

    @property
    def runtime(self) -> RuntimeChoice | None:
        """Where and how the LLM runs (``RuntimeChoice``); ``None`` for a client that does
        not say (an endpoint, a test's scripted model)."""
        choice = getattr(self.client, "runtime", None)
        return choice if isinstance(choice, RuntimeChoice) else None

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "mode": self.mode,
            **({"direction": self.direction} if self.mode == "likelihood" else {}),
            "model": self.client.name,
            "llm": self.client.info(),
            **({"runtime": choice.describe()} if (choice := self.runtime) else {}),
            "prompt": self.prompt or "default",
            "clue_template": self.clue_template,
        }

    def close(self) -> None:
        """Drop the answers ``prepare`` kept (idempotent)."""
        self._prepared = {}

    def count_tokens(self, texts: Sequence[str]) -> int | None:
        """Tokens the model makes of ``texts``, all together, without special tokens
        (``SupportsTokenCount``); None when the model is behind an HTTP endpoint, whose
        tokenizer is not here. Read-only calls into the tokenizer: safe while the backend
        scores another game on another thread."""
        if not isinstance(self.client, SupportsTokenizer):
            return None
        tok = self.client.tokenizer
        fast = getattr(tok, "backend_tokenizer", None)  # the tokenizers library's, if fast
        if fast is not None:
            return sum(len(fast.encode(t, add_special_tokens=False).ids) for t in texts)
        return sum(len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts)

    # -- likelihood --------------------------------------------------------------------

    def _prompt_for(self, word: str, category: str | None, sentences: bool) -> str:
        if self.prompt is not None:
            return self.prompt.format(word=word, category=category or "")
        if category and not sentences:
            return CHAMELEON_PROMPT.format(word=word, category=category)
        return DESCRIPTION_PROMPT.format(word=word)

    def _requests(
        self, clues: Sequence[str], candidates: Sequence[str], category: str | None
    ) -> tuple[list[int], tuple[str, ...], list[str]]:
        """The candidates' order, their prompts and the clues' continuations. Candidates go in
        a canonical order, so that games on the same card in any order ask for the same
        prompts (a local model keeps encoded prompts by the whole set)."""
        sentences = any(len(c.split()) > 3 for c in clues)
        order = sorted(range(len(candidates)), key=lambda j: candidates[j])
        prompts = tuple(self._prompt_for(candidates[j], category, sentences) for j in order)
        return order, prompts, [self.clue_template.format(clue=c.strip()) for c in clues]

    def prepare(self, games: Iterable[tuple[Sequence[str], Sequence[str], str | None]]) -> None:
        """Score the clues of many games at once (optional hook). Speaker, with a client that
        has ``score_groups`` (``SupportsScoreGroups``: the local model): the games' (prompts,
        clues) groups of a batch share one projection onto the vocabulary instead of one per
        game. Listener, with a client that has ``score_each`` (``SupportsScoreEach``): see
        ``_prepare_listener``. The answers are kept until
        the next ``prepare``: ``_prepared[(prompts, continuation)]`` is that continuation's
        score after each of the prompts."""
        self._prepared = {}
        if self.mode != "likelihood":
            return
        if self.direction == "listener":
            self._prepare_listener(games)
            return
        if not isinstance(self.client, SupportsScoreGroups):
            return
        groups_of = self.client.score_groups
        wanted: dict[tuple[str, ...], dict[str, None]] = {}
        for clues, candidates, category in games:
            if clues:
                _, prompts, conts = self._requests(clues, candidates, category)
                wanted.setdefault(prompts, {}).update(dict.fromkeys(conts))
        items = [(prompts, list(conts)) for prompts, conts in wanted.items()]
        per_call = max(1, _PREPARE_GROUPS * _per_call(self.client) // _PREPARE_PROMPTS)
        for at in range(0, len(items), per_call):
            batch = items[at : at + per_call]
            for (prompts, conts), block in zip(batch, groups_of(batch), strict=True):
                for c, column in zip(conts, np.asarray(block, dtype=np.float64).T, strict=True):
                    self._prepared[(prompts, c)] = column

    def _likelihood(
        self, clues: Sequence[str], candidates: Sequence[str], category: str | None
    ) -> NDArray[np.float64]:
        order, prompts, continuations = self._requests(clues, candidates, category)
        known = [self._prepared.get((prompts, c)) for c in continuations]
        if all(k is not None for k in known):
            scores = np.array(known).T
        else:
            scores = self._score_table(prompts, continuations)
        out = np.empty((len(clues), len(candidates)))
        out[:, order] = scores.T
        return out  # (clues x candidates)

    def _score_table(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> NDArray[np.float64]:
        """(prompts x continuations) log-probabilities: in one ``score_many`` call where the
        client has it (``SupportsScoreMany``: the local model batches the prompts, an endpoint
        sends them concurrently), else one ``score`` per prompt."""
        if isinstance(self.client, SupportsScoreMany):
            scores = self.client.score_many(list(prompts), list(continuations))
            return np.asarray(scores, dtype=np.float64)
        return np.array([self.client.score(p, continuations) for p in prompts], dtype=np.float64)

    def _listener_requests(
        self, clues: Sequence[str], candidates: Sequence[str], category: str | None
    ) -> tuple[list[str], list[str]]:
        """The listener's prompts (one per clue, then the empty description) and the
        candidates' continuations."""
        template = self.prompt or LISTENER_PROMPT
        prompts = [template.format(clue=c.strip(), category=category or "") for c in clues]
        prompts.append(template.format(clue="", category=category or ""))
        return prompts, [f" {w.strip()}" for w in candidates]

    def _prepare_listener(
        self, games: Iterable[tuple[Sequence[str], Sequence[str], str | None]]
    ) -> None:
        """The listener's prompts of every game, each once (the empty description once per
        template and category, not once per game) with the union of the continuations asked
        after it, scored ``_per_call`` prompts at a time (by length) by the client's
        ``score_each``: the prompts of all games go through the decoder in length-sorted
        batches. Same numbers as game by game, up to the rounding of another batch shape."""
        if not isinstance(self.client, SupportsScoreEach):
            return
        each = self.client.score_each
        wanted: dict[str, dict[str, None]] = {}
        for clues, candidates, category in games:
            if clues:
                prompts, conts = self._listener_requests(clues, candidates, category)
                for p in prompts:
                    wanted.setdefault(p, {}).update(dict.fromkeys(conts))
        items = sorted(((p, list(conts)) for p, conts in wanted.items()), key=lambda x: len(x[0]))
        per_call = _per_call(self.client)
        for at in range(0, len(items), per_call):  # similar lengths in each call
            batch = items[at : at + per_call]
            for (prompt, conts), row in zip(batch, each(batch), strict=True):
                for c, value in zip(conts, np.asarray(row, dtype=np.float64), strict=True):
                    self._prepared[((prompt,), c)] = np.array([value])

    def _listener(
        self, clues: Sequence[str], candidates: Sequence[str], category: str | None
    ) -> NDArray[np.float64]:
        prompts, conts = self._listener_requests(clues, candidates, category)
        asked = [((p,), c) for p in prompts for c in conts]
        known = [self._prepared[k] for k in asked if k in self._prepared]
        if len(known) == len(asked):
            scores = np.concatenate(known).reshape(len(prompts), len(conts))
        else:
            scores = self._score_table(prompts, conts)
        return scores[:-1] - scores[-1]  # (clues x candidates): PMI against the empty clue

    # -- elicitation -------------------------------------------------------------------

    def _ask(
        self, clues: Sequence[str], candidates: Sequence[str], category: str | None
    ) -> NDArray[np.float64]:
        lettered = len(candidates) <= len(ascii_uppercase)
        said = "\n".join(f"- {c}" for c in clues)
        header = (
            "We are playing a word game. Players who know the secret word give clues about it.\n"
            + (f"Category: {category}\n" if category else "")
            + f"Clues so far:\n{said}\n"
        )
        if lettered:
            options = "\n".join(f"{ascii_uppercase[i]}. {w}" for i, w in enumerate(candidates))
            question = f"Which word is the secret?\n{options}\nAnswer with the letter only."
            gen = self.client.generate(
                [Message("user", header + question)], max_tokens=1, top_logprobs=20
            )
            if gen.top_logprobs:
                first = gen.top_logprobs[0]
                logp = np.full(len(candidates), _LOG_FLOOR)
                for token, lp in first.items():
                    t = token.strip().rstrip(".").upper()
                    if len(t) == 1 and t in ascii_uppercase[: len(candidates)]:
                        i = ascii_uppercase.index(t)
                        logp[i] = max(logp[i], lp)
                if (logp > _LOG_FLOOR).any():
                    p = np.exp(logp - logp.max())
                    return p / p.sum()
        ask = (
            header
            + "Candidates: "
            + ", ".join(candidates)
            + "\nGive the probability that each candidate is the secret, as a JSON object "
            "mapping every candidate to a number, and nothing else."
        )
        messages = [Message("user", ask)]
        problem = ""
        for _ in range(self.max_retries + 1):
            gen = self.client.generate(messages, max_tokens=400)
            try:
                return parse_distribution(gen.text, candidates)
            except ValueError as err:
                problem = str(err)
                messages = [
                    *messages,
                    Message("assistant", gen.text),
                    Message("user", f"That was not valid ({problem}). Answer with the JSON only."),
                ]
        self.failures += 1
        raise LLMError(
            f"judge {self.client.name}: no valid probability JSON after "
            f"{self.max_retries + 1} tries ({problem})"
        )

    def _elicitation(
        self, clues: Sequence[str], candidates: Sequence[str], category: str | None
    ) -> NDArray[np.float64]:
        k = len(candidates)
        previous = np.full(k, 1.0 / k)
        rows = np.zeros((len(clues), k))
        for i in range(len(clues)):
            p = np.maximum(self._ask(clues[: i + 1], candidates, category), np.exp(_LOG_FLOOR))
            p /= p.sum()
            rows[i] = np.log(p) - np.log(previous)
            previous = p
        return rows

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        if not clues:
            return np.zeros((0, len(candidates)))
        if self.mode == "likelihood" and self.direction == "listener":
            return self._listener(clues, candidates, category)
        if self.mode == "likelihood":
            return self._likelihood(clues, candidates, category)
        return self._elicitation(clues, candidates, category)

    # -- ratings -----------------------------------------------------------------------

    def rate(self, statement: str, word: str) -> dict[str, float]:
        """CK-Arena-style ratings in [0, 1]: ``relevance`` (does the statement fit the word)
        and ``revealing`` (how much it gives the word away)."""
        ask = (
            f'Word: {word}\nStatement: "{statement}"\n'
            "Rate the statement as a clue for the word. Answer with a JSON object "
            '{"relevance": r, "revealing": v}, numbers from 0 to 1: relevance = how well the '
            "statement fits the word; revealing = how easily someone could guess the word."
        )
        problem = ""
        for _ in range(self.max_retries + 1):
            gen = self.client.generate([Message("user", ask)], max_tokens=60)
            try:
                obj = json.loads(_strip_fence(gen.text))
                out = {k: float(obj[k]) for k in ("relevance", "revealing")}
                if all(0.0 <= v <= 1.0 for v in out.values()):
                    return out
                problem = "values outside [0, 1]"
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                problem = f"{err.__class__.__name__}: {err}"
        raise LLMError(f"judge {self.client.name}: no valid rating JSON ({problem})")


@costs(250)  # a language model reads each candidate's prompt (leakage_service.inputs)
def _judge(
    *,
    model: str | None = None,
    mode: Mode = "likelihood",
    endpoint: str | None = None,
    api_key: str | None = None,
    client: LLMClient | None = None,
    prompt: str | None = None,
    clue_template: str = CLUE_TEMPLATE,
    precision: Precision = "auto",
    threads: int | None = None,
    normaliser: Normaliser = "exact",
    direction: Direction = "speaker",
    cache_path: str | None = None,
    models_dir: str | None = None,
    client_kind: str | None = None,
    variables: Mapping[str, str] | None = None,
    device: Device = "auto",
) -> JudgeBackend:
    """``client_kind``: the kind of LLM client (``leakage.llm.LLM_CLIENTS``: ``local``,
    ``openai`` or one an installed distribution adds; default: ``openai`` with an
    ``endpoint``, else ``local``); ``open_llm`` builds it from the model options.
    ``variables``: the endpoint's ``LEAKAGE_LLM_*`` values as the caller read them (the
    command line's and the service's settings; ``None``: the environment). ``device``: where
    a local model runs (``auto``: a CUDA device when torch sees one; ``leakage._runtime``)."""
    _check_direction(direction)  # before a model is loaded, which takes seconds
    llm = client or open_llm(
        model,
        kind=client_kind,
        endpoint=endpoint,
        api_key=api_key,
        precision=precision,
        threads=threads,
        normaliser=normaliser,
        cache_path=cache_path,
        models_dir=models_dir,
        variables=variables,
        device=device,
    )
    return JudgeBackend(
        llm, mode=mode, prompt=prompt, clue_template=clue_template, direction=direction
    )


@costs(250)  # the judge's factor: it reads each clue once, so this overstates its cost
def _listener(
    *,
    model: str | None = None,
    endpoint: str | None = None,
    api_key: str | None = None,
    client: LLMClient | None = None,
    prompt: str | None = None,
    precision: Precision = "auto",
    threads: int | None = None,
    cache_path: str | None = None,
    models_dir: str | None = None,
    client_kind: str | None = None,
    variables: Mapping[str, str] | None = None,
    device: Device = "auto",
) -> JudgeBackend:
    """The judge in the ``listener`` direction (log P(secret | clue) − log P(secret | no
    clue), see the module docstring) under a name of its own: ``-b listener`` is ``-b judge
    --direction listener``, and an ensemble, whose members are backend names, can pool it
    beside the speaker. With the same model settings the two share one loaded model."""
    backend = _judge(
        model=model,
        endpoint=endpoint,
        api_key=api_key,
        client=client,
        prompt=prompt,
        precision=precision,
        threads=threads,
        direction="listener",
        cache_path=cache_path,
        models_dir=models_dir,
        client_kind=client_kind,
        variables=variables,
        device=device,
    )
    backend.name = "listener"
    return backend
