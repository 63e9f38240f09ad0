"""The student edition: the book without its solutions (``make book STUDENT=1``).

Under ``LABSIM_STUDENT=1`` every gated solution of sphinx-exercise (from a ````{solution-start}``
fence through its ````{solution-end}`` fence) is cut from a page's source before it is parsed, so the
solution's prose, its code cells and their outputs never reach the student's site. The exercises stay,
with their numbers; sphinx-exercise's ``hide_solutions`` is set as well, for any plain ``{solution}``.
"""
from __future__ import annotations

import os
import re

#: one gated solution: its start fence (with options and closing fence) through its end fence pair.
_GATED = re.compile(r"^(`{3,}|:{3,})\{solution-start\}.*?^\1\{solution-end\}[^\n]*\n\1[ \t]*$\n?",
                    re.M | re.S)
NOTE = ("```{note}\nThis is the student edition: the solution is in the instructor's edition "
        "(`make book`).\n```\n")


def enabled() -> bool:
    return os.environ.get("LABSIM_STUDENT", "") not in ("", "0")


def strip_solutions(text: str) -> str:
    """``text`` with every gated solution replaced by a one-line note."""
    return _GATED.sub(NOTE, text)


def _source_read(app, docname, source) -> None:
    if enabled():
        source[0] = strip_solutions(source[0])


def _config_inited(app, config) -> None:
    if enabled():
        config.hide_solutions = True


def setup(app) -> dict:
    app.connect("source-read", _source_read)
    app.connect("config-inited", _config_inited)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
