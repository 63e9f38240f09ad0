"""``labsim.nn``: neural-network helpers mirroring ``jax.nn`` (relu, gelu, softmax, ...) plus layer_norm.

``softmax``, ``gelu`` and ``layer_norm`` are *composite* ops: tracing records one node for each, and the
compiler's decomposition pass (see "The compiler at work") expands it into primitives, in the spirit of
PyTorch's core-ATen decomposition. Their FLOPs are, by construction, those of the decomposition.
"""
from __future__ import annotations

import math
import numbers

import numpy as _np

from ..core.avals import ShapeDtype, ShapeError
from ..core.dtypes import is_float, result_dtype
from ..core.trace import Tracer, bind, register_composite
from . import numpy as lnp
from .numpy.arrays import _dtype, _norm_axis, _shape
from .numpy.elementwise import _unary


def relu(x):
    return lnp.maximum(x, 0)  # a weak 0: an int array stays int, as in jax.nn.relu


def sigmoid(x):
    return _unary("logistic", x)


def silu(x):
    return lnp.multiply(x, sigmoid(x))


swish = silu


def _one_axis(axis, x, op: str) -> int:
    """One axis of ``x``, normalised; a tuple, a float or a bool is refused with a clear ShapeError."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise ShapeError(f"{op}: axis must be one int, got {type(axis).__name__} {axis!r} "
                         f"(labsim's {op} works along a single axis)")
    return _norm_axis(axis, len(_shape(x)), op)


# -- softmax ------------------------------------------------------------------------------------
def _same_shape(avals, p):
    return avals[0]


def _softmax_decompose(x, axis):
    if x.shape[axis] == 0:  # nothing to normalise: the result is as empty as x (JAX returns it too)
        return x * 1.0
    m = lnp.max(x, axis=axis, keepdims=True)
    ex = lnp.exp(x - m)
    return ex / lnp.sum(ex, axis=axis, keepdims=True)


def _softmax_impl(x, axis):
    m = _np.max(x, axis=axis, keepdims=True, initial=-_np.inf)  # -inf over an empty axis, as in jax.nn.softmax
    ex = _np.exp(x - m)
    return ex / _np.sum(ex, axis=axis, keepdims=True)


register_composite("softmax", _same_shape, _softmax_impl, _softmax_decompose,
                        attr_format=lambda p: f", axis={p['axis']}")


def softmax(x, axis: int = -1):
    """Numerically stable softmax along ``axis`` (a composite op)."""
    if _dtype(x) is None or not is_float(_dtype(x)):
        x = lnp.astype(lnp.asarray(x), "float32")
    axis = _one_axis(axis, x, "softmax")
    return bind("softmax", x, axis=axis)


# -- gelu ---------------------------------------------------------------------------------------
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_decompose(x, approximate):
    if approximate:
        cdf = 0.5 * (1.0 + lnp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return 0.5 * x * (1.0 + lnp.erf(x / math.sqrt(2.0)))


def _gelu_impl(x, approximate):
    if approximate:
        return x * 0.5 * (1.0 + _np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))
    erf = _np.vectorize(math.erf, otypes=[_np.float64])
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype)


register_composite("gelu", _same_shape, _gelu_impl, _gelu_decompose,
                        attr_format=lambda p: f", approximate={str(bool(p['approximate'])).lower()}")


def gelu(x, approximate: bool = True):
    """GELU; ``approximate=True`` is the tanh form (``jax.nn.gelu``'s default)."""
    if _dtype(x) is None or not is_float(_dtype(x)):
        x = lnp.astype(lnp.asarray(x), "float32")
    return bind("gelu", x, approximate=bool(approximate))


# -- layer norm ---------------------------------------------------------------------------------
# One composite op, ``layer_norm(x[, gamma][, beta])``: the normalisation and its optional affine
# scale and shift, as PyTorch's native layer_norm is one kernel. Which of gamma and beta are present is
# an attribute (``scale``, ``shift``), and they follow x as operands.
def _ln_shape(avals, p):
    x, *affine = avals
    if len(affine) != int(p["scale"]) + int(p["shift"]):
        raise ShapeError(f"layer_norm: scale={p['scale']}, shift={p['shift']} needs {int(p['scale']) + int(p['shift'])} "
                         f"parameter operand(s), got {len(affine)}")
    for a in affine:
        try:
            ok = _np.broadcast_shapes(a.shape, x.shape) == x.shape
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(f"layer_norm: parameter {a.short()} does not broadcast to the input {x.short()}")
    return ShapeDtype(x.shape, result_dtype(*[a.dtype for a in avals]))


def _affine(y, affine, scale, shift):
    gamma = affine[0] if scale else None
    beta = affine[-1] if shift else None
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def _ln_decompose(x, *affine, axis, eps, scale=False, shift=False):
    mu = lnp.mean(x, axis=axis, keepdims=True)
    xc = x - mu
    var = lnp.mean(xc * xc, axis=axis, keepdims=True)
    return _affine(xc * lnp.rsqrt(var + eps), affine, scale, shift)


def _ln_impl(x, *affine, axis, eps, scale=False, shift=False):
    if x.shape[axis] == 0:  # an empty axis: the result is as empty as x; NumPy would warn "mean of empty slice"
        return _affine(x.astype(x.dtype, copy=True), affine, scale, shift)
    mu = x.mean(axis=axis, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=axis, keepdims=True)
    return _affine(xc / _np.sqrt(var + eps), affine, scale, shift)


register_composite(
    "layer_norm", _ln_shape, _ln_impl, _ln_decompose,
    attr_format=lambda p: f", axis={p['axis']}, epsilon={p['eps']}"
                          + (f", scale={str(bool(p['scale'])).lower()}, shift={str(bool(p['shift'])).lower()}"
                             if p.get("scale") or p.get("shift") else ""))


def _ln(x, gamma, beta, axis, eps):
    if _dtype(x) is None or not is_float(_dtype(x)):
        x = lnp.astype(lnp.asarray(x), "float32")
    axis = _one_axis(axis, x, "layer_norm")
    affine = [lnp.asarray(a) if not isinstance(a, (Tracer, _np.ndarray)) else a for a in (gamma, beta) if a is not None]
    return bind("layer_norm", x, *affine, axis=axis, eps=float(eps), scale=gamma is not None, shift=beta is not None)


def standardize(x, axis: int = -1, epsilon: float = 1e-5):
    """(x - mean) / sqrt(var + eps) along ``axis`` (``jax.nn.standardize``), a composite op."""
    return _ln(x, None, None, axis, epsilon)


def layer_norm(x, gamma=None, beta=None, axis: int = -1, eps: float = 1e-5):
    """Layer normalisation ``standardize(x) * gamma + beta`` (gamma and beta optional): one composite op,
    as PyTorch's native ``layer_norm`` is one kernel; the compiler's decompose pass expands it."""
    return _ln(x, gamma, beta, axis, eps)


__all__ = ["relu", "sigmoid", "silu", "swish", "softmax", "gelu", "standardize", "layer_norm"]
