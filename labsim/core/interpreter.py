"""``evaluate``: the NumPy reference interpreter, the executable specification of the IR.

Every compiler pass is tested by "evaluate before == evaluate after" on random programs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import numpy_dtype
from .avals import ShapeError, TraceError
from .ir import Graph
from .trace import inline


def _coerce(g: Graph, i: int, x: Any) -> np.ndarray:
    v = g.inputs[i]
    name = g.input_names[i] if i < len(g.input_names) else f"p{i}"
    try:
        arr = np.asarray(x)
    except Exception:  # pragma: no cover - exotic objects
        raise TraceError(f"evaluate: argument {i} ({name}) is {type(x).__name__}, not an array") from None
    if arr.dtype == object or arr.dtype.kind in "USV":  # objects, strings, bytes: not numbers
        raise TraceError(f"evaluate: argument {i} ({name}) is {type(x).__name__}, not a numeric array")
    if arr.shape != v.aval.shape:
        raise ShapeError(f"evaluate: argument {i} ({name}) has shape {arr.shape}, but graph {g.name} expects "
                         f"{v.aval.short()}")
    target = numpy_dtype(v.aval.dtype)
    if not np.can_cast(arr.dtype, target, casting="same_kind"):
        raise TraceError(f"evaluate: argument {i} ({name}) has dtype {arr.dtype}, which does not convert safely "
                         f"to the graph's {v.aval.dtype}")
    return arr.astype(target, copy=False)


def evaluate(g: Graph, *args: Any):
    """Run ``g`` on concrete NumPy inputs with each op's reference implementation.

    Returns one array, or a tuple when the graph has several outputs.
    """
    if len(args) != len(g.inputs):
        sig = ", ".join(f"{n}: {v.aval.short()}" for n, v in zip(g.input_names or [f"p{i}" for i in range(len(g.inputs))], g.inputs))
        raise TypeError(f"evaluate: graph {g.name}({sig}) takes {len(g.inputs)} argument(s), got {len(args)}")
    arrays = [_coerce(g, i, x) for i, x in enumerate(args)]
    out = inline(g, *arrays)
    if isinstance(out, tuple):
        return tuple(np.asarray(o, dtype=numpy_dtype(a.aval.dtype)) for o, a in zip(out, g.outputs))
    return np.asarray(out, dtype=numpy_dtype(g.outputs[0].aval.dtype))
