"""Running a compiled program on a TPU TensorCore with real values: ``ls.tpu.run(prog, *args, chip=...)``.

The run schedules the kernels that ``ls.tpu.estimate`` costs, one after another on one stream, and
moves the real values through them:

* **Contractions** follow their static schedule (:func:`labsim.machines.tpu.schedule_dot`): each grid
  step copies an A block and a B block from HBM to VMEM (DMA), multiplies them on the MXU into a
  float32 accumulator, and after the last k step copies the C block back (DMA). The values of each
  step's block go through ``ls.systolic``, weight-stationary on the chip's R × C MXU: cycle by cycle
  (:func:`labsim.machines.systolic.simulate`) when the block is small (``cycles·R·C`` at most
  :data:`CYCLE_CELLS`), else by the closed form (:func:`labsim.machines.systolic.stats`, the same
  numbers) with the block's values from NumPy, one fold of R rows of K at a time, summed in float32 as
  the MXU's output buffer sums them. Each :class:`MXUBlock` says which way it ran (``cycle_by_cycle``).
* **The MXU multiplies bfloat16.** A bfloat16 operand is rounded to bfloat16 (labsim evaluates
  bfloat16 values in float32, so they may carry more bits). A float32 dot takes 1, 3 or 6 bfloat16
  passes by its ``precision`` ("default", "high", "highest"), as on the hardware: each operand is split
  into bfloat16 pieces ``hi + mid + lo`` and the passes multiply hi·hi (1 pass); + hi·mid + mid·hi
  (3); + mid·mid + hi·lo + lo·hi (6). labsim lays the passes side by side along K, so the array sees
  one product ``passes`` times deeper. Products of two bfloat16 values are exact in float32; only the
  rounding of the operands and the float32 sums differ from ``ls.evaluate``, by at most
  :func:`dot_tolerance`. Integer dots are exact (accumulated in int64, cast as ``ls.evaluate`` casts).
* **Everything else** (elementwise, reductions, data movement, the epilogue of a fused contraction)
  runs on the VPU with the value rule ``ls.evaluate`` uses (the op table's implementation), so it
  equals ``ls.evaluate`` bit for bit on the same inputs.

``.time`` is ``ls.tpu.estimate(prog, chip).time`` (the same schedule; the run checks it), and
``.trace`` an ``ls.Trace`` with one DMA queue, the MXU and the VPU of chip 0 (events ``COPY`` and
``COMPUTE``), which ``viz.timeline`` draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..compiler.kernel import Kernel, KernelKind
from ..compiler.program import Program
from ..core import ops
from ..core.dtypes import numpy_dtype
from ..core.interpreter import coerce_args
from ..core.ir import Literal, Var
from ..core.ops import OpKind
from ..core.trace import bind
from . import systolic
from .events import Event, EventKind, Trace, UnitId, UnitKind
from .program_cost import ProgramCost
from .roofline import KernelCost

CYCLE_CELLS = 1 << 25  # a block whose cycles·R·C is at most this moves through the array cycle by cycle (≲ 0.1 s)
BF16_U = 2.0 ** -8       # unit roundoff of bfloat16 (8 significant bits, round to nearest)
F32_U = 2.0 ** -24       # unit roundoff of float32
PASSES = {"default": 1, "high": 3, "highest": 6}

DMA = UnitId(0, UnitKind.DMA)
MXU = UnitId(0, UnitKind.MXU)
VPU = UnitId(0, UnitKind.VPU)


@dataclass(frozen=True)
class MXUBlock:
    """One grid step's product on the MXU: its place, its size, and how labsim moved its values."""

    kernel: str
    index: tuple[int, int, int, int]  # (batch, i, j, k) of the grid step
    shape: tuple[int, int, int]  # (rows, cols, depth) of the real block, depth before the bf16 passes
    passes: int  # bfloat16 passes (1 for bfloat16 and integer operands)
    stats: systolic.Stats  # the array's numbers for this block (cycles, folds, utilisation, ...)
    cycle_by_cycle: bool  # True: ls.systolic.simulate moved the values; False: closed form + NumPy values
    result: systolic.Result | None = field(default=None, repr=False)  # kept when run(record=True)


@dataclass(frozen=True)
class KernelRun:
    """One kernel of the run: its cost (as ``ls.tpu.estimate`` gives it), when it ran, its MXU blocks."""

    kernel: Kernel
    cost: KernelCost
    start: float
    end: float
    blocks: tuple[MXUBlock, ...] = ()


