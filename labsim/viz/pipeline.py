"""Pipeline parallelism's schedule (chapter 12): one row per stage, forward and backward passes of each
micro-batch as bars, read from :func:`labsim.machines.parallel_roofline.gpipe`. The gaps are the bubble.
Both passes are compute, so both have the compute colour: forward passes filled, backward passes in the
compute tint with a blue outline and a hatch (told apart without colour); each bar names its micro-batch.
"""
from __future__ import annotations

import plotly.graph_objects as go

from ..machines import parallel_roofline as pr
from .palette import ROLE, TINT
from .plots import style


def gpipe_figure(stages: int, microbatches: int, forward: float = 1.0, backward: float = 2.0,
                 title: str | None = None):
    """GPipe's schedule for ``stages`` and ``microbatches`` (errors as :func:`parallel_roofline.gpipe`);
    time in units of one stage's forward pass on one micro-batch."""
    tr = pr.gpipe(stages, microbatches, forward, backward)
    rows = [f"stage {s + 1}" for s in range(stages)]
    data = []
    looks = {"F": dict(color=ROLE["compute"], line=dict(color="white", width=1)),
             "B": dict(color=TINT["compute"], line=dict(color=ROLE["compute"], width=1),
                       pattern=dict(shape="/", fgcolor=ROLE["compute"], fgopacity=0.25))}
    for first, nm in (("F", "forward pass"), ("B", "backward pass")):
        ev = [e for e in tr.events if e.name.startswith(first)]
        data.append(go.Bar(y=[rows[e.unit.chip] for e in ev], x=[(e.end - e.start) / forward for e in ev],
                           base=[e.start / forward for e in ev], orientation="h", name=nm,
                           text=[e.name for e in ev] if microbatches <= 8 else None, textposition="inside",
                           insidetextanchor="middle", marker=looks[first],
                           textfont=dict(color="white" if first == "F" else "#000000")))
    fig = go.Figure(data)
    fig.update_yaxes(categoryorder="array", categoryarray=rows[::-1])
    fig.update_xaxes(title="time (one stage's forward pass on one micro-batch = 1)", rangemode="tozero")
    fig.update_layout(barmode="overlay", bargap=0.3)
    return style(fig, title=title or f"GPipe: {stages} stages, {microbatches} micro-batches (labsim)",
                 height=140 + 40 * stages)


__all__ = ["gpipe_figure"]
