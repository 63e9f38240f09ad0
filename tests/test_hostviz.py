"""Figures of the host/device chapter: spans on a timeline, timelines step by step, block programs."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.blocks as tl
from labsim import viz

US = 1e-6


def small_trace():
    m = ls.host.Machine("H100 SXM", op_time=0.0, launch_time=1 * US, launch_latency=4 * US)
    x = m.put(ls.ShapeDtype((1 << 20,)))
    for i in range(3):
        m.launch(f"k{i}", x, duration=10 * US)
    m.synchronize()
    return m.trace


def test_spans_are_drawn_with_their_lengths():
    tr = small_trace()
    fig = viz.timeline_spans(tr, [("without sync", 0.0, 5 * US), ("with sync", 0.0, tr.end)])
    texts = [a.text for a in fig.layout.annotations]
    assert texts[0] == "without sync: 5 µs" and texts[1] == f"with sync: {tr.end * 1e6:,.3g} µs"
    assert len(fig.layout.shapes) == 6  # a bracket of three lines per span
    with pytest.raises(ValueError, match="ends"):
        viz.timeline_spans(tr, [("bad", 2.0, 1.0)])


def test_steps_keep_the_same_traces_and_cut_events_at_each_time():
    """Frame k shows each event from its start to min(end, t_k); an event not started yet has no bar."""
    tr = small_trace()
    times = [tr.end * f for f in (0.1, 0.5, 1.0)]
    frames = viz.timeline_steps(tr, times, titles=["a", "b", "c"])
    assert len({len(f.data) for f in frames}) == 1
    assert [t.name for t in frames[0].data] == [t.name for t in frames[-1].data]
    full = viz.timeline(tr)
    scale = 1e6
    for f, t in zip(frames, times):
        for tr_f, tr_full in zip(f.data, full.data):
            for b, x, xf in zip(tr_f.base, tr_f.x, tr_full.x):
                if b >= t * scale:
                    assert x is None
                else:
                    assert x == pytest.approx(min(b + xf, t * scale) - b)
    assert list(frames[-1].data[0].x) == list(full.data[0].x)
    with pytest.raises(ValueError, match="one per time"):
        viz.timeline_steps(tr, times, titles=["a"])


def test_programs_figure_marks_the_masked_tail():
    @tl.jit
    def copy(x_ptr, o_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)

    x = np.arange(100, dtype=np.float32)
    run = copy[(tl.cdiv(100, 32),)](x, np.zeros_like(x), 100, BLOCK_SIZE=32)
    fig = viz.programs(run)
    z = np.array(fig.data[0].z)
    assert z.shape == (4, 32)
    assert z[:3].all() and z[3].sum() == 100 - 3 * 32  # the last program: 4 lanes active, 28 idle


def test_steps_by_count_show_what_was_enqueued_in_full():
    tr = small_trace()
    n = len(tr.events)
    frames = viz.timeline_steps(tr, [0.0, 0.0, 0.0], upto=[0, 2, n])
    shown = [sum(x is not None for t in f.data for x in t.x) for f in frames]
    assert shown == [0, 2, n]
    full = viz.timeline(tr)
    assert [list(t.x) for t in frames[-1].data] == [list(t.x) for t in full.data]
