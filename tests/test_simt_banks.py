"""``labsim.machines.simt.banks``: bank conflicts of one warp's shared-memory access."""
from __future__ import annotations

import numpy as np
import pytest

from labsim.machines.simt import banks


def brute_ways(addresses, itemsize=4):
    words = {w for a in addresses for w in range(a // 4, (a + itemsize - 1) // 4 + 1)}
    per = [0] * 32
    for w in words:
        per[w % 32] += 1
    return max(per)


def test_row_read_is_conflict_free_and_broadcast_too():
    assert banks.bank_conflicts(np.arange(32) * 4).ways == 1
    assert banks.bank_conflicts(np.zeros(32, np.int64)).ways == 1  # one word for all: a broadcast


@pytest.mark.parametrize("stride,ways", [(1, 1), (2, 2), (3, 1), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1)])
def test_stride_in_words(stride, ways):
    a = np.arange(32) * 4 * stride
    assert banks.bank_conflicts(a).ways == ways == brute_ways(a)


def test_column_of_a_32_by_32_tile():
    col = banks.tile_column_addresses(32, 32, 5)
    assert banks.bank_conflicts(col).ways == 32  # every row starts in bank 0: one bank for all 32 lanes
    assert banks.bank_conflicts(banks.tile_column_addresses(32, 32, 5, pad=1)).ways == 1
    for c in (0, 7, 31):
        sw = banks.tile_column_addresses(32, 32, c, swizzle=True)
        assert banks.bank_conflicts(sw).ways == 1
        assert sorted((sw // 4) % 32) == list(range(32))


def test_random_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.integers(0, 4096, 32) * 4
        assert banks.bank_conflicts(a).ways == brute_ways(list(a))
        b = rng.integers(0, 512, 32) * 8
        assert banks.bank_conflicts(b, itemsize=8).ways == brute_ways(list(b), 8)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="addresses"):
        banks.bank_conflicts(np.arange(33) * 4)
    with pytest.raises(ValueError, match="itemsize"):
        banks.bank_conflicts(np.arange(32) * 4, itemsize=3)
    with pytest.raises(ValueError, match="column"):
        banks.tile_column_addresses(32, 32, 32)
    with pytest.raises(ValueError, match="swizzle"):
        banks.tile_column_addresses(32, 48, 0, swizzle=True)
