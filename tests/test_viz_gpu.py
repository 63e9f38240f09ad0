"""``labsim.viz.gpu``: the drawings of chapters 7 and 8 show the preset's numbers and the machine's results.

Every expected number here is read from the preset or the SIMT machine and compared with what the figure
draws, so a drawing that typed a number of its own (or stopped following the chip) fails.
"""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

import labsim as ls

go = pytest.importorskip("plotly.graph_objects")
gpu = pytest.importorskip("labsim.viz.gpu")
from labsim.viz.palette import ROLE  # noqa: E402

CHIPS = ls.hardware.PRESETS


def texts(fig) -> list[str]:
    return [re.sub(r"<[^>]+>", " ", a.text or "") for a in fig.layout.annotations]


def all_text(fig) -> str:
    return " | ".join(texts(fig)) + " | " + re.sub(r"<[^>]+>", " ", fig.layout.title.text or "")


def filled(fig, color: str) -> int:
    """Shapes filled with ``color``, and closed squares in filled traces of that colour (the SM drawing
    draws its lanes as one trace per colour: each square a closed path of five points, then a gap)."""
    n = sum(1 for s in fig.layout.shapes if (s.fillcolor or "").upper() == color.upper())
    for t in fig.data:
        if getattr(t, "fill", None) == "toself" and (t.fillcolor or "").upper() == color.upper():
            xs, ys = list(t.x), list(t.y)
            runs = [k for k, v in enumerate(xs) if v is None]
            assert [ys[k] for k in runs] == [None] * len(runs) and runs and runs[-1] == len(xs) - 1
            for a, b in zip([-1, *runs], runs):
                sq = list(zip(xs[a + 1:b], ys[a + 1:b]))
                assert len(sq) == 5 and sq[0] == sq[-1], f"not a closed square: {sq}"
                assert len({p[0] for p in sq}) == 2 and len({p[1] for p in sq}) == 2, f"not a rectangle: {sq}"
            n += len(runs)
    return n


# ----------------------------------------------------------------------------------------------
# the SM drawing
@pytest.mark.parametrize("name", ["H100 SXM", "A100 80GB", "H200"])
def test_sm_diagram_shows_the_presets_numbers(name):
    chip = CHIPS[name]
    sm = chip.sm
    fig = gpu.sm_diagram(chip)
    t = all_text(fig)
    p = sm.sub_partitions
    # per sub-partition: a quarter of the register file (4 bytes per 32-bit register), lanes and SFUs
    assert f"Registers {sm.registers_per_sm * 4 // p / 1024:,.0f} KiB" in t
    assert t.count(f"FP32 × {sm.fp32_lanes // p}") == p
    assert t.count(f"SFU × {sm.sfu_lanes // p}") == p
    assert t.count("Warp scheduler") == p and t.count("Dispatch unit") == p
    assert f"up to {sm.shared_per_sm / 1024:,.0f} KiB shared" in t
    assert f"one of {chip.compute_units:,} SMs" in t
    assert f"{chip.hbm_capacity / 2**30:,.0f} GiB · {chip.hbm_bandwidth / 1e12:,.2f} TB/s" in t
    if "L2" in chip.onchip:
        assert f"L2 cache · {chip.onchip['L2'] / 2**20:,.0f} MiB" in t
    else:
        assert "L2 cache (size not in the preset)" in t
    # one small square per FP32 lane and per SFU, in the "vector" colour
    assert filled(fig, ROLE["vector"]) == sm.fp32_lanes + sm.sfu_lanes
    assert chip.arch in t and sm.compute_capability in t


def test_sm_diagram_changes_with_the_chip():
    h, a = gpu.sm_diagram("H100 SXM"), gpu.sm_diagram("A100 80GB")
    # Hopper (cc 9.0) has 128 FP32 lanes per SM, Ampere (cc 8.0) 64: twice the squares
    assert CHIPS["H100 SXM"].sm.fp32_lanes == 2 * CHIPS["A100 80GB"].sm.fp32_lanes
    assert filled(h, ROLE["vector"]) - filled(a, ROLE["vector"]) == \
        CHIPS["H100 SXM"].sm.fp32_lanes - CHIPS["A100 80GB"].sm.fp32_lanes
    assert "FP32 × 32" in all_text(h) and "FP32 × 16" in all_text(a)


