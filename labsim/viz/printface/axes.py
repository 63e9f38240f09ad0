"""The print face's axes, shapes, annotations and layout images: ticks, ranges and log/category axes;
``rect``/``line`` shapes in data, paper or domain coordinates; arrows; embedded images."""
from __future__ import annotations
from ...support.errors import ArgumentError

from .style import PNG_DPI, PT_PER_PX, PX_PER_INCH, _axis_name, _bold, _dash, _fade, _num, _pos, _text, color
from .graphviz import _image_source
from .traces import _font


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
    raise ArgumentError(f"print face: a shape or annotation refers to {ref!r}, an axis the figure does not have")


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
        raise ArgumentError("print face: cannot draw a pixel-sized rect shape")
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
                raise ArgumentError("print face: an annotation arrow with one pixel and one data offset")
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
        raise ArgumentError(f"print face: cannot draw a layout image with sizing {sizing!r}")
    # figure fractions, so the image keeps its place at any dpi
    inv = mfig.transFigure.inverted()
    (fx0, fy0), (fx1, fy1) = inv.transform((ix0, iy0)), inv.transform((ix1, iy1))
    bbox = mt.TransformedBbox(mt.Bbox([[fx0, fy0], [fx1, fy1]]), mfig.transFigure)
    # rendered at the pixels it covers in a PNG (PNG_DPI), so the PNG needs no resampling
    arr = render((ix1 - ix0) / mfig.dpi * PNG_DPI)
    im = BboxImage(bbox, interpolation="antialiased", zorder=4 if img.get("layer") != "below" else 0.2)
    im.set_data(arr)
    mfig.add_artist(im)