@dataclass(frozen=True)
class TPURun:
    """What :func:`run` returns: outputs (as ``ls.evaluate`` returns them), time and trace."""

    outputs: object
    time: float
    trace: Trace
    cost: ProgramCost
    kernels: tuple[KernelRun, ...]
    values: dict = field(repr=False)  # id(Var) -> the value the machine computed for it

    @property
    def blocks(self) -> tuple[MXUBlock, ...]:
        """Every MXU block of the run, in order."""
        return tuple(b for k in self.kernels for b in k.blocks)

    def value(self, v: Var) -> np.ndarray:
        """The value the machine computed for the graph variable ``v``."""
        return self.values[id(v)]


def dot_tolerance(x: np.ndarray, y: np.ndarray, params: dict, dtype: str) -> np.ndarray:
    """The largest difference (per output element) between the MXU's dot and ``ls.evaluate``'s.

    Both sum K products in float32 in some order: each sum is within γ_K·Σ|x||y| of the exact one
    (γ_n = n·u/(1 − n·u), u = 2⁻²⁴; Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1),
    and the MXU sums ``passes``·K terms. Rounding an operand to bfloat16 changes it by at most
    u_bf16 = 2⁻⁸ of itself, so one pass changes a product by (2u_bf16 + u_bf16²)|x||y|; three
    passes leave (u_bf16² terms) 3u_bf16², six leave 4u_bf16³. So the bound is
    ``(rounding + γ_{passes·K} + γ_K) · Σ_k |x||y|``. Integer dots: 0 (exact)."""
    if np.dtype(numpy_dtype(dtype)).kind in "iub":
        return np.zeros(1)
    passes = PASSES.get(params.get("precision", "default"), 1) if dtype == "float32" else 1
    lhs_kind = x.dtype.kind
    K = max(1, math.prod(x.shape[d] for d in params["contracting"][0]))
    gamma = lambda n: n * F32_U / (1 - n * F32_U)
    rounding = {1: 2 * BF16_U + BF16_U ** 2, 3: 3 * BF16_U ** 2, 6: 4 * BF16_U ** 3}[passes]
    if lhs_kind in "iub":  # an integer operand (a mixed dot): values exact in bf16 only while small
        rounding = max(rounding, 2 * BF16_U + BF16_U ** 2)
    mag = ops.get("dot").impl(np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64)), **params)
    return (rounding + gamma(passes * K) + gamma(K)) * mag


def _bf16(x: np.ndarray) -> np.ndarray:
    """``x`` (float32) rounded to the nearest bfloat16 (ties to even), kept in float32."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), r, x)


def _passes(a: np.ndarray, b: np.ndarray, passes: int) -> tuple[np.ndarray, np.ndarray]:
    """The bfloat16 pieces of ``a @ b`` for ``passes`` passes, laid side by side along K."""
    ah, bh = _bf16(a), _bf16(b)
    if passes == 1:
        return ah, bh
    am, bm = _bf16(a - ah), _bf16(b - bh)
    if passes == 3:
        return np.concatenate([ah, ah, am], 1), np.concatenate([bh, bm, bh], 0)
    al, bl = _bf16(a - ah - am), _bf16(b - bh - bm)
    return np.concatenate([ah, ah, am, am, ah, al], 1), np.concatenate([bh, bm, bh, bm, bl, bh], 0)


def _mxu(a, b, core, *, integer: bool, passes: int, record: bool, array, dataflow):
    """One block ``a @ b`` on the R × C array: (value, stats, cycle_by_cycle, result)."""
    R, C = array or core.mxu
    if integer:
        a, b = a.astype(np.int64), b.astype(np.int64)
    else:
        a, b = _passes(a, b, passes)
    st = systolic.stats(a.shape[0], b.shape[1], a.shape[1], rows=R, cols=C, dataflow=dataflow)
    if record or st.cycles * R * C <= CYCLE_CELLS:
        res = systolic.simulate(a, b, rows=R, cols=C, dataflow=dataflow, trace=True if record else False)
        return res.output, st, True, (res if record else None)
    acc = np.zeros((a.shape[0], b.shape[1]), a.dtype)
    for k0 in range(0, a.shape[1], R):  # one fold of R rows of K at a time, summed as the output buffer sums
        acc += a[:, k0:k0 + R] @ b[k0:k0 + R]
    return acc, st, False, None


def _as_bmk(x, y, params):
    """(batch, M, K) and (batch, K, N) views of a dot_general's operands, and its (b, m, n) shape."""
    (lc, rc), (lb, rb) = [list(d) for d in params["contracting"]], [list(d) for d in params["batch"]]
    lf = [d for d in range(x.ndim) if d not in lc + lb]
    rf = [d for d in range(y.ndim) if d not in rc + rb]
    B = math.prod(x.shape[d] for d in lb)
    M, N, K = (math.prod(x.shape[d] for d in lf), math.prod(y.shape[d] for d in rf),
               math.prod(x.shape[d] for d in lc))
    x3 = np.transpose(x, lb + lf + lc).reshape(B, M, K)
    y3 = np.transpose(y, rb + rc + rf).reshape(B, K, N)
    return x3, y3


