"""The ``simplify`` pass: algebraic simplification as a table of pattern → rewrite rules.

Introduced in "The compiler at work", which prints :data:`RULES`. The pass walks the graph once. For
each node it first replaces a *uniform* array operand of an elementwise op (a constant whose elements
are all equal, or a broadcast literal) by a scalar literal; then it tries the rules whose ``ops`` include
the node's op, in table order, and the first that returns a replacement wins. A rule returns an atom
that stands for the node's result, or ``None`` (no match). Every rule keeps the result's shape and
dtype, which the tests check on random programs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.avals import ShapeDtype
from ..core.dtypes import is_float
from ..core.ir import Atom, Graph, Literal, Node, Var
from ..core import ops
from ..core.ops import Op
from .dce import dce
from .rewrite import Builder, renamed


class _Walk:
    """What a rule may use: the builder, the (rewritten) producer of each value, and emit."""

    def __init__(self, g: Graph) -> None:
        self.b = Builder(g)
        self.producer: dict[int, Node] = {}

    def prod(self, a: Atom) -> Node | None:
        return self.producer.get(id(a)) if isinstance(a, Var) else None

    def prod_op(self, a: Atom, op: Op) -> Node | None:
        p = self.prod(a)
        return p if p is not None and p.op == op else None

    def emit(self, op: Op, operands, **params) -> Var:
        out = self.b.emit(op, operands, **params)
        self.producer[id(out)] = self.b.nodes[-1]
        return out


Rewrite = Callable[[_Walk, Node, list], "Atom | None"]


@dataclass(frozen=True)
class Rule:
    """One pattern → rewrite. ``name`` is how the book prints it."""

    name: str
    ops: frozenset
    rewrite: Rewrite
    why: str = ""


def _lit(a: Atom, value: float) -> bool:
    return isinstance(a, Literal) and a.aval.dtype != "bool" and float(a.value) == value


def _keeps(a: Atom, n: Node) -> bool:
    """Replacing ``n`` by ``a`` keeps the result's shape and dtype."""
    return a.aval == n.out.aval


def _reassociate(s: _Walk, n: Node, a: list):
    if not any(isinstance(x, Literal) for x in a):
        return None
    li = 0 if isinstance(a[0], Literal) else 1
    inner = s.prod_op(a[1 - li], Op.MULTIPLY)
    if inner is None:
        return None
    ia = [s.b.atom(x) for x in inner.operands]
    lj = next((j for j in (0, 1) if isinstance(ia[j], Literal)), None)
    if lj is not None and ia[1 - lj].aval == n.out.aval and a[li].aval.dtype == ia[lj].aval.dtype:
        return s.emit(Op.MULTIPLY, (Literal(a[li].value * ia[lj].value, a[li].aval), ia[1 - lj]))
    return None


def _divide_by_literal(s: _Walk, n: Node, a: list):
    c = a[1]
    if isinstance(c, Literal) and is_float(c.aval.dtype) and float(c.value) != 0.0 and _keeps(a[0], n):
        return s.emit(Op.MULTIPLY, (a[0], Literal(1.0 / float(c.value), c.aval)))
    return None


def _one_over_sqrt(s: _Walk, n: Node, a: list):
    sq = s.prod_op(a[1], Op.SQRT)
    if _lit(a[0], 1.0) and sq is not None:
        return s.emit(Op.RSQRT, (s.b.atom(sq.operands[0]),))
    return None


def _double_negation(s: _Walk, n: Node, a: list):
    neg = s.prod_op(a[0], Op.NEGATE)
    return s.b.atom(neg.operands[0]) if neg is not None else None


def _transposes(s: _Walk, n: Node, a: list):
    perm, src = n.attr("permutation"), a[0]
    inner = s.prod_op(src, Op.TRANSPOSE)
    if inner is not None:
        perm = tuple(inner.attr("permutation")[i] for i in perm)
        src = s.b.atom(inner.operands[0])
    if perm == tuple(range(len(perm))):
        return src
    if src is not a[0]:
        return s.emit(Op.TRANSPOSE, (src,), permutation=perm)
    return None


def _reshapes(s: _Walk, n: Node, a: list):
    inner = s.prod_op(a[0], Op.RESHAPE)
    if inner is None:
        return None
    src = s.b.atom(inner.operands[0])
    return src if src.aval.shape == n.out.aval.shape else s.emit(Op.RESHAPE, (src,), new_sizes=n.attr("new_sizes"))


def _divide_by_broadcast(s: _Walk, n: Node, a: list):
    bc = s.prod_op(a[1], Op.BROADCAST)
    if bc is None or not is_float(a[0].aval.dtype):
        return None
    small = s.b.atom(bc.operands[0])
    if small.aval.size >= n.out.aval.size:
        return None
    sq = s.prod_op(small, Op.SQRT)
    if sq is not None:  # 1/sqrt(y) -> rsqrt(y)
        recip = s.emit(Op.RSQRT, (s.b.atom(sq.operands[0]),))
    else:
        recip = s.emit(Op.DIVIDE, (Literal(1.0, ShapeDtype((), small.aval.dtype)), small))
    rb = s.emit(Op.BROADCAST, (recip,), shape=bc.attr("shape"), broadcast_dimensions=bc.attr("broadcast_dimensions"))
    return s.emit(Op.MULTIPLY, (a[0], rb))


