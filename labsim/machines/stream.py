"""The host timeline of one stream, computed once: on ``ls.host.Machine``.

:func:`stream_time` plays kernels of given durations on one stream of the host machine and returns when
each was issued, started and ended. ``ls.estimate``'s :attr:`ProgramCost.time
<labsim.machines.program_cost.ProgramCost.time>` reads it, and ``ls.simulate`` runs the same machine
with copies added, so the two agree when the data is already on the device.
"""
from __future__ import annotations

from ..hardware import Chip
from ..support.errors import ArgumentError
from .host import Machine


def stream_time(kernel_times, *, launch_overhead: float, host_api_time: float, call_overhead: float = 0.0,
                synchronous: bool = False, ready=None,
                chip: Chip | str = "H100 SXM") -> list[tuple[float, float, float]]:
    """Play kernels of the given durations on one stream of ``ls.host.Machine``: ``(issue time, start,
    end)`` of each, where the issue time is when the host's launch call returns.

    The host spends ``host_api_time + call_overhead`` issuing each launch; a kernel starts
    ``launch_overhead`` after its launch was issued, after the previous kernel ends, and after its
    inputs are ready (``ready[i]``), whichever is latest. ``synchronous`` (a CPU: the host thread runs
    the kernel itself) makes the host wait for each kernel before issuing the next. This is labsim's
    one host timeline: ``ProgramCost.time`` (``ls.estimate``) reads it, and ``simulate`` runs the same
    machine. ``chip`` only names the machine: every time comes from the arguments.
    """
    times = list(kernel_times)
    if ready is not None and len(ready) != len(times):
        raise ArgumentError(f"stream_time: ready has {len(ready)} entries for {len(times)} kernels; it takes one "
                            "ready time per kernel (or None)")
    issue = host_api_time + call_overhead
    m = Machine(chip, launch_time=issue, launch_latency=issue + launch_overhead,
                op_time=0.0, call_time=0.0, api_time=host_api_time, queue_depth=1 << 40, command_buffers=False,
                synchronous=bool(synchronous))
    out = []
    for i, d in enumerate(times):
        deps = (_Ready(ready[i]),) if ready is not None else ()
        # the machine's own launch step (what Machine.launch does after checking its arguments): the
        # queue never fills, so the host's launch call starts now and returns ``issue`` later
        t_issued = m.now + issue
        end = m._kernel(f"k{i}", d, "", None, None, deps, 0, issue, "launch")
        out.append((t_issued, end - d, end))
    return out


class _Ready:
    """An input that is ready at a given time (all ``Machine._kernel`` reads of an input)."""

    __slots__ = ("ready",)

    def __init__(self, ready: float) -> None:
        self.ready = ready

__all__ = ["stream_time"]
