"""Serving: decode with a KV cache, attention traffic and the online softmax, KV allocators,
speculative decoding, prefix caching, LoRA and step time, against NumPy and closed forms."""
from __future__ import annotations

import math

import numpy as np
import pytest

import labsim as ls
from labsim import counting, llm, serving

S = ls.ShapeDtype
SMALL = {
    "mha-gelu": llm.TransformerConfig("t1", d_model=64, n_layers=1, n_heads=4, d_ff=160, vocab=1, max_seq=64),
    "gqa-swiglu": llm.TransformerConfig("t2", d_model=64, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=96, vocab=1,
                                        max_seq=64, mlp="swiglu", norm="rmsnorm", bias=False),
}


def _args(specs, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s.shape).astype(np.float32) * 0.3 for s in specs]


# ---------------------------------------------------------------------------------------- decode
@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("new_tokens", [1, 3])
def test_decode_step_equals_full_attention_on_the_last_tokens(name, new_tokens):
    """Attention over a prompt of P + T tokens (causal, no cache), read at its last T rows, is what a decode
    step computes from a cache of the first P tokens' keys and values: the cache is only a memo."""
    cfg = SMALL[name]
    P, T, B = 7, new_tokens, 2
    specs = llm.decode_specs(cfg, "attention", B, P, T)
    x_all = _args([S((B, P + T, cfg.d_model))], 1)[0]
    params = _args(specs[3:], 2)
    names = [n for n, _ in llm.param_specs(cfg, "attention")]
    p = dict(zip(names, params))
    full = llm.attention(cfg, x_all, *[p.get(k) for k in ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")])
    # the cache: keys and values of the first P tokens, (B, KV, P, hd)
    hd, KV = cfg.head_dim, cfg.kv_heads
    proj = lambda w, b: x_all[:, :P] @ w + (b if b is not None else 0)
    k_cache = proj(p["wk"], p.get("bk")).reshape(B, P, KV, hd).transpose(0, 2, 1, 3)
    v_cache = proj(p["wv"], p.get("bv")).reshape(B, P, KV, hd).transpose(0, 2, 1, 3)
    g = ls.trace(llm.decode_fn(cfg, "attention"), *specs)
    out = ls.evaluate(g, x_all[:, P:], k_cache, v_cache, *params)
    np.testing.assert_allclose(out, full[:, P:], rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("B,L,T", [(1, 5, 1), (4, 33, 1), (2, 8, 4)])
def test_decode_flops_equal_traced_and_closed_form(name, B, L, T):
    """Per new token: 2 · (layer matrix parameters) for the projections and MLP, and 2·2·H·hd·(L+T) for
    QKᵀ and PV over the cache plus the new tokens."""
    cfg = SMALL[name]
    g = ls.trace(llm.decode_fn(cfg, "block"), *llm.decode_specs(cfg, "block", B, L, T))
    d, kv, f = cfg.d_model, cfg.kv_heads * cfg.head_dim, cfg.d_ff
    mats = 2 * d * d + 2 * d * kv + (2 if cfg.mlp == "gelu" else 3) * d * f
    expect = B * T * (2 * mats + 4 * cfg.n_heads * cfg.head_dim * (L + T))
    assert counting.matmul_flops(g) == expect == llm.decode_flops(cfg, B, L, T)


def test_decode_block_is_memory_bound_and_prefill_compute_bound_on_h100():
    """A decode step of one sequence reads every weight for 2 FLOPs each: intensity about 1 FLOP/byte in
    bf16, far left of the H100's ridge (~590), so no kernel of a LLaMA-3-8B layer is compute-bound and the
    big matrix kernels are memory-bound. A 2,048-token prefill reuses each weight 2,048 times: its
    weight matrices are compute-bound."""
    cfg = llm.PRESETS["LLaMA-3-8B"]
    dec = ls.estimate(ls.compile(ls.trace(llm.decode_fn(cfg, "block"),
                                          *llm.decode_specs(cfg, "block", 1, 1024, dtype="bfloat16"))), "H100 SXM")
    assert dec.kernels and not any(k.bound.value == "compute" for k in dec.kernels)
    big = [k for k in dec.kernels if k.bytes > 1e7]
    assert len(big) >= 4 and all(k.bound.value == "memory" for k in big)
    assert dec.flops / dec.bytes < 2
    specs = [S((1, 2048, cfg.d_model), "bfloat16")] + [s for _, s in llm.param_specs(cfg, "block", "bfloat16")]
    pre = ls.estimate(ls.compile(ls.trace(llm.layer_fn(cfg, "block"), *specs)), "H100 SXM")
    assert sum(k.bound.value == "compute" for k in pre.kernels) >= 4


def test_decode_bad_cache_shape_is_named():
    cfg = SMALL["gqa-swiglu"]
    specs = llm.decode_specs(cfg, "attention", 2, 5)
    specs[1] = S((2, cfg.n_heads, 5, cfg.head_dim))  # n_heads, not n_kv_heads
    with pytest.raises(ValueError, match="n_kv_heads=2"):
        ls.trace(llm.decode_fn(cfg, "attention"), *specs)
    with pytest.raises(ValueError, match="kv_len must be at least 1"):
        llm.decode_specs(cfg, "block", 1, 0)
    with pytest.raises(ValueError, match="unknown decode part 'mlp'"):
        llm.decode_fn(cfg, "mlp")


# ---------------------------------------------------------------------------------------- attention
@pytest.mark.parametrize("Sq,Sk,d,block,causal", [(16, 16, 8, 4, False), (37, 37, 16, 8, True),
                                                  (5, 40, 8, 16, False), (64, 64, 32, 64, True), (9, 9, 4, 1, True)])
def test_online_softmax_equals_softmax_qk_v(Sq, Sk, d, block, causal):
    rng = np.random.default_rng(Sq + Sk)
    q, k, v = rng.standard_normal((2, Sq, d)) * 3, rng.standard_normal((2, Sk, d)) * 3, rng.standard_normal((2, Sk, d))
    out, _ = serving.flash_attention(q, k, v, block=block, causal=causal)
    np.testing.assert_allclose(out, serving.attention_reference(q, k, v, causal=causal), rtol=1e-10, atol=1e-12)
    # and the reference is softmax(QKᵀ/√d)V written out by hand
    s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((Sq, Sk), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(out, (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-10, atol=1e-12)


def test_online_softmax_survives_large_scores():
    """Scores of 1000: exp overflows without the running maximum."""
    q = np.full((1, 4, 2), 30.0)
    k = np.full((1, 8, 2), 30.0)
    v = np.arange(16.0).reshape(1, 8, 2)
    out, _ = serving.flash_attention(q, k, v, block=3, scale=1.0)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, np.broadcast_to(v.mean(axis=1, keepdims=True), out.shape))


@pytest.mark.parametrize("seq,d,block", [(64, 16, 16), (100, 8, 32), (128, 64, 128)])
def test_fused_traffic_equals_what_the_reference_loads(seq, d, block):
    """Non-causal: the reference reads Q once, K and V once per query block, writes O once: the closed form."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((seq, d)) for _ in range(3))
    _, loaded = serving.flash_attention(q, k, v, block=block)
    t = serving.attention_traffic(seq, d, block=block, fused=True, dtype="float32")
    assert {n: loaded[n] * 4 for n in "QKVO"} == {n: t[n] for n in "QKVO"}
    assert t["S and P"] == 0 and t["total"] == 4 * (2 * seq * d + 2 * seq * d * math.ceil(seq / block))


def test_unfused_traffic_closed_form_and_ratio():
    """Unfused: 4·S·d + 4·S² elements per head; for S ≫ d the S² terms dominate, so fusing cuts the
    traffic by about 4S² / (2·S·d·S/block) = 2·block/d."""
    t = serving.attention_traffic(1024, 64, heads=8, batch=2, fused=False)
    assert t["total"] == 2 * 8 * 2 * (4 * 1024 * 64 + 4 * 1024 ** 2)
    big = serving.attention_traffic(1 << 16, 64, block=128, fused=False)["total"]
    small = serving.attention_traffic(1 << 16, 64, block=128, fused=True)["total"]
    assert big / small == pytest.approx(2 * 128 / 64, rel=0.01)
    with pytest.raises(ValueError, match="block must be"):
        serving.attention_traffic(64, 8, block=0)


# ---------------------------------------------------------------------------------------- allocators
def test_requests_are_seeded():
    a, b = serving.random_requests(50, seed=3), serving.random_requests(50, seed=3)
    assert a == b and a != serving.random_requests(50, seed=4)
    assert all(16 <= r.prompt <= 256 and 16 <= r.output <= 512 for r in a)


@pytest.mark.parametrize("scheme", ["contiguous", "paged"])
def test_allocator_serves_every_request_and_conserves_memory(scheme):
    reqs = serving.random_requests(60, seed=1, rate=0.5)
    r = serving.simulate_kv_allocation(reqs, 8192, scheme=scheme, block=16, snapshot_step=50)
    assert r.finished == len(reqs)
    assert np.all(r.used <= r.reserved) and np.all(r.reserved <= r.capacity)
    assert np.all(r.external <= r.capacity - r.reserved)
    # the snapshot agrees with the totals of its step
    s = r.snapshot_step
    assert (r.snapshot == 1).sum() == r.used[s] and (r.snapshot > 0).sum() == r.reserved[s]


def test_paged_internal_waste_is_under_one_block_per_request():
    """A paged request wastes only the unfilled tail of its last block: < block slots each."""
    reqs = serving.random_requests(80, seed=2, rate=0.5)
    r = serving.simulate_kv_allocation(reqs, 16384, scheme="paged", block=16)
    assert np.all(r.internal < 16 * np.maximum(r.running, 1))
    assert np.all(r.external == 0)


def test_contiguous_single_request_wastes_max_new_minus_output():
    """One request alone: it reserves prompt + max_new and uses prompt + t at step t."""
    req = [serving.Request(0, 0, prompt=10, output=5)]
    r = serving.simulate_kv_allocation(req, 100, scheme="contiguous", max_new=40)
    assert r.steps == 5 and list(r.reserved[:4]) == [50] * 4 and list(r.used[:4]) == [11, 12, 13, 14]
    p = serving.simulate_kv_allocation(req, 100, scheme="paged", block=4)
    assert list(p.reserved[:4]) == [12, 12, 16, 16]  # ceil(tokens / 4) blocks of 4


def test_paged_holds_more_requests_than_contiguous():
    reqs = serving.random_requests(150, seed=0, rate=0.5)
    c = serving.simulate_kv_allocation(reqs, 16384, scheme="contiguous").summary()
    p = serving.simulate_kv_allocation(reqs, 16384, scheme="paged").summary()
    assert p.running > 1.5 * c.running and p.used > c.used and p.steps < c.steps
    assert c.internal > 5 * p.internal


def test_allocator_errors_name_the_limit():
    reqs = [serving.Request(0, 0, 100, 100)]
    with pytest.raises(ValueError, match="needs 200 slots"):
        serving.simulate_kv_allocation(reqs, 150, scheme="contiguous")
    with pytest.raises(ValueError, match="unknown scheme"):
        serving.simulate_kv_allocation(reqs, 150, scheme="buddy")
    with pytest.raises(ValueError, match="max_new 10 is shorter"):
        serving.simulate_kv_allocation(reqs, 1000, scheme="contiguous", max_new=10)


# ---------------------------------------------------------------------------------------- speculative
@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.6, 0.8, 0.95, 1.0])
@pytest.mark.parametrize("k", [0, 1, 4, 7])
def test_speculative_expectation_matches_monte_carlo(alpha, k):
    """E[tokens] = Σ_{i=0..k} α^i (token i+1 arrives if the first i drafts all passed) = (1−α^{k+1})/(1−α)."""
    e = serving.speculative_expected_tokens(alpha, k)
    assert e == pytest.approx(sum(alpha ** i for i in range(k + 1)))
    mc = serving.simulate_speculative(alpha, k, 200_000, seed=k)
    assert mc == pytest.approx(e, abs=0.03)


def test_speculative_speedup_and_errors():
    assert serving.speculative_speedup(0.8, 4, 0.0) == pytest.approx(serving.speculative_expected_tokens(0.8, 4))
    assert serving.speculative_speedup(0.0, 4, 0.1) < 1  # nothing accepted: the draft only costs
    with pytest.raises(ValueError, match="alpha must be in"):
        serving.speculative_expected_tokens(1.5, 2)


# ---------------------------------------------------------------------------------------- prefix cache
def test_block_hashes_name_the_whole_prefix():
    a = list(range(40))
    b = a[:16] + [999] + a[17:]
    ha, hb = serving.block_hashes(a, 8), serving.block_hashes(b, 8)
    assert len(ha) == 5 and ha[:2] == hb[:2] and all(x != y for x, y in zip(ha[2:], hb[2:]))
    assert len(serving.block_hashes(a[:15], 8)) == 1  # the partial block has no hash


def test_prefix_cache_hit_rate_closed_form():
    """n requests with one shared prefix of 4 full blocks and distinct suffixes: the first request misses all,
    each later one hits the 4 prefix blocks and misses its own."""
    reqs = [[7] * 64 + [1000 + i] * 32 for i in range(10)]  # 4 prefix blocks + 2 suffix blocks of 16
    r = serving.prefix_cache(reqs, block=16)
    assert r.hits == 9 * 4 and r.misses == 4 + 10 * 2
    assert r.hit_rate == pytest.approx(36 / 60)
    tiny = serving.prefix_cache(reqs, block=16, capacity_blocks=2)  # LRU too small to keep the prefix
    assert tiny.hits == 0


# ---------------------------------------------------------------------------------------- LoRA, step time
def test_lora_params_closed_form():
    cfg = llm.PRESETS["LLaMA-3-8B"]
    d, kv = cfg.d_model, cfg.kv_heads * cfg.head_dim
    r = 16
    assert serving.lora_params(cfg, r) == cfg.n_layers * r * ((d + d) + (d + kv) + (d + kv) + (d + d))
    with pytest.raises(ValueError, match="not weight matrices"):
        serving.lora_params(cfg, 8, ("w1",))


def test_step_time_prefill_compute_bound_decode_memory_bound():
    h100 = ls.hardware.get("H100 SXM")
    dec = serving.step_time("LLaMA-3-8B", h100, batch=1, kv_len=1024)
    pre = serving.step_time("LLaMA-3-8B", h100, batch=1, new_tokens=4096)
    assert isinstance(dec, ls.KernelCost) and isinstance(pre, serving.StepCost)
    assert dec.bound is ls.Bound.MEMORY and pre.bound is ls.Bound.COMPUTE
    assert pre.flops_used == 1.0 and 0 < dec.flops_used < 0.01
    assert dec.time == max(dec.compute_time, dec.memory_time) and dec.intensity == dec.flops / dec.bytes
    assert dec.time == pytest.approx(dec.bytes / h100.hbm_bandwidth)
    assert dec.bytes == llm.weight_bytes("LLaMA-3-8B") + 1025 * llm.kv_cache_bytes_per_token("LLaMA-3-8B")
    assert pre.flops == 4096 * llm.flops_per_token("LLaMA-3-8B", 4096)


def test_batch_step_time_adds_sequences():
    """A mixed step (decodes + a prompt chunk) reads the weights once: its bytes are the weights plus every
    sequence's cache, its FLOPs the sum of the parts' FLOPs."""
    cfg, chip = "LLaMA-3-8B", "H100 SXM"
    w = llm.weight_bytes(cfg)
    mixed = serving.batch_step_time(cfg, chip, [(1, 100)] * 3 + [(512, 0)])
    parts = [serving.batch_step_time(cfg, chip, [s]) for s in [(1, 100)] * 3 + [(512, 0)]]
    assert mixed.flops == sum(p.flops for p in parts)
    assert mixed.bytes == sum(p.bytes for p in parts) - 3 * w
    assert mixed.tokens == 515
    with pytest.raises(ValueError, match="kv_len must be"):
        serving.batch_step_time(cfg, chip, [(1, -1)])


def test_choices_are_enums_that_accept_their_string():
    reqs = serving.random_requests(20, seed=3)
    a = serving.simulate_kv_allocation(reqs, 4096, scheme="paged")
    b = serving.simulate_kv_allocation(reqs, 4096, scheme=serving.Scheme.PAGED)
    assert a.scheme is serving.Scheme.PAGED and a.scheme == "paged" and a.summary() == b.summary()
    with pytest.raises(ValueError, match="unknown scheme .*; expected one of 'paged', 'contiguous'"):
        serving.simulate_kv_allocation(reqs, 4096, scheme="buddy")
    r = serving.simulate_batching(serving.poisson_requests(5, 1.0), lambda s: 1.0, policy="static")
    assert r.policy is serving.Policy.STATIC
    p, q = [0.5, 0.5], [0.9, 0.1]
    assert np.array_equal(serving.first_token_distribution(p, q, serving.OnReject.TARGET),
                          serving.first_token_distribution(p, q, "target"))
    with pytest.raises(ValueError, match="unknown on_reject .*; expected one of"):
        serving.first_token_distribution(p, q, "resample")


def test_serving_exports_only_its_api():
    assert all(hasattr(serving, n) for n in serving.__all__)
    assert {"np", "math", "hashlib", "llm"}.isdisjoint(serving.__all__)
    assert {"StepCost", "Scheme", "Policy", "OnReject", "batch_step_time"} <= set(serving.__all__)


def test_step_cost_is_the_roofline_of_its_flops_and_bytes():
    """The step's KernelCost reads the chip's matrix peak and HBM bandwidth as the roofline does."""
    h100 = ls.hardware.get("H100 SXM")
    s = serving.step_time("LLaMA-3-8B", h100, batch=64, kv_len=512)
    assert s.peak_flops == h100.matrix_flops["bfloat16"] and s.bandwidth == h100.hbm_bandwidth
    assert s.time == pytest.approx(max(s.flops / s.peak_flops, s.bytes / s.bandwidth), rel=1e-15)
    assert s.ms == pytest.approx(s.time * 1e3)
    with pytest.raises(ValueError, match="seqs is empty"):
        serving.batch_step_time("LLaMA-3-8B", h100, [])
    with pytest.raises(ValueError, match="no matrix rate for dtype int32"):
        serving.step_time("LLaMA-3-8B", h100, batch=1, dtype="int32")


def test_summaries_are_records_not_dicts():
    reqs = serving.random_requests(30, seed=2)
    s = serving.simulate_kv_allocation(reqs, 4096, scheme="contiguous").summary()
    assert isinstance(s, serving.AllocationSummary) and not isinstance(s, dict)
    assert s.scheme == "contiguous" and s.internal == pytest.approx(s.reserved - s.used)
    assert s["used"] == s.used and s.as_dict()["steps"] == s.steps  # the old keys still read
    with pytest.raises(KeyError, match="AllocationSummary has no field 'use'"):
        s["use"]
    b = serving.simulate_batching(serving.poisson_requests(10, 5.0), lambda seqs: 0.01).summary()
    assert isinstance(b, serving.BatchingSummary) and b.policy == "continuous" and b.requests == 10
    p = serving.prefix_cache([[1] * 32, [1] * 32], block=16)
    assert isinstance(p, serving.PrefixCacheStats) and (p.hits, p.misses, p.tokens_skipped) == (2, 2, 32)
