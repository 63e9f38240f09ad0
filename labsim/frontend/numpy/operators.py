"""The operators of a traced array (``+``, ``@``, ``[]``, ``.T``, ``.sum()``, ``.at[...]``, ...), installed
on :class:`~labsim.core.trace.Tracer` when ``labsim.numpy`` is imported."""
from __future__ import annotations

from ...core.trace import Tracer
from .arrays import astype
from .elementwise import (
    abs, add, divide, equal, floor_divide, greater, greater_equal, less, less_equal,
    multiply, negative, not_equal, power, subtract,
)
from .reductions import max, mean, min, sum
from .shapes import reshape, transpose
from .indexing import _IndexUpdateHelper, _getitem
from .linalg import dot, matmul


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

