"""Tile plans by chip generation: which matrix instruction each generation uses, and the tile a contraction
kernel is cut into (:func:`labsim.compiler.codegen.tile_plan` adds the launch, read from the kernel IR).

Introduced in "The journey of one matrix product" (step 4) and read closely in "The compiler at work".
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import math
from dataclasses import dataclass, replace

from ..core import ops
from ..hardware import Chip, get as get_chip
from .launch import KernelKind, Launch
from .tpu_blocks import DEFAULT_BLOCK, block_rule


PSEUDO_IR = ("// pseudo-PTX: labsim's kernel IR, which ls.simt runs; PTX-like for reading, not for ptxas "
             "(16-bit floats are held in registers as labsim evaluates them)")
PSEUDO = "// pseudo-PTX: PTX-like for reading, not for ptxas (real PTX loads .b16 and computes addresses in registers)"


@dataclass(frozen=True)
class MatrixPath:
    """How one chip generation feeds its matrix unit: the instruction, who issues it, how tiles arrive.

    ``mma`` is the instruction a compiler emits (PTX for NVIDIA, the ISA mnemonic for a CPU); ``sass`` the
    NVIDIA machine instruction it becomes ("" where no public source names it); ``shape`` the (m, n, k) of
    one instruction for 16-bit inputs (``k`` covers 32 bytes of input, so 8-bit inputs take twice the k);
    ``tile`` the largest block tile (tm, tn, tk) labsim plans with (a TPU's tile is its VMEM block, from
    :func:`labsim.compiler.tpu_blocks.block_rule`, the rule ``ls.tpu.schedule_dot`` uses); ``threads`` per
    block (``None`` where the unit has no threads, as on a TPU). Tiles, stages and thread counts are labsim's CUTLASS-like
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
        (DEFAULT_BLOCK,) * 3, None, ("austin2025scaling",),
        note="no threads or blocks: the compiler schedules tiles one after another on the MXUs "
             f"(VMEM blocks of up to {DEFAULT_BLOCK:,} a side, fitted to the product and to VMEM: labsim's "
             "rule, the one ls.tpu.schedule_dot times)"),
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
            r, c, _ = path.shape
            return replace(path, note=f"{path.note}; the {chip.name} preset records no MXU shape, so the "
                                      f"block assumes {r}×{c} arrays, and ls.tpu does not schedule this chip")
        return replace(path, mma=f"matmul on the MXU (a {side}×{side} systolic array)", shape=(side, side, side))
    if arch not in MATRIX_PATHS:
        raise ArgumentError(f"no matrix path for {chip.name} (arch {chip.arch!r}); labsim knows "
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


def _tpu_block(k, chip, path: MatrixPath, m: int, n: int, kk: int, isz: int) -> tuple[int, int, int]:
    """A TPU contraction's block (bm, bn, bk), as ``ls.tpu.kernel_cost`` schedules it: the chip's MXU and
    VMEM, the kernel's output itemsize, double-buffered. A TPU preset with no recorded MXU shape takes the
    path's (128 × 128; ``ls.tpu`` refuses such a chip); one with no recorded VMEM (v6e) is not fitted to
    VMEM, as ``ls.tpu.choose_blocks`` does not fit it either."""
    c = get_chip(chip)
    mxu = tuple(c.matrix_unit) if c.matrix_unit else path.shape[:2]
    vmem = int(c.onchip["VMEM"]) if "VMEM" in c.onchip else None
    out_isz = k.outputs[0].aval.itemsize if k.outputs else isz
    return block_rule(m, n, kk, mxu, vmem, isz, out_isz, double_buffer=True)


def _plan(k, chip: Chip | str | None = None) -> TilePlan:
    """The plan without its launch (``launch=None``): what the lowering builds the kernel IR from."""
    if k.kind is not KernelKind.CONTRACTION:
        raise ArgumentError(f"kernel {k.name} is a {k.kind.value} kernel; only contractions have a tile plan")
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
    if path.unit == "MXU":  # a TPU: the VMEM block the static schedule uses (ls.tpu.choose_blocks' rule)
        tm, tn, tk = _tpu_block(k, chip, path, max(1, m), max(1, n), max(1, kk), isz)
    else:
        tm, tn, tk = _p2(m, min(sm, cm), cm), _p2(n, min(16, cn), cn), _p2(kk, min(sk, ck), ck)
    sn = min(sn, tn)  # a Hopper/Blackwell instruction spans the tile's n (up to 256)
    if path.arch in ("Ampere", "generic"):
        sn = path.shape[1]
    per_block = math.ceil(tm / sm) * math.ceil(tn / sn) * math.ceil(kk / sk) if tensor else 0
    return TilePlan(path, (tm, tn, tk), None, (sm, sn, sk), per_block, tensor)


__all__ = ["MATRIX_PATHS", "MatrixPath", "PSEUDO", "PSEUDO_IR", "TilePlan", "matrix_path"]
