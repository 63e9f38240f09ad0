"""Tracing: run a Python function on abstract values and record a :class:`~labsim.ir.Graph`.

Introduced in "The journey of one matrix product", step 1. A :class:`Tracer` stands in for an array:
it knows only its :class:`ShapeDtype`. Every operation on it appends a node to the current graph
instead of computing anything, exactly as ``jax.jit`` builds a jaxpr. The same ``bind`` call, given
concrete NumPy arrays, computes eagerly with the op's reference implementation, so ``labsim.numpy``
also works like NumPy outside a trace.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import inspect
import math
import re
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from . import ops
from .dtypes import DtypeError, canonical_dtype, is_float, numpy_dtype
from .avals import ShapeDtype, ShapeError, TraceError
from .ir import ArrayValue, Atom, Graph, Literal, Node, Var, freeze_attrs
from .pytree import TreeDef, leaf_names, tree_flatten, tree_unflatten


class TraceContext:
    """Collects nodes while a function is traced."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []

    def emit(self, op: str, operands: tuple[Atom, ...], params: dict) -> Var:
        opdef = ops.get(op)
        out_aval = opdef.infer(tuple(a.aval for a in operands), params)
        out = Var(out_aval)
        node = Node(opdef.name.value, operands, freeze_attrs(params), out)
        node.__dict__["_verified"] = True  # built by its shape rule: verify() need not run it again
        self.nodes.append(node)
        return out


_ACTIVE: list[TraceContext] = []  # innermost trace last: where lnp.asarray/zeros/arange record constants


def current_trace() -> TraceContext | None:
    """The innermost trace being recorded, or None outside tracing."""
    return _ACTIVE[-1] if _ACTIVE else None


class _Recording:
    def __init__(self, ctx: TraceContext) -> None:
        self.ctx = ctx

    def __enter__(self):
        _ACTIVE.append(self.ctx)
        return self.ctx

    def __exit__(self, *exc):
        _ACTIVE.pop()
        return False


def recording(ctx: TraceContext) -> _Recording:
    """Context manager: array-creation calls (``lnp.asarray``, ``zeros``, ``arange``...) record into ``ctx``."""
    return _Recording(ctx)


class Tracer:
    """An abstract array inside a trace. Supports NumPy-style operators; see ``labsim.numpy``."""

    __slots__ = ("ctx", "var")
    __array_priority__ = 1000  # ndarray (op) Tracer defers to the Tracer's reflected operator

    def __init__(self, ctx: TraceContext, var: Var) -> None:
        self.ctx = ctx
        self.var = var

    # abstract-value properties (known without data, like jax.Array under jit)
    aval = property(lambda self: self.var.aval)
    shape = property(lambda self: self.var.aval.shape)
    dtype = property(lambda self: self.var.aval.dtype)
    ndim = property(lambda self: self.var.aval.ndim)
    size = property(lambda self: self.var.aval.size)

    def __repr__(self) -> str:
        return f"Tracer<{self.aval.short()}>"

    # Python control flow needs a concrete value: refuse clearly.
    def _concrete(self, what: str):
        raise TraceError(
            f"a traced value {self.aval.short()} was used where Python needs a concrete value ({what}). "
            "Tracing sees shapes and dtypes, not values: use lnp.where(...) instead of if/else on data, "
            "or pass the value as a static Python argument (functools.partial)."
        )

    def __bool__(self):
        self._concrete("bool(), if or while")

    def __float__(self):
        self._concrete("float()")

    def __int__(self):
        self._concrete("int()")

    def __index__(self):
        self._concrete("an index")

    def __array__(self, *a, **k):
        self._concrete("conversion to a NumPy array")

    def __array_function__(self, func, types, args, kwargs):
        # np.sum(tracer) etc.: without this NumPy calls tracer.sum(out=...) and fails obscurely
        name = getattr(func, "__name__", str(func))
        raise TraceError(
            f"numpy.{name} was called on a traced value {self.aval.short()}; NumPy needs concrete data. "
            f"Use labsim.numpy (lnp.{name}) inside a traced function."
        )

    def __len__(self) -> int:
        if not self.shape:
            raise ArgumentTypeError("len() of a 0-d traced value")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    __hash__ = object.__hash__  # by identity (``__eq__`` records a comparison, as in JAX)

    # operators (``+``, ``@``, ``[]``, ...) are installed by the front end, ``labsim.frontend.numpy``


