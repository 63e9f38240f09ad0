"""Contraction tile plans by chip generation: which matrix instruction each generation uses.

Since the SIMT machine (issue 12), ``kernel.listing`` of a loop, copy or reduction kernel is the
rendering of its executable kernel IR (:func:`labsim.compiler.emit.listing`, the one ``listing``
function), which ``ls.simt`` runs; a contraction's ``kernel.listing`` is its tile plan printed for
reading, written here (:func:`tile_plan_text`, from :func:`tile_plan` and :data:`MATRIX_PATHS`).

Introduced in "The journey of one matrix product" (step 4) and read closely in "The compiler at work".
A matrix product is shown as a tile plan, and the plan depends on the
chip's generation (:attr:`labsim.hardware.Chip.arch`), because each generation feeds its matrix unit
differently (:data:`MATRIX_PATHS`): Ampere issues ``mma.sync`` per warp fed by ``cp.async``; Hopper
issues ``wgmma.mma_async`` per warpgroup fed by the Tensor Memory Accelerator; Blackwell issues
``tcgen05.mma`` from one thread with accumulators in Tensor Memory; a TPU streams tiles through its
MXUs; a Sapphire Rapids CPU uses AMX tiles. ``tile_plan_text(kernel)`` with no chip keeps a generic label.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..core import ops
from ..core.ops import Op
from ..hardware import Chip
from ..support.errors import ArgumentError
from ..support.text import plural
from .emit import kernel_ir
from .launch import KernelKind
from .plans import (MATRIX_PATHS, PSEUDO, PSEUDO_IR, MatrixPath, TilePlan, _plan,  # noqa: F401  (re-exported)
                    matrix_path)


def tile_plan(k, chip: Chip | str | None = None) -> TilePlan:
    """The tile plan of contraction kernel ``k`` on ``chip``'s generation (``None``: the generic path).

    On a GPU (and for ``None``) its ``launch`` is the launch of the kernel IR
    (``labsim.compiler.emit.kernel_ir(k, chip).launch``), the one object the roofline, the SIMT machine
    and the listing read; a TPU or a CPU has no launch (``None``)."""
    plan = _plan(k, chip)
    if plan.path.threads is None:
        return plan
    return replace(plan, launch=kernel_ir(k, chip).launch)


def _operand_slices(dot, tm: int, tn: int, tk: int) -> tuple[str, str]:
    """How a block's A and B tiles are cut, following the dot's contracting dimensions (2-D operands)."""
    (lc, rc), _ = dot.params["contracting"], dot.params["batch"]
    a_rows, a_cols = f"bm·{tm} : +{tm}", f"k0 : +{tk}"
    b_rows, b_cols = f"k0 : +{tk}", f"bn·{tn} : +{tn}"
    a = f"A[{a_rows}, {a_cols}]" if tuple(lc) != (0,) or dot.operands[0].aval.ndim != 2 else \
        f"A[{a_cols}, {a_rows}]   /* A stored K×M: read as stored */"
    bb = f"B[{b_rows}, {b_cols}]" if tuple(rc) != (1,) or dot.operands[1].aval.ndim != 2 else \
        f"B[{b_cols}, {b_rows}]   /* B stored N×K: read as stored */"
    return a, bb


def _prologue(k, dot) -> list:
    """The kernel's nodes the dot reads through (views and conversions of its operands), in order."""
    inside = {id(n.out): n for n in k.nodes}
    seen, stack = set(), [dot]
    while stack:
        for a in stack.pop().in_vars:
            n = inside.get(id(a))
            if n is not None and id(n) not in seen:
                seen.add(id(n))
                stack.append(n)
    return [n for n in k.nodes if id(n) in seen]


def _store(k, dot, epi, tm: int, tn: int) -> tuple[str, str]:
    """The epilogue's write of the block's tile, following transposes of the result (labels per dim)."""
    rank = dot.out.aval.ndim
    labels = {2: ["bm", "bn"], 3: ["batch", "bm", "bn"]}.get(rank)
    span = {"bm": f"bm·{tm} : +{tm}", "bn": f"bn·{tn} : +{tn}", "batch": "batch"}
    note = "the only write of C to device memory"
    for e in epi:
        if labels is None:
            break
        if e.op == Op.TRANSPOSE:
            labels = [labels[i] for i in e.params["permutation"]]
            note = f"written transposed: tile (bm, bn) lands at {', '.join(labels)}; the only write"
        elif e.op in (Op.RESHAPE,) or e.out.aval.ndim != len(labels):
            labels = None
    out = k.outputs[0].aval.short() if k.outputs else "C"
    if labels is None:
        return f"    out ← acc", f"// {out}, laid out by the epilogue; the only write"
    return f"    out[{', '.join(span[x] for x in labels)}] ← acc", f"// {out}: {note}"


