"""Operator fusion: which ops share a kernel, returned as data (:class:`FusionPlan`).

Introduced in "The compiler at work". :func:`fusion_plan` decides the groups and records every decision
as a typed record: a producer not fused into its consumer (with a :class:`Reason`), a cheap producer
computed again in a second kernel, two sibling kernels merged, a node split out to break a cycle. The
``fuse`` pass attaches the plan to the graph; lowering (:func:`labsim.compiler.lower.lower`) reads its
groups, and the pipeline refuses to lower a graph whose plan a later pass has invalidated.

Rules, in the spirit of XLA's GPU fusion (these are labsim's rules, not XLA's exact ones; "The
compiler landscape" compares them):

- elementwise and data-movement producers fuse into their consumer (vertical fusion); a producer that
  another kernel also reads is computed again in each kernel only if it is cheap (``ops.DUPLICABLE``)
  and recomputing reads no more memory than a round trip, never if it is expensive (exp, divide, a dot);
- a reduction is a fusion root: it absorbs elementwise producers, but its result leaves the kernel;
- a ``dot`` takes an elementwise epilogue of its own shape (bias, activation), and a prologue of views
  and dtype conversions on its operands (:data:`PROLOGUE`), never other producers;
- two contractions never share a kernel;
- independent loop kernels of the same shape that read a common input merge (horizontal fusion).
"""
from __future__ import annotations

from ..support.errors import LabsimError

import enum
import heapq
from heapq import heappop, heappush
import math
from dataclasses import dataclass, field

from ..core import ops
from ..core.ir import Graph, Node, Var
from ..core.ops import Op, OpKind
_BROADCAST, _CONSTANT, _DOT, _RESHAPE = Op.BROADCAST, Op.CONSTANT, Op.DOT, Op.RESHAPE  # bound once: Op.X is slow
_COMPOSITE, _CONTRACTION, _ELEMENTWISE, _REDUCTION = (
    OpKind.COMPOSITE, OpKind.CONTRACTION, OpKind.ELEMENTWISE, OpKind.REDUCTION)


class Reason(enum.Enum):
    """Why a producer was not fused into its consumer."""

    COMPOSITE = "a composite op runs as one library kernel unless the decompose pass expands it"
    REDUCTION_FIRST = ("a reduction must finish before its result can be used: the consumer runs in the next kernel "
                       "(labsim fuses a reduction into its consumers only row by row: over the trailing axes, rows of at "
                       "most ROW_LIMIT elements, its result used only inside its own row)")
    NOT_ROW = "the kernel works row by row, and this value is not part of one row"
    CONTRACTION_SHARED = "its result is also needed by another kernel, and a contraction is never computed twice"
    ONE_ROOT = "a kernel holds at most one contraction or reduction root"
    EPILOGUE_SHAPE = "the epilogue changes shape; only same-shape elementwise epilogues fuse into a dot"
    DOT_OPERAND = ("a dot reads its operands tile by tile: only views and dtype conversions (a prologue) are "
                   "fused into it, not arithmetic")
    PROGRAM_OUTPUT = "its result is also read by another kernel and it is a program output"
    NOT_CHEAP = "its result is also read by another kernel and {op} is not cheap enough to compute twice"
    MORE_TRAFFIC = "its result is also read by another kernel and computing it twice would read more memory than it saves"

    def text(self, op: str = "") -> str:
        return self.value.format(op=op)


@dataclass(frozen=True)
class NotFused:
    producer: int  # node indices in the planned graph
    consumer: int
    reason: Reason


@dataclass(frozen=True)
class Duplicated:
    producer: int  # a cheap node computed again inside the consumer's kernel
    consumer: int


@dataclass(frozen=True)
class Merged:
    first: int  # the last node of each of two sibling kernels merged by horizontal fusion
    second: int


@dataclass(frozen=True)
class Split:
    node: int  # moved to a kernel of its own so that no two kernels wait for each other


Decision = NotFused | Duplicated | Merged | Split


class PlanError(LabsimError, ValueError):
    """A fusion plan that does not describe the graph it is attached to."""


