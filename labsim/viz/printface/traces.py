"""The print face's trace drawers: ``bar`` (stacked, grouped, with text), ``scatter`` (lines, markers,
text, fills) and ``heatmap`` (colour scales, cell text)."""
from __future__ import annotations
from ...support.errors import ArgumentError

import math
import numbers

from .style import PT_PER_PX, _colors, _dash, _fade, _num, _pos, _pt, _seq, _symbol, _text, _trace_positions, color


def _font(d: dict | None, ctx, scale=1.0) -> dict:
    d = d or {}
    return dict(fontsize=_pt(d.get("size", ctx["font_px"]) * scale),
                color=color(d.get("color"), ctx["font_color"]))


def _bar(A, t, group, stacks, ctx):
    """Bars of one trace, in Plotly's barmode (group, stack, relative, overlay), with their width."""
    from matplotlib.patches import Patch

    lay = ctx["lay"]
    horiz = t.get("orientation", "v") == "h"
    vl, cl = ("x", "y") if horiz else ("y", "x")
    vals = [_num(v) for v in _seq(t.get(vl)) or []]
    n = len(vals)
    pos_raw = _trace_positions(t, cl, n)
    pos = _pos(pos_raw, A.cats[cl])
    mode = lay.get("barmode") or "group"
    gap = lay.get("bargap")
    gap = 0.2 if gap is None else gap
    distinct = sorted({p for g in group for p in _pos(_trace_positions(g, cl, len(_seq(g.get(vl)) or [])), A.cats[cl])
                       if math.isfinite(p)})
    unit = min((b - a for a, b in zip(distinct, distinct[1:])), default=1.0) or 1.0
    visible = [g for g in group if g.get("visible") not in (False, "legendonly")]
    k = len(visible) if mode == "group" else 1
    idx = visible.index(t) if (mode == "group" and t in visible) else 0
    full = unit * (1 - gap)
    width = _seq(t.get("width"), n)
    widths = [float(w) for w in width] if width is not None else [full / k] * n
    offset = _seq(t.get("offset"), n)
    if offset is not None:
        centers = [p + float(o) + w / 2 for p, o, w in zip(pos, offset, widths)]
    else:
        centers = [p - full / 2 + (idx + 0.5) * (full / k) if width is None else p for p in pos]
    base = _seq(t.get("base"), n)
    bases = []
    for i, (p, v) in enumerate(zip(pos, vals)):
        if base is not None:
            b = _num(base[i])
        elif mode in ("stack", "relative"):
            key = (A.xkey, A.ykey, horiz, p, v >= 0 if mode == "relative" else True)
            b = stacks.get(key, 0.0)
            stacks[key] = b + (v if math.isfinite(v) else 0)
        else:
            b = 0.0
        bases.append(b)
    marker = t.get("marker") or {}
    cols = _seq(marker.get("color"), n)
    if cols is None:
        cols = [None] * n
    colors_ = [color(c, (0.39, 0.43, 0.98, 1)) for c in cols]
    op = marker.get("opacity", t.get("opacity", 1.0))
    line = marker.get("line") or {}
    lw = float(line.get("width", 0) or 0) * PT_PER_PX
    ecs = _colors(line.get("color"), n, (0.27, 0.27, 0.27, 1)) if lw else ["none"] * n
    ec = ecs[0] if ecs else "none"
    if isinstance(op, numbers.Real):
        colors_ = [_fade(c, op) for c in colors_]
    kw = dict(color=colors_, linewidth=lw)
    keep = [i for i in range(n) if math.isfinite(vals[i]) and math.isfinite(centers[i])]
    sel = lambda seq: [seq[i] for i in keep]
    if horiz:
        rects = A.ax.barh(sel(centers), sel(vals), height=sel(widths), left=sel(bases), edgecolor=sel(ecs),
                          **{**kw, "color": sel(colors_)})
    else:
        rects = A.ax.bar(sel(centers), sel(vals), width=sel(widths), bottom=sel(bases), edgecolor=sel(ecs),
                         **{**kw, "color": sel(colors_)})
    text = _seq(t.get("text"), n)
    tpos = t.get("textposition", "none" if text is None else "auto")
    if text is not None and t.get("texttemplate") not in (None, "%{text}"):
        raise ArgumentError(f"print face: cannot draw the bar texttemplate {t.get('texttemplate')!r}")
    if text is not None and tpos != "none":
        tposs = _seq(tpos, n)
        pending = getattr(A, "bar_texts", [])
        for j, i in enumerate(keep):
            if text[i] in (None, ""):
                continue
            pending.append((rects[j], _text(text[i]), tposs[i], horiz, colors_[i], t.get("textfont"),
                            t.get("insidetextfont"), t.get("outsidetextfont"), t.get("textangle")))
        A.bar_texts = pending
    return Patch(facecolor=colors_[0] if colors_ else None, edgecolor=ec, linewidth=lw)


