"""Block kernels (``ls.blocks``) lowered to the kernel IR and run on the SIMT machine (``ls.simt.run_blocks``):
the machine's output equals NumPy and the NumPy block run, masked lanes neither read nor write, one CTA
runs one program."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.blocks as tl
from labsim.compiler.block_emit import lower


from test_blocks import add_kernel  # noqa: E402  (Triton's vector add, as tests/test_blocks.py writes it)


@tl.jit
def mixed_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask, other=1.0)
    z = tl.maximum(x * y - 0.5, -x) / 2.0
    tl.store(out_ptr + offsets, tl.where(x > 0, z, tl.sqrt(y * y) + tl.exp(-x)), mask=mask)


@tl.jit
def floordiv_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) // 2)


@tl.jit
def branchy(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    if x > 0:
        tl.store(out_ptr + offsets, x)


def vectors(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("n,bs", [(1000, 64), (1000, 1024), (4097, 128), (4097, 1024)])
def test_vector_add_on_the_machine_equals_numpy_and_the_block_run(n, bs):
    x, y = vectors(n)
    grid = (tl.cdiv(n, bs),)
    pad = 1 << 12
    out = np.full(n + pad, -7.0, np.float32)  # room past n: the masked tail must leave it alone
    run = ls.simt.run_blocks(add_kernel, grid, x, y, out, n, BLOCK_SIZE=bs)
    ref = np.zeros(n, np.float32)
    add_kernel[grid](x, y, ref, n, BLOCK_SIZE=bs)
    np.testing.assert_array_equal(out[:n], x + y)
    np.testing.assert_array_equal(out[:n], ref)
    assert (out[n:] == -7.0).all()  # masked lanes store nothing
    # one CTA per program, num_warps (4) warps each unless the block is smaller
    assert run.ir.grid == tl.cdiv(n, bs)
    threads = min(bs, 4 * 32)
    assert run.ir.block == threads
    assert run.trace is not None and len(np.unique(run.trace.warp_block)) == run.ir.grid
    # the lanes the masks let through: n per load and per store, the rest idle
    assert run.transactions(store=True)["lanes"] == n
    assert run.transactions(store=False)["lanes"] == 2 * n
    # every warp issues its stores (a guarded instruction issues with the warp's lanes; the guard then
    # turns off the lanes past n): the idle lanes are the tail of the last program
    st_pcs = [i for i, ins in enumerate(run.ir.code) if ins.op == "st"]
    tr = run.trace
    stores = np.isin(tr.issue_pc, st_pcs)
    assert stores.sum() == run.ir.grid * run.ir.warps_per_block * (bs // threads)
    assert tr.active_lanes()[stores].sum() - run.transactions(store=True)["lanes"] == tl.cdiv(n, bs) * bs - n


def test_the_lowered_kernel_guards_loads_and_stores_with_the_mask():
    x, y = vectors(1000)
    prog = lower(add_kernel, (8,), x, y, np.zeros(1000, np.float32), 1000, BLOCK_SIZE=128)
    mem = [ins for ins in prog.ir.code if ins.op in ("ld", "st") and "global" in ins.mod]
    assert len(mem) == 3 and all(ins.guard is not None for ins in mem)
    assert any(ins.op == "setp" and ins.mod == ("lt",) for ins in prog.ir.code)
    assert "%ctaid.x" in prog.ir.render()
    assert prog.programs == 8 and prog.warps == 8 * 4 and prog.per_thread == 1


def test_mixed_elementwise_ops_match_the_block_run():
    n, bs = 777, 256
    x, y = vectors(n, seed=3)
    out, ref = np.zeros(n, np.float32), np.zeros(n, np.float32)
    ls.simt.run_blocks(mixed_kernel, (tl.cdiv(n, bs),), x, y, out, n, BLOCK_SIZE=bs, trace=False)
    mixed_kernel[(tl.cdiv(n, bs),)](x, y, ref, n, BLOCK_SIZE=bs)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)  # ex2.approx(x log2 e) vs exp


def test_unsupported_operations_are_named():
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(tl.BlockError, match="//"):
        lower(floordiv_kernel, (1,), x, np.zeros(64, np.float32), 64, BLOCK_SIZE=64)
    with pytest.raises(tl.BlockError, match="control flow"):
        lower(branchy, (1,), x, np.zeros(64, np.float32), 64, BLOCK_SIZE=64)
    with pytest.raises(tl.BlockError, match="one-dimensional"):
        lower(add_kernel, (1, 2), x, x, np.zeros(64, np.float32), 64, BLOCK_SIZE=64)
