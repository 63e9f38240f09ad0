"""The systolic-array animation of "Inside a TPU" (chapter 9), drawn from a run of the reader's program:
``systolic_animation(f, *example_args)`` traces ``f``, compiles it, runs it with ``ls.tpu.run`` on a
small array (``array=(side, side)``, the chosen dataflow, ``record=True``) and animates the first MXU
block, cycle by cycle, from the per-cycle trace of ``ls.systolic`` that the run kept. Every control
change (array side, dataflow, matrix side) traces, compiles and runs again.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import inspect
import math

import numpy as np

from ..machines import systolic as _systolic
from .palette import ROLE, TINT
from .plots import style
from ..support.text import plural


def _txt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def systolic_example(rows: int, size: int, seed: int = 0):
    """Small integer matrices A (size × size) and B for the animation (integers keep the cells short)."""
    rng = np.random.default_rng(seed)
    return rng.integers(1, 4, (size, size)).astype(float), rng.integers(1, 4, (size, size)).astype(float)


_SYSTOLIC_BASES: dict = {}  # the styled empty figure of each array/matrix size, built once


def _systolic_legend(held_name, east_name, south_name) -> str:
    return (f"top: {held_name} (stays) · {east_name}→ moves east<br>{south_name}↓ moves south · "
            f"blue: a multiply-add<br>orange: waiting to enter · green: final value of C<br>dark frame: "
            f"entered or written this step")


def _systolic_base_dict(R, C, size) -> dict:
    key = (R, C, size)
    if key not in _SYSTOLIC_BASES:
        _SYSTOLIC_BASES[key] = _systolic_base(R, C, size).to_dict()
    return _SYSTOLIC_BASES[key]


def _systolic_base(R, C, size):
    """The frame every step of the animation copies: two panels, their axes and the legend line."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, column_widths=[0.58, 0.42], horizontal_spacing=0.08,
                        subplot_titles=("array", "output C"))
    fig.add_trace(go.Heatmap(z=[[0]], zmin=0, zmax=2, showscale=False, texttemplate="%{text}",
                             colorscale=[[0, TINT["idle"]], [0.25, TINT["idle"]], [0.25, TINT["data"]],
                                         [0.75, TINT["data"]], [0.75, TINT["compute"]], [1, TINT["compute"]]],
                             xgap=3, ygap=3, hoverinfo="skip", textfont=dict(size=12)), 1, 1)
    fig.add_trace(go.Scatter(x=[], y=[], mode="text", textfont=dict(color=ROLE["memory"], size=12),
                             hoverinfo="skip", showlegend=False), 1, 1)
    fig.add_trace(go.Heatmap(z=[[0]], zmin=0, zmax=2, showscale=False, texttemplate="%{text}",
                             colorscale=[[0, TINT["idle"]], [0.25, TINT["idle"]], [0.25, TINT["data"]],
                                         [0.75, TINT["data"]], [0.75, TINT["match"]], [1, TINT["match"]]],
                             xgap=2, ygap=2, hoverinfo="skip", textfont=dict(size=11)), 1, 2)
    fig.update_xaxes(range=[-2.6, C - 0.5], visible=False, fixedrange=True, row=1, col=1)
    fig.update_yaxes(range=[R - 0.5, -2.6], visible=False, fixedrange=True, row=1, col=1)
    fig.update_xaxes(range=[-0.5, size - 0.5], visible=False, fixedrange=True, row=1, col=2)
    fig.update_yaxes(range=[size - 0.5, -0.5], visible=False, fixedrange=True, row=1, col=2)
    style(fig, height=360)
    fig.update_annotations(font=dict(size=12))
    fig.add_annotation(x=0, y=-0.02, xref="paper", yref="paper", yanchor="top", xanchor="left", showarrow=False,
                       font=dict(size=11), align="left", text="")
    fig.update_layout(margin=dict(l=10, r=10, t=40, b=86), height=446)
    # every frame copies this figure: keep the house font and colours but drop the (large) template,
    # which this figure does not need (no visible axes, no legend), so a frame costs a few ms, not 15
    font = fig.layout.template.layout.font.to_plotly_json()
    fig.update_layout(template="none", font=font, paper_bgcolor="white", plot_bgcolor="white")
    return fig


