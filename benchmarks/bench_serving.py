"""Speed of labsim's serving models (chapter 13) and the live widgets of "LLM inference".

Prints three tables:
1. the live widgets of chapters/13_llm_inference.md (every value of every control, after one warm-up
   call; target p95 ≤ 100 ms, as ``bench_widgets.py``);
2. ``serving.simulate_kv_allocation`` on the chapter's stream of 200 requests, by scheme and block;
3. ``serving.flash_attention`` (the NumPy online-softmax reference) against the unfused reference, and
   tracing + compiling + estimating one decode step of a LLaMA-3-8B layer, and one whole-model
   ``serving.step_time`` (a ``StepCost``, labsim's roofline cost type);
4. ``serving.simulate_batching`` (static vs continuous) on the chapter's stream of 200 requests;
5. closed forms that must stay closed (issue 21): ``serving.simulate_speculative`` aggregated over 10⁸
   rounds (was 54 s and 3 GB), ``collectives.fsdp_peak`` over 10⁷ layers (was a 2·10⁷-row timeline).
"""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import ROOT, best, pct, record_widgets, table, time_widget  # noqa: E402

import numpy as np  # noqa: E402

import labsim as ls  # noqa: E402
from labsim import llm, serving  # noqa: E402

TARGET_MS = 100.0


def widgets() -> None:
    rows = []
    for chapter, w in record_widgets([ROOT / "chapters" / "13_llm_inference.md"]):
        times = time_widget(w)
        p95 = pct(times, 95)
        rows.append([chapter, ", ".join(w.controls_spec), str(len(times)), f"{statistics.median(times):.1f}",
                     f"{p95:.1f}", f"{max(times):.1f}", "yes" if p95 <= TARGET_MS else "NO"])
    table(f"1. Live widget callbacks (ms; target p95 ≤ {TARGET_MS:.0f} ms)",
          ["page", "controls", "calls", "p50", "p95", "max", "ok"], rows)


def allocators() -> None:
    reqs = serving.random_requests(200, seed=1, prompt=(16, 256), output=(16, 512), rate=0.5)
    rows = []
    for scheme, block in [("contiguous", 16), ("paged", 4), ("paged", 16), ("paged", 256)]:
        t, r = best(lambda: serving.simulate_kv_allocation(reqs, 16384, scheme=scheme, block=block))
        s = r.summary()
        rows.append([scheme, str(block), str(r.steps), f"{100 * s.used:.1f}", f"{t * 1e3:.0f}",
                     f"{t / r.steps * 1e6:.0f}"])
    table("2. KV allocator simulation, 200 requests, 16,384 slots (best of 3)",
          ["scheme", "block", "steps", "used %", "ms", "µs per step"], rows)


def kernels() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for n in (512, 2048):
        q, k, v = (rng.standard_normal((8, n, 128)) for _ in range(3))
        t_f, _ = best(lambda: serving.flash_attention(q, k, v, block=128, causal=True))
        t_r, _ = best(lambda: serving.attention_reference(q, k, v, causal=True))
        rows.append([f"attention 8 heads × {n} × 128", f"{t_f * 1e3:.0f}", f"{t_r * 1e3:.0f}"])
    cfg = llm.PRESETS["LLaMA-3-8B"]
    t_d, _ = best(lambda: ls.estimate(ls.compile(ls.trace(llm.decode_fn(cfg, "block"), *llm.decode_specs(
        cfg, "block", 1, 2048, dtype="bfloat16"))), "H100 SXM"))
    rows.append(["LLaMA-3-8B decode layer: trace+compile+estimate", f"{t_d * 1e3:.0f}", "-"])
    t_s, st = best(lambda: serving.step_time(cfg, "H100 SXM", batch=64, kv_len=4096))
    rows.append([f"serving.step_time → {type(st).__name__} ({st.bound.value}-bound, {st.ms:.1f} ms)",
                 f"{t_s * 1e3:.3f}", "-"])
    table("3. NumPy references and the decode program (ms, best of 3)", ["what", "flash / labsim", "unfused"], rows)


def batching() -> None:
    cost = serving.step_cost("LLaMA-3-8B", "H100 SXM")
    rows = []
    for rate in (10, 60, 120):
        reqs = serving.poisson_requests(200, rate, seed=0, prompt=(64, 512), output=(16, 256))
        for policy in ("static", "continuous"):
            t, r = best(lambda: serving.simulate_batching(reqs, cost, policy=policy, max_batch=64))
            s = r.summary()
            rows.append([str(rate), policy, str(s.steps), f"{s.throughput_tok_s:,.0f}",
                         f"{s.mean_latency_s:.2f}", f"{t * 1e3:.0f}", f"{t / s.steps * 1e6:.0f}"])
    table("4. Batching simulation, 200 requests, LLaMA-3-8B on the H100, batch ≤ 64 (best of 3)",
          ["req/s", "policy", "steps", "tok/s", "mean latency s", "ms", "µs per step"], rows)


def closed_forms() -> None:
    import tracemalloc

    rows = []
    for what, fn in [("simulate_speculative(0.8, 4, 10**6)", lambda: serving.simulate_speculative(0.8, 4, 10**6)),
                     ("simulate_speculative(0.8, 4, 10**8)", lambda: serving.simulate_speculative(0.8, 4, 10**8)),
                     ("simulate_speculative(0.99, 1000, 10**8)", lambda: serving.simulate_speculative(0.99, 1000, 10**8)),
                     ("fsdp_peak(1e9 params, 10**7 layers, 8)", lambda: ls.collectives.fsdp_peak(10**9, 10**7, 8))]:
        t, _ = best(fn)
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append([what, f"{t * 1e3:.2f}", f"{peak / 2**20:.2f}"])
    table("5. Closed forms and aggregated simulations (best of 3)", ["call", "ms", "peak MiB"], rows)


if __name__ == "__main__":
    closed_forms()
    widgets()
    allocators()
    kernels()
    batching()
