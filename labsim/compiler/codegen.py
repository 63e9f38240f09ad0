"""Readable listings of kernels: pseudo-PTX for loop kernels, a tile plan for contractions.

Introduced in "The journey of one matrix product" (step 4) and read closely in "The compiler at work".
The listings are for reading, not for running. Loop and reduction kernels are *pseudo-PTX*: PTX-like
instructions (``ld.global``, arithmetic on registers, ``st.global``) with readable addresses such as
``[x + 4*i]``; ``ptxas`` would reject them (real PTX loads 16-bit values as ``.b16`` and computes each
address into a register first). A matrix product is shown as a tile plan, and the plan depends on the
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
from ..core.dtypes import HLO_NAME
from ..core.ir import Literal, Var
from ..core.ops import Op, OpKind
from ..hardware import Chip, ChipKind, get as get_chip
from .kernel import KernelKind, Launch

_PTX_TYPE = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int32": "s32",
             "int64": "s64", "int8": "s8", "uint8": "u8", "bool": "pred", "int16": "s16",
             "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def _ptx(op: str) -> str:
    return ops.get(op).ptx or op


def _t(dtype: str) -> str:
    return _PTX_TYPE.get(dtype, HLO_NAME.get(dtype, dtype))


def _loop_listing(k) -> str:
    n_out = k.outputs[0].aval.size
    nthreads = k.launch.threads_per_block
    params = [f".param .u64 {_pname(k, v)}" for v in k.inputs] + [f".param .u64 {_pname(k, v)}_out" for v in k.outputs]
    lines = [f"// {k.name}: {' → '.join(k.ops)}; one thread per output element",
             PSEUDO,
             f"// launch: {k.launch}",
             f".entry {k.name.replace('.', '_')}({', '.join(params)})", "{",
             f"  mad.lo.u32   %i, %ctaid.x, {nthreads}, %tid.x;     // i = blockIdx.x * {nthreads} + threadIdx.x",
             f"  setp.ge.u32  %p_done, %i, {n_out};",
             "  @%p_done bra DONE;                            // threads past the end do nothing"]
    reg: dict[int, str] = {}
    counter = [0]

    def fresh(dtype: str) -> str:
        counter[0] += 1
        return f"%{'p' if dtype == 'bool' else 'f' if dtype.startswith(('float', 'bfloat')) else 'r'}{counter[0]}"

    for v in k.inputs:
        r = fresh(v.aval.dtype)
        reg[id(v)] = r
        idx = "i" if v.aval.size == n_out else f"index_map(i)  /* {v.aval.short()} */"
        lines.append(f"  ld.global.{_t(v.aval.dtype):<5} {r}, [{_pname(k, v)} + {v.aval.itemsize}*{idx}];")
    for n in k.nodes:
        opdef = ops.get(n.op)
        args = []
        for a in n.operands:
            if isinstance(a, Literal):
                args.append(str(a))
            else:
                args.append(reg.get(id(a), reg.get(id(k._names.get(id(a), a)), "%?")))
        if opdef.kind in (OpKind.DATA_MOVEMENT,) or n.op == Op.CONSTANT:
            reg[id(n.out)] = args[0] if args else fresh(n.out.aval.dtype)
            lines.append(f"  // {n.op}: no instruction, only a different index into {args[0] if args else 'memory'}")
            continue
        r = fresh(n.out.aval.dtype)
        reg[id(n.out)] = r
        if n.op == Op.COMPARE:
            lines.append(f"  setp.{n.attr('direction')}.{_t(n.operands[0].aval.dtype):<4} {r}, {', '.join(args)};")
        elif n.op == Op.SELECT:
            lines.append(f"  selp.{_t(n.out.aval.dtype):<8} {r}, {args[1]}, {args[2]}, {args[0]};")
        elif n.op == Op.INTEGER_POW:
            lines.append(f"  // x**{n.attr('y')} as repeated multiplies")
            lines.append(f"  mul.{_t(n.out.aval.dtype):<9} {r}, {args[0]}, {args[0]};")
        elif n.op == Op.EXP:
            lines.append(f"  mul.{_t(n.out.aval.dtype):<9} {r}, {args[0]}, 1.4426950;     // exp(x) = 2^(x·log2 e)")
            lines.append(f"  ex2.approx.{_t(n.out.aval.dtype)} {r}, {r};")
        elif opdef.kind is OpKind.ELEMENTWISE:
            lines.append(f"  {_ptx(n.op)}.{_t(n.out.aval.dtype):<{max(1, 12 - len(_ptx(n.op)))}} {r}, {', '.join(args)};")
        else:
            lines.append(f"  // {n.op} (not a loop op)")
    for v in k.outputs:
        lines.append(f"  st.global.{_t(v.aval.dtype):<5} [{_pname(k, v)}_out + {v.aval.itemsize}*i], {reg.get(id(v), '%?')};")
    lines += ["DONE:", "  ret;", "}"]
    return "\n".join(lines)


def _pname(k, v: Var) -> str:
    return k._names.get(("p", id(v))) or f"buf{v.id}"


def _reduction_listing(k) -> str:
    red = next(n for n in k.nodes if n.op in ops.REDUCTION)
    x = red.operands[0].aval
    n_out = max(red.out.aval.size, 1)
    per = x.size // n_out
    comb = ops.get(red.op).ptx
    t = _t(red.out.aval.dtype)
    return "\n".join([
        f"// {k.name}: {' → '.join(k.ops)}",
        PSEUDO,
        f"// launch: {k.launch}; one block per output element ({n_out}), {per} inputs each",
        f".entry {k.name.replace('.', '_')}(...)", "{",
        f"  acc = identity({comb});",
        f"  for (j = threadIdx.x; j < {per}; j += blockDim.x)     // strided loop over this row",
        f"      acc = {comb}.{t}(acc, ld.global.{t} [in + row*{per} + j]);",
        f"  acc = warp_shuffle_reduce({comb}, acc);              // 5 shfl.sync steps inside a warp",
        f"  st.shared [warp_id], acc;  bar.sync 0;               // then across warps via shared memory",
        f"  if (threadIdx.x == 0) st.global.{t} [out + {red.out.aval.itemsize}*blockIdx.x], reduce(shared);",
        "}",
    ])


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
        "TPU", "MXU", "matmul on the MXU (a systolic array)", "", (128, 128, 128),  # v6e: 256 (_MXU_SIDE)
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


# The side of one MXU (a square systolic array), by TPU generation: 128 on v5e, 256 on v6e
# ("How to Scale Your Model", How to Think About TPUs).
_MXU_SIDE = {"TPU v5e": 128, "TPU v6e": 256}


def matrix_path(chip: Chip | str | None) -> MatrixPath:
    """The matrix path of ``chip``'s generation (``None``: the generic, chip-free label)."""
    if chip is None:
        return MATRIX_PATHS["generic"]
    chip = get_chip(chip)
    arch = chip.arch
    if arch.startswith("TPU"):
        side = _MXU_SIDE.get(arch)
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
    """The tile plan of contraction kernel ``k`` on ``chip``'s generation (``None``: the kernel's own plan)."""
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
    if chip is None:
        tm, tn, tk = k.tile
        launch = k.launch
    else:
        cm, cn, ck = path.tile
        tm, tn, tk = _p2(m, min(sm, cm), cm), _p2(n, min(16, cn), cn), _p2(kk, min(sk, ck), ck)
        if path.threads is None:
            launch = None
        else:
            launch = Launch((math.ceil(n / tn), math.ceil(m / tm), b), (path.threads, 1, 1),
                            (tm * tk + tk * tn) * isz * 2)
    sn = min(sn, tn)  # a Hopper/Blackwell instruction spans the tile's n (up to 256)
    if path.arch in ("Ampere", "generic"):
        sn = path.shape[1]
    per_block = math.ceil(tm / sm) * math.ceil(tn / sn) * math.ceil(kk / sk) if tensor else 0
    return TilePlan(path, (tm, tn, tk), launch, (sm, sn, sk), per_block, tensor)


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