@dataclass(frozen=True, eq=False)
class FusionPlan:
    """Kernels as groups of node indices (in launch order) and every decision behind them."""

    nodes: tuple[Node, ...]  # the nodes the indices refer to (the planned graph's, by identity)
    groups: tuple[tuple[int, ...], ...]
    decisions: tuple[Decision, ...]
    labels: tuple[str, ...] = field(repr=False, default=())  # "%3 (exp)" per node, for the notes

    @property
    def not_fused(self) -> tuple[NotFused, ...]:
        return tuple(d for d in self.decisions if isinstance(d, NotFused))

    @property
    def duplicated(self) -> tuple[Duplicated, ...]:
        return tuple(d for d in self.decisions if isinstance(d, Duplicated))

    @property
    def merged(self) -> tuple[Merged, ...]:
        return tuple(d for d in self.decisions if isinstance(d, Merged))

    @property
    def split(self) -> tuple[Split, ...]:
        return tuple(d for d in self.decisions if isinstance(d, Split))

    def describe(self, d: Decision) -> str:
        """One decision in words."""
        lb = self.labels
        if isinstance(d, NotFused):
            return f"{lb[d.producer]} → {lb[d.consumer]} not fused: {d.reason.text(self.nodes[d.producer].op)}."
        if isinstance(d, Duplicated):
            return (f"{lb[d.producer]} is cheap, so it is computed again inside the kernel of {lb[d.consumer]} "
                    "instead of being written and read back.")
        if isinstance(d, Merged):
            return f"horizontal fusion: {lb[d.first]} and {lb[d.second]} read the same input and now share one kernel."
        return f"{lb[d.node]} moved to a kernel of its own: two kernels would otherwise each wait for the other."

    @property
    def notes(self) -> tuple[str, ...]:
        """Every decision in words, in the order it was made."""
        return tuple(self.describe(d) for d in self.decisions)

    def table(self) -> list[dict]:
        return [{"decision": type(d).__name__, "why": self.describe(d)} for d in self.decisions]

    def verify(self, g: Graph) -> "FusionPlan":
        """Check that the plan describes ``g``; raise :class:`PlanError` if not.

        1. It indexes ``g``'s own nodes.
        2. Every node except free ones (constants, reshapes) is in at least one group, a reshape in at
           most one, and only cheap ops (``ops.DUPLICABLE``) are in several.
        3. The groups are in an order where every group runs after the groups it reads from.
        """
        if self.nodes is not g.nodes:
            raise PlanError(f"the fusion plan was made for another graph ({len(self.nodes)} nodes) than "
                            f"{g.name} ({len(g.nodes)} nodes): a pass changed the graph after fuse")
        owners: dict[int, set[int]] = {}
        for gi, grp in enumerate(self.groups):
            if not grp:
                raise PlanError(f"fusion group {gi} is empty")
            for i in grp:
                if not 0 <= i < len(g.nodes):
                    raise PlanError(f"fusion group {gi} names node {i}, which does not exist")
                if i in owners and g.nodes[i].op not in ops.DUPLICABLE:
                    raise PlanError(f"node {i} ({g.nodes[i].op}) is in fusion groups {sorted(owners[i])} and "
                                    f"{gi}, but only cheap ops may be computed in two kernels")
                owners.setdefault(i, set()).add(gi)
        for i, n in enumerate(g.nodes):
            if n.op not in ops.FREE and i not in owners:
                raise PlanError(f"node {i} ({n.op}) is in no fusion group")
        index = {id(n.out): i for i, n in enumerate(g.nodes)}
        for gi, grp in enumerate(self.groups):
            for i in grp:
                for a in g.nodes[i].in_vars:
                    j = index.get(id(a))
                    while j is not None and j not in owners and g.nodes[j].op == _RESHAPE:
                        src = g.nodes[j].operands[0]
                        j = index.get(id(src)) if isinstance(src, Var) else None
                    if j is not None and j in owners and gi not in owners[j] and min(owners[j]) > gi:
                        raise PlanError(f"fusion group {gi} reads node {j}, computed only by later group(s) "
                                        f"{sorted(owners[j])}")
        return self


_LOOP_KINDS = (_ELEMENTWISE, OpKind.DATA_MOVEMENT)

ROW_LIMIT = 16384
"""The longest row (in elements) labsim keeps on chip to fuse a reduction with its consumers in one
kernel: a persistent reduction, one block per row (XLA:GPU's softmax and layer-norm fusions and
TorchInductor's persistent reductions do this; the limit is labsim's assumption: 64 KiB of float32)."""


def _row(n: Node):
    """(rows, row) shapes if reduction ``n`` reduces exactly the trailing axes of a row of at most
    ROW_LIMIT elements, else None."""
    x = n.operands[0].aval
    axes = tuple(sorted(n.attr("axes")))
    k = len(axes)
    if not k or axes != tuple(range(x.ndim - k, x.ndim)):
        return None
    R, C = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
    if math.prod(C) > ROW_LIMIT:
        return None
    return R, C


