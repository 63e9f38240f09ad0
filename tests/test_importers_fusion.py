"""An imported GPT-2 block fuses into as many kernels as its ``labsim.numpy`` twin (issue 26, item 2).

JAX writes a bias or a layer-norm scale as ``broadcast_in_dim`` to (1, 1, d) and then an implicit
broadcast; core ATen computes ``linear`` on (b·t, d) between two views. Imported op for op, both put a
value of another shape inside the layer norm's row kernel, which row fusion refuses, and the kernels then
wait for each other (31 cycle-breaking splits, 40 kernels for JAX and 43 for PyTorch at d = 768). The
importers now emit what ``lnp`` emits (one broadcast from (d,); the product on (b, t, d)), and the counts
are the twin's. PyTorch's ``scaled_dot_product_attention`` used to cost two kernels more: its core ATen
decomposition scales q and k by √scale each before the product (two element-wise kernels that the bias
add of the qkv projection was computed again in), where the twin scales the scores once. ``from_torch``
now reads the graph before decomposition when it has a row for every op, and its sdpa row scales the
scores once, as the twin does (labsim/importers/torch_sdpa.py), so the counts are equal.
"""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
from labsim.importers import examples

D, HEADS, T = 768, 12, 32


def _twin():
    specs = ({k: ls.ShapeDtype(s, "float32") for k, s in examples.param_shapes(D).items()},
             ls.ShapeDtype((1, T, D), "float32"))
    return ls.compile(ls.trace(lambda p, x: examples.gpt2_block_lnp(p, x, heads=HEADS), *specs))


def _splits(prog):
    return len(prog.graph.plan.split)


def test_jax_block_fuses_like_its_lnp_twin():
    jax = pytest.importorskip("jax")
    params = {k: jax.numpy.zeros(s, "float32") for k, s in examples.param_shapes(D).items()}
    g = ls.from_jax(lambda p, x: examples.gpt2_block_jax(p, x, heads=HEADS), params,
                    jax.numpy.zeros((1, T, D), "float32"))
    prog, twin = ls.compile(g), _twin()
    assert _splits(prog) == 0
    assert len(prog.kernels) == len(twin.kernels)


def test_torch_block_fuses_like_its_lnp_twin():
    torch = pytest.importorskip("torch")
    g = ls.from_torch(examples.gpt2_block_torch(None, D, HEADS), torch.zeros(1, T, D))
    prog, twin = ls.compile(g), _twin()
    assert _splits(prog) == 0
    assert len(prog.kernels) == len(twin.kernels)


def test_jax_bias_broadcast_is_one_node_and_values_stay_equal():
    """The rewritten broadcast computes what JAX computes (a (d,) bias and a (1, 1, d) one, and a genuine
    size-1 expansion that is then broadcast along a middle axis)."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    x, b = rng.standard_normal((2, 5, 7)).astype(np.float32), rng.standard_normal(7).astype(np.float32)
    c = rng.standard_normal((2, 7)).astype(np.float32)

    def f(x, b, c):
        return x * b + b[None, None, :], x - c[:, None, :]

    g = ls.from_jax(f, x, b, c)
    assert not any(n.op == "reshape" for n in ls.compile(g).graph.nodes)
    for got, want in zip(ls.evaluate(g, x, b, c), f(x, b, c)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-6, atol=1e-6)
