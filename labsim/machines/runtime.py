"""The host ⇄ device runtime: copies, launches, waiting and reading back on one timeline.

Introduced in "The journey of one matrix product" (steps 5-10). The host/device chapter uses the full
machine, ``labsim.machines.host`` (``ls.host.Machine``: dispatch costs, a bounded queue, streams,
pinned and pageable copies, graphs); ``simulate`` stays the one-call summary with the numbers below.
The GPU is a co-processor. The host thread *enqueues* work and returns at once (asynchronous dispatch):
each input is copied host → device over the host link by a copy engine (DMA: the CPU only starts the
copy), each kernel launch enters the stream's command queue and starts ``chip.launch_overhead`` seconds
after it was enqueued at the earliest, and kernels on one stream run one after another.

At the end the host does two different things, drawn as two different events:

1. ``block_until_ready()`` only *waits* until the device has finished the program (a ``WAIT`` event
   named "block_until_ready"); no byte moves.
2. Reading the value (``np.asarray(out)``, ``jax.device_get``, printing it) copies the result
   device → host: the host enqueues the copy (an ``API`` event named "read back: ..."), a copy engine
   moves the bytes (a ``COPY`` event on the D→H copy engine) and the host waits for them (a ``WAIT``
   event named "read back"). Only then does the host hold the numbers.

Model assumptions: one stream, one copy engine per direction, copies at the host link's bandwidth plus
its latency, kernels at their roofline time (``labsim.machines.roofline``), a fixed host-side cost per
API call. With ``copy_inputs=False, copy_back=False`` the call takes exactly ``estimate(...).time``:
both play launches overlapped with running kernels. On a CPU preset there is no copy and no queue: the
host thread calls each kernel itself (``chip.call_overhead`` per call) and waits for it.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..compiler.program import Program
from ..hardware import Chip, ChipKind, get
from .events import HOST_CHIP, Direction, Event, EventKind, Trace, UnitId, UnitKind
from .roofline import HOST_API_TIME, OutOfMemoryError, ProgramCost, estimate

# the four units of one call: the host thread on the host, and on chip 0 its stream and one copy engine per direction
HOST = UnitId(HOST_CHIP, UnitKind.HOST_THREAD)
H2D = UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.H2D)
STREAM = UnitId(0, UnitKind.STREAM, 0)
D2H = UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.D2H)


@dataclass(frozen=True)
class RunResult:
    trace: Trace
    cost: ProgramCost
    time: float  # wall time from the first API call until the host holds the result
    ready_time: float = 0.0  # when block_until_ready returns: the device has finished, nothing copied back

    @property
    def kernel_time(self) -> float:
        return sum(e.duration for e in self.trace.of_kind(EventKind.KERNEL))

    @property
    def copy_time(self) -> float:
        return sum(e.duration for e in self.trace.of_kind(EventKind.COPY))


def simulate(prog: Program, chip: Chip | str, *, copy_inputs: bool = True, copy_back: bool = True,
             host_api_time: float = HOST_API_TIME) -> RunResult:
    """Simulate one call of ``prog`` on ``chip`` driven by a host thread; return its trace.

    The host enqueues the input copies and the launches, calls ``block_until_ready()`` (a wait: no
    copy), then, if ``copy_back``, reads each result (``np.asarray``), which copies it device → host.
    ``host_api_time`` is the host's cost of one runtime call (enqueue a copy or a launch), a model
    parameter rather than a datasheet number.
    """
    if not isinstance(prog, Program):
        raise TypeError(f"simulate: prog must be a Program, got {type(prog).__name__} {prog!r:.40} "
                        "(compile a traced graph first: prog = ls.compile(graph))")
    if isinstance(host_api_time, bool) or not isinstance(host_api_time, numbers.Real) \
            or not math.isfinite(host_api_time) or host_api_time < 0:
        raise ValueError(f"simulate: host_api_time must be a finite number of seconds >= 0, got {host_api_time!r}")
    chip = get(chip)
    cost = estimate(prog, chip, host_api_time=host_api_time)
    if cost.oom is not None:
        raise OutOfMemoryError(cost.oom)
    cpu = chip.kind is ChipKind.CPU
    ev: list[Event] = []
    t_host = 0.0
    ready: dict[int, float] = {}  # buffer id -> time its data is on the device
    t_h2d = 0.0
    g = prog.graph
    names = g.names()
    for v in g.inputs:
        buf = prog.buffer(v)
        if copy_inputs:
            ev.append(Event(HOST, names[id(v)], t_host, t_host + host_api_time, EventKind.API,
                            "enqueue copy to device", nbytes=v.aval.nbytes))
            t_host += host_api_time
            start = max(t_host, t_h2d)
            t_h2d = start + chip.host_link.transfer_time(v.aval.nbytes)
            ev.append(Event(H2D, names[id(v)], start, t_h2d, EventKind.COPY,
                            f"{v.aval.nbytes:,} B over {chip.host_link.name}", nbytes=v.aval.nbytes))
            ready[id(buf)] = t_h2d
        else:
            ready[id(buf)] = 0.0
    for c in prog.constants:
        ready[id(c)] = 0.0  # uploaded with the program, before the call
    # the launches: the recurrence of roofline.stream_time (estimate(...).time), after the input copies
    t_stream = 0.0
    issue = host_api_time + cost.call_overhead
    for k, kc in zip(prog.kernels, cost.kernels):
        deps = max((ready.get(id(v), 0.0) for v in k.inputs), default=0.0)
        ev.append(Event(HOST, k.name, t_host, t_host + issue, EventKind.LAUNCH,
                        "call (dispatch and thread pool)" if cpu else "launch"))
        t_host += issue
        start = max(t_host + cost.launch_overhead, t_stream, deps)
        end = start + kc.time
        ev.append(Event(STREAM, k.name, start, end, EventKind.KERNEL,
                        f"{kc.flops:,} FLOPs, {kc.bytes:,} B, {kc.bound.value}-bound",
                        nbytes=kc.bytes, flops=kc.flops))
        t_stream = end
        if cpu:  # the host thread runs the kernel itself
            ev.append(Event(HOST, k.name, t_host, end, EventKind.WAIT, "runs the kernel on the cores"))
            t_host = end
        for o in k.outputs:
            ready[id(o)] = end
    # block_until_ready: the host waits for the device to finish; nothing is copied
    if t_stream > t_host:
        ev.append(Event(HOST, "block_until_ready", t_host, t_stream, EventKind.WAIT,
                        "wait until the device has finished (no copy)"))
    t_host = max(t_host, t_stream)
    ready_time = t_host
    # reading the value (np.asarray, printing): only now are the results copied device -> host
    if copy_back:
        t_d2h = t_host
        for i, o in enumerate(g.outputs):
            buf = prog.buffer(o)
            name = names.get(id(o), f"output {i}")
            ev.append(Event(HOST, f"read back: {name}", t_host, t_host + host_api_time, EventKind.API,
                            "np.asarray: enqueue copy to host", nbytes=o.aval.nbytes))
            t_host += host_api_time
            start = max(t_host, ready.get(id(buf), 0.0), t_d2h)
            t_d2h = start + chip.host_link.transfer_time(o.aval.nbytes)
            ev.append(Event(D2H, name, start, t_d2h, EventKind.COPY,
                            f"read back: {o.aval.nbytes:,} B over {chip.host_link.name}", nbytes=o.aval.nbytes))
        if t_d2h > t_host:
            ev.append(Event(HOST, "read back", t_host, t_d2h, EventKind.WAIT,
                            "wait for the copy to host (np.asarray)"))
        t_host = max(t_host, t_d2h)
    units = tuple(u for u in (HOST, H2D, STREAM, D2H) if any(e.unit == u for e in ev))
    trace = Trace(tuple(ev), units, chip_names=(chip.name,))
    return RunResult(trace=trace, cost=cost, time=t_host, ready_time=ready_time)
