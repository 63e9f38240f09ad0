"""``ls.simt.run(...).trace``: the SIMT machine's run as an ``ls.Trace`` that ``viz.timeline`` draws.

The kernels sit one after another on stream 0 for exactly their cycles at the preset's SM clock; each SM
event lies inside its kernel and counts the warp-instructions that SM issued; a values-only run refuses
with a message that says how to record timing."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp

S = ls.ShapeDtype


def _run(**kw):
    prog = ls.compile(ls.trace(lambda x, y: lnp.sum(lnp.maximum(lnp.exp(x) * y, 0.0), axis=1) + 1.0,
                               S((32, 200)), S((32, 200))))
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((32, 200)).astype(np.float32) for _ in range(2)]
    return prog, args, ls.simt.run(prog, *args, chip="H100 SXM", **kw)


def test_trace_is_the_kernels_in_cycles_at_the_sm_clock():
    prog, args, r = _run(trace=True)
    t = r.trace
    assert isinstance(t, ls.Trace)
    hz = ls.hardware.PRESETS["H100 SXM"].sm_clock()
    assert hz == pytest.approx(66.9e12 / (132 * 128 * 2), rel=1e-3)
    kernels = [e for e in t.events if e.unit.kind is ls.UnitKind.STREAM]
    assert [e.name for e in kernels] == [k.ir.name for k in r.kernels]
    start = 0.0
    for e, k in zip(kernels, r.kernels):
        assert e.start == pytest.approx(start) and e.end - e.start == pytest.approx(k.cycles / hz)
        start = e.end
        sms = [s for s in t.events if s.unit.kind is ls.UnitKind.SM and s.name == e.name]
        assert sms and all(e.start <= s.start < s.end <= e.end + 1e-15 for s in sms)
        issued = sum(int(s.detail.split()[0].replace(",", "")) for s in sms)
        assert issued == len(k.trace.issue_cycle)
    assert np.allclose(r.outputs, ls.evaluate(prog.graph, *args), rtol=1e-5, atol=1e-5)


def test_timeline_draws_the_simt_trace():
    viz = pytest.importorskip("labsim.viz")
    _, _, r = _run(trace="auto")
    fig = viz.timeline(r.trace)
    assert len(fig.data) >= 1


def test_values_only_run_says_how_to_get_a_trace():
    _, _, r = _run()
    with pytest.raises(ls.simt.SimtError, match="trace='auto' or trace=True"):
        r.trace
