"""Nothing silently wrong in the machines (issue 21): a clear labsim error for every misuse of ``ls.simt``,
``ls.systolic``, ``ls.tpu``, ``ls.tiling`` (and split-K, Little's law) and ``ls.host``; no hang, no raw
Python or NumPy error; memory checked against the device; and closed forms that stay closed.

Each row of ``CASES`` is a call, the labsim error type it must raise, and words its message must hold
(the function, the argument and what is accepted). A meta-test forbids raw Python error types there.
The second half checks the closed forms against the step-by-step code they replace, on grids of small
shapes (``walk`` is the old loop of ``schedule_dot``; ``_old_wave_traffic`` and ``_old_stats`` are copies
of the loops that were replaced), and that the large shapes are answered fast.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import random
import signal
import time

import numpy as np
import pytest

import labsim as ls
from labsim.machines import hostloop, splitk, tiling, tpu_schedule
from labsim.machines.inflight import littles_law
from labsim.support.errors import ArgumentError, ArgumentTypeError, LabsimError, OutOfMemoryError

S = ls.ShapeDtype
NAN, INF = float("nan"), float("inf")
A43, B35 = np.ones((4, 3)), np.ones((3, 5))


def _prog():
    return ls.compile(ls.trace(lambda x: x * 2.0 + 1.0, S((64,))))


X64 = np.arange(64, dtype=np.float32)


def _captured_elsewhere():
    m = ls.host.Machine()
    with m.capture() as g:
        m.launch("k", duration=1e-6)
    return ls.host.Machine().replay(g)


def _launch(**kw):
    m = ls.host.Machine()
    a = m.put(np.ones(8, np.float32))
    return m.launch("k", a, duration=1e-6, **kw)


TPUError, TilingError = ls.tpu.TPUError, tiling.TilingError
SimtError = ls.simt.SimtError

# (id, call, error type, words the message must hold)
CASES = [
    # --- ls.simt: the entry point checks run_ir's keywords (blocks_per_sm=0 hung; sms=-4 gave 0 cycles)
    ("simt-blocks0", lambda: ls.simt.run(_prog(), X64, blocks_per_sm=0), ArgumentError,
     ["ls.simt.run", "blocks_per_sm", "at least 1", "got 0"]),
    ("simt-sms-neg", lambda: ls.simt.run(_prog(), X64, sms=-4), ArgumentError, ["sms", "at least 1", "-4"]),
    ("simt-sms-float", lambda: ls.simt.run(_prog(), X64, sms=2.5), ArgumentTypeError, ["sms", "integer", "2.5"]),
    ("simt-huge", lambda: ls.simt.run(_prog(), X64, blocks_per_sm=10**12), ArgumentError, ["blocks_per_sm", "at most"]),
    ("simt-trace", lambda: ls.simt.run(_prog(), X64, trace="yes"), ArgumentError, ["trace", "'auto'", "'yes'"]),
    ("simt-kw", lambda: ls.simt.run(_prog(), X64, bogus=1), ArgumentTypeError, ["unknown keyword", "'bogus'", "policy"]),
    ("simt-tpu", lambda: ls.simt.run(_prog(), X64, chip="TPU v5e"), SimtError, ["ls.simt.run", "not a GPU", "ls.tpu.run"]),
    ("simt-select", lambda: ls.simt.run(_prog(), X64, select="maybe"), ArgumentError, ["select", "'branch'"]),
    # --- ls.systolic
    ("sys-rows0", lambda: ls.systolic.cycles(8, 8, 8, rows=0, cols=4), ArgumentError, ["ls.systolic", "rows=0", ">= 1"]),
    ("sys-str", lambda: ls.systolic.cycles("8", 8, 8, rows=4, cols=4), ArgumentTypeError, ["M", "integer", "'8'"]),
    ("sys-nan", lambda: ls.systolic.stats(8, NAN, 8, rows=4, cols=4), ArgumentTypeError, ["N", "integer", "nan"]),
    ("sys-dataflow", lambda: ls.systolic.simulate(A43, B35, rows=2, cols=2, dataflow=3), ArgumentError,
     ["dataflow", "'ws'"]),
    ("sys-strings", lambda: ls.systolic.simulate([["a"]], [["b"]], rows=1, cols=1), ArgumentTypeError,
     ["ls.systolic.simulate", "real numbers", "<U1"]),
    ("sys-ragged", lambda: ls.systolic.simulate([[1, 2], [3]], B35, rows=1, cols=1), ArgumentError, ["A", "2-D matrix"]),
    ("sys-huge-array", lambda: ls.systolic.simulate(A43, B35, rows=2, cols=10**12), ArgumentError,
     ["processing elements", "ls.systolic.stats"]),
    ("sys-trace", lambda: ls.systolic.simulate(A43, B35, rows=2, cols=2, trace="yes"), ArgumentError, ["trace", "'yes'"]),
    # --- ls.tpu
    ("tpu-m0", lambda: ls.tpu.schedule_dot(0, 128, 128), TPUError, ["schedule_dot", "m must be a positive integer"]),
    ("tpu-float", lambda: ls.tpu.schedule_dot(128, 2.5, 128), TPUError, ["n", "positive integer", "2.5"]),
    ("tpu-blocks", lambda: ls.tpu.schedule_dot(128, 128, 128, blocks=(128, 128)), ArgumentError, ["blocks", "(bm, bn, bk)"]),
    ("tpu-epilogue", lambda: ls.tpu.schedule_dot(128, 128, 128, epilogue_flops=-1), ArgumentError,
     ["epilogue_flops", "at least 0"]),
    ("tpu-hbm", lambda: ls.tpu.schedule_dot(10**6, 10**6, 10**6), OutOfMemoryError, ["schedule_dot", "HBM", "too many"]),
    ("tpu-gpu", lambda: ls.tpu.schedule_dot(128, 128, 128, "H100 SXM"), TPUError, ["not a TPU"]),
    ("tpu-run-dot-str", lambda: ls.tpu.run_dot(np.array([["a"]]), np.array([["b"]])), ArgumentTypeError,
     ["run_dot", "real numbers"]),
    ("tpu-slice", lambda: ls.tpu.tpu_slice("TPU v5e", (0, 4)), ArgumentError, ["tpu_slice", "integers >= 1"]),
    ("tpu-axis", lambda: ls.tpu.tpu_slice("TPU v5e", (4, 4)).axis_time("all_reduce", 1e6, axis=5), ArgumentError,
     ["axis_time", "axis", "0 to 1"]),
    ("tpu-run-prog", lambda: ls.tpu.run("prog"), ArgumentTypeError, ["ls.tpu.run", "Program", "str"]),
    ("tpu-run-array", lambda: ls.tpu.run(_prog(), X64, array=(0, 4)), ArgumentError, ["array", "positive integers"]),
    ("tpu-choose", lambda: ls.tpu.choose_blocks(0, 128, 128, "TPU v5e"), TPUError, ["choose_blocks", "m", "positive"]),
    ("tpu-blocks-0", lambda: ls.tpu.Blocks(0, 128, 128), TPUError, ["Blocks", "bm", "positive integer"]),
    ("tpu-table", lambda: ls.tpu.schedule_dot(256, 256, 256).table(-1), ArgumentError, ["table", "most", "at least 0"]),
    ("tpu-steps-index", lambda: ls.tpu.schedule_dot(256, 256, 256).steps["a"], ArgumentTypeError, ["steps", "integer"]),
    ("tpu-steps-range", lambda: ls.tpu.schedule_dot(256, 256, 256).steps[10**9], ArgumentError, ["out of range"]),
    ("tpu-run-record", lambda: ls.tpu.run(_prog(), X64, record="yes"), ArgumentTypeError, ["ls.tpu.run", "record",
                                                                                       "True or False"]),
    # --- ls.tiling, split-K, Little's law
    ("tiling-space", lambda: tiling.space(bms="abc"), TilingError, ["space", "bms", "positive integers"]),
    ("tiling-grid", lambda: tiling.tune(1024, 1024, 1024, tiles=[(128, 128, 32)]).grid(rows="xyz"), TilingError,
     ["grid", "rows", "'bm'"]),
    ("tiling-regs", lambda: tiling.registers_per_thread(tiling.Tile(128, 128, 32), mma="x"), TilingError,
     ["registers_per_thread", "mma"]),
    ("tiling-m", lambda: tiling.plan(-5, 1024, 1024), TilingError, ["plan", "m must be a positive integer", "-5"]),
    ("tiling-float", lambda: tiling.plan(1024, 1024.0, 1024), TilingError, ["n", "positive integer"]),
    ("tiling-tile", lambda: tiling.plan(1024, 1024, 1024, (128, 128)), TilingError, ["tile", "(bm, bn, bk"]),
    ("tiling-tile-float", lambda: tiling.plan(1024, 1024, 1024, (128.0, 128, 32)), TilingError, ["tile bm"]),
    ("tiling-bw-nan", lambda: tiling.plan(1024, 1024, 1024, bandwidth=NAN), TilingError, ["bandwidth", "finite"]),
    ("tiling-bw-str", lambda: tiling.plan(1024, 1024, 1024, bandwidth="fast"), TilingError, ["bandwidth", "number"]),
    ("tiling-dtype", lambda: tiling.plan(1024, 1024, 1024, dtype=["x"]), TilingError, ["dtype", "one of"]),
    ("tiling-tpu", lambda: tiling.plan(1024, 1024, 1024, chip="TPU v5e"), TilingError, ["TPU", "schedule_dot"]),
    ("splitk-0", lambda: splitk.split_k(1024, 1024, 1024, 0), TilingError, ["split_k", "splits", "positive integer"]),
    ("splitk-str", lambda: splitk.split_k(1024, 1024, 1024, "8"), TilingError, ["splits", "'8'"]),
    ("fixups-0", lambda: splitk.stream_k_fixups(0, 4, 4), TilingError, ["stream_k_fixups", "tiles"]),
    ("little-nan", lambda: littles_law(latency_cycles=NAN), ArgumentError, ["littles_law", "latency_cycles"]),
    ("little-inf", lambda: littles_law(bandwidth=INF), ArgumentError, ["bandwidth", "finite"]),
    ("little-bw", lambda: littles_law().achieved_bandwidth("x"), ArgumentTypeError, ["in_flight_per_sm", "number"]),
    # --- ls.host
    ("host-1tb", lambda: ls.host.Machine().put(S((10**12,), "uint8")), OutOfMemoryError,
     ["Machine.put", "u8[1000000000000]", "device memory", "GiB too many"]),
    ("host-resident-1tb", lambda: ls.host.Machine().resident(S((10**12,), "float32")), OutOfMemoryError,
     ["Machine.resident", "too many"]),
    ("host-launch-1tb", lambda: ls.host.Machine().launch("k", duration=1e-6, out=S((10**12,), "float32")),
     OutOfMemoryError, ["Machine.launch", "output of k"]),
    ("host-put-str", lambda: ls.host.Machine().put(np.array(["a"])), ArgumentTypeError, ["Machine.put", "numbers"]),
    ("host-fn-shape", lambda: _launch(fn=lambda v: v * 2, out=S((), "float32")), ArgumentError,
     ["Machine.launch", "fn returned shape (8,)", "f32[]"]),
    ("host-out", lambda: _launch(out=(8,)), ArgumentTypeError, ["out", "ShapeDtype"]),
    ("host-fn", lambda: _launch(fn=3), ArgumentTypeError, ["fn", "function"]),
    ("host-replay", _captured_elsewhere, ArgumentError, ["replay", "another Machine", "capture it again"]),
    ("host-pinned", lambda: ls.host.Machine().put(np.ones(3), pinned="no"), ArgumentTypeError,
     ["Machine.put", "pinned", "True or False"]),
    ("host-eager", lambda: _launch(eager="no"), ArgumentTypeError, ["Machine.launch", "eager"]),
    ("host-elapsed", lambda: ls.host.Machine().record_event().elapsed(3), ArgumentTypeError, ["elapsed", "StreamEvent"]),
    ("host-mode", lambda: ls.host.Machine().call(_prog(), mode="fast"), ArgumentError, ["Machine.call", "mode", "'jit'"]),
    ("host-queue", lambda: ls.host.Machine(queue_depth=0), ArgumentError, ["queue_depth"]),
    ("host-latency", lambda: ls.host.Machine(launch_latency=NAN), ArgumentError, ["launch_latency", "finite"]),
    ("loop-n", lambda: ls.host.kernel_loop(0, 1e-6), ArgumentError, ["kernel_loop", "n", "at least 1"]),
    ("loop-n-float", lambda: ls.host.kernel_loop(2.5, 1e-6), ArgumentTypeError, ["kernel_loop", "integer", "2.5"]),
    ("loop-n-huge", lambda: ls.host.kernel_loop(10**16, 1e-6), ArgumentError, ["kernel_loop", "at most"]),
    ("loop-d", lambda: ls.host.kernel_loop(10, NAN), ArgumentError, ["duration", "finite"]),
    ("loop-how", lambda: ls.host.kernel_loop(10, 1e-6, how="later"), ArgumentError, ["kernel_loop", "how", "'later'"]),
    ("loop-kw", lambda: ls.host.kernel_loop(10, 1e-6, bogus=1), ArgumentError, ["unknown keyword", "'bogus'"]),
]


def _alarm(*_):
    raise TimeoutError("the call did not return within 30 s")


@pytest.mark.parametrize("call, error, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_misuse_is_refused_with_a_labsim_error_naming_the_problem(call, error, words):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(30)  # a hang is a failure, not a stuck test run
    try:
        with pytest.raises(error) as info:
            call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert isinstance(info.value, LabsimError)
    msg = str(info.value)
    missing = [w for w in words if w not in msg]
    assert not missing, f"{missing} not in: {msg}"


def test_no_case_expects_a_raw_python_error():
    """The table may only expect labsim's own error types."""
    assert all(issubclass(err, LabsimError) for _, _, err, _ in CASES)
    assert len({c[0] for c in CASES}) == len(CASES)


