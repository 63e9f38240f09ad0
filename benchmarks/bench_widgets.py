"""Latency of every live widget callback in the book.

Runs each chapter's code (as JupyterLab would, without LABSIM_BOOK), records every
``labsim.viz.interactive`` figure it creates, then moves each control through all of its values and times
the callback (``Interactive.update``: rerun labsim and rebuild the figure), three rounds after one
warm-up call. Target: p95 ≤ 100 ms.
Prints one row per widget.
"""
from __future__ import annotations

import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.pop("LABSIM_BOOK", None)

from labsim.viz import faces  # noqa: E402

TARGET_MS = 100.0
created: list[tuple[str, faces.Interactive]] = []
_orig_init = faces.Interactive.__init__


def _recording_init(self, *a, **k):
    _orig_init(self, *a, **k)
    created.append((CURRENT, self))


faces.Interactive.__init__ = _recording_init
CURRENT = ""


def run_chapter(path: Path) -> None:
    global CURRENT
    CURRENT = path.stem
    nb = jupytext.read(path)
    ns: dict = {"__name__": "__chapter__"}
    code = "\n\n".join(c.source for c in nb.cells if c.cell_type == "code"
                       and not c.source.lstrip().startswith(("%", "!")))
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, str(path), "exec"), ns)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def main() -> None:
    pages = sorted((ROOT / "chapters").glob("[0-9]*.md")) + sorted((ROOT / "book").glob("*.md"))
    for p in pages:
        if "code-cell" in p.read_text():
            run_chapter(p)
    rows = []
    for chapter, w in created:
        times = []
        w.update(**w.params)  # one warm-up call (first use of Plotly's validators), not counted
        for _ in range(3):
            for name, values in w.controls_spec.items():
                for v in values:
                    t = time.perf_counter()
                    w.update(**{name: v})
                    times.append((time.perf_counter() - t) * 1e3)
        assert w.error is None, w.error
        rows.append((chapter, ", ".join(w.controls_spec), len(times), statistics.median(times), pct(times, 95), max(times)))
    print(f"Live widget callbacks (ms; every value of every control, 3 rounds, after one warm-up call; target p95 ≤ {TARGET_MS:.0f} ms)\n")
    print(f"| page | controls | calls | p50 | p95 | max | ok |\n|---|---|---|---|---|---|---|")
    for ch, ctl, n, p50, p95, mx in rows:
        print(f"| {ch} | {ctl} | {n} | {p50:.1f} | {p95:.1f} | {mx:.1f} | {'yes' if p95 <= TARGET_MS else 'NO'} |")
    print(f"\n{sum(r[4] <= TARGET_MS for r in rows)} of {len(rows)} widgets meet the target.")


if __name__ == "__main__":
    main()