def _check_fits(value, dt: str, op: str) -> None:
    """A Python int must fit the dtype it takes (as in JAX): ``x + 2**70`` on int32 is refused, not wrapped.
    (A Python float too large for the dtype becomes inf, as in NumPy and JAX.)"""
    if 0 <= value <= 127:  # fits every integer and float dtype: the common case, decided at once
        return
    kind = "int"
    shown = f"2**{int(value).bit_length() - 1}" if abs(int(value)) > 2**64 else repr(value)
    if is_float(dt):
        try:
            f = float(value)
        except OverflowError:
            f = math.inf
        try:
            top = float(np.finfo(numpy_dtype(dt)).max)
        except (TypeError, ValueError):  # pragma: no cover - a float type NumPy's finfo does not know
            top = math.inf
        if math.isfinite(f) and abs(f) <= top:
            return
        lo, hi = f"{-top:.4g}", f"{top:.4g}"
    else:
        info = np.iinfo(numpy_dtype(dt))
        if info.min <= int(value) <= info.max:
            return
        lo, hi = str(info.min), str(info.max)
    raise DtypeError(f"{op}: the Python {kind} {shown} does not fit in {dt} (range {lo} to {hi}); "
                     f"use a smaller number or an array of a wider dtype")


def _literal(value, like_dtype: str | None, op: str = "literal") -> Literal:
    """A Python scalar as a weakly-typed literal: it takes the dtype of the array it meets."""
    if isinstance(value, (bool, np.bool_)):
        return Literal(bool(value), ShapeDtype((), "bool"))
    if isinstance(value, numbers.Integral):
        dt = like_dtype if like_dtype and like_dtype != "bool" else "int32"
        _check_fits(value, dt, op)
        return Literal(int(value) if not is_float(dt) else float(value), ShapeDtype((), dt))
    if isinstance(value, numbers.Real):
        dt = like_dtype if like_dtype and is_float(like_dtype) else "float32"
        return Literal(float(value), ShapeDtype((), dt))
    raise TraceError(f"cannot make a literal from {type(value).__name__} {value!r}")


def _describe(x: Any) -> str:
    if isinstance(x, Tracer):
        return x.aval.short()
    if isinstance(x, np.ndarray):
        return f"array{list(x.shape)} {x.dtype}"
    return f"{type(x).__name__} {x!r:.40}"


def is_arraylike(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, numbers.Number))


def bind(op: str, *args, **params):
    """Apply ``op``: record a node if any argument is a Tracer, else compute eagerly with NumPy."""
    opdef = ops.get(op)
    tracers = [a for a in args if isinstance(a, Tracer)]
    for a in args:
        if not is_arraylike(a):
            raise TraceError(f"{op}: cannot use {_describe(a)} as an operand; expected an array, a traced "
                             "value or a Python number")
    if tracers:
        ctx = tracers[0].ctx
        if any(t.ctx is not ctx for t in tracers):
            raise TraceError(f"{op}: operands come from different traces (a traced value leaked out of "
                             "the function that made it)")
        # a weak scalar takes the dtype of the arrays it meets, not of a boolean condition (select)
        like = next((t.dtype for t in tracers if t.dtype != "bool"), tracers[0].dtype)
        operands = []
        for a in args:
            if isinstance(a, Tracer):
                operands.append(a.var)
            elif isinstance(a, np.ndarray) and a.ndim > 0:
                operands.append(ctx.emit("constant", (), {"value": ArrayValue(a), "dtype": canonical_dtype(a.dtype)}))
            elif isinstance(a, (np.ndarray, np.generic)):  # a NumPy scalar keeps its own dtype
                operands.append(Literal(a.item(), ShapeDtype((), canonical_dtype(a.dtype))))
            else:
                operands.append(_literal(a, like, op))
        return Tracer(ctx, ctx.emit(op, tuple(operands), params))
    # eager: the same shape rule first (same errors), then the reference implementation
    arrays = []
    dts = [canonical_dtype(a.dtype) for a in args if isinstance(a, np.ndarray)]
    like = next((d for d in dts if d != "bool"), dts[0] if dts else None)
    avals = []
    for a in args:
        if isinstance(a, (np.ndarray, np.generic)):
            arr = np.asarray(a)
            avals.append(ShapeDtype(arr.shape, arr.dtype))
            arrays.append(arr)
        else:
            lit = _literal(a, like, op)
            avals.append(lit.aval)
            arrays.append(np.asarray(lit.value, dtype=numpy_dtype(lit.aval.dtype)))
    out = opdef.infer(tuple(avals), params)
    return np.asarray(opdef.impl(*arrays, **params)).astype(numpy_dtype(out.dtype), copy=False)


