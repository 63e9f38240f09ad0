"""The host/device machine (``ls.host``): closed forms for launches, the queue, graphs and copies.

Notation in the derivations: N kernels of duration d; launch latency ℓ (from the host's launch call to
the kernel's earliest start); host cost h per op (``op_time + launch_time``: the host thread is busy
for h in each launch call). The machine starts a kernel at max(call + max(ℓ, h), previous end).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp
from labsim import Direction, EventKind, UnitKind
from labsim.host import Machine, kernel_loop

S = ls.ShapeDtype
US = 1e-6
EPS = 1e-12


def machine(h=1 * US, ell=4 * US, **kw):
    """A machine whose host cost per op is exactly h (no Python dispatch on top of the launch call)."""
    return Machine("H100 SXM", op_time=0.0, launch_time=h, launch_latency=ell, **kw)


def no_overlap(trace: ls.Trace) -> None:
    for unit in trace.units:
        evs = sorted(trace.on(unit), key=lambda e: (e.start, e.end))
        for a, b in zip(evs, evs[1:]):
            assert a.end <= b.start + EPS, f"{unit.label}: {a.name} overlaps {b.name}"


def kernels(m):
    return [e for e in m.trace.events if e.kind is EventKind.KERNEL]


# --- launches: the two closed forms of the issue -------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), d=st.floats(0.1, 50), h=st.floats(0.0, 4.0), ell=st.floats(4.0, 20.0))
def test_synchronised_after_each_kernel_takes_n_times_latency_plus_duration(n, d, h, ell):
    """Synchronising after each launch: the host calls at t, the kernel runs [t + ℓ, t + ℓ + d] (ℓ ≥ h:
    the call has returned by then), and the host waits until t + ℓ + d before the next call. Each
    iteration takes ℓ + d, the host's own cost h hidden inside the latency: N·(ℓ + d) in all."""
    m = kernel_loop(n, d * US, how="sync", chip="H100 SXM", op_time=0.0, launch_time=h * US, launch_latency=ell * US)
    assert m.now == pytest.approx(n * (ell + d) * US, rel=1e-9)
    no_overlap(m.trace)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), d=st.floats(0.1, 50), h=st.floats(0.1, 50), ell=st.floats(0.0, 20.0))
def test_asynchronous_dispatch_takes_latency_plus_n_times_the_slower_of_d_and_h(n, d, h, ell):
    """Dispatching all N and synchronising once. Call i happens at i·h; kernel i starts at
    max(i·h + L, end of kernel i-1) with L = max(ℓ, h). If d ≥ h the device never waits after the first
    start: the end is L + N·d. If h > d each kernel waits for its launch: the end is (N-1)·h + L + d.
    Both are ℓ + N·max(d, h) up to one h (the "about" of the closed form), and exactly so for d ≥ h ≤ ℓ."""
    m = kernel_loop(n, d * US, how="async", chip="H100 SXM", op_time=0.0, launch_time=h * US, launch_latency=ell * US)
    big_l = max(ell, h)
    exact = big_l + n * d if d >= h else (n - 1) * h + big_l + d
    assert m.now == pytest.approx(exact * US, rel=1e-9)
    assert abs(m.now - (ell + n * max(d, h)) * US) <= h * US * (1 + 1e-9)
    no_overlap(m.trace)


def test_async_beats_sync_by_the_hidden_latency():
    """With d ≥ h ≤ ℓ: sync N·(ℓ + d), async ℓ + N·d; the difference (N-1)·ℓ is the latency async hides."""
    n, d, ell = 50, 10 * US, 4 * US
    sync = kernel_loop(n, d, how="sync", op_time=0.0, launch_time=1 * US, launch_latency=ell).now
    asyn = kernel_loop(n, d, how="async", op_time=0.0, launch_time=1 * US, launch_latency=ell).now
    assert sync - asyn == pytest.approx((n - 1) * ell, rel=1e-9)


def test_launch_parameters_default_to_the_presets():
    chip = ls.hardware.get("H100 SXM")
    m = Machine(chip)
    assert (m.launch_latency, m.launch_time) == (chip.launch_overhead, chip.launch_interval)
    assert chip.launch_interval > 0 and "launch_interval" in chip.sources


