"""Helpers shared by the scripts ``benchmarks/bench_*.py`` (this module is not one of them: ``make bench``
runs ``bench_*.py`` only).

- ``table``: print a plain-text table, first column left-aligned, the others right-aligned;
- ``best``: best wall time of a few calls; ``pct`` / ``percentile``: percentiles of a list of times;
- ``record_widgets``: run chapters' code cells as JupyterLab would and return every
  ``labsim.viz.faces.Interactive`` (``interactive`` and ``animate`` figures) they create;
- ``time_widget``: time a widget's live callback over every value of every control.

Importing this module puts the repository root on ``sys.path``, so a script can then ``import labsim``.
"""
from __future__ import annotations

import contextlib
import io
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    """Print ``title``, then ``header`` and ``rows`` (strings) in aligned columns under a dashed rule."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))


def best(fn, repeats: int = 3) -> tuple[float, object]:
    """Call ``fn()`` ``repeats`` times: the shortest wall time (seconds) and the last result."""
    t, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def pct(xs, q: float) -> float:
    """The ``q``-th percentile of ``xs`` by nearest rank (one of the measured values, no interpolation)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def percentile(xs, q: float) -> float:
    """The ``q``-th percentile of ``xs``, interpolated linearly between values (``numpy.percentile``)."""
    import numpy as np

    return float(np.percentile(np.asarray(xs), q))


def chapter_code(path: Path) -> str:
    """The code cells of the jupytext page ``path`` joined into one script, less the cells that start with
    an IPython magic or shell escape (``%``, ``!``)."""
    import jupytext

    nb = jupytext.read(path)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "code"
                       and not c.source.lstrip().startswith(("%", "!")))


def record_widgets(paths) -> list[tuple[str, object]]:
    """Run the code cells of each page in ``paths`` (its output hidden) and return ``(page, widget)`` for
    every ``labsim.viz.faces.Interactive`` they create, in order of creation; ``page`` is the file's stem.

    ``Interactive.__init__`` is wrapped while the pages run and restored afterwards, even on an error.
    Run it without ``LABSIM_BOOK`` set to get the live faces JupyterLab shows.
    """
    from labsim.viz import faces

    created: list[tuple[str, object]] = []
    page = ""
    orig = faces.Interactive.__init__

    def recording_init(self, *a, **k):
        orig(self, *a, **k)
        created.append((page, self))

    faces.Interactive.__init__ = recording_init
    try:
        for path in paths:
            path = Path(path)
            page = path.stem
            code = chapter_code(path)
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, str(path), "exec"), {"__name__": "__chapter__"})
    finally:
        faces.Interactive.__init__ = orig
    return created


def time_widget(w, rounds: int = 3) -> list[float]:
    """Milliseconds of each live callback ``w.update(name=value)``: one warm-up call with the widget's
    current values (not counted), then ``rounds`` rounds over every value of every control. Fails if the
    widget is left showing an error."""
    w.update(**w.params)  # first use of Plotly's validators and the like, not counted
    times = []
    for _ in range(rounds):
        for name, values in w.controls_spec.items():
            for v in values:
                t0 = time.perf_counter()
                w.update(**{name: v})
                times.append((time.perf_counter() - t0) * 1e3)
    assert w.error is None, w.error
    return times
