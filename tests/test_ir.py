"""The IR: ShapeDtype, immutable graphs, ``Graph.verify`` invariants, HLO-like text, the contract example."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
import labsim.numpy as lnp
from labsim.core.ir import Literal, Node, Var, freeze_attrs

from strategies import shapes

S = ls.ShapeDtype


# ----------------------------------------------------------------------------------------------
# ShapeDtype
@pytest.mark.parametrize("alias, name", [
    ("f32", "float32"), ("fp32", "float32"), ("float", "float32"), ("F32", "float32"),
    ("bf16", "bfloat16"), ("f16", "float16"), ("half", "float16"), ("f64", "float64"), ("double", "float64"),
    ("s32", "int32"), ("int", "int32"), ("s8", "int8"), ("u8", "uint8"), ("pred", "bool"), ("fp8", "float8_e4m3fn"),
    (np.float32, "float32"), (np.dtype("float16"), "float16"), (np.int64, "int64"), (float, "float32"),
    (int, "int32"), (bool, "bool"),
])
def test_dtype_aliases(alias, name):
    assert S((2,), alias).dtype == name


@settings(max_examples=50)
@given(shapes, st.sampled_from(sorted(ls.dtypes.ITEMSIZE)))
def test_nbytes_is_size_times_itemsize(shape, dtype):
    a = S(shape, dtype)
    size = int(np.prod(shape)) if shape else 1
    assert a.size == size
    assert a.ndim == len(shape)
    assert a.itemsize == ls.dtypes.ITEMSIZE[dtype]
    assert a.nbytes == size * ls.dtypes.ITEMSIZE[dtype]
    if dtype not in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):  # no NumPy dtype for these
        assert a.nbytes == np.zeros(shape, dtype).nbytes


def test_true_sizes_of_narrow_dtypes():
    assert S((1024, 1024), "bfloat16").nbytes == 2 * 1024 * 1024
    assert S((10,), "float8_e5m2").nbytes == 10
    assert S((), "float32").nbytes == 4  # a scalar holds one element


def test_shape_is_normalised_to_python_ints():
    a = S([np.int64(2), 3])
    assert a.shape == (2, 3) and all(type(d) is int for d in a.shape)
    assert a == S((2, 3), "float32") and hash(a) == hash(S((2, 3)))


def test_short_form():
    assert S((1024, 1024), "float32").short() == "f32[1024,1024]"
    assert str(S((), "bool")) == "pred[]"
    assert S((2, 3), "bf16").short() == "bf16[2,3]"


@pytest.mark.parametrize("bad", [None, 3, (2, -1), (-5,)])
def test_bad_shapes(bad):
    with pytest.raises(ls.ShapeError, match="ShapeDtype shape"):
        S(bad)


@pytest.mark.parametrize("bad", [(2.5,), ("a", 2)])
def test_non_integer_shapes_are_refused(bad):
    with pytest.raises(ls.ShapeError, match="ShapeDtype shape"):
        S(bad)


def test_unknown_dtype_names_it():
    with pytest.raises(ls.DtypeError, match="float17"):
        S((2,), "float17")


def test_like():
    x = np.zeros((3, 4), np.float16)
    assert S.like(x) == S((3, 4), "float16")
    assert S.like(S((1,))) == S((1,))
    with pytest.raises(ls.TraceError, match="expected a ShapeDtype or an array"):
        S.like("hello")


# ----------------------------------------------------------------------------------------------
# immutability
def test_graph_node_var_shapedtype_are_frozen():
    g = ls.trace(lambda x: x + 1.0, S((2,)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.nodes = ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.nodes[0].op = "subtract"
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.inputs[0].aval = S((3,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        S((2,)).shape = (3,)
    assert isinstance(g.nodes, tuple) and isinstance(g.inputs, tuple) and isinstance(g.outputs, tuple)
    assert isinstance(g.nodes[0].operands, tuple) and isinstance(g.nodes[0].attrs, tuple)


def test_attrs_are_hashable_and_arrays_read_only():
    attrs = freeze_attrs({"b": [1, 2], "a": np.arange(3)})
    assert [k for k, _ in attrs] == ["a", "b"]
    hash(attrs)
    assert attrs[1][1] == (1, 2)
    with pytest.raises(ValueError):
        attrs[0][1].array[0] = 5


def test_passes_build_new_graphs():
    g = ls.trace(lambda x: lnp.exp(x) * 2.0, S((4,)))
    before = (g.inputs, g.nodes, g.outputs)
    p = ls.compile(g)
    assert (g.inputs, g.nodes, g.outputs) == before
    assert p.stages[0] == ("traced", g)


# ----------------------------------------------------------------------------------------------
# verify(): one hand-built broken graph per invariant
def _add(a, b, out=None):
    out = out or Var(a.aval)
    return Node("add", (a, b), (), out)


def test_verify_accepts_a_hand_built_graph():
    x, y = Var(S((3,))), Var(S((3,)))
    n = _add(x, y)
    g = ls.Graph((x, y), (n,), (n.out,))
    assert g.verify() is g
    np.testing.assert_allclose(ls.evaluate(g, np.ones(3), np.full(3, 2.0)), np.full(3, 3.0))


def test_verify_1_inputs_distinct():
    x = Var(S((3,)))
    n = _add(x, x)
    with pytest.raises(ls.VerifyError, match="appears twice"):
        ls.Graph((x, x), (n,), (n.out,)).verify()


def test_verify_2_ssa_node_redefines_an_input():
    x, y = Var(S((3,))), Var(S((3,)))
    n = _add(x, y, out=x)
    with pytest.raises(ls.VerifyError, match="redefines"):
        ls.Graph((x, y), (n,), (n.out,)).verify()


def test_verify_2_ssa_two_nodes_define_one_var():
    x = Var(S((3,)))
    n1 = _add(x, x)
    n2 = Node("multiply", (x, x), (), n1.out)
    with pytest.raises(ls.VerifyError, match="redefines"):
        ls.Graph((x,), (n1, n2), (n1.out,)).verify()


def test_verify_3_topological_order():
    x = Var(S((3,)))
    n1 = _add(x, x)
    n2 = _add(n1.out, x)
    with pytest.raises(ls.VerifyError, match="before it is defined"):
        ls.Graph((x,), (n2, n1), (n2.out,)).verify()


def test_verify_3_undefined_operand():
    x, stray = Var(S((3,))), Var(S((3,)))
    n = _add(x, stray)
    with pytest.raises(ls.VerifyError, match="before it is defined"):
        ls.Graph((x,), (n,), (n.out,)).verify()


def test_verify_4_unknown_op_is_a_verify_error():
    x = Var(S((3,)))
    n = Node("frobnicate", (x,), (), Var(S((3,))))
    with pytest.raises(ls.VerifyError, match="frobnicate"):
        ls.Graph((x,), (n,), (n.out,)).verify()


def test_verify_4_unknown_op_names_it():
    x = Var(S((3,)))
    n = Node("frobnicate", (x,), (), Var(S((3,))))
    with pytest.raises(Exception, match="frobnicate"):
        ls.Graph((x,), (n,), (n.out,)).verify()


def test_verify_4_operand_count():
    x = Var(S((3,)))
    n = Node("add", (x,), (), Var(S((3,))))
    with pytest.raises(ls.VerifyError, match="add takes 2 operands, got 1"):
        ls.Graph((x,), (n,), (n.out,)).verify()


def test_verify_4_result_aval_disagrees_with_shape_rule():
    x = Var(S((3,)))
    n = _add(x, x, out=Var(S((4,))))
    with pytest.raises(ls.VerifyError, match=r"result is f32\[4\], shape rule says f32\[3\]"):
        ls.Graph((x,), (n,), (n.out,)).verify()
    n = _add(x, x, out=Var(S((3,), "float16")))
    with pytest.raises(ls.VerifyError, match="shape rule says"):
        ls.Graph((x,), (n,), (n.out,)).verify()


def test_verify_4_attrs_fail_the_shape_rule():
    x = Var(S((2, 3)))
    n = Node("transpose", (x,), freeze_attrs({"permutation": (0, 0)}), Var(S((2, 2))))
    with pytest.raises(ls.VerifyError, match="not a permutation"):
        ls.Graph((x,), (n,), (n.out,)).verify()
    n = Node("dot", (x, x), freeze_attrs({"contracting": ((1,), (1,)), "batch": ((), ())}), Var(S((2, 2))))
    ok = ls.Graph((x,), (n,), (n.out,))
    assert ok.verify() is ok  # x·xᵀ is fine
    bad = Node("dot", (x, x), freeze_attrs({"contracting": ((1,), (0,)), "batch": ((), ())}), Var(S((2, 2))))
    with pytest.raises(ls.VerifyError, match="does not match"):
        ls.Graph((x,), (bad,), (bad.out,)).verify()


def test_verify_5_literals_are_scalars():
    x = Var(S((3,)))
    n = Node("add", (x, Literal(1.0, S((3,)))), (), Var(S((3,))))
    with pytest.raises(ls.VerifyError, match="not a scalar"):
        ls.Graph((x,), (n,), (n.out,)).verify()


def test_verify_6_outputs_defined():
    x = Var(S((3,)))
    n = _add(x, x)
    with pytest.raises(ls.VerifyError, match="never defined"):
        ls.Graph((x,), (n,), (Var(S((3,))),)).verify()


def test_verify_docstring_lists_the_invariants():
    doc = ls.Graph.verify.__doc__
    for i in range(1, 7):
        assert f"{i}." in doc


# ----------------------------------------------------------------------------------------------
# HLO-like text
def test_dot_text():
    g = ls.trace(lambda a, b: lnp.dot(a, b), S((4, 5)), S((5, 3)))
    text = str(g)
    assert "lhs_contracting_dims={1}, rhs_contracting_dims={0}" in text
    assert "ROOT %0 = f32[4,3] dot(a, b)" in text
    assert text.startswith("HloModule")
    assert "entry_computation_layout={(f32[4,5], f32[5,3])->f32[4,3]}" in text
    assert "a = f32[4,5] parameter(0)" in text and "b = f32[5,3] parameter(1)" in text


def test_batched_dot_text():
    g = ls.trace(lambda a, b: lnp.einsum("bij,bjk->bik", a, b), S((2, 3, 4)), S((2, 4, 5)))
    assert "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}" in str(g)


def test_one_root_line_per_graph():
    g = ls.trace(lambda x, y, z: lnp.maximum(x * y + z, 0.0), S((8,)), S((8,)), S((8,)))
    lines = str(g).splitlines()
    roots = [ln for ln in lines if "ROOT" in ln]
    assert len(roots) == 1 and "maximum(%1, f32[] constant(0.0))" in roots[0]
    assert roots[0] == [ln for ln in lines if ln.startswith("  ")][-1]  # the last instruction
    assert sum(1 for ln in lines if re.match(r"  %\d+ = |  ROOT %\d+ = ", ln)) == len(g.nodes)


def test_text_of_reduce_and_multiple_outputs():
    g = ls.trace(lambda x: (lnp.sum(x, axis=1), x * 2.0), S((2, 3)))
    text = g.to_text()
    assert "reduce(x), dimensions={1}, to_apply=add" in text
    assert "ROOT tuple = (f32[2], f32[2,3]) tuple(%0, %1)" in text
    assert repr(g).startswith("<Graph")


def test_text_of_identity_has_a_root_copy():
    g = ls.trace(lambda x: x, S((2,)))
    assert "ROOT copy = f32[2] copy(x)" in str(g)


# ----------------------------------------------------------------------------------------------
# the DESIGN.md contract example, as written
def test_contract_example():
    def f(x, y, z):
        return lnp.maximum(x * y + z, 0.0)

    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal((1024, 1024), dtype=np.float32) for _ in range(3))
    spec = ls.ShapeDtype((1024, 1024), "float32")
    g = ls.trace(f, spec, spec, spec)
    assert isinstance(g, ls.Graph) and "HloModule" in str(g)
    out = ls.evaluate(g, x, y, z)
    assert out.dtype == np.float32 and out.shape == (1024, 1024)
    np.testing.assert_array_equal(out, np.maximum(x * y + z, 0))
    prog = ls.compile(g)
    assert prog.graph is not None and len(prog.stages) >= 1 and prog.stages[0] == ("traced", g)
    n = 1024 * 1024
    k = prog.kernels[0]
    assert k.flops > 0 and k.bytes_read > 0 and k.bytes_written > 0
    assert prog.flops == 3 * n  # multiply, add, maximum: one FLOP per element each, fused or not
    # whatever the pipeline fuses, it reads x, y, z at least once and writes the result at least once,
    # and never moves more than the eager program: 3 kernels, (2n + 2n + n) reads and 3n writes of 4 B
    assert 3 * n * 4 <= prog.bytes_read <= 5 * n * 4
    assert n * 4 <= prog.bytes_written <= 3 * n * 4
    eager = ls.compile(g, passes=[])
    assert [(k.flops, k.bytes_read, k.bytes_written) for k in eager.kernels] == [
        (n, 2 * n * 4, n * 4), (n, 2 * n * 4, n * 4), (n, n * 4, n * 4)]  # maximum reads one array + a literal
    gf = ls.grad(f)
    assert callable(gf)
    with pytest.raises(TypeError, match="one scalar output"):
        gf(x, y, z)  # f is not scalar-valued, as with jax.grad
    gx = ls.grad(lambda x, y, z: lnp.sum(f(x, y, z)))(x, y, z)
    np.testing.assert_allclose(gx, np.where(x * y + z > 0, y, 0), rtol=1e-6)


def test_concatenate_of_no_operands_is_a_shape_error():
    from labsim.core import ops
    with pytest.raises(ls.ShapeError, match="concatenate: needs at least one operand"):
        ops.get("concatenate").infer((), {"dimension": 0})
