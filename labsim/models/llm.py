"""Transformer accounting: parameters, FLOPs per token, bytes of weights and KV cache; traceable layers.

Introduced in "Counting FLOPs and bytes"; used again for LLM inference. Two ways to count, which the
book compares: closed forms over a :class:`TransformerConfig` (``param_count``, ``flops_per_token``), and
labsim programs traced from the layers below (``ls.trace(block(cfg), ...)``), whose FLOPs come from the
op registry. Tests hold the two equal.

Conventions (as PyTorch's FLOP counter and Kaplan et al.): 2 FLOPs per multiply-accumulate; only matrix
products counted in ``flops_per_token``; attention scores over the full context (no causal discount);
the embedding lookup costs no FLOPs; training ≈ 3 × forward (backward = 2 matrix products per forward one).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from types import MappingProxyType

from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError
from ..support.lookup import lookup
from ..core.avals import ShapeDtype
from ..core.dtypes import itemsize
from ..frontend import nn
from ..frontend import numpy as lnp


def _positive_int(v, name: str, where: str, extra: str = "") -> int:
    """``v`` as an int >= 1, or a ValueError naming ``name`` and ``where`` (a count of layers, heads,
    positions or features is a whole number: 0, -1, 2.5 or True is refused)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentError(f"{where}: {name} must be a positive whole number, got {type(v).__name__} {v!r}{extra}")
    if v < 1:
        raise ArgumentError(f"{where}: {name} must be at least 1, got {v}{extra}")
    return int(v)


PARTS = ("attention", "mlp", "block")


def _check_part(part, where: str) -> str:
    if part not in PARTS:
        raise ArgumentError(f"{where}: unknown layer part {part!r}; parts are {list(PARTS)}")
    return part


