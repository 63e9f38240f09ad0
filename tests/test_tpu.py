"""The TPU TensorCore model (labsim.machines.tpu): values against NumPy, counts and times in closed form.

Notation: a product [m, k] @ [k, n] on an MXU of R × C cells, VMEM blocks bm × bn × bk, HBM bandwidth W,
peak matrix rate P, s bytes per input element, s_out per output element.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
import labsim.numpy as lnp
from labsim.hardware import PRESETS

V5E, V6E = PRESETS["TPU v5e"], PRESETS["TPU v6e"]


def up(x, m):
    return -(-x // m) * m


def test_mxu_shapes_and_the_v5e_clock_agree_with_the_peak():
    # 4 MXUs x 128 x 128 MACs x 2 FLOP per MAC x 1.5 GHz = 1.966e14 FLOP/s: the datasheet's 197 TFLOP/s
    assert V5E.matrix_unit == (128, 128) and V6E.matrix_unit == (256, 256)
    core = ls.tpu.TensorCore.of("TPU v5e")
    assert core.mxus * 128 * 128 * 2 * core.clock == pytest.approx(V5E.matrix_flops["bfloat16"], rel=0.005)
    assert core.vmem == 128 * 2**20


def test_a_gpu_is_refused_by_name():
    with pytest.raises(ls.tpu.TPUError, match="H100.*not a TPU"):
        ls.tpu.TensorCore.of("H100 SXM")


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 300), k=st.integers(1, 300),
       blk=st.sampled_from([(8, 128, 128), (64, 128, 256), (128, 256, 128), (512, 512, 512)]),
       chip=st.sampled_from(["TPU v5e", "TPU v6e"]), double=st.booleans())
def test_blockwise_product_equals_numpy(m, n, k, blk, chip, double):
    # shapes that do not divide the blocks or the MXU included: the padding must not leak into the result
    rng = np.random.default_rng(m * 1000 + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out, sched = ls.tpu.run_dot(a, b, chip, blocks=blk, double_buffer=double)
    # the MXU rounds float32 operands to bfloat16 (one pass at the default precision) and sums in float32
    dims = {"contracting": ((1,), (0,)), "batch": ((), ()), "precision": "default"}
    assert (np.abs(out - a @ b) <= ls.tpu.dot_tolerance(a, b, dims, "float32")).all()
    hi, _ = ls.tpu.run_dot(a, b, chip, blocks=blk, double_buffer=double, precision="highest")
    np.testing.assert_allclose(hi, a @ b, rtol=1e-4, atol=1e-4)  # six bf16 passes: float32 accuracy
    assert sched.flops == 2 * m * n * k


@pytest.mark.parametrize("m, n, k", [(1024, 1024, 1024), (1000, 700, 300), (8, 128, 128), (130, 130, 130)])
def test_folds_and_utilization_closed_form(m, n, k):
    # weight-stationary: every step loads ceil(depth/R)·ceil(cols/C) weight tiles. With one block
    # edge a multiple of the MXU, the k and n blocks cover K and N exactly once per block row, so
    # folds = ceil(m/bm) · ceil(k/R) · ceil(n/C) when bn, bk are multiples of C, R.
    s = ls.tpu.schedule_dot(m, n, k, "TPU v5e", blocks=(256, 256, 256))
    assert s.folds == math.ceil(m / 256) * math.ceil(k / 128) * math.ceil(n / 128)
    # utilisation: real work over work rounded up to 8 rows and the array's sides, block by block
    padded = sum(2 * up(min(256, m - i * 256), 8) * up(min(256, n - j * 256), 128) * up(min(256, k - kk * 256), 128)
                 for i in range(math.ceil(m / 256)) for j in range(math.ceil(n / 256)) for kk in range(math.ceil(k / 256)))
    assert s.utilization == pytest.approx(2 * m * n * k / padded)


def test_edge_fold_utilization_of_130_cubed():
    # 130 rows pad to 136 (8-row groups), 130 columns and 130 of depth pad to 256 on a 128x128 array
    s = ls.tpu.schedule_dot(130, 130, 130, "TPU v5e")
    assert s.utilization == pytest.approx(130**3 / (136 * 256 * 256))
    assert s.folds == 4  # 2 weight tiles down K x 2 across N
    # on v6e's 256x256 array the same product fits one fold, with the same padding (256 each way)
    s6 = ls.tpu.schedule_dot(130, 130, 130, "TPU v6e")
    assert s6.folds == 1 and s6.utilization == pytest.approx(s.utilization)


def test_hbm_bytes_closed_form():
    # k innermost; with nk > 1 every step copies its A block and its B block, so A is read nj times and
    # B ni times: bytes = s·(m·k·nj + k·n·ni) + s_out·m·n
    m, n, k, b = 1024, 768, 2048, 256
    s = ls.tpu.schedule_dot(m, n, k, "TPU v5e", blocks=(b, b, b))
    ni, nj = m // b, n // b
    assert s.bytes_read == 2 * (m * k * nj + k * n * ni)
    assert s.bytes_written == 2 * m * n
    # with one k block A's block stays in VMEM across j (Pallas skips an unchanged block): A read once
    s1 = ls.tpu.schedule_dot(m, n, 256, "TPU v5e", blocks=(b, b, 256))
    assert s1.bytes_read == 2 * (m * 256 + 256 * n * ni)


def test_single_buffer_is_the_plain_sum():
    # without double buffering nothing overlaps: time = Σ copies in + Σ MXU + Σ copies out
    s = ls.tpu.schedule_dot(1024, 1024, 1024, "TPU v5e", blocks=(256, 256, 256), double_buffer=False)
    w = V5E.hbm_bandwidth
    assert s.time == pytest.approx(s.bytes / w + s.mxu_time, rel=1e-12)
    assert s.overlap == pytest.approx(0.0, abs=1e-12)


def test_double_buffer_compute_bound_closed_form():
    # one block row (m = bm), one k block, nj steps. Step 0 copies A and B_0; each later step only B_j.
    # Compute-bound (each step's MXU time C exceeds the copy of B_j plus the store of a C block), the MXU
    # never waits after the first copy: time = L_0 + nj·C + W_last, the copies otherwise hidden.
    m, k, bn, nj = 512, 512, 512, 8
    s = ls.tpu.schedule_dot(m, bn * nj, k, "TPU v5e", blocks=(m, bn, k))
    w, p = V5E.hbm_bandwidth, V5E.matrix_flops["bfloat16"]
    c = 2 * m * bn * k / p
    l0 = 2 * (m * k + k * bn) / w
    store = 2 * m * bn / w
    assert c > store + 2 * k * bn / w  # the case the closed form is for
    assert s.time == pytest.approx(l0 + nj * c + store, rel=1e-12)
    assert s.mxu_time == pytest.approx(nj * c, rel=1e-12)


def test_double_buffering_never_slower_and_bounded_below():
    for m, n, k in [(4096, 4096, 4096), (256, 8192, 256), (2048, 64, 8192)]:
        d = ls.tpu.schedule_dot(m, n, k, "TPU v5e")
        s = ls.tpu.schedule_dot(m, n, k, "TPU v5e", double_buffer=False)
        assert d.time <= s.time
        assert d.time >= max(d.mxu_time, d.dma_time) - 1e-15


def test_vmem_overflow_names_the_limit():
    # 2·(8192·8192 + 8192·8192)·2 B + 2·8192²·2 B + 4·8192² B = 1,280 MiB > 128 MiB of VMEM
    with pytest.raises(ls.tpu.TPUError, match=r"VMEM.*128 MiB"):
        ls.tpu.schedule_dot(8192, 8192, 8192, "TPU v5e", blocks=(8192, 8192, 8192))


def test_default_blocks_fit_vmem_and_bad_input_is_named():
    s = ls.tpu.schedule_dot(8192, 65536, 1024, "TPU v5e")
    assert s.vmem_bytes <= 128 * 2**20
    with pytest.raises(ls.tpu.TPUError, match="m must be a positive integer"):
        ls.tpu.schedule_dot(0, 8, 8)
    with pytest.raises(ls.tpu.TPUError, match="precision"):
        ls.tpu.schedule_dot(8, 8, 8, precision="ultra")


def test_float32_precision_takes_bf16_passes():
    # float32 on the MXU: 1, 3 or 6 bfloat16 passes (JAX's DEFAULT, HIGH, HIGHEST)
    t = {p: ls.tpu.schedule_dot(1024, 1024, 1024, dtype="float32", precision=p).peak_flops
         for p in ("default", "high", "highest")}
    peak = V5E.matrix_flops["bfloat16"]
    assert t == {"default": peak, "high": peak / 3, "highest": peak / 6}


def _dot_prog(m, n, k, dtype="bfloat16", relu=False):
    def f(x, y):
        z = lnp.dot(x, y)
        return lnp.maximum(z, 0.0) if relu else z
    g = ls.trace(f, ls.ShapeDtype((m, k), dtype), ls.ShapeDtype((k, n), dtype))
    return ls.compile(g)


def test_estimate_speaks_the_gpu_cost_interface():
    prog = _dot_prog(2048, 2048, 2048)
    tpu = ls.tpu.estimate(prog, "TPU v5e")
    gpu = ls.estimate(prog, "H100 SXM")
    assert isinstance(tpu, ls.ProgramCost) and type(tpu) is type(gpu)
    (kc,) = tpu.kernels
    assert isinstance(kc, ls.KernelCost) and kc.flops == gpu.kernels[0].flops == 2 * 2048**3
    sched = ls.tpu.schedule_dot(2048, 2048, 2048, "TPU v5e")
    assert kc.time == sched.time and kc.bytes == sched.bytes
    # the schedule can only add to the roofline: its time is at least the roofline bound on the same chip
    assert kc.time >= ls.estimate(prog, "TPU v5e").kernels[0].time
    assert tpu.time == pytest.approx(kc.time + ls.cost.HOST_API_TIME)


def test_fused_epilogue_runs_on_the_vpu_and_other_kernels_follow_the_roofline():
    prog = _dot_prog(1024, 1024, 1024, relu=True)
    (kc,) = ls.tpu.estimate(prog, "TPU v5e").kernels
    plain = ls.tpu.schedule_dot(1024, 1024, 1024, "TPU v5e")
    assert kc.flops == 2 * 1024**3 + 1024 * 1024  # the relu's max per element
    assert kc.time > plain.time

    def g(x):
        return lnp.exp(x) + 1.0
    ew = ls.compile(ls.trace(g, ls.ShapeDtype((4096, 4096), "float32")))
    assert [k.time for k in ls.tpu.estimate(ew, "TPU v5e").kernels] == \
           [k.time for k in ls.estimate(ew, "TPU v5e").kernels]


def test_estimate_refuses_a_graph():
    g = ls.trace(lambda x: x + 1.0, ls.ShapeDtype((4,), "float32"))
    with pytest.raises(TypeError, match="compile"):
        ls.tpu.estimate(g, "TPU v5e")


def test_blocks_shrink_to_fit_a_small_vmem():
    # a v5e with 1 MiB of VMEM: 1024-sided blocks need far more, so the compiler halves k, then n, then m
    import dataclasses
    small = dataclasses.replace(V5E, name="v5e, 1 MiB VMEM", onchip={"VMEM": 2**20})
    s = ls.tpu.schedule_dot(1024, 1024, 1024, small)
    b = s.blocks
    assert s.vmem_bytes <= 2**20
    # one more doubling of the last dimension halved would not fit
    assert (b.bm, b.bn, b.bk) == (512, 128, 128)
    assert ls.tpu.Blocks(1024, 128, 128).vmem_bytes(2, 2) > 2**20
    np.testing.assert_allclose(*_check_small(small), rtol=1e-4, atol=1e-3)


def _check_small(chip):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((200, 300)).astype(np.float32), rng.standard_normal((300, 100)).astype(np.float32)
    return ls.tpu.run_dot(a, b, chip, precision="highest")[0], a @ b


# --- slices: wraparound only on full axes (v5e/v6e) or multiples of 4 (v4/v5p) ------------------------

def test_tpu_slice_wraps_only_full_axes_and_a_line_doubles_a_collective():
    s44 = ls.tpu.tpu_slice("TPU v5e", (4, 4))
    assert s44.wrap == (False, False) and s44.topology == "mesh" and s44.diameter == 6 and s44.chips == 16
    full = ls.tpu.tpu_slice("TPU v6e", (16, 16))
    assert full.wrap == (True, True) and full.topology == "torus" and full.diameter == 16
    assert ls.tpu.tpu_slice("TPU v5e", (16, 4)).topology == "partial torus"
    cube = ls.tpu.tpu_slice("TPU v5p", (4, 4, 8))
    assert cube.wrap == (True, True, True) and cube.diameter == 2 + 2 + 4
    assert ls.tpu.tpu_slice("TPU v4", (2, 4, 4)).wrap == (False, True, True)
    # a line of 4 against a bidirectional ring of 4 on the same link: twice the time (zero link latency)
    nb = 2**30
    ring = ls.collectives.time("all_gather", nb, 4, ls.hardware.PRESETS["TPU v5e"].chip_link, topology="bidir_ring")
    assert s44.axis_time("all_gather", nb, 0) == pytest.approx(2 * ring, rel=1e-12)
    assert ring == pytest.approx(3 / 4 * nb / (2 * 45e9), rel=1e-12)  # (n-1)/n · B over two directions
    for bad in [("H100 SXM", (4, 4)), ("TPU v5e", (4, 4, 4)), ("TPU v5e", (32, 4)), ("TPU v5e", (0, 4)),
                ("TPU7x", (4, 4, 4))]:
        with pytest.raises(ValueError, match="tpu_slice"):
            ls.tpu.tpu_slice(*bad)
    with pytest.raises(ValueError, match="axis"):
        s44.axis_time("all_gather", nb, 2)
