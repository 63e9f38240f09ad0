"""The program fuzzer (issue 8): random programs over every lnp/nn op, checked at every level.

Each program from :func:`fuzz_programs.fuzz_programs` is checked against its NumPy twin, whose shape and
dtype (JAX's rules, computed by the generator) are the expected ones:

1. traced: ``ls.evaluate(ls.trace(f, *specs), *xs)``, with the graph's output aval;
2. eager: ``lnp`` on NumPy arrays;
3. compiled: ``ls.compile(g).graph`` and every stage of ``prog.stages``, and the eager program
   ``ls.compile(g, passes=[])`` (kernels cover the nodes with the registry's FLOPs);
4. ``ls.estimate`` and ``ls.simulate`` on both programs for the H100 SXM: finite non-negative times,
   FLOPs equal to ``prog.flops``.

Budget: ``FUZZ_EXAMPLES`` = 2,000 programs in ``make test`` (about 25-50 s on a 2-core machine);
``LABSIM_FUZZ_EXAMPLES`` overrides it, and ``make fuzz`` runs 5,000 under the ``fuzz`` Hypothesis profile.
"""
from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import given, settings

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp

from fuzz_programs import COVERED, KNOWN_LNP_GAPS, NOT_DRAWN, fuzz_programs, npdt
from strategies import tolerance
from test_evaluate_property import check_kernels

FUZZ_EXAMPLES = int(os.environ.get("LABSIM_FUZZ_EXAMPLES", "2000"))
CHIP = "H100 SXM"


def assert_same(got, ref: np.ndarray, dtype: str, what: str, prog) -> None:
    got = np.asarray(got)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}: {prog!r}"
    assert got.dtype == npdt(dtype), f"{what}: dtype {got.dtype} != {npdt(dtype)} ({dtype}): {prog!r}"
    if dtype in ("float32", "bfloat16"):
        # the scale of the tolerance from the finite values (an inf or nan would make atol inf or nan)
        tol = tolerance(np.where(np.isfinite(ref), ref, 0), "float32")
        np.testing.assert_allclose(got, ref, **tol, err_msg=f"{what}: {prog!r}")
    else:
        np.testing.assert_array_equal(got, ref, err_msg=f"{what}: {prog!r}")


def check_costs(prog, g, what: str, fprog) -> None:
    cost = ls.estimate(prog, CHIP)
    assert cost.flops == prog.flops, f"{what}: estimate FLOPs {cost.flops} != {prog.flops}: {fprog!r}"
    assert len(cost.kernels) == len(prog.kernels)
    for k in cost.kernels:
        assert math.isfinite(k.time) and k.time >= 0, (what, k, fprog)
    assert math.isfinite(cost.time) and cost.time >= 0, (what, cost.time, fprog)
    run = ls.simulate(prog, CHIP)
    assert run.cost.flops == prog.flops
    assert math.isfinite(run.time) and run.time >= 0, (what, run.time, fprog)
    assert run.time >= run.kernel_time * (1 - 1e-9), (what, run.time, run.kernel_time, fprog)


def check_fuzz_program(p) -> None:
    ref = np.asarray(p.twin(*p.inputs))
    assert ref.shape == p.out_shape, f"the generator's shape bookkeeping is off: {ref.shape}: {p!r}"
    assert ref.dtype == npdt(p.out_dtype), f"the twin's dtype {ref.dtype} is not {p.out_dtype}: {p!r}"

    g = ls.trace(p.f, *p.specs)
    assert g.verify() is g
    assert g.out_avals[0].shape == ref.shape, (g.out_avals, p)
    assert g.out_avals[0].dtype == p.out_dtype, f"traced dtype {g.out_avals[0].dtype}, JAX gives {p.out_dtype}: {p!r}"
    assert_same(ls.evaluate(g, *p.inputs), ref, p.out_dtype, "traced", p)

    assert_same(p.eager(*p.inputs), ref, p.out_dtype, "eager lnp", p)

    prog = ls.compile(g)
    assert prog.stages[0] == ("traced", g)
    for name, stage in prog.stages[1:]:
        assert stage.verify() is stage
        assert_same(ls.evaluate(stage, *p.inputs), ref, p.out_dtype, f"after pass {name}", p)
    assert_same(ls.evaluate(prog.graph, *p.inputs), ref, p.out_dtype, "compiled graph", p)
    check_kernels(prog)
    check_costs(prog, g, "compiled", p)

    eager = ls.compile(g, passes=[])
    assert eager.graph is g and len(eager.stages) == 1
    check_kernels(eager)
    check_costs(eager, g, "eager program", p)


@settings(max_examples=FUZZ_EXAMPLES)
@given(fuzz_programs())
def test_fuzz_programs_agree_with_numpy_everywhere(p):
    check_fuzz_program(p)


def test_fuzzer_covers_every_public_op():
    """Every name of labsim.numpy.__all__ and labsim.nn.__all__ is drawn by some step kind (or listed as not
    drawn, with a reason), so a new op cannot silently escape the fuzzer."""
    names = set(lnp.__all__) | set(lnn.__all__)
    missing = names - set(COVERED) - set(NOT_DRAWN)
    assert not missing, f"ops the fuzzer never draws: {sorted(missing)}"
    assert not set(COVERED) - names, "COVERED lists names that are not public"


def test_known_lnp_gaps_are_still_gaps():
    """Each entry of KNOWN_LNP_GAPS still reproduces: when lnp is fixed this fails, and the entry (and its
    switch) should be removed so the fuzzer draws the pattern again."""
    S = ls.ShapeDtype
    still = {}
    if "sum_small_int" in KNOWN_LNP_GAPS:
        still["sum_small_int"] = ls.trace(lnp.sum, S((3,), "int8")).out_avals[0].dtype != "int32"
    if "floor_divide_float" in KNOWN_LNP_GAPS:
        try:  # jnp: int32 [5, -5] // 2.0 == float32 [2, -3]; float32 // 2.0 floors too
            got = ls.evaluate(ls.trace(lambda x: x // 2.0, S((2,), "int32")), np.array([5, -5], np.int32))
            got_f = ls.evaluate(ls.trace(lambda x: x // 2.0, S((2,), "float32")), np.array([5, -5], np.float32))
            still["floor_divide_float"] = not (np.array_equal(got, [2.0, -3.0]) and np.array_equal(got_f, [2.0, -3.0]))
        except ls.TraceError:
            still["floor_divide_float"] = True
    if "relu_int" in KNOWN_LNP_GAPS:
        still["relu_int"] = ls.trace(lnn.relu, S((3,), "int32")).out_avals[0].dtype != "int32"
    if "divide_int_bf16" in KNOWN_LNP_GAPS:
        g = ls.trace(lnp.divide, S((2,), "int32"), S((2,), "bfloat16"))
        still["divide_int_bf16"] = g.out_avals[0].dtype != "bfloat16"
    if "eager_scalar_weak_int" in KNOWN_LNP_GAPS:
        still["eager_scalar_weak_int"] = lnp.add(2, np.array(3, np.int8)).dtype != np.int8
    assert set(still) == set(KNOWN_LNP_GAPS), "every known gap needs a reproducer here"
    fixed = [k for k, v in still.items() if not v]
    assert not fixed, f"fixed in lnp, remove from KNOWN_LNP_GAPS: {fixed}"
