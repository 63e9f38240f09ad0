"""Lowering: a graph becomes a :class:`Program` of :class:`Kernel` s.

Introduced in "The journey of one matrix product" (step 4, code generation). A kernel is what one GPU
launch runs: it reads its inputs from device memory once, computes in registers/on-chip memory, and
writes its outputs once. Its FLOPs and bytes come from the op registry, never from op names.

Ops that move no data need no kernel: ``constant`` (uploaded with the program) and ``reshape`` of a
row-major array (a *bitcast*: the same bytes seen with another shape, as XLA treats it).
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from . import ops
from .ir import Graph, Node, Var
from .ops import OpKind


class KernelKind(enum.Enum):
    LOOP = "loop"  # elementwise: one thread per output element
    REDUCTION = "reduction"
    CONTRACTION = "contraction"  # dot: a tiled matrix product on tensor cores / MXU
    COPY = "copy"  # transpose, broadcast, slice, concatenate


FREE_OPS = frozenset({"constant", "reshape"})


@dataclass(frozen=True)
class Launch:
    """The launch shape a GPU would use: grid of blocks, threads per block, shared memory per block."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int = 0

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def __str__(self) -> str:
        g = "×".join(map(str, self.grid))
        b = "×".join(map(str, self.block))
        return f"grid {g} × block {b}" + (f", {self.shared_bytes} B shared" if self.shared_bytes else "")


@dataclass(frozen=True, eq=False)
class Kernel:
    """One launch: the nodes it runs, what it reads and writes in device memory, and its cost facts."""

    name: str
    kind: KernelKind
    nodes: tuple[Node, ...]
    inputs: tuple[Var, ...]
    outputs: tuple[Var, ...]
    flops: int
    transcendentals: int
    bytes_read: int
    bytes_written: int
    launch: Launch
    dtype: str
    tile: tuple[int, int, int] | None = None  # (tm, tn, tk) for contractions
    _names: dict = field(default_factory=dict, repr=False)

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: FLOPs per byte of device-memory traffic."""
        return self.flops / self.bytes if self.bytes else math.inf

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(n.op for n in self.nodes)

    @property
    def listing(self) -> str:
        from .codegen import listing
        return listing(self)

    def __repr__(self) -> str:
        return (f"<Kernel {self.name}: {self.kind.value}, {self.flops} FLOPs, "
                f"{self.bytes_read} B read, {self.bytes_written} B written>")


def _kind_of(nodes: Sequence[Node]) -> KernelKind:
    kinds = {ops.get(n.op).kind for n in nodes}
    if OpKind.COMPOSITE in kinds:  # a library kernel: its kind is that of its decomposition
        from .rewrite import decompose
        from .trace import trace_decomposition
        kinds = {ops.get(m.op).kind for n in nodes if ops.get(n.op).kind is OpKind.COMPOSITE
                 for m in decompose(trace_decomposition(n.op, tuple(a.aval for a in n.operands), n.params)).nodes}
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


def _launch(kind: KernelKind, root: Node, nodes: Sequence[Node]) -> tuple[Launch, tuple | None]:
    out = root.out.aval
    if kind is KernelKind.CONTRACTION:
        dot = next(n for n in nodes if ops.get(n.op).kind is OpKind.CONTRACTION)
        b, m, n_, k = ops.dot_mnk(dot.operands[0].aval, dot.operands[1].aval, dot.params)
        tm, tn, tk = _tile_for(m, n_, k)
        isz = dot.operands[0].aval.itemsize
        shared = (tm * tk + tk * tn) * isz * 2  # double-buffered A and B tiles
        return Launch((math.ceil(n_ / tn), math.ceil(m / tm), b), (256, 1, 1), shared), (tm, tn, tk)
    red = next((n for n in nodes if ops.get(n.op).kind is OpKind.REDUCTION), None)
    if kind is KernelKind.REDUCTION and red is not None:
        n_out = max(red.out.aval.size, 1)
        per_row = max(red.operands[0].aval.size // n_out, 1)
        threads = min(1024, max(32, 1 << (per_row - 1).bit_length()))
        return Launch((n_out, 1, 1), (threads, 1, 1), 32 * 4), None
    threads = 256
    return Launch((max(1, math.ceil(out.size / threads)), 1, 1), (threads, 1, 1)), None


def make_kernel(name: str, nodes: Sequence[Node], outputs: Sequence[Var], alias: dict[int, Var],
                names: dict[int, str] | None = None) -> Kernel:
    """Build a kernel from a group of nodes; ``outputs`` are the results other kernels (or the host) need."""
    inside = {id(n.out) for n in nodes}
    inputs: list[Var] = []
    seen: set[int] = set()
    for n in nodes:
        for a in n.in_vars:
            if id(a) in inside:
                continue
            buf = alias.get(id(a), a)
            if id(buf) not in seen:
                seen.add(id(buf))
                inputs.append(buf)
    flops = sum(ops.get(n.op).count_flops(tuple(a.aval for a in n.operands), n.out.aval, n.params) for n in nodes)
    trans = sum(ops.get(n.op).count_transcendentals(tuple(a.aval for a in n.operands), n.out.aval, n.params)
                for n in nodes)
    kind = _kind_of(nodes)
    root = next((n for n in nodes if n.out is outputs[0]), nodes[-1]) if outputs else nodes[-1]
    launch, tile = _launch(kind, root, nodes)
    if kind is KernelKind.CONTRACTION:
        dot = next(n for n in nodes if ops.get(n.op).kind is OpKind.CONTRACTION)
        dtype = dot.operands[0].aval.dtype
    else:
        dtype = root.out.aval.dtype
    return Kernel(
        name=name, kind=kind, nodes=tuple(nodes), inputs=tuple(inputs), outputs=tuple(outputs),
        flops=flops, transcendentals=trans,
        bytes_read=sum(v.aval.nbytes for v in inputs), bytes_written=sum(v.aval.nbytes for v in outputs),
        launch=launch, dtype=dtype, tile=tile,
        _names={("p", id(v)): _ident((names or {}).get(id(v), f"buf{v.id}")) for v in (*inputs, *outputs)},
    )


def _ident(name: str) -> str:
    return name.replace("%", "t") if name.startswith("%") else name


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled program: the optimised graph, its kernels in launch order, and every pass's graph."""

    graph: Graph
    kernels: tuple[Kernel, ...]
    stages: tuple[tuple[str, Graph], ...]
    constants: tuple[Var, ...] = ()
    alias: dict = field(default_factory=dict, repr=False)

    @property
    def source(self) -> Graph:
        return self.stages[0][1]

    @property
    def flops(self) -> int:
        return sum(k.flops for k in self.kernels)

    @property
    def transcendentals(self) -> int:
        return sum(k.transcendentals for k in self.kernels)

    @property
    def bytes_read(self) -> int:
        return sum(k.bytes_read for k in self.kernels)

    @property
    def bytes_written(self) -> int:
        return sum(k.bytes_written for k in self.kernels)

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def buffers(self):
        """The buffer assignment (lifetimes, offsets, peak memory): :func:`labsim.buffers.assign_buffers`."""
        from .buffers import assign_buffers
        return assign_buffers(self)

    def buffer(self, v: Var) -> Var:
        """The device buffer that holds ``v`` (a reshape's result shares its operand's buffer)."""
        return self.alias.get(id(v), v)

    def table(self) -> list[dict]:
        """One row per kernel: name, kind, ops, FLOPs, bytes read and written, launch shape."""
        return [{"kernel": k.name, "kind": k.kind.value, "ops": " → ".join(k.ops), "FLOPs": k.flops,
                 "transcendentals": k.transcendentals, "bytes read": k.bytes_read,
                 "bytes written": k.bytes_written, "launch": str(k.launch)} for k in self.kernels]

    def _repr_html_(self) -> str:
        from .tables import html_table
        return html_table(self.table(), caption=f"{len(self.kernels)} kernel(s) for {self.graph.name}")

    def __repr__(self) -> str:
        return f"<Program {self.graph.name}: {len(self.kernels)} kernels, {self.flops} FLOPs, {self.bytes} bytes>"


