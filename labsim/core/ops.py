"""The op table: the :class:`Op` enum, its category sets, and one :class:`OpDef` row per op.

Introduced in "The journey of one matrix product". Each row states the op's shape rule, a NumPy
reference implementation, its FLOP and transcendental counts, its HLO spelling, how it lowers (a PTX-like
instruction, a reduction's combiner), and, attached by the floors that write them, its gradient (VJP)
and, for composites, its decomposition. Which family an op belongs to (elementwise, reduction, ...),
whether fusion may compute it twice (:data:`DUPLICABLE`) and whether it needs a kernel at all
(:data:`FREE`) are the category sets below. Fusion, byte counts, lowering and the cost model read these
facts; a missing rule raises an error that names the op, and ``tests/test_op_table.py`` names any op
that lacks a rule a stage needs.

FLOP conventions follow XLA's ``HloCostAnalysis`` (checked against ``shared/refs/xla.json``):
an elementwise op costs 1 FLOP per output element (comparisons and ``select`` included), except
transcendental ops (exp, log, tanh, sqrt, rsqrt, erf, logistic, power), which count 0 FLOPs and 1
*transcendental* per element; a reduction costs ``n_in - n_out``; a contraction costs 2 FLOPs per
multiply-accumulate (``2·M·N·K``); data movement costs 0.
"""
from __future__ import annotations

from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError

import enum
import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .dtypes import canonical_dtype, numpy_dtype, result_dtype
from .avals import ShapeDtype, ShapeError


from .opcodes import Op  # noqa: E402  (re-exported: labsim.core.ops.Op)


class OpKind(enum.Enum):
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    CONTRACTION = "contraction"
    DATA_MOVEMENT = "data movement"
    CONSTANT = "constant"
    COMPOSITE = "composite"  # decomposed into primitives by the compiler


# Category sets (as tinygrad's GroupOp): the one place that says which op belongs to which family.
UNARY = frozenset({Op.NEGATE, Op.ABS, Op.EXP, Op.LOG, Op.TANH, Op.SQRT, Op.RSQRT, Op.LOGISTIC, Op.ERF,
                   Op.FLOOR, Op.INTEGER_POW, Op.CONVERT})
BINARY = frozenset({Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.DIVIDE, Op.MAXIMUM, Op.MINIMUM, Op.POWER, Op.COMPARE})
ELEMENTWISE = UNARY | BINARY | {Op.SELECT, Op.IOTA}
TRANSCENDENTAL = frozenset({Op.EXP, Op.LOG, Op.TANH, Op.SQRT, Op.RSQRT, Op.LOGISTIC, Op.ERF, Op.POWER})
COMMUTATIVE = frozenset({Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM})
REDUCTION = frozenset({Op.REDUCE_SUM, Op.REDUCE_MAX, Op.REDUCE_MIN})
CONTRACTION = frozenset({Op.DOT})
DATA_MOVEMENT = frozenset({Op.RESHAPE, Op.TRANSPOSE, Op.BROADCAST, Op.SLICE, Op.CONCATENATE, Op.UPDATE_SLICE})
CONSTANT = frozenset({Op.CONSTANT})
COMPOSITE = frozenset({Op.MEAN, Op.SOFTMAX, Op.GELU, Op.LAYER_NORM})
PRIMITIVE = frozenset(Op) - COMPOSITE
# Cheap enough that fusion may compute them again in a second kernel instead of writing their result to
# memory and reading it back (XLA duplicates such producers too; exp, divide, dots are never duplicated).
DUPLICABLE = frozenset({Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM, Op.NEGATE, Op.ABS, Op.FLOOR, Op.COMPARE,
                        Op.SELECT, Op.CONVERT, Op.INTEGER_POW, Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE, Op.SLICE,
                        Op.IOTA, Op.UPDATE_SLICE})
# Need no kernel: a constant is uploaded with the program; a row-major reshape is a bitcast (same bytes).
FREE = frozenset({Op.CONSTANT, Op.RESHAPE})

