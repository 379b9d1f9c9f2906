"""Colours: distinct for the models of one view, and the same in every view of one job.

A name hash (:func:`colour_of`) keeps a model's colour everywhere but cannot keep two models
apart: gpt-4o and o1 landed on two near-identical ochres. So a view's colours come from
:func:`assign_colours`: the job's models (every model of its step table, not only those
drawn) sorted by name, each the next colour of one fixed sequence; any other group name of
the view (a ``+``-joined set of models, a matchup, a difficulty) follows them, sorted. Every
view of a job that passes the same models gives each model the same colour, and two models
of a job never share one.

The sequence starts with Tableau 10 (matplotlib's ``tab10``, the default cycle: its colours
differ by at least ΔE76 27 in CIELAB) and goes on with colours chosen greedily to be as far
as possible (CIELAB ΔE76) from all before them, on a grid of hues, lightnesses and
saturations dark enough to read on white: the first 22 colours stay at least ΔE 27.7 apart,
the first 40 ΔE 25.7, all 64 ΔE 20.0 (``tests/test_curves_leaderboard.py`` measures it). Past the
sequence's end (over 64 names), colours are spaced evenly round the hue wheel.

With ``--by speaker`` the group ``model · role`` takes its model's colour; roles differ by
line style and marker (:func:`role_style`).
"""

from __future__ import annotations

import colorsys
import hashlib
from collections.abc import Iterable, Mapping
from functools import cache

from leakage.curves._data import SPEAKER_SEP

TABLEAU_10 = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
SEQUENCE_LENGTH = 64
_SATURATION = 0.62
_LIGHTNESS = (0.40, 0.52)


def _hex(r: float, g: float, b: float) -> str:
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _lab(colours: Iterable[str]) -> object:
    """CIELAB (D65) of ``#rrggbb`` colours, as a numpy array (n, 3)."""
    import numpy as np

    rgb = np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colours])
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], 1)


@cache
def colour_sequence() -> tuple[str, ...]:
    """The fixed sequence of :data:`SEQUENCE_LENGTH` colours (module docstring)."""
    import numpy as np

    grid = [
        _hex(*colorsys.hls_to_rgb(h / 360, light, sat))
        for h in range(0, 360, 5)
        for light in (0.3, 0.4, 0.5, 0.6)
        for sat in (0.5, 0.75, 0.95)
    ]
    lab_grid = np.asarray(_lab(grid))
    chosen = list(TABLEAU_10)
    dist = np.min(
        np.linalg.norm(lab_grid[:, None, :] - np.asarray(_lab(chosen))[None, :, :], axis=2), axis=1
    )
    while len(chosen) < SEQUENCE_LENGTH:
        i = int(np.argmax(dist))
        chosen.append(grid[i])
        dist = np.minimum(dist, np.linalg.norm(lab_grid - lab_grid[i], axis=1))
    return tuple(chosen)


def nth_colour(i: int, n: int) -> str:
    """Colour ``i`` of a view of ``n`` names: the sequence's, or past its end one of ``n``
    hues spaced evenly (three lightnesses in turn)."""
    seq = colour_sequence()
    if n <= len(seq):
        return seq[i]
    return _hex(*colorsys.hls_to_rgb(i / n, (0.35, 0.5, 0.62)[i % 3], 0.7))


def assign_colours(models: Iterable[str | None], others: Iterable[str] = ()) -> dict[str, str]:
    """``name -> #rrggbb``: ``models`` (a job's models; ``None`` left out) sorted, then the
    names of ``others`` that are not models, sorted; all distinct."""
    names = sorted({m for m in models if m})
    extra = sorted(set(others) - set(names))
    ordered = names + extra
    return {name: nth_colour(i, len(ordered)) for i, name in enumerate(ordered)}


def colour_of(name: str) -> str:
    """``#rrggbb`` for ``name`` alone (a hue from its SHA-256): the same everywhere, but two
    names may get near-identical colours. Views use :func:`assign_colours`; this is the
    fallback for a name outside their mapping."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    hue = int.from_bytes(digest[:4], "big") / 2**32
    light = _LIGHTNESS[digest[4] & 1]
    return _hex(*colorsys.hls_to_rgb(hue, light, _SATURATION))


def model_of(group: str) -> str:
    """The model of a ``--by speaker`` group (the group itself for other groupings)."""
    return group.split(SPEAKER_SEP)[0]


def group_colour(group: str, colours: Mapping[str, str] | None = None) -> str:
    """The colour of a group: its model's with ``--by speaker``, else its own name's, from
    ``colours`` (:func:`assign_colours`) when it holds it, else :func:`colour_of`."""
    key = model_of(group)
    if colours is not None and key in colours:
        return colours[key]
    return colour_of(key)


_DASHED_ROLES = {"chameleon", "spy"}


def role_style(group: str) -> tuple[str, str]:
    """(line style, marker) of a group: dashed with squares for the roles without the secret
    (chameleon, spy), solid with dots for the others."""
    _, sep, role = group.partition(SPEAKER_SEP)
    if sep and role.strip().casefold() in _DASHED_ROLES:
        return "--", "s"
    return "-", "o"
