"""Figures for the host/device chapter: timelines with measured spans, timelines step by step, and the
programs of a block kernel (``ls.blocks``) over their lanes."""
from __future__ import annotations
from ..support.errors import ArgumentError

import textwrap
from typing import Sequence

from ..machines.events import Trace
from .palette import NEUTRAL, ROLE
from .plots import _time_unit, style, timeline

_IDLE = ROLE["idle"]  # light grey: lanes a mask left empty
_DATA = ROLE["data"]  # yellow: the values a program works on
_SPAN = NEUTRAL[0]    # black: measured spans and the "now" line carry no role


def _scale(trace: Trace, max_time: float | None) -> tuple[float, str]:
    return _time_unit(max_time if max_time is not None else trace.duration or 1e-6)


def _span_text(seconds: float) -> str:
    """A span's length in its own unit (µs, ms or s), so a short span does not read 0.0238 ms."""
    k, unit = _time_unit(seconds or 1e-9)
    return f"{seconds * k:,.3g} {unit}"


def timeline_spans(trace: Trace, spans: Sequence[tuple[str, float, float]], *, title: str | None = None,
                   max_time: float | None = None, height: int | None = None):
    """``timeline(trace)`` with measured spans drawn above the rows: ``(label, start, end)`` in seconds,
    e.g. what a stopwatch around a region reads. Each span is a bracket with its label and length, in a
    band at the top of the plot area (the rows move down to make room)."""
    fig = timeline(trace, title=title, max_time=max_time, height=height)
    scale, unit = _scale(trace, max_time)
    n = len(spans)
    row = 30  # pixels per span
    fig.update_layout(height=(fig.layout.height or 300) + row * n)
    plot_px = max(fig.layout.height - 110, 60)  # about the plot area: the height less axis title and legend
    fig.update_yaxes(domain=[0, max(0.2, 1 - (row * n + 6) / plot_px)])
    for i, (label, t0, t1) in enumerate(spans):
        if not t1 >= t0:
            raise ArgumentError(f"timeline_spans: span {label!r} ends ({t1}) before it starts ({t0})")
        y = -(row * i + 22)  # pixels below the top of the plot area
        x0, x1 = t0 * scale, t1 * scale
        for xa, xb, ya, yb in ((x0, x1, y, y), (x0, x0, y - 5, y + 5), (x1, x1, y - 5, y + 5)):
            fig.add_shape(type="line", xref="x", yref="paper", ysizemode="pixel", yanchor=1, x0=xa, x1=xb,
                          y0=ya, y1=yb, line=dict(color=_SPAN, width=2))
        fig.add_annotation(xref="x", yref="paper", x=x0, y=1, yshift=y + 4, xanchor="left", yanchor="bottom",
                           showarrow=False, text=f"{label}: {_span_text(t1 - t0)}", font=dict(size=12))
    return fig


def timeline_steps(trace: Trace, times: Sequence[float], *, titles: Sequence[str] | None = None,
                   max_time: float | None = None, height: int | None = None, notes: Sequence[str] | None = None,
                   upto: Sequence[int] | None = None):
    """One timeline figure per time in ``times``: the events up to that moment (cut off at it) and a
    "now" line. With ``upto``, step i instead shows the first ``upto[i]`` events of the trace in full,
    whenever they run: what has been *enqueued* by then (the "now" line is still ``times[i]``).
    Every figure has the same traces (one per event kind), as an animation needs; the x-axis is the
    whole trace's, so nothing jumps."""
    import plotly.graph_objects as go

    if not times:
        raise ArgumentError("timeline_steps: give at least one time")
    if titles is not None and len(titles) != len(times):
        raise ArgumentError(f"timeline_steps: {len(titles)} titles for {len(times)} times; give one per time")
    if notes is not None and len(notes) != len(times):
        raise ArgumentError(f"timeline_steps: {len(notes)} notes for {len(times)} times; give one per time")
    if upto is not None and len(upto) != len(times):
        raise ArgumentError(f"timeline_steps: {len(upto)} counts in upto for {len(times)} times; give one per time")
    end = max_time if max_time is not None else trace.end
    base_fig = timeline(trace, max_time=end, height=height)
    scale, _ = _scale(trace, end)
    # the position in the trace of each bar of each Plotly trace (timeline draws one trace per kind, in order)
    order = {}
    for k, e in enumerate(trace.events):
        order.setdefault(e.kind.value, []).append(k)
    # notes wrap at 28 characters: a phone's plot area is about 200 px wide
    wrapped = [textwrap.wrap(n or "", 28) for n in notes] if notes is not None else []
    lines = max((len(w) for w in wrapped), default=0)
    frames = []
    for i, t in enumerate(times):
        f = go.Figure(base_fig)
        cut = t * scale
        for tr in f.data:
            xs = []
            for j, (b, x) in enumerate(zip(tr.base, tr.x)):
                if upto is not None:
                    xs.append(x if order[tr.name][j] < upto[i] else None)
                else:
                    xs.append(None if b >= cut else min(b + x, cut) - b)  # not started yet: no bar
            tr.x = xs
        f.add_shape(type="line", xref="x", yref="paper", x0=cut, x1=cut, y0=0, y1=1,
                    line=dict(color=_SPAN, width=1, dash="dot"))
        if notes is not None:  # in a band above the rows, so a long note never covers a row label
            band = 14 + 16 * lines  # the same band in every step, so the rows do not jump
            f.update_layout(height=(height or base_fig.layout.height) + band)
            f.update_yaxes(domain=[0, max(0.3, 1 - band / max(f.layout.height - 110, 60))])
            f.add_annotation(xref="paper", yref="paper", x=0, y=1, xanchor="left", yanchor="top",
                             text="<br>".join(wrapped[i]), showarrow=False, align="left", font=dict(size=12))
        frames.append(style(f, title=titles[i] if titles is not None else None, height=f.layout.height))
    return frames


def programs(run, *, title: str | None = None, max_programs: int = 32):
    """The programs of a block-kernel launch (``ls.blocks``) over their lanes: one row per program, one
    cell per lane, yellow where the mask let the lane through, light grey where it left it idle."""
    import plotly.graph_objects as go

    recs = list(run.programs)[:max_programs]
    if not recs:
        raise ArgumentError("programs: the launch ran no program")
    lanes = max(r.lanes for r in recs) or 1
    block = run.constants.get("BLOCK_SIZE", lanes)
    z = [[1 if j < r.active else 0 for j in range(lanes)] for r in recs]
    # no per-cell hover text: a 1,000-lane launch would put 1,000 strings per figure into the page
    fig = go.Figure(go.Heatmap(z=z, zmin=0, zmax=1, showscale=False,
                               colorscale=[[0, _IDLE], [0.5, _IDLE], [0.5, _DATA], [1, _DATA]],
                               hovertemplate="program %{y}, lane %{x}: active = %{z}<extra></extra>",
                               xgap=1 if lanes <= 64 else 0, ygap=2))
    fig.update_yaxes(title="program (pid)", autorange="reversed", tickmode="array",
                     tickvals=list(range(len(recs))), ticktext=[str(r.pid) for r in recs])
    fig.update_xaxes(title=f"lane within the block (BLOCK_SIZE = {block})")
    shown = len(recs) < len(run.programs)
    return style(fig, title=title or (f"{len(run.programs)} programs" + (f" (first {len(recs)} shown)" if shown else "")),
                 height=140 + 22 * len(recs))


__all__ = ["timeline_spans", "timeline_steps", "programs"]