def test_eager_pays_dispatch_per_op_jit_per_call():
    """The host's busy time before the first wait: eager N·(op_time + launch_time), jit call_time +
    N·launch_time, for the same N kernels (eager is the unfused program, so N is its kernel count)."""
    g = ls.trace(lambda x: lnp.tanh(x * 2.0 + 1.0) * 3.0, S((1024,)))
    op, call, launch = 10 * US, 20 * US, 3 * US
    busy = {}
    for mode in ("eager", "jit"):
        m = Machine("H100 SXM", op_time=op, call_time=call, launch_time=launch)
        x = m.put(S((1024,)))
        t0 = m.now
        m.call(g, x, mode=mode)
        busy[mode] = m.now - t0
    n_eager = len(ls.compile(g, passes=[]).kernels)
    n_jit = len(ls.compile(g).kernels)
    assert n_eager == 4 and n_jit == 1
    assert busy["eager"] == pytest.approx(n_eager * (op + launch), rel=1e-12)
    assert busy["jit"] == pytest.approx(call + n_jit * launch, rel=1e-12)


# --- the command queue -------------------------------------------------------------------------------

def test_a_full_queue_makes_the_host_block():
    """Q = 2, d = 10 > h = 1, ℓ = 4 (all µs). Kernel j starts at ℓ + j·d. At call 2 (t = 2) kernels 0 and
    1 have not started: the queue is full and the host waits until kernel 0 starts (t = 4). From then on
    each call i waits for kernel i - Q to start, at ℓ + (i - Q)·d, and takes h: the last call (i = N - 1)
    returns at ℓ + (N - 1 - Q)·d + h. The device is not slowed: it still ends at ℓ + N·d."""
    n, q, d, h, ell = 20, 2, 10.0, 1.0, 4.0
    m = machine(h * US, ell * US, queue_depth=q)
    for i in range(n):
        m.launch(f"k{i}", duration=d * US, eager=False)
    waits = [e for e in m.trace.events if e.name == "queue full"]
    assert len(waits) == n - q and all(e.kind is EventKind.WAIT for e in waits)
    assert m.now == pytest.approx((ell + (n - 1 - q) * d + h) * US, rel=1e-9)
    m.synchronize()
    assert m.now == pytest.approx((ell + n * d) * US, rel=1e-9)
    no_overlap(m.trace)


def test_a_deep_queue_never_blocks():
    m = machine(queue_depth=1024)
    for i in range(100):
        m.launch(f"k{i}", duration=10 * US, eager=False)
    assert not [e for e in m.trace.events if e.name == "queue full"]
    assert m.now == pytest.approx(100 * 1 * US)  # the host only paid h per launch


# --- graphs ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gap", [0.0, 0.5, None])
def test_graph_replay_removes_the_per_kernel_launch_cost(gap):
    """h = 5 > d = 1: launched one by one the host's launches set the pace, (N-1)·h + max(ℓ, h) + d. Replayed as
    a graph: one launch call (h), one latency, then the kernels g apart: max(ℓ, h) + N·d + (N-1)·g."""
    n, d, h, ell = 40, 1.0, 5.0, 4.0
    g = ls.host.GRAPH_NODE_GAP / US if gap is None else gap
    kw = dict(op_time=0.0, launch_time=h * US, launch_latency=ell * US)
    if gap is not None:
        kw["graph_gap"] = gap * US
    one_by_one = kernel_loop(n, d * US, how="async", **kw)
    graph = kernel_loop(n, d * US, how="graph", **kw)
    assert one_by_one.now == pytest.approx(((n - 1) * h + max(ell, h) + d) * US, rel=1e-9)
    assert graph.now == pytest.approx((max(ell, h) + n * d + (n - 1) * g) * US, rel=1e-9)
    starts = [e.start for e in kernels(graph)]
    ends = [e.end for e in kernels(graph)]
    assert all(b - a == pytest.approx(g * US, abs=1e-15) for a, b in zip(ends, starts[1:]))  # the gap, labelled
    assert len(graph.trace.of_kind(EventKind.LAUNCH)) == 1
    assert len(one_by_one.trace.of_kind(EventKind.LAUNCH)) == n
    assert len(kernels(graph)) == n


