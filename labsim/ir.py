"""The tensor IR: abstract values, SSA variables, nodes and immutable graphs.

Introduced in "The journey of one matrix product" and studied in "From Python to a graph".
A :class:`Graph` is a static single-assignment (SSA) DAG in topological order, the same shape as a JAX
``jaxpr`` or an XLA HLO computation: inputs, a list of nodes each defining one new variable, and outputs.
Everything is frozen; passes build new graphs instead of editing old ones.
"""
from __future__ import annotations

import functools
import itertools
import math
import weakref
import operator
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from .dtypes import HLO_NAME, ITEMSIZE as _ITEMSIZE, canonical_dtype, itemsize


class ShapeError(ValueError):
    """Operands whose shapes do not fit the op. The message names the op and the shapes."""


class TraceError(TypeError):
    """A value that cannot be traced, or a traced value used where a concrete one is needed."""


@dataclass(frozen=True)
class ShapeDtype:
    """An abstract value: a shape and a dtype, no data (like ``jax.ShapeDtypeStruct``)."""

    shape: tuple[int, ...]
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if type(self.shape) is tuple and all(type(d) is int and d >= 0 for d in self.shape) \
                and type(self.dtype) is str and self.dtype in _ITEMSIZE:
            return  # already canonical (the common case inside passes): nothing to convert
        try:  # operator.index takes ints (and NumPy ints) only: 2.5 or "3" is refused, not truncated
            shape = tuple(operator.index(d) for d in self.shape)
        except TypeError:
            raise ShapeError(f"ShapeDtype shape must be a tuple of ints, got {self.shape!r}") from None
        if any(d < 0 for d in shape):
            raise ShapeError(f"ShapeDtype shape must not have negative sizes, got {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", canonical_dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return itemsize(self.dtype)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def short(self) -> str:
        """HLO spelling, e.g. ``f32[1024,1024]``."""
        return f"{HLO_NAME[self.dtype]}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        return self.short()

    @classmethod
    def like(cls, x: Any) -> "ShapeDtype":
        """The abstract value of an array, a ShapeDtype, or anything with ``.shape`` and ``.dtype``."""
        if isinstance(x, ShapeDtype):
            return x
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return cls(tuple(x.shape), x.dtype)
        raise TraceError(
            f"expected a ShapeDtype or an array, got {type(x).__name__} {x!r:.60}"
        )


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


_SHAPES_CHECKED: "weakref.WeakSet[Node]" = weakref.WeakSet()


class VerifyError(AssertionError):
    """A graph breaks one of the invariants listed in :meth:`Graph.verify`."""


@dataclass(frozen=True, eq=False)
class Graph:
    """An immutable SSA DAG in topological order (inputs, nodes, outputs)."""

    inputs: tuple[Var, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Atom, ...]
    name: str = "main"
    input_names: tuple[str, ...] = ()
    # A fusion plan (set by the fusion pass): node indices of each kernel, in launch order. None means
    # "no plan": every op that moves data is its own kernel. ``notes`` says why ops were not fused.
    groups: tuple[tuple[int, ...], ...] | None = None
    notes: tuple[str, ...] = ()

    def replace(self, **changes) -> "Graph":
        """A copy with some fields changed (graphs are immutable)."""
        import dataclasses
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
        7. A fusion plan, if present, puts every node except constants and reshapes in exactly one
           group (a reshape in at most one), and its groups are in an order where every group runs after
           the groups it reads from (so no kernel waits for a later one).
        """
        from . import ops  # late import: ops imports ir

        defined: set[int] = set()
        for v in self.inputs:
            if id(v) in defined:
                raise VerifyError(f"input {v} appears twice")
            defined.add(id(v))
        checked = _SHAPES_CHECKED
        for i, n in enumerate(self.nodes):
            for a in n.operands:
                if type(a) is Var:
                    if id(a) not in defined:
                        raise VerifyError(f"node {i} ({n.op}) uses {a} before it is defined")
                elif a.aval.shape != ():
                    raise VerifyError(f"node {i} ({n.op}): literal {a} is not a scalar")
            if n not in checked:  # nodes are immutable: op, arity and shape rule need checking once
                try:
                    opdef = ops.get(n.op)
                except ops.UnknownOpError as e:
                    raise VerifyError(f"node {i}: {e.args[0]}") from None
                try:
                    expect = opdef.infer(tuple(a.aval for a in n.operands), n.params)
                except (ShapeError, TypeError, ValueError) as e:
                    raise VerifyError(f"node {i} ({n.op}): {e}") from None
                if expect != n.out.aval:
                    raise VerifyError(f"node {i} ({n.op}): result is {n.out.aval}, shape rule says {expect}")
                _SHAPES_CHECKED.add(n)
            if id(n.out) in defined:
                raise VerifyError(f"node {i} ({n.op}) redefines {n.out}")
            defined.add(id(n.out))
        for o in self.outputs:
            if isinstance(o, Var) and id(o) not in defined:
                raise VerifyError(f"output {o} is never defined")
        if self.groups is not None:
            self._verify_groups()
        return self

    def _verify_groups(self) -> None:
        from .ops import DUPLICABLE

        owners: dict[int, set[int]] = {}
        for gi, grp in enumerate(self.groups):
            if not grp:
                raise VerifyError(f"fusion group {gi} is empty")
            for i in grp:
                if not 0 <= i < len(self.nodes):
                    raise VerifyError(f"fusion group {gi} names node {i}, which does not exist")
                if i in owners and self.nodes[i].op not in DUPLICABLE:
                    raise VerifyError(f"node {i} ({self.nodes[i].op}) is in fusion groups {sorted(owners[i])} and "
                                      f"{gi}, but only cheap ops may be computed in two kernels")
                owners.setdefault(i, set()).add(gi)
        for i, n in enumerate(self.nodes):
            if n.op not in ("constant", "reshape") and i not in owners:
                raise VerifyError(f"node {i} ({n.op}) is in no fusion group")
        index = {id(n.out): i for i, n in enumerate(self.nodes)}
        for gi, grp in enumerate(self.groups):
            for i in grp:
                for a in self.nodes[i].in_vars:
                    j = index.get(id(a))
                    while j is not None and j not in owners and self.nodes[j].op == "reshape":
                        src = self.nodes[j].operands[0]
                        j = index.get(id(src)) if isinstance(src, Var) else None
                    if j is not None and j in owners and gi not in owners[j] and min(owners[j]) > gi:
                        raise VerifyError(f"fusion group {gi} reads node {j}, computed only by later group(s) "
                                          f"{sorted(owners[j])}")

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
        from . import ops

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


def all_vars(nodes: Iterable[Node]) -> list[Var]:
    return [n.out for n in nodes]
