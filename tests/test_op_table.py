"""The op table is complete: every op has every rule each stage needs, and the facts live in its row.

A stage that meets an op without the rule it needs would fail deep inside a pass; this test names the
op and the missing rule instead.
"""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim.core import ops
from labsim.core.ops import Op, OpKind


def missing_rules() -> list[str]:
    out = []
    for op in Op:
        if op.value not in ops.REGISTRY:
            out.append(f"{op.value}: no row in the op table")
            continue
        row = ops.get(op)
        for rule in ("shape_rule", "impl", "flops", "transcendentals"):
            if getattr(row, rule) is None:
                out.append(f"{op.value}: no {rule}")
        if not row.hlo:
            out.append(f"{op.value}: no HLO name")
        if op in ops.COMPOSITE:
            if row.decompose is None:
                out.append(f"{op.value}: a composite without a decomposition")
        elif row.vjp is None:
            out.append(f"{op.value}: no VJP rule (grad cannot pass through it)")
        if op in ops.ELEMENTWISE | ops.REDUCTION | ops.CONTRACTION and not row.ptx:
            out.append(f"{op.value}: no lowering (ptx instruction or combiner)")
    return out


def test_every_op_has_every_rule():
    assert missing_rules() == []


def test_the_completeness_check_names_what_is_missing(monkeypatch):
    row = ops.get(Op.TANH)
    monkeypatch.setitem(ops.REGISTRY, "tanh", ops.replace(row, vjp=None, ptx=None))
    assert missing_rules() == ["tanh: no VJP rule (grad cannot pass through it)",
                               "tanh: no lowering (ptx instruction or combiner)"]


def test_category_sets_partition_the_ops():
    families = [ops.ELEMENTWISE, ops.REDUCTION, ops.CONTRACTION, ops.DATA_MOVEMENT, ops.CONSTANT, ops.COMPOSITE]
    assert sum(len(f) for f in families) == len(Op)
    assert frozenset().union(*families) == frozenset(Op)
    for op in Op:
        assert ops.get(op).kind is {0: OpKind.ELEMENTWISE, 1: OpKind.REDUCTION, 2: OpKind.CONTRACTION,
                                    3: OpKind.DATA_MOVEMENT, 4: OpKind.CONSTANT, 5: OpKind.COMPOSITE}[
            next(i for i, f in enumerate(families) if op in f)]
    assert ops.TRANSCENDENTAL <= ops.ELEMENTWISE and ops.DUPLICABLE.isdisjoint(ops.TRANSCENDENTAL)
    assert ops.FREE == {Op.CONSTANT, Op.RESHAPE}


def test_an_op_member_is_its_name():
    assert Op.ADD == "add" and hash(Op.ADD) == hash("add") and str(Op.ADD) == "add" and f"{Op.EXP}" == "exp"
    assert ops.get("add") is ops.get(Op.ADD)
    g = ls.trace(lambda x: lnp.exp(x) + 1.0, ls.ShapeDtype((3,)))
    assert [n.op for n in g.nodes] == [Op.EXP, Op.ADD] and all(type(n.op) is str for n in g.nodes)


def test_transcendental_counts_follow_the_category_set():
    x = ls.ShapeDtype((5,))
    for op in ops.UNARY - {Op.INTEGER_POW, Op.CONVERT}:
        row = ops.get(op)
        assert row.count_transcendentals((x,), x, {}) == (5 if op in ops.TRANSCENDENTAL else 0), op


def test_unknown_ops_and_duplicate_rules_are_refused():
    with pytest.raises(ops.UnknownOpError, match="no op named 'frobnicate'"):
        ops.get("frobnicate")
    with pytest.raises(ValueError, match="already has a vjp rule"):
        ops.define(Op.ADD, vjp=lambda *a: a)
    with pytest.raises(ValueError, match="already registered"):
        ops.register(ops.get(Op.ADD))


def test_dot_subscripts_are_those_numpy_needs():
    x, y = np.random.default_rng(0).normal(size=(2, 3, 4)), np.random.default_rng(1).normal(size=(2, 4, 5))
    L, R, out = ops.dot_subscripts(3, 3, ((2,), (1,)), ((0,), (0,)))
    np.testing.assert_allclose(np.einsum(f"{L},{R}->{out}", x, y), x @ y)
