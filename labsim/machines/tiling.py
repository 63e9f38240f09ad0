"""Tiling a matrix product on a GPU: thread-block tiles in shared memory, warp tiles, tensor-core fragments.

Introduced in "Tiling: feeding the matrix units" (chapter 10). ``C[M, N] = A[M, K] @ B[K, N]`` runs as a
grid of thread blocks, one per ``BM × BN`` tile of C. Each block walks K in steps of ``BK``: it copies
an ``BM × BK`` tile of A and a ``BK × BN`` tile of B from HBM into shared memory (``stages`` of them in
flight, a software pipeline), and its warps each compute a ``WM × WN`` warp tile of C out of tensor-core
fragments (``mma.sync`` m16n8k16 for 16-bit inputs: A 16×16, B 16×8, C 16×8), accumulating in
registers. Everything this module reports is a function of those tile sizes:

* **shared memory** per block ``= stages · (BM·BK + BK·BN) · s`` bytes (``s`` bytes per element), checked
  against the chip's per-block limit (``chip.sm.shared_per_block``: 227 KiB on H100);
* **registers** per thread: the accumulator ``WM·WN / 32`` (float32, spread over the warp's 32 threads),
  A and B fragments for two k-steps ``2·(4·WM/16 + 2·WN/8)``, and ``ADDRESS_REGISTERS`` for indices and
  addresses (a labsim estimate; a compiler's count differs by tens);
* **occupancy** from ``ls.simt.occupancy`` (threads, registers, shared memory, blocks per SM);
* **HBM traffic**: every block reads its whole row panel of A and column panel of B:
  ``s·(M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉) + s_out·M·N``, so the **arithmetic intensity** is ``2MNK`` over that, and
  one tile's own intensity is ``2·BM·BN / (s·(BM + BN))`` FLOP per byte;
* **shared memory time**: each k step writes the A and B tiles into shared memory and each warp reads its
  fragments out, ``K·s·((BM + BN) + warps·(WM + WN))`` bytes per block, at ``SHARED_BYTES_PER_CLOCK``
  (32 banks × 4 B) per SM clock (the clock implied by the preset's fp32 rate, :func:`sm_clock`). Small
  warp tiles reread the same operands many times and are limited here;
* **time**: the largest of the compute, HBM and shared-memory times (the copies of ``stages ≥ 2`` overlap
  the math; with one stage the HBM time adds). Compute runs in *waves*: ``blocks_per_sm · SMs`` blocks at a time,
  each wave as long as a full one, so a grid that leaves the last wave part-empty pays for it, and the
  tiles at the edges of C are charged as whole tiles (tile quantisation). An SM whose resident warps are
  fewer than its sub-partitions (4) leaves tensor cores without a warp to issue to, and runs at that
  fraction of its rate.

**L2.** Blocks start in row-major order, ``blocks_per_sm · SMs`` at a time (a *wave*). With ``l2=True``
(the default) the blocks of one wave that share a row panel of A or a column panel of B read it from
HBM once, provided the wave's panels fit in the chip's L2 (``chip.onchip["L2"]``; a wave whose panels
do not fit shares only the fraction that does, see :func:`_wave_traffic`). With ``l2=False``, or on a
preset without a recorded L2, every block reads its own panels (the formula above, an upper bound).

Simplifications (labsim's, not how a GPU works): L2 as a perfect cache of one wave's panels and
nothing more (no reuse across waves, no eviction inside one), ``mma.sync`` fragments by default on every
generation (Hopper GEMMs use ``wgmma`` on warpgroup tiles of 64 rows fed by TMA; ``plan(..., mma="wgmma")``
is labsim's opt-in warpgroup variant, see :func:`plan`), no bank conflicts, and the peak rate reached
whenever a tensor core has a warp.

:func:`tune` searches the tile space, as TVM's and Triton's auto-tuners do (they time real kernels;
labsim evaluates this model), and returns the best tile with the whole landscape it searched.
:mod:`labsim.machines.splitk` builds split-K and stream-K on top of :func:`plan`, for products with too
few output tiles to fill the SMs.
"""
from __future__ import annotations

