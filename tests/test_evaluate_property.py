"""Property tests: tracing + the reference interpreter agree with plain NumPy on random programs.

For every random program (``tests/strategies.py``): ``ls.evaluate(ls.trace(f, *specs), *xs)`` equals the
program's NumPy twin; ``lnp`` run eagerly on arrays equals it too; the graph verifies; its output avals
are NumPy's result shape and dtype; expanding composites and every pipeline stage keep the value; eager
``ls.compile(g, passes=[])`` puts every non-free node in exactly one kernel with the registry's FLOPs, and
the default pipeline in at least one (only cheap ops are recomputed in several, as XLA's fusion does).
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings

import labsim as ls
from labsim import ops
from labsim.compiler.lower import VIEWS
from labsim.core.ops import FREE as FREE_OPS
from labsim.core.trace import expand_composites as decompose

from strategies import (broadcasting_programs, contraction_programs, elementwise_programs, mixed_programs,
                        movement_programs, nn_programs, reduction_programs, tolerance)

SETTINGS = settings(max_examples=60)


def check_program(prog) -> None:
    ref = np.asarray(prog.numpy_twin(*prog.inputs))
    g = ls.trace(prog.f, *prog.specs)
    assert g.verify() is g
    assert len(g.out_avals) == 1
    assert g.out_avals[0].shape == ref.shape, (g.out_avals, ref.shape, prog)
    assert g.out_avals[0].dtype == ls.dtypes.canonical_dtype(ref.dtype), (g.out_avals, ref.dtype, prog)

    out = ls.evaluate(g, *prog.inputs)
    assert isinstance(out, np.ndarray)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, **tolerance(ref, prog.dtype), err_msg=repr(prog))

    eager = np.asarray(prog.f(*prog.inputs))  # lnp on NumPy arrays computes directly
    assert eager.shape == ref.shape and eager.dtype == ref.dtype
    np.testing.assert_allclose(eager, ref, **tolerance(ref, prog.dtype), err_msg=repr(prog))

    # expanding composites (softmax, gelu, layer_norm, mean) into primitives keeps the value
    d = decompose(g).verify()
    assert all(ops.get(n.op).kind is not ops.OpKind.COMPOSITE for n in d.nodes)
    np.testing.assert_allclose(ls.evaluate(d, *prog.inputs), ref, **tolerance(ref, prog.dtype), err_msg=repr(prog))
    check_compile(g, prog, ref)


def check_compile(g: ls.Graph, program=None, ref=None) -> None:
    """Default pipeline and eager (no passes): kernels cover the nodes, FLOPs match the registry, and
    every stage of the pipeline still computes the same value (interpret before == interpret after)."""
    for passes in (None, []):
        prog = ls.compile(g, passes=passes)
        assert prog.stages[0] == ("traced", g)
        check_kernels(prog)
        if program is not None:
            for name, stage in prog.stages[1:]:
                assert stage.verify() is stage
                got = ls.evaluate(stage, *program.inputs)
                np.testing.assert_allclose(got, ref, **tolerance(ref, program.dtype),
                                           err_msg=f"after pass {name}: {program!r}")
    # eager (PyTorch-like): one kernel per operation, in program order; views (transpose, broadcast,
    # slice) have no kernel of their own unless materialised, and are read in place by their consumers
    eager = ls.compile(g, passes=[])
    assert eager.graph is g and len(eager.stages) == 1
    mains = [k.nodes[-1] for k in eager.kernels]
    assert mains == [n for n in g.nodes if any(n is m for m in mains)]  # program order, each once
    assert all(m.op not in FREE_OPS for m in mains)
    for k in eager.kernels:
        assert all(n.op in VIEWS for n in k.nodes[:-1]), k.ops
    covered = {id(n) for k in eager.kernels for n in k.nodes}
    assert all(id(n) in covered for n in g.nodes if n.op not in FREE_OPS)
    assert {id(n) for n in g.nodes if n.op not in FREE_OPS and n.op not in VIEWS} <= {id(m) for m in mains}
    assert eager.flops == registry_flops(g.nodes)  # views cost no FLOPs, so reading one twice adds none


def registry_flops(nodes) -> int:
    return sum(ops.get(n.op).count_flops(tuple(a.aval for a in n.operands), n.out.aval, n.params) for n in nodes)


def check_kernels(prog) -> None:
    """Every non-free node runs in a kernel; only cheap ops (``ops.DUPLICABLE``) may run in several,
    as XLA's fusion recomputes them; kernel FLOPs are the registry FLOPs of the nodes each one runs."""
    seen: dict[int, int] = {}
    for k in prog.kernels:
        for n in k.nodes:
            seen[id(n)] = seen.get(id(n), 0) + 1
        assert k.flops == registry_flops(k.nodes)
    outputs = {id(o) for o in prog.graph.outputs}
    for n in prog.graph.nodes:
        count = seen.get(id(n), 0)
        if n.op == "constant":
            assert count == 0, "a constant is uploaded with the program, not run by a kernel"
        elif count > 1:
            assert n.op in ops.DUPLICABLE, f"{n.op} is computed in {count} kernels but is not cheap"
            assert id(n.out) not in outputs or n.op == "reshape", f"output {n.op} computed in {count} kernels"
        elif n.op != "reshape":  # a reshape is a bitcast: it may need no kernel at all
            assert count == 1, f"node {n.op} is in no kernel"
    assert set(seen) <= {id(n) for n in prog.graph.nodes}, "a kernel runs a node that is not in the graph"
    written = [id(prog.buffer(o)) for k in prog.kernels for o in k.outputs]
    assert len(written) == len(set(written)), "a buffer is written by two kernels"
    graph_flops = registry_flops(prog.graph.nodes)
    assert prog.flops == sum(k.flops for k in prog.kernels) >= graph_flops
    if all(c == 1 for c in seen.values()):
        assert prog.flops == graph_flops
    registry_trans = sum(ops.get(n.op).count_transcendentals(tuple(a.aval for a in n.operands), n.out.aval,
                                                             n.params) for k in prog.kernels for n in k.nodes)
    assert prog.transcendentals == registry_trans
    for k in prog.kernels:
        assert k.bytes_read == sum(v.aval.nbytes for v in k.inputs)
        assert k.bytes_written == sum(v.aval.nbytes for v in k.outputs)


@SETTINGS
@given(elementwise_programs(max_steps=6))
def test_elementwise_chains(prog):
    check_program(prog)


@SETTINGS
@given(broadcasting_programs())
def test_broadcasting(prog):
    check_program(prog)


@SETTINGS
@given(reduction_programs())
def test_reductions(prog):
    check_program(prog)


@SETTINGS
@given(contraction_programs(max_steps=3))
def test_contractions(prog):
    check_program(prog)


@SETTINGS
@given(movement_programs())
def test_data_movement(prog):
    check_program(prog)


@SETTINGS
@given(nn_programs(max_steps=3))
def test_nn_helpers(prog):
    check_program(prog)


@settings(max_examples=80)
@given(mixed_programs(max_steps=5))
def test_mixed_programs(prog):
    check_program(prog)


@settings(max_examples=30)
@given(mixed_programs(max_steps=4, dtype="float64"))
def test_float64_programs_stay_float64(prog):
    ref = np.asarray(prog.numpy_twin(*prog.inputs))
    g = ls.trace(prog.f, *prog.specs)
    assert g.out_avals[0].dtype == "float64" == ref.dtype.name
    np.testing.assert_allclose(ls.evaluate(g, *prog.inputs), ref, **tolerance(ref, "float64"), err_msg=repr(prog))
