"""``labsim.numpy`` (``lnp``): a traceable NumPy-like front end that mirrors ``jax.numpy``.

Introduced in "The journey of one matrix product". A function written for ``jnp`` runs with ``lnp``
swapped in, for the ops listed in ``__all__``: under :func:`labsim.trace` every call records IR nodes;
on NumPy arrays it computes eagerly. Broadcasting and dtype promotion follow ``jax.numpy``: NumPy-style
broadcasting becomes explicit ``broadcast`` nodes, a Python scalar is a weakly-typed literal that takes
the array's dtype, and mixing two array dtypes inserts a ``convert``.
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator
from typing import Any, Sequence

import numpy as _np

from ..core.avals import IndexingError, ShapeDtype, ShapeError, TraceError
from ..core.dtypes import (DtypeError, accumulation_dtype, canonical_dtype, int_range, is_float, is_integer, numpy_dtype,
                           result_dtype, weak_dtype)
from ..core.ir import ArrayValue
from ..core.ops import Op
from ..core.trace import Tracer, bind, current_trace, is_arraylike, register_composite

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
        raise TypeError(f"{op}: {what} must be an integer, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an integer, got {type(value).__name__} {value!r:.40}") from None


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
        raise TypeError(f"{op}: a shape must be an int or a tuple of ints, got {type(shape).__name__} {shape!r:.40}")
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


def _binary(op: str, x, y, **params):
    _check(op, x, y)
    if op == Op.SUBTRACT and (_dtype(x) or weak_dtype(x)) == "bool" and (_dtype(y) or weak_dtype(y)) == "bool":
        raise TypeError("subtract: booleans cannot be subtracted (NumPy refuses it too); use lnp.not_equal for "
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
            raise ValueError(f"power: integers to negative integer powers are not allowed ({dx} ** {int(y)}), "
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
        raise TypeError("negate: a boolean cannot be negated (NumPy refuses -bool too); use lnp.logical_not "
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


# ----------------------------------------------------------------------------------------------
# reductions
def _reduce(op: str, x, axis, keepdims: bool):
    _check(op, x)
    if _dtype(x) is None:
        x = asarray(x)
    axes = _norm_axes(axis, len(_shape(x)), op)
    out = bind(op, x, axes=axes)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(_shape(x))))
    return out


def sum(x, axis=None, keepdims: bool = False):  # noqa: A001
    """Sum over ``axis``; bool and integers narrower than 32 bits accumulate in int32, as in JAX."""
    _check("sum", x)
    if _dtype(x) is None:
        x = asarray(x)
    acc = accumulation_dtype(_dtype(x))
    return _reduce("reduce_sum", astype(x, acc), axis, keepdims)


def max(x, axis=None, keepdims: bool = False):  # noqa: A001
    return _reduce("reduce_max", x, axis, keepdims)


def min(x, axis=None, keepdims: bool = False):  # noqa: A001
    return _reduce("reduce_min", x, axis, keepdims)


amax, amin = max, min


def _mean_shape(avals, p):
    (x,) = avals
    axes = p["axes"]
    return ShapeDtype(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def _mean_decompose(x, axes):
    n = math.prod(x.shape[a] for a in axes)
    return divide(bind("reduce_sum", x, axes=tuple(axes)), float(n))


def _mean_impl(x, axes):
    if all(x.shape[a] for a in axes):
        return _np.mean(x, axis=tuple(axes))
    # over no elements: NaN, as jnp.mean gives, without NumPy's "mean of empty slice" warning
    return _np.full(tuple(d for i, d in enumerate(x.shape) if i not in axes), _np.nan, x.dtype)


register_composite(
    "mean", _mean_shape, impl=_mean_impl, decompose=_mean_decompose,
    attr_format=lambda p: f", dimensions={{{','.join(map(str, p['axes']))}}}",
    doc="Mean over axes; decomposes into reduce_sum then a divide by the element count.",
)


def mean(x, axis=None, keepdims: bool = False):
    _check("mean", x)
    if _dtype(x) is None or not is_float(_dtype(x)):
        x = astype(asarray(x) if _dtype(x) is None else x, "float32")
    axes = _norm_axes(axis, len(_shape(x)), "mean")
    out = bind("mean", x, axes=axes)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(_shape(x))))
    return out


# ----------------------------------------------------------------------------------------------
# shape manipulation
def reshape(x, newshape, order: str = "C"):
    _check("reshape", x)
    if order != "C":
        raise ValueError("reshape: only order='C' is supported")
    newshape = list(_sizes(newshape, "reshape"))
    if any(d < -1 for d in newshape):
        raise ShapeError(f"reshape: negative size in {tuple(newshape)} (only one -1, meaning 'the rest', is allowed)")
    size = math.prod(_shape(x))
    if newshape.count(-1) > 1:
        raise ShapeError(f"reshape: only one -1 allowed in {tuple(newshape)}")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot reshape {_shape(x)} ({size} elements) into {tuple(newshape)}")
        newshape[newshape.index(-1)] = size // known
    if tuple(newshape) == _shape(x):
        return x
    return bind("reshape", x if _dtype(x) else asarray(x), new_sizes=tuple(newshape))


def transpose(x, axes=None):
    _check("transpose", x)
    nd = len(_shape(x))
    perm = tuple(range(nd))[::-1] if axes is None else tuple(_norm_axis(a, nd, "transpose") for a in axes)
    if perm == tuple(range(nd)):
        return x
    return bind("transpose", x, permutation=perm)


def swapaxes(x, axis1: int, axis2: int):
    nd = len(_shape(x))
    perm = list(range(nd))
    a, b = _norm_axis(axis1, nd, "swapaxes"), _norm_axis(axis2, nd, "swapaxes")
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def expand_dims(x, axis: int):
    s = list(_shape(x))
    a = _norm_axis(axis, len(s) + 1, "expand_dims")
    s.insert(a, 1)
    return reshape(x, s)


def squeeze(x, axis=None):
    s = _shape(x)
    axes = [i for i, d in enumerate(s) if d == 1] if axis is None else list(_norm_axes(axis, len(s), "squeeze"))
    for a in axes:
        if s[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of shape {s} has size {s[a]}, not 1")
    return reshape(x, [d for i, d in enumerate(s) if i not in axes])


def concatenate(arrays: Sequence[Any], axis: int = 0):
    arrays = list(arrays)
    if not arrays:
        raise ShapeError("concatenate: needs at least one array")
    _check("concatenate", *arrays)
    arrays = list(_promote("concatenate", *arrays))
    nd = len(_shape(arrays[0]))
    return bind("concatenate", *arrays, dimension=_norm_axis(axis, nd, "concatenate"))


def _refuse_arrays(idx: tuple) -> None:
    for i in idx:
        if isinstance(i, (_np.ndarray, list, Tracer)) and not (isinstance(i, _np.ndarray) and i.ndim == 0):
            if isinstance(i, Tracer):
                i._concrete("an index (labsim has no gather)")
            raise IndexingError(f"an array or list as an index (advanced indexing, a gather) is not supported by "
                                f"labsim; it supports ints, slices, None and ... (got {type(i).__name__})")


def _getitem(x, idx):
    """Basic indexing: integers, slices with positive steps, None and Ellipsis."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    shape = _shape(x)
    _refuse_arrays(idx)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexingError("an index can only have a single ellipsis")
    n_real = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if n_real > len(shape):
        raise IndexingError(f"too many indices ({n_real}) for an array of shape {shape}")
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - n_real) + idx[k + 1:]
    idx = idx + (slice(None),) * (len(shape) - builtins.sum(1 for i in idx if i is not None))
    start, limit, strides, final_shape = [], [], [], []
    dim = 0
    for i in idx:
        if i is None:
            final_shape.append(1)
            continue
        n = shape[dim]
        if isinstance(i, slice):
            s, e, st = i.indices(n)
            if st < 1:
                raise IndexingError("labsim supports only positive slice steps")
            e = builtins.max(e, s)
            start.append(s), limit.append(e), strides.append(st)
            final_shape.append(builtins.max(0, -(-(e - s) // st)))
        elif isinstance(i, (bool, _np.bool_)):
            raise IndexingError(f"x[{i!r}]: a boolean index is not supported by labsim (NumPy would read it as a "
                                "mask and add an axis, not as the integer index 1 or 0); use an int or None")
        elif isinstance(i, numbers.Integral):
            j = int(i)
            if not -n <= j < n:
                raise IndexingError(f"index {j} is out of bounds for axis {dim} with size {n}")
            j %= n
            start.append(j), limit.append(j + 1), strides.append(1)
        elif isinstance(i, Tracer):
            i._concrete("an index (labsim has no gather)")
        elif isinstance(i, (_np.ndarray, list)):
            raise IndexingError(f"an array or list as an index (advanced indexing, a gather) is not supported by "
                                f"labsim; it supports ints, slices, None and ... (got {type(i).__name__})")
        else:
            raise IndexingError(f"unsupported index {i!r}; labsim supports ints, slices, None and ...")
        dim += 1
    out = x
    if (tuple(start), tuple(limit), tuple(strides)) != ((0,) * len(shape), shape, (1,) * len(shape)):
        out = bind("slice", x, start_indices=tuple(start), limit_indices=tuple(limit), strides=tuple(strides))
    return reshape(out, final_shape)


# ----------------------------------------------------------------------------------------------
# functional index updates: x.at[idx].set(v) / .add(v) / .multiply(v) / .get(), as in JAX
def _region(x, idx):
    """(start indices, region shape with 1 for integer indices, shape without them) of a basic index."""
    shape = _shape(x)
    if not isinstance(idx, tuple):
        idx = (idx,)
    _refuse_arrays(idx)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexingError("an index can only have a single ellipsis")
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[k + 1:]
    if len(idx) > len(shape):
        raise IndexingError(f"too many indices ({len(idx)}) for an array of shape {shape}")
    idx = idx + (slice(None),) * (len(shape) - len(idx))
    start, region, kept = [], [], []
    for d, (i, n) in enumerate(zip(idx, shape)):
        if isinstance(i, slice):
            s0, e, st = i.indices(n)
            if st != 1:
                raise IndexingError("x.at[...] supports slices with step 1 only")
            start.append(s0), region.append(builtins.max(e - s0, 0)), kept.append(builtins.max(e - s0, 0))
        elif isinstance(i, numbers.Integral) and not isinstance(i, (bool, _np.bool_)):
            j = int(i)
            if not -n <= j < n:
                raise IndexingError(f"index {j} is out of bounds for axis {d} with size {n}")
            start.append(j % n), region.append(1)
        else:
            raise IndexingError(f"x.at[...] supports ints, slices and ..., not {i!r}")
    return tuple(start), tuple(region), tuple(kept)


class _IndexRef:
    def __init__(self, x, idx) -> None:
        self.x, self.idx = x, idx

    def get(self):
        return _getitem(self.x, self.idx)

    def set(self, v):
        start, region, kept = _region(self.x, self.idx)
        if isinstance(v, numbers.Integral) and is_integer(_dtype(self.x)):
            v = asarray(v, _dtype(self.x))  # a Python int that does not fit is an error, not wrapped
        v = astype(v if isinstance(v, (Tracer, _np.ndarray)) else asarray(v), _dtype(self.x))
        try:
            v = broadcast_to(v, kept)
        except ShapeError:
            raise ShapeError(f"x.at[...].set: value of shape {_shape(v)} does not fit the region {kept} "
                             f"of an array of shape {_shape(self.x)}") from None
        return bind("update_slice", self.x, reshape(v, region), start_indices=start)

    def add(self, v):
        return self.set(add(self.get(), v))

    def max(self, v):  # noqa: A003 (as jax's x.at[...].max)
        return self.set(maximum(self.get(), v))

    def min(self, v):  # noqa: A003
        return self.set(minimum(self.get(), v))

    def __getattr__(self, name: str):
        raise AttributeError(f"x.at[...] has no method {name!r}; labsim supports .get(), .set(v), .add(v), "
                             ".multiply(v), .min(v) and .max(v)")

    def multiply(self, v):
        return self.set(multiply(self.get(), v))


class _IndexUpdateHelper:
    def __init__(self, x) -> None:
        self.x = x

    def __getitem__(self, idx) -> _IndexRef:
        return _IndexRef(self.x, idx)


# ----------------------------------------------------------------------------------------------
# contractions
# ``precision=`` as in ``jnp.dot`` / ``jax.lax.Precision``: how a float32 product may be computed.
# JAX's documented meaning, which labsim's cost model follows (labsim.machines.roofline):
#   "default" (alias "fastest", "bfloat16"): TF32 tensor cores on NVIDIA GPUs that have them (A100 and
#       later), one bfloat16 pass on the TPU's MXU;
#   "high" (alias "bfloat16_3x", "tensorfloat32"): TF32 on NVIDIA GPUs, three bfloat16 passes on TPU;
#   "highest" (alias "float32"): full float32 (CUDA cores on GPUs), six bfloat16 passes on TPU.
# bfloat16 and float16 dots are computed in their own format whatever the precision.
PRECISIONS = ("default", "high", "highest")
_PRECISION_ALIASES = {"default": "default", "fastest": "default", "bfloat16": "default",
                      "high": "high", "bfloat16_3x": "high", "tensorfloat32": "high",
                      "highest": "highest", "float32": "highest"}


def _precision(precision, op: str) -> str:
    """Normalise ``precision`` (None, a name, a ``jax.lax.Precision``-like enum, or a pair of them)."""
    if precision is None:
        return "default"
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"{op}: precision must be one value or a pair (lhs, rhs), got {precision!r}")
        a, b = (_precision(p, op) for p in precision)
        return max(a, b, key=PRECISIONS.index)  # the more precise operand decides, as XLA does
    name = getattr(precision, "name", precision)  # jax.lax.Precision.HIGHEST -> "HIGHEST"
    if isinstance(name, str) and name.lower() in _PRECISION_ALIASES:
        return _PRECISION_ALIASES[name.lower()]
    raise ValueError(f"{op}: unknown precision {precision!r}; use None, 'default', 'high' or 'highest' "
                     "(or jax.lax.Precision.DEFAULT / HIGH / HIGHEST)")


def _dot_general(x, y, contracting, batch=((), ()), precision: str = "default"):
    x, y = _promote("dot", x, y)
    if precision != "default":  # recorded only when it is not the default, as HLO prints it
        return bind("dot", x, y, contracting=contracting, batch=batch, precision=precision)
    return bind("dot", x, y, contracting=contracting, batch=batch)


def dot(a, b, *, precision=None):
    """``jnp.dot``: contracts the last axis of ``a`` with the second-to-last of ``b`` (or its only axis).

    ``precision`` as in JAX (None/"default", "high", "highest", or ``jax.lax.Precision`` names): it is
    recorded on the ``dot`` node and decides the rate of a float32 product (see ``PRECISIONS``).
    """
    precision = _precision(precision, "dot")
    _check("dot", a, b)
    sa, sb = _shape(a), _shape(b)
    if sa == () or sb == ():
        return multiply(a, b)
    cb = 0 if len(sb) == 1 else len(sb) - 2
    if sa[-1] != sb[cb]:
        raise ShapeError(f"dot: shapes {sa} and {sb} are not aligned: {sa[-1]} (dim {len(sa) - 1}) != {sb[cb]} (dim {cb})")
    return _dot_general(a, b, ((len(sa) - 1,), (cb,)), precision=precision)


def matmul(a, b, *, precision=None):
    """``jnp.matmul`` / ``@``: batched matrix product with NumPy's batch broadcasting (``precision`` as in :func:`dot`)."""
    precision = _precision(precision, "matmul")
    _check("matmul", a, b)
    sa, sb = _shape(a), _shape(b)
    if sa == () or sb == ():
        raise ShapeError(f"matmul: operands must not be scalars, got shapes {sa} and {sb}")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ShapeError(f"matmul: shapes {sa} and {sb} do not match in the contracted dimension ({ka} != {kb})")
    if len(sa) <= 2 and len(sb) <= 2 or len(sb) <= 2:
        return _dot_general(a, b, ((len(sa) - 1,), (0 if len(sb) == 1 else len(sb) - 2,)), precision=precision)
    # both have batch dims (or b has and a is a matrix): broadcast batch dims, then a batched dot
    ba, bb = sa[:-2], sb[:-2]
    try:
        bshape = _np.broadcast_shapes(ba, bb)
    except ValueError:
        raise ShapeError(f"matmul: batch shapes {ba} and {bb} cannot be broadcast ({sa} @ {sb})") from None
    a_is_vector = len(sa) == 1  # NumPy: a 1-D lhs gets a unit row, removed again from the result
    if a_is_vector:
        a = reshape(a, (1, sa[0]))
        sa = (1, sa[0])
    a = broadcast_to(a, bshape + sa[-2:])
    b = broadcast_to(b, bshape + sb[-2:])
    nb = len(bshape)
    out = _dot_general(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))), precision=precision)
    if a_is_vector:
        out = squeeze(out, nb)
    return out