def test_sm_diagram_follows_an_edited_chip():
    """A chip that is not a preset: the drawing reads every number from the object it is given."""
    h = CHIPS["H100 SXM"]
    sm = dataclasses.replace(h.sm, fp32_lanes=256, sfu_lanes=32, registers_per_sm=131072, sub_partitions=4)
    chip = dataclasses.replace(h, sm=sm, compute_units=77, hbm_bandwidth=9.99e12)
    t = all_text(gpu.sm_diagram(chip))
    assert "FP32 × 64" in t and "SFU × 8" in t and "Registers 128 KiB" in t
    assert "one of 77 SMs" in t and "9.99 TB/s" in t
    assert "77 SMs" in gpu.sm_alt(chip)


def test_sm_diagram_without_a_sourced_sm_count():
    # every GPU preset now has a sourced SM count, so the test makes a chip without one (as a preset for a
    # part whose count no source gives would be)
    b = CHIPS["B200"]
    c = dataclasses.replace(b, compute_units=1,
                            sources={k: v for k, v in b.sources.items() if k != "compute_units"})
    assert "compute_units" not in c.sources
    t = all_text(gpu.sm_diagram(c))
    assert "SM count not in the preset" in t
    assert "no SM count" in gpu.sm_alt(c)


@pytest.mark.parametrize("name", ["TPU v5e", "CPU"])
def test_sm_diagram_of_a_chip_without_sms_names_the_problem(name):
    with pytest.raises(ValueError, match=r"chip\.sm is None"):
        gpu.sm_diagram(name)


def test_sm_alt_says_what_the_drawing_shows():
    c = CHIPS["H100 SXM"]
    alt = gpu.sm_alt(c)
    assert f"{c.sm.fp32_lanes // 4} FP32 lanes" in alt and f"{c.compute_units} SMs" in alt
    assert f"{c.hbm_bandwidth / 1e12:.2f} TB/s" in alt
    ls_viz = pytest.importorskip("labsim.viz")
    assert ls_viz.show(gpu.sm_diagram(c), alt=alt).alt == alt


# ----------------------------------------------------------------------------------------------
# occupancy
@pytest.mark.parametrize("tpb, regs, smem", [(256, 64, 0), (128, 32, 48 * 1024), (64, 16, 0), (1024, 32, 0)])
def test_occupancy_figure_draws_the_machines_limits(tpb, regs, smem):
    occ = ls.simt.occupancy("H100 SXM", threads_per_block=tpb, registers_per_thread=regs,
                            shared_bytes_per_block=smem)
    fig = gpu.occupancy_figure(occ)
    bar = fig.data[0]
    assert list(bar.x) == list(occ.limits.values())
    binding = {str(k) for k in occ.limiters}
    for name, color in zip(bar.y, bar.marker.color):
        assert color == (ROLE["mismatch"] if name in binding else ROLE["match"]), name
    assert f"{occ.warps_per_sm} of {occ.max_warps_per_sm} warps" in fig.layout.title.text


def test_occupancy_figure_marks_the_limiter_for_each_resource():
    """One launch per resource, chosen so that resource binds (numbers from the H100's cc 9.0 limits)."""
    cases = {
        "threads": dict(threads_per_block=1024, registers_per_thread=32),  # 2 blocks of 32 warps = 64 warps
        "registers": dict(threads_per_block=256, registers_per_thread=128),  # 4096 regs/warp: 16 warps
        "shared memory": dict(threads_per_block=128, registers_per_thread=32, shared_bytes_per_block=100 * 1024),
        "blocks": dict(threads_per_block=32, registers_per_thread=32),  # 32 blocks of 1 warp
    }
    for want, kw in cases.items():
        occ = ls.simt.occupancy("H100 SXM", **kw)
        fig = gpu.occupancy_figure(occ)
        marked = [n for n, c in zip(fig.data[0].y, fig.data[0].marker.color) if c == ROLE["mismatch"]]
        assert want in marked, (want, marked, str(occ))


