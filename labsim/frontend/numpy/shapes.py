"""``lnp``'s shape ops: ``reshape``, ``transpose``, ``swapaxes``, ``expand_dims``, ``squeeze``,
``concatenate``."""
from __future__ import annotations
from ...support.errors import ArgumentError

import math
from ...core.avals import ShapeError
from ...core.trace import bind
from typing import Any, Sequence
from .arrays import _check, _dtype, _norm_axes, _norm_axis, _promote, _shape, _sizes, asarray


# ----------------------------------------------------------------------------------------------
# shape manipulation
def reshape(x, newshape, order: str = "C"):
    _check("reshape", x)
    if order != "C":
        raise ArgumentError("reshape: only order='C' is supported")
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