def _dot(node, x, y, sched, core, kname, *, schedule_dot, record, array, dataflow):
    """The dot of ``node`` computed block by block in the schedule's order; returns (value, blocks)."""
    out_dt = numpy_dtype(node.out.aval.dtype)
    integer = np.dtype(out_dt).kind in "iub"
    passes = 1 if integer or node.operands[0].aval.dtype != "float32" else PASSES[node.params.get("precision", "default")]
    x3, y3 = _as_bmk(x, y, node.params)
    B, M, K = x3.shape
    N = y3.shape[2]
    if B * M * N * K == 0:  # an empty product: nothing reaches the MXU (a sum of no terms is 0)
        return np.zeros(node.out.aval.shape, out_dt), ()
    if sched is None or (sched.batch, sched.m, sched.n, sched.k) != (B, M, N, K):
        # a dot outside a contraction kernel, or a second dot in one: its own schedule (values only)
        sched = schedule_dot(M, N, K, core.chip, batch=B, dtype=node.operands[0].aval.dtype)
    out, blocks = blockwise(x3, y3, sched, kname, integer=integer, passes=passes, record=record, array=array,
                            dataflow=dataflow)
    return out.reshape(node.out.aval.shape).astype(out_dt), blocks


def blockwise(x3, y3, sched, kname: str = "dot", *, integer: bool = False, passes: int = 1, record: bool = False,
              array=None, dataflow=systolic.Dataflow.WS):
    """``x3 @ y3`` (``(batch, M, K)`` by ``(batch, K, N)``) step by step in ``sched``'s order: each step's
    block through the array (:func:`_mxu`), added into a float32 (integers: int64) accumulator per C
    block, written out after the last k step. Returns the ``(batch, M, N)`` product and the blocks."""
    core, blk = sched.core, sched.blocks
    acc_dt = np.int64 if integer else np.float32
    out = np.zeros((sched.batch, sched.m, sched.n), acc_dt)
    blocks, acc = [], None
    for s in sched.steps:
        b, i, j, kk = s.index
        rows, cols, depth = s.shape
        r0, c0, k0 = i * blk.bm, j * blk.bn, kk * blk.bk
        val, st, cyc, res = _mxu(x3[b, r0:r0 + rows, k0:k0 + depth], y3[b, k0:k0 + depth, c0:c0 + cols], core,
                                 integer=integer, passes=passes, record=record, array=array, dataflow=dataflow)
        acc = val.astype(acc_dt) if kk == 0 else acc + val.astype(acc_dt)  # the float32 accumulator in VMEM
        blocks.append(MXUBlock(kname, s.index, s.shape, passes, st, cyc, res))
        if kk == sched.grid[3] - 1:
            out[b, r0:r0 + rows, c0:c0 + cols] = acc
    return out, tuple(blocks)


def _args(prog: Program, args) -> list[np.ndarray]:
    """The program's inputs, checked as ``ls.evaluate`` checks them (one vocabulary for every machine)."""
    return coerce_args(prog.graph, args, "ls.tpu.run")


