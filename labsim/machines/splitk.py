"""Split-K and stream-K: remedies for wave quantisation on GEMMs with few output tiles (chapter 10).

A GEMM ``[M, K] @ [K, N]`` cut into ``BM × BN`` output tiles has ``tiles = ⌈M/BM⌉·⌈N/BN⌉`` blocks. When
that is smaller than the SMs can hold (a small M × N with a large K), most SMs idle while a few walk the
whole K. Three ways to run it, each a closed form here on top of :func:`labsim.machines.tiling.plan`
(same tile, same per-SM rate, same occupancy):

* **tiles**: one block per output tile, exactly ``tiling.plan``'s compute time: ``waves · per-SM blocks ·
  2·BM·BN·K / per-SM rate``.
* **split-K** ``s``: each tile's K is cut into ``s`` chunks of ``⌈K/s⌉`` (rounded up to BK), so ``s·tiles``
  blocks run; each writes a float32 partial tile, and a second pass reads the ``s`` partials and writes C
  (CUTLASS's "parallel split-K"). Its time: the main pass (compute, or HBM traffic of the inputs plus
  the partials) plus the reduction pass ``(s·M·N·4 + M·N·s_out) / B``.
* **stream-K**: a persistent kernel of exactly ``SMs · blocks per SM`` workers; the ``tiles · ⌈K/BK⌉``
  MAC-loop iterations are dealt out in equal contiguous ranges of ``⌈iterations / workers⌉``. A tile
  whose iterations fall to ``p`` workers needs ``p − 1`` float32 partials written and read back (the
  "fix-up"), counted as HBM traffic.

The HBM traffic of the inputs is the same for all three (``tiling.plan``'s, less the output write):
splitting K changes which block reads a panel's slice, not how many times the panels are read. This and
the perfect load balance of stream-K are labsim's simplifications; CUTLASS's stream-K also mixes
data-parallel and stream-K tiles, and real reductions overlap in part with the main pass.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware import Chip, get
from .tiling import (_ITEMSIZE, SHARED_BYTES_PER_CLOCK, Tile, TilePlan, TilingError, _positive, _rate, plan,
                     sm_clock)

SCHEMES = ("tiles", "split-K", "stream-K")
PARTIAL_BYTES = 4  # float32 partial sums


@dataclass(frozen=True)
class SplitPlan:
    """One way to run the GEMM: ``scheme``, ``splits`` (split-K's s; 1 otherwise), ``units`` (blocks or
    workers launched), ``waves``, ``busy_sms`` (SMs with work in the first wave), and its times (s)."""

    scheme: str
    chip: str
    m: int
    n: int
    k: int
    tile: Tile
    splits: int
    units: int
    waves: int
    busy_sms: int
    sms: int
    compute_time: float  # tensor cores
    shared_time: float  # shared memory (tile copies in, fragment loads out), as tiling.plan counts it
    memory_time: float  # HBM
    extra_time: float  # split-K's reduction pass; 0 otherwise
    extra_bytes: int  # partial tiles written and read back (split-K's partials, stream-K's fix-up)

    @property
    def time(self) -> float:
        return max(self.compute_time, self.shared_time, self.memory_time) + self.extra_time

    @property
    def achieved_flops(self) -> float:
        return 2 * self.m * self.n * self.k / self.time


def _base(m, n, k, tile, chip, dtype) -> tuple[TilePlan, float, float]:
    """``tiling.plan`` of the tile (it must fit), the SM's tensor-core rate for it (FLOP/s, ``plan``'s
    ``feed`` factor applied) and its shared-memory rate (B/s)."""
    p = plan(m, n, k, tile, chip, dtype=dtype)
    c = get(chip)
    feed = min(1.0, p.occupancy.warps_per_sm / c.sm.sub_partitions)
    return p, _rate(c, dtype) / c.compute_units * feed, SHARED_BYTES_PER_CLOCK * sm_clock(c)


def _per_block(t: Tile, kk: int, s: int, per_sm: float, smem_rate: float) -> tuple[float, float]:
    """Tensor-core and shared-memory seconds of one block walking ``kk`` of K (``tiling.plan``'s terms)."""
    return 2 * t.bm * t.bn * kk / per_sm, kk * s * ((t.bm + t.bn) + t.warps * (t.wm + t.wn)) / smem_rate


def _inputs(p: TilePlan) -> int:
    s = _ITEMSIZE[p.dtype]
    return p.traffic - max(s, 2) * p.m * p.n


def tiles_plan(m: int, n: int, k: int, tile=(128, 128, 32), chip: Chip | str = "H100 SXM", *,
               dtype: str = "bfloat16") -> SplitPlan:
    """One block per output tile (the plain GEMM of ``tiling.plan``)."""
    return split_k(m, n, k, 1, tile, chip, dtype=dtype)


def split_k(m: int, n: int, k: int, splits: int, tile=(128, 128, 32), chip: Chip | str = "H100 SXM", *,
            dtype: str = "bfloat16") -> SplitPlan:
    """Split-K with ``splits`` chunks of K per tile (``splits=1`` is the plain GEMM), see the module."""
    splits = _positive("split_k", "splits", splits)
    p, per_sm, smem_rate = _base(m, n, k, tile, chip, dtype)
    t, sms = p.tile, get(chip).compute_units
    chunk = -(-k // splits)
    chunk = -(-chunk // t.bk) * t.bk  # whole BK steps
    if splits > 1 and (splits - 1) * chunk >= k:
        raise TilingError(f"split_k: splits={splits} leaves an empty chunk of K={k} (chunks of {chunk}, BK={t.bk}); "
                          f"use at most {-(-k // t.bk)} splits")
    tiles = p.blocks
    units = tiles * splits
    concurrent = p.concurrent
    waves = -(-units // concurrent)
    per_sm_blocks = -(-min(units, concurrent) // sms)
    tc, sh = _per_block(t, k if splits == 1 else chunk, _ITEMSIZE[dtype], per_sm, smem_rate)
    compute, shared = waves * per_sm_blocks * tc, waves * per_sm_blocks * sh
    s_out = max(_ITEMSIZE[dtype], 2)
    if splits == 1:
        partial, extra = 0, 0.0
        memory = p.traffic / p.bandwidth
    else:
        partial = splits * m * n * PARTIAL_BYTES
        memory = (_inputs(p) + partial) / p.bandwidth
        extra = (partial + s_out * m * n) / p.bandwidth
    return SplitPlan(scheme="tiles" if splits == 1 else "split-K", chip=p.chip, m=m, n=n, k=k, tile=t, splits=splits,
                     units=units, waves=waves, busy_sms=min(sms, -(-min(units, concurrent) // per_sm_blocks)), sms=sms,
                     compute_time=compute, shared_time=shared, memory_time=memory, extra_time=extra,
                     extra_bytes=2 * partial)


def stream_k_fixups(tiles: int, iters_per_tile: int, workers: int) -> int:
    """The partial tiles stream-K writes and reads back: workers take contiguous ranges of
    ``⌈tiles·iters_per_tile / workers⌉`` iterations, and a tile covered by ``p`` workers needs ``p − 1``."""
    tiles, iters_per_tile, workers = (_positive("stream_k_fixups", name, v) for name, v in
                                      (("tiles", tiles), ("iters_per_tile", iters_per_tile), ("workers", workers)))
    total = tiles * iters_per_tile
    q = -(-total // workers)
    # the cuts b·q (b = 1 .. workers-1, below total) where one worker's range ends; a cut inside a tile
    # (not a multiple of iters_per_tile) splits it once more. b·q is a multiple of iters_per_tile exactly
    # when b is a multiple of iters_per_tile / gcd(q, iters_per_tile): counted in O(1)
    cuts = min(workers - 1, (total - 1) // q)
    return cuts - cuts // (iters_per_tile // math.gcd(q, iters_per_tile))


def stream_k(m: int, n: int, k: int, tile=(128, 128, 32), chip: Chip | str = "H100 SXM", *,
             dtype: str = "bfloat16") -> SplitPlan:
    """Stream-K: ``SMs · blocks per SM`` persistent workers share the MAC-loop iterations evenly."""
    p, per_sm, smem_rate = _base(m, n, k, tile, chip, dtype)
    t, sms = p.tile, get(chip).compute_units
    iters = -(-k // t.bk)
    workers = p.concurrent
    total = p.blocks * iters
    q = -(-total // workers)
    used = -(-total // q)  # workers that get any iterations
    bpsm = p.occupancy.blocks_per_sm
    per_sm_units = min(bpsm, -(-used // sms))
    tc, sh = _per_block(t, q * t.bk, _ITEMSIZE[dtype], per_sm, smem_rate)
    compute, shared = per_sm_units * tc, per_sm_units * sh
    fix = stream_k_fixups(p.blocks, iters, workers) * t.bm * t.bn * PARTIAL_BYTES * 2
    memory = (p.traffic + fix) / p.bandwidth
    return SplitPlan(scheme="stream-K", chip=p.chip, m=m, n=n, k=k, tile=t, splits=1, units=workers, waves=1,
                     busy_sms=min(sms, used), sms=sms, compute_time=compute, shared_time=shared, memory_time=memory,
                     extra_time=0.0,
                     extra_bytes=fix)


def compare(m: int, n: int, k: int, splits: int = 8, tile=(128, 128, 32), chip: Chip | str = "H100 SXM", *,
            dtype: str = "bfloat16") -> dict[str, SplitPlan]:
    """The three schemes side by side: ``{"tiles": ..., "split-K": ..., "stream-K": ...}``."""
    return {"tiles": tiles_plan(m, n, k, tile, chip, dtype=dtype),
            "split-K": split_k(m, n, k, splits, tile, chip, dtype=dtype),
            "stream-K": stream_k(m, n, k, tile, chip, dtype=dtype)}


__all__ = ["SCHEMES", "PARTIAL_BYTES", "SplitPlan", "tiles_plan", "split_k", "stream_k", "stream_k_fixups", "compare"]
