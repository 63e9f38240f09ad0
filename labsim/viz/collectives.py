"""Drawings of collectives (chapter 12): a ring AllReduce step by step (read from ``ring_schedule``), the
time of a collective against the device count on each chip's real topology (``topology_curves``,
``cost_figure``), FSDP's memory step by step (``fsdp_figure``) and compute against communication for
each kind of parallelism (``parallelism_figure``).

Each device is a node on a circle with its ``n`` chunks in a row beside it. A chunk's colour says how
many devices' contributions it holds: only the device's own ("data", yellow), a partial sum ("vector",
sky blue: elementwise additions) or the complete sum ("match", bluish green). The sends of the step are
orange arrows with a large head at the receiver ("memory": bytes moving), and the chunks that just received
one wear a thick dark frame; the other ring links are light grey ("idle").
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import math

import plotly.graph_objects as go

from ..hardware import PRESETS
from ..hardware.systems import NODES, SYSTEMS
from ..machines import collectives as col
from ..machines import parallelism as par
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
        raise ArgumentError(f"a ring drawing needs at least 2 devices, got {n}")
    if op not in ("all_reduce", "reduce_scatter"):
        raise ArgumentError(f"ring_frames draws 'all_reduce' or 'reduce_scatter', got {op!r}")
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
        # each send ends in a large arrowhead at the receiver (an annotation arrow: the print face draws it too)
        arrows = [dict(x=ax[3 * j + 1], y=ay[3 * j + 1], ax=ax[3 * j], ay=ay[3 * j], xref="x", yref="y", axref="x",
                       ayref="y", text="", showarrow=True, arrowhead=2, arrowsize=1.5 if n <= 4 else 1.3,
                       arrowwidth=3 if n <= 4 else 2,
                       arrowcolor=ROLE["memory"], standoff=0) for j in range(len(sends))]
        # the chunks that just received a send: a thick dark frame round each (what moved in this step)
        received = {(dst, c) for _, dst, c in sends}
        rx, ry = [], []
        data.append(dict(type="scatter", x=tx or [None], y=ty or [None], mode="text", text=tt or [""],
                         textfont=dict(size=10), hoverinfo="skip", showlegend=False))
        groups = {"own data": ([], [], []), "partial sum": ([], [], []), "complete sum": ([], [], [])}
        for i in range(n):
            x, y = pos[i]
            # row of chunks beyond the node, clear of it sideways too and on a phone (where the 44 px node
            # is about 0.3 units wide)
            d = 0.5 + abs(x) * (n * w / 2)
            for c in range(n):
                cx = x * (1 + d) + (c - (n - 1) / 2) * w
                cy = y * (1 + d)
                key = "own data" if count[i][c] == 1 else ("complete sum" if count[i][c] == n else "partial sum")
                g = groups[key]
                g[0].append(cx)
                g[1].append(cy)
                g[2].append(f"device {i}, chunk {c}: {count[i][c]} of {n} devices' values")
                if (i, c) in received:
                    rx.append(cx)
                    ry.append(cy)
        for key, role in (("own data", "data"), ("partial sum", "vector"), ("complete sum", "match")):
            xs, ys, hs = groups[key]
            data.append(dict(type="scatter", x=xs or [None], y=ys or [None], mode="markers", name=key,
                             marker=dict(symbol="square", size=16 if n <= 4 else 11, color=ROLE[role],
                                         line=dict(color="#555555", width=1)),
                             hovertext=hs or [""], hoverinfo="text"))
        data.append(dict(type="scatter", x=rx or [None], y=ry or [None], mode="markers", name="just received",
                         hoverinfo="skip", showlegend=True,
                         marker=dict(symbol="square-open", size=(16 if n <= 4 else 11) + 7, color="#111111",
                                     line=dict(color="#111111", width=3))))
        data.append(dict(type="scatter", x=[p[0] for p in pos], y=[p[1] for p in pos], mode="markers+text",
                         text=[f"GPU {i}" for i in range(n)], textposition="middle center",
                         marker=dict(size=44, color="white", line=dict(color=ROLE["host"], width=2)),
                         textfont=dict(size=11), hoverinfo="skip", showlegend=False))
        frames.append(go.Figure({"data": data, "layout": dict(layout, annotations=arrows)},
                                _validate=False))  # go.Figure copies it
    return frames


DEVICES = (2, 4, 8, 16, 32, 64, 128, 256)
#: TPU v5e slice shapes (How to Scale Your Model, "How to Think About TPUs"): 2D, at most 16 × 16
V5E_SLICES = {2: (2,), 4: (2, 2), 8: (2, 4), 16: (4, 4), 32: (4, 8), 64: (8, 8), 128: (8, 16), 256: (16, 16)}


def topology_curves(chip: str, op: str, nbytes: float, latency: float = 0.0) -> dict:
    """Time (s) of ``op`` against the device count on ``chip``'s systems: name -> (devices, times, built).

    H100 SXM: one DGX H100 node (NVSwitch, up to 8 GPUs; AllReduce also with NVLS), then nodes of 8
    joined by the 400 Gb/s network (``collectives.node_time``), and, not built, one switch for all.
    TPU v5e: its slices (``V5E_SLICES``) with wraparound only on axes of 16, and, not built below
    16 × 16, a torus on every axis. ``built`` is False for the curves no real system has."""
    if chip == "H100 SXM":
        node = NODES["DGX H100"]
        link = node.preset.chip_link
        inside = [n for n in DEVICES if n <= node.size]
        out = {"one node: NVSwitch": (inside, [col.node_time(op, nbytes, n, latency=latency) for n in inside], True)}
        if op == "all_reduce":
            out["one node: NVSwitch adds (NVLS)"] = (
                inside, [col.node_time(op, nbytes, n, nvls=True, latency=latency) for n in inside], True)
        across = [n for n in DEVICES if n >= node.size]
        out["nodes of 8 joined by 400 Gb/s networking"] = (
            across, [col.node_time(op, nbytes, n, latency=latency) for n in across], True)
        out["one NVLink switch for all (no H100 system)"] = (
            list(DEVICES), [col.time(op, nbytes, n, link, "switch", latency=latency) for n in DEVICES], False)
        return out
    if chip == "TPU v5e":
        pod, link = SYSTEMS["TPU v5e pod"], PRESETS["TPU v5e"].chip_link
        built = [col.time(op, nbytes, None, link, "mesh", mesh=V5E_SLICES[n], wrap=pod.wrap(V5E_SLICES[n]),
                          latency=latency) for n in DEVICES]
        torus = [col.time(op, nbytes, None, link, "torus", mesh=V5E_SLICES[n], latency=latency) for n in DEVICES]
        return {"slice as built: mesh, wraparound only on axes of 16": (list(DEVICES), built, True),
                "torus on every axis (only 16 × 16 has it)": (list(DEVICES), torus, False)}
    raise ArgumentError(f"topology_curves draws 'H100 SXM' or 'TPU v5e', got chip={chip!r}")


_CURVE_STYLE = [("memory", "solid", "circle", 10), ("match", "dash", "diamond-open", 12),
                ("compute", "solid", "square", 8), ("host", "dot", "x-open", 10)]


def cost_figure(chip: str = "H100 SXM", op: str = "all_reduce", megabytes: float = 1024, latency_us: float = 0):
    """Log-log time of ``op`` on ``megabytes`` MB against the device count, one curve per system of
    :func:`topology_curves`; the curves no real system has are dotted grey."""
    curves = topology_curves(chip, op, megabytes * 1e6, latency_us * 1e-6)
    data = []
    for k, (name, (xs, ts, built)) in enumerate(curves.items()):
        role, dash, symbol, size = _CURVE_STYLE[k] if built else _CURVE_STYLE[3]
        data.append(go.Scatter(x=xs, y=[t * 1e3 for t in ts], mode="lines+markers", name=name,
                               line=dict(color=ROLE[role], dash=dash),
                               marker=dict(symbol=symbol, size=size, line=dict(width=1.5, color=ROLE[role]))))
    fig = go.Figure(data)
    fig.update_xaxes(type="log", title="devices", tickvals=list(DEVICES))
    fig.update_yaxes(type="log", title="time (ms)")
    return style(fig, title=f"{col.NAMES[op]} of {megabytes:,} MB on {chip}, α = {latency_us} µs per step (labsim)",
                 height=400)


def fsdp_figure(params: int, layers: int, devices: int, bytes_per_param: float = 2, activations: float = 0,
                title: str = ""):
    """Stacked bars of one device's bytes at each step of an FSDP forward and backward pass
    (``collectives.fsdp_timeline``), and a dashed line at the whole model's weights."""
    rows = col.fsdp_timeline(params, layers, devices, bytes_per_param, activations)
    x = [f"{'F' if r['phase'] == 'forward' else 'B'}{r['layer'] + 1}" for r in rows]
    parts = [("shard", "weight shard (kept)", ROLE["data"]), ("gathered", "gathered layers (running + next)",
                                                                ROLE["memory"]),
             ("grad_buffer", "gradient buffer (running layer)", ROLE["overhead"]),
             ("grad_shards", "gradient shards", ROLE["match"]), ("activations", "activations", ROLE["vector"])]
    data = [go.Bar(x=x, y=[r[k] / 1e9 for r in rows], name=nm, marker_color=c) for k, nm, c in parts]
    data.append(go.Scatter(x=x, y=[params * bytes_per_param / 1e9] * len(x), mode="lines",
                           name="all weights on one device (no FSDP)", line=dict(color=ROLE["mismatch"], dash="dash")))
    fig = go.Figure(data)
    fig.update_layout(barmode="stack", bargap=0.1)
    fig.update_xaxes(title="step: F = forward, B = backward, then the layer", tickangle=0,
                     tickvals=[x[0], x[layers // 2], x[layers + layers // 2], x[-1]])
    fig.update_yaxes(title="GB per device", rangemode="tozero")
    return style(fig, title=title or f"FSDP on {devices} devices (labsim)", height=400)


def parallelism_figure(steps: list, title: str = ""):
    """Per strategy (rows), two bars: compute (with the pipeline's bubble) and communication (the part
    hidden behind compute, then the exposed part that adds to the step), in ms per step."""
    names = [par.NAMES[s.strategy] for s in steps][::-1]
    st = steps[::-1]
    ms = 1e3

    def bar(vals, base, nm, role, group, pattern=""):
        return go.Bar(y=names, x=[v * ms for v in vals], base=[b * ms for b in base], name=nm, orientation="h",
                      offsetgroup=group, marker=dict(color=ROLE[role], pattern=dict(shape=pattern)))
    data = [bar([s.compute for s in st], [0] * len(st), "compute", "compute", "a"),
            bar([s.bubble for s in st], [s.compute for s in st], "pipeline bubble (idle)", "idle", "a"),
            bar([s.hidden for s in st], [0] * len(st), "communication hidden behind compute", "match", "b"),
            bar([s.exposed for s in st], [s.hidden for s in st], "communication exposed (adds to the step)",
                "mismatch", "b", "/")]
    fig = go.Figure(data)
    fig.update_layout(barmode="group", bargap=0.25)
    fig.update_xaxes(title="ms per training step", rangemode="tozero")
    return style(fig, title=title, height=380)


__all__ = ["ring_frames", "ring_steps", "DEVICES", "V5E_SLICES", "topology_curves", "cost_figure", "fsdp_figure",
           "parallelism_figure"]
