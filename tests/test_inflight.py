"""``labsim.machines.inflight``: Little's law against its closed form."""
from __future__ import annotations

import pytest

import labsim as ls
from labsim.machines import inflight, tiling

H100 = ls.hardware.PRESETS["H100 SXM"]


def test_defaults_are_the_machines_latency_and_the_presets_clock_and_bandwidth():
    f = inflight.littles_law("H100 SXM")
    assert f.latency_cycles == ls.simt.Timing().memory
    assert f.clock == pytest.approx(tiling.sm_clock(H100))
    assert f.bandwidth == H100.hbm_bandwidth and f.sms == H100.compute_units
    assert f.chip_bytes == pytest.approx(H100.hbm_bandwidth * f.latency_cycles / f.clock)
    assert f.sm_bytes == pytest.approx(f.chip_bytes / H100.compute_units)


def test_review_example():
    # 3.35 TB/s x 400 cycles at 1.8 GHz ~ 0.75 MB chip-wide, ~5.6 KB per SM (review item 11)
    f = inflight.littles_law("H100 SXM", latency_cycles=400, clock=1.8e9, bandwidth=3.35e12)
    assert f.chip_bytes == pytest.approx(3.35e12 * 400 / 1.8e9)
    assert 0.74e6 < f.chip_bytes < 0.75e6 and 5.6e3 < f.sm_bytes < 5.7e3


def test_achieved_bandwidth_is_min_of_two_lines():
    f = inflight.littles_law("A100 80GB")
    assert f.achieved_bandwidth(0) == 0
    assert f.achieved_bandwidth(f.sm_bytes / 2) == pytest.approx(f.bandwidth / 2)
    assert f.achieved_bandwidth(f.sm_bytes) == pytest.approx(f.bandwidth)
    assert f.achieved_bandwidth(10 * f.sm_bytes) == f.bandwidth
    with pytest.raises(ValueError, match="in_flight_per_sm"):
        f.achieved_bandwidth(-1)


def test_loads_per_thread():
    f = inflight.littles_law("H100 SXM", latency_cycles=400, clock=2e9, bandwidth=132 * 4096 * 2e9 / 400)
    assert f.sm_bytes == pytest.approx(4096)
    assert f.loads_per_thread(1024, 4) == 1  # 4 bytes per thread: exactly one float
    assert f.loads_per_thread(256, 4) == 4
    assert f.loads_per_thread(256, 16) == 1
    assert f.loads_per_thread(100, 4) == 11  # 40.96 bytes -> 11 loads
    with pytest.raises(ValueError, match="threads_per_sm"):
        f.loads_per_thread(0)
    with pytest.raises(ValueError, match="bytes_per_load"):
        f.loads_per_thread(64, 0)


@pytest.mark.parametrize("kw", [dict(latency_cycles=0), dict(clock=-1.0), dict(bandwidth="fast")])
def test_bad_input_names_the_argument(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        inflight.littles_law("H100 SXM", **kw)


def test_littles_law_refuses_a_chip_without_sms_by_its_own_name():
    with pytest.raises(ValueError, match=r"littles_law: .*TPU v5e has no SMs"):
        ls.inflight.littles_law("TPU v5e")
