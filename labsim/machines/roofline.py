"""The roofline cost model: a lower bound on each kernel's time on a chip.

Introduced in "The journey of one matrix product" (step 10) and developed in "Processors and the
roofline". For a kernel with F FLOPs (S of them special functions: exp, tanh, rsqrt, ...) moving B bytes
of device memory on a chip with peak rate P (of the unit that runs it), special-function rate Q and
memory bandwidth W:

    compute time = max(F / P, S / Q),    memory time = B / W,
    time = max(compute time, memory time, latency floor)

The largest term names the bound (compute-, memory- or latency-bound). Arithmetic intensity I = F / B;
the kernel is compute-bound when I exceeds the chip's ridge point P / W.

Which rate applies:

* Contractions run on the matrix unit when the chip lists a matrix rate for their dtype, else on the
  vector unit. A float32 contraction follows its ``precision`` (``lnp.dot(..., precision=...)``, as in
  JAX): on an NVIDIA GPU with a TF32 rate (``chip.matrix_flops["tf32"]``) "default" and "high" run on
  the tensor cores in TF32 and "highest" on the fp32 lanes; on a TPU float32 runs as 1, 3 or 6
  bfloat16 passes on the MXU ("default", "high", "highest"). A chip's ``gemm_efficiency`` (below 1
  only for the CPU preset, a labelled assumption) scales the rate of contractions.
* Everything else (elementwise, reductions) runs on the vector unit at the float32 rate unless the
  chip lists one for the dtype. On a TPU that is the VPU: TPU v5e and v5p carry a *derived* VPU rate
  (TensorCores x 8 x 128 x 4 f32 ALUs x clock, about 1/32 of the MXU's bf16 rate; see the presets).
  A chip with no vector rate at all (TPU v4, v6e, TPU7x: no sourced ALU count or clock) is charged at
  its matrix unit's rate instead, a far looser bound, marked ``assumed``.
* Transcendentals go to the special-function units when the chip has a rate for them
  (``chip.special_flops``: H100 about 3.9 T/s against 989 TFLOP/s of bf16 matrix products). Those
  units run beside the FMA lanes, so the compute time is the larger of the two. A chip without an SFU
  rate (B200, TPUs, CPU) charges each transcendental as one more vector operation (labsim's
  simplification: on a TPU, one VPU operation each).
* The latency floor ``chip.min_kernel_time`` (a labsim assumption for the GPUs, 2 us; see the
  presets) stands for block dispatch, a DRAM round trip and the drain at the end: a tiny kernel costs
  microseconds, not nanoseconds.

Assumptions (a roofline is a *lower bound*; it leaves these out): perfect overlap of compute and memory
inside a kernel; peak rates reached (no tile quantisation, no occupancy limits, no caches beyond
counting each input once).

A program's cost (``labsim.machines.program_cost.ProgramCost``, ``ls.estimate``) lives in
``labsim.machines.program_cost``, above the host machine: its time plays the kernels on one stream of
``ls.host.Machine`` (``labsim.machines.runtime.simulate`` with the data on the device gives the same number): the host
issues one launch per ``host_api_time``, each kernel starts ``launch_overhead`` after its launch was
issued or when the previous kernel ends, whichever is later. So the launch *latency* is exposed once
(and again wherever kernels are shorter than the issue rate), not once per kernel. The old figure,
every kernel paying the full launch latency in series (a host that synchronises after each kernel), is
``ProgramCost.serial_time``.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from ..compiler.kernel import Kernel, KernelKind
from ..compiler.program import Program
from ..hardware import Chip, ChipKind, ExecUnit, get
from ..hardware.chip import TF32
from ..support.errors import ArgumentError, ArgumentTypeError, OutOfMemoryError

# the host's cost of one runtime call (enqueue a launch or a copy): a model parameter, not a datasheet
# number; labsim.machines.runtime.simulate uses the same default
HOST_API_TIME = 1e-6

# bfloat16 passes per float32 product on a TPU's MXU, by precision (JAX's "Matmul precision" page:
# DEFAULT one pass, HIGH three (bf16_3x), HIGHEST six (bf16_6x))
TPU_BF16_PASSES = {"default": 1, "high": 3, "highest": 6}


def _need(what: str, arg: str, x, cls: type, hint: str = "") -> None:
    """A clear TypeError when ``x`` is not a ``cls`` (e.g. a Graph where a compiled Program is needed)."""
    if not isinstance(x, cls):
        raise ArgumentTypeError(f"{what}: {arg} must be a {cls.__name__}, got {type(x).__name__} {x!r:.40}" + hint)


_PROGRAM_HINT = " (compile a traced graph first: prog = ls.compile(graph))"
_KERNEL_HINT = " (a Program holds its kernels in prog.kernels; ls.estimate(prog, chip) costs them all)"


class Bound(enum.Enum):
    COMPUTE = "compute"
    MEMORY = "memory"
    LATENCY = "latency"  # the kernel is shorter than the chip's latency floor


def unit_for(kernel: Kernel, chip: Chip) -> tuple[ExecUnit, str]:
    """Which unit runs ``kernel`` on ``chip``, and the key of the rate that applies ("tf32" or a dtype).

    A float32 contraction follows its precision: TF32 tensor cores on an NVIDIA GPU that lists a
    "tf32" rate unless the precision is "highest"; bfloat16 passes on a TPU's MXU (see
    :func:`matrix_passes`). A chip whose preset has no vector rate (TPU v4, v6e, TPU7x: Google
    publishes no VPU figure and no source gives one to derive) is charged at its fastest matrix rate instead. That keeps the
    roofline a valid lower bound, only a looser one; :attr:`KernelCost.assumed` marks such kernels.
    TPU v5e and v5p list a derived VPU rate (``vector_flops["float32"]``), so their vector work runs
    on the VECTOR unit at that rate and is not ``assumed``.
    """
    if kernel.kind is KernelKind.CONTRACTION:
        if kernel.dtype == "float32" and chip.kind is ChipKind.GPU and TF32 in chip.matrix_flops \
                and kernel.precision != "highest":
            return ExecUnit.MATRIX, TF32
        if kernel.dtype == "float32" and chip.kind is ChipKind.TPU and "bfloat16" in chip.matrix_flops:
            return ExecUnit.MATRIX, "bfloat16"
        if kernel.dtype in chip.matrix_flops:
            return ExecUnit.MATRIX, kernel.dtype
    if kernel.dtype in chip.vector_flops:
        return ExecUnit.VECTOR, kernel.dtype
    if "float32" in chip.vector_flops:
        return ExecUnit.VECTOR, "float32"
    for dt in (kernel.dtype, "bfloat16"):
        if dt in chip.matrix_flops:
            return ExecUnit.MATRIX, dt
    return ExecUnit.MATRIX, max(chip.matrix_flops, key=chip.matrix_flops.get)


def matrix_passes(kernel: Kernel, chip: Chip) -> int:
    """How many bfloat16 passes a float32 contraction takes on a TPU's MXU (1 elsewhere)."""
    if kernel.kind is KernelKind.CONTRACTION and kernel.dtype == "float32" and chip.kind is ChipKind.TPU:
        return TPU_BF16_PASSES[kernel.precision]
    return 1


