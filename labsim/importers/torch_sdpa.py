"""``aten.scaled_dot_product_attention`` for :mod:`labsim.importers.torch_import`.

Computed as PyTorch's math decomposition computes it: scores ``q @ kᵀ`` times ``scale`` (default
``1/√E``, E the head size), the causal mask (``is_causal``: query i sees keys j ≤ i, a lower triangle
aligned top left) and the ``attn_mask`` (a boolean mask keeps where True; a float mask is added), a
softmax over the keys, then ``@ v``. Where a mask leaves a query no key at all, PyTorch's decomposition
gives zeros instead of the softmax's NaN; so does this row. One difference in the order of operations:
the decomposition scales q and k by √scale each, labsim scales the scores once (as a reader's
``labsim.numpy`` attention does), equal up to float rounding.
"""
from __future__ import annotations

import math

import numpy as np

from ..frontend import nn as lnn
from ..frontend import numpy as lnp
from .common import ImportUnsupportedError

FN = "from_torch"


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False, **_):
    """``F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale=, enable_gqa=)``."""
    if dropout_p:
        raise ImportUnsupportedError(f"{FN}: scaled_dot_product_attention with dropout_p={dropout_p} draws "
                                     "random numbers, which labsim does not model; accepted: dropout_p=0.0 "
                                     "(pass dropout_p=0.0, or dropout_p=p if self.training else 0.0, and "
                                     "call module.eval())")
    if q.ndim < 2 or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ImportUnsupportedError(f"{FN}: scaled_dot_product_attention with q, k, v of ranks {q.ndim}, "
                                     f"{k.ndim}, {v.ndim}; accepted: equal ranks of at least 2")
    if q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        raise ImportUnsupportedError(f"{FN}: scaled_dot_product_attention with {q.shape[-3]} query heads and "
                                     f"{k.shape[-3]} key heads (enable_gqa={enable_gqa}); labsim imports "
                                     "equal head counts: repeat k and v with repeat_interleave first")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    perm = tuple(range(k.ndim - 2)) + (k.ndim - 1, k.ndim - 2)
    s = q @ lnp.transpose(k, perm) * scale
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        keep = lnp.reshape(lnp.arange(L), (L, 1)) >= lnp.reshape(lnp.arange(S), (1, S))
        s = lnp.where(keep, s, -np.inf)
    if attn_mask is not None:
        s = lnp.where(attn_mask, s, -np.inf) if str(attn_mask.dtype) == "bool" else s + attn_mask
    p = lnn.softmax(s, axis=-1)
    if attn_mask is not None:  # a query with every key masked: zeros, as the decomposition gives
        seen = lnp.max(lnp.astype(lnp.not_equal(s, -np.inf), "int32"), axis=-1, keepdims=True)
        p = lnp.where(lnp.not_equal(seen, 0), p, 0.0)
    return p @ v
