"""The print face (``labsim.viz.printface``): the same Plotly figure drawn with matplotlib.

Each test builds a small Plotly figure of one kind, converts it with ``to_matplotlib`` and checks what
matplotlib drew against what the Plotly figure says: as many bars, lines and points, the same colours,
the same categories in the same order, the same axis ranges (a log axis's range is given in decades by
Plotly, so 10**range in matplotlib), the same texts. Then the saving API (formats, controls, steps, the
GIF's frames) and ``LABSIM_PRINT_DIR``, the mechanism behind ``make print``. Last, every figure builder
of ``labsim.viz`` converts without error, so a new trace feature cannot break print unnoticed.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import labsim as ls

go = pytest.importorskip("plotly.graph_objects")
pytest.importorskip("matplotlib")
from matplotlib.collections import PathCollection, QuadMesh  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Polygon, Rectangle  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402
from PIL import Image  # noqa: E402

from labsim import viz  # noqa: E402
from labsim.viz import printface as pf  # noqa: E402
from labsim.viz.palette import ROLE  # noqa: E402

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
MAGIC = {".pdf": b"%PDF", ".png": b"\x89PNG", ".gif": b"GIF8"}


def bars(ax) -> list[Rectangle]:
    return [p for c in ax.containers for p in c.patches]


def texts(mfig) -> list[str]:
    out = [t.get_text() for ax in mfig.axes for t in ax.texts]
    return out + [t.get_text() for t in mfig.texts]


def same_colour(a, b) -> bool:
    return np.allclose(to_rgba(a), to_rgba(b), atol=1 / 255)


# ---- traces -------------------------------------------------------------------------------------------
def test_grouped_bars_keep_count_colours_categories_and_sit_side_by_side():
    fig = go.Figure([go.Bar(x=["a", "b", "c"], y=[1, 2, 3], name="one", marker_color=ROLE["compute"]),
                     go.Bar(x=["a", "b", "c"], y=[3, 2, 1], name="two", marker_color=ROLE["memory"])])
    fig.update_layout(barmode="group")
    ax = pf.to_matplotlib(fig).axes[0]
    rects = bars(ax)
    assert len(rects) == 6
    assert [r.get_height() for r in rects] == [1, 2, 3, 3, 2, 1]
    assert all(same_colour(r.get_facecolor(), ROLE["compute"]) for r in rects[:3])
    assert all(same_colour(r.get_facecolor(), ROLE["memory"]) for r in rects[3:])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    # grouped: the first trace's bar left of the category's centre, the second's right of it
    assert rects[0].get_x() + rects[0].get_width() <= 1e-9 and rects[3].get_x() >= -1e-9


def test_stacked_bars_start_where_the_one_below_ends():
    fig = go.Figure([go.Bar(x=["p", "q"], y=[2, 5]), go.Bar(x=["p", "q"], y=[1, 4])])
    fig.update_layout(barmode="stack")
    rects = bars(pf.to_matplotlib(fig).axes[0])
    assert [r.get_y() for r in rects[2:]] == [2, 5]
    assert [r.get_y() + r.get_height() for r in rects[2:]] == [3, 9]


def test_horizontal_bars_with_text_a_category_order_and_a_reversed_axis():
    fig = go.Figure(go.Bar(y=["slow", "fast", "mid"], x=[9, 1, 4], orientation="h", text=["9 s", "1 s", "4 s"],
                           textposition="auto", base=[0, 2, 0]))
    fig.update_yaxes(categoryorder="array", categoryarray=["fast", "mid", "slow"], autorange="reversed")
    mfig = pf.to_matplotlib(fig)
    ax = mfig.axes[0]
    rects = bars(ax)
    assert [r.get_width() for r in rects] == [9, 1, 4] and [r.get_x() for r in rects] == [0, 2, 0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fast", "mid", "slow"]
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # reversed: the first category at the top
    assert {"9 s", "1 s", "4 s"} <= set(texts(mfig))


def test_lines_markers_text_and_log_axes():
    xs = np.logspace(-1, 3, 9)
    fig = go.Figure([go.Scatter(x=xs, y=xs * 2, mode="lines", line=dict(color="#000000", dash="dash", width=3)),
                     go.Scatter(x=[1, 10, 100], y=[5, 50, 500], mode="markers+text", text=["a", "b", "c"],
                                marker=dict(color=ROLE["compute"], size=10, symbol="diamond"))])
    fig.update_xaxes(type="log", range=[-1, 3])
    fig.update_yaxes(type="log", range=[-1, 4])
    mfig = pf.to_matplotlib(fig)
    ax = mfig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert np.allclose(ax.get_xlim(), (0.1, 1000)) and np.allclose(ax.get_ylim(), (0.1, 10000))
    # decades labelled as Plotly labels them, not as 10^k
    assert {"0.1", "1", "10", "100", "1000"} <= {t.get_text() for t in ax.get_xticklabels()}
    assert "10k" in {t.get_text() for t in ax.get_yticklabels()}
    (line,) = [ln for ln in ax.lines if len(ln.get_xdata()) == 9]
    assert np.allclose(line.get_ydata(), xs * 2) and same_colour(line.get_color(), "#000000")
    assert line.get_linestyle() == "--"
    (pts,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(pts.get_offsets()) == 3 and same_colour(pts.get_facecolor()[0], ROLE["compute"])
    assert {"a", "b", "c"} <= set(texts(mfig))


def test_a_filled_shape_trace_is_a_polygon_of_its_colour():
    fig = go.Figure(go.Scatter(x=[0, 1, 1, 0, 0], y=[0, 0, 2, 2, 0], fill="toself", fillcolor=ROLE["data"],
                               mode="lines"))
    ax = pf.to_matplotlib(fig).axes[0]
    polys = [p for p in ax.patches if isinstance(p, Polygon)]
    assert len(polys) == 1 and same_colour(polys[0].get_facecolor(), ROLE["data"])


def test_heatmap_cells_colours_and_cell_text():
    z = [[0, 1, 2], [2, 1, 0]]
    scale = [[0, ROLE["idle"]], [1, ROLE["compute"]]]
    fig = go.Figure(go.Heatmap(z=z, y=["r0", "r1"], colorscale=scale, zmin=0, zmax=2, showscale=False,
                               text=[["a", "b", "c"], ["d", "e", "f"]], texttemplate="%{text}"))
    mfig = pf.to_matplotlib(fig)
    ax = mfig.axes[0]
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert mesh.get_array().shape == (2, 3)
    assert same_colour(mesh.cmap(0.0), ROLE["idle"]) and same_colour(mesh.cmap(1.0), ROLE["compute"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["r0", "r1"]
    assert sorted(t.get_text() for t in ax.texts) == list("abcdef")


def test_subplots_become_axes_side_by_side():
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Bar(x=["a"], y=[1]), 1, 1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1]), 1, 2)
    axes = pf.to_matplotlib(fig).axes
    assert len(axes) == 2
    left, right = (a.get_position() for a in axes)
    assert left.x1 <= right.x0  # the domains do not overlap
    assert len(bars(axes[0])) == 1 and len(axes[1].lines) == 1


# ---- layout: shapes, annotations, images, legend, caption ----------------------------------------------
def test_shapes_annotations_and_arrows():
    fig = go.Figure(go.Scatter(x=[0, 10], y=[0, 10]))
    fig.add_shape(type="rect", x0=1, x1=3, y0=1, y1=2, fillcolor=ROLE["match"], line_width=0)
    fig.add_hline(y=5, line_dash="dot", line_color=ROLE["mismatch"])
    fig.add_annotation(x=4, y=4, ax=8, ay=8, axref="x", ayref="y", text="", showarrow=True, arrowhead=2)
    fig.add_annotation(x=0.5, y=1.05, xref="paper", yref="paper", text="<b>above</b>", showarrow=False)
    fig.update_xaxes(range=[0, 10])
    mfig = pf.to_matplotlib(fig)
    ax = mfig.axes[0]
    rects = [p for p in ax.patches if isinstance(p, Rectangle) and same_colour(p.get_facecolor(), ROLE["match"])]
    assert len(rects) == 1 and (rects[0].get_x(), rects[0].get_width()) == (1, 2)
    hl = [ln for ln in ax.lines if same_colour(ln.get_color(), ROLE["mismatch"])]
    assert len(hl) == 1 and list(hl[0].get_ydata()) == [5, 5]
    anns = [t for t in ax.texts if isinstance(t, Annotation)]
    assert any(a.arrow_patch is not None for a in anns)
    (above,) = [a for a in anns if a.get_text() == "above"]
    assert above.get_fontweight() == "bold"


def test_an_annotation_off_its_axis_range_is_hidden_as_plotly_hides_it():
    """add_vline's label on a log axis: Plotly reads its x in decades, so x = 300 is 10**300, off the plot."""
    fig = go.Figure(go.Scatter(x=[1, 1000], y=[1, 2]))
    fig.update_xaxes(type="log", range=[0, 3])
    fig.add_vline(x=300, annotation_text="ridge")
    fig.add_annotation(x=2, y=1.5, text="inside", showarrow=False)  # 10**2 = 100: on the plot
    shown = texts(pf.to_matplotlib(fig))
    assert "inside" in shown and "ridge" not in shown