def einsum(subscripts: str, *operands, precision=None):
    """Two-operand (or one-operand) ``einsum`` lowered to one ``dot`` plus a transpose, as XLA does.

    ``precision`` as in :func:`dot`."""
    precision = _precision(precision, "einsum")
    if "..." in subscripts:
        raise ValueError("einsum: '...' is not supported by labsim")
    if "->" not in subscripts:
        raise ValueError("einsum: labsim needs an explicit output, e.g. 'bf,fd->bd'")
    if not isinstance(subscripts, str) or subscripts.count("->") != 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} need exactly one '->' and one output, e.g. 'ij,jk->ik'")
    ins, out = subscripts.split("->")
    if "," in out:
        raise ValueError(f"einsum: subscripts {subscripts!r} name more than one output; labsim computes one output")
    specs = ins.split(",")
    for part in (*specs, out):
        bad = next((ch for ch in part if not (ch.isascii() and ch.isalpha())), None)
        if bad is not None:
            raise ValueError(f"einsum: subscripts {subscripts!r} hold {bad!r}; they may hold only letters (one per "
                             "axis), commas between operands and one '->'")
    if len(specs) != len(operands) or len(specs) not in (1, 2):
        raise ValueError(f"einsum: {subscripts!r} names {len(specs)} operand(s) but {len(operands)} were given "
                         "(labsim supports one or two)")
    _check("einsum", *operands)
    for s, x in zip(specs, operands):
        if len(s) != len(_shape(x)):
            raise ShapeError(f"einsum: operand spec {s!r} has {len(s)} letters but the operand has shape {_shape(x)}")
        if len(set(s)) != len(s):
            raise ValueError(f"einsum: repeated index in {s!r} (diagonals) is not supported")
    sizes: dict[str, int] = {}
    for s, x in zip(specs, operands):
        for ch, d in zip(s, _shape(x)):
            if sizes.setdefault(ch, d) != d:
                raise ShapeError(f"einsum: index {ch!r} has size {sizes[ch]} in one operand and {d} in another "
                                 f"({subscripts!r}, shapes {', '.join(str(_shape(o)) for o in operands)})")
    for ch in out:
        if ch not in sizes:
            raise ValueError(f"einsum: output index {ch!r} appears in no operand")

    def presum(x, s, keep: str):
        drop = [i for i, ch in enumerate(s) if ch not in keep]
        if drop:
            x = sum(x, axis=tuple(drop))
            s = "".join(ch for ch in s if ch in keep)
        return x, s

    if len(operands) == 1:
        x, s = presum(operands[0], specs[0], out)
        return transpose(x, [s.index(ch) for ch in out])
    (a, sa), (b, sb) = (operands[0], specs[0]), (operands[1], specs[1])
    a, sa = presum(a, sa, sb + out)
    b, sb = presum(b, sb, sa + out)
    batch = [ch for ch in sa if ch in sb and ch in out]
    contract = [ch for ch in sa if ch in sb and ch not in out]
    res = _dot_general(a, b, (tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
                       (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)), precision=precision)
    got = "".join(batch) + "".join(ch for ch in sa if ch not in sb) + "".join(ch for ch in sb if ch not in sa)
    return transpose(res, [got.index(ch) for ch in out])


