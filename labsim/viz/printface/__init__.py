"""The print face of every figure: the *same* Plotly figure the other faces show, drawn with matplotlib.

One converter, :func:`to_matplotlib`, turns a Plotly figure into a matplotlib ``Figure`` (SVG, PDF, PNG),
so the printed figure cannot disagree with the website's or JupyterLab's: the data, colours (the
palette's roles, as the Plotly figure carries them), axis types and ranges, categories, shapes,
annotations and layout images are read from the Plotly figure itself. The caption goes under the
figure as text ("Figure C.N. caption" when the figure's number is known, else "Figure. caption").

What it draws (everything the book uses): ``bar`` traces (vertical, horizontal, stacked, grouped,
overlaid, with text), ``scatter`` traces (lines, markers, text, fills), ``heatmap`` traces (colour
scales, cell text), several axes (subplots by axis domains), log and category axes, axis titles,
ranges, ticks and reversed axes, equal-scale axes, ``rect`` and ``line`` shapes (data, paper or
axis-domain coordinates, pixel-sized), annotations (with arrows) and layout images (PNG/JPEG, and the
Graphviz drawings of :func:`~labsim.viz.draw_graph`, re-rendered by ``dot``). Anything else raises a
``ValueError`` naming the feature, rather than being left out of the print silently.

The face objects save themselves: ``Figure.save(path)``, ``Interactive.save(path, **controls)``,
``Animation.save(path, step=..., **controls)`` (a ``.gif`` plays every step), or :func:`save` for any
of them. With ``LABSIM_PRINT_DIR`` set (``make print``), every captioned figure a chapter displays is
also written there as ``fig-N.pdf`` and ``fig-N.png`` (``fig-N.gif`` for an animation), N its number
in the chapter, and listed in ``index.md``.

matplotlib is imported inside the functions (Agg backend), so ``import labsim.viz`` stays fast.
"""
from __future__ import annotations

# the package: style (sizes, fonts, colours, small readers), graphviz (DOT drawings as images), traces
# (bar, scatter, heatmap), axes (axes, shapes, annotations, images), convert (to_matplotlib), save
from .style import (
    ANIMATION_FORMATS, DEFAULT_WIDTH_PX, GIF_DPI, MAX_PIXELS, MIN_FONT_PT, PNG_DPI, PT_PER_PX, PX_PER_INCH,
    STILL_FORMATS, SUPPORTED_SHAPES, SUPPORTED_TRACES, color,
)
from .graphviz import register_dot, _svg_pt  # noqa: F401  (_svg_pt: the tests read a drawing's size)
from .convert import to_matplotlib
from .save import (  # noqa: F401  (_state: make print's figure counter, reset by the tests)
    CHAPTER_ENV, PRINT_DIR_ENV, auto_save, check_suffix, drawing_figure, print_dir, save, save_figure, save_gif,
    save_matplotlib, _state,
)

__all__ = [
    "STILL_FORMATS", "ANIMATION_FORMATS", "PX_PER_INCH", "PT_PER_PX", "MIN_FONT_PT", "DEFAULT_WIDTH_PX",
    "PNG_DPI", "MAX_PIXELS", "GIF_DPI", "color", "SUPPORTED_TRACES", "SUPPORTED_SHAPES", "register_dot",
    "to_matplotlib", "check_suffix", "save_matplotlib", "save_figure", "save_gif", "drawing_figure", "save",
    "PRINT_DIR_ENV", "CHAPTER_ENV", "print_dir", "auto_save",
]
