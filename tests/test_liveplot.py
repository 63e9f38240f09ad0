"""The live face's plot changes in place (labsim/viz/liveplot.py, labsim/viz/plotwidget.py): a move of
a control sends the page only what changed, and the page, applying those messages with the widget's own
page code in Chromium, draws exactly the figure labsim made."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
go = pytest.importorskip("plotly.graph_objects")

import labsim.viz as lv  # noqa: E402
from labsim.viz import liveplot, plotwidget  # noqa: E402


def _fig(n: int, bar: bool = False, title: bool = False):
    f = go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)], name=f"n={n}"))
    if bar:
        f.add_bar(x=[1, 2], y=[n, 2 * n], name="bars")
    f.update_layout(height=300 + 10 * n, xaxis_title=f"{n} points")
    if title:
        f.update_layout(yaxis_title="squares")
    return f


#: a sequence with every kind of change: values, fewer layout keys, more traces (another kind), fewer
SEQUENCE = [(2, False, True), (3, False, False), (4, True, True), (5, True, False), (2, False, False)]


def _widget(fig):
    pytest.importorskip("anywidget")
    return plotwidget.widget_class()(fig, {"displaylogo": False})


def _page_apply(state: dict, msg: dict) -> dict:
    """What the page code does with a message (the same rules, in Python, to check the kernel side alone;
    the browser test below runs the page code itself)."""
    def patched(obj, changes):
        out = dict(obj)
        for k, v in (changes or {}).items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = v
        return out
    data = msg["data"] if "data" in msg else [patched(t, (msg.get("traces") or [{}] * len(state["data"]))[i])
                                                for i, t in enumerate(state["data"])]
    return {"data": data, "layout": patched(state["layout"], msg.get("layout"))}


def test_plain_json_of_a_figure():
    v = {"a": [1, {"b": np.arange(3.0)}, (2, "s")], "c": None, "d": [math.nan, np.float32(1.5), np.int64(7), math.inf]}
    got = plotwidget.plain(v)
    assert got == {"a": [1, {"b": [0.0, 1.0, 2.0]}, [2, "s"]], "c": None, "d": [None, 1.5, 7, None]}
    assert json.loads(json.dumps(got, allow_nan=False)) == got
    with pytest.raises(TypeError, match="cannot be sent to the page: .*object"):
        plotwidget.plain({"x": object()})
    import labsim as ls
    with pytest.raises(ls.ArgumentError, match="expected a Plotly figure, got dict"):
        plotwidget.figure_json({"data": []})


def test_change_to_sends_only_what_changed_and_the_page_gets_each_figure():
    figs = [_fig(*a) for a in SEQUENCE]
    w = _widget(figs[0])
    page = json.loads(json.dumps(w.figure))  # what the page got first
    sent = []
    w.send = lambda msg, buffers=None: sent.append(json.loads(json.dumps(msg, allow_nan=False)))
    for fig in figs[1:]:
        sent.clear()
        msg = w.change_to(fig)
        assert len(sent) == 1 and sent[0] == json.loads(json.dumps(msg)), "one move, one message"
        page = _page_apply(page, sent[0])
        assert page == plotwidget.figure_json(fig) == w.figure
    # the second figure changed values only: the traces' x, y and name, the layout's height and titles
    w2 = _widget(figs[0])
    w2.send = lambda msg, buffers=None: None
    msg = w2.change_to(figs[1])
    assert set(msg) == {"kind", "traces", "layout"} and set(msg["traces"][0]) == {"x", "y", "name"}
    assert msg["layout"] == {"height": 330, "xaxis": {"title": {"text": "3 points"}}, "yaxis": None}
    assert "template" not in msg["layout"], "an unchanged property was sent again"
    assert w2.change_to(figs[1]) == {}, "an unchanged figure sent a message"


def test_the_page_gets_plotly_js_once_on_request_and_the_module_is_small():
    w = _widget(_fig(2))
    sent = []
    w.send = lambda msg, buffers=None: sent.append(msg)
    w._from_page(w, {"kind": "something else"}, [])
    assert sent == []
    w._from_page(w, {"kind": "labsim-need-plotly"}, [])
    version, source = plotwidget.plotly_js()
    assert sent == [{"kind": "labsim-plotly", "source": source}] and f"plotly.js v{version}" in source[:200]
    assert len(w._esm) < 10_000, "the page code carries plotly.js again (4.8 MB with every widget)"


def test_interactive_live_face_changes_its_plot_in_place():
    pytest.importorskip("anywidget")
    fig = lv.interactive(lambda n: _fig(n, bar=n > 3), {"n": [2, 3, 4, 5]}, alt="squares")
    box = fig.widget
    view = fig.plot.view
    assert fig.plot.in_place and isinstance(view, plotwidget.widget_class()) and view in box.children
    for n in (5, 2, 4):
        fig.controls["n"].value = n
        assert fig.plot.view is view, "the plot was replaced instead of changed in place"
        assert view.figure == plotwidget.figure_json(fig.figure)
    assert fig.plot.redraws == 3


def test_animation_steps_change_the_same_plot():
    pytest.importorskip("anywidget")
    a = lv.animate(lambda n: [_fig(k + 1) for k in range(n)], {"n": [2, 3]}, alt="growing")
    a.widget
    view = a.plot.view
    a.step_slider.value = 0
    assert len(view.figure["data"][0]["x"]) == 1 and a.plot.view is view
    a.step_slider.value = 1
    assert len(view.figure["data"][0]["x"]) == 2


def test_a_live_plot_checks_its_first_figure():
    from labsim.viz.faces import PLOTLY_CONFIG, Figure
    import ipywidgets as w
    with pytest.raises(ValueError, match="alt text"):
        liveplot.LivePlot(w, _fig(2), "", figure_cls=Figure, config=PLOTLY_CONFIG)


def test_without_anywidget_the_plot_is_an_output_drawn_again(monkeypatch):
    monkeypatch.setattr(liveplot, "has_figure_widget", lambda: False)
    fig = lv.interactive(lambda n: _fig(n), {"n": [2, 3, 4]}, alt="squares")
    fig.widget
    assert not fig.plot.in_place and type(fig.plot.view).__name__ == "Output"
    fig.controls["n"].value = 4
    assert fig.plot.redraws == 1 and len(fig.figure.data[0].x) == 4


# ---- the page code itself, in Chromium, with a stand-in for the widget's model ----
_HARNESS = """async ([esm, state, source]) => {
  // as anywidget does: the module imported from a blob for each widget, a model per widget
  const url = URL.createObjectURL(new Blob([esm], {type: 'text/javascript'}));
  const mod = (await import(url)).default;
  const handlers = {};
  window.__asked = window.__asked || [];
  const model = {
    state, get(k) { return this.state[k]; },
    set(k, v) { this.state[k] = v; (handlers['change:' + k] || []).forEach(f => f()); },
    on(e, f) { (handlers[e] = handlers[e] || []).push(f); },
    off(e, f) { handlers[e] = (handlers[e] || []).filter(g => g !== f); },
    emit(e, msg) { (handlers[e] || []).forEach(f => f(msg, [])); },
    send(msg) {  // the kernel's side (PlotWidget._from_page): plotly.js for the asking page
      window.__asked.push(msg.kind);
      if (msg.kind === 'labsim-need-plotly') setTimeout(() => this.emit('msg:custom', {kind: 'labsim-plotly', source}), 10);
    },
  };
  mod.initialize({model});
  const el = document.createElement('div'); el.style.width = '700px'; document.body.appendChild(el);
  const dispose = mod.render({model, el});
  window.__pw = {model, el, dispose, div: el.querySelector('.labsim-plotwidget')};
}"""

_DRAWN = "(n) => window.__pw.div.dataset.labsimDrawn === String(n)"

_SHOWN = """() => { const gd = window.__pw.div;
  return JSON.parse(JSON.stringify({data: gd.data, layout: gd.layout, shown: gd.querySelectorAll('.trace').length})); }"""


def _contains(got, want, path="") -> list[str]:
    """Where ``got`` lacks or differs from a leaf of ``want`` (Plotly may add keys of its own)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is not an object"]
        return [p for k, v in want.items() for p in _contains(got.get(k), v, f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {got!r} != {want!r}"]
        return [p for i, (g, v) in enumerate(zip(got, want)) for p in _contains(g, v, f"{path}[{i}]")]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


@pytest.mark.browser
def test_the_page_code_draws_each_figure_from_the_changes(browser):
    figs = [_fig(*a) for a in SEQUENCE]
    w = _widget(figs[0])
    sent = []
    w.send = lambda msg, buffers=None: sent.append(json.loads(json.dumps(msg, allow_nan=False)))
    page = browser.new_page()
    try:
        page.goto("about:blank")
        source = plotwidget.plotly_js()[1]
        page.evaluate(_HARNESS, [w._esm, {"figure": json.loads(json.dumps(w.figure)), "config": w.config}, source])
        page.wait_for_function(_DRAWN, arg=1, timeout=20_000)
        assert page.evaluate("() => window.__asked") == ["labsim-need-plotly"]
        for k, fig in enumerate(figs[1:], start=2):
            sent.clear()
            w.change_to(fig)
            page.evaluate("(m) => window.__pw.model.emit('msg:custom', m)", sent[0])
            page.wait_for_function(_DRAWN, arg=k, timeout=20_000)
            shown = page.evaluate(_SHOWN)
            want = plotwidget.figure_json(fig)
            assert len(shown["data"]) == len(want["data"]) == shown["shown"]
            problems = _contains(shown, {"data": want["data"], "layout": {k: v for k, v in want["layout"].items()
                                                                          if k != "template"}})
            assert not problems, f"figure {k}: the page draws something else: {problems[:5]}"
            title = (shown["layout"].get("yaxis") or {}).get("title")
            assert (title is not None) == ("yaxis" in want["layout"]), f"figure {k}: y title left over: {title}"
        # a narrower column refits the width and keeps the figure's height (Plotly's resize alone drops it)
        page.evaluate("() => { window.__pw.el.style.width = '420px'; }")
        page.wait_for_function("() => Math.round(window.__pw.div._fullLayout.width) === 420", timeout=20_000)
        page.wait_for_timeout(300)
        assert page.evaluate("() => window.__pw.div._fullLayout.height") == plotwidget.figure_json(figs[-1])["layout"]["height"]
        assert page.evaluate("() => window.Plotly.version") == plotwidget.plotly_js()[0]
        # a second plot in the page draws with the plotly.js loaded: it does not ask again
        page.evaluate(_HARNESS, [w._esm, {"figure": plotwidget.figure_json(figs[0]), "config": w.config}, ""])
        page.wait_for_function(_DRAWN, arg=1, timeout=20_000)
        assert page.evaluate("() => window.__asked") == ["labsim-need-plotly"]
    finally:
        page.close()


def test_a_live_plot_collects_then_freezes_the_heap_it_finds():
    """A full collection of a chapter's heap took 90–140 ms and landed inside moves of controls: drawing a
    live figure collects the garbage there is, then freezes the rest (full collections skip it)."""
    import gc
    import weakref

    from labsim.viz.faces import PLOTLY_CONFIG, Figure
    import ipywidgets as w

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the cyclic collector frees it
    gone = weakref.ref(a)
    del a, b
    gc.unfreeze()
    try:
        liveplot.LivePlot(w, _fig(2), "squares", figure_cls=Figure, config=PLOTLY_CONFIG)
        assert gone() is None, "the garbage was frozen instead of collected"
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
