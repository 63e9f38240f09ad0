"""Shared-memory bank conflicts of one warp's access (chapter 7, *Inside a GPU*).

Shared memory is divided into 32 banks of 4-byte words: word ``w`` (byte address // 4) lives in bank
``w % 32``, and each bank serves one word per clock (CUDA C++ Programming Guide, "Shared Memory", compute
capability 5.x and later). A warp's request is served in as many passes ("wavefronts") as the most
distinct words any one bank must deliver; lanes that read the *same* word share it (a broadcast), so they
do not conflict. A request whose busiest bank holds ``n`` distinct words is an ``n``-way bank conflict.

This is the classic model for 32-bit accesses by one warp; wider accesses (64- and 128-bit per lane,
which the hardware splits into half- or quarter-warp phases) are labsim's simplification: every lane's
word is counted in one request.
"""
from __future__ import annotations
from ...support.errors import ArgumentError

from dataclasses import dataclass

import numpy as np

BANKS = 32
BANK_BYTES = 4


@dataclass(frozen=True)
class BankAccess:
    """One warp's shared-memory request: ``ways`` is the largest number of distinct words one bank must
    deliver (1: no conflict), ``words`` the distinct words asked for, ``per_bank`` the distinct words of
    each of the 32 banks."""

    ways: int
    words: int
    per_bank: tuple[int, ...]

    @property
    def conflict_free(self) -> bool:
        return self.ways <= 1


def bank_conflicts(addresses, itemsize: int = 4) -> BankAccess:
    """The bank conflicts of one warp's shared-memory access at byte ``addresses`` (1 to 32 lanes), each
    reading ``itemsize`` bytes (every 4-byte word an item covers counts)."""
    a = np.asarray(addresses).ravel()
    if a.size == 0 or a.size > 32:
        raise ArgumentError(f"bank_conflicts: addresses must hold 1 to 32 lanes' byte addresses, got {a.size}")
    if not np.issubdtype(a.dtype, np.integer) or (a < 0).any():
        raise ArgumentError("bank_conflicts: addresses must be non-negative integer byte addresses")
    if not isinstance(itemsize, int) or isinstance(itemsize, bool) or itemsize not in (1, 2, 4, 8, 16):
        raise ArgumentError(f"bank_conflicts: itemsize must be 1, 2, 4, 8 or 16 bytes, got {itemsize!r}")
    a = a.astype(np.int64)
    first, last = a // BANK_BYTES, (a + itemsize - 1) // BANK_BYTES
    words = np.unique(np.concatenate([np.arange(f, l + 1) for f, l in zip(first, last)]))
    per_bank = np.bincount(words % BANKS, minlength=BANKS)
    return BankAccess(ways=int(per_bank.max()), words=int(words.size), per_bank=tuple(int(x) for x in per_bank))


def tile_column_addresses(rows: int = 32, cols: int = 32, column: int = 0, *, pad: int = 0, swizzle: bool = False,
                          itemsize: int = 4) -> np.ndarray:
    """Byte addresses of a warp reading ``column`` of a row-major ``rows × cols`` tile in shared memory
    (lane ``i`` reads row ``i``), each row padded by ``pad`` items, or with the XOR swizzle that stores
    element (r, c) at column ``c ^ (r % 32)`` of row r (needs ``cols`` a multiple of 32)."""
    for name, v in (("rows", rows), ("cols", cols)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ArgumentError(f"tile_column_addresses: {name} must be a positive integer, got {v!r}")
    if rows > 32:
        raise ArgumentError(f"tile_column_addresses: a warp reads at most 32 rows, got rows={rows}")
    if not 0 <= column < cols:
        raise ArgumentError(f"tile_column_addresses: column must be in 0..{cols - 1}, got {column!r}")
    if not isinstance(pad, int) or pad < 0:
        raise ArgumentError(f"tile_column_addresses: pad must be a non-negative integer, got {pad!r}")
    if swizzle and cols % 32:
        raise ArgumentError(f"tile_column_addresses: the XOR swizzle needs cols a multiple of 32, got {cols}")
    r = np.arange(rows)
    c = (column ^ (r % 32)) if swizzle else np.full(rows, column)
    return (r * (cols + pad) + c) * itemsize


__all__ = ["BANKS", "BANK_BYTES", "BankAccess", "bank_conflicts", "tile_column_addresses"]