def test_legend_and_caption():
    fig = go.Figure([go.Bar(x=["a"], y=[1], name="kernel", marker_color=ROLE["compute"]),
                     go.Bar(x=["a"], y=[2], name="copy", marker_color=ROLE["memory"])])
    fig.update_layout(title="Two kinds<br>of time")
    mfig = pf.to_matplotlib(fig, number="3.2")
    (leg,) = mfig.legends
    assert [t.get_text() for t in leg.get_texts()] == ["kernel", "copy"]
    assert same_colour(leg.legend_handles[1].get_facecolor(), ROLE["memory"])
    assert any(t.startswith("Figure 3.2. Two kinds") for t in texts(mfig))
    assert all(t.get_fontsize() >= pf.MIN_FONT_PT for t in mfig.texts + mfig.axes[0].texts)


@needs_dot
def test_graphviz_drawings_as_layout_images_are_drawn():
    from matplotlib.image import BboxImage

    prog = ls.compile(ls.trace(lambda x: ls.nn.softmax(x, axis=-1), ls.ShapeDtype((4, 8))))
    fig = viz.pass_figure(prog, "decompose")
    mfig = pf.to_matplotlib(fig)
    imgs = [a for a in mfig.get_children() if isinstance(a, BboxImage)]
    assert len(imgs) == len(fig.layout.images) == 2
    assert all(im.get_array().shape[0] > 50 for im in imgs)  # dot rendered something


