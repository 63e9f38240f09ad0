"""Parity with the peers' stored numbers: every PyTorch configuration equal; every XLA difference explained."""
from __future__ import annotations

from labsim import parity


def test_torch_flop_counter_parity_all_configurations():
    rows = parity.torch_rows()
    assert len(rows) == 32
    bad = [r for r in rows if not r.match]
    assert not bad, bad


def test_xla_every_difference_explained_and_no_stale_explanations():
    rows = parity.xla_rows()
    assert len(rows) == 22
    for r in rows:
        # every differing number is named in the explanation, and no explanation is stale
        assert r.explained(), (r.name, sorted(r.differs), parity.XLA_EXPLAINED.get(r.name))
    # the exact-match core the book reports
    flops_equal = {r.name for r in rows if r.flops_match}
    assert {"matmul", "ew_fma_relu", "softmax_manual", "common_subexpression", "dead_code",
            "grad_linear_mse", "mlp_forward"} <= flops_equal
