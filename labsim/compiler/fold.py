"""The ``constant_fold`` pass: what depends only on constants is computed at compile time."""
from __future__ import annotations

import numpy as np

from ..core import ops
from ..core.dtypes import numpy_dtype
from ..core.ir import ArrayValue, Graph, Literal
from ..core.ops import Op
from .dce import dce
from .rewrite import Builder

MAX_FOLD_ELEMENTS = 1 << 16
"""The largest result (in elements) that constant folding computes at compile time."""


_CONSTANT, _IOTA, _NOT_FOLDED = Op.CONSTANT, Op.IOTA, frozenset({Op.BROADCAST, Op.IOTA})  # bound once: Op.X is slow


def constant_fold(g: Graph) -> Graph:
    """Constant folding: an op whose operands are all constants is computed at compile time.

    Scalars become literals. Broadcasts and iotas are not folded (a big constant costs more memory traffic
    than the broadcast or the index computation), nor results larger than ``MAX_FOLD_ELEMENTS``; but a
    small iota's value is known, so what depends only on it folds (a small causal mask, ``iota >= iota``,
    becomes a constant; a large one stays computed in the graph).
    """
    b = Builder(g)
    const: dict[int, np.ndarray] = {}
    for n in g.nodes:
        operands = [b.atom(a) for a in n.operands]
        if n.op == _CONSTANT:
            const[id(n.out)] = ops.get(Op.CONSTANT).impl(**n.params)
            b.keep(n)
            continue
        vals = []
        for a in operands:
            if isinstance(a, Literal):
                vals.append(np.asarray(a.value, dtype=numpy_dtype(a.aval.dtype)))
            elif id(a) in const:
                vals.append(const[id(a)])
            else:
                vals = None
                break
        if vals is None or n.op in _NOT_FOLDED or n.out.aval.size > MAX_FOLD_ELEMENTS \
                or n.op in ops.COMPOSITE or not operands:
            b.keep(n)
            if n.op == _IOTA and n.out.aval.size <= MAX_FOLD_ELEMENTS:  # known, so what it feeds can fold;
                const[id(n.out)] = ops.get(n.op).impl(**n.params)  # it stays an iota (dce drops it if unused)
            continue
        val = np.asarray(ops.get(n.op).impl(*vals, **n.params)).astype(numpy_dtype(n.out.aval.dtype))
        if n.out.aval.shape == ():
            b.sub[id(n.out)] = Literal(val.item(), n.out.aval)
        else:
            out = b.emit(Op.CONSTANT, (), value=ArrayValue(val), dtype=n.out.aval.dtype)
            const[id(out)] = val
            b.sub[id(n.out)] = out
    return dce(b.finish())
