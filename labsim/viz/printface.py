"""The print face of every figure: the *same* Plotly figure the other faces show, drawn with matplotlib.

One converter, :func:`to_matplotlib`, turns a Plotly figure into a matplotlib ``Figure`` (SVG, PDF, PNG),
so the printed figure cannot disagree with the website's or JupyterLab's: the data, colours (the
palette's roles, as the Plotly figure carries them), axis types and ranges, categories, shapes,
annotations and layout images are read from the Plotly figure itself. The caption goes under the
figure as text ("Figure C.N. caption" when the figure's number is known, else "Figure. caption").

What it draws (everything the book uses): ``bar`` traces (vertical, horizontal, stacked, grouped,
overlaid, with text), ``scatter`` traces (lines, markers, text, fills), ``heatmap`` traces (colour
scales, cell text), several axes (subplots by axis domains), log and category axes, axis titles,
ranges, ticks and reversed axes, equal-scale axes, ``rect`` and ``line`` shapes (data, paper or
axis-domain coordinates, pixel-sized), annotations (with arrows) and layout images (PNG/JPEG, and the
Graphviz drawings of :func:`~labsim.viz.draw_graph`, re-rendered by ``dot``). Anything else raises a
``ValueError`` naming the feature, rather than being left out of the print silently.

The face objects save themselves: ``Figure.save(path)``, ``Interactive.save(path, **controls)``,
``Animation.save(path, step=..., **controls)`` (a ``.gif`` plays every step), or :func:`save` for any
of them. With ``LABSIM_PRINT_DIR`` set (``make print``), every captioned figure a chapter displays is
also written there as ``fig-N.pdf`` and ``fig-N.png`` (``fig-N.gif`` for an animation), N its number
in the chapter, and listed in ``index.md``.

matplotlib is imported inside the functions (Agg backend), so ``import labsim.viz`` stays fast.
"""
from __future__ import annotations

import base64
import hashlib
import html
import io
import math
import numbers
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any, Sequence

#: what a still figure can be saved as, and an animation
STILL_FORMATS = (".svg", ".pdf", ".png")
ANIMATION_FORMATS = (".gif",) + STILL_FORMATS

#: Plotly's figure size is in CSS px; the print face draws 100 px per inch, so 1 px is 0.72 pt
PX_PER_INCH = 100.0
PT_PER_PX = 72.0 / PX_PER_INCH
#: the smallest text in print, in points
MIN_FONT_PT = 8.0
DEFAULT_WIDTH_PX = 760
PNG_DPI = 200
#: the most pixels a rendered Graphviz drawing may have (a larger one is rendered at a lower dpi)
MAX_PIXELS = 40_000_000
GIF_DPI = 100

_PLOTLY_DEFAULT_FONT = 12


def _new_figure(**kw):
    """A matplotlib Figure on the Agg canvas (no pyplot, no GUI backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    mfig = MplFigure(**kw)
    FigureCanvasAgg(mfig)
    return mfig


# ---- Graphviz drawings embedded as layout images -----------------------------------------------------
#: SVG text (sha1) -> the Graphviz DOT source it was drawn from; draw_graph registers every drawing
_DOT_BY_SVG: dict[str, str] = {}
_DOT_MAX = 1024


def register_dot(svg: str, source: str) -> None:
    """Remember that ``svg`` was drawn by Graphviz from ``source`` (the print face re-renders it)."""
    _DOT_BY_SVG[hashlib.sha1(svg.encode("utf-8")).hexdigest()] = source
    while len(_DOT_BY_SVG) > _DOT_MAX:
        _DOT_BY_SVG.pop(next(iter(_DOT_BY_SVG)))


def _dot_png(source: str, dpi: int = PNG_DPI):
    """A Graphviz DOT source rendered by ``dot`` as an RGBA image array."""
    import numpy as np
    from PIL import Image

    src = re.sub(r'bgcolor="?transparent"?', 'bgcolor="white"', source)
    try:
        out = subprocess.run(["dot", "-Tpng", f"-Gdpi={dpi}"], input=src.encode("utf-8"), capture_output=True,
                             check=True, timeout=60).stdout
    except FileNotFoundError:
        raise RuntimeError("the print face of a Graphviz drawing needs Graphviz's `dot` program "
                           "(apt/brew/conda install graphviz)") from None
    return np.asarray(Image.open(io.BytesIO(out)).convert("RGBA"))


def _svg_pt(svg: str) -> tuple[float, float]:
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"', svg)
    return (float(m.group(1)), float(m.group(2))) if m else (400.0, 400.0)


def _image_source(source: str):
    """A layout image's ``source`` (a data URI) as (natural width, height, render(width_px) -> RGBA array),
    or a ValueError naming what cannot be drawn. A Graphviz SVG is rendered by ``dot`` at the size it is
    shown (no resampling afterwards), a bitmap is resized."""
    import numpy as np
    from PIL import Image

    m = re.match(r"data:image/([\w+.-]+);base64,(.*)", source or "", re.S)
    if not m:
        raise ValueError(f"print face: a layout image's source must be a data: URI, got {str(source)[:40]!r}")
    kind, data = m.group(1), base64.b64decode(m.group(2))
    if kind == "svg+xml":
        dot = _DOT_BY_SVG.get(hashlib.sha1(data).hexdigest())
        if dot is None:
            raise ValueError("print face: a layout image is an SVG that labsim did not draw with Graphviz "
                             "(draw_graph), so it cannot be drawn in print; embed a PNG instead")
        w, h = _svg_pt(data.decode("utf-8", "replace"))
        return w, h, lambda px: _dot_png(dot, dpi=max(10.0, 72.0 * px / w))
    if kind in ("png", "jpeg", "jpg", "gif", "webp"):
        im = Image.open(io.BytesIO(data)).convert("RGBA")

        def render(px):
            px = max(1, int(round(px)))
            out = im if px >= im.width else im.resize((px, max(1, round(im.height * px / im.width))), Image.LANCZOS)
            return np.asarray(out)
        return float(im.width), float(im.height), render
    raise ValueError(f"print face: layout images of type image/{kind} cannot be drawn in print "
                     f"(PNG, JPEG and Graphviz SVG can)")


# ---- small readers ------------------------------------------------------------------------------------
_NAMED = {"transparent": (0, 0, 0, 0)}


def color(c, default=None):
    """A Plotly colour ("#RRGGBB", "rgb(...)", "rgba(...)", a CSS name) as a matplotlib RGBA tuple."""
    from matplotlib.colors import to_rgba

    if c is None:
        return default
    if isinstance(c, (tuple, list)):
        return to_rgba(c)
    s = str(c).strip()
    if s in _NAMED:
        return _NAMED[s]
    m = re.fullmatch(r"rgba?\(([^)]*)\)", s.replace(" ", ""))
    if m:
        parts = [float(p.rstrip("%")) for p in m.group(1).split(",")]
        r, g, b = (p / 255 for p in parts[:3])
        return (r, g, b, parts[3] if len(parts) > 3 else 1.0)
    try:
        return to_rgba(s)
    except ValueError:
        raise ValueError(f"print face: cannot read the colour {c!r}") from None


def _colors(v, n: int, default) -> list:
    """A colour, or a list of them (one per point), as n matplotlib colours."""
    if isinstance(v, (list, tuple)) and not (len(v) in (3, 4) and all(isinstance(x, numbers.Real) for x in v)):
        out = [color(c, default) for c in v]
        return (out + [default] * n)[:n]
    return [color(v, default)] * n


def _fade(c, opacity):
    """A colour with Plotly's opacity folded into its alpha (matplotlib's ``alpha=`` would replace the
    colour's own alpha: a transparent fill would turn opaque)."""
    if c is None or isinstance(c, str):
        return c
    o = 1.0 if opacity is None else float(opacity)
    return (*c[:3], (c[3] if len(c) > 3 else 1.0) * o)


