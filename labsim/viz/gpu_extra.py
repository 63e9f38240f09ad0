"""More figures of the GPU chapters: Little's law (chapter 8), split-K and stream-K (chapter 10), and
shared-memory banks (chapter 7). Each comes with its caption as a function of the values it draws, so
a widget's caption can follow its controls.

- :func:`inflight_figure` / :func:`inflight_caption` — achieved HBM bandwidth against the bytes in
  flight per SM, ``min(B, SMs · in_flight / L)``, with resident-thread counts marked (``ls`` Little's law,
  :mod:`labsim.machines.inflight`).
- :func:`splitk_figure` / :func:`splitk_caption` — one small-M×N, large-K GEMM run as plain tiles, split-K
  and stream-K (:mod:`labsim.machines.splitk`): the time of each, split into its terms.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

from ..support.text import plural
from .palette import NEUTRAL, ROLE
from .plots import style

#: resident threads per SM marked on the Little's-law figure: 25 %, 50 % and 100 % of an H100/A100 SM
OCCUPANCY_THREADS = (512, 1024, 2048)


def _inflight(chip):
    from ..machines.inflight import littles_law

    return littles_law(chip)


def _thread_labels(pts, top) -> list[str]:
    """One label per group of markers closer than an eighth of the axis (side by side on a phone they
    pile up): "256, 512 threads" at the group's first marker, nothing at the others."""
    out, first = [], None
    for i, p in enumerate(pts):
        if first is not None and p - pts[first] < top / 8:
            out[first] = out[first].replace(" threads", f", {OCCUPANCY_THREADS[i]:,} threads")
            out.append("")
        else:
            first = i
            out.append(f"{OCCUPANCY_THREADS[i]:,} threads")
    return out


def _thread_sides(pts, knee, top) -> list[str]:
    """Where each marker's label goes: below and right of a marker on the rising line (the free side);
    on the flat line alternately below and above, and leftwards near the right edge."""
    out, flat = [], 0
    for p in pts:
        if p < knee:
            out.append("bottom right")
            continue
        out.append(("bottom " if flat % 2 == 0 else "top ") + ("left" if p > 0.6 * top else "center"))
        flat += 1
    return out


def inflight_figure(chip="H100 SXM", bytes_per_thread: int = 4, *, height: int = 340):
    """Achieved bandwidth (TB/s) against bytes in flight per SM for ``chip`` (the Little's-law bound), with
    a marker at each of :data:`OCCUPANCY_THREADS` resident threads per SM when each keeps
    ``bytes_per_thread`` bytes of loads in flight, and the knee ``B · L / SMs`` marked."""
    import plotly.graph_objects as go

    f = _inflight(chip)
    if not isinstance(bytes_per_thread, int) or isinstance(bytes_per_thread, bool) or bytes_per_thread < 1:
        raise ArgumentError(f"inflight_figure: bytes_per_thread must be a positive integer, got {bytes_per_thread!r}")
    knee = f.sm_bytes
    top = max(2.2 * knee, 1.1 * max(OCCUPANCY_THREADS) * bytes_per_thread)
    xs = [0.0, knee, top]
    fig = go.Figure(go.Scatter(x=[x / 1024 for x in xs], y=[f.achieved_bandwidth(x) / 1e12 for x in xs], mode="lines",
                               line=dict(color=NEUTRAL[0]), name="min(B, SMs · in flight / latency)",
                               hovertemplate="%{x:.1f} KiB per SM: %{y:.2f} TB/s<extra></extra>"))
    pts = [t * bytes_per_thread for t in OCCUPANCY_THREADS]
    fig.add_trace(go.Scatter(
        x=[p / 1024 for p in pts], y=[f.achieved_bandwidth(p) / 1e12 for p in pts], mode="markers+text",
        marker=dict(size=11, color=[ROLE["match"] if p >= knee else ROLE["mismatch"] for p in pts]),
        text=_thread_labels(pts, top), customdata=[f"{t:,} threads" for t in OCCUPANCY_THREADS],
        textposition=_thread_sides(pts, knee, top),
        name=f"{plural(bytes_per_thread, 'byte')} in flight per thread",
        hovertemplate="%{customdata}: %{x:.1f} KiB in flight, %{y:.2f} TB/s<extra></extra>"))
    fig.add_vline(x=knee / 1024, line=dict(color=ROLE["memory"], dash="dash"))
    fig.add_annotation(x=knee / 1024, y=0.05, yref="paper", text=f"B · L / SMs = {knee / 1024:.1f} KiB",
                       showarrow=False, xanchor="left", font=dict(color=ROLE["memory"]))
    fig.update_xaxes(title="bytes in flight per SM (KiB)", range=[0, top / 1024], rangemode="tozero")
    fig.update_yaxes(title="achieved HBM bandwidth (TB/s)", range=[0, 1.15 * f.bandwidth / 1e12], rangemode="tozero",
                     nticks=8)
    return style(fig, title=f"Little's law on the {f.chip}: {f.bandwidth / 1e12:.2f} TB/s × "
                            f"{f.latency * 1e9:.0f} ns", height=height)


