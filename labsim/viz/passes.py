"""A compiler pipeline pass by pass: one figure, a slider over the passes, the graph before and after.

``pass_slider({"decompose": prog1, "cse": prog2, ...})`` takes, for each pass, a program compiled with
``ls.compile`` (usually a small example built to trigger that pass) and shows the graph that entered the
pass on the left and the graph it returned on the right, both drawn by :func:`draw_graph`. After
``fuse`` the right-hand drawing boxes the kernels. It is a :func:`~labsim.viz.interactive` figure: a live
slider in JupyterLab, one precomputed step per pass on the website. Every drawing is made once, when the
figure is built, so moving the slider only switches between finished figures.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import base64
import copy
import re
from typing import Mapping

from ..support.text import plural
from .faces import Interactive, interactive
from .graph import MIN_LABEL_PX, _min_font, _svg_size, draw_graph
from .plots import style


def before_after(prog, pass_name: str):
    """The graph that entered pass ``pass_name`` of ``prog`` and what the pass returned (the program
    itself, with its kernels, when the pass is the last one, ``fuse``)."""
    names = [name for name, _ in prog.stages]
    if pass_name not in names[1:]:
        raise ArgumentError(f"pass_slider: the program did not run pass {pass_name!r}; its stages are {names}")
    i = names.index(pass_name)
    after = prog if i == len(names) - 1 and prog.plan is not None else prog.stages[i][1]
    return prog.stages[i - 1][1], after


#: the book's text column at 1280 px (CSS px): a figure wider than this scrolls sideways there
COLUMN_PX = 680


def pass_figure(prog, pass_name: str, caption: str = ""):
    """A Plotly figure of the graph before and after pass ``pass_name`` of ``prog``: side by side (before
    on the left) when both fit the text column at a readable size, else one above the other."""
    import plotly.graph_objects as go

    before, after = before_after(prog, pass_name)
    n_before = len(before.nodes)
    n_after = len(after.graph.nodes if hasattr(after, "kernels") else after.nodes)
    svgs = [draw_graph(before).svg, draw_graph(after).svg]
    sizes = [_svg_size(s) for s in svgs]
    # both drawings at one scale (the same box is the same size on either side), as large as fits in
    # the figure's width and at most 800 px tall, never so small that a label falls under MIN_LABEL_PX.
    # Side by side when that fits the page's column; else one above the other (side by side they
    # needed a sideways scroller, with the "after" graph off-screen at 1280 px)
    width_px, max_h_px = 760.0, 800.0
    font = min(_min_font(sv) for sv in svgs)
    total_w = sum(w for w, _ in sizes)
    scale = max(min(1.3, width_px * 0.96 / total_w, max_h_px / max(h for _, h in sizes)), MIN_LABEL_PX / font)
    # side by side, the width at which the smallest label is MIN_LABEL_PX: more than the text column
    # (about 690 px at 1280) and the drawings go one above the other
    side_w = max(width_px, total_w * scale / 0.96)
    stacked = side_w * MIN_LABEL_PX / (font * scale) > COLUMN_PX
    if stacked:
        widest = max(w for w, _ in sizes)
        scale = max(min(1.3, width_px * 0.96 / widest), MIN_LABEL_PX / font)
        # the widest drawing fills the figure: on a narrow page the figure (and its scroller) is no
        # wider than that drawing at a readable size
        width_px = widest * scale / 0.96
        band = [h * scale + 40 for _, h in sizes]  # each drawing and its title
        plot_h = sum(band)
    else:
        width_px = max(width_px, total_w * scale / 0.96)
        plot_h = max(h for _, h in sizes) * scale / 0.94
    # at a rendered width R the drawings show R * scale / width_px px per unit
    min_width = int(width_px * MIN_LABEL_PX / (font * scale)) + 1
    shares = [w / total_w for w, _ in sizes]
    height = int(max(260, plot_h + (60 if stacked else 100)))
    fig = go.Figure()
    x0, top = 0.0, 1.0
    plural = lambda n: f"{n} operation{'' if n == 1 else 's'}"
    mids = []
    for k, (svg, share, (w, h), label) in enumerate(zip(svgs, shares, sizes, (
            f"before: {plural(n_before)}", f"after {pass_name}: {plural(n_after)}"))):
        src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
        if stacked:
            # from the left edge: on a phone the scroller opens on the drawing, not on empty space
            title_y, img_y, cx = top, top - 30 / plot_h, 0.0
            fig.add_annotation(x=0, y=title_y, xref="paper", yref="paper", text=label, showarrow=False,
                               xanchor="left", yanchor="top", font=dict(size=12))
            fig.add_layout_image(source=src, xref="paper", yref="paper", x=cx, y=img_y, sizex=w * scale / width_px,
                                 sizey=h * scale / plot_h, xanchor="left", yanchor="top", sizing="contain")
            mids.append((w * scale / width_px / 2, img_y - h * scale / plot_h / 2))
            top -= band[k] / plot_h
        else:
            fig.add_layout_image(source=src, xref="paper", yref="paper", x=x0 + share / 2, y=0.94,
                                 sizex=w * scale / width_px, sizey=h * scale / plot_h, xanchor="center",
                                 yanchor="top", sizing="contain")
            fig.add_annotation(x=x0 + share / 2, y=1.0, xref="paper", yref="paper", text=label, showarrow=False,
                               yanchor="bottom", font=dict(size=12))
            mids.append((x0 + share / 2, 0.5))
            x0 += share
    if stacked:
        fig.add_shape(type="line", xref="paper", yref="paper", x0=0, x1=1, y0=1 - band[0] / plot_h,
                      y1=1 - band[0] / plot_h, line=dict(color="#999999", width=1, dash="dot"))
    else:
        fig.add_shape(type="line", xref="paper", yref="paper", x0=shares[0], x1=shares[0], y0=0, y1=1,
                      line=dict(color="#999999", width=1, dash="dot"))
    # one invisible point per drawing: the figure has data (hover names each side), not only images
    fig.add_trace(go.Scatter(x=[m[0] for m in mids], y=[m[1] for m in mids], mode="markers",
                             marker=dict(size=1, opacity=0),
                             text=[f"before {pass_name}", f"after {pass_name}"], hoverinfo="text", showlegend=False))
    fig.update_xaxes(visible=False, range=[0, 1])
    fig.update_yaxes(visible=False, range=[0, 1])
    title = f"Pass <b>{pass_name}</b>" + (f": {caption}" if caption else "")
    fig = style(fig, title=title, height=height)
    fig.update_layout(meta={"min_width": min_width})
    return fig


def pass_slider(examples: Mapping[str, object], *, captions: Mapping[str, str] | None = None,
                default: str | None = None) -> Interactive:
    """One figure with a slider over passes. ``examples`` maps each pass name to a compiled program that
    ran it; ``captions`` says in a few words what each example computes."""
    if not examples:
        raise ArgumentError("pass_slider needs at least one pass")
    captions = dict(captions or {})
    figures = {name: pass_figure(prog, name, captions.get(name, "")) for name, prog in examples.items()}
    counts = {}
    for name, prog in examples.items():
        before, after = before_after(prog, name)
        counts[name] = (len(before.nodes), len(after.graph.nodes if hasattr(after, "kernels") else after.nodes),
                        len(prog.kernels))

    def alt(pass_name):
        b, a, k = counts[pass_name]
        what = captions.get(pass_name, "a small example")
        enter = "enters" if b == 1 else "enter"
        return (f"Two dataflow graphs of {what}: on the left the {plural(b, 'operation')} that {enter} the "
                f"{pass_name} pass, on the right the {plural(a, 'operation')} it returns"
                + (f", grouped into {plural(k, 'kernel')}" if pass_name == "fuse" else "") + ".")

    # a copy per call: the faces take the title out of the figure they are given (it becomes the caption),
    # and a shared figure would lose it after the first call (the website showed no caption, no number)
    return interactive(lambda pass_name: copy.deepcopy(figures[pass_name]), {"pass_name": list(examples)},
                       defaults={"pass_name": default or next(iter(examples))}, labels={"pass_name": "pass"},
                       alt=alt, kinds={"pass_name": "slider"})  # the passes run in this order: a slider
