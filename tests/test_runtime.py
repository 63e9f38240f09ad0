"""The host ⇄ device runtime: one timeline of API calls, copies and kernels, checked against its rules."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp
from labsim.hardware import PRESETS
from labsim import Direction, EventKind, UnitKind
from labsim.machines.runtime import D2H, H2D, HOST, STREAM

S = ls.ShapeDtype
EPS = 1e-15  # seconds: float round-off when comparing event times


def mlp(x, w1, b1, w2):
    return lnn.softmax(lnp.maximum(x @ w1 + b1, 0.0) @ w2)


def mlp_program(m=64, d=128, h=256, passes=None):
    g = ls.trace(mlp, S((m, d)), S((d, h)), S((h,)), S((h, d)))
    return ls.compile(g, passes=passes)


def check_no_overlap(trace: ls.Trace) -> None:
    for unit in trace.units:
        evs = sorted(trace.on(unit), key=lambda e: (e.start, e.end))
        for a, b in zip(evs, evs[1:]):
            assert a.end <= b.start + EPS, f"{unit}: {a.name} [{a.start}, {a.end}] overlaps {b.name} [{b.start}, {b.end}]"


def check_rules(prog, chip_name, result, *, copy_inputs=True, host_api_time=1e-6):
    chip = ls.hardware.get(chip_name)  # a preset name or a Chip
    tr = result.trace
    check_no_overlap(tr)
    names = prog.graph.names()
    kernels = tr.on(STREAM)
    launches = [e for e in tr.on(HOST) if e.kind is EventKind.LAUNCH]
    assert [e.name for e in kernels] == [k.name for k in prog.kernels]
    assert [e.name for e in launches] == [k.name for k in prog.kernels]
    cost = ls.estimate(prog, chip_name)
    copies_in = {e.name: e for e in tr.on(H2D)}
    if copy_inputs:
        assert len(copies_in) == len(prog.graph.inputs)
        for v in prog.graph.inputs:
            e = copies_in[names[id(v)]]
            assert e.kind is EventKind.COPY and e.nbytes == v.aval.nbytes
            assert e.duration == pytest.approx(chip.host_link.latency + v.aval.nbytes / chip.host_link.bandwidth,
                                               rel=1e-9)
    else:
        assert not copies_in
    ends: dict[int, float] = {}
    for k, e, launch, kc in zip(prog.kernels, kernels, launches, cost.kernels):
        assert e.kind is EventKind.KERNEL
        assert (e.flops, e.nbytes) == (kc.flops, kc.bytes)
        assert e.duration == pytest.approx(kc.time, rel=1e-9)
        assert e.start >= launch.end + chip.launch_overhead - EPS  # no earlier than overhead after enqueue
        for v in k.inputs:
            if id(v) in ends:
                assert e.start >= ends[id(v)] - EPS  # after the kernel that wrote its input
            elif names.get(id(v)) in copies_in:
                assert e.start >= copies_in[names[id(v)]].end - EPS  # after its input's copy
        for o in k.outputs:
            ends[id(o)] = e.end
    backs = tr.on(D2H)
    assert len(backs) == len(prog.graph.outputs)
    for o, e in zip(prog.graph.outputs, backs):
        assert e.kind is EventKind.COPY and e.nbytes == o.aval.nbytes
        assert e.duration == pytest.approx(chip.host_link.latency + o.aval.nbytes / chip.host_link.bandwidth, rel=1e-9)
        assert e.start >= kernels[-1].end - EPS
    assert result.time == pytest.approx(max(e.end for e in backs), rel=1e-12)
    assert result.time == pytest.approx(tr.end, rel=1e-12)
    assert result.kernel_time == pytest.approx(sum(kc.time for kc in cost.kernels), rel=1e-9)
    for e in tr.on(HOST):
        if e.kind is EventKind.API:
            assert e.duration == pytest.approx(host_api_time)
        if e.kind is EventKind.LAUNCH:  # a CPU call also pays the preset's per-call software cost
            assert e.duration == pytest.approx(host_api_time + chip.call_overhead)
    # block_until_ready only waits: it ends when the last kernel ends, before any byte is copied back
    (wait,) = [e for e in tr.on(HOST) if e.name == "block_until_ready"] or [None]
    if wait is not None:
        assert wait.kind is EventKind.WAIT and wait.end == pytest.approx(kernels[-1].end, rel=1e-12)
        assert all(b.start >= wait.end - EPS for b in backs)
    assert result.ready_time == pytest.approx(kernels[-1].end, rel=1e-12)
    reads = [e for e in tr.on(HOST) if e.kind is EventKind.API and e.name.startswith("read back")]
    assert len(reads) == len(prog.graph.outputs)
    assert all(r.start >= result.ready_time - EPS for r in reads)


@pytest.mark.parametrize("chip_name", ["H100 SXM", "A100 80GB", "B200", "CPU"])
@pytest.mark.parametrize("eager", [False, True])
def test_simulate_follows_the_rules(chip_name, eager):
    prog = mlp_program(passes=[] if eager else None)
    check_rules(prog, chip_name, ls.simulate(prog, chip_name))


@settings(max_examples=25)
@given(st.integers(1, 4096), st.integers(1, 4096), st.floats(0, 2e-5), st.floats(1e-7, 5e-6), st.booleans())
def test_simulate_rules_hold_for_any_size_and_latency(m, n, latency, api, eager):
    chip = PRESETS["H100 SXM"]
    custom = dataclasses.replace(chip, host_link=dataclasses.replace(chip.host_link, latency=latency))
    g = ls.trace(lambda x, y: lnp.exp(x * y) + 1.0, S((m, n)), S((m, n)))
    prog = ls.compile(g, passes=[] if eager else None)
    res = ls.simulate(prog, custom, host_api_time=api)
    check_rules(prog, custom, res, host_api_time=api)


def test_copy_duration_includes_latency():
    chip = PRESETS["A100 80GB"]
    slow = dataclasses.replace(chip, host_link=dataclasses.replace(chip.host_link, latency=10e-6))
    prog = ls.compile(ls.trace(lambda x: x * 2.0, S((1000,))))
    res = ls.simulate(prog, slow)
    copies = res.trace.of_kind(EventKind.COPY)
    assert len(copies) == 2  # one in, one back
    for e in copies:
        assert e.nbytes == 4000
        assert e.duration == pytest.approx(10e-6 + e.nbytes / chip.host_link.bandwidth)


def test_without_input_copies_the_first_kernel_starts_after_one_api_call_and_the_launch_overhead():
    prog = mlp_program()
    for chip_name in ("H100 SXM", "CPU"):
        chip = PRESETS[chip_name]
        for api in (1e-6, 3e-6):
            res = ls.simulate(prog, chip_name, copy_inputs=False, host_api_time=api)
            first = res.trace.on(STREAM)[0]
            assert first.start == pytest.approx(api + chip.call_overhead + chip.launch_overhead, rel=1e-12, abs=1e-18)
            assert not res.trace.on(H2D)
            check_rules(prog, chip_name, res, copy_inputs=False, host_api_time=api)


def test_without_copy_back_the_call_ends_with_the_last_kernel():
    prog = mlp_program()
    res = ls.simulate(prog, "H100 SXM", copy_back=False)
    assert not res.trace.on(D2H)
    assert res.time == pytest.approx(max(res.trace.on(STREAM)[-1].end, max(e.end for e in res.trace.on(HOST))))


def test_kernels_run_in_order_on_one_stream():
    prog = mlp_program(passes=[])
    ks = ls.simulate(prog, "H100 SXM").trace.on(STREAM)
    assert len(ks) == len(prog.kernels) > 3
    assert all(a.end <= b.start + EPS for a, b in zip(ks, ks[1:]))


def test_copies_are_serialised_on_one_copy_engine_and_follow_their_enqueue():
    prog = mlp_program()
    tr = ls.simulate(prog, "H100 SXM").trace
    names = prog.graph.names()
    inputs = {f"put {names[id(v)]}" for v in prog.graph.inputs}  # the host's call is "put x", as on ls.host
    enq = [e for e in tr.on(HOST) if e.kind is EventKind.API and e.name in inputs]
    copies = tr.on(H2D)
    assert len(enq) == len(copies) == 4
    for q, c in zip(enq, copies):
        assert q.name == f"put {c.name}" and q.nbytes == c.nbytes
        assert c.start >= q.end - EPS


def test_chrome_trace_export():
    import json
    tr = ls.simulate(mlp_program(), "H100 SXM").trace
    data = json.loads(tr.to_chrome_json())
    evs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(evs) == len(tr.events)
    threads = {(m["pid"], m["tid"]): m["args"]["name"] for m in data["traceEvents"] if m["name"] == "thread_name"}
    assert sorted(threads.values()) == sorted(u.label for u in tr.units)
    procs = {m["pid"]: m["args"]["name"] for m in data["traceEvents"] if m["name"] == "process_name"}
    assert procs == {0: "host", 1: f"chip 0: {PRESETS['H100 SXM'].name}"}


def test_the_runtime_records_typed_units():
    tr = ls.simulate(mlp_program(), "H100 SXM").trace
    assert tr.units == (HOST, H2D, STREAM, D2H)
    assert tr.units_of(UnitKind.HOST_THREAD) == (HOST,) and HOST.chip == ls.HOST_CHIP
    assert tr.units_of(UnitKind.COPY_ENGINE, chip=0) == (H2D, D2H)
    assert tr.units_of(UnitKind.COPY_ENGINE, direction=Direction.D2H) == (D2H,)
    assert tr.units_of(UnitKind.STREAM) == (STREAM,) and STREAM.chip == 0
    assert tr.chips == (ls.HOST_CHIP, 0) and tr.chip_names == (PRESETS["H100 SXM"].name,)
    assert {e.unit.kind for e in tr.of_kind(EventKind.KERNEL)} == {UnitKind.STREAM}
    assert tr.of_kind("copy") == tr.of_kind(EventKind.COPY)  # the kind's value is accepted too


@pytest.mark.parametrize("chip_name", ["H100 SXM", "A100 80GB", "TPU v5e", "CPU"])
@pytest.mark.parametrize("eager", [False, True])
def test_estimate_and_simulate_agree_with_the_data_on_the_device(chip_name, eager):
    """Both overlap launches with running kernels; derive the schedule by hand here."""
    prog = mlp_program(passes=[] if eager else None)
    chip = PRESETS[chip_name]
    cost = ls.estimate(prog, chip_name)
    res = ls.simulate(prog, chip_name, copy_inputs=False, copy_back=False)
    assert res.time == pytest.approx(cost.time, rel=1e-12)
    api, L, call = 1e-6, chip.launch_overhead, chip.call_overhead
    t_host = end = 0.0
    for kc in cost.kernels:
        t_host += api + call
        end = max(t_host + L, end) + kc.time
        if chip.kind is ls.ChipKind.CPU:
            t_host = end
    assert cost.time == pytest.approx(end, rel=1e-12)
    # the pessimistic series figure pays every launch latency in full
    assert cost.serial_time == pytest.approx(cost.kernel_time + len(cost.kernels) * (api + call + L), rel=1e-12)
    assert cost.time <= cost.serial_time + 1e-15
    assert cost.overhead_time == pytest.approx(cost.time - cost.kernel_time)


def test_block_until_ready_waits_and_reading_copies():
    prog = ls.compile(ls.trace(lambda x: x * 2.0, S((1 << 20,))))
    res = ls.simulate(prog, "H100 SXM")
    host = res.trace.on(HOST)
    names = [e.name for e in host]
    i_wait = names.index("block_until_ready")
    i_read = next(i for i, n in enumerate(names) if n.startswith("read back:"))
    assert i_wait < i_read and host[i_wait].kind is EventKind.WAIT
    (copy,) = res.trace.on(D2H)
    assert copy.start >= host[i_wait].end and "read back" in copy.detail
    assert host[-1].name == "read back" and host[-1].kind is EventKind.WAIT and host[-1].end == res.time
    # without reading the value, the call ends when block_until_ready returns
    no_read = ls.simulate(prog, "H100 SXM", copy_back=False)
    assert no_read.time == pytest.approx(res.ready_time) and not no_read.trace.on(D2H)


@pytest.mark.parametrize("chip_name", ["H100 SXM", "CPU", "TPU v5e"])
def test_simulate_runs_on_the_host_machine_and_agrees_with_the_roofline(chip_name):
    """ls.simulate is a thin layer over ls.host.Machine: one HOST unit, and with the data on the device
    its time is ProgramCost.time (the roofline's stream recurrence), to round-off."""
    assert HOST is ls.host.HOST and STREAM is ls.host.STREAM and H2D is ls.host.H2D
    for passes in (None, []):
        prog = mlp_program(passes=passes)
        res = ls.simulate(prog, chip_name, copy_inputs=False, copy_back=False)
        assert res.time == pytest.approx(ls.estimate(prog, chip_name).time, rel=1e-12)
        # the same call made by hand on the machine gives the same kernel times
        chip = ls.hardware.get(chip_name)
        issue = 1e-6 + chip.call_overhead
        m = ls.host.Machine(chip, launch_time=issue, launch_latency=issue + chip.launch_overhead, call_time=0.0,
                            op_time=0.0, command_buffers=False, synchronous=chip.kind is ls.ChipKind.CPU)
        m.call(prog, *(m.resident(v.aval) for v in prog.graph.inputs))
        assert [(e.start, e.end) for e in m.trace.on(STREAM)] == [(e.start, e.end) for e in res.trace.on(STREAM)]


def test_a_program_with_two_outputs_reads_both_back_then_waits_once():
    g = ls.trace(lambda x: (x * 2.0, lnp.exp(x)), S((1 << 20,)))
    res = ls.simulate(ls.compile(g), "H100 SXM")
    reads = [e for e in res.trace.on(HOST) if e.kind is EventKind.API and e.name.startswith("read back")]
    waits = [e for e in res.trace.on(HOST) if e.name == "read back"]
    backs = res.trace.on(D2H)
    assert len(reads) == len(backs) == 2 and len(waits) == 1
    assert backs[1].start == pytest.approx(backs[0].end)  # one copy engine: back to back
    assert reads[1].end <= backs[0].end  # the second enqueue does not wait for the first copy
    assert res.time == pytest.approx(backs[1].end) == pytest.approx(waits[0].end)


def _stream_recurrence(times, *, launch_overhead, host_api_time, call_overhead, synchronous, ready):
    """The closed form of one stream: the host issues each launch in host_api_time + call_overhead; a
    kernel starts launch_overhead after its launch was issued, after the previous kernel and after its
    inputs are ready; a synchronous host waits for each kernel."""
    out, t_host, end = [], 0.0, 0.0
    for i, kt in enumerate(times):
        t_host += host_api_time + call_overhead
        start = max(t_host + launch_overhead, end, ready[i] if ready else 0.0)
        end = start + kt
        out.append((t_host, start, end))
        if synchronous:
            t_host = end
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1e-4), max_size=12), st.floats(0, 1e-5), st.floats(0, 3e-6), st.floats(0, 1e-5),
       st.booleans(), st.booleans(), st.integers(0, 2**31))