@dataclass(frozen=True)
class KernelCost:
    kernel: str
    unit: ExecUnit
    dtype: str
    flops: int
    transcendentals: int
    bytes: int
    peak_flops: float
    bandwidth: float
    compute_time: float
    memory_time: float
    assumed: bool = False  # vector work charged at the matrix rate (the chip has no vector rate at all)
    precision: str = "default"  # the contraction's precision= (see labsim.frontend.numpy.PRECISIONS)
    special_rate: float = 0.0  # special-function ops/s that transcendentals were charged at
    special_time: float = 0.0  # transcendentals / special_rate (part of compute_time)
    latency_floor: float = 0.0  # the chip's min_kernel_time
    source: Kernel | None = field(default=None, compare=False, repr=False)  # the kernel costed
    chip: Chip | None = field(default=None, compare=False, repr=False)

    @property
    def launch(self):
        """The kernel's launch on a GPU: the very ``ls.Launch`` of its kernel IR
        (``ls.simt.kernel_ir(kernel, chip).launch``, lowered once and cached); ``None`` on a TPU or CPU."""
        if self.source is None or self.chip is None or self.chip.kind is not ChipKind.GPU:
            return None
        from ..compiler.emit import kernel_ir
        return kernel_ir(self.source, self.chip).launch

    @property
    def time(self) -> float:
        return max(self.compute_time, self.memory_time, self.latency_floor)

    @property
    def bound(self) -> Bound:
        if self.latency_floor > max(self.compute_time, self.memory_time):
            return Bound.LATENCY
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
    unit, key = unit_for(kernel, chip)
    peak = chip.peak_flops(key, unit) / matrix_passes(kernel, chip)
    if kernel.kind is KernelKind.CONTRACTION:
        peak *= chip.gemm_efficiency
    vec = chip.vector_flops.get("float32") or peak
    if chip.special_flops:  # SFUs beside the FMA lanes: the slower of the two sets the pace
        special_rate = chip.special_flops
        special = kernel.transcendentals / special_rate
        compute = max(kernel.flops / peak, special)
    else:  # no SFU rate: each transcendental is one more vector operation
        special_rate = vec
        special = kernel.transcendentals / special_rate
        compute = kernel.flops / peak + special
    assumed = kernel.kind is not KernelKind.CONTRACTION and unit is ExecUnit.MATRIX
    return KernelCost(kernel=kernel.name, unit=unit, dtype=key, flops=kernel.flops,
                      transcendentals=kernel.transcendentals, bytes=kernel.bytes, peak_flops=peak,
                      bandwidth=chip.hbm_bandwidth, compute_time=compute,
                      memory_time=kernel.bytes / chip.hbm_bandwidth, assumed=assumed,
                      precision=kernel.precision, special_rate=special_rate, special_time=special,
                      latency_floor=chip.min_kernel_time, source=kernel, chip=chip)


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


