"""x.at[idx].set / .add / .multiply / .get: functional updates, as in jax.numpy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import labsim as ls
import labsim.numpy as lnp

S = ls.ShapeDtype


@st.composite
def regions(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    idx = []
    for n in shape:
        if draw(st.booleans()):
            idx.append(draw(st.integers(-n, n - 1)))
        else:
            a = draw(st.integers(0, n - 1))
            b = draw(st.integers(a + 1, n))
            idx.append(slice(a, b))
    return shape, tuple(idx), draw(st.sampled_from(["set", "add", "multiply"])), draw(st.integers(0, 2**31))


@settings(max_examples=80)
@given(regions())
def test_index_update_matches_numpy_and_grad(case):
    shape, idx, how, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    region = x[idx]
    v = rng.standard_normal(np.shape(region))

    def f(x, v):
        return getattr(x.at[idx], how)(v)

    g = ls.trace(f, S(shape, "float64"), S(np.shape(region), "float64")).verify()
    expect = x.copy()
    if how == "set":
        expect[idx] = v
    elif how == "add":
        expect[idx] += v
    else:
        expect[idx] *= v
    np.testing.assert_allclose(ls.evaluate(g, x, v), expect, rtol=1e-12)
    np.testing.assert_allclose(ls.evaluate(ls.compile(g).graph, x, v), expect, rtol=1e-12)
    # gradient of sum(w * f(x, v)) against central differences
    w = rng.standard_normal(shape)
    loss = lambda x, v: lnp.sum(f(x, v) * w)
    gx, gv = ls.grad(loss, argnums=(0, 1))(x, v)

    def num(i, arr):
        out = np.zeros_like(arr)
        for k in np.ndindex(arr.shape):
            d = np.zeros_like(arr)
            d[k] = 1e-6
            args = [x, v]
            plus = [a.copy() for a in args]
            minus = [a.copy() for a in args]
            plus[i] = plus[i] + d
            minus[i] = minus[i] - d
            out[k] = (ls.evaluate(ls.trace(loss, S(shape, "float64"), S(np.shape(region), "float64")), *plus)
                      - ls.evaluate(ls.trace(loss, S(shape, "float64"), S(np.shape(region), "float64")), *minus)) / 2e-6
        return out

    np.testing.assert_allclose(gx, num(0, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gv, num(1, v), rtol=1e-5, atol=1e-6)


def test_index_update_is_functional_and_prints_as_dynamic_update_slice():
    def f(x):
        y = x.at[0, 1:3].set(7.0)
        return x + y  # x is unchanged: y is a new value

    g = ls.trace(f, S((2, 4)))
    assert "dynamic-update-slice(x, " in g.to_text() and "start={0,1}" in g.to_text()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    y = x.copy()
    y[0, 1:3] = 7
    np.testing.assert_array_equal(ls.evaluate(g, x), x + y)


def test_index_update_errors_name_the_problem():
    with pytest.raises(ls.ShapeError, match=r"value of shape \(3,\) does not fit the region \(2,\)"):
        ls.trace(lambda x: x.at[1:3].set(lnp.ones(3)), S((4,)))
    with pytest.raises(IndexError, match="step 1 only"):
        ls.trace(lambda x: x.at[::2].set(0.0), S((4,)))
    with pytest.raises(IndexError, match="out of bounds"):
        ls.trace(lambda x: x.at[4].set(0.0), S((4,)))
