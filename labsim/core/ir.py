"""The tensor IR: abstract values, SSA variables, nodes and immutable graphs.

Introduced in "The journey of one matrix product" and studied in "From Python to a graph".
A :class:`Graph` is a static single-assignment (SSA) DAG in topological order, the same shape as a JAX
``jaxpr`` or an XLA HLO computation: inputs, a list of nodes each defining one new variable, and outputs.
Everything is frozen; passes build new graphs instead of editing old ones.
"""
from __future__ import annotations

from ..support.errors import LabsimError

import dataclasses
import functools
import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from . import ops
from .avals import ShapeDtype, ShapeError, TraceError


_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class Var:
    """An SSA variable: defined once (by a graph input or a node), used any number of times.

    Identity is by object (two Vars with the same aval are different variables). ``id`` is a process-
    unique counter used only for stable printing and sorting.
    """

    aval: ShapeDtype
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"Var({self.id}, {self.aval})"


@dataclass(frozen=True)
class Literal:
    """A scalar constant used directly as an operand (like a jaxpr literal). It broadcasts."""

    value: float | int | bool
    aval: ShapeDtype

    def __str__(self) -> str:
        v = self.value
        if isinstance(v, bool) or self.aval.dtype == "bool":
            return "true" if v else "false"
        return repr(float(v)) if self.aval.dtype.startswith(("float", "bfloat")) else str(int(v))


Atom = Var | Literal


class ArrayValue:
    """A hashable, read-only wrapper for an array attribute (the value of a ``constant`` node)."""

    __slots__ = ("array", "_key")

    def __init__(self, array) -> None:
        a = np.array(array)
        a.setflags(write=False)
        self.array = a
        self._key = (a.shape, a.dtype.str, a.tobytes())

    def __eq__(self, other) -> bool:
        return isinstance(other, ArrayValue) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        a = self.array
        if a.size <= 6:
            return np.array2string(a, separator=",").replace("\n", "")
        return f"<{a.dtype}{list(a.shape)} array>"


