"""Compiler passes: semantics preserved on random programs, and worked examples with exact results."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import labsim as ls
import labsim.numpy as lnp
from labsim import passes
from labsim.compiler.fusion import FusionPlan, PlanError, Reason
from labsim.compiler.kernel import KernelKind

from strategies import LNP, mixed_programs, tolerance

SETTINGS = settings(max_examples=60)


def _variants(prog):
    """The program, plus versions built to give CSE, DCE and constant folding something to do."""
    f = prog.f
    yield "as drawn", f

    def twice(*a):  # the same chain traced twice: CSE merges it
        return f(*a) + f(*a)

    def with_dead(*a):  # an unused chain: DCE removes it
        _ = lnp.exp(f(*a)) * 3.0
        return f(*a) * 1.0 + 0.0

    def with_consts(*a):  # constant subexpressions: constant folding computes them
        c = (lnp.asarray(np.arange(6.0, dtype=prog.dtype)) * 2.0 + 1.0).sum()
        return f(*a) * (c / c)

    yield "twice", twice
    yield "with_dead", with_dead
    yield "with_consts", with_consts


def _check_same(g1, g2, inputs, dtype):
    a = ls.evaluate(g1, *inputs)
    b = ls.evaluate(g2, *inputs)
    np.testing.assert_allclose(b, a, **tolerance(np.asarray(a), dtype))


@pytest.mark.parametrize("p", passes.PIPELINE, ids=lambda p: p.__name__)
@SETTINGS
@given(prog=mixed_programs(max_steps=4))
def test_each_pass_preserves_meaning(p, prog):
    for _, f in _variants(prog):
        g = ls.trace(f, *prog.specs)
        # run the passes before p too, as the pipeline would (fusion needs decomposed graphs, etc.)
        before = g
        for q in passes.PIPELINE[: passes.PIPELINE.index(p)]:
            before = q(before)
        after = p(before).verify()
        _check_same(g, after, prog.inputs, prog.dtype)


@SETTINGS
@given(prog=mixed_programs(max_steps=5))
def test_whole_pipeline_preserves_meaning_and_lowers(prog):
    for _, f in _variants(prog):
        g = ls.trace(f, *prog.specs)
        compiled = ls.compile(g)
        for name, stage in compiled.stages:
            stage.verify()
        _check_same(g, compiled.graph, prog.inputs, prog.dtype)
        # against the eager program of the same primitives (a composite op alone is one library kernel):
        # fusion never adds memory traffic or kernels
        eager = ls.compile(g, passes=[passes.decompose])
        assert compiled.bytes <= eager.bytes
        assert len(compiled.kernels) <= len(eager.kernels)


@SETTINGS
@given(prog=mixed_programs(max_steps=4))
def test_each_pass_alone_preserves_meaning(prog):
    g = ls.trace(prog.f, *prog.specs)
    for p in passes.PIPELINE:
        if p is passes.fuse:
            continue
        _check_same(g, p(g).verify(), prog.inputs, prog.dtype)


# ---------------------------------------------------------------------------------------------
# worked examples with exact expected results
S = ls.ShapeDtype


def test_fma_relu_becomes_one_kernel_reading_three_writing_one():
    n = 1024 * 1024
    spec = S((1024, 1024))
    prog = ls.compile(ls.trace(lambda x, y, z: lnp.maximum(x * y + z, 0.0), spec, spec, spec))
    (k,) = prog.kernels
    assert k.kind is KernelKind.LOOP
    assert len(k.inputs) == 3 and len(k.outputs) == 1
    assert (k.bytes_read, k.bytes_written, k.flops) == (3 * 4 * n, 4 * n, 3 * n)
    eager = ls.compile(prog.source, passes=[])
    assert len(eager.kernels) == 3 and eager.bytes == (2 + 1 + 2 + 1 + 1 + 1) * 4 * n


def test_dce_removes_unused_work():
    def f(x, y):
        unused = lnp.exp(x) @ y  # noqa: F841
        return x + 1.0

    g = ls.trace(f, S((64, 128)), S((128, 32)))
    assert g.op_counts() == {"exp": 1, "dot": 1, "add": 1}
    assert passes.dce(g).op_counts() == {"add": 1}


def test_cse_computes_repeated_expression_once():
    s = S((128, 256))
    g = ls.trace(lambda x, y, z: (x * y + z) * (x * y + z), s, s, s)
    assert g.op_counts() == {"multiply": 3, "add": 2}
    out = passes.cse(g)
    assert out.op_counts() == {"multiply": 2, "add": 1}
    assert ls.compile(g).flops == 3 * 128 * 256


def test_cse_matches_commutative_operands():
    s = S((4,))
    g = passes.cse(ls.trace(lambda x, y: (x * y) - (y * x), s, s))
    assert g.op_counts() == {"multiply": 1, "subtract": 1}


def test_constant_folding_folds_constant_subgraph_to_a_literal():
    def f(x):
        c = lnp.arange(16, dtype=lnp.float32).reshape(4, 4)
        return x + (c * 2.0 + 3.0).sum()

    g = ls.trace(f, S((128, 256)))
    folded = passes.constant_fold(g)
    assert folded.op_counts() == {"add": 1}
    (node,) = folded.nodes
    assert node.operands[1].value == pytest.approx(float((np.arange(16) * 2 + 3).sum()))


def test_simplify_identities():
    s = S((8, 4))
    g = ls.trace(lambda x: (x * 1.0 + 0.0) - 0.0, s)
    assert passes.simplify(g).op_counts() == {}
    g = ls.trace(lambda x: lnp.transpose(lnp.transpose(x)), s)
    assert passes.simplify(g).op_counts() == {}
    g = ls.trace(lambda x: -(-x), s)
    assert passes.simplify(g).op_counts() == {}
    g = ls.trace(lambda x: x / 4.0, s)
    (n,) = passes.simplify(g).nodes
    assert n.op == "multiply" and n.operands[1].value == 0.25


def test_simplify_reciprocal_sqrt_and_row_division():
    s = S((8, 16))
    g = ls.trace(lambda x: x / lnp.sqrt(lnp.sum(x * x, axis=1, keepdims=True)), s)
    out = passes.simplify(g)
    counts = out.op_counts()
    assert counts.get("rsqrt") == 1 and "sqrt" not in counts and "divide" not in counts
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    np.testing.assert_allclose(ls.evaluate(out, x), x / np.sqrt((x * x).sum(1, keepdims=True)), rtol=1e-5)


def test_decompose_leaves_only_primitives():
    s = S((16, 32))
    g = ls.trace(lambda x: ls.nn.layer_norm(ls.nn.gelu(ls.nn.softmax(x))) + lnp.mean(x), s)
    out = passes.decompose(g)
    kinds = {ls.ops.get(n.op).kind for n in out.nodes}
    assert ls.ops.OpKind.COMPOSITE not in kinds
    assert {"exp", "tanh", "rsqrt", "reduce_max", "reduce_sum"} <= set(out.op_counts())
    assert "softmax" not in out.op_counts() and "softmax" in g.op_counts()


def test_fold_transpose_into_dot_dimension_numbers():
    g = ls.trace(lambda x, y: x.T @ y, S((128, 64)), S((128, 32)))
    assert g.op_counts() == {"transpose": 1, "dot": 1}
    out = passes.fold_transpose(g)
    assert out.op_counts() == {"dot": 1}
    (dot,) = out.nodes
    assert dot.attr("contracting") == ((0,), (0,))
    assert "lhs_contracting_dims={0}, rhs_contracting_dims={0}" in out.to_text()


def test_fusion_dot_with_bias_relu_epilogue():
    prog = ls.compile(ls.trace(lambda a, w, b: ls.nn.relu(a @ w + b), S((64, 128)), S((128, 32)), S((32,))))
    (k,) = prog.kernels
    assert k.kind is KernelKind.CONTRACTION and k.ops[0] == "dot"
    assert {"add", "maximum"} <= set(k.ops)
    assert (k.bytes_read, k.bytes_written) == (4 * (64 * 128 + 128 * 32 + 32), 4 * 64 * 32)


def test_fusion_reduction_root_absorbs_elementwise_producers():
    prog = ls.compile(ls.trace(lambda x: lnp.sum(lnp.exp(x) * 2.0, axis=1), S((128, 256))))
    (k,) = prog.kernels
    assert k.kind is KernelKind.REDUCTION
    assert (k.bytes_read, k.bytes_written) == (4 * 128 * 256, 4 * 128)


def test_fusion_of_a_row_softmax_is_one_kernel_and_a_column_softmax_is_not():
    """A reduction over the trailing axis fuses with its consumers row by row (a persistent reduction);
    over a leading axis, or over rows longer than ROW_LIMIT, each reduction ends its kernel."""
    row = ls.compile(ls.trace(lambda x: ls.nn.softmax(x, axis=-1), S((128, 256))))
    assert len(row.kernels) == 1 and row.kernels[0].bytes == 2 * 4 * 128 * 256  # read x once, write once
    col = ls.compile(ls.trace(lambda x: ls.nn.softmax(x, axis=0), S((128, 256))))
    assert len(col.kernels) == 4
    reasons = {(col.graph.nodes[d.producer].op, d.reason) for d in col.plan.not_fused}
    assert any(r is Reason.REDUCTION_FIRST for _, r in reasons)
    assert ("exp", Reason.NOT_CHEAP) in reasons
    notes = " ".join(col.plan.notes)  # the same decisions in words
    assert "reduction must finish" in notes and "exp is not cheap enough to compute twice" in notes
    from labsim.compiler.fusion import ROW_LIMIT
    long = ls.compile(ls.trace(lambda x: ls.nn.softmax(x, axis=-1), S((2, ROW_LIMIT + 1))))
    assert len(long.kernels) == 4
    x = np.random.default_rng(0).normal(size=(128, 256)).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(ls.evaluate(row.graph, x), e / e.sum(-1, keepdims=True), rtol=1e-6)


def test_horizontal_fusion_of_siblings_reading_the_same_input():
    prog = ls.compile(ls.trace(lambda x: (lnp.exp(x), x * 2.0), S((256, 256))))
    (k,) = prog.kernels
    assert len(k.inputs) == 1 and len(k.outputs) == 2
    assert k.bytes_read == 4 * 256 * 256
    assert len(prog.plan.merged) == 1


def test_fusion_never_duplicates_expensive_work():
    prog = ls.compile(ls.trace(lambda x: (lnp.sum(lnp.exp(x), axis=1), lnp.exp(x) * 3.0), S((64, 64))))
    exps = sum(k.ops.count("exp") for k in prog.kernels)
    assert exps == 1  # CSE made one exp; fusion must not copy it into both kernels


def test_fusion_duplicates_cheap_producer_instead_of_round_trip():
    prog = ls.compile(ls.trace(lambda x: (lnp.sum(x * 0.5, axis=1), lnp.max(x * 0.5, axis=1)), S((64, 64))))
    assert len(prog.kernels) == 2
    assert all("multiply" in k.ops for k in prog.kernels)
    assert prog.bytes == 2 * (4 * 64 * 64 + 4 * 64)  # x read by each reduction; nothing else round-trips


def test_buffer_assignment_reuses_dead_temporaries():
    n = 1 << 16
    prog = ls.compile(ls.trace(lambda x: ((x * 2.0) + 1.0) * 3.0, S((n,))), passes=[])
    plan = prog.buffers
    size = 4 * n
    assert plan.no_reuse_bytes == 4 * size  # x, two temporaries, the output
    assert plan.peak_bytes == 3 * size  # never more than three live at once
    assert plan.heap_bytes == 3 * size  # the output reuses the first temporary's memory
    out = next(b for b in plan.buffers if b.kind == "output")
    first_tmp = next(b for b in plan.buffers if b.kind == "temporary" and b.first == 0)
    assert out.offset == first_tmp.offset


def test_fused_program_needs_less_memory():
    n = 1 << 16
    g = ls.trace(lambda x: ((x * 2.0) + 1.0) * 3.0, S((n,)))
    assert ls.compile(g).buffers.peak_bytes == 2 * 4 * n
    assert ls.compile(g, passes=[]).buffers.peak_bytes == 3 * 4 * n


def test_forward_and_backward_compile_together():
    def loss(w, x):
        return lnp.sum(ls.nn.relu(x @ w))

    g = ls.trace(ls.value_and_grad(loss, argnums=(0, 1)), S((128, 64)), S((32, 128)))
    prog = ls.compile(g)
    dots = [k for k in prog.kernels if k.kind is KernelKind.CONTRACTION]
    assert len(dots) == 3  # forward, dL/dW = xᵀ·g, dL/dx = g·wᵀ
    assert sum(k.flops for k in dots) >= 3 * 2 * 32 * 128 * 64
    w = np.random.default_rng(1).standard_normal((128, 64)).astype(np.float32)
    x = np.random.default_rng(2).standard_normal((32, 128)).astype(np.float32)
    v, gw, gx = ls.evaluate(prog.graph, w, x)  # outputs are flattened
    mask = (x @ w > 0).astype(np.float32)
    np.testing.assert_allclose(gw, x.T @ mask, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gx, mask @ w.T, rtol=1e-4, atol=1e-4)


def test_compile_with_chosen_passes_records_stages():
    g = ls.trace(lambda x: lnp.exp(x) * 1.0, S((4,)))
    prog = ls.compile(g, passes=[passes.simplify, passes.fuse])
    assert [name for name, _ in prog.stages] == ["traced", "simplify", "fuse"]
    assert prog.stages[0][1] is g
    assert prog.graph.op_counts() == {"exp": 1}


# ---- the fusion plan is data, and no pass after fusion can silently drop it ----
def _kernel_signature(prog):
    return [(k.kind, k.ops, k.bytes_read, k.bytes_written) for k in prog.kernels]


@pytest.mark.parametrize("p", passes.PIPELINE, ids=lambda p: p.__name__)
def test_a_pass_after_fusion_keeps_the_kernels_or_refuses(p):
    def f(x, y, z, w):
        h = lnp.maximum(x * y + z, 0.0)
        return ls.nn.softmax(h @ w, axis=-1), lnp.sum(h, axis=0)

    s = S((32, 32))
    g = ls.trace(f, s, s, s, s)
    ref = ls.compile(g)
    try:
        after = ls.compile(g, passes=list(passes.PIPELINE) + [p])
    except ls.PlanLostError as e:
        assert p.__name__ in str(e) and "fuse" in str(e)
    else:
        assert _kernel_signature(after) == _kernel_signature(ref)
    fma = ls.trace(lambda x, y, z: lnp.maximum(x * y + z, 0.0), s, s, s)
    assert len(ls.compile(fma, passes=list(passes.PIPELINE) + [p]).kernels) == 1


def test_a_pass_that_rebuilds_after_fusion_is_refused_with_a_clear_error():
    def rebuild(g):  # a pass that changes the graph after fuse planned it
        return g.replace(nodes=tuple(g.nodes), plan=None)

    rebuild.__name__ = "my_pass"
    g = ls.trace(lambda x: lnp.exp(x) * 2.0, S((8, 8)))
    with pytest.raises(ls.PlanLostError, match="pass my_pass rebuilt the graph after fuse"):
        ls.compile(g, passes=list(passes.PIPELINE) + [rebuild])
    # running fuse again after it makes a valid plan
    assert len(ls.compile(g, passes=list(passes.PIPELINE) + [rebuild, passes.fuse]).kernels) == 1


def test_the_plan_is_typed_data_that_lowering_follows():
    g = ls.trace(lambda x: ls.nn.softmax(x, axis=-1), S((16, 64)))
    prog = ls.compile(g)
    plan = prog.plan
    assert isinstance(plan, FusionPlan) and plan.nodes is prog.graph.nodes
    assert [tuple(prog.graph.nodes.index(n) for n in k.nodes) for k in prog.kernels] == [tuple(x) for x in plan.groups]
    assert all(isinstance(d.reason, Reason) for d in plan.not_fused)
    assert len(plan.notes) == len(plan.decisions)
    bad = FusionPlan(nodes=prog.graph.nodes, groups=plan.groups[1:], decisions=())
    with pytest.raises(PlanError, match="is in no fusion group"):
        bad.verify(prog.graph)


def test_a_cheap_producer_computed_inside_a_kernel_gets_no_kernel_of_its_own():
    """t = x + y feeds exp (fused), a reduction (recomputed there) and a dot (which reads it from memory):
    the kernel that computes t writes it once; t gets no second kernel writing it again."""
    def mixed(x, y, w):
        t = x + y
        e = lnp.exp(t)
        return lnp.sum(e * t, axis=1), t @ w, lnp.max(e, axis=1)

    m = S((256, 512))
    prog = ls.compile(ls.trace(mixed, m, m, S((512, 128))))
    writers = [k.name for k in prog.kernels for o in k.outputs if o.aval.shape == (256, 512) and
               any(n.out is o and n.op == "add" for n in k.nodes)]
    assert len(writers) == 1
    assert [k.ops for k in prog.kernels].count(("add",)) == 0
