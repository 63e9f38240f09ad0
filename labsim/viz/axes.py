"""One set of axis ranges for the steps of an interactive figure (or the frames of an animation): the
union over the steps of what each numeric axis shows, so that moving a control shows a change instead of
a rescaled picture. Used by :mod:`labsim.viz.faces` and :mod:`labsim.viz.animate`.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Any, Sequence


def _numbers(vals) -> list[float]:
    if vals is None or isinstance(vals, str) or not hasattr(vals, "__iter__"):
        return []
    return [float(v) for v in vals if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)]


def _extents(fig) -> dict[str, tuple[float, float, bool]]:
    """Per numeric axis of ``fig`` ("xaxis", "yaxis2", ...): (low, high, has bars) of what its traces and
    data-referenced shapes put there. Stacked bars count by their stacked totals."""
    out: dict[str, list] = {}
    barmode = fig.layout.barmode
    stacks: dict[tuple, float] = {}

    def add(key, vals, bar=False):
        vals = [v for v in vals if math.isfinite(v)]
        if not vals:
            return
        lo, hi, b = out.get(key, (math.inf, -math.inf, False))
        out[key] = (min(lo, *vals), max(hi, *vals), b or bar)

    for t in fig.data:
        axes = {"x": "xaxis" + (getattr(t, "xaxis", None) or "x")[1:], "y": "yaxis" + (getattr(t, "yaxis", None) or "y")[1:]}
        if t.type == "bar":
            val = "x" if t.orientation == "h" else "y"
            cat = "y" if val == "x" else "x"
            v = _numbers(getattr(t, val))
            base = _numbers(t.base) if t.base is not None and not isinstance(t.base, numbers.Real) else \
                [float(t.base or 0)] * len(v)
            cats = list(getattr(t, cat)) if getattr(t, cat) is not None else list(range(len(v)))
            ends = []
            for i, x in enumerate(v):
                b = base[i] if i < len(base) else 0.0
                if barmode in ("stack", "relative") and t.base is None:
                    k = (axes[val], repr(cats[i]) if i < len(cats) else i, x >= 0)
                    b = stacks.get(k, 0.0)
                    stacks[k] = b + x
                ends += [b, b + x]
            add(axes[val], ends, bar=True)
            c = sorted(set(_numbers(getattr(t, cat))))
            # a bar is drawn around its position: half the smallest gap on each side
            half = min((b - a for a, b in zip(c, c[1:])), default=1.0) / 2
            add(axes[cat], [c[0] - half, c[-1] + half] if c else [])
        elif t.type in ("scatter", "scattergl"):
            for letter in "xy":
                add(axes[letter], _numbers(getattr(t, letter)))
    for sh in fig.layout.shapes or ():
        for letter in "xy":
            ref = getattr(sh, letter + "ref", None) or letter
            if re.fullmatch(letter + r"\d*", ref):
                add("xaxis" + ref[1:] if letter == "x" else "yaxis" + ref[1:],
                    _numbers([getattr(sh, letter + "0"), getattr(sh, letter + "1")]))
    return out


def _has_strings(trace, key: str) -> bool:
    """Does ``trace`` put strings (categories) on the axis ``key``?"""
    letter = key[0]
    if (getattr(trace, letter + "axis", None) or letter) != letter + key[5:] or letter not in trace._valid_props:
        return False
    vals = getattr(trace, letter, None)
    return vals is not None and not isinstance(vals, str) and any(isinstance(v, str) for v in vals)


def axis_info(fig) -> dict:
    """What :func:`shared_ranges` needs of one figure, taken once: its extents and, per axis, the
    properties that decide whether the axis may be shared. Small and independent of the figure."""
    ext = _extents(fig)
    axes = {}
    for key in ext:
        a = fig.layout[key] if key in fig.layout else None
        if a is None:
            continue
        axes[key] = dict(fixed=a.range is not None, type=a.type, visible=a.visible, rangemode=a.rangemode,
                         reversed=a.autorange == "reversed",
                         strings=any(_has_strings(t, key) for t in fig.data))
    return {"ext": ext, "axes": axes}


def shared_ranges(figs: Sequence[Any], infos: Sequence[dict] | None = None) -> dict[str, tuple[list[float], bool]]:
    """For each numeric axis of ``figs`` that may be shared: (range, reversed) giving the union over the
    figures (see :func:`share_axes`). Reads the figures only (or their :func:`axis_info` snapshots)."""
    infos = list(infos) if infos is not None else [axis_info(f) for f in figs]
    keys = {k for i in infos for k in i["ext"]}
    out = {}
    for key in sorted(keys):
        live = [(i["axes"][key], i["ext"][key]) for i in infos if key in i["ext"] and key in i["axes"]
                and i["axes"][key]["visible"] is not False]
        if not live or any(a["fixed"] or a["type"] in ("category", "multicategory", "date") for a, _ in live):
            continue
        # a category axis Plotly infers from strings
        if any(a["strings"] for a, _ in live):
            continue
        log = {a["type"] == "log" for a, _ in live}
        if len(log) != 1:
            continue
        log = log.pop()
        lo, hi = min(e[0] for _, e in live), max(e[1] for _, e in live)
        bars = any(e[2] for _, e in live)
        if log:
            if lo <= 0:
                continue
            lo, hi = math.log10(lo), math.log10(hi)
        elif bars or any(a["rangemode"] == "tozero" for a, _ in live):
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        pad = (hi - lo) * 0.05 or (abs(hi) * 0.1 if hi else 1.0)
        lo = lo - pad if (log or lo != 0) else lo
        hi = hi + pad if (log or hi != 0) else hi
        out[key] = ([lo, hi], any(a["reversed"] for a, _ in live))
    return out


def _apply_ranges(fig, ranges) -> None:
    for key, (rng, rev) in ranges.items():
        if key in fig.layout and fig.layout[key] is not None:
            fig.layout[key].update(range=[rng[1], rng[0]] if rev else list(rng), autorange=False)


def share_axes(figs: Sequence[Any]) -> None:
    """Give the precomputed steps of an interactive figure one range per numeric axis (the union over
    the steps), so that moving a control shows the change instead of rescaling it away. An axis a step
    fixes itself (``range``), a category axis, a hidden one and a log axis with values ≤ 0 keep Plotly's
    own autorange. Changes the figures in place."""
    ranges = shared_ranges(figs)
    for f in figs:
        _apply_ranges(f, {k: v for k, v in ranges.items() if k in _extents(f)})