def test_what_print_cannot_draw_raises_and_names_it():
    with pytest.raises(ValueError, match="'pie' trace"):
        pf.to_matplotlib(go.Figure(go.Pie(values=[1, 2])))
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    fig.add_shape(type="circle", x0=0, x1=1, y0=0, y1=1)
    with pytest.raises(ValueError, match="'circle' shape"):
        pf.to_matplotlib(fig)
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    fig.add_layout_image(source="data:image/svg+xml;base64,PHN2Zy8+", x=0, y=1, sizex=1, sizey=1)
    with pytest.raises(ValueError, match="SVG that labsim did not draw"):
        pf.to_matplotlib(fig)


# ---- saving ---------------------------------------------------------------------------------------------
def small_fig(n=3, title="Bars"):
    return go.Figure(go.Bar(x=list(range(n)), y=list(range(1, n + 1)), marker_color=ROLE["compute"]),
                     layout=dict(title=title))


@pytest.mark.parametrize("suffix", [".svg", ".pdf", ".png"])
def test_figure_save_writes_the_format_of_its_suffix(tmp_path, suffix):
    path = viz.show(small_fig(), alt="three bars").save(tmp_path / f"f{suffix}")
    data = path.read_bytes()
    assert len(data) > 500
    assert data.startswith(MAGIC[suffix]) if suffix in MAGIC else b"<svg" in data[:1000]


def test_a_bad_suffix_names_itself_and_the_formats(tmp_path):
    with pytest.raises(ValueError, match=r"'\.jpg'.*\.svg, \.pdf, \.png"):
        viz.show(small_fig(), alt="x").save(tmp_path / "f.jpg")
    with pytest.raises(ValueError, match="without a suffix"):
        viz.save(small_fig(), tmp_path / "f")


