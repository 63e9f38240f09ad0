"""ls.from_jax and ls.from_torch: the reader's own program, imported, equals what JAX and PyTorch compute.

JAX and PyTorch are optional: the value tests run where they are installed (``make crosscheck`` installs
both into .venv); the layout rule and the refusal without the package run everywhere.
"""
from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

import numpy as np
import pytest

import labsim as ls

PKG = Path(__file__).resolve().parent.parent / "labsim"
RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---- everywhere ---------------------------------------------------------------------------------------

def test_jax_and_torch_are_imported_only_inside_the_importers_functions():
    """`pip install labsim` needs NumPy alone: no module imports jax or torch at its top level, and only the
    importers floor imports them at all."""
    for path in PKG.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        top = {n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            peer = [n for n in names if n.split(".")[0] in ("jax", "jaxlib", "torch")]
            if peer:
                assert "importers" in path.parts, f"{path}: imports {peer} outside labsim/importers"
                assert node not in top, f"{path}: imports {peer} at module level"


def test_import_labsim_loads_neither_peer():
    import subprocess
    import sys
    code = "import sys, labsim; print('jax' in sys.modules or 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("fn, package", [(ls.from_jax, "jax"), (ls.from_torch, "torch")])
def test_a_missing_package_is_named(monkeypatch, fn, package):
    real = importlib.import_module

    def refuse(name, *a, **k):
        if name.split(".")[0] == package:
            raise ImportError(f"No module named '{package}'")
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", refuse)
    with pytest.raises(ls.MissingPackageError, match=f"needs the '{package}' package.*make crosscheck"):
        fn(lambda x: x, np.ones(3, np.float32))
    assert issubclass(ls.MissingPackageError, ls.LabsimError)


# ---- JAX ------------------------------------------------------------------------------------------------

def _jax():
    return pytest.importorskip("jax")


def _close(got, want, tol=2e-6):
    got = got if isinstance(got, tuple) else (got,)
    want = tuple(_jax().tree_util.tree_leaves(want)) if not isinstance(want, np.ndarray) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w, np.float32) if str(np.asarray(w).dtype) == "bfloat16" else np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        scale = max(1.0, float(np.max(np.abs(w.astype(np.float64))))) if w.size else 1.0
        np.testing.assert_allclose(np.asarray(g, np.float64), w.astype(np.float64), rtol=0, atol=tol * scale)


JAX_CASES = {
    "arith": lambda x, y: (x + y, x - y, x * y, x / (y * y + 1), -x, jnp().maximum(x, y), jnp().minimum(x, y), abs(x)),
    "transcendental": lambda x, y: (jnp().exp(x), jnp().log(y * y + 1), jnp().tanh(x), jax().nn.sigmoid(x),
                                    jax().scipy.special.erf(x), jax().lax.rsqrt(y * y + 1), x ** 3, x ** -2),
    "compare_select": lambda x, y: (jnp().where(x < y, x, y), jnp().where(x >= 0, x, 0.0), (x == y).astype(jnp().float32)),
    "reduce": lambda x, y: (x.sum(0), x.max(1), x.min(), jnp().mean(y, axis=1, keepdims=True)),
    "shape": lambda x, y: (x.reshape(-1), x.T, x[1:3, ::2], jnp().concatenate([x, y], 1), x[None, :, :].squeeze(0),
                           jnp().broadcast_to(x[:, :1], x.shape), jnp().expand_dims(y, 1)),
    "iota_cast": lambda x, y: (jnp().arange(x.shape[1]) * x, x.astype(jnp().bfloat16), jnp().tril(x)),
    "dot": lambda x, y: (x @ y.T, jnp().einsum("ij,kj->ik", x, y), jax().nn.gelu(x @ y.T), jax().nn.softmax(x @ y.T)),
}


def jax():
    return _jax()


def jnp():
    return _jax().numpy


@pytest.mark.parametrize("case", sorted(JAX_CASES))
def test_from_jax_equals_jax(case):
    _jax()  # skipped, with the reason, where JAX is not installed
    f = JAX_CASES[case]
    x, y = _f32(4, 6), _f32(4, 6)
    g = ls.from_jax(f, x, y)
    assert isinstance(g, ls.Graph)
    _close(ls.evaluate(g, x, y), f(x, y), tol=4e-3 if case == "iota_cast" else 2e-6)


def test_from_jax_keeps_pytrees_and_inlines_calls():
    jax = _jax()

    @jax.jit
    def layer(p, x):
        return jax.nn.relu(x @ p["w"] + p["b"])

    def f(params, x):
        return {"h": layer(params, x), "n": jax.checkpoint(lambda z: (z * z).sum())(x)}

    p, x = {"w": _f32(6, 3), "b": _f32(3)}, _f32(4, 6)
    g = ls.from_jax(f, p, x)
    assert g.input_names == ("p0.b", "p0.w", "p1") and not any("jit" in str(n.op) for n in g.nodes)
    _close(ls.evaluate(g, p, x), f(p, x))


