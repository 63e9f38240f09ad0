"""One trace (issue 20, item 4): the TPU dot schedule and the SIMT machine's per-cycle record are views of
``ls.Trace`` values that ``viz.timeline`` draws; the events built from a ``DotSchedule`` are the ones
``ls.tpu.run`` records for the same contraction."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim.machines.tpu_trace import schedule_events, schedule_trace

S = ls.ShapeDtype


@pytest.mark.parametrize("chip", ["TPU v5e", "TPU v6e"])
def test_the_tpu_runs_contraction_events_are_its_schedules_events(chip):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((128, 512)).astype(np.float32), rng.standard_normal((512, 256)).astype(np.float32)
    prog = ls.compile(ls.trace(lambda x, w: lnp.maximum(x @ w, 0), S(x.shape, "bfloat16"), S(w.shape, "bfloat16")))
    r = ls.tpu.run(prog, x.astype(np.float32), w.astype(np.float32), chip=chip)
    dots = [kr for kr in r.kernels if getattr(kr.cost, "schedule", None) is not None]
    assert dots, "the program has a contraction kernel with a schedule"
    for kr in dots:
        k, sched = kr.kernel, kr.cost.schedule
        want = schedule_events(sched, k.name, start=kr.start, detail=k.ops_summary())
        got = [e for e in r.trace.events if e.name.startswith(k.name + " ")]
        assert sorted(got, key=lambda e: (e.start, e.name)) == sorted(want, key=lambda e: (e.start, e.name))
        alone = schedule_trace(sched, name=k.name)
        assert sum(e.flops for e in alone.of_kind(ls.EventKind.COMPUTE) if e.flops) == sched.flops
        assert alone.end == pytest.approx(sched.time, rel=1e-12)