_KIND = {**{o: OpKind.ELEMENTWISE for o in ELEMENTWISE}, **{o: OpKind.REDUCTION for o in REDUCTION},
         **{o: OpKind.CONTRACTION for o in CONTRACTION}, **{o: OpKind.DATA_MOVEMENT for o in DATA_MOVEMENT},
         **{o: OpKind.CONSTANT for o in CONSTANT}, **{o: OpKind.COMPOSITE for o in COMPOSITE}}
assert set(_KIND) == set(Op), "every op belongs to exactly one kind"


Avals = Sequence[ShapeDtype]


@dataclass(frozen=True)
class OpDef:
    """Every fact about one op: one row of the table.

    Rules a later floor supplies are attached to the row with :func:`define` (the VJP by
    ``labsim.frontend.autodiff``, a composite's decomposition by the front end that defines it), so
    ``ops.get(op).vjp`` is where the gradient rule of ``op`` lives, wherever it is written.
    """

    name: Op
    arity: int | None  # None: variadic
    shape_rule: Callable[[Avals, Mapping[str, Any]], ShapeDtype]
    impl: Callable[..., np.ndarray]
    flops: Callable[[Avals, ShapeDtype, Mapping[str, Any]], int]
    transcendentals: Callable[[Avals, ShapeDtype, Mapping[str, Any]], int]
    hlo: str
    attr_format: Callable[[Mapping[str, Any]], str] | None = None
    decompose: Callable[..., Any] | None = None  # for composites: f(*tracers, **params) -> tracer
    ptx: str | None = None  # lowering: the PTX-like instruction of an elementwise op, a reduction's combiner
    vjp: Callable[..., tuple] | None = None  # rule(cotangent, node, *operands, out) -> operand cotangents
    doc: str = ""

    @property
    def kind(self) -> OpKind:
        return _KIND[self.name]

    @property
    def commutative(self) -> bool:
        return self.name in COMMUTATIVE

    @property
    def duplicable(self) -> bool:
        return self.name in DUPLICABLE

    @property
    def free(self) -> bool:
        """True when the op needs no kernel (a constant, a row-major reshape)."""
        return self.name in FREE

    def infer(self, avals: Avals, params: Mapping[str, Any]) -> ShapeDtype:
        if self.arity is not None and len(avals) != self.arity:
            raise ArgumentTypeError(f"{self.name} takes {self.arity} operands, got {len(avals)}")
        return self.shape_rule(avals, params)

    def format_attrs(self, params: Mapping[str, Any]) -> str:
        return self.attr_format(params) if self.attr_format else ""

    def count_flops(self, avals: Avals, out: ShapeDtype, params: Mapping[str, Any]) -> int:
        return int(self.flops(avals, out, params))

    def count_transcendentals(self, avals: Avals, out: ShapeDtype, params: Mapping[str, Any]) -> int:
        return int(self.transcendentals(avals, out, params))


REGISTRY: dict[str, OpDef] = {}


class UnknownOpError(LabsimError, KeyError):
    pass


def as_op(name) -> Op:
    """The :class:`Op` named ``name`` (a member or its string), or :class:`UnknownOpError`."""
    try:
        return Op(name)
    except ValueError:
        raise UnknownOpError(f"no op named {name!r}; known ops: {sorted(o.value for o in Op)}") from None


def register(op: OpDef) -> OpDef:
    name = as_op(op.name)
    if name in REGISTRY:
        raise ArgumentError(f"op {name!r} is already registered")
    if op.name is not name:
        op = replace(op, name=name)
    REGISTRY[name.value] = op
    return op


def define(name, **rules) -> OpDef:
    """Attach rules (``vjp=...``, ``decompose=...``) to the row of a registered op."""
    row = get(name)
    for k, v in rules.items():
        if getattr(row, k) is not None:
            raise ArgumentError(f"op {row.name!r} already has a {k} rule")
    row = replace(row, **rules)
    REGISTRY[row.name.value] = row
    return row


def get(name) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        as_op(name)  # an unknown name: say so
        raise UnknownOpError(f"op {name!r} is not registered yet (its front end defines it: import labsim)") from None


# ----------------------------------------------------------------------------------------------
# helpers
def _zero(avals, out, params) -> int:
    return 0