# --- values that agree with their own metadata --------------------------------------------------------

def test_launch_fn_output_has_its_values_shape_and_its_bytes_are_copied_back():
    m = ls.host.Machine()
    a = m.put(np.arange(8, dtype=np.float32))
    r = m.launch("double", a, duration=1e-6, fn=lambda v: v * 2)
    assert r.shape == (8,) and r.dtype == "float32" and r.nbytes == 32
    np.testing.assert_array_equal(np.asarray(r), np.arange(8) * 2)
    back = [e for e in m.trace.events if e.name == r.name and e.nbytes is not None and e.kind.name == "COPY"]
    assert back and back[-1].nbytes == 32


def test_device_memory_is_freed_when_an_array_is_collected():
    m = ls.host.Machine()
    cap = m.chip.hbm_capacity
    big = m.put(S((int(cap * 0.7),), "uint8"))
    assert m.resident_bytes >= int(cap * 0.7)
    with pytest.raises(OutOfMemoryError, match="already resident"):
        m.put(S((int(cap * 0.4),), "uint8"))
    del big
    m.put(S((int(cap * 0.4),), "uint8"))  # fits once the first array is gone
    assert m.resident_bytes < cap


def test_a_graph_replays_on_its_own_machine():
    m = ls.host.Machine()
    with m.capture() as g:
        m.launch("k", duration=2e-6)
    m.replay(g)
    m.synchronize()
    assert m.now > 2e-6


