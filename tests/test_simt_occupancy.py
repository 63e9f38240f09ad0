"""Occupancy (``ls.simt.occupancy``): expected values derived by hand from the published per-SM limits.

Limits used below (CUDA Programming Guide, technical specifications per compute capability; the
allocation rules of NVIDIA's occupancy calculator):
  cc 8.0 (A100), 9.0 (H100, H200), 10.0 (B200): 2,048 threads = 64 warps per SM, 32 blocks per SM,
  65,536 registers per SM in 4 sub-partitions of 16,384, registers allocated per warp in units of 256,
  at most 255 per thread and 65,536 per block, 1,024 threads per block;
  shared memory 228 KB per SM / 227 KB per block (9.0, 10.0), 164 KB / 163 KB (8.0), with 1 KB
  reserved per block and a 128-byte allocation unit.
"""
from __future__ import annotations

import pytest

import labsim as ls
from labsim.hardware import PRESETS
from labsim.machines.simt import Limiter, OccupancyError, occupancy

KB = 1024
GPUS = ["A100 80GB", "H100 SXM", "H200", "B200"]


def test_full_occupancy_256_threads_32_registers():
    # warps per block = 256/32 = 8. threads: 64 // 8 = 8 blocks.
    # registers: 32*32 = 1024 per warp (a multiple of 256); 16384 // 1024 = 16 warps per partition,
    #   x4 = 64 warps -> 64 // 8 = 8 blocks.
    # shared: 0 + 1024 reserved = 1024 bytes; 228*1024 // 1024 = 228 blocks. blocks: 32.
    # min = 8 blocks = 64 warps: 100 %; threads and registers both bind (threads listed first).
    o = occupancy("H100 SXM", threads_per_block=256, registers_per_thread=32)
    assert o.limits == {Limiter.THREADS: 8, Limiter.REGISTERS: 8, Limiter.SHARED_MEMORY: 228, Limiter.BLOCKS: 32}
    assert (o.blocks_per_sm, o.warps_per_sm, o.occupancy) == (8, 64, 1.0)
    assert o.limiters == (Limiter.THREADS, Limiter.REGISTERS) and o.limiter == "threads"


def test_registers_limit_with_granularity():
    # 96 threads = 3 warps; 37 registers: 37*32 = 1184, rounded up to 256 -> 1280 per warp.
    # 16384 // 1280 = 12 warps per sub-partition (12.8 rounded down), x4 = 48 warps -> 48 // 3 = 16 blocks.
    # threads: 64 // 3 = 21; shared: 228; blocks: 32. min = 16, registers bind: 48 warps = 75 %.
    o = occupancy("H100 SXM", threads_per_block=96, registers_per_thread=37)
    assert o.registers_per_warp == 1280
    assert o.limits[Limiter.REGISTERS] == 16 and o.limits[Limiter.THREADS] == 21
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (16, 48, Limiter.REGISTERS)
    assert o.occupancy == pytest.approx(0.75)


def test_granularity_costs_warps():
    # 33 registers: 33*32 = 1056 -> 1280 per warp (not 1056): 16384 // 1280 = 12 per partition = 48 warps.
    # Without the rounding it would be 16384 // 1056 = 15 -> 60 warps. 128 threads = 4 warps -> 12 blocks.
    o = occupancy("H100 SXM", threads_per_block=128, registers_per_thread=33)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (12, 48, "registers")


def test_shared_memory_limit_with_reservation_h100():
    # 48 KB requested + 1 KB reserved = 50,176 bytes (a multiple of 128).
    # 228*1024 = 233,472 // 50,176 = 4 blocks (4.65). threads: 256 threads = 8 warps -> 8 blocks;
    # registers at 64: 2048 per warp, 16384 // 2048 = 8 per partition = 32 warps -> 4 blocks.
    # Both registers and shared memory allow 4 -> 32 warps, 50 %.
    o = occupancy("H100 SXM", threads_per_block=256, registers_per_thread=64, shared_bytes_per_block=48 * KB)
    assert o.shared_per_block == 50_176
    assert o.limits[Limiter.SHARED_MEMORY] == 4 and o.limits[Limiter.REGISTERS] == 4
    assert o.limiters == (Limiter.REGISTERS, Limiter.SHARED_MEMORY)
    assert o.warps_per_sm == 32


def test_shared_memory_limit_a100_smaller_carveout():
    # A100: 164 KB per SM = 167,936 bytes; 48 KB + 1 KB = 50,176 -> 167,936 // 50,176 = 3 blocks (3.35).
    # registers 32 -> 8 blocks of 8 warps; threads 8. Shared memory binds alone: 3 x 8 = 24 warps.
    o = occupancy("A100 80GB", threads_per_block=256, registers_per_thread=32, shared_bytes_per_block=48 * KB)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter, o.limiters) == (3, 24, "shared memory", (Limiter.SHARED_MEMORY,))


def test_shared_memory_rounds_up_to_128_bytes():
    # 1 byte + 1,024 reserved = 1,025 -> 1,152 (9 x 128). 233,472 // 1,152 = 202 blocks by shared memory.
    o = occupancy("H100 SXM", threads_per_block=32, registers_per_thread=16, shared_bytes_per_block=1)
    assert o.shared_per_block == 1152 and o.limits[Limiter.SHARED_MEMORY] == 202


