"""Benchmark the importers: ``ls.from_jax`` and ``ls.from_torch`` of a 12-layer GPT-2-small-shaped model.

Run with ``make bench`` (or ``python benchmarks/bench_importers.py``; it needs JAX and PyTorch, which
``make crosscheck`` installs, and says so and stops where they are absent). The model is the GPT-2-style
block of ``labsim/importers/examples.py`` stacked 12 times at GPT-2 small's shapes (d_model 768, 12 heads,
sequence 128, batch 1, no embedding). Each framework's program is imported, then compiled with
``ls.compile``; the issue's target is under 5 s for import and compile together. Each figure is the best
and the median of a few runs (this machine is shared and noisy).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import table  # noqa: E402

import labsim as ls  # noqa: E402
from labsim.importers import examples  # noqa: E402

TARGET_S = 5.0  # issue 26: import and compile a 12-layer GPT-2-small-shaped model in under 5 s
LAYERS, D, HEADS, SEQ, BATCH = 12, 768, 12, 128, 1
REPEATS = 3


def jax_model():
    import jax
    import numpy as np

    shapes = examples.param_shapes(D)
    params = [{k: jax.ShapeDtypeStruct(s, np.float32) for k, s in shapes.items()} for _ in range(LAYERS)]

    def model(params, x):
        for p in params:
            x = examples.gpt2_block_jax(p, x, heads=HEADS)
        return x

    return model, (params, jax.ShapeDtypeStruct((BATCH, SEQ, D), np.float32))


def torch_model():
    import torch

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList(examples.gpt2_block_torch(d=D, heads=HEADS) for _ in range(LAYERS))

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    with torch.device("meta"):  # shapes only: no 340 MB of weights to fill
        model = Stack().eval()
    return model, (torch.empty(BATCH, SEQ, D, device="meta"),)


def measure(importer, make):
    fn, args = make()
    imports, compiles, prog = [], [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        g = importer(fn, *args)
        t1 = time.perf_counter()
        prog = ls.compile(g)
        t2 = time.perf_counter()
        imports.append(t1 - t0)
        compiles.append(t2 - t1)
    totals = [a + b for a, b in zip(imports, compiles)]
    return g, prog, imports, compiles, totals


def main() -> None:
    try:
        import jax  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print(f"bench_importers: {e}; JAX and PyTorch are needed (make crosscheck installs them). Skipped.")
        return
    rows = []
    for name, importer, make in (("ls.from_jax", ls.from_jax, jax_model), ("ls.from_torch", ls.from_torch, torch_model)):
        g, prog, imp, comp, tot = measure(importer, make)
        rows.append([name, str(len(g.nodes)), str(len(prog.kernels)), f"{min(imp):.2f} / {statistics.median(imp):.2f}",
                     f"{min(comp):.2f} / {statistics.median(comp):.2f}",
                     f"{min(tot):.2f} / {statistics.median(tot):.2f}", "yes" if min(tot) < TARGET_S else "NO"])
    table(f"Import + compile of a {LAYERS}-layer GPT-2-small-shaped model (d_model {D}, {HEADS} heads, "
          f"sequence {SEQ}, batch {BATCH}); seconds, best / median of {REPEATS}",
          ["importer", "nodes", "kernels", "import s", "compile s", "total s", f"< {TARGET_S:.0f} s"], rows)


if __name__ == "__main__":
    main()
