"""Latency against throughput as the decode batch grows: labsim's closed form (chapter "LLM inference").

A batch of ``batch`` equal requests is served the simplest way: one prefill step runs all their prompts
(``prompt`` tokens each) and gives each request its first token; then ``output - 1`` decode steps give one
more token each. Every step is priced by :func:`labsim.serving.step_time` (one roofline bound per step).

- time to first token (TTFT) = the prefill step's time;
- time per output token (TPOT) = the mean time of the decode steps (the context grows by one a step);
- throughput = ``batch`` / TPOT, the decode tokens per second of one chip.

Two knees, both closed forms of one decode step with ``kv_len`` cached tokens per sequence, weights W
bytes, KV cache K bytes per sequence, F FLOPs per sequence, matrix peak R and HBM bandwidth BW:

- :func:`kv_knee`: the batch W / K at which the sequences' caches weigh as much as the weights. Below it
  TPOT ≈ W / BW stays nearly flat (the weights are read once per step, whatever the batch); above it TPOT
  grows with the batch.
- :func:`compute_knee`: the smallest batch whose step is compute-bound, B·F / R ≥ (W + B·K) / BW, that is
  B ≥ W / (F·BW/R − K); ``None`` when F / K is at or below the ridge R / BW (the cache keeps decode
  memory-bound at any batch).

labsim's simplifications: the requests start together, no request joins or leaves, and a mixture of
experts is priced as a dense model of its active parameters reading all its weights (``kv_knee`` and
``compute_knee`` use all weight bytes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware import ExecUnit
from ..machines.roofline import Bound
from ..core.dtypes import itemsize
from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError, count
from ..support.records import Record
from . import _checks, llm
from .stepcost import step_time


@dataclass(frozen=True)
class BatchPoint(Record):
    """One batch size on the latency-throughput curve (:func:`batch_tradeoff`). Times in seconds."""

    batch: int
    ttft_s: float
    tpot_s: float
    tok_s: float
    bound: str  # of the last decode step: "memory" or "compute"

    @property
    def tpot_ms(self) -> float:
        return self.tpot_s * 1e3

    @property
    def ttft_ms(self) -> float:
        return self.ttft_s * 1e3


def _setup(fn, cfg, chip, dtype):
    cfg, chip = _checks.model(fn, cfg), _checks.chip(fn, chip)
    return cfg, chip, _checks.matrix_dtype(fn, chip, dtype)


def _per_sequence(cfg, kv_len: int, dtype: str) -> tuple[float, float]:
    """(FLOPs, KV-cache bytes) one sequence adds to a decode step after ``kv_len`` cached tokens."""
    flops = 2 * llm.matmul_params(cfg) + llm.attention_flops_per_token(cfg, kv_len + 1)
    return float(flops), float(llm.kv_cache_bytes_per_token(cfg, dtype) * llm.kv_positions(cfg, kv_len + 1))


def max_batch(cfg, chip, context: int, *, dtype="bfloat16") -> int:
    """The largest batch of sequences of ``context`` tokens whose KV caches fit in one chip's HBM beside the
    weights (0 if the weights alone do not fit)."""
    cfg, chip, dtype = _setup("max_batch", cfg, chip, dtype)
    context = count("max_batch", "context", context, minimum=1)
    free = chip.hbm_capacity - llm.weight_bytes(cfg, dtype)
    per = llm.kv_cache_bytes_per_token(cfg, dtype) * llm.kv_positions(cfg, context)
    return max(0, int(free // per))


def kv_knee(cfg, kv_len: int, *, dtype="bfloat16") -> float:
    """The batch W / K at which the KV caches read by a decode step weigh as much as the weights
    (``kv_len`` cached tokens per sequence): TPOT is about twice its batch-1 floor there."""
    cfg = _checks.model("kv_knee", cfg)
    kv_len = count("kv_knee", "kv_len", kv_len, minimum=0)
    try:
        itemsize(dtype)
    except LabsimError as e:  # an unknown dtype: say which function and argument
        raise ArgumentError(f"kv_knee: dtype: {e}") from None
    return llm.weight_bytes(cfg, dtype) / _per_sequence(cfg, kv_len, dtype)[1]


def compute_knee(cfg, chip, kv_len: int, *, dtype="bfloat16") -> int | None:
    """The smallest batch whose decode step (``kv_len`` cached tokens per sequence) is compute-bound in
    labsim's roofline, B ≥ W / (F·BW/R − K); ``None`` when no batch is (F / K at or below the ridge)."""
    cfg, chip, dtype = _setup("compute_knee", cfg, chip, dtype)
    kv_len = count("compute_knee", "kv_len", kv_len, minimum=0)
    f, k = _per_sequence(cfg, kv_len, dtype)
    peak, bw = chip.peak_flops(dtype, ExecUnit.MATRIX), chip.hbm_bandwidth
    room = f * bw / peak - k  # bytes of weights each extra sequence's FLOPs can hide
    if room <= 0:
        return None
    b = max(1, math.ceil(llm.weight_bytes(cfg, dtype) / room))
    # the closed form in floats may land one off the roofline's own verdict: settle it on step_time
    while b > 1 and step_time(cfg, chip, batch=b - 1, kv_len=kv_len, dtype=dtype, check=False).bound is Bound.COMPUTE:
        b -= 1
    while step_time(cfg, chip, batch=b, kv_len=kv_len, dtype=dtype, check=False).bound is not Bound.COMPUTE:
        b += 1
    return b


