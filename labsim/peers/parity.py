"""Parity with peer tools: XLA's ``cost_analysis`` and PyTorch's ``FlopCounterMode``.

Used by ``make crosscheck`` and by the book's "labsim versus XLA" table. Reference data recorded from
the real tools lives in ``crosscheck/refs/`` (see the NOTES files in ``shared/refs``). Every function
whose numbers differ must carry an explanation in :data:`XLA_EXPLAINED`; an unexplained difference
fails the cross-check.
"""
from __future__ import annotations

import json
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..compiler.pipeline import compile as _compile
from ..core.avals import ShapeDtype
from ..core.trace import trace
from ..frontend import nn
from ..frontend import numpy as lnp
from ..frontend.autodiff import grad
from ..models import counting, llm

REFS = Path(__file__).resolve().parents[2] / "crosscheck" / "refs"

# function -> (which numbers differ, why). Reviewed against the optimised HLO stored in xla.json.
XLA_EXPLAINED: dict[str, tuple[str, str]] = {
    "softmax_manual": ("bytes, kernels",
                       "XLA:CPU runs the row maximum, the row sum and the normalisation as separate fusions and "
                       "counts bytes per fusion operand (a broadcast operand re-read per element); labsim fuses the "
                       "whole row into one kernel (a persistent row reduction, as XLA:GPU's softmax fusion does) and "
                       "counts each kernel's distinct input buffers once."),
    "attention_single_head": ("FLOPs, kernels, bytes",
                              "XLA:CPU runs the softmax as separate fusions (row maximum, row sum, normalisation) and "
                              "scales the scores again inside two of them; labsim fuses the softmax row into one kernel "
                              "between the two dots, computing each value once."),
    "gelu_erf": ("FLOPs",
                 "XLA expands erf into a rational polynomial approximation (dozens of FLOPs per element, "
                 "see the FLOPs columns); labsim counts erf as one transcendental, like exp."),
    "layernorm": ("FLOPs, kernels, bytes",
                  "XLA:CPU gives each reduction its own fusion and computes the centred values (x - mean) again in "
                  "each fusion that needs them, so it counts more FLOPs and bytes; labsim fuses the whole row into "
                  "one kernel (as XLA:GPU does), computing each value once."),
    "matmul_bias_relu": ("kernels, bytes",
                         "XLA:CPU runs the dot as a YNNPACK custom fusion and the bias + ReLU as a second "
                         "kernel; labsim fuses them as an epilogue, as XLA:GPU does."),
    "mlp_forward": ("kernels, bytes", "Same as matmul_bias_relu: XLA:CPU does not fuse epilogues into dots."),
    "grad_linear_mse": ("kernels, bytes",
                        "XLA:CPU leaves the transposed dot xᵀ·g as a bare dot plus a separate fusion; labsim "
                        "fuses the residual into one kernel. FLOPs match."),
    "constant_foldable": ("FLOPs, kernels, bytes",
                          "jnp.arange becomes an iota that XLA:CPU does not fold (it stays a small runtime "
                          "fusion); labsim's arange is a constant and folds completely."),
    "reshape_slice_concat": ("kernels, bytes",
                             "XLA:CPU keeps slice and concatenate as separate ops; labsim fuses data movement "
                             "into one copy kernel (read once, write once)."),
    "cumsum_scan": ("not run", "labsim has no scan/cumsum op."),
    "fori_loop_accumulate": ("not run", "labsim has no loops; XLA's cost_analysis counts a loop body once anyway."),
}


@dataclass(frozen=True)
class XlaRow:
    name: str
    flops: int | None
    xla_flops: int
    transcendentals: int | None
    xla_transcendentals: int
    bytes: int | None
    xla_bytes: int
    kernels: int | None
    xla_kernels: int
    error: str = ""

    @property
    def flops_match(self) -> bool:
        return self.flops == self.xla_flops and self.transcendentals == self.xla_transcendentals

    @property
    def kernels_match(self) -> bool:
        return self.kernels == self.xla_kernels

    @property
    def bytes_match(self) -> bool:
        return self.bytes == self.xla_bytes

    @property
    def all_match(self) -> bool:
        return self.flops_match and self.kernels_match and self.bytes_match

    @property
    def differs(self) -> set[str]:
        """Which numbers differ: a subset of {"FLOPs", "kernels", "bytes", "not run"}."""
        if self.error:
            return {"not run"}
        return {name for name, ok in (("FLOPs", self.flops_match), ("kernels", self.kernels_match),
                                      ("bytes", self.bytes_match)) if not ok}

    def explained(self) -> bool:
        """True if every differing number is named in this function's entry of XLA_EXPLAINED."""
        entry = XLA_EXPLAINED.get(self.name)
        if entry is None:
            return not self.differs
        named = {x.strip() for x in entry[0].split(",")}
        return self.differs <= named and bool(self.differs)