def _spec_of(x: Any, i: int, pname: str) -> ShapeDtype:
    if isinstance(x, ShapeDtype):
        return x
    if isinstance(x, (np.ndarray, np.generic)) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        try:
            return ShapeDtype(tuple(x.shape), x.dtype)
        except DtypeError as e:
            raise TraceError(f"trace: argument {i} ({pname}): {e}") from None
    raise TraceError(
        f"trace: argument {i} ({pname}) is {_describe(x)}; trace() takes a ShapeDtype (or an array, "
        "whose shape and dtype are used) for every argument. Bind static Python values with "
        "functools.partial first."
    )


def _param_names(f: Callable, n: int) -> tuple[str, ...]:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return tuple(f"p{i}" for i in range(n))
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        names += [f"p{i}" for i in range(len(names), n)]
    return tuple(names[:n]) if len(names) >= n else tuple(names) + tuple(f"p{i}" for i in range(len(names), n))


def _flatten_outputs(out: Any, fname: str) -> tuple[tuple[Any, ...], TreeDef]:
    if out is None:
        raise TraceError(f"trace: {fname} returned NoneType None; a traced function must return arrays "
                         "(is a `return` missing?)")
    items, tree = tree_flatten(out)
    if not items:
        raise TraceError(f"trace: {fname} returned no values")
    for i, o in enumerate(items):
        if not is_arraylike(o):
            raise TraceError(f"trace: {fname} returned {_describe(o)} (output {i}); a traced function must "
                             "return arrays (or a tuple, list or dict of them)")
    return tuple(items), tree


def trace(f: Callable, *specs: Any, name: str | None = None) -> Graph:
    """Trace ``f`` on abstract arguments and return its :class:`Graph`.

    ``specs`` are one per positional parameter of ``f``: a :class:`ShapeDtype` (or an array, whose
    shape and dtype are taken), or a pytree of them (nested tuples, lists, dicts). The graph's inputs
    are the flattened leaves, named ``params.w1``, ``xs.0``, ...; ``f`` may return an array or a pytree
    of arrays, whose leaves become the outputs. The structures are kept as ``in_tree``/``out_tree``.
    """
    fname = name or getattr(f, "__name__", "f")
    fname = re.sub(r"\W", "_", fname).strip("_") or "f"
    try:
        inspect.signature(f).bind(*specs)
    except TypeError as e:
        raise ArgumentTypeError(f"trace: {fname}() was given {len(specs)} abstract argument(s): {e}") from None
    except ValueError:
        pass  # builtins without a signature
    pnames = _param_names(f, len(specs))
    is_spec = lambda x: isinstance(x, ShapeDtype)
    leaves, in_tree = tree_flatten(tuple(specs), is_leaf=is_spec)
    names = tuple(n for td, p in zip(in_tree.children, pnames) for n in leaf_names(td, p))
    argnum = [i for i, td in enumerate(in_tree.children) for _ in range(td.num_leaves)]
    avals = [_spec_of(s, argnum[j], names[j]) for j, s in enumerate(leaves)]
    ctx = TraceContext()
    inputs = [Var(a) for a in avals]
    with recording(ctx):
        args = tree_unflatten(in_tree, [Tracer(ctx, v) for v in inputs])
        outs, out_tree = _flatten_outputs(f(*args), fname)
    out_atoms = []
    for o in outs:
        if isinstance(o, Tracer):
            if o.ctx is not ctx:
                raise TraceError(f"trace: {fname} returned a value traced elsewhere")
            out_atoms.append(o.var)
        else:  # a constant output
            arr = np.asarray(o)
            if isinstance(o, (np.ndarray, np.generic)):  # an array keeps its dtype (a float64 gradient stays so)
                dt = canonical_dtype(arr.dtype)
            else:  # a Python number is weakly typed: 32 bits, as in JAX
                dt = {"float64": "float32", "int64": "int32"}.get(arr.dtype.name, canonical_dtype(arr.dtype))
            out_atoms.append(ctx.emit("constant", (), {"value": ArrayValue(arr), "dtype": dt}))
    return Graph(tuple(inputs), tuple(ctx.nodes), tuple(out_atoms), name=fname, input_names=names,
                 in_tree=in_tree, out_tree=out_tree)