def _contrast(c) -> tuple:
    r, g, b = c[:3]
    return (1, 1, 1, 1) if 0.299 * r + 0.587 * g + 0.114 * b < 0.55 else (0.13, 0.13, 0.13, 1)


def _bar_texts(A, ctx):
    """Bar labels, drawn once the axes have their final ranges: inside the bar where they fit (Plotly's
    "auto"), else just past its end."""
    pending = getattr(A, "bar_texts", [])
    if not pending:
        return
    fig = A.ax.figure
    renderer = fig.canvas.get_renderer()
    for rect, s, pos, horiz, c, tf, itf, otf, angle in pending:
        box = rect.get_window_extent(renderer)
        f = _font(tf, ctx)
        est_w = len(max(s.split("\n"), key=len)) * f["fontsize"] * 0.6 * fig.dpi / 72
        est_h = (s.count("\n") + 1) * f["fontsize"] * 1.3 * fig.dpi / 72
        fits = box.width >= est_w + 4 and box.height >= est_h
        inside = pos == "inside" or (pos == "auto" and fits)
        rot = 0 if angle in (None, "auto") else -float(angle)
        x = rect.get_x() + rect.get_width() / 2
        y = rect.get_y() + rect.get_height() / 2
        end_x, end_y = rect.get_x() + rect.get_width(), rect.get_y() + rect.get_height()
        if inside:
            ff = _font(itf or tf, ctx)
            if not (itf or tf or {}).get("color"):
                ff["color"] = _contrast(c)
            if horiz:
                A.ax.annotate(s, (end_x, y), xytext=(-3, 0), textcoords="offset points", ha="right", va="center",
                              rotation=rot, annotation_clip=False, **ff)
            else:
                A.ax.annotate(s, (x, end_y), xytext=(0, -3), textcoords="offset points", ha="center", va="top",
                              rotation=rot, annotation_clip=False, **ff)
        else:
            ff = _font(otf or tf, ctx)
            if horiz:
                neg = rect.get_width() < 0
                A.ax.annotate(s, (end_x, y), xytext=(-3 if neg else 3, 0), textcoords="offset points",
                              ha="right" if neg else "left", va="center", rotation=rot, annotation_clip=False, **ff)
            else:
                neg = rect.get_height() < 0
                A.ax.annotate(s, (x, end_y), xytext=(0, -3 if neg else 3), textcoords="offset points", ha="center",
                              va="top" if neg else "bottom", rotation=rot, annotation_clip=False, **ff)
    A.bar_texts = []


def _runs(x, y):
    """The runs of points between gaps (a None or NaN in x or y), as (xs, ys) pairs."""
    out, xs, ys = [], [], []
    for a, b in zip(x, y):
        if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            if xs:
                out.append((xs, ys))
            xs, ys = [], []
        else:
            xs.append(a)
            ys.append(b)
    if xs:
        out.append((xs, ys))
    return out


