"""Where a chapter sits on the journey: the "you are here" strip, the chapters' prerequisites, reading
times and reading paths (issue 23). The data lives once, in :mod:`.journey_data` (re-exported here); the
chapters and ``book/reading_paths.md`` only call these functions.

- :func:`you_are_here` — chapter 1's ten steps as a strip, the steps a chapter explains lit, and under it
  the chapter's prerequisites (links) and its reading time.
- :func:`reading_time` — a chapter's reading time, computed from its own source (the rule is below).
- :func:`chapter_map` — the chapters and their prerequisites as a Graphviz drawing.
- :func:`chapter_table`, :func:`path_minutes` — every chapter's prerequisites and minutes; a path's minutes.
- :data:`CHAPTERS`, :data:`STEPS`, :data:`PATHS` — the data.

The reading-time rule (:data:`WORDS_PER_MINUTE`, :data:`CELL_MINUTES`): the chapter's prose words at
200 words a minute, plus one minute for each code cell whose code the reader sees and half a minute for
each cell that shows only its output (a figure, a table, a widget). A cell tagged ``remove-cell`` shows
nothing and costs nothing. The sum is rounded up to a whole minute. Prose words are counted as
``book/_ext/labsim_prose.py`` counts them, roughly: code, directive options, tables, display math,
HTML comments and MyST targets are left out; an inline role or literal is one word.
"""
from __future__ import annotations

from .journey_data import (CELL_MINUTES, CHAPTERS, PATHS, STEPS, WORDS_PER_MINUTE, Chapter, _chapter,
                           chapter_source, chapter_table, chapter_title, path_minutes, reading_time,
                           source_counts)
from .journey_strip import JourneyStrip, _href
from ..support.errors import ArgumentTypeError
from .palette import ROLE

__all__ = ["STEPS", "CHAPTERS", "PATHS", "Chapter", "WORDS_PER_MINUTE", "CELL_MINUTES", "chapter_source",
           "chapter_title", "source_counts", "reading_time", "path_minutes", "chapter_table", "you_are_here",
           "JourneyStrip", "chapter_map"]


def you_are_here(label: str, *, steps: bool = True) -> JourneyStrip:
    """The "you are here" strip of the chapter ``label`` ("ch-roofline"): chapter 1's ten steps with those
    this chapter explains lit, its prerequisites (links) and its reading time (:func:`journey.reading_time`).
    ``steps=False`` gives the card alone (prerequisites and reading time), for chapter 1's own map."""
    ch = _chapter("you_are_here", label)
    if not isinstance(steps, bool):
        raise ArgumentTypeError(f"you_are_here: steps must be True or False, got {steps!r}")
    src = chapter_source(label)
    pre = tuple((p, chapter_title(p)) for p in ch.prerequisites)
    return JourneyStrip(label, chapter_title(label, src), ch.steps, pre, reading_time(label, src), source_counts(src),
                        steps=steps)


def chapter_map(*, highlight=(), caption: str | None = None, name: str | None = None):
    """The chapters as a Graphviz drawing: an arrow from each prerequisite to the chapter that needs it.
    ``highlight`` (chapter labels, e.g. a reading path) are drawn filled, bold and outlined."""
    import graphviz

    from .graph import GraphDrawing

    for h in highlight:
        _chapter("chapter_map", h)
    lit = set(highlight)
    d = graphviz.Digraph("chapters", graph_attr={"rankdir": "TB", "bgcolor": "transparent", "nodesep": "0.12",
                                                  "ranksep": "0.3", "fontname": "Helvetica"},
                         node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                                    "fontsize": "12", "margin": "0.08,0.04", "height": "0.3"},
                         edge_attr={"color": "#333333", "arrowsize": "0.6"})
    for i, (label, ch) in enumerate(CHAPTERS.items(), 1):
        on = label in lit
        d.node(label, f"{i} · {ch.short}".replace(" and ", " and\n").replace("LLM ", "LLM\n").replace("Many ", "Many\n"), fillcolor=ROLE["compute"] if on else "#FFFFFF",
               fontcolor="#FFFFFF" if on else "#000000", penwidth="2" if on else "1", fontname="Helvetica-Bold" if on else "Helvetica",
               color="#000000" if on else "#555555")
        for p in ch.prerequisites:
            d.edge(p, label)
    alt = "The chapters and what each needs first: " + "; ".join(
        f"{i} {ch.short} needs " + (", ".join(CHAPTERS[p].short for p in ch.prerequisites) or "nothing")
        for i, ch in enumerate(CHAPTERS.values(), 1)) + "."
    return GraphDrawing(d.pipe(format="svg").decode("utf-8"), alt=alt, source=d.source, caption=caption, name=name)
