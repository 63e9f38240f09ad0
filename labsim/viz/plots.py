"""Plotly figures drawn from labsim's results (traces, costs)."""
from __future__ import annotations

from typing import Sequence

from ..events import Trace
from .palette import KIND_COLORS, SEQUENCE


def style(fig, *, title: str | None = None, height: int = 360):
    """House style: white background, colour-blind-safe colours, legend below (phone-friendly)."""
    fig.update_layout(
        template="plotly_white", colorway=SEQUENCE, height=height, autosize=True,
        margin=dict(l=10, r=10, t=50 if title else 20, b=10),
        font=dict(family="Helvetica, Arial, sans-serif", size=13),
        legend=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0),
        title=dict(text=title, x=0, xanchor="left", font=dict(size=15)) if title else None,
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _time_unit(seconds: float) -> tuple[float, str]:
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def timeline(trace: Trace, *, title: str | None = None, height: int | None = None, max_time: float | None = None):
    """A Gantt chart of ``trace``: one row per unit, one bar per event, coloured by event kind."""
    import plotly.graph_objects as go

    scale, unit = _time_unit(max_time if max_time is not None else trace.duration or 1e-6)
    fig = go.Figure()
    kinds = []
    for e in trace.events:
        if e.kind not in kinds:
            kinds.append(e.kind)
    for kind in kinds:
        evs = [e for e in trace.events if e.kind == kind]
        fig.add_trace(go.Bar(
            y=[e.unit for e in evs], x=[max(e.duration * scale, 0) for e in evs], base=[e.start * scale for e in evs],
            orientation="h", name=kind, marker=dict(color=KIND_COLORS.get(kind, "#999999"),
                                                    line=dict(color="#333333", width=0.5)),
            customdata=[[e.name, e.detail, e.duration * scale] for e in evs],
            hovertemplate="%{customdata[0]}<br>%{base:.3g}–%{x:.3g} " + unit +
                          " (%{customdata[2]:.3g} " + unit + ")<br>%{customdata[1]}<extra></extra>",
        ))
    fig.update_layout(barmode="overlay", bargap=0.35)
    fig.update_yaxes(categoryorder="array", categoryarray=list(trace.units)[::-1], title=None)
    fig.update_xaxes(title=f"time ({unit})", rangemode="tozero")
    if max_time is not None:
        fig.update_xaxes(range=[0, max_time * scale])
    return style(fig, title=title, height=height or 120 + 45 * len(trace.units))


def bar_compare(labels: Sequence[str], values: Sequence[float], *, title: str | None = None, xlabel: str = "",
                log: bool = False, text: Sequence[str] | None = None, colors: Sequence[str] | None = None):
    """Horizontal bars, one per label (readable at phone width)."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(y=list(labels), x=list(values), orientation="h", text=list(text) if text else None,
                           textposition="auto", marker=dict(color=list(colors) if colors else SEQUENCE[0])))
    fig.update_xaxes(title=xlabel, type="log" if log else "linear")
    fig.update_yaxes(autorange="reversed")
    return style(fig, title=title, height=110 + 40 * len(labels))
