"""The op table's rows for data movement and constants: reshape, transpose, broadcast, slice, concatenate,
update_slice, constant and iota (see :mod:`labsim.core.ops`, which imports this module to register them)."""
from __future__ import annotations

import math

import numpy as np

from .avals import ShapeDtype, ShapeError
from .dtypes import numpy_dtype, result_dtype
from .ops import Op, OpDef, _fmt_list, _zero, register


# ----------------------------------------------------------------------------------------------
# data movement
def _reshape_shape(avals, p):
    (x,) = avals
    new = tuple(int(d) for d in p["new_sizes"])
    if math.prod(new) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x.short()} ({x.size} elements) into {new} "
                         f"({math.prod(new)} elements)")
    return ShapeDtype(new, x.dtype)


register(OpDef(
    name=Op.RESHAPE, arity=1, shape_rule=_reshape_shape,
    impl=lambda x, new_sizes: np.reshape(x, new_sizes), flops=_zero, transcendentals=_zero,
    hlo="reshape",
))


def _transpose_shape(avals, p):
    (x,) = avals
    perm = tuple(int(i) for i in p["permutation"])
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: permutation {perm} is not a permutation of the {x.ndim} axes of {x.short()}")
    return ShapeDtype(tuple(x.shape[i] for i in perm), x.dtype)


register(OpDef(
    name=Op.TRANSPOSE, arity=1, shape_rule=_transpose_shape,
    impl=lambda x, permutation: np.transpose(x, permutation), flops=_zero, transcendentals=_zero,
    hlo="transpose", attr_format=lambda p: f", dimensions={_fmt_list(p['permutation'])}",
))


def _broadcast_shape(avals, p):
    (x,) = avals
    shape = tuple(int(d) for d in p["shape"])
    dims = tuple(int(d) for d in p["broadcast_dimensions"])
    if len(dims) != x.ndim:
        raise ShapeError(f"broadcast: operand {x.short()} has rank {x.ndim} but broadcast_dimensions={dims}")
    for i, d in enumerate(dims):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise ShapeError(f"broadcast: cannot broadcast {x.short()} to {list(shape)} with dimensions {dims}")
    if list(dims) != sorted(dims):
        raise ShapeError(f"broadcast: broadcast_dimensions {dims} must be increasing")
    return ShapeDtype(shape, x.dtype)


def _broadcast_impl(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, expanded), shape).copy()


register(OpDef(
    name=Op.BROADCAST, arity=1, shape_rule=_broadcast_shape,
    impl=_broadcast_impl, flops=_zero, transcendentals=_zero, hlo="broadcast",
    attr_format=lambda p: f", dimensions={_fmt_list(p['broadcast_dimensions'])}",
    doc="broadcast_in_dim: operand dim i becomes result dim broadcast_dimensions[i].",
))


def _slice_shape(avals, p):
    (x,) = avals
    start, limit, strides = p["start_indices"], p["limit_indices"], p["strides"]
    if not (len(start) == len(limit) == len(strides) == x.ndim):
        raise ShapeError(f"slice: operand {x.short()} needs {x.ndim} start/limit/stride entries, got {p}")
    out = []
    for i, (s, e, st) in enumerate(zip(start, limit, strides)):
        if not (0 <= s <= e <= x.shape[i]) or st < 1:
            raise ShapeError(f"slice: [{s}:{e}:{st}] is out of bounds for dimension {i} of {x.short()}")
        out.append(max(0, -(-(e - s) // st)))
    return ShapeDtype(tuple(out), x.dtype)


register(OpDef(
    name=Op.SLICE, arity=1, shape_rule=_slice_shape,
    impl=lambda x, start_indices, limit_indices, strides: np.asarray(
        x[tuple(slice(s, e, st) for s, e, st in zip(start_indices, limit_indices, strides))]).copy(),
    flops=_zero, transcendentals=_zero, hlo="slice",
    attr_format=lambda p: ", slice={" + ", ".join(
        f"[{s}:{e}" + (f":{st}]" if st != 1 else "]")
        for s, e, st in zip(p["start_indices"], p["limit_indices"], p["strides"])) + "}",
))


def _concat_shape(avals, p):
    if not avals:
        raise ShapeError("concatenate: needs at least one operand")
    d = int(p["dimension"])
    first = avals[0]
    if not 0 <= d < first.ndim:
        raise ShapeError(f"concatenate: dimension {d} is out of range for {first.short()}")
    for a in avals[1:]:
        if a.ndim != first.ndim or any(x != y for i, (x, y) in enumerate(zip(a.shape, first.shape)) if i != d):
            raise ShapeError(f"concatenate: shapes {', '.join(x.short() for x in avals)} differ outside dimension {d}")
    shape = list(first.shape)
    shape[d] = sum(a.shape[d] for a in avals)
    return ShapeDtype(tuple(shape), result_dtype(*[a.dtype for a in avals]))


register(OpDef(
    name=Op.CONCATENATE, arity=None, shape_rule=_concat_shape,
    impl=lambda *xs, dimension: np.concatenate(xs, axis=dimension), flops=_zero, transcendentals=_zero,
    hlo="concatenate", attr_format=lambda p: f", dimensions={{{p['dimension']}}}",
))


def _update_slice_shape(avals, p):
    x, u = avals
    start = tuple(int(i) for i in p["start_indices"])
    if u.ndim != x.ndim or len(start) != x.ndim:
        raise ShapeError(f"update_slice: update {u.short()} and start {start} must have the rank of {x.short()}")
    for d, (s0, n, m) in enumerate(zip(start, u.shape, x.shape)):
        if s0 < 0 or s0 + n > m:
            raise ShapeError(f"update_slice: update {u.short()} at {start} does not fit in {x.short()} (dimension {d})")
    return ShapeDtype(x.shape, result_dtype(x.dtype, u.dtype))


def _update_slice_impl(x, u, start_indices):
    out = np.array(x, copy=True)
    out[tuple(slice(s0, s0 + n) for s0, n in zip(start_indices, np.shape(u)))] = u
    return out


register(OpDef(
    name=Op.UPDATE_SLICE, arity=2, shape_rule=_update_slice_shape,
    impl=_update_slice_impl, flops=_zero, transcendentals=_zero, hlo="dynamic-update-slice",
    attr_format=lambda p: f", start={_fmt_list(p['start_indices'])}",
    doc="A copy of operand 0 with a block replaced by operand 1 (what x.at[...].set(v) records).",
))


def _constant_shape(avals, p):
    a = p["value"].array
    return ShapeDtype(a.shape, p["dtype"])


register(OpDef(
    name=Op.CONSTANT, arity=0, shape_rule=_constant_shape,
    impl=lambda value, dtype: value.array.astype(numpy_dtype(dtype), copy=False),
    flops=_zero, transcendentals=_zero, hlo="constant",
    attr_format=lambda p: f"  /* {p['value']!r} */",
))


def _iota_shape(avals, p):
    return ShapeDtype(tuple(p["shape"]), p["dtype"])


def _iota_impl(shape, dtype, dimension):
    idx = np.arange(shape[dimension], dtype=numpy_dtype(dtype))
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(idx.reshape(expanded), shape).copy()


register(OpDef(
    name=Op.IOTA, arity=0, shape_rule=_iota_shape, impl=_iota_impl,
    flops=_zero, transcendentals=_zero, hlo="iota", ptx="cvt.rn",
    attr_format=lambda p: f", iota_dimension={p['dimension']}",
))
