"""``from_torch`` reads the exported graph before decomposition when labsim has a row for every op
(no ``run_decompositions()``, seconds saved on a 12-layer model), and falls back to the core ATen
decomposition otherwise; ``scaled_dot_product_attention``'s row equals PyTorch on its options."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
from labsim.importers import ImportUnsupportedError, examples


def _torch():
    return pytest.importorskip("torch")


def _equal(fn, *inputs, rtol=1e-5, atol=1e-5):
    torch = _torch()
    g = ls.from_torch(fn, *inputs)
    got = ls.evaluate(g, *ls.torch_arguments(fn, *inputs))
    with torch.no_grad():
        want = fn(*inputs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=rtol, atol=atol)
    return g


def _interpretable(fn, *inputs):
    torch = _torch()
    from labsim.importers import torch_import

    ep = torch.export.export(torch_import._module(fn, torch), tuple(inputs), strict=False)
    return torch_import.interpretable(torch, ep)


def test_the_gpt2_block_skips_the_decomposition_and_still_equals_pytorch():
    torch = _torch()
    block = examples.gpt2_block_torch(examples.random_params(), examples.D_MODEL, examples.HEADS)
    x = torch.randn(examples.BATCH, examples.SEQ, examples.D_MODEL)
    assert _interpretable(block, x)
    _equal(block, x)


def test_an_op_without_a_row_falls_back_to_the_decomposition():
    torch = _torch()

    def f(x):  # aten.flatten has no row; its decomposition is a view, which has one
        return x.flatten(1) * 2.0

    x = torch.randn(2, 3, 4)
    assert not _interpretable(f, x)
    _equal(f, x)


@pytest.mark.parametrize("option", ["causal", "float_mask_scale", "bool_mask", "bool_mask_row_all_false",
                                    "cross_lengths_causal"])
def test_sdpa_row_equals_pytorch(option):
    torch = _torch()
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, 5, 8, generator=g)
    kv_len = 7 if option == "cross_lengths_causal" else 5
    k, v = torch.randn(2, 3, kv_len, 8, generator=g), torch.randn(2, 3, kv_len, 8, generator=g)
    m = torch.randn(5, kv_len, generator=g)
    if option == "bool_mask_row_all_false":
        m[2] = -1.0  # query 2 sees no key: PyTorch gives zeros there

    def f(q, k, v, m):
        if option in ("causal", "cross_lengths_causal"):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True) + 0 * m.sum()
        if option == "float_mask_scale":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m > 0)

    assert _interpretable(f, q, k, v, m)
    _equal(f, q, k, v, m)


def test_sdpa_with_dropout_is_refused_by_name():
    torch = _torch()

    def f(q):
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.1)

    with pytest.raises(ImportUnsupportedError, match="dropout_p=0.1.*module.eval"):
        ls.from_torch(f, torch.randn(1, 2, 4, 8))


def test_sdpa_block_fuses_like_the_lnp_attention():
    """The sdpa row scales the scores once: the same kernels as the hand-written labsim.numpy attention."""
    torch = _torch()
    F = torch.nn.functional
    b, h, t, e = 1, 4, 16, 16

    def twin(q, k, v):
        from labsim.frontend import nn as lnn
        from labsim.frontend import numpy as lnp

        s = q @ lnp.transpose(k, (0, 1, 3, 2)) * (1.0 / float(np.sqrt(e)))
        keep = lnp.reshape(lnp.arange(t), (t, 1)) >= lnp.reshape(lnp.arange(t), (1, t))
        return lnn.softmax(lnp.where(keep, s, -np.inf), axis=-1) @ v

    spec = ls.ShapeDtype((b, h, t, e), "float32")
    g = ls.from_torch(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                      *(torch.zeros(b, h, t, e) for _ in range(3)))
    ours, theirs = ls.compile(g), ls.compile(ls.trace(twin, spec, spec, spec))
    assert len(ours.kernels) == len(theirs.kernels)
    assert ls.estimate(ours, "H100 SXM").flops == ls.estimate(theirs, "H100 SXM").flops
