"""Patterns of the service's inputs that more than one module reads: the request models
(``inputs``, ``schemas``), the OpenAPI schema (``app``) and the error wording (``errors``)."""

from __future__ import annotations

NOT_BLANK = (
    "[^\\t-\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f"
    "\\u205f\\u3000]"
)
"""Pattern of a word or text that is not blank: it holds a character ``str.strip()`` keeps.
Spelt out because ``\\S`` differs between regex engines: ECMA-262 (what clients and the
schema fuzzer read) does not count U+0085 as space, Python and pydantic do."""
