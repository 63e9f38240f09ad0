"""``ls.grad`` against central finite differences of the NumPy twin, and the shape of backward graphs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp

from strategies import programs

S = ls.ShapeDtype


def finite_difference(f, args, h=1e-6):
    """Central differences of scalar ``f`` w.r.t. every element of every argument (float64)."""
    grads = []
    args = [np.array(a, dtype=np.float64) for a in args]
    for i, a in enumerate(args):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + h
            fp = float(f(*args))
            a[idx] = old - h
            fm = float(f(*args))
            a[idx] = old
            g[idx] = (fp - fm) / (2 * h)
        grads.append(g)
    return grads


def check_against_fd(prog, rtol=1e-4):
    argnums = tuple(range(len(prog.inputs)))
    got = ls.grad(prog.f, argnums=argnums)(*prog.inputs)
    assert isinstance(got, tuple) and len(got) == len(prog.inputs)
    fd = finite_difference(prog.numpy_twin, prog.inputs)
    fval = abs(float(prog.numpy_twin(*prog.inputs)))
    for i, (g, want, x) in enumerate(zip(got, fd, prog.inputs)):
        g = np.asarray(g)
        assert g.shape == x.shape, (i, g.shape, x.shape, prog)
        assert g.dtype == x.dtype, (i, g.dtype, prog)
        scale = 1.0 + fval + float(np.max(np.abs(want), initial=0.0))
        np.testing.assert_allclose(g, want, rtol=rtol, atol=1e-6 * scale, err_msg=f"d/dp{i} of {prog!r}")
    return got


SETTINGS = settings(max_examples=50)


@SETTINGS
@given(programs(("elementwise", "broadcast", "reduce", "movement"), dtype="float64", differentiable=True,
                scalar_output=True, max_steps=4))
def test_grad_matches_finite_differences(prog):
    check_against_fd(prog)


@SETTINGS
@given(programs(("contract", "nn", "elementwise"), dtype="float64", differentiable=True, scalar_output=True,
                max_steps=3))
def test_grad_of_contractions_and_nn_matches_finite_differences(prog):
    check_against_fd(prog)


@settings(max_examples=30)
@given(programs(dtype="float64", differentiable=True, scalar_output=True, max_steps=4))
def test_traced_grad_equals_eager_grad(prog):
    """ls.grad is traceable: its graph, evaluated, gives the gradient computed directly."""
    argnums = tuple(range(len(prog.inputs)))
    gf = ls.grad(prog.f, argnums=argnums)
    eager = gf(*prog.inputs)
    g = ls.trace(gf, *prog.specs).verify()
    assert g.out_avals == prog.specs
    traced = ls.evaluate(g, *prog.inputs)
    traced = traced if isinstance(traced, tuple) else (traced,)
    for a, b in zip(traced, eager):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * (1 + float(np.max(np.abs(b), initial=0))))


@settings(max_examples=20)
@given(programs(("elementwise", "broadcast", "contract", "reduce"), dtype="float32", differentiable=True,
                scalar_output=True, max_steps=3))
def test_float32_grad_within_tolerance(prog):
    got = ls.grad(prog.f, argnums=tuple(range(len(prog.inputs))))(*prog.inputs)
    fd = finite_difference(prog.numpy_twin, [x.astype(np.float64) for x in prog.inputs])
    for g, want in zip(got, fd):
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, want, rtol=2e-3, atol=2e-3 * (1 + float(np.max(np.abs(want), initial=0))))


# ----------------------------------------------------------------------------------------------
# closed forms
def test_grad_of_sum_of_product():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    gx, gw = ls.grad(lambda x, w: lnp.sum(lnp.dot(x, w)), argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, np.ones((3, 5)) @ w.T)
    np.testing.assert_allclose(gw, x.T @ np.ones((3, 5)))
    (only_x,) = (ls.grad(lambda x, w: lnp.sum(lnp.dot(x, w)))(x, w),)
    np.testing.assert_allclose(only_x, gx)


def test_value_and_grad():
    x = np.linspace(-1, 1, 7)
    v, g = ls.value_and_grad(lambda x: lnp.sum(lnp.tanh(x) ** 2))(x)
    np.testing.assert_allclose(v, np.sum(np.tanh(x) ** 2))
    np.testing.assert_allclose(g, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2))


def _dots(g):
    return [n for n in g.nodes if n.op == "dot"]


def test_backward_of_a_matmul_is_two_more_matmuls():
    M, K, N = 8, 16, 4

    def loss(x, w):
        return lnp.sum(lnp.tanh(lnp.dot(x, w)))

    g = ls.trace(ls.grad(loss, argnums=(0, 1)), S((M, K)), S((K, N)))
    dots = _dots(g)
    assert len(dots) == 3  # forward X·W, dX = dY·Wᵀ, dW = Xᵀ·dY
    assert {d.out.aval.shape for d in dots} == {(M, N), (M, K), (K, N)}
    flops = sum(ls.ops.get("dot").count_flops((d.operands[0].aval, d.operands[1].aval), d.out.aval, d.params)
                for d in dots)
    assert flops == 3 * (2 * M * N * K)  # training ≈ 3× the forward FLOPs
    assert g.out_avals == (S((M, K)), S((K, N)))


def test_unused_cotangent_dot_is_removed_by_the_compiler():
    def loss(x, w):
        return lnp.sum(lnp.tanh(lnp.dot(x, w)))

    g = ls.trace(ls.grad(loss, argnums=1), S((8, 16)), S((16, 4)))
    prog = ls.compile(g)
    assert len(_dots(prog.graph)) == 2  # forward + dW; dX is dead code
    assert sum(1 for k in prog.kernels if k.kind is ls.KernelKind.CONTRACTION) == 2


def test_two_layer_mlp_backward_has_six_dots():
    def loss(x, w1, w2):
        return lnp.sum(lnn.gelu(x @ w1) @ w2)

    g = ls.trace(ls.grad(loss, argnums=(0, 1, 2)), S((4, 8)), S((8, 16)), S((16, 2)))
    assert len(_dots(g)) == 6
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(s.shape).astype(np.float64) for s in (S((4, 8)), S((8, 16)), S((16, 2)))]
    twin = lambda x, w1, w2: np.sum((0.5 * (x @ w1) * (1 + np.tanh(np.sqrt(2 / np.pi) * ((x @ w1) + 0.044715 * (x @ w1) ** 3)))) @ w2)
    got = ls.grad(loss, argnums=(0, 1, 2))(*xs)
    for a, b in zip(got, finite_difference(twin, xs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_grad_of_a_non_scalar_function_is_a_clear_type_error():
    with pytest.raises(TypeError, match=r"one scalar output.*f32\[2,3\]"):
        ls.grad(lambda x: lnp.tanh(x))(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="one scalar output"):
        ls.trace(ls.grad(lambda x: (lnp.sum(x), lnp.sum(x))), S((3,)))


def test_grad_of_a_function_ignoring_its_argument_is_zero():
    g = ls.grad(lambda x, y: lnp.sum(y * 2.0))(np.ones(3), np.ones(3))
    np.testing.assert_array_equal(g, np.zeros(3))
