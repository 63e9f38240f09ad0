"""A TPU TensorCore: a dot tiled onto the MXU, with HBM → VMEM copies on a static schedule.

Introduced in "Inside a TPU" (chapter 9) and used again in "Tiling" (chapter 10). A TensorCore has
matrix units (MXUs: systolic arrays of ``chip.matrix_unit`` = R × C multiply-accumulators), a vector
unit (VPU), a programmer-managed on-chip memory (VMEM, ``chip.onchip["VMEM"]``) and HBM. Nothing
reaches the MXU from HBM directly: the compiler copies *blocks* of the operands into VMEM first.

labsim's model of one contraction kernel ``C[M, N] = A[M, K] @ B[K, N]`` (per batch entry):

* **Blocks.** The compiler cuts the product into a grid of VMEM blocks ``bm × bn × bk`` (as a Pallas
  ``BlockSpec`` does) and walks it in the order batch, i, j, k (k innermost). Each step copies the A
  block (i, k) and the B block (k, j) into VMEM, multiplies them on the MXUs into a float32
  accumulator, and after the last k step copies the C block (i, j) back to HBM. A copy is skipped when
  the block is the one already in VMEM from the step before (Pallas does the same), so with a single
  k block A's block is copied once per row of blocks.
* **The MXU.** Weight-stationary: a ``R × C`` tile of B is loaded into the array and the block's rows
  of A stream through it. So each step runs ``ceil(bk/R) · ceil(bn/C)`` *folds* (weight tiles), and
  the MXU does the work of the block rounded up to the array: ``2 · ⌈bm⌉₈ · ⌈bn⌉_C · ⌈bk⌉_R`` FLOPs
  (rows of A go through in groups of 8 sublanes). Its time is that padded work over the chip's peak
  matrix rate (all MXUs together; a float32 dot takes 1, 3 or 6 bfloat16 passes by ``precision``, as
  in :mod:`labsim.machines.roofline`). *MXU utilisation* is real FLOPs over padded FLOPs: the edge
  folds of a product that does not divide the array waste the rest of it.
* **The schedule** is static, made once by the compiler (no scheduler in hardware decides anything at
  run time). One DMA queue moves blocks between HBM and VMEM at the HBM bandwidth, in program order.
  With double buffering (two VMEM buffers per operand) the copy of step s+1 runs while step s
  computes; without it every copy waits for the compute before it, so the time is the plain sum.
* **The VPU** runs the rest of a fused kernel (an epilogue such as ``relu`` after the dot) on each
  finished C block, and every non-contraction kernel, at the rate the roofline charges them: the
  preset's derived VPU rate where it has one (TPU v5e, v5p: TensorCores × 4,096 f32 ALUs × clock), else
  the matrix rate, marked ``assumed`` (see the roofline).

Simplifications (labsim's, not how XLA schedules a TPU): one DMA queue, copies at the full HBM
bandwidth from the first byte, no fill/drain latency of the systolic array inside a step (the
``labsim.systolic`` machine counts those cycles), blocks chosen by a simple rule (:func:`choose_blocks`),
and all MXUs treated as one array with the chip's total rate.

Time and bytes come back through the same cost interface as the GPU: :func:`kernel_cost` returns a
:class:`~labsim.machines.roofline.KernelCost` (whose ``time`` is the schedule's length) and
:func:`estimate` a :class:`~labsim.machines.program_cost.ProgramCost`, so ``ls.tpu.estimate(prog, "TPU v5e")``
and ``ls.estimate(prog, "H100 SXM")`` compare field by field. :func:`run` (``ls.tpu.run(prog, *args)``)
plays the same schedule with real values: each MXU block through ``ls.systolic``, the rest on the VPU
with ``ls.evaluate``'s rules (:mod:`labsim.machines.tpu_run`).
"""
from __future__ import annotations

from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError, count, fits, flag, nonnegative

import math
from dataclasses import dataclass, field

import numpy as np

from ..compiler.kernel import Kernel, KernelKind
from ..compiler.program import Program
from ..compiler.tpu_blocks import DEFAULT_BLOCK, SUBLANES, block_rule, vmem_bytes as _vmem_bytes
from ..core import ops
from ..core.dtypes import ITEMSIZE, DtypeError, canonical_dtype as _canonical_dtype, itemsize as _dtype_itemsize
from ..core.ops import OpKind
from ..hardware import Chip, ChipKind, ExecUnit, get
from . import roofline
from .program_cost import ProgramCost
from .roofline import KernelCost
from .tpu_schedule import Plan, Step, Steps, Totals, aggregate