def _text(s) -> str:
    """Plotly's HTML-ish text as plain text for matplotlib (line breaks kept, tags dropped, ``$``
    escaped so matplotlib does not read it as mathematics)."""
    if s is None:
        return ""
    s = str(s)
    s = re.sub(r"<br\s*/?>", "\n", s)
    s = re.sub(r"<sup>(.*?)</sup>", lambda m: "^" + m.group(1), s)
    s = re.sub(r"<sub>(.*?)</sub>", lambda m: "_" + m.group(1), s)
    s = re.sub(r"<[^>]+>", "", s)
    s = html.unescape(s)
    return s.replace("$", r"\$")


def _bold(s) -> bool:
    return bool(s) and bool(re.fullmatch(r"\s*<b>.*</b>\s*", str(s), re.S))


def _pt(px, floor: float = MIN_FONT_PT) -> float:
    return max(floor, float(px) * PT_PER_PX)


_DASH = {"solid": "-", "dot": (0, (1, 2)), "dash": (0, (4, 3)), "longdash": (0, (8, 3)),
         "dashdot": (0, (4, 2, 1, 2)), "longdashdot": (0, (8, 2, 1, 2))}


def _dash(d):
    if d is None:
        return "-"
    if d in _DASH:
        return _DASH[d]
    nums = re.findall(r"[\d.]+", str(d))
    if nums:
        return (0, tuple(float(n) * PT_PER_PX for n in nums))
    raise ValueError(f"print face: cannot draw the line dash {d!r}")


_SYMBOLS = {"circle": "o", "square": "s", "diamond": "D", "triangle-up": "^", "triangle-down": "v",
            "triangle-left": "<", "triangle-right": ">", "x": "X", "cross": "P", "star": "*", "hexagon": "h",
            "pentagon": "p", "line-ns": "|", "line-ew": "_", "diamond-tall": "d", "hourglass": "X"}


def _symbol(s):
    s = "circle" if s is None else str(s)
    open_ = s.endswith("-open")
    base = s[:-5] if open_ else s
    if base not in _SYMBOLS:
        raise ValueError(f"print face: cannot draw the marker symbol {s!r}")
    return _SYMBOLS[base], open_


def _seq(v, n=None):
    """A trace attribute as a list (a scalar repeated ``n`` times), or None."""
    if v is None:
        return None
    if isinstance(v, (str, numbers.Number)) or not hasattr(v, "__iter__"):
        return [v] * (n if n is not None else 1)
    return list(v)


