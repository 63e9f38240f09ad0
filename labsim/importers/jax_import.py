"""``ls.from_jax(f, *example_args)``: a JAX function as a labsim Graph.

JAX traces ``f`` to a jaxpr (``jax.make_jaxpr``). labsim then *interprets* that jaxpr inside
:func:`labsim.trace`: each equation is one row of :data:`RULES`, keyed by the primitive's name, that
calls ``labsim.numpy`` on labsim tracers. So the imported graph is made of labsim's own ops, with
labsim's shape and dtype rules, and every pass and machine takes it as it takes a traced ``lnp``
function. Calls (``pjit``, ``custom_jvp_call``, ``custom_vjp_call``) are inlined; control flow
(``while``, ``cond``) is refused with a way out; ``scan`` is unrolled when its length is small.

JAX is imported only inside :func:`from_jax`: labsim needs NumPy alone.
"""
from __future__ import annotations

import math
import string

import numpy as np

from ..core.avals import ShapeDtype
from ..core.trace import Tracer, bind, trace
from ..frontend import nn as lnn
from ..frontend import numpy as lnp
from .common import ImportUnsupportedError, dtype_name, need, unsupported

FN = "from_jax"
#: the longest ``scan`` that is unrolled (each step becomes its own ops in the graph)
MAX_UNROLL = 64


def _dot_general(x, y, *, dimension_numbers, preferred_element_type=None, **_):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    xs = [next(letters) for _ in range(x.ndim)]
    ys = [None] * y.ndim
    for a, b in zip(lb, rb):
        ys[b] = xs[a]
    for a, b in zip(lc, rc):
        ys[b] = xs[a]
    ys = [c if c is not None else next(letters) for c in ys]
    # JAX's output order: batch dims, then x's free dims, then y's free dims
    out = [xs[a] for a in lb] + [xs[i] for i in range(x.ndim) if i not in lb and i not in lc] \
        + [ys[i] for i in range(y.ndim) if i not in rb and i not in rc]
    z = lnp.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)
    if preferred_element_type is not None and str(z.dtype) != dtype_name(preferred_element_type, FN, "dot_general"):
        z = lnp.astype(z, dtype_name(preferred_element_type, FN, "dot_general"))
    return z


