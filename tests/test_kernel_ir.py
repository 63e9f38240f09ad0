"""One kernel IR per (kernel, chip): the launch the roofline, the SIMT machine and the listing use is one
object, ``KernelIR.verify()`` passes after every emit, and a broken IR is refused with a clear message."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import labsim as ls
import labsim.numpy as lnp
from labsim.compiler.codegen import tile_plan
from labsim.core.trace import expand_composites
from labsim.compiler.emit import LoweringError
from labsim.compiler.isa import Builder, Imm, Label, Special, Pipe
from labsim.compiler.verify_ir import IRError
from labsim.hardware import ChipKind, PRESETS
from labsim.machines.roofline import gpu_terms

from fuzz_programs import fuzz_programs

GPUS = sorted(n for n, c in PRESETS.items() if c.kind is ChipKind.GPU)
RAN, SKIPPED = [], []
EXAMPLES = int(os.environ.get("LABSIM_KIR_EXAMPLES", "40"))


def _relu_matmul():
    S = ls.ShapeDtype((1024, 1024), "bfloat16")
    return ls.compile(ls.trace(lambda a, b: lnp.maximum(a @ b, 0), S, S)).kernels[0]


@pytest.mark.parametrize("chip", GPUS)
def test_one_launch_for_the_issue_kernel(chip):
    k = _relu_matmul()
    ir = ls.simt.kernel_ir(k, chip)
    assert isinstance(ir.launch, ls.Launch)
    assert ls.simt.kernel_ir(k, chip) is ir  # lowered once per (kernel, chip)
    assert ls.kernel_cost(k, chip).launch is ir.launch
    assert tile_plan(k, chip).launch is ir.launch
    assert f"launch: {ir.launch}" in k.listing_for(chip)
    assert ir.launch.blocks == ir.grid and ir.launch.threads_per_block == ir.block
    terms = gpu_terms(k, chip)
    assert terms.threads_per_block == ir.launch.threads_per_block and terms.blocks == ir.launch.blocks


def test_h100_launch_is_the_hopper_plan():
    """The issue's example: 384 threads (a producer and two consumer warpgroups), 64 KiB of double-
    buffered bf16 128x128x64 tiles, 64 blocks; the chip-free launch is the generic 256-thread one."""
    k = _relu_matmul()
    la = ls.simt.kernel_ir(k, "H100 SXM").launch
    assert (la.grid, la.block, la.shared_bytes) == ((8, 8, 1), (384, 1, 1), 2 * (128 * 64 * 2) * 2)
    assert k.launch == ls.simt.kernel_ir(k, None).launch
    assert k.launch.threads_per_block == 256 and k.launch.shared_bytes == 2 * (128 * 32 * 2) * 2


def test_a_kernel_is_plain_data():
    k = _relu_matmul()
    assert not any(callable(getattr(k, f)) for f in k.__dataclass_fields__)
    assert not any(f.startswith("_") for f in k.__dataclass_fields__)


def _check_program(prog, inputs, chips):
    # the machine runs a composite op (softmax, gelu, ...) as its decomposition: that is its semantics
    ref = ls.evaluate(expand_composites(prog.graph), *inputs)
    for chip in chips:
        cost = ls.estimate(prog, chip)
        lowered = {}
        for k, kc in zip(prog.kernels, cost.kernels):
            try:
                ir = ls.simt.kernel_ir(k, chip)
            except LoweringError:
                continue
            lowered[k.name] = ir
            assert ir.verify() is ir
            assert kc.launch is ir.launch, (k, chip)
            assert f"launch: {ir.launch}" in k.listing_for(chip), (k, chip)
        if len(lowered) < len(prog.kernels):
            SKIPPED.append((prog, chip))
            continue
        RAN.append((prog, chip))
        run = ls.simt.run(prog, *inputs, chip=chip)
        for k, kr in zip(prog.kernels, run.kernels):
            assert kr.launch is lowered[k.name].launch, (k, chip)
        outs = run.outputs if isinstance(run.outputs, tuple) else (run.outputs,)
        refs = ref if isinstance(ref, tuple) else (ref,)
        for got, want in zip(outs, refs):
            assert_agrees(prog, np.asarray(got), np.asarray(want), chip)


def _order_terms(prog) -> int:
    """The most terms a kernel adds in an order of its own: a reduction's row or a contraction's K."""
    n = 0
    for k in prog.kernels:
        for node in k.nodes:
            if node.op in ("reduce_sum", "mean", "softmax", "layer_norm"):
                shape = node.operands[0].aval.shape
                axes = node.params.get("axis", node.params.get("axes"))
                axes = tuple(range(len(shape))) if axes is None else (axes,) if isinstance(axes, int) else tuple(axes)
                along = 1
                for a in axes:  # the terms one output sums: the product of the reduced axes
                    along *= shape[a] if shape else 1
                n = max(n, node.operands[0].aval.size // max(node.out.aval.size, 1), along,
                        shape[-1] if shape else 1)
            elif node.op == "dot":
                n = max(n, node.operands[0].aval.size * node.operands[1].aval.size // max(node.out.aval.size, 1))
    return n


def assert_agrees(prog, got, want, chip):
    """Element-wise work agrees to the bit. A sum of n terms in another order (the machine's shuffle
    tree, the tensor-core tile's K order) differs by at most 2·γ(n)·Σ|terms| (γ(n) = n·u/(1 - n·u),
    u the unit roundoff of the dtype the sum is held in); labsim bounds Σ|terms| by n·max|value| of
    the output's scale, so the test allows 4·n·u relative to the output's largest magnitude."""
    assert got.shape == want.shape and got.dtype == want.dtype, (prog, chip)
    n = _order_terms(prog)
    if n <= 1 or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=f"{chip}: {prog.graph}")  # NaNs equal too
        return
    u = 2.0 ** -8 if str(want.dtype) == "bfloat16" else 2.0 ** -24
    w, g = want.astype(np.float64), got.astype(np.float64)
    scale = float(np.nanmax(np.abs(np.where(np.isfinite(w), w, 0)), initial=1.0))
    tol = 4 * n * u
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(scale, 1.0), equal_nan=True,
                               err_msg=f"{chip}: n={n}: {prog.graph}")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(fuzz_programs(max_steps=3))
def test_fuzz_one_launch_and_verified_ir_on_every_gpu(p):
    g = ls.trace(p.f, *p.specs)
    for prog in (ls.compile(g), ls.compile(g, passes=[])):
        _check_program(prog, p.inputs, GPUS)


def _tiny(**broken):
    b = Builder()
    r = b.reg("u32")
    if broken.get("undefined"):
        b.emit("add", r, b.reg("u32"), Imm(1, "u32"), type="u32")
    else:
        b.emit("mov", r, Special.TID, type="u32")
    p = b.op("setp", "u32", r, Imm(3, "u32"), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label("NOWHERE" if broken.get("label") else "DONE"), guard=p, pipe=Pipe.CONTROL)
    addr = Imm(60 if broken.get("shared") else 0, "u32")
    b.emit("st", None, addr, Imm(1.0, "f32"), type="f32", mod=("shared",), pipe=Pipe.SHARED)
    b.label("DONE")
    b.emit("exit", pipe=Pipe.CONTROL)
    return b


def test_a_correct_ir_verifies():
    b = _tiny()
    ir = b.build("ok", [("x", "float32", 4)], 1, 1, 32, shared_bytes=16)
    assert ir.verify() is ir


@pytest.mark.parametrize("what, message", [("undefined", "read before any instruction writes it"),
                                           ("label", "label NOWHERE, which the kernel does not define"),
                                           ("shared", "outside the kernel's 16 B of shared memory")])
def test_a_broken_ir_is_refused(what, message):
    b = _tiny(**{what: True})
    if what == "label":  # refused as the IR is built: the reconvergence analysis follows the branches
        with pytest.raises(IRError, match=message):
            b.build("bad", [("x", "float32", 4)], 1, 1, 32, shared_bytes=16)
        return
    ir = b.build("bad", [("x", "float32", 4)], 1, 1, 32, shared_bytes=16)
    with pytest.raises(IRError, match=message):
        ir.verify()


def test_a_bad_reconvergence_point_is_refused():
    ir = _tiny().build("bad", [("x", "float32", 4)], 1, 1, 32, shared_bytes=16)
    pc = next(iter(ir.reconverge))
    ir.reconverge[pc] = 0  # the entry: no path from the branch goes back there
    with pytest.raises(IRError, match="never reaches the reconvergence point"):
        ir.verify()


def test_a_launch_that_is_not_the_irs_is_refused():
    ir = _tiny().build("bad", [("x", "float32", 4)], 1, 1, 32, shared_bytes=16, launch=ls.Launch((2, 1, 1), (32, 1, 1)))
    with pytest.raises(IRError, match="is not the IR's own grid"):
        ir.verify()


def test_the_fuzz_test_ran_the_machine():
    """Most fuzzed programs lower completely and run (the check above is not vacuous)."""
    if not RAN and not SKIPPED:
        pytest.skip("run with the fuzz test")
    assert len(RAN) >= len(SKIPPED), (len(RAN), len(SKIPPED))
