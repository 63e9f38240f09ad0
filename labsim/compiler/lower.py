"""Lowering: a graph (and its fusion plan) becomes kernels.

Introduced in "The journey of one matrix product" (step 4, code generation). Each group of the fusion
plan becomes one :class:`~labsim.compiler.kernel.Kernel`; its FLOPs and bytes come from the op table,
never from op names, and its listing from :mod:`labsim.compiler.codegen`.

Ops that move no data need no kernel (``ops.FREE``): ``constant`` (uploaded with the program) and
``reshape`` of a row-major array (a *bitcast*: the same bytes seen with another shape, as XLA treats it).
"""
from __future__ import annotations

from typing import Sequence

from ..core import ops
from ..core.ir import Graph, Node, Var
from ..core.ops import Op, OpKind
from ..core.trace import expand_composites, trace_decomposition
from .kernel import Kernel, KernelKind


def _kind_of(nodes: Sequence[Node], kinds: set | None = None) -> KernelKind:
    """The kernel's kind from its nodes' op kinds (``kinds``, when the caller has them already)."""
    if kinds is None:
        kinds = {ops.get(n.op).kind for n in nodes}
    if OpKind.COMPOSITE in kinds:  # a library kernel: its kind is that of its decomposition
        kinds = {ops.get(m.op).kind for n in nodes if n.op in ops.COMPOSITE
                 for m in expand_composites(trace_decomposition(n.op, tuple(a.aval for a in n.operands),
                                                                n.params)).nodes}
    if OpKind.CONTRACTION in kinds:
        return KernelKind.CONTRACTION
    if OpKind.REDUCTION in kinds:
        return KernelKind.REDUCTION
    if kinds <= {OpKind.DATA_MOVEMENT, OpKind.CONSTANT}:
        return KernelKind.COPY
    return KernelKind.LOOP


def _tile_for(m: int, n: int, k: int) -> tuple[int, int, int]:
    """A CUTLASS-like tile: 128×128×32 for big problems, shrunk (to powers of two ≥ 16) for small ones."""
    p2 = lambda x, cap: max(16, min(cap, 1 << max(0, (x - 1).bit_length())))
    return p2(m, 128), p2(n, 128), p2(k, 32)


def make_kernel(name: str, nodes: Sequence[Node], outputs: Sequence[Var], alias: dict[int, Var],
                names: dict[int, str] | None = None) -> Kernel:
    """Build a kernel from a group of nodes; ``outputs`` are the results other kernels (or the host) need."""
    inside = {id(n.out) for n in nodes}
    inputs: list[Var] = []
    seen: set[int] = set()
    flops = trans = 0
    kinds = set()
    for n in nodes:
        for a in n.in_vars:
            if id(a) in inside:
                continue
            buf = alias.get(id(a), a)
            if id(buf) not in seen:
                seen.add(id(buf))
                inputs.append(buf)
        opdef, avals, params = ops.get(n.op), tuple(a.aval for a in n.operands), n.params
        flops += opdef.count_flops(avals, n.out.aval, params)
        trans += opdef.count_transcendentals(avals, n.out.aval, params)
        kinds.add(opdef.kind)
    kind = _kind_of(nodes, kinds)
    root = next((n for n in nodes if n.out is outputs[0]), nodes[-1]) if outputs else nodes[-1]
    tile = None
    if kind is KernelKind.CONTRACTION:
        dot = next(n for n in nodes if ops.get(n.op).kind is OpKind.CONTRACTION)
        dtype = dot.operands[0].aval.dtype
        precision = dot.attr("precision", "default")
        tile = _tile_for(*ops.dot_mnk(dot.operands[0].aval, dot.operands[1].aval, dot.params)[1:])
    else:
        dtype = root.out.aval.dtype
        precision = "default"
    return Kernel(
        name=name, kind=kind, nodes=tuple(nodes), inputs=tuple(inputs), outputs=tuple(outputs),
        flops=flops, transcendentals=trans,
        bytes_read=sum(v.aval.nbytes for v in inputs), bytes_written=sum(v.aval.nbytes for v in outputs),
        dtype=dtype, tile=tile, precision=precision,
        param_names=tuple(_ident((names or {}).get(id(v), f"buf{v.id}")) for v in (*inputs, *outputs)),
        views=tuple(_aliased_inputs(nodes, alias)),
    )


def _aliased_inputs(nodes: Sequence[Node], alias: dict[int, Var]):
    """(operand, buffer) for each operand read through an alias (a free reshape of another buffer)."""
    for n in nodes:
        for a in n.in_vars:
            if id(a) in alias:
                yield a, alias[id(a)]


def _ident(name: str) -> str:
    """A listing identifier: ``%3`` -> ``t3``; a pytree leaf name ``params.w1`` -> ``params_w1``."""
    return name.replace("%", "t") if name.startswith("%") else name.replace(".", "_")