def outer(a, b):
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


# ----------------------------------------------------------------------------------------------
# array creation (constants in the graph)
def _created(shape, op: str) -> tuple[int, ...]:
    shape = _sizes(shape, op)
    if any(d < 0 for d in shape):
        raise ShapeError(f"{op}: negative size in shape {shape}")
    return shape


def zeros(shape, dtype="float32"):
    return asarray(_np.zeros(_created(shape, "zeros")), dtype)


def ones(shape, dtype="float32"):
    return asarray(_np.ones(_created(shape, "ones")), dtype)


def full(shape, fill_value, dtype="float32"):
    return asarray(_np.full(_created(shape, "full"), fill_value), dtype)


def zeros_like(x, dtype=None):
    """Zeros of ``x``'s shape and dtype (a Python scalar's own weak dtype: ``zeros_like(3.0)`` is float32)."""
    _check("zeros_like", x)
    return broadcast_to(asarray(0, dtype or _dtype(x) or weak_dtype(x)), _shape(x))


def ones_like(x, dtype=None):
    _check("ones_like", x)
    return broadcast_to(asarray(1, dtype or _dtype(x) or weak_dtype(x)), _shape(x))


def arange(start, stop=None, step=1, dtype=None):
    """``jnp.arange``: a constant array. (XLA builds it from an ``iota`` op; labsim folds it at once.)"""
    if step == 0:
        raise ValueError("arange: step must not be 0")
    arr = _np.arange(start, stop, step) if stop is not None else _np.arange(start)
    return asarray(arr, dtype)


