"""Plain HTML and Markdown tables for notebooks and the website (no plotting library needed).

One table component for every labsim table (:class:`Table`, ``Program._repr_html_``, cost and plan
tables). The HTML it writes is styled by ``book/_static/labsim.css`` (copied into the site by the
book's extension, ``book/_ext/labsim_book.py``); in a notebook without that stylesheet the inline
fallbacks (padding, right-aligned tabular figures) still keep numbers apart.

* Numbers are right-aligned in tabular figures; integers keep their thousands separators.
* ``units={"FLOPs": "FLOP", "bytes": "B", "time": "s"}`` shows a column in SI form ("8.62 GFLOP",
  "33.6 MB", "42.4 µs"); the exact value stays in the cell's ``title`` and ``data-value``. Only the
  display changes: the rows (and what a chapter glues from them) are untouched.
* ``notes=("why",)`` shows a column of long explanations as a full-width footnote row under its row.
* The first column sticks while a wide table scrolls; the site's script marks a table that scrolls,
  and the stylesheet shades the edge that has more to show.
* On a phone (at most 480 px) a table of four or more columns (``cards=None``; force with
  ``cards=True``/``False``) shows each row as a card of ``label: value`` lines, from ``data-label``.
"""
from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

#: SI prefixes for :func:`fmt_si` (decimal, so "MB" is 10^6 bytes, as the book counts bytes).
_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
             (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]

#: Strings up to this many characters stay on one line; longer ones wrap in a readable measure.
SHORT_TEXT = 28

#: Inline fallbacks for a notebook without the site's stylesheet.
_CELL_STYLE = "padding:4px 8px"