def systolic_frames(rows: int = 3, dataflow: str = "ws", size: int | None = None, *, max_steps: int = 48,
                    seed: int = 0):
    """The frames of ``rows × rows`` PEs multiplying two ``size × size`` small integer matrices
    (:func:`systolic_example`) with ``dataflow``; see :func:`run_frames`. Returns ``(frames, cycles)``."""
    size = size or rows
    a, b = systolic_example(rows, size, seed)
    return run_frames(_systolic.simulate(a, b, rows=rows, cols=rows, dataflow=dataflow, trace=True),
                      max_steps=max_steps)


def _box(i, j, xref: str, yref: str) -> dict:
    """A thick dark frame round cell (row ``i``, column ``j``) of a panel: a value that moved this step."""
    return dict(type="rect", x0=j - 0.47, x1=j + 0.47, y0=i - 0.47, y1=i + 0.47, xref=xref, yref=yref,
                line=dict(color="#111111", width=2.5))


def run_frames(res: "_systolic.Result", *, max_steps: int = 48):
    """The frames of the systolic-array animation from one ``ls.systolic`` result with its per-cycle trace
    (``res.trace``). Each frame is one cycle (every few cycles when the run is longer than ``max_steps``):
    the PEs coloured by what they do (a multiply-add, holding a value, empty), the numbers in their
    registers, the values waiting at the west and north edges (skewed), and the output buffer filling
    in, green once a value equals the run's output. What moved in the step has a thick dark frame: the
    operands that entered at the west edge that cycle, and the output values written since the last step
    shown. Returns ``(frames, cycle numbers from 1)``."""
    import copy

    import plotly.graph_objects as go

    if res.trace is None:
        raise ArgumentError("run_frames: the systolic result has no per-cycle trace (simulate with trace=True, "
                         "or ls.tpu.run(..., record=True))")
    tr = res.trace
    df = tr.dataflow
    total = len(tr)
    stride = max(1, math.ceil(total / max_steps))
    cycles = list(range(0, total, stride))
    if cycles[-1] != total - 1:
        cycles.append(total - 1)
    final = np.asarray(res.output, dtype=np.float64)
    R, C = tr.rows, tr.cols
    size = max(final.shape)
    buf = np.zeros_like(final)
    written = np.zeros(final.shape, bool)
    writes = tr.writes
    held_name = {"ws": "weight B", "os": "sum C", "is": "input A"}[df.value]
    east_name = {"ws": "A", "os": "A", "is": "B"}[df.value]
    south_name = {"ws": "partial sum", "os": "B", "is": "partial sum"}[df.value]
    frames = []
    wi = 0
    base_dict = None
    seen = np.zeros(final.shape, bool)  # output values already written at the last step shown
    for t in cycles:
        while wi < len(writes) and writes[wi, 0] <= t:
            _, m, n, v = writes[wi]
            buf[int(m), int(n)] += v
            written[int(m), int(n)] = True
            wi += 1
        cyc = tr[t]
        state = np.where(cyc.mac, 2, np.where(~np.isnan(cyc.held) | ~np.isnan(cyc.east), 1, 0))
        text = []
        for i in range(R):
            row = []
            for j in range(C):
                parts = [_txt(cyc.held[i, j])]
                if not np.isnan(cyc.east[i, j]):
                    parts.append(f"{_txt(cyc.east[i, j])}→")
                if not np.isnan(cyc.south[i, j]):
                    parts.append(f"{_txt(cyc.south[i, j])}↓")
                row.append("<br>".join(p for p in parts if p))
            text.append(row)
        # the values waiting at the edges: the next two that will enter each row (west) and column (north)
        wx, wy, wt = [], [], []
        for d in (1, 2):
            for i in range(R):
                v = tr.east[t + d, i, 0] if t + d < total else math.nan
                wx.append(-d), wy.append(i), wt.append(_txt(v))
        for d in (1, 2):
            for j in range(C):
                moving = df is _systolic.Dataflow.OS or (t + d < total and tr.phase[t + d] == "preload")
                v = (tr.held if df is not _systolic.Dataflow.OS and moving else tr.south)[t + d, 0, j] \
                    if (t + d < total and moving) else math.nan
                wx.append(j), wy.append(-d), wt.append(_txt(v))
        title = f"cycle {t + 1} of {total}: {cyc.phase}"
        # what moved in this step, framed thick and dark: the operands that entered at the west edge this
        # cycle, and the output values written since the last step
        frames_ = [_box(i, 0, "x", "y") for i in range(R) if not np.isnan(cyc.east[i, 0])]
        frames_ += [_box(i, j, "x2", "y2") for i, j in zip(*np.nonzero(written & ~seen))]
        seen = written.copy()
        cstate = np.where(written & np.isclose(buf, final), 2, np.where(written, 1, 0))
        ctext = [[_txt(buf[i, j]) if written[i, j] else "" for j in range(final.shape[1])] for i in range(final.shape[0])]
        if base_dict is None:
            base_dict = _systolic_base_dict(R, C, size)
            legend = _systolic_legend(held_name, east_name, south_name)
        d = copy.deepcopy(base_dict)
        d["data"][0].update(z=state.tolist(), text=text)
        d["data"][1].update(x=wx, y=wy, text=wt)
        d["data"][2].update(z=cstate.tolist(), text=ctext)
        d["layout"]["annotations"][0]["text"] = title
        d["layout"]["shapes"] = frames_
        d["layout"]["annotations"][-1]["text"] = legend
        frames.append(go.Figure(d, _validate=False))
    return frames, [c + 1 for c in cycles]


