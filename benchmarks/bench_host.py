"""Benchmark the host/device machine (``ls.host``) and the live timelines of the "Host and device" chapter.

Run with ``make bench`` (or ``python benchmarks/bench_host.py``). Prints two tables:

1. simulating many dispatched kernels: 10,000 launches asynchronously, synchronised after each, as one
   graph replay, and a 10,000-op eager program through ``Machine.call`` (target: 10,000 kernels < 1 s);
2. the chapter's live widgets (``Interactive.update``: rerun the machine, rebuild the timeline): every
   value of every control, three rounds after one warm-up, p50 / p95 / max in ms (target p95 < 100 ms).
"""
from __future__ import annotations

import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.pop("LABSIM_BOOK", None)

import labsim as ls  # noqa: E402
import labsim.numpy as lnp  # noqa: E402
from labsim.viz import faces  # noqa: E402

TARGET_S = 1.0
TARGET_MS = 100.0
CHAPTER = ROOT / "chapters" / "11_host_device.md"


def best(fn, repeats=3):
    out, t = None, float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def eager_chain(n_ops):
    def f(x):
        for _ in range(n_ops):
            x = x * 1.0001 + 0.5
        return x
    return ls.compile(ls.trace(f, ls.ShapeDtype((1024,))), passes=[])


def simulate_table():
    rows = []
    for how in ("async", "sync", "graph"):
        t, m = best(lambda: ls.host.kernel_loop(10_000, 2e-6, how=how))
        rows.append((f"10,000 launches, {how}", 10_000, len(m.trace.events), t))
    prog = eager_chain(5_000)  # 5,000 multiply + 5,000 add = 10,000 eager kernels

    def run():
        m = ls.host.Machine("H100 SXM")
        y = m.call(prog, m.put(ls.ShapeDtype((1024,))), mode="eager")
        y.block_until_ready()
        return m
    t, m = best(run)
    rows.append((f"eager program, {len(prog.kernels):,} ops (Machine.call)", len(prog.kernels), len(m.trace.events), t))
    print(f"Simulating dispatched kernels (best of 3; target < {TARGET_S:.0f} s for 10,000 kernels)\n")
    print("| workload | kernels | events | seconds | ok |\n|---|---|---|---|---|")
    for name, k, ev, t in rows:
        print(f"| {name} | {k:,} | {ev:,} | {t:.3f} | {'yes' if t < TARGET_S * k / 10_000 else 'NO'} |")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def widget_table():
    created = []
    orig = faces.Interactive.__init__

    def rec(self, *a, **k):
        orig(self, *a, **k)
        created.append(self)
    faces.Interactive.__init__ = rec
    try:
        import jupytext
        nb = jupytext.read(CHAPTER)
        code = "\n\n".join(c.source for c in nb.cells if c.cell_type == "code"
                           and not c.source.lstrip().startswith(("%", "!")))
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, str(CHAPTER), "exec"), {"__name__": "__chapter__"})
    finally:
        faces.Interactive.__init__ = orig
    print(f"\nLive timelines of {CHAPTER.name} (ms per control change; every value of every control, 3 rounds, "
          f"after one warm-up; target p95 < {TARGET_MS:.0f} ms)\n")
    print("| widget | controls | calls | p50 | p95 | max | ok |\n|---|---|---|---|---|---|---|")
    for i, w in enumerate(created):
        w.update(**w.params)
        times = []
        for _ in range(3):
            for name, values in w.controls_spec.items():
                for v in values:
                    t0 = time.perf_counter()
                    w.update(**{name: v})
                    times.append((time.perf_counter() - t0) * 1e3)
        assert w.error is None, w.error
        p95 = pct(times, 95)
        print(f"| {i + 1} | {', '.join(w.controls_spec)} | {len(times)} | {statistics.median(times):.1f} | "
              f"{p95:.1f} | {max(times):.1f} | {'yes' if p95 < TARGET_MS else 'NO'} |")


def main():
    simulate_table()
    if CHAPTER.exists():
        widget_table()


if __name__ == "__main__":
    main()
