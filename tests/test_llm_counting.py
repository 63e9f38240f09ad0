"""Transformer accounting, counting helpers and the capacity limit, against closed forms."""
from __future__ import annotations

import math

import pytest

import labsim as ls
from labsim import counting, llm

S = ls.ShapeDtype

# Published parameter counts (model cards / papers), not labsim output.
PUBLISHED = {"GPT-2 small": 124_439_808, "LLaMA-2-7B": 6_738_415_616, "LLaMA-3-8B": 8_030_261_248,
             "LLaMA-3-70B": 70_553_706_496}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_param_count_matches_published(name):
    assert llm.param_count(llm.PRESETS[name]) == PUBLISHED[name]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_flops_per_token_close_to_2N_and_6N(name):
    cfg = llm.PRESETS[name]
    n = llm.param_count(cfg)
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