VIEWS = frozenset({Op.TRANSPOSE, Op.BROADCAST, Op.SLICE})
"""Ops an eager framework runs as *views* (PyTorch: ``.T``, ``expand``, slicing): no kernel of their own;
the kernel that reads them follows the strides. (``reshape`` of a contiguous array is free everywhere.)"""


def eager_groups(g: Graph) -> list[list[Node]]:
    """The kernels an eager framework launches for ``g``, one per operation, as PyTorch eager does.

    labsim models PyTorch's eager mode (not JAX's op-by-op mode, which materialises broadcasts):
    views (:data:`VIEWS`) launch nothing and each consumer reads through them (a transposed operand
    of a matrix product becomes a cuBLAS transpose flag; a broadcast bias is read with a zero stride);
    ``concatenate`` and ``update_slice`` copy; a composite op (layer_norm, softmax, gelu, mean) is one
    library kernel, as PyTorch's native kernels are. A view that is a program output, or that a
    reshape reads, is materialised by a copy kernel of its own.
    """
    nodes = g.nodes
    index = {id(n.out): i for i, n in enumerate(nodes)}
    users: dict[int, list[Node]] = {i: [] for i in range(len(nodes))}
    for n in nodes:
        for a in n.in_vars:
            j = index.get(id(a))
            if j is not None:
                users[j].append(n)
    outs = {id(o) for o in g.outputs if isinstance(o, Var)}
    absorbed: set[int] = set()
    for i in reversed(range(len(nodes))):  # users first
        n = nodes[i]
        if n.op in VIEWS and id(n.out) not in outs and users[i] and all(
                u.op not in ops.FREE and (u.op not in VIEWS or index[id(u.out)] in absorbed) for u in users[i]):
            absorbed.add(i)
    groups = []
    for i, n in enumerate(nodes):
        if n.op in ops.FREE or i in absorbed:
            continue
        members, stack = {i}, [i]
        while stack:  # the views this kernel reads through
            for a in nodes[stack.pop()].in_vars:
                j = index.get(id(a))
                if j is not None and j in absorbed and j not in members:
                    members.add(j)
                    stack.append(j)
        groups.append([nodes[j] for j in sorted(members)])
    return groups


def lower(g: Graph, groups: Sequence[Sequence[Node]] | None = None) -> tuple[tuple[Kernel, ...], tuple[Var, ...], dict]:
    """Cut ``g`` into kernels. ``groups`` lists nodes that share a kernel; by default those of the fusion
    plan attached to ``g``, and without one the kernels an eager framework launches
    (:func:`eager_groups`: one per operation, views read in place).
    """
    alias: dict[int, Var] = {}
    constants: list[Var] = []
    names = g.names()
    reshape, constant = Op.RESHAPE, Op.CONSTANT  # bound once: Op.X is slow in a loop
    for n in g.nodes:
        if n.op == reshape and n.in_vars:
            src = n.operands[0]
            alias[id(n.out)] = alias.get(id(src), src)
        elif n.op == constant:
            constants.append(n.out)
    if groups is None and g.plan is not None:
        groups = [[g.nodes[i] for i in sorted(grp)] for grp in g.plan.groups]
        grouped_outs = {id(n.out) for grp in groups for n in grp}
        alias = {k: v for k, v in alias.items() if k not in grouped_outs}
    eager = groups is None
    if eager:
        groups = eager_groups(g)
    # which values leave a group: used by another group, or a graph output
    groups_of: dict[int, set[int]] = {}
    for gi, grp in enumerate(groups):
        for n in grp:
            groups_of.setdefault(id(n.out), set()).add(gi)
    needed: set[int] = {id(alias.get(id(o), o)) for o in g.outputs if isinstance(o, Var)}
    for gi, grp in enumerate(groups):
        for n in grp:
            for a in n.in_vars:
                buf = alias.get(id(a), a)
                if id(buf) in groups_of and gi not in groups_of[id(buf)]:
                    needed.add(id(buf))
    kernels = []
    counters: dict[str, int] = {}
    written: set[int] = set()
    for grp in groups:
        # a value computed in several kernels (a duplicated cheap op) is written by the first only
        outs = [n.out for n in grp if id(n.out) in needed and id(n.out) not in written]
        written.update(id(o) for o in outs)
        if not outs:
            if any(id(n.out) in needed for n in grp):
                continue  # all it would write is in memory already (a duplicated cheap op): no kernel
            outs = [grp[-1].out]
        base = grp[-1].op if len(grp) == 1 or eager else "fusion"
        i = counters.get(base, 0)
        counters[base] = i + 1
        kernels.append(make_kernel(f"{base}.{i}", grp, outs, alias, names))
    return tuple(kernels), tuple(constants), alias
