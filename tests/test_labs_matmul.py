"""Chapter 10's Boehm progression: steps 3-5 are kernels the SIMT machine runs, and their cycles feed the chart."""
import math

import numpy as np
import pytest

import labsim as ls
from labsim.models.labs_tiled import measure_tensor, measure_tiled, tiled_kernel

CHIP = "H100 SXM"
SECTORS = dict(naive_sectors=33792, coalesced_sectors=2080)  # any positive counts: steps 3-5 do not use them


@pytest.mark.parametrize("m, n, k, tile, per_thread", [
    (64, 32, 64, (32, 32, 32), (1, 1)),        # step 3: two blocks, two K tiles
    (128, 256, 16, (128, 128, 8), (8, 8)),     # step 4: two blocks along n, two K tiles
    (64, 32, 24, (32, 32, 8), (2, 2)),         # another register tile: two blocks, three K tiles
])
def test_tiled_kernel_gives_numpys_product(m, n, k, tile, per_thread):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    ir = tiled_kernel(m, n, k, tile, per_thread)
    out = ls.simt.run_ir(ir, {"a": a, "b": b}, CHIP, trace=False).outputs["c"].reshape(m, n)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)
    bm, bn, bk = tile
    tm, tn = per_thread
    # the unrolled loop: TM + TN shared loads and TM · TN multiply-adds per value of k
    assert sum(i.op == "ld" and "shared" in i.mod for i in ir.code) == bk * (tm + tn)
    assert sum(i.op == "mad" and "rn" in i.mod for i in ir.code) == bk * tm * tn
    assert ir.grid == (m // bm) * (n // bn) and ir.block == (bm // tm) * (bn // tn)


def test_measured_runs_equal_numpy_and_the_machine():
    for meas in (measure_tiled(CHIP, (32, 32, 32), (1, 1)), measure_tiled(CHIP, (128, 128, 8), (8, 8)),
                 measure_tensor(CHIP)):
        assert meas.max_error == 0.0  # inputs bfloat16 holds exactly: every product exact in float32
        assert meas.ks[1] == 2 * meas.ks[0] and meas.cycles[1] > meas.cycles[0] > 0
        assert meas.blocks_per_sm >= 1 and meas.hbm_bytes[1] > meas.hbm_bytes[0]
    # the recorded cycles are the machine's: rerun step 3's first wave by hand
    meas = measure_tiled(CHIP, (32, 32, 32), (1, 1))
    m, k = 32 * meas.blocks_per_sm, meas.ks[0]
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, 32)).astype(np.float32)
    run = ls.simt.run_ir(tiled_kernel(m, 32, k, (32, 32, 32)), {"a": a, "b": b}, CHIP, sms=1, trace=True)
    assert run.cycles == meas.cycles[0]  # cycles do not depend on the values
    assert run.transactions()["sectors"] * 32 == meas.hbm_bytes[0]


def test_the_chart_is_the_measured_cycles_extrapolated_by_waves():
    m = n = k = 4096
    steps = ls.labs.progression(m, n, k, CHIP, **SECTORS)
    chip = ls.hardware.get(CHIP)
    for s in steps[2:]:
        r = s.measured
        bm, bn = r.tile
        tiles = math.ceil(m / bm) * math.ceil(n / bn)
        waves = math.ceil(tiles / (chip.compute_units * r.blocks_per_sm))
        wave = r.cycles[0] + (r.cycles[1] - r.cycles[0]) / (r.ks[1] - r.ks[0]) * (k - r.ks[0])
        assert s.compute_time == pytest.approx(waves * wave / chip.sm_clock(), rel=1e-12)
        per_block = (r.hbm_bytes[0] + (r.hbm_bytes[1] - r.hbm_bytes[0]) / (r.ks[1] - r.ks[0]) * (k - r.ks[0])) \
            / r.blocks_per_sm
        assert s.memory_time == pytest.approx(tiles * per_block / chip.hbm_bandwidth, rel=1e-12)
        assert s.fraction == pytest.approx(s.flops / max(s.compute_time, s.memory_time) / s.peak)
    # Boehm's lesson in the machine's cycles: register tiles issue fewer cycles per FLOP than shared-memory tiles
    s3, s4 = steps[2].measured, steps[3].measured
    def per_flop(r):  # a wave's cycles per K step over its FLOPs per K step
        return (r.cycles[1] - r.cycles[0]) / (2 * r.tile[0] * r.tile[1] * r.blocks_per_sm * (r.ks[1] - r.ks[0]))
    assert per_flop(s4) < per_flop(s3) / 2
    # a deeper product costs more cycles per wave, and the chart follows
    deeper = ls.labs.progression(m, n, 2 * k, CHIP, **SECTORS)
    assert all(d.compute_time > s.compute_time for d, s in zip(deeper[2:], steps[2:]))


def test_bad_input_is_refused_by_name():
    with pytest.raises(ls.ArgumentError, match="m, n, k = 48, 32, 32 must be multiples"):
        tiled_kernel(48, 32, 32)
    with pytest.raises(ls.ArgumentError, match=r"per_thread=\(3, 1\)"):
        tiled_kernel(32, 32, 32, (32, 32, 32), (3, 1))
    with pytest.raises(ls.ArgumentError, match="tile=.*2048 threads"):
        tiled_kernel(64, 32, 32, (64, 32, 32), (1, 1))
    with pytest.raises(ls.ArgumentError, match=r"tile=\(16, 32, 4\).*split the A tile"):
        tiled_kernel(32, 64, 12, (16, 32, 4), (2, 2))
    with pytest.raises(ls.ArgumentError, match="k=0"):
        tiled_kernel(32, 32, 0)
    with pytest.raises(ls.ArgumentError, match=r"progression: reg_tile=\(128, 128, 8\)"):
        ls.labs.progression(64, 64, 64, CHIP, reg_tile=(128, 128, 8), **SECTORS)
    with pytest.raises(ls.ArgumentError, match="reg_depth must be at least 1"):
        ls.labs.progression(64, 64, 64, CHIP, reg_depth=0, **SECTORS)


def test_a_wrong_kernel_cannot_feed_the_chart():
    from labsim.machines.simt import run_ir
    from labsim.models.labs_tiled import _fit

    def off_by_one_run(blocks, k, rng, timed):  # the right kernel, with one output changed afterwards
        a, b = np.ones((32 * blocks, k), np.float32), np.ones((k, 32), np.float32)
        r = run_ir(tiled_kernel(32 * blocks, 32, k), {"a": a, "b": b}, CHIP, sms=1, trace=timed)
        out = r.outputs["c"].copy()
        out[5] += 1.0
        return r, 32 * blocks, out, a, b, 0
    with pytest.raises(ls.LabsimError, match="differs from NumPy's a @ b by 1 at K = 32"):
        _fit(CHIP, "broken", off_by_one_run, (32, 32), 32)


def test_tiled_kernel_refuses_bools_and_matrices_past_a_32_bit_index():
    from labsim.models.labs_tiled import tiled_kernel

    with pytest.raises(ls.ArgumentError, match="tile=.*three positive ints"):
        tiled_kernel(64, 64, 64, (True, 32, 32))
    with pytest.raises(ls.ArgumentError, match=r"more than the 2\*\*32"):
        tiled_kernel(2**17, 2**17, 32)
