"""A second layout of a Graphviz drawing for a narrow page (issue 22, item 3).

A drawing laid out top to bottom with many side-by-side branches, or left to right along a long chain,
can be far wider than a phone at readable labels: on a 390 px page the reader saw half of it and had
to scroll sideways. :func:`narrow_layout` lays the same DOT source out again with its long label lines
wrapped, in the author's rank direction, turned (``TB`` <-> ``LR``), and with its clusters stacked
one above the other, and keeps the narrowest only when it is clearly narrower than the first at
readable labels.
The page then shows whichever layout fits the space the drawing has (a CSS container query on the
drawing's box): the author's layout where it fits, the turned one where it does not. Only one of the
two is ever displayed, so a screen reader meets one figure with one alt text.
"""
from __future__ import annotations

import re
import shutil
import subprocess

#: a phone's text column (CSS px): a drawing that needs more than this at readable labels gets a
#: narrow layout too, when one exists that needs less
PHONE_PX = 360

_RANKDIR = re.compile(r'\brankdir\s*=\s*"?(TB|LR|BT|RL)"?', re.I)
_TURN = {"TB": "LR", "BT": "RL", "LR": "TB", "RL": "BT"}


def turned_source(source: str) -> str | None:
    """The DOT ``source`` with its graph's rank direction turned a quarter (TB <-> LR); a graph with no
    ``rankdir`` (Graphviz's default, TB) gets ``rankdir=LR``. None when ``source`` is not a DOT graph."""
    if not isinstance(source, str) or "{" not in source:
        return None
    m = _RANKDIR.search(source)
    if m:
        turned = _TURN[m.group(1).upper()]
        return source[:m.start(1)] + turned + source[m.end(1):]
    brace = source.index("{")
    return source[:brace + 1] + "\n\tgraph [rankdir=LR]" + source[brace + 1:]


_LABEL = re.compile(r'(\blabel=")((?:[^"\\]|\\.)*)(")')

#: the longest line a label of the narrow layout keeps (characters); longer lines wrap at spaces
WRAP_CHARS = 16


def wrap_line(line: str, width: int = WRAP_CHARS) -> list[str]:
    """``line`` cut into lines of at most ``width`` characters where it can be: after a space, an
    underscore, an ``=`` or a comma (so "lhs_contracting_dims={1}" becomes "lhs_contracting_" and
    "dims={1}"); a piece with no such place stays whole. Joined again they give ``line`` back, less the
    spaces at the cuts."""
    pieces = [p for p in re.findall(r"[^ _=,]*[ _=,]*", line) if p]
    out, cur = [], ""
    for p in pieces:
        if cur and len((cur + p).rstrip()) > width:
            out.append(cur.rstrip())
            cur = ""
        cur += p
    if cur.strip() or not out:
        out.append(cur.rstrip())
    return out


def wrapped_source(source: str, width: int = WRAP_CHARS) -> str:
    """The DOT ``source`` with every line of its quoted labels longer than ``width`` characters wrapped
    (:func:`wrap_line`) and its nodes set closer (``nodesep``): a narrower drawing. HTML-like labels
    (``label=<...>``) are left as they are."""
    def wrap(m):
        lines = [x for line in m.group(2).split("\n") for x in wrap_line(line, width)]
        return m.group(1) + "\n".join(lines) + m.group(3)
    out = _LABEL.sub(wrap, source)
    out, n = re.subn(r"\bnodesep=\"?[\d.]+\"?", "nodesep=0.12", out, count=1)
    if not n and "{" in out:
        brace = out.index("{")
        out = out[:brace + 1] + "\n\tgraph [nodesep=0.12]" + out[brace + 1:]
    return out


_NODE = re.compile(r'^\s*("[^"]+"|[\w.]+)\s*\[')


def stacked_source(source: str) -> str | None:
    """The DOT ``source`` of a top-to-bottom graph whose clusters (``subgraph cluster_*``) may stand side
    by side, with an invisible edge from the last node of each cluster to the first node of the next, so
    that the clusters stack one above the other (the ten-step map of chapter 1: "compile" above "run").
    None when the graph has fewer than two clusters with nodes or runs left to right."""
    if not isinstance(source, str) or "{" not in source:
        return None
    m = _RANKDIR.search(source)
    if m and m.group(1).upper() in ("LR", "RL"):
        return None
    clusters, current, depth = [], None, 0
    for line in source.splitlines():
        if re.match(r"\s*subgraph\s+\"?cluster", line):
            current = []
            clusters.append(current)
        if current is not None:
            node = _NODE.match(line)
            if node and node.group(1) not in ("graph", "node", "edge"):
                current.append(node.group(1))
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                current, depth = None, 0
    clusters = [c for c in clusters if c]
    if len(clusters) < 2:
        return None
    links = "".join(f"\n\t{a[-1]} -> {b[0]} [style=invis]" for a, b in zip(clusters, clusters[1:]))
    end = source.rindex("}")
    return source[:end].rstrip("\n") + links + "\n" + source[end:]


def choose_narrow(wide_min_px: float, narrow_min_px: float | None, phone_px: float = PHONE_PX) -> bool:
    """Whether a drawing that needs ``wide_min_px`` at readable labels should carry a second layout that
    needs ``narrow_min_px``: only when the first does not fit a phone and the second is narrower by at
    least a tenth (a turned layout that gains a few pixels is not worth a second drawing)."""
    if narrow_min_px is None or wide_min_px <= phone_px:
        return False
    return narrow_min_px <= 0.9 * wide_min_px


def render_svg(source: str) -> str | None:
    """Graphviz's SVG of a DOT ``source``; None when ``dot`` is missing or fails."""
    if shutil.which("dot") is None:
        return None
    try:
        out = subprocess.run(["dot", "-Tsvg"], input=source.encode("utf-8"), capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode("utf-8") if out.returncode == 0 and out.stdout else None


def narrow_layout(source: str, wide_min_px: float, measure):
    """The SVG of the narrow layout of a drawing (DOT ``source``, ``wide_min_px`` wide at readable
    labels) when :func:`choose_narrow` keeps it, else None. ``measure(svg)`` gives an SVG's width at
    readable labels (``GraphDrawing.min_width_px``)."""
    if wide_min_px <= PHONE_PX:
        return None  # fits a phone already: no second drawing, no dot run
    turned = turned_source(source)
    if turned is None:
        return None
    best = None
    stacked = stacked_source(source)
    candidates = [wrapped_source(source), wrapped_source(turned)] + ([wrapped_source(stacked)] if stacked else [])
    for src in candidates:
        svg = render_svg(src)
        if svg is not None:
            need = measure(svg)
            if best is None or need < best[0]:
                best = (need, svg)
    if best is None or not choose_narrow(wide_min_px, best[0]):
        return None
    return best[1]