def _kernel_events(kr: KernelRun) -> list[Event]:
    k, c, t0 = kr.kernel, kr.cost, kr.start
    sched = getattr(c, "schedule", None)
    evs = []
    if sched is None:  # on the VPU, reading and writing HBM through the DMA queue as it goes
        if k.kind is not KernelKind.COPY and c.compute_time > 0:
            evs.append(Event(VPU, k.name, t0, t0 + c.compute_time, EventKind.COMPUTE, detail=k.ops_summary(),
                             flops=k.flops))
        if c.memory_time > 0:
            evs.append(Event(DMA, k.name, t0, t0 + c.memory_time, EventKind.COPY, detail="HBM ↔ VMEM",
                             nbytes=k.bytes))
        return evs
    for s in sched.steps:
        if s.load_bytes:
            evs.append(Event(DMA, f"{k.name} in {s.index}", t0 + s.load[0], t0 + s.load[1], EventKind.COPY,
                             detail="A and B blocks, HBM → VMEM", nbytes=s.load_bytes))
        mxu_end = min(s.compute[0] + s.padded_flops / sched.peak_flops, s.compute[1])
        evs.append(Event(MXU, f"{k.name} {s.index}", t0 + s.compute[0], t0 + mxu_end, EventKind.COMPUTE,
                         detail=f"{s.folds} folds", flops=s.flops))
        if s.compute[1] > mxu_end:
            evs.append(Event(VPU, f"{k.name} epilogue {s.index}", t0 + mxu_end, t0 + s.compute[1],
                             EventKind.COMPUTE, detail=k.ops_summary()))
        if s.store is not None:
            evs.append(Event(DMA, f"{k.name} out {s.index}", t0 + s.store[0], t0 + s.store[1], EventKind.COPY,
                             detail="C block, VMEM → HBM", nbytes=s.store_bytes))
    return evs


def execute(prog: Program, args, core, cost: ProgramCost, *, schedule_dot, record: bool = False,
            array: tuple[int, int] | None = None, dataflow="ws") -> TPURun:
    """The body of ``ls.tpu.run`` (:func:`labsim.machines.tpu.run` checks ``prog`` and the chip and gives
    the TensorCore ``core``, the program's ``cost`` from ``ls.tpu.estimate`` and its ``schedule_dot``)."""
    if array is not None:
        if (not isinstance(array, tuple) or len(array) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in array)):
            raise ValueError(f"ls.tpu.run: array must be (rows, cols), two positive integers, got {array!r}")
    dataflow = systolic.Dataflow.parse(dataflow)
    arrays = _args(prog, args)
    cost.time  # raises OutOfMemoryError (with the report) before any work when the program does not fit
    g = prog.graph
    env: dict[int, np.ndarray] = {id(v): a for v, a in zip(g.inputs, arrays)}
    owner = {id(n): k for k in prog.kernels for n in k.nodes}
    kcost = {k.name: c for k, c in zip(prog.kernels, cost.kernels)}
    blocks: dict[str, list] = {k.name: [] for k in prog.kernels}

    def read(a):
        return env[id(a)] if isinstance(a, Var) else a.value

    for n in g.nodes:
        vals = [read(a) for a in n.operands]
        k = owner.get(id(n))
        if ops.get(n.op).kind is OpKind.CONTRACTION:
            sched = getattr(kcost[k.name], "schedule", None) if k is not None else None
            env[id(n.out)], bl = _dot(n, *vals, sched, core, k.name if k else n.op, schedule_dot=schedule_dot,
                                      record=record, array=array, dataflow=dataflow)
            if k is not None:
                blocks[k.name] += bl
        else:
            env[id(n.out)] = bind(n.op, *vals, **n.params)
    outs = []
    for o in g.outputs:
        v = o.value if isinstance(o, Literal) else env[id(o)]
        outs.append(np.asarray(v, dtype=numpy_dtype(o.aval.dtype)))
    runs, events = [], []
    for k, c, (_, start, end) in zip(prog.kernels, cost.kernels, cost._schedule()):
        kr = KernelRun(k, c, start, end, tuple(blocks[k.name]))
        runs.append(kr)
        events += _kernel_events(kr)
    trace = Trace(tuple(sorted(events, key=lambda e: e.start)), units=(DMA, MXU, VPU), chip_names=(core.chip.name,))
    return TPURun(outputs=outs[0] if len(outs) == 1 else tuple(outs), time=cost.time, trace=trace, cost=cost,
                  kernels=tuple(runs), values=env)


__all__ = ["execute", "blockwise", "TPURun", "KernelRun", "MXUBlock", "dot_tolerance", "CYCLE_CELLS"]
