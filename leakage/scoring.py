"""Scoring a transcript: backend matrix -> posterior engine -> ``leakage.report/1``.

Scoring runs in two stages, and both work on plain values taken from the transcript, so
that a batch can send games to other processes cheaply:

1. :func:`score_inputs` asks the backend about the clues of a chunk of games
   (:class:`ChameleonInput`, :class:`SpyInput`) and runs the posterior engine over the
   answers, once per group of Chameleon games of the same shape; the result per game is its
   :class:`~leakage.posterior.Trace` (Chameleon) or :class:`~leakage.posterior.SpyTrace`.
2. :func:`shape_report` puts a trace together with the rest of the game
   (:class:`ReportContext`: ids, roles, rounds, meta) into the report as plain data, shaped
   by a :class:`ReportShape` (the service's ``top_k``, extra settings, redaction). It is
   the one place reports are made: :func:`build_report` validates its data into a
   :class:`~leakage.reports.Report` (the CLI, the library), :func:`report_json` serialises
   it without validating (the batch, the service), byte for byte what the model writes.

:func:`score_transcript` and :func:`score_many` run both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel
from pydantic_core import to_json

from leakage._seats import OPEN_SEATS, canonical_seat, check_seat, seat_error
from leakage.backends.base import LikelihoodBackend, SupportsEmbed, SupportsPrepare
from leakage.errors import InvalidInput
from leakage.metrics import outlier_trace
from leakage.posterior import SPY_ASSIGNMENTS, SpyTrace, Trace, posterior_traces, spy_trace
from leakage.reports import Report, Step, Summary
from leakage.transcripts import AnyTranscript, ChameleonTranscript

if TYPE_CHECKING:
    from leakage.seats import SeatTrace

ReportData = dict[str, Any]
"""A ``leakage.report/1`` as plain data, every field in the report's order (what
``Report.model_dump()`` gives), before it is validated or serialised."""


@dataclass(frozen=True)
class ScoreOptions:
    """How games are scored (the same for a whole batch)."""

    include_chameleon: bool = False
    """Chameleon: let the chameleon's own turns update the posterior too."""
    spy_assignment: Literal["known", "marginalise"] = "known"
    """SpyGame: ``known`` (which word is the civilians' is known) or ``marginalise``; the
    old name of the seats ``outside-known`` and ``outside-pair``."""
    seat: str | None = None
    """Whose posterior the figures are (``leakage.seats.SEATS``; docs/games.md, "Seats"):
    SpyGame ``outside-known``, ``outside-pair``, ``civilian``, ``spy``; The Chameleon
    ``chameleon``, ``non-chameleon``; ``known`` / ``marginalise`` are aliases of the
    outside seats. None: the game's default seat (SpyGame: ``spy_assignment``'s; The
    Chameleon: the chameleon's, or with ``include_chameleon`` an outside observer's), and
    the report's ``settings`` stay as before. A seat that is not the game's is an error
    naming the ``seat`` field, for that game alone."""
    seat_vocabulary: str | None = None
    """``spy`` / ``civilian``: the open vocabulary (``wordfreq:N``, a word file or a saved
    vocabulary index; default ``wordfreq:50000``, built once in ``LEAKAGE_HOME``)."""
    seat_shortlist: int | None = None
    """``spy`` / ``civilian``: words re-ranked per statement (default
    ``leakage.seats.SEAT_SHORTLIST``)."""

    def __post_init__(self) -> None:
        if self.spy_assignment not in SPY_ASSIGNMENTS:
            raise InvalidInput(
                f"spy_assignment must be one of {', '.join(SPY_ASSIGNMENTS)}, "
                f"not {self.spy_assignment!r}"
            )
        if self.seat is None:
            return
        seat = canonical_seat(self.seat)
        object.__setattr__(self, "seat", seat)
        if seat == "outside-pair":
            object.__setattr__(self, "spy_assignment", "marginalise")
        elif seat == "outside-known" and self.spy_assignment != "known":
            raise InvalidInput(
                "seat: outside-known contradicts spy_assignment=marginalise (the seat "
                "outside-pair); give one of them"
            )
        if seat == "chameleon" and self.include_chameleon:
            raise InvalidInput(
                "seat: the chameleon learns nothing from its own clues; leave "
                "include_chameleon off (or the seat out, for an outside observer)"
            )
        if self.seat_shortlist is not None and self.seat_shortlist < 1:
            raise InvalidInput("seat_shortlist: must be at least 1")


