"""Speculative sampling's accept / resample rule (Leviathan et al. 2023, Algorithm 1): the output is
distributed as the target's p, by closed form and by Monte Carlo; drawing the fix from p instead is biased."""
from __future__ import annotations

import numpy as np
import pytest

from labsim import serving

P = np.array([0.5, 0.2, 0.2, 0.1])
Q = np.array([0.1, 0.6, 0.2, 0.1])  # the draft over-proposes token 1


def test_residual_is_normalised_positive_part():
    r = serving.residual(P, Q)
    np.testing.assert_allclose(r, [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(serving.residual(Q, P), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(serving.residual(P, P), P)  # never rejects; any fix would do


def test_first_token_distribution_is_p_exactly_with_the_residual():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        np.testing.assert_allclose(serving.first_token_distribution(p, q), p, atol=1e-12)
        biased = serving.first_token_distribution(p, q, on_reject="target")
        beta = np.minimum(p, q).sum()
        np.testing.assert_allclose(biased, np.minimum(p, q) + (1 - beta) * p, atol=1e-12)


def test_monte_carlo_first_token_matches_p_and_the_biased_rule_does_not():
    n = 200_000
    good = serving.simulate_first_token(P, Q, n, seed=1)
    bad = serving.simulate_first_token(P, Q, n, seed=1, on_reject="target")
    sd = np.sqrt(P * (1 - P) / n)
    assert np.all(np.abs(good - P) < 5 * sd)
    expect_bad = serving.first_token_distribution(P, Q, on_reject="target")
    assert np.all(np.abs(bad - expect_bad) < 5 * np.sqrt(expect_bad * (1 - expect_bad) / n) + 1e-12)
    assert serving.total_variation(bad, P) > 0.1 > 20 * serving.total_variation(good, P)


def test_full_rounds_emit_tokens_distributed_as_the_target_at_each_position():
    """k = 2 draft tokens with target rows independent of the prefix: every emitted token, at every
    position of the output stream, is distributed as that position's target row."""
    p = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    q = np.array([[0.2, 0.6, 0.2], [0.5, 0.4, 0.1]])
    rng = np.random.default_rng(7)
    rounds = [serving.speculative_sample(p, q, rng=rng) for _ in range(30_000)]
    assert all(1 <= len(r) <= 3 for r in rounds)
    first = np.bincount([r[0] for r in rounds], minlength=3) / len(rounds)
    np.testing.assert_allclose(first, p[0], atol=0.015)
    second = [r[1] for r in rounds if len(r) > 1]
    np.testing.assert_allclose(np.bincount(second, minlength=3) / len(second), p[1], atol=0.02)
    # accepted-all rounds happen with probability β0 · β1
    beta = np.minimum(p[:2], q).sum(axis=1)
    assert abs(np.mean([len(r) == 3 for r in rounds]) - beta.prod()) < 0.015


def test_identical_draft_is_always_accepted():
    p = np.array([[0.25, 0.75], [0.5, 0.5]])
    out = [serving.speculative_sample(p, p[:1], seed=s) for s in range(200)]
    assert all(len(o) == 2 for o in out)


@pytest.mark.parametrize("call,msg", [
    (lambda: serving.speculative_sample([[0.5, 0.5]], [[0.5, 0.5]]), r"p must be \(k \+ 1, V\)"),
    (lambda: serving.residual([0.5, 0.6], [0.5, 0.5]), "p must hold probabilities"),
    (lambda: serving.simulate_first_token(P, Q, 0), "trials must be a whole number"),
    (lambda: serving.simulate_first_token(P, Q, 10, on_reject="p"), "unknown on_reject .*; expected one of"),
    (lambda: serving.speculative_speedup(0.8, 3, 0.1, verify_cost=0), "verify_cost must be > 0")])
def test_bad_input_is_named(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
