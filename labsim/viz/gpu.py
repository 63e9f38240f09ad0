"""Drawings of a GPU's insides for the chapters *Inside a GPU* and *Warps* (chapters 7 and 8).

Every number a drawing shows is read from the chip's preset (``ls.hardware.PRESETS``: the chip's
fields and its per-SM limits ``chip.sm``) or from a result of the SIMT machine (``ls.simt``); nothing
is typed here. Colours come from :data:`labsim.viz.palette.ROLE`, one meaning each.

- :func:`sm_diagram` — one streaming multiprocessor (SM) in the manner of NVIDIA's architecture
  diagrams: four sub-partitions, each with a warp scheduler, a dispatch unit, its slice of the register
  file, FP32 lanes, special-function units and a tensor core; shared memory / L1 below them; the L2
  and HBM outside the SM. :func:`sm_alt` describes it in words.
- :func:`occupancy_figure` — the blocks per SM that each resource allows, the binding one marked.
- :func:`waves_figure` — a grid's blocks placed on the SMs wave by wave (``simt.waves.place_blocks``), the tail
  wave marked. ``wave_counts`` is re-exported from :mod:`labsim.machines.simt.waves`.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import math
from typing import Any

from ..hardware import Chip, get as get_chip
from ..machines.simt.waves import Waves, place_blocks, wave_counts  # the SIMT machine's block placement
from ..support.text import plural
from .palette import NEUTRAL, ROLE, TINT
from .plots import style

_FONT = 11  # px: the size of labels inside boxes, chosen to fit a 390 px wide phone screen


def _gpu(chip: str | Chip) -> Chip:
    c = get_chip(chip)
    if c.sm is None:
        raise ArgumentError(f"{c.name} has no SM limits in its preset (chip.sm is None): only NVIDIA GPU presets "
                         f"describe SMs; this chip is a {c.kind.value}")
    return c


def _kib(nbytes: float) -> str:
    return f"{nbytes / 2**10:,.0f} KiB"


def sm_numbers(chip: str | Chip) -> dict[str, Any]:
    """The numbers :func:`sm_diagram` draws, each read from the preset (None where it has no sourced value).

    Per sub-partition: ``registers`` (32-bit registers) and ``register_bytes``, ``fp32_lanes``,
    ``sfu_lanes``, ``tensor_cores``. Per SM: ``sub_partitions``, ``shared_bytes`` (the largest shared-memory
    carve-out), ``max_warps``, ``max_blocks``. Per chip: ``sms`` (None when the count is not sourced),
    ``l2_bytes``, ``hbm_bytes``, ``hbm_bandwidth``, ``memory_name``."""
    c = _gpu(chip)
    sm = c.sm
    p = sm.sub_partitions
    return {
        "name": c.name, "arch": c.arch, "compute_capability": sm.compute_capability,
        "sub_partitions": p,
        "registers": sm.registers_per_sm // p, "register_bytes": sm.registers_per_sm * 4 // p,
        "fp32_lanes": sm.fp32_lanes // p, "sfu_lanes": sm.sfu_lanes // p, "tensor_cores": sm.tensor_cores // p,
        "shared_bytes": sm.shared_per_sm, "max_warps": sm.max_warps_per_sm, "max_blocks": sm.max_blocks_per_sm,
        "warp_size": sm.warp_size,
        "sms": c.compute_units if "compute_units" in c.sources else None,
        "l2_bytes": c.onchip.get("L2"), "hbm_bytes": c.hbm_capacity, "hbm_bandwidth": c.hbm_bandwidth,
        "memory_name": c.memory_name,
    }


class _Canvas:
    """Shapes and annotations collected as plain dicts and handed to Plotly once (``add_shape`` one by one
    validates the whole layout each time: seconds for a drawing of a few hundred shapes). Small unit
    squares (lanes) are not shapes: those of one role make one filled trace, drawn as one SVG path (a
    browser redraws a hundred shapes one by one: the live SM drawing's chip toggle spent most of its
    redraw on them)."""

    def __init__(self) -> None:
        self.shapes: list[dict] = []
        self.notes: list[dict] = []
        self.hover: list[tuple[float, float, str]] = []  # (x, y, text) of the parts, for a hover trace
        self.squares: dict[str, list[tuple[float, float, float, float]]] = {}  # role -> (x0, y0, x1, y1)

    def square(self, role: str, x0: float, y0: float, x1: float, y1: float) -> None:
        self.squares.setdefault(role, []).append((x0, y0, x1, y1))

    def shape(self, **kw) -> None:
        self.shapes.append(kw)

    def note(self, **kw) -> None:
        self.notes.append(kw)

    def figure(self):
        """The shapes and annotations as a Plotly figure, built without validating each one (they are
        written here, with known keys: validation costs ~0.1 s for an SM's few hundred shapes)."""
        import plotly.graph_objects as go
        data = []
        for role, sq in self.squares.items():  # each square a closed path, the paths apart by a gap (None)
            xs = [v for x0, _, x1, _ in sq for v in (x0, x1, x1, x0, x0, None)]
            ys = [v for _, y0, _, y1 in sq for v in (y0, y0, y1, y1, y0, None)]
            data.append({"type": "scatter", "x": xs, "y": ys, "mode": "lines", "fill": "toself",
                         "fillcolor": ROLE[role], "line": {"width": 0, "color": ROLE[role]}, "hoverinfo": "skip",
                         "showlegend": False})
        return go.Figure({"data": data, "layout": {"shapes": self.shapes, "annotations": self.notes}}, _validate=False)


def _box(fig, x0, y0, x1, y1, role: str | None, text: str = "", *, size: int = _FONT, fill: str | None = None,
         line_width: float = 1.0, bold: bool = False) -> None:
    fig.shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, xref="x", yref="y", layer="below",
                  line=dict(color=ROLE[role] if role else "#555555", width=line_width),
                  fillcolor=fill if fill is not None else (TINT[role] if role else "white"))
    if text:
        fig.note(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=f"<b>{text}</b>" if bold else text,
                           showarrow=False, font=dict(size=size, color="#222222"), xref="x", yref="y")