def _num(v) -> float:
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _decoded(v):
    """Plotly's JSON with its typed arrays (``{"dtype": "i1", "bdata": base64, "shape": "5, 40"}``,
    how Plotly stores NumPy arrays) turned back into lists."""
    if isinstance(v, dict):
        if "bdata" in v and "dtype" in v:
            import numpy as np
            a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
            shape = v.get("shape")
            if shape:
                a = a.reshape([int(n) for n in str(shape).split(",")])
            return a.tolist()
        return {k: _decoded(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_decoded(x) for x in v]
    if hasattr(v, "tolist") and hasattr(v, "dtype"):
        return v.tolist()
    return v


def _layout(fig) -> dict:
    """The figure's layout as a plain dict, with its template's layout under it (the template's values
    are the defaults)."""
    lay = _decoded(fig.layout.to_plotly_json())
    tpl = lay.pop("template", None) or {}
    base = dict(tpl.get("layout", {})) if isinstance(tpl, dict) else {}
    return _merge(base, lay)


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _get(d, *path, default=None):
    for p in path:
        if not isinstance(d, dict) or p not in d or d[p] is None:
            return default
        d = d[p]
    return d


def _axis_name(ref: str, letter: str) -> str:
    """"x2" -> "xaxis2"; "x" -> "xaxis"."""
    return letter + "axis" + (ref[1:] if ref else "")


# ---- the converter ----------------------------------------------------------------------------------
SUPPORTED_TRACES = ("bar", "scatter", "scattergl", "heatmap")
SUPPORTED_SHAPES = ("rect", "line")


class _Axes:
    """One matplotlib Axes for a Plotly (xaxis, yaxis) pair, with the category positions of each."""

    def __init__(self, ax, xkey, ykey, xlay, ylay):
        self.ax, self.xkey, self.ykey, self.xlay, self.ylay = ax, xkey, ykey, xlay, ylay
        self.cats = {"x": None, "y": None}


def _categories(traces, letter: str, axlay: dict) -> list | None:
    """The category order of an axis (Plotly's: ``categoryarray``, else order of first appearance),
    or None when the axis is numeric."""
    typ = axlay.get("type")
    vals = []
    strings = False
    for t in traces:
        v = _seq(t.get(letter))
        if v is None and t.get("type") == "heatmap":
            continue
        for x in v or ():
            if x is None or (isinstance(x, float) and math.isnan(x)):
                continue
            if isinstance(x, str):
                strings = True
            if x not in vals:
                vals.append(x)
    if typ not in ("category", "multicategory") and not (typ in (None, "-") and strings):
        return None
    order = axlay.get("categoryorder")
    arr = axlay.get("categoryarray")
    if order == "array" and arr is not None:
        cats = list(arr) + [v for v in vals if v not in list(arr)]
    elif order in ("category ascending", "category descending"):
        cats = sorted(vals, key=str, reverse=order.endswith("descending"))
    else:
        cats = vals
    return cats


def _pos(vals, cats):
    """Positions on an axis: category indices, or the numbers themselves."""
    if vals is None:
        return None
    if cats is None:
        return [_num(v) for v in vals]
    idx = {repr(c): i for i, c in enumerate(cats)}
    return [idx.get(repr(v), math.nan) for v in vals]


def _trace_positions(t, letter, n):
    """A trace's positions along ``letter`` (explicit values, else x0 + i·dx)."""
    v = _seq(t.get(letter))
    if v is not None:
        return v
    return [t.get(letter + "0", 0) + i * t.get("d" + letter, 1) for i in range(n)]


def to_matplotlib(plotly_fig, *, caption: str | None = None, number: str | None = None, width_px: int | None = None):
    """The print face of ``plotly_fig``: a matplotlib Figure drawing the same data.

    ``caption`` (text or the book's caption HTML) goes under the figure, after "Figure" and ``number``
    ("Figure 3.2."); without it the figure's Plotly title is the caption. A trace type, shape type or
    image the print face cannot draw raises a ValueError that names it."""
    fig = plotly_fig
    lay = _layout(fig)
    if caption is None:
        caption = _text(_get(lay, "title", "text", default="") or "")
    else:
        caption = _text(caption)
    traces = [_decoded(t.to_plotly_json()) for t in fig.data]
    for t in traces:
        t.setdefault("type", "scatter")
        if t["type"] not in SUPPORTED_TRACES:
            raise ValueError(f"print face: cannot draw a {t['type']!r} trace; it draws {', '.join(SUPPORTED_TRACES)}")
    for s in lay.get("shapes") or ():
        if s.get("type", "rect") not in SUPPORTED_SHAPES:
            raise ValueError(f"print face: cannot draw a {s.get('type')!r} shape; it draws {', '.join(SUPPORTED_SHAPES)}")
    width = float(width_px or lay.get("width") or max(DEFAULT_WIDTH_PX, (lay.get("meta") or {}).get("min_width", 0)
                                                      if isinstance(lay.get("meta"), dict) else DEFAULT_WIDTH_PX))
    height = float(lay.get("height") or 450)
    mfig = _new_figure(figsize=(width / PX_PER_INCH, height / PX_PER_INCH))
    font_px = _get(lay, "font", "size", default=_PLOTLY_DEFAULT_FONT)
    font_color = color(_get(lay, "font", "color"), (0.13, 0.13, 0.13, 1))

    # plot area: Plotly's margins (defaults 80/80/100/80 px) in figure fractions; axis domains inside it
    m = lay.get("margin") or {}
    ml, mr = m.get("l", 80), m.get("r", 80)
    mt, mb = m.get("t", 100), m.get("b", 80)
    # room for tick labels, axis titles and the legend, which Plotly's automargin adds to the margins
    # (an estimate: the saved file is trimmed to what is drawn, so this only sets the plot area's size)
    xl, yl = lay.get("xaxis") or {}, lay.get("yaxis") or {}
    if xl.get("visible") is not False and traces:
        mb += 22 + (22 * (1 + str(_get(xl, "title", "text", default="")).count("<br>"))
                    if _get(xl, "title", "text") else 0)
        if len([t for t in traces if t.get("name") and t.get("showlegend") is not False]) > 1 \
                and lay.get("showlegend") is not False:
            mb += 30
    if yl.get("visible") is not False and traces:
        longest = max((len(str(v)) for t in traces for v in (_seq(t.get("y")) or []) if isinstance(v, str)), default=5)
        ml += min(200, 7 * longest) + (22 if _get(yl, "title", "text") else 0)
    left, right = ml / width, 1 - mr / width
    bottom, top = mb / height, 1 - mt / height
    if right - left < 0.2:
        left, right = 0.1, 0.95
    if top - bottom < 0.2:
        bottom, top = 0.15, 0.9

    def paper_to_fig(px, py):
        return left + px * (right - left), bottom + py * (top - bottom)

    # one Axes per (xaxis, yaxis) pair in use (by a trace, or by a shape/annotation/image in data units)
    pairs: list[tuple[str, str]] = []
    for t in traces:
        p = (_axis_name(t.get("xaxis", "x"), "x"), _axis_name(t.get("yaxis", "y"), "y"))
        if p not in pairs:
            pairs.append(p)
    for item in list(lay.get("shapes") or ()) + list(lay.get("annotations") or ()) + list(lay.get("images") or ()):
        xr, yr = item.get("xref", "x"), item.get("yref", "y")
        xr, yr = xr.split(" ")[0], yr.split(" ")[0]
        if xr != "paper" and yr != "paper":
            p = (_axis_name(xr, "x"), _axis_name(yr, "y"))
            if p not in pairs:
                pairs.append(p)
    axes: dict[tuple[str, str], _Axes] = {}
    for xk, yk in pairs:
        xl, yl = lay.get(xk) or {}, lay.get(yk) or {}
        if xl.get("overlaying") or yl.get("overlaying"):
            raise ValueError(f"print face: cannot draw overlaying axes ({xk}/{yk} overlays another)")
        dx, dy = xl.get("domain") or [0, 1], yl.get("domain") or [0, 1]
        x0, y0 = paper_to_fig(dx[0], dy[0])
        x1, y1 = paper_to_fig(dx[1], dy[1])
        ax = mfig.add_axes((x0, y0, x1 - x0, y1 - y0))
        axes[(xk, yk)] = _Axes(ax, xk, yk, xl, yl)
    if not axes:  # a figure of shapes and annotations in paper coordinates only
        ax = mfig.add_axes((left, bottom, right - left, top - bottom))
        axes[("xaxis", "yaxis")] = _Axes(ax, "xaxis", "yaxis", lay.get("xaxis") or {}, lay.get("yaxis") or {})
        ax.set_axis_off()
    # category orders, per Plotly axis (shared by every Axes that uses it)
    cats: dict[str, list | None] = {}
    for (xk, yk), A in axes.items():
        for letter, key, axl in (("x", xk, A.xlay), ("y", yk, A.ylay)):
            if key not in cats:
                on = [t for t in traces if _axis_name(t.get(letter + "axis", letter), letter) == key]
                cats[key] = _categories(on, letter, axl)
            A.cats[letter] = cats[key]

    handles: dict[str, Any] = {}
    n_legend = 0
    ctx = dict(lay=lay, font_px=font_px, font_color=font_color)
    bar_groups: dict[tuple, list] = {}
    for t in traces:
        A = axes[(_axis_name(t.get("xaxis", "x"), "x"), _axis_name(t.get("yaxis", "y"), "y"))]
        if t["type"] == "bar":
            bar_groups.setdefault((A.xkey, A.ykey, t.get("orientation", "v")), []).append(t)
    stacks: dict[tuple, float] = {}
    for i, t in enumerate(traces):
        A = axes[(_axis_name(t.get("xaxis", "x"), "x"), _axis_name(t.get("yaxis", "y"), "y"))]
        if t.get("visible") is False or t.get("visible") == "legendonly":
            continue
        if t["type"] == "bar":
            h = _bar(A, t, bar_groups[(A.xkey, A.ykey, t.get("orientation", "v"))], stacks, ctx)
        elif t["type"] == "heatmap":
            h = _heatmap(A, t, ctx)
        else:
            h = _scatter(A, t, traces, i, ctx)
        shows = t.get("showlegend")
        if h is not None and t.get("name") and shows is not False:
            n_legend += 1
            handles.setdefault(_text(t["name"]), h)
    _shape_extents(axes, lay.get("shapes") or ())
    for A in axes.values():
        _axis(A, lay, ctx)
    for s in lay.get("shapes") or ():
        _shape(mfig, axes, s, paper_to_fig, height, ctx)
    for img in lay.get("images") or ():
        _image(mfig, axes, img, paper_to_fig)
    for a in lay.get("annotations") or ():
        _annotation(mfig, axes, a, paper_to_fig, ctx)
    for A in axes.values():
        _bar_texts(A, ctx)

    # legend and caption under everything drawn so far
    show_legend = lay.get("showlegend")
    if show_legend is None:
        show_legend = n_legend > 1
    renderer = mfig.canvas.get_renderer()
    bbox = mfig.get_tightbbox(renderer)
    y = bbox.y0 / (height / PX_PER_INCH)  # figure fraction of the lowest thing drawn
    fw = width / PX_PER_INCH
    x_left = max(bbox.x0 / fw, -0.5)  # and of the leftmost: legend and caption start there
    if show_legend and handles:
        leg_font = _pt(_get(lay, "legend", "font", "size", default=font_px))
        leg = mfig.legend(list(handles.values()), list(handles.keys()), loc="upper left",
                          bbox_to_anchor=(x_left, y - 0.01), ncol=max(1, min(len(handles), int(fw * 72 / (leg_font * 12)) or 1)),
                          frameon=False, fontsize=leg_font, handlelength=1.6, columnspacing=1.2)
        lb = leg.get_window_extent(renderer)
        y = lb.y0 / mfig.dpi / (height / PX_PER_INCH)
    label = "Figure" + (f" {number}" if number else "") + "."
    if caption:
        size = _pt(font_px)
        chars = max(30, int(fw * 72 / (size * 0.5)))
        body = "\n".join(textwrap.fill(p, chars) for p in caption.split("\n"))
        mfig.text(x_left, y - 0.015, f"{label} {body}", ha="left", va="top", fontsize=size,
                  color=(0.15, 0.15, 0.15, 1), wrap=False)
    return mfig


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
        raise ValueError(f"print face: cannot draw the bar texttemplate {t.get('texttemplate')!r}")
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
        if fill == "toself":
            A.ax.fill(x, y, facecolor=_fade(fc, op), edgecolor="none", zorder=1.5)
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
            raise ValueError(f"print face: cannot draw the scatter fill {fill!r}")
        from matplotlib.patches import Patch
        handle = Patch(facecolor=fc, edgecolor=lc if "lines" in mode else "none", linewidth=lw)
    if "lines" in mode and line.get("width", 2) != 0:
        shape = line.get("shape", "linear")
        ds = {"linear": "default", "hv": "steps-post", "vh": "steps-pre", "hvh": "steps-mid", "spline": "default"}
        if shape not in ds:
            raise ValueError(f"print face: cannot draw the line shape {shape!r}")
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
            raise ValueError(f"print face: cannot draw the heatmap texttemplate {tt!r}")
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


def _log_label(v: float) -> str:
    """A log-axis tick label as Plotly writes it (its default exponent format "B"): 0.01, 1, 1000, 10k,
    1M, 1B."""
    if v <= 0:
        return ""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e4, "k")):
        if v >= scale:
            q = v / (1e3 if suffix == "k" else scale)
            return f"{q:g}{suffix}"
    return f"{v:g}"


