"""A kernel's kind and its launch shape (:class:`Launch`, ``ls.Launch``): the data the kernel IR, the
tile plans and the machines share, in a module that imports nothing of the compiler."""
from __future__ import annotations

import enum
from dataclasses import dataclass


class KernelKind(enum.Enum):
    LOOP = "loop"  # elementwise: one thread per output element
    REDUCTION = "reduction"
    CONTRACTION = "contraction"  # dot: a tiled matrix product on tensor cores / MXU
    COPY = "copy"  # transpose, broadcast, slice, concatenate


@dataclass(frozen=True)
class Launch:
    """The launch shape a GPU would use: grid of blocks, threads per block, shared memory per block."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int = 0

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def __str__(self) -> str:
        g = "×".join(map(str, self.grid))
        b = "×".join(map(str, self.block))
        return f"grid {g} × block {b}" + (f", {self.shared_bytes} B shared" if self.shared_bytes else "")


__all__ = ["KernelKind", "Launch"]