# SUBLANES (8 rows of A per MXU push) and DEFAULT_BLOCK (the starting block edge, 1,024) live with the block
# rule in labsim.compiler.tpu_blocks, which the tile plan (kernel.listing_for) reads too.


class TPUError(LabsimError, ValueError):
    """A request the TPU model cannot honour (not a TPU, a block that does not fit VMEM, ...)."""


@dataclass(frozen=True)
class TensorCore:
    """The parts of one TPU chip's TensorCore that the model uses, read from the chip's preset."""

    chip: Chip
    mxu: tuple[int, int]  # (rows R, cols C) of one MXU
    mxus: int | None  # how many MXUs (None: the preset does not record it)
    vmem: int | None  # bytes of VMEM (None: not recorded)
    clock: float  # Hz (0: not recorded)

    @classmethod
    def of(cls, chip: Chip | str) -> "TensorCore":
        chip = get(chip)
        if chip.kind is not ChipKind.TPU or not chip.matrix_unit:
            tpus = "'TPU v5e', 'TPU v6e'"
            raise TPUError(f"{chip.name} is not a TPU with a recorded MXU shape; pass a TPU preset ({tpus})")
        return cls(chip=chip, mxu=tuple(chip.matrix_unit),
                   mxus=chip.compute_units if "compute_units" in chip.sources else None,
                   vmem=int(chip.onchip["VMEM"]) if "VMEM" in chip.onchip else None, clock=chip.clock)

    @property
    def array_peak_flops(self) -> float:
        """The matrix rate the arrays give at the clock: MXUs × R × C multiply-adds × 2 FLOPs × clock
        (FLOP/s; 0 where the preset records no MXU count or clock). Compare it with the datasheet's peak."""
        r, c = self.mxu
        return float((self.mxus or 0) * r * c * 2 * self.clock)

    def describe(self) -> dict:
        """The TensorCore's numbers for a table or a drawing (None where the preset has none)."""
        c = self.chip
        return {"chip": c.name, "MXU": f"{self.mxu[0]}×{self.mxu[1]}", "MXUs": self.mxus,
                "bf16 peak (FLOP/s)": c.matrix_flops.get("bfloat16"), "clock (Hz)": self.clock or None,
                "VMEM (bytes)": self.vmem, "HBM (bytes)": c.hbm_capacity, "HBM bandwidth (B/s)": c.hbm_bandwidth,
                "ICI link (B/s, one way)": c.chip_link.bandwidth if c.chip_link else None}


@dataclass(frozen=True)
class Blocks:
    """The VMEM block of one grid step: ``bm`` rows of A and C, ``bn`` columns of B and C, ``bk`` of K."""

    bm: int
    bn: int
    bk: int

    def __post_init__(self) -> None:
        for name in ("bm", "bn", "bk"):
            object.__setattr__(self, name, _positive_int("ls.tpu.Blocks", name, getattr(self, name)))

    def vmem_bytes(self, in_itemsize: int, out_itemsize: int, buffers: int = 2) -> int:
        """VMEM the blocks take: ``buffers`` copies of the A and B blocks and of the C block, plus the
        float32 accumulator: ``buffers·(bm·bk + bk·bn)·s_in + buffers·bm·bn·s_out + 4·bm·bn``."""
        for name, v in (("in_itemsize", in_itemsize), ("out_itemsize", out_itemsize), ("buffers", buffers)):
            _positive_int("Blocks.vmem_bytes", name, v)
        return _vmem_bytes(self.bm, self.bn, self.bk, in_itemsize, out_itemsize, buffers)