def _per_elem(avals, out, params) -> int:
    return out.size


def _fmt_list(xs) -> str:
    return "{" + ",".join(str(int(x)) for x in xs) + "}"


def _elementwise_shape(name: str, avals: Avals, out_dtype: str | None = None) -> ShapeDtype:
    shapes = [a.shape for a in avals if a.shape != ()]
    shape = shapes[0] if shapes else ()
    for s in shapes[1:]:
        if s != shape:
            desc = " and ".join(a.short() for a in avals)
            raise ShapeError(
                f"{name}: operand shapes {desc} differ; elementwise ops need equal shapes or scalars "
                "(labsim.numpy broadcasts NumPy-style before it reaches the IR)"
            )
    return ShapeDtype(shape, out_dtype or result_dtype(*[a.dtype for a in avals]))


def _np(x, dtype) -> np.ndarray:
    return np.asarray(x, dtype=numpy_dtype(dtype))


# ----------------------------------------------------------------------------------------------
# elementwise ops
from . import alu  # noqa: E402

# PTX-like mnemonic of each elementwise op's instruction in labsim's kernel IR (read by the lowering,
# labsim.compiler.emit). Where PTX has no single instruction for the op (exp, log, logistic, erf, pow),
# the IR has one that computes the op's value as the ALU table does, and the listing says which PTX
# sequence it stands for.
_BINARY = {Op.ADD: "add", Op.SUBTRACT: "sub", Op.MULTIPLY: "mul", Op.DIVIDE: "div.rn", Op.MAXIMUM: "max",
           Op.MINIMUM: "min"}


def _alu_impl(name):
    rule = alu.ALU[name]

    def impl(*args, **params):
        with np.errstate(all="ignore"):
            return rule(*args, **params)
    return impl


for _name, _ptx in _BINARY.items():
    register(OpDef(
        name=_name, arity=2,
        shape_rule=lambda avals, p, _n=_name: _elementwise_shape(_n, avals),
        impl=_alu_impl(_name), flops=_per_elem, transcendentals=_zero, hlo=_name.value, ptx=_ptx,
    ))

_UNARY = {Op.NEGATE: "neg", Op.ABS: "abs", Op.EXP: "exp.approx", Op.LOG: "log.approx", Op.TANH: "tanh.approx",
          Op.SQRT: "sqrt.rn", Op.RSQRT: "rsqrt.approx", Op.LOGISTIC: "logistic.approx", Op.FLOOR: "cvt.rmi",
          Op.ERF: "erf.approx"}
_HLO_UNARY = {Op.EXP: "exponential"}

for _name, _ptx in _UNARY.items():
    _trans = _name in TRANSCENDENTAL
    register(OpDef(
        name=_name, arity=1,
        shape_rule=lambda avals, p, _n=_name: _elementwise_shape(_n, avals),
        impl=_alu_impl(_name),
        flops=_zero if _trans else _per_elem,
        transcendentals=_per_elem if _trans else _zero,
        hlo=_HLO_UNARY.get(_name, _name.value), ptx=_ptx,
    ))


register(OpDef(
    name=Op.POWER, arity=2,
    shape_rule=lambda avals, p: _elementwise_shape("power", avals),
    impl=_alu_impl(Op.POWER), flops=_zero, transcendentals=_per_elem, hlo="power", ptx="pow.approx",
))


def _integer_pow_flops(avals, out, params) -> int:
    y = abs(int(params["y"]))
    muls = max(y.bit_length() - 1 + bin(y).count("1") - 1, 0) if y > 0 else 0
    return out.size * (muls + (1 if params["y"] < 0 else 0))


register(OpDef(
    name=Op.INTEGER_POW, arity=1,
    shape_rule=lambda avals, p: _elementwise_shape("integer_pow", avals),
    impl=_alu_impl(Op.INTEGER_POW),
    flops=_integer_pow_flops, transcendentals=_zero, hlo="power", ptx="mul",
    attr_format=lambda p: f", exponent={p['y']}",
    doc="x**y for a Python int y: lowers to repeated multiplies (x**2 is one multiply).",
))