def test_from_jax_unrolls_a_short_scan_and_refuses_control_flow():
    jax = _jax()
    x = _f32(5, 3)

    def cumsum(x):
        return jax.lax.scan(lambda c, r: (c + r, c * 2), np.zeros(3, np.float32), x)

    _close(ls.evaluate(ls.from_jax(cumsum, x), x), cumsum(x))
    with pytest.raises(ls.ImportUnsupportedError, match=r"cond.*static.*jnp\.where"):
        ls.from_jax(lambda x: jax.lax.cond(x.sum() > 0, lambda: x, lambda: -x), x)
    with pytest.raises(ls.ImportUnsupportedError, match=r"while.*fixed count"):
        ls.from_jax(lambda x: jax.lax.while_loop(lambda c: c.sum() < 9, lambda c: c + 1, x), x)
    with pytest.raises(ls.ImportUnsupportedError, match=r"primitive 'sort' \(equation 0 .*Supported: .*dot_general"):
        ls.from_jax(lambda x: jax.lax.sort(x), x)


# ---- PyTorch --------------------------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def gpt_block_torch(d=32, heads=4):
    """The GPT-2-style block of book/bring_your_own.md (labsim.importers.examples), small."""
    _torch().manual_seed(0)
    from labsim.importers import examples
    return examples.gpt2_block_torch(d=d, heads=heads)


def _torch_close(g, fn, *inputs, tol=2e-6):
    got = ls.evaluate(g, *ls.torch_arguments(fn, *inputs))
    want = fn(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = tuple(want) if isinstance(want, (tuple, list)) else (want,)
    for a, b in zip(got, want):
        b = b.detach().float().numpy()
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=0, atol=tol * max(1.0, float(np.abs(b).max())))


def test_from_torch_gpt_block_equals_pytorch_and_runs_on_both_chips():
    torch = _torch()
    block, x = gpt_block_torch(), torch.randn(2, 8, 32)
    g = ls.from_torch(block, x)
    assert g.input_names[-1] == "p1" and "params.qkv_weight" in g.input_names  # state_dict names, dots as _
    _torch_close(g, block, x)
    prog = ls.compile(g)
    for chip in ("H100 SXM", "TPU v5e"):
        cost = ls.estimate(prog, chip)
        assert cost.time > 0 and cost.flops >= 2 * 2 * 8 * 32 * (3 * 32 + 32 + 8 * 32)


TORCH_CASES = {
    "elementwise": lambda x: (torch_().relu(x) + torch_().sigmoid(x) * torch_().tanh(x), torch_().exp(-x * x),
                              torch_().rsqrt(x * x + 1), x.pow(2), torch_().where(x > 0, x, 2 * x)),
    "reductions": lambda x: (x.sum(-1), x.mean(dim=(0, 2), keepdim=True), x.amax(1), torch_().softmax(x, 0),
                             torch_().log_softmax(x, -1)),
    "views": lambda x: (x.permute(2, 0, 1), x.transpose(0, 1).reshape(-1), x[:, 1:3], x.unsqueeze(1).squeeze(1),
                        torch_().cat([x, x], 2), x.split(2, dim=2)[1], x[:, 0]),
    "matmul": lambda x: (x @ x.transpose(1, 2), torch_().bmm(x, x.transpose(1, 2)), torch_().nn.functional.gelu(x),
                         torch_().nn.functional.gelu(x, approximate="tanh")),
}


def torch_():
    return _torch()


@pytest.mark.parametrize("case", sorted(TORCH_CASES))
def test_from_torch_equals_pytorch(case):
    torch = _torch()  # skipped, with the reason, where PyTorch is not installed
    x = torch.randn(3, 4, 5)
    _torch_close(ls.from_torch(TORCH_CASES[case], x), TORCH_CASES[case], x)


def test_from_torch_refusals_name_the_op():
    torch = _torch()
    emb = torch.nn.Embedding(10, 4)
    with pytest.raises(ls.ImportUnsupportedError, match=r"node 'embedding'.*gather.*embedded activations"):
        ls.from_torch(emb, torch.tensor([1, 2]))
    with pytest.raises(ls.ImportUnsupportedError, match=r"ATen op 'sort'.*Supported: .*addmm"):
        ls.from_torch(lambda x: torch.sort(x).values, torch.randn(4))
    with pytest.raises(ls.ImportUnsupportedError, match="example input 0 is a list"):
        ls.from_torch(lambda x: x, [1, 2])
