"""Charts the chapters draw from labsim's numbers: lines, points, bars, shares, ratios, closed form against
machine, and grids of memory slots. One figure system: the chapters describe *what* to draw (series of
numbers labsim computed, with a role colour from :data:`~labsim.viz.palette.ROLE`) and these helpers
build the Plotly figure in the book's style (:func:`~labsim.viz.plots.style`). Every figure they return
has the three faces: live in JupyterLab, static on the website, print via :func:`labsim.viz.to_matplotlib`.

- :func:`line`, :func:`points`, :func:`bars`, :func:`rule` describe series and reference lines;
  :func:`chart` draws them on one pair of axes.
- :func:`share_bars` — stacked horizontal bars of each part's share (0-100 %) of a whole, one bar per row.
- :func:`ratio_bars` — horizontal bars of a ratio, with the line at 1 ("no change", "they agree").
- :func:`closed_form_vs_machine` — a closed form as lines, what a machine measured as dots.
- :func:`slot_grids` — grids of slots side by side, each slot coloured by its state (KV memory pages).
- :func:`status_grid` — a table of states (match, differs, not run) as coloured cells with a mark each.
- :func:`message` — a figure that only says why there is nothing to draw.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import math
import numbers
from dataclasses import dataclass
from typing import Mapping, Sequence

from .palette import NEUTRAL, ROLE
from .plots import style

__all__ = ["Series", "Rule", "line", "points", "bars", "rule", "chart", "share_bars", "ratio_bars",
           "closed_form_vs_machine", "slot_grids", "status_grid", "message"]

_KINDS = ("line", "points", "bars")


@dataclass(frozen=True)
class Series:
    """One series of a :func:`chart`: ``kind`` "line", "points" or "bars"; ``x`` and ``y`` of equal length."""

    kind: str
    x: tuple
    y: tuple
    name: str | None = None
    color: str | None = None
    dash: str | None = None
    markers: bool = False
    symbol: str | None = None
    size: int | None = None
    text: tuple | None = None
    text_outside: bool = False
    outline: str | None = None
    horizontal: bool = False


@dataclass(frozen=True)
class Rule:
    """A reference line across the plot: ``axis`` "x" (vertical line at x = value) or "y" (horizontal)."""

    axis: str
    value: float
    label: str | None = None
    color: str = NEUTRAL[0]
    dash: str = "dot"


def _seq(fn: str, name: str, v) -> tuple:
    if v is None or isinstance(v, (str, bytes)):
        raise ArgumentError(f"{fn}: {name} must be a sequence of values, got {v!r}")
    try:
        return tuple(v.tolist() if hasattr(v, "tolist") else v)
    except TypeError:
        raise ArgumentError(f"{fn}: {name} must be a sequence of values, got {v!r}") from None


def _pair(fn: str, x, y) -> tuple[tuple, tuple]:
    x, y = _seq(fn, "x", x), _seq(fn, "y", y)
    if len(x) != len(y):
        raise ArgumentError(f"{fn}: x has {len(x)} values but y has {len(y)}; give one y per x")
    if not x:
        raise ArgumentError(f"{fn}: x and y are empty; there is nothing to draw")
    return x, y


def line(x, y, name: str | None = None, *, color: str | None = None, dash: str | None = None,
         markers: bool = False) -> Series:
    """A line through the points (x, y); ``markers`` also marks each point."""
    x, y = _pair("line", x, y)
    return Series("line", x, y, name=name, color=color, dash=dash, markers=markers)


def points(x, y, name: str | None = None, *, color: str | None = None, symbol: str | None = None,
           size: int = 10) -> Series:
    """Unjoined points (x, y): measurements."""
    x, y = _pair("points", x, y)
    return Series("points", x, y, name=name, color=color, symbol=symbol, size=size)


def bars(x, y, name: str | None = None, *, color: str | None = None, text=None, text_outside: bool = False,
         outline: str | None = None, horizontal: bool = False) -> Series:
    """One bar per x (a category or a number) of height y; ``horizontal`` puts the categories on the y axis
    (readable at phone width). ``text`` labels each bar (inside, or above it with ``text_outside``)."""
    x, y = _pair("bars", x, y)
    if text is not None:
        text = _seq("bars", "text", text)
        if len(text) != len(x):
            raise ArgumentError(f"bars: {len(text)} texts for {len(x)} bars; give one text per bar")
    return Series("bars", x, y, name=name, color=color, text=text, text_outside=text_outside, outline=outline,
                  horizontal=horizontal)


def rule(axis: str, value: float, label: str | None = None, *, color: str = NEUTRAL[0], dash: str = "dot") -> Rule:
    """A reference line: ``rule("y", 1.0, "one copy")`` is horizontal at y = 1, labelled at the right."""
    if axis not in ("x", "y"):
        raise ArgumentError(f"rule: axis must be 'x' or 'y', got {axis!r}")
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
        raise ArgumentError(f"rule: value must be a finite number, got {value!r}")
    return Rule(axis, float(value), label, color, dash)


def _trace(s: Series):
    import plotly.graph_objects as go

    if s.kind == "bars":
        x, y = (s.y, s.x) if s.horizontal else (s.x, s.y)
        marker = dict(color=s.color) if s.color else {}
        if s.outline:
            marker["line"] = dict(color=s.outline, width=1)
        # labels stay level (never turned to run up a narrow bar); one too big for its bar is hidden
        # (the style's uniformtext) rather than shrunk below 11 px
        kw = dict(text=list(s.text), textposition="outside" if s.text_outside else "auto", textangle=0,
                  cliponaxis=False) if s.text is not None else {}
        return go.Bar(x=list(x), y=list(y), name=s.name, orientation="h" if s.horizontal else "v", marker=marker,
                      showlegend=s.name is not None, **kw)
    if s.kind == "line":
        ln = dict(color=s.color, dash=s.dash) if s.color or s.dash else {}
        return go.Scatter(x=list(s.x), y=list(s.y), name=s.name, mode="lines+markers" if s.markers else "lines",
                          line=ln or None, showlegend=s.name is not None)
    return go.Scatter(x=list(s.x), y=list(s.y), name=s.name, mode="markers", showlegend=s.name is not None,
                      marker=dict(color=s.color, size=s.size, symbol=s.symbol))


def _range(fn: str, name: str, r, log: bool):
    if r is None:
        return None
    if len(r) != 2 or not all(isinstance(v, numbers.Real) and math.isfinite(v) for v in r):
        raise ArgumentError(f"{fn}: {name} must be two finite numbers (low, high), got {r!r}")
    if log:
        if min(r) <= 0:
            raise ArgumentError(f"{fn}: {name} {r!r} is on a log axis and must be > 0")
        return [math.log10(v) for v in r]
    return list(r)


def _room_for_outside_text(fig, series, barmode, log: bool) -> None:
    """Bars labelled above (or after) their ends: an invisible point past the longest bar, so that the
    axis (its own range, or the range shared by an interactive figure's steps) leaves room for the label
    on a phone's narrow plot instead of cutting it at the figure's edge."""
    import plotly.graph_objects as go

    labelled = [s for s in series if s.kind == "bars" and s.text is not None and s.text_outside]
    if not labelled:
        return
    tops: dict = {}
    for s in (x for x in series if x.kind == "bars"):
        for c, v in zip(s.x, s.y):
            if isinstance(v, numbers.Real) and math.isfinite(v):
                tops[c] = tops.get(c, 0.0) + v if barmode == "stack" else max(tops.get(c, v), v)
    if not tops:
        return
    far = max(tops.values())
    if far <= 0:
        return
    # a label of about 80 px on a phone's plot of about 220 px: some 40 % more axis past the longest bar
    if log:
        low = min((v for v in tops.values() if v > 0), default=far)
        far = far * 10 ** (0.45 * math.log10(far / low) + 0.3)
    else:
        far = far * 1.45
    horizontal = labelled[0].horizontal
    cat = next(iter(tops))
    fig.add_trace(go.Scatter(x=[far] if horizontal else [cat], y=[cat] if horizontal else [far], mode="markers",
                             marker=dict(opacity=0, size=1), hoverinfo="skip", showlegend=False))


def chart(series: Sequence[Series], *, title: str | None = None, xtitle: str | None = None,
          ytitle: str | None = None, xlog: bool = False, ylog: bool = False, xrange=None, yrange=None,
          barmode: str | None = None, rules: Sequence[Rule] = (), categories: Sequence | None = None,
          yformat: str | None = None, height: int = 360):
    """Draw ``series`` (from :func:`line`, :func:`points`, :func:`bars`) on one pair of axes in the book's
    style. ``barmode`` "stack" or "group" for several bar series; ``rules`` are reference lines
    (:func:`rule`); ``categories`` fixes the order of categorical x values; ``xrange``/``yrange`` are in
    data units (also on a log axis); ``yformat`` a d3 tick format (".0%")."""
    import plotly.graph_objects as go

    series = list(series)
    if not series or not all(isinstance(s, Series) for s in series):
        raise ArgumentError("chart: series must be a non-empty list of viz.line / viz.points / viz.bars series")
    if barmode not in (None, "stack", "group"):
        raise ArgumentError(f"chart: barmode must be None, 'stack' or 'group', got {barmode!r}")
    fig = go.Figure([_trace(s) for s in series])
    _room_for_outside_text(fig, series, barmode, xlog if any(s.horizontal for s in series) else ylog)
    if barmode:
        fig.update_layout(barmode=barmode)
    horizontal = any(s.kind == "bars" and s.horizontal for s in series)
    fig.update_xaxes(title=xtitle, type="log" if xlog else None, range=_range("chart", "xrange", xrange, xlog))
    fig.update_yaxes(title=ytitle, type="log" if ylog else None, range=_range("chart", "yrange", yrange, ylog),
                     tickformat=yformat)
    if categories is not None:
        fig.update_xaxes(categoryorder="array", categoryarray=list(categories))
    if horizontal:
        fig.update_yaxes(autorange="reversed")
    for r in rules:
        if not isinstance(r, Rule):
            raise ArgumentError(f"chart: rules must be viz.rule(...) lines, got {r!r}")
        if r.axis == "y":
            fig.add_hline(y=r.value, line=dict(color=r.color, dash=r.dash))
        else:
            fig.add_vline(x=r.value, line=dict(color=r.color, dash=r.dash))
        if r.label:
            # named in the legend, drawn as the line is: a label written on the plot lay over the bars or
            # ran off a phone's narrow plot
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=r.label, showlegend=True,
                                     line=dict(color=r.color, dash=r.dash), hoverinfo="skip"))
    return style(fig, title=title, height=height)


def share_bars(rows: Mapping[str, Mapping[str, float]], colors: Mapping[str, str], *, xtitle: str = "share (%)",
               min_label: float = 0.12, title: str | None = None, height: int | None = None):
    """One horizontal bar per row, split into its parts' shares of the row's total on a 0-100 % axis
    (a stacked bar on a log axis would hide the short parts). ``colors`` gives each part (in order) its
    colour; a share of at least ``min_label`` is written inside its segment."""
    if not rows:
        raise ArgumentError("share_bars: rows is empty; give one {part: value} mapping per bar")
    if not colors:
        raise ArgumentError("share_bars: colors is empty; give each part a colour")
    totals = {}
    for label, parts in rows.items():
        missing = [p for p in colors if p not in parts]
        if missing:
            raise ArgumentError(f"share_bars: row {label!r} has no value for {missing}")
        vals = [parts[p] for p in colors]
        if not all(isinstance(v, numbers.Real) and math.isfinite(v) and v >= 0 for v in vals) or sum(vals) <= 0:
            raise ArgumentError(f"share_bars: row {label!r} needs finite values >= 0 with a positive total, got {vals}")
        totals[label] = sum(vals)
    labels = list(rows)
    series = []
    for part, color in colors.items():
        share = [100 * rows[r][part] / totals[r] for r in labels]
        series.append(bars(labels, share, part, color=color, horizontal=True,
                           text=[f"{v:.0f}%" if v >= 100 * min_label else "" for v in share]))
    fig = chart(series, barmode="stack", xtitle=xtitle, xrange=(0, 100), title=title,
                height=height or 140 + 40 * len(labels))
    fig.update_traces(textposition="inside", textangle=0, insidetextanchor="middle")
    return fig


def ratio_bars(labels: Sequence[str], ratios: Sequence[float], *, text=None, colors=None, xtitle: str = "ratio",
               title: str | None = None, height: int = 320):
    """Horizontal bars of a ratio (this ÷ that), one per label, with a dotted line at 1: a bar that
    reaches the line means no change (or agreement)."""
    labels, ratios = list(labels), list(ratios)
    if colors is not None and not isinstance(colors, str) and len(colors) != len(labels):
        raise ArgumentError(f"ratio_bars: {len(colors)} colors for {len(labels)} labels; give one per label")
    s = bars(labels, ratios, color=list(colors) if colors is not None and not isinstance(colors, str)
             else (colors or NEUTRAL[1]), text=text, horizontal=True)
    fig = chart([s], xtitle=xtitle, rules=[rule("x", 1.0)], title=title, height=height)
    fig.update_xaxes(rangemode="tozero")
    return fig


def closed_form_vs_machine(closed: Mapping[str, tuple], machine: Mapping[str, tuple], *, xtitle: str | None = None,
                           ytitle: str | None = None, title: str | None = None, yformat: str | None = None,
                           yrange=None, xlog: bool = False, ylog: bool = False, height: int = 360):
    """A closed form as lines (black and greys, dashed apart) and what a machine measured as dots in the
    "match" colour: ``closed`` and ``machine`` map a legend name to ``(x, y)``."""
    if not closed or not machine:
        raise ArgumentError("closed_form_vs_machine: give at least one closed-form curve and one machine series")
    dashes = ("solid", "dot", "dash", "dashdot")
    series = [line(x, y, name, color=NEUTRAL[min(i, len(NEUTRAL) - 1)], dash=dashes[i % len(dashes)])
              for i, (name, (x, y)) in enumerate(closed.items())]
    symbols = ("circle", "diamond", "square", "x")
    series += [points(x, y, name, color=ROLE["match"], symbol=symbols[i % len(symbols)])
               for i, (name, (x, y)) in enumerate(machine.items())]
    return chart(series, xtitle=xtitle, ytitle=ytitle, title=title, yformat=yformat, yrange=yrange, xlog=xlog,
                 ylog=ylog, height=height)


def slot_grids(grids: Mapping[str, object], states: Sequence[tuple[str, str]], *, title: str | None = None,
               height: int = 420):
    """Grids of slots side by side (one per entry of ``grids``, titled by its key), each slot coloured by
    its state: a grid holds integers 0 .. len(states) - 1 and ``states[i] = (name, role)`` names state i
    and gives its :data:`ROLE` colour (a legend entry each)."""
    import numpy as np
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if not grids:
        raise ArgumentError("slot_grids: grids is empty")
    n = len(states)
    if n < 1 or any(role not in ROLE for _, role in states):
        raise ArgumentError(f"slot_grids: states must be (name, role) pairs with roles from viz.ROLE, got {states!r}")
    scale = []
    for i, (_, role) in enumerate(states):
        scale += [[i / n, ROLE[role]], [(i + 1) / n, ROLE[role]]]
    # a panel title on two lines at its colon ("contiguous:<br>21 requests"): side by side over narrow
    # panels, one-line titles run into each other on a phone
    titles = [k.replace(": ", ":<br>", 1) if len(grids) > 1 and len(k) > 14 else k for k in grids]
    fig = make_subplots(rows=1, cols=len(grids), subplot_titles=titles, horizontal_spacing=0.04)
    for i, (name, z) in enumerate(grids.items()):
        z = np.asarray(z)
        if z.ndim != 2 or z.size == 0 or z.min() < 0 or z.max() >= n:
            raise ArgumentError(f"slot_grids: grid {name!r} must be a 2-D array of states 0..{n - 1}")
        fig.add_trace(go.Heatmap(z=z, zmin=-0.5, zmax=n - 0.5, showscale=False, xgap=0, ygap=1, colorscale=scale,
                                 hovertemplate="slot %{x}, row %{y}<extra></extra>"), row=1, col=i + 1)
    for name, role in states:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                 marker=dict(color=ROLE[role], size=10, symbol="square")))
    fig.update_xaxes(showticklabels=False).update_yaxes(showticklabels=False, autorange="reversed")
    if any("<br>" in t for t in titles):  # two-line titles: room inside the figure (the caption takes the margin)
        fig.update_yaxes(domain=[0, 0.86])
        for a in fig.layout.annotations:
            a.y = 0.88
    return style(fig, title=title, height=height)


def message(text: str, *, height: int = 260):
    """A figure with no axes that says, in ``text``, why there is nothing to draw."""
    import plotly.graph_objects as go

    if not isinstance(text, str) or not text:
        raise ArgumentError(f"message: text must be a non-empty string, got {text!r}")
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font=dict(size=15))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return style(fig, height=height)


def status_grid(cells: Sequence[Sequence[str]], rows: Sequence[str], columns: Sequence[str],
                states: Mapping[str, tuple[str, str]], *, title: str | None = None, height: int | None = None):
    """A table of states as coloured cells: ``cells[i][j]`` is the state of row ``rows[i]`` in column
    ``columns[j]``, and ``states[name] = (role, mark)`` gives each state its :data:`ROLE` colour and the
    mark written in its cells ("=", "≠")."""
    import plotly.graph_objects as go

    rows, columns = list(rows), list(columns)
    if not states or any(role not in ROLE for role, _ in states.values()):
        raise ArgumentError(f"status_grid: states must map a name to (role, mark) with roles from viz.ROLE, got {states!r}")
    if len(cells) != len(rows) or any(len(r) != len(columns) for r in cells):
        raise ArgumentError(f"status_grid: cells must have {len(rows)} rows of {len(columns)} states (one per row and column)")
    names = list(states)
    bad = {c for r in cells for c in r if c not in states}
    if bad:
        raise ArgumentError(f"status_grid: cells hold states {sorted(bad)} that are not in states {names}")
    n = len(names)
    scale = []
    for i, name in enumerate(names):
        scale += [[i / n, ROLE[states[name][0]]], [(i + 1) / n, ROLE[states[name][0]]]]
    z = [[names.index(c) for c in r] for r in cells]
    text = [[states[c][1] for c in r] for r in cells]
    fig = go.Figure(go.Heatmap(z=z, x=columns, y=rows, text=text, texttemplate="%{text}", colorscale=scale,
                               zmin=-0.5, zmax=n - 0.5, showscale=False, xgap=2, ygap=2,
                               hovertemplate="%{y}: %{x} %{text}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    # column names side by side run into each other on a phone's 360 px figure: slanted when long
    slant = sum(len(str(c)) for c in columns) > 30
    fig.update_xaxes(tickangle=-45 if slant else 0)
    return style(fig, title=title, height=height or 120 + 24 * len(rows) + (50 if slant else 0))