def _axis(A, lay, ctx):
    """Axis type, range, ticks, title, grid and visibility of one Axes, from its Plotly axes."""
    ax = A.ax
    for letter, axl in (("x", A.xlay), ("y", A.ylay)):
        axis = ax.xaxis if letter == "x" else ax.yaxis
        set_scale = ax.set_xscale if letter == "x" else ax.set_yscale
        set_lim = ax.set_xlim if letter == "x" else ax.set_ylim
        get_lim = ax.get_xlim if letter == "x" else ax.get_ylim
        typ = axl.get("type")
        cats = A.cats[letter]
        log = typ == "log"
        if log:
            set_scale("log")
        rng = axl.get("range")
        rev = axl.get("autorange") == "reversed"
        if rng is not None and None not in rng and axl.get("autorange") is not True:
            lo, hi = (10 ** float(rng[0]), 10 ** float(rng[1])) if log else (float(rng[0]), float(rng[1]))
            set_lim(lo, hi)
        else:
            if cats is not None:
                set_lim(-0.5, len(cats) - 0.5)
            if axl.get("rangemode") == "tozero" and not log:
                lo, hi = get_lim()
                set_lim(min(lo, 0), max(hi, 0))
            if rev:
                lo, hi = get_lim()
                set_lim(hi, lo)
        if cats is not None:
            (ax.set_xticks if letter == "x" else ax.set_yticks)(range(len(cats)), [_text(c) for c in cats])
        tickvals, ticktext = axl.get("tickvals"), axl.get("ticktext")
        if tickvals is not None:
            tv = _pos(tickvals, cats) if cats is not None else [_num(v) for v in tickvals]
            labels = ([_text(s) for s in ticktext] if ticktext is not None else
                      [_log_label(v) for v in tv] if log else None)  # as Plotly labels them: 2, 4, ..., 256
            (ax.set_xticks if letter == "x" else ax.set_yticks)(tv, labels)
            if log:  # only the given ticks: no unlabelled minor ticks and grid lines between them
                from matplotlib.ticker import NullFormatter, NullLocator
                axis.set_minor_locator(NullLocator())
                axis.set_minor_formatter(NullFormatter())
        elif axl.get("dtick") not in (None, "") and not log and cats is None:
            from matplotlib.ticker import MultipleLocator
            try:
                axis.set_major_locator(MultipleLocator(float(axl["dtick"])))
            except (TypeError, ValueError):
                pass
        elif cats is None and not log:
            # about as many ticks as Plotly puts on an axis of this length (one per ~80 px)
            from matplotlib.ticker import MaxNLocator
            pos = ax.get_position()
            length_px = (pos.width * ax.figure.get_figwidth() if letter == "x" else
                         pos.height * ax.figure.get_figheight()) * PX_PER_INCH
            axis.set_major_locator(MaxNLocator(nbins=max(2, int(length_px / 80)), steps=[1, 2, 2.5, 5, 10]))
        if log and tickvals is None:
            # Plotly's log ticks: decades when dtick is 1 (labsim's style for two decades or more), else
            # 1, 2, 5 in each decade; the other grid lines unlabelled
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
            lo, hi = sorted(get_lim())
            decades = str(axl.get("dtick")) == "1" or (lo > 0 and hi / lo >= 100 and not axl.get("tickformat"))
            axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if decades else (1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _pos: _log_label(v)))
            axis.set_minor_formatter(NullFormatter())
        tf = _font(axl.get("tickfont"), ctx)
        ax.tick_params(axis=letter, which="both", labelsize=tf["fontsize"], labelcolor=tf["color"], length=0, pad=3)
        if axl.get("tickangle") not in (None, "auto"):
            for lab in axis.get_ticklabels():
                lab.set_rotation(-float(axl["tickangle"]))
        if axl.get("showticklabels") is False:
            ax.tick_params(axis=letter, labelbottom=False, labelleft=False, labeltop=False, labelright=False)
        title = axl.get("title")
        ttext = title.get("text") if isinstance(title, dict) else title
        if ttext:
            tf = _font(title.get("font") if isinstance(title, dict) else None, ctx)
            (ax.set_xlabel if letter == "x" else ax.set_ylabel)(_text(ttext), **tf)
        if axl.get("side") in ("top", "right"):
            (axis.set_label_position)(axl["side"])
            axis.set_ticks_position(axl["side"])
        grid = axl.get("showgrid")
        if grid is None:
            grid = cats is None  # Plotly's grid lines; a category axis here draws none
        if grid:
            axis.grid(True, color=color(axl.get("gridcolor"), (0.9, 0.9, 0.9, 1)), linewidth=0.6, zorder=0)
        else:
            axis.grid(False)
        if grid and log:
            axis.grid(True, which="minor", color=(0.95, 0.95, 0.95, 1), linewidth=0.4)
        if axl.get("visible") is False:
            axis.set_visible(False)
            for side in (("bottom", "top") if letter == "x" else ("left", "right")):
                ax.spines[side].set_visible(False)
    ax.set_axisbelow(True)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    for letter, axl in (("x", A.xlay), ("y", A.ylay)):
        if axl.get("showline") and axl.get("visible") is not False:
            ax.spines["bottom" if letter == "x" else "left"].set_visible(True)
            ax.spines["bottom" if letter == "x" else "left"].set_color(color(axl.get("linecolor"), (0.3, 0.3, 0.3, 1)))
    if A.ylay.get("scaleanchor") or A.xlay.get("scaleanchor"):
        ratio = float(A.ylay.get("scaleratio") or A.xlay.get("scaleratio") or 1)
        ax.set_aspect(ratio, adjustable="datalim")
    ax.set_facecolor(color(lay.get("plot_bgcolor"), (1, 1, 1, 1)))


