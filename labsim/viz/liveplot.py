"""The plot of the live face (JupyterLab): drawn once, then changed in place.

A live figure is a Plotly ``FigureWidget`` (plotly's own widget; it needs the ``anywidget`` package).
When a control moves, :meth:`LivePlot.show` sends the page only the properties of the new figure whose
values changed, in one message, and the page redraws once (``Plotly.update``) instead of building a new
plot (:func:`morph`; Plotly's own ``batch_update()`` does the same but validates every property first,
which took longer than the redraw). Where the traces themselves change (another number of them, or
another kind), the old ones are removed and the new ones added.

Without ``anywidget`` the plot falls back to an ipywidgets ``Output`` that is cleared and drawn again
each time (slower: the page builds a new plot on every move). The static face (the website) and the
print face do not use this module.
"""
from __future__ import annotations

import copy
import importlib.util
from typing import Any


def has_figure_widget() -> bool:
    """True where Plotly's ``FigureWidget`` can be drawn (the ``anywidget`` package is installed)."""
    return importlib.util.find_spec("anywidget") is not None


def _equal(a, b) -> bool:
    """Deep equality of plain figure JSON (dicts, lists, NumPy arrays, scalars)."""
    if type(a) is not type(b):
        if hasattr(a, "shape") or hasattr(b, "shape"):
            import numpy as np
            return np.asarray(a).shape == np.asarray(b).shape and bool(np.array_equal(a, b))
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if hasattr(a, "shape"):
        import numpy as np
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return a == b


def _changes(old: dict, new: dict, keep=("type", "uid")) -> dict:
    """The top-level keys of ``new`` whose values differ from ``old``'s, and ``old``'s keys that ``new``
    lacks (as None, which resets them); a key with an empty dict counts as absent."""
    out = {k: v for k, v in new.items() if k not in keep and (k not in old or not _equal(old[k], v))
           and not (k not in old and _empty(v))}
    out.update({k: None for k in old if k not in new and k not in keep and not _empty(old[k])})
    return out


def _empty(v) -> bool:
    """An empty container, drawn as its absence (a figure whose title was moved to the caption keeps
    ``title: {}``; sending it made the page relayout the first move for nothing)."""
    return isinstance(v, dict) and not v


def _copy(v):
    """A copy of plain figure JSON (dicts, lists, tuples, NumPy arrays; strings, numbers and None are
    shared): several times faster than ``copy.deepcopy``, which a diagram's hundreds of shapes felt."""
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_copy(x) for x in v)
    if hasattr(v, "shape") and hasattr(v, "copy"):
        return v.copy()
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    return copy.deepcopy(v)


def _apply(props: dict, changes: dict) -> None:
    """Change the widget's own copy of a trace or the layout: each changed value copied (the new figure
    stays the caller's), each reset one removed."""
    for k, v in changes.items():
        if v is None:
            props.pop(k, None)
        else:
            props[k] = _copy(v)


def morph(widget, fig) -> dict:
    """Change the FigureWidget ``widget`` to draw ``fig`` (a Plotly figure), in place.

    When the traces keep their number and kinds (the common case: a control changes values), the
    changed top-level properties of every trace and of the layout go to the page in one Plotly.update
    message, compared as plain JSON without Plotly's validators (slow); the widget's own copy of the
    figure is changed to match. Otherwise the traces are replaced through Plotly's API. Returns what
    was sent: ``{"restyle": ..., "relayout": ...}`` (empty when nothing changed)."""
    data, layout = fig._data, fig._layout  # read only: changed values are copied (_apply)
    kinds = [d.get("type", "scatter") for d in data]
    if [t.type for t in widget.data] != kinds:
        widget.data = ()
        if data:
            widget.add_traces(copy.deepcopy(data))
        relayout = _changes(widget._layout, layout)
        with widget.batch_update():
            widget.layout = copy.deepcopy(layout)
        return {"restyle": {}, "relayout": relayout}
    per_trace = [_changes(old, d) for old, d in zip(widget._data, data)]
    keys = sorted({k for c in per_trace for k in c})
    restyle = {k: [c.get(k, old.get(k)) for c, old in zip(per_trace, widget._data)] for k in keys}
    relayout = _changes(widget._layout, layout)
    if not restyle and not relayout:
        return {"restyle": {}, "relayout": {}}
    for old, c in zip(widget._data, per_trace):
        _apply(old, c)
    _apply(widget._layout, relayout)
    widget._send_update_msg(restyle, relayout, list(range(len(data))))
    return {"restyle": restyle, "relayout": relayout}


class LivePlot:
    """The plot of one live figure: ``view`` is the ipywidget to put in the page, :meth:`show` draws a
    new figure there. ``in_place`` says which way it draws (a FigureWidget, or an Output redrawn)."""

    def __init__(self, w, fig, alt: str, *, figure_cls, config: dict) -> None:
        """``w``: the ipywidgets module; ``fig``, ``alt``: the first figure and its alt text;
        ``figure_cls``: :class:`labsim.viz.faces.Figure` (checks a figure, draws it in the fallback);
        ``config``: Plotly's config for the plot."""
        Figure = self._figure_cls = figure_cls
        self.in_place = has_figure_widget()
        self.redraws = 0
        if self.in_place:
            import plotly.graph_objects as go

            Figure(fig, alt)  # the same checks as every figure (alt text, something to draw)
            self.view = go.FigureWidget(fig)
            self.view._config = dict(config)
            self.view.add_class("labsim-liveplot")
        else:
            from IPython.display import display

            self.view = w.Output()
            self.view.add_class("labsim-liveplot")
            with self.view:
                display(Figure(fig, alt))

    def show(self, fig: Any, alt: str) -> None:
        """Draw ``fig`` in place of the figure shown."""
        self.redraws += 1
        if self.in_place:
            morph(self.view, fig)
            return
        from IPython.display import display

        with self.view:
            self.view.clear_output(wait=True)
            display(self._figure_cls(fig, alt, caption=None))