def jax_namespace() -> dict:
    """Names a JAX function's source expects, bound to labsim: ``jnp`` → ``labsim.numpy`` and so on."""
    jax = types.SimpleNamespace(nn=nn, grad=grad, numpy=lnp)
    return {"jnp": lnp, "jax": jax, "np": np, "F32": lnp.float32, "lax": types.SimpleNamespace()}


def load(name: str) -> dict:
    return json.loads((REFS / name).read_text())


def xla_rows(refs: dict | None = None) -> list[XlaRow]:
    refs = refs or load("xla.json")
    rows = []
    for f in refs["functions"]:
        ca = f["cost_analysis"]
        base = dict(name=f["name"], xla_flops=int(ca["flops"]), xla_transcendentals=int(ca.get("transcendentals", 0)),
                    xla_bytes=int(ca["bytes accessed"]),
                    xla_kernels=int(f["hlo_optimized_cpu"]["entry_kernel_like_count"]))
        ns = jax_namespace()
        try:
            exec(f["source"], ns)  # the stored source, with jnp bound to labsim.numpy
            g = trace(ns[f["name"]], *[ShapeDtype(tuple(s), f["dtype"]) for s in f["arg_shapes"]])
            p = _compile(g)
            rows.append(XlaRow(flops=p.flops, transcendentals=p.transcendentals, bytes=p.bytes,
                               kernels=len(p.kernels), **base))
        except (AttributeError, NotImplementedError, TypeError) as e:
            rows.append(XlaRow(flops=None, transcendentals=None, bytes=None, kernels=None,
                               error=f"{type(e).__name__}: {e}", **base))
    return rows


@dataclass(frozen=True)
class TorchRow:
    config: str
    component: str
    forward: int
    torch_forward: int
    forward_backward: int
    torch_forward_backward: int

    @property
    def match(self) -> bool:
        return self.forward == self.torch_forward and self.forward_backward == self.torch_forward_backward


def torch_layer(case: dict, config: dict):
    """The labsim twin of a recorded PyTorch layer: (function, ShapeDtypes)."""
    comp = case["component"]
    cfg = llm.TransformerConfig(
        config["name"], d_model=config["d_model"], n_layers=1, n_heads=config["n_heads"],
        n_kv_heads=config["n_kv_heads"], d_ff=config["d_ff"], vocab=1, max_seq=config["seq"], bias=config["bias"],
        mlp="swiglu" if "swiglu" in comp else "gelu", norm="rmsnorm" if "rmsnorm" in comp else "layernorm")
    B, S, D = case["input_shape"]
    x = ShapeDtype((B, S, D))
    if comp == "linear":
        w = ShapeDtype((D, config["d_ff"]))
        if config["bias"]:
            return (lambda x, w, b: x @ w + b), [x, w, ShapeDtype((config["d_ff"],))]
        return (lambda x, w: x @ w), [x, w]
    part = {"mlp_gelu": "mlp", "mlp_swiglu": "mlp", "attention_explicit": "attention",
            "attention_sdpa": "attention"}.get(comp, "block")
    return llm.layer_fn(cfg, part), [x] + [s for _, s in llm.param_specs(cfg, part)]


def torch_rows(refs: dict | None = None) -> list[TorchRow]:
    refs = refs or load("torch_flops.json")
    configs = {c["name"]: c for c in refs["configs"]}
    rows = []
    for case in refs["cases"]:
        f, specs = torch_layer(case, configs[case["config"]])
        r = counting.backprop_cost(f, *specs)
        rows.append(TorchRow(case["config"], case["component"], r["forward"], case["forward"]["total_flops"],
                             r["forward+backward"], case["forward_backward"]["total_flops"]))
    return rows


__all__ = ["XLA_EXPLAINED", "XlaRow", "TorchRow", "xla_rows", "torch_rows", "jax_namespace", "torch_layer", "load", "REFS"]
