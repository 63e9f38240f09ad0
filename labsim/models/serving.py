"""Serving a language model: attention traffic, a FlashAttention reference, KV-cache allocators,
speculative decoding, prefix caching, LoRA adapters and the roofline time of a serving step.

Introduced in "LLM inference". Every function here is a closed form or a small seeded simulation,
labsim's simplification of what serving systems do; the chapter names its sources.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from ..core.dtypes import itemsize
from ..support.errors import ArgumentError, ArgumentTypeError, count, nonnegative, number
from ..support.records import Record
from . import llm
from ._checks import pos as _pos, span as _range, seed as _seed


def _arrays(fn: str, **named):
    out = []
    for name, a in named.items():
        try:
            x = np.asarray(a, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{fn}: {name} must be an array of numbers, got {type(a).__name__}") from None
        out.append(x)
    return out


# ----------------------------------------------------------------------------------------------
# attention traffic: the unfused program vs a tiled, fused kernel
def attention_traffic(seq: int, head_dim: int, heads: int = 1, *, block: int = 128, fused: bool = True,
                      batch: int = 1, dtype="bfloat16") -> dict[str, int]:
    """HBM bytes of non-causal attention O = softmax(Q Kᵀ) V over ``seq`` positions, by array.

    Unfused (three kernels: S = QKᵀ, P = softmax(S), O = PV): Q and K are read, S (seq × seq) written,
    S read and P written, P and V read, O written: 4·seq·d + 4·seq² elements per head.
    Fused (labsim's model of FlashAttention's loop order, one query block of ``block`` rows at a time):
    each query block is read once and its output written once; K and V are read once per query block,
    ceil(seq / block) times in all; S and P stay on chip: 2·seq·d + 2·seq·d·ceil(seq/block) per head.
    """
    seq, head_dim = _pos(seq, "seq", "attention_traffic"), _pos(head_dim, "head_dim", "attention_traffic")
    heads, batch = _pos(heads, "heads", "attention_traffic"), _pos(batch, "batch", "attention_traffic")
    block = _pos(block, "block", "attention_traffic")
    e = itemsize(dtype) * heads * batch
    nd = seq * head_dim
    if fused:
        passes = math.ceil(seq / block)
        out = {"Q": nd, "K": nd * passes, "V": nd * passes, "S and P": 0, "O": nd}
    else:
        out = {"Q": nd, "K": nd, "V": nd, "S and P": 4 * seq * seq, "O": nd}
    out = {k: v * e for k, v in out.items()}
    out["total"] = sum(out.values())
    return out


def attention_flops(seq: int, head_dim: int, heads: int = 1, batch: int = 1) -> int:
    """QKᵀ and PV, non-causal: 2 · 2 · seq² · head_dim per head (the softmax not counted)."""
    seq, head_dim = _pos(seq, "seq", "attention_flops"), _pos(head_dim, "head_dim", "attention_flops")
    heads, batch = _pos(heads, "heads", "attention_flops"), _pos(batch, "batch", "attention_flops")
    return 4 * seq * seq * head_dim * heads * batch


def flash_attention(q, k, v, *, block: int = 64, causal: bool = False, scale: float | None = None):
    """softmax(q kᵀ · scale) v computed block by block with the online softmax, in NumPy.

    ``q`` (..., Sq, d), ``k`` and ``v`` (..., Sk, d). The loop goes over query blocks; for each it streams
    key/value blocks and keeps a running maximum ``m``, a running sum ``l`` and an unnormalised output
    ``acc``, rescaling them by exp(m_old − m_new) when the maximum grows. No Sq × Sk array is formed.
    Returns ``(out, loaded)``: ``loaded`` counts the elements read from the inputs and written to ``out``
    ({"Q", "K", "V", "O"}), for comparison with :func:`attention_traffic`.
    """
    q, k, v = _check_qkv("flash_attention", q, k, v)
    block = _pos(block, "block", "flash_attention")
    Sq, d = q.shape[-2:]
    Sk = k.shape[-2]
    if causal and Sq != Sk:
        raise ArgumentError(f"flash_attention: causal needs as many queries as keys, got {Sq} and {Sk}")
    scale = 1.0 / math.sqrt(d) if scale is None else number("flash_attention", "scale", scale)
    lead = int(np.prod(q.shape[:-2], dtype=np.int64))
    out = np.empty_like(q)
    loaded = {"Q": 0, "K": 0, "V": 0, "O": 0}
    for i0 in range(0, Sq, block):
        qi = q[..., i0:i0 + block, :]
        rows = qi.shape[-2]
        loaded["Q"] += lead * rows * d
        m = np.full(qi.shape[:-1], -np.inf)
        l = np.zeros(qi.shape[:-1])
        acc = np.zeros(qi.shape)
        for j0 in range(0, Sk, block):
            if causal and j0 > i0 + rows - 1:
                break  # every key in this block is in the future of every query in the query block
            kj, vj = k[..., j0:j0 + block, :], v[..., j0:j0 + block, :]
            loaded["K"] += lead * kj.shape[-2] * d
            loaded["V"] += lead * vj.shape[-2] * d
            s = (qi @ np.swapaxes(kj, -1, -2)) * scale
            if causal:
                s = np.where(np.arange(j0, j0 + kj.shape[-2])[None, :] <= np.arange(i0, i0 + rows)[:, None],
                             s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1))
            alpha = np.exp(m - m_new)  # rescales what was summed under the old maximum
            p = np.exp(s - m_new[..., None])
            l = l * alpha + p.sum(axis=-1)
            acc = acc * alpha[..., None] + p @ vj
            m = m_new
        out[..., i0:i0 + rows, :] = acc / l[..., None]
        loaded["O"] += lead * rows * d
    return out, loaded


def _check_qkv(fn, q, k, v):
    q, k, v = _arrays(fn, q=q, k=k, v=v)
    if q.ndim < 2 or k.shape != v.shape or k.shape[:-2] != q.shape[:-2] or k.shape[-1] != q.shape[-1]:
        raise ArgumentError(f"{fn}: q must be (..., Sq, d) and k, v both (..., Sk, d) with the same "
                            f"leading axes and d; got q {q.shape}, k {k.shape}, v {v.shape}")
    if q.shape[-1] < 1 or k.shape[-2] < 1:
        raise ArgumentError(f"{fn}: the head dimension d and the keys Sk must be at least 1; got q {q.shape}, "
                            f"k {k.shape}")
    return q, k, v


def attention_reference(q, k, v, *, causal: bool = False, scale: float | None = None):
    """softmax(q kᵀ · scale) v with the whole score matrix, in NumPy (the unfused algorithm)."""
    q, k, v = _check_qkv("attention_reference", q, k, v)
    if causal and q.shape[-2] != k.shape[-2]:
        raise ArgumentError(f"attention_reference: causal needs as many queries as keys, got {q.shape[-2]} and "
                            f"{k.shape[-2]}")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else number("attention_reference", "scale", scale)
    s = (q @ np.swapaxes(k, -1, -2)) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v


@dataclass(frozen=True)
class PrefixCacheStats(Record):
    """What :func:`prefix_cache` found: block hits and misses, and the prompt tokens whose prefill it skipped."""

    hits: int
    misses: int
    hit_rate: float
    tokens: int
    tokens_skipped: int



# ----------------------------------------------------------------------------------------------
# speculative decoding
def speculative_expected_tokens(alpha: float, k: int) -> float:
    """Expected tokens produced per target-model step when a draft proposes ``k`` tokens, each accepted
    with probability ``alpha`` independently (Leviathan et al. 2023): (1 − α^{k+1}) / (1 − α); k + 1 at α = 1."""
    alpha = _alpha("speculative_expected_tokens", alpha)
    k = count("speculative_expected_tokens", "k", k, minimum=0)
    return float(k + 1) if alpha == 1.0 else (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def speculative_speedup(alpha: float, k: int, draft_cost: float, verify_cost: float = 1.0) -> float:
    """Wall-time speedup over plain decoding when a draft step costs ``draft_cost`` target steps and the
    verify step of k + 1 tokens costs ``verify_cost`` decode steps: expected tokens / (k · draft_cost +
    verify_cost) (Leviathan et al. 2023). ``verify_cost=1`` is the small-batch case, where decode is
    memory-bound; at a large batch it approaches k + 1 (see ``step_time`` with ``new_tokens=k + 1``)."""
    alpha = _alpha("speculative_speedup", alpha)
    k = count("speculative_speedup", "k", k, minimum=0)
    draft_cost = nonnegative("speculative_speedup", "draft_cost", draft_cost)
    verify_cost = number("speculative_speedup", "verify_cost", verify_cost)
    if not verify_cost > 0:
        raise ArgumentError(f"speculative_speedup: verify_cost must be > 0, got {verify_cost}")
    return speculative_expected_tokens(alpha, k) / (k * draft_cost + verify_cost)


def _alpha(fn: str, alpha) -> float:
    a = number(fn, "alpha", alpha)
    if not 0.0 <= a <= 1.0:
        raise ArgumentError(f"{fn}: alpha must be in [0, 1] (a probability of acceptance), got {alpha!r}")
    return a


#: the longest draft :func:`simulate_speculative` draws (its memory grows with k; drafts are a few tokens)
MAX_DRAFT = 1_000_000


def simulate_speculative(alpha: float, k: int, steps: int, seed: int = 0) -> float:
    """Monte-Carlo mean of tokens per target step: accept draft tokens while each passes a coin of
    probability ``alpha``; the target then adds one token of its own (the correction, or a bonus token
    when all ``k`` passed).

    The ``steps`` rounds are drawn at once, aggregated: the number of rounds that accept exactly j draft
    tokens is multinomial with P(j) = α^j (1 − α) for j < k and P(k) = α^k, so the time and memory grow
    with k (at most :data:`MAX_DRAFT`), not with ``steps``."""
    fn = "simulate_speculative"
    alpha = _alpha(fn, alpha)
    k = count(fn, "k", k, minimum=0, maximum=MAX_DRAFT)
    steps = _pos(steps, "steps", fn)
    rng = np.random.default_rng(_seed(fn, seed))
    j = np.arange(k + 1, dtype=np.float64)
    with np.errstate(under="ignore"):
        p = alpha ** j * (1.0 - alpha)
    p[k] = alpha ** k
    p = np.clip(p, 0.0, None)
    p /= p.sum()
    n = rng.multinomial(steps, p)
    return float((n * (j + 1)).sum() / steps)


# ----------------------------------------------------------------------------------------------
# automatic prefix caching: blocks named by a hash of their tokens and of everything before them
def block_hashes(tokens, block: int) -> list[str]:
    """A hash for each full block of ``tokens``: hash(previous block's hash, this block's tokens), so two
    blocks match only if the whole prefix up to them matches. A partial last block gets none."""
    block = _pos(block, "block", "block_hashes")
    if isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__len__"):
        raise ArgumentTypeError(f"block_hashes: tokens must be a list of token ids, got {type(tokens).__name__}")
    out, prev = [], ""
    for i in range(0, len(tokens) - block + 1, block):
        h = hashlib.sha256((prev + "|" + ",".join(map(str, tokens[i:i + block]))).encode()).hexdigest()[:16]
        out.append(h)
        prev = h
    return out


def shared_prefix_requests(n: int, *, prefixes: int = 4, prefix_len: int = 512, suffix=(16, 128),
                           vocab: int = 32000, seed: int = 0) -> list[list[int]]:
    """``n`` token lists: each starts with one of ``prefixes`` shared prompts (a system prompt, say) of
    ``prefix_len`` tokens, then a random question of a length drawn from ``suffix``."""
    fn = "shared_prefix_requests"
    n, prefixes = _pos(n, "n", fn), _pos(prefixes, "prefixes", fn)
    prefix_len, vocab = count(fn, "prefix_len", prefix_len, minimum=0), _pos(vocab, "vocab", fn)
    suffix = _range(fn, "suffix", suffix, 0)
    rng = np.random.default_rng(_seed(fn, seed))
    pre = [rng.integers(0, vocab, prefix_len).tolist() for _ in range(prefixes)]
    out = []
    for _ in range(n):
        out.append(pre[int(rng.integers(len(pre)))] + rng.integers(0, vocab, int(rng.integers(suffix[0], suffix[1] + 1))).tolist())
    return out


def prefix_cache(requests, block: int = 16, capacity_blocks: int | None = None) -> PrefixCacheStats:
    """Serve ``requests`` (token lists) in order with a cache of KV blocks keyed by :func:`block_hashes`;
    a block found in the cache is reused, its prefill skipped. ``capacity_blocks``: evict the least
    recently used block beyond it (None: unbounded). Returns the counts and the block hit rate."""
    from collections import OrderedDict

    block = _pos(block, "block", "prefix_cache")
    if capacity_blocks is not None:
        capacity_blocks = _pos(capacity_blocks, "capacity_blocks", "prefix_cache")
    if isinstance(requests, (str, bytes)) or not hasattr(requests, "__iter__"):
        raise ArgumentTypeError(f"prefix_cache: requests must be a list of token lists, got {type(requests).__name__}")
    cache: OrderedDict[str, None] = OrderedDict()
    hits = misses = tokens = 0
    for toks in requests:
        if isinstance(toks, (str, bytes)) or not hasattr(toks, "__len__"):
            raise ArgumentTypeError(f"prefix_cache: each request must be a list of token ids, got "
                                    f"{type(toks).__name__} {toks!r}")
        tokens += len(toks)
        for h in block_hashes(toks, block):
            if h in cache:
                hits += 1
                cache.move_to_end(h)
            else:
                misses += 1
                cache[h] = None
                if capacity_blocks is not None and len(cache) > capacity_blocks:
                    cache.popitem(last=False)
    total = hits + misses
    return PrefixCacheStats(hits=hits, misses=misses, hit_rate=hits / total if total else 0.0, tokens=tokens,
                            tokens_skipped=hits * block)


# ----------------------------------------------------------------------------------------------
# LoRA adapters (the time of a serving step: labsim.models.stepcost)
LORA_TARGETS = ("wq", "wk", "wv", "wo")


def lora_params(cfg, rank: int, targets=LORA_TARGETS) -> int:
    """Parameters of one LoRA adapter: for each target matrix W (d_in × d_out) in every layer, A (d_in × r)
    and B (r × d_out), r · (d_in + d_out) numbers (Hu et al. 2022)."""
    cfg = llm.get(cfg)
    rank = _pos(rank, "rank", "lora_params")
    if isinstance(targets, str) or not hasattr(targets, "__iter__"):
        raise ArgumentTypeError(f"lora_params: targets must be a list of matrix names such as ['wq', 'wv'], "
                                f"got {type(targets).__name__} {targets!r}")
    targets = list(targets)
    if not targets:
        raise ArgumentError("lora_params: targets is empty; name at least one matrix, e.g. ['wq', 'wv']")
    attention_only = set(targets) <= set(LORA_TARGETS)  # also for a mixture of experts (dense attention)
    shapes = dict(llm.param_specs(cfg, "attention" if attention_only else "block"))
    bad = [t for t in targets if t not in shapes or len(shapes[t].shape) != 2]
    if bad:
        raise ArgumentError(f"lora_params: {bad} are not weight matrices of {cfg.name}; "
                         f"matrices are {[n for n, s in shapes.items() if len(s.shape) == 2]}")
    return cfg.n_layers * sum(rank * sum(shapes[t].shape) for t in targets)


__all__ = ["attention_traffic", "attention_flops", "flash_attention", "attention_reference", "Request",
           "random_requests", "Scheme", "AllocationResult", "AllocationSummary", "PrefixCacheStats",
           "simulate_kv_allocation", "speculative_expected_tokens",
           "speculative_speedup", "simulate_speculative", "block_hashes", "shared_prefix_requests",
           "prefix_cache", "LORA_TARGETS", "lora_params", "batch_step_time", "step_time"]


# speculative sampling's accept / resample rule and static vs continuous batching live in their own
# modules; they are part of ``ls.serving``.
from .speculative import (OnReject, first_token_distribution, residual, simulate_first_token,  # noqa: E402
                          speculative_sample, total_variation)
from .batching import (BatchingResult, BatchingSummary, Policy, TimedRequest, poisson_requests,  # noqa: E402
                       simulate_batching, step_cost)
from .stepcost import StepCost, batch_step_time, step_time  # noqa: E402
from .kvalloc import (AllocationResult, AllocationSummary, Request, Scheme, random_requests,  # noqa: E402
                      simulate_kv_allocation)

__all__ += ["residual", "speculative_sample", "first_token_distribution", "simulate_first_token",
            "total_variation", "TimedRequest", "poisson_requests", "step_cost", "BatchingResult",
            "simulate_batching", "Policy", "BatchingSummary", "OnReject", "StepCost"]
