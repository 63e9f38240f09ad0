"""Rebuild a graph by replaying it through a handler: the tool passes are written with.

Replaying records a fresh, verified-by-construction graph: each handler call goes through ``bind``,
so shape rules run again and SSA/topological order hold automatically.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import ops
from .dtypes import numpy_dtype
from .ir import ArrayValue, Atom, Graph, Node, Var
from .ops import OpKind
from .trace import TraceContext, Tracer, bind, recording


Handler = Callable[[Node, list], Any]


def retrace(g: Graph, handler: Handler | None = None, *, name: str | None = None) -> Graph:
    """Replay ``g`` node by node. ``handler(node, args)`` returns the node's new value (a Tracer or an
    array); by default the node is re-emitted unchanged."""
    ctx = TraceContext()
    inputs = [Var(v.aval) for v in g.inputs]
    env: dict[int, Any] = {id(v): Tracer(ctx, nv) for v, nv in zip(g.inputs, inputs)}

    def read(a: Atom):
        if isinstance(a, Var):
            return env[id(a)]
        return a.value  # a weak Python scalar: takes the dtype of the array it meets

    with recording(ctx):
        for n in g.nodes:
            args = [read(a) for a in n.operands]
            env[id(n.out)] = handler(n, args) if handler else bind(n.op, *args, **n.params)
    outs = []
    for o in g.outputs:
        val = read(o)
        if not isinstance(val, Tracer):
            val = Tracer(ctx, ctx.emit("constant", (), {"value": ArrayValue(np.asarray(val)), "dtype": o.aval.dtype}))
        outs.append(val.var)
    return Graph(tuple(inputs), tuple(ctx.nodes), tuple(outs), name=name or g.name, input_names=g.input_names)


def decompose(g: Graph) -> Graph:
    """Expand every composite op (softmax, layer_norm, gelu, mean) into primitive ops.

    Primitive nodes are kept as they are (only their operands are renamed); each composite is replaced
    by the nodes its decomposition records. A decomposition may itself use composites (layer_norm uses
    mean), so this repeats until none is left.
    """
    while any(ops.get(n.op).kind is OpKind.COMPOSITE for n in g.nodes):
        g = _expand_once(g)
    return g


def _expand_once(g: Graph) -> Graph:
    ctx = TraceContext()  # its node list is the new graph's
    sub: dict[int, Atom] = {}

    def atom(a: Atom) -> Atom:
        return sub.get(id(a), a) if isinstance(a, Var) else a

    with recording(ctx):
        for n in g.nodes:
            operands = tuple(atom(a) for a in n.operands)
            opdef = ops.get(n.op)
            if opdef.kind is OpKind.COMPOSITE:
                args = [Tracer(ctx, a) if isinstance(a, Var) else a.value for a in operands]
                out = opdef.decompose(*args, **n.params)
                sub[id(n.out)] = out.var
            elif all(x is y for x, y in zip(operands, n.operands)):
                ctx.nodes.append(n)
            else:
                ctx.nodes.append(Node(n.op, operands, n.attrs, n.out))
    outs = tuple(atom(o) for o in g.outputs)
    return Graph(g.inputs, tuple(ctx.nodes), outs, name=g.name, input_names=g.input_names)
