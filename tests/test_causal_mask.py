"""Causal masks are computed inside the graph (``iota`` and ``compare``), never stored as constants: a
layer traced at 32,768 tokens holds no constant of more than a few KB (issue 21), and the masks give the
values the old NumPy masks gave."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim.core.ops import Op
from labsim.models import llm
from labsim.support.errors import ArgumentError, ArgumentTypeError

LONG = 32_768
FEW_KB = 4096


def _largest_constant(g) -> int:
    return max((n.attr("value").array.nbytes for n in g.nodes if n.op == Op.CONSTANT), default=0)


@pytest.mark.parametrize("name", ["LLaMA-3-8B", "Mistral-7B"])  # Mistral: a sliding-window mask too
def test_a_layer_traced_at_32k_tokens_stores_no_mask(name):
    cfg = llm.get(name)
    specs = [ls.ShapeDtype((1, LONG, cfg.d_model), "bfloat16")] + [s for _, s in llm.param_specs(cfg, "block", "bfloat16")]
    g = ls.trace(llm.layer_fn(cfg, "block"), *specs)
    assert _largest_constant(g) <= FEW_KB
    iotas = [n for n in g.nodes if n.op == Op.IOTA]
    assert iotas and all(n.out.aval.shape == (LONG, LONG) for n in iotas)


def test_decode_with_many_new_tokens_stores_no_mask():
    cfg = llm.get("LLaMA-3-8B")
    g = ls.trace(llm.decode_fn(cfg, "attention"), *llm.decode_specs(cfg, "attention", 1, 4096, new_tokens=4096))
    assert _largest_constant(g) <= FEW_KB
    assert any(n.op == Op.IOTA for n in g.nodes)


@pytest.mark.parametrize("N,M,k", [(1, None, 0), (5, None, 0), (4, 7, 0), (7, 4, 2), (6, 6, -3), (3, 9, 5),
                                   (5, 2, -9)])
def test_tri_equals_numpy_eagerly_and_traced(N, M, k):
    want = np.tri(N, M, k, dtype=np.float32)
    np.testing.assert_array_equal(lnp.tri(N, M, k), want)
    g = ls.trace(lambda: lnp.tri(N, M, k, dtype="bool"))
    assert not any(n.op == Op.CONSTANT for n in g.nodes)
    np.testing.assert_array_equal(ls.evaluate(g), want.astype(bool))
    for out in (ls.compile(g), ls.compile(g, passes=[])):  # and through the compiler's passes
        np.testing.assert_array_equal(ls.evaluate(out.graph), want.astype(bool))


def test_broadcasted_iota_and_its_errors():
    np.testing.assert_array_equal(lnp.broadcasted_iota("int32", (2, 3), 1), [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(lnp.broadcasted_iota("float32", (3, 1), 0), [[0.0], [1.0], [2.0]])
    with pytest.raises(ArgumentError, match="broadcasted_iota: dimension must be at most 1, got 2"):
        lnp.broadcasted_iota("int32", (2, 3), 2)
    with pytest.raises(ArgumentTypeError, match="broadcasted_iota: dimension must be an integer"):
        lnp.broadcasted_iota("int32", (2, 3), 1.0)
    with pytest.raises(ArgumentError, match="integer or floating dtype, got bool"):
        lnp.broadcasted_iota("bool", (2,), 0)
    with pytest.raises(ArgumentError, match="tri: N must be at least 0, got -1"):
        lnp.tri(-1)


def _old_attention(cfg, x, wq, wk, wv, wo, mask):
    """The attention of ``llm.attention`` in NumPy, masked by an explicit NumPy array as labsim once stored."""
    B, S, d = x.shape
    H, KV, hd = cfg.n_heads, cfg.kv_heads, cfg.head_dim
    split = lambda t, n: t.reshape(B, -1, n, hd).transpose(0, 2, 1, 3)
    q, k, v = split(x @ wq, H), split(x @ wk, KV), split(x @ wv, KV)
    k, v = np.repeat(k, H // KV, axis=1), np.repeat(v, H // KV, axis=1)
    s = np.where(mask, q @ k.swapaxes(-1, -2) * (1.0 / np.sqrt(hd)), -1e30)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(B, -1, d) @ wo


@pytest.mark.parametrize("window", [None, 1, 3])
def test_traced_attention_equals_the_old_mask(window):
    cfg = llm.TransformerConfig("w", d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, vocab=1,
                                max_seq=16, mlp="swiglu", norm="rmsnorm", bias=False, sliding_window=window)
    rng = np.random.default_rng(1)
    S = 9
    x = rng.standard_normal((1, S, 16)).astype(np.float32)
    ws = [(rng.standard_normal(s) * 0.3).astype(np.float32) for s in [(16, 16), (16, 8), (16, 8), (16, 16)]]
    old = np.tril(np.ones((S, S), dtype=bool))
    if window:
        old &= np.subtract.outer(np.arange(S), np.arange(S)) < window
    g = ls.trace(lambda *a: llm.attention(cfg, *a), *(ls.ShapeDtype(a.shape, "float32") for a in (x, *ws)))
    got = ls.evaluate(g, x, *ws)
    np.testing.assert_allclose(got, _old_attention(cfg, x.astype(np.float64), *(w.astype(np.float64) for w in ws), old),
                               rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(llm.attention(cfg, x, *ws), got, rtol=1e-5, atol=1e-6)  # eager lnp agrees


def test_decode_mask_equals_the_old_mask():
    cfg = llm.get("LLaMA-3-8B")
    for T, L in [(1, 4), (3, 0), (4, 5)]:
        N = L + T
        old = np.arange(N)[None, :] <= (L + np.arange(T))[:, None]
        np.testing.assert_array_equal(ls.evaluate(ls.trace(lambda: lnp.tri(T, N, L, dtype="bool"))), old)
    # decode_attention masks with exactly that tri, computed in the graph
    g = ls.trace(llm.decode_fn(cfg, "attention"), *llm.decode_specs(cfg, "attention", 1, 5, new_tokens=4))
    masks = [n for n in g.nodes if n.op == Op.COMPARE and n.out.aval.shape == (4, 9)]
    assert len(masks) == 1 and not any(n.op == Op.CONSTANT for n in g.nodes)


@pytest.mark.parametrize("S,folded", [(128, True), (512, False)])  # MAX_FOLD_ELEMENTS = 65,536 elements
def test_a_small_mask_folds_to_a_constant_and_a_large_one_stays_computed(S, folded):
    g = ls.trace(lambda x: lnp.where(lnp.tri(S, dtype=bool), x, -1e30), ls.ShapeDtype((S, S)))
    prog = ls.compile(g)
    kinds = {n.op for n in prog.graph.nodes}
    assert (Op.IOTA in kinds) is not folded
    assert (Op.CONSTANT in kinds) is folded
    x = np.random.default_rng(2).standard_normal((S, S)).astype(np.float32)
    want = np.where(np.tri(S, dtype=bool), x, np.float32(-1e30))
    np.testing.assert_array_equal(ls.evaluate(prog.graph, x), want)
    np.testing.assert_array_equal(ls.evaluate(g, x), want)
