"""Simulated installed distributions for the registry tests: entry points without a package."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, group: str, **targets: str) -> None:
    """``importlib.metadata.entry_points(group=group)`` answers ``targets`` (name -> value)."""
    real = importlib.metadata.entry_points

    def fake(**kw: Any) -> Any:
        if kw.get("group") == group:
            return importlib.metadata.EntryPoints(
                importlib.metadata.EntryPoint(name, value, group) for name, value in targets.items()
            )
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
