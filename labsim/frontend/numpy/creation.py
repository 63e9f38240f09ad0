"""``lnp``'s array creation: ``zeros``, ``ones``, ``full``, ``zeros_like``, ``ones_like``, ``arange``."""
from __future__ import annotations

import numpy as _np

from ...core.avals import ShapeError
from ...core.dtypes import weak_dtype
from .arrays import _check, _dtype, _shape, _sizes, asarray, broadcast_to


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