def freeze_attrs(attrs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Attributes as a sorted tuple of (name, value): hashable, so CSE can compare nodes."""
    out = []
    for k, v in sorted(attrs.items()):
        if isinstance(v, list):
            v = tuple(v)
        elif isinstance(v, np.ndarray):
            v = ArrayValue(v)
        out.append((k, v))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Node:
    """One operation: ``out = op(*operands, **attrs)``."""

    op: str
    operands: tuple[Atom, ...]
    attrs: tuple[tuple[str, Any], ...]
    out: Var

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.attrs)

    def attr(self, name: str, default=None):
        for k, v in self.attrs:
            if k == name:
                return v
        return default

    @functools.cached_property
    def in_vars(self) -> tuple[Var, ...]:
        return tuple(a for a in self.operands if isinstance(a, Var))


def _check_node(i: int, n: "Node") -> None:
    """What never changes about a node: its op is registered, its literals are scalars, and its shape
    rule gives exactly its result. Remembered on the node (which is immutable)."""
    try:
        opdef = ops.get(n.op)
    except ops.UnknownOpError as e:
        raise VerifyError(f"node {i}: {e.args[0]}") from None
    for a in n.operands:
        if type(a) is not Var and a.aval.shape != ():
            raise VerifyError(f"node {i} ({n.op}): literal {a} is not a scalar")
    try:
        expect = opdef.infer(tuple(a.aval for a in n.operands), n.params)
    except (ShapeError, TypeError, ValueError) as e:
        raise VerifyError(f"node {i} ({n.op}): {e}") from None
    if expect != n.out.aval:
        raise VerifyError(f"node {i} ({n.op}): result is {n.out.aval}, shape rule says {expect}")
    n.__dict__["_verified"] = True


class VerifyError(LabsimError, AssertionError):
    """A graph breaks one of the invariants listed in :meth:`Graph.verify`."""


@dataclass(frozen=True, eq=False)
class Graph:
    """An immutable SSA DAG in topological order (inputs, nodes, outputs)."""

    inputs: tuple[Var, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Atom, ...]
    name: str = "main"
    input_names: tuple[str, ...] = ()
    # A schedule that a compiler pass attached (the fusion plan, ``labsim.compiler.fusion.FusionPlan``).
    # Core never reads it; a pass that rebuilds the graph drops it, and the pipeline refuses to lower a
    # graph whose plan was lost (see ``labsim.compiler.pipeline``).
    plan: Any = None
    # The pytree structures (``labsim.core.pytree.TreeDef``) of the traced function's arguments (as one
    # tuple) and of its result; None for a graph not made by ``trace``. Inputs/outputs are their leaves.
    in_tree: Any = None
    out_tree: Any = None

    def replace(self, **changes) -> "Graph":
        """A copy with some fields changed (graphs are immutable)."""
        return dataclasses.replace(self, **changes)

    # -- queries -------------------------------------------------------------------------------
    def producers(self) -> dict[Var, Node]:
        return {n.out: n for n in self.nodes}

    def users(self) -> dict[Var, list[Node]]:
        use: dict[Var, list[Node]] = {v: [] for v in self.inputs}
        for n in self.nodes:
            use.setdefault(n.out, [])
            for a in n.in_vars:
                use.setdefault(a, []).append(n)
        return use

    @property
    def in_avals(self) -> tuple[ShapeDtype, ...]:
        return tuple(v.aval for v in self.inputs)

    @property
    def out_avals(self) -> tuple[ShapeDtype, ...]:
        return tuple(a.aval for a in self.outputs)

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for n in self.nodes:
            counts[n.op] = counts.get(n.op, 0) + 1
        return counts

    def __len__(self) -> int:
        return len(self.nodes)

    # -- invariants ----------------------------------------------------------------------------
    def verify(self) -> "Graph":
        """Check the invariants every graph must keep; return ``self`` or raise :class:`VerifyError`.

        1. Inputs are distinct variables.
        2. SSA: every variable is defined exactly once (as an input or as one node's result).
        3. Topological order: every operand is defined before the node that uses it.
        4. Every op is registered, has the right number of operands, and its attributes pass its
           shape rule, which gives exactly the node's result ``ShapeDtype``.
        5. Literals are scalars.
        6. Every output is defined (an input, a node result, or a literal).

        A fusion plan attached by the compiler is checked by the compiler (``FusionPlan.verify``).
        """
        defined: set[int] = set()
        for v in self.inputs:
            if id(v) in defined:
                raise VerifyError(f"input {v} appears twice")
            defined.add(id(v))
        add = defined.add
        for i, n in enumerate(self.nodes):
            for a in n.in_vars:
                if id(a) not in defined:
                    raise VerifyError(f"node {i} ({n.op}) uses {a} before it is defined")
            if "_verified" not in n.__dict__:  # nodes are immutable: op, literals and shape rule are checked once
                _check_node(i, n)
            o = id(n.out)
            if o in defined:
                raise VerifyError(f"node {i} ({n.op}) redefines {n.out}")
            add(o)
        for o in self.outputs:
            if isinstance(o, Var) and id(o) not in defined:
                raise VerifyError(f"output {o} is never defined")
        return self

    # -- printing ------------------------------------------------------------------------------
    def names(self) -> dict[int, str]:
        """Printable names: inputs keep their Python parameter names, results are %0, %1, ..."""
        names: dict[int, str] = {}
        for i, v in enumerate(self.inputs):
            names[id(v)] = self.input_names[i] if i < len(self.input_names) else f"p{i}"
        for i, n in enumerate(self.nodes):
            names[id(n.out)] = f"%{i}"
        return names

    def to_text(self) -> str:
        """HLO-like text: one line per instruction, ``ROOT`` on the result."""
        nm = self.names()

        def atom(a: Atom) -> str:
            return nm[id(a)] if isinstance(a, Var) else f"{a.aval.short()} constant({a})"

        sig = ", ".join(v.aval.short() for v in self.inputs)
        res = ", ".join(a.aval.short() for a in self.outputs)
        if len(self.outputs) != 1:
            res = f"({res})"
        lines = [f"HloModule {self.name}, entry_computation_layout={{({sig})->{res}}}", "",
                 f"ENTRY {self.name} {{"]
        for i, v in enumerate(self.inputs):
            lines.append(f"  {nm[id(v)]} = {v.aval.short()} parameter({i})")
        roots = {id(o) for o in self.outputs if isinstance(o, Var)}
        single_root = len(self.outputs) == 1
        for n in self.nodes:
            opdef = ops.get(n.op)
            args = ", ".join(atom(a) for a in n.operands)
            extra = opdef.format_attrs(n.params)
            root = "ROOT " if single_root and id(n.out) in roots else ""
            lines.append(f"  {root}{nm[id(n.out)]} = {n.out.aval.short()} {opdef.hlo}({args}){extra}")
        if not single_root:
            lines.append(f"  ROOT tuple = {res} tuple({', '.join(atom(a) for a in self.outputs)})")
        elif self.outputs and not isinstance(self.outputs[0], Var) or (
            self.outputs and id(self.outputs[0]) in {id(v) for v in self.inputs}
        ):
            lines.append(f"  ROOT copy = {res} copy({atom(self.outputs[0])})")
        lines.append("}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_pretty_(self, p, cycle) -> None:  # IPython shows the HLO text, not a dataclass dump
        p.text(self.to_text())

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.inputs)} inputs, {len(self.nodes)} nodes, {len(self.outputs)} outputs>"