def choose_blocks(m: int, n: int, k: int, core: TensorCore, in_itemsize: int = 2, out_itemsize: int = 4,
                  double_buffer: bool = True) -> Blocks:
    """labsim's compiler rule: blocks of edge ``max(1024, MXU side)``, shrunk to the problem (rounded up to
    8 rows and to the MXU's sides), then halved (k first, then n, then m) until they fit VMEM. The rule is
    :func:`labsim.compiler.tpu_blocks.block_rule`, the one the tile plan (``kernel.listing_for``) prints."""
    if not isinstance(core, TensorCore):
        core = TensorCore.of(core)  # a chip or its name
    m, n, k = (_positive_int("ls.tpu.choose_blocks", name, v) for name, v in (("m", m), ("n", n), ("k", k)))
    in_itemsize, out_itemsize = (_positive_int("ls.tpu.choose_blocks", name, v)
                                 for name, v in (("in_itemsize", in_itemsize), ("out_itemsize", out_itemsize)))
    flag("ls.tpu.choose_blocks", "double_buffer", double_buffer)
    return Blocks(*block_rule(m, n, k, core.mxu, core.vmem, in_itemsize, out_itemsize, double_buffer))


@dataclass(frozen=True)
class DotSchedule:
    """A contraction tiled onto a TensorCore: the steps of its static schedule and their totals."""

    core: TensorCore
    batch: int
    m: int
    n: int
    k: int
    blocks: Blocks
    double_buffer: bool
    steps: Steps = field(repr=False)  # a lazy sequence of Step (played on demand; see tpu_schedule)
    peak_flops: float  # the matrix rate the MXU work was charged at (all MXUs, after bf16 passes)
    vmem_bytes: int  # VMEM the blocks take
    totals: Totals = field(repr=False, compare=False)  # the sums, in aggregate (tpu_schedule.aggregate)

    @property
    def time(self) -> float:
        """When the last copy or compute ends: the schedule's length in seconds."""
        return self.totals.time

    @property
    def mxu_time(self) -> float:
        return self.totals.mxu_time

    @property
    def dma_time(self) -> float:
        return self.totals.dma_time

    @property
    def bytes_read(self) -> int:
        return self.totals.bytes_read

    @property
    def bytes_written(self) -> int:
        return self.totals.bytes_written

    @property
    def bytes(self) -> int:
        """HBM traffic: every copy in and out (an operand block copied twice counts twice)."""
        return self.bytes_read + self.bytes_written

    @property
    def flops(self) -> int:
        return self.totals.flops

    @property
    def folds(self) -> int:
        return self.totals.folds

    @property
    def utilization(self) -> float:
        """Real FLOPs over the MXU's padded work: below 1 when the edge folds do not fill the array."""
        return self.totals.flops / self.totals.padded_flops

    @property
    def overlap(self) -> float:
        """How much of the copying hid behind compute: 1 - exposed copy time / copy time."""
        exposed = self.time - self.mxu_time
        return 1.0 - exposed / self.dma_time if self.dma_time else 1.0

    @property
    def grid(self) -> tuple[int, int, int, int]:
        b = self.blocks
        return (self.batch, -(-self.m // b.bm), -(-self.n // b.bn), -(-self.k // b.bk))

    def table(self, most: int = 12) -> list[dict]:
        """The first ``most`` steps as rows (times in µs), for a chapter's table."""
        most = count("DotSchedule.table", "most (rows)", most, minimum=0)
        rows = []
        for s in self.steps[:most]:
            rows.append({"step (b,i,j,k)": str(s.index), "copy in (KiB)": s.load_bytes / 1024,
                         "copy µs": (s.load[1] - s.load[0]) * 1e6, "MXU start µs": s.compute[0] * 1e6,
                         "MXU µs": (s.compute[1] - s.compute[0]) * 1e6, "folds": s.folds,
                         "copy out (KiB)": s.store_bytes / 1024})
        return rows


def _positive_int(fn: str, name: str, v) -> int:
    try:
        return count(fn, name, v, minimum=1, maximum=1 << 53)
    except LabsimError:
        raise TPUError(f"{fn}: {name} must be a positive integer (at most 2**53), got {v!r} ({type(v).__name__})") from None


def schedule_dot(m: int, n: int, k: int, chip: Chip | str = "TPU v5e", *, batch: int = 1,
                 dtype: str = "bfloat16", out_dtype: str | None = None, precision: str = "default",
                 blocks: Blocks | tuple[int, int, int] | None = None, double_buffer: bool = True,
                 epilogue_flops: int = 0, check_memory: bool = True) -> DotSchedule:
    """The static schedule of ``batch`` products ``[m, k] @ [k, n]`` on ``chip``'s TensorCore.

    ``blocks`` (``(bm, bn, bk)``) overrides :func:`choose_blocks`; a block that does not fit VMEM raises
    :class:`TPUError` naming the bytes it needs and the VMEM it has. ``epilogue_flops`` is VPU work
    (per whole product) done on each finished C block. ``check_memory``: refuse (OutOfMemoryError) operands
    and output that do not fit the chip's HBM together. Any size is answered in O(log of the grid) time
    (the totals in aggregate, ``steps`` played lazily: :mod:`labsim.machines.tpu_schedule`).
    """
    fn = "ls.tpu.schedule_dot"
    core = TensorCore.of(chip)
    m, n, k, batch = (_positive_int(fn, name, v) for name, v in (("m", m), ("n", n), ("k", k), ("batch", batch)))
    epilogue_flops = nonnegative(fn, "epilogue_flops", epilogue_flops)
    for name, v in (("double_buffer", double_buffer), ("check_memory", check_memory)):
        if not isinstance(v, bool):
            raise ArgumentTypeError(f"{fn}: {name} must be True or False, got {v!r}")
    s_in = _itemsize(fn, "dtype", dtype)
    s_out = _itemsize(fn, "out_dtype", out_dtype or dtype)
    dtype = _canonical_dtype(dtype)  # np.float32 and "float32" alike from here on
    bufs = 2 if double_buffer else 1
    if blocks is None:
        blk = choose_blocks(m, n, k, core, s_in, s_out, double_buffer)
    else:
        if not isinstance(blocks, Blocks):
            if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__len__") or len(blocks) != 3:
                raise ArgumentError(f"{fn}: blocks must be (bm, bn, bk), three positive integers, or an "
                                    f"ls.tpu.Blocks, got {blocks!r}")
            blocks = Blocks(*blocks)
        blk = Blocks(*(_positive_int(fn, f"block {name}", getattr(blocks, name)) for name in ("bm", "bn", "bk")))
    need = blk.vmem_bytes(s_in, s_out, bufs)
    if core.vmem is not None and need > core.vmem:
        raise TPUError(
            f"blocks {blk.bm}×{blk.bn}×{blk.bk} need {need / 2**20:.1f} MiB of VMEM "
            f"({bufs}·(bm·bk + bk·bn)·{s_in} B + {bufs}·bm·bn·{s_out} B + 4·bm·bn B for the float32 "
            f"accumulator), more than the {core.chip.name}'s {core.vmem / 2**20:.0f} MiB")
    chip_ = core.chip
    if check_memory:
        fits(fn, f"{batch:,} × ([{m:,}, {k:,}] and [{k:,}, {n:,}] operands and the [{m:,}, {n:,}] output)",
             batch * ((m * k + k * n) * s_in + m * n * s_out), chip_.hbm_capacity, where=f"{chip_.name}'s HBM")
    passes = roofline.TPU_BF16_PASSES.get(precision)
    if passes is None:
        raise TPUError(f"{fn}: precision must be one of {sorted(roofline.TPU_BF16_PASSES)}, got {precision!r}")
    key = "bfloat16" if dtype in ("float32", "bfloat16") or dtype not in chip_.matrix_flops else dtype
    peak = chip_.peak_flops(key, ExecUnit.MATRIX) / (passes if dtype == "float32" else 1)
    vpu = chip_.vector_flops.get("float32") or peak  # no sourced VPU rate: the roofline's assumption
    bw = chip_.hbm_bandwidth
    r, c = core.mxu
    plan = Plan(batch=batch, m=m, n=n, k=k, bm=blk.bm, bn=blk.bn, bk=blk.bk, s_in=s_in, s_out=s_out, peak=peak,
                vpu=vpu, bw=bw, r=r, c=c, epi_per_elem=epilogue_flops / (batch * m * n), double_buffer=double_buffer)
    nb, ni, nj, nk = plan.grid
    return DotSchedule(core=core, batch=batch, m=m, n=n, k=k, blocks=blk, double_buffer=double_buffer,
                       steps=Steps(plan, nb * ni * nj * nk), peak_flops=peak, vmem_bytes=need,
                       totals=aggregate(plan))


def _itemsize(fn: str, name: str, dtype) -> int:
    """Bytes per element of ``dtype`` by labsim's dtype table (bfloat16 and the float8 types included)."""
    try:
        return _dtype_itemsize(dtype)
    except (DtypeError, TypeError):
        raise TPUError(f"{fn}: unknown {name} {dtype!r}; accepted: a labsim dtype name ({', '.join(sorted(ITEMSIZE))})") from None


def run_dot(a, b, chip: Chip | str = "TPU v5e", *, precision: str = "default", **kw) -> tuple[np.ndarray, DotSchedule]:
    """``a @ b`` (2-D arrays) on the MXU, block by block in the schedule's order: the same block machine as
    :func:`labsim.machines.tpu_run.run` (bfloat16 operands, ``precision`` passes for float32, float32
    accumulators; integers exact). ``kw`` goes to :func:`schedule_dot` (``blocks``, ``double_buffer``).
    Returns the product (float32, or int64 for integers) and the schedule. For a compiled program use
    ``ls.tpu.run``."""
    try:
        a, b = np.asarray(a), np.asarray(b)
    except (ValueError, TypeError) as e:
        raise ArgumentError(f"ls.tpu.run_dot: a and b must be 2-D arrays of numbers ({e})") from None
    for name, x in (("a", a), ("b", b)):
        if x.dtype.kind not in "biuf":
            raise ArgumentTypeError(f"ls.tpu.run_dot: {name} must hold real numbers (bool, int or float), got "
                                    f"dtype {x.dtype}")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise TPUError(f"ls.tpu.run_dot: need a[m, k] and b[k, n] with the same k, got {a.shape} and {b.shape}")
    integer = a.dtype.kind in "iub" and b.dtype.kind in "iub"
    dtype = str(a.dtype) if a.dtype.kind == "f" else ("int8" if integer else "float32")
    sched = schedule_dot(a.shape[0], b.shape[1], a.shape[1], chip, dtype=dtype, precision=precision, **kw)
    passes = 1 if integer or dtype != "float32" else _tpu_run.PASSES[precision]
    as_f = (lambda x: x) if integer else (lambda x: x.astype(np.float32))
    out, _ = _tpu_run.blockwise(as_f(a)[None], as_f(b)[None], sched, integer=integer, passes=passes)
    return out[0], sched


def _dot_node(kernel: Kernel):
    return next(n for n in kernel.nodes if ops.get(n.op).kind is OpKind.CONTRACTION)


@dataclass(frozen=True)
class TPUKernelCost(KernelCost):
    """A contraction's cost on a TensorCore: the roofline's fields, with ``time`` the static schedule's
    length (never below the roofline's bound) and the schedule itself in ``schedule``."""

    schedule: DotSchedule | None = None

    @property
    def time(self) -> float:
        return self.schedule.time if self.schedule is not None else KernelCost.time.fget(self)


def kernel_cost(kernel: Kernel, chip: Chip | str = "TPU v5e", *, double_buffer: bool = True) -> KernelCost:
    """The cost of one kernel on a TPU: a contraction through :func:`schedule_dot` (its ``bytes`` are the
    schedule's HBM copies, which count an operand block twice where it is copied twice), anything else
    as the roofline costs it (on the VPU)."""
    core = TensorCore.of(chip)
    flag("ls.tpu.kernel_cost", "double_buffer", double_buffer)
    if not isinstance(kernel, Kernel):
        raise ArgumentTypeError(f"ls.tpu.kernel_cost: kernel must be a Kernel, got {type(kernel).__name__} "
                        "(a Program holds its kernels in prog.kernels)")
    base = roofline.kernel_cost(kernel, core.chip)
    if kernel.kind is not KernelKind.CONTRACTION:
        return base
    dot = _dot_node(kernel)
    b, m, n, k = ops.dot_mnk(dot.operands[0].aval, dot.operands[1].aval, dot.params)
    dot_flops = 2 * b * m * n * k
    if dot_flops == 0:  # an empty product (a zero-sized dimension): nothing for the MXU, the roofline's cost
        return base
    sched = schedule_dot(m, n, k, core.chip, batch=b, dtype=dot.operands[0].aval.dtype,
                         out_dtype=kernel.outputs[0].aval.dtype if kernel.outputs else None,
                         precision=kernel.precision, double_buffer=double_buffer,
                         epilogue_flops=max(0, kernel.flops - dot_flops), check_memory=False)
    return TPUKernelCost(kernel=kernel.name, unit=ExecUnit.MATRIX, dtype=base.dtype, flops=kernel.flops,
                         transcendentals=kernel.transcendentals, bytes=sched.bytes, peak_flops=sched.peak_flops,
                         bandwidth=core.chip.hbm_bandwidth, compute_time=sched.mxu_time,
                         memory_time=sched.bytes / core.chip.hbm_bandwidth, precision=kernel.precision,
                         special_rate=base.special_rate, special_time=base.special_time,
                         latency_floor=base.latency_floor, schedule=sched)


def estimate(prog: Program, chip: Chip | str = "TPU v5e", *, double_buffer: bool = True,
             check_memory: bool = True) -> ProgramCost:
    """Every kernel of ``prog`` on a TPU (contractions scheduled onto the MXU), as a
    :class:`~labsim.machines.program_cost.ProgramCost`: the same fields as ``ls.estimate`` on a GPU."""
    if not isinstance(prog, Program):
        raise ArgumentTypeError(f"ls.tpu.estimate: prog must be a Program, got {type(prog).__name__} "
                        "(compile a traced graph first: prog = ls.compile(graph))")
    core = TensorCore.of(chip)
    flag("ls.tpu.estimate", "double_buffer", double_buffer)
    flag("ls.tpu.estimate", "check_memory", check_memory)
    c = core.chip
    return ProgramCost(chip=c, kernels=tuple(kernel_cost(kn, c, double_buffer=double_buffer) for kn in prog.kernels),
                       launch_overhead=c.launch_overhead,
                       oom=roofline.memory_check(prog, c) if check_memory else None,
                       host_api_time=roofline.HOST_API_TIME, call_overhead=c.call_overhead)


from .tpu_slice import Slice, tpu_slice  # noqa: E402  (ls.tpu.tpu_slice: which axes of a slice wrap around)
from . import tpu_run as _tpu_run  # noqa: E402
from .tpu_run import KernelRun, MXUBlock, TPURun, dot_tolerance  # noqa: E402  (ls.tpu.run: real values)


def run(prog: Program, *args, chip: Chip | str = "TPU v5e", double_buffer: bool = True, record: bool = False,
        array: tuple[int, int] | None = None, dataflow="ws") -> TPURun:
    """Run ``prog`` on ``chip``'s TensorCore with inputs ``args`` (flat, or the pytrees it was traced with):
    the kernels ``estimate`` schedules, with real values (how, in :mod:`labsim.machines.tpu_run`).
    Returns a :class:`~labsim.machines.tpu_run.TPURun` with ``.outputs`` (``ls.evaluate``'s, contractions
    within :func:`dot_tolerance`), ``.time`` (``estimate(prog, chip).time``) and ``.trace`` (DMA, MXU, VPU).

    ``record`` keeps each block's ``ls.systolic`` result with its per-cycle trace (every block then runs
    cycle by cycle: use it on small programs). ``array`` (``(R, C)``) and ``dataflow`` move the blocks'
    values through another array than the chip's MXU (``ws`` on ``chip.matrix_unit``), for figures
    whose cycles a reader can follow; the schedule, and so ``.time``, stay the chip's."""
    if not isinstance(prog, Program):
        raise ArgumentTypeError(f"ls.tpu.run: prog must be a compiled Program (prog = ls.compile(ls.trace(f, ...))), "
                        f"got {type(prog).__name__}")
    core = TensorCore.of(chip)
    flag("ls.tpu.run", "record", record)
    flag("ls.tpu.run", "double_buffer", double_buffer)
    return _tpu_run.execute(prog, args, core, estimate(prog, core.chip, double_buffer=double_buffer),
                            schedule_dot=schedule_dot, record=record, array=array, dataflow=dataflow)

__all__ = ["TPUError", "TensorCore", "Blocks", "Step", "DotSchedule", "TPUKernelCost", "choose_blocks",
           "schedule_dot", "run_dot", "kernel_cost", "estimate", "SUBLANES", "Slice", "tpu_slice",
           "run", "TPURun", "KernelRun", "MXUBlock", "dot_tolerance"]
