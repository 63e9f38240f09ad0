"""Saving the print face: still formats and GIFs, :func:`save` for any face object, and ``make print``'s
:func:`auto_save` (every captioned figure a chapter displays, numbered as the book numbers it)."""
from __future__ import annotations
from ...support.errors import ArgumentError, ArgumentTypeError

import html
import io
import math
import os
import re
import textwrap
from pathlib import Path
from typing import Sequence

from .style import GIF_DPI, MAX_PIXELS, MIN_FONT_PT, PNG_DPI, STILL_FORMATS, _new_figure, _text
from .graphviz import _dot_png, _svg_pt
from .convert import to_matplotlib


# ---- saving -----------------------------------------------------------------------------------------
def check_suffix(path, allowed: Sequence[str] = STILL_FORMATS) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        raise ArgumentError(f"save: cannot write a {suffix or 'file without a suffix'!r} file ({Path(path).name}); "
                         f"the print face writes {', '.join(allowed)}")
    return suffix


def save_matplotlib(mfig, path) -> Path:
    """Write a matplotlib Figure to ``path`` (.svg, .pdf or .png), trimmed to what is drawn."""
    path = Path(path)
    suffix = check_suffix(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    kw = dict(bbox_inches="tight", pad_inches=0.08, facecolor="white")
    if suffix == ".png":
        kw["dpi"] = PNG_DPI
    if suffix == ".pdf":
        kw["metadata"] = {"Creator": "labsim print face", "CreationDate": None}
    if suffix == ".svg":
        kw["metadata"] = {"Date": None}
    mfig.savefig(path, format=suffix[1:], **kw)
    return path


def save_figure(plotly_fig, path, *, caption: str | None = None, number: str | None = None) -> Path:
    """The print face of one Plotly figure, written to ``path`` (.svg, .pdf, .png)."""
    check_suffix(path)
    return save_matplotlib(to_matplotlib(plotly_fig, caption=caption, number=number), path)


def save_gif(plotly_frames, path, *, caption: str | None = None, number: str | None = None,
             frame_ms: int = 500) -> Path:
    """An animation (one Plotly figure per step) as a GIF: every step one frame, drawn by the print
    face and written with matplotlib's Pillow writer. (Pillow merges a step identical to the one
    before into that frame, shown twice as long.)"""
    import numpy as np
    from matplotlib.animation import ArtistAnimation, PillowWriter

    path = Path(path)
    check_suffix(path, (".gif",))
    path.parent.mkdir(parents=True, exist_ok=True)
    from matplotlib.transforms import Bbox
    from PIL import Image

    figs = [to_matplotlib(f, caption=caption, number=number) for f in plotly_frames]
    # one box around what every frame draws, so the frames line up (no jitter from a wider label)
    boxes = [m.get_tightbbox(m.canvas.get_renderer()) for m in figs]
    box = Bbox.union(boxes).padded(0.08)
    images = []
    for mfig in figs:
        buf = io.BytesIO()
        mfig.savefig(buf, format="png", dpi=GIF_DPI, facecolor="white", bbox_inches=box)
        images.append(np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB")))
    h = max(i.shape[0] for i in images)
    w = max(i.shape[1] for i in images)
    holder = _new_figure(figsize=(w / GIF_DPI, h / GIF_DPI), dpi=GIF_DPI)
    ax = holder.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    artists = []
    for im in images:
        pad = np.full((h, w, 3), 255, np.uint8)
        pad[:im.shape[0], :im.shape[1]] = im
        artists.append([ax.imshow(pad, interpolation="nearest", animated=True)])
    ArtistAnimation(holder, artists, interval=frame_ms, blit=False).save(
        path, writer=PillowWriter(fps=max(1, round(1000 / max(frame_ms, 1)))), dpi=GIF_DPI)
    return path


def drawing_figure(drawing, *, caption: str | None = None, number: str | None = None):
    """A Graphviz drawing (:class:`~labsim.viz.GraphDrawing`) as a matplotlib Figure: ``dot``'s own
    rendering of its DOT source at the size it is printed (at most 7.6 × 9 inches unless its smallest
    label would fall under MIN_FONT_PT), caption under it."""
    w_pt, h_pt = _svg_pt(drawing.svg)
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', drawing.svg)] or [14.0]
    # as large as fits 7.6 x 9 inches, but never so small that a label falls under MIN_FONT_PT
    scale = max(min(1.0, 7.6 * 72 / w_pt, 9.0 * 72 / h_pt), MIN_FONT_PT / min(sizes))
    wi, hi = w_pt * scale / 72, h_pt * scale / 72
    dpi = PNG_DPI * scale
    dpi *= min(1.0, math.sqrt(MAX_PIXELS / (w_pt / 72 * dpi * h_pt / 72 * dpi)))  # a huge graph: fewer dots
    arr = _dot_png(drawing.source, dpi=dpi)
    cap = _text(caption if caption is not None else drawing.caption or "")
    fw = max(wi, 3.0)
    mfig = _new_figure(figsize=(fw, hi + (0.6 if cap else 0.1)))
    H = mfig.get_figheight()
    ax = mfig.add_axes((0, (H - hi) / H, wi / fw, hi / H))
    ax.imshow(arr, interpolation="antialiased")
    ax.set_axis_off()
    if cap:
        label = "Figure" + (f" {number}" if number else "") + "."
        size = MIN_FONT_PT * 1.15
        body = textwrap.fill(cap, max(30, int(fw * 72 / (size * 0.5))))
        mfig.text(0.0, (H - hi) / H - 0.05 / H, f"{label} {body}", ha="left", va="top", fontsize=size,
                  color=(0.15, 0.15, 0.15, 1))
    return mfig


# ---- save any face object ---------------------------------------------------------------------------
def save(obj, path, **params) -> Path:
    """Write the print face of a figure: ``obj`` is a :func:`~labsim.viz.show` Figure, an
    :func:`~labsim.viz.interactive` or :func:`~labsim.viz.animate` figure (``params``: control values,
    and ``step=`` for an animation's still), a :class:`~labsim.viz.GraphDrawing`, or a Plotly figure.
    The format follows the suffix: .svg, .pdf, .png (and .gif for an animation)."""
    if hasattr(obj, "save") and not hasattr(obj, "to_plotly_json"):
        return obj.save(path, **params)
    if hasattr(obj, "to_plotly_json"):
        if params:
            raise ArgumentError(f"save: a Plotly figure has no controls; got {sorted(params)}")
        return save_figure(obj, path)
    raise ArgumentTypeError(f"save: expected a labsim figure (viz.show, interactive, animate, draw_graph) or a Plotly "
                    f"figure, got {type(obj).__name__}")


# ---- make print: every captioned figure a chapter displays ------------------------------------------
PRINT_DIR_ENV = "LABSIM_PRINT_DIR"
CHAPTER_ENV = "LABSIM_PRINT_CHAPTER"
_state = {"count": 0, "extra": 0}


def print_dir() -> Path | None:
    d = os.environ.get(PRINT_DIR_ENV)
    return Path(d) if d else None


def _plain_caption(caption_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", caption_html or "")).strip()


def auto_save(obj) -> None:
    """With ``LABSIM_PRINT_DIR`` set: write ``obj``'s print face there as the chapter's next figure.

    A captioned figure is numbered as the book numbers it (its place among the captioned figures of the
    page): ``fig-N.pdf`` and ``fig-N.png``, plus ``fig-N.gif`` for an animation. A figure without a
    caption has no number in the book; it is written as ``fig-N-k`` after the N-th. Each is listed in
    ``index.md`` (file, number, caption)."""
    out = print_dir()
    if out is None or getattr(obj, "_printed", False):
        return
    obj._printed = True
    caption = _plain_caption(getattr(obj, "caption", "") or "")
    if caption:
        _state["count"] += 1
        _state["extra"] = 0
        stem = f"fig-{_state['count']}"
    else:
        _state["extra"] += 1
        stem = f"fig-{_state['count']}-{_state['extra']}"
    chapter = os.environ.get(CHAPTER_ENV, "")
    number = f"{chapter}.{_state['count']}" if caption and chapter else (str(_state["count"]) if caption else None)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    kind = type(obj).__name__
    if kind == "Animation":
        files.append(obj.save(out / f"{stem}.gif", _number=number))
    mfig = obj.to_matplotlib(_number=number)  # drawn once, written twice
    for suffix in (".pdf", ".png"):
        files.append(save_matplotlib(mfig, out / f"{stem}{suffix}"))
    with open(out / "index.md", "a", encoding="utf-8") as f:
        label = f"Figure {number}" if number else "(no number)"
        names = ", ".join(f"[{p.name}]({p.name})" for p in files)
        f.write(f"| {names} | {label} | {caption.replace('|', '/') or '(no caption)'} |\n")
