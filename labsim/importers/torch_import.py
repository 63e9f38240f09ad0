"""``ls.from_torch(module_or_fn, *example_inputs)``: a PyTorch program as a labsim Graph.

``torch.export`` (non-strict) captures the program. When labsim has a row for every op of that graph
it interprets the graph as it is; otherwise ``run_decompositions()`` first lowers it to the core ATen
opset (see :func:`interpretable`). labsim then interprets that graph inside :func:`labsim.trace`, one row of :data:`RULES` per ATen op
(keyed by the op's name without its overload, ``aten.addmm``), each calling ``labsim.numpy``. The
module's parameters and buffers become the graph's first argument, a dict named as in the module's
``state_dict`` (so the graph's inputs read ``params.fc.weight``, ...), and the example inputs follow;
:func:`torch_arguments` gives the NumPy values to pass to ``ls.evaluate``.

PyTorch is imported only inside these functions: labsim needs NumPy alone. labsim has no 64-bit
integers; an ``int64`` index (``torch.arange``'s default) becomes ``int32``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..core.avals import ShapeDtype
from ..core.trace import trace
from ..frontend import nn as lnn
from ..frontend import numpy as lnp
from .common import ImportUnsupportedError, dtype_name, need, unsupported
from .torch_sdpa import sdpa

FN = "from_torch"
_BIG = 2**62  # ATen's "to the end" in slice


def _dt(dtype, where="an op") -> str | None:
    if dtype is None:
        return None
    name = str(dtype).removeprefix("torch.")
    return "int32" if name in ("int64", "long") else dtype_name(name, FN, where)


def _as_int(x):
    return lnp.astype(x, "int32") if str(x.dtype) == "bool" else x


def _bool(x):
    return x if str(x.dtype) == "bool" else lnp.not_equal(x, 0)


def _ax(x, d):
    return d + x.ndim if d < 0 else d


#: id(2-D view) -> (view, the higher-rank value it flattens): core ATen lowers ``linear`` on (b, t, d) to
#: view -> addmm -> view; the rules below compute the product on (b, t, d) itself, as ``lnp`` does, so the
#: bias add and what follows stay one shape (row fusion refuses a (b·t, d) value in a (b, t, d) kernel).
#: Filled while one exported graph is interpreted, emptied by :func:`from_torch`.
_FLAT: dict[int, tuple] = {}


def _reshape(x, shape, *_, **__):
    shape = tuple(int(s) for s in shape)
    hit = _FLAT.get(id(x))
    if hit is not None and hit[0] is x and tuple(hit[1].shape) == shape:
        return hit[1]
    y = lnp.reshape(x, shape)
    if len(shape) == 2 and x.ndim > 2 and shape[-1] == x.shape[-1]:
        _FLAT[id(y)] = (y, x)
    return y


def _unflat(a, f):
    """``f`` applied to the higher-rank value ``a`` flattens (if any), and the 2-D result remembered."""
    hit = _FLAT.get(id(a))
    if hit is None or hit[0] is not a:
        return f(a)
    full = f(hit[1])
    y = lnp.reshape(full, (math.prod(full.shape[:-1]), full.shape[-1]))
    _FLAT[id(y)] = (y, full)
    return y


def _addmm(c, a, b, *, beta=1, alpha=1):
    def f(a):
        prod = a @ b if alpha == 1 else (a @ b) * alpha
        return (c * beta if beta != 1 else c) + prod
    return _unflat(a, f)


def _expand(x, size, *_, **__):
    size = list(size)
    lead = len(size) - x.ndim
    full = [x.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return lnp.broadcast_to(x, tuple(full))


def _permute(x, dims, *_, **__):
    return lnp.transpose(x, tuple(_ax(x, d) for d in dims))


def _transpose(x, d0, d1, *_, **__):
    perm = list(range(x.ndim))
    a, b = _ax(x, d0), _ax(x, d1)
    perm[a], perm[b] = perm[b], perm[a]
    return lnp.transpose(x, tuple(perm))


def _slice(x, dim=0, start=None, end=None, step=1, **_):
    dim = _ax(x, dim)
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(start, None if end is None or end >= _BIG else end, step)
    return x[tuple(idx)]


def _select(x, dim, index, **_):
    dim = _ax(x, dim)
    idx = [slice(None)] * x.ndim
    idx[dim] = index
    return x[tuple(idx)]


def _split_sizes(x, sizes, dim=0, **_):
    dim, out, at = _ax(x, dim), [], 0
    for s in sizes:
        out.append(_slice(x, dim, at, at + s))
        at += s
    return out


def _split(x, size, dim=0, **_):
    n = x.shape[_ax(x, dim)]
    return _split_sizes(x, [min(size, n - a) for a in range(0, n, size)], dim)


def _squeeze(x, dims=None, **_):
    if dims is None:
        return lnp.squeeze(x)
    dims = [dims] if isinstance(dims, int) else dims
    return lnp.squeeze(x, tuple(_ax(x, d) for d in dims if x.shape[_ax(x, d)] == 1))


def _reduce(f):
    def rule(x, dims=None, keepdim=False, *, dtype=None, **_):
        axis = None if dims in (None, []) else tuple(_ax(x, d) for d in ([dims] if isinstance(dims, int) else dims))
        out = f(x, axis=axis, keepdims=keepdim)
        return lnp.astype(out, _dt(dtype)) if dtype is not None else out
    return rule


def _any(x, dims=None, keepdim=False, **_):
    return lnp.not_equal(_reduce(lnp.max)(_as_int(_bool(x)), dims, keepdim), 0)


def _layer_norm(x, shape, weight=None, bias=None, eps=1e-5, *_, **__):
    k = len(shape)
    lead, inner = tuple(x.shape[:x.ndim - k]), math.prod(shape)
    flat = lnp.reshape(x, lead + (inner,))
    w = None if weight is None else lnp.reshape(weight, (inner,))
    b = None if bias is None else lnp.reshape(bias, (inner,))
    y = lnp.reshape(lnn.layer_norm(flat, w, b, axis=-1, eps=eps), tuple(x.shape))
    mean = lnp.mean(flat, axis=-1, keepdims=True)
    rstd = lnp.rsqrt(lnp.mean(lnp.square(flat - mean), axis=-1, keepdims=True) + eps)
    keep = lead + (1,) * k
    return y, lnp.reshape(mean, keep), lnp.reshape(rstd, keep)


def _log_softmax(x, dim, *_, **__):
    m = lnp.max(x, axis=dim, keepdims=True)
    return x - m - lnp.log(lnp.sum(lnp.exp(x - m), axis=dim, keepdims=True))


def _arange(*args, dtype=None, **_):
    start, end, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
    is_int = all(float(v).is_integer() for v in (start, end, step))
    return lnp.arange(start, end, step, dtype=_dt(dtype) or ("int32" if is_int else "float32"))


def _full(size, value, *, dtype=None, **_):
    dt = _dt(dtype) or ("bool" if isinstance(value, bool) else "int32" if isinstance(value, int) else "float32")
    return lnp.full(tuple(size), value, dtype=dt)


def _gelu(x, approximate="none", **_):
    return lnn.gelu(x, approximate=(approximate == "tanh"))


def _where(c, x, y):
    return lnp.where(_bool(c), x, y)


def _scalar(v, *, dtype=None, **_):
    return lnp.asarray(v, dtype=_dt(dtype) or "float32")


def _div(x, y, rounding_mode=None, **_):
    if rounding_mode is not None:
        raise ImportUnsupportedError(f"{FN}: aten.div with rounding_mode={rounding_mode!r}; labsim imports true division")
    return x / y



def _dropout(x, p=0.5, train=False, **_):
    """``aten.dropout`` (the exported graph before decomposition): the identity when it drops nothing."""
    return _native_dropout(x, p, train)[0]


def _native_dropout(x, p, train=None, **_):
    """Dropout as exported in training mode: the identity when it drops nothing (eval mode or p == 0)."""
    if train and p:
        raise ImportUnsupportedError(f"{FN}: native_dropout with p={p} in training mode draws random numbers, "
                                     "which labsim does not model; call module.eval() before importing")
    return x, lnp.not_equal(x, x * 0.0 + 1e30)  # the mask: all True


RULES = {
    "add": lambda x, y, alpha=1, **_: x + (y * alpha if alpha != 1 else y),
    "sub": lambda x, y, alpha=1, **_: x - (y * alpha if alpha != 1 else y),
    "rsub": lambda x, y, alpha=1, **_: y - (x * alpha if alpha != 1 else x),
    "mul": lambda x, y, **_: x * y, "div": _div, "neg": lambda x: -x,
    "exp": lnp.exp, "log": lnp.log, "tanh": lnp.tanh, "sigmoid": lnn.sigmoid, "erf": lnp.erf, "rsqrt": lnp.rsqrt,
    "sqrt": lnp.sqrt, "abs": lnp.abs, "pow": lnp.power, "maximum": lnp.maximum, "minimum": lnp.minimum,
    "relu": lnn.relu, "gelu": _gelu, "silu": lnn.silu, "reciprocal": lambda x: 1.0 / x,
    "eq": lnp.equal, "ne": lnp.not_equal, "lt": lnp.less, "le": lnp.less_equal, "gt": lnp.greater,
    "ge": lnp.greater_equal, "where": _where,
    "logical_not": lambda x: lnp.equal(_as_int(_bool(x)), 0),
    "logical_and": lambda x, y: lnp.not_equal(_as_int(_bool(x)) * _as_int(_bool(y)), 0),
    "logical_or": lambda x, y: lnp.not_equal(lnp.maximum(_as_int(_bool(x)), _as_int(_bool(y))), 0),
    "any": _any,
    "mm": lambda a, b: _unflat(a, lambda a: a @ b), "bmm": lambda a, b: a @ b, "matmul": lambda a, b: a @ b,
    "addmm": _addmm,
    "linear": lambda x, w, b=None: x @ lnp.transpose(w) + b if b is not None else x @ lnp.transpose(w),
    "sum": _reduce(lnp.sum), "mean": _reduce(lnp.mean), "amax": _reduce(lnp.max), "amin": _reduce(lnp.min),
    "_softmax": lambda x, dim, *_, **__: lnn.softmax(x, axis=dim), "softmax": lambda x, dim, *_, **__:
    lnn.softmax(x, axis=dim), "_log_softmax": _log_softmax, "log_softmax": _log_softmax,
    "native_layer_norm": _layer_norm, "layer_norm": lambda *a, **k: _layer_norm(*a, **k)[0],
    "view": _reshape, "_unsafe_view": _reshape, "reshape": _reshape, "expand": _expand, "permute": _permute,
    "t": lambda x: lnp.transpose(x), "transpose": _transpose, "unsqueeze": lambda x, d: lnp.expand_dims(x, _ax(x, d) if d >= 0 else d + x.ndim + 1),
    "squeeze": _squeeze, "slice": _slice, "select": _select, "cat": lambda xs, dim=0: lnp.concatenate(xs, axis=dim),
    "split_with_sizes": _split_sizes, "split": _split,
    "clone": lambda x, **_: x, "alias": lambda x: x, "contiguous": lambda x, **_: x, "detach": lambda x: x,
    "lift_fresh_copy": lambda x: x, "dropout": _dropout, "native_dropout": _native_dropout,
    "_to_copy": lambda x, *, dtype=None, **_: lnp.astype(x, _dt(dtype)) if dtype is not None else x,
    "full": _full, "full_like": lambda x, v, *, dtype=None, **_: _full(x.shape, v, dtype=dtype or x.dtype),
    "zeros_like": lambda x, *, dtype=None, **_: _full(x.shape, 0, dtype=dtype or x.dtype),
    "ones_like": lambda x, *, dtype=None, **_: _full(x.shape, 1, dtype=dtype or x.dtype),
    "scalar_tensor": _scalar, "arange": _arange, "getitem": operator.getitem,
    "scaled_dot_product_attention": sdpa,
}
REFUSED = {
    "embedding": "an embedding is a gather by token id, which labsim does not model: pass the embedded "
                 "activations as the input instead",
    "cond": "torch.cond chooses a branch at run time; labsim's graphs are static: compute both and use torch.where",
    "while_loop": "a while loop's trip count is decided at run time; unroll it in Python with a fixed count",
    "sym_size": "the program has a dynamic shape; export it with static example inputs (no Dim)",
    "convolution": "labsim has no convolution op (its machines model matrix products, element-wise and "
                   "reduction kernels); write the convolution as an unfold (im2col) and a matmul, or import "
                   "the layers after the convolutions",
}



def _name(target) -> str:
    if target is operator.getitem:
        return "getitem"
    name = getattr(target, "__name__", str(target))  # "addmm.default"
    return str(getattr(target, "_opname", None) or name.split(".")[0])


def _module(fn, torch):
    if isinstance(fn, torch.nn.Module):
        return fn
    if not callable(fn):
        raise ImportUnsupportedError(f"{FN}: module_or_fn must be a torch.nn.Module or a function, got "
                                     f"{type(fn).__name__}")

    class Wrapped(torch.nn.Module):
        def forward(self, *xs):
            return fn(*xs)

    w = Wrapped()
    w.__class__.__name__ = getattr(fn, "__name__", "fn")
    return w


def _export(module_or_fn, example_inputs):
    torch = need("torch", FN)
    module = _module(module_or_fn, torch)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            raise ImportUnsupportedError(f"{FN}: example input {i} is a {type(x).__name__}; give tensors "
                                         "(labsim imports positional tensor inputs)")
    try:
        ep = torch.export.export(module, tuple(example_inputs), strict=False)
    except Exception as e:  # torch's own refusal (data-dependent control flow, unsupported Python)
        raise ImportUnsupportedError(f"{FN}: torch.export could not capture the program: "
                                     f"{type(e).__name__}: {str(e).splitlines()[0][:300]}") from None
    return torch, module, (ep if interpretable(torch, ep) else ep.run_decompositions())


def interpretable(torch, ep) -> bool:
    """Whether every op of the exported graph (before decomposition) has a row of :data:`RULES`.

    Then labsim interprets that graph as it is (``linear``, ``layer_norm``, ``gelu``,
    ``scaled_dot_product_attention``, ... each computed by its row as the core ATen decomposition computes
    it), and ``run_decompositions()``, which takes seconds for a 12-layer model, is skipped. An op without
    a row (a ``torch.*`` function, an in-place op, a higher-order op, an ATen op labsim has no row for)
    sends the program through ``run_decompositions()`` as before."""
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        t = node.target
        if t is operator.getitem:
            continue
        if not isinstance(t, torch._ops.OpOverload) or t.namespace != "aten" or _name(t) not in RULES:
            return False
    return True


def _params(torch, ep):
    """(placeholder name -> (kind, state name)), and the state values as NumPy."""
    kinds, values = {}, {}
    for spec in ep.graph_signature.input_specs:
        kinds[spec.arg.name] = (spec.kind.name, spec.target)
        if spec.kind.name in ("PARAMETER", "BUFFER"):
            values[spec.target] = ep.state_dict[spec.target]
        elif spec.kind.name == "CONSTANT_TENSOR":
            values[spec.target] = ep.constants[spec.target]
    return kinds, values


def _np(t):
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return t.cpu().numpy().astype(np.int32) if str(t.dtype) == "torch.int64" else t.cpu().numpy()


def from_torch(module_or_fn, *example_inputs):
    """Export ``module_or_fn`` with ``torch.export`` on ``example_inputs`` (core ATen) and return it as a
    labsim :class:`~labsim.core.ir.Graph` taking ``(params, *inputs)``: ``params`` the dict of the module's
    parameters and buffers by their ``state_dict`` names (use :func:`torch_arguments` for the values)."""
    torch, module, ep = _export(module_or_fn, example_inputs)
    kinds, values = _params(torch, ep)
    pspec = {k: ShapeDtype(tuple(v.shape), _dt(v.dtype, f"parameter {k}")) for k, v in values.items()
             if k in {t for kind, t in kinds.values() if kind in ("PARAMETER", "BUFFER")}}
    consts = {t: _np(values[t]) for kind, t in kinds.values() if kind == "CONSTANT_TENSOR"}
    xspecs = [ShapeDtype(tuple(x.shape), _dt(x.dtype, f"example input {i}")) for i, x in enumerate(example_inputs)]
    where = type(module).__name__

    def program(params, *xs):
        _FLAT.clear()
        env, users = {}, iter(xs)
        for node in ep.graph.nodes:
            if node.op == "placeholder":
                kind, target = kinds[node.name]
                env[node.name] = (params[target] if kind in ("PARAMETER", "BUFFER") else
                                  lnp.asarray(consts[target]) if kind == "CONSTANT_TENSOR" else next(users))
            elif node.op == "call_function":
                env[node.name] = _call(node, env, where)
            elif node.op == "output":
                flat = [env[a.name] for a in node.args[0]]
                from torch.utils import _pytree
                return _pytree.tree_unflatten(flat, ep.call_spec.out_spec)
        raise ImportUnsupportedError(f"{FN}: the exported graph of {where} has no output")

    program.__name__ = where
    try:
        return trace(program, pspec, *xspecs)
    finally:
        _FLAT.clear()


def _call(node, env, where):
    name = _name(node.target)
    here = f"node '{node.name}' of {where}, {node.target}"

    def val(a):
        fx = type(node)
        if isinstance(a, fx):
            return env[a.name]
        if isinstance(a, (list, tuple)):
            return type(a)(val(b) for b in a)
        if hasattr(a, "is_floating_point") or str(type(a)).startswith("<class 'torch."):
            return a  # a dtype, a device, a layout: the rules read dtype only
        return a

    args = [val(a) for a in node.args]
    kwargs = {k: val(v) for k, v in node.kwargs.items() if k not in ("device", "layout", "pin_memory",
                                                                     "memory_format", "non_blocking")}
    if name in REFUSED:
        raise ImportUnsupportedError(f"{FN}: {here}: {REFUSED[name]}")
    if name not in RULES:
        raise unsupported(FN, "ATen op", name, here, RULES)
    return RULES[name](*args, **kwargs)


def torch_arguments(module_or_fn, *example_inputs):
    """The NumPy arguments of the graph :func:`from_torch` returns: ``(params, *inputs)``."""
    torch, module, ep = _export(module_or_fn, example_inputs)
    kinds, values = _params(torch, ep)
    params = {t: _np(values[t]) for kind, t in kinds.values() if kind in ("PARAMETER", "BUFFER")}
    return (params, *(_np(x) for x in example_inputs))