def _scatter(A, t, traces, i, ctx):
    from matplotlib.lines import Line2D

    ys = _seq(t.get("y"))
    xs = _seq(t.get("x"))
    n = len(ys if ys is not None else xs or [])
    if xs is None:
        xs = _trace_positions(t, "x", n)
    if ys is None:
        ys = _trace_positions(t, "y", n)
    x = _pos(xs, A.cats["x"])
    y = _pos(ys, A.cats["y"])
    mode = t.get("mode") or ("lines+markers" if n < 20 else "lines")
    line = t.get("line") or {}
    marker = t.get("marker") or {}
    lc = color(line.get("color") or (marker.get("color") if isinstance(marker.get("color"), str) else None),
               (0, 0, 0, 1))
    lw = float(line.get("width", 2)) * PT_PER_PX * 1.0
    op = t.get("opacity", 1.0)
    handle = None
    fill = t.get("fill")
    if fill and fill != "none":
        fc = color(t.get("fillcolor"), (*lc[:3], 0.5))
        if fill == "toself":  # as Plotly: each run between gaps (None) is a closed shape of its own
            for run in _runs(x, y):
                A.ax.fill(*run, facecolor=_fade(fc, op), edgecolor="none", zorder=1.5)
        elif fill in ("tozeroy", "tonexty"):
            lower = [0.0] * n
            if fill == "tonexty":
                prev = next((p for p in reversed(traces[:i]) if p.get("type", "scatter") == "scatter"), None)
                if prev is not None:
                    lower = _pos(_seq(prev.get("y")), A.cats["y"])
            A.ax.fill_between(x, lower, y, facecolor=_fade(fc, op), edgecolor="none", zorder=1.5)
        elif fill in ("tozerox", "tonextx"):
            A.ax.fill_betweenx(y, [0.0] * n, x, facecolor=_fade(fc, op), edgecolor="none", zorder=1.5)
        else:
            raise ArgumentError(f"print face: cannot draw the scatter fill {fill!r}")
        from matplotlib.patches import Patch
        handle = Patch(facecolor=fc, edgecolor=lc if "lines" in mode else "none", linewidth=lw)
    if "lines" in mode and line.get("width", 2) != 0:
        shape = line.get("shape", "linear")
        ds = {"linear": "default", "hv": "steps-post", "vh": "steps-pre", "hvh": "steps-mid", "spline": "default"}
        if shape not in ds:
            raise ArgumentError(f"print face: cannot draw the line shape {shape!r}")
        A.ax.plot(x, y, color=_fade(lc, op), linewidth=lw, linestyle=_dash(line.get("dash")),
                  drawstyle=ds[shape], zorder=2)
        if handle is None:
            handle = Line2D([], [], color=lc, linewidth=lw, linestyle=_dash(line.get("dash")))
    if "markers" in mode:
        mcol = marker.get("color")
        sizes = _seq(marker.get("size", 6), n)
        sym, open_ = _symbol(marker.get("symbol") if isinstance(marker.get("symbol"), (str, type(None))) else
                             marker.get("symbol")[0])
        mline = marker.get("line") or {}
        if isinstance(mcol, (list, tuple)) and not isinstance(mcol, str):
            cols = [color(c, lc) for c in mcol]
        else:
            cols = [color(mcol, lc)] * n
        mop = marker.get("opacity", 1.0)
        mop = [float(o) for o in mop] if isinstance(mop, (list, tuple)) else [float(mop)] * n
        cols = [(*c[:3], c[3] * o * op) for c, o in zip(cols, mop)]
        s = [(float(v) * PT_PER_PX) ** 2 for v in sizes]
        edges = _colors(mline.get("color"), n, (0.27, 0.27, 0.27, 1)) if mline.get("width") else "none"
        if sym in ("|", "_"):  # a line marker has no face: matplotlib draws it in its face colour
            A.ax.scatter(x, y, s=s, marker=sym, c=cols, linewidths=float(mline.get("width", 1.5)) * PT_PER_PX,
                         zorder=3)
        else:
            A.ax.scatter(x, y, s=s, marker=sym, facecolors="none" if open_ else cols,
                         edgecolors=cols if open_ else edges,
                         linewidths=float(mline.get("width", 1.5 if open_ else 0)) * PT_PER_PX, zorder=3)
        with_line = handle is not None and "lines" in mode  # Plotly's legend shows the line and the marker
        handle = Line2D([], [], color=(lc if with_line else (cols[0] if cols else lc)), marker=sym,
                        linestyle=_dash(line.get("dash")) if with_line else "none",
                        linewidth=lw if with_line else 0,
                        markersize=float(sizes[0] if sizes else 6) * PT_PER_PX,
                        markerfacecolor="none" if open_ else (cols[0] if cols else lc),
                        markeredgecolor=cols[0] if cols else lc)
    if "text" in mode:
        texts = _seq(t.get("text"), n) or []
        tp = _seq(t.get("textposition", "middle center"), n)
        tfont = dict(t.get("textfont") or {})
        tcols = tfont.pop("color", None)
        tcols = [color(c, ctx["font_color"]) for c in _seq(tcols, n)] if tcols is not None else [ctx["font_color"]] * n
        tsizes = _seq(tfont.pop("size", ctx["font_px"]), n)
        for j, s in enumerate(texts):
            if s in (None, "") or j >= n or not (math.isfinite(x[j]) and math.isfinite(y[j])):
                continue
            f = dict(fontsize=_pt(tsizes[j]), color=tcols[j])
            v, hz = (tp[j].split(" ") + ["center"])[:2] if " " in tp[j] else (tp[j], "center")
            dx = {"left": -4, "right": 4, "center": 0}[hz]
            dy = {"top": 4, "bottom": -4, "middle": 0}[v]
            ha = {"left": "right", "right": "left", "center": "center"}[hz]
            va = {"top": "bottom", "bottom": "top", "middle": "center"}[v]
            A.ax.annotate(_text(s), (x[j], y[j]), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                          zorder=4, annotation_clip=False, **f)
    return handle


