"""The converter: :func:`to_matplotlib` turns a Plotly figure into a matplotlib ``Figure``."""
from __future__ import annotations
from ...support.errors import ArgumentError

import textwrap
from typing import Any

from .style import (
    DEFAULT_WIDTH_PX, PX_PER_INCH, SUPPORTED_SHAPES, SUPPORTED_TRACES, _Axes, _PLOTLY_DEFAULT_FONT, _axis_name,
    _categories, _decoded, _get, _layout, _new_figure, _pt, _seq, _text, color, figure_word, font_context,
)
from .traces import _bar, _bar_texts, _heatmap, _scatter
from .axes import _annotation, _axis, _image, _shape, _shape_extents


def to_matplotlib(plotly_fig, *, caption: str | None = None, number: str | None = None, width_px: int | None = None):
    """The print face of ``plotly_fig``: a matplotlib Figure drawing the same data.

    ``caption`` (text or the book's caption HTML) goes under the figure, after "Figure" and ``number``
    ("Figure 3.2."; "그림 3.2." when labsim draws in Korean, with the CJK font); without it the figure's
    Plotly title is the caption. A trace type, shape type or image the print face cannot draw raises a
    ValueError that names it."""
    with font_context():
        return _to_matplotlib(plotly_fig, caption=caption, number=number, width_px=width_px)


def _to_matplotlib(plotly_fig, *, caption, number, width_px):
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
            raise ArgumentError(f"print face: cannot draw a {t['type']!r} trace; it draws {', '.join(SUPPORTED_TRACES)}")
    for s in lay.get("shapes") or ():
        if s.get("type", "rect") not in SUPPORTED_SHAPES:
            raise ArgumentError(f"print face: cannot draw a {s.get('type')!r} shape; it draws {', '.join(SUPPORTED_SHAPES)}")
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
            raise ArgumentError(f"print face: cannot draw overlaying axes ({xk}/{yk} overlays another)")
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
    label = figure_word() + (f" {number}" if number else "") + "."
    if caption:
        size = _pt(font_px)
        chars = max(30, int(fw * 72 / (size * 0.5)))
        body = "\n".join(textwrap.fill(p, chars) for p in caption.split("\n"))
        mfig.text(x_left, y - 0.015, f"{label} {body}", ha="left", va="top", fontsize=size,
                  color=(0.15, 0.15, 0.15, 1), wrap=False)
    return mfig


