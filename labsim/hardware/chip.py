"""Hardware presets: the one home of every datasheet number in the book.

Introduced in the opening chapter ("The journey of one matrix product") and used by the roofline,
host/device, GPU, TPU and many-chip chapters. Every number here carries a source (a BibTeX key in
``book/references.bib``, optionally with a page or table); chapters never retype these numbers, they
read them from here.

Units are SI and unprefixed throughout: FLOP/s, bytes/s, bytes, seconds.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..core.dtypes import canonical_dtype


class ChipKind(enum.Enum):
    CPU = "cpu"
    GPU = "gpu"
    TPU = "tpu"


class ExecUnit(enum.Enum):
    """Which execution unit of a chip runs a kernel: its matrix unit or its vector lanes (the roofline's
    choice, :func:`labsim.kernel_cost`). Not the SM pipe one instruction issues to
    (:class:`labsim.compiler.instr.Pipe`) and not a lane of a trace (:class:`labsim.UnitKind`)."""

    MATRIX = "matrix"  # tensor cores (GPU), MXU (TPU), AMX/FMA-matrix paths (CPU)
    VECTOR = "vector"  # SIMT fp32 lanes (GPU), VPU (TPU), SIMD lanes (CPU)


# A matrix-rate key that is a number format of the matrix unit rather than an array dtype: NVIDIA's
# TensorFloat-32 (8-bit exponent, 10-bit mantissa), which tensor cores use for float32 products when
# the dot's precision allows it. ``Chip.matrix_flops["tf32"]`` holds that rate.
TF32 = "tf32"
RATE_KEYS = (TF32,)


@dataclass(frozen=True)
class Link:
    """A data link. ``bandwidth`` is bytes/s in one direction; ``latency`` seconds per transfer."""

    name: str
    bandwidth: float
    latency: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        if self.bandwidth <= 0:
            raise ArgumentError(f"Link {self.name!r}: bandwidth must be positive, got {self.bandwidth}")
        if self.latency < 0:
            raise ArgumentError(f"Link {self.name!r}: latency must be >= 0, got {self.latency}")

    def transfer_time(self, nbytes: float) -> float:
        return self.latency + nbytes / self.bandwidth


def _frozen(m: Mapping | None) -> Mapping:
    return MappingProxyType(dict(m or {}))


# Threads per warp on every NVIDIA GPU generation labsim models (Ampere, Hopper, Blackwell): the CUDA
# C++ Programming Guide, "SIMT Architecture" (nvidia-cuda-guide). The one place labsim states it.
WARP_SIZE = 32


@dataclass(frozen=True)
class SMLimits:
    """The per-SM resources of an NVIDIA GPU: what decides how many blocks an SM holds at once
    (occupancy) and how fast one SM issues work. Counts are per SM unless the name says per block or
    per thread; bytes for shared memory.

    The occupancy fields follow the CUDA Programming Guide's table of technical specifications per
    compute capability and the allocation rules of NVIDIA's occupancy calculator: registers are
    allocated per warp in units of ``register_granularity`` and split evenly over ``sub_partitions``;
    shared memory per block is rounded up to ``shared_granularity`` bytes after adding the
    ``shared_reserved_per_block`` that the system keeps for itself. ``fp32_lanes``, ``sfu_lanes`` and
    ``tensor_cores`` are results (or units) per clock per SM from the guide's arithmetic-throughput
    table and the architecture whitepapers. ``sources`` maps a field name to a BibTeX key.
    """

    compute_capability: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    shared_per_sm: int  # bytes, the largest shared-memory carve-out
    shared_per_block: int  # bytes, the most one block may ask for (opt-in)
    warp_size: int = WARP_SIZE
    max_threads_per_block: int = 1024
    registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_granularity: int = 256  # registers, allocated per warp
    sub_partitions: int = 4  # SM sub-partitions (processing blocks), each with its own warp scheduler
    shared_reserved_per_block: int = 1024  # bytes the CUDA runtime reserves per block
    shared_granularity: int = 128  # bytes, shared-memory allocation unit
    fp32_lanes: int = 128  # fp32 FMA results per clock per SM
    sfu_lanes: int = 16  # special-function results per clock per SM
    tensor_cores: int = 4
    sources: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", _frozen(self.sources))
        for name in ("max_threads_per_sm", "max_blocks_per_sm", "registers_per_sm", "shared_per_sm",
                     "shared_per_block", "warp_size", "max_threads_per_block", "registers_per_block",
                     "max_registers_per_thread", "register_granularity", "sub_partitions",
                     "shared_granularity", "fp32_lanes", "sfu_lanes"):
            if getattr(self, name) <= 0:
                raise ArgumentError(f"SMLimits: {name} must be positive, got {getattr(self, name)}")

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


@dataclass(frozen=True)
class Chip:
    """One accelerator (or CPU socket) as the roofline and the machines see it.

    ``matrix_flops`` / ``vector_flops`` map a dtype name ("bfloat16", "float32", ...) to the dense peak
    rate in FLOP/s of that unit; ``matrix_flops["tf32"]`` is the tensor cores' TensorFloat-32 rate for
    float32 products. ``special_flops`` is the special-function units' rate (transcendentals per
    second), ``min_kernel_time`` the latency floor of one kernel and ``call_overhead`` the host
    software cost of one call (used for the CPU, where a kernel is a library call, not a launch). ``onchip`` maps a named on-chip memory ("L2", "shared memory per SM",
    "VMEM", ...) to bytes. ``sources`` maps a field name (e.g. "hbm_bandwidth", "matrix_flops.bfloat16")
    to a BibTeX key, so every number can be traced to a datasheet. ``arch`` names the generation
    ("Ampere", "Hopper", "Blackwell", "TPU v5e", "Sapphire Rapids", ...): it is not a number but decides
    which instructions a kernel listing shows (``labsim.compiler.codegen.MATRIX_PATHS``). ``sm`` holds a
    GPU's per-SM limits (:class:`SMLimits`, with their own sources), None for other chips.
    ``matrix_unit`` is the (rows, cols) shape of one systolic matrix unit (a TPU's MXU: 128 x 128 up to
    v5e, 256 x 256 on v6e) and ``clock`` its clock in Hz; both are read by ``labsim.machines.tpu``.
    ``tensorcores`` counts a TPU chip's TensorCores (Google's sense of the word: one core with its
    MXUs, vector unit and scalar unit, not NVIDIA's Tensor Cores): two on v4 and v5p (joined as one
    "megacore" device) and on TPU7x (two devices), one on v5e and v6e. ``sparsecores`` counts its
    SparseCores (dataflow processors for embedding lookups). ``devices_per_chip`` is how many devices
    JAX lists per chip: 1 except TPU7x, whose two TensorCores sit on two dies and show as 2 devices.
    GPUs and CPUs keep the defaults (1, 0, 1): the fields describe TPUs.
    """

    name: str
    kind: ChipKind
    matrix_flops: Mapping[str, float]
    vector_flops: Mapping[str, float]
    hbm_bandwidth: float
    hbm_capacity: float
    host_link: Link
    chip_link: Link | None = None
    onchip: Mapping[str, float] = field(default_factory=dict)
    compute_units: int = 1  # SMs, TensorCores x MXUs, or CPU cores
    compute_unit_name: str = "unit"
    launch_overhead: float = 0.0  # seconds from enqueue to kernel start (launch latency)
    launch_interval: float = 0.0  # seconds: least time between two launches from one host thread (1 / launch throughput)
    special_flops: float = 0.0  # special-function (exp, tanh, rsqrt ...) operations/s; 0 = not recorded
    min_kernel_time: float = 0.0  # seconds: the shortest time any kernel takes on the device
    call_overhead: float = 0.0  # seconds of host software per kernel call (CPU presets; GPUs use launch_overhead)
    gemm_efficiency: float = 1.0  # fraction of the matrix peak a library GEMM sustains (1: the roofline bound)
    memory_name: str = "HBM"
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    arch: str = ""  # architecture generation; selects the code path of kernel listings
    sm: SMLimits | None = None  # per-SM limits of a GPU (occupancy, issue rates); None for TPUs and CPUs
    matrix_unit: tuple[int, int] | None = None  # (rows, cols) of one systolic matrix unit (a TPU's MXU)
    clock: float = 0.0  # Hz, the matrix unit's clock where a source gives it; 0 = not recorded
    tensorcores: int = 1  # TPU TensorCores per chip (Google's term); 1 for GPUs and CPUs
    sparsecores: int = 0  # TPU SparseCores per chip; 0 where the chip has none
    devices_per_chip: int = 1  # devices JAX lists per chip (2 on TPU7x)

    def __post_init__(self) -> None:
        for attr in ("matrix_flops", "vector_flops", "onchip", "sources"):
            object.__setattr__(self, attr, _frozen(getattr(self, attr)))
        if self.hbm_bandwidth <= 0 or self.hbm_capacity <= 0:
            raise ArgumentError(f"Chip {self.name!r}: memory bandwidth and capacity must be positive")
        for attr, least in (("tensorcores", 1), ("sparsecores", 0), ("devices_per_chip", 1)):
            value = getattr(self, attr)
            if not isinstance(value, int) or value < least:
                raise ArgumentError(f"Chip {self.name!r}: {attr} must be an integer >= {least}, got {value!r}")

    def sm_clock(self) -> float:
        """The SM clock (Hz) a GPU preset implies: fp32 rate / (SMs · fp32 lanes · 2 FLOP per FMA).
        A100: 19.5e12 / (108 · 64 · 2) = 1.41 GHz; H100 SXM: 66.9e12 / (132 · 128 · 2) = 1.98 GHz. It turns
        the SIMT machine's cycles into seconds."""
        if self.sm is None or "float32" not in self.vector_flops:
            raise ArgumentError(f"{self.name} has no SMs with fp32 lanes: no SM clock to derive")
        return self.vector_flops["float32"] / (self.compute_units * self.sm.fp32_lanes * 2)

    def peak_flops(self, dtype="float32", unit: ExecUnit | str | None = None) -> float:
        """Dense peak FLOP/s for ``dtype`` on ``unit`` (default: the fastest unit that supports it)."""
        dt = dtype if dtype in RATE_KEYS else canonical_dtype(dtype)
        if unit is None:
            rates = [r for r in (self.matrix_flops.get(dt), self.vector_flops.get(dt)) if r]
            if not rates:
                raise ArgumentError(
                    f"{self.name} has no peak rate for dtype {dt!r}; it knows "
                    f"matrix {sorted(self.matrix_flops)} and vector {sorted(self.vector_flops)}"
                )
            return max(rates)
        u = ExecUnit(unit)
        table = self.matrix_flops if u is ExecUnit.MATRIX else self.vector_flops
        if dt not in table:
            raise ArgumentError(
                f"{self.name} has no {u.value}-unit rate for dtype {dt!r}; it knows {sorted(table)}"
            )
        return table[dt]

    def ridge_point(self, dtype="float32", unit: ExecUnit | str | None = None) -> float:
        """Arithmetic intensity (FLOP/byte) where compute time equals HBM time."""
        return self.peak_flops(dtype, unit) / self.hbm_bandwidth


__all__ = ["Chip", "ChipKind", "Link", "RATE_KEYS", "SMLimits", "TF32", "ExecUnit", "WARP_SIZE"]
