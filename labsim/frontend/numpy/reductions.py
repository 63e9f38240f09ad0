"""``lnp``'s reductions: ``sum``, ``max``, ``min`` (``amax``, ``amin``) and ``mean`` (a composite: a sum
and a divide)."""
from __future__ import annotations

import math

import numpy as _np

from ...core.avals import ShapeDtype
from ...core.dtypes import accumulation_dtype, is_float
from ...core.trace import bind, register_composite
from .arrays import _check, _dtype, _norm_axes, _shape, asarray, astype
from .elementwise import divide
from .shapes import reshape


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


