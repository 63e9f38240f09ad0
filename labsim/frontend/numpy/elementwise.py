"""``lnp``'s elementwise ops: binary ops broadcast and promote their operands, then bind one IR node;
comparisons, ``where`` and the unary ops."""
from __future__ import annotations
from ...support.errors import ArgumentError, ArgumentTypeError

import numbers

import numpy as _np

from ...core.avals import ShapeError
from ...core.dtypes import is_float, result_dtype, weak_dtype
from ...core.ops import Op
from ...core.trace import Tracer, bind
from .arrays import _check, _dtype, _promote, _shape, asarray, astype, broadcast_to


def _binary(op: str, x, y, **params):
    _check(op, x, y)
    if op == Op.SUBTRACT and (_dtype(x) or weak_dtype(x)) == "bool" and (_dtype(y) or weak_dtype(y)) == "bool":
        raise ArgumentTypeError("subtract: booleans cannot be subtracted (NumPy refuses it too); use lnp.not_equal for "
                        "xor, or convert to an integer or float dtype first")
    x, y = _promote(op, x, y)
    sx, sy = _shape(x), _shape(y)
    if sx != sy and sx != () and sy != ():
        try:
            shape = _np.broadcast_shapes(sx, sy)
        except ValueError:
            raise ShapeError(f"{op}: shapes {sx} and {sy} cannot be broadcast together") from None
        x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    elif _dtype(x) is None and _dtype(y) is None:  # two Python scalars: the result is an array
        x = asarray(x)
    return bind(op, x, y, **params)


def add(x, y): return _binary("add", x, y)
def subtract(x, y): return _binary("subtract", x, y)
def multiply(x, y): return _binary("multiply", x, y)
def maximum(x, y): return _binary("maximum", x, y)
def minimum(x, y): return _binary("minimum", x, y)


def divide(x, y):
    """True division, as ``jnp.divide``: the operands promote first, and an integer (or bool) result
    dtype becomes float32 (int32 / bfloat16 is bfloat16; int32 / int32 is float32)."""
    _check("divide", x, y)
    dts = [d for d in (_dtype(x), _dtype(y)) if d is not None]
    if dts:
        target = result_dtype(*dts)
        if not is_float(target):
            target = "float32"
        x, y = (astype(v, target) if _dtype(v) is not None else v for v in (x, y))
    return _binary("divide", x, y)


true_divide = divide


def floor_divide(x, y):
    """``x // y``: floors, as NumPy does. Integers divide exactly; otherwise ``floor(x / y)`` in float."""
    _check("floor_divide", x, y)
    floats = [d for d in (_dtype(x), _dtype(y)) if d is not None and is_float(d)]
    if floats or isinstance(x, float) or isinstance(y, float):
        return floor(_binary("divide", x, y))
    if _dtype(x) is None and _dtype(y) is None:
        x = asarray(x)
    return _binary("divide", x, y)


def floor(x):
    """Round toward minus infinity (``jnp.floor``); integers are returned as they are."""
    _check("floor", x)
    if _dtype(x) is None:
        x = asarray(x)
    if not is_float(_dtype(x)):
        return x
    return bind("floor", x)


def power(x, y):
    if isinstance(y, numbers.Integral) and not isinstance(y, bool):
        _check("power", x)
        dx = _dtype(x) or weak_dtype(x)
        if int(y) < 0 and not is_float(dx):
            raise ArgumentError(f"power: integers to negative integer powers are not allowed ({dx} ** {int(y)}), "
                             "as in NumPy; convert to a float dtype first")
        if _dtype(x) is None:
            x = asarray(x)
        return bind("integer_pow", x, y=int(y))
    return _binary("power", x, y)


def equal(x, y): return _binary("compare", x, y, direction="eq")
def not_equal(x, y): return _binary("compare", x, y, direction="ne")
def less(x, y): return _binary("compare", x, y, direction="lt")
def less_equal(x, y): return _binary("compare", x, y, direction="le")
def greater(x, y): return _binary("compare", x, y, direction="gt")
def greater_equal(x, y): return _binary("compare", x, y, direction="ge")


def where(condition, x, y):
    """``select``: elementwise ``x`` where ``condition`` holds, else ``y`` (all three broadcast)."""
    _check("where", condition, x, y)
    if _dtype(condition) != "bool":
        condition = not_equal(condition, 0)
    x, y = _promote("where", x, y)
    try:
        shape = _np.broadcast_shapes(_shape(condition), _shape(x), _shape(y))
    except ValueError:
        raise ShapeError(f"where: shapes {_shape(condition)}, {_shape(x)} and {_shape(y)} cannot be broadcast "
                         "together") from None
    args = []
    for a in (condition, x, y):
        if _shape(a) != shape and _shape(a) != ():
            a = broadcast_to(a, shape)
        args.append(a)
    if not any(isinstance(a, (Tracer, _np.ndarray)) for a in args):
        args = [asarray(a) for a in args]  # all Python scalars; otherwise arrays keep their dtype
    return bind("select", *args)


def _unary(op: str, x):
    _check(op, x)
    if _dtype(x) is None:
        x = asarray(x)
    if op not in (Op.NEGATE, Op.ABS) and not is_float(_dtype(x)):  # the rest compute in floating point
        x = astype(x, "float32")
    return bind(op, x)


def negative(x):
    if (_dtype(x) or weak_dtype(x)) == "bool":
        raise ArgumentTypeError("negate: a boolean cannot be negated (NumPy refuses -bool too); use lnp.logical_not "
                        "semantics via x == False, or convert to a number dtype first")
    return _unary("negate", x)
def abs(x): return _unary("abs", x)  # noqa: A001 (mirrors jnp.abs)
def exp(x): return _unary("exp", x)
def log(x): return _unary("log", x)
def tanh(x): return _unary("tanh", x)
def sqrt(x): return _unary("sqrt", x)
def rsqrt(x): return _unary("rsqrt", x)
def erf(x): return _unary("erf", x)


absolute = abs


def square(x): return bind("integer_pow", x, y=2)


