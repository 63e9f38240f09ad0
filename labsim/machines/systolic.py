"""A cycle-level systolic array: weight-, output- and input-stationary dataflows on any R×C grid.

``ls.systolic.simulate(A, B, rows=R, cols=C, dataflow="ws")`` moves the real numbers of ``A @ B``
(``A`` is M×K, ``B`` is K×N) through an R×C grid of processing elements (PEs), one clock cycle at a
time, and returns the product, the cycle count, the utilisation, the folds and (for small runs) the
per-cycle trace. ``ls.systolic.cycles(M, N, K, rows=R, cols=C, dataflow=...)`` gives the same cycle count
in closed form, and ``ls.systolic.stats(...)`` every other number, for sizes too large to simulate.

The model (labsim's simplification; its cycle accounting is SCALE-Sim v3's, and the two agree on
cycles, utilisation, mapping efficiency and SRAM accesses, see "Relation to SCALE-Sim" below)
------------------------------------------------------------------------------------------------
Each PE holds a few registers and does at most one multiply-add per cycle. Values move one PE per
cycle: one operand enters at the left edge of each row and moves right (east), the other enters at the
top of each column and moves down (south). Which quantity stays in place names the dataflow:

=========  ==============================  =====================  ======================  ==============
dataflow   stays in PE (i, j)              moves east (row i)     moves south (col j)      streamed for
=========  ==============================  =====================  ======================  ==============
``os``     the running sum of C[m, n]      A[m, k], m = row i     B[k, n], n = col j       T = K cycles
``ws``     the weight B[k, n], k = row i   A[m, k]                partial sums of C[m, n]  T = M cycles
``is``     the input A[m, k], k = row i    B[k, n]                partial sums of C[m, n]  T = N cycles
=========  ==============================  =====================  ======================  ==============

So a dataflow spreads two of M, N, K over the array's rows and columns (Sr, Sc) and streams the third
in time (T): os (M, N | K), ws (K, N | M), is (K, M | N). A product larger than the array is cut into
**folds** of at most R×C: ⌈Sr/R⌉·⌈Sc/C⌉ of them, run one after another. For ws and is a fold
covers only R of the K terms, so each fold writes partial sums of its outputs and the output buffer
adds them (⌈K/R⌉ writes per output).

One fold, cycle by cycle:

* **preload** (ws and is only): the stationary operand enters at the top and moves down one row per
  cycle, last row first; after R cycles PE (i, j) holds its value.
* **skewed fill**: stream element t reaches row i at cycle t + i (each row starts one cycle after the
  row above), so the operand that moves east meets, in PE (i, j), the other operand (os) or the partial
  sum from the PE above (ws, is) in cycle t + i + j. The work moves through the array as a diagonal
  wavefront. ``os``: PE (i, j) computes A[m, k]·B[k, n] with k = t - i - j. ``ws``/``is``: PE (i, j)
  adds its product to the partial sum arriving from PE (i-1, j) and passes it down.
* **drain**: after the last stream element has entered, the wavefront takes R-1 + C-1 more cycles to
  cross the array. ``ws``/``is``: a column's finished sum leaves the bottom PE and is written to the
  output buffer. ``os``: PE (i, j) writes its sum to the output buffer in the cycle of its last
  multiply-add (a design that shifted the sums out through the array would need more cycles; neither
  labsim nor SCALE-Sim charges them).

Per fold that is T + R + C - 2 cycles (os) or R + T + R + C - 2 cycles (ws, is: preload first). The
skew is always over the whole array: values pass through every row and column, used or not, so an
edge fold that uses part of the array costs as much time as a full one. Folds do not overlap (no
double-buffered preload). Hence the closed form::

    os:  ⌈M/R⌉·⌈N/C⌉ · (K + R + C − 2)
    ws:  ⌈K/R⌉·⌈N/C⌉ · (M + 2R + C − 2)
    is:  ⌈K/R⌉·⌈M/C⌉ · (N + 2R + C − 2)

Other numbers (all from :func:`stats`, and counted by :func:`simulate`):

* ``utilization`` = M·N·K / (cycles·R·C): the fraction of PE-cycles that did a useful multiply-add.
* ``mapping_efficiency`` (SCALE-Sim's definition): the plain mean over folds of (rows used · columns
  used)/(R·C), not weighted by time.
* ``compute_utilization`` (SCALE-Sim's definition): the mean over folds of used·T / (R·C·c), where c is
  the fold's cycles (os) or, for ws and is, the fold's cycles + C − 1. SCALE-Sim measures c on its
  own demand matrices; labsim uses the same c so that the number means the same thing.
* SRAM accesses, in words: every value that enters the array from a buffer is one read of that
  operand; every value leaving for the output buffer is one write. os: A = M·K·⌈N/C⌉,
  B = K·N·⌈M/R⌉, C = M·N. ws: A = M·K·⌈N/C⌉, B = K·N, C = M·N·⌈K/R⌉. is: A = M·K,
  B = K·N·⌈M/C⌉, C = M·N·⌈K/R⌉. Weight-stationary reads each weight once: that is the bandwidth it saves.

Relation to SCALE-Sim (v3.0.0; ``crosscheck/refs/scalesim.json``, ``tests/test_systolic_parity.py``)
----------------------------------------------------------------------------------------------------
* **Cycles: SCALE-Sim's "Total Cycles" = labsim's cycles − 1.** labsim counts cycles (a run of 14 cycles
  is 14); SCALE-Sim reports the largest 0-based index of the cycles it simulated (13). Its "Overall
  Util %" divides by that smaller number, so it is 100·M·N·K / ((cycles − 1)·R·C).
* **Output-stationary writes: SCALE-Sim reports folds·(R + C) more ofmap writes than labsim.**
  SCALE-Sim 3.0.0 (``compute/systolic_compute_os.py``) adds ``rows + cols`` of the padded R×C output
  tile to its write counter once per fold, after it has already counted the tile's M·N entries. No
  value is written for that term; labsim counts only real writes (each output once, M·N), and the
  parity test checks that the difference is exactly folds·(R + C).
* Everything else (folds, mapping efficiency, compute utilisation, A and B reads, ws/is writes)
  is equal. SCALE-Sim also models DRAM and stalls (its USER bandwidth mode); labsim's array does not.

The trace (``Result.trace``, a :class:`SystolicTrace`; recorded by default when cycles·R·C ≤ 200,000,
with ``trace=True`` up to 4,000,000, never with ``trace=False``; memory stays bounded either way)
-----------------------------------------------------------------------------------------------------
One row per cycle of the whole run (folds end to end, preload included), arrays indexed
``[cycle, i, j]`` for PE (i, j) (row i from the top, column j from the left). NaN marks an empty
register, -1 an absent index.

* ``cycle`` (n,), ``fold`` (n,) which fold, ``phase`` (n,) one of ``"preload"``, ``"fill"``
  (stream entering, wavefront not yet at the far corner PE), ``"steady"`` (every PE in the wavefront),
  ``"drain"`` (stream finished, wavefront leaving). ``fold_origin`` (folds, 3): the (m0, n0, k0) of
  each fold's corner in the product.
* ``east`` (n, R, C): the value in each PE's eastward register this cycle (A for os and ws; B for is).
* ``south`` (n, R, C): the value moving down: B for os; for ws and is the partial sum this PE passes
  down (after adding its product).
* ``held`` (n, R, C): the value that stays: os the running sum of the PE's output (after this cycle's
  add); ws the weight B[k, n]; is the input A[m, k]. During preload it shows the values moving down.
* ``mac`` (n, R, C) bool: the PE did a useful multiply-add this cycle.
* ``m``, ``n``, ``k`` (n, R, C) int: the product A[m, k]·B[k, n] the PE computed (-1 where none).
* ``writes`` (w, 4): one row (cycle, m, n, value) per value written to the output buffer; for ws and
  is with more than one K-fold these are partial sums that the buffer adds.
* ``trace[t]`` gives one cycle as a :class:`Cycle` (the same fields without the first axis).

How it runs fast: folds do not interact (each starts with empty registers), so labsim simulates a
batch of folds side by side, with NumPy over the axes (fold, row, column), one Python step per cycle
of a fold, and lays them end to end in time. A row of registers passing values east one PE per cycle
is a window sliding over the skewed input stream; labsim stores the skewed stream once and reads the
window each cycle instead of copying every register, which gives the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..support.errors import ArgumentError

from .systolic_closed import (BATCH_CELLS, SCALESIM_CYCLE_OFFSET, STREAM_CELLS, TRACE_AUTO_CELLS,  # noqa: F401
                              TRACE_MAX_CELLS, Dataflow, Stats,
                              _check_dims, cycles, scalesim_ofmap_writes, stats)
from .systolic_machine import _as_matrix, _simulate_os, _simulate_stationary
from .systolic_trace import Cycle, SystolicTrace

MAX_SIMULATED_PES = 1 << 20  # simulate() refuses larger arrays (its registers are folds × R × C cells)

__all__ = ["Dataflow", "simulate", "cycles", "stats", "Stats", "Result", "SystolicTrace", "Cycle",
           "SCALESIM_CYCLE_OFFSET", "scalesim_ofmap_writes"]


@dataclass(frozen=True)
class Result:
    """What :func:`simulate` returns. ``stats`` holds the same numbers in closed form."""

    output: np.ndarray
    cycles: int
    folds: int
    utilization: float
    mapping_efficiency: float
    compute_utilization: float
    reads_a: int
    reads_b: int
    writes_c: int
    macs: int
    dataflow: Dataflow
    rows: int
    cols: int
    stats: Stats
    trace: SystolicTrace | None = field(default=None, repr=False)

    @property
    def sram_accesses(self) -> dict:
        return {"A reads": self.reads_a, "B reads": self.reads_b, "C writes": self.writes_c}

def simulate(A, B, *, rows: int, cols: int, dataflow="ws", trace: bool | None = None) -> Result:
    """Run ``A @ B`` through an R×C systolic array, cycle by cycle (see the module docstring).

    ``A`` is M×K, ``B`` is K×N. ``dataflow`` is a :class:`Dataflow` or "ws", "os", "is". ``trace``:
    record every PE's registers each cycle (default: only when cycles·R·C ≤ 200,000).
    """
    R, C = _check_dims(rows, cols, "ls.systolic.simulate")
    df = Dataflow.parse(dataflow)
    A = _as_matrix(A, "A")
    B = _as_matrix(B, "B")
    if A.shape[1] != B.shape[0]:
        raise ArgumentError(f"ls.systolic.simulate: A is {A.shape[0]}×{A.shape[1]} and B is {B.shape[0]}×{B.shape[1]}: A's columns "
                         f"({A.shape[1]}) must equal B's rows ({B.shape[0]}) for A @ B")
    M, K = A.shape
    N = B.shape[1]
    if 0 in (M, N, K):
        raise ArgumentError(f"ls.systolic.simulate: A is {M}×{K} and B is {K}×{N}: every dimension must be at least 1")
    st = stats(M, N, K, rows=R, cols=C, dataflow=df)
    cells = st.cycles * R * C
    if trace is not None and not isinstance(trace, bool):
        raise ArgumentError(f"ls.systolic.simulate: trace must be True, False or None (record small runs), "
                            f"got {trace!r}")
    if R * C > MAX_SIMULATED_PES:
        raise ArgumentError(f"ls.systolic.simulate: a {R:,}×{C:,} array has {R * C:,} processing elements, more than "
                            f"the {MAX_SIMULATED_PES:,} the cycle-by-cycle machine simulates; ls.systolic.stats "
                            f"gives every number of it in closed form")
    if trace is None:
        trace = cells <= TRACE_AUTO_CELLS
    elif trace and cells > TRACE_MAX_CELLS:
        raise ArgumentError(f"ls.systolic.simulate: trace=True would record {cells:,} PE-cycles ({st.cycles:,} cycles × {R}×{C} PEs), "
                         f"over the limit of {TRACE_MAX_CELLS:,}; simulate a smaller product or pass trace=False")
    dt = np.result_type(A.dtype, B.dtype)
    if dt == np.bool_:
        dt = np.dtype(np.int64)
    A = A.astype(dt, copy=False)
    B = B.astype(dt, copy=False)
    if df is Dataflow.OS:
        out, counts, tr = _simulate_os(A, B, R, C, st, trace)
    else:
        out, counts, tr = _simulate_stationary(A, B, R, C, df, st, trace)
    reads_a, reads_b, writes_c, macs, ran = counts
    return Result(output=out, cycles=ran, folds=st.folds,
                  utilization=macs / (ran * R * C),
                  mapping_efficiency=st.mapping_efficiency, compute_utilization=st.compute_utilization,
                  reads_a=reads_a, reads_b=reads_b, writes_c=writes_c, macs=macs, dataflow=df,
                  rows=R, cols=C, stats=st, trace=tr)
