"""``lnp``'s contractions: ``dot``, ``matmul``, ``einsum``, ``outer``, each a ``dot_general`` node, and
the ``precision=`` argument as ``jnp.dot`` has it."""
from __future__ import annotations
from ...support.errors import ArgumentError

import builtins

import numpy as _np

from ...core.avals import ShapeError
from ...core.trace import bind
from .arrays import _check, _promote, _shape, broadcast_to
from .elementwise import multiply
from .reductions import sum
from .shapes import reshape, squeeze, transpose


# ----------------------------------------------------------------------------------------------
# contractions
# ``precision=`` as in ``jnp.dot`` / ``jax.lax.Precision``: how a float32 product may be computed.
# JAX's documented meaning, which labsim's cost model follows (labsim.machines.roofline):
#   "default" (alias "fastest", "bfloat16"): TF32 tensor cores on NVIDIA GPUs that have them (A100 and
#       later), one bfloat16 pass on the TPU's MXU;
#   "high" (alias "bfloat16_3x", "tensorfloat32"): TF32 on NVIDIA GPUs, three bfloat16 passes on TPU;
#   "highest" (alias "float32"): full float32 (CUDA cores on GPUs), six bfloat16 passes on TPU.
# bfloat16 and float16 dots are computed in their own format whatever the precision.
PRECISIONS = ("default", "high", "highest")
_PRECISION_ALIASES = {"default": "default", "fastest": "default", "bfloat16": "default",
                      "high": "high", "bfloat16_3x": "high", "tensorfloat32": "high",
                      "highest": "highest", "float32": "highest"}


def _precision(precision, op: str) -> str:
    """Normalise ``precision`` (None, a name, a ``jax.lax.Precision``-like enum, or a pair of them)."""
    if precision is None:
        return "default"
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ArgumentError(f"{op}: precision must be one value or a pair (lhs, rhs), got {precision!r}")
        a, b = (_precision(p, op) for p in precision)
        return builtins.max(a, b, key=PRECISIONS.index)  # the more precise operand decides, as XLA does
    name = getattr(precision, "name", precision)  # jax.lax.Precision.HIGHEST -> "HIGHEST"
    if isinstance(name, str) and name.lower() in _PRECISION_ALIASES:
        return _PRECISION_ALIASES[name.lower()]
    raise ArgumentError(f"{op}: unknown precision {precision!r}; use None, 'default', 'high' or 'highest' "
                     "(or jax.lax.Precision.DEFAULT / HIGH / HIGHEST)")


def _dot_general(x, y, contracting, batch=((), ()), precision: str = "default"):
    x, y = _promote("dot", x, y)
    if precision != "default":  # recorded only when it is not the default, as HLO prints it
        return bind("dot", x, y, contracting=contracting, batch=batch, precision=precision)
    return bind("dot", x, y, contracting=contracting, batch=batch)


def dot(a, b, *, precision=None):
    """``jnp.dot``: contracts the last axis of ``a`` with the second-to-last of ``b`` (or its only axis).

    ``precision`` as in JAX (None/"default", "high", "highest", or ``jax.lax.Precision`` names): it is
    recorded on the ``dot`` node and decides the rate of a float32 product (see ``PRECISIONS``).
    """
    precision = _precision(precision, "dot")
    _check("dot", a, b)
    sa, sb = _shape(a), _shape(b)
    if sa == () or sb == ():
        return multiply(a, b)
    cb = 0 if len(sb) == 1 else len(sb) - 2
    if sa[-1] != sb[cb]:
        raise ShapeError(f"dot: shapes {sa} and {sb} are not aligned: {sa[-1]} (dim {len(sa) - 1}) != {sb[cb]} (dim {cb})")
    return _dot_general(a, b, ((len(sa) - 1,), (cb,)), precision=precision)