def _ref(mfig, axes, ref: str, letter: str):
    """A Plotly ``xref``/``yref`` as (Axes, transform kind): "paper", "data" or "domain"."""
    ref = ref or letter
    kind = "data"
    if ref.endswith(" domain"):
        ref, kind = ref[: -len(" domain")], "domain"
    if ref == "paper":
        return None, "paper"
    key = _axis_name(ref, letter)
    for (xk, yk), A in axes.items():
        if (xk if letter == "x" else yk) == key:
            return A, kind
    raise ValueError(f"print face: a shape or annotation refers to {ref!r}, an axis the figure does not have")


def _transform(mfig, axes, xref, yref, paper_to_fig):
    """A matplotlib transform for points given in Plotly's (xref, yref) coordinates, and the Axes (or
    None) they belong to. On a log axis Plotly gives annotation and image positions in log10 units;
    the caller converts them."""
    import matplotlib.transforms as mt

    ax_, kx = _ref(mfig, axes, xref, "x")
    ay_, ky = _ref(mfig, axes, yref, "y")
    (l, b), (r, t) = paper_to_fig(0, 0), paper_to_fig(1, 1)
    paper = mt.Affine2D().scale(r - l, t - b).translate(l, b) + mfig.transFigure

    def part(A, kind, letter):
        if kind == "paper":
            return paper
        if kind == "domain":
            return A.ax.transAxes
        return A.ax.transData

    tx, ty = part(ax_, kx, "x"), part(ay_, ky, "y")
    owner = ax_ or ay_
    return mt.blended_transform_factory(tx, ty), owner, (kx, ky), (ax_, ay_)


def _is_log(A, letter):
    return A is not None and (A.xlay if letter == "x" else A.ylay).get("type") == "log"


def _shape_extents(axes, shapes) -> None:
    """Plotly's autorange covers the shapes drawn in data coordinates (an add_hline below the bars is
    in view): their ends join each axis's data limits before the ranges are set."""
    import numpy as np

    touched = set()
    for s in shapes:
        for letter in "xy":
            ref = s.get(letter + "ref", letter) or letter
            if ref == "paper" or ref.endswith(" domain") or s.get(letter + "sizemode") == "pixel":
                continue
            key = _axis_name(ref, letter)
            A = next((A for (xk, yk), A in axes.items() if (xk if letter == "x" else yk) == key), None)
            if A is None or A.cats[letter] is not None:
                continue
            vals = np.array([_num(s.get(letter + "0")), _num(s.get(letter + "1"))])
            if (A.xlay if letter == "x" else A.ylay).get("type") == "log":
                vals = vals[vals > 0]
            vals = vals[np.isfinite(vals)]
            if vals.size:
                bb = A.ax.dataLim
                (bb.update_from_data_x if letter == "x" else bb.update_from_data_y)(vals, ignore=False)
                touched.add(id(A))
    for A in axes.values():
        if id(A) in touched:
            A.ax.autoscale_view()