def _broadcast_in_dim(x, *, shape, broadcast_dimensions, **_):
    """labsim's ``broadcast`` is XLA's ``broadcast_in_dim``: one node, as ``lnp`` emits it (a reshape and a
    broadcast would put a (1, 1, d) view of a layer-norm scale inside a row kernel, which row fusion
    refuses). Only new size-1 axes (``keepdims``): a reshape, as ``lnp`` emits it."""
    shape = tuple(int(s) for s in shape)
    if tuple(x.shape) == shape:
        return x
    if math.prod(shape) == math.prod(x.shape):
        y = lnp.reshape(x, shape)
        if isinstance(x, Tracer) and len(shape) > x.ndim:  # remembered: a later broadcast reads x itself
            _EXPANDED[id(y)] = (y, x, tuple(int(d) for d in broadcast_dimensions))
        return y
    if not isinstance(x, Tracer):
        x = lnp.asarray(x)
    return bind("broadcast", x, shape=shape, broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def _iota(*, dtype, shape, dimension, **_):
    r = lnp.arange(shape[dimension], dtype=dtype_name(dtype, FN, "iota"))
    mid = [1] * len(shape)
    mid[dimension] = shape[dimension]
    return lnp.broadcast_to(lnp.reshape(r, tuple(mid)), tuple(shape))


def _slice(x, *, start_indices, limit_indices, strides=None, **_):
    strides = strides or (1,) * len(start_indices)
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


def _split(x, *, sizes, axis, **_):
    out, at = [], 0
    for n in sizes:
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(at, at + int(n))
        out.append(x[tuple(idx)])
        at += int(n)
    return out


def _integer_pow(x, *, y, **_):
    if y == 0:
        return lnp.ones_like(x)
    base, out, n = (1.0 / x if y < 0 else x), None, abs(y)
    while n:  # square-and-multiply, the order XLA's expansion of integer_pow uses
        if n & 1:
            out = base if out is None else out * base
        n >>= 1
        if n:
            base = base * base
    return out


def _select_n(pred, *cases):
    if len(cases) != 2:
        raise ImportUnsupportedError(f"{FN}: select_n with {len(cases)} cases; labsim imports the two-way select "
                                     "(jnp.where)")
    if str(pred.dtype) != "bool":
        pred = pred != 0
    return lnp.where(pred, cases[1], cases[0])


def _div(x, y):
    if str(x.dtype).startswith("int"):
        raise ImportUnsupportedError(f"{FN}: integer division (div on {x.dtype}) rounds toward zero in JAX; "
                                     "labsim imports floating-point division only")
    return x / y


def _reduce(f):
    return lambda x, *, axes, **_: f(x, axis=tuple(axes))


def _reduce_prod(x, *, axes, **_):
    """A product over ``axes``: the running product of the slices (n - 1 multiplies per output element)."""
    for ax in sorted((int(a) for a in axes), reverse=True):
        idx = [slice(None)] * x.ndim
        out = None
        for i in range(x.shape[ax]):
            idx[ax] = i
            out = x[tuple(idx)] if out is None else out * x[tuple(idx)]
        x = out
    return x


def _cumsum(x, *, axis, reverse=False, **_):
    """cumsum as a product with a triangular 0/1 matrix along ``axis`` (values exact up to summation order)."""
    if not str(x.dtype).startswith(("float", "bfloat")):
        raise ImportUnsupportedError(f"{FN}: cumsum on {x.dtype}; labsim imports a floating-point cumsum only")
    n, ax = x.shape[axis], axis % x.ndim
    tri = (np.tril if reverse else np.triu)(np.ones((n, n), np.float32))  # out[j] = sum over i <= j (i >= j)
    perm = [d for d in range(x.ndim) if d != ax] + [ax]
    y = lnp.transpose(x, tuple(perm)) @ lnp.asarray(tri, dtype=str(x.dtype))
    return lnp.transpose(y, tuple(int(i) for i in np.argsort(perm)))


#: id(y) -> (y, x, dims) for each ``y = broadcast_in_dim(x)`` that only added size-1 axes (jnp's rank
#: promotion of a bias or a scale); filled while one jaxpr is interpreted, emptied by :func:`from_jax`
_EXPANDED: dict[int, tuple] = {}


def _direct(xs):
    """Where an operand is a size-1 expansion of ``x`` that the op then broadcasts, broadcast ``x`` in one
    node, as ``lnp`` does for a (d,) bias: a (1, 1, d) view inside a row kernel is refused by row fusion."""
    shapes = [tuple(x.shape) for x in xs if hasattr(x, "shape")]
    if len(shapes) < 2:
        return xs
    out = tuple(max(d) for d in zip(*shapes)) if len({len(s) for s in shapes}) == 1 else None
    if out is None:
        return xs
    res = []
    for x in xs:
        hit = _EXPANDED.get(id(x)) if isinstance(x, Tracer) else None
        if hit is not None and tuple(x.shape) != out and hit[0] is x and \
                all(hit[1].shape[i] in (1, out[d]) for i, d in enumerate(hit[2])):
            x = bind("broadcast", hit[1], shape=out, broadcast_dimensions=hit[2])
        res.append(x)
    return res


def _ew(f):
    """An element-wise rule: the primitive's parameters (accuracy hints and the like) change no value."""
    return lambda *xs, **_: f(*_direct(xs))


RULES = {
    "add": _ew(lambda x, y: x + y), "sub": _ew(lambda x, y: x - y), "mul": _ew(lambda x, y: x * y),
    "div": _ew(_div), "neg": _ew(lambda x: -x), "max": _ew(lnp.maximum), "min": _ew(lnp.minimum), "abs": _ew(lnp.abs),
    "exp": _ew(lnp.exp), "log": _ew(lnp.log), "tanh": _ew(lnp.tanh), "logistic": _ew(lnn.sigmoid), "erf": _ew(lnp.erf),
    "rsqrt": _ew(lnp.rsqrt), "sqrt": _ew(lnp.sqrt), "floor": _ew(lnp.floor), "pow": _ew(lnp.power), "square": _ew(lnp.square),
    "integer_pow": _integer_pow,
    # no op of their own in labsim: computed as written (less accurate than JAX where 1 - erf(x) or 1 + x rounds)
    "erfc": _ew(lambda x: 1.0 - lnp.erf(x)), "log1p": _ew(lambda x: lnp.log(1.0 + x)),
    "expm1": _ew(lambda x: lnp.exp(x) - 1.0),
    "eq": _ew(lnp.equal), "ne": _ew(lnp.not_equal), "lt": _ew(lnp.less), "le": _ew(lnp.less_equal), "gt": _ew(lnp.greater),
    "ge": _ew(lnp.greater_equal), "select_n": _ew(_select_n),
    "convert_element_type": lambda x, *, new_dtype, **_: lnp.astype(x, dtype_name(new_dtype, FN, "convert_element_type")),
    "reduce_sum": _reduce(lnp.sum), "reduce_max": _reduce(lnp.max), "reduce_min": _reduce(lnp.min),
    "reduce_prod": _reduce_prod, "cumsum": _cumsum,
    "sign": _ew(lambda x: lnp.astype(lnp.greater(x, 0), str(x.dtype)) - lnp.astype(lnp.less(x, 0), str(x.dtype))),
    "is_finite": _ew(lambda x: lnp.less(lnp.abs(x), np.inf)),
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": lambda x, *, new_sizes, **_: lnp.reshape(x, tuple(new_sizes)),
    "transpose": lambda x, *, permutation, **_: lnp.transpose(x, tuple(permutation)),
    "squeeze": lambda x, *, dimensions, **_: lnp.squeeze(x, tuple(dimensions)),
    "expand_dims": lambda x, *, dimensions, **_: lnp.reshape(
        x, tuple(np.expand_dims(np.empty(x.shape, np.int8), tuple(dimensions)).shape)),
    "iota": _iota, "concatenate": lambda *xs, dimension, **_: lnp.concatenate(xs, axis=dimension),
    "slice": _slice, "split": _split, "dot_general": _dot_general,
    "copy": _ew(lambda x: x), "copy_p": _ew(lambda x: x), "stop_gradient": _ew(lambda x: x),
    "optimization_barrier": _ew(lambda *xs: xs),
}
#: primitives that call another jaxpr: inlined (params key holding the jaxpr)
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
         "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
         "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr"}
