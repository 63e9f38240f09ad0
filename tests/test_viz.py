"""``labsim.viz``: graph drawings, timelines, and both faces of an interactive figure."""
from __future__ import annotations

import html
import itertools
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp

go = pytest.importorskip("plotly.graph_objects")
lv = pytest.importorskip("labsim.viz")

S = ls.ShapeDtype
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")


def mlp(x, w, b):
    return lnn.softmax(lnp.tanh(x @ w + b))


@pytest.fixture(scope="module")
def graph():
    return ls.trace(mlp, S((8, 16)), S((16, 4)), S((4,)))


# ----------------------------------------------------------------------------------------------
# graphs
@needs_dot
def test_draw_graph_shows_every_op_and_has_alt_text(graph):
    d = lv.draw_graph(graph)
    assert d.svg.lstrip().startswith(("<?xml", "<svg", "<!--"))
    assert "</svg>" in d.svg
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>", d.svg)]
    for n in graph.nodes:
        assert ls.ops.get(n.op).hlo in texts, n.op
        assert n.out.aval.short() in texts
    for name in graph.input_names:
        assert name in texts
    assert d.alt and f"{len(graph.nodes)} operations" in d.alt and graph.name in d.alt
    page = d._repr_html_()
    assert f'aria-label="{html.escape(d.alt)}"' in page and 'role="img"' in page
    assert "<?xml" not in page  # inline SVG without the XML prolog
    assert "digraph" in d.source


@needs_dot
@pytest.mark.parametrize("eager", [True, False])
def test_draw_program_draws_one_cluster_per_kernel(graph, eager):
    prog = ls.compile(graph, passes=[] if eager else None)
    d = lv.draw_graph(prog)
    clusters = re.findall(r'<g id="clust\d+" class="cluster">', d.svg)
    assert len(clusters) == len(prog.kernels) >= 1
    for k in prog.kernels:
        assert f"kernel {k.name}" in d.svg
    assert f"grouped into {len(prog.kernels)} kernels" in d.alt
    plain = lv.draw_graph(prog, kernels=False)
    assert not re.findall(r'class="cluster"', plain.svg)


# ----------------------------------------------------------------------------------------------
# timelines
def bars(fig):
    return [t for t in fig.data if t.type == "bar"]


@pytest.mark.parametrize("eager", [True, False])
def test_timeline_has_one_bar_per_event(graph, eager):
    prog = ls.compile(graph, passes=[] if eager else None)
    tr = ls.simulate(prog, "H100 SXM").trace
    fig = lv.timeline(tr, title="one call")
    bs = bars(fig)
    assert sum(len(b.x) for b in bs) == len(tr.events)
    assert {b.name for b in bs} == {e.kind.value for e in tr.events}  # one legend entry per kind
    # the bars sit where the events are (µs for a trace this short)
    scale = 1e6
    got = sorted((y, round(base, 9), round(w, 9)) for b in bs for y, base, w in zip(b.y, b.base, b.x))
    want = sorted((e.unit.label, round(e.start * scale, 9), round(e.duration * scale, 9)) for e in tr.events)
    assert got == want
    assert list(fig.layout.yaxis.categoryarray) == [u.label for u in tr.units][::-1]
    assert "µs" in fig.layout.xaxis.title.text


def test_timeline_of_a_hand_made_trace():
    a, b = ls.UnitId(0, ls.UnitKind.SM, 3), ls.UnitId(0, ls.UnitKind.COPY_ENGINE, 0, ls.Direction.H2D)
    K, C = ls.EventKind.KERNEL, ls.EventKind.COPY
    tr = ls.Trace((ls.Event(a, "x", 0.0, 2.0, K), ls.Event(b, "y", 1.0, 3.0, C), ls.Event(a, "z", 2.0, 2.5, K)))
    fig = lv.timeline(tr)
    assert sum(len(b.x) for b in bars(fig)) == 3
    assert sorted(y for bar in bars(fig) for y in bar.y) == sorted([a.label, a.label, b.label])
    assert fig.layout.xaxis.title.text == "time (s)"


