"""The ``fold_transpose`` pass: a contraction reads a transposed operand in place (a layout choice)."""
from __future__ import annotations

from ..core.ir import Graph, Node, Var
from ..core.ops import Op
from .dce import dce
from .rewrite import Builder


_DOT = Op.DOT  # bound once: Op.X is slow in a loop


def fold_transpose(g: Graph) -> Graph:
    """Layout: a ``dot`` that reads a transposed operand reads the original instead, with its
    dimension numbers permuted (the matrix unit can read either layout); the transpose then dies."""
    b = Builder(g)
    producer: dict[int, Node] = {}
    for n in g.nodes:
        a = [b.atom(x) for x in n.operands]
        if n.op == _DOT:
            (lc, rc), (lb, rb) = n.attr("contracting"), n.attr("batch")
            new = list(a)
            dims = [[lc, lb], [rc, rb]]
            changed = False
            for side in (0, 1):
                t = producer.get(id(a[side])) if isinstance(a[side], Var) else None
                if t is None or t.op != Op.TRANSPOSE:
                    continue
                perm = t.attr("permutation")
                used = set(dims[side][0]) | set(dims[side][1])
                free = [d for d in range(len(perm)) if d not in used]
                mapped_free = [perm[d] for d in free]
                if mapped_free != sorted(mapped_free):
                    continue  # would reorder the result's dimensions
                dims[side] = [tuple(perm[d] for d in dims[side][0]), tuple(perm[d] for d in dims[side][1])]
                new[side] = b.atom(t.operands[0])
                changed = True
            if changed:
                extra = {"precision": n.attr("precision")} if n.attr("precision") else {}
                out = b.emit(Op.DOT, tuple(new), contracting=(dims[0][0], dims[1][0]), batch=(dims[0][1], dims[1][1]),
                             **extra)
                b.sub[id(n.out)] = out
                producer[id(out)] = b.nodes[-1]
                continue
        b.keep(n)
        producer[id(n.out)] = b.nodes[-1]
    return dce(b.finish())
