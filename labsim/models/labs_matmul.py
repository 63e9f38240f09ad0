"""Chapter 10's lab: a matrix product made fast step by step, in the manner of Boehm's CUDA worklog.

:func:`progression` gives five kernels for ``C[m, n] = A[m, k] @ B[k, n]`` on one chip, each a kernel the
SIMT machine runs on small matrices:

1. **naive**: one program per column of C, its lanes walking down the rows: each load of A is strided.
2. **coalesced**: one program per row of C, its lanes walking along the row: each load of B is coalesced.
   Steps 1 and 2 are the lab's kernels (``ls.labs``' "matmul" task): the SIMT machine runs them at
   ``measured``³ and counts their sectors. Their time is the larger of their FLOPs at the float32 rate
   and their bytes (sectors per multiply-add, scaled to the large product) at the HBM bandwidth.
3. **shared-memory tiles**: :func:`~labsim.models.labs_tiled.tiled_kernel` with ``T × T`` threads per
   ``T × T`` tile of C, copying ``T``-wide tiles of A and B to shared memory (Boehm's kernel 3).
4. **register tiles**: the same builder with ``TM × TN`` outputs per thread held in registers, so each
   thread reads ``TM + TN`` values from shared memory for ``TM · TN`` multiply-adds (Boehm's kernel 5).
5. **tensor-core tiles**: the compiler's kernel for a bfloat16 ``a @ b`` (``ls.compile``): operand
   tiles in shared memory, the chip's matrix instruction (wgmma on Hopper, mma.sync on Ampere).

Steps 3 to 5 are measured, then extrapolated (labsim's closed form). Each runs one wave (as many blocks
as fit on one SM, ``b``) on one SM at two depths, K = BK and 2·BK, which must give NumPy's product.
Its wave's cycles are a straight line in K through the two runs, ``c(K)``; its bytes per block too,
``q(K)``. For ``[m, k] @ [k, n]`` with ``BM × BN`` tiles on ``S`` SMs at SM clock ``f``::

    tiles = ⌈m / BM⌉ · ⌈n / BN⌉,   waves = ⌈tiles / (S · b)⌉
    SM time = waves · c(k) / f,    HBM time = tiles · q(k) / HBM bandwidth
    time = max(SM time, HBM time)

labsim's model, not a GPU: no L1 or L2 cache (every sector a kernel touches comes from HBM, so steps
1 and 2 are worse than on a real GPU, whose caches catch much of the rereading); the SIMT machine's
issue model has no memory bandwidth and no shared-memory bank limit, hence the separate HBM time;
steps 1–4 in float32 on the CUDA cores.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from ..hardware import ExecUnit
from ..machines import tiling
from ..machines.simt import SECTOR
from ..support.errors import ArgumentError, count, positive
from .labs_tiled import Measured, measure_tensor, measure_tiled

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
    measured: Measured | None = None  # steps 3-5: the SIMT machine's runs (compute_time is then their SM time)

    @property
    def time(self) -> float:
        return max(self.compute_time, self.memory_time, self.shared_time)

    @property
    def bound(self) -> str:
        sm = "SM cycles" if self.measured is not None else "compute"
        t = {sm: self.compute_time, "HBM": self.memory_time, "shared memory": self.shared_time}
        return max(t, key=t.get)

    @property
    def achieved(self) -> float:
        return self.flops / self.time

    @property
    def fraction(self) -> float:
        """Achieved FLOP/s over the chip's peak."""
        return self.achieved / self.peak

    def row(self) -> dict:
        r = self.measured
        run = ("its sectors, counted in the lab above" if r is None else
               f"{r.blocks_per_sm} block{'s' if r.blocks_per_sm > 1 else ''} on one SM: {r.cycles[0]:,} cycles at "
               f"K = {r.ks[0]}, {r.cycles[1]:,} at K = {r.ks[1]}")
        return {"step": self.name, "how": self.how, "run on the SIMT machine": run, "TFLOP/s": self.achieved / 1e12,
                "% of peak": 100 * self.fraction, "bound": self.bound}


