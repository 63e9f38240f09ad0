"""Compiler passes: pure, named ``Graph -> Graph`` functions, listed once in :data:`PIPELINE`.

Introduced in "The compiler at work". Each pass returns a new graph (the old one is untouched) and
keeps the program's meaning: ``ls.evaluate`` gives the same result before and after (tested on random
programs). ``ls.compile(g)`` runs :data:`PIPELINE` in order and records every intermediate graph in
``prog.stages``; ``ls.compile(g, passes=[...])`` runs the passes you choose.

Analyses return data (see :func:`fusion_plan`); the fusion pass stores its plan and its reasons in the
graph (``Graph.groups``, ``Graph.notes``) so lowering, drawing and the book can read them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import ops
from .dtypes import numpy_dtype
from .ir import ArrayValue, Atom, Graph, Literal, Node, Var, freeze_attrs
from .ops import OpKind
from .rewrite import decompose as _decompose

Pass = Callable[[Graph], Graph]


# ----------------------------------------------------------------------------------------------
# small tools
class _Builder:
    """Collects nodes for a rewritten graph, with a substitution map old var -> new atom."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.nodes: list[Node] = []
        self.sub: dict[int, Atom] = {}

    def atom(self, a: Atom) -> Atom:
        return self.sub.get(id(a), a) if isinstance(a, Var) else a

    def keep(self, n: Node) -> None:
        operands = tuple(self.atom(a) for a in n.operands)
        if all(x is y for x, y in zip(operands, n.operands)):
            self.nodes.append(n)
        else:
            self.nodes.append(Node(n.op, operands, n.attrs, n.out))

    def emit(self, op: str, operands: Sequence[Atom], **params) -> Var:
        aval = ops.get(op).infer(tuple(a.aval for a in operands), params)
        out = Var(aval)
        self.nodes.append(Node(op, tuple(operands), freeze_attrs(params), out))
        return out

    def finish(self, **changes) -> Graph:
        outs = tuple(self.atom(o) for o in self.g.outputs)
        return self.g.replace(nodes=tuple(self.nodes), outputs=outs, groups=None, notes=(), **changes)


def _is_lit(a: Atom, value: float) -> bool:
    return isinstance(a, Literal) and a.aval.dtype != "bool" and float(a.value) == value


def _same_aval(a: Atom, n: Node) -> bool:
    return a.aval == n.out.aval


# ----------------------------------------------------------------------------------------------
def decompose(g: Graph) -> Graph:
    """Expand composite ops (softmax, layer_norm, gelu, mean) into primitives, as PyTorch's
    decomposition lowers thousands of ATen ops to a few hundred core ones."""
    if not any(ops.get(n.op).kind is OpKind.COMPOSITE for n in g.nodes):
        return g
    return _decompose(g)


def dce(g: Graph) -> Graph:
    """Dead-code elimination: drop every node whose result no output depends on."""
    live: set[int] = {id(o) for o in g.outputs if isinstance(o, Var)}
    keep = []
    for n in reversed(g.nodes):
        if id(n.out) in live:
            keep.append(n)
            live.update(id(a) for a in n.in_vars)
    if len(keep) == len(g.nodes):
        return g
    return g.replace(nodes=tuple(reversed(keep)), groups=None, notes=())


def _key(a: Atom):
    return ("lit", a.value, a.aval.dtype) if isinstance(a, Literal) else id(a)


def cse(g: Graph) -> Graph:
    """Common-subexpression elimination: an op applied to the same operands with the same attributes
    is computed once (commutative ops match with operands swapped)."""
    b = _Builder(g)
    seen: dict[tuple, Var] = {}
    for n in g.nodes:
        operands = tuple(b.atom(a) for a in n.operands)
        keys = tuple(_key(a) for a in operands)
        if ops.get(n.op).commutative:
            keys = tuple(sorted(keys, key=repr))
        k = (n.op, keys, n.attrs)
        if k in seen:
            b.sub[id(n.out)] = seen[k]
            continue
        seen[k] = n.out
        b.keep(n)
    return b.finish()


MAX_FOLD_ELEMENTS = 1 << 16


