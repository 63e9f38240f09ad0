"""Drawings of collectives (chapter 12): a ring AllReduce step by step, read from ``ring_schedule``.

Each device is a node on a circle with its ``n`` chunks in a row beside it. A chunk's colour says how
many devices' contributions it holds: only the device's own ("data", yellow), a partial sum ("vector",
sky blue: elementwise additions) or the complete sum ("match", bluish green). The sends of the step are
orange arrows ("memory": bytes moving); the other ring links are light grey ("idle").
"""
from __future__ import annotations

import copy
import math

import plotly.graph_objects as go

from ..machines import collectives as col
from .palette import ROLE
from .plots import style


def _states(op: str, n: int):
    """Contributions held per device and chunk, before the first step and after each one."""
    count = [[1] * n for _ in range(n)]
    out = [([row[:] for row in count], [])]
    sched = col.ring_schedule(op, n)
    for s, sends in enumerate(sched):
        reducing = op == "reduce_scatter" or (op == "all_reduce" and s < n - 1)
        new = [row[:] for row in count]
        for src, dst, c in sends:
            new[dst][c] = count[dst][c] + count[src][c] if reducing else count[src][c]
        count = new
        out.append(([row[:] for row in count], sends))
    return out


def ring_steps(op: str, n: int) -> list[str]:
    """Step names: "start", then "ReduceScatter 1", ..., "AllGather 1", ..."""
    names = ["start"]
    for s in range(len(col.ring_schedule(op, n))):
        phase = "ReduceScatter" if op == "reduce_scatter" or (op == "all_reduce" and s < n - 1) else "AllGather"
        names.append(f"{phase} {s + 1 if s < n - 1 else s - n + 2}")
    return names


def ring_frames(n: int = 4, op: str = "all_reduce") -> list:
    """One figure per step of a ring ``op`` on ``n`` devices (the first shows the start)."""
    if n < 2:
        raise ValueError(f"a ring drawing needs at least 2 devices, got {n}")
    if op not in ("all_reduce", "reduce_scatter"):
        raise ValueError(f"ring_frames draws 'all_reduce' or 'reduce_scatter', got {op!r}")
    pos = [(math.cos(math.pi / 2 - 2 * math.pi * i / n), math.sin(math.pi / 2 - 2 * math.pi * i / n))
           for i in range(n)]
    w = 0.16 if n <= 4 else 0.11
    cut = 0.18 if n <= 4 else 0.3  # arrows start and end clear of the nodes
    frames = []
    states = _states(op, n)
    # the layout is made (and validated) once; each step's figure is built from plain dicts without
    # Plotly's validation, about ten times faster (the animation widget builds up to 15 steps at once)
    base = go.Figure()
    base.update_xaxes(visible=False, range=[-2.3, 2.3])
    base.update_yaxes(visible=False, range=[-1.75, 1.75], scaleanchor="x")
    layout = style(base, height=440).to_plotly_json()["layout"]
    for k, (count, sends) in enumerate(states):
        data = []
        ex, ey = [], []
        for i in range(n):
            (x0, y0), (x1, y1) = pos[i], pos[(i + 1) % n]
            ex += [x0, x1, None]
            ey += [y0, y1, None]
        data.append(dict(type="scatter", x=ex, y=ey, mode="lines", line=dict(color=ROLE["idle"], width=6),
                         hoverinfo="skip", showlegend=False))
        ax, ay, tx, ty, tt = [], [], [], [], []
        for src, dst, c in sends:
            (x0, y0), (x1, y1) = pos[src], pos[dst]
            ax += [x0 + cut * (x1 - x0), x1 - cut * (x1 - x0), None]
            ay += [y0 + cut * (y1 - y0), y1 - cut * (y1 - y0), None]
            tx.append((x0 + x1) / 2 * 0.82)
            ty.append((y0 + y1) / 2 * 0.82)
            tt.append(f"chunk {c}")
        data.append(dict(type="scatter", x=ax or [None], y=ay or [None], mode="lines",
                         line=dict(color=ROLE["memory"], width=4), name="send (bytes on a link)", hoverinfo="skip",
                         showlegend=True))
        hx = [ax[3 * j + 1] for j in range(len(sends))]
        hy = [ay[3 * j + 1] for j in range(len(sends))]
        data.append(dict(type="scatter", x=hx or [None], y=hy or [None], mode="markers", hoverinfo="skip",
                         showlegend=False, marker=dict(symbol="circle", size=11, color=ROLE["memory"])))
        data.append(dict(type="scatter", x=tx or [None], y=ty or [None], mode="text", text=tt or [""],
                         textfont=dict(size=10), hoverinfo="skip", showlegend=False))
        groups = {"own data": ([], [], []), "partial sum": ([], [], []), "complete sum": ([], [], [])}
        for i in range(n):
            x, y = pos[i]
            d = 0.34 + abs(x) * (n * w / 2)  # row of chunks beyond the node, clear of it sideways too
            for c in range(n):
                cx = x * (1 + d) + (c - (n - 1) / 2) * w
                cy = y * (1 + d)
                key = "own data" if count[i][c] == 1 else ("complete sum" if count[i][c] == n else "partial sum")
                g = groups[key]
                g[0].append(cx)
                g[1].append(cy)
                g[2].append(f"device {i}, chunk {c}: {count[i][c]} of {n} devices' values")
        for key, role in (("own data", "data"), ("partial sum", "vector"), ("complete sum", "match")):
            xs, ys, hs = groups[key]
            data.append(dict(type="scatter", x=xs or [None], y=ys or [None], mode="markers", name=key,
                             marker=dict(symbol="square", size=16 if n <= 4 else 11, color=ROLE[role],
                                         line=dict(color="#555555", width=1)),
                             hovertext=hs or [""], hoverinfo="text"))
        data.append(dict(type="scatter", x=[p[0] for p in pos], y=[p[1] for p in pos], mode="markers+text",
                         text=[f"GPU {i}" for i in range(n)], textposition="middle center",
                         marker=dict(size=44, color="white", line=dict(color=ROLE["host"], width=2)),
                         textfont=dict(size=11), hoverinfo="skip", showlegend=False))
        frames.append(go.Figure({"data": data, "layout": copy.deepcopy(layout)}, _validate=False))
    return frames


__all__ = ["ring_frames", "ring_steps"]