def _shape(mfig, axes, s, paper_to_fig, height_px, ctx):
    import matplotlib.transforms as mt
    from matplotlib.patches import Rectangle
    from matplotlib.lines import Line2D

    kind = s.get("type", "rect")
    trans, owner, kinds, (ax_, ay_) = _transform(mfig, axes, s.get("xref", "x"), s.get("yref", "y"), paper_to_fig)
    line = s.get("line") or {}
    lw = float(line.get("width", 2)) * PT_PER_PX
    op = s.get("opacity", 1.0)
    lc = _fade(color(line.get("color"), (0.27, 0.27, 0.27, 1)), op)
    vals = {}
    for letter in "xy":
        A = ax_ if letter == "x" else ay_
        cats = A.cats[letter] if A is not None and kinds["xy".index(letter)] == "data" else None
        for end in "01":
            v = s.get(letter + end)
            vals[letter + end] = _pos([v], cats)[0] if cats is not None and isinstance(v, str) else _num(v)
    # pixel-sized shapes: (x|y)sizemode "pixel" puts the ends in pixels from an anchor in data units
    offsets = {"x": (0.0, 0.0), "y": (0.0, 0.0)}
    for letter in "xy":
        if s.get(letter + "sizemode") == "pixel":
            anchor = _num(s.get(letter + "anchor"))
            offsets[letter] = (vals[letter + "0"], vals[letter + "1"])
            vals[letter + "0"] = vals[letter + "1"] = anchor
    layer = s.get("layer", "above")
    z = 0.5 if layer == "below" else 5
    fill = _fade(color(s.get("fillcolor"), (0, 0, 0, 0)), op)
    target = owner.ax if owner is not None else next(iter(axes.values())).ax  # paper: any Axes annotates
    if kind == "line":
        xs = [vals["x0"], vals["x1"]]
        ys = [vals["y0"], vals["y1"]]
        if any(offsets[l] != (0.0, 0.0) for l in "xy"):
            # pixel-sized: each end is its point (anchor on the pixel-sized axis) moved by its pixel offset
            ends = [mt.offset_copy(trans, fig=mfig, x=offsets["x"][i] * PT_PER_PX, y=offsets["y"][i] * PT_PER_PX,
                                   units="points") for i in (0, 1)]
            ann = target.annotate("", (xs[1], ys[1]), xycoords=ends[1], xytext=(xs[0], ys[0]), textcoords=ends[0],
                                  annotation_clip=False,
                                  arrowprops=dict(arrowstyle="-", color=lc, linewidth=lw, linestyle=_dash(line.get("dash")),
                                                  shrinkA=0, shrinkB=0), zorder=z)
            _unclipped(ann)
            return
        art = Line2D(xs, ys, transform=trans, color=lc, linewidth=lw, linestyle=_dash(line.get("dash")), zorder=z)
        if owner is not None:
            art.set_clip_on(False)
            owner.ax.add_artist(art)
        else:
            mfig.add_artist(art)
        return
    if any(offsets[l] != (0.0, 0.0) for l in "xy"):
        raise ValueError("print face: cannot draw a pixel-sized rect shape")
    rect = Rectangle((vals["x0"], vals["y0"]), vals["x1"] - vals["x0"], vals["y1"] - vals["y0"], transform=trans,
                     facecolor=fill, edgecolor=lc if lw > 0 else "none", linewidth=lw,
                     linestyle=_dash(line.get("dash")), zorder=z)
    if owner is not None:
        rect.set_clip_on(False)
        owner.ax.add_patch(rect)
    else:
        mfig.add_artist(rect)


def _annotation(mfig, axes, a, paper_to_fig, ctx):
    trans, owner, kinds, (ax_, ay_) = _transform(mfig, axes, a.get("xref", "x"), a.get("yref", "y"), paper_to_fig)
    x, y = _num(a.get("x", 0.5 if kinds[0] != "data" else 0)), _num(a.get("y", 0.5 if kinds[1] != "data" else 0))
    for letter, A, kind in (("x", ax_, kinds[0]), ("y", ay_, kinds[1])):
        v = a.get(letter)
        if kind == "data" and A is not None:
            if isinstance(v, str) and A.cats[letter] is not None:
                (x, y) = (_pos([v], A.cats["x"])[0], y) if letter == "x" else (x, _pos([v], A.cats["y"])[0])
            elif _is_log(A, letter):
                if letter == "x":
                    x = 10 ** x
                else:
                    y = 10 ** y
    text = _text(a.get("text", ""))
    f = _font(a.get("font"), ctx)
    arrow = a.get("showarrow", True)
    xa, ya = a.get("xanchor", "auto"), a.get("yanchor", "auto")
    ha = {"left": "left", "right": "right", "center": "center"}.get(xa, "center")
    va = {"top": "top", "bottom": "bottom", "middle": "center"}.get(ya, "center")
    dx, dy = float(a.get("xshift", 0) or 0) * PT_PER_PX, float(a.get("yshift", 0) or 0) * PT_PER_PX
    # Plotly hides an annotation whose position on a data axis is outside that axis's range (e.g.
    # add_vline's label on a log axis, which Plotly reads as 10**x)
    for v, A, kind, lim in ((x, ax_, kinds[0], "get_xlim"), (y, ay_, kinds[1], "get_ylim")):
        if kind == "data" and A is not None:
            lo, hi = sorted(getattr(A.ax, lim)())
            if not (lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)):
                return None
    kw = dict(ha=ha, va=va, fontweight="bold" if _bold(a.get("text")) else None, annotation_clip=False,
              multialignment={"left": "left", "right": "right"}.get(a.get("align"), "center"), zorder=6, **f)
    if a.get("textangle") not in (None, 0):
        kw["rotation"] = -float(a["textangle"])
    if a.get("bgcolor") or a.get("bordercolor"):
        kw["bbox"] = dict(boxstyle="square,pad=0.2", facecolor=color(a.get("bgcolor"), (0, 0, 0, 0)),
                          edgecolor=color(a.get("bordercolor"), "none"), linewidth=float(a.get("borderwidth", 1)) * PT_PER_PX)
    target = owner.ax if owner is not None else next(iter(axes.values())).ax  # paper: any Axes annotates
    if arrow:
        ac = color(a.get("arrowcolor"), f["color"])
        aw = float(a.get("arrowwidth", 1) or 1) * PT_PER_PX
        props = dict(arrowstyle="-|>" if a.get("arrowhead", 1) else "-", color=ac, linewidth=aw, shrinkA=0, shrinkB=0,
                     mutation_scale=6 + 3 * aw)
        axref, ayref = a.get("axref", "pixel"), a.get("ayref", "pixel")
        if axref == "pixel" or ayref == "pixel":
            if axref != ayref:
                raise ValueError("print face: an annotation arrow with one pixel and one data offset")
            ox, oy = float(a.get("ax", -10)) * PT_PER_PX, -float(a.get("ay", -30)) * PT_PER_PX
            if not text.strip():
                kw.pop("bbox", None)
            ann = target.annotate(text, (x, y), xycoords=trans, xytext=(ox + dx, oy + dy), textcoords="offset points",
                                  arrowprops=props, **{**kw, "ha": "center" if xa == "auto" else ha,
                                                       "va": "center" if ya == "auto" else va})
        else:
            ttrans, _, tk, (tax, tay) = _transform(mfig, axes, axref, ayref, paper_to_fig)
            tx, ty = _num(a.get("ax")), _num(a.get("ay"))
            if tk[0] == "data" and _is_log(tax, "x"):
                tx = 10 ** tx
            if tk[1] == "data" and _is_log(tay, "y"):
                ty = 10 ** ty
            ann = target.annotate(text, (x, y), xycoords=trans, xytext=(tx, ty), textcoords=ttrans,
                                  arrowprops=props, **kw)
    else:
        ann = target.annotate(text, (x, y), xycoords=trans, xytext=(dx, dy), textcoords="offset points", **kw)
    _unclipped(ann)
    return ann


