"""``lnp``'s indexing: ``x[...]`` (basic indexing: ints, slices, ``None``, ``...``) and ``x.at[...]``
updates (``set``, ``add``, ``max``, ``min``), as ``jax.numpy`` has them."""
from __future__ import annotations

import builtins
import numbers

import numpy as _np

from ...core.avals import IndexingError, ShapeError
from ...core.dtypes import is_integer
from ...core.trace import Tracer, bind
from .arrays import _dtype, _shape, asarray, astype, broadcast_to
from .elementwise import add, maximum, minimum, multiply
from .shapes import reshape


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


