"""The web engines: SerpApi (Google), Google Custom Search JSON API, infini-gram.

Each only says how a query is written, sent and read back; caching, budget, retries and
concurrency are :class:`~._web.WebCountSource`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

import httpx

from leakage._http import Transient
from leakage.errors import CountSourceError, InvalidInput

from ._source import Query
from ._web import (
    GOOGLE_PAGES_ESTIMATE,
    WebCountSource,
    _as_count,
    _norm,
    _require_key,
)


def _google_style(query: Query) -> str:
    """``"phrase one" "phrase two"``: quoted phrases, implicit AND, canonical order."""
    return " ".join(f'"{p}"' for p in sorted(_norm(p) for p in query))


class SerpApiSource(WebCountSource):
    """Google hit counts through SerpApi (``search_information.total_results``).

    ``params`` adds SerpApi parameters such as ``hl``, ``gl`` or ``google_domain``; they
    change the numbers, so they are part of the cache key.
    """

    name = "serpapi"
    key_env = ("SERPAPI_API_KEY",)
    DEFAULT_URL = "https://serpapi.com/search.json"

    def __init__(
        self,
        api_key: str,
        *,
        cache_path: str | os.PathLike[str],
        base_url: str = DEFAULT_URL,
        params: Mapping[str, str] | None = None,
        total: float = GOOGLE_PAGES_ESTIMATE,
        **options: Any,
    ) -> None:
        """``options``: the shared settings of :class:`WebCountSource` (budget, timeout, ...)."""
        super().__init__(cache_path=cache_path, base_url=base_url, total=total, **options)
        self._api_key = api_key
        self.params = dict(params or {})

    @classmethod
    def from_variables(
        cls,
        variables: Mapping[str, str],
        *,
        cache_path: str | os.PathLike[str],
        budget: int | None = None,
        **kw: Any,
    ) -> SerpApiSource:
        """Build with ``api_key=``, else ``SERPAPI_API_KEY`` of ``variables``
        (https://serpapi.com/manage-api-key)."""
        api_key = kw.pop("api_key", None) or _require_key(
            variables,
            "SERPAPI_API_KEY",
            cls.name,
            "a SerpApi key (https://serpapi.com/manage-api-key)",
        )
        return cls(api_key, cache_path=cache_path, budget=budget, **kw)

    @property
    def endpoint(self) -> str:
        return "google" + ("?" + urlencode(sorted(self.params.items())) if self.params else "")

    def format_query(self, query: Query) -> str:
        return _google_style(query)

    async def _send(self, client: httpx.AsyncClient, text: str) -> httpx.Response:
        params = {**self.params, "engine": "google", "q": text, "api_key": self._api_key}
        return await client.get(self.base_url, params=params)

    def _quota_used_up(self, status: int, message: str) -> bool:
        return "run out of searches" in message.casefold()

    def _parse(self, payload: Any, text: str) -> tuple[int, bool | None]:
        if not isinstance(payload, dict):
            raise CountSourceError(f"serpapi: query {text!r}: the answer is not a JSON object")
        info = payload.get("search_information")
        total = info.get("total_results") if isinstance(info, dict) else None
        if total is not None:
            return _as_count(total, "search_information.total_results", self.name, text), None
        metadata = payload.get("search_metadata")
        if isinstance(metadata, dict) and metadata.get("status") == "Error":
            raise CountSourceError(
                f"serpapi: query {text!r}: the search failed: {payload.get('error')}"
            )
        # SerpApi leaves total_results out when Google has no results for the query.
        return 0, None


class GoogleCseSource(WebCountSource):
    """Hit counts from the Google Custom Search JSON API (``searchInformation.totalResults``).

    The engine id ``cx`` decides what is searched (the whole web or some sites), so it is
    part of the cache key.
    """

    name = "google-cse"
    key_env = ("GOOGLE_API_KEY", "GOOGLE_CSE_ID")
    DEFAULT_URL = "https://www.googleapis.com/customsearch/v1"

    def __init__(
        self,
        api_key: str,
        cse_id: str,
        *,
        cache_path: str | os.PathLike[str],
        base_url: str = DEFAULT_URL,
        total: float = GOOGLE_PAGES_ESTIMATE,
        **options: Any,
    ) -> None:
        """``options``: the shared settings of :class:`WebCountSource` (budget, timeout, ...)."""
        super().__init__(cache_path=cache_path, base_url=base_url, total=total, **options)
        self._api_key = api_key
        self.cse_id = cse_id

    @classmethod
    def from_variables(
        cls,
        variables: Mapping[str, str],
        *,
        cache_path: str | os.PathLike[str],
        budget: int | None = None,
        **kw: Any,
    ) -> GoogleCseSource:
        """Build with ``api_key=`` and ``cse_id=``, else ``GOOGLE_API_KEY`` and
        ``GOOGLE_CSE_ID`` (the search engine id, cx) of ``variables``."""
        api_key = kw.pop("api_key", None) or _require_key(
            variables,
            "GOOGLE_API_KEY",
            cls.name,
            "a Google Cloud API key with Custom Search enabled",
        )
        cse_id = kw.pop("cse_id", None) or _require_key(
            variables, "GOOGLE_CSE_ID", cls.name, "a Programmable Search Engine id (cx)"
        )
        return cls(api_key, cse_id, cache_path=cache_path, budget=budget, **kw)

    @property
    def endpoint(self) -> str:
        return f"cx={self.cse_id}"

    def format_query(self, query: Query) -> str:
        return _google_style(query)

    async def _send(self, client: httpx.AsyncClient, text: str) -> httpx.Response:
        # num=1: only the count is wanted, not ten result snippets.
        params = {"key": self._api_key, "cx": self.cse_id, "q": text, "num": "1"}
        return await client.get(self.base_url, params=params)

    def _key_rejected(self, status: int, message: str) -> bool:
        # Google answers a bad key with 400 "API key not valid", not 401.
        return status in (401, 403) or (status == 400 and "api key" in message.casefold())

    def _quota_used_up(self, status: int, message: str) -> bool:
        return "per day" in message.casefold()

    def _parse(self, payload: Any, text: str) -> tuple[int, bool | None]:
        info = payload.get("searchInformation") if isinstance(payload, dict) else None
        if not isinstance(info, dict) or "totalResults" not in info:
            raise CountSourceError(
                f"google-cse: query {text!r}: the answer has no searchInformation.totalResults"
            )
        return _as_count(
            info["totalResults"], "searchInformation.totalResults", self.name, text
        ), None


class InfiniGramSource(WebCountSource):
    """n-gram counts from the infini-gram API over a fixed corpus index.

    infini-gram counts occurrences (n-gram matches), not documents, and an ``AND`` holds
    where the clauses occur within ``max_diff_tokens`` tokens of each other (API default
    100). Matching is case-sensitive, so with ``fold_case`` (default) each phrase is asked
    as ``phrase OR Phrase OR Each Word Capitalised``. N is the index's token count, which
    the API gives for the empty query.
    """

    name = "infini-gram"
    DEFAULT_URL = "https://api.infini-gram.io/"
    DEFAULT_INDEX = "v4_rpj_llama_s4"
    INDEX_TOKENS: Mapping[str, int] = {
        # From the infini-gram API documentation; used for N when the API cannot be asked.
        "v4_dolma-v1_7_llama": 2_604_642_372_173,
        "v4_rpj_llama_s4": 1_385_942_948_192,
        "v4_piletrain_llama": 383_299_322_520,
        "v4_c4train_llama": 198_079_554_945,
        "v4_pileval_llama": 393_769_120,
    }
    MAX_CLAUSES = 4  # the API's limit on AND-ed clauses
    allows_empty_query = True  # the empty query counts the tokens of the index (N)

    def __init__(
        self,
        *,
        cache_path: str | os.PathLike[str],
        index: str = DEFAULT_INDEX,
        base_url: str = DEFAULT_URL,
        fold_case: bool = True,
        max_diff_tokens: int | None = None,
        max_clause_freq: int | None = None,
        total: float | None = None,
        **options: Any,
    ) -> None:
        """``options``: the shared settings of :class:`WebCountSource` (budget, timeout, ...)."""
        super().__init__(cache_path=cache_path, base_url=base_url, total=total, **options)
        self.index = index
        self.fold_case = fold_case
        self.options = {
            k: v
            for k, v in (("max_diff_tokens", max_diff_tokens), ("max_clause_freq", max_clause_freq))
            if v is not None
        }

    @classmethod
    def from_variables(
        cls,
        variables: Mapping[str, str],
        *,
        cache_path: str | os.PathLike[str],
        budget: int | None = None,
        **kw: Any,
    ) -> InfiniGramSource:
        """Build the source; infini-gram needs no key, so no variable is read."""
        return cls(cache_path=cache_path, budget=budget, **kw)

    @property
    def endpoint(self) -> str:
        extra: dict[str, object] = dict(self.options)
        if not self.fold_case:
            extra["case"] = "exact"
        return self.index + ("?" + urlencode(sorted(extra.items())) if extra else "")

    def _check_query(self, query: Query) -> None:
        if len(query) > self.MAX_CLAUSES:
            raise InvalidInput(
                f"infini-gram: query {query!r} has {len(query)} phrases; "
                f"the API takes at most {self.MAX_CLAUSES}"
            )

    def format_query(self, query: Query) -> str:
        return " AND ".join(" OR ".join(self._variants(p)) for p in sorted(map(_norm, query)))

    def _variants(self, phrase: str) -> list[str]:
        if not self.fold_case:
            return [phrase]
        words = phrase.split()
        forms = [
            phrase,
            phrase[:1].upper() + phrase[1:],
            " ".join(w[:1].upper() + w[1:] for w in words),
        ]
        return list(dict.fromkeys(forms))

    async def _send(self, client: httpx.AsyncClient, text: str) -> httpx.Response:
        payload = {"index": self.index, "query_type": "count", "query": text, **self.options}
        return await client.post(self.base_url, json=payload)

    def _parse(self, payload: Any, text: str) -> tuple[int, bool | None]:
        if not isinstance(payload, dict):
            raise CountSourceError(f"infini-gram: query {text!r}: the answer is not a JSON object")
        if "error" in payload:
            # Errors come back in a 200; the API's docs ask clients to retry them.
            raise Transient(f"infini-gram error: {payload['error']}")
        if "count" not in payload:
            raise CountSourceError(f"infini-gram: query {text!r}: the answer has no count")
        return _as_count(payload["count"], "count", self.name, text), bool(payload.get("approx"))

    def total(self) -> float:
        """N: ``total=`` if given, else the index's token count from the API (cached).

        When the API cannot be asked, the documented token count of a known index is used.
        """
        if self._total is not None:
            return float(self._total)
        try:
            return float(self.counts([()])[0])
        except CountSourceError:
            if self.index in self.INDEX_TOKENS:
                return float(self.INDEX_TOKENS[self.index])
            raise


WEB_SOURCES: dict[str, Callable[..., WebCountSource]] = {
    "serpapi": SerpApiSource.from_env,
    "google-cse": GoogleCseSource.from_env,
    "infini-gram": InfiniGramSource.from_env,
}
"""The shipped web count sources by name -> ``from_env(*, cache_path, budget=None, **kw)`` (the
registry of every count source, these, ``local`` and those of installed distributions, is
``leakage.backends.cooccurrence.COUNT_SOURCES``)."""

__all__ = ["WEB_SOURCES", "GoogleCseSource", "InfiniGramSource", "SerpApiSource"]
