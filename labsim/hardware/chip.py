"""Hardware presets: the one home of every datasheet number in the book.

Introduced in the opening chapter ("The journey of one matrix product") and used by the roofline,
host/device, GPU, TPU and many-chip chapters. Every number here carries a source (a BibTeX key in
``book/references.bib``, optionally with a page or table); chapters never retype these numbers, they
read them from here.

Units are SI and unprefixed throughout: FLOP/s, bytes/s, bytes, seconds.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..core.dtypes import canonical_dtype


class ChipKind(enum.Enum):
    CPU = "cpu"
    GPU = "gpu"
    TPU = "tpu"


class Unit(enum.Enum):
    """Which execution unit runs a kernel."""

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
            raise ValueError(f"Link {self.name!r}: bandwidth must be positive, got {self.bandwidth}")
        if self.latency < 0:
            raise ValueError(f"Link {self.name!r}: latency must be >= 0, got {self.latency}")

    def transfer_time(self, nbytes: float) -> float:
        return self.latency + nbytes / self.bandwidth


def _frozen(m: Mapping | None) -> Mapping:
    return MappingProxyType(dict(m or {}))


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
    which instructions a kernel listing shows (``labsim.compiler.codegen.MATRIX_PATHS``).
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

    def __post_init__(self) -> None:
        for attr in ("matrix_flops", "vector_flops", "onchip", "sources"):
            object.__setattr__(self, attr, _frozen(getattr(self, attr)))
        if self.hbm_bandwidth <= 0 or self.hbm_capacity <= 0:
            raise ValueError(f"Chip {self.name!r}: memory bandwidth and capacity must be positive")

    def peak_flops(self, dtype="float32", unit: Unit | str | None = None) -> float:
        """Dense peak FLOP/s for ``dtype`` on ``unit`` (default: the fastest unit that supports it)."""
        dt = dtype if dtype in RATE_KEYS else canonical_dtype(dtype)
        if unit is None:
            rates = [r for r in (self.matrix_flops.get(dt), self.vector_flops.get(dt)) if r]
            if not rates:
                raise ValueError(
                    f"{self.name} has no peak rate for dtype {dt!r}; it knows "
                    f"matrix {sorted(self.matrix_flops)} and vector {sorted(self.vector_flops)}"
                )
            return max(rates)
        u = Unit(unit)
        table = self.matrix_flops if u is Unit.MATRIX else self.vector_flops
        if dt not in table:
            raise ValueError(
                f"{self.name} has no {u.value}-unit rate for dtype {dt!r}; it knows {sorted(table)}"
            )
        return table[dt]

    def ridge_point(self, dtype="float32", unit: Unit | str | None = None) -> float:
        """Arithmetic intensity (FLOP/byte) where compute time equals HBM time."""
        return self.peak_flops(dtype, unit) / self.hbm_bandwidth


__all__ = ["Chip", "ChipKind", "Link", "RATE_KEYS", "TF32", "Unit"]
