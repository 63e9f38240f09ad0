"""Animations of the SIMT machine's trace for the chapter *Warps* (chapter 8): the warp scheduler cycle by
cycle (:func:`schedule_frames`) and a divergent warp instruction by instruction (:func:`divergence_frames`).

Moved out of :mod:`labsim.viz.gpu` (which re-exports every name here); everything drawn comes from a
``KernelRun``'s trace (``ls.simt.run_ir(..., trace=True)``). Colours come from :data:`labsim.viz.palette.ROLE`.
"""
from __future__ import annotations

from ..support.text import plural
from .palette import ROLE, TINT
from .plots import style

# ---------------------------------------------------------------------------------------------------
# animations of the SIMT machine's trace (chapter 8)

#: a warp's state in one cycle, as the scheduler animation colours it
CELL_NAMES = ("", "issued (arithmetic)", "issued (load/store)", "ready, not picked; empty slot",
              "waiting for memory", "waiting (other)")
_BLANK, _ALU, _MEM, _READY, _WAIT_MEM, _WAIT = range(6)


def _cell_colors() -> list[str]:
    return ["#FFFFFF", ROLE["vector"], ROLE["memory"], ROLE["idle"], ROLE["overhead"], TINT["overhead"]]


def _discrete_scale(colors: list[str]) -> list:
    """A Plotly colorscale that maps the integers 0 .. len(colors) - 1 to ``colors`` exactly."""
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[round(i / n, 4), c], [round((i + 1) / n, 4), c]]
    return scale


def _trace_columns(trace) -> "np.ndarray":
    """The global warp ids of the columns of ``trace.state`` (the traced warps, in ascending order)."""
    import numpy as np

    ids = np.unique(trace.issue_warp)
    if len(ids) != trace.n_warps:
        raise ValueError("schedule_frames: some traced warp never issued, so the trace's columns cannot be "
                         "matched to warp ids; trace every warp (run_ir(..., trace=True))")
    return ids


def schedule_grid(run, *, sm: int | None = None, scheduler: int = 0):
    """The cells of the scheduler animation, from a :class:`~labsim.machines.simt.KernelRun`'s trace: an int8
    array ``[row, cycle]`` with one row per warp of ``scheduler`` on ``sm`` (warp order) and a last row for
    the scheduler's issue slot, coded by :data:`CELL_NAMES`; and the rows' labels."""
    import numpy as np
    from ..machines.simt import Stall

    tr = run.trace
    if tr is None:
        raise ValueError("schedule_grid: the run has no trace (run_ir(..., trace=False)); run it with a trace")
    sm = tr.sms[0] if sm is None else sm
    ids = _trace_columns(tr)
    cols = np.flatnonzero((tr.warp_sm == sm) & (tr.warp_scheduler == scheduler))
    if not len(cols):
        raise ValueError(f"schedule_grid: no warp ran on scheduler {scheduler} of SM {sm}")
    st = tr.state[:, cols].T  # [warp, cycle]
    grid = np.full((len(cols) + 1, tr.cycles), _BLANK, np.int8)
    grid[:-1][st == Stall.NOT_SELECTED] = _READY
    grid[:-1][st == Stall.MEMORY] = _WAIT_MEM
    for s in (Stall.DEPENDENCY, Stall.PIPE_BUSY, Stall.BARRIER):
        grid[:-1][st == s] = _WAIT
    grid[-1, :] = _READY  # an empty issue slot until an issue fills it
    row_of = {int(ids[c]): i for i, c in enumerate(cols)}
    mem_pc = np.array([u == "mem" for u in tr.pipes])
    for c, w, pc in zip(tr.issue_cycle, tr.issue_warp, tr.issue_pc):
        r = row_of.get(int(w))
        if r is None:
            continue
        code = _MEM if mem_pc[pc] else _ALU
        grid[r, c] = code
        grid[-1, c] = code
    labels = [f"warp {int(ids[c])}" for c in cols] + ["issue slot"]
    return grid, labels


def schedule_steps(cycles: int, steps: int) -> list[int]:
    """The cycle each frame of :func:`schedule_frames` plays up to: ``steps`` cuts spread evenly over the run
    (fewer if the run is shorter), the last at ``cycles``."""
    if cycles < 1 or steps < 1:
        raise ValueError(f"schedule_steps: cycles and steps must be at least 1, got {cycles} and {steps}")
    steps = min(steps, cycles)
    return [max(1, round(k * cycles / steps)) for k in range(1, steps + 1)]