def _squares(fig, x0, y0, x1, y1, n: int, cols: int, role: str) -> None:
    """``n`` small unit squares in a grid of ``cols`` columns inside the box (x0, y0)-(x1, y1)."""
    rows = max(1, math.ceil(n / cols))
    w, h = (x1 - x0) / cols, (y1 - y0) / rows
    for i in range(n):
        r, k = divmod(i, cols)
        fig.square(role, x0 + k * w + 0.12 * w, y0 + r * h + 0.12 * h, x0 + (k + 1) * w - 0.12 * w,
                   y0 + (r + 1) * h - 0.12 * h)


def _partition(fig, x0: float, y0: float, w: float, h: float, n: dict, index: int) -> None:
    _box(fig, x0, y0, x0 + w, y0 + h, None, fill="#FFFFFF", line_width=1.2)
    fig.note(x=x0 + 1, y=y0 + 0.4, text=f"sub-partition {index}", showarrow=False, xanchor="left",
                       yanchor="top", font=dict(size=_FONT, color="#555555"), xref="x", yref="y")
    pad, row = 1.0, h / 9.5
    y = y0 + 1.6 * row
    _box(fig, x0 + pad, y, x0 + w - pad, y + row, "overhead", "Warp scheduler")
    y += 1.15 * row
    _box(fig, x0 + pad, y, x0 + w - pad, y + row, "overhead", "Dispatch unit")
    y += 1.15 * row
    _box(fig, x0 + pad, y, x0 + w - pad, y + row, "data", f"Registers {_kib(n['register_bytes'])}")
    fig.hover.append((x0 + w / 2, y + row / 2, f"register file: {n['registers']:,} 32-bit registers "
                                               f"({_kib(n['register_bytes'])}) in sub-partition {index}"))
    y += 1.3 * row
    # FP32 lanes on the left (a grid of small squares, as NVIDIA draws its cores), the tensor core right
    lanes_w = 0.6 * (w - 2 * pad)
    fig.note(x=x0 + pad, y=y, text=f"FP32 × {n['fp32_lanes']}", showarrow=False, xanchor="left",
                       yanchor="top", font=dict(size=_FONT, color="#222222"), xref="x", yref="y")
    lanes = n["fp32_lanes"]
    fig.hover.append((x0 + pad + lanes_w / 2, y + 2 * row, f"{lanes} FP32 lanes: one fused multiply-add each per clock"))
    fig.hover.append((x0 + w - pad - 0.2 * w, y + 1.5 * row, f"{plural(n['tensor_cores'], 'tensor core')}: a small matrix "
                                                            f"product per instruction"))
    cols = 8 if lanes <= 32 else 16
    _squares(fig, x0 + pad, y + 0.9 * row, x0 + pad + lanes_w, y + 3.0 * row, lanes, cols, "vector")
    tx0 = x0 + pad + lanes_w + 1.0
    tc = n["tensor_cores"]
    _box(fig, tx0, y, x0 + w - pad, y + 3.0 * row, "compute",
         "Tensor<br>core" if tc == 1 else f"Tensor<br>cores × {tc}", fill=ROLE["compute"])
    fig.notes[-1]["font"]["color"] = "white"
    y += 3.3 * row
    fig.note(x=x0 + pad, y=y + 0.5 * row, text=f"SFU × {n['sfu_lanes']}", showarrow=False,
                       xanchor="left", font=dict(size=_FONT, color="#222222"), xref="x", yref="y")
    _squares(fig, x0 + pad + 0.36 * w, y, x0 + pad + 0.36 * w + n["sfu_lanes"] * 0.07 * w, y + row, n["sfu_lanes"],
             n["sfu_lanes"], "vector")