def batch_tradeoff(cfg, chip, batches, *, prompt: int, output: int, dtype="bfloat16",
                   check: bool = True) -> list[BatchPoint]:
    """TTFT, TPOT and throughput for each batch size in ``batches`` (see the module's doc).

    ``output`` ≥ 2 tokens per request (the first comes from the prefill). Refused (labsim errors), unless
    ``check=False``: a batch whose weights and KV caches at the last step do not fit in the chip's HBM
    (:class:`~labsim.support.errors.OutOfMemoryError`) and a context beyond the model's ``max_seq``.
    """
    fn = "batch_tradeoff"
    cfg, chip, dtype = _setup(fn, cfg, chip, dtype)
    if isinstance(batches, (str, bytes)) or not hasattr(batches, "__iter__"):
        raise ArgumentTypeError(f"{fn}: batches must be a list of batch sizes, got {batches!r}")
    batches = [count(fn, f"batches[{i}]", b, minimum=1) for i, b in enumerate(batches)]
    if not batches:
        raise ArgumentError(f"{fn}: batches is empty; give at least one batch size, e.g. [1, 8, 64]")
    prompt = count(fn, "prompt", prompt, minimum=1)
    output = count(fn, "output", output, minimum=2)
    if not isinstance(check, bool):
        raise ArgumentTypeError(f"{fn}: check must be True or False, got {check!r}")
    last = prompt + output - 1  # positions per sequence at the last decode step, the largest
    if check:
        _checks.context(fn, cfg, last, f"prompt + output - 1 = {last:,}", hint=" (check=False prices it anyway)")
    kv_seq = llm.kv_cache_bytes_per_token(cfg, dtype) * llm.kv_positions(cfg, last)
    out = []
    for b in batches:
        if check:
            _checks.memory(fn, cfg, chip, llm.weight_bytes(cfg, dtype), b * kv_seq,
                           hint=" (check=False prices it anyway)")
        ttft = step_time(cfg, chip, batch=b, new_tokens=prompt, dtype=dtype, check=False).time
        steps = [step_time(cfg, chip, batch=b, kv_len=prompt + j - 1, dtype=dtype, check=False)
                 for j in range(1, output)]
        tpot = sum(s.time for s in steps) / len(steps)
        out.append(BatchPoint(batch=b, ttft_s=ttft, tpot_s=tpot, tok_s=b / tpot, bound=steps[-1].bound.value))
    return out


def best_batch(points, tpot_slo_s: float) -> BatchPoint | None:
    """The point of highest throughput whose TPOT meets ``tpot_slo_s`` seconds (``None`` if none does)."""
    if isinstance(points, (str, bytes)) or not hasattr(points, "__iter__"):
        raise ArgumentTypeError(f"best_batch: points must be a list of BatchPoint (from batch_tradeoff), got {points!r}")
    points = list(points)
    if not points or not all(isinstance(p, BatchPoint) for p in points):
        raise ArgumentError(f"best_batch: points must be a non-empty list of BatchPoint (from batch_tradeoff), "
                            f"got {points!r}")
    slo = float(tpot_slo_s) if isinstance(tpot_slo_s, (int, float)) and not isinstance(tpot_slo_s, bool) else None
    if slo is None or not math.isfinite(slo) or slo <= 0:
        raise ArgumentError(f"best_batch: tpot_slo_s must be a positive number of seconds, got {tpot_slo_s!r}")
    ok = [p for p in points if p.tpot_s <= slo]
    return max(ok, key=lambda p: p.tok_s) if ok else None


__all__ = ["BatchPoint", "batch_tradeoff", "best_batch", "compute_knee", "kv_knee", "max_batch"]
