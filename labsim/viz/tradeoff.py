"""The latency-throughput figure of a decode batch (chapter "LLM inference").

Reads :class:`labsim.models.tradeoff.BatchPoint` records (from ``batch_tradeoff``); draws nothing it does
not get from them. Throughput on x, time per output token and time to first token on y (both log), each
point labelled with its batch size; a knee point and a TPOT target may be marked.
"""
from __future__ import annotations

import math

import plotly.graph_objects as go

from ..support.errors import ArgumentError
from .palette import NEUTRAL, ROLE, series_style
from .plots import style


def _points(fn: str, arg: str, pts) -> list:
    from ..models.tradeoff import BatchPoint
    pts = list(pts) if hasattr(pts, "__iter__") and not isinstance(pts, (str, bytes)) else None
    if not pts or not all(isinstance(p, BatchPoint) for p in pts):
        raise ArgumentError(f"{fn}: {arg} must be a non-empty list of BatchPoint (from tradeoff.batch_tradeoff)")
    return pts


def tradeoff_figure(points, *, knee=None, knee_name: str = "knee", slo_s: float | None = None,
                    title: str | None = None, height: int = 400):
    """TPOT (solid; batches 1, 4, 16, ... labelled ``B=…``) and TTFT (dashed) against decode throughput for each batch. The two
    curves have no palette meaning, so they are greys with dashes; the knee is a memory event (the KV
    caches weigh as much as the weights), so its star has the memory colour.

    ``knee``: one more :class:`BatchPoint` drawn as a star on the TPOT curve, named ``knee_name`` in the
    legend. ``slo_s``: a TPOT target in seconds, drawn as a horizontal dotted line."""
    pts = sorted(_points("tradeoff_figure", "points", points), key=lambda p: p.batch)
    x = [round(p.tok_s, 1) for p in pts]
    # every point is a batch (hover names it); the labels name every fourfold step of the batch only, so
    # that on a phone's plot no two of them touch
    def label(b):
        return f"B={b}" if b & (b - 1) == 0 and b.bit_length() % 2 == 1 else ""

    data = [go.Scatter(x=x, y=[round(p.tpot_ms, 3) for p in pts], mode="lines+markers+text",
                       name="time per output token (TPOT)", text=[label(p.batch) for p in pts],
                       customdata=[p.batch for p in pts], textposition="top center", line=series_style(0),
                       hovertemplate="B=%{customdata}: %{x:,.0f} tokens/s, TPOT %{y:.3g} ms<extra></extra>"),
            go.Scatter(x=x, y=[round(p.ttft_ms, 2) for p in pts], mode="lines+markers",
                       name="time to first token (TTFT)", line=series_style(4))]
    if knee is not None:
        k = _points("tradeoff_figure", "knee", [knee])[0]
        data.append(go.Scatter(x=[round(k.tok_s, 1)], y=[round(k.tpot_ms, 3)], mode="markers",
                               name=f"{knee_name} (B={k.batch})",
                               marker=dict(symbol="star", size=16, color=ROLE["memory"])))  # the KV caches' memory
    fig = go.Figure(data)
    if slo_s is not None:
        if not isinstance(slo_s, (int, float)) or isinstance(slo_s, bool) or not slo_s > 0:
            raise ArgumentError(f"tradeoff_figure: slo_s must be a positive number of seconds, got {slo_s!r}")
        fig.add_hline(y=slo_s * 1e3, line=dict(color=NEUTRAL[1], dash="dot"))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"TPOT target {slo_s * 1e3:g} ms",
                                 line=dict(color=NEUTRAL[1], dash="dot"), hoverinfo="skip"))
    # room left of the first point and right of the last, so their labels stay inside the plot
    fig.update_xaxes(title="decode throughput (tokens/s per chip)", type="log",
                     range=[math.log10(min(x) / 2), math.log10(max(x) * 1.6)])
    fig.update_yaxes(title="time (ms)", type="log")
    return style(fig, title=title, height=height)


__all__ = ["tradeoff_figure"]