def fmt(v: Any, digits: int = 3) -> str:
    """Numbers for people: thousands separators for ints, 3 significant digits for floats."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isinf(v):
            return "∞"
        if math.isnan(v):
            return "—"
        if v == 0:
            return "0"
        if abs(v) >= 1e4 or abs(v) < 1e-3:
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}" if abs(v) < 100 else f"{v:,.0f}"
    return str(v)


def fmt_si(v: Any, unit: str = "", digits: int = 3) -> str:
    """``v`` (in base units) with an SI prefix and ``unit``: 8.6e9, "FLOP" → "8.62 GFLOP".

    Non-numbers are returned by :func:`fmt`. Values below 1000 in base units that are integers stay
    exact ("512 B"); zero is "0 B" (or "0").
    """
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return fmt(v, digits)
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return fmt(v, digits)
    sep = " " if unit else ""
    if v == 0:
        return f"0{sep}{unit}"
    a = abs(v)
    if isinstance(v, int) and a < 1000:
        return f"{v}{sep}{unit}"
    i = next((i for i, (s, _) in enumerate(_PREFIXES) if a >= s), len(_PREFIXES) - 1)
    text = f"{v / _PREFIXES[i][0]:.{digits}g}"
    if abs(float(text)) >= 1000 and i > 0:  # 999.97 k rounds to 1000 k: say 1 M
        i -= 1
        text = f"{v / _PREFIXES[i][0]:.{digits}g}"
    if "e" in text:  # beyond the largest prefix
        text = f"{v / _PREFIXES[i][0]:,.0f}"
    prefix = _PREFIXES[i][1]
    return f"{text}{sep}{prefix}{unit}"


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _attr(s: str) -> str:
    return html.escape(s, quote=True)


def html_table(rows: Sequence[dict], caption: str = "", digits: int = 3, *,
               units: Mapping[str, str] | None = None, notes: Sequence[str] = (),
               cards: bool | None = None, html_cols: Sequence[str] = ()) -> str:
    """The book's table: see the module docstring for ``units``, ``notes`` and ``cards``. Columns named in
    ``html_cols`` hold markup written by the caller (``<b>``, ``<code>``), inserted as it is."""
    html_cols = set(html_cols)
    if not rows:
        return f"<p><em>{html.escape(caption)}: (empty)</em></p>"
    units = dict(units or {})
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    note_cols = [c for c in cols if c in set(notes)]
    cols = [c for c in cols if c not in note_cols]
    numeric = {c: any(_is_num(r.get(c)) for r in rows)
               and all(_is_num(r.get(c)) or r.get(c) in (None, "", "—") for r in rows) for c in cols}
    if cards is None:
        cards = len(cols) >= 4

    def cell(c: str, v: Any, first: bool) -> str:
        label = f' data-label="{_attr(str(c))}"'
        if _is_num(v):
            text = fmt_si(v, units[c], digits) if c in units else fmt(v, digits)
            exact = fmt(v, 12) if isinstance(v, float) else f"{v:,}"
            extra = f' data-value="{_attr(repr(v))}"' + (f' title="{_attr(exact)}"' if text != exact else "")
            cls = "num"
            style = f"{_CELL_STYLE};text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap"
        else:
            text = "" if v is None else fmt(v, digits)
            extra = ""
            cls = "num" if numeric[c] else ("text" if len(text) <= SHORT_TEXT else "text long")
            style = _CELL_STYLE + (";text-align:right" if numeric[c] else ";text-align:left")
        tag = "th" if first else "td"
        scope = ' scope="row"' if first else ""
        body = text if c in html_cols and not _is_num(v) else html.escape(text)
        return f'<{tag}{scope} class="{cls}"{label}{extra} style="{style}">{body}</{tag}>'

    head = "".join(
        f'<th scope="col" class="{"num" if numeric[c] else "text"}" style="{_CELL_STYLE};'
        f'text-align:{"right" if numeric[c] else "left"}">{html.escape(str(c))}</th>' for c in cols)
    body = []
    for r in rows:
        row_notes = [(c, r.get(c)) for c in note_cols if r.get(c) not in (None, "")]
        cls = ' class="has-note"' if row_notes else ""
        body.append(f"<tr{cls}>" + "".join(cell(c, r.get(c), i == 0) for i, c in enumerate(cols)) + "</tr>")
        for c, v in row_notes:
            body.append(f'<tr class="labsim-note-row"><td colspan="{len(cols)}" data-label="{_attr(str(c))}" '
                        f'style="{_CELL_STYLE}"><span class="labsim-note-label">{html.escape(str(c))}:</span> '
                        f"{html.escape(fmt(v, digits))}</td></tr>")
    classes = "labsim-table labsim-scroll-frame" + (" labsim-cards" if cards else "")
    cap = f'<div class="labsim-table-caption">{html.escape(caption)}</div>' if caption else ""
    label = f' aria-label="{_attr(caption)}"' if caption else ""
    region = f"Table: {caption}" if caption else "Table"
    return (f'<div class="{classes}">{cap}'
            # A region that may scroll sideways is reachable from the keyboard (WCAG 2.1.1); the site's
            # script (book/_static/labsim.js) drops the tab stop where the table fits its column.
            f'<div class="labsim-scroll" tabindex="0" role="region" aria-label="{_attr(region)}" '
            f'style="overflow-x:auto;max-width:100%">'
            f'<table class="table"{label}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f"</div></div>")


class Table:
    """A table that shows as HTML in notebooks and on the website (see :func:`html_table`)."""

    def __init__(self, rows: Sequence[dict], caption: str = "", digits: int = 3, *,
                 units: Mapping[str, str] | None = None, notes: Sequence[str] = (),
                 cards: bool | None = None, html_cols: Sequence[str] = ()) -> None:
        self.rows = list(rows)
        self.caption = caption
        self.digits = digits
        self.units = dict(units or {})
        self.notes = tuple(notes)
        self.cards = cards
        self.html_cols = tuple(html_cols)

    def _repr_html_(self) -> str:
        return html_table(self.rows, self.caption, self.digits, units=self.units, notes=self.notes,
                          cards=self.cards, html_cols=self.html_cols)

    def __repr__(self) -> str:
        return markdown_table(self.rows, self.digits)


def markdown_table(rows: Sequence[dict], digits: int = 3) -> str:
    if not rows:
        return "(empty)"
    cols = list(rows[0])
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c), digits) for c in cols) + " |" for r in rows]
    return "\n".join(lines)
