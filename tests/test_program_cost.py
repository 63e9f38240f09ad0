"""Kernels and the roofline: FLOPs, bytes and launch shapes in closed form; cost read from the presets."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp
from labsim.hardware import PRESETS

from strategies import matmul_dims

S = ls.ShapeDtype
F32 = 4


def contract(x, y, z):
    return lnp.maximum(x * y + z, 0.0)


# ----------------------------------------------------------------------------------------------
# kernels: closed forms
@pytest.mark.parametrize("shape", [(1024, 1024), (1000, 3), (7,), (2, 3, 5)])
def test_eager_elementwise_chain(shape):
    n = math.prod(shape)
    spec = S(shape)
    prog = ls.compile(ls.trace(contract, spec, spec, spec), passes=[])
    ks = prog.kernels
    assert [k.ops for k in ks] == [("multiply",), ("add",), ("maximum",)]
    assert all(k.kind is ls.KernelKind.LOOP for k in ks)
    assert [k.flops for k in ks] == [n, n, n]
    assert [k.transcendentals for k in ks] == [0, 0, 0]
    assert [k.bytes_read for k in ks] == [2 * n * F32, 2 * n * F32, n * F32]  # maximum's 0.0 is a literal
    assert [k.bytes_written for k in ks] == [n * F32] * 3
    for k in ks:
        assert k.launch.block == (256, 1, 1)
        assert k.launch.grid == (math.ceil(n / 256), 1, 1)
        assert k.launch.blocks * k.launch.threads_per_block >= n > (k.launch.blocks - 1) * 256
        assert k.intensity == pytest.approx(k.flops / (k.bytes_read + k.bytes_written))
    assert prog.flops == 3 * n and prog.bytes == (5 + 3) * n * F32


def test_default_pipeline_fuses_the_chain():
    n = 4096
    spec = S((n,))
    prog = ls.compile(ls.trace(contract, spec, spec, spec))
    assert prog.flops == 3 * n  # fusion never changes the arithmetic
    assert len(prog.kernels) == 1  # one loop kernel: read x, y, z once, write the result once
    k = prog.kernels[0]
    assert (k.bytes_read, k.bytes_written) == (3 * n * F32, n * F32)
    assert set(k.ops) == {"multiply", "add", "maximum"}


@settings(max_examples=40)
@given(matmul_dims(max_dim=300), st.sampled_from(["float32", "bfloat16", "float16"]), st.booleans())
def test_dot_flops_and_bytes(mkn, dtype, eager):
    M, K, N = mkn
    g = ls.trace(lnp.dot, S((M, K), dtype), S((K, N), dtype))
    prog = ls.compile(g, passes=[] if eager else None)
    (k,) = prog.kernels
    isz = ls.dtypes.ITEMSIZE[dtype]
    assert k.kind is ls.KernelKind.CONTRACTION
    assert k.flops == 2 * M * N * K
    assert k.bytes_read == isz * (M * K + K * N)
    assert k.bytes_written == isz * M * N
    tm, tn, tk = k.tile
    gx, gy, gz = k.launch.grid
    assert gz == 1 and gx == math.ceil(N / tn) and gy == math.ceil(M / tm)  # tiles cover C exactly once


def test_batched_dot_flops():
    B, M, K, N = 3, 5, 7, 11
    (k,) = ls.compile(ls.trace(lambda a, b: a @ b, S((B, M, K)), S((B, K, N)))).kernels
    assert k.flops == 2 * B * M * N * K
    assert k.bytes == F32 * (B * M * K + B * K * N + B * M * N)
    assert k.launch.grid[2] == B


@pytest.mark.parametrize("shape, axis", [((6, 10), 1), ((6, 10), 0), ((4, 5, 6), (0, 2)), ((9,), None)])
def test_reduce_sum_flops(shape, axis):
    g = ls.trace(lambda x: lnp.sum(x, axis=axis), S(shape))
    (k,) = ls.compile(g, passes=[]).kernels
    n_in = math.prod(shape)
    n_out = np.sum(np.zeros(shape), axis=axis).size
    assert k.kind is ls.KernelKind.REDUCTION
    assert k.flops == n_in - n_out
    assert k.bytes_read == n_in * F32 and k.bytes_written == n_out * F32
    assert k.launch.grid == (n_out, 1, 1)  # one block per output element


def test_mean_is_sum_plus_one_divide_per_output():
    shape = (8, 12)
    n_in, n_out = 96, 8
    prog = ls.compile(ls.trace(lambda x: lnp.mean(x, axis=1), S(shape)))
    assert prog.flops == (n_in - n_out) + n_out


@pytest.mark.parametrize("shape", [(6, 10), (3, 4, 5), (128,)])
@pytest.mark.parametrize("eager", [True, False])
def test_softmax_transcendentals(shape, eager):
    n = math.prod(shape)
    rows = n // shape[-1]
    prog = ls.compile(ls.trace(lnn.softmax, S(shape)), passes=[] if eager else None)
    assert prog.transcendentals == n  # one exp per element
    # max-reduce (n - rows) + subtract (n) + sum-reduce (n - rows) + divide (n)
    eager_flops = 4 * n - 2 * rows
    if eager:
        assert prog.flops == eager_flops
    else:  # the pipeline may turn n divides into rows reciprocals + n multiplies
        assert prog.flops in (eager_flops, eager_flops + rows)


def test_gelu_and_layer_norm_transcendentals():
    n = 6 * 16
    assert ls.compile(ls.trace(lnn.gelu, S((6, 16)))).transcendentals == n  # one tanh
    assert ls.compile(ls.trace(lambda x: lnn.gelu(x, approximate=False), S((6, 16)))).transcendentals == n  # erf
    assert ls.compile(ls.trace(lnn.layer_norm, S((6, 16)))).transcendentals == 6  # one rsqrt per row


def test_data_movement_is_free_of_flops():
    prog = ls.compile(ls.trace(lambda x: lnp.transpose(x), S((3, 4))), passes=[])  # a materialised transpose
    t = prog.kernels[0]
    assert t.ops == ("transpose",) and t.kind is ls.KernelKind.COPY and t.flops == 0
    assert t.bytes_read == t.bytes_written == 12 * F32
    prog = ls.compile(ls.trace(lambda x: lnp.reshape(x, (12,)) * 2.0, S((3, 4))), passes=[])
    assert [k.ops for k in prog.kernels] == [("multiply",)]  # reshape is a bitcast: no kernel


def test_listings_are_readable():
    spec = S((1000,))
    k = ls.compile(ls.trace(contract, spec, spec, spec), passes=[]).kernels[0]
    assert "ld.global" in k.listing and "st.global" in k.listing and "mul" in k.listing
    d = ls.compile(ls.trace(lnp.dot, S((64, 32)), S((32, 16)))).kernels[0]
    assert "tile" in d.listing


def test_program_table():
    prog = ls.compile(ls.trace(contract, S((8,)), S((8,)), S((8,))), passes=[])
    rows = prog.table()
    assert [r["FLOPs"] for r in rows] == [8, 8, 8]
    assert "<table" in prog._repr_html_()


# ----------------------------------------------------------------------------------------------
# roofline cost, numbers read from the presets
def _peak(chip, kernel):
    """The documented rule: a contraction uses the matrix unit if the chip lists its dtype there (a float32
    one the TF32 rate on an NVIDIA GPU unless its precision is "highest"); contractions pay the chip's
    GEMM efficiency."""
    eff = chip.gemm_efficiency if kernel.kind is ls.KernelKind.CONTRACTION else 1.0
    if kernel.kind is ls.KernelKind.CONTRACTION:
        if kernel.dtype == "float32" and "tf32" in chip.matrix_flops and kernel.precision != "highest":
            return chip.matrix_flops["tf32"] * eff, ls.ExecUnit.MATRIX
        if kernel.dtype == "float32" and chip.kind is ls.hardware.ChipKind.TPU and "bfloat16" in chip.matrix_flops:
            passes = {"default": 1, "high": 3, "highest": 6}[kernel.precision]  # bf16 passes on the MXU
            return chip.matrix_flops["bfloat16"] / passes * eff, ls.ExecUnit.MATRIX
        if kernel.dtype in chip.matrix_flops:
            return chip.matrix_flops[kernel.dtype] * eff, ls.ExecUnit.MATRIX
    if kernel.dtype in chip.vector_flops:
        return chip.vector_flops[kernel.dtype] * eff, ls.ExecUnit.VECTOR
    return chip.vector_flops["float32"] * eff, ls.ExecUnit.VECTOR


@pytest.mark.parametrize("chip_name", ["H100 SXM", "A100 80GB", "H200", "B200", "CPU"])
def test_estimate_matches_the_roofline(chip_name):
    chip = PRESETS[chip_name]
    spec = S((512, 512))
    g = ls.trace(lambda x, w, b: lnn.softmax(lnp.tanh(x @ w) + b), spec, spec, S((512,)))
    prog = ls.compile(g)
    cost = ls.estimate(prog, chip_name)
    assert len(cost.kernels) == len(prog.kernels)
    vec = chip.vector_flops["float32"]
    for k, kc in zip(prog.kernels, cost.kernels):
        peak, unit = _peak(chip, k)
        assert kc.unit is unit and kc.peak_flops == pytest.approx(peak, rel=1e-12)
        if chip.special_flops:  # SFUs beside the lanes: the slower sets the pace
            assert kc.compute_time == pytest.approx(max(k.flops / peak, k.transcendentals / chip.special_flops), rel=1e-12)
        else:  # no SFU rate: one vector operation per transcendental
            assert kc.compute_time == pytest.approx(k.flops / peak + k.transcendentals / vec, rel=1e-12)
        assert kc.memory_time == pytest.approx((k.bytes_read + k.bytes_written) / chip.hbm_bandwidth, rel=1e-12)
        assert kc.time == max(kc.compute_time, kc.memory_time, chip.min_kernel_time)
        if kc.bound is not ls.Bound.LATENCY:
            assert kc.bound is (ls.Bound.COMPUTE if kc.compute_time >= kc.memory_time else ls.Bound.MEMORY)
    assert cost.serial_time == pytest.approx(
        sum(kc.time for kc in cost.kernels)
        + len(prog.kernels) * (chip.launch_overhead + chip.call_overhead + ls.machines.roofline.HOST_API_TIME), rel=1e-12)
    no_launch = ls.estimate(prog, chip_name, launch_overhead=False)
    assert no_launch.time == pytest.approx(cost.kernel_time)


@pytest.mark.parametrize("chip_name, dtype", [
    (c, d) for c in ("H100 SXM", "A100 80GB", "TPU v5e", "B200", "CPU") for d in ("float32", "bfloat16")
    if d in PRESETS[c].matrix_flops or d in PRESETS[c].vector_flops])
def test_bound_on_both_sides_of_the_ridge(chip_name, dtype):
    """A square matmul of size s has intensity 2s³ / (3s²·isz) = 2s / (3·isz): pick s on each side."""
    chip = PRESETS[chip_name]
    isz = ls.dtypes.ITEMSIZE[dtype]
    probe = ls.compile(ls.trace(lnp.dot, S((16, 16), dtype), S((16, 16), dtype))).kernels[0]
    peak, _ = _peak(chip, probe)
    ridge = peak / chip.hbm_bandwidth
    s_ridge = 3 * isz * ridge / 2
    chip_name = dataclasses.replace(chip, min_kernel_time=0.0)  # the latency floor is tested on its own below
    for s, bound in ((max(1, int(s_ridge / 4)), ls.Bound.MEMORY), (int(s_ridge * 4) + 1, ls.Bound.COMPUTE)):
        prog = ls.compile(ls.trace(lnp.dot, S((s, s), dtype), S((s, s), dtype)))
        (kc,) = ls.estimate(prog, chip_name).kernels
        assert kc.intensity == pytest.approx(2 * s / (3 * isz))
        assert kc.bound is bound, (s, kc.intensity, ridge)
        assert kc.time == pytest.approx(2 * s**3 / peak if bound is ls.Bound.COMPUTE else 3 * s * s * isz / chip.hbm_bandwidth)


def test_elementwise_is_memory_bound_everywhere():
    spec = S((1 << 20,))
    prog = ls.compile(ls.trace(contract, spec, spec, spec))
    for name in PRESETS:
        costs = ls.estimate(prog, name).kernels
        assert all(kc.bound is ls.Bound.MEMORY for kc in costs), name
        # a chip with no vector rate (TPU v4, v6e, TPU7x) is charged at the MXU's bf16 rate, flagged;
        # TPU v5e and v5p carry a derived VPU rate and run vector work there
        no_vpu = "float32" not in PRESETS[name].vector_flops
        assert all(kc.assumed is no_vpu for kc in costs), name
        if no_vpu:
            assert all(kc.unit is ls.ExecUnit.MATRIX and kc.peak_flops == PRESETS[name].matrix_flops["bfloat16"]
                       for kc in costs)


def test_bf16_matmul_uses_the_matrix_unit():
    prog = ls.compile(ls.trace(lnp.matmul, S((4096, 4096), "bf16"), S((4096, 4096), "bf16")))
    for name in ("H100 SXM", "TPU v5e", "B200"):
        (kc,) = ls.estimate(prog, name).kernels
        assert kc.unit is ls.ExecUnit.MATRIX and kc.dtype == "bfloat16"
        assert kc.peak_flops == PRESETS[name].matrix_flops["bfloat16"]
        assert kc.bound is ls.Bound.COMPUTE
        assert kc.compute_time == pytest.approx(2 * 4096**3 / PRESETS[name].matrix_flops["bfloat16"])
    f32 = ls.compile(ls.trace(lambda a, b: lnp.matmul(a, b, precision="highest"), S((4096, 4096)), S((4096, 4096))))
    (kc,) = ls.estimate(f32, "H100 SXM").kernels
    assert kc.unit is ls.ExecUnit.VECTOR  # full float32: the H100's fp32 lanes
    assert kc.compute_time > ls.estimate(prog, "H100 SXM").kernels[0].compute_time


# ----------------------------------------------------------------------------------------------
# precision, special functions, latency floor: each against a closed form derived here
N = 4096
FLOPS = 2 * N**3


@pytest.mark.parametrize("how", ["dot", "matmul", "einsum"])
def test_float32_dot_precision_on_h100(how):
    fns = {
        "dot": lambda p: (lambda a, b: lnp.dot(a, b, precision=p)),
        "matmul": lambda p: (lambda a, b: lnp.matmul(a, b, precision=p)),
        "einsum": lambda p: (lambda a, b: lnp.einsum("ij,jk->ik", a, b, precision=p)),
    }
    h100 = PRESETS["H100 SXM"]
    for p, rate, unit in ((None, 494.7e12, ls.ExecUnit.MATRIX), ("default", 494.7e12, ls.ExecUnit.MATRIX),
                          ("high", 494.7e12, ls.ExecUnit.MATRIX), ("highest", 66.9e12, ls.ExecUnit.VECTOR)):
        g = ls.trace(fns[how](p), S((N, N)), S((N, N)))
        prog = ls.compile(g)
        (kc,) = [kc for kc in ls.estimate(prog, h100).kernels if kc.flops]
        assert kc.unit is unit and kc.precision == (p or "default")
        assert kc.compute_time == pytest.approx(FLOPS / rate, rel=1e-12)  # flops / TF32 or fp32 rate
        assert kc.dtype == ("tf32" if unit is ls.ExecUnit.MATRIX else "float32")


def test_precision_is_a_dot_attribute_and_survives_passes_and_grad():
    g = ls.trace(lambda a, b: lnp.dot(a.T, b, precision="highest"), S((8, 4)), S((8, 3)))
    (dot,) = [n for n in g.nodes if n.op == "dot"]
    assert dot.attr("precision") == "highest" and "operand_precision={highest,highest}" in str(g)
    prog = ls.compile(g)  # the layout pass folds the transpose into a new dot: the precision stays
    (k,) = [k for k in prog.kernels if k.kind is ls.KernelKind.CONTRACTION]
    assert k.precision == "highest"
    plain = ls.trace(lambda a, b: lnp.dot(a, b), S((4, 8)), S((8, 3)))
    assert [n for n in plain.nodes if n.op == "dot"][0].attr("precision") is None  # default is not recorded
    with pytest.raises(ValueError, match="precision"):
        ls.trace(lambda a, b: lnp.dot(a, b, precision="medium"), S((4, 8)), S((8, 3)))

    class Precision:  # jax.lax.Precision-like: an enum member with a name
        name = "HIGHEST"
    g2 = ls.trace(lambda a, b: lnp.matmul(a, b, precision=Precision()), S((4, 8)), S((8, 3)))
    assert [n for n in g2.nodes if n.op == "dot"][0].attr("precision") == "highest"
    gg = ls.trace(ls.grad(lambda a, b: lnp.sum(lnp.dot(a, b, precision="highest"))), S((4, 8)), S((8, 3)))
    assert all(n.attr("precision") == "highest" for n in gg.nodes if n.op == "dot")


def test_float32_dot_on_tpu_takes_bf16_passes():
    v5e = PRESETS["TPU v5e"]
    for p, passes in (("default", 1), ("high", 3), ("highest", 6)):
        prog = ls.compile(ls.trace(lambda a, b: lnp.dot(a, b, precision=p), S((N, N)), S((N, N))))
        (kc,) = ls.estimate(prog, v5e).kernels
        assert kc.compute_time == pytest.approx(FLOPS * passes / v5e.matrix_flops["bfloat16"], rel=1e-12)


def test_bf16_dot_ignores_precision():
    h100 = PRESETS["H100 SXM"]
    prog = ls.compile(ls.trace(lambda a, b: lnp.dot(a, b, precision="highest"), S((N, N), "bf16"), S((N, N), "bf16")))
    (kc,) = ls.estimate(prog, h100).kernels
    assert kc.compute_time == pytest.approx(FLOPS / h100.matrix_flops["bfloat16"], rel=1e-12)


def test_tanh_is_charged_to_the_special_function_units():
    n = 1 << 24
    prog = ls.compile(ls.trace(lnp.tanh, S((n,), "bf16")))
    (k,) = prog.kernels
    assert k.transcendentals == n
    h100, b200 = PRESETS["H100 SXM"], PRESETS["B200"]
    (kc,) = ls.estimate(prog, h100).kernels
    assert kc.special_time == pytest.approx(n / 3.9e12)  # transcendentals / SFU rate
    assert kc.compute_time == pytest.approx(max(k.flops / h100.vector_flops["float32"], n / 3.9e12))
    # on its own, tanh still waits for memory: n / 3.9e12 = 4.3 us of SFU time against 4n bytes / 3.35 TB/s
    # = 20 us; but 17 times the 0.25 us that one fp32 lane op each would cost
    assert kc.bound is ls.Bound.MEMORY and kc.special_time == pytest.approx(
        h100.vector_flops["float32"] / 3.9e12 * n / h100.vector_flops["float32"])
    assert kc.special_time / (n / h100.vector_flops["float32"]) == pytest.approx(66.9 / 3.9)
    (kb,) = ls.estimate(prog, b200).kernels  # no SFU rate: one fp32 vector op each, added
    assert kb.compute_time == pytest.approx((k.flops + n) / b200.vector_flops["float32"])


def test_a_tiny_kernel_costs_at_least_the_floor():
    prog = ls.compile(ls.trace(lambda x: x * 2.0, S((1024,))))
    for name in ("H100 SXM", "A100 80GB", "H200", "B200"):
        chip = PRESETS[name]
        (kc,) = ls.estimate(prog, name).kernels
        assert kc.memory_time == pytest.approx(8192 / chip.hbm_bandwidth)  # nanoseconds
        assert kc.time == chip.min_kernel_time == 2e-6 and kc.bound is ls.Bound.LATENCY
    (kt,) = ls.estimate(prog, "TPU v5e").kernels  # no floor on the TPU presets
    assert kt.time == max(kt.compute_time, kt.memory_time)


def test_cpu_gemm_efficiency_and_call_cost():
    cpu = PRESETS["CPU"]
    prog = ls.compile(ls.trace(lnp.dot, S((N, N), "bf16"), S((N, N), "bf16")))
    cost = ls.estimate(prog, cpu)
    (kc,) = cost.kernels
    assert kc.compute_time == pytest.approx(FLOPS / (0.5 * cpu.matrix_flops["bfloat16"]))
    assert cost.time == pytest.approx(1e-6 + 5e-6 + kc.time)  # one API call + the per-call cost + the GEMM


def test_estimate_accepts_a_chip_object():
    prog = ls.compile(ls.trace(contract, S((64,)), S((64,)), S((64,))))
    assert ls.estimate(prog, PRESETS["H100 SXM"]).time == ls.estimate(prog, "h100 sxm").time


def test_out_of_memory_is_reported():
    chip = PRESETS["H100 SXM"]
    n = int(chip.hbm_capacity // F32) + 1  # one input alone does not fit
    prog = ls.compile(ls.trace(lambda x: x + 1.0, S((n,))))
    cost = ls.estimate(prog, "H100 SXM")
    assert not cost.fits
    with pytest.raises(MemoryError, match="out of memory on"):
        cost.time
    with pytest.raises(MemoryError):
        ls.simulate(prog, "H100 SXM")
    assert ls.estimate(prog, "CPU").fits  # 4 TB of DDR5
