"""The accuracy appendix's GPU figure: each measurement divided by labsim's prediction, on one log axis."""
from __future__ import annotations
from ..support.errors import ArgumentError

import math
from typing import Sequence

from .palette import NEUTRAL, ROLE
from .plots import style

# within this factor of the measurement, a prediction is drawn as agreeing ("match"), else "mismatch"
AGREE = 1.25


def ratio_figure(rows: Sequence, *, title: str | None = None):
    """One dot per measured experiment (``labsim.peers.calibration.Row``): measured ÷ labsim on a log axis,
    with a line at 1. Dots within ×/÷ :data:`AGREE` of 1 are coloured as agreeing. Raises if nothing in
    ``rows`` was measured (an empty axis says nothing)."""
    import plotly.graph_objects as go

    measured = [r for r in rows if r.ratio is not None]
    if not measured:
        raise ArgumentError("ratio_figure: no row has a measurement; show the table of predictions instead")
    labels = [f"{r.group}: {r.experiment}" for r in measured]
    ratios = [r.ratio for r in measured]
    agree = [1 / AGREE <= q <= AGREE for q in ratios]
    fig = go.Figure()
    for ok, name in ((True, f"within ×{AGREE:g} of labsim"), (False, f"off by more than ×{AGREE:g}")):
        idx = [i for i, a in enumerate(agree) if a == ok]
        fig.add_trace(go.Scatter(
            x=[ratios[i] for i in idx], y=[labels[i] for i in idx], mode="markers", name=name,
            marker=dict(size=9, color=ROLE["match" if ok else "mismatch"], line=dict(width=1, color=NEUTRAL[0])),
            hovertemplate="%{y}<br>measured ÷ labsim = %{x:.2f}<extra></extra>"))
    span = max(2.0, *(max(q, 1 / q) for q in ratios))
    lo, hi = math.log10(1 / span) - 0.1, math.log10(span) + 0.1
    fig.add_shape(type="line", x0=1, x1=1, yref="paper", y0=0, y1=1, line=dict(color=NEUTRAL[0], width=1))
    fig.update_xaxes(type="log", range=[lo, hi], title="measured ÷ labsim")
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], automargin=True)
    fig = style(fig, title=title, height=160 + 18 * len(labels))
    # the labels need about 7 px a character at the book's font; narrower pages scroll the figure sideways
    fig.update_layout(showlegend=True, meta={"min_width": 260 + 7 * max(map(len, labels))})
    return fig


__all__ = ["AGREE", "ratio_figure"]
