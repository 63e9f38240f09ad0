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

import enum
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Dataflow", "simulate", "cycles", "stats", "Stats", "Result", "SystolicTrace", "Cycle",
           "SCALESIM_CYCLE_OFFSET", "scalesim_ofmap_writes"]

# SCALE-Sim's "Total Cycles" is labsim's cycle count minus this (it reports the last 0-based index).
SCALESIM_CYCLE_OFFSET = 1

TRACE_AUTO_CELLS = 200_000       # record the trace by default when cycles·R·C is at most this (≈ 10 MB)
TRACE_MAX_CELLS = 4_000_000      # trace=True refuses more (the trace keeps 7 arrays of this many cells)
BATCH_CELLS = 1 << 16            # PE registers simulated per NumPy step (folds × R × C), sized for L2
STREAM_CELLS = 1 << 22           # at most this many stream values held per batch (folds × R × stream length)


class Dataflow(enum.Enum):
    """Which operand stays in the processing elements."""

    WS = "ws"  # weight-stationary: B stays, A streams east, partial sums flow south
    OS = "os"  # output-stationary: each PE keeps one output's running sum; A east, B south
    IS = "is"  # input-stationary: A stays, B streams east, partial sums flow south

    @classmethod
    def parse(cls, value) -> "Dataflow":
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower()
            for d in cls:
                if d.value == key:
                    return d
        raise ValueError(f"dataflow must be one of {[d.value for d in cls]} (or ls.systolic.Dataflow.WS/OS/IS), "
                         f"got {value!r}")


