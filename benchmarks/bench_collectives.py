"""Benchmark the collectives machine (``ls.collectives``) and the widgets of chapter 12 "Many chips".

Run with ``python benchmarks/bench_collectives.py``. Prints two tables:

1. step-by-step runs on NumPy shards (ring and switch): devices, array size, steps, events, wall seconds;
2. the chapter's live widgets (``Interactive.update``): every value of every control, p50 / p95 / max in ms
   (target p95 < 100 ms).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import ROOT, best, pct, record_widgets, table, time_widget  # noqa: E402

import numpy as np  # noqa: E402

from labsim import collectives as col  # noqa: E402

TARGET_MS = 100.0
CHAPTER = ROOT / "chapters" / "12_many_chips.md"


def runs_table():
    rows = []
    rng = np.random.default_rng(0)
    for op in ("all_reduce", "all_to_all"):
        for n, elems in ((8, 1 << 20), (64, 1 << 16), (256, 1 << 12)):
            for topo in ("ring", "switch"):
                arrays = [rng.standard_normal(elems).astype(np.float32) for _ in range(n)]
                t, r = best(lambda: col.run(op, arrays, link="H100 SXM", topology=topo))
                rows.append([f"{col.NAMES[op]} {topo}", f"{n}", f"{elems * 4 / 2**20:.2f}", f"{r.steps}",
                             f"{len(r.trace.events):,}", f"{r.time * 1e6:,.1f}", f"{t:.3f}"])
    for topo, mesh in (("bidir_ring", None), ("torus", (8, 8)), ("mesh", (8, 8)), ("torus", (4, 4, 4))):
        arrays = [rng.standard_normal(1 << 16).astype(np.float32) for _ in range(64)]
        t, r = best(lambda: col.all_reduce(arrays, link="TPU v5e", topology=topo, mesh=mesh))
        rows.append([f"AllReduce {topo}{'' if mesh is None else ' ' + 'x'.join(map(str, mesh))}", "64", "0.25",
                     f"{r.steps}", f"{len(r.trace.events):,}", f"{r.time * 1e6:,.1f}", f"{t:.3f}"])
    table("Step-by-step collectives on NumPy shards (best of 3)",
          ["run", "devices", "MiB/device", "steps", "events", "sim µs", "wall s"], rows)


def widget_table():
    created = [w for _, w in record_widgets([CHAPTER])]
    rows = []
    for w in created:
        ts = time_widget(w)
        rows.append([w.name or type(w).__name__, f"{len(ts)}", f"{pct(ts, 50):.1f}", f"{pct(ts, 95):.1f}",
                     f"{max(ts):.1f}", "yes" if pct(ts, 95) < TARGET_MS else "NO"])
    table(f"Live widgets of {CHAPTER.name} (ms per control change; target p95 < {TARGET_MS:.0f} ms)",
          ["widget", "updates", "p50", "p95", "max", "ok"], rows)


if __name__ == "__main__":
    runs_table()
    widget_table()
