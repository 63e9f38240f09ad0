"""Coalescing: how many memory transactions one warp's access needs, from its 32 addresses.

Introduced in "Inside a GPU". A warp's load or store is one request; the memory system serves it in
32-byte *sectors*, grouped in 128-byte cache *lines* (the granularity NVIDIA's CUDA Best Practices
Guide and Nsight Compute count in, for compute capability 6.0 and later). The count is the number of
distinct sectors (lines) the active lanes' byte ranges touch: 32 lanes reading consecutive 4-byte
values touch 4 sectors in 1 line (coalesced); a stride of 2 elements touches 8 sectors in 2 lines; a
stride of 32 elements gives every lane a sector and a line of its own. The machine
(:mod:`.machine`) counts the same thing for every load and store it executes, from the real addresses.
"""
from __future__ import annotations
from ...support.errors import ArgumentError

from dataclasses import dataclass
from ...hardware import WARP_SIZE as WARP

import numpy as np

SECTOR = 32  # bytes
LINE = 128  # bytes


@dataclass(frozen=True)
class Transactions:
    lanes: int
    bytes_requested: int
    sectors: int
    lines: int

    @property
    def efficiency(self) -> float:
        """Bytes the lanes asked for / bytes the sectors moved (1.0 = perfectly coalesced)."""
        return self.bytes_requested / (self.sectors * SECTOR) if self.sectors else 1.0


def transactions(addresses, itemsize: int = 4, mask=None) -> Transactions:
    """Sectors and lines touched by one warp accessing ``itemsize`` bytes at each of ``addresses``."""
    a = np.asarray(addresses, dtype=np.int64).ravel()
    if mask is not None:
        a = a[np.asarray(mask, bool).ravel()]
    if a.size > WARP:
        raise ArgumentError(f"one warp has {WARP} lanes; got {a.size} addresses")
    if itemsize < 1:
        raise ArgumentError(f"itemsize must be at least 1 byte, got {itemsize}")
    first, last = a, a + itemsize - 1
    sectors = {s for f, l in zip(first // SECTOR, last // SECTOR) for s in range(int(f), int(l) + 1)}
    lines = {s for f, l in zip(first // LINE, last // LINE) for s in range(int(f), int(l) + 1)}
    return Transactions(int(a.size), int(a.size * itemsize), len(sectors), len(lines))


def warp_addresses(stride: int = 1, offset: int = 0, itemsize: int = 4, *, transposed_rows: int | None = None,
                   base: int = 0) -> np.ndarray:
    """The byte addresses of a warp's 32 lanes reading element ``offset + lane * stride`` of an array of
    ``itemsize``-byte values; with ``transposed_rows=R`` lane ``l`` reads row ``l`` of a row-major
    matrix with R columns (a column read: the stride is R elements)."""
    lane = np.arange(WARP, dtype=np.int64)
    if transposed_rows is not None:
        stride = transposed_rows
    return base + (offset + lane * stride) * itemsize


__all__ = ["LINE", "SECTOR", "Transactions", "transactions", "warp_addresses"]
