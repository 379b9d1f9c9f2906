"""Stable colours: a model keeps its colour whatever else is drawn and in whatever order.

The colour is a function of the name alone (a hue from a hash of it), so a model has the same
colour in every report, in every job's curves, and while a job is still running. With
``--by speaker`` the group ``model · role`` takes its model's colour; roles differ by line
style and marker (:func:`role_style`).
"""

from __future__ import annotations

import colorsys
import hashlib

from leakage.curves._data import SPEAKER_SEP

_SATURATION = 0.62
_LIGHTNESS = (0.40, 0.52)


def colour_of(name: str) -> str:
    """``#rrggbb`` for ``name`` (a model, or any group): a hue from its SHA-256, one of two
    lightnesses, so that names whose hues are close still differ."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    hue = int.from_bytes(digest[:4], "big") / 2**32
    light = _LIGHTNESS[digest[4] & 1]
    r, g, b = colorsys.hls_to_rgb(hue, light, _SATURATION)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def model_of(group: str) -> str:
    """The model of a ``--by speaker`` group (the group itself for other groupings)."""
    return group.split(SPEAKER_SEP)[0]


def group_colour(group: str) -> str:
    """The colour of a group: its model's with ``--by speaker``, else its own name's."""
    return colour_of(model_of(group))


_DASHED_ROLES = {"chameleon", "spy"}


def role_style(group: str) -> tuple[str, str]:
    """(line style, marker) of a group: dashed with squares for the roles without the secret
    (chameleon, spy), solid with dots for the others."""
    _, sep, role = group.partition(SPEAKER_SEP)
    if sep and role.strip().casefold() in _DASHED_ROLES:
        return "--", "s"
    return "-", "o"
