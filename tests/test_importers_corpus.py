"""The importers' corpus (crosscheck/importers_corpus.py): every JAX function and PyTorch module, imported with
ls.from_jax / ls.from_torch, computes the framework's values (float32 to 1e-5 of the output's largest
magnitude, bfloat16 to four roundings of its 8-bit significand) and has the framework's FLOP count (XLA's
cost_analysis, PyTorch's FlopCounterMode) or a recorded reason why not.

JAX and PyTorch are optional: ``make crosscheck`` installs both; elsewhere these tests skip with a message.
"""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
from crosscheck import importers_corpus as corpus
from labsim.peers import parity


@pytest.fixture(scope="module")
def jax_cases():
    pytest.importorskip("jax", reason="JAX is not installed (make crosscheck installs it)")
    return corpus.jax_corpus()


@pytest.fixture(scope="module")
def torch_cases():
    pytest.importorskip("torch", reason="PyTorch is not installed (make crosscheck installs it)")
    return corpus.torch_corpus()


def _check(result):
    assert result.values_equal, (f"{result.framework} {result.name}: max relative error "
                                 f"{result.max_rel_error:.2e} > {result.tolerance:.1e}")
    why = corpus.FLOPS_EXPLAINED[result.framework].get(result.name)
    if why is None:
        assert result.flops_labsim == result.flops_peer, f"{result.name}: unexplained FLOPs difference"
    else:  # a recorded reason must still be needed: a stale explanation fails too
        assert result.flops_labsim != result.flops_peer, f"{result.name}: FLOPs now equal, drop its explanation"
    assert result.ok


# ---- the corpus itself (runs everywhere) -------------------------------------------------------------------

def test_the_corpus_holds_the_stored_xla_set_and_enough_cases():
    stored = {f["name"] for f in parity.load("xla.json")["functions"]}
    names = corpus.jax_names()
    assert stored <= set(names) and len(set(names)) == len(names) >= 30
    assert len(set(corpus.TORCH_NAMES)) >= 15
    for framework, known in (("JAX", set(names)), ("PyTorch", set(corpus.TORCH_NAMES))):
        assert set(corpus.FLOPS_EXPLAINED[framework]) <= known, "an explanation names no corpus case"


def test_tolerances_follow_the_dtypes_significands():
    assert corpus.TOLERANCE["float32"] <= 1e-5
    assert 2.0 ** -8 <= corpus.TOLERANCE["bfloat16"] <= 2.0 ** -5


# ---- JAX ---------------------------------------------------------------------------------------------------

def test_the_jax_corpus_has_its_names(jax_cases):
    assert tuple(jax_cases) == corpus.jax_names()


@pytest.mark.parametrize("name", corpus.jax_names())
def test_jax_case(jax_cases, name):
    fn, args = jax_cases[name]
    _check(corpus.check_jax(name, fn, args))


def test_a_jax_convolution_is_refused_by_name():
    jax = pytest.importorskip("jax", reason="JAX is not installed (make crosscheck installs it)")
    x, w = np.ones((1, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)
    with pytest.raises(ls.ImportUnsupportedError, match=r"conv_general_dilated.*no convolution op.*im2col"):
        ls.from_jax(lambda x, w: jax.lax.conv(x, w, (1, 1), "SAME"), x, w)


# ---- PyTorch -----------------------------------------------------------------------------------------------

def test_the_torch_corpus_has_its_names(torch_cases):
    assert tuple(torch_cases) == corpus.TORCH_NAMES


@pytest.mark.parametrize("name", corpus.TORCH_NAMES)
def test_torch_case(torch_cases, name):
    module, inputs = torch_cases[name]
    _check(corpus.check_torch(name, module, inputs))


def test_a_small_cnn_is_refused_with_the_op_named():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (make crosscheck installs it)")
    nn = torch.nn
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)).eval()
    with pytest.raises(ls.ImportUnsupportedError, match=r"'convolution'.*no convolution op.*im2col"):
        ls.from_torch(cnn, torch.randn(1, 3, 8, 8))


def test_training_mode_dropout_is_refused_and_eval_mode_dropout_is_the_identity():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (make crosscheck installs it)")
    m, x = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)), torch.randn(2, 4)
    with pytest.raises(ls.ImportUnsupportedError, match=r"native_dropout with p=0.5 in training mode.*eval\(\)"):
        ls.from_torch(m.train(), x)
    m.eval()
    got = ls.evaluate(ls.from_torch(m, x), *ls.torch_arguments(m, x))
    np.testing.assert_allclose(got, m(x).detach().numpy(), rtol=0, atol=1e-6)
