"""The live face's fast paths (issue 24): what they skip (Plotly's validators, an empty property sent)
must not change what is drawn. Checked against the slow, validated ways."""
from __future__ import annotations

import math

import numpy as np
import pytest

go = pytest.importorskip("plotly.graph_objects")

from labsim.viz import plots, plotwidget  # noqa: E402


def test_an_empty_dict_counts_as_absent_but_a_real_change_is_sent():
    assert plotwidget._changes({}, {"title": {}}) == {}
    assert plotwidget._changes({"title": {}}, {}) == {}
    assert plotwidget._changes({"title": {"text": "a"}}, {"title": {}}) == {"title": {}}
    assert plotwidget._changes({"title": {"text": "a"}}, {}) == {"title": None}
    assert plotwidget._changes({}, {"title": {"text": "b"}}) == {"title": {"text": "b"}}


def _slow_axis_values(fig, letter, key):
    """The validated way: every value read through Plotly's objects."""
    out = []
    for t in fig.data:
        if (getattr(t, letter + "axis", None) or letter) != letter + key[5:]:
            continue
        vals = getattr(t, letter, None)
        if vals is None or isinstance(vals, str):
            continue
        out += [float(v) for v in vals if plots._finite(v)]
    return out


def test_axis_values_read_raw_equal_the_validated_ones():
    fig = go.Figure()
    fig.add_scatter(x=np.array([1.0, np.nan, 3.0, np.inf]), y=[1, None, 2.5, 4])
    fig.add_scatter(x=[5, 6], y=np.array([7, 8], dtype=np.int64), xaxis="x2")
    fig.add_bar(x=["a", "b"], y=[1.0, -2.0])
    for letter, key in (("x", "xaxis"), ("y", "yaxis"), ("x", "xaxis2")):
        got = plots._axis_values(fig, letter, key)
        assert got == _slow_axis_values(fig, letter, key)
        assert all(isinstance(v, float) and math.isfinite(v) for v in got)
    assert plots._axis_values(fig, "x", "xaxis") == [1.0, 3.0]


def test_min_text_raises_only_the_small_fonts():
    fig = go.Figure(go.Bar(x=[1], y=[1], textfont=dict(size=6)))
    fig.add_annotation(text="small", font=dict(size=8), x=0, y=0)
    fig.add_annotation(text="big", font=dict(size=20), x=0, y=0)
    fig.add_annotation(text="default", x=0, y=0)
    plots._min_text(fig)
    sizes = [a.font.size for a in fig.layout.annotations]
    assert sizes == [plots.MIN_FONT_PX, 20, None]
    assert fig.data[0].textfont.size == plots.MIN_FONT_PX
    assert fig.layout.uniformtext.minsize == plots.MIN_FONT_PX
