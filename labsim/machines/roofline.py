"""The roofline cost model: a lower bound on each kernel's time on a chip.

Introduced in "The journey of one matrix product" (step 10) and developed in "Processors and the
roofline". For a kernel with F FLOPs moving B bytes of device memory on a chip with peak rate P (of the
unit that runs it) and memory bandwidth W:

    compute time = F / P,    memory time = B / W,    time >= max(compute time, memory time)

The larger term names the bound (compute-bound or memory-bound). Arithmetic intensity I = F / B; the
kernel is compute-bound when I exceeds the chip's ridge point P / W.

Assumptions (a roofline is a *lower bound*; it leaves these out): perfect overlap of compute and memory
inside a kernel; peak rates reached (no tile quantisation, no occupancy or latency limits, no caches
beyond counting each input once); launch overhead counted separately, per kernel, from the chip preset.
Contractions run on the matrix unit when the chip lists a matrix rate for their dtype, else on the
vector unit; everything else runs on the vector unit at the float32 rate unless the chip lists one for
the dtype. Each transcendental is charged as one vector-unit operation. A chip with no sourced
vector rate (the TPU presets) is charged at its matrix unit's rate instead, marked ``assumed``.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from ..compiler.kernel import Kernel, KernelKind
from ..compiler.program import Program
from ..hardware import Chip, Unit, get


def _need(what: str, arg: str, x, cls: type, hint: str = "") -> None:
    """A clear TypeError when ``x`` is not a ``cls`` (e.g. a Graph where a compiled Program is needed)."""
    if not isinstance(x, cls):
        raise TypeError(f"{what}: {arg} must be a {cls.__name__}, got {type(x).__name__} {x!r:.40}" + hint)


_PROGRAM_HINT = " (compile a traced graph first: prog = ls.compile(graph))"
_KERNEL_HINT = " (a Program holds its kernels in prog.kernels; ls.estimate(prog, chip) costs them all)"


class Bound(enum.Enum):
    COMPUTE = "compute"
    MEMORY = "memory"


def unit_for(kernel: Kernel, chip: Chip) -> tuple[Unit, str]:
    """Which unit runs ``kernel`` on ``chip``, and the dtype whose rate applies.

    A chip whose preset has no sourced vector rate (the TPU presets: Google publishes no VPU figure for
    them) is charged at its fastest matrix rate instead. That keeps the roofline a valid lower bound,
    only a looser one; :attr:`KernelCost.assumed` marks such kernels.
    """
    if kernel.kind is KernelKind.CONTRACTION and kernel.dtype in chip.matrix_flops:
        return Unit.MATRIX, kernel.dtype
    if kernel.dtype in chip.vector_flops:
        return Unit.VECTOR, kernel.dtype
    if "float32" in chip.vector_flops:
        return Unit.VECTOR, "float32"
    for dt in (kernel.dtype, "bfloat16"):
        if dt in chip.matrix_flops:
            return Unit.MATRIX, dt
    return Unit.MATRIX, max(chip.matrix_flops, key=chip.matrix_flops.get)


@dataclass(frozen=True)
class KernelCost:
    kernel: str
    unit: Unit
    dtype: str
    flops: int
    transcendentals: int
    bytes: int
    peak_flops: float
    bandwidth: float
    compute_time: float
    memory_time: float
    assumed: bool = False  # vector work charged at the matrix rate (no sourced vector rate for the chip)

    @property
    def time(self) -> float:
        return max(self.compute_time, self.memory_time)

    @property
    def bound(self) -> Bound:
        return Bound.COMPUTE if self.compute_time >= self.memory_time else Bound.MEMORY

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes if self.bytes else math.inf

    @property
    def achieved_flops(self) -> float:
        """FLOP/s if the kernel took exactly its roofline time."""
        return self.flops / self.time if self.time else 0.0


def kernel_cost(kernel: Kernel, chip: Chip | str) -> KernelCost:
    _need("kernel_cost", "kernel", kernel, Kernel, _KERNEL_HINT)
    chip = get(chip)
    unit, dtype = unit_for(kernel, chip)
    peak = chip.peak_flops(dtype, unit)
    vec = chip.vector_flops.get("float32") or peak
    compute = kernel.flops / peak + kernel.transcendentals / vec
    assumed = kernel.kind is not KernelKind.CONTRACTION and unit is Unit.MATRIX
    return KernelCost(kernel=kernel.name, unit=unit, dtype=dtype, flops=kernel.flops,
                      transcendentals=kernel.transcendentals, bytes=kernel.bytes, peak_flops=peak,
                      bandwidth=chip.hbm_bandwidth, compute_time=compute,
                      memory_time=kernel.bytes / chip.hbm_bandwidth, assumed=assumed)


@dataclass(frozen=True)
class OutOfMemory:
    """The program's buffers do not fit in the chip's memory: which, how many bytes, against what."""

    chip: str
    capacity: int
    needed: int  # peak live bytes under the buffer assignment
    largest: tuple[tuple[str, int], ...]  # the biggest buffers live at the peak, (name, bytes)

    def __str__(self) -> str:
        items = ", ".join(f"{n} ({b / 2**30:.2f} GiB)" for n, b in self.largest)
        return (f"out of memory on {self.chip}: the program needs {self.needed:,} bytes "
                f"({self.needed / 1e9:.2f} GB) at its peak but the chip has {self.capacity:,} bytes "
                f"({self.capacity / 1e9:.2f} GB); largest live buffers: {items}")


class OutOfMemoryError(MemoryError):
    def __init__(self, report: OutOfMemory) -> None:
        super().__init__(str(report))
        self.report = report


def memory_check(prog: Program, chip: Chip | str) -> OutOfMemory | None:
    """None if ``prog``'s peak live memory fits in the chip's HBM, else an :class:`OutOfMemory` report."""
    _need("memory_check", "prog", prog, Program, _PROGRAM_HINT)
    chip = get(chip)
    plan = prog.buffers
    peak_step = max(range(-1, plan.n_steps + 1), key=plan.live_bytes)
    needed = plan.live_bytes(peak_step)
    if needed <= chip.hbm_capacity:
        return None
    live = sorted((b for b in plan.buffers if b.live_at(peak_step)), key=lambda b: -b.size)[:4]
    return OutOfMemory(chip.name, int(chip.hbm_capacity), needed, tuple((b.name, b.size) for b in live))


@dataclass(frozen=True)
class ProgramCost:
    chip: Chip
    kernels: tuple[KernelCost, ...]
    launch_overhead: float  # per kernel
    oom: OutOfMemory | None = None

    @property
    def fits(self) -> bool:
        return self.oom is None

    @property
    def kernel_time(self) -> float:
        return sum(k.time for k in self.kernels)

    @property
    def overhead_time(self) -> float:
        return self.launch_overhead * len(self.kernels)

    @property
    def time(self) -> float:
        """Kernels back to back, each paying the launch overhead (no overlap between launches).

        Raises :class:`OutOfMemoryError` (with the report) if the program does not fit on the chip.
        """
        if self.oom is not None:
            raise OutOfMemoryError(self.oom)
        return self.kernel_time + self.overhead_time

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
             check_memory: bool = True) -> ProgramCost:
    """Roofline cost of every kernel of ``prog`` on ``chip`` (plus launch overhead per kernel).

    If the program's buffers cannot fit in the chip's memory, the result carries an
    :class:`OutOfMemory` report (``cost.oom``) and asking for ``cost.time`` raises.
    """
    _need("estimate", "prog", prog, Program, _PROGRAM_HINT)
    chip = get(chip)
    return ProgramCost(chip=chip, kernels=tuple(kernel_cost(k, chip) for k in prog.kernels),
                       launch_overhead=chip.launch_overhead if launch_overhead else 0.0,
                       oom=memory_check(prog, chip) if check_memory else None)