def test_interactive_save_at_control_values_and_its_errors(tmp_path):
    w = viz.interactive(lambda n: small_fig(n, title=f"{n} bars"), {"n": [2, 4, 8]}, alt="bars")
    a = w.save(tmp_path / "a.png", n=8)
    b = w.save(tmp_path / "b.png")  # the default: the middle value, 4
    assert Image.open(a).size != Image.open(b).size or a.read_bytes() != b.read_bytes()
    assert len(bars(pf.to_matplotlib(w.make_fig(n=8)).axes[0])) == 8
    with pytest.raises(ValueError, match=r"no control 'm'.*\['n'\]"):
        w.save(tmp_path / "c.png", m=2)
    with pytest.raises(ValueError, match=r"n=3 is not one of the values of control 'n': \[2, 4, 8\]"):
        w.save(tmp_path / "c.png", n=3)
    assert w.params == {"n": 4}  # saving does not move the live figure


def test_animation_saves_a_gif_with_one_frame_per_step_and_stills(tmp_path):
    def frames(k):
        return [small_fig(3, title=f"step {i}").update_traces(y=[i + 1, k, 2]) for i in range(k)]

    anim = viz.animate(frames, {"k": [3, 5]}, alt="steps", defaults={"k": 5})
    gif = anim.save(tmp_path / "a.gif")
    assert gif.read_bytes()[:4] == b"GIF8" and Image.open(gif).n_frames == 5
    assert Image.open(anim.save(tmp_path / "b.gif", k=3)).n_frames == 3
    for step in (0, -1):
        assert anim.save(tmp_path / f"s{step}.png", step=step).read_bytes()[:4] == MAGIC[".png"]
    with pytest.raises(ValueError, match=r"step=5 is not a step .* 0 to 4"):
        anim.save(tmp_path / "c.png", step=5)
    with pytest.raises(ValueError, match="every step"):
        anim.save(tmp_path / "c.gif", step=1)
    with pytest.raises(ValueError, match=r"'\.mp4'.*\.gif"):
        anim.save(tmp_path / "c.mp4")


@needs_dot
def test_a_graph_drawing_saves_with_its_caption(tmp_path):
    g = ls.trace(lambda x, y: x * y + 1.0, ls.ShapeDtype((4,)), ls.ShapeDtype((4,)))
    d = viz.draw_graph(g, caption="x times y plus one")
    path = viz.save(d, tmp_path / "g.pdf")
    assert path.read_bytes()[:4] == b"%PDF"
    assert any("Figure. x times y plus one" in t for t in texts(pf.drawing_figure(d)))


def test_print_dir_saves_each_displayed_figure_once_numbered_as_the_book(tmp_path, monkeypatch):
    monkeypatch.setenv("LABSIM_PRINT_DIR", str(tmp_path))
    monkeypatch.setenv("LABSIM_PRINT_CHAPTER", "7")
    monkeypatch.setitem(pf._state, "count", 0)
    monkeypatch.setitem(pf._state, "extra", 0)
    first = viz.show(small_fig(title="First"), alt="a")
    assert first._repr_mimebundle_() == {"text/plain": "a"}  # the print run shows only the alt text
    first._repr_mimebundle_()  # shown twice, written once
    viz.show(small_fig(title=None), alt="no caption")._repr_mimebundle_()
    anim = viz.animate(lambda: [small_fig(2, title="Moving"), small_fig(2, title="Moving").update_traces(y=[2, 1])],
                       alt="b")
    anim._repr_mimebundle_()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["fig-1-1.pdf", "fig-1-1.png", "fig-1.pdf", "fig-1.png", "fig-2.gif", "fig-2.pdf", "fig-2.png",
                     "index.md"]
    rows = (tmp_path / "index.md").read_text().splitlines()
    assert len(rows) == 3
    assert "Figure 7.1 | First" in rows[0] and "(no caption)" in rows[1] and "Figure 7.2 | Moving" in rows[2]
    assert Image.open(tmp_path / "fig-2.gif").n_frames == 2


