"""Static vs continuous batching of a request stream, timed with labsim's serving step.

Introduced in "LLM inference". Two schedulers serve the same seeded stream of requests, one model step
at a time, each step timed by :func:`labsim.serving.batch_step_time` (or by any ``cost(seqs)`` given):

- **static** (request-level) batching: when the engine is idle, take up to ``max_batch`` waiting
  requests, prefill them together, then decode until the longest is done. Requests that finish early
  stop computing but keep their slot, nobody joins, and every request returns when the batch ends
  (as Orca describes serving systems before it, e.g. FasterTransformer).
- **continuous** (iteration-level) batching, Orca (Yu et al. OSDI 2022) and vLLM: after every step the
  scheduler returns finished requests and admits waiting ones into the free slots; a new request's
  prefill runs in the same step as the others' decodes (Orca's selective batching).

In both, a prefill step yields a request's first output token, and each later step one more.
Labsim's simplifications: no memory limit (see the KV allocators for that), a prompt is prefilled in
one step, and a step's time is the roofline bound of its whole batch.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from ..support.choice import Choice
from ..support.errors import ArgumentError, ArgumentTypeError, count, number
from ..support.records import Record


class Policy(Choice):
    """How :func:`simulate_batching` forms batches (a member or its string)."""

    STATIC = "static"          # request-level: a batch runs until its longest request is done
    CONTINUOUS = "continuous"  # iteration-level: admit and retire requests after every step (Orca)


POLICIES = tuple(p.value for p in Policy)


@dataclass(frozen=True)
class TimedRequest:
    id: int
    arrival: float  # seconds
    prompt: int  # prompt tokens
    output: int  # tokens to generate, >= 1


def poisson_requests(n: int, rate: float, *, seed: int = 0, prompt=(64, 512), output=(16, 256)) -> list[TimedRequest]:
    """``n`` requests arriving as a Poisson stream of ``rate`` per second, with uniform random prompt and
    output lengths (inclusive ranges); seeded."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ArgumentError(f"poisson_requests: n must be a whole number >= 1, got {n!r}")
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not (math.isfinite(rate) and rate > 0):
        raise ArgumentError(f"poisson_requests: rate must be > 0 requests per second (finite), got {rate!r}")
    for name, r in (("prompt", prompt), ("output", output)):
        if isinstance(r, (str, bytes)) or not hasattr(r, "__len__") or len(r) != 2:
            raise ArgumentError(f"poisson_requests: {name} must be a range (lo, hi) with 1 <= lo <= hi, got {r!r}")
        count("poisson_requests", f"{name}[0]", r[0], minimum=1), count("poisson_requests", f"{name}[1]", r[1], minimum=1)
        if not 1 <= r[0] <= r[1]:
            raise ArgumentError(f"poisson_requests: {name} must be a range (lo, hi) with 1 <= lo <= hi, got {r!r}")
    rng = np.random.default_rng(count("poisson_requests", "seed", seed, minimum=0))
    t = np.cumsum(rng.exponential(1.0 / rate, n))
    p = rng.integers(prompt[0], prompt[1] + 1, n)
    o = rng.integers(output[0], output[1] + 1, n)
    return [TimedRequest(i, float(t[i]), int(p[i]), int(o[i])) for i in range(n)]


