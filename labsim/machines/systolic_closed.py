"""The systolic array in closed form: the dataflows, their mappings, and every number of one product
(cycles, folds, utilisation, SRAM accesses) without simulating. :mod:`labsim.machines.systolic` (the
public ``ls.systolic``) re-exports these and explains the model; ``systolic_machine`` moves the real
values cycle by cycle and must agree with them.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ..support.errors import ArgumentError, count

# SCALE-Sim's "Total Cycles" is labsim's cycle count minus this (it reports the last 0-based index).
SCALESIM_CYCLE_OFFSET = 1

TRACE_AUTO_CELLS = 200_000       # record the trace by default when cycles·R·C is at most this (≈ 10 MB)
TRACE_MAX_CELLS = 4_000_000      # trace=True refuses more (the trace keeps 7 arrays of this many cells)
BATCH_CELLS = 1 << 16            # PE registers simulated per NumPy step (folds × R × C), sized for L2
MAX_DIM = 1 << 53               # the largest dimension accepted: every count stays exact in a float64
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
        raise ArgumentError(f"ls.systolic: dataflow must be one of {[d.value for d in cls]} (or ls.systolic.Dataflow.WS/OS/IS), "
                         f"got {value!r}")


def _check_dims(rows, cols, fn: str = "ls.systolic.stats", **dims) -> tuple[int, int]:
    R, C = count(fn, "rows", rows, minimum=-2**63, maximum=MAX_DIM), count(fn, "cols", cols, minimum=-2**63, maximum=MAX_DIM)
    for name, v in (("rows", R), ("cols", C)):
        if v < 1:
            raise ArgumentError(f"{fn}: the array needs at least one row and one column: {name}={v} "
                                f"(accepted: an integer >= 1, processing elements)")
    for name, v in dims.items():
        count(fn, f"matrix dimension {name}", v, minimum=1, maximum=MAX_DIM)
    return R, C


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
    R, C = _check_dims(rows, cols, "ls.systolic.stats", M=M, N=N, K=K)
    M, N, K = int(M), int(N), int(K)
    df = Dataflow.parse(dataflow)
    Sr, Sc, T = _mapping(df, M, N, K)
    rf, cf = -(-Sr // R), -(-Sc // C)                  # row folds, column folds (O(1): no folds × folds matrix)
    folds = rf * cf
    per = _per_fold(df, T, R, C)
    total = folds * per
    c_util = per if df is Dataflow.OS else per + C - 1
    # Σ over folds of the PEs used = Sr·Sc (each fold's rows used × columns used, summed over both axes)
    mapping = float(Sr * Sc) / folds / (R * C)
    if df is Dataflow.OS:
        reads_a, reads_b, writes = M * K * cf, K * N * rf, M * N
    elif df is Dataflow.WS:
        reads_a, reads_b, writes = M * K * cf, K * N, M * N * rf
    else:
        reads_a, reads_b, writes = M * K, K * N * cf, M * N * rf
    return Stats(M=M, N=N, K=K, rows=R, cols=C, dataflow=df, folds=folds, row_folds=rf, col_folds=cf,
                 cycles_per_fold=per, cycles=total, macs=M * N * K,
                 utilization=M * N * K / (total * R * C),
                 mapping_efficiency=mapping,
                 compute_utilization=mapping * T / c_util,
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
