"""Figures of "Inside a TPU" and "Tiling": the TensorCore, the systolic array cycle by cycle, a TPU dot's
static schedule, and the GPU tile explorer and tuner landscape. Each reads a machine's result and draws
it; none computes anything the machines do not.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import math

import numpy as np

from ..hardware import get
from ..machines import systolic as _systolic
from ..machines import tiling as _tiling
from ..machines import tpu as _tpu
from .palette import NEUTRAL, ROLE, TINT
from .plots import style
from ..support.text import plural


def _fmt_bytes(b: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.0f} {unit}"
    return f"{b:.0f} B"


# --------------------------------------------------------------------------------------------------
# The TensorCore

def tensorcore(chip="TPU v5e", *, title: str | None = None):
    """The anatomy of one TPU chip: HBM below, the TensorCore above it (VMEM feeding the MXUs and the
    VPU), ICI links at the side; every number from the chip's preset (a part the preset does not
    record says so)."""
    import plotly.graph_objects as go

    core = _tpu.TensorCore.of(chip)
    c = core.chip
    r, cc = core.mxu
    fig = go.Figure()
    boxes = []  # (x0, y0, x1, y1, role, text)
    boxes.append((0, 0, 10, 2, "memory", f"<b>HBM</b> ({c.memory_name}): {c.hbm_capacity / 2**30:.0f} GiB, "
                                         f"{c.hbm_bandwidth / 1e9:,.0f} GB/s"))
    vm = _fmt_bytes(core.vmem) if core.vmem else "size not recorded"
    boxes.append((0.5, 3, 9.5, 4.6, "memory", f"<b>VMEM</b> (on-chip scratchpad): {vm}"))
    n = core.mxus or 2
    w = 6.2 / n
    peak = c.matrix_flops.get("bfloat16", 0)
    for i in range(n):
        x0 = 0.5 + i * w
        boxes.append((x0 + 0.1, 5.2, x0 + w - 0.1, 8.2, "compute", "<b>MXU</b>"))
    boxes.append((7.0, 5.2, 9.5, 8.2, "vector", "<b>VPU</b><br>vector"))
    for x0, y0, x1, y1, role, text in boxes:
        fig.add_shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line=dict(color=ROLE[role], width=2),
                      fillcolor=TINT[role], layer="below")
        fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=text, showarrow=False, font=dict(size=12))
    fig.add_shape(type="rect", x0=0.2, y0=2.7, x1=9.8, y1=9.6, line=dict(color=NEUTRAL[1], width=1, dash="dot"))
    mx = f"{core.mxus} MXUs of {r}×{cc}" if core.mxus else f"MXUs of {r}×{cc} (count not recorded)"
    fig.add_annotation(x=0.3, y=9.05, xanchor="left", showarrow=False, font=dict(size=12),
                       text=f"<b>TensorCore</b>: {mx}<br>{peak / 1e12:,.0f} TFLOP/s bf16 in all")
    # arrows: HBM -> VMEM (DMA) and VMEM -> units
    for x, y0, y1 in ((5, 2, 3), (2.5, 4.6, 5.2), (8.2, 4.6, 5.2)):
        fig.add_annotation(x=x, y=y1, ax=x, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                           showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=ROLE["memory"])
    fig.add_annotation(x=5.2, y=2.5, xanchor="left", showarrow=False, font=dict(size=11),
                       text="DMA (compiler-scheduled)")
    if c.chip_link is not None:
        fig.add_annotation(x=10.6, y=5.5, showarrow=False, textangle=-90, font=dict(size=11),
                           text=f"ICI: {c.chip_link.bandwidth / 1e9:.0f} GB/s one way per link")
    # one invisible point per box carries its description as hover text (and gives the figure a trace)
    fig.add_trace(go.Scatter(x=[(b[0] + b[2]) / 2 for b in boxes], y=[(b[1] + b[3]) / 2 for b in boxes],
                             mode="markers", marker=dict(size=30, opacity=0), showlegend=False,
                             hovertext=[b[5].replace("<br>", " ") for b in boxes], hoverinfo="text"))
    fig.update_xaxes(visible=False, range=[-0.2, 11.2], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-0.3, 9.8], fixedrange=True)
    return style(fig, title=title or f"One {c.name} chip, as labsim's preset records it", height=420)


# --------------------------------------------------------------------------------------------------
# The systolic array, cycle by cycle

# --------------------------------------------------------------------------------------------------
# A TPU dot's static schedule

def schedule_chart(sched, *, most: int = 16, title: str | None = None):
    """A TPU schedule as a timeline: the DMA queue (copies into VMEM and back to HBM), the MXU and, where
    an epilogue runs, the VPU. ``sched`` is a ``DotSchedule`` (``ls.tpu.schedule_dot``: its first
    ``most`` steps are drawn) or any ``ls.Trace`` (``ls.tpu.run(...).trace``, drawn whole). Either way
    the figure is :func:`labsim.viz.timeline` of an ``ls.Trace``: the TPU schedule is one more trace."""
    from ..machines.events import Trace
    from ..machines.tpu_trace import schedule_trace
    from .plots import timeline

    trace = sched if isinstance(sched, Trace) else schedule_trace(sched, most=most)
    return timeline(trace, title=title, height=120 + 60 * len(trace.units))


# --------------------------------------------------------------------------------------------------
# GPU tiling

_TILE_BARS_BASE: dict = {}


def _tile_bars_base() -> dict:
    """The figure every tile plan fills in (built and styled once: Plotly's styling is the slow part)."""
    if not _TILE_BARS_BASE:
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=2, cols=1, row_heights=[0.72, 0.28], vertical_spacing=0.22)
        names = ["tensor cores", "HBM copies", "shared memory"]
        fig.add_trace(go.Bar(y=names, x=[0, 0, 0], orientation="h", textposition="auto",
                             hovertemplate="%{y}: %{x:.3g} µs<extra></extra>", showlegend=False), 1, 1)
        fig.add_trace(go.Bar(y=["shared memory per block"], x=[0], orientation="h", showlegend=False,
                             textposition="auto", hovertemplate="%{x:.0f} KiB<extra></extra>"), 2, 1)
        fig.add_trace(go.Scatter(x=[0], y=["shared memory per block"], mode="markers+text",
                                 marker=dict(symbol="line-ns", size=26, line=dict(width=3, color=NEUTRAL[0])),
                                 textposition="top left",  # ends at the line: never cut at the right edge
                                 hovertemplate="the chip's limit: %{x:.0f} KiB per block<extra></extra>",
                                 showlegend=False), 2, 1)
        fig.update_xaxes(title="time (µs)", rangemode="tozero", row=1, col=1)
        fig.update_xaxes(title="KiB", rangemode="tozero", row=2, col=1)
        fig.update_yaxes(categoryorder="array", categoryarray=names[::-1], row=1, col=1)
        style(fig, height=340)
        _TILE_BARS_BASE["fig"] = fig.to_dict()
    return _TILE_BARS_BASE["fig"]


