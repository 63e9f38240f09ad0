"""The event core: typed units, typed events, traces, and their Chrome/Perfetto export."""
from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import labsim as ls
from labsim import HOST_CHIP, Direction, Event, EventKind, Trace, UnitId, UnitKind

K, C = EventKind.KERNEL, EventKind.COPY
HOST = UnitId(HOST_CHIP, UnitKind.HOST_THREAD)


@pytest.mark.parametrize("unit, label", [
    (UnitId(HOST_CHIP, UnitKind.HOST_THREAD), "host thread"),
    (UnitId(HOST_CHIP, UnitKind.HOST_THREAD, 2), "host thread 2"),
    (UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.H2D), "copy engine H→D"),
    (UnitId(0, UnitKind.COPY_ENGINE, 1, Direction.D2H), "copy engine 1 D→H"),
    (UnitId(0, UnitKind.STREAM, 0), "stream 0"),
    (UnitId(1, UnitKind.SM, 3), "SM 3"),
    (UnitId(0, UnitKind.WARP, 5), "warp 5"),
    (UnitId(2, UnitKind.PE_ROW, 7), "PE row 7"),
    (UnitId(0, UnitKind.LINK, 1), "link 1"),
])
def test_labels(unit, label):
    assert unit.label == label


@st.composite
def device_units(draw):
    kind = draw(st.sampled_from([k for k in UnitKind if k is not UnitKind.HOST_THREAD]))
    direction = {UnitKind.COPY_ENGINE: st.sampled_from(list(Direction)),
                 UnitKind.LINK: st.sampled_from([None, *Direction])}.get(kind, st.none())
    return UnitId(draw(st.integers(0, 3)), kind, draw(st.integers(0, 40)), draw(direction))


@given(device_units(), device_units())
def test_labels_are_derived_from_kind_index_and_direction(a, b):
    # two units on one chip share a label exactly when they are the same unit; the chip is not in it
    same_chip_b = dataclasses.replace(b, chip=a.chip)
    assert (a.label == same_chip_b.label) == (a == same_chip_b)
    assert dataclasses.replace(a, chip=a.chip + 1).label == a.label
    assert a.label.startswith(a.kind.value)
    assert (a.direction.value in a.label) if a.direction else "→" not in a.label


@pytest.mark.parametrize("args, err, match", [
    ((0, UnitKind.COPY_ENGINE, 0), ValueError, "direction"),
    ((0, UnitKind.HOST_THREAD), ValueError, "host thread"),
    ((HOST_CHIP, UnitKind.SM, 0), ValueError, "device chip"),
    ((0, UnitKind.SM, -1), ValueError, "index"),
    ((0, UnitKind.SM, 0, Direction.H2D), ValueError, "no direction"),
    ((0, "SM", 0), TypeError, "UnitKind"),
    ((0, UnitKind.SM, 1.5), TypeError, "index"),
    (("0", UnitKind.SM, 1), TypeError, "chip"),
])
def test_unit_id_rejects_bad_fields(args, err, match):
    with pytest.raises(err, match=match):
        UnitId(*args)


def test_event_rejects_negative_duration():
    with pytest.raises(ValueError, match="ends"):
        Event(HOST, "e", 2.0, 1.0, EventKind.API)


def test_event_rejects_a_unit_that_is_not_a_unit_id():
    with pytest.raises(TypeError, match="unit must be a UnitId"):
        Event("host thread", "e", 0.0, 1.0, EventKind.API)  # type: ignore[arg-type]


def test_event_rejects_a_kind_that_is_not_an_event_kind():
    with pytest.raises(TypeError, match="kind must be an EventKind"):
        Event(HOST, "e", 0.0, 1.0, "api")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nbytes"):
        Event(UnitId(0, UnitKind.STREAM), "k", 0.0, 1.0, K, nbytes=-1)


def test_event_kinds_keep_todays_values():
    assert {k.value for k in EventKind} >= {"kernel", "copy", "launch", "wait", "api"}


def small_trace() -> Trace:
    s0, s1 = UnitId(0, UnitKind.SM, 0), UnitId(0, UnitKind.SM, 1)
    h2d = UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.H2D)
    return Trace((Event(HOST, "x", 0.0, 1.0, EventKind.API), Event(h2d, "x", 1.0, 3.0, C, nbytes=64),
                  Event(s1, "k", 3.0, 4.0, K, flops=10, nbytes=8), Event(s0, "k", 3.0, 5.0, K, flops=10, nbytes=8),
                  Event(s1, "k2", 4.5, 5.0, K)))


