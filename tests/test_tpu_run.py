"""ls.tpu.run: a compiled program on a TensorCore with real values, checked against ls.evaluate.

Every node the machine computed is checked against the op table's rule on the machine's own inputs:
elementwise, reduction and movement nodes bit for bit, contractions within ``ls.tpu.dot_tolerance``
(bfloat16 operands, float32 sums). ``.time`` is ``ls.tpu.estimate``'s; ``viz.timeline`` draws ``.trace``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import labsim as ls
import labsim.numpy as lnp
from labsim import viz
from labsim.core import ops
from labsim.core.ir import Var
from labsim.core.ops import OpKind
from labsim.core.trace import bind
from labsim.machines.events import EventKind, UnitKind

from fuzz_programs import fuzz_programs

CHIP = "TPU v5e"


def _specs(*arrays, dtype=None):
    return [ls.ShapeDtype(a.shape, dtype or str(a.dtype)) for a in arrays]


def _prog(f, *arrays, dtype=None):
    return ls.compile(ls.trace(f, *_specs(*arrays, dtype=dtype)))


def check_run(prog, args, chip=CHIP):
    """Node by node against the op table; outputs equal evaluate where no dot is upstream; time; trace."""
    r = ls.tpu.run(prog, *args, chip=chip)
    g = prog.graph
    has_dot = False
    for n in g.nodes:
        vals = [r.value(a) if isinstance(a, Var) else a.value for a in n.operands]
        got = r.value(n.out)
        if ops.get(n.op).kind is OpKind.CONTRACTION:
            has_dot = True
            ref = np.asarray(bind(n.op, *vals, **n.params))
            tol = ls.tpu.dot_tolerance(vals[0], vals[1], n.params, n.out.aval.dtype)
            diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
            ok = (diff <= tol) | (np.isnan(ref) & np.isnan(got)) | (ref == got)
            assert ok.all(), (n, diff.max(), np.max(tol))
        else:
            ref = np.asarray(bind(n.op, *vals, **n.params))
            np.testing.assert_array_equal(got, ref, err_msg=str(n))
    if not has_dot:
        ref = ls.evaluate(g, *args)
        for got, want in zip(r.outputs if isinstance(r.outputs, tuple) else (r.outputs,),
                             ref if isinstance(ref, tuple) else (ref,)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert r.time == ls.tpu.estimate(prog, chip).time
    assert len(r.kernels) == len(prog.kernels)
    return r


@settings(max_examples=int(__import__("os").environ.get("LABSIM_TPU_FUZZ", "60")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_programs())
def test_run_equals_evaluate_on_fuzzed_programs(p):
    check_run(ls.compile(ls.trace(p.f, *p.specs)), p.inputs)


@settings(max_examples=int(__import__("os").environ.get("LABSIM_TPU_FUZZ", "60")) // 2, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_programs(kinds=("contract", "binary", "unary", "reduce"), min_steps=2))
def test_run_equals_evaluate_on_fuzzed_contractions(p):
    check_run(ls.compile(ls.trace(p.f, *p.specs)), p.inputs)


@pytest.mark.parametrize("precision,passes", [("default", 1), ("high", 3), ("highest", 6)])
def test_float32_dot_takes_bf16_passes_and_stays_within_the_derived_bound(precision, passes):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((40, 300)).astype(np.float32), rng.standard_normal((300, 24)).astype(np.float32)
    prog = _prog(lambda x, y: lnp.dot(x, y, precision=precision), a, b)
    r = check_run(prog, (a, b))
    assert {blk.passes for blk in r.blocks} == {passes}
    exact = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(r.outputs - exact) / (np.abs(a).astype(np.float64) @ np.abs(b))
    # one pass rounds the operands to bfloat16 (error ~2^-8), six passes are float32-accurate
    bound = {1: 2 * 2**-8, 3: 1e-4, 6: 1e-5}[passes]
    assert err.max() < bound
    if passes == 1:
        assert np.abs(r.outputs - exact).max() > 1e-3  # the rounding to bf16 is really there


def test_integer_dot_is_exact_and_wraps_as_evaluate():
    rng = np.random.default_rng(2)
    a, b = rng.integers(-100, 100, (9, 70)).astype(np.int8), rng.integers(-100, 100, (70, 5)).astype(np.int8)
    prog = _prog(lambda x, y: x @ y, a, b)
    r = ls.tpu.run(prog, a, b, chip=CHIP)
    np.testing.assert_array_equal(r.outputs, ls.evaluate(prog.graph, a, b))


def test_small_blocks_run_cycle_by_cycle_large_ones_by_the_closed_form():
    rng = np.random.default_rng(3)
    small = [rng.standard_normal(s).astype(np.float32) for s in ((8, 128), (128, 128))]
    big = [rng.standard_normal(s).astype(np.float32) for s in ((512, 1024), (1024, 1024))]
    for (a, b), cyc in ((small, True), (big, False)):
        r = ls.tpu.run(_prog(lambda x, y: x @ y, a, b, dtype="bfloat16"), a, b, chip=CHIP)
        for blk in r.blocks:
            assert blk.cycle_by_cycle is cyc
            R, C = ls.tpu.TensorCore.of(CHIP).mxu
            rows, cols, depth = blk.shape
            assert blk.stats == ls.systolic.stats(rows, cols, depth, rows=R, cols=C, dataflow="ws")


def test_mlp_trace_has_dma_mxu_vpu_and_time_matches_estimate():
    rng = np.random.default_rng(4)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((128, 512), (512, 512), (512, 512)))
    prog = _prog(lambda x, w1, w2: lnp.maximum(x @ w1, 0) @ w2, x, w1, w2, dtype="bfloat16")
    for chip in ("TPU v5e", "TPU v6e"):
        r = ls.tpu.run(prog, x, w1, w2, chip=chip)
        assert r.time == ls.tpu.estimate(prog, chip).time
        kinds = {e.unit.kind for e in r.trace.events}
        assert kinds == {UnitKind.DMA, UnitKind.MXU, UnitKind.VPU}
        assert {e.kind for e in r.trace.of_kind(EventKind.COPY)} == {EventKind.COPY}
        assert all(e.end <= r.time * (1 + 1e-12) for e in r.trace.events)
        mxu_flops = sum(e.flops for e in r.trace.events if e.unit.kind is UnitKind.MXU)
        assert mxu_flops == 2 * 2 * 128 * 512 * 512
        moved = sum(e.nbytes for e in r.trace.of_kind(EventKind.COPY))
        assert moved == sum(k.cost.bytes for k in r.kernels)
        fig = viz.timeline(r.trace)
        assert {t.name for t in fig.data} == {"copy", "compute"}


@pytest.mark.parametrize("chip", ["TPU v5e", "TPU v6e"])
def test_elementwise_program_is_exact_on_the_vpu(chip):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 33)).astype(np.float32)
    prog = _prog(lambda x: lnp.exp(x) * lnp.tanh(x) + 1, a)
    r = check_run(prog, (a,), chip)
    assert {e.unit.kind for e in r.trace.events} <= {UnitKind.VPU, UnitKind.DMA}


def test_clear_errors():
    a = np.ones((4, 8), np.float32)
    b = np.ones((8, 2), np.float32)
    prog = _prog(lambda x, y: x @ y, a, b)
    with pytest.raises(TypeError, match="takes 2 argument"):
        ls.tpu.run(prog, a, chip=CHIP)
    with pytest.raises(ValueError, match="argument 1 .* has shape"):
        ls.tpu.run(prog, a, a, chip=CHIP)
    iprog = _prog(lambda x, y: x @ y, a.astype(np.int32), b.astype(np.int32))
    with pytest.raises(TypeError, match="dtype float32"):
        ls.tpu.run(iprog, a, b, chip=CHIP)
    with pytest.raises(Exception, match="unknown chip"):
        ls.tpu.run(prog, a, b, chip="TPU v99")
    with pytest.raises(ls.tpu.TPUError, match="not a TPU"):
        ls.tpu.run(prog, a, b, chip="H100 SXM")
    with pytest.raises(TypeError, match="compiled Program"):
        ls.tpu.run(prog.graph, a, b, chip=CHIP)
    with pytest.raises(ValueError, match="array must be"):
        ls.tpu.run(prog, a, b, chip=CHIP, array=(0, 3))
    with pytest.raises(ValueError, match="dataflow"):
        ls.tpu.run(prog, a, b, chip=CHIP, dataflow="diagonal")


def test_record_keeps_each_block_cycle_by_cycle_on_a_small_array():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(20, dtype=np.float32).reshape(4, 5)
    prog = _prog(lambda x, y: x @ y, a, b)
    for df in ("ws", "os", "is"):
        r = ls.tpu.run(prog, a, b, chip=CHIP, array=(3, 3), dataflow=df, record=True)
        (blk,) = r.blocks
        assert blk.result is not None and blk.result.trace is not None
        assert blk.result.cycles == ls.systolic.cycles(3, 5, 4, rows=3, cols=3, dataflow=df)
        np.testing.assert_array_equal(blk.result.output, a @ b)
        np.testing.assert_array_equal(r.outputs, a @ b)
        assert r.time == ls.tpu.estimate(prog, CHIP).time  # the schedule stays the chip's


def test_systolic_trace_is_a_trace_of_pe_rows_that_timeline_draws():
    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(20.0).reshape(4, 5)
    res = ls.systolic.simulate(a, b, rows=3, cols=3, dataflow="ws", trace=True)
    tr = res.trace
    assert isinstance(tr, ls.Trace)
    assert tr.units == tuple(ls.UnitId(0, UnitKind.PE_ROW, i) for i in range(3))
    compute = tr.of_kind(EventKind.COMPUTE)
    assert sum(e.flops for e in compute) == 2 * 3 * 4 * 5
    # a row is busy exactly in the cycles in which one of its PEs did a multiply-add
    for i, u in enumerate(tr.units):
        assert tr.busy_time(u) - sum(e.duration for e in tr.on(u) if e.kind is EventKind.COPY) == \
            tr.mac[:, i, :].any(axis=1).sum()
    assert tr.end == res.cycles or tr.end <= res.cycles
    assert len(viz.timeline(tr).data) == 2


def test_run_dot_agrees_with_run():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((100, 300)).astype(np.float32), rng.standard_normal((300, 70)).astype(np.float32)
    out, sched = ls.tpu.run_dot(a, b, CHIP)
    prog = _prog(lambda x, y: x @ y, a, b)
    r = ls.tpu.run(prog, a, b, chip=CHIP)
    assert sched.time == r.kernels[0].cost.schedule.time
    assert math.isclose(r.kernels[0].end - r.kernels[0].start, sched.time)