class ChameleonInput(NamedTuple):
    """What the backend stage needs from one Chameleon transcript, as plain values (built
    by keyword: :func:`game_input`)."""

    texts: tuple[str, ...]
    """Every turn's text, in order."""
    speakers: tuple[str, ...]
    """Every turn's player id."""
    candidates: tuple[str, ...]
    category: str | None
    counted: tuple[bool, ...]
    """Which turns update the posterior."""
    secret_index: int | None
    """Position of the secret among the candidates (None without a secret)."""
    players: tuple[str, ...] = ()
    """The player ids in seat order."""
    chameleons: tuple[str, ...] = ()
    seat: str | None = None
    """``ScoreOptions.seat`` (None: the default)."""

    @property
    def game(self) -> Literal["chameleon"]:
        return "chameleon"

    @property
    def columns(self) -> tuple[str, ...]:
        """What a step's posterior ranges over: the card, or the players from the
        non-chameleon's seat."""
        return self.players if self.seat == "non-chameleon" else self.candidates

    @property
    def clues(self) -> list[str]:
        """The texts the backend is asked about."""
        return [x for x, c in zip(self.texts, self.counted, strict=True) if c]


class SpyInput(NamedTuple):
    """What the backend stage needs from one SpyGame transcript, as plain values (built by
    keyword: :func:`game_input`)."""

    texts: tuple[str, ...]
    """Every statement's text, in order."""
    speakers: tuple[str, ...]
    """Every statement's player id."""
    candidates: tuple[str, ...]
    """The civilians' word, the spy's, then any distractors."""
    word_index: tuple[int, ...]
    """For every statement, the position of the speaker's word among the candidates."""
    players: tuple[str, ...]
    """The player ids in seat order (the spy posterior's columns)."""
    n_spies: int
    spy_assignment: str = "known"
    player_words: tuple[int, ...] = ()
    """For every player (``players``' order), the position of its word among the candidates."""
    seat: str | None = None
    """``ScoreOptions.seat`` (None: the default)."""
    seat_vocabulary: str | None = None
    seat_shortlist: int | None = None

    @property
    def game(self) -> Literal["spygame"]:
        return "spygame"

    @property
    def holders(self) -> tuple[str, ...]:
        """The players who sit in the seat: ``spy`` those who hold the spies' word,
        ``civilian`` those who hold the civilians' (the first candidate)."""
        if self.seat == "spy":
            return tuple(p for p, w in zip(self.players, self.player_words, strict=True) if w)
        if self.seat == "civilian":
            return tuple(p for p, w in zip(self.players, self.player_words, strict=True) if not w)
        return ()

    @property
    def columns(self) -> tuple[str, ...]:
        """What a step's posterior ranges over: the pair (and distractors), or the players
        from a civilian's seat."""
        return self.players if self.seat == "civilian" else self.candidates

    @property
    def category(self) -> None:
        """SpyGame has no category."""
        return None

    @property
    def counted(self) -> tuple[bool, ...]:
        """Every statement counts; from a player's seat (``spy``, ``civilian``), the first
        holder's own statements do not."""
        if self.seat in OPEN_SEATS and self.holders:
            first = self.holders[0]
            return tuple(p != first for p in self.speakers)
        return (True,) * len(self.texts)

    @property
    def clues(self) -> list[str]:
        """The texts the backend is asked about: every statement."""
        return list(self.texts)


GameInput = ChameleonInput | SpyInput
"""What the backend stage needs from one transcript (:func:`game_input`)."""


def _as_dict(words: list[str], p: np.ndarray) -> dict[str, float]:
    return dict(zip(words, p.tolist(), strict=True))


def _counted(t: ChameleonTranscript, options: ScoreOptions) -> tuple[bool, ...]:
    chameleons = t.chameleons()
    return tuple(options.include_chameleon or turn.player not in chameleons for turn in t.turns)


