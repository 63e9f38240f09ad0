"""Contraction tile plans by chip generation: which matrix instruction each generation uses.

Since the SIMT machine (issue 12), ``kernel.listing`` of a loop, copy or reduction kernel is the
rendering of its executable kernel IR (:mod:`labsim.compiler.emit`), which ``ls.simt`` runs; a
contraction's listing is the tile plan written here (:func:`tile_plan`, :data:`MATRIX_PATHS`).

Introduced in "The journey of one matrix product" (step 4) and read closely in "The compiler at work".
A matrix product is shown as a tile plan, and the plan depends on the
chip's generation (:attr:`labsim.hardware.Chip.arch`), because each generation feeds its matrix unit
differently (:data:`MATRIX_PATHS`): Ampere issues ``mma.sync`` per warp fed by ``cp.async``; Hopper
issues ``wgmma.mma_async`` per warpgroup fed by the Tensor Memory Accelerator; Blackwell issues
``tcgen05.mma`` from one thread with accumulators in Tensor Memory; a TPU streams tiles through its
MXUs; a Sapphire Rapids CPU uses AMX tiles. ``listing(kernel)`` with no chip keeps a generic label.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..core import ops
from ..core.ops import Op
from ..hardware import Chip, get as get_chip
from .kernel import KernelKind, Launch

PSEUDO_IR = ("// pseudo-PTX: labsim's kernel IR, which ls.simt runs; PTX-like for reading, not for ptxas "
             "(16-bit floats are held in registers as labsim evaluates them)")
PSEUDO = "// pseudo-PTX: PTX-like for reading, not for ptxas (real PTX loads .b16 and computes addresses in registers)"


@dataclass(frozen=True)
class MatrixPath:
    """How one chip generation feeds its matrix unit: the instruction, who issues it, how tiles arrive.

    ``mma`` is the instruction a compiler emits (PTX for NVIDIA, the ISA mnemonic for a CPU); ``sass`` the
    NVIDIA machine instruction it becomes ("" where no public source names it); ``shape`` the (m, n, k) of
    one instruction for 16-bit inputs (``k`` covers 32 bytes of input, so 8-bit inputs take twice the k);
    ``tile`` the largest block tile (tm, tn, tk) labsim plans with; ``threads`` per block (``None`` where
    the unit has no threads, as on a TPU). Tiles, stages and thread counts are labsim's CUTLASS-like
    choices, not the only ones a library makes.
    """

    arch: str
    unit: str
    mma: str
    sass: str
    shape: tuple[int, int, int]
    issuer: str
    load: str
    accumulators: str
    tile: tuple[int, int, int]
    threads: int | None
    sources: tuple[str, ...]
    note: str = ""


MATRIX_PATHS: dict[str, MatrixPath] = {
    "generic": MatrixPath(
        "generic", "tensor cores", "tensor-core MMA", "", (16, 8, 16), "a warp",
        "global → shared", "registers (fp32)", (128, 128, 32), 256, (),
        note="no chip given: the instruction depends on the generation (listing_for(chip))"),
    "Ampere": MatrixPath(
        "Ampere", "tensor cores", "mma.sync.aligned.m16n8k16", "HMMA.16816", (16, 8, 16),
        "one warp (32 threads), synchronously",
        "cp.async: each thread copies 16 B global → shared, skipping registers", "registers (fp32)",
        (128, 128, 32), 256, ("nvidia-ptx-isa", "nvidia-cuda-binary-utilities")),
    "Hopper": MatrixPath(
        "Hopper", "tensor cores", "wgmma.mma_async.sync.aligned", "HGMMA", (64, 256, 16),
        "one warpgroup (4 warps, 128 threads), asynchronously",
        "TMA: one thread issues cp.async.bulk.tensor and the Tensor Memory Accelerator copies the whole "
        "tile global → shared", "registers of the warpgroup (fp32)",
        (128, 128, 64), 384, ("nvidia-ptx-isa", "nvidia-cuda-binary-utilities", "shah2024flashattention3"),
        note="warp-specialised: 1 producer warpgroup (TMA) + 2 consumer warpgroups (wgmma); mma.sync also "
             "runs on Hopper but reaches only about two thirds of peak"),
    "Blackwell": MatrixPath(
        "Blackwell", "tensor cores", "tcgen05.mma", "", (128, 256, 16), "one thread, asynchronously",
        "TMA: one thread issues cp.async.bulk.tensor and the Tensor Memory Accelerator copies the whole "
        "tile global → shared", "Tensor Memory (TMEM), not registers",
        (128, 128, 64), 256, ("nvidia-ptx-isa",),
        note="accumulators are read back from Tensor Memory (tcgen05.ld) for the epilogue"),
    "TPU": MatrixPath(
        "TPU", "MXU", "matmul on the MXU (a systolic array)", "", (128, 128, 128),  # v6e: 256 (the preset's matrix_unit)
        "the TensorCore's scalar unit, by the compiler's static schedule",
        "DMA HBM → VMEM, started by the scalar unit ahead of use", "the MXU's result buffers, then vector registers",
        (512, 512, 512), None, ("austin2025scaling",),
        note="no threads or blocks: the compiler schedules tiles one after another on the MXUs "
             "(a 512-wide tile is labsim's choice)"),
    "Sapphire Rapids": MatrixPath(
        "Sapphire Rapids", "AMX tiles", "TDPBF16PS", "", (16, 16, 32), "one core",
        "TILELOADD: rows of memory (through the caches) into 1 KB tile registers", "AMX tile registers (fp32)",
        (64, 64, 32), None, ("intel-optimization-manual",),
        note="each core runs its own tiles; no device, no launch"),
}


def matrix_path(chip: Chip | str | None) -> MatrixPath:
    """The matrix path of ``chip``'s generation (``None``: the generic, chip-free label)."""
    if chip is None:
        return MATRIX_PATHS["generic"]
    chip = get_chip(chip)
    arch = chip.arch
    if arch.startswith("TPU"):
        side = chip.matrix_unit[0] if chip.matrix_unit else None  # the preset's MXU (hardware/presets_tpu.py)
        path = MATRIX_PATHS["TPU"]
        if side is None:
            return path
        return replace(path, mma=f"matmul on the MXU (a {side}×{side} systolic array)", shape=(side, side, side))
    if arch not in MATRIX_PATHS:
        raise ValueError(f"no matrix path for {chip.name} (arch {chip.arch!r}); labsim knows "
                         f"{sorted(a for a in MATRIX_PATHS if a != 'generic')}")
    return MATRIX_PATHS[arch]


