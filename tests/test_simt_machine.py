"""The SIMT machine on hand-written kernels: divergence, lane utilisation, latency hiding, coalescing.

Every expected number is derived in the comments from the kernel's code and the machine's documented
issue model (labsim/machines/simt/machine.py); values are checked against NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
from labsim.compiler.isa import Builder, Imm, Label, Param, Special, Pipe, immediate_post_dominators
from labsim.machines.simt import (SimtError, Stall, Timing, divergent_kernel, latency_kernel, latency_utilisation,
                                  run_ir, strided_kernel, transactions, warp_addresses)


def _issued_in(trace, lo, hi, warp=0):
    pcs = trace.issues_of(warp)
    return int(((pcs >= lo) & (pcs < hi)).sum())


@pytest.mark.parametrize("pattern", ["contiguous", "interleaved"])
@pytest.mark.parametrize("a, b", [(3, 5), (1, 1), (6, 2)])
def test_divergent_if_else_costs_a_plus_b(pattern, a, b):
    # 16 of 32 lanes take the if path. The warp disagrees, so it runs the if path (a adds) with the
    # taking lanes and the else path (b multiplies + the jump over the if path) with the others:
    # a + b slots for the two bodies, whatever the pattern.
    e = divergent_kernel(a, b, pattern=pattern, taken=16)
    run = run_ir(e.ir, e.inputs)
    np.testing.assert_array_equal(run.outputs["y"], e.expected["y"])
    (i0, i1), (e0, e1) = e.info["paths"]["if"], e.info["paths"]["else"]
    assert _issued_in(run.trace, i0, i1) == a
    assert _issued_in(run.trace, e0, e0 + b) == b
    # the whole kernel: 9 instructions before the branch (2 ld.param, mov, 2 mad, ld, setp, mov, bra),
    # a + b bodies, the bra.uni, st, exit
    assert len(run.trace.issues_of(0)) == 9 + a + b + 1 + 2


@pytest.mark.parametrize("taken", [0, 32])
def test_uniform_warp_runs_one_path(taken):
    # every lane agrees: only one body issues (a adds, or b multiplies + the jump)
    a, b = 3, 5
    e = divergent_kernel(a, b, taken=taken)
    run = run_ir(e.ir, e.inputs)
    np.testing.assert_array_equal(run.outputs["y"], e.expected["y"])
    n = len(run.trace.issues_of(0))
    assert n == 9 + (a if taken == 32 else b + 1) + 2


@pytest.mark.parametrize("pattern, taken", [("contiguous", 8), ("interleaved", 8), ("contiguous", 20)])
def test_lane_utilisation_is_active_lanes_over_32(pattern, taken):
    # per issued instruction: 32 active lanes outside the branch, `taken` lanes on the if path,
    # 32 - taken on the else path (b multiplies and the jump). Mean over the 9 + 2 + a + (b + 1) issues.
    a, b = 4, 6
    e = divergent_kernel(a, b, pattern=pattern, taken=taken)
    run = run_ir(e.ir, e.inputs)
    lanes = run.trace.active_lanes()
    expect = (11 * 32 + a * taken + (b + 1) * (32 - taken)) / (11 + a + b + 1) / 32
    assert run.trace.lane_utilisation() == pytest.approx(expect)
    (i0, i1) = e.info["paths"]["if"]
    on_if = np.isin(run.trace.issue_pc, np.arange(i0, i1))
    assert set(lanes[on_if]) == {taken}
    # the masks are the pattern's lanes
    m = int(run.trace.issue_mask[on_if][0])
    assert [(m >> l) & 1 == 1 for l in range(32)] == list(e.info["taken"])


def test_select_has_no_divergence():
    # as a select both bodies run on all 32 lanes: a + b + 1 (selp) slots, lane utilisation 1.0
    a, b = 3, 5
    e = divergent_kernel(a, b, pattern="interleaved", select=True)
    run = run_ir(e.ir, e.inputs)
    np.testing.assert_array_equal(run.outputs["y"], e.expected["y"])
    assert run.trace.lane_utilisation() == 1.0
    # 2 ld.param, mov, 2 mad, ld, setp, 2 mov, a, b, selp, st, exit
    assert len(run.trace.issues_of(0)) == 9 + a + b + 1 + 2
    assert not any(ins.op == "bra" for ins in e.ir.code)


def test_taken_path_runs_first_and_reconverges_at_the_join():
    e = divergent_kernel(2, 2, taken=16)
    ir = e.ir
    bra = next(i for i, ins in enumerate(ir.code) if ins.op == "bra" and ins.guard is not None)
    assert ir.reconverge == {bra: ir.labels["JOIN"]}
    run = run_ir(ir, e.inputs)
    pcs = list(run.trace.issues_of(0))
    k = pcs.index(bra)
    assert pcs[k + 1] == ir.labels["IF"]  # taken (if) path first, as GPGPU-Sim pushes it last
    assert pcs[-2] == ir.labels["JOIN"]  # one store after the join, by the whole warp
    assert bin(int(run.trace.issue_mask[-2])).count("1") == 32


def test_ipdom_of_a_loop_and_nested_branches():
    # pc0: @p bra L2 ; pc1: @q bra L3 ; pc2: nop ; L3 (pc3): nop ; L2 (pc4): exit
    bld = Builder()
    p, q = bld.reg("pred"), bld.reg("pred")
    bld.emit("bra", None, Label("L2"), guard=p, pipe=Pipe.CONTROL)
    bld.emit("bra", None, Label("L3"), guard=q, pipe=Pipe.CONTROL)
    bld.emit("nop")
    bld.label("L3")
    bld.emit("nop")
    bld.label("L2")
    bld.emit("exit", pipe=Pipe.CONTROL)
    assert immediate_post_dominators(bld.code, bld.labels) == {0: 4, 1: 3}


def test_data_dependent_loop_with_divergent_trip_counts():
    # y[t] = sum_{j < t % 5} 1.0: each lane loops t % 5 times; the warp loops 4 times with fewer lanes
    bld = Builder()
    ry = bld.op("ld", "u64", Param("y", 0), mod=("param",))
    tid = bld.op("mov", "u32", Special.TID)
    n = bld.op("rem", "u32", tid, Imm(5, "u32"))
    j = bld.op("mov", "u32", Imm(0, "u32"))
    acc = bld.op("mov", "f32", Imm(0.0))
    bld.label("TOP")
    p = bld.op("setp", "u32", j, n, mod=("ge",), dst_type="pred")
    bld.emit("bra", None, Label("END"), guard=p, pipe=Pipe.CONTROL)
    bld.emit("add", acc, acc, Imm(1.0), type="f32")
    bld.emit("add", j, j, Imm(1, "u32"), type="u32")
    bld.emit("bra", None, Label("TOP"), mod=("uni",), pipe=Pipe.CONTROL)
    bld.label("END")
    ay = bld.op("mad", "u32", tid, Imm(4, "u32"), ry, mod=("wide",), dst_type="u64")
    bld.emit("st", None, ay, acc, type="f32", mod=("global",), pipe=Pipe.MEM)
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("loop", [("y", "float32", 64)], 0, 1, 64)
    run = run_ir(ir, {})
    np.testing.assert_array_equal(run.outputs["y"], (np.arange(64) % 5).astype(np.float32))


@pytest.mark.parametrize("policy", ["lrr", "gto"])
@pytest.mark.parametrize("L, I", [(100, 4), (200, 8), (60, 2)])
def test_latency_hiding_matches_the_closed_form(policy, L, I):
    # derivation in latency_kernel's docstring: lrr W(I+2)/(L+W), gto W(I+2)/(L+1), capped at 1;
    # measured on one scheduler, away from the first and last two rounds.
    for W in (1, 3, 8, 12, 16, 24):
        closed = latency_utilisation(W, L, I, policy)
        if policy == "gto" and W * (I + 2) > 0.9 * (L + 1):
            continue  # greedy-then-oldest at saturation starves young warps: no steady state to compare
        e = latency_kernel(I, 30, warps=W)
        run = run_ir(e.ir, e.inputs, schedulers=1, timing=Timing(memory=L), policy=policy)
        np.testing.assert_array_equal(run.outputs["y"], e.expected["y"])
        c = run.trace.issue_cycle
        lo, hi = 2 * (L + W) + 20, run.trace.cycles - 2 * (L + W) - 20
        measured = ((c >= lo) & (c < hi)).sum() / (hi - lo)
        assert measured == pytest.approx(closed, abs=0.02), (policy, L, I, W)


def test_more_warps_hide_more_latency():
    u = [run_ir(*(lambda e: (e.ir, e.inputs))(latency_kernel(2, 10, warps=w)), schedulers=1).trace.issue_utilisation()
         for w in (1, 4, 16)]
    assert u[0] < u[1] < u[2]


@pytest.mark.parametrize("stride, sectors, lines", [(1, 4, 1), (2, 8, 2), (4, 16, 4), (32, 32, 32)])
def test_coalescing_measured_on_the_machines_loads(stride, sectors, lines):
    # 32 lanes x 4 bytes at a stride of s elements span 128*s bytes: sectors = min(32, 4s), lines = min(32, s)
    e = strided_kernel(stride)
    run = run_ir(e.ir, e.inputs)
    np.testing.assert_array_equal(run.outputs["y"], e.expected["y"])
    t = run.transactions(e.info["load_pc"])
    assert (t["requests"], t["sectors"], t["lines"]) == (1, sectors, lines)
    store = run.transactions(store=True)  # the store y[i] is always contiguous
    assert (store["sectors"], store["lines"]) == (4, 1)
    pure = transactions(warp_addresses(stride))
    assert (pure.sectors, pure.lines) == (sectors, lines)


def test_transposed_read_touches_a_line_per_lane():
    # lane i reads x[i, 0] of a 32x32 float32 matrix: addresses 128 bytes apart -> 32 sectors, 32 lines
    e = strided_kernel(transposed=True, rows=32, cols=32)
    run = run_ir(e.ir, e.inputs)
    np.testing.assert_array_equal(run.outputs["y"], e.expected["y"])
    t = run.transactions(e.info["load_pc"])
    assert (t["sectors"], t["lines"]) == (32, 32)
    assert transactions(warp_addresses(transposed_rows=32)).efficiency == pytest.approx(4 / 32)


def test_offset_and_element_size():
    # float16, stride 1, offset 16 elements = 32 bytes: 64 bytes from byte 32 -> sectors 1,2 (2 of them), 1 line
    e = strided_kernel(1, offset=16, dtype="float16")
    run = run_ir(e.ir, e.inputs)
    t = run.transactions(e.info["load_pc"])
    assert (t["sectors"], t["lines"]) == (2, 1)
    # an offset of 1 float32 breaks the alignment: bytes 4..131 -> 5 sectors, 2 lines
    assert (transactions(warp_addresses(1, offset=1)).sectors, transactions(warp_addresses(1, offset=1)).lines) == (5, 2)


def test_trace_format():
    e = divergent_kernel(2, 3, taken=16, warps=8)
    run = run_ir(e.ir, e.inputs, chip="H100 SXM")
    tr = run.trace
    assert tr.state.shape == (tr.cycles, 8)
    assert (tr.warp_sm == 0).all() and list(tr.warp_scheduler) == [0, 1, 2, 3, 0, 1, 2, 3]
    # one ISSUED state per issue row
    assert (tr.state == Stall.ISSUED).sum() == len(tr.issue_pc) == run.warp_instructions
    # a scheduler issues at most one instruction per cycle
    sched = tr.warp_scheduler[tr.issue_warp]
    pairs = set(zip(tr.issue_cycle.tolist(), sched.tolist()))
    assert len(pairs) == len(tr.issue_cycle)
    assert tr.stall_counts()["memory"] > 0  # waiting for the load of x
    assert run.thread_instructions == int(tr.active_lanes().sum())


def test_sfu_is_slower_than_fma_lanes():
    # 8 warps on one scheduler, each 1 independent instruction: ex2 occupies the SFU 32 / (16/4) = 8
    # cycles per warp-instruction, an add the FMA lanes 32 / (128/4) = 1 cycle on H100.
    def kern(op):
        bld = Builder()
        x = bld.op("mov", "f32", Imm(1.0))
        for _ in range(4):
            bld.op(op, "f32", x, *(() if op == "ex2" else (Imm(1.0),)), mod=("approx",) if op == "ex2" else (),
                   pipe=Pipe.SFU if op == "ex2" else Pipe.ALU)
        bld.emit("exit", pipe=Pipe.CONTROL)
        return bld.build(op, [], 0, 1, 256)
    sfu = run_ir(kern("ex2"), {}, schedulers=1).trace
    fma = run_ir(kern("add"), {}, schedulers=1).trace
    assert sfu.cycles >= 8 * 4 * 8 and fma.cycles < 8 * 4 * 2 + 20


def test_blocks_run_in_waves():
    # 10 blocks of 1,024 threads, 1 block per SM, 4 SMs: blocks 0-3 start together (wave 1), blocks
    # 4-7 when those finish (wave 2), blocks 8-9 last. (The kernel indexes by %tid.x only, so every
    # block reads the same x: enough for timing.)
    e = divergent_kernel(1, 1, warps=32)
    e.ir.grid = 10
    run = run_ir(e.ir, e.inputs, sms=4, blocks_per_sm=1)
    tr = run.trace
    starts = [int(tr.issue_cycle[tr.issue_warp == b * 32].min()) for b in range(10)]
    ends = [int(tr.issue_cycle[tr.warp_block == b].max()) if False else
            int(tr.issue_cycle[np.isin(tr.issue_warp, np.arange(b * 32, b * 32 + 32))].max()) for b in range(10)]
    assert starts[0] == starts[1] == starts[2] == starts[3] == 0
    assert starts[4] > ends[0] and starts[8] > ends[4]
    assert tr.stall_counts()["not_launched"] > 0


def test_errors_are_clear():
    bld = Builder()
    rx = bld.op("ld", "u64", Param("x", 0), mod=("param",))
    tid = bld.op("mov", "u32", Special.TID)
    ax = bld.op("mad", "u32", tid, Imm(4, "u32"), rx, mod=("wide",), dst_type="u64")
    bld.op("ld", "f32", ax, mod=("global",), pipe=Pipe.MEM)
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("oob", [("x", "float32", 16)], 1, 1, 32)
    with pytest.raises(SimtError, match="outside buffer x"):
        run_ir(ir, {"x": np.zeros(16, np.float32)})
    with pytest.raises(ValueError, match="policy"):
        run_ir(ir, {"x": np.zeros(16, np.float32)}, policy="fifo")
    with pytest.raises(SimtError, match="not a GPU"):
        run_ir(ir, {"x": np.zeros(16, np.float32)}, chip="TPU v5e")
    with pytest.raises(ValueError, match="needs 16 elements"):
        run_ir(ir, {"x": np.zeros(15, np.float32)})


def test_compiled_transpose_reads_uncoalesced_and_writes_coalesced():
    # y = x.T for a 64x64 float32 x, one thread per element of y in row-major order: a warp's 32 threads
    # write y[r, c..c+31] (128 contiguous bytes: 4 sectors, 1 line) and read x[c..c+31, r], a column:
    # addresses 64 x 4 = 256 bytes apart, so 32 sectors in 32 lines per request. 4,096 elements = 128 requests.
    import labsim.numpy as lnp
    prog = ls.compile(ls.trace(lambda x: lnp.transpose(x) * 2.0, ls.ShapeDtype((64, 64))))
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    run = ls.simt.run(prog, x)
    np.testing.assert_array_equal(run.outputs, x.T * 2.0)
    k = run.kernels[0]
    loads, stores = k.transactions(store=False), k.transactions(store=True)
    assert (loads["requests"], loads["sectors"], loads["lines"]) == (128, 128 * 32, 128 * 32)
    assert (stores["requests"], stores["sectors"], stores["lines"]) == (128, 128 * 4, 128)
    # the same kernel without the transpose reads as it writes: 4 sectors per request
    plain = ls.simt.run(ls.compile(ls.trace(lambda x: x * 2.0, ls.ShapeDtype((64, 64)))), x).kernels[0]
    assert plain.transactions(store=False)["sectors"] == 128 * 4


def test_issue_width_two_issues_to_two_units_per_cycle():
    # 8 warps on one scheduler, each: mov, then 64 independent instructions alternating an add (FMA
    # lanes) and a shuffle (the shared-memory/shuffle unit), then exit. One slot per cycle: the
    # scheduler issues 8 x 66 instructions one per cycle, at least 528 cycles. Two slots: in a cycle
    # one warp's add and another warp's shuffle can both go (each unit is busy one cycle per warp-
    # instruction on H100), so the 512 independent instructions take about half as many cycles.
    # Two adds never issue together: the FMA pipe is busy for the cycle.
    bld = Builder()
    one = bld.op("mov", "f32", Imm(1.0))
    for i in range(64):
        if i % 2:
            bld.op("shfl", "b32", one, Imm(1, "u32"), mod=("sync", "bfly"), pipe=Pipe.SHARED, dst_type="f32")
        else:
            bld.op("add", "f32", one, Imm(1.0))
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("wide", [], 0, 1, 256)
    one_slot = run_ir(ir, {}, schedulers=1).trace
    two_slots = run_ir(ir, {}, schedulers=1, issue_width=2).trace
    assert one_slot.cycles >= 8 * 66
    assert two_slots.cycles <= 0.6 * one_slot.cycles
    per_cycle = np.bincount(two_slots.issue_cycle)
    assert per_cycle.max() == 2
    for c in np.flatnonzero(per_cycle == 2):
        pipes = {two_slots.pipes[pc] for pc in two_slots.issue_pc[two_slots.issue_cycle == c]}
        assert len(pipes) == 2
    with pytest.raises(ValueError, match="issue_width"):
        run_ir(ir, {}, issue_width=0)
