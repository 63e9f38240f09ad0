"""Abstract values: a shape and a dtype, no data (what tracing sees), and the errors about them.

The lowest floor of the IR: the op table's shape rules, the graph and the tracer all speak in
:class:`ShapeDtype` values.
"""
from __future__ import annotations

from ..support.errors import LabsimError

import functools
import math
import operator
from dataclasses import dataclass
from typing import Any

from .dtypes import HLO_NAME, ITEMSIZE as _ITEMSIZE, canonical_dtype, itemsize


class ShapeError(LabsimError, ValueError):
    """Operands whose shapes do not fit the op. The message names the op and the shapes."""


class IndexingError(ShapeError, IndexError):
    """An index labsim cannot apply (out of bounds, a boolean, an integer array). It is also an
    ``IndexError``, so code written for NumPy catches it."""


class TraceError(LabsimError, TypeError):
    """A value that cannot be traced, or a traced value used where a concrete one is needed."""


@dataclass(frozen=True)
class ShapeDtype:
    """An abstract value: a shape and a dtype, no data (like ``jax.ShapeDtypeStruct``)."""

    shape: tuple[int, ...]
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if type(self.shape) is tuple and all(type(d) is int and d >= 0 for d in self.shape) \
                and type(self.dtype) is str and self.dtype in _ITEMSIZE:
            return  # already canonical (the common case inside passes): nothing to convert
        try:  # operator.index takes ints (and NumPy ints) only: 2.5 or "3" is refused, not truncated
            shape = tuple(operator.index(d) for d in self.shape)
        except TypeError:
            raise ShapeError(f"ShapeDtype shape must be a tuple of ints, got {self.shape!r}") from None
        if any(d < 0 for d in shape):
            raise ShapeError(f"ShapeDtype shape must not have negative sizes, got {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", canonical_dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @functools.cached_property  # (frozen, so computed once; the cache is not a field: eq and hash ignore it)
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return itemsize(self.dtype)

    @functools.cached_property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def short(self) -> str:
        """HLO spelling, e.g. ``f32[1024,1024]``."""
        return f"{HLO_NAME[self.dtype]}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        return self.short()

    @classmethod
    def like(cls, x: Any) -> "ShapeDtype":
        """The abstract value of an array, a ShapeDtype, or anything with ``.shape`` and ``.dtype``."""
        if isinstance(x, ShapeDtype):
            return x
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return cls(tuple(x.shape), x.dtype)
        raise TraceError(
            f"expected a ShapeDtype or an array, got {type(x).__name__} {x!r:.60}"
        )
