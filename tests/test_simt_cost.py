"""The roofline's GPU terms taught by the SIMT machine (``ls.cost.gpu_terms``): tail waves,
occupancy-limited bandwidth (Little's law) and the SFU rate, each derived by hand below."""
from __future__ import annotations

import math

import pytest

import labsim as ls
import labsim.numpy as lnp

S = ls.ShapeDtype


def _fma(shape):
    return ls.compile(ls.trace(lambda x, y, z: lnp.maximum(x * y + z, 0.0), *[S(shape)] * 3)).kernels[0]


def test_tail_waves():
    # H100: 132 SMs. The loop kernel has 256 threads per block and few registers, so the thread limit
    # binds: 2048 / 256 = 8 blocks per SM, 8 x 132 = 1,056 blocks per wave.
    # 1,056 x 256 + 1 elements -> 1,057 blocks -> 2 waves, the second holding one block:
    # efficiency 1057 / 2112 = 0.5005; the compute time doubles (almost).
    k = _fma((1056 * 256 + 1,))
    t = ls.cost.gpu_terms(k, "H100 SXM")
    assert (t.blocks, t.blocks_per_sm, t.sms, t.waves) == (1057, 8, 132, 2)
    assert t.wave_efficiency == pytest.approx(1057 / 2112)
    assert t.compute_time == pytest.approx(t.base.compute_time * 2112 / 1057)
    # exactly one full wave: efficiency 1
    assert ls.cost.gpu_terms(_fma((1056 * 256,)), "H100 SXM").wave_efficiency == 1.0


def test_occupancy_limited_bandwidth_littles_law():
    # 4 blocks of 256 threads (1,000 elements), each thread loads x, y, z (12 bytes) before using them:
    # in flight 4 x 256 x 12 = 12,288 bytes; at 600 ns latency that sustains 12,288 / 600e-9 = 20.48 GB/s,
    # far below the 3.35 TB/s of HBM: a small kernel cannot fill the memory pipe.
    k = _fma((1000,))
    t = ls.cost.gpu_terms(k, "H100 SXM")
    assert t.bytes_in_flight_per_thread == 12
    assert t.in_flight == 4 * 256 * 12
    assert t.bandwidth == pytest.approx(12288 / 600e-9)
    assert t.memory_time == pytest.approx(k.bytes / (12288 / 600e-9))
    # a big kernel has W x L = 3.35e12 x 600e-9 = 2.01 MB in flight easily (1,056 x 256 x 12 = 3.2 MB):
    big = ls.cost.gpu_terms(_fma((1024, 1024)), "H100 SXM")
    assert big.bandwidth == big.peak_bandwidth == 3.35e12
    # with a 4x longer latency the same kernel no longer can: 3.24 MB / 2.4 us = 1.35 TB/s
    slow = ls.cost.gpu_terms(_fma((1024, 1024)), "H100 SXM", memory_latency=2.4e-6)
    assert slow.bandwidth == pytest.approx(1056 * 256 * 12 / 2.4e-6)


def test_sfu_term_is_the_roofline_special_time():
    # exp on 1M elements: 1M transcendentals at H100's 3.9 T/s = 0.27 us, next to 8 MB of traffic
    k = ls.compile(ls.trace(lambda x: lnp.exp(x), S((1024, 1024)))).kernels[0]
    t = ls.cost.gpu_terms(k, "H100 SXM")
    assert t.special_time == pytest.approx(2**20 / 3.9e12)
    # the machine's own ratio: 16 SFU results per clock per SM against 128 FMA lanes on H100
    sm = ls.hardware.get("H100 SXM").sm
    assert sm.fp32_lanes // sm.sfu_lanes == 8


def test_existing_roofline_numbers_are_unchanged():
    k = _fma((1024, 1024))
    c = ls.cost.kernel_cost(k, "H100 SXM")
    assert ls.cost.gpu_terms(k, "H100 SXM").base == c
    assert c.memory_time == pytest.approx(k.bytes / 3.35e12)


def test_not_a_gpu():
    with pytest.raises(ValueError, match="not a GPU"):
        ls.cost.gpu_terms(_fma((100,)), "TPU v5e")