def sm_diagram(chip: str | Chip = "H100 SXM", *, height: int = 620):
    """One SM of ``chip`` drawn as NVIDIA's architecture diagrams draw it, with the preset's numbers.

    Above: the SM's sub-partitions (a 2 x 2 grid for four), each with a warp scheduler and dispatch unit
    (reddish purple: they decide what runs), its quarter of the register file (yellow: operands), FP32
    lanes and special-function units (sky blue: elementwise work) and a tensor core (blue: matrix work).
    Below: the SM's shared memory / L1 and, outside the SM, the L2 cache and HBM (orange: memory)."""
    import plotly.graph_objects as go

    n = sm_numbers(chip)
    fig = _Canvas()
    W = 100.0
    p = n["sub_partitions"]
    cols = 2 if p > 1 else 1
    rows = math.ceil(p / cols)
    ph, gap = 44.0, 2.0
    top = 7.0
    sm_bottom = top + rows * (ph + gap) + 9.0
    _box(fig, 0.5, 1.0, W - 0.5, sm_bottom, None, fill="#FAFAFA", line_width=2)
    sms = f"one of {n['sms']:,} SMs" if n["sms"] else "SM count not in the preset"
    fig.note(x=1.5, y=1.6, text=f"<b>SM</b> ({sms})", showarrow=False, xanchor="left", yanchor="top",
                       font=dict(size=_FONT + 1, color="#222222"), xref="x", yref="y")
    pw = (W - 3.0 - (cols - 1) * gap) / cols
    for i in range(p):
        r, k = divmod(i, cols)
        _partition(fig, 1.5 + k * (pw + gap), top + r * (ph + gap), pw, ph, n, i)
    y = top + rows * (ph + gap)
    _box(fig, 1.5, y, W - 1.5, y + 7.0, "memory", f"Shared memory / L1 · up to {_kib(n['shared_bytes'])} shared")
    fig.hover.append((W / 2, y + 3.5, f"shared memory: up to {n['shared_bytes']:,} bytes per SM; "
                                      f"{n['max_warps']} warps and {n['max_blocks']} blocks resident at most"))
    # outside the SM
    y = sm_bottom + 4.0
    l2 = (f"L2 cache · {n['l2_bytes'] / 2**20:,.0f} MiB" if n["l2_bytes"] else "L2 cache (size not in the preset)")
    l2 += f" · shared by all {n['sms']:,} SMs" if n["sms"] else " · shared by all SMs"
    _box(fig, 0.5, y, W - 0.5, y + 7.0, "memory", l2)
    fig.hover.append((W / 2, y + 3.5, l2))
    fig.shape(type="line", x0=W / 2, x1=W / 2, y0=sm_bottom, y1=y, line=dict(color=ROLE["memory"], width=3))
    y2 = y + 11.0
    _box(fig, 0.5, y2, W - 0.5, y2 + 7.0, "memory",
         f"{n['memory_name']} · {n['hbm_bytes'] / 2**30:,.0f} GiB · {n['hbm_bandwidth'] / 1e12:,.2f} TB/s",
         fill=ROLE["memory"])
    fig.shape(type="line", x0=W / 2, x1=W / 2, y0=y + 7.0, y1=y2, line=dict(color=ROLE["memory"], width=3))
    fig.hover.append((W / 2, y2 + 3.5, f"{n['memory_name']}: {n['hbm_bytes']:,.0f} bytes at {n['hbm_bandwidth']:,.0f} B/s"))
    bottom = y2 + 8.0
    parts = fig.hover
    fig = fig.figure()
    # one invisible point per part, with its numbers as hover text: the figure's data (and what changes with the chip)
    fig.add_trace(go.Scatter(x=[p[0] for p in parts], y=[p[1] for p in parts], text=[p[2] for p in parts],
                             mode="markers", marker=dict(size=14, color="rgba(0,0,0,0)"), hoverinfo="text",
                             showlegend=False))
    fig.update_xaxes(visible=False, range=[0, W], fixedrange=True)
    fig.update_yaxes(visible=False, range=[bottom, 0], fixedrange=True)
    style(fig, title=f"Inside one SM<br><span style='font-size:12px'>{n['name']}<br>{n['arch']}, compute "
                     f"capability {n['compute_capability']}</span>", height=height)
    fig.update_layout(margin=dict(l=4, r=4, t=74, b=4), plot_bgcolor="white", showlegend=False)
    return fig