REFUSED = {
    "while": "a while loop has a trip count that JAX decides at run time; labsim's graphs are static. "
             "Unroll it in Python (a for loop over a fixed count), or use lax.fori_loop with static bounds "
             "inside lax.scan.",
    "cond": "a cond chooses a branch at run time; labsim's graphs are static. Compute both branches and "
            "choose with jnp.where.",
    "conv_general_dilated": "labsim has no convolution op (its machines model matrix products, element-wise and "
                            "reduction kernels); write the convolution as patches (im2col) and a matmul, or "
                            "import the layers after the convolutions.",
}
SUPPORTED = set(RULES) | set(CALLS) | {"scan"}


def _value(env, atom):
    if hasattr(atom, "val"):  # a Literal
        dt = dtype_name(atom.aval.dtype, FN, "a literal")
        val = np.asarray(atom.val, np.float32) if dt == "bfloat16" else np.asarray(atom.val)  # ml_dtypes' bf16
        return lnp.asarray(val, dtype=dt)
    return env[atom]


def _run(jaxpr, consts, args, where: str):
    """Interpret ``jaxpr`` on labsim tracers; returns the list of output tracers."""
    jax_core = need("jax", FN).core
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = lnp.asarray(np.asarray(c), dtype=dtype_name(v.aval.dtype, FN, f"constant {v}"))
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for i, eqn in enumerate(jaxpr.eqns):
        name = eqn.primitive.name
        shapes = ", ".join(o.aval.str_short() for o in eqn.outvars)
        here = f"equation {i} of {where}, {name} -> {shapes}"
        ins = [_value(env, a) for a in eqn.invars]
        if name in CALLS or name in ("custom_jvp_call", "custom_vjp_call"):
            sub = eqn.params.get(CALLS.get(name, "call_jaxpr")) or eqn.params.get("fun_jaxpr")
            outs = _run(sub.jaxpr if hasattr(sub, "jaxpr") else sub, getattr(sub, "consts", ()), ins,
                        f"{name} inside {where}")
        elif name == "scan":
            outs = _scan(eqn, ins, here)
        elif name in RULES:
            for o in eqn.outvars:
                if any(not isinstance(d, int) for d in o.aval.shape):
                    raise ImportUnsupportedError(f"{FN}: {here} has a dynamic shape {o.aval.shape}; labsim imports "
                                                 "static shapes only (give make_jaxpr concrete example arguments)")
            outs = RULES[name](*ins, **eqn.params)
            outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        elif name in REFUSED:
            raise ImportUnsupportedError(f"{FN}: {here}: {REFUSED[name]}")
        else:
            raise unsupported(FN, "JAX primitive", name, here, SUPPORTED)
        for o, val in zip(eqn.outvars, outs):
            if not isinstance(o, jax_core.DropVar):
                env[o] = val
    return [_value(env, a) for a in jaxpr.outvars]