def test_trace_selects_by_fields():
    tr = small_trace()
    sms = tr.units_of(UnitKind.SM)
    assert [u.index for u in sms] == [1, 0]  # display order: first use
    assert tr.units_of(UnitKind.SM, chip=1) == ()
    assert tr.units_of(UnitKind.COPY_ENGINE, direction=Direction.H2D)[0].direction is Direction.H2D
    assert tr.units_of(UnitKind.COPY_ENGINE, direction=Direction.D2H) == ()
    assert [e.name for e in tr.on(sms[0])] == ["k", "k2"]
    assert tr.busy(sms[0]) == pytest.approx(1.5) and tr.busy(sms[1]) == pytest.approx(2.0)
    assert len(tr.of_kind(K)) == 3 and tr.of_kind("kernel") == tr.of_kind(K)
    assert sum(e.nbytes for e in tr.of_kind(C)) == 64
    assert (tr.start, tr.end, tr.duration) == (0.0, 5.0, 5.0)
    assert tr.chips == (HOST_CHIP, 0)


def test_trace_refuses_strings_for_units_and_unknown_kinds():
    tr = small_trace()
    with pytest.raises(TypeError, match="unit must be a UnitId"):
        tr.on("SM 0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="UnitKind"):
        tr.units_of("SM")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        tr.of_kind("kernels")


def test_trace_units_must_cover_its_events():
    with pytest.raises(ValueError, match="not in the trace's units"):
        Trace(small_trace().events, units=(HOST,))
    with pytest.raises(ValueError, match="distinct"):
        Trace((), units=(HOST, HOST))


def two_chip_trace(names=("Chip A", "Chip B")) -> Trace:
    # units listed out of chip order on purpose: the export groups them by chip
    a_s, a_sm = UnitId(0, UnitKind.STREAM, 0), UnitId(0, UnitKind.SM, 2)
    b_s, b_link = UnitId(1, UnitKind.STREAM, 0), UnitId(1, UnitKind.LINK, 0)
    evs = (Event(HOST, "k", 0.0, 1e-6, EventKind.LAUNCH), Event(b_s, "k", 2e-6, 5e-6, K, flops=100, nbytes=40),
           Event(a_s, "k", 2e-6, 4e-6, K, flops=100, nbytes=40), Event(a_sm, "k", 2.5e-6, 3.5e-6, K),
           Event(b_link, "all-reduce", 5e-6, 7.5e-6, C, nbytes=1 << 20),
           Event(HOST, "sync", 1e-6, 7.5e-6, EventKind.WAIT))
    return Trace(evs, units=(HOST, b_s, a_s, a_sm, b_link), chip_names=names)


def test_chrome_json_has_one_process_per_chip_and_one_thread_per_unit():
    tr = two_chip_trace()
    data = json.loads(tr.to_chrome_json())["traceEvents"]
    procs = {m["pid"]: m["args"]["name"] for m in data if m["name"] == "process_name"}
    assert procs == {0: "host", 1: "chip 0: Chip A", 2: "chip 1: Chip B"}
    order = {m["pid"]: m["args"]["sort_index"] for m in data if m["name"] == "process_sort_index"}
    assert sorted(order, key=order.get) == [0, 1, 2]
    threads = {(m["pid"], m["tid"]): m["args"]["name"] for m in data if m["name"] == "thread_name"}
    assert threads == {(0, 0): "host thread", (1, 0): "stream 0", (1, 1): "SM 2", (2, 0): "stream 0", (2, 1): "link 0"}
    tsort = {(m["pid"], m["tid"]): m["args"]["sort_index"] for m in data if m["name"] == "thread_sort_index"}
    assert tsort == {k: k[1] for k in threads}
    xs = [d for d in data if d["ph"] == "X"]
    assert len(xs) == len(tr.events)
    for d, e in zip(xs, tr.events):
        assert d["pid"] == e.unit.chip + 1 and threads[(d["pid"], d["tid"])] == e.unit.label
        assert d["ts"] == pytest.approx(e.start * 1e6) and d["dur"] == pytest.approx(e.duration * 1e6)  # µs
        assert d["cat"] == e.kind.value and d["name"] == e.name
        assert d["args"].get("bytes") == e.nbytes and d["args"].get("flops") == e.flops


def test_chrome_json_without_chip_names_numbers_the_chips():
    data = json.loads(two_chip_trace(names=()).to_chrome_json())["traceEvents"]
    assert {m["args"]["name"] for m in data if m["name"] == "process_name"} == {"host", "chip 0", "chip 1"}


def test_the_types_are_exported():
    assert ls.UnitId is UnitId and ls.UnitKind is UnitKind and ls.EventKind is EventKind
    assert ls.Direction is Direction and ls.HOST_CHIP == -1
    assert ls.UnitId is not ls.ExecUnit and not hasattr(ls, "Unit")  # a chip's execution units are a different thing


# ----------------------------------------------------------------------------------------------
# Trace.from_intervals: the adapter for machines that keep their own schedule
def test_from_intervals_builds_typed_units_and_scales_cycles():
    tr = Trace.from_intervals([(0, "mma", 0, 64), (1, "mma", 8, 72, "block (0, 1)"), (0, "mma", 64, 128)],
                              kind=UnitKind.MXU, chip=2, clock_hz=1e9)
    assert tr.units == (UnitId(2, UnitKind.MXU, 0), UnitId(2, UnitKind.MXU, 1))
    assert [(e.start, e.end) for e in tr.events] == [(0.0, 64e-9), (8e-9, 72e-9), (64e-9, 128e-9)]
    assert all(e.kind is EventKind.COMPUTE for e in tr.events) and tr.events[1].detail == "block (0, 1)"
    merged = Trace.from_intervals([(0, "mma", 0, 64), (1, "mma", 8, 72), (0, "mma", 64, 128), (0, "mma", 130, 140)],
                                  kind=UnitKind.MXU, clock_hz=1e9, merge=True)
    assert [(e.unit.index, e.start * 1e9, e.end * 1e9) for e in merged.events] == \
        [(0, 0, 128), (1, 8, 72), (0, 130, 140)]  # back to back joined, a gap kept
    assert merged.busy(UnitId(0, UnitKind.MXU, 0)) == pytest.approx(138e-9)


def test_from_intervals_takes_unit_ids_and_event_kinds():
    dma = UnitId(0, UnitKind.DMA, 1)
    tr = Trace.from_intervals([(dma, "load A", 0.0, 1e-6), (3, "add", 1e-6, 2e-6)], kind=UnitKind.VPU,
                              event=EventKind.COPY)
    assert tr.units == (dma, UnitId(0, UnitKind.VPU, 3)) and {e.kind for e in tr.events} == {EventKind.COPY}


@pytest.mark.parametrize("kw,err,match", [
    (dict(kind="warp"), TypeError, "kind must be a UnitKind"),
    (dict(kind=UnitKind.WARP, event="kernel"), TypeError, "event must be an EventKind"),
    (dict(kind=UnitKind.WARP, clock_hz=0), ValueError, "clock_hz must be"),
    (dict(kind=UnitKind.WARP, intervals=[(0, "x", 1)]), ValueError, "interval 0 must be"),
    (dict(kind=UnitKind.WARP, intervals=[(0, "x", 2, 1)]), ValueError, "ends"),
])
def test_from_intervals_rejects_bad_input(kw, err, match):
    intervals = kw.pop("intervals", [(0, "x", 0, 1)])
    with pytest.raises(err, match=match):
        Trace.from_intervals(intervals, **kw)


def test_merge_joins_traces_on_one_clock():
    dma = Trace.from_intervals([(0, "load A", 0, 10), (0, "load B", 10, 20)], kind=UnitKind.DMA, clock_hz=1e9,
                               event=EventKind.COPY, chip_names=("TPU v5e",))
    mxu = Trace.from_intervals([(0, "A·B", 20, 84)], kind=UnitKind.MXU, clock_hz=1e9)
    t = Trace.merge(dma, mxu)
    assert t.units == (UnitId(0, UnitKind.DMA), UnitId(0, UnitKind.MXU)) and len(t.events) == 3
    assert t.chip_names == ("TPU v5e",) and t.duration == pytest.approx(84e-9)
    assert {e.kind for e in t.events} == {EventKind.COPY, EventKind.COMPUTE}
    assert Trace.merge(t, t).units == t.units  # a shared unit appears once
    with pytest.raises(TypeError, match="every argument must be a Trace"):
        Trace.merge(t, [1])
