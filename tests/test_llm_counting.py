"""Transformer accounting, counting helpers and the capacity limit, against closed forms."""
from __future__ import annotations

import math

import pytest

import labsim as ls
from labsim import counting, llm

S = ls.ShapeDtype

# Published parameter counts (model cards / papers), not labsim output.
PUBLISHED = {"GPT-2 small": 124_439_808, "LLaMA-2-7B": 6_738_415_616, "LLaMA-3-8B": 8_030_261_248,
             "LLaMA-3-70B": 70_553_706_496,
             # Hugging Face model cards / safetensors totals of the released checkpoints
             "LLaMA-2-13B": 13_015_864_320, "LLaMA-2-70B": 68_976_648_192, "Mistral-7B": 7_241_732_096,
             "Mixtral-8x7B": 46_702_792_704}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_param_count_matches_published(name):
    assert llm.param_count(llm.PRESETS[name]) == PUBLISHED[name]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_flops_per_token_close_to_2N_and_6N(name):
    cfg = llm.PRESETS[name]
    n = llm.active_param_count(cfg)  # the parameters a token uses (all of them unless a mixture of experts)
    f = llm.flops_per_token(cfg, seq_len=128)
    assert 1.6 * n < f < 2.4 * n
    assert llm.flops_per_token(cfg, 128, training=True) == 3 * f
    assert sum(llm.flops_split(cfg, 128).values()) == f


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_kv_cache_bytes_per_token_formula(name):
    cfg = llm.PRESETS[name]
    assert llm.kv_cache_bytes_per_token(cfg, "bfloat16") == 2 * cfg.n_layers * cfg.kv_heads * cfg.head_dim * 2
    assert llm.kv_cache_bytes_per_token(cfg, "float32") == 2 * llm.kv_cache_bytes_per_token(cfg, "bfloat16")
    assert llm.weight_bytes(cfg, "bfloat16") == 2 * llm.param_count(cfg)


@pytest.mark.parametrize("part", ["attention", "mlp", "block"])
@pytest.mark.parametrize("mlp,norm,kv", [("gelu", "layernorm", None), ("swiglu", "rmsnorm", 2)])
def test_traced_layer_matmul_flops_equal_closed_form(part, mlp, norm, kv):
    cfg = llm.TransformerConfig("t", d_model=64, n_layers=1, n_heads=4, n_kv_heads=kv, d_ff=160, vocab=1,
                                max_seq=16, mlp=mlp, norm=norm, bias=(mlp == "gelu"))
    B, Sq = 2, 16
    f = llm.layer_fn(cfg, part)
    g = ls.trace(f, S((B, Sq, 64)), *[s for _, s in llm.param_specs(cfg, part)])
    split = llm.flops_split(cfg, Sq)
    per_token = {"attention": split["attention projections"] + split["attention scores"],
                 "mlp": split["MLP"], "block": split["attention projections"] + split["attention scores"] + split["MLP"]}[part]
    assert counting.matmul_flops(g) == B * Sq * per_token
    params = sum(s.size for _, s in llm.param_specs(cfg, part))
    expect = {"attention": llm.attention_params(cfg), "mlp": llm.mlp_params(cfg), "block": llm.layer_params(cfg)}[part]
    assert params == expect


def test_backprop_costs_three_times_forward():
    r = counting.backprop_cost(lambda x, w: x @ w, S((32, 64)), S((64, 16)))
    assert r["forward"] == 2 * 32 * 64 * 16
    assert r["forward+backward"] == 3 * r["forward"]
    r = counting.backprop_cost(lambda x, w: x @ w, S((32, 64)), S((64, 16)), argnums=(1,))
    assert r["forward+backward"] == 2 * r["forward"]  # no gradient for the input: one backward dot


def test_blas_levels_work_and_traffic():
    n = 256
    l1, l2, l3 = (counting.blas(k, n) for k in (1, 2, 3))
    assert (l1.flops, l1.bytes) == (2 * n, 3 * 4 * n)
    assert (l2.flops, l2.bytes) == (2 * n * n, 4 * (n * n + 2 * n))
    assert (l3.flops, l3.bytes) == (2 * n ** 3, 3 * 4 * n * n)
    # intensity: level 1 and 2 stay below one FLOP per byte at any size; level 3 grows like n/6 (float32)
    assert l1.intensity < 1 and l2.intensity < 1
    assert l3.intensity == 2 * n ** 3 / (12 * n * n)
    assert counting.blas(3, 2 * n).intensity == 2 * l3.intensity
    assert abs(counting.blas(2, 2 * n).intensity - l2.intensity) < 0.01
    with pytest.raises(ValueError, match="levels 1, 2 and 3"):
        counting.blas(4, n)


