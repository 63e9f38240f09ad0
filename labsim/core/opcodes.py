"""The :class:`Op` enum: every op labsim knows, by name (the op table, :mod:`labsim.core.ops`, and the ALU
table, :mod:`labsim.core.alu`, are both keyed by it)."""
from __future__ import annotations

import enum


class Op(str, enum.Enum):
    """Every op labsim knows. A member compares (and hashes) equal to its name, so ``node.op == Op.ADD``
    and ``REGISTRY["add"]`` both work; printing a member prints the name."""

    __str__ = str.__str__
    __format__ = str.__format__
    __hash__ = str.__hash__

    # elementwise
    ADD = "add"
    SUBTRACT = "subtract"
    MULTIPLY = "multiply"
    DIVIDE = "divide"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    POWER = "power"
    COMPARE = "compare"
    SELECT = "select"
    NEGATE = "negate"
    ABS = "abs"
    EXP = "exp"
    LOG = "log"
    TANH = "tanh"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    LOGISTIC = "logistic"
    ERF = "erf"
    FLOOR = "floor"
    INTEGER_POW = "integer_pow"
    CONVERT = "convert"
    IOTA = "iota"
    # reductions
    REDUCE_SUM = "reduce_sum"
    REDUCE_MAX = "reduce_max"
    REDUCE_MIN = "reduce_min"
    # contraction
    DOT = "dot"
    # data movement
    RESHAPE = "reshape"
    TRANSPOSE = "transpose"
    BROADCAST = "broadcast"
    SLICE = "slice"
    CONCATENATE = "concatenate"
    UPDATE_SLICE = "update_slice"
    # constants
    CONSTANT = "constant"
    # composites: registered by the front end (labsim.numpy, labsim.nn) beside the functions that build them
    MEAN = "mean"
    SOFTMAX = "softmax"
    GELU = "gelu"
    LAYER_NORM = "layer_norm"


__all__ = ["Op"]
