"""An animated roofline: one kernel's point moving as a size grows (batch, sequence length, tile), from labsim
runs, with its two time bars under it.

``roofline_animation(build, values, chip=...)`` compiles ``build(v)`` for every value ``v`` (a Program,
or a Graph that it compiles), costs it with ``ls.estimate`` on the chip and follows one kernel (by default
the one with the most FLOPs). Step ``i`` draws:

- the chip's roof for that kernel's unit and dtype (the rate and bandwidth ``ls.estimate`` charged it), the
  ridge as a dotted line;
- the kernel's point at value ``values[i]`` (its intensity and attained FLOP/s, coloured by what bounds it:
  "memory" orange, "compute" blue, "latency" reddish purple), the points of the earlier steps as a grey trail;
- under the roofline, the kernel's compute time, memory time and the chip's shortest kernel time (the
  latency floor) as bars: the kernel's time is the longest of the three.

Every axis keeps one range over all the steps (and all the chips of a ``chip`` control), so the point's
movement is the only change. All three faces come from :func:`labsim.viz.animate`: live (ipywidgets Play
and slider), static (the page's Play/Back/Next buttons and step slider, a live line naming the step) and
print (``.save("roof.gif")`` or one step as SVG/PDF/PNG).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..support.errors import ArgumentError, ArgumentTypeError
from ..support.tables import fmt_si
from .palette import NEUTRAL, ROLE
from .plots import style

_FN = "roofline_animation"
#: the point's colour by what bounds the kernel (the palette's meaning: compute, bytes moving, overhead)
_BOUND_ROLE = {"compute": "compute", "memory": "memory", "latency": "overhead"}


def _program(fn: str, built, value, over: str):
    from ..compiler.pipeline import compile as compile_graph
    from ..compiler.program import Program
    from ..core.ir import Graph

    if isinstance(built, Program):
        return built
    if isinstance(built, Graph):
        return compile_graph(built)
    raise ArgumentTypeError(f"{fn}: build({over}={value!r}) must return a compiled Program or a traced Graph "
                            f"(ls.compile(ls.trace(f, ...)) or ls.trace(f, ...)), got {type(built).__name__}")


def _values(fn: str, values) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) < 2:
        raise ArgumentError(f"{fn}: values must be a list of at least 2 sizes to step through, got {values!r:.60}")
    if len(set(map(repr, values))) < len(values):
        raise ArgumentError(f"{fn}: values repeats a size: {list(values)!r:.80}")
    return list(values)


def roofline_costs(build: Callable[[Any], Any], values: Sequence, *, chip, kernel: int | str | None = None,
                   over: str = "batch", programs: dict | None = None) -> list:
    """The :class:`~labsim.machines.roofline.KernelCost` of the followed kernel at each value: ``build(v)``
    compiled and costed with ``ls.estimate(prog, chip)``. ``kernel``: its index in the program, or its
    name; None follows the kernel with the most FLOPs at the first value. ``programs`` (a dict) keeps the
    compiled programs by ``repr(value)``, so several chips compile each value once."""
    from ..machines.program_cost import estimate

    if not callable(build):
        raise ArgumentTypeError(f"{_FN}: build must be a function of the {over} that returns a Program, "
                                f"got {type(build).__name__}")
    values = _values(_FN, values)
    costs = []
    for v in values:
        prog = programs[repr(v)] if programs is not None and repr(v) in programs else _program(_FN, build(v), v, over)
        if programs is not None:
            programs[repr(v)] = prog
        ks = estimate(prog, chip).kernels
        if not ks:
            raise ArgumentError(f"{_FN}: the program for {over}={v!r} has no kernel to follow")
        if kernel is None:
            kernel = max(range(len(ks)), key=lambda j: ks[j].flops)
        if isinstance(kernel, str):
            names = [k.kernel for k in ks]
            if kernel not in names:
                raise ArgumentError(f"{_FN}: kernel={kernel!r} is not a kernel of the program for {over}={v!r}; "
                                    f"its kernels are {names}")
            k = ks[names.index(kernel)]
        else:
            if isinstance(kernel, bool) or not isinstance(kernel, int) or not -len(ks) <= kernel < len(ks):
                raise ArgumentError(f"{_FN}: kernel={kernel!r} is not a kernel index of the program for "
                                    f"{over}={v!r} (it has {len(ks)}: 0 to {len(ks) - 1})")
            k = ks[kernel]
        costs.append(k)
    return costs


def _span(lo: float, hi: float, pad: float = 2.0) -> list[float]:
    """A log axis's range (log10 units) around [lo, hi], padded by the factor ``pad`` at both ends."""
    return [math.log10(lo / pad), math.log10(hi * pad)]


def _times(k) -> tuple[float, float]:
    """The shortest and longest of a kernel's bars (compute, memory, latency floor), zeros left out."""
    ts = [t for t in (k.compute_time, k.memory_time, k.latency_floor) if t > 0]
    return min(ts), max(ts)


def ridge_of(cost) -> float:
    """The ridge (FLOP/byte) of the roof a kernel was charged: its peak rate over its bandwidth."""
    return cost.peak_flops / cost.bandwidth


