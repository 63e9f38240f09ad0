"""Run a Triton-like block kernel (``ls.blocks``) on the SIMT machine: ``ls.simt.run_blocks``.

The kernel is lowered by :func:`labsim.compiler.block_emit.lower` (one CTA per program, the mask as a
predicate guarding loads and stores) and run by :func:`~labsim.machines.simt.machine.run_ir` with the
launch's arrays; what it stores is written back into them, as ``kernel[grid](...)`` does.
"""
from __future__ import annotations

import numpy as np

from ...compiler.block_emit import BlockProgram, lower
from .machine import KernelRun, run_ir


def run_blocks(kernel, grid, *args, chip: str = "H100 SXM", trace="auto", **constants) -> KernelRun:
    """Run ``kernel[grid](*args, **constants)`` on ``chip``'s SMs; returns the machine's :class:`KernelRun`
    (outputs, warp trace, counts). Its ``ir`` is the lowered kernel; the arrays the kernel stores to are
    updated in place."""
    prog: BlockProgram = lower(kernel, grid, *args, **constants)
    run = run_ir(prog.ir, prog.arrays, chip, trace=trace)
    for name, out in run.outputs.items():
        arr = prog.arrays[name]
        arr.reshape(-1)[...] = np.asarray(out).astype(arr.dtype, copy=False)
    return run


__all__ = ["run_blocks"]
