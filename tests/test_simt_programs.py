"""The SIMT machine runs the kernels the compiler emits and gets what ``ls.evaluate`` gets.

For the book's examples and for random programs (Hypothesis: elementwise, reductions, small
contractions, data movement, mixed dtypes; sizes that do not divide the block size), every kernel is
lowered to the kernel IR, run warp by warp on the machine with real values, and the program's outputs
are compared with the reference interpreter. Integers and booleans must match exactly; floats within
a float32 tolerance (the machine sums a row in a tree of shuffles, so the last bits of a reduction may
differ from NumPy's; element-wise ops agree to the bit, see tests/test_kernel_ir.py).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import labsim as ls
import labsim.numpy as lnp
from labsim.compiler import emit

from fuzz_programs import fuzz_programs
from strategies import contraction_programs, elementwise_programs, movement_programs, nn_programs, reduction_programs

S = ls.ShapeDtype
CHIPS = ["H100 SXM", "A100 80GB"]


def assert_machine_matches(prog, xs, chip="H100 SXM", what=""):
    ref = ls.evaluate(prog.graph, *xs)
    got = ls.simt.run(prog, *xs, chip=chip).outputs
    refs, gots = (ref, got) if isinstance(ref, tuple) else ((ref,), (got,))
    for r, g in zip(refs, gots):
        r, g = np.asarray(r), np.asarray(g)
        assert g.shape == r.shape and g.dtype == r.dtype, (what, g.shape, r.shape, g.dtype, r.dtype)
        if r.dtype.kind in "biu":
            np.testing.assert_array_equal(g, r, err_msg=what)
        else:
            scale = float(np.nanmax(np.abs(r[np.isfinite(r)]), initial=0.0))
            tol = {"float16": 2e-2, "float64": 1e-9}.get(str(r.dtype), 2e-4)
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol,
                                       atol=tol * (1.0 + scale), equal_nan=True, err_msg=what)


BOOK = {
    # chapters 1, 3, 5: the fused x*y+z / maximum kernel of the MLP examples
    "fma_relu": (lambda x, y, z: lnp.maximum(x * y + z, 0.0), [S((300, 37))] * 3),
    "softmax": (lambda x: ls.nn.softmax(x, axis=-1), [S((12, 1000))]),
    "layer_norm": (lambda x, g, b: ls.nn.layer_norm(x, g, b), [S((10, 300)), S((300,)), S((300,))]),
    "gelu": (lambda x: ls.nn.gelu(x), [S((1000,))]),
    "logistic": (lambda x: ls.nn.sigmoid(x), [S((777,))]),
    "cube": (lambda x: x ** 3, [S((100,))]),
    "matmul_bf16": (lambda a, b: a @ b, [S((130, 70), "bfloat16"), S((70, 40), "bfloat16")]),
    "dense_relu": (lambda a, w, b: ls.nn.relu(a @ w + b), [S((64, 96), "bfloat16"), S((96, 80), "bfloat16"),
                                                           S((80,), "bfloat16")]),
    "matmul_f32": (lambda a, b: a @ b, [S((33, 20)), S((20, 17))]),
    "transposed_out": (lambda x, w: lnp.einsum("bf,fd->db", x, w), [S((8, 16)), S((16, 32))]),
    "rhs_nk": (lambda x, w: x @ w.T, [S((8, 16)), S((32, 16))]),
    "batched": (lambda a, b: lnp.einsum("bij,bjk->bik", a, b), [S((3, 9, 11)), S((3, 11, 5))]),
    "mean_rows": (lambda x: lnp.mean(x, axis=1), [S((50, 333))]),
    "sum_cols": (lambda x: x.sum(axis=0), [S((70, 9))]),
    "sum_all": (lambda x: x.sum(), [S((70, 90))]),
    "attention_scores": (lambda q, k: ls.nn.softmax(q @ k.T / 8.0, axis=-1), [S((16, 64)), S((24, 64))]),
}


@pytest.mark.parametrize("name", sorted(BOOK))
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("eager", [False, True])
def test_book_examples_run_on_the_machine(name, chip, eager):
    f, specs = BOOK[name]
    g = ls.trace(f, *specs)
    prog = ls.compile(g, passes=[] if eager else None)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(s.shape).astype(np.float32) for s in specs]
    assert_machine_matches(prog, xs, chip, name)


def test_listings_are_the_ir_the_machine_runs():
    # x**3 needs two multiplies; logistic is one instruction that names its Op (computed as ls.evaluate
    # does, to the bit) and whose comment says the PTX sequence it stands for
    cube = ls.compile(ls.trace(lambda x: x ** 3, S((100,)))).kernels[0]
    muls = [ln for ln in cube.listing.splitlines() if ln.strip().startswith("mul.f32")]
    assert len(muls) == 2
    sig = ls.compile(ls.trace(lambda x: ls.nn.sigmoid(x), S((100,)))).kernels[0].listing
    body = [ln.split()[0] for ln in sig.splitlines() if ln.startswith("  ") and "%f" in ln]
    assert body[-2:] == ["logistic.approx.f32", "st.global.f32"]
    assert "ex2.approx, add 1, rcp.approx" in sig
    for k in (cube, ls.compile(ls.trace(lambda x: ls.nn.softmax(x), S((4, 50)))).kernels[0]):
        assert k.listing == emit.kernel_ir(k).render()


def test_reduction_listing_has_shuffles_shared_memory_and_barriers():
    k = ls.compile(ls.trace(lambda x: ls.nn.softmax(x), S((4, 500)))).kernels[0]
    ir = emit.kernel_ir(k)
    # two reductions (max, then sum), each: 5 + 5 shuffles, 2 barriers, 1 shared store, 1 shared load
    assert ir.count("shfl.sync.bfly") == 20 and ir.count("bar.sync") == 4
    assert ir.count("st.shared") == 2 and ir.count("ld.shared") == 2
    assert ir.count("exp.approx") >= 1 and ir.block == 512 and ir.grid == 4


@pytest.mark.parametrize("chip, present, absent", [
    ("A100 80GB", ["mma.sync.aligned.m16n8k16", "cp.async.ca.shared.global", "cp.async.wait_all"], ["wgmma", "bulk"]),
    ("H100 SXM", ["wgmma.mma_async", "cp.async.bulk.tensor", "warpgroup"], ["mma.sync", "cp.async.ca"]),
])
def test_contraction_ir_follows_the_generation(chip, present, absent):
    k = ls.compile(ls.trace(lambda a, b: a @ b, S((256, 256), "bfloat16"), S((256, 256), "bfloat16"))).kernels[0]
    text = emit.kernel_ir(k, chip).render()
    for s in present:
        assert s in text, (chip, s)
    for s in absent:
        assert s not in text, (chip, s)


_SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                     derandomize=True)


@pytest.mark.parametrize("strategy", [elementwise_programs, reduction_programs, contraction_programs,
                                      movement_programs, nn_programs], ids=lambda s: s.__name__)
def test_random_programs_match_evaluate(strategy):
    @_SETTINGS
    @given(strategy(max_steps=4), st.sampled_from(CHIPS))
    def check(p, chip):
        for eager in (False, True):
            prog = ls.compile(ls.trace(p.f, *p.specs), passes=[] if eager else None)
            assert_machine_matches(prog, p.inputs, chip, repr(p))
    check()


@settings(max_examples=int(__import__("os").environ.get("SIMT_FUZZ", 30)), deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(fuzz_programs(kinds=("binary", "unary", "reduce", "movement", "where", "concat", "update", "contract",
                            "nn", "create"), max_steps=4))
def test_fuzzed_programs_with_ints_bools_and_bf16(p):
    prog = ls.compile(ls.trace(p.f, *p.specs))
    assert_machine_matches(prog, p.inputs, "H100 SXM", repr(p))


def _where_prog(n=256):
    return ls.compile(ls.trace(lambda x: lnp.where(x > 0, lnp.exp(x) * 2.0, x * 0.5 + 1.0), S((n,))))


def test_where_as_branch_or_select_same_values_different_cost():
    # select: every lane computes both sides (exp path: exp, mul; other: mul, add) then selp.
    # branch: a warp whose lanes disagree runs both paths masked (plus two jumps and two movs); a warp
    # whose lanes agree runs one path only. Sorting the data (all positives first) makes warps agree.
    prog = _where_prog()
    rng = np.random.default_rng(0)
    mixed = rng.standard_normal(256).astype(np.float32)
    ordered = np.sort(mixed)[::-1].copy()
    runs = {}
    for name, x in (("mixed", mixed), ("sorted", ordered)):
        for sel in ("select", "branch"):
            r = ls.simt.run(prog, x, select=sel, trace=True)
            np.testing.assert_allclose(r.outputs, ls.evaluate(prog.graph, x), rtol=2e-6)
            runs[name, sel] = r.kernels[0]
    # select never diverges: all 8 warps issue the same 16 instructions, every lane active
    assert runs["mixed", "select"].trace.lane_utilisation() == 1.0
    assert runs["mixed", "select"].warp_instructions == runs["sorted", "select"].warp_instructions == 8 * 16
    # branch on random signs: every warp diverges: 9 up to and including the branch (2 ld.param, mad,
    # setp, bra DONE, mad.wide, ld, setp, bra ELSE), the true path (exp, mul, mov, bra.uni = 4),
    # the false path (mul, add, mov = 3), then mad.wide, st, exit: 19 per warp; lanes idle on each path
    assert runs["mixed", "branch"].warp_instructions == 8 * 19
    assert runs["mixed", "branch"].trace.lane_utilisation() < 0.85
    # branch on sorted data: only the one warp that straddles the sign change (if any) runs both paths;
    # a warp of positives issues 9 + 4 + 3 = 16, a warp of negatives 9 + 3 + 3 = 15
    n_pos = int((ordered > 0).sum())
    straddle = 1 if n_pos % 32 else 0
    full_true, full_false = n_pos // 32, 8 - n_pos // 32 - straddle
    assert runs["sorted", "branch"].warp_instructions == 19 * straddle + 16 * full_true + 15 * full_false
    assert runs["sorted", "branch"].warp_instructions < runs["sorted", "select"].warp_instructions


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(fuzz_programs(kinds=("where", "binary", "unary", "reduce"), max_steps=3))
def test_where_as_branch_matches_evaluate(p):
    prog = ls.compile(ls.trace(p.f, *p.specs))
    ref = ls.evaluate(prog.graph, *p.inputs)
    got = ls.simt.run(prog, *p.inputs, select="branch").outputs
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(ref, np.float64), rtol=2e-4, atol=1e-5,
                               equal_nan=True)


def test_tma_issues_fewer_instructions_than_cp_async():
    # 128x128x128 bf16: on Ampere every thread copies its share of each A and B tile with cp.async
    # (address arithmetic per element); on Hopper one thread issues one TMA copy per tile. Both
    # compute the same product; Hopper's block issues far fewer warp-instructions for the copies,
    # and the copies' latency shows up as memory stalls at the wait before the barrier.
    p = ls.compile(ls.trace(lambda a, b: a @ b, S((128, 128), "bfloat16"), S((128, 128), "bfloat16")))
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    runs = {c: ls.simt.run(p, a, b, chip=c, trace=True).kernels[0] for c in CHIPS}
    for r in runs.values():
        np.testing.assert_allclose(r.outputs["t0_out"].reshape(128, 128) if "t0_out" in r.outputs else
                                   next(iter(r.outputs.values())).reshape(128, 128), a @ b, rtol=1e-4, atol=1e-3)
        assert r.trace.stall_counts()["memory"] > 0
    cp = {c: sum(1 for pc in r.trace.issue_pc if r.ir.code[pc].op == "cp") for c, r in runs.items()}
    assert cp["H100 SXM"] < cp["A100 80GB"] / 10
    assert runs["H100 SXM"].warp_instructions < runs["A100 80GB"].warp_instructions