def schedule_frames(run, *, steps: int = 24, sm: int | None = None, scheduler: int = 0, height: int = 320,
                    title: str | None = None) -> list:
    """The scheduler animation: one frame per step, each showing the cycles played so far. Rows are the
    warps of one warp scheduler and, at the bottom, its issue slot; each cell is what that warp did in that
    cycle (issued an arithmetic or memory instruction, was ready but not picked, waited for memory or for
    something else). An annotation above the grid gives the cycle and the issue slots used so far. The
    website opens on the last step, the whole run (``layout.meta["labsim_start"]``, see :func:`labsim.viz.animate`).
    Everything comes from ``run.trace`` (``ls.simt.run_ir``)."""
    import numpy as np
    import plotly.graph_objects as go

    grid, labels = schedule_grid(run, sm=sm, scheduler=scheduler)
    cycles = grid.shape[1]
    cuts = schedule_steps(cycles, steps)
    colors = _cell_colors()
    base = go.Figure(go.Heatmap(z=grid, x0=0, dx=1, y=labels, zmin=-0.5, zmax=len(colors) - 0.5,
                                colorscale=_discrete_scale(colors), showscale=False, xgap=0, ygap=2,
                                hoverinfo="skip"))
    for code in (_ALU, _MEM, _READY, _WAIT_MEM, _WAIT):
        base.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=CELL_NAMES[code],
                                  marker=dict(symbol="square", size=12, color=colors[code],
                                              line=dict(color="#555555", width=1))))  # pale colours need an edge
    base.update_yaxes(autorange="reversed", type="category", title=None)
    # no axis title: the annotation names the cycle, and an animation's play button sits below the axis
    base.update_xaxes(title=None, range=[-0.5, cycles - 0.5], showgrid=False)
    style(base, title=title, height=max(height, 180 + 26 * len(labels)))
    base.update_layout(margin=dict(t=56 if title is None else 86))
    # the website opens on the whole run (the first steps are nearly empty); play starts from the first cycle
    # and on a phone it keeps at least 560 px (about 3 px per cycle of a 130-cycle run), scrolling sideways
    base.update_layout(meta=dict(base.layout.meta or {}, labsim_start=len(cuts) - 1, min_width=560))
    base = base.to_plotly_json()
    frames = []
    for t in cuts:
        z = grid[:, :t]  # the cycles played so far (the x axis keeps the whole run)
        used = int((grid[-1, :t] != _READY).sum())
        note = dict(x=0, y=1.0, xref="paper", yref="paper", xanchor="left", yanchor="bottom", showarrow=False,
                    font=dict(size=12), text=f"cycle {t} of {cycles}<br>issue slots used: {used} of {t} ({used / t:.0%})")
        frames.append(_variant(base, z, annotations=[note]))
    return frames


def _variant(base, z, *, annotations=(), shapes=()):
    """A copy of ``base`` with the first trace's ``z`` replaced and the given annotations and shapes, built
    without Plotly's validation (``base`` was validated once; this is ~30x faster per frame)."""
    import plotly.graph_objects as go

    d = base if isinstance(base, dict) else base.to_plotly_json()
    d = {"data": [dict(d["data"][0], z=z), *d["data"][1:]],
         "layout": dict(d["layout"], annotations=list(annotations), shapes=list(shapes))}
    return go.Figure(d, _validate=False)