def _scaled(name: str, how: str, meas: Measured, m: int, n: int, k: int, c, flops: float, peak: float) -> Step:
    """A measured kernel extrapolated to ``[m, k] @ [k, n]`` on ``c`` by waves (the module's closed form)."""
    bm, bn = meas.tile
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    waves = math.ceil(tiles / (c.compute_units * meas.blocks_per_sm))
    hbm = tiles * meas.block_bytes(k)
    return Step(name, how, flops, hbm, 0.0, waves * meas.wave_cycles(k) / c.sm_clock(), hbm / c.hbm_bandwidth,
                0.0, peak, meas)


def progression(m: int, n: int, k: int, chip="H100 SXM", *, naive_sectors: float, coalesced_sectors: float,
                measured: int = 32, smem_tile: int = 32, reg_tile: tuple = (128, 128, 8, 8),
                reg_depth: int = 8) -> list[Step]:
    """The five steps for ``[m, k] @ [k, n]`` on ``chip``. ``naive_sectors`` and ``coalesced_sectors``
    are the sectors the SIMT machine counted for the lab's kernels on ``measured``³ matrices; step 3
    uses ``smem_tile`` (T: T × T threads, T × T × T tiles), step 4 ``reg_tile = (BM, BN, TM, TN)`` with
    K tiles ``reg_depth`` deep. Steps 3 to 5 run on the SIMT machine (a few seconds per chip, once per
    process and tile)."""
    fn = "ls.labs.progression"
    m, n, k, measured, smem_tile, reg_depth = (count(fn, a, v, minimum=1) for a, v in (
        ("m", m), ("n", n), ("k", k), ("measured", measured), ("smem_tile", smem_tile), ("reg_depth", reg_depth)))
    naive_sectors, coalesced_sectors = (positive(fn, a, v) for a, v in (("naive_sectors", naive_sectors),
                                        ("coalesced_sectors", coalesced_sectors)))
    if not (isinstance(reg_tile, tuple) and len(reg_tile) == 4 and all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in reg_tile)):
        raise ArgumentError(f"{fn}: reg_tile={reg_tile!r} must be four positive ints (BM, BN, TM, TN)")
    c = tiling._gpu(chip)
    key = chip if isinstance(chip, str) else c  # a preset name: its runs are kept for the process
    fp32 = c.peak_flops("float32")
    peak = c.peak_flops("bfloat16", ExecUnit.MATRIX)
    bw = c.hbm_bandwidth
    fmas, flops = m * n * k, 2.0 * m * n * k
    steps = []
    for name, how, sectors in (("1 naive", "lanes walk down a column: strided loads", naive_sectors),
                               ("2 coalesced", "lanes walk along a row: coalesced loads", coalesced_sectors)):
        hbm = sectors / measured**3 * SECTOR * fmas
        steps.append(Step(name, how, flops, hbm, 0.0, flops / fp32, hbm / bw, 0.0, peak))
    t = smem_tile
    steps.append(_scaled("3 shared-memory tiles", f"{t}×{t} tiles of A and B in shared memory",
                         measure_tiled(key, (t, t, t), (1, 1)), m, n, k, c, flops, peak))
    bm, bn, tm, tn = reg_tile
    steps.append(_scaled("4 register tiles", f"{bm}×{bn} block tiles, {tm}×{tn} outputs per thread in registers",
                         measure_tiled(key, (bm, bn, reg_depth), (tm, tn)), m, n, k, c, flops, peak))
    t5 = measure_tensor(key)
    ins = "wgmma" if t5.ir.arch == "Hopper" else "mma.sync" if t5.ir.arch == "Ampere" else "tensor-core MMA"
    steps.append(_scaled("5 tensor-core tiles",
                         f"bfloat16 {t5.tile[0]}×{t5.tile[1]} tiles, {ins} (the compiler's kernel)",
                         t5, m, n, k, c, flops, peak))
    return steps


__all__ = ["Step", "progression"]
