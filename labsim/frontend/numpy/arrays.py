"""``lnp``'s arrays: the dtype names (``lnp.float32(3)``), the small checks every op shares, ``asarray``,
``astype``, dtype promotion (as ``jax.numpy``: a Python scalar is a weak literal) and ``broadcast_to``."""
from __future__ import annotations
from ...support.errors import ArgumentTypeError

import numbers
import operator

import numpy as _np

from ...core.avals import ShapeError, TraceError
from ...core.dtypes import DtypeError, canonical_dtype, int_range, is_float, is_integer, numpy_dtype, result_dtype
from ...core.ir import ArrayValue
from ...core.ops import Op
from ...core.trace import Tracer, bind, current_trace, is_arraylike
from typing import Sequence


ndarray = _np.ndarray
class _DType(str):
    """A dtype name that can also be called, like ``jnp.float32(3)``, to make a scalar of that dtype."""

    def __call__(self, x):
        return asarray(x, str(self))


float32, float16, float64, int32, int8 = (_DType(n) for n in ("float32", "float16", "float64", "int32", "int8"))
bfloat16, bool_ = _DType("bfloat16"), _DType("bool")
pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan
newaxis = None


# ----------------------------------------------------------------------------------------------
# small helpers
def _shape(x) -> tuple[int, ...]:
    if isinstance(x, (Tracer, _np.ndarray, _np.generic)):
        return tuple(x.shape)
    if isinstance(x, numbers.Number):
        return ()
    raise TraceError(f"expected an array or a number, got {type(x).__name__} {x!r:.40}")


def _dtype(x) -> str | None:
    """Dtype of an array; None for a Python scalar (weakly typed)."""
    if isinstance(x, Tracer):
        return x.dtype
    if isinstance(x, (_np.ndarray, _np.generic)):
        return canonical_dtype(x.dtype)
    return None


def _check(op: str, *xs) -> None:
    for x in xs:
        if not is_arraylike(x):
            if isinstance(x, (list, tuple)):
                raise TraceError(f"{op}: got a Python {type(x).__name__}; wrap it with lnp.asarray(...) first")
            raise TraceError(f"{op}: cannot use {type(x).__name__} {x!r:.40} as an array")


def _index(value, what: str, op: str) -> int:
    """An integer argument (an axis, a size, an exponent): ints only, never truncated."""
    if isinstance(value, (bool, _np.bool_)):
        raise ArgumentTypeError(f"{op}: {what} must be an integer, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentTypeError(f"{op}: {what} must be an integer, got {type(value).__name__} {value!r:.40}") from None


def _norm_axis(axis: int, ndim: int, op: str) -> int:
    if isinstance(axis, (tuple, list)):
        raise ShapeError(f"{op}: axis must be one integer here, got {type(axis).__name__} {tuple(axis)!r}")
    a = _index(axis, "axis", op)
    if ndim == 0 or not -ndim <= a < ndim:
        raise ShapeError(f"{op}: axis {axis} is out of range for an array of rank {ndim}"
                         + (" (a scalar has no axes)" if ndim == 0 else ""))
    return a % ndim


def _norm_axes(axis, ndim: int, op: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = [_norm_axis(a, ndim, op) for a in axis]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{op}: repeated axis in {tuple(axis)} (for an array of rank {ndim})")
        return tuple(sorted(axes))
    return (_norm_axis(axis, ndim, op),)


def _sizes(shape, op: str) -> tuple[int, ...]:
    """A shape argument: an int or a sequence of non-negative ints (never truncated)."""
    if isinstance(shape, (numbers.Integral, _np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise ArgumentTypeError(f"{op}: a shape must be an int or a tuple of ints, got {type(shape).__name__} {shape!r:.40}")
    out = tuple(_index(d, f"size {d!r} in shape {tuple(shape)}", op) for d in shape)
    return out


def asarray(x, dtype=None):
    """An array from a list, scalar, NumPy array or traced value (constants become IR constants)."""
    if isinstance(x, Tracer):
        return x if dtype is None else astype(x, dtype)
    try:
        arr = _np.asarray(x)
    except (ValueError, OverflowError) as e:  # ragged lists, ints beyond 64 bits
        raise TraceError(f"asarray: cannot make an array from {type(x).__name__} {x!r:.60}: {e}") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TraceError(f"asarray: {type(x).__name__} {x!r:.60} is not numeric (dtype {arr.dtype})")
    target = canonical_dtype(dtype) if dtype is not None else \
        {"float64": "float32", "int64": "int32", "uint64": "int32"}.get(arr.dtype.name)  # JAX's defaults, x64 off
    if target is not None:
        if is_integer(target) and arr.dtype.kind in "iub" and arr.size:
            lo, hi = int_range(target)
            if arr.min() < lo or arr.max() > hi:
                raise DtypeError(f"asarray: values from {arr.min()} to {arr.max()} do not fit in {target} "
                                 f"(range {lo}..{hi}); labsim does not wrap them silently")
        arr = arr.astype(numpy_dtype(target))
    ctx = current_trace()
    if ctx is not None and arr.dtype != object:
        # inside a trace, a created array is a constant *in the graph* (as jnp under jit), so the
        # compiler sees it and constant folding can compute what depends only on it
        dt = target or canonical_dtype(arr.dtype)
        return Tracer(ctx, ctx.emit(Op.CONSTANT, (), {"value": ArrayValue(arr), "dtype": dt}))
    return arr


array = asarray


def astype(x, dtype):
    dt = canonical_dtype(dtype)
    if _dtype(x) == dt:
        return x
    return bind("convert", x, new_dtype=dt)


def _promote(op: str, *xs):
    """Convert array operands to a common dtype; scalars stay weak literals."""
    dts = [d for d in (_dtype(x) for x in xs) if d is not None]
    if not dts:
        return xs
    target = result_dtype(*dts)
    if any(isinstance(x, float) for x in xs) and not is_float(target):
        target = "float32"
    return tuple(astype(x, target) if _dtype(x) not in (None, target) else x for x in xs)


def broadcast_to(x, shape: Sequence[int]):
    _check("broadcast_to", x)
    shape = _sizes(shape, "broadcast_to")
    xs = _shape(x)
    if xs == shape:
        return x
    if len(xs) > len(shape) or any(a not in (1, b) for a, b in zip(xs[::-1], shape[::-1])):
        raise ShapeError(f"broadcast_to: cannot broadcast shape {xs} to {shape}")
    if not isinstance(x, Tracer) and (current_trace() is not None or not isinstance(x, _np.ndarray)):
        # inside a trace a NumPy array becomes a constant of its own size, then a broadcast node: the
        # graph never holds the broadcast copy (a causal mask stays S×S, not batch×heads×S×S)
        x = asarray(x)
    dims = tuple(range(len(shape) - len(xs), len(shape)))
    return bind("broadcast", x, shape=shape, broadcast_dimensions=dims)


