"""Figures of the TPU and tiling chapters (labsim.viz.tpu): they draw what the machines computed."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("plotly")

import labsim as ls
from labsim.machines.tpu_trace import schedule_trace
from labsim import viz
from labsim.viz.palette import ROLE, TINT


def test_systolic_frames_follow_the_simulation():
    frames, cycles = viz.tpu.systolic_frames(3, "ws", 3)
    res = ls.systolic.simulate(*viz.tpu.systolic_example(3, 3), rows=3, cols=3, dataflow="ws")
    assert len(frames) == res.cycles == len(cycles) and cycles == list(range(1, res.cycles + 1))
    assert all([t.type for t in f.data] == ["heatmap", "scatter", "heatmap"] for f in frames)
    # the PE panel's blue cells (2) are exactly the multiply-adds of that cycle
    for t, f in enumerate(frames):
        assert (np.asarray(f.data[0].z) == 2).sum() == res.trace.mac[t].sum()
    # the last frame's output buffer holds A @ B, every cell marked final (2)
    a, b = viz.tpu.systolic_example(3, 3)
    last = frames[-1].data[2]
    assert np.all(np.asarray(last.z) == 2)
    assert [[float(x) for x in row] for row in last.text] == (a @ b).tolist()


def test_long_runs_are_sampled_to_the_step_limit():
    frames, cycles = viz.tpu.systolic_frames(4, "ws", 6, max_steps=20)
    total = ls.systolic.cycles(6, 6, 6, rows=4, cols=4, dataflow="ws")
    assert len(frames) <= 21 and cycles[0] == 1 and cycles[-1] == total


def test_systolic_animation_page_weight(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    anim = viz.tpu.systolic_animation(sizes=(3,), dataflows=("ws", "os"), matrix=(3,))
    html = anim._repr_mimebundle_()["text/html"]
    assert 0 < len(html) < 200_000  # 2 of the book's 12 combinations: well inside the 1 MB page budget


def test_systolic_animation_caption_follows_the_controls():
    """The caption quotes what the machine ran for the controls shown, in the right grammatical number."""
    anim = viz.tpu.systolic_animation(sizes=(3, 4), dataflows=("ws", "os"), matrix=(3, 5), name="fig-x")
    assert anim.name == "fig-x"
    for array, df, n in ((3, "ws", 3), (4, "os", 5)):
        r = ls.systolic.stats(n, n, n, rows=array, cols=array, dataflow=df)
        anim.update(array=array, dataflow=df, matrix=n)
        cap = anim.caption
        assert f"{array}×{array} systolic array" in cap and f"two {n}×{n} matrices" in cap
        assert f"{r.cycles} cycles" in cap and f"{r.utilization:.0%}" in cap
        assert f"in {r.folds} fold{'s' if r.folds != 1 else ''}," in cap
        assert anim.alt_text(array=array, dataflow=df, matrix=n) != anim.alt_text(array=3, dataflow="ws", matrix=3) \
            or (array, df, n) == (3, "ws", 3)


def test_systolic_animation_is_drawn_from_a_run_of_the_readers_function():
    """The frames come from ls.tpu.run of the traced function: its first MXU block, cycle by cycle."""
    import labsim.numpy as lnp

    def layer(x, w):
        return lnp.maximum(x @ w, 0)

    rng = np.random.default_rng(0)
    x, w = rng.integers(-3, 4, (5, 4)).astype(np.float32), rng.integers(-3, 4, (4, 6)).astype(np.float32)
    anim = viz.tpu.systolic_animation(layer, x, w, sizes=(2, 3), dataflows=("ws", "is"), matrix=(3, 4),
                                      name="fig-y")
    for array, df, n in ((2, "ws", 3), (3, "is", 4)):
        run = viz.tpu.systolic_run(layer, x, w, array=array, dataflow=df, matrix=n)
        xs, ws = x[:n, :n], w[:n, :n]
        np.testing.assert_array_equal(run.outputs, np.maximum(xs @ ws, 0))
        blk = run.blocks[0]
        assert blk.stats == ls.systolic.stats(n, n, n, rows=array, cols=array, dataflow=df)
        frames = anim.frames_for(array=array, dataflow=df, matrix=n)
        assert len(frames) == min(blk.stats.cycles, len(frames)) and len(frames) >= 2
        last = frames[-1].data[2]  # the output buffer holds the block's product, every cell final
        assert [[float(v) for v in row] for row in last.text] == (xs @ ws).tolist()
        anim.update(array=array, dataflow=df, matrix=n)
        assert f"{blk.stats.cycles} cycles" in anim.caption
    with pytest.raises(ValueError, match="no matrix product"):
        viz.tpu.systolic_run(lambda a: a + 1, x, matrix=3)
    with pytest.raises(ValueError, match="larger than an example"):
        viz.tpu.systolic_run(layer, x, w, matrix=6)


def test_tensorcore_numbers_come_from_the_preset():
    fig = viz.tpu.tensorcore("TPU v5e")
    text = " ".join(a.text for a in fig.layout.annotations)
    assert "128 MiB" in text and "4 MXUs of 128×128" in text and "819 GB/s" in text
    v6e = " ".join(a.text for a in viz.tpu.tensorcore("TPU v6e").layout.annotations)
    assert "256×256 (count not recorded)" in v6e and "not recorded" in v6e.split("VMEM")[1]
    assert {s.line.color for s in fig.layout.shapes} <= set(ROLE.values()) | {"#555555"}


def test_landscape_marks_the_tuners_choice():
    r = ls.tiling.tune(1024, 1024, 1024)
    fig = viz.tpu.tile_landscape(r)
    mark = fig.data[1]
    assert mark.x[0] == str(r.best.tile.bn) and mark.y[0] == str(r.best.tile.bm)
    z = fig.data[0].z
    assert min(v for row in z for v in row if v is not None) == 1.0  # normalised to the best time


def test_schedule_chart_and_tile_bars_draw():
    s = ls.tpu.schedule_dot(1024, 1024, 1024, "TPU v5e", blocks=(256, 256, 256))
    fig = viz.tpu.schedule_chart(s, most=8)
    # the schedule is drawn as a trace: viz.timeline's figure of the steps' events, copies and MXU work
    tr = schedule_trace(s, most=8)
    assert fig.to_dict() == viz.timeline(tr, height=fig.layout.height).to_dict()
    assert [t.name for t in fig.data] == ["copy", "compute"] and [u.kind for u in tr.units] == [ls.UnitKind.DMA, ls.UnitKind.MXU]
    mxu = tr.on(tr.units[1])
    assert [e.name for e in mxu] == [f"dot {st.index}" for st in s.steps[:8]]
    assert [(e.start, e.end) for e in mxu] == [st.compute for st in s.steps[:8]]  # no epilogue: all MXU
    copies = tr.of_kind(ls.EventKind.COPY)
    assert sum(e.nbytes for e in copies) == sum(st.load_bytes + st.store_bytes for st in s.steps[:8])
    assert len(schedule_trace(s).of_kind(ls.EventKind.COMPUTE)) == len(s.steps)
    with pytest.raises(ls.ArgumentTypeError, match="schedule_trace: sched must be a DotSchedule"):
        viz.tpu.schedule_chart("dot")
    with pytest.raises(ls.ArgumentError, match="schedule_trace: most must be at least 1, got 0"):
        viz.tpu.schedule_chart(s, most=0)
    p = ls.tiling.plan(4096, 4096, 4096, (128, 128, 32))
    bars = viz.tpu.tile_bars(p, max_time=1e-3)
    assert bars.data[0].x[0] == pytest.approx(p.compute_time * 1e6)
    assert bars.data[1].marker.color == ROLE["match"] and bars.data[1].x[0] == 32
    bad = ls.tiling.plan(4096, 4096, 4096, (256, 256, 128), check=False)
    assert viz.tpu.tile_bars(bad).data[1].marker.color == ROLE["mismatch"]
    # no times for a tile that cannot run; its HBM traffic over the bandwidth is still drawn (grey)
    x = list(viz.tpu.tile_bars(bad).data[0].x)
    assert x[0] == x[2] == 0 and x[1] == pytest.approx(bad.traffic / bad.bandwidth * 1e6)
    assert viz.tpu.tile_bars(bad).data[2].x[0] == bad.shared_limit / 1024
