"""Pytrees: flatten/unflatten, and trace, evaluate, grad, value_and_grad, vjp on nested containers."""
from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

import labsim as ls
import labsim.numpy as lnp
from labsim.core.pytree import TreeDef, leaf_names, tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

from strategies import pytrees, shapes
from test_grad import finite_difference

S = ls.ShapeDtype
Pair = collections.namedtuple("Pair", "first second")


def same_tree(a, b) -> bool:
    """Same structure, and leaves that are the same objects."""
    (la, ta), (lb, tb) = tree_flatten(a), tree_flatten(b)
    return ta == tb and len(la) == len(lb) and all(x is y for x, y in zip(la, lb))


# ----------------------------------------------------------------------------------------------
# flatten / unflatten
@given(pytrees())
def test_unflatten_of_flatten_is_the_same_tree(tree):
    leaves, td = tree_flatten(tree)
    assert td.num_leaves == len(leaves)
    back = tree_unflatten(td, leaves)
    assert same_tree(back, tree)
    assert tree_structure(back) == td


@given(pytrees())
def test_flatten_of_unflatten_gives_back_the_new_leaves(tree):
    td = tree_structure(tree)
    fresh = [object() for _ in range(td.num_leaves)]
    leaves, td2 = tree_flatten(tree_unflatten(td, fresh))
    assert td2 == td and all(a is b for a, b in zip(leaves, fresh))


@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=2), st.integers(), min_size=1, max_size=6))
def test_dict_keys_are_sorted_whatever_the_insertion_order(d):
    backwards = dict(reversed(list(d.items())))
    assert tree_structure(backwards) == tree_structure(d)
    assert tree_leaves(backwards) == [d[k] for k in sorted(d)]


def test_structure_and_repr():
    leaves, td = tree_flatten({"b": 1, "a": (2, [3, None]), "c": (4,)})
    assert leaves == [2, 3, 1, 4]
    assert repr(td) == "TreeDef({'a': (*, [*, None]), 'b': *, 'c': (*,)})"
    assert tree_flatten(None) == ([], TreeDef("None"))
    assert tree_flatten(S((2,)))[1] == TreeDef("leaf")
    assert repr(tree_structure(Pair(1, [2]))) == "TreeDef(Pair(first=*, second=[*]))"
    assert tree_structure((1, 2)) != tree_structure([1, 2])


def test_named_tuples_come_back_as_themselves():
    back = tree_unflatten(*reversed(tree_flatten(Pair(np.ones(2), {"k": 3}))))
    assert type(back) is Pair and back.second == {"k": 3}


def test_tree_map():
    out = tree_map(lambda x, y: x * 10 + y, {"w": (1, 2), "b": [3]}, {"b": [4], "w": (5, 6)})
    assert out == {"b": [34], "w": (15, 26)}
    assert tree_map(lambda x: x, None) is None


def test_mismatched_structures_are_named():
    with pytest.raises(ValueError) as info:
        tree_map(lambda x, y: x + y, {"w": 1, "b": 2}, {"w": 1, "c": 2})
    assert "{'b': *, 'w': *}" in str(info.value) and "{'c': *, 'w': *}" in str(info.value)
    with pytest.raises(ValueError, match=r"tree 1 has structure TreeDef\(\(\*, \*\)\), but tree 0 has structure TreeDef\(\[\*, \*\]\)"):
        tree_map(lambda x, y: x, [1, 2], (1, 2))
    with pytest.raises(ValueError, match="has 2 leaves, got 3"):
        tree_unflatten(tree_structure([1, 2]), [1, 2, 3])
    with pytest.raises(TypeError, match="sortable"):
        tree_flatten({1: "a", "b": 2})


def test_leaf_names():
    td = tree_structure(({"w1": 0, "b 1": 0}, [0, Pair(0, 0)]))
    assert leaf_names(td.children[0], "params") == ("params.b_1", "params.w1")
    assert leaf_names(td.children[1], "xs") == ("xs.0", "xs.1.first", "xs.1.second")
    assert leaf_names(tree_structure(0), "x") == ("x",)


# ----------------------------------------------------------------------------------------------
# trace and evaluate
D_IN, D_H, D_OUT, BATCH = 3, 5, 2, 4


