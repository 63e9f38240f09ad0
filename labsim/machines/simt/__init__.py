"""The SIMT machine: an NVIDIA-style GPU that runs kernels warp by warp (``ls.simt``).

* ``occupancy`` - blocks and warps per SM and the limiting resource (:mod:`.occupancy`);
* ``run_ir`` - run one kernel IR with real values and play it on the SMs' warp schedulers, returning a
  :class:`KernelRun` with its outputs and :class:`WarpTrace` (:mod:`.machine`; the machine's state in
  :mod:`.state`, its instruction table in :mod:`.values`, the issue model in :mod:`.schedule`, what a
  run returns in :mod:`.results`);
* ``run`` / ``kernel_ir`` - lower and run the kernels the compiler emits (:mod:`.program`);
* ``transactions`` - sectors and lines of one warp's access (:mod:`.coalescing`);
* ``run_blocks`` - run a Triton-like block kernel (``ls.blocks``) lowered to the kernel IR (:mod:`.blocks`);
* ``banks`` - shared-memory bank conflicts of one warp's access (:mod:`.banks`);
* ``divergent_kernel``, ``latency_kernel``, ``strided_kernel`` - small experiments (:mod:`.kernels`).
"""
from __future__ import annotations

from . import banks
from .blocks import run_blocks
from .coalescing import LINE, SECTOR, Transactions, transactions, warp_addresses
from .kernels import Experiment, divergent_kernel, latency_kernel, latency_utilisation, strided_kernel, taken_lanes
from .machine import KernelRun, MemStat, SimtError, Stall, Timing, WarpTrace, run_ir
from .occupancy import Limiter, Occupancy, OccupancyError, max_registers_per_thread, occupancy
from .program import ProgramRun, kernel_ir, run, run_kernel

__all__ = ["banks", "Experiment", "KernelRun", "LINE", "Limiter", "MemStat", "Occupancy", "OccupancyError", "SECTOR",
           "SimtError", "Stall", "Timing", "Transactions", "WarpTrace", "divergent_kernel", "latency_kernel",
           "latency_utilisation", "max_registers_per_thread", "occupancy", "run_ir", "ProgramRun", "kernel_ir", "run", "run_kernel", "run_blocks", "strided_kernel", "taken_lanes", "transactions",
           "warp_addresses"]