def _row_shapes(R, C) -> tuple:
    """The shapes a value in a row kernel may have: a full row, one value per row, or that with kept dims."""
    return (R + C, R, R + (1,) * len(C))


def _row_broadcast_ok(n: Node, R, C) -> bool:
    """A broadcast inside a row kernel keeps each row's value in its own row."""
    src = n.operands[0].aval.shape
    dims = tuple(n.attr("broadcast_dimensions"))
    if src == R:
        return dims == tuple(range(len(R)))
    if src == R + (1,) * len(C):
        return dims == tuple(range(len(R) + len(C)))
    return True  # read from memory (a parameter broadcast along the rows, such as a layer-norm scale)


PROLOGUE = frozenset({Op.TRANSPOSE, _BROADCAST, Op.SLICE, _RESHAPE, Op.CONVERT})
"""What a matrix product may read through inside its kernel: views (the GEMM follows strides and offsets)
and dtype conversions (a dequantising prologue, as XLA's Triton GEMM fusions and TorchInductor do)."""


def _kind(n: Node) -> OpKind:
    return ops.get(n.op).kind


class _Ancestors:
    """Which nodes each node depends on, as bitsets (Python ints), built once in topological order:
    "does kernel a read, directly or not, anything kernel b computes?" costs a few word operations
    instead of a walk over the graph."""

    def __init__(self, nodes, index) -> None:
        anc: list[int] = []
        for n in nodes:
            bits = 0
            for a in n.in_vars:
                j = index.get(id(a))
                if j is not None:
                    bits |= anc[j] | (1 << j)
            anc.append(bits)
        self.anc = anc

    def depends(self, a, b) -> bool:
        """Does a node of group ``a`` read (transitively) a node of group ``b``?"""
        mask = 0
        for j in b:
            mask |= 1 << j
        for i in a:
            if self.anc[i] & mask:
                return True
        return False


def _not_only(gs, gid: int) -> bool:  # ``gs != {gid}`` without building a set (``gs`` None: in no group yet)
    return gs is None or len(gs) != 1 or gid not in gs


