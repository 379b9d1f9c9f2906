"""The single-file HTML report: figures inline as SVG, tables, and what produced the data.

Nothing is loaded from elsewhere (no scripts, fonts or stylesheets), so the file opens from
disk, offline, in any browser.
"""

from __future__ import annotations

import html
from typing import Any

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
figcaption, .note { color: #555; font-size: 0.9em; }
"""


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f'<td class="n">{value:.3f}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="n">{value:,}</td>'
    return f"<td>{_esc(value)}</td>"


def table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    """An HTML table of ``rows`` with ``(key, heading)`` columns."""
    if not rows:
        return '<p class="note">Nothing to show.</p>'
    head = "".join(f"<th>{_esc(h)}</th>" for _, h in columns)
    body = "".join("<tr>" + "".join(_cell(r.get(k)) for k, _ in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_esc(caption)}</figcaption></figure>"


def page(title: str, sections: list[tuple[str, str]], *, intro: str) -> str:
    """The whole document; ``sections`` are ``(heading, HTML body)`` pairs."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        intro,
    ]
    for heading, body in sections:
        parts.append(f"<h2>{_esc(heading)}</h2>{body}")
    parts.append("</body></html>\n")
    return "\n".join(parts)