def constant_fold(g: Graph) -> Graph:
    """Constant folding: an op whose operands are all constants is computed at compile time.

    Scalars become literals. Broadcasts are not folded (a big constant costs more memory traffic than
    the broadcast), nor results larger than ``MAX_FOLD_ELEMENTS``.
    """
    b = _Builder(g)
    const: dict[int, np.ndarray] = {}
    for n in g.nodes:
        operands = [b.atom(a) for a in n.operands]
        if n.op == "constant":
            const[id(n.out)] = ops.get("constant").impl(**n.params)
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
        if vals is None or n.op in ("broadcast", "iota") or n.out.aval.size > MAX_FOLD_ELEMENTS \
                or ops.get(n.op).kind is OpKind.COMPOSITE or not operands:
            b.keep(n)
            continue
        val = np.asarray(ops.get(n.op).impl(*vals, **n.params)).astype(numpy_dtype(n.out.aval.dtype))
        if n.out.aval.shape == ():
            b.sub[id(n.out)] = Literal(val.item(), n.out.aval)
        else:
            out = b.emit("constant", (), value=ArrayValue(val), dtype=n.out.aval.dtype)
            const[id(out)] = val
            b.sub[id(n.out)] = out
    return dce(b.finish())


def simplify(g: Graph) -> Graph:
    """Algebraic simplification: x*1, 1*x, x+0, 0+x, x-0, x/1 → x; -(-x) → x; transpose of transpose →
    one transpose (or none); reshape of reshape → one reshape; no-op reshape/transpose/convert/
    broadcast → removed; x / broadcast(y) → x * broadcast(1/y) (fewer divides, as XLA rewrites it);
    x / c → x * (1/c) for a literal c; 1/sqrt(y) → rsqrt(y); c1 * (c2 * x) → (c1·c2) * x; an array constant whose elements are
    all equal, or a broadcast literal, becomes a scalar literal where an elementwise op uses it."""
    b = _Builder(g)
    producer: dict[int, Node] = {}
    splat: dict[int, Literal] = {}  # constants (or broadcasts of literals) whose elements are all equal
    for n in g.nodes:
        a = [b.atom(x) for x in n.operands]
        if ops.get(n.op).kind is OpKind.ELEMENTWISE and n.op != "iota":
            # a uniform array operand of an elementwise op is just a scalar literal (it broadcasts)
            a = [splat[id(x)] if isinstance(x, Var) and id(x) in splat else x for x in a]
            if all(isinstance(x, Literal) for x in a) and n.out.aval.shape != ():
                a[0] = n.operands[0] if isinstance(n.operands[0], Var) else a[0]
        rep: Atom | None = None
        op = n.op
        if op == "constant":
            arr = n.attr("value").array
            if arr.size and (arr == arr.flat[0]).all() and n.out.aval.dtype != "bool":
                splat[id(n.out)] = Literal(arr.flat[0].item(), n.out.aval.__class__((), n.out.aval.dtype))
        elif op in ("broadcast", "reshape") and isinstance(a[0], Literal):
            splat[id(n.out)] = a[0]
        elif op in ("broadcast", "reshape") and isinstance(a[0], Var) and id(a[0]) in splat:
            splat[id(n.out)] = splat[id(a[0])]
        # (c1 * (c2 * x)) -> (c1*c2) * x, with literal c1, c2
        if op == "multiply" and any(isinstance(x, Literal) for x in a):
            li = 0 if isinstance(a[0], Literal) else 1
            other = a[1 - li]
            inner = producer.get(id(other)) if isinstance(other, Var) else None
            if inner is not None and inner.op == "multiply":
                ia = [b.atom(x) for x in inner.operands]
                lj = next((j for j in (0, 1) if isinstance(ia[j], Literal)), None)
                if lj is not None and ia[1 - lj].aval == n.out.aval and a[li].aval.dtype == ia[lj].aval.dtype:
                    lit = Literal(a[li].value * ia[lj].value, a[li].aval)
                    rep = b.emit("multiply", (lit, ia[1 - lj]))
                    producer[id(rep)] = b.nodes[-1]
                    b.sub[id(n.out)] = rep
                    continue
        if op in ("add", "subtract") and len(a) == 2 and _is_lit(a[1], 0.0) and _same_aval(a[0], n):
            rep = a[0]
        elif op == "add" and _is_lit(a[0], 0.0) and _same_aval(a[1], n):
            rep = a[1]
        elif op in ("multiply", "divide") and _is_lit(a[1], 1.0) and _same_aval(a[0], n):
            rep = a[0]
        elif op == "multiply" and _is_lit(a[0], 1.0) and _same_aval(a[1], n):
            rep = a[1]
        elif op == "divide" and isinstance(a[1], Literal) and a[1].aval.dtype.startswith(("float", "bfloat")) \
                and float(a[1].value) != 0.0 and _same_aval(a[0], n):
            rep = b.emit("multiply", (a[0], Literal(1.0 / float(a[1].value), a[1].aval)))
            producer[id(rep)] = b.nodes[-1]
        elif op == "divide" and _is_lit(a[0], 1.0) and isinstance(a[1], Var) and id(a[1]) in producer \
                and producer[id(a[1])].op == "sqrt":
            rep = b.emit("rsqrt", (b.atom(producer[id(a[1])].operands[0]),))  # 1/sqrt(y) -> rsqrt(y)
            producer[id(rep)] = b.nodes[-1]
        elif op == "negate" and isinstance(a[0], Var) and id(a[0]) in producer and producer[id(a[0])].op == "negate":
            rep = b.atom(producer[id(a[0])].operands[0])
        elif op == "convert" and a[0].aval == n.out.aval:
            rep = a[0]
        elif op == "reshape" and a[0].aval.shape == n.out.aval.shape:
            rep = a[0]
        elif op == "broadcast" and a[0].aval.shape == n.out.aval.shape:
            rep = a[0]
        elif op == "transpose":
            perm = n.attr("permutation")
            src = a[0]
            if isinstance(src, Var) and id(src) in producer and producer[id(src)].op == "transpose":
                inner = producer[id(src)]
                perm = tuple(inner.attr("permutation")[i] for i in perm)
                src = b.atom(inner.operands[0])
            if perm == tuple(range(len(perm))):
                rep = src
            elif src is not a[0]:
                rep = b.emit("transpose", (src,), permutation=perm)
                producer[id(rep)] = b.nodes[-1]
        elif op == "reshape" and isinstance(a[0], Var) and id(a[0]) in producer and producer[id(a[0])].op == "reshape":
            src = b.atom(producer[id(a[0])].operands[0])
            rep = src if src.aval.shape == n.out.aval.shape else b.emit("reshape", (src,), new_sizes=n.attr("new_sizes"))
            if isinstance(rep, Var) and rep is not src:
                producer[id(rep)] = b.nodes[-1]
        elif op == "divide" and isinstance(a[1], Var) and id(a[1]) in producer \
                and producer[id(a[1])].op == "broadcast" and a[0].aval.dtype.startswith(("float", "bfloat")):
            bc = producer[id(a[1])]
            small = b.atom(bc.operands[0])
            if small.aval.size < n.out.aval.size:
                sq = producer.get(id(small)) if isinstance(small, Var) else None
                if sq is not None and sq.op == "sqrt":  # 1/sqrt(y) -> rsqrt(y)
                    recip = b.emit("rsqrt", (b.atom(sq.operands[0]),))
                else:
                    recip = b.emit("divide", (Literal(1.0, small.aval.__class__((), small.aval.dtype)), small))
                rb = b.emit("broadcast", (recip,), shape=bc.attr("shape"),
                            broadcast_dimensions=bc.attr("broadcast_dimensions"))
                rep = b.emit("multiply", (a[0], rb))
                producer[id(rb)] = b.nodes[-2]
        if rep is not None:
            b.sub[id(n.out)] = rep
            continue
        if any(x is not b.atom(y) for x, y in zip(a, n.operands)):
            b.nodes.append(Node(n.op, tuple(a), n.attrs, n.out))
        else:
            b.keep(n)
        producer[id(n.out)] = b.nodes[-1]
    return dce(b.finish())


