"""The ``cse`` pass: common-subexpression elimination."""
from __future__ import annotations

from ..core import ops
from ..core.ir import Atom, Graph, Literal, Var
from .rewrite import Builder


def _key(a: Atom):
    return (1, a.value, a.aval.dtype) if isinstance(a, Literal) else (0, id(a), "")


def cse(g: Graph) -> Graph:
    """Common-subexpression elimination: an op applied to the same operands with the same attributes
    is computed once (commutative ops match with operands swapped)."""
    b = Builder(g)
    seen: dict[tuple, Var] = {}
    for n in g.nodes:
        operands = tuple(b.atom(a) for a in n.operands)
        keys = tuple(_key(a) for a in operands)
        if n.op in ops.COMMUTATIVE:
            keys = tuple(sorted(keys))
        k = (n.op, keys, n.attrs)
        if k in seen:
            b.sub[id(n.out)] = seen[k]
            continue
        seen[k] = n.out
        b.keep(n)
    return b.finish()
