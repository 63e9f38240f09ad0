"""The host ⇄ device runtime: copies, launches, waiting and reading back on one timeline.

Introduced in "The journey of one matrix product" (steps 5-10). ``simulate`` is the one-call summary
of the host/device machine of the chapter "Host and device" (``ls.host.Machine``): it *runs on* that
machine, so labsim computes the host timeline in one place.
The GPU is a co-processor. The host thread *enqueues* work and returns at once (asynchronous dispatch):
each input is copied host → device over the host link by a copy engine (DMA: the CPU only starts the
copy), each kernel launch enters the stream's command queue and starts ``chip.launch_overhead`` seconds
after its launch call has returned at the earliest, and kernels on one stream run one after another.

At the end the host does two different things, drawn as two different events:

1. ``block_until_ready()`` only *waits* until the device has finished the program (a ``WAIT`` event
   named "block_until_ready"); no byte moves.
2. Reading the value (``np.asarray(out)``, ``jax.device_get``, printing it) copies the result
   device → host: the host enqueues the copy (an ``API`` event named "read back: ..."), a copy engine
   moves the bytes (a ``COPY`` event on the D→H copy engine) and the host waits for them (a ``WAIT``
   event named "read back"). Only then does the host hold the numbers.

Model assumptions: one stream, one copy engine per direction, copies at the host link's bandwidth plus
its latency, kernels at their roofline time (``labsim.machines.roofline``), a fixed host-side cost per
API call, no CUDA graphs, no Python dispatch cost. With ``copy_inputs=False, copy_back=False`` the call
takes exactly ``estimate(...).time``: both play launches overlapped with running kernels. On a CPU
preset there is no queue: the host thread calls each kernel itself (``chip.call_overhead`` per call)
and waits for it (``Machine(synchronous=True)``).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..compiler.program import Program
from ..hardware import Chip, ChipKind, get
from .events import EventKind, Trace
from .host import D2H, H2D, HOST, STREAM, Machine  # noqa: F401  (the units of a call: one definition)
from .program_cost import ProgramCost, estimate
from ..support.errors import ArgumentError, ArgumentTypeError
from .roofline import HOST_API_TIME, OutOfMemoryError
from .stream import stream_time  # noqa: F401  (runtime.stream_time: the one host timeline of one stream)


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
        raise ArgumentTypeError(f"simulate: prog must be a Program, got {type(prog).__name__} {prog!r:.40} "
                        "(compile a traced graph first: prog = ls.compile(graph))")
    if isinstance(host_api_time, bool) or not isinstance(host_api_time, numbers.Real) \
            or not math.isfinite(host_api_time) or host_api_time < 0:
        raise ArgumentError(f"ls.simulate: host_api_time must be a finite number of seconds >= 0, got {host_api_time!r}")
    chip = get(chip)
    cost = estimate(prog, chip, host_api_time=host_api_time)
    if cost.oom is not None:
        raise OutOfMemoryError(cost.oom)
    # the machine's launch call lasts launch_time; the kernel may start launch_latency after the call
    # *began*; simulate's kernel starts chip.launch_overhead after the call *returned* (as cost.time)
    issue = host_api_time + cost.call_overhead
    m = Machine(chip, launch_time=issue, launch_latency=issue + cost.launch_overhead, op_time=0.0, call_time=0.0,
                api_time=host_api_time, queue_depth=1 << 40,
                command_buffers=False, synchronous=chip.kind is ChipKind.CPU)
    m._costs.update((id(k), (k, kc)) for k, kc in zip(prog.kernels, cost.kernels))  # costed once, by estimate
    g = prog.graph
    names = g.names()
    # copies go on their own stream (1), as JAX's transfers do: a kernel waits for its own inputs only
    args = [m.put(v.aval, name=names[id(v)], stream=1) if copy_inputs else m.resident(v.aval, name=names[id(v)])
            for v in g.inputs]
    outs = m.call(prog, *args, mode="jit")
    outs = outs if isinstance(outs, tuple) else (outs,)
    for i, (o, a) in enumerate(zip(g.outputs, outs)):
        a.name = names.get(id(o), f"output {i}")
    # block_until_ready: the host waits for the device to finish; nothing is copied
    m._wait_until(m.device_time, "block_until_ready", "wait until the device has finished (no copy)")
    ready_time = m.now
    if copy_back:  # reading the values (np.asarray, printing): only now are the results copied device -> host
        m.device_get(*outs, stream=1)
    return RunResult(trace=m.trace, cost=cost, time=m.now, ready_time=ready_time)