def test_graph_node_gap_is_the_cuda_graphs_posts_measurement():
    """The default gap is the post's 3.4 µs per kernel inside a graph minus its 2.9 µs kernel (V100, 2019):
    replaying its experiment gives 3.4 µs per kernel, up to the one launch spread over the kernels."""
    assert ls.host.GRAPH_NODE_GAP == pytest.approx(0.5 * US)
    m = kernel_loop(1000, 2.9 * US, how="graph", eager=False)
    assert m.now / 1000 == pytest.approx(3.4 * US, rel=0.01)


def test_command_buffers_follow_xla_min_graph_size():
    """XLA:GPU's pass: runs of >= 5 command-buffer kernels become one graph, shorter runs stay launches."""
    from labsim.machines.graphs import command_buffers, command_type

    def mlp(x, *ws):
        for w in ws:
            x = lnp.maximum(x @ w, 0.0)
        return x

    for layers in (4, 5, 8):
        prog = ls.compile(ls.trace(mlp, S((32, 1024), "bfloat16"), *[S((1024, 1024), "bfloat16")] * layers))
        assert [command_type(k) for k in prog.kernels] == ["CUBLAS"] * layers
        segs = command_buffers(prog.kernels)
        assert segs == ([(True, list(range(layers)))] if layers >= 5 else [(False, [i]) for i in range(layers)])
        assert command_buffers(prog.kernels, types=()) == [(False, [i]) for i in range(layers)]
        x, ws = S((32, 1024), "bfloat16"), [S((1024, 1024), "bfloat16")] * layers
        runs = {}
        for cb in (False, True):
            m = Machine("H100 SXM", command_buffers=cb)
            args = [m.resident(x)] + [m.resident(w) for w in ws]
            m.call(prog, *args).block_until_ready()
            runs[cb] = m
        launches = {cb: len(m.trace.of_kind(EventKind.LAUNCH)) for cb, m in runs.items()}
        assert launches == {False: layers, True: 1 if layers >= 5 else layers}
        if layers >= 5:  # host: call + one launch; device: latency, then N kernels g apart
            m, ch = runs[True], runs[True].chip
            d = ls.estimate(prog, ch, launch_overhead=False).kernels[0].time
            expect = m.call_time + max(m.launch_latency, m.launch_time) + layers * d + (layers - 1) * m.graph_gap
            assert m.now == pytest.approx(expect, rel=1e-9)
            assert runs[True].now < runs[False].now
    with pytest.raises(ValueError, match="min_graph_size"):
        command_buffers(prog.kernels, min_graph_size=0)
    with pytest.raises(ValueError, match="types"):
        command_buffers(prog.kernels, types=("WHILE",))
    assert Machine("TPU v5e").command_buffers is False and Machine("H100 SXM").command_buffers is True


def test_captured_values_exist_only_after_replay():
    g = ls.trace(lambda x: x * 2.0 + 1.0, S((8,)))
    m = Machine("H100 SXM")
    x = m.put(np.arange(8, dtype=np.float32))
    with m.capture() as graph:
        y = m.call(g, x)
        with pytest.raises(RuntimeError, match="graph capture"):
            y.block_until_ready()
    assert not kernels(m)  # capturing runs nothing
    with pytest.raises(RuntimeError, match="replayed"):
        np.asarray(y)
    m.replay(graph)
    assert np.array_equal(np.asarray(y), np.arange(8, dtype=np.float32) * 2 + 1)


# --- copies ------------------------------------------------------------------------------------------

