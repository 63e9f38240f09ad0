"""The ALU table: one value rule per elementwise and reduction :class:`~labsim.core.ops.Op`.

Introduced in "Inside a GPU". Every place that computes an op's value reads this table: the op table's
reference implementations (``ls.evaluate``), constant folding, the SIMT machine (an instruction names
the Op it computes, ``instr.attrs["alu"]``) and the block kernels of ``ls.blocks``. So an element-wise
op gives the same bits wherever it runs (as tinygrad's ``exec_alu`` serves its interpreter, its
constant folder and its emulator).

A rule takes NumPy arrays of the dtype labsim holds the values in (``labsim.core.dtypes.numpy_dtype``)
and returns the result. Where a machine combines a *reduction* in another order (a warp's shuffle tree,
a systolic array's fp32 accumulation), its result differs from :func:`reduce` by rounding only; the
machine's module says which order it uses and its tests derive the tolerance from that order.

``integer_pow`` is defined by square-and-multiply (``x**3 = (x·x)·x``), the order the lowering emits,
so its value is the same in the interpreter and on the machine.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .opcodes import Op


def _divide(x, y):
    if np.issubdtype(np.result_type(x, y), np.integer):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.floor_divide(x, y)  # HLO integer divide; lnp maps // and / on ints here
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(x, y)


def _erf(x):
    # math.erf elementwise (exact to 1 ulp), in the operand's dtype
    x = np.asarray(x)
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def integer_pow(x, y: int):
    """x**y by square-and-multiply, the multiplies in the order the lowering emits them."""
    x = np.asarray(x)
    y = int(y)
    if y == 0:
        return np.ones_like(x)
    e, result, sq = abs(y), None, x
    while e:
        if e & 1:
            result = sq if result is None else result * sq
        e >>= 1
        if e:
            sq = sq * sq
    if y < 0:
        return 1.0 / result
    return result


COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}

ALU: dict[Op, Callable] = {
    Op.ADD: np.add, Op.SUBTRACT: np.subtract, Op.MULTIPLY: np.multiply, Op.DIVIDE: _divide,
    Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum,
    Op.NEGATE: np.negative, Op.ABS: np.abs, Op.EXP: np.exp, Op.LOG: np.log, Op.TANH: np.tanh,
    Op.SQRT: np.sqrt, Op.RSQRT: _rsqrt, Op.LOGISTIC: _logistic, Op.FLOOR: np.floor, Op.ERF: _erf,
    Op.POWER: np.power, Op.INTEGER_POW: integer_pow,
    Op.COMPARE: lambda x, y, direction: COMPARE[direction](x, y),
    Op.SELECT: lambda p, a, b: np.where(p, a, b),
}
"""Op -> value rule (NumPy arrays in, array out; parameters as keyword arguments)."""

REDUCE: dict[Op, tuple[Op, Callable]] = {
    Op.REDUCE_SUM: (Op.ADD, np.sum), Op.REDUCE_MAX: (Op.MAXIMUM, np.max), Op.REDUCE_MIN: (Op.MINIMUM, np.min),
}
"""Reduction Op -> (its combining elementwise Op, the reference reduction in NumPy's order)."""


def apply(op, *args, **params):
    """The value of elementwise ``op`` on ``args`` (floating-point warnings silenced: inf and nan are values)."""
    rule = ALU.get(op)
    if rule is None:
        raise KeyError(f"the ALU table has no value rule for {op!r}; it has {sorted(o.value for o in ALU)}")
    with np.errstate(all="ignore"):
        return rule(*args, **params)


def reduce(op, x, axes):
    """The value of reduction ``op`` over ``axes`` (NumPy's pairwise order for sums)."""
    return np.asarray(REDUCE[op][1](x, axis=tuple(axes)))


def combine(op, a, b):
    """One step of reduction ``op``: its combining op applied to two partial values (a machine's tree)."""
    return apply(REDUCE[op][0], a, b)


__all__ = ["ALU", "COMPARE", "REDUCE", "apply", "combine", "integer_pow", "reduce"]