def test_timeline_max_time_fixes_the_axis_but_never_cuts_an_event_off():
    a = ls.UnitId(0, ls.UnitKind.SM, 0)
    tr = ls.Trace((ls.Event(a, "x", 0.0, 2.0, ls.EventKind.KERNEL), ls.Event(a, "y", 2.0, 3.0, ls.EventKind.KERNEL)))
    assert list(lv.timeline(tr, max_time=5.0).layout.xaxis.range) == [0, 5.0]  # longer: the axis stays put
    assert list(lv.timeline(tr, max_time=2.5).layout.xaxis.range) == [0, 3.0]  # shorter: widened to the last end


def test_timeline_rows_of_two_chips_stay_apart():
    # the same unit on two chips has the same label; the rows must not merge
    sm0, sm1 = ls.UnitId(0, ls.UnitKind.SM, 0), ls.UnitId(1, ls.UnitKind.SM, 0)
    host = ls.UnitId(ls.HOST_CHIP, ls.UnitKind.HOST_THREAD)
    K = ls.EventKind.KERNEL
    tr = ls.Trace((ls.Event(host, "launch", 0.0, 1.0, ls.EventKind.LAUNCH), ls.Event(sm0, "k", 1.0, 2.0, K),
                   ls.Event(sm1, "k", 1.5, 3.0, K)))
    fig = lv.timeline(tr)
    rows = list(fig.layout.yaxis.categoryarray)
    assert len(set(rows)) == len(tr.units) == 3
    kernel_rows = [y for bar in bars(fig) if bar.name == "kernel" for y in bar.y]
    assert len(set(kernel_rows)) == 2 and all(sm0.label in y for y in kernel_rows)


# ----------------------------------------------------------------------------------------------
# interactive figures: a representative one built from the pipeline
SIZES = [64, 256, 1024]
CHIPS = ["H100 SXM", "A100 80GB"]


def make_fig(n, chip):
    prog = ls.compile(ls.trace(mlp, S((n, n)), S((n, n)), S((n,))))
    return lv.timeline(ls.simulate(prog, chip).trace, title=f"n={n} on {chip}")


def alt(n, chip):
    return f"Timeline of one call of an MLP layer of size {n} on the {chip}."


def data_of(fig):
    return json.dumps(fig.to_plotly_json()["data"], sort_keys=True, default=str)


def test_live_face_callback_changes_the_figure():
    pytest.importorskip("ipywidgets")
    fig = lv.interactive(make_fig, controls={"n": SIZES, "chip": CHIPS}, alt=alt)
    w = fig.widget
    assert set(fig.controls) == {"n", "chip"} and len(w.children) >= 2
    assert fig.params == {"n": 256, "chip": "A100 80GB"}  # default: the middle value
    for name, other in (("n", 1024), ("chip", "H100 SXM"), ("n", 64)):
        before = data_of(fig.figure)
        fig.controls[name].value = other  # what the reader's slider does
        assert fig.params[name] == other
        assert fig.error is None
        assert data_of(fig.figure) != before, f"moving {name} to {other} did not change the figure"
        assert data_of(fig.figure) == data_of(make_fig(**fig.params))


def test_live_face_keeps_the_last_good_figure_on_error():
    pytest.importorskip("ipywidgets")

    def fragile(n):
        if n == 3:
            raise ValueError("n=3 is not allowed")
        return go.Figure(go.Bar(x=[n], y=[n * n]))

    fig = lv.interactive(fragile, controls={"n": [1, 2, 3]}, alt="squares")
    fig.widget
    fig.controls["n"].value = 1
    good = data_of(fig.figure)
    fig.controls["n"].value = 3
    assert fig.error is not None and "ValueError" in fig.error and "n=3 is not allowed" in fig.error
    assert data_of(fig.figure) == good
    assert fig.params["n"] == 1
    fig.controls["n"].value = 2
    assert fig.error is None and data_of(fig.figure) != good


def test_update_without_widgets():
    fig = lv.interactive(lambda k: go.Figure(go.Scatter(y=[k, k])), controls={"k": [1, 2, 3]}, alt="k")
    assert fig.figure.data[0].y == (2, 2)
    fig.update(k=3)
    assert fig.figure.data[0].y == (3, 3)


def static_payload(page: str) -> dict:
    m = re.search(r'<script type="application/json" class="labsim-data">(.*?)</script>', page, re.S)
    assert m, "no embedded figure data"
    return json.loads(m.group(1))


