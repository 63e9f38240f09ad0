"""``lnp``'s array creation: ``zeros``, ``ones``, ``full``, ``zeros_like``, ``ones_like``, ``arange``, and the
index arrays computed inside the graph: ``broadcasted_iota`` (``lax.broadcasted_iota``) and ``tri``."""
from __future__ import annotations
from ...support.errors import ArgumentError

import numpy as _np

from ...core import ops as _ops
from ...core.avals import ShapeError
from ...core.dtypes import canonical_dtype, is_integer, is_float, weak_dtype
from ...core.opcodes import Op
from ...core.trace import Tracer, current_trace
from ...support import errors as _errors
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
        raise ArgumentError("arange: step must not be 0")
    arr = _np.arange(start, stop, step) if stop is not None else _np.arange(start)
    return asarray(arr, dtype)




def broadcasted_iota(dtype, shape, dimension: int):
    """``lax.broadcasted_iota``: an array of ``shape`` whose element at each index is that index along
    ``dimension`` (``broadcasted_iota("int32", (2, 3), 1)`` is ``[[0, 1, 2], [0, 1, 2]]``).

    Under a trace it is one ``iota`` node with no data: the kernel that reads it computes each element
    from its position, so index arrays cost no memory however large (XLA builds ``jnp.tri`` and causal
    masks the same way). On NumPy inputs it computes at once."""
    shape = _created(shape, "broadcasted_iota")
    if not shape:
        raise _errors.ArgumentError(f"broadcasted_iota: shape must have at least one dimension, got {shape}")
    d = _errors.count("broadcasted_iota", "dimension", dimension, maximum=len(shape) - 1)
    dt = canonical_dtype(dtype)
    if not (is_integer(dt) or is_float(dt)):
        raise _errors.ArgumentError(f"broadcasted_iota: dtype must be an integer or floating dtype, got {dt}")
    params = {"shape": shape, "dtype": dt, "dimension": d}
    ctx = current_trace()
    if ctx is not None:
        return Tracer(ctx, ctx.emit(Op.IOTA, (), params))
    return _ops.get(Op.IOTA).impl(**params)


def tri(N: int, M: int | None = None, k: int = 0, dtype="float32"):
    """``jnp.tri``: ones at and below diagonal ``k`` of an ``N``×``M`` array, zeros above
    (element ``[i, j]`` is ``j <= i + k``). Built from two :func:`broadcasted_iota` and a comparison, so a
    causal mask of 32,768 tokens is three nodes in the graph, not a 1 GiB constant."""
    N = _errors.count("tri", "N", N)
    M = N if M is None else _errors.count("tri", "M", M)
    k = _errors.count("tri", "k", k, minimum=-(2**31))
    rows = broadcasted_iota("int32", (N, M), 0)
    below = (rows + k if k else rows) >= broadcasted_iota("int32", (N, M), 1)
    dt = canonical_dtype(dtype)
    return below if dt == "bool" else asarray(below, dt)
