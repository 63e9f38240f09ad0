"""``evaluate``: the NumPy reference interpreter, the executable specification of the IR.

Every compiler pass is tested by "evaluate before == evaluate after" on random programs.
"""
from __future__ import annotations
from ..support.errors import ArgumentTypeError

from typing import Any

import numpy as np

from .dtypes import int_range, numpy_dtype
from .avals import ShapeError, TraceError
from .ir import Graph
from .pytree import tree_flatten
from .trace import inline


def _coerce(g: Graph, i: int, x: Any, where: str = "evaluate") -> np.ndarray:
    v = g.inputs[i]
    name = g.input_names[i] if i < len(g.input_names) else f"p{i}"
    try:
        arr = np.asarray(x)
    except Exception:  # pragma: no cover - exotic objects
        raise TraceError(f"{where}: argument {i} ({name}) is {type(x).__name__}, not an array") from None
    if arr.dtype == object or arr.dtype.kind in "USV":  # objects, strings, bytes: not numbers
        raise TraceError(f"{where}: argument {i} ({name}) is {type(x).__name__}, not a numeric array")
    if arr.shape != v.aval.shape:
        raise ShapeError(f"{where}: argument {i} ({name}) has shape {arr.shape}, but graph {g.name} expects "
                         f"{v.aval.short()}")
    target = numpy_dtype(v.aval.dtype)
    if not np.can_cast(arr.dtype, target, casting="same_kind"):
        raise TraceError(f"{where}: argument {i} ({name}) has dtype {arr.dtype}, which does not convert safely "
                         f"to the graph's {v.aval.dtype}")
    if target.kind in "iu" and arr.dtype.kind in "iu" and arr.size and not np.can_cast(arr.dtype, target):
        lo, hi = int_range(v.aval.dtype)
        if arr.min() < lo or arr.max() > hi:  # a value would wrap around
            raise TraceError(f"{where}: argument {i} ({name}) holds values from {arr.min()} to {arr.max()}, outside "
                             f"the range of the graph's {v.aval.dtype} ({lo}..{hi})")
    return arr.astype(target, copy=False)


def _flat_args(g: Graph, args: tuple, where: str = "evaluate") -> tuple:
    """The graph's flat inputs from ``args``: given as they are, or as the pytrees ``g`` was traced with."""
    if g.in_tree is not None and any(c.kind != "leaf" for c in g.in_tree.children):
        leaves, tree = tree_flatten(tuple(args))
        if tree == g.in_tree:
            return tuple(leaves)
        if len(args) != len(g.inputs):
            raise ArgumentTypeError(f"{where}: graph {g.name} was traced with arguments of structure {g.in_tree}; "
                            f"got {tree}. Pass that structure, or the {len(g.inputs)} flat inputs "
                            f"({', '.join(g.input_names)}).")
    return args


def coerce_args(g: Graph, args: tuple, where: str = "evaluate") -> list[np.ndarray]:
    """``args`` as the graph's flat input arrays, checked as ``evaluate`` checks them (count, pytree
    structure, numeric, shape, a dtype that converts safely, integers in range), with errors that start
    with ``where`` (the function the user called). Every machine that runs a graph on given values uses
    it, so each refuses bad input the same way."""
    args = _flat_args(g, tuple(args), where)
    if len(args) != len(g.inputs):
        sig = ", ".join(f"{n}: {v.aval.short()}" for n, v in zip(g.input_names or [f"p{i}" for i in range(len(g.inputs))], g.inputs))
        raise ArgumentTypeError(f"{where}: graph {g.name}({sig}) takes {len(g.inputs)} argument(s), got {len(args)}")
    return [_coerce(g, i, x, where) for i, x in enumerate(args)]


def evaluate(g: Graph, *args: Any):
    """Run ``g`` on concrete NumPy inputs with each op's reference implementation.

    ``args`` are the graph's flat inputs (one array per leaf, in ``g.input_names`` order), or, for a
    graph traced from a function taking pytrees, the same nested tuples/lists/dicts of arrays.
    Returns one array, or a flat tuple when the graph has several outputs (whatever pytree the traced
    function returned: ``tree_unflatten(g.out_tree, outs)`` rebuilds it).
    """
    if not isinstance(g, Graph):
        if isinstance(getattr(g, "graph", None), Graph):  # a compiled Program (core does not import compiler)
            raise ArgumentTypeError(f"evaluate: expected a Graph (from ls.trace), got a {type(g).__name__}; "
                            "evaluate the program's graph with ls.evaluate(prog.graph, ...)")
        raise ArgumentTypeError(f"evaluate: expected a Graph (from ls.trace), got {type(g).__name__} {g!r:.40}")
    arrays = coerce_args(g, args, "evaluate")
    out = inline(g, *arrays)
    if isinstance(out, tuple):
        return tuple(np.asarray(o, dtype=numpy_dtype(a.aval.dtype)) for o, a in zip(out, g.outputs))
    return np.asarray(out, dtype=numpy_dtype(g.outputs[0].aval.dtype))
