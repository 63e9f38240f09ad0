"""Tracing and ``labsim.numpy``: graphs recorded, eager mode, operators, weak typing, jnp-compatible semantics."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp

S = ls.ShapeDtype
rng = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-2, 2, size=shape).astype(dtype)


def run(f, *xs):
    """Trace ``f`` on the arrays' specs and evaluate it: the traced path."""
    return ls.evaluate(ls.trace(f, *[S.like(x) for x in xs]), *xs)


# ----------------------------------------------------------------------------------------------
# what tracing records
def test_trace_records_one_node_per_op_and_input_names():
    g = ls.trace(lambda x, y, z: lnp.maximum(x * y + z, 0.0), S((4, 4)), S((4, 4)), S((4, 4)))
    assert [n.op for n in g.nodes] == ["multiply", "add", "maximum"]
    assert g.input_names == ("x", "y", "z")
    assert g.in_avals == (S((4, 4)),) * 3 and g.out_avals == (S((4, 4)),)
    lit = g.nodes[2].operands[1]
    assert isinstance(lit, ls.Literal) and lit.value == 0.0 and lit.aval == S((), "float32")


def test_trace_accepts_arrays_as_specs():
    x = rand(2, 3)
    g = ls.trace(lambda a: a * 2.0, x)
    assert g.in_avals == (S((2, 3)),)


def test_einsum_bf_fd_db_is_one_dot_and_a_transpose():
    g = ls.trace(lambda a, b: lnp.einsum("bf,fd->db", a, b), S((2, 3)), S((3, 5)))
    assert g.op_counts() == {"dot": 1, "transpose": 1}
    dot = g.nodes[0]
    assert dot.attr("contracting") == ((1,), (0,)) and dot.attr("batch") == ((), ())
    assert g.nodes[1].attr("permutation") == (1, 0)
    assert g.out_avals == (S((5, 2)),)
    a, b = rand(2, 3), rand(3, 5)
    np.testing.assert_allclose(ls.evaluate(g, a, b), np.einsum("bf,fd->db", a, b), rtol=1e-5)


def test_einsum_ij_jk_ik_is_a_single_dot():
    g = ls.trace(lambda a, b: lnp.einsum("ij,jk->ik", a, b), S((2, 3)), S((3, 5)))
    assert g.op_counts() == {"dot": 1}


def test_broadcasting_becomes_explicit_broadcast_nodes():
    g = ls.trace(lambda x, b: x + b, S((4, 3)), S((3,)))
    assert [n.op for n in g.nodes] == ["broadcast", "add"]
    assert g.nodes[0].attr("broadcast_dimensions") == (1,) and g.nodes[0].attr("shape") == (4, 3)
    g = ls.trace(lambda x, b: x + b, S((4, 3)), S((4, 1)))
    assert g.nodes[0].op == "broadcast" and g.nodes[0].out.aval == S((4, 3))
    g = ls.trace(lambda x: x + 1.0, S((4, 3)))
    assert [n.op for n in g.nodes] == ["add"]  # a Python scalar stays a literal: no broadcast node


def test_traced_values_know_shape_and_dtype_only():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x))
        return x

    ls.trace(f, S((3, 5), "bf16"))
    assert seen == {"shape": (3, 5), "dtype": "bfloat16", "ndim": 2, "size": 15, "len": 3}


