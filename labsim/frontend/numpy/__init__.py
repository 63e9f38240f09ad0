"""``labsim.numpy`` (``lnp``): a traceable NumPy-like front end that mirrors ``jax.numpy``.

Introduced in "The journey of one matrix product". A function written for ``jnp`` runs with ``lnp``
swapped in, for the ops listed in ``__all__``: under :func:`labsim.trace` every call records IR nodes;
on NumPy arrays it computes eagerly. Broadcasting and dtype promotion follow ``jax.numpy``: NumPy-style
broadcasting becomes explicit ``broadcast`` nodes, a Python scalar is a weakly-typed literal that takes
the array's dtype, and mixing two array dtypes inserts a ``convert``.
"""
from __future__ import annotations

# the package: arrays (dtypes, checks, asarray, promotion, broadcast_to), elementwise, reductions, shapes,
# indexing (x[...] and x.at[...]), linalg (dot, matmul, einsum), creation; operators installs +, @, [] ...
# on traced arrays
from .arrays import (
    array, asarray, astype, bfloat16, bool_, broadcast_to, e, float16, float32, float64, inf, int32, int8, nan,
    ndarray, newaxis, pi,
)
from .elementwise import (
    abs, absolute, add, divide, equal, erf, exp, floor, floor_divide, greater, greater_equal, less, less_equal,
    log, maximum, minimum, multiply, negative, not_equal, power, rsqrt, sqrt, square, subtract, tanh, true_divide,
    where,
)
from .reductions import amax, amin, max, mean, min, sum
from .shapes import concatenate, expand_dims, reshape, squeeze, swapaxes, transpose
from .linalg import dot, einsum, matmul, outer, PRECISIONS
from .creation import arange, full, ones, ones_like, zeros, zeros_like
# masks computed inside the graph from iota and a compare (no constant)
from .creation import broadcasted_iota, tri
from . import operators  # noqa: F401,E402  (installs the operators of a traced array)

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "maximum", "minimum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    "negative", "abs", "absolute", "exp", "log", "tanh", "sqrt", "rsqrt", "erf", "square", "floor",
    "sum", "max", "min", "amax", "amin", "mean",
    "dot", "matmul", "einsum", "outer",
    "reshape", "transpose", "swapaxes", "expand_dims", "squeeze", "broadcast_to", "concatenate",
    "asarray", "array", "astype", "zeros", "ones", "full", "zeros_like", "ones_like", "arange",
    "float32", "float16", "float64", "bfloat16", "int32", "int8", "bool_", "pi", "e", "inf", "nan", "newaxis",
    "tri", "broadcasted_iota",
]

# not the API: the tests' fuzzer builds x.at[...] on NumPy arrays through this helper
from .indexing import _IndexUpdateHelper  # noqa: E402,F401
