"""Plain HTML and Markdown tables for notebooks and the website (no plotting library needed)."""
from __future__ import annotations

import html
import math
from typing import Any, Sequence


def fmt(v: Any, digits: int = 3) -> str:
    """Numbers for people: thousands separators for ints, 3 significant digits for floats."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isinf(v):
            return "∞"
        if v == 0:
            return "0"
        if abs(v) >= 1e4 or abs(v) < 1e-3:
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}" if abs(v) < 100 else f"{v:,.0f}"
    return str(v)


def html_table(rows: Sequence[dict], caption: str = "", digits: int = 3) -> str:
    if not rows:
        return f"<p><em>{html.escape(caption)}: (empty)</em></p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(
            f'<td style="text-align:{"right" if isinstance(r.get(c), (int, float)) else "left"}">'
            f"{html.escape(fmt(r.get(c), digits))}</td>" for c in cols) + "</tr>"
        for r in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (f'<div class="labsim-table" style="overflow-x:auto;max-width:100%">'
            f'<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')


class Table:
    """A table that shows as HTML in notebooks and on the website."""

    def __init__(self, rows: Sequence[dict], caption: str = "", digits: int = 3) -> None:
        self.rows = list(rows)
        self.caption = caption
        self.digits = digits

    def _repr_html_(self) -> str:
        return html_table(self.rows, self.caption, self.digits)

    def __repr__(self) -> str:
        return markdown_table(self.rows, self.digits)


def markdown_table(rows: Sequence[dict], digits: int = 3) -> str:
    if not rows:
        return "(empty)"
    cols = list(rows[0])
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c), digits) for c in cols) + " |" for r in rows]
    return "\n".join(lines)
