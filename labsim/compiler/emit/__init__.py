"""Lowering a kernel to the executable kernel IR (:mod:`labsim.compiler.isa`), and its listing.

Introduced in "Inside a GPU". Every kernel kind the compiler emits has a lowering here, and the
kernel's listing (``kernel.listing``) is the rendering of that IR, which ``ls.simt`` runs:

* **loop and copy kernels**: one thread per output element. ``i = %ctaid.x * %ntid.x + %tid.x``;
  threads with ``i`` past the end branch to the exit; ``i`` is split into coordinates (``div``/``rem``
  by the dimensions' sizes); each input's address is computed from the coordinates the fused data
  movement (broadcast, transpose, slice, reshape, concatenate) maps them to; loads come first, then the
  arithmetic in registers, then one store per output.
* **reduction kernels**: one block per element of the reduction's result (a "row"). Each thread walks
  the row with a stride of the block size, combining into a register; the warp combines its 32 values
  with five ``shfl.sync.bfly`` steps; lane 0 of each warp writes its partial to shared memory,
  ``bar.sync``; every warp reads the partials back and combines them again, so every thread holds the
  row's result (a second ``bar.sync`` frees the shared memory for the next reduction). A fused kernel
  (softmax, layer_norm) runs its reductions in order and then writes its outputs; a reduction needed
  at a coordinate that is not the block's row is recomputed by the thread that needs it (a plain loop).
* **contractions**: one block per tile of the output (the chip's tile plan,
  :func:`labsim.compiler.codegen.tile_plan`). Per step along K the block copies the A and B tiles to
  shared memory (Ampere: ``cp.async`` per thread; Hopper: one ``cp.async.bulk.tensor`` by the TMA;
  operands with a prologue: loads and stores by the threads), ``bar.sync``, then each warp (Ampere) or
  warpgroup (Hopper) issues the tile-level matrix instruction for its rows. The epilogue reads the
  accumulators, applies the fused element-wise ops and stores.

labsim's simplifications (not how a production compiler does it): no loop unrolling or vector loads;
accumulators of a contraction live in shared memory so that any thread can read them in the epilogue;
one instruction of the IR may stand for several hardware instructions of the same kind (a tile-level
``mma`` for the warp's ``mma.sync`` instructions; ``div.rn.f32`` for the division sequence).
"""
from __future__ import annotations
from ...support.errors import ArgumentError, ArgumentTypeError

import weakref

from ...hardware import Chip, ChipKind, get as get_chip
from ..isa import KernelIR
from ..launch import KernelKind
from .contraction import _contraction
from .loop import _loop
from .reduction import _reduction
from .table import LOWERING, LoweringError
from .values import _Lower


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Kernel -> {(chip, select): KernelIR}


def kernel_ir(k: "Kernel", chip: Chip | str | None = None, *, select: str = "select") -> KernelIR:
    """The executable IR of kernel ``k`` for ``chip``'s generation (``None``: the generic, chip-free
    path), lowered once per (kernel, chip, select) and cached: every caller (the roofline's GPU terms,
    ``ls.simt.run``, the listing) gets the same object, so they see one launch (``ir.launch``).
    :meth:`KernelIR.verify` runs after the lowering.

    ``select="select"`` lowers ``where``/``select`` to ``selp`` (both values computed, no branch);
    ``select="branch"`` to a data-dependent branch (each lane computes only its value; a warp whose
    lanes disagree runs both paths with masks)."""
    if not all(hasattr(k, a) for a in ("kind", "nodes", "inputs", "outputs", "param_names")):  # an ls.Kernel
        raise ArgumentTypeError(f"kernel_ir: kernel must be a Kernel (prog.kernels[i]), got {type(k).__name__}")
    if select not in ("select", "branch"):
        raise ArgumentError(f"select must be 'select' or 'branch', got {select!r}")
    c = get_chip(chip) if chip is not None else None
    per = _CACHE.setdefault(k, {})
    key = (c.name if c is not None else None, select)
    ir = per.get(key)
    if ir is None:
        ir = per[key] = _lower(k, c, select)
    return ir


def _lower(k: "Kernel", c: Chip | None, select: str) -> KernelIR:
    L = _Lower(k, c)
    L.select_as = select
    if k.kind is KernelKind.CONTRACTION:
        if c is not None and c.kind is not ChipKind.GPU:
            raise LoweringError(f"{c.name} is not a GPU: the SIMT machine runs contractions on NVIDIA GPUs")
        ir = _contraction(L, c)
    elif k.kind is KernelKind.REDUCTION:
        ir = _reduction(L)
    else:
        ir = _loop(L)
    ir.verify()
    return ir


def listing(k: "Kernel", chip: Chip | str | None = None) -> str:
    """The kernel IR of ``k`` printed (what ``ls.simt`` runs), contractions included: labsim's one
    ``listing`` function. ``kernel.listing`` shows a contraction as the chip's tile plan instead
    (:func:`labsim.compiler.codegen.tile_plan_text`), whose launch is this IR's."""
    try:
        text = kernel_ir(k, chip).render()
    except LoweringError as e:  # say so instead of printing code that is not what runs
        return f"// {k.name}: {' → '.join(k.ops)}\n// labsim has no kernel IR for this kernel: {e}"
    if chip is not None and get_chip(chip).kind is not ChipKind.GPU:
        text = (f"// as a GPU would run it; on {get_chip(chip).name} the compiler emits vector code "
                "for the same loop\n" + text)
    return text


__all__ = ["LOWERING", "LoweringError", "kernel_ir", "listing"]