def lower(g: Graph, groups: Sequence[Sequence[Node]] | None = None) -> tuple[tuple[Kernel, ...], tuple[Var, ...], dict]:
    """Cut ``g`` into kernels. ``groups`` (from fusion) lists nodes that share a kernel; by default every
    op that moves data is its own kernel, which is also what eager, operator-by-operator execution runs.
    """
    alias: dict[int, Var] = {}
    constants: list[Var] = []
    names = g.names()
    for n in g.nodes:
        if n.op == "reshape" and n.in_vars:
            src = n.operands[0]
            alias[id(n.out)] = alias.get(id(src), src)
        elif n.op == "constant":
            constants.append(n.out)
    if groups is None and g.groups is not None:
        groups = [[g.nodes[i] for i in sorted(grp)] for grp in g.groups]
        grouped_outs = {id(n.out) for grp in groups for n in grp}
        alias = {k: v for k, v in alias.items() if k not in grouped_outs}
    if groups is None:
        groups = [[n] for n in g.nodes if n.op not in FREE_OPS]
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
            outs = [grp[-1].out]
        base = grp[-1].op if len(grp) == 1 else "fusion"
        i = counters.get(base, 0)
        counters[base] = i + 1
        kernels.append(make_kernel(f"{base}.{i}", grp, outs, alias, names))
    return tuple(kernels), tuple(constants), alias


Pass = Callable[[Graph], Graph]


def compile(g: Graph, passes: Sequence[Pass] | None = None, *, verify: bool | str = True) -> Program:  # noqa: A001
    """Run ``passes`` (each a pure ``Graph -> Graph`` function) in order, then lower to kernels.

    ``passes=None`` runs the default pipeline (:data:`labsim.passes.PIPELINE`); ``passes=[]`` runs none,
    so every op is its own kernel: the eager, operator-by-operator program.
    ``prog.stages`` holds ("traced", g) followed by (pass name, graph after it) for each pass.
    ``verify=True`` checks the graph it is given; ``verify="each"`` also checks the graph after every
    pass (the tests do this on random programs for every pass); ``False`` skips the checks.
    """
    if passes is None:
        from .passes import PIPELINE
        passes = PIPELINE
    if verify:
        g.verify()
    stages = [("traced", g)]
    cur = g
    for p in passes or ():
        cur = p(cur)
        if verify == "each":
            cur.verify()
        stages.append((getattr(p, "__name__", str(p)), cur))

    kernels, constants, alias = lower(cur)
    return Program(graph=cur, kernels=kernels, stages=tuple(stages), constants=constants, alias=alias)
