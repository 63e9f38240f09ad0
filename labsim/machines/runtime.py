"""The host ⇄ device runtime: copies, launches and synchronisation on one timeline.

Introduced in "The journey of one matrix product" (steps 5-10); the host/device chapter deepens it.
The GPU is a co-processor. The host thread *enqueues* work and returns at once (asynchronous dispatch):
each input is copied host → device over the host link by a copy engine (DMA: the CPU only starts the
copy), each kernel launch enters the stream's command queue and starts ``chip.launch_overhead`` seconds
after it was enqueued at the earliest, kernels on one stream run one after another, and the result is
copied back only when the host asks for its value (``block_until_ready`` / printing it).

Model assumptions: one stream, one copy engine per direction, copies at the host link's bandwidth plus
its latency, kernels at their roofline time (``labsim.machines.roofline``), a fixed host-side cost per API call.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler.program import Program
from ..hardware import Chip, get
from .events import Event, Trace
from .roofline import OutOfMemoryError, ProgramCost, estimate

HOST, H2D, STREAM, D2H = "host thread", "copy engine H→D", "stream (kernels)", "copy engine D→H"


@dataclass(frozen=True)
class RunResult:
    trace: Trace
    cost: ProgramCost
    time: float  # wall time from the first API call until the host holds the result

    @property
    def kernel_time(self) -> float:
        return sum(e.duration for e in self.trace.of_kind("kernel"))

    @property
    def copy_time(self) -> float:
        return sum(e.duration for e in self.trace.of_kind("copy"))


def simulate(prog: Program, chip: Chip | str, *, copy_inputs: bool = True, copy_back: bool = True,
             host_api_time: float = 1e-6) -> RunResult:
    """Simulate one call of ``prog`` on ``chip`` driven by a host thread; return its trace.

    ``host_api_time`` is the host's cost of one runtime call (enqueue a copy or a launch), a model
    parameter rather than a datasheet number.
    """
    chip = get(chip)
    cost = estimate(prog, chip)
    if cost.oom is not None:
        raise OutOfMemoryError(cost.oom)
    ev: list[Event] = []
    t_host = 0.0
    ready: dict[int, float] = {}  # buffer id -> time its data is on the device
    t_h2d = 0.0
    g = prog.graph
    names = g.names()
    for v in g.inputs:
        buf = prog.buffer(v)
        if copy_inputs:
            ev.append(Event(HOST, f"enqueue copy {names[id(v)]}", t_host, t_host + host_api_time, "api"))
            t_host += host_api_time
            start = max(t_host, t_h2d)
            t_h2d = start + chip.host_link.transfer_time(v.aval.nbytes)
            ev.append(Event(H2D, f"{names[id(v)]} ({v.aval.nbytes:,} B)", start, t_h2d, "copy",
                            f"{chip.host_link.name}"))
            ready[id(buf)] = t_h2d
        else:
            ready[id(buf)] = 0.0
    for c in prog.constants:
        ready[id(c)] = 0.0  # uploaded with the program, before the call
    t_stream = 0.0
    for k, kc in zip(prog.kernels, cost.kernels):
        ev.append(Event(HOST, f"launch {k.name}", t_host, t_host + host_api_time, "api"))
        t_host += host_api_time
        deps = max((ready.get(id(v), 0.0) for v in k.inputs), default=0.0)
        start = max(t_host + chip.launch_overhead, t_stream, deps)
        end = start + kc.time
        ev.append(Event(STREAM, k.name, start, end, "kernel",
                        f"{kc.flops:,} FLOPs, {kc.bytes:,} B, {kc.bound.value}-bound"))
        t_stream = end
        for o in k.outputs:
            ready[id(o)] = end
    done = t_stream
    t_d2h = 0.0
    for o in g.outputs:
        buf = prog.buffer(o)
        if copy_back:
            ev.append(Event(HOST, "enqueue copy back", t_host, t_host + host_api_time, "api"))
            t_host += host_api_time
            start = max(t_host, ready.get(id(buf), 0.0), t_d2h)
            t_d2h = start + chip.host_link.transfer_time(o.aval.nbytes)
            ev.append(Event(D2H, f"result ({o.aval.nbytes:,} B)", start, t_d2h, "copy", chip.host_link.name))
            done = max(done, t_d2h)
    if done > t_host:
        ev.append(Event(HOST, "wait (block_until_ready)", t_host, done, "wait"))
    units = tuple(u for u in (HOST, H2D, STREAM, D2H) if any(e.unit == u for e in ev))
    trace = Trace(tuple(ev), units)
    return RunResult(trace=trace, cost=cost, time=max(done, t_host))
