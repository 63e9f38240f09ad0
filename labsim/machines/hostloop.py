"""``ls.host.kernel_loop``: the host chapter's experiment, ``n`` identical kernels in a loop. Split from
:mod:`labsim.machines.host` (which re-exports it) to keep that module short.

Up to :data:`EXPLICIT_KERNELS` kernels every launch is simulated and recorded. A longer loop reaches a
steady state in which each iteration repeats the one before, shifted in time by the same period (the
host's launch time, the kernel's duration, or the synchronised latency plus duration): labsim simulates
launches one by one until three iterations in a row advance the host clock and the device by the same
period, then advances both by that period for every remaining kernel at once (O(1), not O(n)) and
records the rest as one event per unit whose ``detail`` says how many identical iterations it holds
(``Machine.aggregated_kernels`` counts them). A graph capture records the first kernels as nodes and the
rest as one node of their summed durations and gaps, which ends at the same time.
"""
from __future__ import annotations

import math

from ..hardware import Chip
from ..support.errors import ArgumentError, count, nonnegative
from .events import HOST_CHIP, Event, EventKind, UnitId, UnitKind
from .hostchoices import How

HOST = UnitId(HOST_CHIP, UnitKind.HOST_THREAD)  # the host thread (as labsim.machines.host.HOST)
EXPLICIT_KERNELS = 10_000  # kernels simulated and recorded one by one before a steady state may be aggregated
MAX_KERNELS = 10 ** 15     # a loop longer than this is refused (its end time would lose its last digits)


def _steady(hist: list, tol: float = 1e-9) -> float | None:
    """The period if the last three iterations advanced the host and the device by one same period."""
    if len(hist) < 4:
        return None
    d = [(hist[i][0] - hist[i - 1][0], hist[i][1] - hist[i - 1][1]) for i in range(-3, 0)]
    p = d[-1][1]
    if p <= 0:
        return None
    if all(abs(a - p) <= tol * p and abs(b - p) <= tol * p for a, b in d):
        return p
    return None


def kernel_loop(machine_class, n: int, duration: float, *, chip: Chip | str = "H100 SXM", how: How | str = How.ASYNC,
                fused: int = 1, eager: bool = True, **machine_kw):
    """The chapter's experiment: ``n`` kernels of ``duration`` seconds each, dispatched eagerly.

    ``how`` (a :class:`How` or its string): "async" (dispatch all, synchronise once at the end), "sync"
    (synchronise after each, as a timing loop that calls ``block_until_ready`` inside does), or "graph"
    (capture them once, replay as one launch). ``fused`` > 1 fuses every ``fused`` consecutive ops into
    one kernel of ``fused × duration`` (the same work, fewer launches; labsim assumes fusion saves
    nothing but launches). ``eager``: each launch also pays ``op_time`` of Python dispatch (False:
    launches from compiled code). Returns the :class:`~labsim.machines.host.Machine` after the loop.
    Loops longer than :data:`EXPLICIT_KERNELS` are aggregated once they reach a steady state (see the
    module docstring): the end times are the same, the trace holds one event for the repeated part.
    ``machine_class`` is :class:`labsim.machines.host.Machine` (``ls.host.kernel_loop`` passes it).
    """
    Machine = machine_class

    how = How.of(how, "how", ArgumentError, where="kernel_loop")
    n = count("kernel_loop", "n (kernels)", n, minimum=1, maximum=MAX_KERNELS)
    fused = count("kernel_loop", "fused (ops per kernel)", fused, minimum=1)
    duration = nonnegative("kernel_loop", "duration (seconds per kernel)", duration)
    if not isinstance(eager, bool):
        raise ArgumentError(f"kernel_loop: eager must be True or False, got {eager!r}")
    import inspect
    known = [p for p in inspect.signature(Machine.__init__).parameters if p not in ("self", "chip")]
    unknown = sorted(set(machine_kw) - set(known))
    if unknown:
        raise ArgumentError(f"kernel_loop: unknown keyword argument(s) {', '.join(map(repr, unknown))}; it accepts "
                            f"n, duration, chip, how, fused, eager and the Machine's {', '.join(known)}")
    m = Machine(chip, **machine_kw)
    m.aggregated_kernels = 0
    k = -(-n // fused)
    d = duration * fused
    explicit = min(k, EXPLICIT_KERNELS)
    if how is How.GRAPH:
        with m.capture() as graph:
            for i in range(explicit):
                m.launch(f"k{i}", duration=d, eager=eager)
            rest = k - explicit
            if rest:  # the rest as one node: rest kernels, each after a graph gap, end where they would
                m.launch(f"k{explicit}…k{k - 1}", duration=rest * d + (rest - 1) * m.graph_gap, eager=eager)
                m.aggregated_kernels = rest
        m.replay(graph)
        m.synchronize()
        return m
    hist = []
    i = 0
    while i < k:
        m.launch(f"k{i}", duration=d, eager=eager)
        if how is How.SYNC:
            m.synchronize()
        i += 1
        if i >= explicit and i < k:
            hist = (hist + [(m.now, m._device_free)])[-4:]
            p = _steady(hist)
            if p is not None:
                _advance(m, k - i, p, d, i, k, how)
                break
    m.synchronize()
    return m


def _advance(m, rest: int, p: float, d: float, i: int, k: int, how: How) -> None:
    """Advance ``m`` by ``rest`` steady iterations of period ``p`` and record them as one event per unit."""

    span = rest * p
    if not math.isfinite(span):
        raise ArgumentError(f"kernel_loop: {k:,} kernels one every {p:.3g} s do not end at a finite time")
    label = f"k{i}…k{k - 1}"
    note = (f"{rest:,} identical iterations, one every {p * 1e6:.4g} µs (steady state; labsim aggregates them "
            f"into this one event)")
    m._events.append(Event(HOST, label, m.now, m.now + span, EventKind.LAUNCH,
                           note + ("; each one a launch and a synchronise" if how is How.SYNC else "")))
    first = m._device_free + p - d
    m._events.append(Event(m._unit(0), label, first, m._device_free + span, EventKind.KERNEL,
                           f"{rest:,} kernels of {d * 1e6:.4g} µs; " + note))
    m.now += span
    m._device_free += span
    m._stream_end[0] = m._device_free
    m._pending = [t + span for t in m._pending]  # a uniform shift keeps the heap a heap
    m.aggregated_kernels = rest


__all__ = ["EXPLICIT_KERNELS", "MAX_KERNELS"]
