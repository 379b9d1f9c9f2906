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

Weights and scales come from a ``leakage.ensemble-weights/1`` JSON file, by default the
shipped fit ``leakage/data/ensemble_weights.json`` (package data, read with
``importlib.resources``; fitted on logged games). There is no unfitted fallback: a shipped file
that is missing or unreadable means a broken installation and is ``BackendUnavailable``, and a
user's ``weights_path`` that cannot be read is ``InvalidInput`` naming the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from leakage.backends.base import (
    LikelihoodBackend,
    accepted_options,
    create_backend,
    register_backend,
)
from leakage.errors import BackendUnavailable, InvalidInput
from leakage.posterior import LOG_FLOOR

WEIGHTS_FORMAT = "leakage.ensemble-weights/1"


def default_weights_path() -> Traversable:
    """The shipped fit, ``leakage/data/ensemble_weights.json``: a resource of the package."""
    return files("leakage") / "data" / "ensemble_weights.json"


class EnsembleWeights(BaseModel):
    """A ``leakage.ensemble-weights/1`` file: what ``leakage calibrate`` fitted."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["leakage.ensemble-weights/1"] = "leakage.ensemble-weights/1"
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

    @model_validator(mode="after")
    def _consistent(self) -> EnsembleWeights:
        members = set(self.members)
        problems = []
        if len(members) != len(self.members):
            problems.append("members: a member is listed twice")
        for field in ("weights", "scales"):
            keys = set(getattr(self, field))
            if keys != members:
                problems.append(
                    f"{field}: keys {sorted(keys)} differ from members {sorted(members)}"
                )
        for name, w in self.weights.items():
            if not (np.isfinite(w) and w >= 0):
                problems.append(f"weights.{name}: must be finite and >= 0, got {w}")
        for name, s in self.scales.items():
            if not (np.isfinite(s) and s > 0):
                problems.append(f"scales.{name}: must be finite and > 0, got {s}")
        if not problems and not any(w > 0 for w in self.weights.values()):
            problems.append("weights: at least one weight must be > 0")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def read_weights(path: str | Path | Traversable) -> EnsembleWeights:
    """Read and validate a weights file; ``InvalidInput`` names the file and the field."""
    p = Path(path) if isinstance(path, str) else path
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise InvalidInput(f"{p}: cannot read the ensemble weights file: {err.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidInput(f"{p}: not a JSON ensemble weights file: {err}") from None
    if isinstance(doc, dict) and doc.get("format") != WEIGHTS_FORMAT:
        raise InvalidInput(
            f"{p}: format: expected {WEIGHTS_FORMAT!r}, got {doc.get('format')!r}; "
            "write one with `leakage calibrate`"
        )
    try:
        return EnsembleWeights.model_validate(doc)
    except ValidationError as err:
        where = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}"
            for e in err.errors(include_url=False)
        )
        raise InvalidInput(f"{p}: invalid ensemble weights file: {where}") from None


def centre_rows(loglik: NDArray[np.float64]) -> NDArray[np.float64]:
    """Subtract each row's mean over the candidates (non-finite values floored first)."""
    a = np.asarray(loglik, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        a = np.nan_to_num(a, nan=LOG_FLOOR, neginf=LOG_FLOOR, posinf=-LOG_FLOOR)
    if a.size == 0:
        return a.copy()
    return a - a.mean(axis=-1, keepdims=True)


class EnsembleBackend:
    """Weighted log-linear pool of member backends (see the module docstring)."""

    name = "ensemble"

    def __init__(
        self,
        members: Mapping[str, LikelihoodBackend],
        weights: Mapping[str, float],
        scales: Mapping[str, float],
        *,
        weights_file: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one member")
        for name in members:
            if name not in weights or name not in scales:
                raise ValueError(f"member {name!r} has no weight or no scale")
            if not weights[name] >= 0:
                raise ValueError(f"weight of {name!r} must be >= 0")
            if not scales[name] > 0:
                raise ValueError(f"scale of {name!r} must be > 0")
        self.members = dict(members)
        self.weights = {n: float(weights[n]) for n in self.members}
        self.scales = {n: float(scales[n]) for n in self.members}
        self.weights_file = weights_file
        self.notes = list(notes)
        # Forwarded so that SpyGame outlier scores still work (``scoring`` looks it up with
        # getattr and skips it when None): the first member that can embed text.
        self.embed: Callable[[Sequence[str]], NDArray[np.float32]] | None = None
        for m in self.members.values():
            hook = getattr(m, "embed", None)
            if callable(hook):
                self.embed = hook
                break

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "weights": dict(self.weights),
            "scales": dict(self.scales),
            "weights_file": self.weights_file,
            "notes": list(self.notes),
            "members": {n: m.info() for n, m in self.members.items()},
        }

    def prepare(self, games: Iterable[tuple[Sequence[str], Sequence[str], str | None]]) -> None:
        """Forward the bulk ``prepare`` hook to the members that have one."""
        hooks = [
            hook
            for n, m in self.members.items()
            if self.weights[n] > 0 and callable(hook := getattr(m, "prepare", None))
        ]
        if not hooks:
            return
        batch = list(games)
        for hook in hooks:
            hook(batch)

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        out = np.zeros((len(clues), len(candidates)))
        if not clues:
            return out
        for n, member in self.members.items():
            w = self.weights[n]
            if w == 0:
                continue
            rows = centre_rows(member.loglik(clues, candidates, category=category))
            out += (w / self.scales[n]) * rows
        return out


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
    from leakage.backends.base import _REGISTRY

    accepted = {n: accepted_options(_REGISTRY[n]) for n in names if n in _REGISTRY}
    routed: dict[str, dict[str, Any]] = {n: {} for n in names}
    own: dict[str, Mapping[str, Any]] = {}
    for key, value in options.items():
        if key in _REGISTRY and isinstance(value, Mapping):
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


def _member_names(members: str | Sequence[str] | None) -> list[str] | None:
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
    return names


@register_backend("ensemble")
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
    wanted = _member_names(members)
    notes: list[str] = []
    path: Path | Traversable
    if weights_path is None:
        path = default_weights_path()
        try:
            fitted = read_weights(path)
        except InvalidInput as err:
            # Equal weights instead would be numbers nobody fitted, under the shipped name.
            raise BackendUnavailable(
                f"ensemble: the shipped weights cannot be used ({err}); this leakage "
                "installation is incomplete: reinstall it, or pass a weights file written by "
                "`leakage calibrate` (weights_path, `leakage score --weights FILE`)"
            ) from None
    else:
        path = Path(weights_path)
        fitted = read_weights(path)
    names = wanted if wanted is not None else list(fitted.members)
    missing = [n for n in names if n not in fitted.weights]
    if missing:
        raise BackendUnavailable(
            f"ensemble: {', '.join(missing)} has no fitted weight in {path} (its members: "
            f"{', '.join(fitted.members)}); pick members from those with --members, or "
            f"refit: leakage calibrate LOGS --members {','.join(names)} --out FILE"
        )
    weights = {n: fitted.weights[n] for n in names}
    scales = {n: fitted.scales[n] for n in names}
    if fitted.note:
        notes.append(fitted.note)
    if fitted.fallback:
        notes.append(fitted.fallback)
    if wanted is not None and set(names) != set(fitted.members):
        notes.append(
            f"members {', '.join(names)} of the fitted {', '.join(fitted.members)}: "
            "weights were fitted jointly with the others, so this pool is not refitted"
        )
    unused = [n for n in names if weights[n] == 0]
    if unused:
        notes.append(f"not built (weight 0): {', '.join(unused)}")
    names = [n for n in names if weights[n] > 0]
    if not names:
        raise BackendUnavailable(
            f"ensemble: every chosen member has weight 0 in {path}; choose others with "
            f"--members (weights: {fitted.weights})"
        )
    routed = route_options(names, member_options)
    built: dict[str, LikelihoodBackend] = {}
    for n in names:
        try:
            built[n] = create_backend(n, **routed[n])
        except BackendUnavailable as err:
            others = ",".join(x for x in names if x != n) or "OTHER"
            raise BackendUnavailable(
                f"ensemble member {n!r} is unavailable: {err} (or leave it out: --members {others})"
            ) from err
    return EnsembleBackend(
        built,
        {n: weights[n] for n in names},
        {n: scales[n] for n in names},
        weights_file=str(path),
        notes=notes,
    )
