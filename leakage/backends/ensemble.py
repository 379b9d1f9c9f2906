"""The ensemble backend: weighted log-linear pooling of other backends.

For every member b, each clue's row of log-likelihoods is centred (its mean over the
candidates is subtracted), divided by the member's *scale* (its temperature: one number per
backend, fitted by ``leakage calibrate``) and multiplied by its *weight*; the members' rows
are summed::

    L[i, j] = Σ_b  w_b · (L_b[i, j] - mean_j' L_b[i, j']) / s_b

Centring changes no posterior (a per-row constant cancels in the normalisation) but keeps
the pooled numbers comparable across backends. One scale per backend, not per clue:
z-scoring each clue's row over-weights the clues that co-occur with no candidate (a flat row
blown up to unit variance), a third of the pairs in some sets.

Weights and scales come from a ``leakage.ensemble-weights/2`` JSON file (``/1`` files still
load), by default the shipped fit ``leakage/data/ensemble_weights.json`` (package data, read
with ``importlib.resources``; fitted on logged games).

**Per item type.** A fit holds for the kind of item it was fitted on: temperatures fitted on
sentences against a pair are far too high for a one-word clue against a board of 16-25
words. Each clue is therefore given an *item type* from what the backend sees of it
(:func:`item_type`):

- ``word``: a clue of at most ``WORD_CLUE_MAX_WORDS`` words against at least 3 candidates
  (Chameleon-type: a one-word association, a board or card of candidates);
- ``sentence_card``: a longer clue (a sentence) against at least 3 candidates (MAgIC's
  Chameleon games: "It's an island." on a card of 8-25 words);
- ``statement``: any clue against a pair (SpyGame / Undercover statements).

A file's ``item_types`` maps a type to its own weights and scales; a type without an entry
uses the file's top-level ``weights`` and ``scales`` (in the shipped file: the fit on CK-Arena
statements, which served sentence clues on a card too before they had a fit of their own).
A ``/1`` file has no ``item_types``: one fit for every item, as before.

There is no unfitted fallback: a shipped file that is missing or unreadable means a broken
installation and is ``BackendUnavailable``, and a user's ``weights_path`` that cannot be read
is ``InvalidInput`` naming the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from leakage._runtime import RuntimeChoice
from leakage.backends.answers import is_question_answer
from leakage.backends.base import (
    Closing,
    CountPlan,
    Games,
    LikelihoodBackend,
    SupportsCacheStats,
    SupportsClose,
    SupportsDryRun,
    SupportsEmbed,
    SupportsPrepare,
    SupportsTokenCount,
    accepted_options,
    costs,
    create_backend,
)
from leakage.errors import BackendUnavailable, InvalidInput, validation_problems
from leakage.posterior import LOG_FLOOR

_G = TypeVar("_G", bound=tuple[Any, ...])

WEIGHTS_FORMAT = "leakage.ensemble-weights/2"
"""The format that is written; ``WEIGHTS_FORMATS`` are read."""
WEIGHTS_FORMATS = ("leakage.ensemble-weights/1", WEIGHTS_FORMAT)

ITEM_TYPES = ("word", "statement", "sentence_card", "question_answer")
"""Item types a weights file may fit separately (see :func:`item_type`)."""
WORD_CLUE_MAX_WORDS = 2
"""A clue of at most this many whitespace-separated words counts as a word (``ice cream``);
real Chameleon and Codenames clues are one word, CK-Arena statements 5 words or more."""


def item_type(clue: str, n_candidates: int) -> str:
    """``word`` (at most ``WORD_CLUE_MAX_WORDS`` words against 3 or more candidates: the
    Chameleon type), ``question_answer`` (a question and its yes/no answer against 3 or more
    candidates, ``"Is it a type of beverage? No."``: clembench's guesswhat,
    :func:`leakage.backends.answers.is_question_answer`), ``sentence_card`` (another longer
    clue against 3 or more candidates: MAgIC's sentence clues on a card) or ``statement``
    (any clue against a pair).

    Decided from what a backend's ``loglik`` sees, so every caller (scoring, the service,
    batch runs) gets the same answer without knowing the game: a pair is SpyGame / Undercover
    whatever its clue, and a card (3 or more candidates) is the Chameleon's.
    """
    if n_candidates < 3:
        return "statement"
    if len(clue.split()) <= WORD_CLUE_MAX_WORDS:
        return "word"
    if is_question_answer(clue):
        return "question_answer"
    return "sentence_card"


SHIPPED_WEIGHTS = {
    "": "ensemble_weights.json",
    "int8": "ensemble_weights_int8.json",
}
"""The shipped fits by the rows their LLM members compute (``RuntimeChoice.rows``): ``""``
torch (fp32 or bf16) and CTranslate2 float32, which gives torch fp32's numbers; ``int8``
CTranslate2 int8, the default local runtime on CPUs without bf16
(``leakage._runtime.decide_runtime``), whose rows are less sharp and so are pooled with
weights and temperatures fitted on them."""


def default_weights_path(rows: str = "") -> Traversable:
    """The shipped fit for members whose LLM rows are ``rows`` (``SHIPPED_WEIGHTS``; default
    ``leakage/data/ensemble_weights.json``): a resource of the package."""
    return files("leakage") / "data" / SHIPPED_WEIGHTS[rows]


def llm_rows(members: Mapping[str, LikelihoodBackend]) -> str:
    """The key of ``SHIPPED_WEIGHTS`` for members already built: the ``rows`` of the first
    member whose runtime (its ``runtime``, a ``RuntimeChoice``: the judge's and the
    listener's LLM) computes other rows than torch's (CTranslate2 int8: ``int8``), else
    ``""``."""
    for backend in members.values():
        choice = getattr(backend, "runtime", None)
        if isinstance(choice, RuntimeChoice) and choice.rows:
            return choice.rows
    return ""


def _check_fit(
    members: list[str], weights: Mapping[str, float], scales: Mapping[str, float], where: str
) -> list[str]:
    """Problems of one fit (weights and scales of every member); ``where`` prefixes fields."""
    problems = []
    for field, values in (("weights", weights), ("scales", scales)):
        keys = set(values)
        if keys != set(members):
            problems.append(
                f"{where}{field}: keys {sorted(keys)} differ from members {sorted(members)}"
            )
    for name, w in weights.items():
        if not (np.isfinite(w) and w >= 0):
            problems.append(f"{where}weights.{name}: must be finite and >= 0, got {w}")
    for name, s in scales.items():
        if not (np.isfinite(s) and s > 0):
            problems.append(f"{where}scales.{name}: must be finite and > 0, got {s}")
    if not problems and not any(w > 0 for w in weights.values()):
        problems.append(f"{where}weights: at least one weight must be > 0")
    return problems


class TypeFit(BaseModel):
    """The fit for one item type (an entry of ``item_types`` in a ``/2`` weights file)."""

    model_config = ConfigDict(extra="forbid")

    weights: dict[str, float]
    """Multiplier of each member's scaled, centred rows for items of this type."""
    scales: dict[str, float]
    """Each member's temperature for items of this type."""
    note: str | None = None
    fallback: str | None = None
    """Set when this type's fitted ensemble was worse than its best member (see the top level)."""
    fitted_on: dict[str, Any] = Field(default_factory=dict)
    """Files, items, the split of this type's fit."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """Held-out metrics of this type's fit."""
    created: str | None = None


class EnsembleWeights(BaseModel):
    """A ``leakage.ensemble-weights/2`` file (or ``/1``): what ``leakage calibrate`` fitted."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["leakage.ensemble-weights/1", "leakage.ensemble-weights/2"] = (
        "leakage.ensemble-weights/2"
    )
    version: int | None = None
    """The format's version (2); absent from ``/1`` files, where it is taken as 1."""
    members: list[str] = Field(min_length=1)
    """Member backends, by registered name."""
    weights: dict[str, float]
    """Multiplier of each member's scaled, centred rows (0: the member is not used)."""
    scales: dict[str, float]
    """Each member's temperature: its centred rows are divided by it."""
    note: str | None = None
    """Free text: what the weights are for, what is missing."""
    fallback: str | None = None
    """Set when the fitted ensemble was worse than its best member and that member ships alone."""
    member_info: dict[str, Any] = Field(default_factory=dict)
    """Each member's ``info()`` when it was fitted (its settings)."""
    fitted_on: dict[str, Any] = Field(default_factory=dict)
    """Files, input format, games and items, split seed and test fraction."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """Held-out metrics per backend, the ensemble and the equal-weight pool."""
    created: str | None = None
    """When the file was written (ISO 8601, UTC)."""
    item_types: dict[str, TypeFit] = Field(default_factory=dict)
    """(``/2``) Weights and scales per item type (``word``, ``statement``, ``sentence_card``:
    see :func:`item_type`); a type without an entry uses the top-level ``weights`` and
    ``scales``."""

    @model_validator(mode="after")
    def _consistent(self) -> EnsembleWeights:
        problems = []
        file_version = int(self.format.rsplit("/", 1)[1])
        if self.version is None:
            self.version = file_version
        elif self.version != file_version:
            problems.append(f"version: {self.version} does not match format {self.format!r}")
        if len(set(self.members)) != len(self.members):
            problems.append("members: a member is listed twice")
        problems += _check_fit(self.members, self.weights, self.scales, "")
        if self.item_types and file_version < 2:
            problems.append(f"item_types: not part of {self.format!r}; use {WEIGHTS_FORMAT!r}")
        for kind, fit in self.item_types.items():
            if kind not in ITEM_TYPES:
                problems.append(
                    f"item_types.{kind}: unknown item type; known: {', '.join(ITEM_TYPES)}"
                )
            problems += _check_fit(self.members, fit.weights, fit.scales, f"item_types.{kind}.")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def fit_for(self, kind: str) -> tuple[dict[str, float], dict[str, float]]:
        """(weights, scales) used for items of type ``kind``."""
        own = self.item_types.get(kind)
        if own is None:
            return dict(self.weights), dict(self.scales)
        return dict(own.weights), dict(own.scales)

    def without_item_types(self) -> EnsembleWeights:
        """The same file with its top-level fit for every item (as a ``/1`` file is used)."""
        return self.model_copy(update={"item_types": {}})


def read_weights(path: str | Path | Traversable) -> EnsembleWeights:
    """Read and validate a weights file; ``InvalidInput`` names the file and the field."""
    p = Path(path) if isinstance(path, str) else path
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise InvalidInput(f"{p}: cannot read the ensemble weights file: {err.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidInput(f"{p}: not a JSON ensemble weights file: {err}") from None
    if isinstance(doc, dict) and doc.get("format") not in WEIGHTS_FORMATS:
        raise InvalidInput(
            f"{p}: format: expected one of {', '.join(map(repr, WEIGHTS_FORMATS))}, got "
            f"{doc.get('format')!r}; write one with `leakage calibrate`"
        )
    try:
        return EnsembleWeights.model_validate(doc)
    except ValidationError as err:
        where = "; ".join(f"{f or 'file'}: {m}" for f, m in validation_problems(err, dotted=True))
        raise InvalidInput(f"{p}: invalid ensemble weights file: {where}") from None


def centre_rows(loglik: NDArray[np.float64]) -> NDArray[np.float64]:
    """Subtract each row's mean over the candidates (non-finite values floored first)."""
    a = np.asarray(loglik, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        a = np.nan_to_num(a, nan=LOG_FLOOR, neginf=LOG_FLOOR, posinf=-LOG_FLOOR)
    if a.size == 0:
        return a.copy()
    return a - a.mean(axis=-1, keepdims=True)


class EnsembleBackend(Closing):
    """Weighted log-linear pool of member backends (see the module docstring).

    It has every optional ability (``leakage.backends.base``) that one of its members has:
    ``prepare`` and ``dry_run`` go to the members that have them, each with the games it
    will score; ``embed`` is the first embedding member's; ``cache_misses`` is the members'
    sum; ``count_tokens`` the most any member's model counts; ``close`` closes every
    member. An ability no member has is absent, so that
    ``isinstance(ensemble, SupportsEmbed)`` answers as for a single backend.
    """

    name = "ensemble"
    embed: Callable[[Sequence[str]], NDArray[np.float32]]
    dry_run: Callable[[Iterable[tuple[Sequence[str], Sequence[str]]]], list[CountPlan]]
    cache_misses: Callable[[], int]
    count_tokens: Callable[[Sequence[str]], int | None]

    def __init__(
        self,
        members: Mapping[str, LikelihoodBackend],
        weights: Mapping[str, float],
        scales: Mapping[str, float],
        *,
        weights_file: str | None = None,
        notes: Sequence[str] = (),
        item_types: Mapping[str, tuple[Mapping[str, float], Mapping[str, float]]] | None = None,
    ) -> None:
        """``weights`` and ``scales`` serve every item whose type has no entry in
        ``item_types`` (type -> (weights, scales); see :func:`item_type`)."""
        if not members:
            raise ValueError("an ensemble needs at least one member")
        fits = {"": (weights, scales), **(item_types or {})}
        for kind, (w, s) in fits.items():
            if kind and kind not in ITEM_TYPES:
                raise ValueError(f"unknown item type {kind!r}; known: {', '.join(ITEM_TYPES)}")
            where = f" for {kind} items" if kind else ""
            for name in members:
                if name not in w or name not in s:
                    raise ValueError(f"member {name!r} has no weight or no scale{where}")
                if not w[name] >= 0:
                    raise ValueError(f"weight of {name!r}{where} must be >= 0")
                if not s[name] > 0:
                    raise ValueError(f"scale of {name!r}{where} must be > 0")
        self.members = dict(members)
        self.weights = {n: float(weights[n]) for n in self.members}
        self.scales = {n: float(scales[n]) for n in self.members}
        self.item_types = {
            kind: ({n: float(w[n]) for n in self.members}, {n: float(s[n]) for n in self.members})
            for kind, (w, s) in (item_types or {}).items()
        }
        self.weights_file = weights_file
        self.notes = list(notes)
        # The optional abilities of the members, set only when a member has them.
        embedders = [m for m in self.members.values() if isinstance(m, SupportsEmbed)]
        if embedders:
            self.embed = embedders[0].embed
        if any(isinstance(m, SupportsDryRun) for m in self.members.values()):
            self.dry_run = self._dry_run
        if any(isinstance(m, SupportsCacheStats) for m in self.members.values()):
            self.cache_misses = self._cache_misses
        if any(isinstance(m, SupportsTokenCount) for m in self.members.values()):
            self.count_tokens = self._count_tokens

    @classmethod
    def from_weights(
        cls,
        fitted: EnsembleWeights,
        members: Mapping[str, LikelihoodBackend],
        *,
        weights_file: str | None = None,
        notes: Sequence[str] = (),
    ) -> EnsembleBackend:
        """The pool of a weights file over member backends already built (every member of
        the file with a weight above 0 for some item type; others are ignored)."""
        used = [n for n in fitted.members if n in _used_members(fitted, fitted.members)]
        missing = [n for n in used if n not in members]
        if missing:
            raise ValueError(f"no backend given for member(s) {', '.join(missing)}")
        return cls(
            {n: members[n] for n in used},
            {n: fitted.weights[n] for n in used},
            {n: fitted.scales[n] for n in used},
            weights_file=weights_file,
            notes=notes,
            item_types={
                kind: (
                    {n: fit.weights[n] for n in used},
                    {n: fit.scales[n] for n in used},
                )
                for kind, fit in fitted.item_types.items()
            },
        )

    def fit_for(self, kind: str) -> tuple[dict[str, float], dict[str, float]]:
        """(weights, scales) used for items of type ``kind``."""
        return self.item_types.get(kind, (self.weights, self.scales))

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "weights": dict(self.weights),
            "scales": dict(self.scales),
            "item_types": {
                kind: {"weights": dict(w), "scales": dict(s)}
                for kind, (w, s) in self.item_types.items()
            },
            "item_type_rule": (
                f"word: a clue of at most {WORD_CLUE_MAX_WORDS} words against 3 or more "
                "candidates; question_answer: a question and its yes/no answer against 3 or "
                "more candidates; sentence_card: another longer clue against 3 or more "
                "candidates; "
                "statement: any clue against a pair; a type without its own fit uses "
                "weights and scales"
            ),
            "weights_file": self.weights_file,
            "notes": list(self.notes),
            "members": {n: m.info() for n, m in self.members.items()},
        }

    def prepare(self, games: Games) -> None:
        """Forward the bulk ``prepare`` to the members that have one, each with the games it
        will score: those with a clue whose item type gives it a weight (a member fitted for
        one-word clues only prepares nothing for a batch of SpyGame statements)."""
        hooks = [
            (n, m)
            for n, m in self.members.items()
            if self._used(n) and isinstance(m, SupportsPrepare)
        ]
        if not hooks:
            return
        batch = list(games)
        for n, member in hooks:
            mine = self._games_for(n, batch)
            if mine:
                member.prepare(mine)

    def _dry_run(self, games: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[CountPlan]:
        """The count plans of the members that send count queries, each for the games it
        will score (see ``prepare``)."""
        batch = list(games)
        plans: list[CountPlan] = []
        for n, member in self.members.items():
            if self._used(n) and isinstance(member, SupportsDryRun):
                plans += member.dry_run(self._games_for(n, batch))
        return plans

    def _cache_misses(self) -> int:
        """The members' texts sent to an encoder (found in no cache) so far."""
        return sum(
            m.cache_misses() for m in self.members.values() if isinstance(m, SupportsCacheStats)
        )

    def _count_tokens(self, texts: Sequence[str]) -> int | None:
        """The most tokens a member's language model makes of ``texts`` (the LLM judge and
        the listener may run different models); None when no member can count here."""
        counts = [
            n
            for m in self.members.values()
            if isinstance(m, SupportsTokenCount) and (n := m.count_tokens(texts)) is not None
        ]
        return max(counts) if counts else None

    def close(self) -> None:
        """Close every member that has something to close (idempotent, as theirs are)."""
        for member in self.members.values():
            if isinstance(member, SupportsClose):
                member.close()

    def _games_for(self, name: str, games: Sequence[_G]) -> list[_G]:
        """The games among ``games`` (``(clues, candidates, ...)``) that member ``name``
        scores: those with a clue of an item type that gives it a weight."""
        return [g for g in games if any(self._weighs(name, item_type(c, len(g[1]))) for c in g[0])]

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        out = np.zeros((len(clues), len(candidates)))
        if not clues:
            return out
        fits = [self.fit_for(item_type(c, len(candidates))) for c in clues]
        for n, member in self.members.items():
            # each clue's multiplier for this member: its type's weight / its type's scale
            mult = np.array([w[n] / s[n] for w, s in fits])
            if not mult.any():
                continue
            rows = centre_rows(member.loglik(clues, candidates, category=category))
            out += mult[:, None] * rows
        return out

    def _weighs(self, name: str, kind: str) -> bool:
        """Whether member ``name`` counts (weight above 0) for items of type ``kind``."""
        return self.fit_for(kind)[0][name] > 0

    def _used(self, name: str) -> bool:
        return self.weights[name] > 0 or any(w[name] > 0 for w, _ in self.item_types.values())


def _used_members(fitted: EnsembleWeights, names: Sequence[str]) -> list[str]:
    """The members among ``names`` with a weight above 0 in the top-level fit or any type's."""
    return [
        n
        for n in names
        if fitted.weights[n] > 0 or any(f.weights[n] > 0 for f in fitted.item_types.values())
    ]


def route_options(names: Sequence[str], options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Split pass-through options among the member factories.

    - ``<member>={...}`` (an option named after a backend, with a dict value) goes to that
      member only, e.g. ``embedding={"model": "BAAI/bge-m3"}, judge={"model": "..."}``;
      it wins over a shared option and is ignored when that backend is not a member.
    - Any other option goes to every member whose factory names it (``index`` to
      co-occurrence; ``threads`` or ``model`` to embedding *and* judge: use the per-member
      form when they must differ), else to the factories that take ``**kwargs``; an option
      nobody takes is a ``TypeError``.
    """
    from leakage.backends.base import BACKENDS

    accepted = {n: accepted_options(BACKENDS[n]) for n in names if n in BACKENDS}
    routed: dict[str, dict[str, Any]] = {n: {} for n in names}
    own: dict[str, Mapping[str, Any]] = {}
    for key, value in options.items():
        if key in BACKENDS and isinstance(value, Mapping):
            if key in routed:
                own[key] = value
            continue
        takers = [n for n, (named, _) in accepted.items() if key in named]
        if not takers:
            takers = [n for n, (_, var) in accepted.items() if var]
        if not takers:
            raise InvalidInput(f"ensemble: no member ({', '.join(names)}) takes the option {key!r}")
        for n in takers:
            routed[n][key] = value
    for n, opts in own.items():
        routed[n].update(opts)
    return routed


def parse_members(members: str | Sequence[str] | None) -> list[str] | None:
    """Member names (a list, or a comma-separated string; None stays None), each a
    registered backend other than the ensemble, none twice; else ``InvalidInput`` saying
    which (``leakage score -b ensemble --members`` and ``leakage calibrate --members``)."""
    if members is None:
        return None
    names = members.split(",") if isinstance(members, str) else list(members)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise InvalidInput("ensemble: --members names no backend")
    if "ensemble" in names:
        raise InvalidInput("ensemble: an ensemble cannot be its own member")
    if len(set(names)) != len(names):
        raise InvalidInput(f"ensemble: a member is listed twice in {', '.join(names)}")
    from leakage.backends.base import BACKENDS

    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise InvalidInput(
            f"ensemble: no backend {', '.join(map(repr, unknown))}; members are among "
            f"{', '.join(n for n in BACKENDS.names() if n != 'ensemble')}"
        )
    return names


@costs(250)  # it runs the LLM judge or listener when they are members, as the shipped fit does
def _ensemble(
    *,
    weights_path: str | Path | None = None,
    members: str | Sequence[str] | None = None,
    **member_options: Any,
) -> EnsembleBackend:
    """Build the pool from a weights file (default: the shipped one) and member factories.

    ``members`` (names, or a comma-separated string) picks a subset of the file's members,
    e.g. to leave out one that cannot run here; the others keep their fitted weights.
    Members with weight 0 are not built. ``member_options`` go to the member factories:
    ``index=`` to co-occurrence, ``embedding={"model": ...}`` to one member (see
    ``route_options``).
    """
    wanted = parse_members(members)
    built: dict[str, LikelihoodBackend] = {}
    if weights_path is not None:
        path = Path(weights_path)
        return _pool(path, read_weights(path), wanted, built, **member_options)
    # The shipped fit: the one for the rows the LLM members compute, known once they are built.
    pool = _pool(default_weights_path(), _read_shipped(""), wanted, built, **member_options)
    rows = llm_rows(pool.members)
    if not rows:
        return pool
    return _pool(default_weights_path(rows), _read_shipped(rows), wanted, built, **member_options)


def _read_shipped(rows: str) -> EnsembleWeights:
    path = default_weights_path(rows)
    try:
        return read_weights(path)
    except InvalidInput as err:
        # Equal weights instead would be numbers nobody fitted, under the shipped name.
        raise BackendUnavailable(
            f"ensemble: the shipped weights cannot be used ({err}); this leakage "
            "installation is incomplete: reinstall it, or pass a weights file written by "
            "`leakage calibrate` (weights_path, `leakage score --weights FILE`)"
        ) from None


def _pool(
    path: Path | Traversable,
    fitted: EnsembleWeights,
    wanted: list[str] | None,
    built: dict[str, LikelihoodBackend],
    **member_options: Any,
) -> EnsembleBackend:
    """The pool of ``fitted`` (read from ``path``) over the members ``wanted`` (default: the
    file's), building those not yet in ``built`` (which keeps them, for a second fit)."""
    notes: list[str] = []
    names = wanted if wanted is not None else list(fitted.members)
    missing = [n for n in names if n not in fitted.weights]
    if missing:
        raise BackendUnavailable(
            f"ensemble: {', '.join(missing)} has no fitted weight in {path} (its members: "
            f"{', '.join(fitted.members)}); pick members from those with --members, or "
            f"refit: leakage calibrate LOGS --members {','.join(names)} --out FILE"
        )
    if fitted.note:
        notes.append(fitted.note)
    if fitted.fallback:
        notes.append(fitted.fallback)
    if wanted is not None and set(names) != set(fitted.members):
        notes.append(
            f"members {', '.join(names)} of the fitted {', '.join(fitted.members)}: "
            "weights were fitted jointly with the others, so this pool is not refitted"
        )
    for kind, fit in fitted.item_types.items():
        if fit.fallback:
            notes.append(f"{kind} items: {fit.fallback}")
    used = _used_members(fitted, names)
    unused = [n for n in names if n not in used]
    if unused:
        notes.append(f"not built (weight 0): {', '.join(unused)}")
    names = used
    if not names:
        raise BackendUnavailable(
            f"ensemble: every chosen member has weight 0 in {path}; choose others with "
            f"--members (weights: {fitted.weights})"
        )
    if not any(fitted.weights[n] > 0 for n in names):
        raise BackendUnavailable(
            f"ensemble: every chosen member ({', '.join(names)}) has weight 0 in the top-level "
            f"fit of {path}; choose others with --members"
        )
    # An item type none of the chosen members is fitted for (the question_answer fit, when
    # the answers member is left out) is read with the top-level fit, and a note says so.
    unfitted = [k for k, f in fitted.item_types.items() if not any(f.weights[n] > 0 for n in names)]
    for kind in unfitted:
        notes.append(
            f"{kind} items: none of the chosen members ({', '.join(names)}) is fitted for "
            "them; they are pooled with the top-level fit"
        )
    if unfitted:
        kept = {k: f for k, f in fitted.item_types.items() if k not in unfitted}
        fitted = fitted.model_copy(update={"item_types": kept})
    routed = route_options(names, member_options)
    for n in names:
        if n in built:
            continue
        try:
            built[n] = create_backend(n, **routed[n])
        except BackendUnavailable as err:
            others = ",".join(x for x in names if x != n) or "OTHER"
            raise BackendUnavailable(
                f"ensemble member {n!r} is unavailable: {err} (or leave it out: --members {others})"
            ) from err
    return EnsembleBackend.from_weights(
        fitted.model_copy(update={"members": names}),
        {n: built[n] for n in names},
        weights_file=str(path),
        notes=notes,
    )