def test_pinned_copies_go_straight_to_dma_pageable_ones_are_staged():
    """Pinned: the host pays one API call, then the copy engine moves nb bytes in latency + nb / B_link.
    Pageable: first the host copies nb bytes into a staging buffer at B_host (a COPY event on the host
    thread), then the same DMA. The value is ready nb / B_host later than from pinned memory."""
    nb = 64 << 20
    x = S((nb // 4,), "float32")
    ready = {}
    for pinned in (True, False):
        m = Machine("H100 SXM")
        a = m.put(x, pinned=pinned)
        staged = [e for e in m.trace.on(ls.host.HOST) if e.kind is EventKind.COPY]
        dma = m.trace.of_kind(EventKind.COPY)[-1]
        assert dma.unit.kind is UnitKind.COPY_ENGINE and dma.unit.direction is Direction.H2D
        assert dma.duration == pytest.approx(m.link.transfer_time(nb), rel=1e-12)
        if pinned:
            assert not staged
        else:
            (st_,) = staged
            assert st_.duration == pytest.approx(nb / m.host_copy_bandwidth, rel=1e-12)
            assert dma.start >= st_.end
        ready[pinned] = a.ready
    assert ready[False] - ready[True] == pytest.approx(nb / ls.host.HOST_COPY_BANDWIDTH, rel=1e-9)


def test_reading_into_pageable_memory_copies_out_of_the_staging_buffer_after_the_dma():
    m = Machine("H100 SXM")
    a = m.put(S((1 << 20,)))
    m.get(a, pinned=False)
    dma = [e for e in m.trace.of_kind(EventKind.COPY) if e.unit.direction is Direction.D2H][0]
    unstage = [e for e in m.trace.on(ls.host.HOST) if e.kind is EventKind.COPY][0]
    assert unstage.start == pytest.approx(dma.end) and m.now == pytest.approx(unstage.end)


def test_the_host_link_sets_the_copy_time():
    """The same 256 MiB over PCIe Gen3, Gen5 and NVLink-C2C: nb / bandwidth each (latency 0 in the presets)."""
    nb = 256 << 20
    for name in ("PCIe Gen3 x16", "PCIe Gen5 x16", "NVLink-C2C"):
        m = Machine("H100 SXM", host_link=name)
        m.put(S((nb // 4,)))
        (c,) = m.trace.of_kind(EventKind.COPY)
        assert c.duration == pytest.approx(nb / ls.hardware.HOST_LINKS[name].bandwidth, rel=1e-12)


def test_two_copy_engines_move_two_arrays_at_once():
    for engines, expect in ((1, 2), (2, 1)):
        m = Machine("H100 SXM", copy_engines=engines, api_time=0.0)
        a, b = m.put(S((1 << 22,)), stream=0), m.put(S((1 << 22,)), stream=1)
        one = m.link.transfer_time(a.nbytes)
        assert b.ready == pytest.approx(expect * one, rel=1e-9)
        no_overlap(m.trace)


# --- streams and events ------------------------------------------------------------------------------

def test_a_copy_on_a_second_stream_overlaps_a_kernel():
    """Stream 0 runs a long kernel; the next input's copy on stream 1 runs beside it, not after it.
    On the same stream the copy waits for the kernel (a stream runs its work in order)."""
    for stream, overlaps in ((1, True), (0, False)):
        m = machine()
        k = m.launch("long", duration=100 * US, eager=False)
        m.put(S((1 << 20,)), stream=stream)
        (copy,) = m.trace.of_kind(EventKind.COPY)
        kern = kernels(m)[0]
        assert (copy.start < kern.end) is overlaps
        assert k.ready == pytest.approx(kern.end)


def test_wait_event_orders_two_streams():
    m = machine()
    m.launch("producer", duration=50 * US, stream=0, eager=False)
    ev = m.record_event(stream=0)
    m.wait_event(ev, stream=1)
    m.put(S((1024,)), stream=1)
    (copy,) = m.trace.of_kind(EventKind.COPY)
    assert copy.start >= ev.time == kernels(m)[0].end
    start = m.record_event(0)
    m.launch("timed", duration=30 * US, stream=0, eager=False)
    end = m.record_event(0)
    assert start.elapsed(end) == pytest.approx(30 * US)  # cudaEventElapsedTime: device time, not host time
    end.synchronize()
    assert m.now == pytest.approx(end.time)


# --- futures and synchronisation (JAX semantics) -----------------------------------------------------

def test_a_call_returns_a_future_at_once_and_reading_it_copies():
    g = ls.trace(lambda x, y: lnp.maximum(x @ y, 0.0), S((512, 512)), S((512, 512)))
    m = Machine("H100 SXM")
    x, y = m.put(S((512, 512))), m.put(S((512, 512)))
    z = m.call(g, x, y)
    assert z.shape == (512, 512) and z.dtype == "float32"
    assert m.now < z.ready  # the host is back before the device has finished
    n_copies = len(m.trace.of_kind(EventKind.COPY))
    z.block_until_ready()
    assert m.now == pytest.approx(z.ready)
    assert len(m.trace.of_kind(EventKind.COPY)) == n_copies  # waiting moves no byte
    assert m.get(z) is None  # shapes only: timing, no value
    back = [e for e in m.trace.of_kind(EventKind.COPY) if e.unit.direction is Direction.D2H]
    assert len(back) == 1 and back[0].nbytes == z.nbytes and m.now == pytest.approx(back[0].end)
    with pytest.raises(ValueError, match="shapes only"):
        np.asarray(z)


def test_timing_without_sync_measures_dispatch_not_compute():
    """t1 - t0 around a call without synchronising is the host's dispatch time; with block_until_ready it
    is the call's real time: the jit dispatch, the launch (latency ℓ ≥ launch call), the kernel. For a kernel
    longer than its dispatch the first is far smaller."""
    g = ls.trace(lambda a, b: a @ b, S((8192, 8192), "bfloat16"), S((8192, 8192), "bfloat16"))
    m = Machine("H100 SXM")
    a, b = m.put(S((8192, 8192), "bfloat16")), m.put(S((8192, 8192), "bfloat16"))
    a.block_until_ready(), b.block_until_ready()
    t0 = m.now
    c = m.call(g, a, b)
    wrong = m.now - t0
    c.block_until_ready()
    right = m.now - t0
    kernel = kernels(m)[-1].duration
    assert wrong == pytest.approx(m.call_time + m.launch_time, rel=1e-12)
    assert right == pytest.approx(m.call_time + max(m.launch_latency, m.launch_time) + kernel, rel=1e-9)
    assert right > 10 * wrong


def mlp(x, w1, b1, w2):
    return lnn.softmax(lnp.maximum(x @ w1 + b1, 0.0) @ w2)


@pytest.mark.parametrize("mode", ["jit", "eager"])
def test_results_equal_evaluate(mode):
    rng = np.random.default_rng(0)
    shapes = [(16, 32), (32, 64), (64,), (64, 32)]
    g = ls.trace(mlp, *(S(s) for s in shapes))
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    m = Machine("H100 SXM")
    out = m.call(g, *(m.put(a, pinned=i % 2 == 0) for i, a in enumerate(args)), mode=mode)
    np.testing.assert_allclose(np.asarray(out), ls.evaluate(g, *args), rtol=1e-5, atol=1e-6)
    no_overlap(m.trace)


def test_a_program_with_two_outputs_gives_two_futures():
    g = ls.trace(lambda x: (x + 1.0, lnp.sum(x * x)), S((64,)))
    m = Machine("A100 80GB")
    v = np.linspace(-1, 1, 64, dtype=np.float32)
    a, b = m.call(g, m.put(v))
    np.testing.assert_allclose(np.asarray(a), v + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), np.sum(v * v), rtol=1e-5)


def test_resident_arrays_need_no_copy():
    m = Machine("H100 SXM")
    v = np.arange(4, dtype=np.float32)
    a = m.resident(v, name="w")
    assert a.ready == 0.0 and not m.trace.events
    b = m.call(ls.trace(lambda x: x + 1.0, S((4,))), a)
    np.testing.assert_array_equal(np.asarray(b), v + 1)
    assert len(m.trace.of_kind(EventKind.COPY)) == 1  # only the read back


def test_kernels_wait_for_inputs_copied_on_another_stream():
    g = ls.trace(lambda x: x * 2.0, S((1 << 20,)))
    m = Machine("H100 SXM")
    x = m.put(S((1 << 20,)), stream=1)
    m.call(g, x, mode="jit")
    (k,) = kernels(m)
    assert k.start >= x.ready


def test_10000_kernels_simulate_and_the_trace_is_consistent():
    m = kernel_loop(10_000, 2 * US, how="async")
    assert len(kernels(m)) == 10_000
    assert m.now >= 10_000 * 2 * US


# --- errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, match", [
    ({"queue_depth": 0}, "queue_depth"), ({"launch_latency": -1.0}, "launch_latency"),
    ({"op_time": float("nan")}, "op_time"), ({"copy_engines": 1.5}, "copy_engines"),
    ({"host_copy_bandwidth": 0}, "host_copy_bandwidth"), ({"host_link": "PCIe Gen9"}, "unknown host link"),
])
def test_bad_parameters_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        Machine("H100 SXM", **kw)


def test_bad_calls_are_named():
    m = Machine("H100 SXM")
    with pytest.raises(ValueError, match="needs a duration"):
        m.launch("k")
    with pytest.raises(ValueError, match="unknown mode"):
        m.call(ls.trace(lambda x: x, S((2,))), m.put(S((2,))), mode="fast")
    with pytest.raises(ValueError, match=r"expects f32\[4\]"):
        m.call(ls.trace(lambda x: x * 2.0, S((4,))), m.put(S((2,))))
    with pytest.raises(TypeError, match="Arrays of this machine"):
        m.call(ls.trace(lambda x: x * 2.0, S((4,))), np.ones(4, np.float32))
    with pytest.raises(ValueError, match="empty"):
        with m.capture() as graph:
            pass
        m.replay(graph)
    with pytest.raises(ValueError, match="unknown how"):
        kernel_loop(3, US, how="later")


# --- invariants of any program of host calls ---------------------------------------------------------

OPS = st.lists(st.tuples(st.sampled_from(["put", "launch", "get", "block", "sync", "event"]),
                         st.integers(0, 2), st.floats(0.5, 40.0), st.booleans()), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(ops=OPS, depth=st.integers(1, 6), engines=st.integers(1, 2))
def test_any_sequence_of_calls_keeps_the_machine_causal(ops, depth, engines):
    """Whatever the host does: no unit runs two things at once; the host clock never goes back; a kernel
    starts no earlier than its launch call plus the latency and than its input is ready; a kernel or copy
    on a stream starts after the stream's earlier work; a read back starts after its value is ready."""
    m = Machine("H100 SXM", queue_depth=depth, copy_engines=engines)
    arrays = [m.put(S((256,)))]
    clock = m.now
    for op, stream, d, flag in ops:
        if op == "put":
            arrays.append(m.put(S((1 << 16,)), stream=stream, pinned=flag))
        elif op == "launch":
            src = arrays[-1]
            t_call = m.now
            out = m.launch("k", src, duration=d * US, stream=stream, out=S((256,)), eager=flag)
            k = kernels(m)[-1]
            assert k.start >= src.ready - EPS and k.start >= t_call + m.launch_latency - EPS
            assert out.ready == pytest.approx(k.end)
            arrays.append(out)
        elif op == "get":
            a = arrays[stream % len(arrays)]
            m.get(a, pinned=flag)
            back = [e for e in m.trace.of_kind(EventKind.COPY) if e.unit.direction is Direction.D2H][-1]
            assert back.start >= a.ready - EPS and m.now >= back.end - EPS
        elif op == "block":
            a = arrays[-1]
            a.block_until_ready()
            assert m.now >= a.ready - EPS
        elif op == "sync":
            m.synchronize()
            assert m.now >= m.device_time - EPS
        else:
            ev = m.record_event(stream)
            m.wait_event(ev, (stream + 1) % 3)
        assert m.now >= clock - EPS
        clock = m.now
    no_overlap(m.trace)
    for s in range(3):  # a stream runs its kernels in the order they were launched
        starts = [e.start for e in m.trace.on(ls.UnitId(0, UnitKind.STREAM, s))]
        assert starts == sorted(starts)


@pytest.mark.parametrize("chip", ["H100 SXM", "A100 80GB"])
def test_the_machine_reproduces_ls_simulate(chip):
    """ls.simulate charges host_api_time h per runtime call and starts a kernel ℓ after its launch call
    *returned*; the Machine measures ℓ from the call. So a Machine with latency ℓ + h, launch cost h, no
    Python costs, playing the same calls (put each input, call, block_until_ready, read the result)
    reproduces simulate's timeline: the same ready time and the same end. The copies go on stream 1:
    simulate orders kernels after their own inputs only, as a copy on another stream does (on the same
    stream every kernel would also wait for the copies enqueued before it)."""
    g = ls.trace(mlp, S((64, 128)), S((128, 256)), S((256,)), S((256, 128)))
    prog = ls.compile(g)
    h = 1 * US
    ref = ls.simulate(prog, chip, host_api_time=h)
    c = ls.hardware.get(chip)
    m = Machine(chip, launch_latency=c.launch_overhead + h, launch_time=h, op_time=0.0, call_time=0.0, api_time=h)
    out = m.call(prog, *(m.put(v.aval, stream=1) for v in prog.graph.inputs))
    out.block_until_ready()
    assert m.now == pytest.approx(ref.ready_time, rel=1e-12)
    m.get(out)
    assert m.now == pytest.approx(ref.time, rel=1e-12)
    assert [e.duration for e in kernels(m)] == pytest.approx([e.duration for e in ref.trace.of_kind(EventKind.KERNEL)])


def test_fusing_ops_into_fewer_kernels_cuts_launches_not_work():
    """kernel_loop(n, d, fused=k): ceil(n / k) kernels of k·d. With h > d the host sets the pace, so the
    time falls from about n·h to about (n / k)·max(k·d, h)."""
    n, d, h = 24, 1.0, 6.0
    kw = dict(op_time=0.0, launch_time=h * US, launch_latency=4 * US)
    for k in (1, 2, 4, 8):
        m = kernel_loop(n, d * US, how="async", fused=k, **kw)
        ks = kernels(m)
        assert len(ks) == n // k and all(e.duration == pytest.approx(k * d * US) for e in ks)
        big_l = max(4.0, h)
        exact = big_l + (n // k) * k * d if k * d >= h else (n // k - 1) * h + big_l + k * d
        assert m.now == pytest.approx(exact * US, rel=1e-9)


def test_launch_values_through_a_graph_replay():
    m = Machine("H100 SXM")
    x = m.put(np.arange(5, dtype=np.float32))
    with m.capture() as graph:
        y = m.launch("double", x, duration=2 * US, out=S((5,)), fn=lambda v: v * 2)
        z = m.launch("inc", y, duration=2 * US, out=S((5,)), fn=lambda v: v + 1)
    m.replay(graph)
    np.testing.assert_array_equal(np.asarray(z), np.arange(5) * 2 + 1)
    a, b = kernels(m)
    assert b.start == pytest.approx(a.end + m.graph_gap)  # graph nodes one gap apart


def test_choices_are_enums_that_accept_their_string():
    assert ls.host.How("sync") is ls.host.How.SYNC and ls.host.How.SYNC == "sync"
    a = kernel_loop(10, 5 * US, how=ls.host.How.SYNC).now
    assert a == kernel_loop(10, 5 * US, how="sync").now
    with pytest.raises(ValueError, match="unknown how .*; expected one of 'async', 'sync', 'graph'"):
        kernel_loop(3, US, how="later")
    m = Machine("H100 SXM")
    prog = ls.compile(ls.trace(lambda x: x * 2.0, ls.ShapeDtype((8,))))
    with pytest.raises(ValueError, match="unknown mode .*; expected one of 'eager', 'jit'"):
        m.call(prog, m.resident(np.ones(8, np.float32)), mode="lazy")
    y = m.call(prog, m.resident(np.ones(8, np.float32)), mode=ls.host.Mode.EAGER)
    assert np.asarray(y).tolist() == [2.0] * 8


def test_host_exports_only_its_api():
    assert "Machine" in ls.host.__all__ and "heapq" not in ls.host.__all__
    assert all(hasattr(ls.host, n) for n in ls.host.__all__)


def test_synchronous_machine_waits_for_each_kernel():
    m = Machine("CPU", synchronous=True)
    for i in range(3):
        m.launch(f"k{i}", duration=10 * US)
    ks = m.trace.on(ls.host.STREAM)
    waits = [e for e in m.trace.on(ls.host.HOST) if e.kind is EventKind.WAIT]
    assert len(waits) == 3 and all(w.end == k.end for w, k in zip(waits, ks))
    assert m.now == ks[-1].end
    with pytest.raises(ValueError, match="synchronous"):
        Machine("CPU", synchronous="yes")