_COMPARE = alu.COMPARE


def _compare_shape(avals, p):
    if p["direction"] not in _COMPARE:
        raise ArgumentError(f"compare: unknown direction {p['direction']!r}; use one of {sorted(_COMPARE)}")
    return _elementwise_shape("compare", avals, out_dtype="bool")


register(OpDef(
    name=Op.COMPARE, arity=2, shape_rule=_compare_shape,
    impl=_alu_impl(Op.COMPARE),
    flops=_per_elem, transcendentals=_zero, hlo="compare", ptx="setp",
    attr_format=lambda p: f", direction={p['direction'].upper()}",
))


def _select_shape(avals, p):
    pred, a, b = avals
    if pred.dtype != "bool":
        raise ArgumentTypeError(f"select: predicate must be bool, got {pred.short()}")
    out = _elementwise_shape("select", avals)
    return ShapeDtype(out.shape, result_dtype(a.dtype, b.dtype))


register(OpDef(
    name=Op.SELECT, arity=3, shape_rule=_select_shape,
    impl=_alu_impl(Op.SELECT), flops=_per_elem, transcendentals=_zero, hlo="select", ptx="selp",
))

register(OpDef(
    name=Op.CONVERT, arity=1,
    shape_rule=lambda avals, p: ShapeDtype(avals[0].shape, canonical_dtype(p["new_dtype"])),
    impl=lambda x, new_dtype: np.asarray(x).astype(numpy_dtype(new_dtype)),
    flops=_zero, transcendentals=_zero, hlo="convert", ptx="cvt",
    doc="Change of dtype; XLA counts no FLOPs for it.",
))


# ----------------------------------------------------------------------------------------------
# reductions
def _check_axes(name: str, aval: ShapeDtype, axes) -> tuple[int, ...]:
    axes = tuple(int(a) for a in axes)
    for a in axes:
        if not 0 <= a < aval.ndim:
            raise ShapeError(f"{name}: axis {a} is out of range for operand {aval.short()} (rank {aval.ndim})")
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: repeated axis in {axes}")
    return axes


