"""Benchmark the cycle-level systolic array (``ls.systolic``) against SCALE-Sim 3.0.0, side by side.

Run with ``make bench`` (or ``python benchmarks/bench_systolic.py``). Prints two tables:

1. the same GEMMs on the same arrays in one run: labsim's ``simulate`` (cycle by cycle, real float32
   values, no trace; best of 3) and SCALE-Sim's ``run_scale`` (its Python API, ``save_disk_space=True``;
   live in ``.venv-peers``, which ``make bench`` and ``make crosscheck`` create; without it the time
   stored with the reference is shown, marked "stored"), the ratio (target: labsim at least 10× faster),
   and both cycle counts: SCALE-Sim reports the last 0-based cycle index, so its count must equal
   labsim's minus 1 ("equal" column). SCALE-Sim computes cycles and accesses only; labsim also computes
   the product, which is checked against NumPy ("values" column).
2. the cost of the per-cycle trace on the small arrays the book animates (``trace=True``): p50/p95 of
   20 runs, against the 100 ms budget of a live control change;
3. the animation (``labsim.viz.systolic.systolic_animation``): the website page weight of a figure with
   its controls (target under 1 MB) and the live face's control change (``Animation.update``: new frames
   simulated and drawn, the cache cleared before each) p50/p95.

5. ``ls.systolic.cycles``/``stats`` at 65,536 × 65,536 × 64 on a 4×4 array and at 10⁹ per side:
   closed forms in O(1) (target under 10 ms; the folds × folds matrix it replaced took 10 s and 4 GB).

4. ``ls.tpu.run`` of a 2-layer MLP (``relu(x @ w1) @ w2``, bfloat16, batch 128, width 512) on the TPU
   v5e: the compiled program run with real values, best of 3 (target under 2 s).

Options: ``--quick`` runs the 32×32 configurations only; ``--no-live`` never starts SCALE-Sim.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import percentile, table  # noqa: E402

import labsim as ls  # noqa: E402
from labsim.peers import scalesim as ss  # noqa: E402

TARGET_RATIO = 10.0
TARGET_MS = 100.0
TARGET_RUN_S = 2.0


def side_by_side(configs, live) -> list[list[str]]:
    rows = []
    for r in ss.speed_rows(configs, live=live):
        ratio = r["ratio"]
        rows.append([f"{r['rows']}×{r['cols']} {r['dataflow']}, {r['M']}·{r['N']}·{r['K']}",
                     f"{r['labsim_s'] * 1e3:,.0f}",
                     f"{r['scalesim_s'] * 1e3:,.0f} ({r['source']})" if r["scalesim_s"] else "not run",
                     f"{ratio:.1f}×" if ratio else "—",
                     f"{r['labsim_cycles']:,}", f"{r['scalesim_cycles']:,}" if r["scalesim_cycles"] is not None else "—",
                     {True: "yes", False: "NO", None: "—"}[r["cycles_equal"]],
                     "ok" if r["values_ok"] else "WRONG",
                     ("ok" if ratio >= TARGET_RATIO else "SLOW") if ratio else ""])
    return rows


def trace_latency(repeats: int = 20) -> list[list[str]]:
    rng = np.random.default_rng(0)
    rows = []
    for (R, C, M, N, K) in [(4, 4, 4, 4, 4), (4, 4, 8, 8, 8), (8, 8, 8, 8, 8), (8, 8, 16, 16, 16)]:
        A = rng.integers(-4, 5, (M, K)).astype(float)
        B = rng.integers(-4, 5, (K, N)).astype(float)
        for df in ("ws", "os", "is"):
            ts = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                r = ls.systolic.simulate(A, B, rows=R, cols=C, dataflow=df, trace=True)
                ts.append((time.perf_counter() - t0) * 1e3)
            p50, p95 = percentile(ts, 50), percentile(ts, 95)
            rows.append([f"{R}×{C} {df}, {M}·{N}·{K}", f"{r.cycles}", f"{p50:.1f}", f"{p95:.1f}",
                         "ok" if p95 <= TARGET_MS else "SLOW"])
    return rows


def animation_costs(repeats: int = 10) -> list[list[str]]:
    import os

    from labsim.viz import systolic as vs

    rows = []
    for label, controls in [("4×4, 4·4·4, dataflow ×3", {"dataflow": ["ws", "os", "is"]}),
                            ("dataflow ×3, array 2/4/8, K 4/8", {"dataflow": ["ws", "os", "is"], "rows": [2, 4, 8],
                                                                 "K": [4, 8]}),
                            ("8×8 array, 8·8·8, dataflow ×3", {"dataflow": ["ws", "os", "is"], "rows": [8], "cols": [8],
                                                              "M": [8], "N": [8], "K": [8]})]:
        os.environ["LABSIM_BOOK"] = "1"
        a = vs.systolic_animation(controls)
        t0 = time.perf_counter()
        page = a._repr_mimebundle_()["text/html"]
        build = time.perf_counter() - t0
        os.environ.pop("LABSIM_BOOK", None)
        b = vs.systolic_animation(controls)
        combos = [dict(zip(controls, vals)) for vals in __import__("itertools").product(*controls.values())]
        ts = []
        for i in range(repeats):
            for c in combos[:6]:
                b._frames_cache.clear()
                t0 = time.perf_counter()
                b.update(**c)
                ts.append((time.perf_counter() - t0) * 1e3)
        p50, p95 = percentile(ts, 50), percentile(ts, 95)
        kb = len(page.encode()) / 1024
        rows.append([label, f"{len(combos)}", f"{kb:,.0f}", "ok" if kb < 1024 else "HEAVY", f"{build:.1f}",
                     f"{p50:.0f}", f"{p95:.0f}", "ok" if p95 <= TARGET_MS else "SLOW"])
    return rows


def tpu_run_mlp(batch: int = 128, width: int = 512, repeats: int = 3) -> list[list[str]]:
    import labsim.numpy as lnp

    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((batch, width), (width, width), (width, width)))
    prog = ls.compile(ls.trace(lambda x, w1, w2: lnp.maximum(x @ w1, 0) @ w2,
                               *(ls.ShapeDtype(a.shape, "bfloat16") for a in (x, w1, w2))))
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = ls.tpu.run(prog, x, w1, w2, chip="TPU v5e")
        ts.append(time.perf_counter() - t0)
    cyc = sum(b.cycle_by_cycle for b in r.blocks)
    return [[f"MLP {batch}×{width}, 2 layers, bf16", f"{len(r.blocks)} ({cyc} cycle by cycle)",
             f"{r.time * 1e6:.2f}", f"{min(ts):.2f}", "ok" if min(ts) < TARGET_RUN_S else "SLOW"]]


def closed_forms() -> list[list[str]]:
    rows = []
    for label, f in (("cycles(65,536, 65,536, 64, 4×4, os)",
                      lambda: ls.systolic.cycles(65536, 65536, 64, rows=4, cols=4, dataflow="os")),
                     ("cycles(10⁹, 10⁹, 10⁹, 4×4, os)",
                      lambda: ls.systolic.cycles(10**9, 10**9, 10**9, rows=4, cols=4, dataflow="os")),
                     ("stats(10⁹, 10⁹, 10⁹, 128×128, ws)",
                      lambda: ls.systolic.stats(10**9, 10**9, 10**9, rows=128, cols=128).cycles)):
        t = min(_once(f) for _ in range(5))
        rows.append([label, f"{f():.4g}" if f() > 1e15 else f"{f():,}", f"{t * 1e3:.3f}", "ok" if t < 0.01 else "SLOW"])
    return rows


def _once(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="32×32 configurations only")
    ap.add_argument("--no-live", action="store_true", help="do not run SCALE-Sim (show stored times)")
    args = ap.parse_args()
    configs = ss.SPEED_CONFIGS[:3] if args.quick else ss.SPEED_CONFIGS
    live = ss.peers_available() and not args.no_live
    print(f"labsim {ls.__version__}, Python {sys.version.split()[0]}, NumPy {np.__version__}; "
          f"SCALE-Sim: {'3.0.0, live in ' + str(ss.PEERS_PYTHON.parent.parent.name) if live else 'not run (no .venv-peers)'}")
    table(f"1. labsim's cycle-level simulation against SCALE-Sim, same configurations (ms; target ≥ {TARGET_RATIO:.0f}×)",
          ["configuration (array, dataflow, M·N·K)", "labsim", "SCALE-Sim", "ratio", "labsim cycles",
           "SCALE-Sim cycles", "equal (−1)", "values", ""], side_by_side(configs, live))
    table(f"2. simulate(..., trace=True) on the animated sizes (ms, 20 runs; target p95 ≤ {TARGET_MS:.0f} ms)",
          ["configuration", "cycles", "p50", "p95", ""], trace_latency())
    table(f"3. the animation: page weight (KiB; target < 1,024) and a live control change (ms; target p95 ≤ {TARGET_MS:.0f})",
          ["controls", "combinations", "page KiB", "", "build s", "p50", "p95", ""], animation_costs())
    table("5. closed forms at sizes too large to simulate (ms, best of 5; target < 10 ms)",
          ["call", "answer", "ms", ""], closed_forms())
    table(f"4. ls.tpu.run of a compiled program with real values (s, best of 3; target < {TARGET_RUN_S:.0f} s)",
          ["program", "MXU blocks", "simulated µs", "wall s", ""], tpu_run_mlp())


if __name__ == "__main__":
    main()
