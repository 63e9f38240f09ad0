"""A kernel: what one launch runs, with its launch shape and its cost facts.

Introduced in "The journey of one matrix product" (step 4). A kernel reads its inputs from device
memory once, computes in registers and on-chip memory, and writes its outputs once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.ir import Node, Var
from .launch import KernelKind, Launch


@dataclass(frozen=True, eq=False)
class Kernel:
    """One launch: the nodes it runs, what it reads and writes in device memory, and its cost facts.

    Plain data: no callbacks. Its launch shape, listing, registers and shared memory are read from its
    kernel IR (:func:`labsim.compiler.emit.kernel_ir`, lowered once per chip and cached), so every
    machine and figure sees one launch. ``param_names`` name its buffers in the IR and the listing
    (inputs, then outputs); ``views`` maps an input read through a free reshape, as
    ``(operand, buffer)`` pairs. ``given_launch`` is set only for a block kernel (``ls.blocks``), whose
    launch is the one it was called with.
    """

    name: str
    kind: KernelKind
    nodes: tuple[Node, ...]
    inputs: tuple[Var, ...]
    outputs: tuple[Var, ...]
    flops: int
    transcendentals: int
    bytes_read: int
    bytes_written: int
    dtype: str
    tile: tuple[int, int, int] | None = None  # (tm, tn, tk) for contractions
    precision: str = "default"  # the dot's precision= ("default", "high", "highest"), for contractions
    param_names: tuple[str, ...] = ()
    views: tuple[tuple[Var, Var], ...] = ()
    given_launch: Launch | None = None

    @property
    def launch(self) -> Launch:
        """The launch with no chip in particular: that of the kernel IR lowered for the generic path
        (``kernel_ir(kernel, None).launch``); ``ls.simt.kernel_ir(kernel, chip).launch`` is a chip's."""
        if self.given_launch is not None:
            return self.given_launch
        from .emit import kernel_ir
        return kernel_ir(self, None).launch

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: FLOPs per byte of device-memory traffic."""
        return self.flops / self.bytes if self.bytes else math.inf

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(n.op for n in self.nodes)

    def ops_summary(self, most: int = 4) -> str:
        """The kernel's ops in order, shortened for a table: ``a → b → … → z (18 ops)``."""
        ops = self.ops
        if len(ops) <= most:
            return " → ".join(ops)
        return f"{ops[0]} → {ops[1]} → … → {ops[-1]} ({len(ops)} ops)"

    @property
    def listing(self) -> str:
        """The kernel's code as a reader sees it (labsim's pseudo-PTX, or a tile plan), for no chip in
        particular: a contraction names no instruction. :meth:`listing_for` names the chip's."""
        return self.listing_for(None)

    def listing_for(self, chip) -> str:
        """The listing as ``chip`` (a Chip or preset name) would run it: a contraction's tile plan and
        matrix instruction follow the chip's generation (``Chip.arch``)."""
        if self.kind is KernelKind.CONTRACTION:
            from .codegen import tile_plan_text
            return tile_plan_text(self, chip)
        from .emit import listing
        return listing(self, chip)

    def __repr__(self) -> str:
        return (f"<Kernel {self.name}: {self.kind.value}, {self.flops} FLOPs, "
                f"{self.bytes_read} B read, {self.bytes_written} B written>")
