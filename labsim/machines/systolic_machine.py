"""The cycle-by-cycle systolic machine: the NumPy kernels that move real values through an R×C array of
PEs, a batch of folds at a time (how and why in the docstring of :mod:`labsim.machines.systolic`).
"""
from __future__ import annotations

import numpy as np

from ..support.errors import ArgumentError, ArgumentTypeError

from .systolic_closed import BATCH_CELLS, STREAM_CELLS, Dataflow, _fold_sizes
from .systolic_trace import _trace_os, _trace_stationary

def _as_matrix(x, name: str) -> np.ndarray:
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as e:
        raise ArgumentError(f"ls.systolic.simulate: {name} must be a 2-D matrix of real numbers, got {type(x).__name__} "
                            f"that NumPy cannot make an array of ({e})") from None
    if a.ndim != 2:
        raise ArgumentError(f"ls.systolic.simulate: {name} must be a 2-D matrix, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise ArgumentTypeError(f"ls.systolic.simulate: {name} must hold real numbers (bool, int or float), "
                                f"got dtype {a.dtype}")
    return a

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
