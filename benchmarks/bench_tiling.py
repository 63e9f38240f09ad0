"""Speed of the tiling and TPU machines, the live widgets of chapters 9 and 10, and their page weight.

Prints four tables:
1. the live widgets of "Inside a TPU" and "Tiling" (``Interactive.update`` / ``Animation.update``: rerun
   labsim, rebuild the figure or frames), every value of every control, 3 rounds after one warm-up
   call (target p95 ≤ 100 ms, as ``bench_widgets.py``);
2. ``ls.tiling.tune`` over its whole search space, and single ``ls.tiling.plan`` calls;
3. ``ls.tpu.schedule_dot`` (the static schedule, one Python step per grid step);
4. the website face of the systolic-array animation (every control combination) and, if the book is
   built, the chapters' HTML size (target under 1 MB a page).
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import ROOT, pct, record_widgets, time_widget  # noqa: E402

import labsim as ls  # noqa: E402

TARGET_MS = 100.0
PAGE_MB = 1.0


def timed(f, rounds=3):
    ts = []
    for _ in range(rounds):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def widgets() -> None:
    created = record_widgets(ROOT / "chapters" / f"{name}.md" for name in ("09_tpu", "10_tiling"))
    print(f"1. Live widget callbacks (ms; every value of every control, 3 rounds, after one warm-up call; "
          f"target p95 ≤ {TARGET_MS:.0f} ms)\n")
    print("| page | widget | controls | calls | p50 | p95 | max | ok |\n|---|---|---|---|---|---|---|---|")
    for chapter, w in created:
        times = time_widget(w)
        p95 = pct(times, 95)
        print(f"| {chapter} | {type(w).__name__} | {', '.join(w.controls_spec)} | {len(times)} | "
              f"{statistics.median(times):.1f} | {p95:.1f} | {max(times):.1f} | {'yes' if p95 <= TARGET_MS else 'NO'} |")


def tuner() -> None:
    print("\n2. The tile tuner (median of 3 runs)\n")
    print("| chip | M = N = K | tiles searched | feasible | best tile | est. µs | tune ms | ms per plan |")
    print("|---|---|---|---|---|---|---|---|")
    for chip in ("H100 SXM", "A100 80GB"):
        for n in (512, 4096, 8192):
            t, r = timed(lambda: ls.tiling.tune(n, n, n, chip))
            print(f"| {chip} | {n:,} | {len(r.landscape):,} | {len(r.feasible):,} | {r.best.tile} | "
                  f"{r.best.time * 1e6:,.1f} | {t * 1e3:.0f} | {t * 1e3 / len(r.landscape):.3f} |")


def tpu() -> None:
    print("\n3. The TPU schedule (median of 3 runs)\n")
    print("| chip | M = N = K | blocks | grid steps | schedule ms | est. µs |\n|---|---|---|---|---|---|")
    for chip, n, blk in (("TPU v5e", 4096, None), ("TPU v5e", 8192, None), ("TPU v5e", 8192, (256, 256, 256)),
                         ("TPU v6e", 8192, None), ("TPU v5e", 16384, (128, 128, 128))):
        t, s = timed(lambda: ls.tpu.schedule_dot(n, n, n, chip, blocks=blk))
        b = s.blocks
        ok = "" if n < 16384 else (" (target < 1,000 ms: " + ("ok)" if t < 1 else "SLOW)"))
        print(f"| {chip} | {n:,} | {b.bm}×{b.bn}×{b.bk} | {s.steps.count:,} | {t * 1e3:.1f}{ok} | {s.time * 1e6:,.0f} |")
    print("\n3b. tiling.plan's L2 wave traffic in closed form (median of 3 runs; target < 10 ms)\n")
    print("| M = N = K | tile | waves | plan ms | est. s |\n|---|---|---|---|---|")
    for n in (4096, 10**6, 10**9):
        t, p = timed(lambda: ls.tiling.plan(n, n, n))
        print(f"| {n:,} | {p.tile} | {p.waves:,} | {t * 1e3:.2f} {'ok' if t < 0.01 else 'SLOW'} | {p.time:.3g} |")


def pages() -> None:
    print(f"\n4. Page weight (target under {PAGE_MB:.0f} MB a page)\n")
    print("| what | bytes | build s | ok |\n|---|---|---|---|")
    os.environ["LABSIM_BOOK"] = "1"
    try:
        from labsim import viz
        t = time.perf_counter()
        html = viz.tpu.systolic_animation()._repr_mimebundle_()["text/html"]
        dt = time.perf_counter() - t
        print(f"| systolic animation, all 12 control combinations | {len(html):,} | {dt:.1f} | "
              f"{'yes' if len(html) < PAGE_MB * 1e6 else 'NO'} |")
    finally:
        os.environ.pop("LABSIM_BOOK", None)
    for name in ("09_tpu", "10_tiling"):
        f = ROOT / "_build" / "html" / "chapters" / f"{name}.html"
        if f.exists():
            n = f.stat().st_size
            print(f"| _build/html/chapters/{name}.html | {n:,} | | {'yes' if n < PAGE_MB * 1e6 else 'NO'} |")
        else:
            print(f"| _build/html/chapters/{name}.html | (book not built) | | |")


def main() -> None:
    widgets()
    tuner()
    tpu()
    pages()


if __name__ == "__main__":
    main()