def game_input(t: AnyTranscript, options: ScoreOptions = ScoreOptions()) -> GameInput:
    """The plain values :func:`score_input` needs from ``t``; a seat that is not one of
    ``t``'s game is an error naming the ``seat`` field and the game."""
    texts = tuple(turn.text for turn in t.turns)
    speakers = tuple(turn.player for turn in t.turns)
    seat = options.seat
    if isinstance(t, ChameleonTranscript):
        if seat is not None:
            check_seat(seat, "chameleon", t.id)
        counted = _counted(t, options)
        players = tuple(p.id for p in t.players)
        chameleons = tuple(p for p in players if p in t.chameleons())
        if seat == "non-chameleon":
            if t.secret is None:
                raise seat_error(
                    "the non-chameleon's seat knows the secret, and this game has none", t.id
                )
            if not chameleons or len(chameleons) == len(players):
                raise seat_error(
                    "the non-chameleon's seat needs a chameleon and a non-chameleon", t.id
                )
            first = next(p for p in players if p not in chameleons)
            counted = tuple(p != first for p in speakers)
        return ChameleonInput(
            texts=texts,
            speakers=speakers,
            candidates=tuple(t.candidates),
            category=t.category,
            counted=counted,
            secret_index=t.candidates.index(t.secret) if t.secret is not None else None,
            players=players,
            chameleons=chameleons,
            seat=seat,
        )
    if seat is not None:
        check_seat(seat, "spygame", t.id)
    candidates = tuple(t.candidates)
    position = {w: j for j, w in enumerate(candidates)}
    words = {pid: position[w] for pid, w in t.words_by_player().items()}
    inp = SpyInput(
        texts=texts,
        speakers=speakers,
        candidates=candidates,
        word_index=tuple(words[x] for x in speakers),
        players=tuple(p.id for p in t.players),
        n_spies=len(t.spies()),
        spy_assignment=options.spy_assignment,
        player_words=tuple(words[p.id] for p in t.players),
        seat=seat,
        seat_vocabulary=options.seat_vocabulary,
        seat_shortlist=options.seat_shortlist,
    )
    if seat in OPEN_SEATS and not inp.holders:
        raise seat_error(f"no player sits in the {seat}'s seat", t.id)
    return inp


def scored_clues(t: AnyTranscript, options: ScoreOptions = ScoreOptions()) -> list[str]:
    """The clue texts scoring ``t`` sends to the backend (what a dry run must price)."""
    return game_input(t, options).clues


def _chameleon_loglik(inp: ChameleonInput, backend: LikelihoodBackend) -> np.ndarray:
    """The backend's log-likelihoods, one row per turn (zeros for turns not counted)."""
    loglik = np.zeros((len(inp.texts), len(inp.candidates)))
    if any(inp.counted):
        rows = backend.loglik(inp.clues, list(inp.candidates), category=inp.category)
        loglik[np.flatnonzero(inp.counted)] = rows
    return loglik


class BackendRequest(NamedTuple):
    """One question :func:`score_inputs` asks the backend about a game: ``loglik(clues,
    candidates, category=...)``, and ``embed(clues)`` after it where ``embed`` is set and the
    backend can embed (a SpyGame's outlier scores)."""

    clues: tuple[str, ...]
    candidates: tuple[str, ...]
    category: str | None
    embed: bool = False


def backend_requests(inp: GameInput) -> list[BackendRequest]:
    """What :func:`score_inputs` asks the backend about ``inp``, and nothing else: a stage
    that answers these on a model's device (the Ray engine's GPU actors) and another that
    replays the answers to :func:`score_inputs` elsewhere get the same traces. Kept beside
    ``_chameleon_loglik`` and ``_spygame_trace``, whose questions these are."""
    if isinstance(inp, ChameleonInput):
        if inp.seat == "non-chameleon":
            return [BackendRequest(inp.texts, inp.candidates, inp.category)] if inp.texts else []
        if not any(inp.counted):
            return []
        return [BackendRequest(tuple(inp.clues), tuple(inp.candidates), inp.category)]
    if inp.seat in OPEN_SEATS:
        raise InvalidInput(
            f"seat: the {inp.seat}'s seat asks the backend about words of an open vocabulary "
            "that only the scoring process knows; score it with the process engine"
        )
    if not inp.texts:
        return []
    return [BackendRequest(tuple(inp.texts), tuple(inp.candidates), None, embed=True)]


def score_input(inp: GameInput, backend: LikelihoodBackend) -> Trace | SpyTrace | SeatTrace:
    """Stage 1 for one game (:func:`score_inputs`); a game the backend rejects raises."""
    (trace,) = score_inputs([inp], backend)
    if isinstance(trace, InvalidInput):
        raise trace
    return trace


