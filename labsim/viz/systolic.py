"""The systolic array, animated: one Plotly frame per cycle of ``ls.systolic.simulate``.

``systolic_frames(A, B, rows=R, cols=C, dataflow="ws")`` returns a list of Plotly figures (one per cycle,
the same traces in each) for :func:`labsim.viz.animate`; ``systolic_animation(...)`` wraps it with
controls. Every number drawn is read from the simulation's trace (``Result.trace``) or, for the values
still waiting at the edges, from the operands at the cycle the schedule gives them.

What a frame shows:

* the R×C grid of processing elements (PEs). A PE's fill says what it does this cycle: a multiply-add
  (``compute`` tint), receiving its stationary value during the preload (``memory`` tint), nothing
  (``idle``). In each PE: the value moving east ("→a"), the value moving south ("↓b", or the partial sum
  "↓Σ" it passes down in ws/is) and, in bold, the value that stays (the running sum in os, the weight in
  ws, the input in is);
* the operands waiting at the edges, skewed: row i's next values to the left of the array (row i starts
  i cycles late), column j's above it (os; and the stationary rows during the ws/is preload), ``data``
  tint;
* the output matrix C to the right: each value appears when the array writes it (``memory`` tint; the
  cells written this very cycle in the full colour). In ws/is with several K-folds, a cell first shows a
  partial sum and grows as later folds add to it;
* a status line: cycle, fold, phase (preload, fill, steady, drain) and what the fold covers.

Keep it small (the page must stay under 1 MB): arrays up to about 8×8, products up to about 8·8·8, at
most ``max_steps`` frames (longer runs are sampled evenly; the step label names the real cycle).
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import copy
import functools

import numpy as np

from ..machines import systolic as _sy
from .palette import ROLE, TINT

# fill categories of the cell map -> colour (a discrete colour scale over 0..5)
_CATS = [("none", "rgba(0,0,0,0)"), ("idle", TINT["idle"]), ("mac", TINT["compute"]),
         ("load", TINT["memory"]), ("queued", TINT["data"]), ("written", TINT["memory"]),
         ("written now", ROLE["memory"])]
_CODE = {name: i for i, (name, _) in enumerate(_CATS)}


def _scale():
    n = len(_CATS)
    out = []
    for i, (_, c) in enumerate(_CATS):
        out += [[i / n, c], [(i + 1) / n, c]]
    return out


def _fmt(v) -> str:
    """A cell's number: integers as such, others to 3 significant digits, a real minus sign; "" for
    an empty register (NaN)."""
    if v is None or not np.isfinite(v):
        return ""
    return _fmt_number(float(v))


@functools.lru_cache(maxsize=4096)
def _fmt_number(v: float) -> str:
    txt = f"{int(v)}" if v.is_integer() else f"{v:.3g}"
    return txt.replace("-", "−")


def shown_cycles(n_cycles: int, max_steps: int = 60) -> list[int]:
    """The cycles an animation of ``n_cycles`` shows: all of them, or ``max_steps`` evenly spaced
    (always the first and the last)."""
    if n_cycles <= max_steps:
        return list(range(n_cycles))
    return sorted({int(round(x)) for x in np.linspace(0, n_cycles - 1, max_steps)})


def _operands(df, A, B):
    """(X, W): the operand streamed east (rows = stream index, cols = k) and the stationary one."""
    if df is _sy.Dataflow.OS:
        return A, B
    if df is _sy.Dataflow.WS:
        return A, B
    return B.T, A.T


def systolic_frames(A, B, *, rows: int, cols: int, dataflow="ws", max_steps: int = 60, queue: int = 3,
                    title: str | None = None, result=None) -> list:
    """One Plotly figure per cycle of ``A @ B`` on an R×C array (see the module docstring).

    ``queue``: how many waiting values to show at each edge. ``result``: a ``simulate(..., trace=True)``
    result to draw (otherwise it is simulated here)."""
    import plotly.graph_objects as go

    df = _sy.Dataflow.parse(dataflow)
    A = np.asarray(A)
    B = np.asarray(B)
    r = result if result is not None else _sy.simulate(A, B, rows=rows, cols=cols, dataflow=df, trace=True)
    if r.trace is None:
        raise ArgumentError(f"the run has no trace ({r.cycles:,} cycles on {rows}×{cols} PEs): animate a smaller "
                         f"product or array")
    tr = r.trace
    R, C = r.rows, r.cols
    M, K = A.shape
    N = B.shape[1]
    Q = max(0, int(queue))
    per_fold = r.cycles // r.folds
    pre = 0 if df is _sy.Dataflow.OS else R
    X, W = _operands(df, A, B)
    T = X.shape[0] if df is not _sy.Dataflow.OS else K

    # grid: x = -Q..C-1 (left queue, PEs), a gap, then the output's N columns; y = -Q..max(R, M)-1
    gap = 1
    xs = np.arange(-Q, C + gap + N)
    ys = np.arange(-Q, max(R, M))
    out_x0 = C + gap
    written = np.full((M, N), np.nan)

    east_lbl = {"os": "A", "ws": "A", "is": "B"}[df.value]
    south_lbl = {"os": "B", "ws": "Σ", "is": "Σ"}[df.value]
    held_lbl = {"os": "Σ (running sum of C)", "ws": "the weight B[k, n]", "is": "the input A[m, k]"}[df.value]

    # PE text positions (fixed for every frame)
    pe_j, pe_i = np.meshgrid(np.arange(C), np.arange(R))
    pe_j, pe_i = pe_j.ravel(), pe_i.ravel()
    q_left = [(i, d) for i in range(R) for d in range(1, Q + 1)]
    q_top = [(j, d) for j in range(C) for d in range(1, Q + 1)]
    o_m, o_n = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    o_m, o_n = o_m.ravel(), o_n.ravel()
    ql_x, ql_y = np.array([-d for _, d in q_left], dtype=np.int64), np.array([i for i, _ in q_left], dtype=np.int64)
    qt_x, qt_y = np.array([j for j, _ in q_top], dtype=np.int64), np.array([-d for _, d in q_top], dtype=np.int64)

    writes = tr.writes
    frames = []
    cycles = shown_cycles(len(tr), max_steps)
    w_ptr = 0
    layout = None
    for t in cycles:
        cyc = tr[t]
        f = cyc.fold
        u = (t - f * per_fold) - pre                    # stream cycle of this fold (negative: preload)
        m0, n0, k0 = (int(v) for v in tr.fold_origin[f])
        # outputs written up to and including this cycle
        now = np.zeros((M, N), bool)
        while w_ptr < len(writes) and writes[w_ptr, 0] <= t:
            cw, mw, nw, vw = writes[w_ptr]
            mw, nw = int(mw), int(nw)
            written[mw, nw] = vw if np.isnan(written[mw, nw]) else written[mw, nw] + vw
            if cw == t:
                now[mw, nw] = True
            w_ptr += 1

        z = np.full((len(ys), len(xs)), np.nan)

        def cell(y, x, cat):
            z[y + Q, x + Q] = _CODE[cat]

        # PEs
        loading = (cyc.phase == "preload") & ~np.isnan(cyc.held)
        z[Q:Q + R, Q:Q + C] = np.where(cyc.mac, _CODE["mac"], np.where(loading, _CODE["load"], _CODE["idle"]))
        # queues: the values that enter in the next Q cycles
        left_txt, top_txt = [], []
        rows_used = min(R, (M - m0) if df is _sy.Dataflow.OS else (K - k0))
        for i, d in q_left:
            e = u + d - i                                # stream element entering row i at cycle u + d
            v = ""
            if i < rows_used and 0 <= e < T and u + d >= 0:
                v = _fmt(X[m0 + i, e] if df is _sy.Dataflow.OS else X[e, k0 + i])
                cell(i, -d, "queued")
            left_txt.append(v)
        for j, d in q_top:
            v = ""
            if df is _sy.Dataflow.OS:
                e = u + d - j
                if j < min(C, N - n0) and 0 <= e < K:
                    v = _fmt(B[e, n0 + j])
                    cell(-d, j, "queued")
            elif cyc.phase == "preload":
                p = u + R                                # preload cycle 0..R-1
                src = R - 1 - p - d                      # stationary row that enters d cycles from now
                c0 = n0 if df is _sy.Dataflow.WS else m0
                cols_used = min(C, W.shape[1] - c0)
                if 0 <= src < min(R, K - k0) and j < cols_used:
                    v = _fmt(W[k0 + src, c0 + j])
                    cell(-d, j, "queued")
            top_txt.append(v)
        # output matrix
        z[Q:Q + M, Q + out_x0:Q + out_x0 + N] = np.where(np.isnan(written), _CODE["idle"],
                                                         np.where(now, _CODE["written now"], _CODE["written"]))

        # three lines in every PE: what arrives from above, what moves east, what stays (bold)
        pe_txt = [f"{'↓' + s if s else ' '}<br>{'→' + e if e else ' '}<br><b>{h or ' '}</b>"
                  for s, e, h in zip(map(_fmt, cyc.south.ravel().tolist()), map(_fmt, cyc.east.ravel().tolist()),
                                     map(_fmt, cyc.held.ravel().tolist()))]
        out_txt = list(map(_fmt, written.ravel().tolist()))

        text = dict(mode="text", textfont=dict(size=10.5, color="#000000"), hoverinfo="skip", showlegend=False)
        # NumPy arrays throughout: a figure copies its data, and an array copies in one piece
        data = [dict(type="heatmap", x=xs, y=ys, z=z, zmin=-0.5, zmax=len(_CATS) - 0.5, colorscale=_scale(),
                     showscale=False, xgap=3, ygap=3, hoverinfo="skip"),
                dict(type="scatter", x=pe_j, y=pe_i, text=np.array(pe_txt), **text),
                dict(type="scatter", x=ql_x, y=ql_y, text=np.array(left_txt), **text),
                dict(type="scatter", x=qt_x, y=qt_y, text=np.array(top_txt), **text),
                dict(type="scatter", x=out_x0 + o_n, y=o_m, text=np.array(out_txt), **text)]
        if df is _sy.Dataflow.OS:
            cover = f"C[{m0}:{m0 + min(R, M - m0)}, {n0}:{n0 + min(C, N - n0)}]"
        elif df is _sy.Dataflow.WS:
            cover = f"B[{k0}:{k0 + min(R, K - k0)}, {n0}:{n0 + min(C, N - n0)}] stays"
        else:
            cover = f"A[{m0}:{m0 + min(C, M - m0)}, {k0}:{k0 + min(R, K - k0)}]ᵀ stays"
        status = (f"cycle {t + 1} of {r.cycles} · fold {f + 1} of {r.folds} ({cover}) · {cyc.phase} · "
                  f"{int(cyc.mac.sum())} of {R * C} PEs multiply-add")
        if layout is None:
            layout = _layout(go, title, Q, R, C, N, xs, ys, out_x0, df, east_lbl, south_lbl, held_lbl,
                             partial=df is not _sy.Dataflow.OS and K > R)
        lay = dict(layout)
        lay["annotations"] = [dict(x=0, y=1.0, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
                                   showarrow=False, text=status, font=dict(size=12))] + layout["annotations"]
        # the layout was validated once (_layout); each frame only swaps data and the status line
        fig = go.Figure(dict(data=data, layout=lay), _validate=False)
        frames.append(fig)
    return frames


def _layout(go, title, Q, R, C, N, xs, ys, out_x0, df, east_lbl, south_lbl, held_lbl, partial) -> dict:
    """The layout every frame shares (house style, fixed axes, edge labels), as a plain dict."""
    ann = [dict(x=-(Q + 1) / 2, y=-0.55, xref="x", yref="y", showarrow=False, yanchor="bottom",
                text=f"{east_lbl} →", font=dict(size=12)),
           dict(x=-0.6, y=-(Q + 1) / 2, xref="x", yref="y", showarrow=False, xanchor="right",
                text=(f"{south_lbl} ↓" if df is _sy.Dataflow.OS else f"preload {'B' if df is _sy.Dataflow.WS else 'Aᵀ'} ↓"),
                font=dict(size=12)),
           dict(x=out_x0 + (N - 1) / 2, y=-0.55, xref="x", yref="y", showarrow=False, yanchor="bottom",
                text="C = A·B (output buffer)", font=dict(size=12)),
           dict(x=0, y=-0.02, xref="paper", yref="paper", xanchor="left", yanchor="top", showarrow=False, align="left",
                text=f"in each PE: →{east_lbl} moving east, ↓{south_lbl} moving south, <b>bold</b>: {held_lbl}"
                     + (f"<br>C holds partial sums until the last of the ⌈K/{R}⌉ K-folds adds its part"
                        if partial else ""),
                font=dict(size=11))]
    lay = copy.deepcopy(_house())
    lay.update(height=48 * len(ys) + 110, annotations=ann,
               margin=dict(l=10, r=10, t=40 if not title else 80, b=56 if partial else 40))
    if title:
        lay["title"] = {**lay.get("title", {}), "text": title}
    axis = dict(showgrid=False, zeroline=False, showticklabels=False, showline=False, ticks="", fixedrange=True)
    lay["xaxis"] = {**lay.get("xaxis", {}), **axis, "range": [float(xs[0]) - 0.6, float(xs[-1]) + 0.6]}
    lay["yaxis"] = {**lay.get("yaxis", {}), **axis, "range": [float(ys[-1]) + 0.6, float(ys[0]) - 0.6]}
    return lay


@functools.lru_cache(maxsize=1)
def _house() -> dict:
    """The house style (``labsim.viz.style``) as a plain layout dict, made and validated once. The
    template's look (font, white paper) is written into the layout itself and the template left out:
    every frame is a full figure, and copying the template into each costs more than drawing the frame."""
    import plotly.graph_objects as go

    from .plots import style

    fig = go.Figure()
    style(fig)
    lay = fig.layout.to_plotly_json()
    tpl = lay.pop("template", {}).get("layout", {})
    for key in ("font", "paper_bgcolor", "plot_bgcolor", "hoverlabel", "title"):
        if key in tpl:
            lay[key] = {**tpl[key], **lay[key]} if isinstance(tpl[key], dict) and isinstance(lay.get(key), dict) \
                else lay.get(key, tpl[key])
    lay["template"] = {}
    return lay


def step_labels(A, B, *, rows: int, cols: int, dataflow="ws", max_steps: int = 60) -> list[str]:
    """The step names matching :func:`systolic_frames` ("7 of 14 · fill": the cycle, counted from 1)."""
    r = _sy.simulate(np.asarray(A), np.asarray(B), rows=rows, cols=cols, dataflow=dataflow, trace=True)
    return [f"{t + 1} of {r.cycles} · {r.trace.phase[t]}" for t in shown_cycles(r.cycles, max_steps)]


def example_operands(M: int, N: int, K: int, seed: int = 0):
    """Small integer matrices (−3…3, no zeros) whose products are easy to read in the cells."""
    rng = np.random.default_rng(seed)
    vals = np.array([-3, -2, -1, 1, 2, 3])
    return rng.choice(vals, (M, K)).astype(float), rng.choice(vals, (K, N)).astype(float)


def systolic_animation(controls=None, *, alt=None, max_steps: int = 60, seed: int = 0, **kwargs):
    """An animation (:func:`labsim.viz.animate`) of small integer matrices on a small array.

    ``controls`` maps any of ``rows``, ``cols``, ``dataflow``, ``M``, ``N``, ``K`` to the values offered
    (default: ``dataflow`` in ws/os/is on a 4×4 array, 4·4·4 matrices); the others keep their defaults.
    Other keyword arguments go to ``animate`` (``caption``, ``name``, ``frame_ms``)."""
    from .animate import animate

    base = dict(rows=4, cols=4, dataflow="ws", M=4, N=4, K=4)
    controls = dict(controls or {"dataflow": ["ws", "os", "is"]})
    unknown = set(controls) - set(base)
    if unknown:
        raise ArgumentError(f"systolic_animation: unknown controls {sorted(unknown)}; use {sorted(base)}")

    def params(p):
        q = {**base, **p}
        A, B = example_operands(q["M"], q["N"], q["K"], seed)
        return A, B, q

    def make(**p):
        A, B, q = params(p)
        return systolic_frames(A, B, rows=q["rows"], cols=q["cols"], dataflow=q["dataflow"], max_steps=max_steps)

    def labels(**p):
        A, B, q = params(p)
        return step_labels(A, B, rows=q["rows"], cols=q["cols"], dataflow=q["dataflow"], max_steps=max_steps)

    def alt_text(**p):
        q = {**base, **p}
        return alt or (f"A {q['rows']}×{q['cols']} systolic array computing a {q['M']}×{q['K']} by {q['K']}×{q['N']} "
                       f"matrix product, {q['dataflow']} dataflow, cycle by cycle: operands enter skewed from the "
                       f"edges, partial sums accumulate in the processing elements and results drain to the "
                       f"output buffer.")

    return animate(make, controls, alt=alt_text, step_label="cycle", step_labels=labels, **kwargs)