def _unclipped(ann):
    """Annotations and lines outside the plot area (titles, brackets in the margin) are drawn, as Plotly
    draws them."""
    ann.set_clip_on(False)
    if getattr(ann, "arrow_patch", None) is not None:
        ann.arrow_patch.set_clip_on(False)


def _image(mfig, axes, img, paper_to_fig):
    import matplotlib.transforms as mt
    from matplotlib.image import BboxImage

    w, h, render = _image_source(img.get("source"))
    trans = _transform(mfig, axes, img.get("xref", "x"), img.get("yref", "y"), paper_to_fig)[0]
    x, y = _num(img.get("x", 0)), _num(img.get("y", 1))
    sx, sy = _num(img.get("sizex", 0)), _num(img.get("sizey", 0))
    xa, ya = img.get("xanchor", "left"), img.get("yanchor", "top")
    x0 = x - {"left": 0, "center": 0.5, "right": 1}[xa] * sx
    y0 = y - {"bottom": 0, "middle": 0.5, "top": 1}[ya] * sy
    sizing = img.get("sizing", "contain")
    (dx0, dy0), (dx1, dy1) = trans.transform((x0, y0)), trans.transform((x0 + sx, y0 + sy))
    box_w, box_h = dx1 - dx0, dy1 - dy0
    if sizing == "contain":
        s = min(box_w / w, box_h / h)
        iw, ih = w * s, h * s
        cx = {"left": dx0, "center": dx0 + (box_w - iw) / 2, "right": dx1 - iw}[xa]
        cy = {"bottom": dy0, "middle": dy0 + (box_h - ih) / 2, "top": dy1 - ih}[ya]
        ix0, iy0, ix1, iy1 = cx, cy, cx + iw, cy + ih
    elif sizing == "stretch":
        ix0, iy0, ix1, iy1 = dx0, dy0, dx1, dy1
    else:
        raise ValueError(f"print face: cannot draw a layout image with sizing {sizing!r}")
    # figure fractions, so the image keeps its place at any dpi
    inv = mfig.transFigure.inverted()
    (fx0, fy0), (fx1, fy1) = inv.transform((ix0, iy0)), inv.transform((ix1, iy1))
    bbox = mt.TransformedBbox(mt.Bbox([[fx0, fy0], [fx1, fy1]]), mfig.transFigure)
    # rendered at the pixels it covers in a PNG (PNG_DPI), so the PNG needs no resampling
    arr = render((ix1 - ix0) / mfig.dpi * PNG_DPI)
    im = BboxImage(bbox, interpolation="antialiased", zorder=4 if img.get("layer") != "below" else 0.2)
    im.set_data(arr)
    mfig.add_artist(im)


# ---- saving -----------------------------------------------------------------------------------------
def check_suffix(path, allowed: Sequence[str] = STILL_FORMATS) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        raise ValueError(f"save: cannot write a {suffix or 'file without a suffix'!r} file ({Path(path).name}); "
                         f"the print face writes {', '.join(allowed)}")
    return suffix


