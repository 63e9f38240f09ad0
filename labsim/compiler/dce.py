"""The ``dce`` pass: dead-code elimination."""
from __future__ import annotations

from ..core.ir import Graph, Var


def dce(g: Graph) -> Graph:
    """Dead-code elimination: drop every node whose result no output depends on."""
    live: set[int] = {id(o) for o in g.outputs if isinstance(o, Var)}
    keep = []
    add = live.add
    for n in reversed(g.nodes):
        if id(n.out) in live:
            keep.append(n)
            for a in n.in_vars:
                add(id(a))
    if len(keep) == len(g.nodes):
        return g
    return g.replace(nodes=tuple(reversed(keep)), plan=None)
