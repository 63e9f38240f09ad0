"""Hypothesis strategies for labsim: random *programs*, each with a plain-NumPy twin.

A :class:`Program` is a short chain of steps applied to a current value, starting from input ``x``.
Each step is written once against a namespace ``ns`` of NumPy-like functions; running it with
:data:`LNP` (``labsim.numpy`` + ``labsim.nn``) gives the function to trace, running it with :data:`NP`
(plain NumPy, softmax/gelu/layer_norm written out) gives its independent NumPy twin.

Kinds of step (pick them with ``programs(kinds=...)``):

- ``elementwise``: neg/abs/tanh/exp-of-bounded/square/leaky-relu via ``where``, scalar arithmetic with
  Python floats (weak typing) through the operators;
- ``broadcast``: add/sub/mul/maximum/minimum/where-with-compare against a new input whose shape
  broadcasts NumPy-style ((m,n) with (n,), (m,1), (), or a new leading axis);
- ``reduce``: sum/max/mean over a random axis, axes tuple or all, with or without keepdims;
- ``contract``: dot, matmul (with batch broadcasting), einsum 'ij,jk->ik', 'bf,fd->db', 'bij,bjk->bik';
- ``movement``: reshape, transpose, slicing (ranges, strides, integer index);
- ``nn``: softmax, gelu (tanh and erf forms), layer_norm.

Sizes are small (dims 1..6, rank <= 3) and every step is a continuous function of bounded values, so
float32 results agree with NumPy to a tolerance and finite differences make sense.
Inputs come from a drawn seed (not from Hypothesis arrays), so shrinking never makes ties at kinks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp

KINDS = ("elementwise", "broadcast", "reduce", "contract", "movement", "nn")
MAX_RANK = 3
MAX_DIM = 6


# ----------------------------------------------------------------------------------------------
# the two namespaces a program runs with
def _np_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _np_gelu(x, approximate=True):
    x = np.asarray(x)
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    erf = np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2.0)).astype(x.dtype)
    return 0.5 * x * (1.0 + erf)


def _np_layer_norm(x, axis=-1, eps=1e-5):
    mu = np.mean(x, axis=axis, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=axis, keepdims=True)
    return xc / np.sqrt(var + eps)


_COMMON = ("add", "subtract", "multiply", "maximum", "minimum", "negative", "abs", "exp", "log", "tanh",
           "sqrt", "where", "greater", "sum", "max", "mean", "dot", "matmul", "einsum", "reshape",
           "transpose")

LNP = SimpleNamespace(**{k: getattr(lnp, k) for k in _COMMON}, name="lnp",
                      softmax=lnn.softmax, gelu=lnn.gelu,
                      layer_norm=lambda x, axis=-1, eps=1e-5: lnn.layer_norm(x, axis=axis, eps=eps))
NP = SimpleNamespace(**{k: getattr(np, k) for k in _COMMON}, name="numpy",
                     softmax=_np_softmax, gelu=_np_gelu, layer_norm=_np_layer_norm)


# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    desc: str
    fn: Callable  # fn(ns, cur, args) -> new value; args are all the program's inputs


@dataclass(frozen=True, eq=False)
class Program:
    """A random program: ``f`` (lnp), ``numpy_twin`` (NumPy), its input specs and concrete inputs."""

    specs: tuple[ls.ShapeDtype, ...]
    inputs: tuple[np.ndarray, ...]
    steps: tuple[Step, ...]
    kinds: tuple[str, ...] = field(default=())

    def build(self, ns) -> Callable:
        steps = self.steps

        def f(*args):
            cur = args[0]
            for s in steps:
                cur = s.fn(ns, cur, args)
            return cur

        f.__name__ = "prog"
        return f

    @property
    def f(self) -> Callable:
        return self.build(LNP)

    @property
    def numpy_twin(self) -> Callable:
        return self.build(NP)

    @property
    def dtype(self) -> str:
        return self.specs[0].dtype

    def with_inputs(self, inputs: Sequence[np.ndarray]) -> "Program":
        return Program(self.specs, tuple(inputs), self.steps, self.kinds)

    def __repr__(self) -> str:
        sig = ", ".join(f"p{i}: {s}" for i, s in enumerate(self.specs))
        body = "; ".join(s.desc for s in self.steps) or "identity"
        return f"Program(({sig}) -> {body})"


class _Builder:
    """Mutable state while one program is drawn: the current shape and the inputs so far."""

    def __init__(self, draw, dtype: str, differentiable: bool) -> None:
        self.draw = draw
        self.dtype = dtype
        self.differentiable = differentiable
        self.shapes: list[tuple[int, ...]] = []

    def new_input(self, shape) -> int:
        self.shapes.append(tuple(int(d) for d in shape))
        return len(self.shapes) - 1

    def dim(self) -> int:
        return self.draw(st.integers(1, MAX_DIM))


def _bcast(a, b) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


# -- step makers: each returns (Step, new shape) or None when the step does not fit the shape ---------
def _elementwise(b: _Builder, S):
    which = b.draw(st.sampled_from(["neg", "-x", "abs", "tanh", "exp_bounded", "square", "leaky", "log1",
                                    "scalar", "relu"]))
    if which == "neg":
        return Step("negative", lambda ns, c, a: ns.negative(c)), S
    if which == "-x":
        return Step("-x", lambda ns, c, a: -c), S
    if which == "abs":
        return Step("abs", lambda ns, c, a: ns.abs(c)), S
    if which == "tanh":
        return Step("tanh", lambda ns, c, a: ns.tanh(c)), S
    if which == "exp_bounded":  # exp of a value in [-1.5, 1.5]
        return Step("exp(1.5*tanh)", lambda ns, c, a: ns.exp(ns.tanh(c) * 1.5)), S
    if which == "square":
        return Step("x*x", lambda ns, c, a: c * c), S
    if which == "leaky":  # where + compare, continuous at 0
        return Step("where(x>0, x, 0.1x)", lambda ns, c, a: ns.where(ns.greater(c, 0.0), c, c * 0.1)), S
    if which == "log1":
        return Step("log(abs(x)+1)", lambda ns, c, a: ns.log(ns.abs(c) + 1.0)), S
    if which == "relu":
        return Step("maximum(x, 0.0)", lambda ns, c, a: ns.maximum(c, 0.0)), S
    k = b.draw(st.sampled_from([0.5, 1.5, 2.0, -0.75, 3.0]))
    form = b.draw(st.sampled_from(["x*k", "k*x", "x+k", "k-x", "x-k"]))
    fns = {"x*k": lambda ns, c, a: c * k, "k*x": lambda ns, c, a: k * c, "x+k": lambda ns, c, a: c + k,
           "k-x": lambda ns, c, a: k - c, "x-k": lambda ns, c, a: c - k}
    return Step(form.replace("k", repr(k)), fns[form]), S


def _other_shape(b: _Builder, S):
    """A shape that broadcasts with S, NumPy-style."""
    r = len(S)
    opts = ["same", "suffix", "ones"]
    if r < MAX_RANK:
        opts.append("lead")
    kind = b.draw(st.sampled_from(opts))
    if kind == "same":
        return S
    if kind == "suffix":  # (m,n) with (n,) or ()
        return S[b.draw(st.integers(0, r)):]
    if kind == "ones":  # (m,n) with (m,1), (1,n), (1,1)
        mask = b.draw(st.lists(st.booleans(), min_size=r, max_size=r))
        return tuple(1 if m else d for m, d in zip(mask, S))
    return (b.dim(),) + S  # the result grows a leading axis


def _broadcast(b: _Builder, S):
    O = _other_shape(b, S)
    i = b.new_input(O)
    swap = b.draw(st.booleans())
    op = b.draw(st.sampled_from(["add", "subtract", "multiply", "maximum", "minimum", "+", "-", "*",
                                 "where_max"]))
    new = _bcast(S, O)
    if op == "where_max":  # where with a compare; the same as maximum, so continuous
        return Step(f"where(x > p{i}, x, p{i})",
                    lambda ns, c, a: ns.where(ns.greater(c, a[i]), c, a[i])), new
    if op in "+-*":
        f = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}[op]
        if swap:
            return Step(f"p{i} {op} x", lambda ns, c, a: f(a[i], c)), new
        return Step(f"x {op} p{i}", lambda ns, c, a: f(c, a[i])), new
    if swap:
        return Step(f"{op}(p{i}, x)", lambda ns, c, a: getattr(ns, op)(a[i], c)), new
    return Step(f"{op}(x, p{i})", lambda ns, c, a: getattr(ns, op)(c, a[i])), new


def _reduce(b: _Builder, S):
    r = len(S)
    if r == 0:
        return None
    op = b.draw(st.sampled_from(["sum", "max", "mean"]))
    form = b.draw(st.sampled_from(["int", "tuple", "none"]))
    if form == "int":
        ax = b.draw(st.integers(-r, r - 1))
    elif form == "tuple":
        axes = b.draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True))
        ax = tuple(sorted(axes))
    else:
        ax = None
    keep = b.draw(st.booleans())
    new = np.sum(np.zeros(S), axis=ax, keepdims=keep).shape
    return Step(f"{op}(axis={ax}, keepdims={keep})",
                lambda ns, c, a: getattr(ns, op)(c, axis=ax, keepdims=keep)), tuple(new)


def _contract(b: _Builder, S):
    r = len(S)
    if r == 0:
        return None
    k = S[-1]
    n = b.dim()
    if r == 1:
        form = b.draw(st.sampled_from(["dot_vec", "dot_mat", "matmul_mat"]))
        if form == "dot_vec":
            i = b.new_input((k,))
            return Step(f"dot(x, p{i})", lambda ns, c, a: ns.dot(c, a[i])), ()
        i = b.new_input((k, n))
        if form == "dot_mat":
            return Step(f"dot(x, p{i})", lambda ns, c, a: ns.dot(c, a[i])), (n,)
        return Step(f"x @ p{i}", lambda ns, c, a: c @ a[i]), (n,)
    if r == 2:
        m = S[0]
        form = b.draw(st.sampled_from(["dot", "@", "matmul", "ij,jk->ik", "bf,fd->db", "batched_rhs",
                                       "dot_vec"]))
        if form == "dot_vec":
            i = b.new_input((k,))
            return Step(f"dot(x, p{i})", lambda ns, c, a: ns.dot(c, a[i])), (m,)
        if form == "batched_rhs":  # (m,k) @ (B,k,n): matmul broadcasts the batch
            B = b.dim()
            i = b.new_input((B, k, n))
            return Step(f"matmul(x, p{i})", lambda ns, c, a: ns.matmul(c, a[i])), (B, m, n)
        i = b.new_input((k, n))
        if form == "dot":
            return Step(f"dot(x, p{i})", lambda ns, c, a: ns.dot(c, a[i])), (m, n)
        if form == "@":
            return Step(f"x @ p{i}", lambda ns, c, a: c @ a[i]), (m, n)
        if form == "matmul":
            return Step(f"matmul(x, p{i})", lambda ns, c, a: ns.matmul(c, a[i])), (m, n)
        if form == "bf,fd->db":
            return Step(f"einsum('bf,fd->db', x, p{i})", lambda ns, c, a: ns.einsum("bf,fd->db", c, a[i])), (n, m)
        return Step(f"einsum('ij,jk->ik', x, p{i})", lambda ns, c, a: ns.einsum("ij,jk->ik", c, a[i])), (m, n)
    B, m = S[0], S[1]
    form = b.draw(st.sampled_from(["bij,bjk->bik", "matmul_batched", "matmul_2d", "matmul_1batch"]))
    if form == "bij,bjk->bik":
        i = b.new_input((B, k, n))
        return Step(f"einsum('bij,bjk->bik', x, p{i})",
                    lambda ns, c, a: ns.einsum("bij,bjk->bik", c, a[i])), (B, m, n)
    shape = {"matmul_batched": (B, k, n), "matmul_2d": (k, n), "matmul_1batch": (1, k, n)}[form]
    i = b.new_input(shape)
    return Step(f"matmul(x, p{i}{list(shape)})", lambda ns, c, a: ns.matmul(c, a[i])), (B, m, n)


def _factor_shapes(size: int) -> list[tuple[int, ...]]:
    """Shapes of rank <= 3 with dims <= MAX_DIM * MAX_DIM... holding ``size`` elements."""
    out = [(size,)]
    for d in range(1, size + 1):
        if size % d == 0:
            out.append((d, size // d))
            for e in range(1, size // d + 1):
                if (size // d) % e == 0:
                    out.append((d, e, size // d // e))
    return [s for s in out if all(x <= 36 for x in s)] or [(size,)]


def _movement(b: _Builder, S):
    r = len(S)
    opts = ["reshape"]
    if r >= 2:
        opts += ["transpose", "T"]
    if r >= 1:
        opts += ["slice0", "index"]
        if not b.differentiable:
            opts.append("stride")
    if r >= 2:
        opts.append("slice1")
    which = b.draw(st.sampled_from(opts))
    size = int(np.prod(S, dtype=np.int64))
    if which == "reshape":
        new = b.draw(st.sampled_from(_factor_shapes(size)))
        use_minus1 = b.draw(st.booleans()) and len(new) > 1
        arg = tuple(new[:-1]) + (-1,) if use_minus1 else new
        return Step(f"reshape{arg}", lambda ns, c, a: ns.reshape(c, arg)), tuple(new)
    if which == "transpose":
        perm = tuple(b.draw(st.permutations(range(r))))
        return Step(f"transpose{perm}", lambda ns, c, a: ns.transpose(c, perm)), tuple(S[p] for p in perm)
    if which == "T":
        return Step(".T", lambda ns, c, a: c.T), tuple(S[::-1])
    if which == "index":
        j = b.draw(st.integers(-S[0], S[0] - 1))
        return Step(f"x[{j}]", lambda ns, c, a: c[j]), tuple(S[1:])
    if which == "stride":
        return Step("x[..., ::2]", lambda ns, c, a: c[..., ::2]), tuple(S[:-1]) + ((S[-1] + 1) // 2,)
    ax = 0 if which == "slice0" else 1
    lo = b.draw(st.integers(0, S[ax] - 1))
    hi = b.draw(st.integers(lo + 1, S[ax]))
    new = list(S)
    new[ax] = hi - lo
    if ax == 0:
        return Step(f"x[{lo}:{hi}]", lambda ns, c, a: c[lo:hi]), tuple(new)
    return Step(f"x[:, {lo}:{hi}]", lambda ns, c, a: c[:, lo:hi]), tuple(new)


def _nn(b: _Builder, S):
    r = len(S)
    if r == 0:
        return None
    which = b.draw(st.sampled_from(["softmax", "gelu", "gelu_erf", "layer_norm"]))
    if which == "softmax":
        ax = b.draw(st.integers(-r, r - 1))
        return Step(f"softmax(axis={ax})", lambda ns, c, a: ns.softmax(c, axis=ax)), S
    if which == "gelu":
        return Step("gelu", lambda ns, c, a: ns.gelu(c, approximate=True)), S
    if which == "gelu_erf":
        return Step("gelu(approximate=False)", lambda ns, c, a: ns.gelu(c, approximate=False)), S
    # eps 1e-3: keeps 1/sqrt(var+eps) tame when a row is (nearly) constant
    return Step("layer_norm(axis=-1)", lambda ns, c, a: ns.layer_norm(c, axis=-1, eps=1e-3)), S


_MAKERS = {"elementwise": _elementwise, "broadcast": _broadcast, "reduce": _reduce, "contract": _contract,
           "movement": _movement, "nn": _nn}


def _inputs(shapes, dtype: str, seed: int, low: float = -2.0, high: float = 2.0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(np.asarray(rng.uniform(low, high, size=s), dtype=dtype) for s in shapes)


@st.composite
def programs(draw, kinds: Sequence[str] = KINDS, *, min_steps: int = 1, max_steps: int = 4,
             dtype: str = "float32", differentiable: bool = False, scalar_output: bool = False,
             max_rank: int = MAX_RANK) -> Program:
    """A random program built from steps of the given ``kinds``.

    ``differentiable=True`` leaves out steps labsim cannot differentiate (strided slices);
    ``scalar_output=True`` ends the program with ``sum`` so ``ls.grad`` applies.
    """
    for k in kinds:
        if k not in _MAKERS:
            raise ValueError(f"unknown kind {k!r}; use {KINDS}")
    b = _Builder(draw, dtype, differentiable)
    rank = draw(st.integers(1, max_rank))
    S = tuple(b.dim() for _ in range(rank))
    b.new_input(S)
    steps: list[Step] = []
    n = draw(st.integers(min_steps, max_steps))
    tries = 0
    while len(steps) < n and tries < 8 * n:
        tries += 1
        kind = draw(st.sampled_from(list(kinds)))
        made = _MAKERS[kind](b, S)
        if made is None:
            continue
        step, new = made
        if len(new) > max_rank or any(d > 36 for d in new):
            continue  # (the input it may have added stays; an unused input is fine)
        steps.append(step)
        S = new
    if scalar_output and S != ():
        steps.append(Step("sum()", lambda ns, c, a: ns.sum(c)))
    seed = draw(st.integers(0, 2**32 - 1))
    specs = tuple(ls.ShapeDtype(s, dtype) for s in b.shapes)
    return Program(specs, _inputs(b.shapes, dtype, seed), tuple(steps), tuple(kinds))


def elementwise_programs(**kw):
    return programs(("elementwise",), **kw)


def broadcasting_programs(**kw):
    return programs(("elementwise", "broadcast"), **kw)


def reduction_programs(**kw):
    return programs(("elementwise", "reduce"), **kw)


def contraction_programs(**kw):
    return programs(("contract", "elementwise"), **kw)


def movement_programs(**kw):
    return programs(("movement", "elementwise"), **kw)


def nn_programs(**kw):
    return programs(("nn", "broadcast"), **kw)


def mixed_programs(**kw):
    return programs(KINDS, **kw)


# ----------------------------------------------------------------------------------------------
# smaller building blocks
shapes = st.lists(st.integers(1, MAX_DIM), min_size=0, max_size=MAX_RANK).map(tuple)
float_dtypes = st.sampled_from(["float32", "float64"])
seeds = st.integers(0, 2**32 - 1)


@st.composite
def matmul_dims(draw, max_dim: int = 64):
    """(M, K, N) for a matrix product."""
    return tuple(draw(st.integers(1, max_dim)) for _ in range(3))


def pytrees(leaves=None, max_leaves: int = 12):
    """Nested tuples, lists, dicts (str keys) and None around ``leaves`` (default: small arrays, ints)."""
    if leaves is None:
        leaves = st.one_of(st.integers(-5, 5), shapes.map(lambda s: np.arange(math.prod(s), dtype=np.float32).reshape(s)))
    return st.recursive(
        st.one_of(leaves, st.none()),
        lambda kids: st.one_of(st.lists(kids, max_size=3), st.lists(kids, max_size=3).map(tuple),
                               st.dictionaries(st.text("abcxyz_", min_size=1, max_size=3), kids, max_size=3)),
        max_leaves=max_leaves)


def tolerance(ref: np.ndarray, dtype: str = "float32") -> dict:
    """rtol/atol for comparing with a NumPy reference of this magnitude."""
    scale = float(np.max(np.abs(ref))) if np.size(ref) else 0.0
    if dtype == "float64":
        return {"rtol": 1e-9, "atol": 1e-9 * (1.0 + scale)}
    return {"rtol": 2e-4, "atol": 2e-5 * (1.0 + scale)}


__all__ = ["Program", "Step", "LNP", "NP", "KINDS", "programs", "elementwise_programs", "broadcasting_programs",
           "reduction_programs", "contraction_programs", "movement_programs", "nn_programs", "mixed_programs",
           "shapes", "float_dtypes", "seeds", "matmul_dims", "pytrees", "tolerance"]