def inflight_caption(chip="H100 SXM", bytes_per_thread: int = 4) -> str:
    """The caption of :func:`inflight_figure`: the numbers it draws, in words."""
    f = _inflight(chip)
    bws = [f.achieved_bandwidth(t * bytes_per_thread) for t in OCCUPANCY_THREADS]
    threads = ", ".join(f"{t:,}" for t in OCCUPANCY_THREADS[:-1]) + f" and {OCCUPANCY_THREADS[-1]:,}"
    reach = ", ".join(f"{b / 1e12:.2f}" for b in bws[:-1]) + f" and {bws[-1] / 1e12:.2f} TB/s"
    return (f"Achieved HBM bandwidth of the {f.chip} against the bytes of loads in flight per SM, by Little's law "
            f"with an assumed latency of {f.latency_cycles:.0f} cycles ({f.latency * 1e9:.0f} ns): full bandwidth "
            f"needs {f.sm_bytes / 1024:.1f} KiB per SM. With {plural(bytes_per_thread, 'byte')} in flight per "
            f"thread, {threads} resident threads per SM reach {reach} of {f.bandwidth / 1e12:.2f} TB/s.")


def _splitk(m, n, k, splits, tile, chip):
    from ..machines.splitk import compare

    return compare(m, n, k, splits, tile, chip)


def splitk_figure(m: int, n: int, k: int, splits: int = 8, tile=(128, 128, 32), chip="H100 SXM", *,
                  height: int = 320):
    """Horizontal bars: the time of the GEMM as plain tiles, split-K (``splits``) and stream-K, each split
    into its main pass (coloured by the term that sets it: tensor cores, shared memory or HBM) and, for
    split-K, the reduction pass; each bar's label gives the blocks (or workers) and the busy SMs, its
    text the total time."""
    import plotly.graph_objects as go

    plans = _splitk(m, n, k, splits, tile, chip)
    colors = {"tensor cores": ROLE["compute"], "shared memory": ROLE["vector"], "HBM": ROLE["memory"]}
    names, main, extra, color, text = [], [], [], [], []
    for key, p in plans.items():
        terms = {"tensor cores": p.compute_time, "shared memory": p.shared_time, "HBM": p.memory_time}
        bound = max(terms, key=terms.get)
        unit = "worker" if p.scheme == "stream-K" else "block"
        label = f"split-K ({splits})" if key == "split-K" else key
        names.append(f"{label}<br>{plural(p.units, unit)}, {p.busy_sms} SMs")
        main.append(terms[bound] * 1e6)
        extra.append(p.extra_time * 1e6)
        color.append(colors[bound])
        text.append(f"{p.time * 1e6:,.1f} µs")
    fig = go.Figure([
        go.Bar(y=names, x=main, orientation="h", marker=dict(color=color), showlegend=False,
               hovertemplate="main pass %{x:.1f} µs<extra></extra>"),
        go.Bar(y=names, x=extra, orientation="h", marker=dict(color=ROLE["overhead"]), name="reduction pass",
               text=text, textposition="outside", cliponaxis=False,
               hovertemplate="reduction %{x:.1f} µs<extra></extra>"),
    ])
    for term, col in colors.items():  # legend: the colour of a main pass is the term that sets its time
        fig.add_trace(go.Bar(y=[None], x=[None], orientation="h", marker=dict(color=col),
                             name=f"main pass set by {term}"))
    longest = max(a + b for a, b in zip(main, extra))
    fig.update_layout(barmode="stack", bargap=0.35)
    fig.update_yaxes(autorange="reversed", title=None)
    fig.update_xaxes(title="time (µs)", range=[0, 1.5 * longest], rangemode="tozero")
    tl = plans["tiles"].tile
    return style(fig, title=f"{m:,} × {n:,} × {k:,} bf16 on the {plans['tiles'].chip}, {tl.bm}×{tl.bn}×{tl.bk} tiles",
                 height=height)


def splitk_caption(m: int, n: int, k: int, splits: int = 8, tile=(128, 128, 32), chip="H100 SXM") -> str:
    """The caption of :func:`splitk_figure`: the three times and what each keeps busy."""
    p = _splitk(m, n, k, splits, tile, chip)
    t, s, sk = p["tiles"], p["split-K"], p["stream-K"]
    return (f"A {m:,} × {n:,} × {k:,} bf16 product on the {t.chip} in labsim's model. Plain tiles: "
            f"{plural(t.units, 'block')} on {t.busy_sms} of {t.sms} SMs, {t.time * 1e6:,.1f} µs. "
            + (f"Split-K into {splits}: {plural(s.units, 'block')}, {s.time * 1e6:,.1f} µs including a "
               f"{s.extra_time * 1e6:,.1f} µs reduction pass. " if splits > 1 else "Split-K into 1 is the plain GEMM. ")
            + f"Stream-K: {plural(sk.units, 'worker')} share the work evenly, "
            f"{sk.time * 1e6:,.1f} µs.")


__all__ = ["OCCUPANCY_THREADS", "inflight_figure", "inflight_caption", "splitk_figure", "splitk_caption"]
