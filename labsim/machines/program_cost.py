"""A program's cost on a chip (``ls.estimate``): the roofline of each kernel (:mod:`labsim.machines.roofline`)
played on one stream of the host machine (:func:`labsim.machines.stream.stream_time` on
``ls.host.Machine``), so labsim computes the host timeline in one place.

It sits above the host machine, which costs the kernels it launches with the roofline: roofline (one
kernel) → host (the timeline) → program cost (the program). See :mod:`labsim.machines.roofline` for the
model and its assumptions.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..compiler.program import Program
from ..hardware import Chip, ChipKind, get
from ..support.errors import OutOfMemoryError, flag, nonnegative
from .roofline import (_PROGRAM_HINT, HOST_API_TIME, Bound, KernelCost, OutOfMemory, _need,  # noqa: F401
                       kernel_cost, memory_check)
from .stream import stream_time


@dataclass(frozen=True)
class ProgramCost:
    chip: Chip
    kernels: tuple[KernelCost, ...]
    launch_overhead: float  # latency from issuing a launch to the kernel's start (per kernel)
    oom: OutOfMemory | None = None
    host_api_time: float = 0.0  # host time to issue one launch
    call_overhead: float = 0.0  # host software per call (CPU presets)
    synchronous: bool = False  # the host waits for each kernel (CPU)

    @property
    def fits(self) -> bool:
        return self.oom is None

    @property
    def kernel_time(self) -> float:
        return sum(k.time for k in self.kernels)

    @cached_property
    def _stream(self) -> tuple[tuple[float, float, float], ...]:
        return tuple(stream_time([k.time for k in self.kernels], launch_overhead=self.launch_overhead,
                                 host_api_time=self.host_api_time, call_overhead=self.call_overhead,
                                 synchronous=self.synchronous, chip=self.chip))

    def _schedule(self) -> tuple[tuple[float, float, float], ...]:
        """``(issue, start, end)`` of each kernel on one stream, as ``ls.host.Machine`` plays them
        (:func:`labsim.machines.stream.stream_time`, computed once per cost)."""
        return self._stream

    @property
    def time(self) -> float:
        """Kernels on one stream, launches overlapped with running kernels (as ``simulate`` plays them).

        The launch latency is exposed once at the start, and again only where kernels are shorter than
        the host takes to issue the next launch. Raises :class:`OutOfMemoryError` (with the report) if
        the program does not fit on the chip.
        """
        if self.oom is not None:
            raise OutOfMemoryError(self.oom)
        sched = self._schedule()
        return max(sched[-1][2], sched[-1][0]) if sched else 0.0

    @property
    def overhead_time(self) -> float:
        """Time not spent in kernels: exposed launch latency, issue gaps and per-call costs."""
        return self.time - self.kernel_time

    @property
    def serial_time(self) -> float:
        """Every kernel pays the whole launch latency and call cost in series (a host that waits for each
        kernel before launching the next): the pessimistic figure, which ``time`` improves on."""
        if self.oom is not None:
            raise OutOfMemoryError(self.oom)
        per_call = self.host_api_time + self.call_overhead + self.launch_overhead
        return self.kernel_time + per_call * len(self.kernels)

    @property
    def flops(self) -> int:
        return sum(k.flops for k in self.kernels)

    @property
    def bytes(self) -> int:
        return sum(k.bytes for k in self.kernels)

    def table(self) -> list[dict]:
        return [{"kernel": k.kernel, "unit": k.unit.value, "dtype": k.dtype, "FLOPs": k.flops, "bytes": k.bytes,
                 "intensity (FLOP/B)": k.intensity, "compute µs": k.compute_time * 1e6,
                 "memory µs": k.memory_time * 1e6, "bound": k.bound.value} for k in self.kernels]


def estimate(prog: Program, chip: Chip | str, *, launch_overhead: bool = True,
             check_memory: bool = True, host_api_time: float = HOST_API_TIME) -> ProgramCost:
    """Roofline cost of every kernel of ``prog`` on ``chip``, and of the program on one stream.

    ``cost.time`` overlaps launches with running kernels, as ``simulate`` does: with the data on the
    device the two agree. ``launch_overhead=False`` drops launch latency, host issue time and per-call
    costs (``cost.time`` is then the kernels' sum). If the program's buffers cannot fit in the chip's
    memory, the result carries an :class:`OutOfMemory` report (``cost.oom``) and asking for
    ``cost.time`` raises.
    """
    _need("estimate", "prog", prog, Program, _PROGRAM_HINT)
    chip = get(chip)
    on = flag("ls.estimate", "launch_overhead", launch_overhead)
    flag("ls.estimate", "check_memory", check_memory)
    host_api_time = nonnegative("ls.estimate", "host_api_time", host_api_time)
    return ProgramCost(chip=chip, kernels=tuple(kernel_cost(k, chip) for k in prog.kernels),
                       launch_overhead=chip.launch_overhead if on else 0.0,
                       oom=memory_check(prog, chip) if check_memory else None,
                       host_api_time=host_api_time if on else 0.0,
                       call_overhead=chip.call_overhead if on else 0.0,
                       synchronous=chip.kind is ChipKind.CPU)


__all__ = ["ProgramCost", "estimate"]