def _reduce_shape(name):
    def rule(avals, p):
        (x,) = avals
        axes = _check_axes(name, x, p["axes"])
        if name != Op.REDUCE_SUM:
            empty = [a for a in axes if x.shape[a] == 0]
            if empty:
                raise ShapeError(f"{name}: axis {empty[0]} of {x.short()} is empty, and a {name[7:]} over no elements "
                                 "has no value (NumPy raises too; a sum of nothing is 0)")
        return ShapeDtype(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def _reduce_flops(avals, out, params) -> int:
    return max(avals[0].size - out.size, 0)


for _name, _fn, _comp, _ptx in ((Op.REDUCE_SUM, np.sum, "add", "add"), (Op.REDUCE_MAX, np.max, "maximum", "max"),
                                (Op.REDUCE_MIN, np.min, "minimum", "min")):
    register(OpDef(
        name=_name, arity=1, shape_rule=_reduce_shape(_name),
        impl=lambda x, axes, _n=_name: alu.reduce(_n, x, axes),
        flops=_reduce_flops, transcendentals=_zero, hlo="reduce", ptx=_ptx,
        attr_format=lambda p, _c=_comp: f", dimensions={_fmt_list(p['axes'])}, to_apply={_c}",
    ))


# ----------------------------------------------------------------------------------------------
# contraction: dot_general semantics, printed as HLO ``dot``
def _dot_dims(lhs: ShapeDtype, rhs: ShapeDtype, p):
    (lc, rc), (lb, rb) = p["contracting"], p["batch"]
    for name, aval, dims in (("lhs", lhs, lc + lb), ("rhs", rhs, rc + rb)):
        for d in dims:
            if not 0 <= d < aval.ndim:
                raise ShapeError(f"dot: dimension {d} is out of range for {name} {aval.short()}")
        if len(set(dims)) != len(dims):
            raise ShapeError(f"dot: {name} dimension used twice in {dims}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"dot: lhs and rhs need as many contracting (and batch) dimensions: {p}")
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ld, rd):
            if lhs.shape[a] != rhs.shape[b]:
                raise ShapeError(
                    f"dot: {kind} dimension {a} of lhs {lhs.short()} (size {lhs.shape[a]}) does not match "
                    f"dimension {b} of rhs {rhs.short()} (size {rhs.shape[b]})"
                )
    lfree = [i for i in range(lhs.ndim) if i not in lc + lb]
    rfree = [i for i in range(rhs.ndim) if i not in rc + rb]
    return lc, rc, lb, rb, lfree, rfree


def _dot_shape(avals, p):
    lhs, rhs = avals
    lc, rc, lb, rb, lfree, rfree = _dot_dims(lhs, rhs, p)
    shape = [lhs.shape[i] for i in lb] + [lhs.shape[i] for i in lfree] + [rhs.shape[i] for i in rfree]
    return ShapeDtype(tuple(shape), result_dtype(lhs.dtype, rhs.dtype))


def dot_subscripts(lhs_ndim: int, rhs_ndim: int, contracting, batch) -> tuple[str, str, str]:
    """einsum letters (lhs, rhs, result) of a dot_general: batch dims first, then contracting, then free."""
    (lc, rc), (lb, rb) = contracting, batch
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [""] * lhs_ndim
    rs = [""] * rhs_ndim
    for a, b in zip(lb, rb):
        ls[a] = rs[b] = next(letters)
    for a, b in zip(lc, rc):
        ls[a] = rs[b] = next(letters)
    for i in range(lhs_ndim):
        ls[i] = ls[i] or next(letters)
    for i in range(rhs_ndim):
        rs[i] = rs[i] or next(letters)
    out = [ls[i] for i in lb] + [ls[i] for i in range(lhs_ndim) if i not in lc + lb] + \
          [rs[i] for i in range(rhs_ndim) if i not in rc + rb]
    return "".join(ls), "".join(rs), "".join(out)


def _dot_impl(x, y, contracting, batch, precision="default"):
    L, R, out = dot_subscripts(x.ndim, y.ndim, contracting, batch)
    return np.asarray(np.einsum(f"{L},{R}->{out}", x, y))


def dot_mnk(lhs: ShapeDtype, rhs: ShapeDtype, params) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of a dot_general: the sizes of batch, lhs-free, rhs-free and contracting dims."""
    lc, rc, lb, rb, lfree, rfree = _dot_dims(lhs, rhs, params)
    prod = lambda aval, dims: math.prod(aval.shape[d] for d in dims)
    return prod(lhs, lb), prod(lhs, lfree), prod(rhs, rfree), prod(lhs, lc)


def _dot_flops(avals, out, p) -> int:
    b, m, n, k = dot_mnk(avals[0], avals[1], p)
    return 2 * b * m * n * k


def _dot_fmt(p) -> str:
    (lc, rc), (lb, rb) = p["contracting"], p["batch"]
    s = ""
    if lb:
        s += f", lhs_batch_dims={_fmt_list(lb)}, rhs_batch_dims={_fmt_list(rb)}"
    s += f", lhs_contracting_dims={_fmt_list(lc)}, rhs_contracting_dims={_fmt_list(rc)}"
    if p.get("precision", "default") != "default":  # as HLO prints a non-default precision config
        s += f", operand_precision={{{p['precision']},{p['precision']}}}"
    return s


register(OpDef(
    name=Op.DOT, arity=2, shape_rule=_dot_shape, impl=_dot_impl,
    flops=_dot_flops, transcendentals=_zero, hlo="dot", attr_format=_dot_fmt, ptx="mma",
    doc="dot_general: params contracting=((lhs dims),(rhs dims)), batch=((lhs dims),(rhs dims)), and "
        "optionally precision ('high' or 'highest'; absent means 'default'), which only the cost model reads. "
        "Result dims: batch, then lhs free dims, then rhs free dims (as in HLO).",
))


# the data-movement and constant rows (reshape, transpose, broadcast, slice, concatenate, update_slice,
# constant, iota) live in labsim.core.ops_movement, which the core package imports (registering them)
