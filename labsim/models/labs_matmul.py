"""Chapter 10's lab: a matrix product made fast step by step, in the manner of Boehm's CUDA worklog.

:func:`progression` prices five kernels for ``C[m, n] = A[m, k] @ B[k, n]`` on one chip, each as the
largest of three times: its FLOPs at the rate of the units it uses, its HBM bytes at the HBM bandwidth,
and its shared-memory bytes at ``ls.tiling``'s shared-memory bandwidth (32 banks × 4 B per SM clock).

1. **naive**: one program per column of C, its lanes walking down the rows: each load of A is strided.
2. **coalesced**: one program per row of C, its lanes walking along the row: each load of B is coalesced.
   Steps 1 and 2 are the lab's kernels (``ls.labs``' "matmul" task): the SIMT machine runs them at
   32 × 32 × 32 and counts their sectors; labsim scales sectors per multiply-add to the large product.
3. **shared-memory tiles**: blocks of ``T × T`` threads copy ``T × T`` tiles of A and B into shared memory
   and read two operands from it per multiply-add (Boehm's kernel 3).
4. **register tiles**: each thread computes ``TM × TN`` outputs from values held in registers, so it
   reads ``TM + TN`` operands from shared memory for ``TM · TN`` multiply-adds (Boehm's kernel 5).
5. **tensor-core tiles**: bfloat16 on the tensor cores, priced by ``ls.tiling.plan``.

labsim's model, not a GPU: no L1 or L2 cache (every sector a kernel touches comes from HBM, so steps
1 and 2 are worse than on a real GPU, whose caches catch much of the rereading), every unit at its peak
rate when it has work, and steps 1–4 in float32 on the CUDA cores.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hardware import ExecUnit
from ..machines import tiling
from ..machines.simt import SECTOR
from ..support.errors import count, positive

FP32 = 4  # bytes


@dataclass(frozen=True)
class Step:
    """One kernel of the progression and its three times (seconds)."""

    name: str
    how: str
    flops: float
    hbm_bytes: float
    shared_bytes: float
    compute_time: float
    memory_time: float
    shared_time: float
    peak: float  # the chip's peak (dense bfloat16 on the tensor cores), FLOP/s

    @property
    def time(self) -> float:
        return max(self.compute_time, self.memory_time, self.shared_time)

    @property
    def bound(self) -> str:
        t = {"compute": self.compute_time, "HBM": self.memory_time, "shared memory": self.shared_time}
        return max(t, key=t.get)

    @property
    def achieved(self) -> float:
        return self.flops / self.time

    @property
    def fraction(self) -> float:
        """Achieved FLOP/s over the chip's peak."""
        return self.achieved / self.peak

    def row(self) -> dict:
        return {"step": self.name, "how": self.how, "TFLOP/s": self.achieved / 1e12,
                "% of peak": 100 * self.fraction, "bound": self.bound}


def _panels(m: int, n: int, k: int, t: int) -> int:
    """HBM bytes of float32 tiles ``t × t``: each block reads its row panel of A and column panel of B."""
    return FP32 * (m * k * -(-n // t) + k * n * -(-m // t) + m * n)


def progression(m: int, n: int, k: int, chip="H100 SXM", *, naive_sectors: float, coalesced_sectors: float,
                measured: int = 32, smem_tile: int = 32, reg_tile: tuple = (128, 128, 8, 8),
                tc_tile: tuple = (128, 128, 32)) -> list[Step]:
    """The five steps for ``[m, k] @ [k, n]`` on ``chip``. ``naive_sectors`` and ``coalesced_sectors``
    are the sectors the SIMT machine counted for the lab's kernels on ``measured``³ matrices."""
    fn = "ls.labs.progression"
    m, n, k, measured, smem_tile = (count(fn, a, v, minimum=1) for a, v in (("m", m), ("n", n), ("k", k),
                                    ("measured", measured), ("smem_tile", smem_tile)))
    naive_sectors, coalesced_sectors = (positive(fn, a, v) for a, v in (("naive_sectors", naive_sectors),
                                        ("coalesced_sectors", coalesced_sectors)))
    c = tiling._gpu(chip)
    fp32 = c.peak_flops("float32")
    peak = c.peak_flops("bfloat16", ExecUnit.MATRIX)
    bw = c.hbm_bandwidth
    smem_bw = tiling.SHARED_BYTES_PER_CLOCK * c.sm_clock() * c.compute_units
    fmas, flops = m * n * k, 2.0 * m * n * k
    steps = []

    def add(name, how, hbm, shared, rate=fp32):
        steps.append(Step(name, how, flops, hbm, shared, flops / rate, hbm / bw, shared / smem_bw, peak))

    for name, how, sectors in (("1 naive", "lanes walk down a column: strided loads", naive_sectors),
                               ("2 coalesced", "lanes walk along a row: coalesced loads", coalesced_sectors)):
        add(name, how, sectors / measured**3 * SECTOR * fmas, 0.0)
    t = smem_tile
    add("3 shared-memory tiles", f"{t}×{t} tiles of A and B in shared memory",
        _panels(m, n, k, t), FP32 * (2 * fmas + m * k * -(-n // t) + k * n * -(-m // t)))
    bm, bn, tm, tn = reg_tile
    add("4 register tiles", f"{bm}×{bn} block tiles, {tm}×{tn} outputs per thread in registers",
        _panels(m, n, k, max(bm, bn)),
        FP32 * (fmas * (tm + tn) / (tm * tn) + m * k * -(-n // bn) + k * n * -(-m // bm)))
    p = tiling.plan(m, n, k, tc_tile, c, dtype="bfloat16")
    steps.append(Step("5 tensor-core tiles", f"bfloat16 {tiling.Tile(*tc_tile)} tiles on the tensor cores",
                      flops, p.traffic, 0.0, p.compute_time, p.memory_time, p.shared_time, peak))
    return steps


__all__ = ["Step", "progression"]