def fold_transpose(g: Graph) -> Graph:
    """Layout: a ``dot`` that reads a transposed operand reads the original instead, with its
    dimension numbers permuted (the matrix unit can read either layout); the transpose then dies."""
    b = _Builder(g)
    producer: dict[int, Node] = {}
    for n in g.nodes:
        a = [b.atom(x) for x in n.operands]
        if n.op == "dot":
            (lc, rc), (lb, rb) = n.attr("contracting"), n.attr("batch")
            new = list(a)
            dims = [[lc, lb], [rc, rb]]
            changed = False
            for side in (0, 1):
                t = producer.get(id(a[side])) if isinstance(a[side], Var) else None
                if t is None or t.op != "transpose":
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
                out = b.emit("dot", tuple(new), contracting=(dims[0][0], dims[1][0]), batch=(dims[0][1], dims[1][1]))
                b.sub[id(n.out)] = out
                producer[id(out)] = b.nodes[-1]
                continue
        b.keep(n)
        producer[id(n.out)] = b.nodes[-1]
    return dce(b.finish())


# ----------------------------------------------------------------------------------------------
# fusion
_LOOP_KINDS = (OpKind.ELEMENTWISE, OpKind.DATA_MOVEMENT)


def _kind(n: Node) -> OpKind:
    return ops.get(n.op).kind