@dataclass(frozen=True)
class TilePlan:
    """A contraction kernel's plan on one chip: tile, launch, and how many matrix instructions a block issues."""

    path: MatrixPath
    tile: tuple[int, int, int]
    launch: Launch | None
    instruction_shape: tuple[int, int, int]
    instructions_per_block: int
    tensor_path: bool  # False: the dtype runs on the vector lanes (FFMA), not the matrix unit

    @property
    def instruction(self) -> str:
        m, n, k = self.instruction_shape
        p = self.path
        if p.arch == "Ampere":
            return f"mma.sync.aligned.m{m}n{n}k{k}"
        if p.arch == "Hopper":
            return f"wgmma.mma_async.sync.aligned.m{m}n{n}k{k}"
        return p.mma

    @property
    def machine_instruction(self) -> str:
        m, n, k = self.instruction_shape
        if self.path.arch == "Ampere":
            return f"HMMA.{m}{n}{k}"
        if self.path.arch == "Hopper":
            return f"HGMMA.{m}x{n}x{k}"
        return self.path.sass


_TENSOR_DTYPES = ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "int8")


def _p2(x: int, lo: int, cap: int) -> int:
    return max(lo, min(cap, 1 << max(0, (x - 1).bit_length())))


def tile_plan(k, chip: Chip | str | None = None) -> TilePlan:
    """The tile plan of contraction kernel ``k`` on ``chip``'s generation (``None``: the generic path).

    On a GPU (and for ``None``) its ``launch`` is the launch of the kernel IR
    (``labsim.compiler.emit.kernel_ir(k, chip).launch``), the one object the roofline, the SIMT machine
    and the listing read; a TPU or a CPU has no launch (``None``)."""
    plan = _plan(k, chip)
    if plan.path.threads is None:
        return plan
    from .emit import kernel_ir
    return replace(plan, launch=kernel_ir(k, chip).launch)


