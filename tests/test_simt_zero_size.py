"""Products with a zero-sized dimension run on the SIMT machine and give NumPy's (empty or zero) result.

On the A100's cp.async path the compiler clamped addresses to ``shape - 1``, an unsigned -1 for a
zero-sized K, and the machine refused the kernel with NumPy's OverflowError (found by the kernel-IR fuzzer)."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls

SHAPES = [((4, 0), (0, 3)), ((2, 4, 0), (2, 0, 3)), ((0, 5), (5, 3)), ((4, 5), (5, 0)), ((1, 0), (0, 1))]


@pytest.mark.parametrize("chip", ["A100 80GB", "H100 SXM"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_zero_sized_product_on_the_simt_machine(chip, dtype, shapes):
    a, b = (np.ones(s, np.float32) for s in shapes)
    g = ls.trace(lambda x, y: x @ y, ls.ShapeDtype(shapes[0], dtype), ls.ShapeDtype(shapes[1], dtype))
    out = np.asarray(ls.simt.run(ls.compile(g), a, b, chip=chip).outputs)
    assert out.shape == (a @ b).shape
    assert np.array_equal(out, a @ b)
