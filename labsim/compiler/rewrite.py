"""The one tool passes rebuild graphs with: a :class:`Builder` with a substitution map.

A pass walks the old graph's nodes in order, keeps a node (renaming its operands through the map),
emits new nodes (their shape rules run at once), or maps a node's result to another atom. ``finish``
returns the old graph itself when nothing changed, so a pass that has no work keeps everything attached
to the graph (the fusion plan included).
"""
from __future__ import annotations

from typing import Sequence

from ..core import ops
from ..core.ir import Atom, Graph, Node, Var, freeze_attrs
from ..core.trace import renamed


class Builder:
    """Collects nodes for a rewritten graph, with a substitution map old var -> new atom."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.nodes: list[Node] = []
        self.sub: dict[int, Atom] = {}

    def atom(self, a: Atom) -> Atom:
        # only Vars are keys, and a live Literal never shares an id with a live Var
        return self.sub.get(id(a), a)

    def keep(self, n: Node) -> None:
        sub = self.sub
        for a in n.operands:
            if id(a) in sub:
                break
        else:
            self.nodes.append(n)  # no operand renamed: the very same node
            return
        self.nodes.append(renamed(n, tuple(sub.get(id(a), a) for a in n.operands)))

    def emit(self, op: str, operands: Sequence[Atom], **params) -> Var:
        opdef = ops.get(op)
        aval = opdef.infer(tuple(a.aval for a in operands), params)
        out = Var(aval)
        node = Node(opdef.name.value, tuple(operands), freeze_attrs(params), out)
        node.__dict__["_verified"] = True  # built by its shape rule
        self.nodes.append(node)
        return out

    def finish(self, **changes) -> Graph:
        outs = tuple(self.atom(o) for o in self.g.outputs)
        unchanged = (len(self.nodes) == len(self.g.nodes) and all(a is b for a, b in zip(self.nodes, self.g.nodes))
                     and all(a is b for a, b in zip(outs, self.g.outputs)))
        if unchanged and not changes:
            return self.g
        return self.g.replace(nodes=tuple(self.nodes), outputs=outs, plan=None, **changes)
