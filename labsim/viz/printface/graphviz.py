"""Graphviz drawings embedded as layout images: ``draw_graph`` registers the DOT source of each SVG it
makes, and the print face re-renders it with ``dot`` at the size it is shown (bitmaps are resized)."""
from __future__ import annotations
from ...support.errors import ArgumentError

import base64
import hashlib
import io
import re
import subprocess

from .style import PNG_DPI


# ---- Graphviz drawings embedded as layout images -----------------------------------------------------
#: SVG text (sha1) -> the Graphviz DOT source it was drawn from; draw_graph registers every drawing
_DOT_BY_SVG: dict[str, str] = {}
_DOT_MAX = 1024


def register_dot(svg: str, source: str) -> None:
    """Remember that ``svg`` was drawn by Graphviz from ``source`` (the print face re-renders it)."""
    _DOT_BY_SVG[hashlib.sha1(svg.encode("utf-8")).hexdigest()] = source
    while len(_DOT_BY_SVG) > _DOT_MAX:
        _DOT_BY_SVG.pop(next(iter(_DOT_BY_SVG)))


def _dot_png(source: str, dpi: int = PNG_DPI):
    """A Graphviz DOT source rendered by ``dot`` as an RGBA image array."""
    import numpy as np
    from PIL import Image

    src = re.sub(r'bgcolor="?transparent"?', 'bgcolor="white"', source)
    try:
        out = subprocess.run(["dot", "-Tpng", f"-Gdpi={dpi}"], input=src.encode("utf-8"), capture_output=True,
                             check=True, timeout=60).stdout
    except FileNotFoundError:
        raise RuntimeError("the print face of a Graphviz drawing needs Graphviz's `dot` program "
                           "(apt/brew/conda install graphviz)") from None
    return np.asarray(Image.open(io.BytesIO(out)).convert("RGBA"))


def _svg_pt(svg: str) -> tuple[float, float]:
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"', svg)
    return (float(m.group(1)), float(m.group(2))) if m else (400.0, 400.0)


def _image_source(source: str):
    """A layout image's ``source`` (a data URI) as (natural width, height, render(width_px) -> RGBA array),
    or a ValueError naming what cannot be drawn. A Graphviz SVG is rendered by ``dot`` at the size it is
    shown (no resampling afterwards), a bitmap is resized."""
    import numpy as np
    from PIL import Image

    m = re.match(r"data:image/([\w+.-]+);base64,(.*)", source or "", re.S)
    if not m:
        raise ArgumentError(f"print face: a layout image's source must be a data: URI, got {str(source)[:40]!r}")
    kind, data = m.group(1), base64.b64decode(m.group(2))
    if kind == "svg+xml":
        dot = _DOT_BY_SVG.get(hashlib.sha1(data).hexdigest())
        if dot is None:
            raise ArgumentError("print face: a layout image is an SVG that labsim did not draw with Graphviz "
                             "(draw_graph), so it cannot be drawn in print; embed a PNG instead")
        w, h = _svg_pt(data.decode("utf-8", "replace"))
        return w, h, lambda px: _dot_png(dot, dpi=max(10.0, 72.0 * px / w))
    if kind in ("png", "jpeg", "jpg", "gif", "webp"):
        im = Image.open(io.BytesIO(data)).convert("RGBA")

        def render(px):
            px = max(1, int(round(px)))
            out = im if px >= im.width else im.resize((px, max(1, round(im.height * px / im.width))), Image.LANCZOS)
            return np.asarray(out)
        return float(im.width), float(im.height), render
    raise ArgumentError(f"print face: layout images of type image/{kind} cannot be drawn in print "
                     f"(PNG, JPEG and Graphviz SVG can)")


