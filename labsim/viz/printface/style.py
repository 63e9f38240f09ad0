"""The print face's constants (sizes, fonts, formats) and small readers of a Plotly figure: colours, text,
font sizes, dashes, markers, numbers and layout look-ups."""
from __future__ import annotations
from ...support.errors import ArgumentError

import base64
import html
import math
import numbers
import re


#: what a still figure can be saved as, and an animation
STILL_FORMATS = (".svg", ".pdf", ".png")
ANIMATION_FORMATS = (".gif",) + STILL_FORMATS

#: Plotly's figure size is in CSS px; the print face draws 100 px per inch, so 1 px is 0.72 pt
PX_PER_INCH = 100.0
PT_PER_PX = 72.0 / PX_PER_INCH
#: the smallest text in print, in points
MIN_FONT_PT = 8.0
DEFAULT_WIDTH_PX = 760
PNG_DPI = 200
#: the most pixels a rendered Graphviz drawing may have (a larger one is rendered at a lower dpi)
MAX_PIXELS = 40_000_000
GIF_DPI = 100

_PLOTLY_DEFAULT_FONT = 12


#: the print face's Korean font (make sysdeps installs fonts-noto-cjk), after matplotlib's own; matplotlib
#: reads the first face of the .ttc collection, which Debian's files name "Noto Sans CJK JP" (all Noto CJK
#: faces hold the Hangul syllables)
CJK_FONTS = ("Noto Sans CJK KR", "Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC")


def figure_word() -> str:
    """"Figure" in the language labsim draws in (ls.set_language): "그림" in Korean."""
    from ...support.i18n import get_language
    return "그림" if get_language() == "ko" else "Figure"


def font_context():
    """matplotlib settings for drawing in the current language: in Korean, Hangul falls back to the CJK
    font (matplotlib ≥ 3.6 falls back glyph by glyph through ``font.family``)."""
    import contextlib

    import matplotlib
    from matplotlib import font_manager
    from ...support.i18n import get_language
    if get_language() != "ko":
        return contextlib.nullcontext()
    have = {f.name for f in font_manager.fontManager.ttflist}
    cjk = [name for name in CJK_FONTS if name in have][:1]
    return matplotlib.rc_context({"font.family": ["DejaVu Sans", *cjk]})


def _new_figure(**kw):
    """A matplotlib Figure on the Agg canvas (no pyplot, no GUI backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    mfig = MplFigure(**kw)
    FigureCanvasAgg(mfig)
    return mfig


# ---- small readers ------------------------------------------------------------------------------------
_NAMED = {"transparent": (0, 0, 0, 0)}


def color(c, default=None):
    """A Plotly colour ("#RRGGBB", "rgb(...)", "rgba(...)", a CSS name) as a matplotlib RGBA tuple."""
    from matplotlib.colors import to_rgba

    if c is None:
        return default
    if isinstance(c, (tuple, list)):
        return to_rgba(c)
    s = str(c).strip()
    if s in _NAMED:
        return _NAMED[s]
    m = re.fullmatch(r"rgba?\(([^)]*)\)", s.replace(" ", ""))
    if m:
        parts = [float(p.rstrip("%")) for p in m.group(1).split(",")]
        r, g, b = (p / 255 for p in parts[:3])
        return (r, g, b, parts[3] if len(parts) > 3 else 1.0)
    try:
        return to_rgba(s)
    except ValueError:
        raise ArgumentError(f"print face: cannot read the colour {c!r}") from None


def _colors(v, n: int, default) -> list:
    """A colour, or a list of them (one per point), as n matplotlib colours."""
    if isinstance(v, (list, tuple)) and not (len(v) in (3, 4) and all(isinstance(x, numbers.Real) for x in v)):
        out = [color(c, default) for c in v]
        return (out + [default] * n)[:n]
    return [color(v, default)] * n


def _fade(c, opacity):
    """A colour with Plotly's opacity folded into its alpha (matplotlib's ``alpha=`` would replace the
    colour's own alpha: a transparent fill would turn opaque)."""
    if c is None or isinstance(c, str):
        return c
    o = 1.0 if opacity is None else float(opacity)
    return (*c[:3], (c[3] if len(c) > 3 else 1.0) * o)


def _text(s) -> str:
    """Plotly's HTML-ish text as plain text for matplotlib (line breaks kept, tags dropped, ``$``
    escaped so matplotlib does not read it as mathematics)."""
    if s is None:
        return ""
    s = str(s)
    s = re.sub(r"<br\s*/?>", "\n", s)
    s = re.sub(r"<sup>(.*?)</sup>", lambda m: "^" + m.group(1), s)
    s = re.sub(r"<sub>(.*?)</sub>", lambda m: "_" + m.group(1), s)
    s = re.sub(r"<[^>]+>", "", s)
    s = html.unescape(s)
    return s.replace("$", r"\$")


def _bold(s) -> bool:
    return bool(s) and bool(re.fullmatch(r"\s*<b>.*</b>\s*", str(s), re.S))


def _pt(px, floor: float = MIN_FONT_PT) -> float:
    return max(floor, float(px) * PT_PER_PX)


