"""labsim's value semantics (stated once, in ``labsim/core/dtypes.py``) checked against NumPy and JAX's rules.

Each case was once silently wrong: a result that looked fine and was not. Every one is checked both
eagerly (lnp on NumPy arrays) and traced (``ls.evaluate`` of the recorded graph) and compiled.
"""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp

S = ls.ShapeDtype


def all_three(f, *args):
    """f run eagerly, traced + evaluated, and compiled + evaluated: the three must agree."""
    eager = np.asarray(f(*args))
    g = ls.trace(f, *args)
    traced = ls.evaluate(g, *args)
    compiled = ls.evaluate(ls.compile(g).graph, *args)
    for other in (traced, compiled):
        assert other.dtype == eager.dtype and other.shape == eager.shape
        np.testing.assert_allclose(other, eager, rtol=1e-6)  # (a mean divides, or multiplies by 1/n)
    return eager


def test_sum_of_a_comparison_counts():
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    out = all_three(lambda x: lnp.sum(x > 0), x)
    assert out.dtype == np.int32 and int(out) == int(np.sum(x > 0)) == 3


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "bool"])
def test_narrow_integers_accumulate_in_int32(dtype):
    x = np.full((300,), 100 if dtype != "bool" else True, dtype=dtype)
    out = all_three(lambda x: lnp.sum(x), x)
    assert out.dtype == np.int32 and int(out) == int(np.sum(x.astype(np.int64)))


def test_mean_of_integers_is_float32():
    x = np.array([1, 2, 4], np.int32)
    out = all_three(lambda x: lnp.mean(x), x)
    assert out.dtype == np.float32 and float(out) == pytest.approx(np.mean(x))


@pytest.mark.parametrize("y", [2.5, -2.5, 2, -3])
def test_floor_division_floors_like_numpy(y):
    x = np.array([7, -7, 0, 5], np.int32)
    out = all_three(lambda x: lnp.floor_divide(x, y), x)
    np.testing.assert_array_equal(out, np.floor_divide(x.astype(np.float32) if isinstance(y, float) else x, y))
    assert out.dtype == (np.float32 if isinstance(y, float) else np.int32)


def test_floor_division_of_floats_and_its_gradient_is_zero():
    x = np.array([1.5, -1.5, 2.0], np.float32)
    out = all_three(lambda x: lnp.floor_divide(x, 0.5), x)
    np.testing.assert_array_equal(out, np.floor_divide(x, np.float32(0.5)))
    grad = ls.grad(lambda x: lnp.sum(lnp.floor(x) * x))(x)  # d/dx floor(x)·x = floor(x) (floor' = 0)
    np.testing.assert_array_equal(grad, np.floor(x))


def test_integer_to_a_negative_power_is_refused_as_in_numpy():
    x = np.array([2, 3], np.int32)
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(x, -1)
    with pytest.raises(ValueError, match=r"power: integers to negative integer powers .*int32 \*\* -1"):
        lnp.power(x, -1)
    with pytest.raises(ValueError, match="negative integer powers"):
        ls.trace(lambda x: x ** -2, S((2,), "int32"))
    np.testing.assert_allclose(all_three(lambda x: x ** -1, x.astype(np.float32)), 1 / x.astype(np.float32))


@pytest.mark.parametrize("make", [
    lambda: lnp.asarray(1000, "int8"),
    lambda: ls.trace(lambda x: x + 1000, S((3,), "int8")),
    lambda: ls.trace(lambda x: x.at[0].set(1000), S((3,), "int8")),
    lambda: ls.trace(lambda x: x * 2 ** 40, S((3,), "int32")),
    lambda: lnp.asarray(np.array([2 ** 40])),  # int64 data does not fit JAX's default int32
])
def test_python_ints_that_do_not_fit_are_refused_not_wrapped(make):
    with pytest.raises(ls.DtypeError, match=r"(does|do) not fit in int(8|32) \(range -?\d+(\.\.| to )\d+\)"):
        make()


def test_evaluate_refuses_inputs_that_would_wrap():
    g = ls.trace(lambda a: a + 1, S((2,), "int8"))
    with pytest.raises(ls.TraceError, match=r"argument 0 \(a\) holds values from 1 to 1000, outside the range of "
                                            r"the graph's int8 \(-128\.\.127\)"):
        ls.evaluate(g, np.array([1000, 1]))
    np.testing.assert_array_equal(ls.evaluate(g, np.array([100, -128])), np.array([101, -127], np.int8))


@pytest.mark.parametrize("x, dtype", [(3.0, np.float32), (3, np.int32), (True, np.bool_)])
def test_zeros_like_of_a_python_scalar_takes_its_weak_type(x, dtype):
    assert lnp.zeros_like(x).dtype == dtype and lnp.ones_like(x).dtype == dtype
    np.testing.assert_array_equal(lnp.zeros_like(x), np.zeros_like(np.asarray(x, dtype)))