from ..support.errors import LabsimError

import itertools
import math
from dataclasses import dataclass, field, replace

from ..hardware import WARP_SIZE, Chip, ChipKind, ExecUnit, get
from ..hardware.chip import TF32
from .simt import OccupancyError, occupancy
from .simt.occupancy import Occupancy

# mma.sync.m16n8k16 (bf16/f16 inputs, f32 accumulate): the PTX ISA's tensor-core fragment, per warp
FRAGMENT = (16, 8, 16)  # (m, n, k)
# wgmma.mma_async.m64nNk16 (PTX ISA, sm_90a): one warpgroup of 4 warps, M = 64, N a multiple of 8 up to 256
WGMMA = (64, 8, 16, 256)  # (m, n step, k, largest n)
WARPGROUP = 4 * WARP_SIZE  # threads: a warpgroup is four warps
MMA_KINDS = ("mma.sync", "wgmma")
WARP = WARP_SIZE  # threads per warp (hardware.WARP_SIZE, stated once)
ADDRESS_REGISTERS = 16  # labsim estimate: registers for indices, addresses and loop counters
# shared memory serves 32 banks x 4 bytes per clock per SM (CUDA C++ Programming Guide, "Shared Memory":
# 32 banks, successive 32-bit words in successive banks, one access per bank per clock)
SHARED_BYTES_PER_CLOCK = 128
_ITEMSIZE = {"bfloat16": 2, "float16": 2, "float32": 4, "float8_e4m3fn": 1, "int8": 1}


class TilingError(LabsimError, ValueError):
    """A tile that cannot run: the message names the limit it breaks."""