@dataclass(frozen=True)
class TransformerConfig:
    """A decoder-only transformer. ``source`` is a BibTeX key in ``book/references.bib``."""

    name: str
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    vocab: int
    max_seq: int
    n_kv_heads: int | None = None  # None: same as n_heads (multi-head attention); fewer: GQA
    mlp: str = "gelu"  # "gelu" (two matrices) or "swiglu" (three)
    norm: str = "layernorm"  # "layernorm" (weight + bias) or "rmsnorm" (weight)
    bias: bool = True  # biases on the linear layers
    tied_embeddings: bool = True  # output projection shares the embedding matrix
    learned_positions: bool = True  # a (max_seq × d_model) position table (GPT-2); False: RoPE, no params
    source: str = ""
    sliding_window: int | None = None  # each token attends to at most this many positions (Mistral); None: all
    n_experts: int = 1  # > 1: a mixture-of-experts MLP of n_experts SwiGLU/GELU experts and a router
    experts_per_token: int = 1  # experts each token is routed to (Mixtral: 2 of 8)

    def __post_init__(self) -> None:
        for field in ("d_model", "n_layers", "n_heads", "d_ff", "vocab", "max_seq"):
            _positive_int(getattr(self, field), field, f"TransformerConfig {self.name!r}")
        if self.n_kv_heads is not None:  # 0 is not "same as n_heads": None is
            _positive_int(self.n_kv_heads, "n_kv_heads", f"TransformerConfig {self.name!r}",
                          " (None means as many as n_heads)")
        if self.d_model % self.n_heads:
            raise ArgumentError(f"{self.name}: d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        if self.n_heads % self.kv_heads:
            raise ArgumentError(f"{self.name}: n_heads {self.n_heads} is not a multiple of n_kv_heads {self.kv_heads}")
        if self.mlp not in ("gelu", "swiglu") or self.norm not in ("layernorm", "rmsnorm"):
            raise ArgumentError(f"{self.name}: mlp must be gelu|swiglu and norm layernorm|rmsnorm")
        if self.sliding_window is not None:
            _positive_int(self.sliding_window, "sliding_window", f"TransformerConfig {self.name!r}",
                          " (None means no window)")
        _positive_int(self.n_experts, "n_experts", f"TransformerConfig {self.name!r}")
        _positive_int(self.experts_per_token, "experts_per_token", f"TransformerConfig {self.name!r}")
        if self.experts_per_token > self.n_experts:
            raise ArgumentError(f"{self.name}: experts_per_token {self.experts_per_token} exceeds n_experts {self.n_experts}")

    @property
    def moe(self) -> bool:
        """True for a mixture-of-experts model (more than one expert MLP per layer)."""
        return self.n_experts > 1

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.n_heads

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def with_(self, **changes) -> "TransformerConfig":
        return replace(self, **changes)


PRESETS = MappingProxyType({
    "GPT-2 small": TransformerConfig("GPT-2 small", d_model=768, n_layers=12, n_heads=12, d_ff=3072,
                                     vocab=50257, max_seq=1024, source="radford2019gpt2"),
    "LLaMA-2-7B": TransformerConfig("LLaMA-2-7B", d_model=4096, n_layers=32, n_heads=32, d_ff=11008,
                                    vocab=32000, max_seq=4096, mlp="swiglu", norm="rmsnorm", bias=False,
                                    tied_embeddings=False, learned_positions=False, source="touvron2023llama2"),
    "LLaMA-3-8B": TransformerConfig("LLaMA-3-8B", d_model=4096, n_layers=32, n_heads=32, n_kv_heads=8,
                                    d_ff=14336, vocab=128256, max_seq=8192, mlp="swiglu", norm="rmsnorm",
                                    bias=False, tied_embeddings=False, learned_positions=False,
                                    source="grattafiori2024llama3"),
    "LLaMA-3-70B": TransformerConfig("LLaMA-3-70B", d_model=8192, n_layers=80, n_heads=64, n_kv_heads=8,
                                     d_ff=28672, vocab=128256, max_seq=8192, mlp="swiglu", norm="rmsnorm",
                                     bias=False, tied_embeddings=False, learned_positions=False,
                                     source="grattafiori2024llama3"),
    # LLaMA-2 13B and 70B: Touvron et al. 2023 (Table 1; GQA with 8 KV heads for 70B) and the released
    # config.json files (hidden 5120 / 8192, 40 / 80 layers, intermediate 13824 / 28672, vocab 32000).
    "LLaMA-2-13B": TransformerConfig("LLaMA-2-13B", d_model=5120, n_layers=40, n_heads=40, d_ff=13824,
                                     vocab=32000, max_seq=4096, mlp="swiglu", norm="rmsnorm", bias=False,
                                     tied_embeddings=False, learned_positions=False, source="touvron2023llama2"),
    "LLaMA-2-70B": TransformerConfig("LLaMA-2-70B", d_model=8192, n_layers=80, n_heads=64, n_kv_heads=8,
                                     d_ff=28672, vocab=32000, max_seq=4096, mlp="swiglu", norm="rmsnorm",
                                     bias=False, tied_embeddings=False, learned_positions=False,
                                     source="touvron2023llama2"),
    # Mistral 7B: Jiang et al. 2023, Table 1 (dim 4096, 32 layers, 32 heads, 8 KV heads, hidden 14336,
    # window 4096, context 8192, vocab 32000); the rolling buffer cache holds the window only.
    "Mistral-7B": TransformerConfig("Mistral-7B", d_model=4096, n_layers=32, n_heads=32, n_kv_heads=8,
                                    d_ff=14336, vocab=32000, max_seq=8192, mlp="swiglu", norm="rmsnorm",
                                    bias=False, tied_embeddings=False, learned_positions=False,
                                    sliding_window=4096, source="jiang2023mistral"),
    # Mixtral 8x7B: Jiang et al. 2024, Table 1 (Mistral 7B's shape, 8 experts, top 2, context 32768, no
    # sliding window) and the released config.json (num_local_experts 8, num_experts_per_tok 2).
    "Mixtral-8x7B": TransformerConfig("Mixtral-8x7B", d_model=4096, n_layers=32, n_heads=32, n_kv_heads=8,
                                      d_ff=14336, vocab=32000, max_seq=32768, mlp="swiglu", norm="rmsnorm",
                                      bias=False, tied_embeddings=False, learned_positions=False,
                                      n_experts=8, experts_per_token=2, source="jiang2024mixtral"),
})


def get(name: str | TransformerConfig) -> TransformerConfig:
    try:
        return lookup(PRESETS, name, "model", TransformerConfig)
    except LabsimError:
        raise
    except TypeError as e:  # not a name: a labsim error, still a TypeError
        raise ArgumentTypeError(str(e)) from None


# ----------------------------------------------------------------------------------------------
# closed forms
def attention_params(cfg: TransformerConfig) -> int:
    d, kv = cfg.d_model, cfg.kv_heads * cfg.head_dim
    n = 2 * d * d + 2 * d * kv
    return n + ((2 * d + 2 * kv) if cfg.bias else 0)


def expert_params(cfg: TransformerConfig) -> int:
    """One MLP (one expert of a mixture-of-experts layer): 2 or 3 matrices d × d_ff, and their biases."""
    d, f = cfg.d_model, cfg.d_ff
    if cfg.mlp == "gelu":
        return 2 * d * f + ((f + d) if cfg.bias else 0)
    return 3 * d * f + ((2 * f + d) if cfg.bias else 0)


def router_params(cfg: TransformerConfig) -> int:
    """The router of a mixture-of-experts layer, a d_model × n_experts matrix (no bias, as Mixtral); 0 if dense."""
    return cfg.d_model * cfg.n_experts if cfg.moe else 0


def mlp_params(cfg: TransformerConfig, active: bool = False) -> int:
    """The MLP of one layer: all experts and the router, or with ``active=True`` only the
    ``experts_per_token`` experts one token uses (and the router). A dense model has one expert."""
    n = cfg.experts_per_token if active else cfg.n_experts
    return n * expert_params(cfg) + router_params(cfg)


def norm_params(cfg: TransformerConfig) -> int:
    return cfg.d_model * (2 if cfg.norm == "layernorm" else 1)


def layer_params(cfg: TransformerConfig, active: bool = False) -> int:
    return attention_params(cfg) + mlp_params(cfg, active) + 2 * norm_params(cfg)


def _count(cfg: TransformerConfig, active: bool) -> int:
    n = cfg.vocab * cfg.d_model
    n += cfg.max_seq * cfg.d_model if cfg.learned_positions else 0
    n += cfg.n_layers * layer_params(cfg, active) + norm_params(cfg)
    n += 0 if cfg.tied_embeddings else cfg.vocab * cfg.d_model
    return n


def param_count(cfg: TransformerConfig | str) -> int:
    """All parameters: embeddings, positions (if learned), layers (every expert of a mixture of
    experts), final norm, output head (if untied). What the weights occupy in memory."""
    return _count(get(cfg), active=False)


def active_param_count(cfg: TransformerConfig | str) -> int:
    """Parameters one token uses: as :func:`param_count`, but only ``experts_per_token`` experts per
    layer (and the router). Equal to ``param_count`` for a dense model."""
    return _count(get(cfg), active=True)


def matmul_params(cfg: TransformerConfig | str) -> int:
    """Parameters that take part in a matrix product per token: layer matrices (a mixture of experts:
    the router and the active experts only) and the output head."""
    cfg = get(cfg)
    d, kv, f = cfg.d_model, cfg.kv_heads * cfg.head_dim, cfg.d_ff
    expert = (2 if cfg.mlp == "gelu" else 3) * d * f
    per_layer = 2 * d * d + 2 * d * kv + cfg.experts_per_token * expert + router_params(cfg)
    return cfg.n_layers * per_layer + cfg.vocab * d


def kv_positions(cfg: TransformerConfig | str, seq_len: int) -> int:
    """Positions a token at ``seq_len`` attends to and the cache keeps: ``seq_len``, capped at the
    sliding window if the model has one (Mistral's rolling buffer cache holds the window only)."""
    cfg = get(cfg)
    seq_len = _positive_int(seq_len, "seq_len", "kv_positions")
    return min(seq_len, cfg.sliding_window) if cfg.sliding_window else seq_len


def attention_flops_per_token(cfg: TransformerConfig | str, seq_len: int) -> int:
    """QKᵀ and PV for one token attending to ``seq_len`` positions (capped at a sliding window), all
    layers: 2 · 2 · L · S · d."""
    cfg = get(cfg)
    seq_len = _positive_int(seq_len, "seq_len", "attention_flops_per_token")
    return 4 * cfg.n_layers * kv_positions(cfg, seq_len) * cfg.n_heads * cfg.head_dim


def flops_per_token(cfg: TransformerConfig | str, seq_len: int, training: bool = False) -> int:
    """Matrix-product FLOPs per token: 2 × matmul parameters + attention over ``seq_len`` positions.

    ``training=True`` multiplies by 3 (the backward pass does two matrix products per forward one).
    """
    cfg = get(cfg)
    seq_len = _positive_int(seq_len, "seq_len", "flops_per_token")
    f = 2 * matmul_params(cfg) + attention_flops_per_token(cfg, seq_len)
    return 3 * f if training else f


def flops_split(cfg: TransformerConfig | str, seq_len: int) -> dict[str, int]:
    """Forward FLOPs per token by part: attention projections, attention scores (QKᵀ, PV), MLP, head."""
    cfg = get(cfg)
    seq_len = _positive_int(seq_len, "seq_len", "flops_split")
    d, kv, f = cfg.d_model, cfg.kv_heads * cfg.head_dim, cfg.d_ff
    mlp_mats = cfg.experts_per_token * (2 if cfg.mlp == "gelu" else 3) * d * f + router_params(cfg)
    return {
        "attention projections": 2 * cfg.n_layers * (2 * d * d + 2 * d * kv),
        "attention scores": attention_flops_per_token(cfg, seq_len),
        "MLP": 2 * cfg.n_layers * mlp_mats,
        "output head": 2 * cfg.vocab * d,
    }


def weight_bytes(cfg: TransformerConfig | str, dtype="bfloat16") -> int:
    """Bytes of all the weights (every expert of a mixture of experts): what they occupy in memory."""
    return param_count(cfg) * itemsize(dtype)


def expected_experts(cfg: TransformerConfig | str, tokens: int) -> float:
    """Expected distinct experts per layer that ``tokens`` tokens use, labsim's assumption of uniform,
    independent routing: E · (1 − (1 − k/E)^tokens) for k of E experts per token (k for one token,
    nearly E for many). 1 for a dense model."""
    cfg = get(cfg)
    tokens = _positive_int(tokens, "tokens", "expected_experts")
    if not cfg.moe:
        return 1.0
    E, k = cfg.n_experts, cfg.experts_per_token
    return E * (1.0 - (1.0 - k / E) ** tokens)


def weight_bytes_read(cfg: TransformerConfig | str, tokens: int, dtype="bfloat16") -> float:
    """Weight bytes one forward step over ``tokens`` tokens reads from memory: all of them for a dense
    model; for a mixture of experts the shared weights plus the :func:`expected_experts` of each layer
    (so one token of Mixtral reads about its active parameters, a large batch nearly all of them)."""
    cfg = get(cfg)
    if not cfg.moe:
        _positive_int(tokens, "tokens", "weight_bytes_read")
        return weight_bytes(cfg, dtype)
    unused = (cfg.n_experts - expected_experts(cfg, tokens)) * cfg.n_layers * expert_params(cfg)
    return (param_count(cfg) - unused) * itemsize(dtype)


def kv_cache_bytes_per_token(cfg: TransformerConfig | str, dtype="bfloat16") -> int:
    """K and V for every layer and KV head: 2 · L · n_kv · head_dim · bytes per element."""
    cfg = get(cfg)
    return 2 * cfg.n_layers * cfg.kv_heads * cfg.head_dim * itemsize(dtype)


def kv_cache_bytes(cfg: TransformerConfig | str, seq_len: int, dtype="bfloat16") -> int:
    """The KV cache of one sequence of ``seq_len`` tokens: bytes per token × :func:`kv_positions` (a
    sliding-window model keeps the window only)."""
    cfg = get(cfg)
    return kv_cache_bytes_per_token(cfg, dtype) * kv_positions(cfg, seq_len)


# ----------------------------------------------------------------------------------------------
# traceable layers (the same functions run eagerly on NumPy arrays)
def _linear(x, w, b=None):
    y = x @ w
    return y + b if b is not None else y


def _norm(cfg, x, w, b=None, eps=1e-5):
    if cfg.norm == "layernorm":
        return nn.layer_norm(x, w, b, eps=eps)
    return x * lnp.rsqrt(lnp.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _split_heads(x, n, hd):
    b, s, _ = x.shape
    return lnp.transpose(lnp.reshape(x, (b, s, n, hd)), (0, 2, 1, 3))


def attention(cfg: TransformerConfig, x, wq, wk, wv, wo, bq=None, bk=None, bv=None, bo=None, causal=True):
    """Multi-head (or grouped-query) self-attention with explicit matrix products."""
    B, S, d = x.shape
    H, KV, hd = cfg.n_heads, cfg.kv_heads, cfg.head_dim
    q = _split_heads(_linear(x, wq, bq), H, hd)
    k = _split_heads(_linear(x, wk, bk), KV, hd)
    v = _split_heads(_linear(x, wv, bv), KV, hd)
    if KV != H:  # repeat each KV head for H/KV query heads (no FLOPs)
        rep = H // KV
        k = lnp.reshape(lnp.broadcast_to(lnp.reshape(k, (B, KV, 1, S, hd)), (B, KV, rep, S, hd)), (B, H, S, hd))
        v = lnp.reshape(lnp.broadcast_to(lnp.reshape(v, (B, KV, 1, S, hd)), (B, KV, rep, S, hd)), (B, H, S, hd))
    s = (q @ lnp.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(hd))
    if causal:
        # built from iota and compare inside the graph, as XLA does: no S×S constant is stored
        i, j = lnp.broadcasted_iota("int32", (S, S), 0), lnp.broadcasted_iota("int32", (S, S), 1)
        mask = i >= j
        if cfg.sliding_window:  # token i sees positions i − W + 1 .. i (W positions, itself included)
            mask = lnp.where(i - j < cfg.sliding_window, mask, False)
        s = lnp.where(mask, s, -1e30)
    p = nn.softmax(s, axis=-1)
    o = lnp.reshape(lnp.transpose(p @ v, (0, 2, 1, 3)), (B, S, d))
    return _linear(o, wo, bo)


def mlp(cfg: TransformerConfig, x, *w):
    if cfg.mlp == "gelu":
        w1, w2, *bs = w
        b1, b2 = bs if bs else (None, None)
        return _linear(nn.gelu(_linear(x, w1, b1)), w2, b2)
    wg, wu, wd, *bs = w
    bg, bu, bd = bs if bs else (None, None, None)
    return _linear(nn.silu(_linear(x, wg, bg)) * _linear(x, wu, bu), wd, bd)


def param_specs(cfg: TransformerConfig, part: str, dtype="float32") -> list[tuple[str, ShapeDtype]]:
    """Names and shapes of the parameters of ``part`` ("attention", "mlp", "block")."""
    cfg = get(cfg)
    _check_part(part, "param_specs")
    if cfg.moe and part != "attention":
        raise ArgumentError(f"param_specs: {cfg.name} is a mixture of experts; labsim traces dense layers only "
                         f"(part {part!r}); count it with the closed forms (param_count, flops_per_token)")
    d, kv, f = cfg.d_model, cfg.kv_heads * cfg.head_dim, cfg.d_ff
    S = lambda *s: ShapeDtype(s, dtype)
    att = [("wq", S(d, d)), ("wk", S(d, kv)), ("wv", S(d, kv)), ("wo", S(d, d))]
    if cfg.bias:
        att += [("bq", S(d)), ("bk", S(kv)), ("bv", S(kv)), ("bo", S(d))]
    if cfg.mlp == "gelu":
        m = [("w1", S(d, f)), ("w2", S(f, d))] + ([("b1", S(f)), ("b2", S(d))] if cfg.bias else [])
    else:
        m = [("wg", S(d, f)), ("wu", S(d, f)), ("wd", S(f, d))] + \
            ([("bg", S(f)), ("bu", S(f)), ("bd", S(d))] if cfg.bias else [])
    norm = lambda i: [(f"ln{i}_w", S(d))] + ([(f"ln{i}_b", S(d))] if cfg.norm == "layernorm" else [])
    return {"attention": att, "mlp": m, "block": norm(1) + att + norm(2) + m}[part]


def layer_fn(cfg: TransformerConfig, part: str, causal: bool = True):
    """A function ``f(x, *params)`` for ``part`` of a layer, ready for ``ls.trace`` with
    ``[ShapeDtype((batch, seq, d_model))] + [s for _, s in param_specs(cfg, part)]``."""
    cfg = get(cfg)
    _check_part(part, "layer_fn")
    names = [n for n, _ in param_specs(cfg, part)]

    def f(x, *params):
        p = dict(zip(names, params))
        if part == "attention":
            return attention(cfg, x, *[p.get(k) for k in ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")], causal=causal)
        if part == "mlp":
            return mlp(cfg, x, *params)
        n1 = _norm(cfg, x, p["ln1_w"], p.get("ln1_b"))
        h = x + attention(cfg, n1, *[p.get(k) for k in ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")], causal=causal)
        n2 = _norm(cfg, h, p["ln2_w"], p.get("ln2_b"))
        return h + mlp(cfg, n2, *[p[n] for n in names if n[:1] in "wb" and n not in
                                  ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")])

    f.__name__ = f"{part}"
    return f


# ----------------------------------------------------------------------------------------------
# one decode step with a KV cache
DECODE_PARTS = ("attention", "block")


def decode_attention(cfg: TransformerConfig, x, k_cache, v_cache, wq, wk, wv, wo,
                     bq=None, bk=None, bv=None, bo=None):
    """Attention for ``T`` new tokens ``x`` (batch, T, d_model) that attend to a KV cache of ``L`` earlier
    positions (``k_cache``, ``v_cache``: batch, n_kv_heads, L, head_dim) and to themselves (causally).

    The new tokens' keys and values are computed and joined to the cache, so the scores span ``L + T``
    positions. Returns the attention output only: writing the new keys and values back into the cache
    (2 · n_kv_heads · head_dim numbers per token) is left out of labsim's program.
    """
    B, T, d = x.shape
    H, KV, hd = cfg.n_heads, cfg.kv_heads, cfg.head_dim
    if tuple(k_cache.shape[:2]) != (B, KV) or k_cache.shape[-1] != hd or tuple(v_cache.shape) != tuple(k_cache.shape):
        raise ArgumentError(f"decode_attention: the caches must be (batch={B}, n_kv_heads={KV}, L, head_dim={hd}), "
                         f"got k_cache {tuple(k_cache.shape)} and v_cache {tuple(v_cache.shape)}")
    L = k_cache.shape[2]
    q = _split_heads(_linear(x, wq, bq), H, hd)
    k = lnp.concatenate([k_cache, _split_heads(_linear(x, wk, bk), KV, hd)], axis=2)
    v = lnp.concatenate([v_cache, _split_heads(_linear(x, wv, bv), KV, hd)], axis=2)
    N = L + T
    if KV != H:  # repeat each KV head for H/KV query heads (no FLOPs)
        rep = H // KV
        k = lnp.reshape(lnp.broadcast_to(lnp.reshape(k, (B, KV, 1, N, hd)), (B, KV, rep, N, hd)), (B, H, N, hd))
        v = lnp.reshape(lnp.broadcast_to(lnp.reshape(v, (B, KV, 1, N, hd)), (B, KV, rep, N, hd)), (B, H, N, hd))
    s = (q @ lnp.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(hd))
    if T > 1:  # new token t sees the cache and new tokens 0..t
        mask = lnp.tri(T, N, L, dtype=bool)  # position j <= L + t, computed in the graph (iota, compare)
        s = lnp.where(mask, s, -1e30)
    p = nn.softmax(s, axis=-1)
    o = lnp.reshape(lnp.transpose(p @ v, (0, 2, 1, 3)), (B, T, d))
    return _linear(o, wo, bo)


def _decode_args(fn: str, cfg: TransformerConfig, batch, kv_len, new_tokens) -> tuple[int, int, int]:
    """A decode step's counts, each a positive int, whose context fits the model's maximum."""
    batch = _positive_int(batch, "batch", fn)
    kv_len = _positive_int(kv_len, "kv_len", fn)
    new_tokens = _positive_int(new_tokens, "new_tokens", fn)
    if kv_len + new_tokens > cfg.max_seq:
        raise ArgumentError(f"{fn}: kv_len + new_tokens = {kv_len + new_tokens:,} is beyond {cfg.name}'s "
                            f"maximum context of {cfg.max_seq:,} tokens (max_seq)")
    return batch, kv_len, new_tokens


def decode_specs(cfg: TransformerConfig | str, part: str, batch: int, kv_len: int, new_tokens: int = 1,
                 dtype="float32") -> list[ShapeDtype]:
    """The argument shapes of :func:`decode_fn`: x, k_cache, v_cache, then ``param_specs(cfg, part)``."""
    cfg = get(cfg)
    if part not in DECODE_PARTS:
        raise ArgumentError(f"decode_specs: unknown decode part {part!r}; parts are {list(DECODE_PARTS)}")
    batch, kv_len, new_tokens = _decode_args("decode_specs", cfg, batch, kv_len, new_tokens)
    if cfg.sliding_window and kv_len + new_tokens > cfg.sliding_window:
        raise ArgumentError(f"decode_specs: kv_len + new_tokens = {kv_len + new_tokens} exceeds {cfg.name}'s "
                         f"sliding window of {cfg.sliding_window}; its cache holds the window only")
    cache = ShapeDtype((batch, cfg.kv_heads, kv_len, cfg.head_dim), dtype)
    return [ShapeDtype((batch, new_tokens, cfg.d_model), dtype), cache, cache] + \
        [s for _, s in param_specs(cfg, part, dtype)]


def decode_fn(cfg: TransformerConfig | str, part: str = "block"):
    """A function ``f(x, k_cache, v_cache, *params)``: ``part`` ("attention" or "block") of one layer for
    new tokens that attend to a KV cache. Trace it with ``ls.trace(f, *decode_specs(cfg, part, B, L))``."""
    cfg = get(cfg)
    if part not in DECODE_PARTS:
        raise ArgumentError(f"decode_fn: unknown decode part {part!r}; parts are {list(DECODE_PARTS)}")
    names = [n for n, _ in param_specs(cfg, part)]
    att_names = ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")

    def f(x, k_cache, v_cache, *params):
        p = dict(zip(names, params))
        att = [p.get(k) for k in att_names]
        if part == "attention":
            return decode_attention(cfg, x, k_cache, v_cache, *att)
        n1 = _norm(cfg, x, p["ln1_w"], p.get("ln1_b"))
        h = x + decode_attention(cfg, n1, k_cache, v_cache, *att)
        n2 = _norm(cfg, h, p["ln2_w"], p.get("ln2_b"))
        return h + mlp(cfg, n2, *[p[n] for n in names if n[:1] in "wb" and n not in att_names])

    f.__name__ = f"decode_{part}"
    return f


def decode_flops(cfg: TransformerConfig | str, batch: int, kv_len: int, new_tokens: int = 1) -> int:
    """Matrix-product FLOPs of one layer's decode step: ``batch · T`` tokens through the layer matrices
    (2 per multiply-accumulate) plus scores and PV over ``kv_len + T`` positions: 2 · 2 · H · hd each."""
    cfg = get(cfg)
    batch, kv_len, new_tokens = _decode_args("decode_flops", cfg, batch, kv_len, new_tokens)
    d, kv, f = cfg.d_model, cfg.kv_heads * cfg.head_dim, cfg.d_ff
    mats = 2 * d * d + 2 * d * kv + cfg.experts_per_token * (2 if cfg.mlp == "gelu" else 3) * d * f + router_params(cfg)
    tokens = batch * new_tokens
    return 2 * tokens * mats + 4 * tokens * kv_positions(cfg, kv_len + new_tokens) * cfg.n_heads * cfg.head_dim


__all__ = ["TransformerConfig", "PRESETS", "get", "param_count", "active_param_count", "matmul_params",
           "flops_per_token", "kv_positions", "kv_cache_bytes", "expected_experts", "weight_bytes_read",
           "expert_params", "router_params",
           "attention_flops_per_token", "flops_split", "weight_bytes", "kv_cache_bytes_per_token",
           "attention_params", "mlp_params", "layer_params", "param_specs", "layer_fn", "attention", "mlp",
           "decode_attention", "decode_fn", "decode_specs", "decode_flops", "DECODE_PARTS"]