def sm_alt(chip: str | Chip = "H100 SXM") -> str:
    """What :func:`sm_diagram` shows, in words (its alt text)."""
    n = sm_numbers(chip)
    sms = f"one of {n['sms']:,} SMs" if n["sms"] else "one SM (the preset gives no SM count)"
    l2 = f"a {n['l2_bytes'] / 2**20:,.0f} MiB L2 cache" if n["l2_bytes"] else "the L2 cache (size not in the preset)"
    return (f"Block diagram of {sms} of the {n['name']}. It has {n['sub_partitions']} sub-partitions, each with a "
            f"warp scheduler, a dispatch unit, {_kib(n['register_bytes'])} of registers, {n['fp32_lanes']} FP32 lanes, "
            f"{n['sfu_lanes']} special-function units and {plural(n['tensor_cores'], 'tensor core')}. Below them the SM's shared memory and L1, up to "
            f"{_kib(n['shared_bytes'])} of shared memory; outside the SM {l2} and {n['hbm_bytes'] / 2**30:,.0f} GiB of "
            f"{n['memory_name']} at {n['hbm_bandwidth'] / 1e12:,.2f} TB/s.")


def sm_caption(chip: str | Chip = "H100 SXM") -> str:
    """The caption of :func:`sm_diagram`: the chip's name, architecture and the per-SM numbers drawn."""
    n = sm_numbers(chip)
    sms = f", {n['sms']:,} SMs" if n["sms"] else ""
    return (f"One SM of the {n['name']} ({n['arch']}, compute capability {n['compute_capability']}{sms}), "
            f"drawn from labsim's preset: {plural(n['sub_partitions'], 'sub-partition')} of "
            f"{plural(n['fp32_lanes'], 'FP32 lane')}, {_kib(n['register_bytes'])} of registers and "
            f"{plural(n['tensor_cores'], 'tensor core')} each, above up to {_kib(n['shared_bytes'])} of shared memory.")