def fusion_plan(g: Graph) -> tuple[list[list[int]], list[str]]:
    """Decide which nodes share a kernel. Returns (groups of node indices, reasons for not fusing).

    Rules, in the spirit of XLA's GPU fusion:
    - elementwise and data-movement producers fuse into their consumer (vertical fusion); a producer
      that another kernel also reads is computed again in each kernel only if it is cheap
      (``ops.DUPLICABLE``: add, multiply, broadcast, ...), never if it is expensive (exp, divide, a dot);
    - a reduction is a fusion root: it absorbs elementwise producers, but its result leaves the kernel;
    - a ``dot`` takes an elementwise epilogue of its own shape (bias, activation), and never a producer;
    - two contractions never share a kernel;
    - independent loop kernels of the same shape that read a common input merge (horizontal fusion).
    """
    nodes = g.nodes
    index = {id(n.out): i for i, n in enumerate(nodes)}
    users: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for i, n in enumerate(nodes):
        for a in n.in_vars:
            if id(a) in index:
                users[index[id(a)]].append(i)
    out_ids = {id(o) for o in g.outputs if isinstance(o, Var)}
    groups_of: dict[int, set[int]] = {}
    members: dict[int, set[int]] = {}
    multi: set[int] = set()  # nodes computed in more than one kernel (their producers are shared too)
    notes: list[str] = []
    names = g.names()

    def label(i: int) -> str:
        return f"{names[id(nodes[i].out)]} ({nodes[i].op})"

    gkinds: dict[int, set[OpKind]] = {}  # op kinds present in each group (kept up to date)
    gshapes: dict[int, set[tuple]] = {}  # result shapes of the group's elementwise ops

    def join(gid: int, j: int) -> None:
        groups_of.setdefault(j, set()).add(gid)
        members[gid].add(j)
        k = _kind(nodes[j])
        gkinds[gid].add(k)
        if k is OpKind.ELEMENTWISE:
            gshapes[gid].add(nodes[j].out.aval.shape)

    def covered(p: int) -> bool:
        return bool(users[p]) and all(any(p in members[gu] for gu in groups_of.get(u, ())) for u in users[p])

    for i in reversed(range(len(nodes))):
        n = nodes[i]
        if n.op == "constant" or (i in groups_of and covered(i) and id(n.out) not in out_ids):
            continue
        if i in groups_of and id(n.out) in out_ids:
            continue
        gid = i
        members[gid], gkinds[gid], gshapes[gid] = set(), set(), set()
        join(gid, i)
        frontier = [i]
        while frontier:
            c = frontier.pop()
            for a in nodes[c].in_vars:
                p = index.get(id(a))
                if p is None or p in members[gid] or nodes[p].op == "constant":
                    continue
                pk = _kind(nodes[p])
                gk = gkinds[gid]
                # users elsewhere, including other copies of a duplicated user, also need p
                outside = [u for u in users[p] if groups_of.get(u, set()) != {gid} or u in multi]
                if groups_of.get(p):  # already computed in another kernel: joining here duplicates it
                    outside = outside or sorted(groups_of[p])
                why = None
                duplicate = False
                if pk is OpKind.COMPOSITE or _kind(nodes[c]) is OpKind.COMPOSITE:
                    why = "a composite op runs as one library kernel unless the decompose pass expands it"
                elif pk is OpKind.REDUCTION:
                    why = "a reduction must finish before its result can be used: the consumer runs in the next kernel"
                elif pk is OpKind.CONTRACTION:
                    if outside:
                        why = "its result is also needed by another kernel, and a contraction is never computed twice"
                    elif OpKind.CONTRACTION in gk or OpKind.REDUCTION in gk:
                        why = "a kernel holds at most one contraction or reduction root"
                    elif gshapes[gid] - {nodes[p].out.aval.shape}:
                        why = "the epilogue changes shape; only same-shape elementwise epilogues fuse into a dot"
                elif nodes[c].op == "dot":
                    why = "a dot reads its operands tile by tile; producers are not fused into it"
                elif outside:
                    # Recomputing p in each of its k consumer kernels reads p's inputs k times; keeping it
                    # reads them once, writes p once and reads p k times. Duplicate only if that is no worse:
                    # (k - 1)·inputs ≤ (k + 1)·output.
                    k = len(users[p])
                    in_bytes = sum(v.aval.nbytes for v in nodes[p].in_vars)
                    out_bytes = nodes[p].out.aval.nbytes
                    if nodes[p].op in ops.DUPLICABLE and id(nodes[p].out) not in out_ids \
                            and (k - 1) * in_bytes <= (k + 1) * out_bytes:
                        duplicate = True  # cheap: recompute it here rather than round-trip through memory
                    else:
                        what = "it is a program output" if id(nodes[p].out) in out_ids else \
                            f"{nodes[p].op} is not cheap enough to compute twice" if nodes[p].op not in ops.DUPLICABLE \
                            else "computing it twice would read more memory than it saves"
                        why = f"its result is also read by another kernel and {what}"
                if why:
                    if nodes[p].op != "reshape":
                        notes.append(f"{label(p)} → {label(c)} not fused: {why}.")
                    continue
                if duplicate:
                    multi.add(p)
                    notes.append(f"{label(p)} is cheap, so it is computed again inside the kernel of {label(c)} "
                                 "instead of being written and read back.")
                join(gid, p)
                frontier.append(p)
    # reshapes left alone are free bitcasts: no kernel
    groups = [sorted(m) for m in members.values()
              if not (len(m) == 1 and nodes[next(iter(m))].op == "reshape")]
    groups = _horizontal(g, groups, users, index, notes, label)
    return _order_acyclic(groups, nodes, index, notes, label), notes


