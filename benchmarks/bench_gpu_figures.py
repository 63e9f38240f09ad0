"""The figures of chapters 7, 8 and 10 (Inside a GPU; Warps; Tiling): page weight of each animation and widget, and
their live latency.

Runs each chapter's code as JupyterLab would (without LABSIM_BOOK), records every
``labsim.viz.interactive`` / ``labsim.viz.animate`` figure it creates, then

1. builds each one's website face (``to_html`` with ``LABSIM_BOOK=1``: every control combination, every
   frame) and prints its size in KB and the time it took, and the sum per page (target: a page under
   1 MB, so its figures must stay well below);
2. moves each control through all of its values and times the live callback (``update``: rerun labsim,
   rebuild the figure or the frames), three rounds after one warm-up call (target p95 <= 100 ms).

Run with ``.venv/bin/python benchmarks/bench_gpu_figures.py``; ``make bench`` runs it with the others.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import ROOT, pct, record_widgets, time_widget  # noqa: E402

PAGES = ["07_gpu", "08_warps", "10_tiling"]
PAGE_TARGET_KB = 1024.0
LATENCY_TARGET_MS = 100.0


def main() -> None:
    rows, per_page = [], {}
    for chapter, w in record_widgets(ROOT / "chapters" / f"{name}.md" for name in PAGES):
        kind = type(w).__name__
        combos = 1
        for vals in w.controls_spec.values():
            combos *= len(vals)
        os.environ["LABSIM_BOOK"] = "1"
        t = time.perf_counter()
        kb = len(w.to_html().encode()) / 1024
        build_s = time.perf_counter() - t
        os.environ.pop("LABSIM_BOOK", None)
        per_page[chapter] = per_page.get(chapter, 0.0) + kb
        times = time_widget(w)
        rows.append((chapter, kind, ", ".join(w.controls_spec), combos, kb, build_s, pct(times, 50), pct(times, 95)))
    print("Figures of chapters 7, 8 and 10: website face (every combination and frame) and live callbacks\n")
    print("| page | kind | controls | combinations | KB | build s | live p50 ms | live p95 ms | p95 ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ch, kind, ctl, n, kb, bs, p50, p95 in rows:
        print(f"| {ch} | {kind} | {ctl} | {n} | {kb:,.0f} | {bs:.1f} | {p50:.1f} | {p95:.1f} | "
              f"{'yes' if p95 <= LATENCY_TARGET_MS else 'NO'} |")
    print("\n| page | figures' KB | under 1 MB |\n|---|---|---|")
    for ch, kb in per_page.items():
        print(f"| {ch} | {kb:,.0f} | {'yes' if kb <= PAGE_TARGET_KB else 'NO'} |")


if __name__ == "__main__":
    main()
