"""The roofline time of one serving step of a whole model: labsim's closed form, as a labsim cost.

Part of ``ls.serving`` (introduced in "LLM inference"). A step is priced as one kernel that runs every
matrix product and attention of the model over the step's batch: :func:`batch_step_time` returns a
:class:`StepCost`, a :class:`labsim.KernelCost` (``time``, ``bound`` as an :class:`ls.Bound`,
``intensity``, ``compute_time``, ``memory_time``) with the step's ``tokens`` and ``flops_used``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..hardware import ExecUnit
from ..machines.roofline import Bound, KernelCost  # noqa: F401  (Bound: what StepCost.bound returns)
from ..support.errors import count
from . import _checks, llm


@dataclass(frozen=True)
class StepCost(KernelCost):
    """One serving step as one roofline kernel (a :class:`~labsim.machines.roofline.KernelCost`).

    ``tokens`` is the new tokens the step processes. No latency floor: a whole-model step lasts
    milliseconds, far above any kernel's floor.
    """

    tokens: int = 0

    @property
    def flops_used(self) -> float:
        """The fraction of the matrix peak the step's FLOPs use over its time (1.0 when compute-bound)."""
        return self.compute_time / self.time if self.time else 0.0

    @property
    def ms(self) -> float:
        """The step's time in milliseconds."""
        return self.time * 1e3


def batch_step_time(cfg, chip, seqs, *, dtype="bfloat16", check: bool = True) -> StepCost:
    """Roofline cost of one forward step of the whole model over a batch of sequences, labsim's closed
    form: ``seqs`` is a list of (new_tokens, kv_len), each sequence adding ``new_tokens`` after ``kv_len``
    cached positions (a decode is (1, L); a prompt chunk is (C, already done)).

    FLOPs = 2 · matmul params · all new tokens + QKᵀ and PV of each new token over the positions it sees
    (all ``kv_len + new_tokens``, capped at a sliding window, no causal discount, as
    :func:`labsim.llm.flops_per_token`); a mixture of experts counts its active experts only.
    bytes = the weights once (a mixture of experts: the experts the step's tokens are expected to use,
    :func:`labsim.llm.weight_bytes_read`) + each sequence's KV cache (capped at a sliding window) read
    once and its new K, V written.
    Time = max(FLOPs / matrix peak, bytes / HBM bandwidth) (:attr:`KernelCost.time`): one bound for the
    whole step, as if every kernel were at the same limit (an optimistic simplification).

    Refused (labsim errors), unless ``check=False``: a context (``kv_len + new_tokens``) beyond the
    model's ``max_seq``, and a step whose weights and KV caches do not fit in one chip's HBM
    (:class:`~labsim.support.errors.OutOfMemoryError`, with the GiB needed and the chips it would take).
    ``check=False`` prices the step anyway, a what-if: as if the model took any context and the chip's
    memory were unbounded.
    """
    seqs = _checks.pairs("batch_step_time", "seqs", seqs)
    return _step(cfg, chip, Counter(seqs), dtype, check, "batch_step_time")


def _step(cfg, chip, counts, dtype, check, fn) -> StepCost:
    """The step of ``counts[(new_tokens, kv_len)]`` equal sequences of each kind (checked pairs)."""
    cfg, chip = _checks.model(fn, cfg), _checks.chip(fn, chip)
    dtype = _checks.matrix_dtype(fn, chip, dtype)
    flops = nbytes = tokens = kv_held = 0
    kvb, mm = llm.kv_cache_bytes_per_token(cfg, dtype), llm.matmul_params(cfg)
    for (t, L), n in counts.items():  # equal sequences counted once, times their number
        if check:
            _checks.context(fn, cfg, L + t, f"kv_len + new_tokens = {L:,} + {t:,}", hint=" (check=False prices it anyway)")
        tokens += n * t
        flops += n * (2 * mm * t + llm.attention_flops_per_token(cfg, L + t) * t)
        nbytes += n * kvb * llm.kv_positions(cfg, L + t)
        kv_held += n * kvb * llm.kv_positions(cfg, L + t)
    nbytes += llm.weight_bytes_read(cfg, tokens, dtype)
    if check:
        _checks.memory(fn, cfg, chip, llm.weight_bytes(cfg, dtype), kv_held, hint=" (check=False prices the step anyway)")
    peak, bw = chip.peak_flops(dtype, ExecUnit.MATRIX), chip.hbm_bandwidth
    name = f"{cfg.name} step ({tokens:,} token{'' if tokens == 1 else 's'})"
    return StepCost(kernel=name, unit=ExecUnit.MATRIX, dtype=dtype, flops=flops,
                    transcendentals=0, bytes=nbytes, peak_flops=peak, bandwidth=bw, compute_time=flops / peak,
                    memory_time=nbytes / bw, tokens=tokens)


def step_time(cfg, chip, *, batch: int, new_tokens: int = 1, kv_len: int = 0, dtype="bfloat16",
              check: bool = True) -> StepCost:
    """:func:`batch_step_time` for ``batch`` equal sequences of ``new_tokens`` after ``kv_len`` cached ones
    (the same checks, unless ``check=False``: context within ``max_seq``, weights and KV caches within HBM)."""
    batch = count("step_time", "batch", batch, minimum=1)
    pair = (count("step_time", "new_tokens", new_tokens, minimum=1), count("step_time", "kv_len", kv_len, minimum=0))
    return _step(cfg, chip, {pair: batch}, dtype, check, "step_time")


__all__ = ["StepCost", "batch_step_time", "step_time"]