def first_compute_bound(costs, values):
    """The first value whose kernel is compute-bound (its intensity past the ridge), or None."""
    from ..machines.roofline import Bound

    return next((v for v, k in zip(values, costs) if k.bound is Bound.COMPUTE), None)


def roofline_frames(costs: Sequence, values: Sequence, *, over: str = "batch", fmt=None,
                    extents: dict | None = None, height: int = 520) -> list:
    """One figure per value (see the module docstring) from the kernel costs of :func:`roofline_costs`.
    ``extents`` (``{"x": (lo, hi), "y": ..., "t": ...}``, FLOP/B, FLOP/s and seconds) fixes the axes
    (else they cover these costs); ``fmt`` formats a value for the labels."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fmt = fmt or (lambda v: f"{v:,}" if isinstance(v, int) else str(v))
    if len(costs) != len(values):
        raise ArgumentError(f"roofline_frames: {len(costs)} costs for {len(values)} values")
    k0 = costs[0]
    peak, bw = k0.peak_flops, k0.bandwidth
    ridge = peak / bw
    ints = [k.intensity for k in costs]
    ext = dict(extents or {})
    xlo, xhi = ext.get("x", (min(min(ints), ridge), max(max(ints), ridge)))
    ylo, yhi = ext.get("y", (min(k.achieved_flops for k in costs), peak))
    tlo, thi = ext.get("t", (min(_times(k)[0] for k in costs), max(_times(k)[1] for k in costs)))
    xr, yr, tr = _span(xlo, xhi, 3.0), _span(ylo / 1e12, yhi / 1e12, 2.5), _span(tlo * 1e6, thi * 1e6, 3.0)
    rx = [10 ** xr[0], ridge, 10 ** xr[1]]
    ry = [min(peak, x * bw) / 1e12 for x in rx]
    base = make_subplots(rows=2, cols=1, row_heights=[0.7, 0.3], vertical_spacing=0.16)
    base.add_trace(go.Scatter(x=rx, y=ry, mode="lines", name="roof", showlegend=False, hoverinfo="skip",
                              line=dict(color=NEUTRAL[0], width=3)), row=1, col=1)
    base.add_trace(go.Scatter(x=[None], y=[None], mode="lines+markers", name="earlier steps", hoverinfo="skip",
                              line=dict(color="#999999", width=1.5, dash="dot"),
                              marker=dict(size=8, color="#BBBBBB", line=dict(color="#777777", width=1))),
                   row=1, col=1)
    base.add_trace(go.Scatter(x=[None], y=[None], mode="markers+text", name="kernel", showlegend=False,
                              textposition="top center", textfont=dict(size=13),
                              marker=dict(size=16, color=ROLE["memory"], line=dict(color="#222222", width=1.5))),
                   row=1, col=1)
    base.add_trace(go.Bar(y=["compute", "memory", "floor"], x=[None, None, None], orientation="h", showlegend=False,
                          marker=dict(color=[ROLE["compute"], ROLE["memory"], ROLE["overhead"]]), textposition="outside",
                          cliponaxis=False, textfont=dict(size=12), hoverinfo="skip"), row=2, col=1)
    base.update_xaxes(type="log", range=xr, title="intensity (FLOP/byte)", row=1, col=1)
    base.update_yaxes(type="log", range=yr, title="TFLOP/s", row=1, col=1)
    base.update_xaxes(type="log", range=tr, title="time (µs)", row=2, col=1)
    base.update_yaxes(type="category", categoryorder="array", categoryarray=["floor", "memory", "compute"], row=2, col=1)
    base.add_shape(type="line", x0=ridge, x1=ridge, y0=0, y1=1, xref="x", yref="y domain",
                   line=dict(color="#999999", dash="dot", width=1.5))
    style(base, height=height)
    base.update_layout(margin=dict(t=72), legend=dict(orientation="h", y=1.02, x=1, xanchor="right",
                                                      yanchor="bottom"))
    lay = base.to_plotly_json()["layout"]
    shapes = lay.get("shapes", [])
    # written up along the ridge line, so that it never runs past the plot's right edge on a phone
    ridge_note = dict(x=math.log10(ridge), y=0.02, xref="x", yref="y domain", xanchor="left", yanchor="bottom",
                      textangle=-90, showarrow=False, text=f"ridge {ridge:,.0f} FLOP/B",
                      font=dict(size=12, color=NEUTRAL[1]))
    data = base.to_plotly_json()["data"]
    frames = []
    for i, (v, k) in enumerate(zip(values, costs)):
        bound = k.bound.value
        d = [dict(t) for t in data]
        d[1].update(x=[c.intensity for c in costs[:i]] or [None],
                    y=[c.achieved_flops / 1e12 for c in costs[:i]] or [None])
        d[2].update(x=[k.intensity], y=[k.achieved_flops / 1e12], text=[f"{over} {fmt(v)}"],
                    marker=dict(d[2]["marker"], color=ROLE[_BOUND_ROLE.get(bound, "compute")]))
        floor = k.latency_floor if k.latency_floor > 0 else None
        d[3].update(x=[k.compute_time * 1e6, k.memory_time * 1e6, floor * 1e6 if floor else None],
                    text=[fmt_si(k.compute_time, "s"), fmt_si(k.memory_time, "s"), fmt_si(floor, "s") if floor else ""])
        status = dict(x=0, y=1.0, xref="paper", yref="paper", xanchor="left", yanchor="bottom", showarrow=False,
                      align="left", font=dict(size=12),
                      text=f"{over} {fmt(v)}: <b>{bound}-bound</b><br>{k.intensity:,.0f} FLOP/B, "
                           f"{k.achieved_flops / 1e12:,.1f} TFLOP/s")
        frames.append(go.Figure({"data": d, "layout": dict(lay, shapes=shapes, annotations=[ridge_note, status])},
                                _validate=False))
    return frames


def step_description(cost, value, *, over: str = "batch", fmt=None) -> str:
    """The words for one step (the live line under the animation names it): the value, what bounds the
    kernel, its intensity, its rate and its time."""
    fmt = fmt or (lambda v: f"{v:,}" if isinstance(v, int) else str(v))
    return (f"{fmt(value)}, {cost.bound.value}-bound: {cost.intensity:,.0f} FLOP/B, "
            f"{cost.achieved_flops / 1e12:,.1f} TFLOP/s, {fmt_si(cost.time, 's')}")


def roofline_animation(build: Callable[[Any], Any], values: Sequence, *, chip="H100 SXM", over: str = "batch",
                       kernel: int | str | None = None, caption=None, alt=None, name: str | None = None,
                       fmt=None, frame_ms: int = 900, start: int | None = None, height: int = 520):
    """An animation (:func:`labsim.viz.animate`) of one kernel on the roofline as ``over`` takes each of
    ``values``: ``build(v)`` returns the program (compiled, or a traced Graph) at that value; each is costed
    with ``ls.estimate`` on ``chip``. ``chip`` may be a list of chips: a control then picks one (the axes
    cover all of them). ``kernel``: the kernel to follow (index or name; default the one with the most
    FLOPs). ``caption`` and ``alt``: text, or functions of ``chip`` (default: computed from the runs);
    ``fmt`` formats a value ("1,024"). The step's words (:func:`step_description`) are the step labels."""
    from .animate import animate

    values = _values(_FN, values)
    chips = list(chip) if isinstance(chip, (list, tuple)) else [chip]
    if not chips:
        raise ArgumentError(f"{_FN}: chip must name a chip or list chips, got {chip!r}")
    programs: dict = {}
    costs = {c: roofline_costs(build, values, chip=c, kernel=kernel, over=over, programs=programs) for c in chips}
    every = [k for ks in costs.values() for k in ks]
    extents = {"x": (min(min(k.intensity, ridge_of(k)) for k in every), max(max(k.intensity, ridge_of(k)) for k in every)),
               "y": (min(k.achieved_flops for k in every), max(k.peak_flops for k in every)),
               "t": (min(_times(k)[0] for k in every), max(_times(k)[1] for k in every))}
    fmt = fmt or (lambda v: f"{v:,}" if isinstance(v, int) else str(v))

    def summary(chip):
        ks = costs[chip]
        flip = first_compute_bound(ks, values)
        name_ = ks[0].kernel
        cross = (f"it crosses the ridge ({ridge_of(ks[0]):,.0f} FLOP/B) and turns compute-bound at {over} {fmt(flip)}"
                 if flip is not None and flip != values[0] else
                 f"it is compute-bound from the first step" if flip is not None else
                 f"it stays memory-bound, left of the ridge ({ridge_of(ks[0]):,.0f} FLOP/B)")
        return (f"Kernel {name_} on the {chip} as the {over} grows from {fmt(values[0])} to {fmt(values[-1])} "
                f"(ls.estimate of each program): {cross}; its time goes from {fmt_si(ks[0].time, 's')} to "
                f"{fmt_si(ks[-1].time, 's')}")

    def cap(chip):
        if caption is None:
            return summary(chip)
        return caption(chip) if callable(caption) else caption

    def alt_text(chip):
        if alt is not None:
            return alt(chip) if callable(alt) else alt
        return ("Animated roofline, log-log: the chip's roof, a dotted ridge line, and one point per step that "
                "moves right and up as the size grows, with bars under it for the kernel's compute time, memory "
                "time and the chip's shortest kernel time. " + summary(chip) + ".")

    make = lambda chip: roofline_frames(costs[chip], values, over=over, fmt=fmt, extents=extents, height=height)
    labels = lambda chip: [step_description(k, v, over=over, fmt=fmt) for k, v in zip(costs[chip], values)]
    if len(chips) == 1:
        c0 = chips[0]
        return animate(lambda: make(c0), alt=alt_text(c0), caption=cap(c0), step_label=over,
                       step_labels=lambda: labels(c0), name=name, frame_ms=frame_ms, start=start)
    return animate(make, {"chip": chips}, alt=alt_text, caption=cap, step_label=over, step_labels=labels,
                   defaults={"chip": chips[0]}, name=name, frame_ms=frame_ms, start=start, kinds={"chip": "toggle"}
                   if len(chips) <= 4 else None)
