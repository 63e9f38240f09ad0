"""``labsim.machines.splitk``: split-K and stream-K against closed forms and against ``tiling.plan``."""
from __future__ import annotations

import math

import pytest

import labsim as ls
from labsim.machines import splitk, tiling

H100 = ls.hardware.PRESETS["H100 SXM"]
M = N = 512
K = 16384
TILE = (128, 128, 32)


def _rates(p):
    sm = H100.sm
    feed = min(1.0, p.occupancy.warps_per_sm / sm.sub_partitions)
    return H100.matrix_flops["bfloat16"] / H100.compute_units * feed, tiling.SHARED_BYTES_PER_CLOCK * tiling.sm_clock(H100)


def test_one_split_is_tiling_plan():
    p = tiling.plan(M, N, K, TILE)
    s = splitk.split_k(M, N, K, 1, TILE)
    assert s.scheme == "tiles" and s.units == p.blocks == 16
    assert s.compute_time == pytest.approx(p.compute_time, rel=1e-12)
    assert s.shared_time == pytest.approx(p.shared_time, rel=1e-12)
    assert s.memory_time == pytest.approx(p.memory_time, rel=1e-12)
    assert s.time == pytest.approx(p.time, rel=1e-12)
    assert s.extra_time == 0 and s.extra_bytes == 0
    assert splitk.tiles_plan(M, N, K, TILE).time == s.time


@pytest.mark.parametrize("splits", [2, 4, 8])
def test_split_k_closed_form(splits):
    p = tiling.plan(M, N, K, TILE)
    per_sm, smem = _rates(p)
    s = splitk.split_k(M, N, K, splits, TILE)
    blocks = 16 * splits
    assert s.units == blocks and s.waves == 1 and s.busy_sms == blocks  # fewer blocks than SMs: one each
    chunk = K // splits
    assert s.compute_time == pytest.approx(2 * 128 * 128 * chunk / per_sm, rel=1e-12)
    tile = p.tile
    assert s.shared_time == pytest.approx(chunk * 2 * ((128 + 128) + tile.warps * (tile.wm + tile.wn)) / smem, rel=1e-12)
    partial = splits * M * N * 4
    inputs = p.traffic - 2 * M * N
    assert s.memory_time == pytest.approx((inputs + partial) / H100.hbm_bandwidth, rel=1e-12)
    assert s.extra_time == pytest.approx((partial + 2 * M * N) / H100.hbm_bandwidth, rel=1e-12)
    assert s.time == pytest.approx(max(s.compute_time, s.shared_time, s.memory_time) + s.extra_time)


def test_split_k_helps_a_small_gemm_and_stops_helping_past_the_sms():
    t = {s: splitk.split_k(M, N, K, s, TILE).time for s in (1, 2, 4, 8, 16)}
    assert t[1] > t[2] > t[4] > t[8]
    assert t[16] > t[8]  # 256 blocks on 264 slots: two per SM, no faster, and the partials cost more
    assert t[1] / t[8] > 4


def test_split_k_rounds_chunks_to_bk_and_rejects_empty_chunks():
    s = splitk.split_k(M, N, 1000, 3, TILE)  # ⌈1000/3⌉ = 334 -> 352 (11 steps of 32)
    p = tiling.plan(M, N, 1000, TILE)
    per_sm, _ = _rates(p)
    assert s.compute_time == pytest.approx(2 * 128 * 128 * 352 / per_sm, rel=1e-12)
    with pytest.raises(tiling.TilingError, match="empty chunk"):
        splitk.split_k(M, N, 64, 3, TILE)  # chunks of 32: the third would be empty
    for bad in (0, -1, 1.5, True):
        with pytest.raises(tiling.TilingError, match="splits"):
            splitk.split_k(M, N, K, bad, TILE)


def brute_fixups(tiles, ipt, workers):
    q = math.ceil(tiles * ipt / workers)
    owners = [i // q for i in range(tiles * ipt)]
    return sum(len(set(owners[t * ipt:(t + 1) * ipt])) - 1 for t in range(tiles))


@pytest.mark.parametrize("tiles,ipt,workers", [(16, 512, 264), (16, 512, 132), (7, 10, 3), (5, 4, 20), (100, 8, 132),
                                               (132, 16, 132), (1, 1, 1)])
def test_stream_k_fixups_brute_force(tiles, ipt, workers):
    assert splitk.stream_k_fixups(tiles, ipt, workers) == brute_fixups(tiles, ipt, workers)


def test_stream_k_closed_form():
    p = tiling.plan(M, N, K, TILE)
    per_sm, smem = _rates(p)
    sk = splitk.stream_k(M, N, K, TILE)
    workers = p.occupancy.blocks_per_sm * H100.compute_units
    iters = 16 * (K // 32)
    q = math.ceil(iters / workers)
    assert sk.units == workers and sk.busy_sms == H100.compute_units
    assert sk.compute_time == pytest.approx(p.occupancy.blocks_per_sm * 2 * 128 * 128 * 32 * q / per_sm, rel=1e-12)
    fix = splitk.stream_k_fixups(16, K // 32, workers)
    assert sk.extra_bytes == fix * 128 * 128 * 4 * 2
    assert sk.memory_time == pytest.approx((p.traffic + sk.extra_bytes) / H100.hbm_bandwidth, rel=1e-12)
    assert sk.time < splitk.tiles_plan(M, N, K, TILE).time / 3


def test_big_gemm_gains_nothing():
    # 4,096² output: 1,024 tiles already fill the SMs; split-K only adds partials
    t = splitk.compare(4096, 4096, 4096, 4, TILE)
    assert t["split-K"].time > t["tiles"].time


def test_bad_input_names_the_argument():
    with pytest.raises(tiling.TilingError, match="workers"):
        splitk.stream_k_fixups(4, 4, 0)
    with pytest.raises(tiling.TilingError, match="TPU"):
        splitk.stream_k(M, N, K, TILE, "TPU v5e")
