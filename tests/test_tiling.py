"""GPU tiling (labsim.machines.tiling): resources, fit, traffic, intensity and the tuner, in closed form.

Notation: C[M, N] = A[M, K] @ B[K, N]; block tile BM × BN × BK, warp tile WM × WN, s bytes per element.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
from labsim.hardware import PRESETS

T = ls.tiling
H100 = PRESETS["H100 SXM"]


def test_shared_memory_closed_form_and_the_limit_by_name():
    # stages·(BM·BK + BK·BN)·s: 2·(128·32 + 32·128)·2 = 32 KiB
    p = T.plan(4096, 4096, 4096, (128, 128, 32))
    assert p.shared_bytes == 2 * (128 * 32 + 32 * 128) * 2 == 32 * 1024
    assert p.fits and p.shared_limit == 227 * 1024
    # 2·(256·128 + 128·256)·2 = 256 KiB > the 227 KiB an H100 block may use
    with pytest.raises(T.TilingError, match=r"256 KiB of shared memory exceeds the NVIDIA H100.*227 KiB per block"):
        T.plan(4096, 4096, 4096, (256, 256, 128))
    # 256×128×128: 2·(256·128 + 128·128)·2 = 192 KiB fits on H100 (227) but not on A100 (163)
    assert T.plan(4096, 4096, 4096, T.Tile(256, 128, 128, 64, 64)).shared_bytes == 192 * 1024
    assert T.plan(4096, 4096, 4096, T.Tile(256, 128, 128, 64, 64)).fits
    with pytest.raises(T.TilingError, match="192 KiB of shared memory exceeds the NVIDIA A100.*163 KiB per block"):
        T.plan(4096, 4096, 4096, T.Tile(256, 128, 128, 64, 64), "A100 80GB")


def test_other_impossible_tiles_name_their_limit():
    with pytest.raises(T.TilingError, match="does not divide the block tile"):
        T.plan(256, 256, 256, T.Tile(128, 128, 32, wm=48, wn=64))
    with pytest.raises(T.TilingError, match=r"16×8 tensor-core fragments"):
        T.plan(256, 256, 256, T.Tile(128, 128, 32, wm=64, wn=4))
    with pytest.raises(T.TilingError, match="multiple of the fragment's k = 16"):
        T.plan(256, 256, 256, (128, 128, 24))
    # a 128×256 warp tile holds 128·256/32 = 1024 accumulators per thread: over the 255-register limit
    with pytest.raises(T.TilingError, match="255"):
        T.plan(256, 256, 256, T.Tile(128, 256, 32, wm=128, wn=256))
    # 256×256 block of 16×8 warps = 16·32 = 512 warps = 16,384 threads
    with pytest.raises(T.TilingError, match="1024 threads per block"):
        T.plan(256, 256, 256, T.Tile(256, 256, 16, wm=16, wn=8, stages=1))
    with pytest.raises(T.TilingError, match="TPU"):
        T.plan(256, 256, 256, (128, 128, 32), "TPU v5e")
    with pytest.raises(T.TilingError, match="m must be a positive integer"):
        T.plan(0, 256, 256)


def test_registers_closed_form():
    # 64×64 warp tile: 64·64/32 = 128 accumulators + 2·(4·64/16 + 2·64/8) = 64 fragment registers + 16
    t = T.Tile(128, 128, 32)
    assert (t.wm, t.wn, t.warps) == (64, 64, 4)
    assert T.registers_per_thread(t) == 128 + 64 + 16
    p = T.plan(4096, 4096, 4096, t)
    assert p.threads == 128 and p.registers == 208


def test_occupancy_is_simt_occupancy():
    p = T.plan(4096, 4096, 4096, (128, 128, 32))
    occ = ls.simt.occupancy("H100 SXM", 128, 208, 32 * 1024)
    assert p.occupancy == occ
    # 208 registers round to 208·32 = 6656 per warp; 16384 / 6656 = 2 warps per sub-partition, 8 per SM
    assert occ.blocks_per_sm == 2 and p.concurrent == 2 * 132


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 5000), n=st.integers(1, 5000), k=st.integers(1, 5000),
       bm=st.sampled_from([32, 64, 128]), bn=st.sampled_from([32, 64, 128]))
def test_traffic_without_l2_is_the_panel_formula(m, n, k, bm, bn):
    # every block reads its row panel of A (BM·K) and column panel of B (K·BN): A is read ⌈N/BN⌉ times,
    # B ⌈M/BM⌉ times, C written once: s·(M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉) + s·M·N
    p = T.plan(m, n, k, (bm, bn, 32), l2=False)
    assert p.traffic == 2 * (m * k * math.ceil(n / bn) + k * n * math.ceil(m / bm)) + 2 * m * n
    assert p.intensity == pytest.approx(2 * m * n * k / p.traffic)
    # with L2 a wave's blocks share panels: never more traffic, never less than reading each input once
    q = T.plan(m, n, k, (bm, bn, 32))
    assert 2 * (m * k + k * n + m * n) <= q.traffic <= p.traffic


def test_l2_reads_each_wave_panel_once():
    # 1024×1024 of 128×128 tiles is an 8×8 grid = 64 blocks, all in one wave (264 resident on H100):
    # every row panel and every column panel is read once, as if there were no re-reading at all
    p = T.plan(1024, 1024, 1024, (128, 128, 32))
    assert p.waves == 1
    assert p.traffic == 2 * (1024 * 1024 * 3)


def test_tile_intensity_closed_form():
    # a BM×BN tile does 2·BM·BN·BK FLOPs per (BM + BN)·BK·s bytes copied in
    for bm, bn in [(32, 32), (128, 128), (128, 256)]:
        p = T.plan(4096, 4096, 4096, T.Tile(bm, bn, 32, min(bm, 64), min(bn, 64)))
        assert p.tile_intensity == pytest.approx(2 * bm * bn / (2 * (bm + bn)))
    small, big = (T.plan(4096, 4096, 4096, t, l2=False) for t in [(32, 32, 32), (128, 128, 32)])
    assert big.intensity > 3 * small.intensity  # 4× the tile edge cuts panel re-reads about 4×


def test_time_is_the_largest_term_and_single_stage_adds_the_copies():
    p = T.plan(4096, 4096, 4096, (128, 128, 32))
    assert p.time == max(p.compute_time, p.memory_time, p.shared_time)
    one = T.plan(4096, 4096, 4096, T.Tile(128, 128, 32, stages=1))
    assert one.time == pytest.approx(max(one.compute_time, one.shared_time) + one.memory_time)
    assert one.time > p.time


def test_compute_time_closed_form_with_waves():
    # 128×128 tiles, 2 per SM: 264 at once. M = N = 4096 is 32·32 = 1024 blocks = ⌈1024/264⌉ = 4 waves;
    # each SM runs 2 tiles per wave at peak/132: 4 · 2 · 2·128·128·K / (989.4e12/132)
    p = T.plan(4096, 4096, 4096, (128, 128, 32))
    assert p.waves == 4
    assert p.compute_time == pytest.approx(4 * 2 * 2 * 128 * 128 * 4096 / (989.4e12 / 132))
    # shared memory: K·s·((BM+BN) + warps·(WM+WN)) per block at 128 B per clock of 66.9e12/(132·128·2) Hz
    clock = 66.9e12 / (132 * 128 * 2)
    assert T.sm_clock(H100) == pytest.approx(clock)
    assert p.shared_time == pytest.approx(4 * 2 * 4096 * 2 * (256 + 4 * 128) / (128 * clock))


def test_bandwidth_control_moves_the_memory_time_only():
    a = T.plan(4096, 4096, 4096, (64, 64, 32))
    b = T.plan(4096, 4096, 4096, (64, 64, 32), bandwidth=H100.hbm_bandwidth / 4)
    assert b.memory_time == pytest.approx(4 * a.memory_time) and b.compute_time == a.compute_time


def test_tuner_returns_the_argmin_of_its_landscape():
    r = T.tune(2048, 2048, 2048)
    feasible = [p for p in r.landscape if p.fits]
    assert r.best.time == min(p.time for p in feasible)
    assert r.best in feasible and len(r.landscape) == len(T.space())
    assert r.rejected and all(p.problem and p.time == math.inf for p in r.rejected)
    rows, cols, z = r.grid()
    assert min(min(row) for row in z) == r.best.time
    i, j = rows.index(r.best.tile.bm), cols.index(r.best.tile.bn)
    assert z[i][j] == r.best.time


def test_tuner_on_a_small_space_and_no_fit():
    r = T.tune(1024, 1024, 1024, tiles=[(32, 32, 32), (128, 128, 32)])
    assert r.best.tile.bm == 128  # the bigger tile reads less and rereads less from shared memory
    with pytest.raises(T.TilingError, match="none of the 1 tiles fits"):
        T.tune(1024, 1024, 1024, tiles=[(256, 256, 128)])


def test_landscape_names_why_each_tile_was_rejected():
    r = T.tune(4096, 4096, 4096)
    limits = {p.limit for p in r.rejected}
    assert {"registers", "shared memory", "fragments"} <= limits
    assert all(p.limit is None for p in r.feasible)
    # every rejected shared-memory tile really exceeds the per-block limit, and no accepted one does
    assert all(p.shared_bytes > p.shared_limit for p in r.rejected if p.limit == "shared memory")
    assert all(p.shared_bytes <= p.shared_limit for p in r.feasible)


# ----------------------------------------------------------------------------------------------
# labsim's warpgroup (wgmma) variant on Hopper
def test_wgmma_registers_threads_and_shared_bytes_closed_form():
    t = T.Tile(128, 256, 64, 64, 256, 3)
    p = T.plan(4096, 4096, 4096, t, "H100 SXM", mma="wgmma")
    assert p.mma == "wgmma" and p.fits
    assert p.registers == 64 * 256 // 128 + T.ADDRESS_REGISTERS  # accumulator only, over 128 threads
    assert p.threads == 2 * 128  # two warpgroups of 4 warps
    assert p.shared_bytes == 3 * (128 * 64 + 64 * 256) * 2
    # each warpgroup reads its A rows and B columns once per k step, plus the tile copies in
    smem = 4096 * 2 * ((128 + 256) + 2 * (64 + 256))
    per_sm_blocks = -(-min(p.blocks, p.concurrent) // H100.compute_units)
    expect = p.waves * per_sm_blocks * smem / (T.SHARED_BYTES_PER_CLOCK * T.sm_clock(H100))
    assert p.shared_time == pytest.approx(expect, rel=1e-12)


def test_wgmma_reads_less_shared_memory_than_mma_sync_for_the_same_block():
    sync = T.plan(4096, 4096, 4096, T.Tile(128, 256, 64, 64, 64, 3))  # 8 warps of 64 × 64
    wg = T.plan(4096, 4096, 4096, T.Tile(128, 256, 64, 64, 256, 3), mma="wgmma")  # 2 warpgroups of 64 × 256
    assert wg.shared_time < sync.shared_time
    ratio = ((128 + 256) + 8 * (64 + 64)) / ((128 + 256) + 2 * (64 + 256))
    assert sync.shared_time / wg.shared_time == pytest.approx(ratio * sync.waves / wg.waves *
                                                             (-(-min(sync.blocks, sync.concurrent) // 132)) /
                                                             (-(-min(wg.blocks, wg.concurrent) // 132)), rel=1e-9)


def test_wgmma_tuner_is_not_limited_by_shared_memory_on_h100():
    sync = T.tune(4096, 4096, 4096, "H100 SXM").best
    wg = T.tune(4096, 4096, 4096, "H100 SXM", mma="wgmma").best
    assert sync.bound == "shared memory"
    assert wg.bound == "compute" and wg.time < sync.time
    assert wg.achieved_flops <= H100.matrix_flops["bfloat16"]


def test_wgmma_shapes_and_chips_are_checked_by_name():
    with pytest.raises(T.TilingError, match="wgmma m64nNk16"):
        T.plan(4096, 4096, 4096, T.Tile(128, 128, 32, 32, 128), mma="wgmma")  # M = 32 is not a multiple of 64
    with pytest.raises(T.TilingError, match="up to 256"):
        T.plan(4096, 4096, 4096, T.Tile(64, 512, 32, 64, 512), mma="wgmma")
    with pytest.raises(T.TilingError, match="compute capability 9.0"):
        T.plan(4096, 4096, 4096, (128, 128, 32), "A100 80GB", mma="wgmma")
    with pytest.raises(T.TilingError, match="mma must be one of"):
        T.plan(4096, 4096, 4096, (128, 128, 32), mma="hmma")
