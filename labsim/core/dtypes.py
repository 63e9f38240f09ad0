"""Dtypes labsim knows, with their sizes, and the one statement of labsim's value semantics.

Names follow NumPy/JAX ("float32", "bfloat16", ...). labsim.numpy mirrors ``jax.numpy`` with 64-bit
mode off, and these rules hold everywhere (``tests/test_semantics.py`` checks them against NumPy and
JAX's documented rules):

* **Weak Python scalars.** A Python ``bool``/``int``/``float`` next to an array takes the array's dtype
  (``int8_array + 1`` is int8, ``bf16_array * 2.0`` is bfloat16); a Python float next to an integer
  array makes float32. A scalar that does not fit the dtype it takes is an error, as in JAX
  (``int8_array + 1000``), never wrapped silently. Alone, a Python float is float32 and an int int32.
* **Promotion** of two array dtypes: bool < integers < floats, the wider wins; float16 with bfloat16
  gives float32 (:func:`result_dtype`).
* **Integer arithmetic**: ``//`` floors (as NumPy); ``/`` on integers computes in float32; ``**`` with a
  negative integer exponent on an integer array is an error (NumPy raises too).
* **Reductions** accumulate bool and integers narrower than 32 bits in int32, as JAX does
  (``sum(x > 0)`` counts); ``mean`` of integers or bools is float32; ``max``/``min`` keep the dtype.
* **Axes and sizes** are integers (``operator.index``): ``axis=1.5`` or a shape ``(3.9, 2)`` is refused,
  never truncated; negative axes count from the end; a repeated axis is an error.
* **Indexing** is basic indexing (integers, slices, ``None``, ``...``); booleans and integer arrays
  as indices are refused with an error rather than misread (``x[True]`` is not ``x[1]``).
* **Inputs** given to ``ls.evaluate`` convert to the graph's dtype only if no value changes
  (an int64 array holding 1000 is refused for an int8 input).
"""
from __future__ import annotations

from ..support.errors import LabsimError

import numpy as np

# name -> bytes per element. bfloat16 and the float8 types have no NumPy dtype; labsim evaluates them
# in float32 (see ``numpy_dtype``) and counts their true size for bytes moved.
ITEMSIZE = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}

ALIASES = {
    "f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
    "fp32": "float32", "fp16": "float16", "fp64": "float64", "fp8": "float8_e4m3fn",
    "s32": "int32", "s64": "int64", "s8": "int8", "u8": "uint8", "pred": "bool",
    "half": "float16", "float": "float32", "double": "float64", "int": "int32",
}

# HLO spells dtypes tersely; the printer uses these.
HLO_NAME = {
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "int64": "s64", "int32": "s32",
    "int16": "s16", "int8": "s8", "uint8": "u8", "bool": "pred",
}


class DtypeError(LabsimError, TypeError, ValueError):
    """An unknown or unsupported dtype."""


def canonical_dtype(dtype) -> str:
    """Return labsim's name for ``dtype`` (a string, NumPy dtype or Python type), or raise DtypeError."""
    if type(dtype) is str and dtype in ITEMSIZE:  # fast path: already canonical
        return dtype
    if dtype is None:  # np.dtype(None) is float64: never guess
        raise DtypeError(f"dtype None: give a dtype, such as 'float32' or 'bfloat16' (labsim knows {sorted(ITEMSIZE)})")
    if isinstance(dtype, str):
        name = ALIASES.get(dtype.lower(), dtype.lower())
    elif dtype is float:
        name = "float32"
    elif dtype is int:
        name = "int32"
    elif dtype is bool:
        name = "bool"
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = str(dtype)
    if name not in ITEMSIZE:
        raise DtypeError(f"unknown dtype {dtype!r}; labsim knows {sorted(ITEMSIZE)}")
    return name


def itemsize(dtype) -> int:
    return ITEMSIZE[canonical_dtype(dtype)]


def numpy_dtype(dtype) -> np.dtype:
    """The NumPy dtype used to *evaluate* values of ``dtype`` (bfloat16/float8 evaluate as float32)."""
    name = canonical_dtype(dtype)
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return np.dtype("float32")
    return np.dtype(name)


def is_float(dtype) -> bool:
    return canonical_dtype(dtype).startswith(("float", "bfloat"))


def is_integer(dtype) -> bool:
    """True for signed and unsigned integers (not bool)."""
    return canonical_dtype(dtype).startswith(("int", "uint"))


def int_range(dtype) -> tuple[int, int]:
    info = np.iinfo(np.dtype(canonical_dtype(dtype)))
    return int(info.min), int(info.max)


def check_int_fits(value: int, dtype, what: str) -> int:
    """``value`` if it fits integer ``dtype``, else a DtypeError naming ``what`` and the range."""
    lo, hi = int_range(dtype)
    if not lo <= int(value) <= hi:
        raise DtypeError(f"{what}: the Python int {value} does not fit in {canonical_dtype(dtype)} "
                         f"(range {lo}..{hi}); labsim does not wrap it silently")
    return int(value)


def weak_dtype(value) -> str:
    """The dtype a Python scalar has on its own (JAX with x64 off): bool, int32 or float32."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int32"
    return "float32"


def accumulation_dtype(dtype) -> str:
    """The dtype a sum accumulates (and returns) in: bool and integers below 32 bits widen to int32."""
    name = canonical_dtype(dtype)
    return "int32" if name in ("bool", "int8", "int16", "uint8") else name


_ORDER = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float8_e5m2", "float8_e4m3fn", "bfloat16", "float16", "float32", "float64"]


def result_dtype(*dtypes) -> str:
    """Type promotion for binary ops (a simple lattice: bool < ints < floats; wider wins).

    Mixing float16 and bfloat16 gives float32, as in JAX.
    """
    names = [canonical_dtype(d) for d in dtypes]
    s = set(names)
    if {"float16", "bfloat16"} <= s and "float64" not in s:
        return "float32"
    return max(names, key=_ORDER.index)