def _check_dims(rows, cols, **dims) -> tuple[int, int]:
    for name, v in (("rows", rows), ("cols", cols)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an integer number of processing elements, got {v!r}")
        if v < 1:
            raise ValueError(f"the array needs at least one row and one column: {name}={v}")
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an integer, got {v!r}")
        if v < 1:
            raise ValueError(f"matrix dimension {name} must be at least 1, got {v}")
    return int(rows), int(cols)


def _mapping(df: Dataflow, M: int, N: int, K: int) -> tuple[int, int, int]:
    """(Sr, Sc, T): what a dataflow spreads over the rows, over the columns, and streams in time."""
    return {Dataflow.OS: (M, N, K), Dataflow.WS: (K, N, M), Dataflow.IS: (K, M, N)}[df]


def _fold_sizes(S: int, P: int) -> np.ndarray:
    """How much of S each of the ⌈S/P⌉ folds covers (all P but the last)."""
    n = -(-S // P)
    sizes = np.full(n, P, dtype=np.int64)
    sizes[-1] = S - P * (n - 1)
    return sizes


def _per_fold(df: Dataflow, T: int, R: int, C: int) -> int:
    return T + R + C - 2 + (R if df is not Dataflow.OS else 0)


@dataclass(frozen=True)
class Stats:
    """Every number of one product on one array, in closed form (see the module docstring)."""

    M: int
    N: int
    K: int
    rows: int
    cols: int
    dataflow: Dataflow
    folds: int
    row_folds: int
    col_folds: int
    cycles_per_fold: int
    cycles: int
    macs: int
    utilization: float            # M·N·K / (cycles·R·C)
    mapping_efficiency: float     # SCALE-Sim's: mean over folds of used PEs / (R·C)
    compute_utilization: float    # SCALE-Sim's: mean over folds of used·T / (R·C·c)
    reads_a: int                  # SRAM reads of A (SCALE-Sim: ifmap reads)
    reads_b: int                  # SRAM reads of B (SCALE-Sim: filter reads)
    writes_c: int                 # SRAM writes of C (SCALE-Sim: ofmap writes, without its os quirk)

    @property
    def scalesim_total_cycles(self) -> int:
        """What SCALE-Sim reports as "Total Cycles" for the same run: the last 0-based cycle index."""
        return self.cycles - SCALESIM_CYCLE_OFFSET

    @property
    def scalesim_overall_util(self) -> float:
        """SCALE-Sim's "Overall Util" (a fraction): MACs over (its Total Cycles · R · C)."""
        return self.macs / (self.scalesim_total_cycles * self.rows * self.cols)


def stats(M: int, N: int, K: int, *, rows: int, cols: int, dataflow="ws") -> Stats:
    """All the numbers of ``A @ B`` (A is M×K, B is K×N) on an R×C array, without simulating."""
    R, C = _check_dims(rows, cols, M=M, N=N, K=K)
    M, N, K = int(M), int(N), int(K)
    df = Dataflow.parse(dataflow)
    Sr, Sc, T = _mapping(df, M, N, K)
    ru, cu = _fold_sizes(Sr, R), _fold_sizes(Sc, C)
    folds = len(ru) * len(cu)
    per = _per_fold(df, T, R, C)
    total = folds * per
    used = np.outer(ru, cu).astype(np.float64)        # PEs used in each fold
    c_util = per if df is Dataflow.OS else per + C - 1
    rf, cf = len(ru), len(cu)
    if df is Dataflow.OS:
        reads_a, reads_b, writes = M * K * cf, K * N * rf, M * N
    elif df is Dataflow.WS:
        reads_a, reads_b, writes = M * K * cf, K * N, M * N * rf
    else:
        reads_a, reads_b, writes = M * K, K * N * cf, M * N * rf
    return Stats(M=M, N=N, K=K, rows=R, cols=C, dataflow=df, folds=folds, row_folds=rf, col_folds=cf,
                 cycles_per_fold=per, cycles=total, macs=M * N * K,
                 utilization=M * N * K / (total * R * C),
                 mapping_efficiency=float(used.mean() / (R * C)),
                 compute_utilization=float((used * T / (R * C * c_util)).mean()),
                 reads_a=reads_a, reads_b=reads_b, writes_c=writes)


def cycles(M: int, N: int, K: int, *, rows: int, cols: int, dataflow="ws") -> int:
    """Cycles of ``A @ B`` (A is M×K, B is K×N) on an R×C array, in closed form.

    os: ⌈M/R⌉·⌈N/C⌉·(K+R+C−2); ws: ⌈K/R⌉·⌈N/C⌉·(M+2R+C−2); is: ⌈K/R⌉·⌈M/C⌉·(N+2R+C−2).
    SCALE-Sim reports one less (its last 0-based cycle index).
    """
    return stats(M, N, K, rows=rows, cols=cols, dataflow=dataflow).cycles


def scalesim_ofmap_writes(s: Stats) -> int:
    """The ofmap write count SCALE-Sim 3.0.0 reports for the run ``s``: labsim's real writes, plus
    ``folds·(R + C)`` for output-stationary (a counting quirk of ``systolic_compute_os.py``; see the
    module docstring). Used by the parity test to reproduce the comparison, never by the model."""
    return s.writes_c + (s.folds * (s.rows + s.cols) if s.dataflow is Dataflow.OS else 0)


# --------------------------------------------------------------------------------------------------
# The trace

@dataclass(frozen=True)
class Cycle:
    """One cycle of a :class:`SystolicTrace` (arrays indexed [i, j] for PE (i, j))."""

    cycle: int
    fold: int
    phase: str
    east: np.ndarray
    south: np.ndarray
    held: np.ndarray
    mac: np.ndarray
    m: np.ndarray
    n: np.ndarray
    k: np.ndarray
    writes: np.ndarray  # (w, 3): m, n, value written to the output buffer this cycle


@dataclass(frozen=True)
class SystolicTrace:
    """Per-cycle state of every PE (field meanings in the module docstring)."""

    dataflow: Dataflow
    rows: int
    cols: int
    cycle: np.ndarray
    fold: np.ndarray
    phase: np.ndarray
    fold_origin: np.ndarray
    east: np.ndarray
    south: np.ndarray
    held: np.ndarray
    mac: np.ndarray
    m: np.ndarray
    n: np.ndarray
    k: np.ndarray
    writes: np.ndarray

    def __len__(self) -> int:
        return len(self.cycle)

    def __getitem__(self, t: int) -> Cycle:
        t = range(len(self))[t]
        w = self.writes[self.writes[:, 0] == t]
        return Cycle(cycle=t, fold=int(self.fold[t]), phase=str(self.phase[t]), east=self.east[t],
                     south=self.south[t], held=self.held[t], mac=self.mac[t], m=self.m[t], n=self.n[t],
                     k=self.k[t], writes=w[:, 1:])

    @property
    def busy(self) -> np.ndarray:
        """Useful multiply-adds per cycle (n,)."""
        return self.mac.sum(axis=(1, 2))


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


# --------------------------------------------------------------------------------------------------
# The simulation

def _as_matrix(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    return a


def _phase_names(df: Dataflow, T: int, R: int, C: int) -> np.ndarray:
    u = np.arange(T + R + C - 2)
    ph = np.where(u >= T, "drain", np.where(u < R + C - 2, "fill", "steady")).astype("<U7")
    if df is not Dataflow.OS:
        ph = np.concatenate([np.full(R, "preload", dtype="<U7"), ph])
    return ph


def _skew_rows(X: np.ndarray, pad: int) -> np.ndarray:
    """X (F, R, T) -> S (F, R, pad + T + R - 1 + pad) with S[f, i, pad + t + i] = X[f, i, t], zeros
    elsewhere: row i of the stream starts i cycles late (the skew), with ``pad`` zeros at both ends."""
    F, R, T = X.shape
    S = np.zeros((F, R, T + R - 1 + 2 * pad), dtype=X.dtype)
    i = np.arange(R)[:, None]
    S[:, i, pad + i + np.arange(T)[None, :]] = X
    return S


def _run_os(Af, Bf, R, C, record):
    """Output-stationary, a batch of folds. Af (F, R, K): rows of A for each fold (zeros for unused
    rows); Bf (F, K, C). Returns the accumulators (F, R, C) and, if ``record``, per-cycle registers."""
    F, _, K = Af.shape
    P = K + R + C - 2
    # East stream of row i: A[i, t] at cycle t + i. Stored reversed in time so that the window of C
    # registers (PE j holds the value that entered j cycles ago) is a forward slice.
    E = _skew_rows(Af, C - 1)[:, :, ::-1].copy()            # E[f, i, q], q = L-1-(C-1)-s
    Sb = _skew_rows(np.swapaxes(Bf, 1, 2), R - 1)[:, :, ::-1]   # south stream per column j
    Sb = np.ascontiguousarray(np.swapaxes(Sb, 1, 2))           # (F, L', C)
    L, Lb = E.shape[2], Sb.shape[1]
    acc = np.zeros((F, R, C), dtype=np.result_type(Af, Bf))
    tmp = np.empty_like(acc)
    rec = None
    if record:
        rec = {"east": np.empty((F, P, R, C), acc.dtype), "south": np.empty((F, P, R, C), acc.dtype),
               "held": np.empty((F, P, R, C), acc.dtype)}
    for t in range(P):
        # PE (i, j) holds the east value that entered row i at cycle t - j: E index (L-1-(C-1)) - (t - j)
        q0 = L - C - t
        east = E[:, :, q0:q0 + C]
        r0 = Lb - R - t
        south = Sb[:, r0:r0 + R, :]
        np.multiply(east, south, out=tmp)
        acc += tmp
        if record:
            rec["east"][:, t] = east
            rec["south"][:, t] = south
            rec["held"][:, t] = acc
    return acc, rec, P


def _run_stationary(Xf, Wf, R, C, record):
    """Weight/input-stationary, a batch of folds. Xf (F, R, T): the streamed operand, row i carrying
    X[t, k0 + i]; Wf (F, R, C): the stationary values. Returns the sums leaving the bottom row,
    unskewed, (F, T, C), and per-cycle registers if ``record``."""
    F, _, T = Xf.shape
    P = T + R + C - 2
    E = _skew_rows(Xf, C - 1)[:, :, ::-1].copy()
    L = E.shape[2]
    dt = np.result_type(Xf, Wf)
    p_old = np.zeros((F, R, C), dtype=dt)
    p_new = np.empty_like(p_old)
    bottom = np.empty((F, P, C), dtype=dt)
    rec = None
    if record:
        rec = {"east": np.empty((F, P, R, C), dt), "south": np.empty((F, P, R, C), dt)}
    for u in range(P):
        q0 = L - C - u
        east = E[:, :, q0:q0 + C]
        np.multiply(east, Wf, out=p_new)          # each PE's product ...
        p_new[:, 1:] += p_old[:, :-1]             # ... plus the partial sum from the PE above
        bottom[:, u] = p_new[:, R - 1]
        if record:
            rec["east"][:, u] = east
            rec["south"][:, u] = p_new
        p_old, p_new = p_new, p_old
    # column j's sum for stream element t leaves the bottom row at cycle t + (R-1) + j
    t = np.arange(T)[:, None]
    j = np.arange(C)[None, :]
    return bottom[:, t + (R - 1) + j, j], rec, P


def simulate(A, B, *, rows: int, cols: int, dataflow="ws", trace: bool | None = None) -> Result:
    """Run ``A @ B`` through an R×C systolic array, cycle by cycle (see the module docstring).

    ``A`` is M×K, ``B`` is K×N. ``dataflow`` is a :class:`Dataflow` or "ws", "os", "is". ``trace``:
    record every PE's registers each cycle (default: only when cycles·R·C ≤ 200,000).
    """
    R, C = _check_dims(rows, cols)
    df = Dataflow.parse(dataflow)
    A = _as_matrix(A, "A")
    B = _as_matrix(B, "B")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A is {A.shape[0]}×{A.shape[1]} and B is {B.shape[0]}×{B.shape[1]}: A's columns "
                         f"({A.shape[1]}) must equal B's rows ({B.shape[0]}) for A @ B")
    M, K = A.shape
    N = B.shape[1]
    if 0 in (M, N, K):
        raise ValueError(f"A is {M}×{K} and B is {K}×{N}: every dimension must be at least 1")
    st = stats(M, N, K, rows=R, cols=C, dataflow=df)
    cells = st.cycles * R * C
    if trace is None:
        trace = cells <= TRACE_AUTO_CELLS
    elif trace and cells > TRACE_MAX_CELLS:
        raise ValueError(f"trace=True would record {cells:,} PE-cycles ({st.cycles:,} cycles × {R}×{C} PEs), "
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


def _batches(F: int, R: int, C: int, T: int, record: bool):
    """Folds per NumPy batch: all of them when recording the trace (bounded by TRACE_MAX_CELLS), else as
    many as keep the registers near the cache and the skewed streams within STREAM_CELLS."""
    size = F if record else max(1, min(BATCH_CELLS // (R * C), STREAM_CELLS // (max(R, C) * (T + R + C))))
    for s in range(0, F, size):
        yield s, min(F, s + size)


def _simulate_os(A, B, R, C, st, record):
    M, K = A.shape
    N = B.shape[1]
    ru, cu = _fold_sizes(M, R), _fold_sizes(N, C)
    # fold f = (row fold a, column fold b), row folds outer (SCALE-Sim's order)
    origins = np.array([(a * R, b * C, 0) for a in range(len(ru)) for b in range(len(cu))], dtype=np.int64)
    F = len(origins)
    out = np.zeros((M, N), dtype=A.dtype)
    Ap = np.zeros((-(-M // R) * R, K), dtype=A.dtype)
    Ap[:M] = A
    Bp = np.zeros((K, -(-N // C) * C), dtype=B.dtype)
    Bp[:, :N] = B
    P = st.cycles_per_fold
    recs, ran = [], 0
    for s, e in _batches(F, R, C, K, record):
        o = origins[s:e]
        Af = np.stack([Ap[m0:m0 + R] for m0 in o[:, 0]])              # (F, R, K)
        Bf = np.stack([Bp[:, n0:n0 + C] for n0 in o[:, 1]])           # (F, K, C)
        acc, rec, steps = _run_os(Af, Bf, R, C, record)
        ran += steps * len(o)
        for f, (m0, n0, _) in enumerate(o):
            mr, nc = min(R, M - m0), min(C, N - n0)
            out[m0:m0 + mr, n0:n0 + nc] = acc[f, :mr, :nc]
        if record:
            recs.append(rec)
    # counts: every A value of a fold enters its row once, every B value its column once
    rows_used = np.minimum(R, M - origins[:, 0])
    cols_used = np.minimum(C, N - origins[:, 1])
    reads_a = int((rows_used * K).sum())
    reads_b = int((cols_used * K).sum())
    writes = int((rows_used * cols_used).sum())
    macs = writes * K
    tr = None
    if record:
        rec = {k: np.concatenate([r[k] for r in recs]) for k in recs[0]}
        tr = _trace_os(rec, origins, rows_used, cols_used, M, N, K, R, C, P, out.dtype)
    return out, (reads_a, reads_b, writes, macs, ran), tr


def _trace_os(rec, origins, rows_used, cols_used, M, N, K, R, C, P, dtype):
    F = len(origins)
    t = np.arange(P)[:, None, None]
    i = np.arange(R)[None, :, None]
    j = np.arange(C)[None, None, :]
    kk = np.broadcast_to(t - i - j, (P, R, C))                       # k of the product in PE (i, j)
    inwin = (kk >= 0) & (kk < K)
    ru = rows_used[:, None, None, None]
    cu = cols_used[:, None, None, None]
    row_ok = i[None] < ru                                             # (F, 1, R, 1)
    col_ok = j[None] < cu
    east_ok = inwin[None] & row_ok
    south_ok = inwin[None] & col_ok
    mac = east_ok & south_ok
    started = (t - i - j >= 0)[None] & row_ok & col_ok
    east = np.where(east_ok, rec["east"], np.nan)
    south = np.where(south_ok, rec["south"], np.nan)
    held = np.where(started, rec["held"], np.nan)
    m = np.where(mac, origins[:, 0, None, None, None] + i[None], -1)
    n = np.where(mac, origins[:, 1, None, None, None] + j[None], -1)
    k = np.where(mac, kk[None], -1)
    # each used PE writes its sum in the cycle of its last multiply-add: t = K-1+i+j
    ff, ii, jj = np.nonzero(np.broadcast_to(row_ok & col_ok, (F, 1, R, C))[:, 0])
    tw = K - 1 + ii + jj
    vals = held[ff, tw, ii, jj]
    writes = np.stack([ff * P + tw, origins[ff, 0] + ii, origins[ff, 1] + jj, vals], axis=1).astype(np.float64)
    writes = writes[np.lexsort((writes[:, 2], writes[:, 1], writes[:, 0]))]
    return _pack(Dataflow.OS, R, C, F, P, origins, _phase_names(Dataflow.OS, K, R, C), east, south, held, mac,
                 m, n, k, writes)


def _pack(df, R, C, F, P, origins, phase, east, south, held, mac, m, n, k, writes):
    shape = (F * P, R, C)
    return SystolicTrace(dataflow=df, rows=R, cols=C, cycle=np.arange(F * P), fold=np.repeat(np.arange(F), P),
                         phase=np.tile(phase, F), fold_origin=origins,
                         east=np.asarray(east, np.float64).reshape(shape),
                         south=np.asarray(south, np.float64).reshape(shape),
                         held=np.asarray(held, np.float64).reshape(shape),
                         mac=np.asarray(mac).reshape(shape), m=np.asarray(m).reshape(shape).astype(np.int32),
                         n=np.asarray(n).reshape(shape).astype(np.int32), k=np.asarray(k).reshape(shape).astype(np.int32),
                         writes=writes)


def _simulate_stationary(A, B, R, C, df, st, record):
    """ws: X = A (M×K) streams, W = B (K×N) stays, Y = X @ W. is: X = Bᵀ (N×K), W = Aᵀ (K×M), Y = Cᵀ."""
    if df is Dataflow.WS:
        X, W = A, B
    else:
        X, W = B.T, A.T
    T, K = X.shape
    S = W.shape[1]
    rk, cs = _fold_sizes(K, R), _fold_sizes(S, C)
    # fold f = (column fold b, K-fold a), K-folds inner: an output tile's partial sums are consecutive
    kc = np.array([(a * R, b * C) for b in range(len(cs)) for a in range(len(rk))], dtype=np.int64)
    F = len(kc)
    Xp = np.zeros((T, -(-K // R) * R), dtype=X.dtype)
    Xp[:, :K] = X
    Wp = np.zeros((-(-K // R) * R, -(-S // C) * C), dtype=W.dtype)
    Wp[:K, :S] = W
    Y = np.zeros((T, S), dtype=np.result_type(X, W))
    P = st.cycles_per_fold - R          # stream cycles per fold (the preload is R more)
    recs, wf_all, ran = [], [], 0
    for s, e in _batches(F, R, C, T, record):
        o = kc[s:e]
        Xf = np.stack([Xp[:, k0:k0 + R].T for k0 in o[:, 0]])                      # (F, R, T)
        Wf = np.stack([Wp[k0:k0 + R, c0:c0 + C] for k0, c0 in o])                  # (F, R, C)
        out, rec, steps = _run_stationary(Xf, Wf, R, C, record)
        ran += (R + steps) * len(o)      # R cycles of preload, then the stream
        for f, (k0, c0) in enumerate(o):
            ncol = min(C, S - c0)
            Y[:, c0:c0 + ncol] += out[f, :, :ncol]     # the output buffer adds each K-fold's partial sums
        if record:
            recs.append(rec)
            wf_all.append(Wf)
    rows_used = np.minimum(R, K - kc[:, 0])
    cols_used = np.minimum(C, S - kc[:, 1])
    reads_x = int((rows_used * T).sum())            # the streamed operand: T values per used row
    reads_w = int((rows_used * cols_used).sum())    # the preload: each stationary value once per fold
    writes = int((cols_used * T).sum())             # each used column writes T sums per fold
    macs = int((rows_used * cols_used).sum()) * T
    reads_a, reads_b = (reads_x, reads_w) if df is Dataflow.WS else (reads_w, reads_x)
    out = Y if df is Dataflow.WS else Y.T.copy()
    tr = None
    if record:
        rec = {k: np.concatenate([r[k] for r in recs]) for k in recs[0]}
        tr = _trace_stationary(df, rec, np.concatenate(wf_all), kc, rows_used, cols_used, T, R, C, P)
    return out, (reads_a, reads_b, writes, macs, ran), tr


def _trace_stationary(df, rec, Wf, kc, rows_used, cols_used, T, R, C, P):
    F = len(kc)
    u = np.arange(P)[:, None, None]
    i = np.arange(R)[None, :, None]
    j = np.arange(C)[None, None, :]
    tt = np.broadcast_to(u - i - j, (P, R, C))                       # stream element in PE (i, j)
    inwin = ((tt >= 0) & (tt < T))[None]
    ru = rows_used[:, None, None, None]
    cu = cols_used[:, None, None, None]
    row_ok = i[None] < ru
    col_ok = j[None] < cu
    east_ok = inwin & row_ok
    south_ok = inwin & col_ok                                        # partial sums pass every row
    mac = east_ok & col_ok
    east = np.where(east_ok, rec["east"], np.nan)
    south = np.where(south_ok, rec["south"], np.nan)
    held_val = np.where((row_ok & col_ok)[:, 0], Wf, np.nan)          # (F, R, C)
    held = np.broadcast_to(held_val[:, None], (F, P, R, C))
    kidx = np.where(mac, kc[:, 0, None, None, None] + i[None], -1)
    tidx = np.where(mac, tt[None], -1)
    cidx = np.where(mac, kc[:, 1, None, None, None] + j[None], -1)
    # preload: at preload cycle p the top row receives stationary row R-1-p; PE row i holds row R-1-p+i
    p = np.arange(R)[:, None, None]
    src = R - 1 - p + i                                              # (R, R, 1)
    loaded = (src <= R - 1) & (i <= p)
    pre_held = np.where(loaded[None], held_val[:, np.clip(src, 0, R - 1)[:, :, 0], :], np.nan)  # (F, R, R, C)
    nanf = np.full((F, R, R, C), np.nan)
    neg = np.full((F, R, R, C), -1, dtype=np.int64)
    east = np.concatenate([nanf, east], axis=1)
    south = np.concatenate([nanf, south], axis=1)
    held = np.concatenate([pre_held, held], axis=1)
    mac = np.concatenate([np.zeros((F, R, R, C), bool), np.broadcast_to(mac, (F, P, R, C))], axis=1)
    kidx = np.concatenate([neg, np.broadcast_to(kidx, (F, P, R, C))], axis=1)
    tidx = np.concatenate([neg, np.broadcast_to(tidx, (F, P, R, C))], axis=1)
    cidx = np.concatenate([neg, np.broadcast_to(cidx, (F, P, R, C))], axis=1)
    m, n = (tidx, cidx) if df is Dataflow.WS else (cidx, tidx)
    # writes: column j's sum for element t leaves the bottom row at stream cycle t + R-1 + j
    Pf = P + R
    ff, jj, t_ = [a.ravel() for a in np.meshgrid(np.arange(F), np.arange(C), np.arange(T), indexing="ij")]
    keep = jj < cols_used[ff]
    ff, jj, t_ = ff[keep], jj[keep], t_[keep]
    uu = t_ + R - 1 + jj
    vals = rec["south"][ff, uu, R - 1, jj]
    colidx = kc[ff, 1] + jj
    wm, wn = (t_, colidx) if df is Dataflow.WS else (colidx, t_)
    writes = np.stack([ff * Pf + R + uu, wm, wn, vals], axis=1).astype(np.float64)
    writes = writes[np.lexsort((writes[:, 2], writes[:, 1], writes[:, 0]))]
    if df is Dataflow.WS:
        origins = np.stack([np.zeros(F, np.int64), kc[:, 1], kc[:, 0]], axis=1)
    else:
        origins = np.stack([kc[:, 1], np.zeros(F, np.int64), kc[:, 0]], axis=1)
    return _pack(df, R, C, F, Pf, origins, _phase_names(df, T, R, C), east, south, held, mac, m, n, kidx, writes)
