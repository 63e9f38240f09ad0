"""Speed of ``ls.from_jax`` and ``ls.from_torch`` (issue 26): a 12-layer GPT-2-small-shaped model.

The model: 12 blocks of ``labsim.importers.examples`` (d_model 768, 12 heads, d_ff 3072), batch 1,
sequence 128, float32. The token embedding and the LM head are left out: an embedding is a gather,
which the importers refuse (labsim does not model gathers); the model takes the embedded activations.

Each import is split into the framework's own capture (``jax.make_jaxpr``; ``torch.export``, plus
``run_decompositions`` only when labsim lacks a row for an op of the exported graph) and labsim's
translation (the whole ``from_*`` call less that capture, measured by timing the capture alone), then ``ls.compile``. Target: under 5 s end to end for each framework.
Then the live widget of book/bring_your_own.md, timed as ``bench_widgets.py`` times widgets
(every value of every control after one warm-up call; target p95 ≤ 100 ms).
Skipped, with a message, for a framework that is not installed (``make crosscheck`` installs both).
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import ROOT, pct, record_widgets, table, time_widget  # noqa: E402

import labsim as ls  # noqa: E402
from labsim.importers import examples  # noqa: E402

LAYERS, D, HEADS, SEQ, BATCH = 12, 768, 12, 128, 1
REPEATS = 3
TARGET_S = 5.0
TARGET_MS = 100.0


def _times(fn, repeats=REPEATS):
    out, ts = None, []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return ts, out


def _jax_case():
    import jax
    import jax.numpy as jnp

    params = [{k: jnp.zeros(s, jnp.float32) for k, s in examples.param_shapes(D).items()} for _ in range(LAYERS)]
    x = jnp.zeros((BATCH, SEQ, D), jnp.float32)

    def gpt2_small(ps, x):
        for p in ps:
            x = examples.gpt2_block_jax(p, x, heads=HEADS)
        return x

    def capture():  # a new function each time: make_jaxpr caches its trace by function
        return jax.make_jaxpr(lambda ps, x: gpt2_small(ps, x))(params, x)

    def translate():
        """from_jax less its make_jaxpr call (timed alone in ``capture``): labsim's side."""
        real = jax.make_jaxpr
        jaxpr = real(gpt2_small, return_shape=True)(params, x)
        jax.make_jaxpr = lambda *_a, **_k: (lambda *_: jaxpr)
        try:
            return ls.from_jax(gpt2_small, params, x)
        finally:
            jax.make_jaxpr = real

    return capture, translate


def _torch_case():
    import torch

    class GPT2Small(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList(examples.gpt2_block_torch(None, D, HEADS) for _ in range(LAYERS))

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    from labsim.importers import torch_import

    m, x = GPT2Small().eval(), torch.zeros(BATCH, SEQ, D)
    captured = []

    def capture():
        captured[:] = [torch_import._export(m, (x,))]  # as from_torch calls it
        return captured[0]

    def translate():
        """from_torch on the program captured last: labsim's side alone (torch.export's time varies by
        seconds between calls, as its caches warm up, which would swamp a difference of totals)."""
        real = torch_import._export
        torch_import._export = lambda *_: captured[0]
        try:
            return ls.from_torch(m, x)
        finally:
            torch_import._export = real

    return capture, translate


def main() -> None:
    rows, skipped = [], []
    for name, package, case in (("JAX", "jax", _jax_case), ("PyTorch", "torch", _torch_case)):
        try:
            __import__(package)
        except ImportError:
            skipped.append(f"{name}: skipped, '{package}' is not installed (make crosscheck installs it)")
            continue
        capture, translate = case()
        cap, _ = _times(capture)
        lab, g = _times(translate)
        comp, prog = _times(lambda: ls.compile(g))
        cap_m, lab_m, comp_m = (statistics.median(t) for t in (cap, lab, comp))
        ours_b, ours_m = min(lab) + min(comp), lab_m + comp_m
        end_b, end_m = min(cap) + ours_b, cap_m + ours_m
        rows.append([name, f"{len(g.nodes)}", f"{len(prog.kernels)}", f"{min(cap):.2f} / {cap_m:.2f}",
                     f"{min(lab):.2f} / {lab_m:.2f}", f"{min(comp):.2f} / {comp_m:.2f}",
                     f"{ours_b:.2f} / {ours_m:.2f}", f"{end_b:.2f} / {end_m:.2f}",
                     "yes" if end_b <= TARGET_S else "NO"])
    if rows:
        table(f"Import + compile, {LAYERS}-layer GPT-2-small shape (d {D}, {HEADS} heads, d_ff {4 * D}, batch {BATCH},"
              f" seq {SEQ}, no embedding); seconds, best / median of {REPEATS}; target end to end ≤ {TARGET_S:.0f} s",
              ["framework", "ops", "kernels", "capture (framework)", "translation", "ls.compile",
               "labsim total", "end to end", "ok"], rows)
    for s in skipped:
        print(s)
    widgets = []
    for page, w in record_widgets([ROOT / "book" / "bring_your_own.md"]):
        times = time_widget(w)
        p95 = pct(times, 95)
        widgets.append([page, ", ".join(w.controls_spec), str(len(times)), f"{statistics.median(times):.1f}",
                        f"{p95:.1f}", f"{max(times):.1f}", "yes" if p95 <= TARGET_MS else "NO"])
    table(f"Live widget callbacks of 'Bring your own model' (ms; target p95 ≤ {TARGET_MS:.0f} ms)",
          ["page", "controls", "calls", "p50", "p95", "max", "ok"], widgets)


if __name__ == "__main__":
    main()