_DATAFLOW_NAMES = {"ws": "weight-stationary", "os": "output-stationary", "is": "input-stationary"}


def _matmul(a, b):
    return a @ b


def _cut(x, n: int) -> np.ndarray:
    """The leading ``n`` entries of every axis of ``x``: the reader's example cut to an ``n``-sided problem."""
    x = np.asarray(x)
    return x[tuple(slice(0, n) for _ in range(x.ndim))]


def systolic_run(f, *example_args, array: int = 3, dataflow: str = "ws", matrix: int | None = None,
                 chip="TPU v5e"):
    """Trace ``f`` on ``example_args`` (cut to ``matrix`` entries along every axis), compile it, and run it
    with ``ls.tpu.run`` on a ``array × array`` systolic array with ``dataflow``, keeping each MXU block's
    per-cycle trace. Returns the :class:`~labsim.machines.tpu_run.TPURun`; its first block drives the
    animation. Raises ``ValueError`` when ``f`` has no matrix product."""
    from ..compiler.pipeline import compile as ls_compile
    from ..core.trace import trace as ls_trace
    from ..core.avals import ShapeDtype
    from ..machines import tpu as _tpu

    args = [np.asarray(a) for a in example_args]
    if matrix is not None:
        small = [a.shape for a in args if min(a.shape, default=matrix) < matrix]
        if small:
            raise ArgumentError(f"systolic_run: matrix={matrix} is larger than an example argument of shape "
                             f"{small[0]}; give examples at least as large as the largest matrix side")
        args = [_cut(a, matrix) for a in args]
    specs = [ShapeDtype(a.shape, "float32" if a.dtype.kind == "f" else str(a.dtype)) for a in args]
    prog = ls_compile(ls_trace(f, *specs))
    run = _tpu.run(prog, *args, chip=chip, array=(array, array), dataflow=dataflow, record=True)
    if not run.blocks:
        name = getattr(f, "__name__", "f")
        raise ArgumentError(f"systolic_run: {name} has no matrix product (dot, matmul, @), so nothing runs on the "
                         "systolic array")
    return run


