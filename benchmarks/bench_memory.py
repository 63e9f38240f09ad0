"""Benchmark labsim's memory: the peak Python memory of running a long chain of ops.

Run with ``make bench`` (or ``python benchmarks/bench_memory.py``). Prints one table: ``ls.evaluate``
and ``ls.host.Machine().call`` of ``x = tanh(x)·1.5 + x`` (three ops a step) on a 1024×1024 float32
array (4 MiB), at 80 and 400 steps, with the peak memory ``tracemalloc`` sees during the call and that
peak in arrays. The interpreter frees each value after its last use (``labsim.core.trace.last_uses``),
so the peak is a few arrays whatever the length; the issue's target is under 100 MB at 80 steps (it
was 960 MB when every intermediate stayed alive).
"""
from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import table  # noqa: E402

import labsim as ls  # noqa: E402
import labsim.numpy as lnp  # noqa: E402

TARGET_MB = 100.0  # issue 21: an 80-step chain on a 1024² float32 array peaks under 100 MB
SIDE = 1024


def chain(steps: int):
    def f(x):
        for _ in range(steps):
            x = lnp.tanh(x) * 1.5 + x
        return x

    return f


def peak(fn) -> tuple[float, float]:
    """(peak bytes above the start, seconds) of ``fn()`` under ``tracemalloc``."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return top - base, dt


def rows(steps=(80, 400)) -> list[list[str]]:
    x = np.random.default_rng(0).standard_normal((SIDE, SIDE)).astype(np.float32)
    one = x.nbytes
    out = []
    for n in steps:
        g = ls.trace(chain(n), ls.ShapeDtype(x.shape, "float32"))
        m = ls.host.Machine()
        a = m.put(x)
        prog = ls.compile(g)
        for what, fn in (("ls.evaluate", lambda: ls.evaluate(g, x)), ("Machine.call", lambda: m.call(prog, a))):
            b, dt = peak(fn)
            mb = b / 1e6
            verdict = ("ok" if mb < TARGET_MB else "HIGH") if n == 80 else ""
            out.append([f"{what}, {n} steps", f"{len(g.nodes):,}", f"{mb:.1f}", f"{b / one:.1f}",
                        f"{dt * 1e3:.0f}", verdict])
    return out


def main() -> None:
    table(f"Peak memory of running a tanh chain on a {SIDE}×{SIDE} float32 array ({SIDE * SIDE * 4 / 1e6:.1f} MB); "
          f"target at 80 steps: < {TARGET_MB:.0f} MB",
          ["workload", "nodes", "peak MB", "peak / array", "time ms", "target"], rows())


if __name__ == "__main__":
    main()