# ---- every builder of labsim.viz converts -----------------------------------------------------------------
def _builders():
    from labsim.viz import gpu, hostviz, systolic as vs, tpu

    s = ls.ShapeDtype((64, 64))
    prog = ls.compile(ls.trace(lambda x, y: ls.numpy.maximum(x @ y + 1.0, 0.0), s, s))
    run = ls.simulate(prog, "H100 SXM")
    occ = ls.simt.occupancy("H100 SXM", threads_per_block=256, registers_per_thread=64)
    lat = ls.simt.latency_kernel(2, 2, warps=4)
    lat_run = ls.simt.run_ir(lat.ir, lat.inputs, "H100 SXM", sms=1, schedulers=1, policy="lrr",
                             timing=ls.simt.Timing(memory=30))
    div = ls.simt.divergent_kernel(1, 1, taken=16)
    div_run = ls.simt.run_ir(div.ir, div.inputs, "H100 SXM", sms=1)
    st = ls.simt.strided_kernel(2)
    st_run = ls.simt.run_ir(st.ir, st.inputs, "H100 SXM", sms=1, trace=False)
    A, B = vs.example_operands(3, 3, 3)
    tr = run.trace
    return {
        "timeline": lambda: [viz.timeline(tr, title="t")],
        "roofline": lambda: [viz.roofline("H100 SXM", [("a", 1.0, None), ("b", 300, None), ("c", 3, None),
                                                       ("d", 30, None)], extra_chips=["A100 80GB"])],
        "bar_compare": lambda: [viz.bar_compare(["a", "b"], [1, 10], log=True, text=["1", "10"])],
        "buffer_chart": lambda: [viz.buffer_chart(prog.buffers)],
        "sm_diagram": lambda: [gpu.sm_diagram("H100 SXM")],
        "occupancy": lambda: [gpu.occupancy_figure(occ)],
        "launch": lambda: [gpu.launch_figure("H100 SXM", 512, 255, 0)],
        "waves": lambda: [gpu.waves_figure("H100 SXM", 300, occ.blocks_per_sm)],
        "coalescing": lambda: [gpu.coalescing_figure(ls.simt.warp_addresses(2, 0, 4), 4,
                                                     st_run.transactions(pc=st.info["load_pc"]))],
        "schedule": lambda: gpu.schedule_frames(lat_run, steps=3),
        "divergence": lambda: gpu.divergence_frames(div_run)[:3],
        "tensorcore": lambda: [tpu.tensorcore("TPU v5e")],
        "tpu systolic": lambda: tpu.systolic_frames(3, "ws", 3, max_steps=4)[0][:3],
        "schedule_chart": lambda: [tpu.schedule_chart(ls.tpu.schedule_dot(512, 512, 512, "TPU v5e",
                                                                          blocks=(256, 256, 256)), most=4)],
        "tile_bars": lambda: [tpu.tile_bars(ls.tiling.plan(1024, 1024, 1024, (128, 128, 32)))],
        "tile_landscape": lambda: [tpu.tile_landscape(ls.tiling.tune(256, 256, 256))],
        "systolic": lambda: vs.systolic_frames(A, B, rows=3, cols=3, dataflow="os", max_steps=3),
        "spans": lambda: [hostviz.timeline_spans(tr, [("all", 0.0, tr.end)])],
        "steps": lambda: hostviz.timeline_steps(tr, [tr.end / 2, tr.end]),
        "pass": lambda: [viz.pass_figure(prog, "fuse")] if shutil.which("dot") else [],
        "calibration": lambda: [calibration_figure()],
    }


def calibration_figure():
    from types import SimpleNamespace

    from labsim.viz.calibration import ratio_figure

    rows = [SimpleNamespace(group="copy", experiment=f"{n} MiB", ratio=q) for n, q in ((1, 0.9), (64, 1.6), (8, None))]
    return ratio_figure(rows)


@pytest.fixture(scope="module")
def builders():
    return _builders()


@pytest.mark.parametrize("name", ["timeline", "roofline", "bar_compare", "buffer_chart", "sm_diagram", "occupancy",
                                  "launch", "waves", "coalescing", "schedule", "divergence", "tensorcore",
                                  "tpu systolic", "schedule_chart", "tile_bars", "tile_landscape", "systolic",
                                  "spans", "steps", "pass", "calibration"])
def test_every_builder_converts(builders, name):
    figs = builders[name]()
    for fig in figs:
        mfig = pf.to_matplotlib(fig)
        assert mfig.axes, name
        # the print face draws what the Plotly figure holds: as many bar rectangles as bars
        n_bars = sum(len([v for v in (t.x if t.orientation == "h" else t.y) if v is not None])
                     for t in fig.data if t.type == "bar" and t.visible is not False)
        drawn = sum(len(bars(ax)) for ax in mfig.axes)
        assert drawn == n_bars, name


