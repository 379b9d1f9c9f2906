"""Web count sources (public import path; importing it loads httpx and tenacity)."""

from leakage.backends.cooccurrence._engines import (
    WEB_SOURCES,
    GoogleCseSource,
    InfiniGramSource,
    SerpApiSource,
)
from leakage.backends.cooccurrence._web import (
    GOOGLE_PAGES_ESTIMATE,
    WebCountSource,
    retry_after_seconds,
)

__all__ = [
    "GOOGLE_PAGES_ESTIMATE",
    "WEB_SOURCES",
    "GoogleCseSource",
    "InfiniGramSource",
    "SerpApiSource",
    "WebCountSource",
    "retry_after_seconds",
]
