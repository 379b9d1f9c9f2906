"""Adapters from third-party game logs to ``leakage.transcript/1``."""

from leakage.transcripts.adapters._base import ADAPTERS, Adapter, register_adapter

__all__ = ["ADAPTERS", "Adapter", "register_adapter"]