def _spygame_trace(inp: SpyInput, backend: LikelihoodBackend) -> SpyTrace:
    """The backend's log-likelihoods of every statement through :func:`spy_trace`, with
    outlier scores when the backend can embed (:class:`~leakage.backends.base.SupportsEmbed`)."""
    texts = list(inp.texts)
    k = len(inp.candidates)
    loglik = backend.loglik(texts, list(inp.candidates)) if texts else np.zeros((0, k))
    seat = {pid: j for j, pid in enumerate(inp.players)}
    trace = spy_trace(
        loglik,
        [seat[p] for p in inp.speakers],
        inp.word_index,
        len(inp.players),
        inp.n_spies,
        assignment=inp.spy_assignment,
    )
    if isinstance(backend, SupportsEmbed) and texts:
        vectors = backend.embed(texts)
        trace = replace(trace, outlier_scores=outlier_trace(list(inp.speakers), vectors))
    return trace


def _seat_trace(inp: GameInput, backend: LikelihoodBackend) -> SeatTrace:
    """A player's seat (``spy``, ``civilian``, ``non-chameleon``): ``leakage.seats``."""
    from leakage.seats import chameleon_seat_trace, spygame_seat_trace

    if isinstance(inp, ChameleonInput):
        assert inp.secret_index is not None  # game_input checked it
        loglik = backend.loglik(list(inp.texts), list(inp.candidates), category=inp.category)
        return chameleon_seat_trace(
            loglik=loglik if inp.texts else np.zeros((0, len(inp.candidates))),
            speakers=inp.speakers,
            players=inp.players,
            chameleons=inp.chameleons,
            secret_index=inp.secret_index,
        )
    assert inp.seat is not None
    return spygame_seat_trace(
        inp.seat,
        texts=inp.texts,
        speakers=inp.speakers,
        players=inp.players,
        player_words=[inp.candidates[w] for w in inp.player_words],
        civilian_word=inp.candidates[0],
        candidates=inp.candidates,
        backend=backend,
        vocabulary=inp.seat_vocabulary,
        shortlist=inp.seat_shortlist,
    )


PLAYER_SEATS = (*OPEN_SEATS, "non-chameleon")
"""Seats computed from a player's knowledge (``leakage.seats``), not by the posterior engine."""


def score_inputs(
    inputs: Sequence[GameInput], backend: LikelihoodBackend
) -> list[Trace | SpyTrace | SeatTrace | InvalidInput]:
    """:func:`score_input` for many games, in order: the backend is asked game by game, the
    posterior engine runs once per group of Chameleon games of the same shape (turns,
    candidates, with or without a secret). A game the backend rejects comes back as its
    :class:`~leakage.errors.InvalidInput`; any other backend error is raised."""
    out: list[Trace | SpyTrace | SeatTrace | InvalidInput | None] = [None] * len(inputs)
    groups: dict[tuple[int, int, bool], list[tuple[int, ChameleonInput, np.ndarray]]] = {}
    for i, inp in enumerate(inputs):
        try:
            if inp.seat in PLAYER_SEATS:
                out[i] = _seat_trace(inp, backend)
            elif isinstance(inp, ChameleonInput):
                loglik = _chameleon_loglik(inp, backend)
                key = (len(inp.texts), len(inp.candidates), inp.secret_index is not None)
                groups.setdefault(key, []).append((i, inp, loglik))
            else:
                out[i] = _spygame_trace(inp, backend)
        except InvalidInput as err:
            out[i] = err
    for (m, _, has_secret), members in groups.items():
        traces = posterior_traces(
            np.stack([loglik for _, _, loglik in members]),
            counted=np.array([g.counted for _, g, _ in members], dtype=bool).reshape(
                len(members), m
            ),
            secret_index=[g.secret_index or 0 for _, g, _ in members] if has_secret else None,
        )
        for (i, _, _), tr in zip(members, traces, strict=True):
            out[i] = tr
    done = [x for x in out if x is not None]
    assert len(done) == len(inputs)  # every game is a trace or an error by now
    return done


class ReportContext(NamedTuple):
    """What the report stage takes from a transcript beside its :class:`GameInput`, as plain
    values (so that the process that scores a game can also write its report)."""

    game_id: str
    secret: str | None
    """Chameleon: the secret; SpyGame: the civilians' word."""
    roles: tuple[str, ...]
    """Every turn's speaker's role."""
    rounds: tuple[int | None, ...]
    speaker_words: tuple[str | None, ...]
    """SpyGame: every turn's speaker's word."""
    spies: tuple[str, ...]
    meta: dict[str, Any]


