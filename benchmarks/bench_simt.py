"""Benchmark the SIMT machine: simulated thread-instructions per second, and the issue model's speed.

Run with ``make bench`` (or ``python benchmarks/bench_simt.py``). Prints two tables:

1. values only (``trace=False``): kernels the compiler emits (4,096 to 32,768 warps; the matmul 32),
   run on the H100 preset (the matmul on the A100 preset); thread-instructions (active lanes summed over every
   issued instruction) per second of wall time, the time of ``ls.simt.run`` (lowering each kernel to the
   kernel IR included). Target (issue 20): at least 50 million per second on every kernel, on the
   2-core build machine. The last column divides by this process's CPU time of one more run instead:
   on a machine shared with other work it shows what the wall-time rate would be on an idle one (the
   target is judged on wall time).
2. with the issue model (``trace=True``/"auto"): the latency-hiding and divergence experiments the
   chapters animate, wall time per run (a widget redraw reruns one of these).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import best, table  # noqa: E402

import labsim as ls  # noqa: E402
import labsim.numpy as lnp  # noqa: E402

S = ls.ShapeDtype
TARGET = 50e6


def main() -> None:
    rng = np.random.default_rng(0)
    work = {
        "x*y+z, relu (1M elements)": (lambda x, y, z: lnp.maximum(x * y + z, 0.0), [S((1024, 1024))] * 3),
        "gelu (256K elements)": (lambda x: ls.nn.gelu(x), [S((512, 512))]),
        "softmax 256 x 1000": (lambda x: ls.nn.softmax(x, axis=-1), [S((256, 1000))]),
        "layer_norm 128 x 768": (lambda x: ls.nn.layer_norm(x), [S((128, 768))]),
        "matmul bf16 256^3 (A100 path)": (lambda a, b: a @ b, [S((256, 256), "bfloat16")] * 2),
    }
    rows = []
    for name, (f, specs) in work.items():
        prog = ls.compile(ls.trace(f, *specs))
        xs = [rng.standard_normal(s.shape).astype(np.float32) for s in specs]
        chip = "A100 80GB" if "A100" in name else "H100 SXM"
        t, run = best(lambda: ls.simt.run(prog, *xs, chip=chip), repeats=2)
        c0 = time.process_time()  # this process's CPU time: what the rate would be on an idle machine
        ls.simt.run(prog, *xs, chip=chip)
        cpu = time.process_time() - c0
        warps = sum(k.ir.grid * k.ir.warps_per_block for k in run.kernels)
        ok = all(np.allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=1e-4)
                 for a, b in zip(np.atleast_1d(run.outputs), np.atleast_1d(ls.evaluate(prog.graph, *xs))))
        rate = run.thread_instructions / t
        rows.append([name, f"{warps:,}", f"{run.thread_instructions:,}", f"{t * 1e3:,.0f}", f"{rate / 1e6:,.1f}",
                     "yes" if rate >= TARGET else "NO", "yes" if ok else "NO",
                     f"{run.thread_instructions / max(cpu, 1e-9) / 1e6:,.1f}"])
    table(f"1. SIMT machine, values only: simulated thread-instructions per second (target >= {TARGET / 1e6:.0f} M/s)",
          ["kernel", "warps", "thread-instr", "ms", "M thread-instr/s", "target", "== evaluate",
           "M/s of CPU time"], rows)

    rows = []
    for w in (4, 16, 32):
        e = ls.simt.latency_kernel(4, 16, warps=w)
        t, run = best(lambda: ls.simt.run_ir(e.ir, e.inputs, schedulers=1), repeats=3)
        rows.append([f"latency_kernel(I=4, 16 repeats), {w} warps, 1 scheduler", f"{run.trace.cycles:,}",
                     f"{run.warp_instructions:,}", f"{t * 1e3:,.1f}"])
    for pat in ("contiguous", "interleaved"):
        e = ls.simt.divergent_kernel(4, 4, pattern=pat, taken=16, warps=8)
        t, run = best(lambda: ls.simt.run_ir(e.ir, e.inputs), repeats=5)
        rows.append([f"divergent_kernel(4, 4, {pat}), 8 warps", f"{run.trace.cycles:,}",
                     f"{run.warp_instructions:,}", f"{t * 1e3:,.1f}"])
    table("2. SIMT machine with the issue model (per-cycle trace): wall time per run",
          ["experiment", "cycles", "warp-instr", "ms"], rows)


if __name__ == "__main__":
    main()
