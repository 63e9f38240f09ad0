"""The importers' corpus: JAX functions and PyTorch modules, imported and checked against their framework.

Each case is imported (``ls.from_jax`` / ``ls.from_torch``), evaluated with ``ls.evaluate`` and compared
with the framework's own outputs, to a tolerance per dtype (:data:`TOLERANCE`); its FLOPs are compared with
the framework's count: XLA's ``cost_analysis()["flops"]`` for JAX (labsim's compiled program), PyTorch's
``FlopCounterMode`` for PyTorch (labsim's contraction FLOPs: the counter counts matrix products only).
A FLOP count that differs must have its reason in :data:`FLOPS_EXPLAINED`, as
``labsim.peers.parity.XLA_EXPLAINED`` does for the stored XLA set. ``tests/test_importers_corpus.py`` and
``crosscheck/run.py`` run it; JAX and PyTorch are imported only inside the functions. It lives beside the
crosscheck rather than in ``labsim/importers`` because it compiles and estimates (floors above the importers').
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: relative tolerance (of the output's largest magnitude, at least 1) per output dtype: float32 to ~1e-5;
#: bfloat16 keeps 8 significant bits (7 stored), so one rounding is 2**-8 and a few roundings differ by more
TOLERANCE = {"float32": 1e-5, "bfloat16": 4 * 2.0 ** -8, "bool": 0.0, "int32": 0.0}

JAX_FLOPS_EXPLAINED: dict[str, str] = {
    "gelu_erf": "XLA expands erf into a rational polynomial (dozens of FLOPs per element); labsim counts erf "
                "as one transcendental, like exp (as parity.XLA_EXPLAINED says for labsim.numpy).",
    "attention_single_head": "XLA:CPU scales the scores again inside two of its softmax fusions; labsim "
                             "computes each value once (parity.XLA_EXPLAINED).",
    "constant_foldable": "jnp.arange is an iota XLA:CPU does not fold; the imported iota is a labsim constant "
                         "and the whole constant sum folds (parity.XLA_EXPLAINED).",
    "cumsum_scan": "labsim imports cumsum as a product with a triangular 0/1 matrix (2n FLOPs per element); "
                   "XLA runs it as a log-step reduce_window (about 17 FLOPs per element here).",
    "fori_loop_accumulate": "the loop is unrolled on import (10 bodies counted); XLA's cost_analysis counts a "
                            "while body once.",
    "gelu_tanh_bf16": "XLA:CPU computes bfloat16 element-wise math in float32, rounding to bfloat16 after every "
                      "step (a convert to bfloat16 and back), and counts each convert as a FLOP (18 per element "
                      "here); labsim counts a rounding as free.",
    "matmul_bf16": "XLA:CPU converts the bfloat16 operands to float32 for its dot and the result back, and counts "
                   "each convert as a FLOP (one per element of a, b and the product); labsim counts the product only.",
    "mixed_cast": "the same converts as matmul_bf16: XLA:CPU counts float32 -> bfloat16 -> float32 on each operand "
                  "element; labsim counts converts as free.",
    "silu_sigmoid": "XLA expands logistic into 1 / (1 + exp(-x)) and counts its negation, addition and division "
                    "as FLOPs; labsim counts logistic as one transcendental. Both merge the two identical products.",
    "swiglu_mlp": "the logistic of SiLU: XLA counts its expansion's three FLOPs per element (see silu_sigmoid).",
    "var_std": "jnp.var ends with where(n - ddof > 0, var, nan) on a scalar predicate: XLA folds the constant "
               "predicate away, labsim keeps the select, one FLOP per output element (64 + 32).",
    "log_softmax": "XLA:CPU splits each row reduction into a reduce-window over 50 columns padded to 64 (padding "
                   "counted) and computes x - max again in its output fusion; labsim computes each value once.",
    "logsumexp": "the row max and row sum run as padded reduce-windows in XLA:CPU, as in log_softmax; labsim "
                 "counts n - 1 operations per row.",
    "causal_mha": "XLA:CPU computes the scaled, masked scores in both its row-max fusion and its exp fusion "
                  "(the scaling and the mask's select twice); labsim computes each once.",
    "layernorm": "XLA:CPU computes the mean and the centred values x - mean in both of its fusions (the variance's "
                 "and the output's): 128 + 128·256 = 32,896 FLOPs more; labsim's row kernel computes each once.",
    "gpt2_block": "the differences of layernorm, attention_single_head and the causal mask of causal_mha: XLA:CPU "
                  "recomputes centred values, scaled scores and the mask's select in several fusions; labsim "
                  "computes each value once.",
}

_SDPA = ("FlopCounterMode has no formula for aten._scaled_dot_product_flash_attention_for_cpu, the kernel "
         "PyTorch 2.13 runs scaled_dot_product_attention with on the CPU, so it counts the attention's two "
         "products as 0; labsim counts them (2·b·h·t²·d_head each, the causal half included).")
TORCH_FLOPS_EXPLAINED: dict[str, str] = {
    "attention_sdpa_causal": _SDPA + " Here 16,384 FLOPs.",
    "transformer_block": _SDPA + " Here 16,384 FLOPs.",
    "gpt_stack": _SDPA + " Here 16,384 FLOPs in each of the two blocks.",
}
#: framework -> (case name -> why labsim's FLOPs differ from the framework's count)
FLOPS_EXPLAINED = {"JAX": JAX_FLOPS_EXPLAINED, "PyTorch": TORCH_FLOPS_EXPLAINED}


#: the corpus's names beyond the stored XLA set (fixed here so that tests are collected without JAX)
JAX_EXTRA = ("rmsnorm", "var_std", "log_softmax", "logsumexp", "silu_sigmoid", "swiglu_mlp", "batched_einsum",
             "causal_mha", "matmul_bf16", "gelu_tanh_bf16", "reduce_prod", "mixed_cast", "gpt2_block")
TORCH_NAMES = ("linear", "linear_no_bias", "mlp_gelu", "mlp_relu_3", "mlp_tanh_gelu", "swiglu_mlp", "layer_norm",
               "rmsnorm", "attention_manual", "attention_sdpa_causal", "transformer_block", "gpt_stack",
               "softmax_head", "log_softmax_head", "gate_rsub_dropout", "bmm_scores", "linear_bf16")


def jax_names() -> tuple[str, ...]:
    from labsim.peers import parity
    return tuple(f["name"] for f in parity.load("xla.json")["functions"]) + JAX_EXTRA


@dataclass
class CaseResult:
    framework: str
    name: str
    max_rel_error: float
    tolerance: float
    flops_labsim: int
    flops_peer: int

    @property
    def values_equal(self) -> bool:
        return self.max_rel_error <= self.tolerance

    @property
    def flops_equal(self) -> bool:
        return self.flops_labsim == self.flops_peer

    @property
    def status(self) -> str:
        if not self.values_equal:
            return "VALUES DIFFER"
        if self.flops_equal:
            return "match"
        why = FLOPS_EXPLAINED[self.framework].get(self.name)
        return ("explained: " + why) if why else "UNEXPLAINED"

    @property
    def ok(self) -> bool:
        return self.values_equal and (self.flops_equal or self.name in FLOPS_EXPLAINED[self.framework])

    def row(self) -> dict:
        return {"framework": self.framework, "name": self.name, "values equal": self.values_equal,
                "max rel. error": f"{self.max_rel_error:.1e}", "FLOPs labsim": self.flops_labsim,
                "FLOPs peer": self.flops_peer, "status": self.status if self.ok else self.status.upper()}


def _rel_error(got, want) -> tuple[float, float]:
    """Largest |got - want| over max(1, |want|max) across outputs, and the loosest tolerance of their dtypes."""
    err, tol = 0.0, 0.0
    for g, w in zip(got, want):
        dt = str(w.dtype)
        tol = max(tol, TOLERANCE.get(dt, 1e-5))
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        if g64.shape != w64.shape:
            return float("inf"), tol
        if w64.size:
            err = max(err, float(np.max(np.abs(g64 - w64))) / max(1.0, float(np.max(np.abs(w64)))))
    return err, tol


# ---- JAX --------------------------------------------------------------------------------------------------

def jax_corpus(seed: int = 0) -> dict[str, tuple]:
    """name -> (function, example arguments): the stored XLA set of crosscheck/refs/xla.json, rebuilt from its
    source as crosscheck/run.py's ``jax_live`` does, and more functions of common models."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    from labsim.peers import parity
    from labsim.importers import examples

    rng = np.random.default_rng(seed)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def bf16(*s):
        return jnp.asarray(f32(*s), jnp.bfloat16)

    cases: dict[str, tuple] = {}
    for f in parity.load("xla.json")["functions"]:
        ns = {"jnp": jnp, "jax": jax, "lax": lax, "np": np, "F32": jnp.float32}
        exec(f["source"], ns)
        cases[f["name"]] = (ns[f["name"]], [f32(*s) for s in f["arg_shapes"]])

    def mha(x, wq, wk, wv, wo):
        b, t, d = x.shape
        h = 4
        q, k, v = ((x @ w).reshape(b, t, h, d // h) for w in (wq, wk, wv))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.float32(d // h))
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        y = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v).reshape(b, t, d)
        return y @ wo

    def swiglu(x, wg, wu, wd):
        return (jax.nn.silu(x @ wg) * (x @ wu)) @ wd

    params = examples.random_params()
    more = {
        "rmsnorm": (lambda x, g: x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g, [f32(32, 64), f32(64)]),
        "var_std": (lambda x: (jnp.var(x, axis=0), jnp.std(x, axis=1)), [f32(32, 64)]),
        "log_softmax": (lambda x: jax.nn.log_softmax(x, axis=-1), [f32(16, 50)]),
        "logsumexp": (lambda x: jax.nn.logsumexp(x, axis=-1), [f32(16, 50)]),
        "silu_sigmoid": (lambda x: (jax.nn.silu(x), jax.nn.sigmoid(x) * x), [f32(64, 64)]),
        "swiglu_mlp": (swiglu, [f32(16, 32), f32(32, 64), f32(32, 64), f32(64, 32)]),
        "batched_einsum": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [f32(4, 16, 32), f32(4, 32, 8)]),
        "causal_mha": (mha, [f32(2, 8, 32)] + [f32(32, 32) for _ in range(4)]),
        "matmul_bf16": (lambda a, b: a @ b, [bf16(32, 64), bf16(64, 16)]),
        "gelu_tanh_bf16": (lambda x: jax.nn.gelu(x, approximate=True), [bf16(32, 64)]),
        "reduce_prod": (lambda x: jnp.prod(x, axis=1), [(1.0 + 0.1 * f32(16, 8)).astype(np.float32)]),
        "mixed_cast": (lambda x, w: (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32),
                       [f32(16, 32), f32(32, 8)]),
        "gpt2_block": (examples.gpt2_block_jax, [params, f32(examples.BATCH, examples.SEQ, examples.D_MODEL)]),
    }
    cases.update(more)
    return cases