_ = frozenset
RULES: tuple[Rule, ...] = (
    Rule("c1 · (c2 · x) → (c1·c2) · x", _({Op.MULTIPLY}), _reassociate, "one multiply instead of two"),
    Rule("x + 0 → x,  x − 0 → x", _({Op.ADD, Op.SUBTRACT}),
         lambda s, n, a: a[0] if _lit(a[1], 0.0) and _keeps(a[0], n) else None),
    Rule("0 + x → x", _({Op.ADD}), lambda s, n, a: a[1] if _lit(a[0], 0.0) and _keeps(a[1], n) else None),
    Rule("x · 1 → x,  x / 1 → x", _({Op.MULTIPLY, Op.DIVIDE}),
         lambda s, n, a: a[0] if _lit(a[1], 1.0) and _keeps(a[0], n) else None),
    Rule("1 · x → x", _({Op.MULTIPLY}), lambda s, n, a: a[1] if _lit(a[0], 1.0) and _keeps(a[1], n) else None),
    Rule("x / c → x · (1/c)", _({Op.DIVIDE}), _divide_by_literal, "a multiply is cheaper than a divide"),
    Rule("1 / sqrt(y) → rsqrt(y)", _({Op.DIVIDE}), _one_over_sqrt, "one special-function instruction"),
    Rule("−(−x) → x", _({Op.NEGATE}), _double_negation),
    Rule("convert(x) to x's own dtype → x", _({Op.CONVERT}), lambda s, n, a: a[0] if _keeps(a[0], n) else None),
    Rule("reshape(x) to x's own shape → x", _({Op.RESHAPE}),
         lambda s, n, a: a[0] if a[0].aval.shape == n.out.aval.shape else None),
    Rule("broadcast(x) to x's own shape → x", _({Op.BROADCAST}),
         lambda s, n, a: a[0] if a[0].aval.shape == n.out.aval.shape else None),
    Rule("transpose(transpose(x)) → one transpose (none if it is the identity)", _({Op.TRANSPOSE}), _transposes),
    Rule("reshape(reshape(x)) → one reshape", _({Op.RESHAPE}), _reshapes),
    Rule("x / broadcast(y) → x · broadcast(1/y)", _({Op.DIVIDE}), _divide_by_broadcast,
         "one divide per row instead of one per element (XLA rewrites it so too)"),
)
"""The rules, in the order ``simplify`` tries them."""

OPERAND_RULE = "uniform array operand of an elementwise op → scalar literal (it broadcasts)"

_BY_OP: dict[str, tuple[Rule, ...]] = {o.value: tuple(r for r in RULES if o in r.ops) for o in Op}


def table() -> list[dict]:
    """The rule table as rows, for the book."""
    rows = [{"rule": OPERAND_RULE, "applies to": "every elementwise op", "why": "no array to read"}]
    rows += [{"rule": r.name, "applies to": ", ".join(sorted(o.value for o in r.ops)), "why": r.why} for r in RULES]
    return rows


_CONSTANT, _SPREADS = Op.CONSTANT, frozenset({Op.BROADCAST, Op.RESHAPE})  # bound once: Op.X is slow in a loop


def simplify(g: Graph) -> Graph:
    """Algebraic simplification by the rules in :data:`RULES` (x·1 → x, 1/sqrt(y) → rsqrt(y), ...)."""
    s = _Walk(g)
    b = s.b
    splat: dict[int, Literal] = {}  # constants (or broadcasts of literals) whose elements are all equal
    sub_get = b.sub.get  # (only Vars are keys, as in Builder.atom)
    elementwise = ops.ELEMENTWISE - {Op.IOTA}
    for n in g.nodes:
        a = [sub_get(id(x), x) for x in n.operands]
        op = n.op
        if splat and op in elementwise and any(id(x) in splat for x in a if type(x) is Var):
            # a uniform array operand is just a scalar literal (it broadcasts), as long as some operand
            # still has the result's shape: x * ones(3) with a scalar x keeps its ones(3)
            new = [splat[id(x)] if isinstance(x, Var) and id(x) in splat else x for x in a]
            if n.out.aval.shape != () and all(x.aval.shape != n.out.aval.shape for x in new):
                full = next((i for i, x in enumerate(a) if x.aval.shape == n.out.aval.shape), None)
                if full is None:
                    new = a
                else:
                    new[full] = a[full]
            a = new
        if op == _CONSTANT:
            arr = n.attr("value").array
            if arr.size and (arr == arr.flat[0]).all() and n.out.aval.dtype != "bool":
                splat[id(n.out)] = Literal(arr.flat[0].item(), ShapeDtype((), n.out.aval.dtype))
        elif op in _SPREADS and isinstance(a[0], Literal):
            splat[id(n.out)] = a[0]
        elif op in _SPREADS and isinstance(a[0], Var) and id(a[0]) in splat:
            splat[id(n.out)] = splat[id(a[0])]
        rep = None
        for rule in _BY_OP[op]:
            rep = rule.rewrite(s, n, a)
            if rep is not None:
                break
        if rep is not None:
            b.sub[id(n.out)] = rep
            continue
        # the node itself if no operand changed, else a copy reading the new operands (Builder.keep's rule)
        kept = n if all(x is y for x, y in zip(a, n.operands)) else renamed(n, tuple(a))
        b.nodes.append(kept)
        s.producer[id(n.out)] = kept
    return dce(b.finish())
