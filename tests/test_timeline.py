"""viz.timeline draws any ls.Trace: a small trace of each unit kind, and the traces the machines emit."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim import viz as lv
from labsim import Direction, Event, EventKind, Trace, UnitId, UnitKind
from labsim.viz.palette import KIND_COLORS

ONE_OF_EACH = {
    UnitKind.HOST_THREAD: UnitId(ls.HOST_CHIP, UnitKind.HOST_THREAD),
    UnitKind.COPY_ENGINE: UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.H2D),
    UnitKind.STREAM: UnitId(0, UnitKind.STREAM, 1),
    UnitKind.SM: UnitId(0, UnitKind.SM, 3),
    UnitKind.WARP: UnitId(0, UnitKind.WARP, 5),
    UnitKind.PE_ROW: UnitId(0, UnitKind.PE_ROW, 2),
    UnitKind.LINK: UnitId(1, UnitKind.LINK, 0, Direction.D2H),
    UnitKind.MXU: UnitId(0, UnitKind.MXU, 0),
    UnitKind.VPU: UnitId(0, UnitKind.VPU, 0),
    UnitKind.DMA: UnitId(0, UnitKind.DMA, 0),
}


def bars(fig):
    return [t for t in fig.data if t.type == "bar"]


def drawn(fig):
    """(row, start, duration) of every bar, sorted."""
    return sorted((y, round(b0, 6), round(w, 6)) for b in bars(fig) for y, b0, w in zip(b.y, b.base, b.x))


def check_draws(tr: Trace, **kw):
    fig = lv.timeline(tr, **kw)
    assert sum(len(b.x) for b in bars(fig)) == len(tr.events)
    assert {b.name for b in bars(fig)} == {e.kind.value for e in tr.events}  # one legend entry per kind
    assert len(fig.layout.yaxis.categoryarray) == len(tr.units)
    assert all(b.marker.color == KIND_COLORS[b.name] for b in bars(fig))  # every kind has its palette colour
    return fig


def test_every_unit_kind_is_named_here():
    assert set(ONE_OF_EACH) == set(UnitKind)


@pytest.mark.parametrize("kind", list(UnitKind), ids=lambda k: k.name)
def test_timeline_draws_a_trace_of_each_unit_kind(kind):
    u = ONE_OF_EACH[kind]
    ek = {UnitKind.HOST_THREAD: EventKind.LAUNCH, UnitKind.COPY_ENGINE: EventKind.COPY, UnitKind.LINK: EventKind.COPY,
          UnitKind.STREAM: EventKind.KERNEL, UnitKind.DMA: EventKind.COPY}.get(kind, EventKind.COMPUTE)
    tr = Trace((Event(u, "a", 0.0, 2e-6, ek), Event(u, "b", 3e-6, 4e-6, ek)))
    fig = check_draws(tr)
    assert list(fig.layout.yaxis.categoryarray) == [u.label]
    assert drawn(fig) == [(u.label, 0.0, 2.0), (u.label, 3.0, 1.0)]  # µs
    assert fig.layout.xaxis.title.text == "time (µs)"


def test_timeline_draws_a_mixed_trace_and_selects_rows():
    evs = [Event(u, k.value, i * 1e-6, (i + 1) * 1e-6, EventKind.COMPUTE if k in (UnitKind.SM, UnitKind.WARP,
           UnitKind.MXU, UnitKind.VPU, UnitKind.PE_ROW) else EventKind.API if k is UnitKind.HOST_THREAD
           else EventKind.COPY if k in (UnitKind.COPY_ENGINE, UnitKind.LINK, UnitKind.DMA) else EventKind.KERNEL)
           for i, (k, u) in enumerate(ONE_OF_EACH.items())]
    tr = Trace(tuple(evs))
    check_draws(tr)
    fig = lv.timeline(tr, units=[UnitKind.MXU, UnitKind.VPU, ONE_OF_EACH[UnitKind.DMA]])
    assert list(fig.layout.yaxis.categoryarray) == ["DMA 0", "VPU 0", "MXU 0"]  # the trace's order, top first
    assert sum(len(b.x) for b in bars(fig)) == 3
    with pytest.raises(ValueError, match="none of the trace's units"):
        lv.timeline(Trace((evs[0],)), units=UnitKind.WARP)
    with pytest.raises(TypeError, match="units must be UnitIds or UnitKinds"):
        lv.timeline(tr, units=["MXU"])


def test_timeline_of_many_warps_from_intervals_stays_a_readable_height():
    tr = Trace.from_intervals([(w, "issue", c, c + 1) for w in range(64) for c in range(w % 4, 400, 4)],
                              kind=UnitKind.WARP, clock_hz=1.98e9, merge=True)
    fig = check_draws(tr)
    assert len(fig.layout.yaxis.categoryarray) == 64 and fig.layout.height <= 120 + 720


def test_timeline_draws_ls_simulate_and_the_host_machine():
    prog = ls.compile(ls.trace(lambda x, w: lnp.maximum(x @ w, 0.0), ls.ShapeDtype((256, 256)),
                               ls.ShapeDtype((256, 256))))
    run = ls.simulate(prog, "H100 SXM")
    fig = check_draws(run.trace)
    assert list(fig.layout.yaxis.categoryarray) == ["copy engine D→H", "stream 0", "copy engine H→D", "host thread"]
    m = ls.host.Machine("H100 SXM")
    x = m.put(np.ones((256, 256), np.float32))
    w = m.put(np.ones((256, 256), np.float32), stream=1)
    y = m.call(prog, x, w)
    np.asarray(y)
    fig = check_draws(m.trace)
    assert drawn(fig) == sorted((e.unit.label, round(e.start * 1e6, 6), round(e.duration * 1e6, 6))
                                for e in m.trace.events)


def test_timeline_draws_a_collective_across_chips():
    r = ls.collectives.all_reduce([np.full(1024, float(i)) for i in range(4)], link="H100 SXM")
    assert {u.kind for u in r.trace.units} == {UnitKind.LINK} and len(r.trace.chips) == 4
    fig = check_draws(r.trace)
    rows = list(fig.layout.yaxis.categoryarray)
    assert len(set(rows)) == len(r.trace.units) and all(y.startswith("chip ") for y in rows)
