"""Latency of every live widget callback in the book.

Runs each chapter's code (as JupyterLab would, without LABSIM_BOOK), records every
``labsim.viz.interactive`` figure it creates, then moves each control through all of its values and times
the callback (``Interactive.update``: rerun labsim and rebuild the figure), three rounds after one
warm-up call. Target: p95 ≤ 100 ms.
Prints one row per widget.
"""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import ROOT, pct, record_widgets, time_widget  # noqa: E402

TARGET_MS = 100.0


def main() -> None:
    pages = sorted((ROOT / "chapters").glob("[0-9]*.md")) + sorted((ROOT / "book").glob("*.md"))
    rows = []
    for chapter, w in record_widgets([p for p in pages if "code-cell" in p.read_text()]):
        times = time_widget(w)
        rows.append((chapter, ", ".join(w.controls_spec), len(times), statistics.median(times), pct(times, 95), max(times)))
    print(f"Live widget callbacks (ms; every value of every control, 3 rounds, after one warm-up call; target p95 ≤ {TARGET_MS:.0f} ms)\n")
    print(f"| page | controls | calls | p50 | p95 | max | ok |\n|---|---|---|---|---|---|---|")
    for ch, ctl, n, p50, p95, mx in rows:
        print(f"| {ch} | {ctl} | {n} | {p50:.1f} | {p95:.1f} | {mx:.1f} | {'yes' if p95 <= TARGET_MS else 'NO'} |")
    print(f"\n{sum(r[4] <= TARGET_MS for r in rows)} of {len(rows)} widgets meet the target.")


if __name__ == "__main__":
    main()
