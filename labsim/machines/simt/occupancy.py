"""Occupancy: how many blocks (and so warps) one SM holds at once, and which resource stops it.

An SM keeps a block resident from its first instruction to its last; it can hold several blocks at
once if each of four budgets allows (the per-SM limits are in ``chip.sm``, from the CUDA Programming
Guide's table per compute capability):

* **threads**: ``max_threads_per_sm // (warps per block * 32)`` blocks (warps count whole: a block of
  100 threads takes 4 warp slots);
* **registers**: registers are allocated per warp, ``registers_per_thread * 32`` rounded up to
  ``register_granularity`` (256); the register file is split evenly over the SM's sub-partitions
  (4 x 16,384 registers), so the SM holds ``4 * floor(16384 / registers per warp)`` warps, i.e.
  ``that // warps per block`` blocks;
* **shared memory**: each block takes its shared bytes plus the 1 KB the system reserves per block,
  rounded up to ``shared_granularity`` (128 bytes); ``shared_per_sm // that`` blocks;
* **blocks**: at most ``max_blocks_per_sm`` (32) resident blocks.

``blocks_per_sm`` is the smallest of the four. These are the rules of NVIDIA's occupancy calculator
(``cuda_occupancy.h``); labsim takes the largest shared-memory carve-out as the SM's budget (the
calculator also honours a smaller carve-out the program asks for).
"""
from __future__ import annotations

from ...support.errors import ArgumentTypeError, LabsimError

import enum
import operator
from dataclasses import dataclass
from typing import Mapping

from ...hardware import Chip, get as get_chip
from ...support.text import plural


class Limiter(str, enum.Enum):
    """The resource that binds. A ``str``, so ``occ.limiter == "registers"`` works."""

    THREADS = "threads"
    REGISTERS = "registers"
    SHARED_MEMORY = "shared memory"
    BLOCKS = "blocks"

    def __str__(self) -> str:
        return self.value


class OccupancyError(LabsimError, ValueError):
    """A launch that no SM can hold: the message names the limit it breaks."""