# ----------------------------------------------------------------------------------------------
# What the SIMT machine (labsim.machines.simt) adds to the roofline of a GPU kernel

# The time from issuing a global load to its data arriving, for Little's law below. A labsim
# assumption (no source in the bibliography gives it per chip): DRAM latency on HBM GPUs is several
# hundred nanoseconds; 600 ns is a round figure of that order.
HBM_LATENCY = 600e-9


@dataclass(frozen=True)
class GpuTerms:
    """Three terms a plain roofline leaves out, each taught by the SIMT machine (``ls.simt``):

    * **SFU rate** (already in :class:`KernelCost`): transcendentals run on 16 special-function lanes
      per SM against 64-128 FMA lanes, at ``chip.special_flops``; ``special_time`` is their time.
    * **Tail waves**: the SMs hold ``blocks_per_sm`` blocks each (occupancy), so ``blocks`` run in
      ``waves = ceil(blocks / (blocks_per_sm x SMs))`` waves and the last one may run partly empty:
      ``wave_efficiency = blocks / (waves x blocks_per_sm x SMs)``; the compute time becomes
      ``compute_time / wave_efficiency``.
    * **Occupancy-limited bandwidth** (Little's law): to stream at bandwidth W with latency L the
      chip needs W x L bytes in flight. Each resident thread has ``bytes_in_flight_per_thread``
      bytes of loads issued before it first needs one (counted from the kernel's IR), so at most
      ``resident threads x that`` bytes are in flight and the bandwidth is
      ``min(W, in_flight / L)``; the memory time becomes ``bytes / bandwidth``.

    ``time`` = max(compute_time / wave_efficiency, bytes / bandwidth, latency floor). The register
    count is labsim's count of the kernel IR's virtual registers (no reuse: an upper bound, capped at
    255), so the occupancy is a pessimistic estimate.
    """

    base: KernelCost
    blocks: int
    threads_per_block: int
    registers_per_thread: int
    blocks_per_sm: int
    sms: int
    waves: int
    wave_efficiency: float
    occupancy: float
    bytes_in_flight_per_thread: int
    memory_latency: float
    bandwidth: float  # achievable: min(peak, in flight / latency)

    @property
    def peak_bandwidth(self) -> float:
        return self.base.bandwidth

    @property
    def in_flight(self) -> float:
        """Bytes of loads in flight with every resident thread's first loads issued."""
        return min(self.blocks, self.blocks_per_sm * self.sms) * self.threads_per_block * self.bytes_in_flight_per_thread

    @property
    def compute_time(self) -> float:
        return self.base.compute_time / self.wave_efficiency

    @property
    def memory_time(self) -> float:
        return self.base.bytes / self.bandwidth if self.bandwidth else 0.0

    @property
    def special_time(self) -> float:
        return self.base.special_time

    @property
    def time(self) -> float:
        return max(self.compute_time, self.memory_time, self.base.latency_floor)


