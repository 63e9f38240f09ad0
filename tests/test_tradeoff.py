"""Latency against throughput of a decode batch (labsim.models.tradeoff): closed forms of the roofline step,
the knees, the memory limit, the SLO choice, bad input and the figure."""
from __future__ import annotations

import math

import pytest

from labsim import llm, serving
from labsim.hardware import PRESETS
from labsim.models import tradeoff as tr
from labsim.support.errors import ArgumentError, ArgumentTypeError, LabsimError, OutOfMemoryError

H100 = PRESETS["H100 SXM"]
M = "LLaMA-3-8B"


def test_batch_one_tpot_is_weights_plus_mean_cache_over_bandwidth():
    """Batch 1 is memory-bound: decode step j reads W + kvb·(P + j) bytes, j = 1 … G-1; mean P + G/2."""
    P, G = 1000, 101
    (pt,) = tr.batch_tradeoff(M, H100, [1], prompt=P, output=G)
    w, kvb = llm.weight_bytes(M), llm.kv_cache_bytes_per_token(M)
    assert pt.bound == "memory"
    assert pt.tpot_s == pytest.approx((w + kvb * (P + G / 2)) / H100.hbm_bandwidth, rel=1e-12)
    assert pt.tok_s == pytest.approx(1 / pt.tpot_s)


def test_ttft_is_the_prefill_step_and_grows_linearly_once_compute_bound():
    P = 1024
    a, b = tr.batch_tradeoff(M, H100, [8, 16], prompt=P, output=4)
    assert a.ttft_s == pytest.approx(serving.step_time(M, H100, batch=8, new_tokens=P).time)
    flops = 16 * P * (2 * llm.matmul_params(M) + llm.attention_flops_per_token(M, P))
    assert b.ttft_s == pytest.approx(flops / H100.matrix_flops["bfloat16"], rel=1e-12)
    assert b.ttft_s == pytest.approx(2 * a.ttft_s, rel=1e-12)


def test_tpot_flat_then_growing_and_throughput_rising():
    pts = tr.batch_tradeoff(M, H100, [1, 2, 4, 8, 16, 32, 64], prompt=1024, output=64)
    tpot = [p.tpot_s for p in pts]
    assert all(x < y for x, y in zip(tpot, tpot[1:]))  # never faster with more work
    assert tpot[1] / tpot[0] < 1.02  # flat at small batch: the weights dominate
    assert tpot[-1] / tpot[0] > 1.4  # caches of 64 sequences weigh about half the weights
    thr = [p.tok_s for p in pts]
    assert all(x < y for x, y in zip(thr, thr[1:]))


def test_kv_knee_is_weights_over_one_cache():
    L = 2047
    assert tr.kv_knee(M, L) == pytest.approx(llm.weight_bytes(M) / (llm.kv_cache_bytes_per_token(M) * (L + 1)))


def test_compute_knee_is_the_first_compute_bound_batch():
    L = 128
    b = tr.compute_knee(M, H100, L)
    assert b is not None and b > 1
    assert serving.step_time(M, H100, batch=b, kv_len=L, check=False).bound.value == "compute"
    assert serving.step_time(M, H100, batch=b - 1, kv_len=L, check=False).bound.value == "memory"
    f = 2 * llm.matmul_params(M) + llm.attention_flops_per_token(M, L + 1)
    k = llm.kv_cache_bytes_per_token(M) * (L + 1)
    closed = llm.weight_bytes(M) / (f * H100.hbm_bandwidth / H100.matrix_flops["bfloat16"] - k)
    assert abs(b - math.ceil(closed)) <= 1


def test_no_compute_knee_when_the_cache_keeps_decode_memory_bound():
    """F / K below the ridge: LLaMA-3-8B with 4,096 cached tokens on the H100."""
    L = 4096
    f = 2 * llm.matmul_params(M) + llm.attention_flops_per_token(M, L + 1)
    assert f / (llm.kv_cache_bytes_per_token(M) * (L + 1)) < H100.ridge_point("bfloat16")
    assert tr.compute_knee(M, H100, L) is None


def test_max_batch_fits_and_one_more_does_not():
    P, G = 4096, 129
    mb = tr.max_batch(M, H100, P + G - 1)
    assert mb > 1
    tr.batch_tradeoff(M, H100, [mb], prompt=P, output=G)
    with pytest.raises(OutOfMemoryError, match="batch_tradeoff"):
        tr.batch_tradeoff(M, H100, [mb + 1], prompt=P, output=G)
    assert tr.batch_tradeoff(M, H100, [mb + 1], prompt=P, output=G, check=False)[0].batch == mb + 1
    assert tr.max_batch("LLaMA-3-70B", H100, 10) == 0  # 140 GB of weights on an 80 GB chip


def test_best_batch_meets_the_target():
    pts = tr.batch_tradeoff(M, H100, [1, 8, 32, 64, 128], prompt=1024, output=64)
    slo = (pts[2].tpot_s + pts[3].tpot_s) / 2
    assert tr.best_batch(pts, slo).batch == 32
    assert tr.best_batch(pts, pts[0].tpot_s / 2) is None


@pytest.mark.parametrize("call, err, words", [
    (lambda: tr.batch_tradeoff(M, H100, [], prompt=8, output=8), ArgumentError, "batches is empty"),
    (lambda: tr.batch_tradeoff(M, H100, [0], prompt=8, output=8), ArgumentError, "batches\\[0\\]"),
    (lambda: tr.batch_tradeoff(M, H100, "8", prompt=8, output=8), ArgumentTypeError, "batches"),
    (lambda: tr.batch_tradeoff(M, H100, [1], prompt=8, output=1), ArgumentError, "output"),
    (lambda: tr.batch_tradeoff(M, H100, [1], prompt=8, output=8, dtype="int3"), ArgumentError, "int3"),
    (lambda: tr.best_batch([], 0.01), ArgumentError, "best_batch: points"),
    (lambda: tr.best_batch(tr.batch_tradeoff(M, H100, [1], prompt=8, output=8), -1), ArgumentError, "tpot_slo_s"),
    (lambda: tr.kv_knee(M, -1), ArgumentError, "kv_knee: kv_len"),
    (lambda: tr.kv_knee(M, 8, dtype="int3"), ArgumentError, "kv_knee: dtype: unknown dtype 'int3'"),
    (lambda: tr.compute_knee(M, "no chip", 8), LabsimError, "unknown chip .no chip."),
    (lambda: tr.max_batch(M, H100, 0), ArgumentError, "max_batch: context"),
])
def test_bad_input_is_a_labsim_error_naming_the_function(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_figure_labels_each_batch_and_marks_the_knee():
    from labsim.viz.tradeoff import tradeoff_figure
    pts = tr.batch_tradeoff(M, H100, [1, 4, 16], prompt=128, output=16)
    knee = tr.batch_tradeoff(M, H100, [8], prompt=128, output=16)[0]
    fig = tradeoff_figure(pts, knee=knee, knee_name="compute-bound from", slo_s=0.01)
    assert list(fig.data[0].text) == ["B=1", "B=4", "B=16"]
    assert fig.data[2].name == "compute-bound from (B=8)"
    assert fig.layout.xaxis.type == "log"
    with pytest.raises(ArgumentError, match="tradeoff_figure"):
        tradeoff_figure([1, 2])