def _colorscale(cs, name_hint=""):
    """A Plotly colour scale ([[0, c0], ..., [1, c1]] or a name) as a matplotlib colormap."""
    from matplotlib.colors import LinearSegmentedColormap

    if cs is None or isinstance(cs, str):
        import plotly.colors as pc
        cs = pc.get_colorscale(cs or "Plasma")
    stops = [(float(p), color(c)) for p, c in cs]
    return LinearSegmentedColormap.from_list(name_hint or "plotly", stops, N=512)


def _heatmap(A, t, ctx):
    import numpy as np

    zs = t.get("z")
    z = np.array([[_num(v) for v in row] for row in (zs if zs is not None else [])], dtype=float)
    if z.ndim != 2 or z.size == 0:
        return None
    ny, nx = z.shape
    xs, ys = _trace_positions(t, "x", nx), _trace_positions(t, "y", ny)
    x, y = _pos(xs, A.cats["x"]), _pos(ys, A.cats["y"])

    def edges(c, n):
        c = list(c)[:n]
        if len(c) == n + 1:
            return np.array(c, dtype=float)
        if n == 1:
            return np.array([c[0] - 0.5, c[0] + 0.5])
        c = np.array(c, dtype=float)
        mid = (c[1:] + c[:-1]) / 2
        return np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])

    ex, ey = edges(x, nx), edges(y, ny)
    zmin = t.get("zmin", np.nanmin(z) if np.isfinite(z).any() else 0)
    zmax = t.get("zmax", np.nanmax(z) if np.isfinite(z).any() else 1)
    cmap = _colorscale(t.get("colorscale"))
    if t.get("reversescale"):
        cmap = cmap.reversed()
    mesh = A.ax.pcolormesh(ex, ey, np.ma.masked_invalid(z), cmap=cmap, vmin=zmin, vmax=zmax, shading="flat",
                           edgecolors="none", zorder=1)
    # Plotly's gaps between cells: lines of the background's colour between rows and between columns
    bg = color(ctx["lay"].get("plot_bgcolor"), (1, 1, 1, 1))
    if t.get("ygap"):
        A.ax.hlines(ey[1:-1], ex[0], ex[-1], colors=[bg], linewidth=float(t["ygap"]) * PT_PER_PX, zorder=1.1)
    if t.get("xgap"):
        A.ax.vlines(ex[1:-1], ey[0], ey[-1], colors=[bg], linewidth=float(t["xgap"]) * PT_PER_PX, zorder=1.1)
    text = t.get("text")
    tt = t.get("texttemplate")
    if text is not None and tt not in (None, ""):
        if tt not in ("%{text}",):
            raise ArgumentError(f"print face: cannot draw the heatmap texttemplate {tt!r}")
        f = _font(t.get("textfont"), ctx)
        fixed = (t.get("textfont") or {}).get("color")
        for r in range(ny):
            row = text[r] if r < len(text) else []
            for c in range(nx):
                s = row[c] if c < len(row) else None
                if s in (None, ""):
                    continue
                cval = z[r, c]
                fc = cmap((cval - zmin) / ((zmax - zmin) or 1)) if math.isfinite(cval) else (1, 1, 1, 1)
                A.ax.text((ex[c] + ex[c + 1]) / 2, (ey[r] + ey[r + 1]) / 2, _text(s), ha="center", va="center",
                          fontsize=f["fontsize"], color=f["color"] if fixed else _contrast(fc), zorder=4)
    if t.get("showscale", True) is not False:
        A.ax.figure.colorbar(mesh, ax=A.ax, fraction=0.04, pad=0.02)
    return None