def tile_bars(p: "_tiling.TilePlan", *, title: str | None = None, max_time: float | None = None,
              max_shared: float | None = None):
    """One tile plan: its three times (tensor cores, HBM copies, shared memory) as bars, the largest
    being the estimate (outlined), and below them the shared memory it needs against the chip's
    per-block limit (bluish green if it fits, vermillion if not). A tile that cannot run has no times;
    its HBM time is drawn grey for comparison."""
    import copy

    import plotly.graph_objects as go

    d = copy.deepcopy(_tile_bars_base())
    vals = [p.compute_time * 1e6, p.memory_time * 1e6, p.shared_time * 1e6] if p.fits else \
        [0.0, p.traffic / p.bandwidth * 1e6, 0.0]
    win = max(range(3), key=lambda i: vals[i]) if p.fits else -1
    bars, smem, limit = d["data"]
    bars.update(x=vals, text=[f"{v:,.0f} µs" if v else "" for v in vals],
                marker=dict(color=[ROLE["compute"], ROLE["memory"], ROLE["vector"]] if p.fits else [ROLE["idle"]] * 3,
                            line=dict(color=[NEUTRAL[0] if i == win else "rgba(0,0,0,0)" for i in range(3)], width=2)))
    fits = p.shared_bytes <= p.shared_limit
    smem.update(x=[p.shared_bytes / 1024], text=[f"{p.shared_bytes / 1024:.0f} KiB"],
                marker=dict(color=ROLE["match" if fits else "mismatch"]))
    limit.update(x=[p.shared_limit / 1024], text=[f"limit {p.shared_limit / 1024:.0f} KiB"])
    lay = d["layout"]
    if max_time:
        lay["xaxis"]["range"] = [0, max_time * 1e6]
    if max_shared:
        lay["xaxis2"]["range"] = [0, max_shared / 1024]
    if title:
        lay["title"] = {"text": title}
        lay["margin"]["t"] = 60
    return go.Figure(d, _validate=False)


