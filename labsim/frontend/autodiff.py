"""Reverse-mode automatic differentiation on the IR (``ls.grad``).

Introduced in "Counting FLOPs and bytes" (backprop as matrix products) and "The compiler at work".
``grad(f)`` traces ``f``, expands composite ops into primitives, replays the forward graph, then walks
the nodes backwards applying one vector-Jacobian-product (VJP) rule per op, summing cotangents where a
value has several users. Every rule is written with ``labsim.numpy``, so the backward pass is itself
traceable: called on traced values it records forward + backward into one graph (as AOT Autograd
captures the backward ahead of time); called on NumPy arrays it computes the gradient directly.

The backward of ``Y = X·W`` is two more matrix products, ``dL/dX = dL/dY·Wᵀ`` and ``dL/dW = Xᵀ·dL/dY``,
which is why training costs about three times the forward FLOPs.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import inspect
import math
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from ..core import ops
from ..core.avals import ShapeDtype, TraceError
from ..core.dtypes import canonical_dtype, is_float, numpy_dtype
from ..core.ir import Graph, Node, Var
from ..core.pytree import leaf_names, tree_flatten, tree_map, tree_unflatten
from ..core.trace import Tracer, bind, expand_composites as decompose, inline, trace
from . import numpy as lnp
from .numpy.arrays import _dtype, _shape
from .numpy.indexing import _getitem


def _sum_to_shape(c, shape: tuple[int, ...]):
    return c if _shape(c) == shape else lnp.reshape(lnp.sum(c), shape)


def _vjp_max_min(c, x, y, out, is_max: bool):
    cmp = lnp.greater if is_max else lnp.less
    # ties split the cotangent evenly, as JAX does
    wx = lnp.where(cmp(x, y), 1.0, lnp.where(lnp.equal(x, y), 0.5, 0.0))
    wy = 1.0 - wx
    return c * wx, c * wy


def _reduce_back(c, n: Node, x):
    axes = n.attr("axes")
    keep = tuple(1 if i in axes else d for i, d in enumerate(_shape(x)))
    return lnp.broadcast_to(lnp.reshape(c, keep), _shape(x))


def _dot_vjp(c, n: Node, x, y):
    L, R, out = ops.dot_subscripts(len(_shape(x)), len(_shape(y)), n.attr("contracting"), n.attr("batch"))
    p = n.attr("precision")  # the backward products keep the forward product's precision, as in JAX
    return lnp.einsum(f"{out},{R}->{L}", c, y, precision=p), lnp.einsum(f"{L},{out}->{R}", x, c, precision=p)


def _broadcast_vjp(c, n: Node, x):
    shape = n.attr("shape")
    dims = n.attr("broadcast_dimensions")
    xs = _shape(x)
    sum_axes = [d for d in range(len(shape)) if d not in dims]
    sum_axes += [d for i, d in enumerate(dims) if xs[i] == 1 and shape[d] != 1]
    if sum_axes:
        c = lnp.sum(c, axis=tuple(sorted(sum_axes)), keepdims=True)
    return lnp.reshape(c, xs)


def _slice_vjp(c, n: Node, x):
    start, limit, strides = n.attr("start_indices"), n.attr("limit_indices"), n.attr("strides")
    if any(s != 1 for s in strides):
        raise NotImplementedError("grad of a strided slice is not supported by labsim")
    xs = _shape(x)
    for d in range(len(xs)):
        cs = list(_shape(c))
        parts = []
        if start[d] > 0:
            parts.append(lnp.zeros(tuple(cs[:d] + [start[d]] + cs[d + 1:]), _dtype(c)))
        parts.append(c)
        if xs[d] - limit[d] > 0:
            parts.append(lnp.zeros(tuple(cs[:d] + [xs[d] - limit[d]] + cs[d + 1:]), _dtype(c)))
        if len(parts) > 1:
            c = lnp.concatenate(parts, axis=d)
    return c


def _update_slice_vjp(c, n: Node, u):
    start = n.attr("start_indices")
    ushape = _shape(u)
    idx = tuple(slice(s0, s0 + k) for s0, k in zip(start, ushape))
    dx = bind("update_slice", c, lnp.zeros(ushape, _dtype(c)), start_indices=tuple(start))
    return dx, _getitem(c, idx)


def _concat_vjp(c, n: Node, *xs):
    d = n.attr("dimension")
    outs, off = [], 0
    for x in xs:
        size = _shape(x)[d]
        idx = [slice(None)] * len(_shape(c))
        idx[d] = slice(off, off + size)
        outs.append(_getitem(c, tuple(idx)))
        off += size
    return tuple(outs)


def _reduce_max_vjp(c, n: Node, x, out):
    ob = _reduce_back(out, n, x)
    mask = lnp.where(lnp.equal(x, ob), 1.0, 0.0)
    count = _reduce_back(lnp.sum(mask, axis=n.attr("axes")), n, x)
    return (_reduce_back(c, n, x) * mask / count,)


def _integer_pow_vjp(c, y: int, x):
    if y == 0:
        return c * 0.0
    if y == 1:
        return c
    return c * (float(y) * (x if y == 2 else x ** (y - 1)))


# op -> rule(cotangent, node, *operand values, out=value) -> tuple of operand cotangents (None: no grad).
# Each rule is attached to its op's row in the op table below (``ops.get(op).vjp``).
_VJP_RULES: dict[str, Callable[..., tuple]] = {
    "add": lambda c, n, x, y, out: (c, c),
    "subtract": lambda c, n, x, y, out: (c, -c),
    "multiply": lambda c, n, x, y, out: (c * y, c * x),
    "divide": lambda c, n, x, y, out: (c / y, -c * out / y),
    "maximum": lambda c, n, x, y, out: _vjp_max_min(c, x, y, out, True),
    "minimum": lambda c, n, x, y, out: _vjp_max_min(c, x, y, out, False),
    "negate": lambda c, n, x, out: (-c,),
    "abs": lambda c, n, x, out: (lnp.where(lnp.greater_equal(x, 0.0), c, -c),),
    "exp": lambda c, n, x, out: (c * out,),
    "log": lambda c, n, x, out: (c / x,),
    "tanh": lambda c, n, x, out: (c * (1.0 - out * out),),
    "sqrt": lambda c, n, x, out: (c * 0.5 / out,),
    "rsqrt": lambda c, n, x, out: (c * -0.5 * out / x,),
    "logistic": lambda c, n, x, out: (c * out * (1.0 - out),),
    "floor": lambda c, n, x, out: (c * 0.0,),  # piecewise constant: zero almost everywhere, as in JAX
    "erf": lambda c, n, x, out: (c * (2.0 / math.sqrt(math.pi)) * lnp.exp(-(x * x)),),
    "integer_pow": lambda c, n, x, out: (_integer_pow_vjp(c, n.attr("y"), x),),
    "power": lambda c, n, x, y, out: (c * y * lnp.power(x, y - 1.0), c * lnp.log(x) * out),
    "compare": lambda c, n, x, y, out: (None, None),
    "select": lambda c, n, p, a, b, out: (None, lnp.where(p, c, 0.0), lnp.where(p, 0.0, c)),
    "convert": lambda c, n, x, out: (lnp.astype(c, _dtype(x)) if is_float(_dtype(x)) else None,),
    "reduce_sum": lambda c, n, x, out: (_reduce_back(c, n, x),),
    "reduce_max": lambda c, n, x, out: _reduce_max_vjp(c, n, x, out),
    "reduce_min": lambda c, n, x, out: _reduce_max_vjp(c, n, x, out),
    "dot": lambda c, n, x, y, out: _dot_vjp(c, n, x, y),
    "reshape": lambda c, n, x, out: (lnp.reshape(c, _shape(x)),),
    "transpose": lambda c, n, x, out: (lnp.transpose(c, np.argsort(n.attr("permutation")).tolist()),),
    "broadcast": lambda c, n, x, out: (_broadcast_vjp(c, n, x),),
    "slice": lambda c, n, x, out: (_slice_vjp(c, n, x),),
    "concatenate": lambda c, n, *xs_out: _concat_vjp(c, n, *xs_out[:-1]),
    "update_slice": lambda c, n, x, u, out: _update_slice_vjp(c, n, u),
    "constant": lambda c, n, out: (),  # a constant (e.g. a closed-over array) has no inputs to reach
    "iota": lambda c, n, out: (),
}


for _op, _rule in _VJP_RULES.items():
    ops.define(_op, vjp=_rule)
del _op, _rule


def _read(env, a):
    if isinstance(a, Var):
        return env[id(a)]
    return a.value  # a weak Python scalar: takes the dtype of the array it meets


def vjp_graph(g: Graph, args: Sequence[Any], out_cotangent: Any) -> tuple[Any, list]:
    """Replay ``g`` (primitives only) on its flat ``args``; return (output value, cotangent per input).

    With several outputs, ``out_cotangent`` is a sequence (one per output) and the value a tuple.
    """
    env: dict[int, Any] = {id(v): a for v, a in zip(g.inputs, args)}
    for n in g.nodes:
        env[id(n.out)] = bind(n.op, *[_read(env, a) for a in n.operands], **n.params)
    several = len(g.outputs) != 1
    cts = tuple(out_cotangent) if several else (out_cotangent,)
    ct: dict[int, Any] = {}
    for o, c in zip(g.outputs, cts):
        if isinstance(o, Var):
            ct[id(o)] = ct[id(o)] + c if id(o) in ct else c
    for n in reversed(g.nodes):
        c = ct.pop(id(n.out), None)
        if c is None:
            continue
        rule = ops.get(n.op).vjp
        if rule is None:
            raise NotImplementedError(f"grad: no VJP rule for op {n.op!r}")
        vals = [_read(env, a) for a in n.operands]
        cts_in = rule(c, n, *vals, env[id(n.out)])
        for a, ca in zip(n.operands, cts_in):
            if isinstance(a, Var) and ca is not None:
                ca = _sum_to_shape(ca, a.aval.shape) if _shape(ca) != a.aval.shape else ca
                ct[id(a)] = ct[id(a)] + ca if id(a) in ct else ca
    grads = []
    for v in g.inputs:
        gv = ct.get(id(v))
        if gv is None:
            gv = lnp.zeros_like(_read(env, v)) if isinstance(_read(env, v), Tracer) else np.zeros(v.aval.shape, numpy_dtype(v.aval.dtype))
        grads.append(gv)
    outs = tuple(_read(env, o) for o in g.outputs)
    return (outs if several else outs[0]), grads


def _as_array(x):
    """A Python float or int leaf as a float32 array (what JAX's weak scalars become); others as they are."""
    return np.asarray(x, dtype=np.float32) if isinstance(x, (int, float)) and not isinstance(x, bool) else x


def _specs(args: Sequence[Any], f: Callable, what: str) -> list:
    """Per argument, the same pytree with a ShapeDtype for every leaf; a clear error for a non-array leaf."""
    fname = getattr(f, "__name__", "f")
    try:
        pnames = [p.name for p in inspect.signature(f).parameters.values()]
    except (TypeError, ValueError):
        pnames = []
    out = []
    for i, a in enumerate(args):
        leaves, td = tree_flatten(a)
        names = leaf_names(td, pnames[i] if i < len(pnames) else f"p{i}")
        specs = []
        for leaf, nm in zip(leaves, names):
            if not hasattr(leaf, "shape") or not hasattr(leaf, "dtype"):
                raise TraceError(f"{what}({fname}): argument {i} ({nm}) is {type(leaf).__name__}, not an array "
                                 "(arguments are arrays or nested tuples, lists and dicts of arrays)")
            specs.append(ShapeDtype(tuple(leaf.shape), leaf.dtype))
        out.append(tree_unflatten(td, specs))
    return out


def _argnums_type(argnums, fname: str) -> None:
    """``argnums`` is an int or a non-empty tuple/list of ints (checked when ``grad`` is called, as JAX does)."""
    ok = lambda k: isinstance(k, numbers.Integral) and not isinstance(k, bool)
    if ok(argnums):
        return
    if isinstance(argnums, (tuple, list, range)) and len(argnums) and all(ok(k) for k in argnums):
        return
    raise ArgumentTypeError(f"grad({fname}): argnums must be an int or a non-empty tuple of ints, "
                    f"got {type(argnums).__name__} {argnums!r}")


def _check_argnums(argnums, n: int, fname: str) -> tuple[int, ...]:
    nums = (int(argnums),) if isinstance(argnums, numbers.Integral) else tuple(int(k) for k in argnums)
    for k in nums:
        if not -n <= k < n:
            raise ArgumentError(f"grad({fname}): argnums {argnums!r} is out of range for the {n} argument(s) given "
                             f"(valid: {-n} to {n - 1})")
    return tuple(k % n for k in nums)


def _check_real_inputs(args: Sequence[Any], nums: Sequence[int], f: Callable, fname: str) -> None:
    """As JAX: differentiating with respect to an integer or boolean array is a TypeError, not zeros."""
    try:
        pnames = [p.name for p in inspect.signature(f).parameters.values()]
    except (TypeError, ValueError):
        pnames = []
    for i in nums:
        leaves, td = tree_flatten(args[i])
        names = leaf_names(td, pnames[i] if i < len(pnames) else f"p{i}")
        for leaf, nm in zip(leaves, names):
            dt = getattr(leaf, "dtype", None)
            if dt is None:
                continue  # not an array: _specs names it
            try:
                name = canonical_dtype(dt)
            except Exception:  # an unknown dtype: _specs / trace name it
                continue
            if not is_float(name):
                raise ArgumentTypeError(f"grad({fname}) requires real-valued inputs (a float dtype), but argument {i} "
                                f"({nm}) is {name}, not a float. Convert it with lnp.astype(x, 'float32'), "
                                f"or leave it out of argnums.")


def _split(flat: Sequence[Any], args: Sequence[Any]) -> list:
    """Cut the flat per-leaf list into one pytree per argument, each shaped like that argument."""
    out, at = [], 0
    for a in args:
        td = tree_flatten(a)[1]
        out.append(tree_unflatten(td, flat[at:at + td.num_leaves]))
        at += td.num_leaves
    return out


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """Like ``jax.value_and_grad``: returns ``(f(*args), df/d args[argnums])``; ``f`` must return a scalar.

    An argument may be a pytree (nested tuples, lists, dicts of arrays); its gradient has its structure.
    """
    fname = getattr(f, "__name__", "f")
    if not callable(f):
        raise ArgumentTypeError(f"grad: expected a function to differentiate, got {type(f).__name__} {f!r:.40}")
    _argnums_type(argnums, fname)

    def vg(*args):
        nums = _check_argnums(argnums, len(args), fname)
        args = [tree_map(_as_array, a) for a in args]
        _check_real_inputs(args, nums, f, fname)
        g = decompose(trace(f, *_specs(args, f, "grad")))
        if len(g.outputs) != 1 or g.outputs[0].aval.shape != ():
            raise ArgumentTypeError(f"grad({fname}) needs a function with one scalar output; it returned "
                            f"{', '.join(a.short() for a in g.out_avals)}")
        if not is_float(g.outputs[0].aval.dtype):
            raise ArgumentTypeError(f"grad({fname}): the output dtype {g.outputs[0].aval.dtype} is not a float")
        # the seed cotangent: inside a trace a graph constant (so broadcasts of it stay small), else NumPy
        one = lnp.asarray(np.asarray(1.0, dtype=numpy_dtype(g.outputs[0].aval.dtype)), g.outputs[0].aval.dtype)
        value, flat = vjp_graph(g, tree_flatten(tuple(args))[0], one)
        grads = _split(flat, args)
        if isinstance(argnums, numbers.Integral):
            return value, grads[nums[0]]
        return value, tuple(grads[i] for i in nums)

    vg.__name__ = f"value_and_grad_{fname}"
    _keep_signature(vg, f)
    return vg


def grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """A traceable function computing the gradient of scalar-valued ``f`` w.r.t. ``args[argnums]``.

    Gradients have the structure of their arguments (a dict of parameters gives a dict of gradients).
    """
    vg = value_and_grad(f, argnums)

    def gf(*args):
        return vg(*args)[1]

    gf.__name__ = f"grad_{getattr(f, '__name__', 'f')}"
    _keep_signature(gf, f)
    return gf


def _keep_signature(wrapper, f) -> None:
    """Give the gradient function ``f``'s parameters, so traced graphs name their inputs as ``f`` does."""
    try:
        wrapper.__signature__ = inspect.signature(f)
    except (TypeError, ValueError):
        pass


def vjp(f: Callable, *args) -> tuple[Any, Callable]:
    """``(f(*args), pullback)``; ``pullback(ct)`` returns one cotangent per argument, shaped like it.

    ``f`` may return a pytree of arrays; ``ct`` then has the same structure.
    """
    fname = getattr(f, "__name__", "f")
    args = [tree_map(_as_array, a) for a in args]
    g = decompose(trace(f, *_specs(args, f, "vjp")))
    flat_args = tree_flatten(tuple(args))[0]
    outs = inline(g, *flat_args)
    primal = tree_unflatten(g.out_tree, outs if len(g.outputs) != 1 else (outs,))

    def pullback(ct):
        cts, tree = tree_flatten(ct)
        for i, c in enumerate(cts):
            if not isinstance(c, (Tracer, np.ndarray, np.generic, numbers.Number)) or isinstance(c, bool):
                raise TraceError(f"vjp({fname}): cotangent {i} is {type(c).__name__} {c!r:.40}, not an array")
        if tree != g.out_tree:
            raise ArgumentError(f"vjp({fname}): the cotangent has structure {tree}, but {fname} returned {g.out_tree}")
        for i, (c, a) in enumerate(zip(cts, g.out_avals)):
            if tuple(_shape(c)) != a.shape:
                raise ArgumentError(f"vjp({fname}): cotangent {i} has shape {tuple(_shape(c))}, the output is {a.short()}")
        flat = vjp_graph(g, flat_args, cts if len(cts) != 1 else cts[0])[1]
        return tuple(_split(flat, args))

    return primal, pullback


__all__ = ["grad", "value_and_grad", "vjp", "vjp_graph"]
