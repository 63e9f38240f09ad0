"""Plotly figures drawn from labsim's results (traces, costs)."""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import math
import numbers
import re
from typing import Sequence

from ..machines.events import Trace, UnitId, UnitKind
from .palette import BUFFER_COLORS, KIND_COLORS, NEUTRAL, ROLE
from .roofline_labels import _cluster_labels, _label_sides, _two_lines


def _finite(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _positive(v, name: str, where: str) -> float:
    """A finite number > 0, or a ValueError naming ``name`` (a figure is never drawn from 0, -1 or NaN)."""
    if not _finite(v) or v <= 0:
        raise ArgumentError(f"{where}: {name} must be a finite number > 0, got {v!r}")
    return float(v)


#: the book's body font: pydata-sphinx-theme's system stack, after the Hangul subset labsim-font.css ships
FONT_FAMILY = '"labsim Hangul", system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
TEMPLATE = "labsim"


def template():
    """The book's Plotly template (registered as ``"labsim"``): plotly_white in the body font, the
    palette's colours, the legend as a row *below* the plot (never on the title, and it wraps at phone
    width), the title at the top left."""
    import plotly.graph_objects as go
    import plotly.io as pio

    if TEMPLATE not in pio.templates:
        t = go.layout.Template(pio.templates["plotly_white"])
        t.layout.update(
            # series that carry no meaning of their own get black and greys, never a role's colour
            font=dict(family=FONT_FAMILY, size=13, color="#222222"), colorway=COLORWAY,
            title=dict(x=0, xanchor="left", y=0.98, yanchor="top", font=dict(size=15)),
            # container-referenced: the legend sits at the figure's foot and Plotly reserves the room for
            # it below the x-axis title, whatever the width
            legend=dict(orientation="h", xref="container", yref="container", x=0, xanchor="left", y=0,
                        yanchor="bottom", font=dict(size=12)),
            hoverlabel=dict(font=dict(family=FONT_FAMILY)),
        )
        pio.templates[TEMPLATE] = t
        # every figure made from now on starts in the book's style: giving a finished figure a template
        # costs about 20 ms, which a live widget cannot afford on every move
        pio.templates.default = TEMPLATE
    return pio.templates[TEMPLATE]


def _axis_values(fig, letter: str, axis_key: str) -> list[float]:
    """The finite numbers the traces put on one axis (``letter`` "x" or "y"; ``axis_key`` "xaxis2" ...).

    Read from each trace's raw JSON (``_props``), a one-dimensional numeric array at NumPy speed: going
    through Plotly's validated properties cost a live roofline about 20 ms a move."""
    import numpy as np

    ref = letter + axis_key[5:]
    out = []
    for t in fig.data:
        props = t._props or {}
        if (props.get(letter + "axis") or letter) != ref or letter not in t._valid_props:
            continue
        vals = props.get(letter)
        if vals is None or isinstance(vals, str):
            continue
        arr = np.asarray(vals) if isinstance(vals, (list, tuple, np.ndarray)) else None
        if arr is not None and arr.ndim == 1 and arr.dtype.kind in "fiu":
            out += arr[np.isfinite(arr)].astype(float).tolist()
            continue
        try:
            out += [float(v) for v in vals if _finite(v)]
        except TypeError:
            continue
    return out


def _axis_keys(fig) -> list[str]:
    """The axis keys ("xaxis", "yaxis2", ...) the layout sets (to_plotly_json() copied the template too)."""
    return [k for k in fig.layout._props or {} if re.fullmatch(r"[xy]axis\d*", k)]


def _log_ticks(fig) -> None:
    """No misleading log minor-tick labels: Plotly labels 20 and 50 as a small "2" and "5" ("2 5 2 5"
    that read as data). A log axis spanning two decades or more is labelled at the decades only, with
    unlabelled minor grid lines; a narrower one gets full labels ("20", "50")."""
    for key in _axis_keys(fig):
        ax = fig.layout[key]
        if ax.type != "log" or ax.dtick is not None or ax.tickvals is not None or ax.tickformat:
            continue
        if ax.range is not None and None not in ax.range:
            span = abs(ax.range[1] - ax.range[0])
        else:
            vals = [v for v in _axis_values(fig, key[0], key) if v > 0]
            span = math.log10(max(vals) / min(vals)) if vals else 99
        if span >= 2:
            ax.update(dtick=1, minor=dict(dtick="D1", showgrid=True, gridcolor="#F2F2F2", ticks=""))
        else:
            # Plotly's own ticks for a short log axis label every digit (0.6, 0.7, 0.8, 0.9) and pile
            # up on a phone: label 1, 2 and 5 of each decade (more only when that leaves under three)
            ax.update(tickformat="~g", tickvals=_short_log_ticks(fig, key, ax),
                      minor=dict(dtick="D1", showgrid=True, gridcolor="#F2F2F2", ticks=""))


def _short_log_ticks(fig, key: str, ax) -> list[float]:
    """Tick values for a log axis spanning under two decades: 1-2-5 per decade over a generous range
    (the shared range of an interactive figure may be wider than this step's data)."""
    if ax.range is not None and None not in ax.range:
        lo, hi = 10 ** min(ax.range), 10 ** max(ax.range)
    else:
        vals = [v for v in _axis_values(fig, key[0], key) if v > 0]
        lo, hi = (min(vals), max(vals)) if vals else (1.0, 10.0)
    k0, k1 = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    for digits in ((1, 2, 5), (1, 2, 3, 5), (1, 1.5, 2, 3, 4, 5, 7)):
        vals = [d * 10.0 ** k for k in range(k0, k1 + 1) for d in digits]
        if sum(lo <= v <= hi for v in vals) >= 3:
            break
    return [float(f"{v:.12g}") for v in vals]


#: the colours Plotly gives series a figure does not colour itself
COLORWAY = ["#000000", "#999999", "#555555", "#BBBBBB"]
#: an axis title longer than this is broken onto two lines (a phone's plot is about 300 px wide)
AXIS_TITLE_CHARS = 32
#: the same for a y-axis title
Y_TITLE_CHARS = 26


def _wrap_axis_titles(fig) -> None:
    for key in _axis_keys(fig):
        t = fig.layout[key].title
        text = t.text if t is not None else None
        # a y title runs along the plot's height, often shorter than a phone's width
        limit = AXIS_TITLE_CHARS if key[0] == "x" else Y_TITLE_CHARS
        if not text or "<br>" in text or len(text) <= limit:
            continue
        cut = text.rfind(" ", 0, len(text) // 2 + 6)
        if cut > 8:
            fig.layout[key].title.text = text[:cut] + "<br>" + text[cut + 1:]


#: the smallest text a figure draws (CSS px): a phone's reader can still read it
MIN_FONT_PX = 11


#: a legend entry longer than this goes on two lines (one line ran past a phone's 360 px figure)
LEGEND_CHARS = 40


def _wrap_legend(fig) -> None:
    for t in fig.data:
        name = t.name
        if not isinstance(name, str) or len(name) <= LEGEND_CHARS or "<br>" in name or t.showlegend is False:
            continue
        spaces = [i for i, ch in enumerate(name) if ch == " "]
        if spaces:
            cut = min(spaces, key=lambda i: abs(i - len(name) / 2))
            t.name = name[:cut] + "<br>" + name[cut + 1:]


def _min_text(fig) -> None:
    """No text under :data:`MIN_FONT_PX`: small annotation and trace fonts are raised to it, and bar
    labels that Plotly would shrink to fit a narrow bar are hidden instead (``uniformtext``).

    The sizes are read from the raw JSON (``_props``) and only the small ones are set through Plotly:
    reading hundreds of labels through Plotly's objects cost a live diagram about 40 ms a move."""
    fig.update_layout(uniformtext=dict(minsize=MIN_FONT_PX, mode="hide"))
    anns = (fig.layout._props or {}).get("annotations") or ()
    for i, a in enumerate(anns):
        size = (a.get("font") or {}).get("size")
        if size is not None and size < MIN_FONT_PX:
            fig.layout.annotations[i].font.size = MIN_FONT_PX
    for t in fig.data:
        raw = t._props or {}
        for prop in ("textfont", "insidetextfont", "outsidetextfont"):
            if prop not in t._valid_props:
                continue
            size = (raw.get(prop) or {}).get("size")
            if isinstance(size, numbers.Real) and size < MIN_FONT_PX:
                getattr(t, prop).size = MIN_FONT_PX


def style(fig, *, title: str | None = None, height: int = 360):
    """House style: the ``labsim`` template (body font, colour-blind-safe colours, legend below the plot),
    honest log ticks, axis titles kept inside the figure (long ones on two lines)."""
    t = template()
    mine = fig.layout.template
    if not (mine is not None and mine.layout.font.family == t.layout.font.family):
        fig.update_layout(template=t)
    fig.update_layout(
        height=height, autosize=True,
        margin=dict(l=10, r=10, t=60 if title else 20, b=10),
        title=dict(text=title) if title else None,
    )
    fig.update_xaxes(automargin=True)
    # y tick labels a little off the axis: a "0" on each axis met in the corner
    fig.update_yaxes(automargin=True, ticklabelstandoff=4)
    _min_text(fig)
    _wrap_legend(fig)
    _log_ticks(fig)
    _wrap_axis_titles(fig)
    from ..support.i18n import translate_figure  # the figure in the language labsim draws in (ls.set_language)
    return translate_figure(fig)


def _time_unit(seconds: float) -> tuple[float, str]:
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def _row_labels(trace: Trace) -> dict[UnitId, str]:
    """Each unit's y-axis label: its ``label``, prefixed with its chip when labels repeat across chips."""
    labels = {u: u.label for u in trace.units}
    if len(set(labels.values())) < len(labels):
        labels = {u: f"{'host' if u.on_host else f'chip {u.chip}'} · {u.label}" for u in trace.units}
    return labels


#: rows a timeline draws at full height; more rows share ``_MANY_ROWS_PX`` pixels (at least 14 each)
_FULL_ROWS = 10
_MANY_ROWS_PX = 720


def _select_units(trace: Trace, units) -> tuple[UnitId, ...]:
    """The units to draw, in the trace's order: all, or those whose UnitId or UnitKind is in ``units``."""
    if units is None:
        return trace.units
    if isinstance(units, (UnitId, UnitKind)):
        units = (units,)
    want = tuple(units)
    for u in want:
        if not isinstance(u, (UnitId, UnitKind)):
            raise ArgumentTypeError(f"timeline: units must be UnitIds or UnitKinds, got {type(u).__name__} {u!r:.40}")
    chosen = tuple(u for u in trace.units if u in want or u.kind in want)
    if not chosen:
        raise ArgumentError(f"timeline: none of the trace's units is among units={want!r:.80}; it has "
                         f"{sorted({u.kind.value for u in trace.units})}")
    return chosen


def timeline(trace: Trace, *, title: str | None = None, height: int | None = None, max_time: float | None = None,
             units=None):
    """A Gantt chart of any ``ls.Trace``: one row per unit (in ``trace.units`` order), one bar per event,
    coloured by the event's kind.

    Every machine's trace draws here: host threads, streams and copy engines (``ls.simulate``,
    ``ls.host.Machine``), links (``ls.collectives``), SMs and warps, MXUs, VPUs and DMA queues
    (:meth:`ls.Trace.from_intervals` builds one from a machine's own schedule). ``units`` draws only
    some rows: UnitIds, or UnitKinds for every unit of that kind (e.g. ``units=ls.UnitKind.WARP``).
    Rows of a unit that appears on several chips are prefixed with the chip. ``max_time`` (seconds)
    fixes the time axis, so that figures for several control values share it; a trace that runs
    longer widens the axis to its end rather than being cut off."""
    import plotly.graph_objects as go

    if not isinstance(trace, Trace):
        hint = " (ls.simulate(prog, chip).trace is one)" if hasattr(trace, "kernels") or hasattr(trace, "trace") else ""
        raise ArgumentTypeError(f"timeline: trace must be a Trace, got {type(trace).__name__}{hint}")
    if max_time is not None:
        max_time = _positive(max_time, "max_time", "timeline")
    if not trace.events:
        raise ArgumentError("timeline: the trace has no events, so there is nothing to draw")
    shown = _select_units(trace, units)
    keep = set(shown)
    events = [e for e in trace.events if e.unit in keep]
    if max_time is not None:
        max_time = max(max_time, max(e.end for e in trace.events))
    scale, unit = _time_unit(max_time if max_time is not None else trace.duration or 1e-6)
    rows = _row_labels(trace)
    fig = go.Figure()
    kinds = []
    for e in events:
        if e.kind not in kinds:
            kinds.append(e.kind)
    for kind in kinds:
        evs = [e for e in events if e.kind is kind]
        fig.add_trace(go.Bar(
            y=[rows[e.unit] for e in evs], x=[max(e.duration * scale, 0) for e in evs],
            base=[e.start * scale for e in evs], orientation="h", name=kind.value,
            marker=dict(color=KIND_COLORS.get(kind.value, "#999999"), line=dict(color="#333333", width=0.5)),
            customdata=[[e.name, e.detail, e.duration * scale] for e in evs],
            hovertemplate=kind.value + ": %{customdata[0]}<br>%{base:.3g}–%{x:.3g} " + unit +
                          " (%{customdata[2]:.3g} " + unit + ")<br>%{customdata[1]}<extra></extra>",
        ))
    fig.update_layout(barmode="overlay", bargap=0.35)
    fig.update_yaxes(categoryorder="array", categoryarray=[rows[u] for u in shown][::-1], title=None)
    fig.update_xaxes(title=f"time ({unit})", rangemode="tozero")
    if max_time is not None:
        fig.update_xaxes(range=[0, max_time * scale])
    n = len(shown)
    rows_px = 45 * n if n <= _FULL_ROWS else max(45 * _FULL_ROWS, min(_MANY_ROWS_PX, 14 * n))
    return style(fig, title=title, height=height or 120 + rows_px)


def bar_compare(labels: Sequence[str], values: Sequence[float], *, title: str | None = None, xlabel: str = "",
                log: bool = False, text: Sequence[str] | None = None, colors: Sequence[str] | None = None):
    """Horizontal bars, one per label (readable at phone width)."""
    import plotly.graph_objects as go

    labels, values = list(labels), list(values)
    if not labels:
        raise ArgumentError("bar_compare: no bars to draw (labels and values are empty)")
    if len(labels) != len(values):
        raise ArgumentError(f"bar_compare: {len(labels)} labels but {len(values)} values; give one value per label")
    for name, extra in (("text", text), ("colors", colors)):
        if extra is not None and not isinstance(extra, str) and len(extra) != len(labels):
            raise ArgumentError(f"bar_compare: {len(extra)} {name} for {len(labels)} labels; give one per label")
    for lab, v in zip(labels, values):
        if not _finite(v):
            raise ArgumentError(f"bar_compare: the value for {lab!r} is {v!r}, not a finite number")
        if log and v <= 0:
            raise ArgumentError(f"bar_compare: the value for {lab!r} is {v!r}; a log axis needs values > 0")
    fig = go.Figure(go.Bar(y=list(labels), x=list(values), orientation="h", text=list(text) if text else None,
                           textposition="auto", marker=dict(color=list(colors) if colors else NEUTRAL[1])))
    fig.update_xaxes(title=xlabel, type="log" if log else "linear")
    fig.update_yaxes(autorange="reversed")
    return style(fig, title=title, height=110 + 40 * len(labels))


def buffer_chart(plan, *, title: str | None = None, names: bool = True):
    """Buffer assignment as a memory map: x = kernel step, y = offset; each buffer a rectangle over its
    lifetime. Reused memory shows as rectangles stacked at the same offset, one after another."""
    import plotly.graph_objects as go

    from ..compiler.buffers import BufferPlan

    if not isinstance(plan, BufferPlan):
        hint = " (a Program's is prog.buffers)" if hasattr(plan, "buffers") else ""
        raise ArgumentTypeError(f"buffer_chart: plan must be a BufferPlan, got {type(plan).__name__}{hint}")
    if not plan.buffers:
        raise ArgumentError("buffer_chart: the plan has no buffers, so there is nothing to draw")
    colors = BUFFER_COLORS
    fig = go.Figure()
    scale, unit = (1e6, "MB") if plan.heap_bytes >= 1e6 else (1e3, "kB")
    shown = set()
    for b in plan.buffers:
        x0, x1 = b.first - 0.45, b.last + 0.45
        y0, y1 = b.offset / scale, (b.offset + b.size) / scale
        fig.add_trace(go.Scatter(
            x=[x0, x1, x1, x0, x0], y=[y0, y0, y1, y1, y0], fill="toself", mode="lines",
            line=dict(color="#333333", width=1.2 if b.kind == "output" else 0.6), fillcolor=colors.get(b.kind, ROLE["idle"]),
            name=b.kind, legendgroup=b.kind, showlegend=b.kind not in shown,
            hovertemplate=f"{b.name} ({b.kind})<br>{b.size:,} bytes at offset {b.offset:,}<br>"
                          f"kernels {b.first}…{b.last}<extra></extra>"))
        shown.add(b.kind)
        if names and (y1 - y0) > 0.04 * max(plan.heap_bytes / scale, 1e-9):
            fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=b.name, showarrow=False, font=dict(size=10))
    fig.add_hline(y=plan.peak_bytes / scale, line_dash="dash", line_color="#000000",
                  annotation_text="peak live", annotation_position="top left")
    steps = max(b.last for b in plan.buffers) - min(b.first for b in plan.buffers) + 1
    # one tick per kernel while they fit; beyond that Plotly picks round steps (a strip of 60 numbers
    # is unreadable)
    fig.update_xaxes(title="kernel step (−1: before the first)", dtick=1 if steps <= 16 else None)
    fig.update_yaxes(title=f"device memory offset ({unit})", rangemode="tozero")
    return style(fig, title=title, height=380)


def roofline(chip, points=(), *, dtype: str = "bfloat16", unit=None, title: str | None = None,
             xrange=(1e-2, 1e4), extra_chips=(), peak: float | None = None):
    """A roofline plot for ``chip``: attainable FLOP/s = min(peak, intensity × bandwidth), log-log.

    ``points``: (label, intensity FLOP/B, FLOP/s achieved or None) — None places the point on the roof.
    ``extra_chips``: more chips drawn as dashed roofs for comparison.
    ``peak``: the roof of ``chip`` in FLOP/s when it is not a preset rate of ``dtype``: e.g. the rate the
    roofline charged a kernel (``KernelCost.peak_flops``: a TPU's float32 product as six bf16 MXU passes).
    """
    import numpy as np
    import plotly.graph_objects as go

    from ..hardware import get

    if not isinstance(xrange, (tuple, list)) or len(xrange) != 2:
        raise ArgumentError(f"roofline: xrange must be (low, high) in FLOP/byte, got {xrange!r}")
    lo = _positive(xrange[0], "xrange low end", "roofline")
    hi = _positive(xrange[1], "xrange high end", "roofline")
    if lo >= hi:
        raise ArgumentError(f"roofline: xrange must run from low to high, got {tuple(xrange)!r}")
    points = list(points)
    for p in points:
        if not isinstance(p, (tuple, list)) or len(p) != 3:
            raise ArgumentError(f"roofline: each point is (label, intensity FLOP/B, FLOP/s or None), got {p!r:.60}")
        _positive(p[1], f"the intensity of point {p[0]!r}", "roofline")
        if p[2] is not None:
            _positive(p[2], f"the FLOP/s of point {p[0]!r}", "roofline")
    fig = go.Figure()
    xs = np.logspace(np.log10(xrange[0]), np.log10(xrange[1]), 200)
    for i, c in enumerate((chip, *extra_chips)):
        c = get(c)
        roof = _positive(peak, "peak", "roofline") if (peak is not None and i == 0) else c.peak_flops(dtype, unit)
        ys = np.minimum(roof, xs * c.hbm_bandwidth)
        fig.add_trace(go.Scatter(x=xs, y=ys / 1e12, mode="lines", name=f"{c.name.split(' (')[0]} ({dtype})",
                                 line=dict(color=NEUTRAL[i % len(NEUTRAL)], width=3 if i == 0 else 2,
                                           dash="solid" if i == 0 else "dash"), showlegend=False))
        # several roofs: a direct label on each roof's flat end instead of a legend entry (one roof is
        # named by the caption)
        if extra_chips:
            from ..hardware import PRESETS

            short = next((k for k, v in PRESETS.items() if v is c), c.name.split(" (")[0])
            fig.add_annotation(x=np.log10(xs[-1]), y=np.log10(ys[-1] / 1e12), text=short, showarrow=False,
                               xanchor="right", yanchor="bottom", font=dict(size=12, color=NEUTRAL[i % len(NEUTRAL)]))
        ridge = roof / c.hbm_bandwidth
        if i == 0:
            fig.add_vline(x=ridge, line_dash="dot", line_color="#999999")
            # the label as its own annotation: on a log axis an annotation's x is log10 of the value
            # (add_vline's own label would be placed at 10**ridge, off the plot)
            # written up along the line, right of it, from the bottom: across, it ran off a phone's narrow
            # plot or into the names of the kernels under the slope
            fig.add_annotation(x=math.log10(ridge), y=0, yref="paper", text=f"ridge {ridge:.0f} FLOP/B",
                               showarrow=False, xanchor="left", yanchor="bottom", textangle=-90, xshift=2,
                               font=dict(size=12, color=NEUTRAL[1]))
    c0 = get(chip)
    peak0 = peak if peak is not None else c0.peak_flops(dtype, unit)
    if points:
        # points at the same place (to 1 %) share one marker, so every kernel stays visible as a name
        groups: list[list] = []
        for lab, inten, achieved in points:
            y = (achieved if achieved is not None else min(peak0, inten * c0.hbm_bandwidth)) / 1e12
            for g in groups:
                if abs(math.log10(g[1] / inten)) < 0.005 and abs(math.log10(g[2] / y)) < 0.005:
                    g[0].append(lab)
                    break
            else:
                groups.append([[lab], inten, y])
        names = [", ".join(g[0]) for g in groups]
        xi, yi = [g[1] for g in groups], [g[2] for g in groups]
        # direct labels: the names themselves while they fit; with many markers, numbers on the plot and
        # the key in the caption (the figure's title becomes its caption)
        many = len(groups) > 3
        text = _cluster_labels(xi, yi, [str(i + 1) for i in range(len(groups))]) if many else [_two_lines(n) for n in names]
        fig.add_trace(go.Scatter(x=xi, y=yi, mode="markers+text", text=text, customdata=names,
                                 textposition=_label_sides(xi, yi, xrange, peak0 / 1e12) if not many else "top center",
                                 textfont=dict(size=12),
                                 marker=dict(size=11, color=ROLE["compute"], symbol="diamond",
                                             line=dict(color="#000000", width=1)),
                                 name="kernels", showlegend=False, hovertemplate="%{customdata}<br>%{x:.3g} FLOP/B, %{y:.3g} TFLOP/s<extra></extra>"))
        if many:
            key = "; ".join(f"{i + 1}: {n}" for i, n in enumerate(names))
            title = f"{title}<br>{key}" if title else f"Kernels: {key}"
    fig.update_xaxes(type="log", title="intensity (FLOP per HBM byte)", range=[np.log10(xrange[0]), np.log10(xrange[1])])
    fig.update_yaxes(type="log", title="attainable TFLOP/s")
    return style(fig, title=title, height=420)
