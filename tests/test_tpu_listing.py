"""One block choice on a TPU: the tile plan ``kernel.listing_for(tpu)`` prints is the VMEM block that
``ls.tpu`` schedules, times and plays (one rule, labsim.compiler.tpu_blocks.block_rule).

A helper found the listing printing 512-wide tiles while ``ls.tpu.schedule_dot`` chose 1,024-sided blocks
for the same 4,096³ bf16 product; these tests fail if the two drift apart again.
"""
from __future__ import annotations

from labsim.support.text import plural
import math
import re
from dataclasses import astuple

import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim.compiler import tpu_blocks

S = ls.ShapeDtype

SHAPES = [(4096, 4096, 4096), (1000, 700, 300), (130, 130, 130), (8, 128, 128), (1, 3000, 5),
          (2500, 1040, 1030), (513, 257, 2049)]


def _dot_program(m, n, k, dtype, batch=None):
    lead = (batch,) if batch else ()
    g = ls.trace(lambda a, b: lnp.matmul(a, b), S(lead + (m, k), dtype), S(lead + (k, n), dtype))
    return ls.compile(g)


def _scheduled_blocks(prog, chip):
    cost = ls.tpu.estimate(prog, chip, check_memory=False)
    dots = [c for c in cost.kernels if getattr(c, "schedule", None) is not None]
    assert len(dots) == 1
    return dots[0].schedule


@pytest.mark.parametrize("chip", ["TPU v5e", "TPU v6e"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int8", "float8_e4m3fn"])
@pytest.mark.parametrize("m, n, k", SHAPES)
def test_the_listing_prints_the_block_the_schedule_uses(m, n, k, dtype, chip):
    prog = _dot_program(m, n, k, dtype)
    kernel = next(kn for kn in prog.kernels if kn.kind.value == "contraction")
    sched = _scheduled_blocks(prog, chip)
    plan = ls.tile_plan(kernel, chip)
    assert plan.tile == astuple(sched.blocks), (m, n, k, dtype, chip)
    # and the same block as schedule_dot picks for the bare product
    direct = ls.tpu.schedule_dot(m, n, k, chip, dtype=dtype, check_memory=False)
    assert astuple(direct.blocks) == plan.tile
    bm, bn, bk = plan.tile
    text = kernel.listing_for(chip)
    assert f"computes a {bm}×{bn} tile of C; K in steps of {bk}" in text, text
    # the listing's count of tiles and K steps is the schedule's grid
    _, gi, gj, gk = sched.grid
    assert f"// {plural(gi * gj, 'tile')};" in text
    assert f"for k0 in 0..{k} step {bk}:               // {plural(gk, 'iteration')}" in text
    assert gk == math.ceil(k / bk)


@pytest.mark.parametrize("chip", ["TPU v5e", "TPU v6e"])
def test_batched_and_transposed_products_agree_too(chip):
    progs = [_dot_program(300, 520, 1100, "bfloat16", batch=3),
             ls.compile(ls.trace(lambda a, b: lnp.matmul(a.T, b), S((777, 200), "bfloat16"), S((777, 900), "bfloat16"))),
             ls.compile(ls.trace(lambda a, b: lnp.matmul(a, b).astype("float32"),
                                 S((2048, 1500), "bfloat16"), S((1500, 3000), "bfloat16")))]
    for prog in progs:
        kernel = next(kn for kn in prog.kernels if kn.kind.value == "contraction")
        assert ls.tile_plan(kernel, chip).tile == astuple(_scheduled_blocks(prog, chip).blocks)


def test_the_4096_cube_uses_1024_blocks_on_the_v5e():
    # the case the helper found: 4,096³ bf16. 1,024 is the rule's starting edge; it divides 4,096 and fits VMEM
    prog = _dot_program(4096, 4096, 4096, "bfloat16")
    text = prog.kernels[0].listing_for("TPU v5e")
    edge = tpu_blocks.DEFAULT_BLOCK
    assert re.search(rf"computes a {edge}×{edge} tile of C; K in steps of {edge} \(4 steps\)", text), text
    assert "512" not in text.split("\n")[2]


def test_block_rule_is_the_one_choose_blocks_uses_when_vmem_is_small():
    # a TensorCore with 1 MiB of VMEM forces the halving; the rule and ls.tpu.choose_blocks must agree
    core = ls.tpu.TensorCore.of("TPU v5e")
    small = type(core)(chip=core.chip, mxu=core.mxu, mxus=core.mxus, vmem=2**20, clock=core.clock)
    for m, n, k in SHAPES:
        got = ls.tpu.choose_blocks(m, n, k, small, 2, 2)
        rule = tpu_blocks.block_rule(m, n, k, core.mxu, 2**20, 2, 2, True)
        assert astuple(got) == rule
        assert tpu_blocks.vmem_bytes(*rule, 2, 2, 2) <= 2**20 or rule == (8, 128, 128)
        assert got.vmem_bytes(2, 2) == 2 * (rule[0] * rule[2] + rule[2] * rule[1]) * 2 + 2 * rule[0] * rule[1] * 2 \
            + 4 * rule[0] * rule[1]


def test_choose_blocks_refuses_a_non_bool_double_buffer():
    with pytest.raises(ls.ArgumentTypeError,
                       match="choose_blocks.*double_buffer"):
        ls.tpu.choose_blocks(128, 128, 128, "TPU v5e", double_buffer="yes")


def test_schedule_dot_reads_itemsizes_from_labsims_dtype_table():
    # float8 (1 byte) is a labsim dtype NumPy does not know; a NumPy type is read as its name
    f8 = ls.tpu.schedule_dot(512, 512, 512, "TPU v5e", dtype="float8_e4m3fn", out_dtype="float32")
    bf = ls.tpu.schedule_dot(512, 512, 512, "TPU v5e", dtype="bfloat16", out_dtype="float32")
    assert f8.bytes_read * 2 == bf.bytes_read and f8.bytes_written == bf.bytes_written == 512 * 512 * 4
    import numpy as np
    a = ls.tpu.schedule_dot(256, 256, 256, "TPU v5e", dtype=np.float32, precision="highest")
    b = ls.tpu.schedule_dot(256, 256, 256, "TPU v5e", dtype="float32", precision="highest")
    assert a.time == b.time and a.peak_flops == b.peak_flops
    with pytest.raises(ls.tpu.TPUError, match="schedule_dot.*dtype 'nope'.*bfloat16"):
        ls.tpu.schedule_dot(8, 8, 8, dtype="nope")


@pytest.mark.parametrize("args", [("x", 128, 128, (128, 128), 2**27), (-1, 128, 128, (128, 128), 2**27),
                                  (128, 128, 128, (128, 128), -1), (128, 128, 128, (0, 128), 2**27)])
def test_block_rule_refuses_bad_arguments(args):
    with pytest.raises(ls.LabsimError, match="block_rule"):
        tpu_blocks.block_rule(*args)