def tile_plan_text(k, chip: Chip | str | None = None) -> str:
    """Contraction kernel ``k``'s tile plan on ``chip``'s generation printed as pseudo-code for reading
    (``None``: a generic, chip-free label). ``kernel.listing_for(chip)`` of a contraction shows it; the
    code ``ls.simt`` runs is the kernel IR, printed by :func:`labsim.compiler.emit.listing`."""
    if getattr(k, "kind", None) is not KernelKind.CONTRACTION:
        raise ArgumentError(f"tile_plan_text: k={getattr(k, 'name', k)!r} is not a contraction kernel "
                            f"(kind {getattr(getattr(k, 'kind', None), 'value', None)!r}); it takes a kernel "
                            "of kind 'contraction' (others: labsim.compiler.emit.listing)")
    dot = next(n for n in k.nodes if n.op in ops.CONTRACTION)
    lhs, rhs = dot.operands[0].aval, dot.operands[1].aval
    b, m, n, kk = ops.dot_mnk(lhs, rhs, dot.params)
    plan = tile_plan(k, chip)
    path = plan.path
    tm, tn, tk = plan.tile
    steps = math.ceil(kk / tk)
    isz = lhs.itemsize
    if not plan.tensor_path:
        how = (f"no {lhs.dtype} {path.unit} path: FFMA on fp32 lanes (TF32 tensor cores if allowed)"
               if path.unit == "tensor cores" else f"{lhs.dtype} is not a {path.unit} input type: the compiler "
               f"splits it into 16-bit passes or runs it on the vector lanes")
    elif path.arch == "generic":
        how = "tensor-core MMA (chip-dependent: listing_for(chip) names it)"
    else:
        sass = f" (SASS {plan.machine_instruction})" if plan.machine_instruction else ""
        how = f"{plan.instruction}{sass}, issued by {path.issuer}"
    tiles = math.ceil(m / tm) * math.ceil(n / tn) * b
    head = f"{path.arch}: " if path.arch != "generic" else ""
    a_sl, b_sl = _operand_slices(dot, tm, tn, tk)
    pro = _prologue(k, dot)
    epi = [n_ for n_ in k.nodes if n_ is not dot and n_ not in pro]
    store, store_note = _store(k, dot, epi, tm, tn)
    lines = [
        f"// {k.name}: {' → '.join(k.ops)}   [{head}tile plan, pseudo-code for reading]",
        f"// C[{b}×{m}×{n}] = A[{m}×{kk}] · B[{kk}×{n}]" + (f", batch {b}" if b > 1 else ""),
        f"// tile plan: each {'block' if plan.launch else 'step'} computes a {tm}×{tn} tile of C; K in steps of {tk} ({plural(steps, 'step')})",
        (f"// launch: {plan.launch}  ({plural(plan.launch.blocks, 'tile')})" if plan.launch
         else f"// {plural(tiles, 'tile')}; {path.note}"),
    ]
    if plan.launch and path.note and path.arch != "generic":
        lines.append(f"// {path.note}")
    lines += [
        f"for each tile (bm, bn{', batch' if b > 1 else ''}):"
        + ("                 // one block, on one SM" if plan.launch else ""),
        f"    acc[{tm}×{tn}] = 0                         // accumulators in {path.accumulators}",
        f"    for k0 in 0..{kk} step {tk}:               // {plural(steps, 'iteration')}",
        f"        A_s ← {a_sl}    // {tm * tk * isz} B, {path.load}",
        f"        B_s ← {b_sl}    // {tk * tn * isz} B",
        f"        acc += A_s · B_s                       // {how}",
    ]
    if pro:
        lines.insert(-3, f"        // prologue, applied as the tiles are read: {' → '.join(n_.op for n_ in pro)}")
    if plan.tensor_path and path.arch != "generic":
        sm, sn, sk = plan.instruction_shape
        what = "MXU operations" if path.unit == "MXU" else "instructions"
        lines.append(f"                                               // {plan.instructions_per_block} {what} of "
                     f"{sm}×{sn}×{sk} per tile over all of K")
    if epi:
        lines.append(f"    acc = {' → '.join(e.op for e in epi)}(acc)   // fused epilogue, still on chip")
    lines.append(f"{store}          {store_note}")
    return "\n".join(lines)