def step_cost(cfg, chip, dtype="bfloat16", check: bool = True):
    """A fast ``cost(seqs)`` equal to ``serving.batch_step_time(cfg, chip, seqs).time``: the same
    closed form with the per-model constants computed once (the simulation calls it every step).
    Refused as there, unless ``check=False``: weights that do not fit in the chip's HBM, and a sequence
    whose context is beyond the model's ``max_seq``. The KV caches of a batch are not checked (the batching
    simulation has no memory limit; see the KV allocators)."""
    from . import llm

    from . import _checks

    cfg, chip = _checks.model("step_cost", cfg), _checks.chip("step_cost", chip)
    if not isinstance(dtype, str) or dtype not in chip.matrix_flops:
        raise ArgumentError(f"step_cost: {chip.name} has no matrix rate for {dtype}; it has {list(chip.matrix_flops)}")
    if check:
        _checks.memory("step_cost", cfg, chip, llm.weight_bytes(cfg, dtype), 0.0,
                       hint=" (check=False prices the steps anyway)")
    mm2 = 2 * llm.matmul_params(cfg)
    att = 4 * cfg.n_layers * cfg.n_heads * cfg.head_dim
    kvb = llm.kv_cache_bytes_per_token(cfg, dtype)
    win = cfg.sliding_window or np.inf
    peak, bw = chip.matrix_flops[dtype], chip.hbm_bandwidth
    wb = {}

    def cost(seqs) -> float:
        a = np.asarray(_checks.pairs("step_cost", "seqs", seqs), dtype=np.float64).reshape(-1, 2)
        if check and (a.sum(axis=1) > cfg.max_seq).any():
            _checks.context("step_cost", cfg, int(a.sum(axis=1).max()), "the longest sequence's kv_len + new_tokens")
        t, seen = a[:, 0], np.minimum(a[:, 0] + a[:, 1], win)
        tokens = int(t.sum())
        if tokens not in wb:
            wb[tokens] = llm.weight_bytes_read(cfg, tokens, dtype)
        flops = mm2 * tokens + att * float((seen * t).sum())
        nbytes = kvb * float(seen.sum()) + wb[tokens]
        return max(flops / peak, nbytes / bw)

    return cost


@dataclass(frozen=True)
class BatchingSummary(Record):
    """One scheduler's run in numbers (:meth:`BatchingResult.summary`)."""

    policy: str
    requests: int
    tokens: int  # output tokens generated
    makespan_s: float  # first arrival to last finish
    throughput_tok_s: float
    mean_latency_s: float
    p95_latency_s: float
    mean_ttft_s: float  # time to first token
    steps: int
    mean_batch: float  # requests per step, weighted by step time


@dataclass
class BatchingResult:
    """One scheduler's run: per request (in id order) and per step."""

    policy: Policy
    arrival: np.ndarray  # s
    first_token: np.ndarray  # s, when its first output token exists
    finish: np.ndarray  # s, when the request is returned to its user
    output: np.ndarray  # tokens generated
    step_start: np.ndarray = field(repr=False)  # s
    step_time: np.ndarray = field(repr=False)  # s
    step_batch: np.ndarray = field(repr=False)  # requests computing in the step

    @property
    def latency(self) -> np.ndarray:
        return self.finish - self.arrival

    def summary(self) -> BatchingSummary:
        span = float(self.finish.max() - self.arrival.min())
        busy = float(self.step_time.sum())
        return BatchingSummary(
            str(self.policy), requests=int(self.arrival.size), tokens=int(self.output.sum()), makespan_s=span,
            throughput_tok_s=float(self.output.sum()) / span, mean_latency_s=float(self.latency.mean()),
            p95_latency_s=float(np.percentile(self.latency, 95)),
            mean_ttft_s=float((self.first_token - self.arrival).mean()), steps=int(self.step_time.size),
            mean_batch=float((self.step_batch * self.step_time).sum() / busy) if busy else 0.0)


#: the most steps :func:`simulate_batching` runs by default (a step per output token at worst)
MAX_STEPS = 1_000_000


