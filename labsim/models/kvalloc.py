"""KV-cache allocation: contiguous max-length reservations vs paged blocks (vLLM's PagedAttention), a seeded
request stream to serve, and what each allocator wastes. Part of ``ls.serving`` (introduced in "LLM
inference"); labsim's simplification of what serving systems do, one decode token per request per step.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..support.choice import Choice
from ..support.errors import ArgumentError, ArgumentTypeError, count, nonnegative
from ..support.records import Record
from ._checks import pos as _pos, seed as _seed, span as _range


@dataclass(frozen=True)
class Request:
    id: int
    arrival: int  # step at which it arrives
    prompt: int  # prompt tokens
    output: int  # tokens it will generate (unknown to the allocator)


def random_requests(n: int, *, seed: int = 0, prompt=(16, 256), output=(16, 512), rate: float = 1.0) -> list[Request]:
    """``n`` requests with uniform random prompt and output lengths (inclusive ranges) and Poisson
    arrivals, ``rate`` per step on average; seeded, so the same call gives the same stream."""
    n = _pos(n, "n", "random_requests")
    rate = nonnegative("random_requests", "rate", rate)
    prompt, output = _range("random_requests", "prompt", prompt, 1), _range("random_requests", "output", output, 1)
    rng = np.random.default_rng(_seed("random_requests", seed))
    gaps = rng.exponential(1.0 / rate, n) if rate > 0 else np.zeros(n)
    t = np.floor(np.cumsum(gaps)).astype(int)
    p = rng.integers(prompt[0], prompt[1] + 1, n)
    o = rng.integers(output[0], output[1] + 1, n)
    return [Request(i, int(t[i]), int(p[i]), int(o[i])) for i in range(n)]


class Scheme(Choice):
    """How :func:`simulate_kv_allocation` lays out the KV cache (a member or its string)."""

    PAGED = "paged"            # fixed-size blocks anywhere in memory (vLLM's PagedAttention)
    CONTIGUOUS = "contiguous"  # one contiguous range per request, reserved for its longest output


@dataclass(frozen=True)
class AllocationSummary(Record):
    """Time averages of one allocator run (:meth:`AllocationResult.summary`), as fractions of capacity."""

    scheme: str
    used: float  # KV stored
    reserved: float  # held by requests
    internal: float  # reserved and empty
    external: float  # free, in holes the waiting request could not use
    running: float  # requests holding memory (mean over busy steps)
    finished: int
    steps: int
    preempted: int
    unfinished: int = 0  # requests not done when the run stopped
    truncated: bool = False  # True: the run stopped at max_steps with requests unfinished


@dataclass
class AllocationResult:
    """Per-step totals (in token slots) of one allocator run, and a snapshot of memory at one step."""

    scheme: Scheme
    capacity: int  # token slots
    block: int
    steps: int
    used: np.ndarray  # tokens stored, per step
    reserved: np.ndarray  # slots held by requests, per step
    external: np.ndarray  # free slots the waiting request could not use, per step
    running: np.ndarray  # requests holding memory, per step
    finished: int
    preempted: int
    snapshot: np.ndarray = field(repr=False)  # per slot at snapshot_step: 0 free, 1 used, 2 reserved-unused
    snapshot_owner: np.ndarray = field(repr=False)  # per slot: request id, -1 free
    snapshot_step: int = 0
    unfinished: int = 0  # requests still waiting, running or not yet arrived when the run stopped
    truncated: bool = False  # True: stopped at max_steps before every request finished

    @property
    def internal(self) -> np.ndarray:
        return self.reserved - self.used

    def summary(self) -> AllocationSummary:
        """Time averages, as fractions of capacity, over the steps when something was running."""
        busy = self.running > 0
        c = self.capacity
        avg = lambda a: float(a[busy].mean()) / c if busy.any() else 0.0
        return AllocationSummary(str(self.scheme), used=avg(self.used), reserved=avg(self.reserved),
                                 internal=avg(self.internal), external=avg(self.external),
                                 running=float(self.running[busy].mean()) if busy.any() else 0.0,
                                 finished=self.finished, steps=self.steps, preempted=self.preempted,
                                 unfinished=self.unfinished, truncated=self.truncated)


def simulate_kv_allocation(requests, capacity: int, *, scheme: Scheme | str = Scheme.PAGED, block: int = 16,
                           max_new: int | None = None, snapshot_step: int | None = None,
                           max_steps: int = 100_000) -> AllocationResult:
    """Serve ``requests`` one decode token per running request per step, with KV memory of ``capacity``
    token slots, and record how the memory is used.

    ``scheme="contiguous"``: at admission a request reserves one contiguous range of prompt + ``max_new``
    slots (the longest it might grow, since its output length is unknown; as systems before vLLM did;
    first fit), held until it ends. ``max_new`` defaults to the longest output in ``requests``.
    ``scheme="paged"``: memory is ``capacity // block`` blocks of ``block`` slots; a request holds
    ceil(tokens / block) blocks, any blocks, taking a new one when its last fills; if none is free the
    most recently admitted request is preempted (its blocks freed, it waits again and redoes its
    prompt), as vLLM's recompute preemption does. Requests are admitted first come, first served.
    External fragmentation is counted at each step where the first waiting request is refused although
    the free slots add up to what it asks: those free slots are external waste.
    The run stops after ``max_steps`` steps; if requests are then unfinished, the result says so
    (``truncated=True``, ``unfinished``, also in :meth:`AllocationResult.summary`).
    """
    fn = "simulate_kv_allocation"
    scheme = Scheme.of(scheme, "scheme", ArgumentError, where=fn)
    capacity, block = _pos(capacity, "capacity", fn), _pos(block, "block", fn)
    max_steps = _pos(max_steps, "max_steps", fn)
    if snapshot_step is not None:
        snapshot_step = count(fn, "snapshot_step", snapshot_step, minimum=0)
    if isinstance(requests, (str, bytes)) or not hasattr(requests, "__iter__"):
        raise ArgumentTypeError(f"{fn}: requests must be a list of Request, got {type(requests).__name__}")
    requests = list(requests)
    for i, r in enumerate(requests):
        if not isinstance(r, Request):
            raise ArgumentTypeError(f"{fn}: requests[{i}] must be a Request (see random_requests), got "
                                    f"{type(r).__name__} {r!r}")
        count(fn, f"requests[{i}].arrival", r.arrival, minimum=0)
        count(fn, f"requests[{i}].prompt", r.prompt, minimum=1)
        count(fn, f"requests[{i}].output", r.output, minimum=1)
    reqs = sorted(requests, key=lambda r: (r.arrival, r.id))
    if not reqs:
        raise ArgumentError("simulate_kv_allocation: no requests")
    longest_out = max(r.output for r in reqs)
    max_new = longest_out if max_new is None else _pos(max_new, "max_new", "simulate_kv_allocation")
    if max_new < longest_out:
        raise ArgumentError(f"simulate_kv_allocation: max_new {max_new} is shorter than a request's output "
                         f"({longest_out} tokens)")
    longest = max(r.prompt + (max_new if scheme is Scheme.CONTIGUOUS else r.output) for r in reqs)
    nblocks = capacity // block
    room = capacity if scheme is Scheme.CONTIGUOUS else nblocks * block
    if longest > room:
        raise ArgumentError(f"simulate_kv_allocation: a request needs {longest} slots but the {scheme} memory "
                         f"holds {room} ({'capacity' if scheme is Scheme.CONTIGUOUS else f'{nblocks} blocks of {block}'})")
    owner = np.full(capacity, -1, dtype=np.int64)  # slot -> request id
    free = list(range(nblocks))  # paged: free block numbers, lowest first
    held: dict[int, list[int]] = {}  # paged: request id -> its blocks
    waiting: list[Request] = []
    pending = list(reqs)
    running: dict[int, dict] = {}  # id -> {"req", "tokens", "order"}
    order = 0
    used, reserved, external, nrun = [], [], [], []
    finished = preempted = 0
    snap = snap_owner = None
    step = 0
    n_res = 0  # contiguous: slots reserved

    def free_ranges():
        f = np.concatenate([[0], (owner < 0).astype(np.int8), [0]])
        edges = np.flatnonzero(np.diff(f))
        return list(zip(edges[::2], edges[1::2] - edges[::2]))  # (start, length)

    def take_block(rid):
        b = free.pop(0)
        held.setdefault(rid, []).append(b)
        owner[b * block:(b + 1) * block] = rid

    while (pending or waiting or running) and step < max_steps:
        while pending and pending[0].arrival <= step:
            waiting.append(pending.pop(0))
        ext = 0
        while waiting:  # admit first come, first served
            r = waiting[0]
            if scheme is Scheme.CONTIGUOUS:
                want = r.prompt + max_new
                fit = next(((s0, n) for s0, n in free_ranges() if n >= want), None)
                if fit is None:
                    free_total = int((owner < 0).sum())
                    ext = free_total if free_total >= want else 0
                    break
                owner[fit[0]:fit[0] + want] = r.id
                n_res += want
            else:
                need = math.ceil((r.prompt + 1) / block)
                if len(free) < need:
                    break
                for _ in range(need):
                    take_block(r.id)
            waiting.pop(0)
            running[r.id] = {"req": r, "tokens": r.prompt, "order": order}
            order += 1
        for rid in sorted(running, key=lambda i: running[i]["order"]):  # one decode step
            if rid not in running:
                continue
            st = running[rid]
            st["tokens"] += 1
            if scheme is Scheme.PAGED:
                while len(held.get(rid, ())) * block < st["tokens"]:
                    if free:
                        take_block(rid)
                        continue
                    victim = max(running, key=lambda i: running[i]["order"])
                    for b in held.pop(victim, []):
                        owner[b * block:(b + 1) * block] = -1
                        free.append(b)
                    free.sort()
                    waiting.insert(0, running.pop(victim)["req"])
                    preempted += 1
                    if victim == rid:
                        break
        st_end = {i: st["req"].prompt + max_new for i, st in running.items()}
        for rid in [i for i, st in running.items() if st["tokens"] >= st["req"].prompt + st["req"].output]:
            if scheme is Scheme.PAGED:
                for b in held.pop(rid, []):
                    owner[b * block:(b + 1) * block] = -1
                    free.append(b)
                free.sort()
            else:
                owner[owner == rid] = -1
                n_res -= st_end[rid]
            del running[rid]
            finished += 1
        used.append(sum(st["tokens"] for st in running.values()))
        reserved.append((nblocks - len(free)) * block if scheme is Scheme.PAGED else n_res)
        external.append(ext)
        nrun.append(len(running))
        if snapshot_step is not None and step == snapshot_step:
            snap_owner = owner.copy()
            snap = np.where(owner < 0, 0, 2)
            for rid, st in running.items():
                slots = (np.concatenate([np.arange(b * block, (b + 1) * block) for b in held[rid]])
                         if scheme is Scheme.PAGED else np.flatnonzero(owner == rid))
                snap[slots[: st["tokens"]]] = 1
        step += 1
    if snap is None:
        snap, snap_owner = np.zeros(capacity, dtype=np.int64), np.full(capacity, -1)
    unfinished = len(reqs) - finished
    return AllocationResult(scheme, capacity, block, step, np.array(used, dtype=np.int64),
                            np.array(reserved, dtype=np.int64), np.array(external, dtype=np.int64),
                            np.array(nrun, dtype=np.int64), finished, preempted, snap, snap_owner,
                            snapshot_step if snapshot_step is not None else -1, unfinished, unfinished > 0)



__all__ = ["Request", "random_requests", "Scheme", "AllocationSummary", "AllocationResult", "simulate_kv_allocation"]