def save_matplotlib(mfig, path) -> Path:
    """Write a matplotlib Figure to ``path`` (.svg, .pdf or .png), trimmed to what is drawn."""
    path = Path(path)
    suffix = check_suffix(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    kw = dict(bbox_inches="tight", pad_inches=0.08, facecolor="white")
    if suffix == ".png":
        kw["dpi"] = PNG_DPI
    if suffix == ".pdf":
        kw["metadata"] = {"Creator": "labsim print face", "CreationDate": None}
    if suffix == ".svg":
        kw["metadata"] = {"Date": None}
    mfig.savefig(path, format=suffix[1:], **kw)
    return path


def save_figure(plotly_fig, path, *, caption: str | None = None, number: str | None = None) -> Path:
    """The print face of one Plotly figure, written to ``path`` (.svg, .pdf, .png)."""
    check_suffix(path)
    return save_matplotlib(to_matplotlib(plotly_fig, caption=caption, number=number), path)


def save_gif(plotly_frames, path, *, caption: str | None = None, number: str | None = None,
             frame_ms: int = 500) -> Path:
    """An animation (one Plotly figure per step) as a GIF: every step one frame, drawn by the print
    face and written with matplotlib's Pillow writer. (Pillow merges a step identical to the one
    before into that frame, shown twice as long.)"""
    import numpy as np
    from matplotlib.animation import ArtistAnimation, PillowWriter

    path = Path(path)
    check_suffix(path, (".gif",))
    path.parent.mkdir(parents=True, exist_ok=True)
    from matplotlib.transforms import Bbox
    from PIL import Image

    figs = [to_matplotlib(f, caption=caption, number=number) for f in plotly_frames]
    # one box around what every frame draws, so the frames line up (no jitter from a wider label)
    boxes = [m.get_tightbbox(m.canvas.get_renderer()) for m in figs]
    box = Bbox.union(boxes).padded(0.08)
    images = []
    for mfig in figs:
        buf = io.BytesIO()
        mfig.savefig(buf, format="png", dpi=GIF_DPI, facecolor="white", bbox_inches=box)
        images.append(np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB")))
    h = max(i.shape[0] for i in images)
    w = max(i.shape[1] for i in images)
    holder = _new_figure(figsize=(w / GIF_DPI, h / GIF_DPI), dpi=GIF_DPI)
    ax = holder.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    artists = []
    for im in images:
        pad = np.full((h, w, 3), 255, np.uint8)
        pad[:im.shape[0], :im.shape[1]] = im
        artists.append([ax.imshow(pad, interpolation="nearest", animated=True)])
    ArtistAnimation(holder, artists, interval=frame_ms, blit=False).save(
        path, writer=PillowWriter(fps=max(1, round(1000 / max(frame_ms, 1)))), dpi=GIF_DPI)
    return path


def drawing_figure(drawing, *, caption: str | None = None, number: str | None = None):
    """A Graphviz drawing (:class:`~labsim.viz.GraphDrawing`) as a matplotlib Figure: ``dot``'s own
    rendering of its DOT source at the size it is printed (at most 7.6 × 9 inches unless its smallest
    label would fall under MIN_FONT_PT), caption under it."""
    w_pt, h_pt = _svg_pt(drawing.svg)
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', drawing.svg)] or [14.0]
    # as large as fits 7.6 x 9 inches, but never so small that a label falls under MIN_FONT_PT
    scale = max(min(1.0, 7.6 * 72 / w_pt, 9.0 * 72 / h_pt), MIN_FONT_PT / min(sizes))
    wi, hi = w_pt * scale / 72, h_pt * scale / 72
    dpi = PNG_DPI * scale
    dpi *= min(1.0, math.sqrt(MAX_PIXELS / (w_pt / 72 * dpi * h_pt / 72 * dpi)))  # a huge graph: fewer dots
    arr = _dot_png(drawing.source, dpi=dpi)
    cap = _text(caption if caption is not None else drawing.caption or "")
    fw = max(wi, 3.0)
    mfig = _new_figure(figsize=(fw, hi + (0.6 if cap else 0.1)))
    H = mfig.get_figheight()
    ax = mfig.add_axes((0, (H - hi) / H, wi / fw, hi / H))
    ax.imshow(arr, interpolation="antialiased")
    ax.set_axis_off()
    if cap:
        label = "Figure" + (f" {number}" if number else "") + "."
        size = MIN_FONT_PT * 1.15
        body = textwrap.fill(cap, max(30, int(fw * 72 / (size * 0.5))))
        mfig.text(0.0, (H - hi) / H - 0.05 / H, f"{label} {body}", ha="left", va="top", fontsize=size,
                  color=(0.15, 0.15, 0.15, 1))
    return mfig


# ---- save any face object ---------------------------------------------------------------------------
def save(obj, path, **params) -> Path:
    """Write the print face of a figure: ``obj`` is a :func:`~labsim.viz.show` Figure, an
    :func:`~labsim.viz.interactive` or :func:`~labsim.viz.animate` figure (``params``: control values,
    and ``step=`` for an animation's still), a :class:`~labsim.viz.GraphDrawing`, or a Plotly figure.
    The format follows the suffix: .svg, .pdf, .png (and .gif for an animation)."""
    if hasattr(obj, "save") and not hasattr(obj, "to_plotly_json"):
        return obj.save(path, **params)
    if hasattr(obj, "to_plotly_json"):
        if params:
            raise ValueError(f"save: a Plotly figure has no controls; got {sorted(params)}")
        return save_figure(obj, path)
    raise TypeError(f"save: expected a labsim figure (viz.show, interactive, animate, draw_graph) or a Plotly "
                    f"figure, got {type(obj).__name__}")


# ---- make print: every captioned figure a chapter displays ------------------------------------------
PRINT_DIR_ENV = "LABSIM_PRINT_DIR"
CHAPTER_ENV = "LABSIM_PRINT_CHAPTER"
_state = {"count": 0, "extra": 0}


def print_dir() -> Path | None:
    d = os.environ.get(PRINT_DIR_ENV)
    return Path(d) if d else None


def _plain_caption(caption_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", caption_html or "")).strip()


def auto_save(obj) -> None:
    """With ``LABSIM_PRINT_DIR`` set: write ``obj``'s print face there as the chapter's next figure.

    A captioned figure is numbered as the book numbers it (its place among the captioned figures of the
    page): ``fig-N.pdf`` and ``fig-N.png``, plus ``fig-N.gif`` for an animation. A figure without a
    caption has no number in the book; it is written as ``fig-N-k`` after the N-th. Each is listed in
    ``index.md`` (file, number, caption)."""
    out = print_dir()
    if out is None or getattr(obj, "_printed", False):
        return
    obj._printed = True
    caption = _plain_caption(getattr(obj, "caption", "") or "")
    if caption:
        _state["count"] += 1
        _state["extra"] = 0
        stem = f"fig-{_state['count']}"
    else:
        _state["extra"] += 1
        stem = f"fig-{_state['count']}-{_state['extra']}"
    chapter = os.environ.get(CHAPTER_ENV, "")
    number = f"{chapter}.{_state['count']}" if caption and chapter else (str(_state["count"]) if caption else None)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    kind = type(obj).__name__
    if kind == "Animation":
        files.append(obj.save(out / f"{stem}.gif", _number=number))
    mfig = obj.to_matplotlib(_number=number)  # drawn once, written twice
    for suffix in (".pdf", ".png"):
        files.append(save_matplotlib(mfig, out / f"{stem}{suffix}"))
    with open(out / "index.md", "a", encoding="utf-8") as f:
        label = f"Figure {number}" if number else "(no number)"
        names = ", ".join(f"[{p.name}]({p.name})" for p in files)
        f.write(f"| {names} | {label} | {caption.replace('|', '/') or '(no caption)'} |\n")