def mlp_loss(params, x):
    h = lnp.tanh(lnp.dot(x, params["w1"]) + params["b1"])
    y = lnp.dot(h, params["w2"]) + params["b2"]
    return lnp.sum(y * y) / BATCH


def np_mlp_loss(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    y = h @ params["w2"] + params["b2"]
    return np.sum(y * y) / BATCH


SHAPES = {"w1": (D_IN, D_H), "b1": (D_H,), "w2": (D_H, D_OUT), "b2": (D_OUT,)}


def make_params(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    params = {k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES.items()}
    return params, rng.standard_normal((BATCH, D_IN)).astype(dtype)


def test_trace_of_a_dict_of_parameters():
    specs = {k: S(s) for k, s in SHAPES.items()}
    g = ls.trace(mlp_loss, specs, S((BATCH, D_IN))).verify()
    assert len(g.inputs) == 5
    assert g.input_names == ("params.b1", "params.b2", "params.w1", "params.w2", "x")
    assert [v.aval.shape for v in g.inputs] == [SHAPES["b1"], SHAPES["b2"], SHAPES["w1"], SHAPES["w2"], (BATCH, D_IN)]
    assert "params.w1 = f32[3,5] parameter(2)" in g.to_text()
    params, x = make_params(np.float32)
    want = np_mlp_loss(params, x)
    np.testing.assert_allclose(ls.evaluate(g, params, x), want, rtol=1e-5)
    np.testing.assert_allclose(ls.evaluate(g, *tree_leaves((params, x))), want, rtol=1e-5)
    with pytest.raises(TypeError, match=r"structure TreeDef\(\(\{'b1'"):
        ls.evaluate(g, [params], x)


def test_kernel_listings_use_identifiers_for_leaf_names():
    specs = {k: S(s) for k, s in SHAPES.items()}
    prog = ls.compile(ls.trace(lambda p: lnp.tanh(p["b1"]) * 2.0, specs))
    listing = "\n".join(k.listing for k in prog.kernels)
    assert "p_b1" in listing and "p.b1" not in listing


def test_trace_returns_the_leaves_of_a_dict_and_keeps_its_structure():
    g = ls.trace(lambda xs: {"sum": xs[0] + xs[1][0], "neg": -xs[1][1]}, (S((2,)), [S((2,)), S((3,))]))
    assert g.input_names == ("xs.0", "xs.1.0", "xs.1.1")
    assert repr(g.out_tree) == "TreeDef({'neg': *, 'sum': *})"
    a, b, c = np.arange(2.0), np.ones(2), np.arange(3.0)
    out = tree_unflatten(g.out_tree, ls.evaluate(g, (a, [b, c])))
    np.testing.assert_allclose(out["sum"], a + b)
    np.testing.assert_allclose(out["neg"], -c)


def test_trace_names_a_bad_leaf():
    with pytest.raises(ls.TraceError, match=r"argument 0 \(params.w\) is str"):
        ls.trace(lambda params: params["w"], {"w": "oops"})


# ----------------------------------------------------------------------------------------------
# grad, value_and_grad, vjp
def fd_of_tree(np_f, tree, *rest):
    """Central differences of ``np_f(tree, *rest)`` w.r.t. every leaf of ``tree``, with its structure."""
    leaves, td = tree_flatten(tree)
    fd = finite_difference(lambda *ls_: np_f(tree_unflatten(td, ls_), *rest), leaves)
    return tree_unflatten(td, fd)


def assert_trees_close(got, want, rtol=1e-6):
    assert tree_structure(got) == tree_structure(want)
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-8)


def test_grad_of_an_mlp_with_a_dict_of_parameters_matches_finite_differences():
    params, x = make_params()
    want = fd_of_tree(np_mlp_loss, params, x)
    got = ls.grad(mlp_loss)(params, x)
    assert isinstance(got, dict) and sorted(got) == sorted(SHAPES)
    assert all(got[k].dtype == np.float64 for k in got)
    assert_trees_close(got, want)
    value, got2 = ls.value_and_grad(mlp_loss)(params, x)
    np.testing.assert_allclose(value, np_mlp_loss(params, x), rtol=1e-12)
    assert_trees_close(got2, want)
    gp, gx = ls.grad(mlp_loss, argnums=(0, 1))(params, x)
    assert_trees_close(gp, want)
    assert_trees_close(gx, finite_difference(lambda x_: np_mlp_loss(params, x_), [x])[0])


def nested_loss(ws, x):
    """``ws`` is a tuple (w, [scale, {"shift": shift}]) and a None that holds nothing."""
    w, (scale, extra) = ws[0], ws[1]
    return lnp.sum(lnp.tanh(lnp.dot(x, w)) * scale + extra["shift"] ** 2)


def np_nested_loss(ws, x):
    w, (scale, extra) = ws[0], ws[1]
    return np.sum(np.tanh(x @ w) * scale + extra["shift"] ** 2)


def test_grad_of_nested_tuples_and_lists_matches_finite_differences():
    rng = np.random.default_rng(1)
    ws = (rng.standard_normal((3, 2)), [rng.standard_normal(2), {"shift": rng.standard_normal(2)}], None)
    x = rng.standard_normal((4, 3))
    got = ls.grad(nested_loss)(ws, x)
    assert type(got) is tuple and type(got[1]) is list and got[2] is None
    assert_trees_close(got, fd_of_tree(np_nested_loss, ws, x))


def test_vjp_with_dict_arguments_and_outputs():
    params, x = make_params()

    def f(params, x):
        return {"h": lnp.dot(x, params["w1"]), "s": lnp.sum(params["b2"] * params["b2"])}

    out, pullback = ls.vjp(f, params, x)
    np.testing.assert_allclose(out["h"], x @ params["w1"])
    np.testing.assert_allclose(out["s"], np.sum(params["b2"] ** 2))
    ct = {"h": np.random.default_rng(2).standard_normal((BATCH, D_H)), "s": np.float64(3.0)}
    gp, gx = pullback(ct)
    want = fd_of_tree(lambda p, x_: np.sum((x_ @ p["w1"]) * ct["h"]) + 3.0 * np.sum(p["b2"] ** 2), params, x)
    assert_trees_close(gp, want)
    np.testing.assert_allclose(gx, ct["h"] @ params["w1"].T, rtol=1e-12)
    with pytest.raises(ValueError, match=r"structure TreeDef\(\{'h': \*\}\).*returned TreeDef\(\{'h': \*, 's': \*\}\)"):
        pullback({"h": ct["h"]})


def test_traced_grad_of_a_dict_is_one_graph_that_evaluates_to_the_eager_gradient():
    specs = {k: S(s, "float64") for k, s in SHAPES.items()}
    g = ls.trace(ls.grad(mlp_loss), specs, S((BATCH, D_IN), "float64")).verify()
    assert g.input_names[:4] == ("params.b1", "params.b2", "params.w1", "params.w2")
    assert tree_structure(tree_unflatten(g.out_tree, range(4))) == tree_structure(specs)
    assert g.out_avals == tuple(tree_leaves(specs))
    params, x = make_params()
    eager = ls.grad(mlp_loss)(params, x)
    traced = tree_unflatten(g.out_tree, ls.evaluate(g, params, x))
    assert_trees_close(traced, eager, rtol=1e-12)


@given(pytrees(shapes.map(lambda s: np.linspace(-1.0, 1.0, int(np.prod(s, dtype=int))).reshape(s))))
def test_grad_of_a_sum_of_squares_has_the_structure_of_its_argument(tree):
    def loss(t):
        return sum((lnp.sum(leaf * leaf) for leaf in tree_leaves(t)), start=lnp.zeros((), "float64"))

    got = ls.grad(loss)(tree)
    assert tree_structure(got) == tree_structure(tree)
    for g, x in zip(tree_leaves(got), tree_leaves(tree)):
        np.testing.assert_allclose(g, 2 * x)


def test_grad_errors_name_the_leaf_and_argnums():
    params, x = make_params()
    with pytest.raises(ls.TraceError, match=r"grad\(mlp_loss\): argument 0 \(params.w2\) is str"):
        ls.grad(mlp_loss)({**params, "w2": "oops"}, x)
    with pytest.raises(ValueError, match="argnums 2"):
        ls.grad(mlp_loss, argnums=2)(params, x)