def _reads(g: Graph, grp: list[int], index: dict[int, int]) -> set[int]:
    inside = {id(g.nodes[i].out) for i in grp}
    return {id(a) for i in grp for a in g.nodes[i].in_vars if id(a) not in inside}


def _horizontal(g, groups, users, index, notes, label):
    """Merge independent loop kernels of one output shape that read a common input."""
    nodes = g.nodes
    loop = [all(_kind(nodes[i]) in _LOOP_KINDS for i in grp) for grp in groups]
    shape = [nodes[max(grp)].out.aval.shape for grp in groups]
    readers: dict[int, list[int]] = {}
    for gi, grp in enumerate(groups):
        if loop[gi]:
            for v in _reads(g, grp, index):
                readers.setdefault(v, []).append(gi)

    def depends(a, b):  # does group a (transitively) read anything group b computes?
        target = {id(nodes[i].out) for i in b}
        lo = min(b)
        stack, seen = list(a), set(a)
        while stack:
            i = stack.pop()
            for v in nodes[i].in_vars:
                if id(v) in target:
                    return True
                j = index.get(id(v))
                if j is not None and j >= lo and j not in seen:  # nothing before b's first node reads b
                    seen.add(j)
                    stack.append(j)
        return False

    alive = {gi: list(grp) for gi, grp in enumerate(groups)}
    for bucket in readers.values():
        bucket = [gi for gi in bucket if gi in alive]
        for x_i, x in enumerate(bucket):
            if x not in alive:
                continue
            for y in bucket[x_i + 1:]:
                if y not in alive or x == y or shape[x] != shape[y]:
                    continue
                ga, gb = alive[x], alive[y]
                if depends(ga, gb) or depends(gb, ga):
                    continue
                notes.append(f"horizontal fusion: {label(max(ga))} and {label(max(gb))} read the same input "
                             "and now share one kernel.")
                alive[x] = sorted(set(ga) | set(gb))
                del alive[y]
    return [alive[k] for k in sorted(alive)]


