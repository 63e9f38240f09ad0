"""The live face's plot changes in place (labsim/viz/liveplot.py): after every move of a control the
FigureWidget holds exactly the figure labsim made, and a move sends only what changed."""
from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
go = pytest.importorskip("plotly.graph_objects")

import labsim.viz as lv  # noqa: E402
from labsim.viz import liveplot  # noqa: E402


def _fig(n: int, bar: bool = False, title: bool = False):
    f = go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)], name=f"n={n}"))
    if bar:
        f.add_bar(x=[1, 2], y=[n, 2 * n], name="bars")
    f.update_layout(height=300 + 10 * n, xaxis_title=f"{n} points")
    if title:
        f.update_layout(yaxis_title="squares")
    return f


def _same(widget, fig) -> None:
    got, want = widget.to_plotly_json(), fig.to_plotly_json()
    assert [t.get("type") for t in got["data"]] == [t.get("type", "scatter") for t in want["data"]]
    for g, w in zip(got["data"], want["data"]):
        for k, v in w.items():
            assert list(g[k]) == list(v) if hasattr(v, "__len__") and not isinstance(v, str) else g[k] == v, k
        assert set(g) - {"uid"} <= set(w) | {"type"}, f"left over: {set(g) - set(w)}"
    assert got["layout"].get("height") == want["layout"].get("height")
    assert (got["layout"].get("yaxis") or {}).get("title") == (want["layout"].get("yaxis") or {}).get("title")
    assert got["layout"]["xaxis"]["title"] == want["layout"]["xaxis"]["title"]


def test_morph_makes_the_widget_hold_each_new_figure():
    pytest.importorskip("anywidget")
    widget = go.FigureWidget(_fig(2, title=True))
    # same traces, fewer layout keys; more traces (another kind); fewer again
    for fig in (_fig(3), _fig(4, bar=True, title=True), _fig(5, bar=True), _fig(2)):
        liveplot.morph(widget, fig)
        _same(widget, fig)


def test_morph_sends_one_batch_and_only_what_changed(monkeypatch):
    pytest.importorskip("anywidget")
    widget = go.FigureWidget(_fig(3))
    sent = []
    monkeypatch.setattr(widget, "_send_update_msg", lambda restyle_data, relayout_data, *a, **k:
                        sent.append((restyle_data, relayout_data)), raising=False)
    liveplot.morph(widget, _fig(4))
    assert len(sent) == 1, f"one move should send one update message, sent {len(sent)}"
    restyle, relayout = sent[0]
    assert "x" in restyle and "y" in restyle and "height" in relayout
    assert list(restyle["x"][0]) == [0, 1, 2, 3] and relayout["height"] == 340
    assert "template" not in relayout and "type" not in restyle, "an unchanged property was sent again"
    sent.clear()
    assert liveplot.morph(widget, _fig(4)) == {"restyle": {}, "relayout": {}}
    assert not sent, f"an unchanged figure sent {sent}"


def test_interactive_live_face_updates_its_figure_widget_in_place():
    pytest.importorskip("anywidget")
    fig = lv.interactive(lambda n: _fig(n, bar=n > 3), {"n": [2, 3, 4, 5]}, alt="squares")
    box = fig.widget
    view = fig.plot.view
    assert fig.plot.in_place and isinstance(view, go.FigureWidget) and view in box.children
    for n in (5, 2, 4):
        fig.controls["n"].value = n
        assert fig.plot.view is view, "the plot was replaced instead of changed in place"
        assert [list(t.x) for t in view.data] == [list(t.x) for t in fig.figure.data]
    assert fig.plot.redraws == 3


def test_animation_steps_change_the_same_plot():
    pytest.importorskip("anywidget")
    a = lv.animate(lambda n: [_fig(k + 1) for k in range(n)], {"n": [2, 3]}, alt="growing")
    a.widget
    view = a.plot.view
    a.step_slider.value = 0
    assert len(view.data[0].x) == 1 and a.plot.view is view
    a.step_slider.value = 1
    assert len(view.data[0].x) == 2


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
