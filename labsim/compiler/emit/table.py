"""The lowering table: which kernel-IR instruction each element-wise Op becomes, and reductions' combiners."""
from __future__ import annotations

from ...support.errors import LabsimError

import numpy as np

from ...core import alu, ops
from ...core.ops import Op
from ..isa import Pipe, ptx_type, reg_dtype

_COMBINE = {Op.REDUCE_SUM: "add", Op.REDUCE_MAX: "max", Op.REDUCE_MIN: "min"}
_COMBINE_OP = {o: c for o, (c, _) in alu.REDUCE.items()}

# What PTX runs where labsim's IR has one instruction for an op (the instruction computes the op's value
# as the ALU table does, so the machine agrees with ls.evaluate to the bit).
_PTX_NOTE = {
    Op.EXP: "exp: PTX multiplies by log2(e), then ex2.approx",
    Op.LOG: "log: PTX lg2.approx, then a multiply by ln 2",
    Op.LOGISTIC: "logistic: PTX ex2.approx, add 1, rcp.approx",
    Op.ERF: "erf: a libdevice function (__nv_erff), no single instruction",
    Op.POWER: "pow: a libdevice function (__nv_powf)",
}


def _rule(op: Op) -> tuple:
    """(mnemonic, modifiers, unit, note) of ``op``'s instruction, from the op table's ``ptx`` column."""
    name, *mod = ops.get(op).ptx.split(".")
    return name, tuple(mod), Pipe.SFU if op in ops.TRANSCENDENTAL else Pipe.ALU, _PTX_NOTE.get(op, "")


LOWERING: dict[Op, tuple] = {op: _rule(op) for op in (
    Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.DIVIDE, Op.MAXIMUM, Op.MINIMUM, Op.NEGATE, Op.ABS, Op.EXP, Op.LOG,
    Op.TANH, Op.SQRT, Op.RSQRT, Op.LOGISTIC, Op.ERF, Op.POWER)}
"""Elementwise Op -> its instruction in the kernel IR; each instruction names its Op (``attrs["alu"]``)."""


class LoweringError(LabsimError, NotImplementedError):
    """A kernel this lowering does not handle (the message says which part)."""


def _identity(op: str, dtype: str):
    nd = reg_dtype(ptx_type(dtype))
    if op == Op.REDUCE_SUM:
        return 0
    big = float("inf") if nd.kind == "f" else (np.iinfo(nd).max if nd.kind in "iu" else True)
    small = float("-inf") if nd.kind == "f" else (np.iinfo(nd).min if nd.kind in "iu" else False)
    return small if op == Op.REDUCE_MAX else big


__all__ = ["LOWERING", "LoweringError"]