def test_static_face(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    controls = {"n": SIZES, "chip": CHIPS}
    fig = lv.interactive(make_fig, controls=controls, alt=alt, labels={"n": "matrix size"})
    bundle = fig._repr_mimebundle_()
    page = bundle["text/html"]
    assert bundle["text/plain"] == alt(**fig.params)
    assert 'class="labsim-figure"' in page
    assert 'data-labsim-kind="interactive"' in page
    # numbers get a slider with one tick per value; a few names get toggle buttons
    assert len(re.findall(r'<input[^>]*class="labsim-control labsim-slider"', page)) == 1
    m = re.search(r'<input[^>]*data-param="n"[^>]*max="(\d+)"', page)
    assert m and int(m.group(1)) == len(SIZES) - 1
    ticks = re.search(r'<datalist[^>]*>(.*?)</datalist>', page, re.S).group(1)
    assert ticks.count("<option") == len(SIZES)
    toggle = re.search(r'<div class="labsim-control labsim-toggle"[^>]*data-param="chip"[^>]*>(.*?)</div>', page, re.S)
    assert toggle, "the chip (a choice of names) is not a row of toggle buttons"
    assert re.findall(r"<button[^>]*>([^<]*)</button>", toggle.group(1)) == CHIPS
    assert "matrix size" in page
    assert f'aria-label="{html.escape(alt(**fig.params))}"' in page
    assert 'role="img"' in page
    assert not re.search(r"https?://|//cdn|cdn\.", page, re.I), "the static page must not load anything remote"
    payload = static_payload(page)
    figures = payload["figures"]
    assert len(figures) == math.prod(len(v) for v in controls.values())
    for combo in itertools.product(*(range(len(v)) for v in controls.values())):
        key = "_".join(map(str, combo))
        params = {k: controls[k][i] for k, i in zip(controls, combo)}
        want = json.loads(json.dumps(make_fig(**params).to_plotly_json()["data"], default=lambda o: o.tolist()))
        assert [t["type"] for t in figures[key]["data"]] == [t["type"] for t in want]
        # the title left the plot and became the figure's caption (numbered in HTML)
        assert not (figures[key]["layout"].get("title") or {}).get("text")
        assert payload["captions"][key] == f"n={params['n']} on {params['chip']}"
        got_x = [t["x"] for t in figures[key]["data"]]
        assert np.allclose(np.concatenate([np.ravel(x) for x in got_x]),
                           np.concatenate([np.ravel(t["x"]) for t in want]))
    initial = "_".join(str(controls[k].index(fig.params[k])) for k in controls)
    assert payload["initial"] == initial


def test_static_face_of_a_plain_figure(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    f = lv.show(go.Figure(go.Bar(x=[1], y=[2])), alt="one bar")
    page = f._repr_mimebundle_()["text/html"]
    assert 'data-labsim-kind="static"' in page and 'aria-label="one bar"' in page
    assert not re.search(r'<input[^>]*class="labsim-slider"', page)


def test_static_face_refuses_too_many_frames(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    fig = lv.interactive(lambda a, b: go.Figure(go.Bar(x=[a], y=[b])), controls={"a": list(range(20)), "b": list(range(20))}, alt="x")
    with pytest.raises(ValueError, match="400 combinations"):
        fig.to_html()


def test_static_face_reports_the_failing_combination(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")

    def f(n):
        if n == 2:
            raise ZeroDivisionError("boom")
        return go.Figure(go.Bar(x=[n], y=[n]))

    fig = lv.interactive(f, controls={"n": [1, 2]}, alt="x", defaults={"n": 1})
    with pytest.raises(RuntimeError, match=r"\{'n': 2\}.*boom"):
        fig.to_html()


def test_roofline_figure_draws_the_preset_roof():
    chip = ls.hardware.PRESETS["H100 SXM"]
    fig = lv.roofline("H100 SXM", points=[("gemm", 1000.0, None), ("add", 0.083, None)], dtype="bfloat16")
    roof = fig.data[0]
    xs, ys = np.asarray(roof.x), np.asarray(roof.y)
    np.testing.assert_allclose(ys, np.minimum(chip.matrix_flops["bfloat16"], xs * chip.hbm_bandwidth) / 1e12)
    pts = fig.data[-1]
    np.testing.assert_allclose(pts.y, [min(chip.matrix_flops["bfloat16"], i * chip.hbm_bandwidth) / 1e12
                                       for i in (1000.0, 0.083)])
    # the ridge's label sits on the ridge, inside the log axis (whose coordinates are log10 of the value)
    ridge = chip.ridge_point("bfloat16")
    label = next(a for a in fig.layout.annotations if a.text.startswith("ridge"))
    assert label.x == pytest.approx(np.log10(ridge))
    lo, hi = fig.layout.xaxis.range if fig.layout.xaxis.range else (np.log10(min(xs)), np.log10(max(xs)))
    assert lo <= label.x <= hi


# ----------------------------------------------------------------------------------------------
# tabs
def test_tabs_keep_every_panel_in_order_and_degrade_to_sections():
    t = lv.tabs({"jaxpr": "{ lambda ; a:f32[4]. let b = exp a in (b,) }", "HLO <raw>": "%0 = exp(a) & more"},
                initial="HLO <raw>")
    page = t._repr_html_()
    assert page.startswith('<div class="labsim-tabs"')
    sections = re.findall(r'<section class="labsim-tab-panel" id="([^"]+)"><h4 class="labsim-tab-label"[^>]*>(.*?)</h4>',
                          page)
    assert [label for _, label in sections] == ["jaxpr", "HLO &lt;raw&gt;"]
    assert len({sid for sid, _ in sections}) == 2
    # the text is escaped and shown in full, so without JavaScript every panel is readable, stacked
    assert "%0 = exp(a) &amp; more" in page and "{ lambda ; a:f32[4]. let b = exp a in (b,) }" in page
    before_script = page.split("<script>")[0]
    assert "hidden" not in before_script and "display:none" not in before_script.replace(" ", "")
    # the script is inline and offline, and opens the chosen tab
    assert not re.search(r"https?://|//cdn|<script[^>]*src=", page, re.I)
    assert "pick(1);" in page
    assert "== jaxpr ==" in repr(t)


def test_tabs_embed_html_objects_and_refuse_bad_input(graph):
    class Html:
        def _repr_html_(self):
            return "<b>drawn</b>"

    page = lv.tabs({"graph": Html(), "text": str(graph)}).to_html()
    assert "<b>drawn</b>" in page and html.escape(str(graph)) in page
    with pytest.raises(ValueError):
        lv.tabs({})
    with pytest.raises(ValueError):
        lv.tabs({"a": "x"}, initial="b")
    a, b = lv.tabs({"a": "x"}).to_html(), lv.tabs({"a": "x"}).to_html()
    assert re.search(r'id="(lstabs-\w+)"', a).group(1) != re.search(r'id="(lstabs-\w+)"', b).group(1)


# ----------------------------------------------------------------------------------------------
# pass slider
@needs_dot
def test_pass_slider_has_one_precomputed_step_per_pass(monkeypatch):
    sm = ls.compile(ls.trace(lambda x: lnn.softmax(x, axis=-1), S((4, 8))))
    w = lv.pass_slider({"decompose": sm, "fuse": sm}, captions={"decompose": "softmax"})
    # a drawing made of images still carries data (the browser test needs a trace to call it rendered)
    assert all(len(lv.passes.pass_figure(sm, name).data) >= 1 for name in ("decompose", "fuse"))
    assert w.controls_spec == {"pass_name": ["decompose", "fuse"]}
    fig = w.update(pass_name="decompose")
    assert len(fig.layout.images) == 2 and all(im.source.startswith("data:image/svg+xml;base64,")
                                              for im in fig.layout.images)
    assert "before: 1 operation" in [a.text for a in fig.layout.annotations]
    assert "the 1 operation that enters the decompose pass" in w.alt_text(pass_name="decompose")
    # drawn once, switched afterwards: moving the slider never calls Graphviz again
    monkeypatch.setattr(lv.passes, "draw_graph", lambda *a, **k: pytest.fail("drew a graph again"))
    assert w.update(pass_name="fuse").layout.images[0].source == w.update(pass_name="fuse").layout.images[0].source
    monkeypatch.setenv("LABSIM_BOOK", "1")
    page = w._repr_mimebundle_()["text/html"]
    assert len(static_payload(page)["figures"]) == 2
    # every step keeps its caption (the title), the first one too: the website numbers the figure
    assert 'class="labsim-fignum"' in page and "Pass decompose: softmax" in page
    with pytest.raises(ValueError, match="did not run pass"):
        lv.pass_slider({"cse": ls.compile(ls.trace(lambda x: x * 2.0, S((4,))), passes=[])})


def test_program_stage_and_max_error():
    p = ls.compile(ls.trace(lambda x: lnn.softmax(x, axis=-1), S((4, 8))))
    assert p.stage("traced") is p.source and p.stage("fuse") is p.graph
    with pytest.raises(KeyError):
        p.stage("nope")
    assert p.max_error() < 1e-6
    assert ls.compile(ls.trace(lambda x: lnp.sqrt(x) * 2.0, S((16,)))).max_error(positive=True) < 1e-6


# ----------------------------------------------------------------------------------------------
# one figure system: template, log ticks, shared axes across steps, no modebar
def test_style_uses_the_book_template_with_the_legend_below():
    fig = lv.style(go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a")), title="t")
    t = fig.layout.template.layout
    assert "system-ui" in t.font.family and "labsim Hangul" in t.font.family
    assert (t.legend.yref, t.legend.y, t.legend.yanchor) == ("container", 0, "bottom")
    assert list(t.colorway) == lv.plots.COLORWAY and "#E69F00" not in t.colorway  # no role colour for a plain series


@pytest.mark.parametrize("lo, hi, want", [(1e-2, 1e4, "decades"), (20, 300, "full")])
def test_log_axes_never_label_minor_ticks_with_a_lone_digit(lo, hi, want):
    fig = lv.style(go.Figure(go.Scatter(x=[lo, hi], y=[1, 2])).update_xaxes(type="log"))
    ax = fig.layout.xaxis
    if want == "decades":
        assert ax.dtick == 1 and ax.minor.dtick == "D1" and ax.minor.showgrid
    else:
        assert ax.dtick is None and ax.tickformat == "~g"
    fixed = lv.style(go.Figure(go.Scatter(x=[1, 2], y=[1, 2])).update_xaxes(type="log", dtick="D2"))
    assert fixed.layout.xaxis.dtick == "D2", "an axis the caller ticks itself is left alone"


def test_share_axes_gives_every_step_the_union_range():
    from labsim.viz.faces import share_axes

    figs = [lv.roofline(c, [("k", 10.0, None)]) for c in ("H100 SXM", "CPU")]
    share_axes(figs)
    assert figs[0].layout.yaxis.range == figs[1].layout.yaxis.range
    lo, hi = figs[0].layout.yaxis.range
    for f in figs:  # every roof lies inside the shared range
        ys = np.concatenate([np.asarray(t.y, float) for t in f.data])
        assert lo <= np.log10(ys.min()) and np.log10(ys.max()) <= hi
    assert figs[0].layout.xaxis.range == (-2.0, 4.0), "a range the figure fixes itself is kept"
    bars = [lv.style(go.Figure(go.Bar(y=["a", "b"], x=[n, 2 * n], orientation="h")).update_yaxes(autorange="reversed"))
            for n in (1, 5)]
    share_axes(bars)
    assert bars[0].layout.xaxis.range == bars[1].layout.xaxis.range and bars[0].layout.xaxis.range[0] == 0
    assert bars[0].layout.xaxis.range[1] >= 10 and bars[0].layout.yaxis.range is None, "categories keep autorange"
    stacked = [go.Figure([go.Bar(x=["a"], y=[n]), go.Bar(x=["a"], y=[n])]).update_layout(barmode="stack")
               for n in (1, 3)]
    share_axes(stacked)
    assert stacked[0].layout.yaxis.range[1] >= 6


def test_static_face_shares_axes_and_shows_no_modebar(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    f = lv.interactive(lambda chip: lv.roofline(chip, [("k", 10.0, None)]), {"chip": ["H100 SXM", "CPU"]}, alt="r")
    page = f.to_html()
    assert "displayModeBar: false" in page and "modeBarButtons" not in page
    figs = static_payload(page)["figures"]
    assert figs["0"]["layout"]["yaxis"]["range"] == figs["1"]["layout"]["yaxis"]["range"]
    own = lv.interactive(lambda chip: lv.roofline(chip, [("k", 10.0, None)]), {"chip": ["H100 SXM", "CPU"]},
                         alt="r", shared_axes=False)
    figs = static_payload(own.to_html())["figures"]
    assert "range" not in figs["0"]["layout"]["yaxis"]


# ---- animations: a play button and a step slider on both faces ------------------------------------

def _bars(n, grow):
    return [go.Figure(go.Bar(x=list(range(n)), y=[(t + 1) * grow] * n)) for t in range(5)]


def test_animation_static_face_has_frames_play_and_fixed_axes(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    a = lv.animate(_bars, {"n": [2, 3], "grow": [1.0, 4.0]}, alt="growing bars", step_label="cycle",
                   caption=lambda n, grow: f"{n} bars growing by {grow}")
    page = a._repr_mimebundle_()["text/html"]
    payload = static_payload(page)
    assert len(payload["figures"]) == 4
    ymax = set()
    for key, fig in payload["figures"].items():
        assert len(fig["frames"]) == 5
        assert [f["name"] for f in fig["frames"]] == [str(i) for i in range(5)]
        # no Plotly buttons or slider inside the plot (role="img"): the page's own HTML controls
        assert not fig["layout"].get("updatemenus") and not fig["layout"].get("sliders")
        assert payload["anim"]["steps"][key] == [str(i) for i in range(5)] and payload["anim"]["start"][key] == 0
        ymax.add(tuple(fig["layout"]["yaxis"]["range"]))
    assert payload["anim"]["label"] == "cycle"
    plot_end = page.index("</div>", page.index('class="labsim-plot" role="img"'))
    for control in ('class="labsim-anim-play"', 'class="labsim-anim-back"', 'class="labsim-anim-next"',
                    'class="labsim-anim-step"', 'aria-live="polite"'):
        assert page.index(control) > plot_end, control  # outside the plot's role="img"
    assert re.search(r'<label for="(lsfig-[0-9a-f]+-step)"[^>]*>cycle</label><input type="range" id="\1"', page)
    assert "cycle: 0 (1 of 5)" in page  # the live line's first text, before the script runs
    # one y range for every step of every combination: the tallest bar is 5 * 4.0
    assert len(ymax) == 1 and max(ymax.pop()) >= 20.0
    assert payload["captions"]["1_1"] == "3 bars growing by 4.0"
    assert '<figcaption class="labsim-caption">' in page


def test_animation_opens_on_the_step_asked_for(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    a = lv.animate(lambda: _bars(2, 1.0), alt="growing bars", start=-1)
    payload = static_payload(a.to_html())
    (key, fig), = payload["figures"].items()
    assert payload["anim"]["start"][key] == 4
    assert fig["data"][0]["y"] == fig["frames"][4]["data"][0]["y"] != fig["frames"][0]["data"][0]["y"]

    def marked():
        frames = _bars(2, 1.0)
        frames[0].layout.meta = {"labsim_start": 2}
        return frames
    assert static_payload(lv.animate(marked, alt="x").to_html())["anim"]["start"]["0"] == 2
    with pytest.raises(ValueError, match="start=7"):
        lv.animate(lambda: _bars(2, 1.0), alt="x", start=7).to_html()


def test_animation_reserves_the_height_of_the_figure_it_opens_on(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    a = lv.animate(lambda n: [go.Figure(go.Bar(y=[1, n]), layout=dict(height=200 + 100 * n)) for _ in range(3)],
                   {"n": [1, 2, 3]}, alt="x", caption=lambda n: f"{n} tall", defaults={"n": 1})
    assert re.search(r'class="labsim-plot" role="img"[^>]*min-height:300px', a.to_html())


def test_animation_live_face_steps_and_controls():
    a = lv.animate(lambda n: _bars(n, 1.0), {"n": [2, 3]}, alt="growing bars")
    box = a.widget
    assert a.step_slider.max == 4
    a.step_slider.value = 3
    assert a.step == 3
    assert "step: 3 (4 of 5)" in a.step_text.value and 'aria-live="polite"' in a.step_text.value
    assert a.play.description and a.step_slider.description == "step"
    a.controls["n"].value = 2
    assert a.params["n"] == 2 and a.error is None
    assert len(a.frames_for(n=2)[0].data[0].x) == 2
    assert box is a.widget


def test_animation_refuses_frames_that_change_shape():
    def bad(n):
        return [go.Figure(go.Bar(x=[1], y=[1])), go.Figure(go.Scatter(x=[1], y=[1]))]
    with pytest.raises(ValueError, match="same traces"):
        lv.animate(bad, {"n": [1, 2]}, alt="x")


def test_control_kinds():
    assert lv.control_kind([1, 2, 3]) == "slider"
    assert lv.control_kind(["a", "b"]) == "toggle"
    assert lv.control_kind([True, False]) == "toggle"
    assert lv.control_kind(list("abcdef")) == "select"
    assert lv.control_kind(list("abcdef"), "slider") == "slider"
    with pytest.raises(ValueError, match="kind"):
        lv.control_kind([1], "knob")


def test_many_names_make_a_dropdown_and_a_caption_is_numbered_in_html(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    names = [f"chip {i}" for i in range(6)]
    f = lv.interactive(lambda chip: go.Figure(go.Bar(x=[chip], y=[1])), {"chip": names}, alt="one bar",
                       caption="A bar per chip", name="fig-bars")
    page = f._repr_mimebundle_()["text/html"]
    assert re.search(r'<select[^>]*class="labsim-control labsim-select"[^>]*data-param="chip"', page)
    assert page.count("<option value=") == len(names)
    assert '<figure class="labsim-figure-box" id="fig-bars">' in page
    assert 'data-name="fig-bars">Figure</span>' in page and "A bar per chip" in page


def test_live_axes_grow_and_never_jump_back():
    f = lv.interactive(lambda k: go.Figure(go.Scatter(x=[0, 1], y=[0, k])), {"k": [1, 10, 100]}, alt="a line",
                       defaults={"k": 10})
    f.update(k=100)
    small = f.update(k=1)
    # after the reader has seen k = 100, the axis still reaches 100 when k goes back to 1
    assert small.layout.yaxis.range[1] >= 100


def test_the_books_colour_legend_is_the_palette():
    """book/intro.md lists every role of labsim.viz.palette.ROLE with its colour (and nothing else)."""
    from labsim.viz.palette import ROLE

    text = (Path(__file__).resolve().parent.parent / "book" / "intro.md").read_text(encoding="utf-8")
    rows = re.findall(r'style="background:(#[0-9A-Fa-f]{6})"></span> `([a-z]+)`', text)
    assert dict((r, c) for c, r in rows) == dict(ROLE)


def test_roofline_roof_at_a_charged_rate():
    """``peak=`` draws the roof at the rate the roofline charged a kernel (a TPU's float32 product on the
    MXU as six bf16 passes), so its point sits on or under the roof; a non-positive peak is refused."""
    import labsim.numpy as lnp
    S = ls.ShapeDtype
    prog = ls.compile(ls.trace(lambda x, w: lnp.matmul(x, w, precision="highest"), S((4096, 4096), "float32"),
                               S((4096, 4096), "float32")))
    k = ls.estimate(prog, "TPU v5e").kernels[0]
    fig = lv.roofline("TPU v5e", [("x·W", k.intensity, k.achieved_flops)], dtype="float32", peak=k.peak_flops)
    roof = fig.data[0]
    assert max(roof.y) == pytest.approx(k.peak_flops / 1e12)
    assert k.achieved_flops <= k.peak_flops * (1 + 1e-9)
    assert k.peak_flops > ls.hardware.PRESETS["TPU v5e"].vector_flops["float32"]  # not the VPU's roof
    with pytest.raises(ValueError, match="peak"):
        lv.roofline("TPU v5e", dtype="float32", peak=-1.0)


def test_static_face_stores_the_shared_template_once():
    """The states of a figure with controls share one Plotly template: the page stores it once (it was
    about 7 kB per state, half the weight of the heaviest pages) and the script puts it back."""
    import json as _json
    import re as _re
    import plotly.graph_objects as go

    def make(n):
        return lv.style(go.Figure(go.Bar(x=list(range(n)), y=list(range(n)))))

    fig = lv.interactive(make, {"n": [1, 2, 3, 4]}, alt=lambda n: f"{n} bars",
                         caption=lambda n: lv.plural(n, "bar"))
    page = fig.to_html()
    data = _json.loads(_re.search(r'class="labsim-data">(.*?)</script>', page, _re.S).group(1))
    assert data["template"], "the shared template is stored"
    assert all("template" not in f["layout"] for f in data["figures"].values())
    assert page.count('"template"') == 1
    assert "f.layout.template = data.template" in page
    # each state still draws its own data
    assert [len(f["data"][0]["x"]) for f in data["figures"].values()] == [1, 2, 3, 4]