def _scan(eqn, ins, here):
    p = eqn.params
    length, n_consts, n_carry = p["length"], p["num_consts"], p["num_carry"]
    if p.get("reverse") or length > MAX_UNROLL:
        why = "runs in reverse" if p.get("reverse") else f"has {length} steps (labsim unrolls at most {MAX_UNROLL})"
        raise ImportUnsupportedError(f"{FN}: {here}: this scan {why}; unroll it in Python with a fixed count")
    body = p["jaxpr"]
    consts, carry, xs = ins[:n_consts], ins[n_consts:n_consts + n_carry], ins[n_consts + n_carry:]
    ys_steps = []
    for t in range(length):
        out = _run(body.jaxpr, body.consts, consts + carry + [x[t] for x in xs], f"step {t} of the scan at {here}")
        carry, ys = out[:n_carry], out[n_carry:]
        ys_steps.append(ys)
    stacked = [lnp.concatenate([lnp.reshape(s[j], (1,) + tuple(s[j].shape)) for s in ys_steps], axis=0)
               for j in range(len(ys_steps[0]) if ys_steps else 0)]
    return carry + stacked


def from_jax(f, *example_args, name: str | None = None):
    """Trace ``f`` with ``jax.make_jaxpr`` on ``example_args`` and return the same program as a labsim
    :class:`~labsim.core.ir.Graph` (the argument and result pytrees kept; inputs named as ``ls.trace``
    names them). Only shapes and dtypes of the examples are used."""
    jax = need("jax", FN)
    if not callable(f):
        raise ImportUnsupportedError(f"{FN}: f must be a function, got {type(f).__name__}")
    closed, out_shape = jax.make_jaxpr(f, return_shape=True)(*example_args)
    leaves, in_def = jax.tree_util.tree_flatten(example_args)
    specs = [ShapeDtype(tuple(np.shape(x)), dtype_name(getattr(x, "dtype", np.asarray(x).dtype), FN,
                                                       f"argument leaf {i}")) for i, x in enumerate(leaves)]
    out_def = jax.tree_util.tree_structure(out_shape)
    fname = name or getattr(f, "__name__", "f")

    def program(*args):
        _EXPANDED.clear()
        ins = jax.tree_util.tree_leaves(args, is_leaf=lambda x: not isinstance(x, (tuple, list, dict)))
        outs = _run(closed.jaxpr, closed.consts, list(ins), fname)
        return jax.tree_util.tree_unflatten(out_def, outs)

    program.__name__ = fname
    try:
        return trace(program, *jax.tree_util.tree_unflatten(in_def, specs))
    finally:
        _EXPANDED.clear()
