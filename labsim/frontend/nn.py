"""``labsim.nn``: neural-network helpers mirroring ``jax.nn`` (relu, gelu, softmax, ...) plus layer_norm.

``softmax``, ``gelu`` and ``layer_norm`` are *composite* ops: tracing records one node for each, and the
compiler's decomposition pass (see "The compiler at work") expands it into primitives, in the spirit of
PyTorch's core-ATen decomposition. Their FLOPs are, by construction, those of the decomposition.
"""
from __future__ import annotations

import math
import numbers

import numpy as _np

from ..core.avals import ShapeError
from ..core.trace import bind, register_composite
from . import numpy as lnp


def relu(x):
    return lnp.maximum(x, 0.0)


def sigmoid(x):
    return lnp._unary("logistic", x)


def silu(x):
    return lnp.multiply(x, sigmoid(x))


swish = silu


def _one_axis(axis, x, op: str) -> int:
    """One axis of ``x``, normalised; a tuple, a float or a bool is refused with a clear ShapeError."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise ShapeError(f"{op}: axis must be one int, got {type(axis).__name__} {axis!r} "
                         f"(labsim's {op} works along a single axis)")
    return lnp._norm_axis(axis, len(lnp._shape(x)), op)


# -- softmax ------------------------------------------------------------------------------------
def _same_shape(avals, p):
    return avals[0]


def _softmax_decompose(x, axis):
    m = lnp.max(x, axis=axis, keepdims=True)
    ex = lnp.exp(x - m)
    return ex / lnp.sum(ex, axis=axis, keepdims=True)


def _softmax_impl(x, axis):
    m = _np.max(x, axis=axis, keepdims=True)
    ex = _np.exp(x - m)
    return ex / _np.sum(ex, axis=axis, keepdims=True)


register_composite("softmax", _same_shape, _softmax_impl, _softmax_decompose,
                        attr_format=lambda p: f", axis={p['axis']}")


def softmax(x, axis: int = -1):
    """Numerically stable softmax along ``axis`` (a composite op)."""
    if lnp._dtype(x) is None or not lnp.is_float(lnp._dtype(x)):
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
    if lnp._dtype(x) is None or not lnp.is_float(lnp._dtype(x)):
        x = lnp.astype(lnp.asarray(x), "float32")
    return bind("gelu", x, approximate=bool(approximate))


# -- layer norm ---------------------------------------------------------------------------------
def _ln_decompose(x, axis, eps):
    mu = lnp.mean(x, axis=axis, keepdims=True)
    xc = x - mu
    var = lnp.mean(xc * xc, axis=axis, keepdims=True)
    return xc * lnp.rsqrt(var + eps)


def _ln_impl(x, axis, eps):
    mu = x.mean(axis=axis, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=axis, keepdims=True)
    return xc / _np.sqrt(var + eps)


register_composite("layer_norm", _same_shape, _ln_impl, _ln_decompose,
                        attr_format=lambda p: f", axis={p['axis']}, epsilon={p['eps']}")


def standardize(x, axis: int = -1, epsilon: float = 1e-5):
    """(x - mean) / sqrt(var + eps) along ``axis`` (``jax.nn.standardize``), a composite op."""
    if lnp._dtype(x) is None or not lnp.is_float(lnp._dtype(x)):
        x = lnp.astype(lnp.asarray(x), "float32")
    axis = _one_axis(axis, x, "layer_norm")
    return bind("layer_norm", x, axis=axis, eps=float(epsilon))


def layer_norm(x, gamma=None, beta=None, axis: int = -1, eps: float = 1e-5):
    """Layer normalisation: ``standardize(x) * gamma + beta`` (gamma and beta optional)."""
    y = standardize(x, axis, eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


__all__ = ["relu", "sigmoid", "silu", "swish", "softmax", "gelu", "standardize", "layer_norm"]