def test_simt_run_with_valid_keywords_still_runs():
    r = ls.simt.run(_prog(), X64, trace=True, sms=2, blocks_per_sm=1)
    np.testing.assert_allclose(r.outputs, X64 * 2 + 1)
    assert r.kernels[0].trace.cycles > 0


# --- closed forms: old vs new on small shapes, and fast on large ones --------------------------------

def _old_stats(M, N, K, R, C, df):
    """The replaced ``systolic.stats`` (a folds × folds matrix of used PEs)."""
    Sr, Sc, T = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[df]

    def sizes(S_, P):
        n = -(-S_ // P)
        s = np.full(n, P, dtype=np.int64)
        s[-1] = S_ - P * (n - 1)
        return s
    ru, cu = sizes(Sr, R), sizes(Sc, C)
    per = T + R + C - 2 + (R if df != "os" else 0)
    used = np.outer(ru, cu).astype(np.float64)
    c_util = per if df == "os" else per + C - 1
    return (len(ru) * len(cu) * per, float(used.mean() / (R * C)), float((used * T / (R * C * c_util)).mean()))


@pytest.mark.parametrize("df", ["os", "ws", "is"])
def test_systolic_closed_form_equals_the_old_one_and_the_machine(df):
    for M, N, K, R, C in itertools.product([1, 3, 7, 16], [1, 5, 9], [1, 4, 11], [1, 2, 4], [1, 3, 4]):
        st = ls.systolic.stats(M, N, K, rows=R, cols=C, dataflow=df)
        cyc, mapping, cu = _old_stats(M, N, K, R, C, df)
        assert st.cycles == cyc
        assert st.mapping_efficiency == pytest.approx(mapping, rel=1e-12)
        assert st.compute_utilization == pytest.approx(cu, rel=1e-12)
        if M * N * K <= 64:  # and the cycle-by-cycle machine agrees
            rng = np.random.default_rng(M * 100 + N * 10 + K)
            a, b = rng.integers(-3, 4, (M, K)), rng.integers(-3, 4, (K, N))
            r = ls.systolic.simulate(a, b, rows=R, cols=C, dataflow=df, trace=False)
            assert r.cycles == st.cycles
            np.testing.assert_array_equal(r.output, a @ b)


def test_systolic_large_shapes_are_answered_in_constant_time():
    t = time.perf_counter()
    c = ls.systolic.cycles(65536, 65536, 64, rows=4, cols=4, dataflow="os")
    assert time.perf_counter() - t < 0.05  # was 10 s and 4 GB
    assert c == 16384 * 16384 * (64 + 4 + 4 - 2)
    st = ls.systolic.stats(10**9, 10**9, 10**9, rows=4, cols=4, dataflow="os")
    assert st.folds == (10**9 // 4) ** 2 and st.mapping_efficiency == 1.0


def _totals_by_walking(s):
    steps = list(s.steps)
    return dict(time=max(max(x.compute[1] for x in steps), max(x.store[1] for x in steps if x.store)),
                mxu_time=sum(x.compute[1] - x.compute[0] for x in steps),
                dma_time=sum(x.load[1] - x.load[0] + (x.store[1] - x.store[0] if x.store else 0.0) for x in steps),
                bytes_read=sum(x.load_bytes for x in steps), bytes_written=sum(x.store_bytes for x in steps),
                flops=sum(x.flops for x in steps), folds=sum(x.folds for x in steps))


@pytest.mark.parametrize("db", [True, False])
def test_tpu_schedule_in_aggregate_equals_the_step_by_step_walk(db):
    """``walk`` is the old loop of ``schedule_dot`` (it yields the same Steps); the aggregate's sums match it."""
    for m, n, k, batch in itertools.product([1, 8, 130, 300], [1, 128, 200, 385], [1, 129, 600], [1, 2]):
        for blocks in (None, (8, 128, 128), (16, 128, 256)):
            s = ls.tpu.schedule_dot(m, n, k, "TPU v5e", batch=batch, blocks=blocks, double_buffer=db,
                                    epilogue_flops=100)
            walked = _totals_by_walking(s)
            for name, v in walked.items():
                assert getattr(s, name) == pytest.approx(v, rel=1e-9, abs=1e-18), (m, n, k, batch, blocks, name)
            assert len(s.steps) == math.prod(s.grid)
            assert s.steps[0] == next(iter(s.steps)) and s.steps[-1] == list(s.steps)[-1]


def test_tpu_schedule_at_16384_cubed_is_fast():
    t = time.perf_counter()
    s = ls.tpu.schedule_dot(16384, 16384, 16384, "TPU v5e", blocks=(128, 128, 128))
    assert time.perf_counter() - t < 1.0  # was 28 s and 1.3 GB
    assert s.flops == 2 * 16384**3 and len(s.steps) == 128**3
    assert s.time >= s.mxu_time > 0
    big = ls.tpu.schedule_dot(10**9, 10**9, 10**9, "TPU v5e", blocks=(128, 128, 128), check_memory=False)
    assert big.steps.count == (-(-10**9 // 128)) ** 3 and big.time > 0
    with pytest.raises(ArgumentError, match="steps.count"):
        len(big.steps)


def _old_wave_traffic(m, n, k, t, gm, gn, concurrent, s, s_out, l2_bytes) -> int:
    """The replaced per-wave loop of ``tiling._wave_traffic``."""
    rows = [min(t.bm, m - r * t.bm) for r in range(gm)]
    cols = [min(t.bn, n - c * t.bn) for c in range(gn)]
    rpre = list(itertools.accumulate(rows, initial=0))
    cpre = list(itertools.accumulate(cols, initial=0))
    all_cols = cpre[-1]

    def own(b0, b1):
        r0, r1 = b0 // gn, (b1 - 1) // gn
        if r0 == r1:
            return rows[r0] * (b1 - b0) + cpre[(b1 - 1) % gn + 1] - cpre[b0 % gn]
        first = rows[r0] * (gn - b0 % gn) + all_cols - cpre[b0 % gn]
        last = rows[r1] * ((b1 - 1) % gn + 1) + cpre[(b1 - 1) % gn + 1]
        mid = (rpre[r1] - rpre[r0 + 1]) * gn + all_cols * (r1 - r0 - 1)
        return first + mid + last

    total = 0.0
    for w0 in range(0, gm * gn, concurrent):
        w1 = min(gm * gn, w0 + concurrent)
        r0, r1 = w0 // gn, (w1 - 1) // gn
        width_c = all_cols if r1 > r0 else cpre[(w1 - 1) % gn + 1] - cpre[w0 % gn]
        width = rpre[r1 + 1] - rpre[r0] + width_c
        footprint = width * t.bk * s * t.stages
        miss = max(0.0, 1.0 - l2_bytes / footprint)
        total += (width + (own(w0, w1) - width) * miss) * k * s
    return int(round(total)) + s_out * m * n


def test_tiling_wave_traffic_in_closed_form_equals_the_per_wave_loop():
    rng = random.Random(21)
    for _ in range(600):
        t = tiling.Tile(rng.choice([16, 32, 64, 128]), rng.choice([16, 32, 64, 128]), rng.choice([16, 32]))
        m, n, k = rng.randint(1, 3000), rng.randint(1, 3000), rng.randint(1, 500)
        gm, gn = -(-m // t.bm), -(-n // t.bn)
        cc, l2 = rng.randint(1, 400), rng.choice([0, 1 << 14, 1 << 18, 1 << 20, 50 << 20])
        old = _old_wave_traffic(m, n, k, t, gm, gn, cc, 2, 2, l2)
        new = tiling._wave_traffic(m, n, k, t, gm, gn, cc, 2, 2, l2)
        assert abs(new - old) <= max(2, 1e-12 * old), (m, n, k, t, cc, l2)  # float sums in another order


def test_tiling_plan_at_a_billion_per_side_is_fast():
    t = time.perf_counter()
    p = tiling.plan(10**9, 10**9, 10**9)
    assert time.perf_counter() - t < 0.5
    assert p.traffic > 0 and math.isfinite(p.time)


def test_floor_sum_and_stream_k_fixups_equal_their_loops():
    from labsim.machines.tiling_waves import floor_sum
    for n_, m_, a, b in itertools.product(range(0, 7), range(1, 6), range(0, 9), range(0, 9)):
        assert floor_sum(n_, m_, a, b) == sum((a * i + b) // m_ for i in range(n_))
    for tiles, ipt, w in itertools.product(range(1, 20), range(1, 9), range(1, 40)):
        total = tiles * ipt
        q = -(-total // w)
        old = sum(1 for c in {b * q for b in range(1, w) if b * q < total} if c % ipt)
        assert splitk.stream_k_fixups(tiles, ipt, w) == old


@pytest.mark.parametrize("how, h, d", [("async", 1.0, 3.0), ("async", 3.0, 1.0), ("sync", 1.0, 2.0),
                                       ("graph", 1.0, 2.0)])
def test_kernel_loop_aggregated_equals_every_launch_simulated(monkeypatch, how, h, d):
    us = 1e-6
    kw = dict(how=how, op_time=0.0, launch_time=h * us, launch_latency=5 * us, queue_depth=16)
    full = ls.host.kernel_loop(3000, d * us, **kw)
    monkeypatch.setattr(hostloop, "EXPLICIT_KERNELS", 100)
    agg = ls.host.kernel_loop(3000, d * us, **kw)
    assert agg.aggregated_kernels > 2000 and full.aggregated_kernels == 0
    assert agg.now == pytest.approx(full.now, rel=1e-9)
    assert agg.device_time == pytest.approx(full.device_time, rel=1e-9)
    kern = [e for e in agg.trace.events if e.kind.name == "KERNEL"]
    assert "aggregates" in kern[-1].detail or how == "graph"


def test_kernel_loop_of_a_million_is_fast():
    t = time.perf_counter()
    m = ls.host.kernel_loop(1_000_000, 2e-6, how="async")
    assert time.perf_counter() - t < 15  # was 115 s
    assert m.now >= 1_000_000 * 2e-6


def test_steps_are_dataclass_rows():
    s = ls.tpu.schedule_dot(256, 256, 256, "TPU v5e", blocks=(128, 128, 128))
    assert [dataclasses.astuple(x)[0] for x in s.steps[:3]] == [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0)]
    assert isinstance(s.steps[0], tpu_schedule.Step)


def test_flag_accepts_only_true_or_false():
    from labsim.support.errors import flag
    assert flag("f", "x", True) is True and flag("f", "x", np.bool_(False)) is False
    for bad in ("yes", 1, 0, None, 1.0):
        with pytest.raises(ArgumentTypeError, match=r"f: x must be True or False"):
            flag("f", "x", bad)