def check_jax(name: str, fn, args) -> CaseResult:
    import jax

    import labsim as ls

    g = ls.from_jax(fn, *args)
    plain = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float32) if str(a.dtype) == "bfloat16" else
                                   np.asarray(a), args)  # bfloat16 values travel as float32 NumPy arrays
    got = ls.evaluate(g, *plain)
    got = got if isinstance(got, tuple) else (got,)
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(fn(*args))]
    want = [w.astype(np.float32) if str(w.dtype) == "bfloat16" else w for w in want]
    err, tol = _rel_error(got, want)
    if any(str(np.asarray(a).dtype) == "bfloat16" for a in jax.tree_util.tree_leaves(args)) or name == "mixed_cast":
        tol = TOLERANCE["bfloat16"]
    ca = jax.jit(fn).lower(*args).compile().cost_analysis()
    ca = ca[0] if isinstance(ca, list) else ca
    return CaseResult("JAX", name, err, tol, int(ls.estimate(ls.compile(g), "H100 SXM").flops),
                      int(ca.get("flops", 0)))


# ---- PyTorch ----------------------------------------------------------------------------------------------

def torch_corpus(seed: int = 0) -> dict[str, tuple]:
    """name -> (module or function, example inputs): layers and models of common transformers."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    from labsim.importers import examples

    torch.manual_seed(seed)
    d, t, b = 32, 8, 2

    class SwiGLU(nn.Module):
        def __init__(self):
            super().__init__()
            self.g, self.u, self.d = nn.Linear(d, 64, bias=False), nn.Linear(d, 64, bias=False), nn.Linear(64, d, bias=False)

        def forward(self, x):
            return self.d(F.silu(self.g(x)) * self.u(x))

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(1.0 + 0.1 * torch.randn(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w

    class Attention(nn.Module):
        """Single-head attention written out: scores, softmax, weighted sum."""
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

        def forward(self, x):
            s = self.q(x) @ self.k(x).transpose(-2, -1) / d ** 0.5
            return torch.softmax(s, dim=-1) @ self.v(x)

    class SDPA(nn.Module):
        """Causal multi-head attention through F.scaled_dot_product_attention."""
        def __init__(self, heads=4):
            super().__init__()
            self.heads, self.qkv, self.o = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in self.qkv(x).split(d, 2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o(y.transpose(1, 2).reshape(b, t, d))

    class GPTStack(nn.Module):
        """An embedding-free GPT-style stack: two blocks, a final layer norm, a vocabulary head."""
        def __init__(self, layers=2, vocab=50):
            super().__init__()
            self.blocks = nn.ModuleList(examples.gpt2_block_torch(d=d, heads=4) for _ in range(layers))
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    class Gate(nn.Module):
        """A gated residual: 1 - sigmoid (aten.rsub), dropout in eval mode (no op)."""
        def __init__(self):
            super().__init__()
            self.lin, self.drop = nn.Linear(d, d), nn.Dropout(0.1)

        def forward(self, x):
            z = torch.sigmoid(self.lin(x))
            return self.drop(z * x + (1 - z) * torch.tanh(x))

    x = torch.randn(b, t, d)
    cases = {
        "linear": (nn.Linear(d, 64), [x]),
        "linear_no_bias": (nn.Linear(d, 64, bias=False), [x]),
        "mlp_gelu": (nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)), [x]),
        "mlp_relu_3": (nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)), [x]),
        "mlp_tanh_gelu": (nn.Sequential(nn.Linear(d, 64), nn.GELU(approximate="tanh"), nn.Linear(64, d)), [x]),
        "swiglu_mlp": (SwiGLU(), [x]),
        "layer_norm": (nn.LayerNorm(d), [x]),
        "rmsnorm": (RMSNorm(), [x]),
        "attention_manual": (Attention(), [x]),
        "attention_sdpa_causal": (SDPA(), [x]),
        "transformer_block": (examples.gpt2_block_torch(d=d, heads=4), [x]),
        "gpt_stack": (GPTStack(), [x]),
        "softmax_head": (nn.Sequential(nn.Linear(d, 50), nn.Softmax(dim=-1)), [x]),
        "log_softmax_head": (nn.Sequential(nn.Linear(d, 50), nn.LogSoftmax(dim=-1)), [x]),
        "gate_rsub_dropout": (Gate(), [x]),
        "bmm_scores": (lambda a, c: torch.bmm(a, c.transpose(1, 2)).softmax(-1), [x, torch.randn(b, 5, d)]),
        "linear_bf16": (nn.Linear(d, 64).to(torch.bfloat16), [x.to(torch.bfloat16)]),
    }
    for m, _ in cases.values():
        if isinstance(m, nn.Module):
            m.eval()
    return cases


def check_torch(name: str, module, inputs) -> CaseResult:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    import labsim as ls
    from labsim.models import counting

    g = ls.from_torch(module, *inputs)
    got = ls.evaluate(g, *ls.torch_arguments(module, *inputs))
    got = got if isinstance(got, tuple) else (got,)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        want = module(*inputs)
    want = tuple(want) if isinstance(want, (tuple, list)) else (want,)
    want = [w.detach().float().numpy() if w.dtype == torch.bfloat16 else w.detach().numpy() for w in want]
    err, tol = _rel_error(got, want)
    if any(i.dtype == torch.bfloat16 for i in inputs):
        tol = TOLERANCE["bfloat16"]
    return CaseResult("PyTorch", name, err, tol, int(counting.matmul_flops(g)), int(counter.get_total_flops()))