def systolic_caption(array: int, dataflow: str, matrix: int, run=None) -> str:
    """The caption of the systolic-array animation for these controls, quoting what the machine ran: the
    array, the block's product, the dataflow, its cycles, folds and utilisation (from ``run``'s first
    block when given, else from ``ls.systolic.stats`` of two ``matrix``-sided square matrices)."""
    if run is not None:
        st = run.blocks[0].stats
        m, k, n = st.M, st.K, st.N
    else:
        m = k = n = matrix
        st = _systolic.stats(m, n, k, rows=array, cols=array, dataflow=dataflow)
    shapes = f"two {m}×{m} matrices" if m == k == n else f"a {m}×{k} by a {k}×{n} matrix"
    return (f"A {array}×{array} systolic array multiplies {shapes}, {_DATAFLOW_NAMES[dataflow]} "
            f"({dataflow}): {plural(st.cycles, 'cycle')} in {plural(st.folds, 'fold')}, the PEs busy "
            f"{st.utilization:.0%} of the time (labsim's ls.tpu.run of the program, its first MXU block "
            f"through ls.systolic; press play or step through the cycles)")


def systolic_animation(f=None, *example_args, sizes=(3, 4), dataflows=("ws", "os", "is"), matrix=(3, 5),
                       chip="TPU v5e", max_steps: int = 40, name: str | None = None, caption=systolic_caption):
    """The book's systolic-array animation, drawn from a run of ``f`` (an ``lnp`` function with a matrix
    product) on ``example_args``: controls for the array side (``sizes``), the dataflow and the matrix
    side (``matrix``: the examples cut to that many entries along every axis, so give examples at least
    ``max(matrix)`` on a side). Every control value traces, compiles and runs ``f`` again
    (:func:`systolic_run`) and animates its first MXU block, cycle by cycle. With no ``f``, a product
    ``a @ b`` of two small integer matrices. ``caption`` is a function of the controls (it may also take
    ``run=``, the run drawn); ``name`` makes the figure referable."""
    from .animate import animate

    if f is None:
        f, example_args = _matmul, systolic_example(max(sizes), max(matrix))
    if not callable(f):
        raise ArgumentTypeError(f"systolic_animation: f must be a function (traced with ls.trace), got {type(f).__name__}")
    if not example_args:
        raise ArgumentTypeError("systolic_animation: give example arguments for f (arrays it is traced and run on)")
    for side in sizes:  # the styled empty figures, built now rather than on the reader's first click
        for n in matrix:
            _systolic_base_dict(side, side, n)
    cache: dict = {}

    def run_of(array, dataflow, matrix):
        key = (array, dataflow, matrix)
        if key not in cache:
            r = systolic_run(f, *example_args, array=array, dataflow=dataflow, matrix=matrix, chip=chip)
            cache[key] = (r, run_frames(r.blocks[0].result, max_steps=max_steps))
        return cache[key]

    takes_run = "run" in inspect.signature(caption).parameters if caption is not None else False

    def cap(array, dataflow, matrix):
        if takes_run:
            return caption(array, dataflow, matrix, run=run_of(array, dataflow, matrix)[0])
        return caption(array=array, dataflow=dataflow, matrix=matrix)

    def alt(array, dataflow, matrix):
        st = run_of(array, dataflow, matrix)[0].blocks[0].stats
        return (f"A {array}×{array} systolic array computing the {st.M}×{st.K} by {st.K}×{st.N} product of the "
                f"program with the {_DATAFLOW_NAMES[dataflow]} dataflow: {plural(st.cycles, 'cycle')}, "
                f"{plural(st.folds, 'fold')}, utilisation {st.utilization:.0%}. Values enter skewed from the west "
                f"and north edges, partial sums move through the array, results fill the output buffer.")

    anim = animate(lambda array, dataflow, matrix: run_of(array, dataflow, matrix)[1][0],
                   {"array": list(sizes), "dataflow": list(dataflows), "matrix": list(matrix)},
                   defaults={"array": sizes[0], "dataflow": dataflows[0], "matrix": matrix[0]}, alt=alt,
                   step_labels=lambda array, dataflow, matrix: [str(c) for c in run_of(array, dataflow, matrix)[1][1]],
                   step_label="cycle", labels={"array": "array side", "dataflow": "dataflow", "matrix": "matrix side"},
                   frame_ms=700, caption=cap if caption is not None else None, name=name)
    # every combination is made now (the website needs them all anyway), so moving a control in
    # JupyterLab only looks frames up
    for side in sizes:
        for df in dataflows:
            for n in matrix:
                anim.frames_for(array=side, dataflow=df, matrix=n)
    return anim