def divergence_grid(run, *, warp: int = 0):
    """The cells of the divergence animation: ``[issued instruction, lane]`` = 1 where the lane was active,
    0 where it was masked off, for the warp-instructions ``warp`` issued in order; with each row's
    instruction text and active-lane count. From ``run.trace`` (``ls.simt.run_ir``)."""
    import numpy as np

    tr = run.trace
    if tr is None:
        raise ValueError("divergence_grid: the run has no trace (run_ir(..., trace=False)); run it with a trace")
    sel = np.flatnonzero(tr.issue_warp == warp)
    if not len(sel):
        raise ValueError(f"divergence_grid: warp {warp} issued nothing in this trace")
    masks = tr.issue_mask[sel].astype(np.uint64)
    lanes = ((masks[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(np.int8)
    pcs = tr.issue_pc[sel]
    text = [tr.code[int(p)] for p in pcs]
    return lanes, text, lanes.sum(axis=1), pcs


_TYPES = {"f16", "bf16", "f32", "f64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b16", "b32", "b64",
          "pred"}


def _short(instr: str) -> str:
    """``mul.f32   %f2, %f2, 2.0;`` -> ``mul`` (the type suffix dropped, so the label fits a phone), with a
    guard or a branch target kept: ``@%p1 bra IF``, ``bra.uni JOIN``."""
    parts = instr.replace(";", "").split()
    if not parts:
        return instr
    if parts[0].startswith("@"):
        return " ".join(parts[:3])
    if parts[0].startswith("bra"):
        return " ".join(parts[:2])
    op = parts[0].split(".")
    while len(op) > 1 and op[-1] in _TYPES:
        op.pop()
    return ".".join(op)


def divergence_frames(run, *, warp: int = 0, paths: dict | None = None, condition=None,
                      condition_label: str = "x > 0", title: str | None = None, height: int | None = None) -> list:
    """The divergence animation: one frame per instruction that ``warp`` issued. Rows are the issued
    instructions in time order (a row per issue slot the warp used, numbered), columns its 32 lanes; a lane
    is "vector" where it was active and "idle" where the mask switched it off; rows not issued yet are
    blank; the current row is framed, and the lanes whose mask bit changed since the warp's previous
    instruction (just masked off, or back on) have a thick dark frame. ``condition`` (32 booleans, e.g. ``x[:32] > 0``) adds a first row that marks, in the "data"
    colour, the lanes whose data make the branch go one way. ``paths`` (``{"if": (start, end), "else":
    ...}`` pc ranges, as ``ls.simt.divergent_kernel`` reports them) names the path of each row. The
    annotation gives the instruction, its mask, and the lane utilisation so far. No legend: the caption
    names the colours."""
    import numpy as np
    import plotly.graph_objects as go

    lanes, text, active, pcs = divergence_grid(run, warp=warp)
    n = len(text)
    where = {}
    for name, (a, b) in (paths or {}).items():
        for pc in range(a, b):
            where[pc] = name
    # numbered, so that repeated instructions stay separate rows of the category axis
    labels = [f"{i + 1} {_short(t)}" + (f" ({where[int(p)]})" if int(p) in where else "")
              for i, (t, p) in enumerate(zip(text, pcs))]
    top = 0
    head = None
    if condition is not None:
        cond = np.asarray(condition, bool).ravel()
        if cond.size != 32:
            raise ValueError(f"divergence_frames: condition needs one value per lane (32), got {cond.size}")
        head = np.where(cond, 3, 0).astype(np.int8)
        labels = [condition_label] + labels
        top = 1
    colors = ["#FFFFFF", ROLE["idle"], ROLE["vector"], ROLE["data"]]  # not issued, masked off, active, condition
    masks = run.trace.issue_mask[run.trace.issue_warp == warp]
    base = go.Figure(go.Heatmap(z=np.zeros((n + top, 32), np.int8), x0=0, dx=1, y=labels, zmin=-0.5, zmax=3.5,
                                xgap=1, ygap=1, colorscale=_discrete_scale(colors), showscale=False, hoverinfo="skip"))
    base.update_yaxes(autorange="reversed", type="category", title=None, tickfont=dict(family="monospace", size=11),
                      showgrid=False, zeroline=False)
    base.update_xaxes(title=None, range=[-0.5, 31.5], tickvals=[0, 8, 16, 24, 31], showgrid=False)
    style(base, title=title, height=height or 200 + 19 * (n + top))
    base.update_layout(margin=dict(t=90 if title is None else 120))  # room for the 4-line note
    base = base.to_plotly_json()
    frames = []
    for k in range(n):
        z = np.zeros((n + top, 32), np.int8)
        if head is not None:
            z[0] = head
        z[top:top + k + 1] = lanes[:k + 1] + 1  # the rows issued so far; the rest blank
        used = active[:k + 1]
        rec = k > 0 and active[k] > active[k - 1] and active[k] == active.max()
        # the lanes whose mask bit changed since the warp's last instruction: a thick dark frame round each run
        changed = lanes[k] != lanes[k - 1] if k > 0 else np.zeros(32, bool)
        runs, a = [], None
        for lane in range(33):
            if lane < 32 and changed[lane]:
                a = lane if a is None else a
            elif a is not None:
                runs.append((a, lane - 1))
                a = None
        off = int((changed & (lanes[k] == 0)).sum())
        on = int((changed & (lanes[k] == 1)).sum())
        moved = [f"{off} just masked off"] if off else []
        moved += [f"{on} back on"] if on else []
        # four short lines (at most about 30 characters each), the same count on every step, ending at the
        # plot's right edge: from the plot's left edge (right of the wide row labels) a phone cut them off
        changes = ", ".join(moved + (["reconverged"] if rec else [])) or "no lane changed"
        note = (f"step {k + 1}: <b>{_short(text[k])}</b>"
                + f"<br>mask 0x{int(masks[k]):08X}: {plural(int(active[k]), 'lane')}"
                + f"<br>{changes}"
                + f"<br>lane utilisation so far {used.sum() / (32 * (k + 1)):.0%}")
        frames.append(_variant(
            base, z,
            annotations=[dict(x=1, y=1.0, xref="paper", yref="paper", xanchor="right", yanchor="bottom",
                              showarrow=False, font=dict(size=12), text=note, align="left")],
            shapes=[dict(type="rect", x0=-0.5, x1=31.5, y0=top + k - 0.5, y1=top + k + 0.5, xref="x", yref="y",
                         line=dict(color="#666666", width=1.5))]
            + [dict(type="rect", x0=a - 0.5, x1=b + 0.5, y0=top + k - 0.5, y1=top + k + 0.5, xref="x", yref="y",
                    line=dict(color="#111111", width=3)) for a, b in runs]))
    return frames