def test_dtype_none_is_refused_not_float64():
    with pytest.raises(ls.DtypeError, match="dtype None: give a dtype"):
        ls.dtypes.canonical_dtype(None)
    with pytest.raises(ls.DtypeError, match="dtype None"):
        ls.llm.kv_cache_bytes_per_token(ls.llm.PRESETS["GPT-2 small"], None)
    assert lnp.zeros(3, dtype="bfloat16").dtype == np.float32  # evaluated in float32, counted as 2 bytes


@pytest.mark.parametrize("call, what", [
    (lambda x: lnp.sum(x, axis=1.5), "axis must be an integer, got float 1.5"),
    (lambda x: lnp.sum(x, axis="1"), "axis must be an integer, got str"),
    (lambda x: lnp.reshape(x, (3.9, 2.1)), r"reshape: size 3.9 in shape \(3.9, 2.1\) must be an integer"),
    (lambda x: lnp.broadcast_to(x, (2, 3.0, 2)), "broadcast_to: size 3.0"),
    (lambda x: lnp.sum(x, axis=(0, 0)), r"repeated axis in \(0, 0\)"),
    (lambda x: lnp.sum(x, axis=True), "axis must be an integer, got the bool True"),
])
def test_fractional_string_or_repeated_axes_and_sizes_are_refused(call, what):
    with pytest.raises((TypeError, ls.ShapeError), match=what):
        ls.trace(call, S((3, 2)))


@pytest.mark.parametrize("index", [True, False, np.True_])
def test_a_boolean_index_is_refused_not_read_as_an_integer(index):
    with pytest.raises(IndexError, match="boolean index is not supported"):
        ls.trace(lambda x: x[index], S((3,)))


def test_an_integer_array_index_is_refused_clearly():
    with pytest.raises(ls.ShapeError, match="advanced indexing, a gather"):
        ls.trace(lambda x: x[np.array([0, 1])], S((3,)))


def test_compiling_keeps_shapes_when_a_constant_is_uniform():
    """simplify once turned ``x * ones(3)`` (x a scalar) into a scalar: the shape must survive."""
    cases = [(lambda x: x * lnp.ones(3), (np.float32(2.0),)),
             (lambda x, y: lnp.where(y > 0, x, lnp.ones(4)), (np.float32(2.0), np.float32(1.0))),
             (lambda x: x + lnp.asarray([0.0, 0.0]), (np.float32(2.0),))]
    for f, args in cases:
        want = np.asarray(f(*args))
        g = ls.trace(f, *args)
        for prog in (ls.compile(g), ls.compile(g, verify="each")):
            got = ls.evaluate(prog.graph, *args)
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_a_pass_that_changes_the_signature_is_caught_in_the_default_path():
    def shrink(g):  # a broken pass: drops the result's shape
        return ls.trace(lambda x: lnp.sum(x), *g.in_avals)

    shrink.__name__ = "shrink"
    with pytest.raises(ls.VerifyError, match=r"pass shrink changed the program's signature from \(f32\[4\]\) -> "
                                             r"\(f32\[4\]\) to \(f32\[4\]\) -> \(f32\[\]\)"):
        ls.compile(ls.trace(lambda x: x * 2.0, S((4,))), passes=[shrink])


def test_a_causal_mask_stays_small_when_traced_at_full_context():
    """A NumPy mask broadcast inside a trace is a constant of its own size plus a broadcast node."""
    mask = np.tril(np.ones((64, 64), bool))
    g = ls.trace(lambda s: lnp.where(mask, s, -1e30), S((2, 8, 64, 64)))
    consts = [n for n in g.nodes if n.op == "constant"]
    assert [n.out.aval.shape for n in consts] == [(64, 64)]
    s = np.random.default_rng(0).normal(size=(2, 8, 64, 64)).astype(np.float32)
    np.testing.assert_array_equal(ls.evaluate(g, s), np.where(mask, s, np.float32(-1e30)))


def test_an_integer_array_in_an_index_update_is_refused_clearly():
    with pytest.raises(ls.ShapeError, match="advanced indexing, a gather"):
        ls.trace(lambda x: x.at[np.array([0, 1])].set(1.0), S((3,)))


@pytest.mark.parametrize("shape, axis", [((3, 0), -1), ((3, 0), 0), ((0, 4), -1)])
def test_softmax_over_an_empty_array_is_empty_as_in_jax(shape, axis):
    # jax.nn.softmax takes its max with initial=-inf, so an empty axis gives an empty result, not an error
    import labsim.nn as lnn

    x = np.zeros(shape, np.float32)
    out = all_three(lambda v: lnn.softmax(v, axis=axis), x)
    assert out.shape == shape and out.dtype == np.float32
    # a max over the empty axis itself still has no value, and says so when traced
    if shape[axis] == 0:
        with pytest.raises(ls.ShapeError, match="is empty"):
            ls.trace(lambda v: lnp.max(v, axis=axis), S(shape, "float32"))