def report_context(t: AnyTranscript) -> ReportContext:
    """The :class:`ReportContext` of ``t``."""
    roles = {p.id: p.role for p in t.players}
    speakers = [turn.player for turn in t.turns]
    rounds = tuple(turn.round for turn in t.turns)
    if isinstance(t, ChameleonTranscript):
        words: tuple[str | None, ...] = (None,) * len(speakers)
        return ReportContext(
            t.id, t.secret, tuple(roles[p] for p in speakers), rounds, words, (), t.meta
        )
    held = t.words_by_player()
    words = tuple(held[p] for p in speakers)
    spies = tuple(sorted(t.spies()))
    return ReportContext(
        t.id, t.words.civilian, tuple(roles[p] for p in speakers), rounds, words, spies, t.meta
    )


@dataclass(frozen=True)
class ReportShape:
    """How a report is written beyond what scoring found: what a caller asks of its copy
    (the service's request options). The default leaves the report as scored."""

    top_k: int | None = None
    """Keep only the k most probable candidates in each step's ``posterior`` (recorded as
    ``settings.top_k``); ``secret_rank`` and the summary still use every candidate."""
    extra_settings: Mapping[str, Any] = field(default_factory=dict)
    """Recorded in ``settings`` after the scoring options (the service: ``distractors``)."""
    redact: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """Applied to ``backend_info`` (the service: no server file path leaves it)."""


def shape_report(
    inp: GameInput,
    ctx: ReportContext,
    trace: Trace | SpyTrace | SeatTrace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions = ScoreOptions(),
    shape: ReportShape = ReportShape(),
) -> ReportData:
    """Stage 2: the report of one game as plain data, from its input, context and trace,
    built without validating it; every caller's report comes from here (see the module's
    docstring). ``Report.model_validate`` of it is the report, :func:`report_json` its
    JSON."""
    if not isinstance(trace, (Trace, SpyTrace)):
        data = _seat_report(inp, ctx, trace, backend, backend_info, options)
    elif isinstance(inp, ChameleonInput):
        if not isinstance(trace, Trace):
            raise TypeError(f"a Chameleon game needs a Trace, not {type(trace).__name__}")
        data = _chameleon_report(inp, ctx, trace, backend, backend_info, options)
    else:
        if not isinstance(trace, SpyTrace):
            raise TypeError(f"a SpyGame needs a SpyTrace, not {type(trace).__name__}")
        data = _spygame_report(inp, ctx, trace, backend, backend_info, options)
    return reshape_report(data, shape)


def reshape_report(data: ReportData, shape: ReportShape) -> ReportData:
    """``data`` (a report's plain data) as ``shape`` asks, changed in place and returned:
    the last step of :func:`shape_report`, also for a report made before (``model_dump()``
    of a :class:`~leakage.reports.Report`)."""
    if shape.redact is not None:
        data["backend_info"] = shape.redact(data["backend_info"])
    if shape.extra_settings:
        data["settings"] = {**data["settings"], **shape.extra_settings}
    if shape.top_k is not None:
        data["settings"] = {**data["settings"], "top_k": shape.top_k}
        for step in data["steps"]:
            ranked = sorted(step["posterior"].items(), key=lambda kv: -kv[1])
            step["posterior"] = dict(ranked[: shape.top_k])
    return data


def report_data(
    inp: GameInput,
    ctx: ReportContext,
    trace: Trace | SpyTrace | SeatTrace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions = ScoreOptions(),
) -> ReportData:
    """:func:`shape_report` with the report left as scored."""
    return shape_report(inp, ctx, trace, backend, backend_info, options)


def report_json(data: ReportData) -> bytes:
    """A report's plain data (:func:`shape_report`) as one UTF-8 JSON line, by pydantic's own
    serialiser with the report's settings (NaN and infinity as null): byte for byte what
    ``Report.model_validate(data).model_dump_json()`` writes, without building and
    validating the model first (that costs about as much again)."""
    return to_json(data, inf_nan_mode="null")


def build_report(
    t: AnyTranscript,
    trace: Trace | SpyTrace | SeatTrace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions = ScoreOptions(),
) -> Report:
    """Stage 2: the report of ``t`` from what :func:`score_input` found for it."""
    return _report(t, game_input(t, options), trace, backend, backend_info, options)