def matmul(a, b, *, precision=None):
    """``jnp.matmul`` / ``@``: batched matrix product with NumPy's batch broadcasting (``precision`` as in :func:`dot`)."""
    precision = _precision(precision, "matmul")
    _check("matmul", a, b)
    sa, sb = _shape(a), _shape(b)
    if sa == () or sb == ():
        raise ShapeError(f"matmul: operands must not be scalars, got shapes {sa} and {sb}")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ShapeError(f"matmul: shapes {sa} and {sb} do not match in the contracted dimension ({ka} != {kb})")
    if len(sa) <= 2 and len(sb) <= 2 or len(sb) <= 2:
        return _dot_general(a, b, ((len(sa) - 1,), (0 if len(sb) == 1 else len(sb) - 2,)), precision=precision)
    # both have batch dims (or b has and a is a matrix): broadcast batch dims, then a batched dot
    ba, bb = sa[:-2], sb[:-2]
    try:
        bshape = _np.broadcast_shapes(ba, bb)
    except ValueError:
        raise ShapeError(f"matmul: batch shapes {ba} and {bb} cannot be broadcast ({sa} @ {sb})") from None
    a_is_vector = len(sa) == 1  # NumPy: a 1-D lhs gets a unit row, removed again from the result
    if a_is_vector:
        a = reshape(a, (1, sa[0]))
        sa = (1, sa[0])
    a = broadcast_to(a, bshape + sa[-2:])
    b = broadcast_to(b, bshape + sb[-2:])
    nb = len(bshape)
    out = _dot_general(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))), precision=precision)
    if a_is_vector:
        out = squeeze(out, nb)
    return out


def einsum(subscripts: str, *operands, precision=None):
    """Two-operand (or one-operand) ``einsum`` lowered to one ``dot`` plus a transpose, as XLA does.

    ``precision`` as in :func:`dot`."""
    precision = _precision(precision, "einsum")
    if "..." in subscripts:
        raise ArgumentError("einsum: '...' is not supported by labsim")
    if "->" not in subscripts:
        raise ArgumentError("einsum: labsim needs an explicit output, e.g. 'bf,fd->bd'")
    if not isinstance(subscripts, str) or subscripts.count("->") != 1:
        raise ArgumentError(f"einsum: subscripts {subscripts!r} need exactly one '->' and one output, e.g. 'ij,jk->ik'")
    ins, out = subscripts.split("->")
    if "," in out:
        raise ArgumentError(f"einsum: subscripts {subscripts!r} name more than one output; labsim computes one output")
    specs = ins.split(",")
    for part in (*specs, out):
        bad = next((ch for ch in part if not (ch.isascii() and ch.isalpha())), None)
        if bad is not None:
            raise ArgumentError(f"einsum: subscripts {subscripts!r} hold {bad!r}; they may hold only letters (one per "
                             "axis), commas between operands and one '->'")
    if len(specs) != len(operands) or len(specs) not in (1, 2):
        raise ArgumentError(f"einsum: {subscripts!r} names {len(specs)} operand(s) but {len(operands)} were given "
                         "(labsim supports one or two)")
    _check("einsum", *operands)
    for s, x in zip(specs, operands):
        if len(s) != len(_shape(x)):
            raise ShapeError(f"einsum: operand spec {s!r} has {len(s)} letters but the operand has shape {_shape(x)}")
        if len(set(s)) != len(s):
            raise ArgumentError(f"einsum: repeated index in {s!r} (diagonals) is not supported")
    sizes: dict[str, int] = {}
    for s, x in zip(specs, operands):
        for ch, d in zip(s, _shape(x)):
            if sizes.setdefault(ch, d) != d:
                raise ShapeError(f"einsum: index {ch!r} has size {sizes[ch]} in one operand and {d} in another "
                                 f"({subscripts!r}, shapes {', '.join(str(_shape(o)) for o in operands)})")
    for ch in out:
        if ch not in sizes:
            raise ArgumentError(f"einsum: output index {ch!r} appears in no operand")

    def presum(x, s, keep: str):
        drop = [i for i, ch in enumerate(s) if ch not in keep]
        if drop:
            x = sum(x, axis=tuple(drop))
            s = "".join(ch for ch in s if ch in keep)
        return x, s

    if len(operands) == 1:
        x, s = presum(operands[0], specs[0], out)
        return transpose(x, [s.index(ch) for ch in out])
    (a, sa), (b, sb) = (operands[0], specs[0]), (operands[1], specs[1])
    a, sa = presum(a, sa, sb + out)
    b, sb = presum(b, sb, sa + out)
    batch = [ch for ch in sa if ch in sb and ch in out]
    contract = [ch for ch in sa if ch in sb and ch not in out]
    res = _dot_general(a, b, (tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
                       (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)), precision=precision)
    got = "".join(batch) + "".join(ch for ch in sa if ch not in sb) + "".join(ch for ch in sb if ch not in sa)
    return transpose(res, [got.index(ch) for ch in out])


def outer(a, b):
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