def trace_decomposition(op: str, avals: Sequence[ShapeDtype], params: dict) -> Graph:
    """The primitive graph a composite op stands for (used for its FLOPs and by the compiler)."""
    opdef = ops.get(op)
    if opdef.decompose is None:
        raise ArgumentError(f"op {op!r} has no decomposition")
    ctx = TraceContext()
    inputs = [Var(a) for a in avals]
    with recording(ctx):
        out = opdef.decompose(*[Tracer(ctx, v) for v in inputs], **dict(params))
    return Graph(tuple(inputs), tuple(ctx.nodes), (out.var,), name=op)


def inline(graph: Graph, *args):
    """Replay ``graph`` on ``args`` (Tracers, which records into their trace, or arrays, which computes).

    Returns one value per graph output (a tuple if the graph has several outputs).
    """
    env: dict[int, Any] = {id(v): a for v, a in zip(graph.inputs, args)}

    def read(a: Atom):
        return env[id(a)] if isinstance(a, Var) else a.value  # a weak Python scalar: takes the dtype of the array it meets

    drop = last_uses(graph)
    for i, n in enumerate(graph.nodes):
        env[id(n.out)] = bind(n.op, *[read(a) for a in n.operands], **n.params)
        for v in drop[i]:  # values no later node reads: let them go, so memory holds only the live set
            del env[id(v)]
    outs = tuple(read(o) for o in graph.outputs)
    return outs[0] if len(outs) == 1 else outs


def last_uses(graph: Graph) -> tuple[tuple[Var, ...], ...]:
    """For each node, the variables that nothing after it reads: its operands read for the last
    time, and its own result if no one reads it. Graph outputs are never listed. This is buffer
    liveness, as XLA's buffer assignment computes it: a value is live from its definition to its last
    use, so an interpreter that frees it there holds only the live set (an 80-step chain holds a few
    arrays, not 240). Remembered on the graph, which is immutable."""
    got = graph.__dict__.get("_last_uses")
    if got is not None:
        return got
    last: dict[int, tuple[Var, int]] = {id(v): (v, -1) for v in graph.inputs}
    for i, n in enumerate(graph.nodes):
        last[id(n.out)] = (n.out, i)
        for a in n.in_vars:
            last[id(a)] = (a, i)
    for o in graph.outputs:
        if isinstance(o, Var):
            last.pop(id(o), None)
    drop: list[list[Var]] = [[] for _ in graph.nodes]
    for v, i in last.values():
        if i >= 0:
            drop[i].append(v)
    got = tuple(tuple(d) for d in drop)
    graph.__dict__["_last_uses"] = got
    return got


def expand_composites(g: Graph) -> Graph:
    """Expand every composite op (softmax, layer_norm, gelu, mean) into primitive ops.

    Primitive nodes are kept as they are (only their operands are renamed); each composite is replaced
    by the nodes its decomposition records. A decomposition may itself use composites (layer_norm uses
    mean), so this repeats until none is left. The compiler's ``decompose`` pass and ``grad`` use it.
    """
    while any(n.op in ops.COMPOSITE for n in g.nodes):
        g = _expand_once(g)
    return g


def _expand_once(g: Graph) -> Graph:
    ctx = TraceContext()  # its node list is the new graph's
    sub: dict[int, Atom] = {}

    def atom(a: Atom) -> Atom:
        return sub.get(id(a), a) if isinstance(a, Var) else a

    templates: dict[tuple, Graph] = {}  # one traced decomposition per (op, operand avals, attributes)
    with recording(ctx):
        for n in g.nodes:
            operands = tuple(atom(a) for a in n.operands)
            if n.op in ops.COMPOSITE and all(isinstance(a, Var) for a in operands):
                key = (n.op, tuple(a.aval for a in operands), n.attrs)
                t = templates.get(key)
                if t is None:
                    t = templates[key] = trace_decomposition(n.op, key[1], n.params)
                sub[id(n.out)] = _instantiate(t, operands, ctx.nodes)
            elif n.op in ops.COMPOSITE:
                args = [Tracer(ctx, a) if isinstance(a, Var) else a.value for a in operands]
                sub[id(n.out)] = ops.get(n.op).decompose(*args, **n.params).var
            elif all(x is y for x, y in zip(operands, n.operands)):
                ctx.nodes.append(n)
            else:
                ctx.nodes.append(renamed(n, operands))
    outs = tuple(atom(o) for o in g.outputs)
    return Graph(g.inputs, tuple(ctx.nodes), outs, name=g.name, input_names=g.input_names, in_tree=g.in_tree,
                 out_tree=g.out_tree)