def test_an_unfilled_shape_stays_unfilled_and_a_data_shape_is_in_view():
    """Plotly's default shape fill is transparent (an opacity must not make it opaque), and Plotly's
    autorange takes in shapes in data coordinates: an add_hline under every bar is still on the plot."""
    fig = go.Figure(go.Bar(x=["a", "b"], y=[10, 20]))
    fig.add_shape(type="rect", x0=-0.4, x1=0.4, y0=1, y1=5, line=dict(dash="dot"), opacity=0.8)
    fig.add_hline(y=40, line_color=ROLE["mismatch"])
    fig.update_yaxes(type="log")
    ax = pf.to_matplotlib(fig).axes[0]
    (rect,) = [p for p in ax.patches if isinstance(p, Rectangle) and np.isclose(p.get_y(), 1)]
    assert rect.get_facecolor()[3] == 0
    assert ax.get_ylim()[1] >= 40


def test_make_print_runs_a_page_and_writes_its_figures(tmp_path):
    """book/_ext/labsim_print.py (``make print``) on a two-figure page: a fresh kernel runs it with
    LABSIM_PRINT_DIR set, and the page's folder holds the numbered files and their index."""
    pytest.importorskip("nbclient")
    pytest.importorskip("jupytext")
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("labsim_print", ROOT / "book" / "_ext" / "labsim_print.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    page = tmp_path / "42_tiny.md"
    page.write_text("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
                    "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
                    "# Tiny\n\n```{code-cell} ipython3\nimport plotly.graph_objects as go\nimport labsim.viz as viz\n"
                    "viz.show(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), alt='two bars', caption='Two bars')\n```\n\n"
                    "```{code-cell} ipython3\nviz.show(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), alt='a line', "
                    "caption='A line')\n```\n", encoding="utf-8")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + old if old else "")
    try:
        secs, n, err = runner.run_chapter(page, tmp_path / "out")
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    assert err is None and n == 2
    folder = tmp_path / "out" / "42_tiny"
    for name in ("fig-1.pdf", "fig-1.png", "fig-2.pdf", "fig-2.png"):
        assert (folder / name).read_bytes()[:4] == MAGIC[name[-4:]]
    index = (folder / "index.md").read_text()
    assert "Figure 42.1 | Two bars" in index and "Figure 42.2 | A line" in index


@needs_dot
def test_a_large_graph_drawing_keeps_its_labels_readable():
    """A drawing is shrunk to fit a page only until its smallest label reaches MIN_FONT_PT (8 pt)."""
    import re

    def chain(x):
        for _ in range(12):
            x = ls.numpy.exp(x) * 2.0 + 1.0
        return x

    d = viz.draw_graph(ls.trace(chain, ls.ShapeDtype((4,))))
    mfig = pf.drawing_figure(d)
    w_pt, h_pt = pf._svg_pt(d.svg)
    smallest = min(float(x) for x in re.findall(r'font-size="([\d.]+)"', d.svg))
    printed_h_pt = mfig.axes[0].get_position().height * mfig.get_figheight() * 72
    assert h_pt > 9 * 72  # taller than a page at natural size ...
    assert printed_h_pt / h_pt * smallest >= pf.MIN_FONT_PT - 1e-3  # ... but its labels stay >= 8 pt


def test_log_axis_with_tickvals_labels_each_value_and_the_legend_shows_line_and_marker():
    import plotly.graph_objects as go

    devices = [2, 4, 8, 16, 32, 64, 128, 256]
    fig = go.Figure(go.Scatter(x=devices, y=[1 + 1 / d for d in devices], mode="lines+markers", name="ring",
                               line=dict(dash="dash"), marker=dict(symbol="diamond-open", size=12)))
    fig.add_trace(go.Scatter(x=devices, y=[2.0] * 8, mode="lines", name="flat"))
    fig.update_xaxes(type="log", tickvals=devices)
    mfig = pf.to_matplotlib(fig)
    ax = mfig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(d) for d in devices]
    assert list(ax.get_xticks()) == devices and len(ax.xaxis.get_minorticklocs()) == 0
    handles = {t.get_text(): h for h, t in zip(mfig.legends[0].legend_handles, mfig.legends[0].get_texts())}
    ring = handles["ring"]
    assert ring.get_marker() == "D" and ring.get_markerfacecolor() == "none" and ring.get_linestyle() != "None"
    assert handles["flat"].get_marker() in ("None", None, "")
