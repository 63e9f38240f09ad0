"""Dtypes labsim knows, with their sizes. Names follow NumPy/JAX ("float32", "bfloat16", ...)."""
from __future__ import annotations

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


class DtypeError(TypeError, ValueError):
    """An unknown or unsupported dtype."""


def canonical_dtype(dtype) -> str:
    """Return labsim's name for ``dtype`` (a string, NumPy dtype or Python type), or raise DtypeError."""
    if type(dtype) is str and dtype in ITEMSIZE:  # fast path: already canonical
        return dtype
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