def fusion_plan(g: Graph) -> FusionPlan:
    """Decide which nodes share a kernel (see the module docstring for the rules)."""
    nodes = g.nodes
    kind = [ops.get(n.op).kind for n in nodes]
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
    prologue: set[int] = set()  # operand views and converts read by a dot inside its kernel
    grow: dict[int, object] = {}  # a kernel's (rows, row) shapes once it holds a row reduction; False: a non-row one
    log: list[Decision] = []
    gkinds: dict[int, set[OpKind]] = {}  # op kinds present in each group (kept up to date)
    gshapes: dict[int, set[tuple]] = {}  # result shapes of the group's elementwise ops

    def join(gid: int, j: int) -> None:
        gs = groups_of.get(j)
        if gs is None:
            groups_of[j] = {gid}
        else:
            gs.add(gid)
        members[gid].add(j)
        k = kind[j]
        gkinds[gid].add(k)
        if k is _ELEMENTWISE:
            gshapes[gid].add(nodes[j].out.aval.shape)

    for i in reversed(range(len(nodes))):
        n = nodes[i]
        if n.op == _CONSTANT or i in groups_of:
            # already computed inside another kernel (a cheap producer taken in by its consumers): that
            # kernel writes it for any reader outside, so it needs no kernel of its own
            continue
        gid = i
        members[gid], gkinds[gid], gshapes[gid] = set(), set(), set()
        join(gid, i)
        if kind[i] is _REDUCTION:
            grow[gid] = _row(n) or False
        # Candidate producers are decided latest first (a max-heap on the node index): every user of p
        # comes after p, so when p's turn comes, each of its users that will join this kernel has joined,
        # and "is p also read outside this kernel?" has its final answer.
        frontier: list[tuple[int, int]] = []

        mine = members[gid]

        def propose(c: int) -> None:
            for a in nodes[c].in_vars:
                p = index.get(id(a))
                if p is not None and p not in mine and nodes[p].op != _CONSTANT:
                    heappush(frontier, (-p, c))

        propose(i)
        while frontier:
            p, c = heappop(frontier)
            p = -p
            if p in members[gid]:
                continue
            pk = kind[p]
            gk = gkinds[gid]
            # users elsewhere, including other copies of a duplicated user, also need p
            outside = [u for u in users[p] if u in multi or _not_only(groups_of.get(u), gid)]
            if groups_of.get(p):  # already computed in another kernel: joining here duplicates it
                outside = outside or sorted(groups_of[p])
            why = None
            duplicate = False
            if pk is _COMPOSITE or kind[c] is _COMPOSITE:
                why = Reason.COMPOSITE
            elif pk is _REDUCTION:
                r, have = _row(nodes[p]), grow.get(gid)
                if r is None or outside or have is False or (have is not None and have != r) \
                        or _CONTRACTION in gk \
                        or any(nodes[m].out.aval.shape not in _row_shapes(*r) for m in members[gid]) \
                        or not all(_row_broadcast_ok(nodes[m], *r) for m in members[gid]
                                   if nodes[m].op == _BROADCAST):
                    why = Reason.REDUCTION_FIRST
                else:
                    grow[gid] = r
            elif isinstance(grow.get(gid), tuple) and (
                    nodes[p].out.aval.shape not in _row_shapes(*grow[gid])
                    or (nodes[p].op == _BROADCAST and not _row_broadcast_ok(nodes[p], *grow[gid]))):
                why = Reason.NOT_ROW
            elif pk is _CONTRACTION:
                if outside:
                    why = Reason.CONTRACTION_SHARED
                elif _CONTRACTION in gk or _REDUCTION in gk:
                    why = Reason.ONE_ROOT
                elif gshapes[gid] - {nodes[p].out.aval.shape}:
                    why = Reason.EPILOGUE_SHAPE
            elif (nodes[c].op == _DOT or c in prologue) and nodes[p].op not in PROLOGUE:
                why = Reason.DOT_OPERAND
            elif outside and (nodes[c].op == _DOT or c in prologue) and nodes[p].op not in ops.DUPLICABLE:
                why = Reason.NOT_CHEAP
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
                elif id(nodes[p].out) in out_ids:
                    why = Reason.PROGRAM_OUTPUT
                elif nodes[p].op not in ops.DUPLICABLE:
                    why = Reason.NOT_CHEAP
                else:
                    why = Reason.MORE_TRAFFIC
            if why:
                if nodes[p].op != _RESHAPE:
                    log.append(NotFused(p, c, why))
                continue
            if duplicate:
                multi.add(p)
                log.append(Duplicated(p, c))
            if nodes[c].op == _DOT or c in prologue:
                prologue.add(p)
            join(gid, p)
            propose(p)
    # reshapes left alone are free bitcasts: no kernel
    groups = [sorted(m) for m in members.values()
              if not (len(m) == 1 and nodes[next(iter(m))].op == _RESHAPE)]
    groups = _horizontal(g, groups, index, log)
    groups = _order_acyclic(groups, nodes, index, log)
    names = g.names()
    labels = tuple(f"{names[id(n.out)]} ({n.op})" for n in nodes)
    return FusionPlan(nodes=g.nodes, groups=tuple(tuple(x) for x in groups), decisions=tuple(log), labels=labels)


def _reads(g: Graph, grp: list[int]) -> set[int]:
    inside = {id(g.nodes[i].out) for i in grp}
    return {id(a) for i in grp for a in g.nodes[i].in_vars if id(a) not in inside}


def _horizontal(g, groups, index, log):
    """Merge independent loop kernels of one output shape that read a common input."""
    nodes = g.nodes
    loop = [all(_kind(nodes[i]) in _LOOP_KINDS for i in grp) for grp in groups]
    shape = [nodes[max(grp)].out.aval.shape for grp in groups]
    readers: dict[int, list[int]] = {}
    for gi, grp in enumerate(groups):
        if loop[gi]:
            for v in _reads(g, grp):
                readers.setdefault(v, []).append(gi)
    anc: _Ancestors | None = None  # built on the first question
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
                if anc is None:
                    anc = _Ancestors(nodes, index)
                if anc.depends(ga, gb) or anc.depends(gb, ga):
                    continue
                log.append(Merged(max(ga), max(gb)))
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
        while i is not None and i not in owners and nodes[i].op == _RESHAPE:
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


def _order_acyclic(groups, nodes, index, log) -> list[list[int]]:
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
            if [i] not in groups:  # a node computed in several kernels is split out once
                groups.append([i])
                log.append(Split(i))


def fuse(g: Graph) -> Graph:
    """Operator fusion: attach a :class:`FusionPlan` (which ops share a kernel, and why) to the graph."""
    return g.replace(plan=fusion_plan(g))


__all__ = ["FusionPlan", "Reason", "NotFused", "Duplicated", "Merged", "Split", "PlanError", "fusion_plan", "fuse"]