def test_blocks_limit_small_blocks():
    # 32 threads = 1 warp: threads allow 64 blocks, registers at 16 (512 per warp) allow 4*32 = 128
    # warps -> 128 blocks, shared 228; the 32-blocks-per-SM limit binds: 32 warps, 50 %.
    o = occupancy("H200", threads_per_block=32, registers_per_thread=16)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (32, 32, "blocks")
    assert o.occupancy == 0.5


def test_threads_limit_with_partial_warps():
    # 100 threads take 4 warp slots (ceil(100/32)); 64 // 4 = 16 blocks by threads; registers 32: 64 warps
    # -> 16 blocks (tie); shared 228; blocks 32. 16 blocks x 4 warps = 64 warp slots, 1,600 threads.
    o = occupancy("B200", threads_per_block=100, registers_per_thread=32)
    assert (o.warps_per_block, o.blocks_per_sm, o.threads_per_sm, o.warps_per_sm) == (4, 16, 1600, 64)
    assert o.limiter == Limiter.THREADS


def test_big_block_fits_once():
    # 1024 threads = 32 warps: 64 // 32 = 2 blocks by threads. 64 registers: 2048 per warp, 8 warps per
    # partition = 32 warps -> 1 block. The block's registers: 2048 x 32 = 65,536 = the per-block limit: fits.
    o = occupancy("A100 80GB", threads_per_block=1024, registers_per_thread=64)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (1, 32, "registers")


@pytest.mark.parametrize("kwargs, words", [
    (dict(threads_per_block=1025), ["1024 threads per block"]),
    (dict(threads_per_block=0), ["threads_per_block"]),
    (dict(registers_per_thread=256), ["255 registers per thread"]),
    (dict(registers_per_thread=0), ["registers_per_thread"]),
    (dict(shared_bytes_per_block=227 * KB + 1), ["232,448 bytes of shared memory per block"]),
    (dict(shared_bytes_per_block=-1), ["shared_bytes_per_block"]),
    # 1024 threads at 65 registers: 65*32 = 2080 -> 2304 per warp x 32 warps = 73,728 > 65,536.
    (dict(threads_per_block=1024, registers_per_thread=65), ["73,728 registers", "65,536 registers per block"]),
])
def test_impossible_launches_name_the_limit(kwargs, words):
    with pytest.raises(OccupancyError) as e:
        occupancy("H100 SXM", **kwargs)
    for w in words:
        assert w in str(e.value)


def test_a100_shared_per_block_limit_is_163_kb():
    occupancy("A100 80GB", shared_bytes_per_block=163 * KB)  # fits: 163 KB + 1 KB = the 164 KB SM
    with pytest.raises(OccupancyError, match="166,912 bytes"):
        occupancy("A100 80GB", shared_bytes_per_block=163 * KB + 1)


def test_non_gpu_and_non_integer_inputs():
    with pytest.raises(OccupancyError, match="no SM limits"):
        occupancy("TPU v5e")
    with pytest.raises(TypeError, match="threads_per_block must be an integer"):
        occupancy("H100 SXM", threads_per_block=128.0)
    with pytest.raises(ValueError, match="unknown chip"):
        occupancy("H1000")


@pytest.mark.parametrize("key", GPUS)
def test_every_gpu_preset_has_sourced_sm_limits(key):
    sm = PRESETS[key].sm
    assert sm is not None and sm.max_warps_per_sm == 64 and sm.registers_per_sm == 65536
    assert sm.shared_per_block < sm.shared_per_sm
    from tests.test_hardware import bib_keys
    keys = bib_keys()
    for what, src in sm.sources.items():
        head = src.split(",")[0].strip()
        assert head in keys or head.startswith("labsim assumption"), (key, what, src)
    for what in ("occupancy", "allocation", "fp32_lanes", "sfu_lanes", "tensor_cores", ):
        assert what in sm.sources, (key, what)


def test_alias_and_string_form():
    assert ls.simt.occupancy is occupancy
    o = ls.simt.occupancy("H100 SXM", threads_per_block=256, registers_per_thread=64, shared_bytes_per_block=48 * KB)
    assert str(o).startswith("4 blocks x 8 warps = 32 warps per SM (50% of 64)")
    assert [r[0] for r in o.rows()] == ["threads", "registers", "shared memory", "blocks"]


@pytest.mark.parametrize("threads, regs", [(1024, 64), (512, 128), (256, 255), (96, 255), (1000, 64)])
def test_max_registers_per_thread_fits_one_block(threads, regs):
    # 1024 threads = 32 warps: 65,536 / 32 = 2,048 registers per warp = 64 per thread.
    # 512 threads = 16 warps: 4,096 per warp = 128. 256 threads: 8,192 per warp > 255 x 32: 255.
    # 96 threads = 3 warps, rounded up to 4 sub-partitions: 16,384 per warp: 255.
    # 1000 threads = 32 warps (31.25 rounded up): 64.
    from labsim.machines.simt import max_registers_per_thread
    assert max_registers_per_thread("H100 SXM", threads) == regs
    occupancy("H100 SXM", threads_per_block=threads, registers_per_thread=regs)  # fits
    if regs < 255:
        with pytest.raises(OccupancyError, match="registers per block"):
            occupancy("H100 SXM", threads_per_block=threads, registers_per_thread=regs + 1)


def test_str_in_the_right_grammatical_number():
    one = ls.simt.occupancy("H100 SXM", threads_per_block=1024, registers_per_thread=64)
    assert str(one).startswith("1 block x 32 warps = 32 warps per SM"), str(one)
    tiny = ls.simt.occupancy("H100 SXM", threads_per_block=32, registers_per_thread=32)
    assert " x 1 warp = " in str(tiny), str(tiny)
