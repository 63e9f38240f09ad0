"""``glue``: a computed value named once, shown in the text on the website and in JupyterLab.

Chapters write ``glue("name", value, display=False)`` in a code cell and ``{glue:text}`name:,.0f``` in
their prose. This wraps myst-nb's ``glue`` (which the website build reads) and also keeps the value in
the kernel, so that JupyterLab can show it: the book's JupyterLab contents manager
(``book/_ext/labsim_lab.py``) opens that role as the inline expression ``{eval}`glue.text("name", ",.0f")```,
which jupyterlab-myst evaluates with :meth:`Glue.text`.
"""
from __future__ import annotations

from typing import Any


class Glue:
    """Callable as myst-nb's ``glue``; :meth:`text` formats a glued value as ``{glue:text}`` does."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def __call__(self, name: str, value: Any, display: bool = True) -> None:
        self.values[name] = value
        try:
            from myst_nb import glue as nb_glue
        except ImportError:  # a kernel without the book's tools: show the value if asked, keep it
            if display:
                from IPython.display import display as show

                show(value)
            return
        nb_glue(name, value, display=display)

    def text(self, name: str, fmt: str = "") -> str:
        """The value glued as ``name``, formatted with the format spec ``fmt`` (as ``{glue:text}`name:fmt```)."""
        if name not in self.values:
            raise KeyError(f"nothing was glued as {name!r} in this kernel yet (run the cells above first)")
        v = self.values[name]
        return format(v, fmt) if fmt else str(v)

    def _repr_pretty_(self, p, cycle) -> None:  # what `glue` alone shows in a notebook
        p.text(f"<labsim glue: {len(self.values)} values>")


glue = Glue()