def _order(groups, nodes, index) -> list[list[int]]:
    """Topological order of groups (Kahn), ties broken by first node index. A group that reads a node
    it does not contain depends on every group that contains it."""
    owners: dict[int, set[int]] = {}
    for gi, grp in enumerate(groups):
        for i in grp:
            owners.setdefault(i, set()).add(gi)

    def src(i):  # look through ungrouped reshapes
        while i is not None and i not in owners and nodes[i].op == "reshape":
            a = nodes[i].operands[0]
            i = index.get(id(a)) if isinstance(a, Var) else None
        return i

    deps = {gi: set() for gi in range(len(groups))}
    for gi, grp in enumerate(groups):
        for i in grp:
            for a in nodes[i].in_vars:
                j = src(index.get(id(a)))
                if j is not None and j in owners and gi not in owners[j]:
                    deps[gi] |= owners[j]
    import heapq

    indeg = {gi: len(deps[gi]) for gi in deps}
    rdeps: dict[int, list[int]] = {gi: [] for gi in deps}
    for gi, ds in deps.items():
        for d in ds:
            rdeps[d].append(gi)
    heap = [(min(groups[gi]), gi) for gi in deps if indeg[gi] == 0]
    heapq.heapify(heap)
    order, done = [], set()
    while heap:
        _, gi = heapq.heappop(heap)
        order.append(groups[gi])
        done.add(gi)
        for u in rdeps[gi]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(heap, (min(groups[u]), u))
    if len(order) < len(groups):
        raise _Cycle([gi for gi in range(len(groups)) if gi not in done])
    return order


class _Cycle(Exception):
    def __init__(self, stuck: list[int]) -> None:
        super().__init__("fusion groups depend on each other")
        self.stuck = stuck


def _order_acyclic(groups, nodes, index, notes, label) -> list[list[int]]:
    """Order the groups; where two kernels would each wait for the other, take the latest node that one
    of them computes and another reads out into a kernel of its own, until no such cycle is left."""
    while True:
        try:
            return _order(groups, nodes, index)
        except _Cycle as c:
            stuck = set(c.stuck)
            cand = []
            for gi in stuck:
                for i in groups[gi]:
                    readers = [gj for gj in stuck if gj != gi and i not in groups[gj] and
                               any(any(index.get(id(a)) == i for a in nodes[u].in_vars) for u in groups[gj])]
                    if readers and len(groups[gi]) > 1:
                        cand.append((i, gi))
            if not cand:
                raise AssertionError("fusion produced a cycle between kernels that cannot be split")
            i, gi = max(cand)
            groups[gi] = [j for j in groups[gi] if j != i]
            groups.append([i])
            notes.append(f"{label(i)} moved to a kernel of its own: two kernels would otherwise each wait for the other.")


def fuse(g: Graph) -> Graph:
    """Operator fusion: record a fusion plan (which ops share a kernel) and the reasons behind it."""
    groups, notes = fusion_plan(g)
    return g.replace(groups=tuple(tuple(x) for x in groups), notes=tuple(notes))


# ----------------------------------------------------------------------------------------------
PIPELINE: tuple[Pass, ...] = (decompose, constant_fold, simplify, cse, fold_transpose, dce, fuse)
"""The default pipeline ``ls.compile`` runs, in order."""

PASSES: dict[str, Pass] = {p.__name__: p for p in PIPELINE}

__all__ = ["PIPELINE", "PASSES", "decompose", "simplify", "constant_fold", "cse", "fold_transpose", "dce",
           "fuse", "fusion_plan"]