@dataclass(frozen=True)
class Tile:
    """A thread-block tile ``bm × bn × bk``, its warp tile ``wm × wn`` and its pipeline ``stages``."""

    bm: int
    bn: int
    bk: int
    wm: int = 0  # 0: half of bm (at least one fragment)
    wn: int = 0  # 0: half of bn
    stages: int = 2

    def __post_init__(self) -> None:
        for name in ("bm", "bn", "bk", "stages"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise TilingError(f"tile {name} must be a positive integer, got {v!r}")
        if not self.wm:
            object.__setattr__(self, "wm", max(FRAGMENT[0], self.bm // 2))
        if not self.wn:
            object.__setattr__(self, "wn", max(FRAGMENT[1], self.bn // 2))

    @property
    def warps(self) -> int:
        return (self.bm // self.wm) * (self.bn // self.wn)

    def __str__(self) -> str:
        return f"{self.bm}×{self.bn}×{self.bk} (warp {self.wm}×{self.wn}, {self.stages} stages)"


@dataclass(frozen=True)
class TilePlan:
    """A GEMM under one tile on one chip: resources, fit, traffic, intensity and time.

    ``problem`` is None for a tile that runs, else the sentence naming the limit it breaks (then the
    time fields are ``inf``)."""

    chip: str
    m: int
    n: int
    k: int
    tile: Tile
    dtype: str
    bandwidth: float  # B/s used for the memory time
    shared_bytes: int
    shared_limit: int
    registers: int  # per thread
    threads: int  # per block
    blocks: int  # in the grid
    traffic: int  # HBM bytes
    flops: int  # 2·M·N·K
    problem: str | None = None
    limit: str | None = None  # the limit a tile that cannot run breaks: "fragments", "shared memory", ...
    occupancy: Occupancy | None = field(default=None, repr=False)
    mma: str = "mma.sync"  # the tensor-core instruction modelled (see plan)
    concurrent: int = 0  # blocks resident on the whole chip at once
    waves: int = 0
    compute_time: float = math.inf
    memory_time: float = math.inf
    shared_time: float = math.inf  # shared-memory traffic (tile copies in, fragment loads out) at its bandwidth

    @property
    def fits(self) -> bool:
        return self.problem is None

    @property
    def time(self) -> float:
        if not self.fits:
            return math.inf
        if self.tile.stages == 1:
            return max(self.compute_time, self.shared_time) + self.memory_time
        return max(self.compute_time, self.memory_time, self.shared_time)

    @property
    def intensity(self) -> float:
        """FLOPs per byte of HBM traffic for the whole product."""
        return self.flops / self.traffic

    @property
    def tile_intensity(self) -> float:
        """One tile's FLOPs per byte it copies in: ``2·BM·BN / (s·(BM + BN))``."""
        t = self.tile
        return 2 * t.bm * t.bn / (_ITEMSIZE[self.dtype] * (t.bm + t.bn))

    @property
    def bound(self) -> str:
        """Which term sets the time: "compute", "memory" (HBM) or "shared memory"."""
        terms = {"compute": self.compute_time, "memory": self.memory_time, "shared memory": self.shared_time}
        return max(terms, key=terms.get)

    @property
    def achieved_flops(self) -> float:
        return self.flops / self.time if self.fits else 0.0

    def row(self) -> dict:
        """One row for a table (times in µs)."""
        return {"tile": f"{self.tile.bm}×{self.tile.bn}×{self.tile.bk}", "warp": f"{self.tile.wm}×{self.tile.wn}",
                "stages": self.tile.stages, "shared KiB": self.shared_bytes / 1024,
                "registers": self.registers, "blocks/SM": self.occupancy.blocks_per_sm if self.occupancy else 0,
                "traffic MB": self.traffic / 1e6, "FLOP/B": self.intensity,
                "time µs": self.time * 1e6 if self.fits else math.inf, "problem": self.problem or ""}


def _gpu(chip: Chip | str) -> Chip:
    c = get(chip)
    if c.kind is not ChipKind.GPU or c.sm is None or "compute_units" not in c.sources:
        raise TilingError(f"{c.name}: tiling needs a GPU preset with per-SM limits and a sourced SM count "
                          f"(A100 80GB, H100 SXM, H200); for a TPU see ls.tpu.schedule_dot")
    return c


def _rate(c: Chip, dtype: str) -> float:
    key = TF32 if dtype == "float32" and TF32 in c.matrix_flops else dtype
    if key not in c.matrix_flops:
        raise TilingError(f"{c.name} has no tensor-core rate for {dtype!r}; it knows {sorted(c.matrix_flops)}")
    return c.peak_flops(key, ExecUnit.MATRIX)


def registers_per_thread(tile: Tile, mma: str = "mma.sync") -> int:
    """The accumulator, two k-steps of A and B fragments, and the address registers (see the module).
    With ``mma="wgmma"`` the warp tile is a warpgroup's: its accumulator is spread over 128 threads and
    no A or B fragments are staged in registers (both are read from shared memory)."""
    if mma == "wgmma":
        return tile.wm * tile.wn // WARPGROUP + ADDRESS_REGISTERS
    acc = tile.wm * tile.wn // WARP
    frags = 2 * (4 * (tile.wm // FRAGMENT[0]) + 2 * (tile.wn // FRAGMENT[1]))
    return acc + frags + ADDRESS_REGISTERS


def _shape_problem(tile: Tile, dtype: str, mma: str = "mma.sync") -> str | None:
    fm, fn, fk = FRAGMENT
    if tile.bm % tile.wm or tile.bn % tile.wn:
        return f"the warp tile {tile.wm}×{tile.wn} does not divide the block tile {tile.bm}×{tile.bn}"
    if mma == "wgmma":
        wm, wn, wk, wmax = WGMMA
        if tile.wm % wm or tile.wn % wn or tile.wn > wmax:
            return (f"the warpgroup tile {tile.wm}×{tile.wn} is not a whole number of wgmma m{wm}nNk{wk} products "
                    f"(M a multiple of {wm}, N a multiple of {wn} up to {wmax})")
        if tile.bk % wk:
            return f"BK = {tile.bk} is not a multiple of wgmma's k = {wk}"
        return None
    if tile.wm % fm or tile.wn % fn:
        return (f"the warp tile {tile.wm}×{tile.wn} is not a whole number of {fm}×{fn} "
                f"tensor-core fragments (mma m{fm}n{fn}k{fk})")
    if tile.bk % fk:
        return f"BK = {tile.bk} is not a multiple of the fragment's k = {fk} (mma m{fm}n{fn}k{fk})"
    return None


def _wave_traffic(m, n, k, t: Tile, gm, gn, concurrent, s, s_out, l2_bytes) -> int:
    """HBM bytes when L2 keeps the panels one wave of blocks shares (blocks start in row-major order).

    The blocks of a wave walk K together, so L2 needs to hold only the k-slices they are working on:
    ``(distinct rows·BM + distinct columns·BN)·BK·s·stages`` bytes. A wave whose footprint fits reads
    each distinct panel once (``unique`` bytes); one that does not keeps the fraction ``L2 / footprint``
    and reads ``unique + (own - unique)·(1 - L2/footprint)``, where ``own`` is what its blocks would read
    with no sharing (labsim's interpolation)."""
    rows = [min(t.bm, m - r * t.bm) for r in range(gm)]
    cols = [min(t.bn, n - c * t.bn) for c in range(gn)]
    rpre = list(itertools.accumulate(rows, initial=0))
    cpre = list(itertools.accumulate(cols, initial=0))
    all_cols = cpre[-1]

    def own(b0, b1):  # Σ over blocks b0..b1-1 (row-major) of their row size + column size
        r0, r1 = b0 // gn, (b1 - 1) // gn
        if r0 == r1:
            return rows[r0] * (b1 - b0) + cpre[(b1 - 1) % gn + 1] - cpre[b0 % gn]
        first = rows[r0] * (gn - b0 % gn) + all_cols - cpre[b0 % gn]
        last = rows[r1] * ((b1 - 1) % gn + 1) + cpre[(b1 - 1) % gn + 1]
        mid = (rpre[r1] - rpre[r0 + 1]) * gn + all_cols * (r1 - r0 - 1)
        return first + mid + last

    total = 0.0
    for w0 in range(0, gm * gn, concurrent):
        w1 = min(gm * gn, w0 + concurrent)
        r0, r1 = w0 // gn, (w1 - 1) // gn
        width_c = all_cols if r1 > r0 else cpre[(w1 - 1) % gn + 1] - cpre[w0 % gn]
        width = rpre[r1 + 1] - rpre[r0] + width_c
        footprint = width * t.bk * s * t.stages
        miss = max(0.0, 1.0 - l2_bytes / footprint)
        total += (width + (own(w0, w1) - width) * miss) * k * s
    return int(round(total)) + s_out * m * n


def plan(m: int, n: int, k: int, tile: Tile | tuple = (128, 128, 32), chip: Chip | str = "H100 SXM", *,
         dtype: str = "bfloat16", bandwidth: float | None = None, l2: bool = True, check: bool = True,
         mma: str = "mma.sync") -> TilePlan:
    """The GEMM ``[m, k] @ [k, n]`` under ``tile`` on ``chip`` (``bandwidth`` overrides the HBM's, in B/s).

    ``l2=True`` lets the chip's L2 serve the panels that the blocks of one wave share (see the module);
    ``l2=False`` reads every block's panels from HBM.

    ``mma="mma.sync"`` (the default, every generation) models warps that stage ``mma.sync`` fragments
    from shared memory in registers. ``mma="wgmma"`` (compute capability 9.0 only) is labsim's warpgroup
    variant: ``wm × wn`` is then one warpgroup's tile (4 warps, 128 threads; M a multiple of 64, N of 8
    up to 256), A and B are read by the tensor cores straight from shared memory (no fragments in
    registers), and each warpgroup reads its A rows and B columns once per k step, so the shared-memory
    bytes are ``K·s·((BM + BN) + warpgroups·(WM + WN))`` at the same bank bandwidth (an assumption:
    NVIDIA does not publish the rate at which wgmma reads shared memory). TMA copies and warp
    specialisation are not modelled.

    An impossible tile raises :class:`TilingError` naming the limit it breaks; with ``check=False`` it
    comes back as a plan with ``problem`` set and infinite time (the tuner keeps those in its landscape).
    """
    c = _gpu(chip)
    if mma not in MMA_KINDS:
        raise TilingError(f"plan: mma must be one of {MMA_KINDS}, got {mma!r}")
    if mma == "wgmma" and c.sm.compute_capability != "9.0":
        raise TilingError(f"plan: mma='wgmma' needs a Hopper GPU (compute capability 9.0); the {c.name} has "
                          f"{c.sm.compute_capability}")
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise TilingError(f"plan: {name} must be a positive integer, got {v!r}")
    t = tile if isinstance(tile, Tile) else Tile(*tile)
    if dtype not in _ITEMSIZE:
        raise TilingError(f"plan: dtype must be one of {sorted(_ITEMSIZE)}, got {dtype!r}")
    s = _ITEMSIZE[dtype]
    s_out = s if s >= 2 else 2
    bw = c.hbm_bandwidth if bandwidth is None else float(bandwidth)
    if not bw > 0:
        raise TilingError(f"plan: bandwidth must be positive, got {bandwidth!r}")
    peak = _rate(c, dtype)
    sm = c.sm
    gm, gn = -(-m // t.bm), -(-n // t.bn)
    shared = t.stages * (t.bm * t.bk + t.bk * t.bn) * s
    regs = registers_per_thread(t, mma) if not (t.bm % t.wm or t.bn % t.wn) else 0
    threads = t.warps * (WARPGROUP if mma == "wgmma" else WARP) if not (t.bm % t.wm or t.bn % t.wn) else 0
    traffic = s * (m * k * gn + k * n * gm) + s_out * m * n
    base = dict(chip=c.name, m=m, n=n, k=k, tile=t, dtype=dtype, bandwidth=bw, shared_bytes=shared,
                shared_limit=sm.shared_per_block, registers=regs, threads=threads, blocks=gm * gn,
                traffic=traffic, flops=2 * m * n * k, mma=mma)
    problem, limit = _shape_problem(t, dtype, mma), "fragments"
    if problem is None and shared > sm.shared_per_block:
        problem, limit = (f"{t.stages}·(BM·BK + BK·BN)·{s} bytes = {shared / 1024:.0f} KiB of shared memory "
                          f"exceeds the {c.name}'s {sm.shared_per_block / 1024:.0f} KiB per block"), "shared memory"
    if problem is None and regs > sm.max_registers_per_thread:
        problem, limit = (f"a {t.wm}×{t.wn} warp tile needs about {regs} registers per thread, more than the "
                          f"limit of {sm.max_registers_per_thread} (compute capability {sm.compute_capability})"), \
            "registers"
    if problem is None and threads > sm.max_threads_per_block:
        unit = "warpgroups" if mma == "wgmma" else "warps"
        problem, limit = (f"{t.warps} {unit} = {threads} threads per block exceeds the limit of "
                          f"{sm.max_threads_per_block} threads per block"), "threads"
    occ = None
    if problem is None:
        try:
            occ = occupancy(c, threads, regs, shared)
        except OccupancyError as e:
            problem, limit = str(e), "registers per block" if "registers" in str(e) else "occupancy"
    if problem is not None:
        if check:
            raise TilingError(f"tile {t}: {problem}")
        return TilePlan(**base, problem=problem, limit=limit)
    concurrent = occ.blocks_per_sm * c.compute_units
    waves = -(-(gm * gn) // concurrent)
    if l2:
        traffic = _wave_traffic(m, n, k, t, gm, gn, concurrent, s, s_out, c.onchip.get("L2", 0))
        base["traffic"] = traffic
    # a wave: every SM runs blocks_per_sm whole tiles (edge tiles cost as much as full ones), sharing its
    # rate peak / SMs; with fewer resident warps than sub-partitions some tensor cores sit idle
    feed = min(1.0, occ.warps_per_sm / sm.sub_partitions)
    per_sm = peak / c.compute_units * feed
    wave_blocks = min(gm * gn, concurrent)
    per_sm_blocks = -(-wave_blocks // c.compute_units)
    compute = waves * per_sm_blocks * 2 * t.bm * t.bn * k / per_sm
    # shared memory: each k step writes the A and B tiles in and every warp reads its fragments out
    shared_bytes_block = k * s * ((t.bm + t.bn) + t.warps * (t.wm + t.wn))
    smem_time = waves * per_sm_blocks * shared_bytes_block / (SHARED_BYTES_PER_CLOCK * sm_clock(c))
    return TilePlan(**base, occupancy=occ, concurrent=concurrent, waves=waves, compute_time=compute,
                    memory_time=traffic / bw, shared_time=smem_time)


def sm_clock(c: Chip) -> float:
    """The SM clock implied by the preset (:meth:`labsim.Chip.sm_clock`)."""
    return get(c).sm_clock()


# the space the tuner searches (powers of two, as Triton's and CUTLASS's configurations are)
BLOCK_SIZES = (32, 64, 128, 256)
K_SIZES = (16, 32, 64, 128)
STAGES = (1, 2, 3, 4)
WARP_SPLITS = ((1, 1), (2, 1), (1, 2), (2, 2), (4, 2), (2, 4))  # (bm/wm, bn/wn)


def space(bms=BLOCK_SIZES, bns=BLOCK_SIZES, bks=K_SIZES, stages=STAGES, splits=WARP_SPLITS) -> list[Tile]:
    """Every tile of the search space (including impossible ones, which the landscape marks)."""
    out = []
    for bm, bn, bk, st, (sm_, sn) in itertools.product(bms, bns, bks, stages, splits):
        if bm % sm_ or bn % sn:
            continue
        out.append(Tile(bm, bn, bk, bm // sm_, bn // sn, st))
    return out


@dataclass(frozen=True)
class TuneResult:
    """The tuner's answer: the best plan and every plan it evaluated (``landscape``), feasible or not."""

    best: TilePlan
    landscape: tuple[TilePlan, ...] = field(repr=False)

    @property
    def feasible(self) -> tuple[TilePlan, ...]:
        return tuple(p for p in self.landscape if p.fits)

    @property
    def rejected(self) -> tuple[TilePlan, ...]:
        return tuple(p for p in self.landscape if not p.fits)

    def grid(self, rows: str = "bm", cols: str = "bn") -> tuple[list[int], list[int], list[list[float]]]:
        """The landscape folded onto two tile dimensions: the best time (s) for each pair (inf: none fits)."""
        rv = sorted({getattr(p.tile, rows) for p in self.landscape})
        cv = sorted({getattr(p.tile, cols) for p in self.landscape})
        z = [[min((p.time for p in self.landscape if getattr(p.tile, rows) == r and getattr(p.tile, cols) == c),
                  default=math.inf) for c in cv] for r in rv]
        return rv, cv, z


def tune(m: int, n: int, k: int, chip: Chip | str = "H100 SXM", *, dtype: str = "bfloat16",
         bandwidth: float | None = None, tiles=None, mma: str = "mma.sync") -> TuneResult:
    """Evaluate every tile of ``tiles`` (default :func:`space`) and return the fastest with the landscape.

    Ties go to the tile that comes first in the search order (smaller tiles first)."""
    tiles = space() if tiles is None else [t if isinstance(t, Tile) else Tile(*t) for t in tiles]
    if not tiles:
        raise TilingError("tune: the search space is empty")
    land = tuple(plan(m, n, k, t, chip, dtype=dtype, bandwidth=bandwidth, check=False, mma=mma) for t in tiles)
    ok = [p for p in land if p.fits]
    if not ok:
        raise TilingError(f"tune: none of the {len(land)} tiles fits on {land[0].chip}; "
                          f"the first fails because {land[0].problem}")
    best = min(ok, key=lambda p: p.time)
    return TuneResult(best=best, landscape=land)


__all__ = ["FRAGMENT", "WGMMA", "WARPGROUP", "MMA_KINDS", "ADDRESS_REGISTERS", "TilingError", "Tile", "TilePlan", "TuneResult", "plan", "tune",
           "space", "registers_per_thread", "BLOCK_SIZES", "K_SIZES", "STAGES", "WARP_SPLITS"]