def test_matmul_intensity_closed_form_and_agrees_with_kernel():
    m, n, k = 512, 256, 128
    got = counting.matmul_intensity(m, n, k, "bfloat16")
    assert got == pytest.approx(2 * m * n * k / (2 * (m * k + k * n + m * n)))
    (kern,) = ls.compile(ls.trace(lambda a, b: a @ b, S((m, k), "bfloat16"), S((k, n), "bfloat16"))).kernels
    assert kern.intensity == pytest.approx(got)


def test_out_of_memory_report_names_buffers_and_capacity():
    chip = ls.hardware.PRESETS["H100 SXM"]
    rows = int(chip.hbm_capacity // (4 * 4096)) + 1000  # just over the capacity in float32
    prog = ls.compile(ls.trace(lambda x: x * 2.0, S((rows, 4096))))
    cost = ls.estimate(prog, chip)
    assert not cost.fits
    rep = cost.oom
    assert rep.capacity == int(chip.hbm_capacity) and rep.needed > rep.capacity
    assert rep.largest[0][0] in ("x", "%0")
    with pytest.raises(ls.OutOfMemoryError, match="out of memory on .*H100.*largest live buffers: x"):
        cost.time
    with pytest.raises(ls.OutOfMemoryError):
        ls.simulate(prog, chip)
    small = ls.compile(ls.trace(lambda x: x * 2.0, S((1024, 4096))))
    assert ls.estimate(small, chip).fits and math.isfinite(ls.estimate(small, chip).time)


def test_unknown_model_lists_presets():
    with pytest.raises(KeyError, match="GPT-2 small"):
        llm.get("GPT-5")


# ------------------------------------------------------------------ the models readers meet
@pytest.mark.parametrize("name,billions", [
    ("LLaMA-2-13B", 13.0), ("LLaMA-2-70B", 69.0), ("Mistral-7B", 7.24), ("Mixtral-8x7B", 46.7)])
def test_param_count_rounds_to_the_figure_papers_quote(name, billions):
    """Mistral-7B "7.24B" (Hugging Face card), LLaMA-2-70B ~69B, Mixtral "46.7B total" (Jiang et al. 2024)."""
    digits = len(str(billions).split(".")[1])
    assert round(llm.param_count(name) / 1e9, digits) == billions


def test_mixtral_active_params_are_the_papers_12_9B():
    """Jiang et al. 2024: "47B parameters, but only uses 13B active"; Mistral AI: 46.7B total, 12.9B active."""
    m = llm.PRESETS["Mixtral-8x7B"]
    assert round(llm.active_param_count(m) / 1e9, 1) == 12.9
    assert round(llm.param_count(m) / 1e9, 1) == 46.7
    # total − active = 6 unused experts of 3 · 4096 · 14336 in each of 32 layers
    assert llm.param_count(m) - llm.active_param_count(m) == 32 * 6 * 3 * 4096 * 14336
    for name in ("LLaMA-2-13B", "Mistral-7B", "LLaMA-3-8B"):
        assert llm.active_param_count(name) == llm.param_count(name)


def test_moe_flops_use_active_parameters_and_bytes_read_grow_with_tokens():
    m, dense = llm.PRESETS["Mixtral-8x7B"], llm.PRESETS["Mistral-7B"].with_(sliding_window=None, max_seq=32768)
    # same shape but one expert: Mixtral's FLOPs per token = dense + one more expert + the router
    extra = 2 * m.n_layers * (3 * m.d_model * m.d_ff + m.d_model * m.n_experts)
    assert llm.flops_per_token(m, 1000) == llm.flops_per_token(dense, 1000) + extra
    assert 1.9 * llm.active_param_count(m) < llm.flops_per_token(m, 128) < 2.1 * llm.active_param_count(m)
    assert llm.expected_experts(m, 1) == pytest.approx(2.0)
    assert llm.weight_bytes_read(m, 1) == pytest.approx(2 * llm.active_param_count(m))
    assert llm.weight_bytes_read(m, 10_000) == pytest.approx(llm.weight_bytes(m))
    assert llm.weight_bytes_read(m, 2) < llm.weight_bytes_read(m, 8) < llm.weight_bytes_read(m, 64)
    assert llm.expected_experts(m, 3) == pytest.approx(8 * (1 - 0.75 ** 3))
    with pytest.raises(ValueError, match="labsim traces dense layers only"):
        llm.param_specs(m, "block")


@pytest.mark.parametrize("name,per_token", [
    # vLLM paper (Kwon et al. 2023): 2 (K, V) × 5120 × 40 layers × 2 bytes = 800 KB a token for a 13B model
    ("LLaMA-2-13B", 2 * 5120 * 40 * 2),
    # GQA: 8 KV heads of 128 × 80 layers × 2 × 2 bytes = 320 KiB (LLaMA-2-70B), 8 × 128 × 32 × 2 × 2 = 128 KiB
    ("LLaMA-2-70B", 2 * 80 * 8 * 128 * 2), ("Mistral-7B", 2 * 32 * 8 * 128 * 2), ("Mixtral-8x7B", 2 * 32 * 8 * 128 * 2)])
def test_kv_cache_per_token_in_fp16_as_published(name, per_token):
    assert llm.kv_cache_bytes_per_token(name, "float16") == per_token
    assert llm.kv_cache_bytes_per_token("LLaMA-2-13B", "float16") == 819_200 == 800 * 1024


def test_mistral_sliding_window_caps_the_cache_and_the_attention():
    """Jiang et al. 2023: a rolling buffer of W = 4096 entries; at 8,192 tokens the cache is half."""
    m = llm.PRESETS["Mistral-7B"]
    per = llm.kv_cache_bytes_per_token(m)
    assert llm.kv_cache_bytes(m, 1000) == 1000 * per
    assert llm.kv_cache_bytes(m, 4096) == llm.kv_cache_bytes(m, 8192) == llm.kv_cache_bytes(m, 32768) == 4096 * per
    assert llm.kv_cache_bytes(m, 8192) * 2 == llm.kv_cache_bytes(m.with_(sliding_window=None), 8192)
    assert llm.attention_flops_per_token(m, 8192) == llm.attention_flops_per_token(m, 4096)
    assert llm.kv_cache_bytes("LLaMA-3-8B", 8192) == 8192 * llm.kv_cache_bytes_per_token("LLaMA-3-8B")


def test_sliding_window_traced_attention_matches_numpy_band_mask():
    cfg = llm.TransformerConfig("w", d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, vocab=1,
                                max_seq=16, mlp="swiglu", norm="rmsnorm", bias=False, sliding_window=3)
    import numpy as np
    rng = np.random.default_rng(0)
    Sq = 7
    x = rng.standard_normal((1, Sq, 16))
    wq, wk, wv, wo = (rng.standard_normal(s) * 0.3 for s in [(16, 16), (16, 8), (16, 8), (16, 16)])
    out = llm.attention(cfg, x, wq, wk, wv, wo)
    q = (x @ wq).reshape(1, Sq, 2, 8).transpose(0, 2, 1, 3)
    k = (x @ wk).reshape(1, Sq, 1, 8).transpose(0, 2, 1, 3)
    v = (x @ wv).reshape(1, Sq, 1, 8).transpose(0, 2, 1, 3)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(8)
    i, j = np.arange(Sq)[:, None], np.arange(Sq)[None, :]
    s = np.where((j <= i) & (i - j < 3), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ref = (p @ v).transpose(0, 2, 1, 3).reshape(1, Sq, 16) @ wo
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="sliding window of 3"):
        llm.decode_specs(cfg, "block", 1, 3)


@pytest.mark.parametrize("kw,msg", [
    (dict(sliding_window=0), "sliding_window must be at least 1"),
    (dict(n_experts=8, experts_per_token=9), "experts_per_token 9 exceeds n_experts 8"),
    (dict(n_experts=0), "n_experts must be at least 1")])
def test_bad_new_fields_are_refused_by_name(kw, msg):
    with pytest.raises(ValueError, match=msg):
        llm.PRESETS["Mistral-7B"].with_(**kw)
