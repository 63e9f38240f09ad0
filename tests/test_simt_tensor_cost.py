"""The issue model charges a tile-level matrix instruction by the rule the values follow (values._mma):
a warpgroup instruction puts a quarter of its FLOPs on each of its four warps' tensor cores, and the
copying warpgroup, whose rows lie outside the tile, does no tensor work."""
from __future__ import annotations

import math

import numpy as np

import labsim as ls
import labsim.numpy as lnp
from labsim.machines.simt.results import Timing
from labsim.machines.simt.schedule import _tensor_cost


def _matrix_instr(chip):
    g = ls.trace(lambda a, b: a @ b, ls.ShapeDtype((256, 256), "bfloat16"), ls.ShapeDtype((256, 256), "bfloat16"))
    ir = ls.simt.kernel_ir(ls.compile(g).kernels[0], chip)
    return ir, next(i for i in ir.code if i.op in ("wgmma", "mma"))


def test_warpgroup_instruction_splits_its_flops_over_four_warps_and_skips_the_copying_group():
    t = Timing()
    ir, ins = _matrix_instr("H100 SXM")
    at = ins.attrs
    assert ins.op == "wgmma" and at["group"] == 4 and at["shift_groups"] == 1
    per_warp = 2 * at["rows"] * at["tn"] * at["tk"] / 4
    for w in range(4):  # the first warpgroup copies tiles (the TMA): an issue slot, no tensor work
        assert _tensor_cost(ins, w, t)[:2] == (t.alu, 1)
    for w in range(4, ir.warps_per_block):
        lat, busy, unit = _tensor_cost(ins, w, t)
        assert unit == "tensor" and busy == math.ceil(per_warp / t.tensor_flops) and lat == busy + t.alu
    # the whole block's tensor cycles are the product's FLOPs per K step over the tensor rate
    total = sum(_tensor_cost(ins, w, t)[1] for w in range(4, ir.warps_per_block))
    assert total * t.tensor_flops == 2 * at["tm"] * at["tn"] * at["tk"]


def test_per_warp_mma_charges_each_warp_its_own_rows():
    t = Timing()
    ir, ins = _matrix_instr("A100 80GB")
    at = ins.attrs
    assert ins.op == "mma" and at.get("group", 1) == 1
    for w in range(ir.warps_per_block):
        busy = _tensor_cost(ins, w, t)[1]
        if w * at["rows"] < at["tm"]:
            assert busy == math.ceil(2 * at["rows"] * at["tn"] * at["tk"] / t.tensor_flops)
        else:
            assert busy == 1


def test_matrix_product_values_unchanged_by_the_cost_rule():
    rng = np.random.default_rng(0)
    a = (rng.integers(-4, 4, (128, 64)) / 4).astype(np.float32)
    b = (rng.integers(-4, 4, (64, 128)) / 4).astype(np.float32)
    prog = ls.compile(ls.trace(lambda x, y: x @ y, ls.ShapeDtype((128, 64), "bfloat16"),
                               ls.ShapeDtype((64, 128), "bfloat16")))
    run = ls.simt.run(prog, a, b, chip="H100 SXM")
    assert np.array_equal(np.asarray(run.outputs, np.float32), a @ b)