# ----------------------------------------------------------------------------------------------
# operators on Tracer
def _rev(f):
    return lambda self, other: f(other, self)


_OPERATORS = {
    "__add__": add, "__radd__": _rev(add), "__sub__": subtract, "__rsub__": _rev(subtract),
    "__mul__": multiply, "__rmul__": _rev(multiply), "__truediv__": divide, "__rtruediv__": _rev(divide),
    "__floordiv__": floor_divide, "__rfloordiv__": _rev(floor_divide),
    "__pow__": power, "__rpow__": _rev(power), "__matmul__": matmul, "__rmatmul__": _rev(matmul),
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__eq__": equal, "__ne__": not_equal,
    "__neg__": negative, "__pos__": lambda x: x, "__abs__": abs, "__getitem__": _getitem,
}
for _k, _f in _OPERATORS.items():
    setattr(Tracer, _k, _f)
Tracer.T = property(lambda self: transpose(self))
Tracer.reshape = lambda self, *shape: reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)
Tracer.transpose = lambda self, *axes: transpose(self, axes or None)
Tracer.sum = lambda self, axis=None, keepdims=False: sum(self, axis, keepdims)
Tracer.max = lambda self, axis=None, keepdims=False: max(self, axis, keepdims)
Tracer.min = lambda self, axis=None, keepdims=False: min(self, axis, keepdims)
Tracer.mean = lambda self, axis=None, keepdims=False: mean(self, axis, keepdims)
Tracer.astype = lambda self, dtype: astype(self, dtype)
Tracer.dot = lambda self, other: dot(self, other)
Tracer.at = property(lambda self: _IndexUpdateHelper(self))

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "maximum", "minimum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    "negative", "abs", "absolute", "exp", "log", "tanh", "sqrt", "rsqrt", "erf", "square", "floor",
    "sum", "max", "min", "amax", "amin", "mean",
    "dot", "matmul", "einsum", "outer",
    "reshape", "transpose", "swapaxes", "expand_dims", "squeeze", "broadcast_to", "concatenate",
    "asarray", "array", "astype", "zeros", "ones", "full", "zeros_like", "ones_like", "arange",
    "float32", "float16", "float64", "bfloat16", "int32", "int8", "bool_", "pi", "e", "inf", "nan", "newaxis",
]