def _integer(name: str, v) -> int:
    if isinstance(v, bool):
        raise ArgumentTypeError(f"{name} must be an integer, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise ArgumentTypeError(f"{name} must be an integer, got {v!r}") from None


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """The result of :func:`occupancy`. ``limits`` maps each resource to the blocks per SM it allows."""

    chip: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    warps_per_block: int
    registers_per_warp: int  # allocated: registers_per_thread * 32 rounded up to the granularity
    registers_per_block: int  # allocated registers of one block
    shared_per_block: int  # allocated bytes: requested + reserved, rounded up to the granularity
    max_warps_per_sm: int
    limits: Mapping[Limiter, int]
    blocks_per_sm: int
    limiter: Limiter
    limiters: tuple[Limiter, ...]  # every resource that binds (ties), in Limiter order

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def threads_per_sm(self) -> int:
        return self.blocks_per_sm * self.threads_per_block

    @property
    def occupancy(self) -> float:
        """Resident warps / the SM's maximum (64 on compute capability 8.0 to 10.0)."""
        return self.warps_per_sm / self.max_warps_per_sm

    def rows(self) -> list[tuple[str, int, str]]:
        """(resource, blocks per SM it allows, how) for a table."""
        how = {
            Limiter.THREADS: f"{self.max_warps_per_sm} warp slots / {plural(self.warps_per_block, 'warp')} per block",
            Limiter.REGISTERS: f"{self.registers_per_warp} registers per warp "
                               f"({self.registers_per_thread} x 32 rounded up to 256)",
            Limiter.SHARED_MEMORY: f"{self.shared_per_block:,} bytes per block "
                                   f"({self.shared_bytes_per_block:,} + reserved, rounded up to 128)",
            Limiter.BLOCKS: "resident blocks per SM",
        }
        return [(str(k), v, how[k]) for k, v in self.limits.items()]

    def __str__(self) -> str:
        return (f"{plural(self.blocks_per_sm, 'block')} x {plural(self.warps_per_block, 'warp')} = "
                f"{plural(self.warps_per_sm, 'warp')} per SM ({self.occupancy:.0%} of {self.max_warps_per_sm}); "
                f"limited by {', '.join(map(str, self.limiters))}")


def occupancy(chip: str | Chip, threads_per_block: int = 256, registers_per_thread: int = 32,
              shared_bytes_per_block: int = 0) -> Occupancy:
    """Blocks and warps resident per SM of ``chip`` for one kernel's launch shape and resources."""
    c = get_chip(chip)
    sm = c.sm
    if sm is None:
        raise OccupancyError(f"{c.name} has no SM limits (occupancy is a property of NVIDIA GPUs; "
                             f"this chip is a {c.kind.value})")
    tpb, regs, smem = (_integer(n, v) for n, v in (("threads_per_block", threads_per_block),
                                                   ("registers_per_thread", registers_per_thread),
                                                   ("shared_bytes_per_block", shared_bytes_per_block)))
    if tpb < 1:
        raise OccupancyError(f"threads_per_block must be at least 1, got {tpb}")
    if tpb > sm.max_threads_per_block:
        raise OccupancyError(f"threads_per_block={tpb} exceeds the limit of {sm.max_threads_per_block} "
                             f"threads per block (compute capability {sm.compute_capability})")
    if regs < 1:
        raise OccupancyError(f"registers_per_thread must be at least 1, got {regs}")
    if regs > sm.max_registers_per_thread:
        raise OccupancyError(f"registers_per_thread={regs} exceeds the limit of {sm.max_registers_per_thread} "
                             f"registers per thread (compute capability {sm.compute_capability})")
    if smem < 0:
        raise OccupancyError(f"shared_bytes_per_block must be >= 0, got {smem}")
    if smem > sm.shared_per_block:
        raise OccupancyError(f"shared_bytes_per_block={smem:,} exceeds the limit of {sm.shared_per_block:,} "
                             f"bytes of shared memory per block on {c.name}")

    warps = -(-tpb // sm.warp_size)
    regs_warp = _round_up(regs * sm.warp_size, sm.register_granularity)
    regs_block = regs_warp * warps
    # The hardware checks a block's registers as if its warps were spread over all sub-partitions.
    if regs_warp * _round_up(warps, sm.sub_partitions) > sm.registers_per_block:
        raise OccupancyError(
            f"a block of {tpb} threads at {regs} registers per thread needs "
            f"{regs_warp * _round_up(warps, sm.sub_partitions):,} registers; the limit is "
            f"{sm.registers_per_block:,} registers per block")
    smem_block = _round_up(smem + sm.shared_reserved_per_block, sm.shared_granularity)

    by_threads = sm.max_warps_per_sm // warps
    warps_per_partition = (sm.registers_per_sm // sm.sub_partitions) // regs_warp
    by_registers = (warps_per_partition * sm.sub_partitions) // warps
    by_shared = sm.shared_per_sm // smem_block
    limits = {Limiter.THREADS: by_threads, Limiter.REGISTERS: by_registers,
              Limiter.SHARED_MEMORY: by_shared, Limiter.BLOCKS: sm.max_blocks_per_sm}
    blocks = min(limits.values())
    if blocks == 0:  # cannot happen after the checks above; kept as a guard with a clear message
        bad = [str(k) for k, v in limits.items() if v == 0]
        raise OccupancyError(f"no block fits on an SM of {c.name}: limited by {', '.join(bad)}")
    binding = tuple(k for k, v in limits.items() if v == blocks)
    return Occupancy(chip=c.name, threads_per_block=tpb, registers_per_thread=regs,
                     shared_bytes_per_block=smem, warps_per_block=warps, registers_per_warp=regs_warp,
                     registers_per_block=regs_block, shared_per_block=smem_block,
                     max_warps_per_sm=sm.max_warps_per_sm, limits=limits, blocks_per_sm=blocks,
                     limiter=binding[0], limiters=binding)


def max_registers_per_thread(chip: str | Chip, threads_per_block: int) -> int:
    """The most registers per thread with which one block of ``threads_per_block`` threads still fits
    (the per-thread limit, and the per-block register check at the allocation granularity). A compiler
    that needs more spills the rest to local memory."""
    c = get_chip(chip)
    sm = c.sm
    if sm is None:
        raise OccupancyError(f"{c.name} has no SM limits")
    warps = _round_up(-(-threads_per_block // sm.warp_size), sm.sub_partitions)
    per_warp = sm.registers_per_block // warps // sm.register_granularity * sm.register_granularity
    return max(1, min(sm.max_registers_per_thread, per_warp // sm.warp_size))


__all__ = ["Limiter", "Occupancy", "OccupancyError", "max_registers_per_thread", "occupancy"]