def _plan(k, chip: Chip | str | None = None) -> TilePlan:
    """The plan without its launch (``launch=None``): what the lowering builds the kernel IR from."""
    if k.kind is not KernelKind.CONTRACTION:
        raise ValueError(f"kernel {k.name} is a {k.kind.value} kernel; only contractions have a tile plan")
    path = matrix_path(chip)
    dot = next(n for n in k.nodes if n.op in ops.CONTRACTION)
    lhs, rhs = dot.operands[0].aval, dot.operands[1].aval
    b, m, n, kk = ops.dot_mnk(lhs, rhs, dot.params)
    isz = lhs.itemsize
    tensor = lhs.dtype in _TENSOR_DTYPES and not (path.arch == "Ampere" and lhs.dtype.startswith("float8"))
    if not tensor and path.unit == "tensor cores" and path.arch != "generic":
        # a SIMT kernel on the fp32 lanes: no TMA, no warpgroups, no Tensor Memory
        g = MATRIX_PATHS["generic"]
        path = replace(path, load="ld.global / cp.async, global → shared", accumulators=g.accumulators,
                       tile=g.tile, threads=g.threads, note="")
    sm, sn, sk = path.shape
    sk = max(sk, sk * 2 // isz) if isz < 2 else sk  # 8-bit inputs: k covers the same 32 bytes
    cm, cn, ck = path.tile
    tm, tn, tk = _p2(m, min(sm, cm), cm), _p2(n, min(16, cn), cn), _p2(kk, min(sk, ck), ck)
    sn = min(sn, tn)  # a Hopper/Blackwell instruction spans the tile's n (up to 256)
    if path.arch in ("Ampere", "generic"):
        sn = path.shape[1]
    per_block = math.ceil(tm / sm) * math.ceil(tn / sn) * math.ceil(kk / sk) if tensor else 0
    return TilePlan(path, (tm, tn, tk), None, (sm, sn, sk), per_block, tensor)


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


def _contraction_listing(k, chip: Chip | str | None = None) -> str:
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
        f"// tile plan: each {'block' if plan.launch else 'step'} computes a {tm}×{tn} tile of C; K in steps of {tk} ({steps} steps)",
        (f"// launch: {plan.launch}  ({plan.launch.blocks} tiles)" if plan.launch
         else f"// {tiles} tiles; {path.note}"),
    ]
    if plan.launch and path.note and path.arch != "generic":
        lines.append(f"// {path.note}")
    lines += [
        f"for each tile (bm, bn{', batch' if b > 1 else ''}):"
        + ("                 // one block, on one SM" if plan.launch else ""),
        f"    acc[{tm}×{tn}] = 0                         // accumulators in {path.accumulators}",
        f"    for k0 in 0..{kk} step {tk}:               // {steps} iterations",
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


def listing(k, chip: Chip | str | None = None) -> str:
    """The kernel's listing: a contraction's tile plan for ``chip``'s generation (``None``: a generic,
    chip-free label); any other kernel's listing is the rendering of its executable kernel IR, which
    lowering attached to the kernel (``kernel.render``, :func:`labsim.compiler.emit.listing`)."""
    from .emit import listing as ir_listing
    return ir_listing(k, chip)