def simulate_batching(requests, cost, *, policy: Policy | str = Policy.CONTINUOUS,
                      max_batch: int = 32, max_steps: int = MAX_STEPS) -> BatchingResult:
    """Serve ``requests`` (:class:`TimedRequest`) with ``policy`` ("static" or "continuous") and at most
    ``max_batch`` requests in a batch; ``cost(seqs)`` gives a step's seconds for a list of
    (new tokens, cached tokens) pairs (:func:`step_cost`, or any function, e.g. ``lambda s: 1.0``).
    Each step generates a token for at least one request, so a run takes at most the requests' total
    output tokens in steps; a stream that could need more than ``max_steps`` is refused up front."""
    policy = Policy.of(policy, "policy", ArgumentError, where="simulate_batching")
    max_steps = count("simulate_batching", "max_steps", max_steps, minimum=1)
    if isinstance(max_batch, bool) or not isinstance(max_batch, numbers.Integral) or max_batch < 1:
        raise ArgumentError(f"simulate_batching: max_batch must be a whole number >= 1, got {max_batch!r}")
    if not callable(cost):
        raise ArgumentError(f"simulate_batching: cost must be a function of a list of (new, cached) pairs, got {cost!r}")
    if isinstance(requests, (str, bytes)) or not hasattr(requests, "__iter__"):
        raise ArgumentTypeError(f"simulate_batching: requests must be a list of TimedRequest, got "
                                f"{type(requests).__name__}")
    requests = list(requests)
    for i, r in enumerate(requests):
        if not isinstance(r, TimedRequest):
            raise ArgumentTypeError(f"simulate_batching: requests[{i}] must be a TimedRequest (see poisson_requests), "
                                    f"got {type(r).__name__} {r!r}")
        number("simulate_batching", f"requests[{i}].arrival", r.arrival, minimum=0.0)
        for field_ in ("prompt", "output"):
            v = getattr(r, field_)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise ArgumentError(f"simulate_batching: requests[{i}].{field_} must be a whole number, got {v!r}")
    reqs = sorted(requests, key=lambda r: (r.arrival, r.id))
    if not reqs:
        raise ArgumentError("simulate_batching: no requests")
    if any(r.output < 1 or r.prompt < 1 for r in reqs):
        raise ArgumentError("simulate_batching: every request needs prompt >= 1 and output >= 1 tokens")
    if len({r.id for r in reqs}) != len(reqs):
        raise ArgumentError("simulate_batching: two requests share an id; ids must be distinct")
    total_out = sum(int(r.output) for r in reqs)
    if total_out > max_steps:
        raise ArgumentError(f"simulate_batching: the requests ask for {total_out:,} output tokens, which may take "
                            f"as many steps; max_steps is {max_steps:,} (give a larger max_steps to run it)")
    n = len(reqs)
    idx = {r.id: i for i, r in enumerate(reqs)}
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    starts, times, sizes = [], [], []
    now, nxt = 0.0, 0
    waiting: list = []
    running: dict[int, int] = {}  # id -> tokens generated so far
    static_batch: list = []  # static: the batch's members, returned together

    def arrive(t):
        nonlocal nxt
        while nxt < n and reqs[nxt].arrival <= t:
            waiting.append(reqs[nxt])
            nxt += 1

    by_id = {r.id: r for r in reqs}
    while nxt < n or waiting or running:
        arrive(now)
        if not running and not waiting:
            now = max(now, reqs[nxt].arrival)
            continue
        admit = []
        if policy is Policy.CONTINUOUS or not running:
            room = max_batch - len(running)
            admit, waiting[:] = waiting[:room], waiting[room:]
            if policy is Policy.STATIC:
                static_batch = list(admit)
        seqs = [(1, by_id[i].prompt + g) for i, g in running.items()] + [(r.prompt, 0) for r in admit]
        dt = cost(seqs)
        if isinstance(dt, bool) or not isinstance(dt, (numbers.Real, np.floating, np.integer)) or \
                not (math.isfinite(float(dt)) and dt >= 0):
            raise ArgumentError(f"simulate_batching: cost returned {dt!r} for a step; it must be a finite time >= 0")
        dt = float(dt)
        starts.append(now)
        times.append(dt)
        sizes.append(len(seqs))
        now += dt
        for i in running:
            running[i] += 1
        for r in admit:
            running[r.id] = 1
            first[idx[r.id]] = now
        for i in [i for i, g in running.items() if g >= by_id[i].output]:
            del running[i]
            if policy is Policy.CONTINUOUS:
                finish[idx[i]] = now
        if policy is Policy.STATIC and not running:
            for r in static_batch:
                finish[idx[r.id]] = now
    order = np.argsort([r.id for r in reqs])
    pick = lambda a: np.asarray(a)[order]
    return BatchingResult(policy, pick([r.arrival for r in reqs]), pick(first), pick(finish),
                          pick([r.output for r in reqs]), np.array(starts), np.array(times), np.array(sizes))


__all__ = ["Policy", "POLICIES", "BatchingSummary", "TimedRequest", "poisson_requests", "step_cost", "BatchingResult",
           "simulate_batching"]
