"""Figures of serving (chapter 13): static vs continuous batching over a request stream.

Reads :class:`labsim.serving.BatchingResult` objects; draws nothing it does not get from them. Static
batching is drawn in the "mismatch" colour (vermillion), continuous batching in "match" (bluish green).
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import numpy as np
import plotly.graph_objects as go

from .palette import ROLE
from .plots import style

POLICY_ROLE = {"static": "mismatch", "continuous": "match"}


def occupancy(result, points: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Requests in the batch over time, as a time-weighted mean over ``points`` equal bins (keeps the
    page light: a run has thousands of steps). Returns (bin centres in s, mean batch per bin)."""
    start, dt, size = result.step_start, result.step_time, result.step_batch
    t0, t1 = float(result.arrival.min()), float(result.finish.max())
    edges = np.linspace(t0, t1, points + 1)
    # cumulative request-seconds: linear within a step, flat between steps; sampled at the bin edges
    area = np.concatenate([[0.0], np.cumsum(size * dt)])
    ts = np.empty(2 * start.size)
    ts[0::2], ts[1::2] = start, start + dt
    ar = np.empty(2 * start.size)
    ar[0::2], ar[1::2] = area[:-1], area[1:]
    busy = np.diff(np.interp(edges, ts, ar))
    return (edges[:-1] + edges[1:]) / 2, busy / np.diff(edges)


def batching_figure(results, *, title: str | None = None, height: int = 380, latency_max: float | None = None):
    """Two panels for runs of the same stream under different policies (``results``: policy →
    BatchingResult): requests in the batch over time, and each request's latency, sorted (a CDF drawn
    through at most 61 quantiles).
    Built as one Figure with two x/y axis pairs (cheaper than ``make_subplots`` for a live widget).
    ``latency_max`` fixes the latency axis (seconds), so figures of several streams compare."""
    if not results:
        raise ArgumentError("batching_figure: results is empty; pass {policy: BatchingResult}")
    data = []
    for policy, r in results.items():
        line = dict(color=ROLE[POLICY_ROLE.get(policy, "compute")])
        x, y = occupancy(r)
        data.append(go.Scatter(x=np.round(x, 3), y=np.round(y, 2), mode="lines", name=policy, line=line,
                               legendgroup=policy, xaxis="x", yaxis="y"))
        pct = np.linspace(0, 100, min(r.latency.size, 60) + 1)  # a few quantiles keep the page light
        data.append(go.Scatter(x=np.round(np.percentile(r.latency, pct), 3), y=np.round(pct, 1),
                               mode="lines", name=policy, showlegend=False, line=line, legendgroup=policy,
                               xaxis="x2", yaxis="y2"))
    # panel titles from each panel's left edge, on two lines and clear of the top tick label: centred
    # on one line they run past a phone's narrow panels
    # (inside the figure: the book's caption takes the title, and the top margin with it)
    head = lambda text, x: dict(text=text, x=x, y=0.86, xref="paper", yref="paper", xanchor="left",
                                yanchor="bottom", yshift=8, align="left", showarrow=False)
    layout = go.Layout(
        xaxis=dict(domain=[0.0, 0.44], title="time (s)"), yaxis=dict(title="requests", rangemode="tozero", domain=[0, 0.84]),
        xaxis2=dict(domain=[0.56, 1.0], title="latency (s)", anchor="y2", rangemode="tozero",
                    range=[0, latency_max] if latency_max else None),
        # no "0" tick: it would sit on the latency axis's own "0" in the corner
        yaxis2=dict(title="% of requests", range=[0, 100], anchor="x2", tickvals=[25, 50, 75, 100], domain=[0, 0.84]),
        annotations=[head("requests<br>in the batch", 0.0), head("request latency,<br>sorted", 0.56)])
    return style(go.Figure(data=data, layout=layout), title=title, height=height)


__all__ = ["batching_figure", "occupancy", "POLICY_ROLE"]
