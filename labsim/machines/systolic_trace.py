"""The systolic array's per-cycle trace (:class:`SystolicTrace`), built from the registers that
``systolic_machine`` recorded. A :class:`SystolicTrace` is also an ``ls.Trace``: its events are the
busy spans of each PE row (``UnitKind.PE_ROW``), so ``viz.timeline`` draws it. Field meanings are in
the docstring of :mod:`labsim.machines.systolic`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .events import Event, EventKind, Trace, UnitId, UnitKind
from .systolic_closed import Dataflow

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


@dataclass(frozen=True, eq=False, kw_only=True)
class SystolicTrace(Trace):
    """Per-cycle state of every PE (field meanings in the docstring of :mod:`labsim.machines.systolic`).

    It is also an ``ls.Trace``: one unit per PE row (``UnitKind.PE_ROW``, row 0 at the top), with a
    ``COMPUTE`` event for each run of cycles in which some PE of the row did a multiply-add and a
    ``COPY`` event for each preload (ws, is). Event times are in **cycles** (cycle t runs from t to
    t + 1): multiply by the clock period for seconds. ``busy`` here is the per-cycle count of
    multiply-adds; ``busy_time(unit)`` is :meth:`Trace.busy` for one row.
    """

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

    def busy_time(self, unit: UnitId) -> float:
        """Cycles ``unit`` (a PE row) spent in events: :meth:`Trace.busy`."""
        return Trace.busy(self, unit)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of True in a 1-D bool array (end exclusive)."""
    d = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def _row_events(R: int, phase: np.ndarray, mac: np.ndarray, fold: np.ndarray) -> tuple[tuple, tuple]:
    """The PE-row units and their events (times in cycles): multiply-add runs and preloads, per fold."""
    units = tuple(UnitId(0, UnitKind.PE_ROW, i) for i in range(R))
    events = []
    pre = phase == "preload"
    busy = mac.any(axis=2)                                       # (cycles, R)
    for i, u in enumerate(units):
        for a, b in _runs(pre):
            events.append(Event(u, f"preload, fold {int(fold[a])}", float(a), float(b), EventKind.COPY,
                                detail="stationary values move down one row per cycle"))
        for a, b in _runs(busy[:, i]):
            events.append(Event(u, f"multiply-add, fold {int(fold[a])}", float(a), float(b), EventKind.COMPUTE,
                                detail=f"cycles {a + 1}–{b}", flops=2 * int(mac[a:b, i].sum())))
    return units, tuple(sorted(events, key=lambda e: e.start))

def _phase_names(df: Dataflow, T: int, R: int, C: int) -> np.ndarray:
    u = np.arange(T + R + C - 2)
    ph = np.where(u >= T, "drain", np.where(u < R + C - 2, "fill", "steady")).astype("<U7")
    if df is not Dataflow.OS:
        ph = np.concatenate([np.full(R, "preload", dtype="<U7"), ph])
    return ph

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
    mac = np.asarray(mac).reshape(shape)
    phase = np.tile(phase, F)
    fold = np.repeat(np.arange(F), P)
    units, events = _row_events(R, phase, mac, fold)
    return SystolicTrace(events=events, units=units, dataflow=df, rows=R, cols=C, cycle=np.arange(F * P), fold=fold,
                         phase=phase, fold_origin=origins,
                         east=np.asarray(east, np.float64).reshape(shape),
                         south=np.asarray(south, np.float64).reshape(shape),
                         held=np.asarray(held, np.float64).reshape(shape),
                         mac=mac, m=np.asarray(m).reshape(shape).astype(np.int32),
                         n=np.asarray(n).reshape(shape).astype(np.int32), k=np.asarray(k).reshape(shape).astype(np.int32),
                         writes=writes)

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
