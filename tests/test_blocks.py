"""Block-level kernels as in Triton (``ls.blocks``): values equal NumPy, counts follow closed forms."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
import labsim.blocks as tl


@tl.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@tl.jit
def unmasked_add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


@tl.jit
def scaled_exp(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.exp(x * scale), mask=mask)


def vectors(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def launch_add(n, block, seed=0):
    x, y = vectors(n, seed)
    out = np.zeros_like(x)
    run = add_kernel[lambda meta: (tl.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=block)
    return x, y, out, run


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3000), log_block=st.integers(3, 11))
def test_vector_add_equals_numpy_and_counts_follow_the_grid(n, log_block):
    """grid = ceil(n / B) programs of B lanes; the mask lets n lanes through in all, so the loads read
    2·n·4 bytes and the store writes n·4; the add runs on every lane (grid·B FLOPs); grid·B - n lanes idle,
    all of them in the last program."""
    block = 2 ** log_block
    x, y, out, run = launch_add(n, block)
    np.testing.assert_array_equal(out, x + y)
    grid = -(-n // block)
    k = run.kernel
    assert run.grid == (grid, 1, 1) and k.launch.grid == (grid, 1, 1)
    assert (k.bytes_read, k.bytes_written, k.flops) == (2 * n * 4, n * 4, grid * block)
    assert run.idle_lanes == grid * block - n
    assert [p.idle for p in run.programs[:-1]] == [0] * (grid - 1)
    assert k.launch.threads_per_block == 4 * 32  # num_warps = 4 (Triton's default) warps of 32


def test_the_kernel_runs_on_the_roofline_and_the_host_machine():
    """The lowered kernel is memory-bound: 12 bytes per element over HBM (or the latency floor)."""
    n = 1 << 24
    x, y, out, run = launch_add(n, 1024)
    chip = ls.hardware.get("H100 SXM")
    kc = ls.kernel_cost(run.kernel, chip)
    assert kc.time == pytest.approx(max(12 * n / chip.hbm_bandwidth, chip.min_kernel_time), rel=1e-12)
    assert kc.bound is ls.Bound.MEMORY
    m = ls.host.Machine(chip)
    xa, ya = m.put(x), m.put(y)
    o = m.launch(run.kernel, xa, ya, fn=np.add)
    np.testing.assert_array_equal(np.asarray(o), x + y)
    (k,) = m.trace.of_kind(ls.EventKind.KERNEL)
    assert k.duration == pytest.approx(kc.time) and k.start >= ya.ready


def test_each_block_size_compiles_its_own_kernel():
    """BLOCK_SIZE is a compile-time constant: each value is a separate compiled variant."""
    add_kernel.compiled.clear()
    for b in (64, 128, 64, 256):
        launch_add(1000, b)
    assert add_kernel.compiled == {(("BLOCK_SIZE", 64),), (("BLOCK_SIZE", 128),), (("BLOCK_SIZE", 256),)}
    assert launch_add(1000, 128)[3].kernel.name == "add_kernel[BLOCK_SIZE=128]"


def test_transcendentals_and_scalar_arguments():
    n = 777
    x = np.linspace(-2, 2, n, dtype=np.float32)
    out = np.zeros_like(x)
    run = scaled_exp[(tl.cdiv(n, 256),)](x, out, n, 0.5, BLOCK_SIZE=256)
    np.testing.assert_allclose(out, np.exp(x * 0.5), rtol=1e-6)
    assert run.kernel.transcendentals == 4 * 256 and run.kernel.flops == 4 * 256
    assert run.kernel.bytes_read == n * 4 and len(run.kernel.inputs) == 1 and len(run.kernel.outputs) == 1


def test_an_unmasked_tail_is_an_error_naming_the_program_and_the_fix():
    x, y = vectors(1000)
    with pytest.raises(tl.BlockError, match=r"program 3 loads x_ptr\[1000\.\.1023\].*mask the tail"):
        unmasked_add[(4,)](x, y, np.zeros_like(x), 1000, BLOCK_SIZE=256)
    out = np.zeros(1024, np.float32)  # exactly four full blocks: no mask needed
    xx, yy = vectors(1024)
    unmasked_add[(4,)](xx, yy, out, 1024, BLOCK_SIZE=256)
    np.testing.assert_array_equal(out, xx + yy)


@pytest.mark.parametrize("call, match", [
    (lambda x, y, o: add_kernel[(1,)](x, y, o, 10, BLOCK_SIZE=1000), "power of two"),
    (lambda x, y, o: add_kernel[(1,)](x, y, o, 10, BLOCK_SIZE=2 ** 21), "Triton's limit"),
    (lambda x, y, o: add_kernel[(1,)](x, y, o, 10), "compile-time constant"),
    (lambda x, y, o: add_kernel[(1,)](x, y, o, 10, BLOCK_SIZE=16.0), "must be an int"),
    (lambda x, y, o: add_kernel[(1,)](x, y, o, BLOCK_SIZE=16), "takes 4 arguments"),
    (lambda x, y, o: add_kernel[(0,)](x, y, o, 10, BLOCK_SIZE=16), "grid must be"),
    (lambda x, y, o: add_kernel(x, y, o, 10, BLOCK_SIZE=16), "launch it on a grid"),
    (lambda x, y, o: tl.program_id(0), "inside a @tl.jit kernel"),
])
def test_broken_rules_get_clear_errors(call, match):
    x, y = vectors(10)
    with pytest.raises(tl.BlockError, match=match):
        call(x, y, np.zeros_like(x))
