"""The plot of the live face (JupyterLab): drawn once, then changed in place.

A live figure is labsim's plot widget (:mod:`labsim.viz.plotwidget`; it needs the ``anywidget``
package). When a control moves, :meth:`LivePlot.show` sends the page only the properties of the new
figure whose values changed (compared as plain JSON, without Plotly's validators), in one message, and
the page redraws once with ``Plotly.react``.

Without ``anywidget`` the plot falls back to an ipywidgets ``Output`` that is cleared and drawn again
each time (slower: the page builds a new plot on every move). The static face (the website) and the
print face do not use this module.
"""
from __future__ import annotations

import gc
import importlib.util
from typing import Any


def has_figure_widget() -> bool:
    """True where the live plot can change in place (the ``anywidget`` package is installed)."""
    return importlib.util.find_spec("anywidget") is not None


def settle_heap() -> int:
    """Collect the kernel's garbage, then freeze what is left (``gc.freeze``): Python's full collections
    skip frozen objects from then on. Run when a live figure is drawn. Why: after a chapter's cells have
    run, a full collection of the kernel's heap took 90–140 ms, and one landed inside a move of a
    control every few dozen moves (the slowest round trips). Objects alive now and garbage later are
    still freed by reference counting, unless they form cycles. Returns the frozen objects' count."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class LivePlot:
    """The plot of one live figure: ``view`` is the ipywidget to put in the page, :meth:`show` draws a
    new figure there. ``in_place`` says which way it draws (labsim's plot widget changed in place, or an Output redrawn)."""

    def __init__(self, w, fig, alt: str, *, figure_cls, config: dict) -> None:
        """``w``: the ipywidgets module; ``fig``, ``alt``: the first figure and its alt text;
        ``figure_cls``: :class:`labsim.viz.faces.Figure` (checks a figure, draws it in the fallback);
        ``config``: Plotly's config for the plot."""
        Figure = self._figure_cls = figure_cls
        self.in_place = has_figure_widget()
        settle_heap()
        self.redraws = 0
        if self.in_place:
            from .plotwidget import widget_class

            Figure(fig, alt)  # the same checks as every figure (alt text, something to draw)
            self.view = widget_class()(fig, config)
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
            self.view.change_to(fig)
            return
        from IPython.display import display

        with self.view:
            self.view.clear_output(wait=True)
            display(self._figure_cls(fig, alt, caption=None))