def tile_landscape(result: "_tiling.TuneResult", *, rows: str = "bm", cols: str = "bn", title: str | None = None):
    """The tuner's landscape as a heat map over two tile dimensions (the best time for each pair over
    the rest of the space; grey where no tile fits), with the tile it chose marked."""
    import plotly.graph_objects as go

    rv, cv, z = result.grid(rows, cols)
    best = result.best.time
    zz = [[(v / best if math.isfinite(v) else None) for v in row] for row in z]
    # the number alone, at a readable size (µs in the axis note and the hover): "521 µs" in a cell of a
    # phone's heat map shrank to 9 px
    text = [[(f"{v * 1e6:,.0f}" if math.isfinite(v) else "no fit") for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        x=[str(c) for c in cv], y=[str(r) for r in rv], z=zz, text=text, texttemplate="%{text}",
        textfont=dict(size=11),
        colorscale=[[0, ROLE["match"]], [0.5, TINT["data"]], [1, ROLE["memory"]]], zmin=1,
        zmax=max(max(v for v in row if v is not None) for row in zz if any(v is not None for v in row)),
        colorbar=dict(title="× best", thickness=12), xgap=2, ygap=2,
        hovertemplate=f"{rows}=%{{y}}, {cols}=%{{x}}: %{{text}} µs<extra></extra>"))
    b = result.best.tile
    fig.add_trace(go.Scatter(x=[str(getattr(b, cols))], y=[str(getattr(b, rows))], mode="markers",
                             marker=dict(symbol="square-open", size=44, color=NEUTRAL[0], line=dict(width=3)),
                             name=f"chosen: {b}", hoverinfo="skip"))
    fig.update_xaxes(title=f"{cols.upper()} (cells: best time in µs)", type="category")
    fig.update_yaxes(title=rows.upper(), type="category")
    return style(fig, title=title, height=380)


__all__ = ["tensorcore", "systolic_frames", "systolic_animation", "schedule_chart", "tile_bars", "tile_landscape",
           "systolic_example"]


def fold_utilization(sides, sizes, *, rows: int = 8192, title: str | None = None):
    """Utilisation of weight-stationary arrays of each side in ``sides`` against the weight size K = N in
    ``sizes`` (``rows`` rows of A streamed), from ``ls.systolic.stats``: the saw teeth of the edge folds."""
    import plotly.graph_objects as go

    from .palette import series_style

    sides, sizes = list(sides), list(sizes)
    if not sides or not sizes:
        raise ArgumentError("fold_utilization: give at least one array side (sides) and one weight size (sizes)")
    fig = go.Figure()
    for i, side in enumerate(sides):
        util = [_systolic.stats(rows, n, n, rows=side, cols=side, dataflow="ws").utilization for n in sizes]
        fig.add_trace(go.Scatter(x=sizes, y=util, mode="lines", name=f"{side}×{side} array",
                                 line=series_style(i)))
    fig.update_xaxes(title=f"K = N (weights K × N, {rows:,} rows streamed)")
    fig.update_yaxes(title="utilisation", tickformat=".0%", range=[0, 1])
    return style(fig, title=title)


def scalesim_reference() -> list:
    """Every layer of the stored SCALE-Sim 3.0.0 runs (``crosscheck/refs/scalesim.json``) beside labsim's
    numbers for it, for the chapter's table: rows with ``.match`` (labsim agrees on every number, the two
    conventions of :mod:`labsim.machines.systolic` accounted for), ``.stats`` (labsim's
    ``ls.systolic.Stats``) and ``.scalesim`` (SCALE-Sim's report); see :mod:`labsim.peers.scalesim`."""
    from ..peers import scalesim

    return scalesim.rows()


from .tpu_systolic import (run_frames, systolic_animation, systolic_caption, systolic_example,  # noqa: E402,F401
                           systolic_frames, systolic_run)