# ----------------------------------------------------------------------------------------------
# eager mode
def test_eager_mode_computes_with_numpy_arrays():
    x, y = rand(3, 4), rand(4)
    out = lnp.maximum(x * 2.0 + y, 0.0)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, np.maximum(x * 2.0 + y, 0.0))
    for fn, npfn in [(lnp.exp, np.exp), (lnp.tanh, np.tanh), (lnp.abs, np.abs), (lnp.negative, np.negative)]:
        r = fn(x)
        assert isinstance(r, np.ndarray) and r.dtype == np.float32
        np.testing.assert_allclose(r, npfn(x), rtol=1e-6)
    np.testing.assert_allclose(lnp.sum(x, axis=0), x.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(lnp.dot(x, x.T), x @ x.T, rtol=1e-5)
    np.testing.assert_allclose(lnn.softmax(x), np.exp(x) / np.exp(x).sum(-1, keepdims=True), rtol=1e-5)


def test_eager_and_traced_agree():
    def f(x, w):
        h = lnp.tanh(x @ w)
        return lnp.mean(h * h, axis=-1, keepdims=True) + lnp.sum(h[:, 1:], axis=1, keepdims=True)

    x, w = rand(4, 3), rand(3, 5)
    np.testing.assert_allclose(f(x, w), run(f, x, w), rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# operators
@pytest.mark.parametrize("name, op", [
    ("add", lambda a, b: a + b), ("radd", lambda a, b: 1.5 + b), ("sub", lambda a, b: a - b),
    ("rsub", lambda a, b: 1.5 - a), ("mul", lambda a, b: a * b), ("rmul", lambda a, b: 3.0 * a),
    ("div", lambda a, b: a / (b * b + 1.0)), ("rdiv", lambda a, b: 1.0 / (a * a + 1.0)),
    ("neg", lambda a, b: -a), ("pos", lambda a, b: +a), ("abs", lambda a, b: abs(a)),
    ("pow2", lambda a, b: a ** 2), ("pow3", lambda a, b: a ** 3), ("matmul", lambda a, b: a @ b.T),
    ("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b), ("eq", lambda a, b: a == a), ("ne", lambda a, b: a != b),
    ("getitem", lambda a, b: a[1:, ::2]), ("getitem_int", lambda a, b: a[-1]), ("newaxis", lambda a, b: a[None, :, 0]),
    ("ellipsis", lambda a, b: a[..., 1]), ("T", lambda a, b: a.T), ("reshape", lambda a, b: a.reshape(-1)),
    ("sum_method", lambda a, b: a.sum(axis=0)), ("mean_method", lambda a, b: a.mean()),
])
def test_operators_match_numpy(name, op):
    a, b = rand(3, 4), rand(3, 4)
    ref = op(a, b)
    got = run(op, a, b)
    assert got.shape == np.shape(ref) and got.dtype == np.asarray(ref).dtype, name
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_array_on_the_left_defers_to_the_tracer():
    c = rand(4)
    g = ls.trace(lambda x: c * x, S((4,)))  # ndarray.__mul__ must not try to convert the Tracer
    assert g.op_counts() == {"constant": 1, "multiply": 1}
    x = rand(4)
    np.testing.assert_allclose(ls.evaluate(g, x), c * x)


# ----------------------------------------------------------------------------------------------
# weak typing of Python scalars (as in JAX)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_python_scalars_take_the_array_dtype(dtype):
    for f in (lambda x: x * 2, lambda x: x * 2.5, lambda x: 2 + x, lambda x: lnp.maximum(x, 0.0),
              lambda x: lnp.where(x > 0, x, 0.0)):
        assert ls.trace(f, S((3,), dtype)).out_avals == (S((3,), dtype),)


def test_weak_typing_eager():
    x = rand(3)
    assert (lnp.asarray(x) * 2).dtype == np.float32
    assert lnp.multiply(x, 2.5).dtype == np.float32
    assert lnp.add(x.astype(np.float16), 1.0).dtype == np.float16


def test_int_arrays_with_python_scalars():
    assert ls.trace(lambda x: x + 1, S((2,), "int32")).out_avals == (S((2,), "int32"),)
    assert ls.trace(lambda x: x * 2.5, S((2,), "int32")).out_avals == (S((2,), "float32"),)
    assert ls.trace(lambda x: x / 2, S((2,), "int32")).out_avals == (S((2,), "float32"),)  # jnp.divide


def test_mixing_array_dtypes_inserts_a_convert():
    g = ls.trace(lambda x, y: x * y, S((2,), "float16"), S((2,), "float32"))
    assert [n.op for n in g.nodes] == ["convert", "multiply"]
    assert g.out_avals == (S((2,), "float32"),)
    assert ls.trace(lambda x, y: x + y, S((2,), "float16"), S((2,), "bfloat16")).out_avals == (S((2,), "float32"),)


def test_asarray_defaults_to_32_bits():
    assert lnp.asarray([1.0, 2.0]).dtype == np.float32
    assert lnp.asarray([1, 2]).dtype == np.int32
    assert lnp.asarray(np.ones(2), "float16").dtype == np.float16


# ----------------------------------------------------------------------------------------------
# jnp-compatible semantics
@pytest.mark.parametrize("sa, sb", [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 5)),
])
def test_matmul_batch_broadcasting(sa, sb):
    a, b = rand(*sa), rand(*sb)
    ref = np.matmul(a, b)
    got = run(lnp.matmul, a, b)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lnp.matmul(a, b), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sa, sb", [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5))])
def test_dot_matches_numpy(sa, sb):
    a, b = rand(*sa), rand(*sb)
    ref = np.dot(a, b)
    got = run(lnp.dot, a, b)
    assert got.shape == np.shape(ref)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (2, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(fn, axis, keepdims):
    x = rand(2, 3, 4)
    ref = getattr(np, fn)(x, axis=axis, keepdims=keepdims)
    got = run(lambda a: getattr(lnp, fn)(a, axis=axis, keepdims=keepdims), x)
    assert got.shape == np.shape(ref) and got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_mean_of_ints_is_float32():
    assert ls.trace(lambda x: lnp.mean(x, axis=0, keepdims=True), S((3, 4), "int32")).out_avals == (S((1, 4), "float32"),)


@pytest.mark.parametrize("cs, xs, ys", [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ()), ((3, 1), (1, 4), (3, 4))])
def test_where_broadcasts_like_numpy(cs, xs, ys):
    c, x, y = rand(*cs) > 0, rand(*xs), rand(*ys)
    ref = np.where(c, x, y)
    got = run(lambda c, x, y: lnp.where(c, x, y), c, x, y)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_where_with_a_non_bool_condition():
    x = rand(5)
    np.testing.assert_array_equal(run(lambda x: lnp.where(x, 1.0, 2.0), x), np.where(x, 1.0, 2.0).astype(np.float32))


def test_shape_functions_match_numpy():
    x = rand(2, 3, 4)
    cases = [
        (lambda a: lnp.transpose(a), lambda a: np.transpose(a)),
        (lambda a: lnp.transpose(a, (1, 0, 2)), lambda a: np.transpose(a, (1, 0, 2))),
        (lambda a: lnp.reshape(a, (4, -1)), lambda a: np.reshape(a, (4, -1))),
        (lambda a: lnp.swapaxes(a, 0, 2), lambda a: np.swapaxes(a, 0, 2)),
        (lambda a: lnp.expand_dims(a, 1), lambda a: np.expand_dims(a, 1)),
        (lambda a: lnp.squeeze(a[:1]), lambda a: np.squeeze(a[:1])),
        (lambda a: lnp.broadcast_to(a[0, :1], (5, 3, 4)), lambda a: np.broadcast_to(a[0, :1], (5, 3, 4))),
        (lambda a: lnp.concatenate([a, a * 2.0], axis=1), lambda a: np.concatenate([a, a * 2.0], axis=1)),
        (lambda a: a[:, ::2, 1:3], lambda a: a[:, ::2, 1:3]),
        (lambda a: lnp.outer(a[0, 0], a[1, 1]), lambda a: np.outer(a[0, 0], a[1, 1])),
    ]
    for lf, nf in cases:
        ref = nf(x)
        got = run(lf, x)
        assert got.shape == ref.shape
        np.testing.assert_array_equal(got, ref)


def test_nn_helpers_match_numpy():
    x = rand(3, 5)
    m = x.max(-1, keepdims=True)
    np.testing.assert_allclose(run(lnn.softmax, x), np.exp(x - m) / np.exp(x - m).sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(run(lambda a: lnn.softmax(a, axis=0), x).sum(axis=0), np.ones(5), rtol=1e-5)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(run(lnn.layer_norm, x), (x - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    gamma, beta = rand(5), rand(5)
    np.testing.assert_allclose(run(lambda a, g, b: lnn.layer_norm(a, g, b), x, gamma, beta),
                               (x - mu) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5)
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(run(lnn.gelu, x), tanh_gelu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(lnn.relu, x), np.maximum(x, 0))
    np.testing.assert_allclose(run(lnn.sigmoid, x), 1 / (1 + np.exp(-x)), rtol=1e-6)


def test_composites_trace_to_one_node():
    for f in (lnn.softmax, lnn.gelu, lnn.standardize, lambda x: lnp.mean(x, axis=1)):
        g = ls.trace(f, S((4, 8)))
        assert len(g.nodes) == 1 and ls.ops.get(g.nodes[0].op).kind is ls.ops.OpKind.COMPOSITE


def test_lnp_names_mirror_jax_numpy():
    for name in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "where", "exp", "log", "tanh",
                 "sqrt", "sum", "max", "mean", "dot", "matmul", "einsum", "transpose", "reshape", "broadcast_to",
                 "float32", "bfloat16", "asarray", "zeros", "ones"]:
        assert hasattr(lnp, name), name
    assert set(lnp.__all__) <= set(dir(lnp))


def test_a_precision_pair_takes_the_more_precise_one():
    """``precision=(lhs, rhs)`` as jnp.dot has it: the more precise operand decides (this once called
    ``lnp.max`` in place of the builtin and raised a TypeError)."""
    g = ls.trace(lambda a, b: lnp.dot(a, b, precision=("high", "highest")), S((2, 3)), S((3, 4)))
    assert g.nodes[0].attr("precision") == "highest"
    g = ls.trace(lambda a, b: lnp.dot(a, b, precision=(None, "high")), S((2, 3)), S((3, 4)))
    assert g.nodes[0].attr("precision") == "high"
    with pytest.raises(ValueError, match="precision"):
        lnp.dot(rand(2, 3), rand(3, 4), precision=("high", "high", "high"))


def test_the_numpy_front_end_is_a_package_of_small_modules():
    """``labsim.numpy`` is one namespace over small modules; each name in ``__all__`` is the one its module
    defines (re-exported, not copied)."""
    from labsim.frontend.numpy import elementwise, linalg, reductions
    assert lnp.add is elementwise.add and lnp.einsum is linalg.einsum and lnp.sum is reductions.sum
    assert not [n for n in lnp.__all__ if n.startswith("_")]