def _bytes_in_flight(ir) -> int:
    """Bytes of global loads a thread issues before an instruction reads the first loaded register."""
    from ..compiler.isa import reg_dtype

    loaded: set[str] = set()
    total = 0
    for ins in ir.code:
        if any(r.name in loaded for r in ins.reads()):
            break
        if ins.op == "ld" and "global" in ins.mod:
            loaded.add(ins.dst.name)
            total += 2 if ins.type in ("bf16", "f16") else reg_dtype(ins.type).itemsize
    return total


def gpu_terms(kernel: Kernel, chip: Chip | str, *, memory_latency: float = HBM_LATENCY) -> GpuTerms:
    """The roofline of ``kernel`` on GPU ``chip`` with the SIMT machine's terms (see :class:`GpuTerms`)."""
    from ..compiler.emit import kernel_ir
    from .simt.occupancy import max_registers_per_thread, occupancy

    _need("gpu_terms", "kernel", kernel, Kernel, _KERNEL_HINT)
    c = get(chip)
    if c.sm is None:
        raise ArgumentError(f"gpu_terms: {c.name} is not a GPU with SM limits (occupancy and waves are GPU terms)")
    if memory_latency <= 0:
        raise ArgumentError(f"gpu_terms: memory_latency must be positive, got {memory_latency}")
    base = kernel_cost(kernel, c)
    ir = kernel_ir(kernel, c)
    # registers: the IR's count, capped by what one block may hold (beyond it a compiler spills)
    regs = max(1, min(ir.registers_per_thread, max_registers_per_thread(c, ir.block)))
    shared = ir.launch.shared_bytes  # the launch's declared bytes, as the SIMT machine's occupancy
    occ = occupancy(c, threads_per_block=ir.block, registers_per_thread=regs,
                    shared_bytes_per_block=min(shared, c.sm.shared_per_block))
    sms = c.compute_units
    per_wave = occ.blocks_per_sm * sms
    blocks = max(ir.grid, 1)
    waves = -(-blocks // per_wave)
    per_thread = _bytes_in_flight(ir)
    resident = min(blocks, per_wave) * ir.block
    bw = min(c.hbm_bandwidth, resident * per_thread / memory_latency) if per_thread else c.hbm_bandwidth
    return GpuTerms(base=base, blocks=blocks, threads_per_block=ir.block, registers_per_thread=regs,
                    blocks_per_sm=occ.blocks_per_sm, sms=sms, waves=waves, wave_efficiency=blocks / (waves * per_wave),
                    occupancy=occ.occupancy, bytes_in_flight_per_thread=per_thread, memory_latency=memory_latency,
                    bandwidth=bw)
