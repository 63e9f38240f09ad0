"""Figures of serving (chapter 13): static vs continuous batching over a request stream.

Reads :class:`labsim.serving.BatchingResult` objects; draws nothing it does not get from them. Static
batching is drawn in the "mismatch" colour (vermillion), continuous batching in "match" (bluish green).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .palette import ROLE
from .plots import style

POLICY_ROLE = {"static": "mismatch", "continuous": "match"}


def occupancy(result, points: int = 160) -> tuple[np.ndarray, np.ndarray]:
    """Requests in the batch over time, as a time-weighted mean over ``points`` equal bins (keeps the
    page light: a run has thousands of steps). Returns (bin centres in s, mean batch per bin)."""
    start, dt, size = result.step_start, result.step_time, result.step_batch
    t0, t1 = float(result.arrival.min()), float(result.finish.max())
    edges = np.linspace(t0, t1, points + 1)
    busy = np.zeros(points)
    for s, d, b in zip(start, dt, size):  # spread each step over the bins it covers
        lo, hi = s, s + d
        i0, i1 = np.searchsorted(edges, lo, "right") - 1, np.searchsorted(edges, hi, "left")
        for i in range(max(i0, 0), min(i1, points)):
            busy[i] += b * max(0.0, min(hi, edges[i + 1]) - max(lo, edges[i]))
    return (edges[:-1] + edges[1:]) / 2, busy / np.diff(edges)


def batching_figure(results, *, title: str | None = None, height: int = 380):
    """Two panels for runs of the same stream under different policies (``results``: policy →
    BatchingResult): requests in the batch over time, and each request's latency, sorted (a CDF)."""
    if not results:
        raise ValueError("batching_figure: results is empty; pass {policy: BatchingResult}")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=["requests in the batch", "request latency, sorted"])
    for policy, r in results.items():
        color = ROLE[POLICY_ROLE.get(policy, "compute")]
        x, y = occupancy(r)
        fig.add_trace(go.Scatter(x=np.round(x, 3), y=np.round(y, 2), mode="lines", name=policy,
                                 line=dict(color=color), legendgroup=policy), row=1, col=1)
        lat = np.sort(r.latency)
        fig.add_trace(go.Scatter(x=np.round(lat, 3), y=np.round(np.arange(1, lat.size + 1) / lat.size * 100, 1),
                                 mode="lines", name=policy, showlegend=False, line=dict(color=color),
                                 legendgroup=policy), row=1, col=2)
    fig.update_xaxes(title_text="time (s)", row=1, col=1).update_yaxes(title_text="requests", row=1, col=1)
    fig.update_xaxes(title_text="latency (s)", row=1, col=2)
    fig.update_yaxes(title_text="% of requests", range=[0, 100], row=1, col=2)
    return style(fig, title=title, height=height)


__all__ = ["batching_figure", "occupancy", "POLICY_ROLE"]