def renamed(n: Node, operands: tuple[Atom, ...]) -> Node:
    """``n`` reading ``operands`` instead of its own. If ``n`` was verified and each new operand is of the
    same kind (variable or literal) with the same ``ShapeDtype`` as the old one, so is the copy: the op,
    its attributes and its operands' avals are what ``Graph.verify`` checks, and none of them changed."""
    node = Node(n.op, operands, n.attrs, n.out)
    node.__dict__["in_vars"] = tuple(a for a in operands if type(a) is Var)  # Node.in_vars, filled in at once
    if "_verified" in n.__dict__:
        for a, b in zip(operands, n.operands):
            if type(a) is not type(b) or (a.aval is not b.aval and a.aval != b.aval):
                return node
        node.__dict__["_verified"] = True
    return node


def _instantiate(t: Graph, operands: tuple[Atom, ...], nodes: list[Node]) -> Atom:
    """Append a copy of template graph ``t`` (fresh result variables) reading ``operands``; return its output.

    The same nodes tracing the decomposition again would record, without running its Python again."""
    env: dict[int, Atom] = {id(v): a for v, a in zip(t.inputs, operands)}
    for m in t.nodes:
        out = Var(m.out.aval)
        operands = tuple(env.get(id(a), a) if type(a) is Var else a for a in m.operands)
        node = Node(m.op, operands, m.attrs, out)
        d = node.__dict__
        d["in_vars"] = tuple(a for a in operands if type(a) is Var)  # Node.in_vars, filled in at once
        if "_verified" in m.__dict__:  # the same op on operands of the same avals: the same result
            d["_verified"] = True
        nodes.append(node)
        env[id(m.out)] = out
    o = t.outputs[0]
    return env.get(id(o), o) if type(o) is Var else o


def _decomposed_graph(name: str, avals: tuple, params: tuple) -> Graph:
    key = (name, avals, params)
    g = _DECOMPOSED.get(key)
    if g is None:
        g = trace_decomposition(name, list(avals), dict(params))
        if len(_DECOMPOSED) > 512:
            _DECOMPOSED.clear()
        _DECOMPOSED[key] = g
    return g


_DECOMPOSED: dict = {}


def _impl_by_decomposition(name: str):
    """A composite's value: its decomposition replayed on the arrays. One semantics: ``ls.evaluate`` of a
    graph with the composite and of the expanded graph (what the compiler and every machine run) give the
    same bits, because both compute each primitive with the op table's (the ALU table's) rule."""

    def impl(*arrays, **params):
        avals = tuple(ShapeDtype(np.shape(a), np.asarray(a).dtype) for a in arrays)
        try:
            key = tuple(sorted(params.items()))
            hash(key)
        except TypeError:  # an unhashable parameter: trace afresh, no cache
            return inline(trace_decomposition(name, list(avals), params), *arrays)
        return inline(_decomposed_graph(name, avals, key), *arrays)

    return impl


def register_composite(name, shape_rule, impl, decompose, hlo: str | None = None,
                       attr_format=None, doc: str = "") -> ops.OpDef:
    """Register a composite op (its row in the op table). It counts the FLOPs of its own decomposition,
    so the numbers never disagree, and it computes its value by its decomposition, so the values never
    disagree either: ``impl`` (a NumPy formula) is kept only as the reference the tests compare with
    (``OpDef.reference``)."""

    def _count(avals, out, params, what: str) -> int:
        g = trace_decomposition(name, avals, params)
        return sum(getattr(ops.get(n.op), f"count_{what}")(tuple(a.aval for a in n.operands), n.out.aval,
                                                            n.params) for n in g.nodes)

    return ops.register(ops.OpDef(
        name=name, arity=None, shape_rule=shape_rule, impl=_impl_by_decomposition(name),
        flops=lambda a, o, p: _count(a, o, p, "flops"),
        transcendentals=lambda a, o, p: _count(a, o, p, "transcendentals"),
        hlo=hlo or f"custom-call.{ops.as_op(name).value}", attr_format=attr_format, decompose=decompose, doc=doc,
    ))


__all__ = ["Tracer", "TraceContext", "bind", "trace", "trace_decomposition", "inline", "current_trace", "recording",
           "expand_composites", "register_composite", "last_uses"]
