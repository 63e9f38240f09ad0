"""Graphs drawn with Graphviz: ops coloured by kind, kernels as labelled boxes around their ops."""
from __future__ import annotations
from ..support.errors import ArgumentTypeError

import hashlib
import html
import re
import shutil

from ..core import ops
from ..core.ir import Graph, Literal, Var
from .palette import DARK, KIND_COLORS
from .printface import register_dot


#: the smallest label a drawing may show on screen, in CSS px, at any page width
MIN_LABEL_PX = 11.0


def _svg_size(svg: str) -> tuple[float, float]:
    """(width, height) of a Graphviz SVG in its own units (pt)."""
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"', svg)
    return (float(m.group(1)), float(m.group(2))) if m else (400.0, 400.0)


def _min_font(svg: str) -> float:
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', svg)]
    return min(sizes) if sizes else 14.0


class GraphDrawing:
    """An SVG drawing with alt text; shows inline in notebooks and on the website.

    It never shrinks so far that its smallest label falls under :data:`MIN_LABEL_PX` on screen: on a
    narrow page it keeps that width and scrolls sideways (with the book's scroll cue), and on the website
    a button opens it full size. With a ``caption`` it is a numbered figure ("Figure 5.3")."""

    def __init__(self, svg: str, alt: str, source: str, caption: str | None = None, name: str | None = None) -> None:
        self.svg = svg
        self.alt = alt
        self.source = source  # the Graphviz DOT text
        self.caption = caption
        self.name = name

    def min_width_px(self) -> int:
        """The narrowest on-screen width (CSS px) at which every label is still MIN_LABEL_PX or larger."""
        w, _ = _svg_size(self.svg)
        return int(-(-MIN_LABEL_PX * w // _min_font(self.svg)))

    def to_matplotlib(self, *, _number: str | None = None):
        """The print face: Graphviz's own rendering of the DOT source in a matplotlib Figure, caption under it."""
        from .printface import drawing_figure
        return drawing_figure(self, number=_number)

    def save(self, path, *, _number: str | None = None):
        """Write the print face of the drawing to ``path`` (.svg, .pdf or .png by the suffix)."""
        from .printface import check_suffix, save_matplotlib

        check_suffix(path)
        return save_matplotlib(self.to_matplotlib(_number=_number), path)

    def narrow_svg(self) -> str | None:
        """A second layout for a narrow page (the rank direction turned), when it is narrower at readable
        labels and this one does not fit a phone; else None. See :mod:`labsim.viz.graph_layout`."""
        if not hasattr(self, "_narrow"):
            from .graph_layout import narrow_layout
            self._narrow = narrow_layout(self.source, self.min_width_px(),
                                         lambda svg: GraphDrawing(svg, "", "").min_width_px())
        return self._narrow

    @staticmethod
    def _sized_svg(svg: str) -> str:
        """The SVG for a page: no XML prolog; as wide as the page allows up to its natural size, never so
        narrow that a label falls under MIN_LABEL_PX (then its frame scrolls)."""
        svg = re.sub(r"<\?xml[^>]*>|<!DOCTYPE[^>]*>|<!--.*?-->", "", svg, flags=re.S).strip()
        w, _ = _svg_size(svg)
        natural = w * 4 / 3  # pt -> CSS px
        low = min(GraphDrawing(svg, "", "").min_width_px(), natural)
        return svg.replace("<svg ", f'<svg style="width:100%;max-width:{natural:.0f}px;min-width:{low:.0f}px;'
                                    f'height:auto" ', 1)

    def _repr_html_(self) -> str:
        from .faces import _figure_wrap, _printing, in_book

        if _printing(self):
            return f"<p>{html.escape(self.alt)}</p>"

        wide = self._sized_svg(self.svg)
        button = ('<button type="button" class="labsim-fullsize" aria-label="Open the drawing full size">'
                  "⤢ full size</button>") if in_book() else ""
        narrow = self.narrow_svg()
        if narrow is None:
            inner, box, style = wide, "labsim-graph-box", ""
        else:
            # two layouts, one shown: the author's where the drawing's box gives it room at readable
            # labels, the turned one where it does not (the hidden one is display:none, so out of the
            # accessibility tree; the one role="img" around both carries the alt text)
            key = "lsg-" + hashlib.sha1(self.svg.encode("utf-8")).hexdigest()[:10]
            need = self.min_width_px()
            inner = (f'<div class="labsim-graph-wide">{wide}</div>'
                     f'<div class="labsim-graph-narrow" aria-hidden="true">{self._sized_svg(narrow)}</div>')
            box = f"labsim-graph-box labsim-graph-two {key}"
            style = (f"<style>.{key} .labsim-graph-narrow{{display:none}}"
                     f"@container (max-width: {need - 0.5:.1f}px){{.{key} .labsim-graph-wide{{display:none}}"
                     f".{key} .labsim-graph-narrow{{display:block}}}}</style>")
        body = (f'{style}<div class="{box}">{button}<div class="labsim-scroll-frame labsim-graph-frame">'
                f'<div class="labsim-scroll"><div class="labsim-graph" role="img" aria-label="{html.escape(self.alt)}" '
                f'style="margin:0">{inner}</div></div></div></div>')
        if self.caption:
            return _figure_wrap(body, html.escape(self.caption), self.name)
        return body

    def _repr_svg_(self) -> str:
        from .faces import _printing

        if _printing(self):
            return None
        return self.svg


def _label(n) -> str:
    opdef = ops.get(n.op)
    extra = opdef.format_attrs(n.params).lstrip(", ").strip()
    extra = re.sub(r"/\*.*?\*/", "", extra).strip()
    if len(extra) > 38:
        extra = extra[:36] + "…"
    lines = [opdef.hlo, n.out.aval.short()] + ([extra] if extra else [])
    return "\n".join(lines)


def draw_graph(obj, *, title: str | None = None, rankdir: str = "TB", kernels: bool = True,
               caption: str | None = None, name: str | None = None) -> GraphDrawing:
    """Draw a :class:`Graph` (or a ``Program``: its graph, with each kernel boxed). ``caption`` makes it a
    numbered figure; ``rankdir="LR"`` lays a long chain out left to right.

    Needs Graphviz's ``dot`` program (``make book`` installs it).
    """
    if not isinstance(obj, Graph) and not (isinstance(getattr(obj, "graph", None), Graph) and hasattr(obj, "kernels")):
        raise ArgumentTypeError(f"draw_graph: expected a Graph (from ls.trace) or a Program (from ls.compile), "
                        f"got {type(obj).__name__} {obj!r:.40}")
    import graphviz

    if shutil.which("dot") is None:
        raise RuntimeError("draw_graph needs Graphviz's `dot` program: install it with "
                           "`apt-get install graphviz`, `brew install graphviz` or `conda install graphviz`")
    prog = None
    if not isinstance(obj, Graph):
        prog, g = obj, obj.graph
    else:
        g = obj
    names = g.names()
    d = graphviz.Digraph(g.name, graph_attr={"rankdir": rankdir, "fontname": "Helvetica", "fontsize": "11",
                                             "bgcolor": "transparent", "nodesep": "0.25", "ranksep": "0.35"},
                         node_attr={"fontname": "Helvetica", "fontsize": "10", "style": "filled",
                                    "shape": "box", "color": "#333333", "penwidth": "1"},
                         edge_attr={"color": "#555555", "arrowsize": "0.6"})
    nid = lambda v: f"v{v.id}"
    for i, v in enumerate(g.inputs):
        d.node(nid(v), f"{names[id(v)]}\n{v.aval.short()}", shape="ellipse", fillcolor=KIND_COLORS["input"])

    def node_stmt(target, n, node_id, dup=False):
        kind = ops.get(n.op).kind.value
        target.node(node_id, _label(n) + ("\n(computed again here)" if dup else ""),
                    fillcolor=KIND_COLORS.get(kind, "#FFFFFF"), style="filled,dashed" if dup else "filled",
                    fontcolor="#FFFFFF" if KIND_COLORS.get(kind) in DARK else "#000000")

    # A cheap op that fusion computes in several kernels is drawn once in each of them.
    kernels_of: dict[int, list[int]] = {}
    writer: dict[int, int] = {}
    if prog is not None and kernels:
        for ki, k in enumerate(prog.kernels):
            for n in k.nodes:
                kernels_of.setdefault(id(n), []).append(ki)
            for o in k.outputs:
                writer[id(o)] = ki
    producer = {id(n.out): n for n in g.nodes}

    def copy_id(n, ki):
        ks = kernels_of.get(id(n), [])
        return f"v{n.out.id}_k{ki}" if len(ks) > 1 else nid(n.out)

    def src_id(v, ki):
        """The drawing id of value v as seen by a node in kernel ki (None: outside any kernel)."""
        p = producer.get(id(v))
        if p is None:
            return nid(v)
        ks = kernels_of.get(id(p), [])
        if ki is not None and ki in ks:
            return copy_id(p, ki)
        if len(ks) > 1:
            return copy_id(p, writer.get(id(v), ks[0]))
        return nid(v)

    if prog is not None and kernels:
        for ki, k in enumerate(prog.kernels):
            with d.subgraph(name=f"cluster_{ki}") as c:
                c.attr(label=f"kernel {k.name}", style="rounded,dashed", color="#0072B2", fontcolor="#0072B2",
                       fontsize="10")
                for n in k.nodes:
                    ks = kernels_of[id(n)]
                    node_stmt(c, n, copy_id(n, ki), dup=len(ks) > 1 and ki != ks[0])
    for n in g.nodes:
        places = kernels_of.get(id(n)) or [None]
        if places == [None]:
            node_stmt(d, n, nid(n.out))
        for ki in places:
            me = copy_id(n, ki) if ki is not None else nid(n.out)
            for a in n.operands:
                if isinstance(a, Var):
                    d.edge(src_id(a, ki), me)
                elif isinstance(a, Literal):
                    lit = f"lit{n.out.id}_{ki}_{id(a) % 10007}"
                    d.node(lit, str(a), shape="plaintext", style="", fontsize="10")
                    d.edge(lit, me, style="dotted")
    for i, o in enumerate(g.outputs):
        d.node(f"out{i}", f"output {i}", shape="ellipse", fillcolor=KIND_COLORS["output"])
        if isinstance(o, Var):
            d.edge(src_id(o, None), f"out{i}")
    if title:
        d.attr(label=title, labelloc="t")
    svg = d.pipe(format="svg").decode("utf-8")
    counts = g.op_counts()
    alt = (f"Dataflow graph of {g.name}: {len(g.inputs)} inputs, {len(g.nodes)} operations "
           f"({', '.join(f'{v} {k}' for k, v in counts.items())})"
           + (f", grouped into {len(prog.kernels)} kernels" if prog is not None and kernels else "") + ".")
    register_dot(svg, d.source)
    return GraphDrawing(svg, alt, d.source, caption=caption, name=name)


def pipeline_diagram(stages, *, alt: str, colors=None, caption: str | None = None, name: str | None = None) -> GraphDrawing:
    """Boxes joined top to bottom by arrows: ``stages`` is a list of (title, line, line, ...).

    Drawn with Graphviz, so the SVG scales with the page (readable at phone width).
    """
    import graphviz

    from .palette import TINT

    if shutil.which("dot") is None:
        raise RuntimeError("pipeline_diagram needs Graphviz's `dot` program (apt/brew/conda install graphviz)")
    d = graphviz.Digraph("pipeline", graph_attr={"rankdir": "TB", "bgcolor": "transparent", "nodesep": "0.3",
                                                 "ranksep": "0.3"},
                         node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                                    "fontsize": "11", "color": "#333333", "margin": "0.15,0.08"},
                         edge_attr={"color": "#333333", "arrowsize": "0.7"})
    # stages carry no role of their own: one neutral tint unless the caller gives role tints
    tints = colors or [TINT["host"]]
    for i, (title, *lines) in enumerate(stages):
        rows = "".join(f'<BR/><FONT POINT-SIZE="10">{html.escape(str(x))}</FONT>' for x in lines)
        d.node(f"s{i}", f"<<B>{html.escape(str(title))}</B>{rows}>", fillcolor=tints[i % len(tints)])
        if i:
            d.edge(f"s{i - 1}", f"s{i}")
    svg = d.pipe(format="svg").decode("utf-8")
    register_dot(svg, d.source)
    return GraphDrawing(svg, alt, d.source, caption=caption, name=name)