def _copy_listing(k) -> str:
    n = k.nodes[-1]
    return "\n".join([
        f"// {k.name}: {' → '.join(k.ops)}: moves {k.bytes_read} B in, {k.bytes_written} B out, no arithmetic",
        PSEUDO,
        f"// launch: {k.launch}",
        f"  ld.global [in + index_map(i)]  →  st.global [out + i]      // {n.op}: {n.out.aval.short()}",
    ])


def _library_listing(k) -> str:
    n = next(n for n in k.nodes if n.op in ops.COMPOSITE)
    ins = ", ".join(a.aval.short() for a in n.operands)
    return "\n".join([
        f"// {k.name}: {' → '.join(k.ops)}: a library kernel (not decomposed by the compiler)",
        f"// launch: {k.launch}",
        f"  call {n.op}({ins}) -> {n.out.aval.short()}{ops.get(n.op).format_attrs(n.params)}",
    ])


def listing(k, chip: Chip | str | None = None) -> str:
    """The kernel's listing: labsim's pseudo-PTX for a loop kernel, a tile plan for a contraction.

    ``chip`` (a :class:`~labsim.hardware.Chip` or preset name) picks the contraction's instruction path
    by the chip's generation; ``None`` keeps a generic, chip-free label. Loop, reduction and copy
    listings are pseudo-PTX, as a GPU would run them; on a TPU or CPU their first line says so.
    """
    if any(n.op in ops.COMPOSITE for n in k.nodes):
        return _library_listing(k)
    if k.kind is KernelKind.CONTRACTION:
        return _contraction_listing(k, chip)
    text = {KernelKind.LOOP: _loop_listing, KernelKind.REDUCTION: _reduction_listing,
            KernelKind.COPY: _copy_listing}[k.kind](k)
    if chip is not None and get_chip(chip).kind is not ChipKind.GPU:
        text = (f"// as a GPU would run it; on {get_chip(chip).name} the compiler emits vector code "
                "for the same loop\n" + text)
    return text
