"""Static vs continuous batching: closed forms on small streams with a unit step cost, and the fast
step cost against serving.batch_step_time."""
from __future__ import annotations

import numpy as np
import pytest

from labsim import llm, serving

R = serving.TimedRequest
UNIT = lambda seqs: 1.0  # every step takes one second


def test_two_requests_one_batch_closed_form():
    """Outputs 1 and 3 arriving together, batch 2: a prefill step (first tokens), then 2 decode steps."""
    reqs = [R(0, 0.0, 10, 1), R(1, 0.0, 10, 3)]
    st = serving.simulate_batching(reqs, UNIT, policy="static", max_batch=2)
    co = serving.simulate_batching(reqs, UNIT, policy="continuous", max_batch=2)
    np.testing.assert_array_equal(st.finish, [3, 3])  # static returns both when the batch ends
    np.testing.assert_array_equal(co.finish, [1, 3])  # continuous returns each when it is done
    np.testing.assert_array_equal(st.first_token, [1, 1])
    np.testing.assert_array_equal(st.step_batch, [2, 1, 1])  # the finished request stops computing


def test_continuous_fills_the_free_slot():
    """Outputs (1, 3, 1), batch 2. Static: {0, 1} end at 3, then 2 alone ends at 4. Continuous: 2 joins at
    step 2 (its prefill beside 1's decode) and ends at 2; 1 ends at 3."""
    reqs = [R(0, 0.0, 4, 1), R(1, 0.0, 4, 3), R(2, 0.0, 4, 1)]
    st = serving.simulate_batching(reqs, UNIT, policy="static", max_batch=2)
    co = serving.simulate_batching(reqs, UNIT, policy="continuous", max_batch=2)
    np.testing.assert_array_equal(st.finish, [3, 3, 4])
    np.testing.assert_array_equal(co.finish, [1, 3, 2])
    assert st.summary().throughput_tok_s == pytest.approx(5 / 4)
    assert co.summary().throughput_tok_s == pytest.approx(5 / 3)
    assert co.summary().mean_latency_s == pytest.approx(2.0)
    np.testing.assert_array_equal(co.step_batch, [2, 2, 1])


def test_idle_engine_waits_for_the_next_arrival():
    reqs = [R(0, 0.0, 4, 2), R(1, 10.0, 4, 2)]
    for policy in ("static", "continuous"):
        r = serving.simulate_batching(reqs, UNIT, policy=policy, max_batch=4)
        np.testing.assert_array_equal(r.finish, [2, 12])
        np.testing.assert_array_equal(r.latency, [2, 2])


def test_equal_requests_arriving_together_are_the_same_under_both_policies():
    """n equal requests, batch ≥ n: one prefill step and output − 1 decode steps, both policies."""
    reqs = [R(i, 0.0, 8, 5) for i in range(4)]
    cost = serving.step_cost("LLaMA-3-8B", "H100 SXM")
    a = serving.simulate_batching(reqs, cost, policy="static", max_batch=4)
    b = serving.simulate_batching(reqs, cost, policy="continuous", max_batch=4)
    np.testing.assert_allclose(a.finish, b.finish)
    expect = serving.batch_step_time("LLaMA-3-8B", "H100 SXM", [(8, 0)] * 4).time + sum(
        serving.batch_step_time("LLaMA-3-8B", "H100 SXM", [(1, 8 + g)] * 4).time for g in range(1, 5))
    assert a.finish[0] == pytest.approx(expect)


@pytest.mark.parametrize("model", ["LLaMA-3-8B", "Mistral-7B", "Mixtral-8x7B"])
def test_step_cost_equals_batch_step_time(model):
    cost = serving.step_cost(model, "H100 SXM", check=False)  # Mixtral's 87 GiB exceed the H100's 80; contexts to 9,600
    rng = np.random.default_rng(0)
    for _ in range(20):
        seqs = [(int(t), int(l)) for t, l in zip(rng.integers(1, 600, 5), rng.integers(0, 9000, 5))]
        assert cost(seqs) == pytest.approx(serving.batch_step_time(model, "H100 SXM", seqs, check=False).time, rel=1e-12)


def test_continuous_beats_static_on_a_loaded_stream():
    reqs = serving.poisson_requests(200, 60.0, seed=0)
    cost = serving.step_cost("LLaMA-3-8B", "H100 SXM")
    s, c = (serving.simulate_batching(reqs, cost, policy=p, max_batch=64).summary() for p in ("static", "continuous"))
    assert c.throughput_tok_s > 1.2 * s.throughput_tok_s
    assert c.mean_latency_s < s.mean_latency_s / 2
    assert s.tokens == c.tokens == sum(r.output for r in reqs)


def test_moe_step_reads_more_experts_at_larger_batch():
    one = serving.step_time("Mixtral-8x7B", "H200", batch=1, kv_len=100)
    many = serving.step_time("Mixtral-8x7B", "H200", batch=64, kv_len=100)
    kv = llm.kv_cache_bytes_per_token("Mixtral-8x7B")
    assert one.bytes == pytest.approx(2 * llm.active_param_count("Mixtral-8x7B") + 101 * kv)
    assert many.bytes - 64 * 101 * kv == pytest.approx(llm.weight_bytes_read("Mixtral-8x7B", 64))
    assert one.flops == 2 * llm.matmul_params("Mixtral-8x7B") + llm.attention_flops_per_token("Mixtral-8x7B", 101)


@pytest.mark.parametrize("call,msg", [
    (lambda: serving.simulate_batching([R(0, 0.0, 4, 1)], UNIT, policy="eager"), "unknown policy .*; expected one of"),
    (lambda: serving.simulate_batching([R(0, 0.0, 4, 1)], UNIT, max_batch=0), "max_batch must be"),
    (lambda: serving.simulate_batching([], UNIT), "no requests"),
    (lambda: serving.simulate_batching([R(0, 0.0, 4, 0)], UNIT), "output >= 1"),
    (lambda: serving.poisson_requests(5, 0), "rate must be > 0"),
    (lambda: serving.step_cost("LLaMA-3-8B", "H100 SXM", dtype="int3"), "no matrix rate")])
def test_bad_input_is_named(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_occupancy_bins_are_time_averages_of_the_batch():
    from labsim.viz import serving as vserving
    reqs = [R(0, 0.0, 4, 1), R(1, 0.0, 4, 3), R(2, 0.0, 4, 1), R(3, 5.0, 4, 1)]
    co = serving.simulate_batching(reqs, UNIT, policy="continuous", max_batch=2)
    # steps: [0,1) 2 requests, [1,2) 2, [2,3) 1, idle until 5, [5,6) 1
    x, y = vserving.occupancy(co, points=6)
    np.testing.assert_allclose(x, np.arange(6) + 0.5)
    np.testing.assert_allclose(y, [2, 2, 1, 0, 0, 1])
    x, y = vserving.occupancy(co, points=2)
    np.testing.assert_allclose(y, [5 / 3, 1 / 3])
    fig = vserving.batching_figure({"continuous": co})
    assert len(fig.data) == 2
