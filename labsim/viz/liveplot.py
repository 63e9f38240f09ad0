"""The plot of the live face (JupyterLab): drawn once, then changed in place.

A live figure is a Plotly ``FigureWidget`` (plotly's own widget; it needs the ``anywidget`` package).
When a control moves, :meth:`LivePlot.show` copies the new figure into it inside one ``batch_update()``:
Plotly sends only the properties whose values changed, and the page redraws once (``Plotly.update``)
instead of building a new plot. Where the traces themselves change (another number of them, or another
kind), the old ones are removed and the new ones added first.

Without ``anywidget`` the plot falls back to an ipywidgets ``Output`` that is cleared and drawn again
each time (slower: the page builds a new plot on every move). The static face (the website) and the
print face do not use this module.
"""
from __future__ import annotations

import importlib.util
from typing import Any


def has_figure_widget() -> bool:
    """True where Plotly's ``FigureWidget`` can be drawn (the ``anywidget`` package is installed)."""
    return importlib.util.find_spec("anywidget") is not None


def _plain(obj) -> dict:
    return obj.to_plotly_json()


def _replace(target, new: dict) -> None:
    """Make ``target`` (a trace or the layout of a FigureWidget) hold exactly ``new``: keys it has that
    ``new`` lacks are reset, the others set; Plotly sends only the values that differ."""
    old = _plain(target)
    for k in old:
        if k not in new and k != "type":
            target[k] = None
    target.update(new, overwrite=True)


def morph(widget, fig) -> None:
    """Change the FigureWidget ``widget`` to draw ``fig`` (a Plotly figure), in place."""
    new = fig.to_plotly_json()
    data, layout = new.get("data", []), new.get("layout", {})
    kinds = [d.get("type", "scatter") for d in data]
    if [t.type for t in widget.data] != kinds:
        widget.data = ()
        if data:
            widget.add_traces(data)
        with widget.batch_update():
            _replace(widget.layout, layout)
        return
    with widget.batch_update():
        for trace, d in zip(widget.data, data):
            _replace(trace, d)
        _replace(widget.layout, layout)


class LivePlot:
    """The plot of one live figure: ``view`` is the ipywidget to put in the page, :meth:`show` draws a
    new figure there. ``in_place`` says which way it draws (a FigureWidget, or an Output redrawn)."""

    def __init__(self, w, fig, alt: str, *, caption: bool = True) -> None:
        from .faces import PLOTLY_CONFIG, Figure

        self._figure_cls = Figure
        self.in_place = has_figure_widget()
        self.redraws = 0
        if self.in_place:
            import plotly.graph_objects as go

            Figure(fig, alt)  # the same checks as every figure (alt text, something to draw)
            self.view = go.FigureWidget(fig)
            self.view._config = dict(PLOTLY_CONFIG)
            self.view.add_class("labsim-liveplot")
        else:
            from IPython.display import display

            self.view = w.Output()
            self.view.add_class("labsim-liveplot")
            with self.view:
                display(Figure(fig, alt) if caption else Figure(fig, alt, caption=None))

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