_DASH = {"solid": "-", "dot": (0, (1, 2)), "dash": (0, (4, 3)), "longdash": (0, (8, 3)),
         "dashdot": (0, (4, 2, 1, 2)), "longdashdot": (0, (8, 2, 1, 2))}


def _dash(d):
    if d is None:
        return "-"
    if d in _DASH:
        return _DASH[d]
    nums = re.findall(r"[\d.]+", str(d))
    if nums:
        return (0, tuple(float(n) * PT_PER_PX for n in nums))
    raise ArgumentError(f"print face: cannot draw the line dash {d!r}")


_SYMBOLS = {"circle": "o", "square": "s", "diamond": "D", "triangle-up": "^", "triangle-down": "v",
            "triangle-left": "<", "triangle-right": ">", "x": "X", "cross": "P", "star": "*", "hexagon": "h",
            "pentagon": "p", "line-ns": "|", "line-ew": "_", "diamond-tall": "d", "hourglass": "X"}


def _symbol(s):
    s = "circle" if s is None else str(s)
    open_ = s.endswith("-open")
    base = s[:-5] if open_ else s
    if base not in _SYMBOLS:
        raise ArgumentError(f"print face: cannot draw the marker symbol {s!r}")
    return _SYMBOLS[base], open_


def _seq(v, n=None):
    """A trace attribute as a list (a scalar repeated ``n`` times), or None."""
    if v is None:
        return None
    if isinstance(v, (str, numbers.Number)) or not hasattr(v, "__iter__"):
        return [v] * (n if n is not None else 1)
    return list(v)


def _num(v) -> float:
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _decoded(v):
    """Plotly's JSON with its typed arrays (``{"dtype": "i1", "bdata": base64, "shape": "5, 40"}``,
    how Plotly stores NumPy arrays) turned back into lists."""
    if isinstance(v, dict):
        if "bdata" in v and "dtype" in v:
            import numpy as np
            a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
            shape = v.get("shape")
            if shape:
                a = a.reshape([int(n) for n in str(shape).split(",")])
            return a.tolist()
        return {k: _decoded(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_decoded(x) for x in v]
    if hasattr(v, "tolist") and hasattr(v, "dtype"):
        return v.tolist()
    return v


def _layout(fig) -> dict:
    """The figure's layout as a plain dict, with its template's layout under it (the template's values
    are the defaults)."""
    lay = _decoded(fig.layout.to_plotly_json())
    tpl = lay.pop("template", None) or {}
    base = dict(tpl.get("layout", {})) if isinstance(tpl, dict) else {}
    return _merge(base, lay)


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _get(d, *path, default=None):
    for p in path:
        if not isinstance(d, dict) or p not in d or d[p] is None:
            return default
        d = d[p]
    return d


def _axis_name(ref: str, letter: str) -> str:
    """"x2" -> "xaxis2"; "x" -> "xaxis"."""
    return letter + "axis" + (ref[1:] if ref else "")


# ---- the converter ----------------------------------------------------------------------------------
SUPPORTED_TRACES = ("bar", "scatter", "scattergl", "heatmap")
SUPPORTED_SHAPES = ("rect", "line")


class _Axes:
    """One matplotlib Axes for a Plotly (xaxis, yaxis) pair, with the category positions of each."""

    def __init__(self, ax, xkey, ykey, xlay, ylay):
        self.ax, self.xkey, self.ykey, self.xlay, self.ylay = ax, xkey, ykey, xlay, ylay
        self.cats = {"x": None, "y": None}


def _categories(traces, letter: str, axlay: dict) -> list | None:
    """The category order of an axis (Plotly's: ``categoryarray``, else order of first appearance),
    or None when the axis is numeric."""
    typ = axlay.get("type")
    vals = []
    strings = False
    for t in traces:
        v = _seq(t.get(letter))
        if v is None and t.get("type") == "heatmap":
            continue
        for x in v or ():
            if x is None or (isinstance(x, float) and math.isnan(x)):
                continue
            if isinstance(x, str):
                strings = True
            if x not in vals:
                vals.append(x)
    if typ not in ("category", "multicategory") and not (typ in (None, "-") and strings):
        return None
    order = axlay.get("categoryorder")
    arr = axlay.get("categoryarray")
    if order == "array" and arr is not None:
        cats = list(arr) + [v for v in vals if v not in list(arr)]
    elif order in ("category ascending", "category descending"):
        cats = sorted(vals, key=str, reverse=order.endswith("descending"))
    else:
        cats = vals
    return cats


def _pos(vals, cats):
    """Positions on an axis: category indices, or the numbers themselves."""
    if vals is None:
        return None
    if cats is None:
        return [_num(v) for v in vals]
    idx = {repr(c): i for i, c in enumerate(cats)}
    return [idx.get(repr(v), math.nan) for v in vals]


def _trace_positions(t, letter, n):
    """A trace's positions along ``letter`` (explicit values, else x0 + i·dx)."""
    v = _seq(t.get(letter))
    if v is not None:
        return v
    return [t.get(letter + "0", 0) + i * t.get("d" + letter, 1) for i in range(n)]