def test_stream_time_on_the_host_machine_equals_the_recurrence(times, lat, api, call, sync, with_ready, seed):
    """runtime.stream_time plays the kernels on ls.host.Machine (labsim's one host timeline, which
    ls.estimate reads); it equals the closed-form recurrence of one stream."""
    import random

    from labsim.machines import runtime
    rnd = random.Random(seed)
    ready = [rnd.uniform(0, 2e-4) for _ in times] if with_ready else None
    kw = dict(launch_overhead=lat, host_api_time=api, call_overhead=call, synchronous=sync, ready=ready)
    got, want = runtime.stream_time(times, **kw), _stream_recurrence(times, **kw)
    assert len(got) == len(want) == len(times)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-12, abs=1e-18)


def test_the_estimate_reads_the_host_machines_timeline():
    """ls.estimate's time is the end of the stream that ls.host.Machine plays (no second closed form)."""
    from labsim.machines import runtime
    S = ls.ShapeDtype
    prog = ls.compile(ls.trace(lambda a, b: ls.nn.relu(a @ b) * 2.0, S((256, 256)), S((256, 256))), passes=[])
    for chip in ("H100 SXM", "CPU"):
        cost = ls.estimate(prog, chip)
        played = runtime.stream_time([k.time for k in cost.kernels], launch_overhead=cost.launch_overhead,
                                     host_api_time=cost.host_api_time, call_overhead=cost.call_overhead,
                                     synchronous=cost.synchronous)
        assert cost._schedule() == tuple(played) and len(played) == len(prog.kernels) >= 2
        assert cost.time == max(played[-1][2], played[-1][0]) > cost.kernel_time
