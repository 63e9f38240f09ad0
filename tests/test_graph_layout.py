"""The narrow layout of Graphviz drawings (labsim/viz/graph_layout.py, issue 22 item 3): when it is
made, that it is narrower, and that the page carries one figure for a screen reader."""
from __future__ import annotations

import re
import shutil

import pytest

import labsim as ls
from labsim import viz
from labsim.viz import graph_layout as gl
from labsim.viz.graph import GraphDrawing, MIN_LABEL_PX

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
S = ls.ShapeDtype


def _mlp2(x, params):
    return ls.nn.relu(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def _wide_program():
    specs = {"w1": S((256, 1024)), "b1": S((1024,)), "w2": S((1024, 256)), "b2": S((256,))}
    return ls.compile(ls.trace(_mlp2, S((64, 256)), specs))


@pytest.mark.parametrize("src, want", [
    ('digraph g {\n\tgraph [rankdir=TB nodesep=0.25]\n\ta -> b\n}', "rankdir=LR"),
    ('digraph g {\n\tgraph [rankdir="LR"]\n\ta -> b\n}', 'rankdir="TB"'),
    ('digraph g {\n\ta -> b\n}', "rankdir=LR"),
])
def test_turned_source_turns_the_rank_direction(src, want):
    out = gl.turned_source(src)
    assert want in out
    assert out.count("rankdir") == 1
    assert "a -> b" in out


def test_turned_source_refuses_what_is_not_dot():
    assert gl.turned_source("not a graph") is None
    assert gl.turned_source(None) is None


@pytest.mark.parametrize("line", ["lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f32[64,1024]",
                                  "kernel fusion.0", "", "a b c d e f g h i j k l m n o p q r s t"])
def test_wrap_line_keeps_the_text_and_the_width(line):
    parts = gl.wrap_line(line, 16)
    assert "".join(parts).replace(" ", "") == line.replace(" ", "")
    for p in parts:
        # a piece longer than the width only when it holds no place to cut
        assert len(p) <= 16 or not re.search(r"[ _=,].", p), parts


def test_wrapped_source_wraps_quoted_labels_only():
    src = ('digraph g {\n\tgraph [nodesep=0.25]\n\tn [label="dot\nlhs_contracting_dims={1}, rhs_contra"]\n'
           '\tm [label=<<B>stage one with a long html title</B>>]\n}')
    out = gl.wrapped_source(src, 16)
    label = re.search(r'n \[label="([^"]*)"', out).group(1)
    assert max(len(x) for x in label.split("\n")) <= 16
    assert "<B>stage one with a long html title</B>" in out  # HTML-like labels untouched
    assert "nodesep=0.12" in out and "nodesep=0.25" not in out


@pytest.mark.parametrize("wide, narrow, keep", [
    (300, 200, False),      # fits a phone already
    (700, 660, False),      # gains less than a tenth
    (700, 500, True),
    (700, None, False),     # no second layout could be drawn
    (gl.PHONE_PX + 1, gl.PHONE_PX * 0.5, True),
])
def test_choose_narrow(wide, narrow, keep):
    assert gl.choose_narrow(wide, narrow) is keep


@needs_dot
def test_a_wide_drawing_gets_a_narrower_layout_and_one_figure():
    d = viz.draw_graph(_wide_program())
    assert d.min_width_px() > gl.PHONE_PX  # the premise: it would scroll on a phone
    narrow = d.narrow_svg()
    assert narrow is not None
    need = GraphDrawing(narrow, "", "").min_width_px()
    assert need <= 0.9 * d.min_width_px()
    # every label of the narrow layout is still there
    words = lambda svg: sorted("".join(re.findall(r">([^<>]+)</text>", svg)).replace(" ", ""))
    assert words(narrow) == words(d.svg)
    page = d._repr_html_()
    assert page.count('role="img"') == 1
    assert page.count(f'aria-label="{d.alt}"') == 1
    assert page.count("<svg") == 2
    assert re.search(r'class="labsim-graph-narrow" aria-hidden="true"', page)
    # the author's layout shows exactly where it needs no scrolling at readable labels
    m = re.search(r"@container \(max-width: ([\d.]+)px\)", page)
    assert m and abs(float(m.group(1)) - d.min_width_px()) < 1
    # neither layout may be shrunk under readable labels
    for svg in re.findall(r"<svg [^>]*>", page):
        low = float(re.search(r"min-width:([\d.]+)px", svg).group(1))
        w = float(re.search(r'width="([\d.]+)pt"', svg).group(1))
        font = min(float(x) for x in re.findall(r'font-size="([\d.]+)"', d.svg + narrow))
        assert low >= w * MIN_LABEL_PX / font - 1 or low >= w * 4 / 3 - 1


@needs_dot
def test_a_drawing_that_fits_a_phone_stays_single():
    d = viz.draw_graph(ls.trace(lambda x: x * 2.0 + 1.0, S((4,))))
    assert d.min_width_px() <= gl.PHONE_PX
    assert d.narrow_svg() is None
    page = d._repr_html_()
    assert page.count("<svg") == 1 and "@container" not in page and "labsim-graph-two" not in page


@needs_dot
def test_narrow_layout_is_cached():
    d = viz.draw_graph(_wide_program())
    first = d.narrow_svg()
    d.source = "broken"  # a second call must not lay it out again
    assert d.narrow_svg() is first


def _two_clusters(rankdir="TB"):
    return (f'digraph m {{\n\tgraph [rankdir={rankdir}]\n\tsubgraph cluster_0 {{\n\t\tgraph [label=x]\n'
            '\t\ts0 [label=<<B>t0</B>>]\n\t\ts1 [label=<<B>t1</B>>]\n\t\ts0 -> s1\n\t}\n'
            '\tsubgraph cluster_1 {\n\t\tgraph [label=y]\n\t\ts2 [label="a"]\n\t\ts3 [label="b"]\n\t\ts2 -> s3\n\t}\n}\n')


def test_stacked_source_links_each_cluster_to_the_next():
    out = gl.stacked_source(_two_clusters())
    assert out.count("[style=invis]") == 1
    assert re.search(r"\ts1 -> s2 \[style=invis\]\n}\s*$", out), out
    assert out.startswith(_two_clusters().rstrip()[:-1].rstrip())  # the rest is unchanged


def test_stacked_source_leaves_what_it_cannot_stack():
    assert gl.stacked_source(_two_clusters("LR")) is None
    assert gl.stacked_source('digraph g {\n\ta -> b\n}') is None
    assert gl.stacked_source(None) is None


@needs_dot
def test_side_by_side_clusters_stack_on_a_phone():
    import graphviz

    d = graphviz.Digraph("m", graph_attr={"rankdir": "TB"}, node_attr={"width": "2.6", "fontsize": "11"})
    for c in range(2):
        with d.subgraph(name=f"cluster_{c}", graph_attr={"label": "x"}) as s:
            for i in range(5):
                s.node(f"s{5 * c + i}", f'<<B>step {i}</B><BR/><FONT POINT-SIZE="10">ls.trace(layer, *specs)</FONT>>')
                if i:
                    s.edge(f"s{5 * c + i - 1}", f"s{5 * c + i}")
    g = GraphDrawing(d.pipe(format="svg").decode("utf-8"), "ten steps", d.source)
    assert g.min_width_px() > gl.PHONE_PX
    narrow = g.narrow_svg()
    assert narrow is not None
    assert GraphDrawing(narrow, "", "").min_width_px() <= gl.PHONE_PX