def _report(
    t: AnyTranscript,
    inp: GameInput,
    trace: Trace | SpyTrace | SeatTrace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> Report:
    data = shape_report(inp, report_context(t), trace, backend, backend_info, options)
    return Report.model_validate(data)


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Every field of ``model`` in order, set to its default; a required field is left
    ``PydanticUndefined``, which neither serialises nor validates if it is not set."""
    return {name: f.get_default() for name, f in model.model_fields.items()}


_STEP = {k: v for k, v in _defaults(Step).items() if k != "seat_view"}  # only when set
_SUMMARY = _defaults(Summary)
_REPORT = _defaults(Report)


def _chameleon_report(
    inp: ChameleonInput,
    ctx: ReportContext,
    tr: Trace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> dict[str, Any]:
    candidates = inp.candidates
    counted = tr.counted.tolist()
    entropy = tr.entropy_bits.tolist()
    gain = tr.information_gain_bits.tolist()
    kl = tr.kl_bits.tolist()
    probability = None if tr.secret_probability is None else tr.secret_probability.tolist()
    rank = None if tr.secret_rank is None else tr.secret_rank.tolist()
    steps = [
        {
            **_STEP,
            "index": i,
            "player": player,
            "role": role,
            "round": round_,
            "text": text,
            "counted": counted[i],
            "posterior": dict(zip(candidates, row, strict=True)),
            "entropy_bits": entropy[i],
            "information_gain_bits": gain[i],
            "kl_bits": kl[i],
            "secret_probability": None if probability is None else probability[i],
            "secret_rank": None if rank is None else rank[i],
        }
        for i, (player, role, round_, text, row) in enumerate(
            zip(inp.speakers, ctx.roles, ctx.rounds, inp.texts, tr.posterior.tolist(), strict=True)
        )
    ]
    last = steps[-1] if steps else None
    last_rank = None if last is None else last["secret_rank"]
    summary = {
        **_SUMMARY,
        "counted_turns": sum(counted),
        "prior_entropy_bits": float(tr.prior_entropy_bits),
        "final_entropy_bits": None if last is None else last["entropy_bits"],
        "total_information_gain_bits": (
            None if last is None else float(tr.information_gain_bits.sum())
        ),
        "final_secret_probability": None if last is None else last["secret_probability"],
        "final_secret_rank": last_rank,
        "top1": None if last_rank is None else last_rank <= 1,
        "top3": None if last_rank is None else last_rank <= 3,
    }
    return {
        **_REPORT,
        "game_id": ctx.game_id,
        "game": "chameleon",
        "backend": backend,
        "backend_info": backend_info,
        "category": inp.category,
        "candidates": list(candidates),
        "secret": ctx.secret,
        "settings": {"include_chameleon": options.include_chameleon, **_seat_setting(options)},
        "steps": steps,
        "summary": summary,
        "meta": dict(ctx.meta),
    }


def _spygame_report(
    inp: SpyInput,
    ctx: ReportContext,
    tr: SpyTrace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> dict[str, Any]:
    candidates = inp.candidates
    player_ids = list(inp.players)
    n_spies = inp.n_spies
    spies = set(ctx.spies)
    outliers = tr.outlier_scores
    h = tr.entropy_bits
    prior_h = float(tr.prior_entropy_bits)
    entropy, kl = h.tolist(), tr.kl_bits.tolist()
    gain = tr.information_gain_bits.tolist()
    probability = tr.secret_probability.tolist()
    rank = tr.secret_rank.tolist()
    spy = tr.spy_posterior
    rounds = ctx.rounds
    steps: list[dict[str, Any]] = []
    spy_round1: list[str] | None = None
    outlier_round1: list[str] | None = None
    first_round = rounds[0] if rounds else None
    for i, row in enumerate(tr.posterior.tolist()):
        steps.append(
            {
                **_STEP,
                "index": i,
                "player": inp.speakers[i],
                "role": ctx.roles[i],
                "round": rounds[i],
                "text": inp.texts[i],
                "counted": True,
                "posterior": dict(zip(candidates, row, strict=True)),
                "entropy_bits": entropy[i],
                "information_gain_bits": gain[i],
                "kl_bits": kl[i],
                "secret_probability": probability[i],
                "secret_rank": rank[i],
                "speaker_word": ctx.speaker_words[i],
                "spy_posterior": _as_dict(player_ids, spy[i]),
                "outlier_scores": None if outliers is None else outliers[i],
            }
        )
        next_round = rounds[i + 1] if i + 1 < len(rounds) else None
        if spy_round1 is None and first_round is not None and next_round != first_round:
            top = np.argsort(-spy[i], kind="stable")[:n_spies]
            spy_round1 = [player_ids[j] for j in top]
            if outliers is not None:
                ranked = sorted(outliers[i], key=lambda p: -outliers[i][p])
                outlier_round1 = ranked[:n_spies]
    summary = {
        **_SUMMARY,
        "counted_turns": len(steps),
        "prior_entropy_bits": prior_h,
        "final_entropy_bits": steps[-1]["entropy_bits"] if steps else None,
        "mean_entropy_bits": float(h.mean()) if len(steps) else None,
        "total_information_gain_bits": float((prior_h - h).sum()) if len(steps) else None,
        "spy_top_after_round1": spy_round1,
        "spy_hit_after_round1": None if spy_round1 is None else bool(set(spy_round1) & spies),
        "outlier_top_after_round1": outlier_round1,
        "outlier_hit_after_round1": (
            None if outlier_round1 is None else bool(set(outlier_round1) & spies)
        ),
    }
    return {
        **_REPORT,
        "game_id": ctx.game_id,
        "game": "spygame",
        "backend": backend,
        "backend_info": backend_info,
        "candidates": list(candidates),
        "secret": ctx.secret,
        "settings": {
            "spy_assignment": options.spy_assignment,
            "n_spies": n_spies,
            **_seat_setting(options),
        },
        "steps": steps,
        "summary": summary,
        "meta": dict(ctx.meta),
    }


def _seat_setting(options: ScoreOptions) -> dict[str, Any]:
    """``settings.seat`` when a seat was asked for (reports scored without one stay as they
    were; their seat is the game's default, ``leakage.reports.report_seat``)."""
    return {} if options.seat is None else {"seat": options.seat}


SEAT_SECRETS = {
    "spy": "the civilians' word, over the open vocabulary",
    "civilian": "who the spies are (and whether the holder is one)",
    "non-chameleon": "who the chameleon is",
}
"""What a player's seat's ``secret_probability`` and ``secret_rank`` are of."""


def _seat_report(
    inp: GameInput,
    ctx: ReportContext,
    tr: SeatTrace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> dict[str, Any]:
    """The report of a player's seat (``leakage.seats._trace``): the step fields are the
    first holder's, ``seat_view`` every holder's."""
    labels = list(tr.labels)
    entropy, gain, kl = (
        tr.entropy_bits.tolist(),
        tr.information_gain_bits.tolist(),
        tr.kl_bits.tolist(),
    )
    counted = tr.counted.tolist()
    probability = None if tr.secret_probability is None else tr.secret_probability.tolist()
    rank = None if tr.secret_rank is None else tr.secret_rank.tolist()
    spygame = isinstance(inp, SpyInput)
    voters = tr.seat == "civilian"
    holder = tr.holders[0]
    steps: list[dict[str, Any]] = []
    spy_round1: list[str] | None = None
    rounds = ctx.rounds
    first_round = rounds[0] if rounds else None
    for i, row in enumerate(tr.posterior.tolist()):
        posterior = dict(zip(labels, row, strict=True))
        steps.append(
            {
                **_STEP,
                "index": i,
                "player": inp.speakers[i],
                "role": ctx.roles[i],
                "round": rounds[i],
                "text": inp.texts[i],
                "counted": counted[i],
                "posterior": posterior,
                "entropy_bits": entropy[i],
                "information_gain_bits": gain[i],
                "kl_bits": kl[i],
                "secret_probability": None if probability is None else probability[i],
                "secret_rank": None if rank is None or not rank[i] else rank[i],
                "speaker_word": ctx.speaker_words[i],
                "spy_posterior": posterior if voters else None,
                "seat_view": tr.views[i],
            }
        )
        next_round = rounds[i + 1] if i + 1 < len(rounds) else None
        if voters and spy_round1 is None and first_round is not None and next_round != first_round:
            others = [p for p in labels if p != holder]
            ranked = sorted(others, key=lambda p: -posterior[p])
            spy_round1 = ranked[: max(1, len(ctx.spies) - (holder in ctx.spies))]
    last = steps[-1] if steps else None
    last_rank = None if last is None else last["secret_rank"]
    summary = {
        **_SUMMARY,
        "counted_turns": sum(counted),
        "prior_entropy_bits": float(tr.prior_entropy_bits),
        "final_entropy_bits": None if last is None else last["entropy_bits"],
        "total_information_gain_bits": None if last is None else float(sum(gain)),
        "final_secret_probability": None if last is None else last["secret_probability"],
        "final_secret_rank": last_rank,
        "top1": None if last_rank is None else last_rank <= 1,
        "top3": None if last_rank is None else last_rank <= 3,
        "spy_top_after_round1": spy_round1,
        "spy_hit_after_round1": (
            None if spy_round1 is None else bool(set(spy_round1) & set(ctx.spies))
        ),
    }
    settings: dict[str, Any] = (
        {"spy_assignment": options.spy_assignment, "n_spies": inp.n_spies}
        if isinstance(inp, SpyInput)
        else {"include_chameleon": options.include_chameleon}
    )
    settings.update(
        {
            "seat": tr.seat,
            "seat_holders": list(tr.holders),
            "seat_secret": SEAT_SECRETS[tr.seat],
            **tr.info,
        }
    )
    return {
        **_REPORT,
        "game_id": ctx.game_id,
        "game": "spygame" if spygame else "chameleon",
        "backend": backend,
        "backend_info": backend_info,
        "category": inp.category,
        "candidates": list(inp.candidates),
        "secret": ctx.secret,
        "settings": settings,
        "steps": steps,
        "summary": summary,
        "meta": dict(ctx.meta),
    }


def score_transcript(
    t: AnyTranscript, backend: LikelihoodBackend, options: ScoreOptions = ScoreOptions()
) -> Report:
    """Score one game with one backend: both stages in one go."""
    return Report.model_validate(score_report_data(t, backend, options))


def score_report_data(
    t: AnyTranscript,
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
    *,
    inp: GameInput | None = None,
    shape: ReportShape = ReportShape(),
) -> ReportData:
    """:func:`score_transcript` as plain data (:func:`shape_report`), shaped by ``shape``;
    ``inp`` is ``game_input(t, options)`` when the caller has it already (from
    :func:`prepare_inputs`). A game the backend rejects raises."""
    if inp is None:
        inp = game_input(t, options)
    trace = score_input(inp, backend)
    ctx = report_context(t)
    return shape_report(inp, ctx, trace, backend.name, backend.info(), options, shape)


def prepare(
    transcripts: Sequence[AnyTranscript],
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
) -> None:
    """Let a backend that can prepare (:class:`~leakage.backends.base.SupportsPrepare`) do
    its work for many games at once.

    The embedding backend embeds every clue and candidate in large batches, far faster than
    game by game; other backends are left alone.
    """
    prepare_inputs([game_input(t, options) for t in transcripts], backend)


def prepare_inputs(inputs: Iterable[GameInput], backend: LikelihoodBackend) -> None:
    """:func:`prepare` for games already turned into :class:`GameInput`."""
    if isinstance(backend, SupportsPrepare):
        backend.prepare((inp.clues, list(inp.candidates), inp.category) for inp in inputs)


def score_many(
    transcripts: Iterable[AnyTranscript],
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
    *,
    chunk: int = 1000,
) -> Iterator[Report]:
    """Score games in order, a chunk at a time: the backend prepares each chunk in bulk
    (:func:`prepare`) and the posterior engine runs over a chunk's games at once
    (:func:`score_inputs`). A game the backend rejects raises when its turn comes."""
    batch: list[AnyTranscript] = []
    for t in transcripts:
        batch.append(t)
        if len(batch) >= chunk:
            yield from _score_chunk(batch, backend, options)
            batch = []
    yield from _score_chunk(batch, backend, options)


def _score_chunk(
    batch: list[AnyTranscript], backend: LikelihoodBackend, options: ScoreOptions
) -> Iterator[Report]:
    if not batch:
        return
    inputs = [game_input(t, options) for t in batch]
    prepare_inputs(inputs, backend)
    name, info = backend.name, backend.info()
    for t, inp, trace in zip(batch, inputs, score_inputs(inputs, backend), strict=True):
        if isinstance(trace, InvalidInput):
            raise trace
        yield _report(t, inp, trace, name, info, options)