# ---------------------------------------------------------------------------------------------------
# occupancy and waves

def occupancy_figure(occ, *, title: str | None = None, height: int = 300):
    """The blocks per SM that each resource allows (``occ`` from ``ls.simt.occupancy``): one bar per
    resource, the binding one(s) in the "mismatch" colour, the others in "match"; the text on each bar says
    how the number was found."""
    import plotly.graph_objects as go

    rows = occ.rows()
    names = [r[0] for r in rows]
    vals = [r[1] for r in rows]
    binding = {str(k) for k in occ.limiters}
    colors = [ROLE["mismatch"] if nm in binding else ROLE["match"] for nm in names]
    text = [plural(v, "block") + (" ← binds" if nm in binding else "") for nm, v in zip(names, vals)]
    fig = go.Figure(go.Bar(
        y=names, x=vals, orientation="h", marker=dict(color=colors), text=text, textposition="auto",
        cliponaxis=False, customdata=[r[2] for r in rows], hovertemplate="%{y}: %{x} block(s) per SM<br>%{customdata}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed", title=None)
    # a log axis: an unused budget (shared memory with none asked for) can allow 100 times the binding one
    fig.update_xaxes(title="blocks per SM (log scale)", type="log",
                     range=[math.log10(0.7), math.log10(max(vals) * 6)])
    if title is None:
        title = occupancy_title(occ)
    return style(fig, title=title, height=height)


def occupancy_title(occ) -> str:
    """The occupancy figure's title in words, in the right grammatical number: "1 block × 8 warps = 8 of
    64 warps (12%)"."""
    return (f"{plural(occ.blocks_per_sm, 'block')} × {plural(occ.warps_per_block, 'warp')} = {occ.warps_per_sm} of "
            f"{plural(occ.max_warps_per_sm, 'warp')} ({occ.occupancy:.0%})")


def launch_figure(chip: str | Chip, threads_per_block: int, registers_per_thread: int, shared_bytes_per_block: int = 0,
                  *, height: int = 300):
    """:func:`occupancy_figure` of ``ls.simt.occupancy(chip, ...)``; for a block no SM can hold, a figure that
    says which limit it breaks (the machine's own message, in the "mismatch" colour), so that a widget
    never breaks on an impossible combination of its controls."""
    import plotly.graph_objects as go

    from ..machines.simt import OccupancyError, occupancy

    try:
        occ = occupancy(chip, threads_per_block=threads_per_block, registers_per_thread=registers_per_thread,
                        shared_bytes_per_block=shared_bytes_per_block)
    except OccupancyError as e:
        # what one block asks for, as a share of each per-block limit: the broken one over 100 %
        sm = get_chip(chip).sm
        asks = [("threads", threads_per_block / sm.max_threads_per_block),
                ("registers", threads_per_block * registers_per_thread / sm.registers_per_block),
                ("shared memory", shared_bytes_per_block / sm.shared_per_block)]
        fig = go.Figure(go.Bar(
            y=[a[0] for a in asks], x=[100 * a[1] for a in asks], orientation="h", textposition="auto",
            text=[f"{100 * a[1]:.0f} %" for a in asks],
            marker=dict(color=[ROLE["mismatch"] if a[1] > 1 else ROLE["match"] for a in asks]),
            hovertemplate="%{y}: %{x:.0f} % of the per-block limit<extra></extra>"))
        fig.add_vline(x=100, line=dict(color="#222222", width=2, dash="dot"))
        fig.add_annotation(x=0, y=1.02, xref="paper", yref="paper", xanchor="left", yanchor="bottom", showarrow=False,
                           align="left", font=dict(size=12, color=ROLE["mismatch"]),
                           text="This block cannot run on an SM:<br>" + _wrap(str(e), 52))
        fig.update_yaxes(autorange="reversed", title=None)
        fig.update_xaxes(title="what one block asks for, % of the per-block limit", rangemode="tozero")
        style(fig, title=f"{plural(threads_per_block, 'thread')} × {plural(registers_per_thread, 'register')}: "
                         f"no block fits",
              height=height)
        fig.update_layout(margin=dict(t=90))
        return fig
    return occupancy_figure(occ, height=height)


def _wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most about ``width`` characters, joined by <br> (Plotly text)."""
    import textwrap

    return "<br>".join(textwrap.wrap(text, width))


def waves_figure(chip, blocks: int | None = None, blocks_per_sm: int | None = None, *, title: str | None = None,
                 height: int = 300):
    """A grid of blocks on a GPU's SMs, wave by wave: one bar per wave, as long as the GPU's block slots
    (SMs x blocks per SM), its busy slots in the "compute" colour and its empty ones in "idle". Only a
    last, partly filled wave (the tail wave) has empty slots. Give the SIMT machine's placement
    (``ls.simt.waves.place_blocks(...)``, a :class:`~labsim.machines.simt.waves.Waves`) or
    ``chip, blocks, blocks_per_sm`` to place them here the same way."""
    import plotly.graph_objects as go

    if isinstance(chip, Waves):
        if blocks is not None or blocks_per_sm is not None:
            raise ArgumentError("waves_figure: give a placement (Waves) alone, or chip, blocks and blocks_per_sm")
        placed = chip
    else:
        c = _gpu(chip)
        if "compute_units" not in c.sources:
            raise ArgumentError(f"{c.name}: the preset has no sourced SM count, so its waves cannot be drawn")
        if blocks is None or blocks_per_sm is None:
            raise ArgumentError("waves_figure: with a chip, give blocks and blocks_per_sm too")
        placed = place_blocks(blocks, c, blocks_per_sm)
    sms, blocks, blocks_per_sm = placed.sms, placed.blocks, placed.blocks_per_sm
    slots = placed.slots
    names = [f"wave {w + 1}" for w in range(placed.count)]
    busy = placed.busy
    idle = [slots - b for b in busy]
    fig = go.Figure([
        go.Bar(y=names, x=busy, orientation="h", name="block slots running a block",
               marker=dict(color=ROLE["compute"]), hovertemplate="%{y}: %{x} busy slots<extra></extra>"),
        go.Bar(y=names, x=idle, orientation="h", name="empty block slots", marker=dict(color=ROLE["idle"]),
               hovertemplate="%{y}: %{x} empty slots<extra></extra>"),
    ])
    fig.update_layout(barmode="stack", bargap=0.3)
    fig.update_xaxes(title=f"block slots: {sms} SMs × {blocks_per_sm} blocks", range=[0, slots], rangemode="tozero")
    fig.update_yaxes(autorange="reversed", title=None, type="category")
    n = placed.count
    if title is None:
        title = (f"{plural(blocks, 'block')} in {plural(n, 'wave')}"
                 + (f"; the tail wave is {busy[-1] / slots:.0%} full" if idle[-1] else "; no tail"))
    return style(fig, title=title, height=max(height, 150 + 40 * n))


# ---------------------------------------------------------------------------------------------------
# coalescing

def coalescing_figure(addresses, itemsize: int, counted, *, title: str | None = None, height: int = 300):
    """One warp's access: its 32 lanes (top) joined to the bytes they read (bottom), drawn over the
    32-byte sectors from the first to the last one touched; a sector the warp touches is "memory", one it
    skips "idle"; thicker ticks mark the 128-byte lines. ``counted`` is the machine's count for the access
    (``ls.simt.transactions(...)`` or a ``KernelRun.transactions(pc=...)`` dict with "sectors" and
    "lines"), which the title reports; the drawing marks the sectors the addresses fall in."""
    import numpy as np
    import plotly.graph_objects as go

    from ..machines.simt import LINE, SECTOR

    a = np.asarray(addresses, dtype=np.int64).ravel()
    if a.size == 0 or a.size > 32:
        raise ArgumentError(f"coalescing_figure: a warp has 1 to 32 lanes, got {a.size} addresses")
    sectors_n = counted["sectors"] if isinstance(counted, dict) else counted.sectors
    lines_n = counted["lines"] if isinstance(counted, dict) else counted.lines
    first, last = int(a.min() // LINE * LINE), int(-(-(a.max() + itemsize) // LINE) * LINE)
    touched = {int(s) for f, l in zip(a // SECTOR, (a + itemsize - 1) // SECTOR) for s in range(f, l + 1)}
    span = last - first
    starts = np.arange(first, last, SECTOR)
    hit = np.isin(starts // SECTOR, list(touched))
    lane_x = [span * (i + 0.5) / a.size for i in range(a.size)]
    xs, ys = [], []
    for lx, addr in zip(lane_x, a):
        xs += [lx, float(addr - first + itemsize / 2), None]
        ys += [3.0, 1.0, None]
    tick_x, tick_y = [], []
    for l0 in range(0, span + 1, LINE):
        tick_x += [l0, l0, None]
        tick_y += [-0.25, 1.1, None]
    fig = go.Figure()
    # the sectors: one bar each, from y = 0 to 1, coloured by whether the warp touches it
    fig.add_trace(go.Bar(x=(starts - first + SECTOR / 2).astype(np.float32), y=np.ones(len(starts), np.int8),
                         width=SECTOR, marker=dict(color=np.where(hit, ROLE["memory"], ROLE["idle"]).tolist(),
                                                   line=dict(color="white", width=0.5)),
                         hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(x=tick_x, y=tick_y, mode="lines", line=dict(color="#222222", width=2), hoverinfo="skip",
                             showlegend=False))
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=NEUTRAL[1], width=1), hoverinfo="skip",
                             showlegend=False))
    fig.add_trace(go.Scatter(x=lane_x, y=[3.0] * a.size, mode="markers", marker=dict(symbol="square", size=8,
                             color=ROLE["vector"]), name="lanes 0–31", hovertemplate="lane %{pointNumber}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=dict(symbol="square", color=ROLE["memory"]),
                             name="sector moved (32 B)"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=dict(symbol="square", color=ROLE["idle"]),
                             name="sector not needed"))
    fig.update_layout(bargap=0)
    fig.update_yaxes(visible=False, range=[-0.6, 3.6], fixedrange=True)
    fig.update_xaxes(title="byte offset (thick ticks: 128-byte lines)", range=[-span * 0.02, span * 1.02],
                     showgrid=False, zeroline=False, fixedrange=True)
    requested = a.size * itemsize
    if title is None:
        title = (f"{requested:,} bytes requested: {plural(sectors_n, 'sector')} in {plural(lines_n, 'line')}, "
                 f"{sectors_n * SECTOR:,} bytes moved "
                 f"({requested / (sectors_n * SECTOR):.0%} used)")
    return style(fig, title=title, height=height)


# ---------------------------------------------------------------------------------------------------
# animations of the SIMT machine's trace (chapter 8): in gpu_anim.py, re-exported here

from .gpu_anim import (CELL_NAMES, divergence_frames, divergence_grid, schedule_frames,  # noqa: E402
                       schedule_grid, schedule_steps)


__all__ = ["sm_numbers", "sm_diagram", "sm_alt", "sm_caption", "occupancy_title", "occupancy_figure", "launch_figure", "wave_counts", "waves_figure",
           "coalescing_figure", "CELL_NAMES", "schedule_steps",
           "schedule_grid", "schedule_frames", "divergence_grid", "divergence_frames"]
