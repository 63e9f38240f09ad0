"""The kernel IR's vocabulary: issue pipes, PTX types, operands (registers, special registers, immediates,
parameters, labels), one :class:`Instr`, and the control-flow successors of an instruction. The kernel
itself (:class:`~labsim.compiler.isa.KernelIR`) and its builder live in :mod:`labsim.compiler.isa`."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from ..core.dtypes import numpy_dtype


class Pipe(enum.Enum):
    """The pipe of an SM that an instruction issues to (its issue cost and latency come from the machine).

    Not :class:`labsim.ExecUnit` (the chip's matrix unit or vector lanes that the roofline charges a
    whole kernel to) and not :class:`labsim.UnitKind` (the kind of a lane in a trace)."""

    ALU = "alu"  # FMA / integer lanes
    SFU = "sfu"  # special-function units
    MEM = "mem"  # global loads and stores (LSU to L1/L2/HBM)
    SHARED = "shared"  # shared-memory loads and stores, shuffles
    TENSOR = "tensor"  # tensor cores
    CONTROL = "control"  # branches, barriers, exit


_PTX_TYPE = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int32": "s32",
             "int64": "s64", "int8": "s8", "uint8": "u8", "bool": "pred", "int16": "s16", "uint32": "u32",
             "uint16": "u16", "uint64": "u64", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
_REG_PREFIX = {"pred": "p", "u64": "rd", "s64": "rd"}


def ptx_type(dtype: str) -> str:
    """The PTX type name of a labsim dtype (``float32`` -> ``f32``); PTX names pass through."""
    return _PTX_TYPE.get(dtype, dtype)


_NP = {"u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "s8": "int8", "s16": "int16",
       "s32": "int32", "s64": "int64", "b16": "uint16", "b32": "uint32", "b64": "uint64", "pred": "bool",
       "f64": "float64", "f32": "float32", "f16": "float16"}


def reg_dtype(ptype: str):
    """The NumPy dtype a register of PTX type ``ptype`` holds in the machine (bf16 and 8-bit floats
    as float32, as the reference interpreter evaluates them)."""
    if ptype in _NP:
        return np.dtype(_NP[ptype])
    back = {v: k for k, v in _PTX_TYPE.items()}
    return numpy_dtype(back.get(ptype, ptype))


@dataclass(frozen=True)
class Reg:
    """A typed virtual register (one value per thread)."""

    name: str  # "%f3"
    type: str  # PTX type: "f32", "u32", "u64", "pred", ...

    def __str__(self) -> str:
        return self.name


class Special(enum.Enum):
    """Special registers: read-only, one value per thread, set by the launch."""

    TID = "%tid.x"
    NTID = "%ntid.x"
    CTAID = "%ctaid.x"
    NCTAID = "%nctaid.x"
    LANEID = "%laneid"
    WARPID = "%warpid"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Imm:
    """An immediate operand."""

    value: float | int | bool
    type: str = "f32"

    def __str__(self) -> str:
        v = self.value
        if self.type == "pred":
            return "1" if v else "0"
        if isinstance(v, float) or self.type.startswith(("f", "bf")):
            v = float(v)
            if v != v:
                return "NaN"
            if v in (float("inf"), float("-inf")):
                return "+Inf" if v > 0 else "-Inf"
            return repr(v)
        return str(int(v))


@dataclass(frozen=True)
class Param:
    """A kernel parameter: the device address of one buffer (``ld.param.u64 %rd1, [x];``)."""

    name: str
    index: int  # position in KernelIR.params

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Label:
    name: str

    def __str__(self) -> str:
        return self.name


Operand = Union[Reg, Special, Imm, Param, Label]


@dataclass(frozen=True)
class Instr:
    """One instruction. ``op`` is the PTX-like mnemonic without types (``add``, ``ld``, ``setp``, ...);
    ``type`` the PTX type suffix; ``dst`` the register written (None for stores, branches, barriers);
    ``srcs`` the operands; ``guard`` an optional predicate (``@%p`` / ``@!%p``); ``mod`` extra
    mnemonic parts (``("global",)`` for ``ld.global``, ``("lt",)`` for ``setp.lt``); ``attrs`` what the
    machine needs beyond the text (the comparison, the shuffle mode, a tile shape)."""

    op: str
    dst: Reg | None = None
    srcs: tuple = ()
    type: str = ""
    mod: tuple[str, ...] = ()
    guard: Reg | None = None
    guard_neg: bool = False
    pipe: Pipe = Pipe.ALU
    attrs: dict = field(default_factory=dict, compare=False, hash=False)
    comment: str = ""

    def mnemonic(self) -> str:
        return ".".join([self.op, *self.mod] + ([self.type] if self.type else []))

    def reads(self) -> tuple[Reg, ...]:
        regs = [s for s in self.srcs if isinstance(s, Reg)]
        if self.guard is not None:
            regs.append(self.guard)
        return tuple(regs)

    def text(self) -> str:
        g = f"@{'!' if self.guard_neg else ''}{self.guard} " if self.guard is not None else ""
        ops = [str(self.dst)] if self.dst is not None else []
        srcs = [str(s) for s in self.srcs]
        if self.op in ("ld", "cp") and srcs:
            srcs[0] = f"[{srcs[0]}]"
        if self.op in ("st",) and srcs:
            srcs[0] = f"[{srcs[0]}]"
        body = f"{g}{self.mnemonic()}"
        args = ", ".join(ops + srcs)
        return f"{body:<22} {args};" if args else f"{body};"


def successors(code: list[Instr], labels: dict[str, int], pc: int) -> list[int]:
    """Where control can go after instruction ``pc`` (the end of the code is ``len(code)``)."""
    ins = code[pc]
    if ins.op in ("exit", "ret"):
        return [len(code)] if ins.guard is None else [len(code), pc + 1]
    if ins.op == "bra":
        tgt = labels[ins.srcs[0].name]
        return [tgt] if ins.guard is None else sorted({tgt, pc + 1})
    return [pc + 1]


__all__ = ["Imm", "Instr", "Label", "Operand", "Param", "Reg", "Special", "Pipe", "ptx_type", "reg_dtype",
           "successors"]