# ----------------------------------------------------------------------------------------------
# waves
@pytest.mark.parametrize("blocks, sms, k", [(1000, 132, 4), (528, 132, 4), (1, 132, 4), (133, 132, 1), (7, 3, 2)])
def test_wave_counts_closed_form(blocks, sms, k):
    """waves = ceil(B / (S k)); every wave but the last is full (S k blocks); the last holds the rest,
    B - (waves - 1) S k, spread so that no SM holds more than one block more than another."""
    waves = gpu.wave_counts(blocks, sms, k)
    assert len(waves) == math.ceil(blocks / (sms * k))
    assert sum(map(sum, waves)) == blocks
    assert all(sum(w) == sms * k for w in waves[:-1])
    assert sum(waves[-1]) == blocks - (len(waves) - 1) * sms * k
    assert max(waves[-1]) - min(waves[-1]) <= 1 and max(waves[-1]) <= k


@pytest.mark.parametrize("bad", [dict(blocks=0), dict(sms=-1), dict(blocks_per_sm=1.5)])
def test_wave_counts_rejects_bad_input_by_name(bad):
    kw = dict(blocks=10, sms=4, blocks_per_sm=2) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        gpu.wave_counts(**kw)


def test_waves_figure_shows_the_tail():
    occ = ls.simt.occupancy("H100 SXM", threads_per_block=256, registers_per_thread=64)
    sms = CHIPS["H100 SXM"].compute_units
    slots = sms * occ.blocks_per_sm
    blocks = 2 * slots + slots // 4
    fig = gpu.waves_figure("H100 SXM", blocks, occ.blocks_per_sm)
    busy, idle = fig.data
    assert list(busy.x) == [slots, slots, slots // 4]
    assert list(idle.x) == [0, 0, slots - slots // 4]
    assert busy.marker.color == ROLE["compute"] and idle.marker.color == ROLE["idle"]
    assert "3 waves" in fig.layout.title.text and "25% full" in fig.layout.title.text


# ----------------------------------------------------------------------------------------------
# coalescing
@pytest.mark.parametrize("stride, offset", [(1, 0), (2, 0), (32, 0), (1, 1), (4, 8)])
def test_coalescing_figure_marks_the_sectors_the_machine_counts(stride, offset):
    e = ls.simt.strided_kernel(stride, offset=offset)
    run = ls.simt.run_ir(e.ir, e.inputs, "H100 SXM", sms=1, trace=False)
    counted = run.transactions(pc=e.info["load_pc"])
    fig = gpu.coalescing_figure(ls.simt.warp_addresses(stride, offset, 4), 4, counted)
    sectors, ticks, links, lanes = fig.data[:4]
    assert list(sectors.marker.color).count(ROLE["memory"]) == counted["sectors"]
    xs = [x for x in ticks.x if x is not None]
    assert (max(xs) - min(xs)) / 128 >= counted["lines"]  # the drawn line boundaries enclose every line touched
    assert f"{counted['sectors']} sector" in fig.layout.title.text and f"in {counted['lines']} line" in fig.layout.title.text
    assert len(lanes.x) == 32  # one marker per lane
    assert len([x for x in links.x if x is None]) == 32  # one link from each lane to its bytes


def test_coalescing_figure_rejects_more_than_a_warp():
    with pytest.raises(ValueError, match="1 to 32 lanes"):
        gpu.coalescing_figure(list(range(0, 33 * 4, 4)), 4, {"sectors": 5, "lines": 2})


# ----------------------------------------------------------------------------------------------
# the scheduler animation
@pytest.fixture(scope="module")
def latency_run():
    e = ls.simt.latency_kernel(2, 2, warps=4)
    return ls.simt.run_ir(e.ir, e.inputs, "H100 SXM", sms=1, schedulers=1, policy="lrr",
                          timing=ls.simt.Timing(memory=30))


def test_schedule_grid_is_the_trace(latency_run):
    tr = latency_run.trace
    grid, labels = gpu.schedule_grid(latency_run)
    assert labels == [f"warp {w}" for w in range(4)] + ["issue slot"]
    assert grid.shape == (5, tr.cycles)
    issued = np.isin(grid, (1, 2))  # arithmetic or load/store issued
    # the issue-slot row is filled exactly in the cycles the scheduler issued, once per issue
    assert issued[-1].sum() == len(tr.issue_cycle) == len(set(tr.issue_cycle.tolist()))
    assert set(np.flatnonzero(issued[-1])) == set(tr.issue_cycle.tolist())
    for c, w, pc in zip(tr.issue_cycle, tr.issue_warp, tr.issue_pc):
        assert grid[w, c] == (2 if tr.pipes[pc] == "mem" else 1)
    # every cycle a warp waited for memory in the trace is a "waiting for memory" cell
    assert ((tr.state.T == ls.simt.Stall.MEMORY) == (grid[:-1] == 4)).all()


def test_schedule_frames_reveal_the_run(latency_run):
    tr = latency_run.trace
    frames = gpu.schedule_frames(latency_run, steps=10)
    cuts = gpu.schedule_steps(tr.cycles, 10)
    assert len(frames) == len(cuts) == 10 and cuts[-1] == tr.cycles
    grid, _ = gpu.schedule_grid(latency_run)
    for f, t in zip(frames, cuts):
        assert [d.type for d in f.data] == [d.type for d in frames[0].data]
        z = np.asarray(f.data[0].z)
        assert z.shape[1] == t and (z == grid[:, :t]).all()
        used = int((tr.issue_cycle < t).sum())
        assert f"cycle {t} of {tr.cycles}<br>issue slots used: {used} of {t}" in f.layout.annotations[0].text
    # at the end: the machine's issue utilisation
    assert f"({tr.issue_utilisation():.0%})" in frames[-1].layout.annotations[0].text


def test_schedule_frames_make_an_animation(latency_run, monkeypatch):
    lv = pytest.importorskip("labsim.viz")
    anim = lv.animate(lambda: gpu.schedule_frames(latency_run, steps=6), alt="a scheduler")
    monkeypatch.setenv("LABSIM_BOOK", "1")
    page = anim.to_html()
    assert page.count('"frames"') >= 1 and "a scheduler" in page


def test_schedule_grid_needs_a_trace():
    e = ls.simt.latency_kernel(1, 1, warps=1)
    run = ls.simt.run_ir(e.ir, e.inputs, "H100 SXM", sms=1, trace=False)
    with pytest.raises(ValueError, match="no trace"):
        gpu.schedule_grid(run)
    with pytest.raises(ValueError, match="cycles and steps"):
        gpu.schedule_steps(0, 4)


# ----------------------------------------------------------------------------------------------
# the divergence animation
@pytest.mark.parametrize("pattern", ["contiguous", "interleaved"])
@pytest.mark.parametrize("a, b", [(4, 6), (2, 3)])
def test_divergence_frames_show_both_paths_serialised(pattern, a, b):
    """16 of 32 lanes take the if: the warp issues 9 instructions before the branch, the a-instruction if
    path with the 16 taking lanes, the b-instruction else path plus its jump with the other 16, then the
    store and exit with all 32 (the closed form of the machine's tests): 9 + a + b + 1 + 2 rows."""
    e = ls.simt.divergent_kernel(a, b, pattern=pattern, taken=16)
    run = ls.simt.run_ir(e.ir, e.inputs, "H100 SXM", sms=1)
    lanes, text, active, pcs = gpu.divergence_grid(run)
    assert len(text) == 9 + a + b + 1 + 2
    taken = e.info["taken"]
    (i0, i1), (e0, e1) = e.info["paths"]["if"], e.info["paths"]["else"]
    for row, pc in zip(lanes, pcs):
        if i0 <= pc < i1:
            assert (row.astype(bool) == taken).all()
        elif e0 <= pc < e1:
            assert (row.astype(bool) == ~taken).all()
        else:
            assert row.all()
    cond = e.inputs["x"][:32] > 0
    frames = gpu.divergence_frames(run, paths=e.info["paths"], condition=cond)
    assert len(frames) == len(text)
    for k, f in enumerate(frames):
        z = np.asarray(f.data[0].z)
        assert z.shape == (len(text) + 1, 32)
        assert ((z[0] == 3) == taken).all()  # the condition row marks the lanes that take the if
        assert (z[1:k + 2] == lanes[:k + 1] + 1).all() and (z[k + 2:] == 0).all()  # issued rows, then blank
        assert f.layout.shapes[0].y0 == k + 0.5  # the current instruction is outlined (row k + 1)
    last = frames[-1].layout.annotations[0].text
    assert f"lane utilisation so far {run.trace.lane_utilisation():.0%}" in last
    # lane utilisation = active lanes / 32 averaged over issued instructions
    assert run.trace.lane_utilisation() == pytest.approx(active.sum() / (32 * len(text)))
    labels = list(frames[0].data[0].y)[1:]
    assert len(set(labels)) == len(labels)  # numbered: one category per issued instruction
    assert sum("(if)" in t for t in labels) == a and sum("(else)" in t for t in labels) == b + 1
    assert any("reconverged" in f.layout.annotations[0].text for f in frames)


def test_divergence_frames_of_a_select_have_no_masks():
    e = ls.simt.divergent_kernel(4, 6, taken=16, select=True)
    run = ls.simt.run_ir(e.ir, e.inputs, "H100 SXM", sms=1)
    lanes, *_ = gpu.divergence_grid(run)
    assert lanes.all()
    assert not any("reconverged" in f.layout.annotations[0].text for f in gpu.divergence_frames(run))


def test_launch_figure_names_the_broken_limit():
    fig = gpu.launch_figure("H100 SXM", 512, 255, 0)  # 512 x 255 rounded up per warp > 65,536 per block
    note = [a for a in fig.layout.annotations if "cannot run" in (a.text or "")][0]
    assert "65,536 registers per block" in note.text.replace("<br>", " ")
    assert note.font.color == ROLE["mismatch"]
    bar = fig.data[0]
    asks = dict(zip(bar.y, bar.x))
    assert asks["registers"] == pytest.approx(100 * 512 * 255 / 65536)  # the broken limit, over 100 %
    assert asks["threads"] == pytest.approx(50.0) and asks["shared memory"] == 0
    colors = dict(zip(bar.y, bar.marker.color))
    assert colors["registers"] == ROLE["mismatch"] and colors["threads"] == ROLE["match"]
    # the data follow every control, so a widget shows each change even when no block fits
    other = gpu.launch_figure("H100 SXM", 512, 255, 64 * 1024).data[0]
    assert list(other.x) != list(bar.x)


def test_launch_figure_draws_every_combination_of_the_chapters_widget():
    """Chapter 7's occupancy widget: every combination of its controls gives a figure (no exception)."""
    import itertools
    for tpb, regs, kib in itertools.product([64, 256, 1024], [32, 64, 128, 255], [0, 32, 100]):
        fig = gpu.launch_figure("H100 SXM", tpb, regs, kib * 1024)
        assert fig.data or fig.layout.annotations


# ----------------------------------------------------------------------------------------------
# titles and captions in the right grammatical number, following the values drawn
def test_occupancy_title_says_1_block_not_1_blocks():
    occ = ls.simt.occupancy(CHIPS["H100 SXM"], threads_per_block=1024, registers_per_thread=64)
    assert occ.blocks_per_sm == 1
    t = gpu.occupancy_title(occ)
    assert t.startswith("1 block × 32 warps") and "1 blocks" not in t
    fig = gpu.launch_figure("H100 SXM", 1024, 64)
    assert "1 block ×" in fig.layout.title.text and "1 block ← binds" in " ".join(fig.data[0].text)
    assert "4 blocks ×" in gpu.launch_figure("H100 SXM", 256, 64).layout.title.text


def test_sm_caption_follows_the_chip():
    for name in ("H100 SXM", "A100 80GB"):
        chip = CHIPS[name]
        c = gpu.sm_caption(name)
        assert chip.name in c and chip.arch in c and f"{chip.compute_units:,} SMs" in c
        assert f"{chip.sm.fp32_lanes // chip.sm.sub_partitions} FP32 lanes" in c
    assert "Hopper" not in gpu.sm_caption("A100 80GB") and "Ampere" not in gpu.sm_caption("H100 SXM")


def test_waves_title_plural():
    chip = CHIPS["H100 SXM"]
    assert gpu.waves_figure(chip, 1, 4).layout.title.text.startswith("1 block in 1 wave;")
    assert gpu.waves_figure(chip, 1000, 4).layout.title.text.startswith("1,000 blocks in 2 waves")


# ----------------------------------------------------------------------------------------------
# gpu_extra: Little's law and split-K
extra = pytest.importorskip("labsim.viz.gpu_extra")


@pytest.mark.parametrize("name,bpt", [("H100 SXM", 4), ("A100 80GB", 16)])
def test_inflight_figure_draws_littles_law(name, bpt):
    from labsim.machines.inflight import littles_law

    f = littles_law(name)
    fig = extra.inflight_figure(name, bpt)
    line, pts = fig.data[0], fig.data[1]
    for x, y in zip(line.x, line.y):
        assert y == pytest.approx(min(f.bandwidth, f.sms * x * 1024 / f.latency) / 1e12)
    assert list(pts.x) == pytest.approx([t * bpt / 1024 for t in extra.OCCUPANCY_THREADS])
    cap = extra.inflight_caption(name, bpt)
    assert f.chip in cap and f"{f.sm_bytes / 1024:.1f} KiB" in cap
    assert (f"{bpt} bytes in flight" if bpt != 1 else "1 byte in flight") in cap
    for t in extra.OCCUPANCY_THREADS:
        assert f"{f.achieved_bandwidth(t * bpt) / 1e12:.2f}" in cap
    assert extra.inflight_caption("H100 SXM", 1).count("1 byte in flight") == 1


def test_splitk_figure_and_caption_quote_the_model():
    from labsim.machines import splitk

    plans = splitk.compare(512, 512, 16384, 4)
    fig = extra.splitk_figure(512, 512, 16384, 4)
    totals = [a + b for a, b in zip(fig.data[0].x, fig.data[1].x)]
    assert totals == pytest.approx([p.time * 1e6 for p in plans.values()])
    cap = extra.splitk_caption(512, 512, 16384, 4)
    for p in plans.values():
        assert f"{p.time * 1e6:,.1f} µs" in cap
    assert "64 blocks" in cap and "Split-K into 4" in cap
    assert "Split-K into 1 is the plain GEMM" in extra.splitk_caption(512, 512, 16384, 1)


def test_divergence_note_says_1_lane():
    e = ls.simt.divergent_kernel(2, 2, pattern="contiguous", taken=1)
    r = ls.simt.run_ir(e.ir, e.inputs, CHIPS["H100 SXM"], sms=1)
    notes = [f.layout.annotations[0].text for f in gpu.divergence_frames(r, paths=e.info["paths"])]
    assert any(": 1 lane<br>" in n for n in notes) and not any(re.search(r"\b1 lanes", n) for n in notes)
    assert any(": 31 lanes<br>" in n for n in notes)
