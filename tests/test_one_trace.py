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


def test_a_kernel_run_of_the_simt_machine_is_an_ls_trace_with_its_per_cycle_record():
    from labsim.machines.simt import Stall, Timing, latency_kernel, run_ir

    e = latency_kernel(2, 8, warps=4)
    run = run_ir(e.ir, e.inputs, schedulers=1, timing=Timing(memory=60))
    wt = run.trace
    assert isinstance(wt, ls.Trace) and isinstance(wt, ls.simt.WarpTrace)
    hz = ls.hardware.PRESETS["H100 SXM"].sm_clock()
    (kernel,) = wt.of_kind(ls.EventKind.KERNEL)
    assert kernel.unit.kind is ls.UnitKind.STREAM and kernel.end == pytest.approx(wt.cycles / hz, rel=1e-12)
    sms = wt.units_of(ls.UnitKind.SM)
    assert sum(int(s.detail.split()[0].replace(",", "")) for s in wt.of_kind(ls.EventKind.COMPUTE)) \
        == len(wt.issue_cycle) == run.warp_instructions
    assert [u.index for u in sms] == sorted(set(wt.warp_sm.tolist()))
    # per warp: issuing spans cover exactly its ISSUED cycles, stall spans its waiting cycles
    rows = wt.per_warp()
    assert rows.units_of(ls.UnitKind.WARP) == tuple(ls.UnitId(0, ls.UnitKind.WARP, int(w)) for w in wt.warps)
    for j, w in enumerate(wt.warps):
        evs = rows.on(ls.UnitId(0, ls.UnitKind.WARP, int(w)))
        issued = sum(round(x.duration * hz) for x in evs if x.kind is ls.EventKind.COMPUTE)
        assert issued == int((wt.state[:, j] == Stall.ISSUED).sum()) == int((wt.issue_warp == w).sum())
        mem = sum(round(x.duration * hz) for x in evs if x.name == "memory")
        assert mem == int((wt.state[:, j] == Stall.MEMORY).sum()) > 0
    counts = wt.stall_counts()
    waited = sum(round(x.duration * hz) for x in rows.of_kind(ls.EventKind.WAIT))
    assert waited == sum(counts.get(k, 0) for k in ("not_selected", "memory", "dependency", "pipe_busy", "barrier"))
    one = wt.per_warp([int(wt.warps[1])])
    assert one.units_of(ls.UnitKind.WARP) == (ls.UnitId(0, ls.UnitKind.WARP, int(wt.warps[1])),)
    with pytest.raises(ls.ArgumentError, match=r"WarpTrace.per_warp: warps=999 is not a traced warp"):
        wt.per_warp([999])
    viz = pytest.importorskip("labsim.viz")
    fig = viz.timeline(rows, units=ls.UnitKind.WARP)
    assert {t.name for t in fig.data} == {"compute", "wait"}
