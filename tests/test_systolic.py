"""The cycle-level systolic array (``ls.systolic``): values against NumPy, cycles against the closed form,
and the per-cycle trace against what a systolic array does (values move one PE per cycle, skewed).

Closed forms used below (derived in labsim/machines/systolic.py's docstring): a dataflow spreads (Sr, Sc)
over the array and streams T in time: os (M, N | K), ws (K, N | M), is (K, M | N). Folds = ⌈Sr/R⌉·⌈Sc/C⌉.
A fold streams T elements; element t reaches PE (i, j) at cycle t + i + j, so the last one reaches the
far corner at T-1 + R-1 + C-1, which makes T + R + C - 2 cycles, plus R cycles of preload for ws/is.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labsim as ls
from labsim import systolic as sy

DATAFLOWS = ["ws", "os", "is"]


def ints(rng, shape):
    """Small integers as floats: every partial sum is exact, so results compare with ==."""
    return rng.integers(-4, 5, shape).astype(np.float64)


def by_hand(M, N, K, R, C, df):
    """The closed form written out again, independently of labsim."""
    if df == "os":
        return math.ceil(M / R) * math.ceil(N / C) * (K + R + C - 2)
    if df == "ws":
        return math.ceil(K / R) * math.ceil(N / C) * (M + 2 * R + C - 2)
    return math.ceil(K / R) * math.ceil(M / C) * (N + 2 * R + C - 2)


# ----------------------------------------------------------------------------------------------
# values and cycles

@pytest.mark.parametrize("df", DATAFLOWS)
@pytest.mark.parametrize("M, N, K, R, C", [(4, 4, 4, 4, 4), (5, 7, 3, 4, 4), (33, 17, 9, 8, 16), (3, 5, 7, 2, 3),
                                           (1, 1, 1, 1, 1), (10, 2, 13, 4, 3), (6, 9, 1, 5, 2), (1, 12, 11, 3, 7)])
def test_output_equals_numpy_and_cycles_equal_closed_form(df, M, N, K, R, C):
    rng = np.random.default_rng(M * 1000 + N * 100 + K)
    A, B = ints(rng, (M, K)), ints(rng, (K, N))
    r = sy.simulate(A, B, rows=R, cols=C, dataflow=df)
    np.testing.assert_array_equal(r.output, A @ B)
    assert r.cycles == sy.cycles(M, N, K, rows=R, cols=C, dataflow=df) == by_hand(M, N, K, R, C, df)
    s = r.stats
    assert r.folds == s.folds == s.row_folds * s.col_folds
    assert r.macs == M * N * K
    assert r.utilization == pytest.approx(M * N * K / (r.cycles * R * C))
    assert (r.reads_a, r.reads_b, r.writes_c) == (s.reads_a, s.reads_b, s.writes_c)
    assert 0 < r.utilization <= 1 and 0 < r.mapping_efficiency <= 1


@settings(max_examples=40, deadline=None)
@given(M=st.integers(1, 12), N=st.integers(1, 12), K=st.integers(1, 12), R=st.integers(1, 6), C=st.integers(1, 6),
       df=st.sampled_from(DATAFLOWS), seed=st.integers(0, 2**16))
def test_random_shapes_property(M, N, K, R, C, df, seed):
    rng = np.random.default_rng(seed)
    A, B = ints(rng, (M, K)), ints(rng, (K, N))
    r = sy.simulate(A, B, rows=R, cols=C, dataflow=df)
    np.testing.assert_array_equal(r.output, A @ B)
    assert r.cycles == by_hand(M, N, K, R, C, df)
    assert len(r.trace) == r.cycles
    assert int(r.trace.mac.sum()) == M * N * K


@pytest.mark.parametrize("df", DATAFLOWS)
def test_float_inputs_and_batches_of_folds(df):
    """Random floats, an array large enough that folds run in several NumPy batches, no trace."""
    rng = np.random.default_rng(7)
    M, N, K = 300, 270, 290
    A, B = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    r = sy.simulate(A, B, rows=128, cols=128, dataflow=df)
    assert r.trace is None                     # cycles·R·C is far above the default trace limit
    assert r.folds > sy.BATCH_CELLS // (128 * 128)   # more folds than one batch holds
    np.testing.assert_allclose(r.output, A @ B, rtol=1e-10, atol=1e-10)
    assert r.cycles == by_hand(M, N, K, 128, 128, df)


def test_integer_and_float32_inputs_keep_their_dtype():
    rng = np.random.default_rng(3)
    A = rng.integers(-9, 9, (7, 5))
    B = rng.integers(-9, 9, (5, 6))
    r = sy.simulate(A, B, rows=3, cols=4, dataflow="os")
    assert r.output.dtype == (A @ B).dtype
    np.testing.assert_array_equal(r.output, A @ B)
    r = sy.simulate(A.astype(np.float32), B.astype(np.float32), rows=3, cols=4, dataflow="ws")
    assert r.output.dtype == np.float32
    np.testing.assert_array_equal(r.output, (A @ B).astype(np.float32))


def test_dataflow_enum_and_strings():
    assert [d.value for d in sy.Dataflow] == ["ws", "os", "is"]
    assert sy.Dataflow.WS.name == "WS" and sy.Dataflow("is") is sy.Dataflow.IS
    A, B = np.ones((3, 2)), np.ones((2, 4))
    for spelling in (sy.Dataflow.OS, "os", "OS", " Os "):
        assert sy.simulate(A, B, rows=2, cols=2, dataflow=spelling).dataflow is sy.Dataflow.OS
    assert ls.systolic.cycles(3, 4, 2, rows=2, cols=2, dataflow=sy.Dataflow.IS) == by_hand(3, 4, 2, 2, 2, "is")


def test_closed_form_for_sizes_too_big_to_simulate():
    # 8192³ on a 128×128 array: 64·64 folds, each 8192 + 128 + 128 - 2 cycles (os)
    assert sy.cycles(8192, 8192, 8192, rows=128, cols=128, dataflow="os") == 64 * 64 * (8192 + 254)
    s = sy.stats(8192, 8192, 8192, rows=128, cols=128, dataflow="ws")
    assert s.cycles == 64 * 64 * (8192 + 256 + 126)
    assert s.mapping_efficiency == 1.0
    assert s.reads_b == 8192 * 8192                   # weight-stationary reads each weight once
    assert s.reads_a == 8192 * 8192 * 64              # ... and the inputs once per column fold
    assert s.scalesim_total_cycles == s.cycles - 1


def test_weight_stationary_reads_each_weight_once_and_edge_folds_cost_full_time():
    # K = N = 129 on 128×128: four folds, three of them nearly empty; each still costs M + 2R + C - 2
    s = sy.stats(64, 129, 129, rows=128, cols=128, dataflow="ws")
    assert s.folds == 4 and s.cycles == 4 * (64 + 256 + 126)
    assert s.mapping_efficiency == pytest.approx((128 * 128 + 128 + 128 + 1) / 4 / (128 * 128))
    assert s.reads_b == 129 * 129
    assert s.writes_c == 64 * 129 * 2                 # two K-folds: each output written twice


# ----------------------------------------------------------------------------------------------
# the trace: what moves where, cycle by cycle

def run(df, M=5, N=6, K=7, R=3, C=4, seed=1):
    rng = np.random.default_rng(seed)
    A, B = ints(rng, (M, K)) + 10 * np.arange(M)[:, None], ints(rng, (K, N))
    return A, B, sy.simulate(A, B, rows=R, cols=C, dataflow=df, trace=True)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_every_product_is_computed_once_with_the_right_operands(df):
    A, B, r = run(df)
    tr = r.trace
    t, i, j = np.nonzero(tr.mac)
    m, n, k = tr.m[t, i, j], tr.n[t, i, j], tr.k[t, i, j]
    assert len(t) == A.shape[0] * B.shape[1] * A.shape[1]
    assert len(set(zip(m.tolist(), n.tolist(), k.tolist()))) == len(t)   # each (m, n, k) exactly once
    a_val, b_val = A[m, k], B[k, n]
    if df == "os":
        np.testing.assert_array_equal(tr.east[t, i, j], a_val)
        np.testing.assert_array_equal(tr.south[t, i, j], b_val)
    elif df == "ws":
        np.testing.assert_array_equal(tr.east[t, i, j], a_val)
        np.testing.assert_array_equal(tr.held[t, i, j], b_val)
    else:
        np.testing.assert_array_equal(tr.east[t, i, j], b_val)
        np.testing.assert_array_equal(tr.held[t, i, j], a_val)
    # the skew: in a fold, stream element e meets PE (i, j) at stream cycle e + i + j
    fold_start = tr.fold[t] * (r.cycles // r.folds) + (0 if df == "os" else r.rows)
    e = {"os": k, "ws": m, "is": n}[df]
    np.testing.assert_array_equal(t - fold_start, e + i + j)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_values_move_one_pe_per_cycle(df):
    _, _, r = run(df)
    tr = r.trace
    same_fold = tr.fold[1:] == tr.fold[:-1]
    # east: what PE (i, j) holds at t+1 is what PE (i, j-1) held at t
    now, before = tr.east[1:, :, 1:], tr.east[:-1, :, :-1]
    ok = same_fold[:, None, None] & ~np.isnan(now)
    assert ok.sum() > 50
    np.testing.assert_array_equal(now[ok], before[ok])
    if df == "os":  # B moves south unchanged
        now, before = tr.south[1:, 1:, :], tr.south[:-1, :-1, :]
        ok = same_fold[:, None, None] & ~np.isnan(now)
        np.testing.assert_array_equal(now[ok], before[ok])
    else:           # the partial sum from the PE above plus this PE's product
        now, before = tr.south[1:, 1:, :], tr.south[:-1, :-1, :]
        prod = np.where(tr.mac[1:, 1:, :], tr.east[1:, 1:, :] * tr.held[1:, 1:, :], 0.0)
        ok = same_fold[:, None, None] & ~np.isnan(now)
        assert ok.sum() > 50
        np.testing.assert_array_equal(now[ok], before[ok] + prod[ok])


@pytest.mark.parametrize("df", DATAFLOWS)
def test_writes_add_up_to_the_product_and_the_last_leaves_in_the_last_cycle(df):
    M, N, K, R, C = 8, 8, 6, 2, 4          # every dimension divides the array: no edge folds
    A, B, r = run(df, M=M, N=N, K=K, R=R, C=C)
    tr = r.trace
    assert len(tr) == r.cycles
    w = tr.writes
    assert len(w) == r.writes_c
    total = np.zeros((M, N))
    np.add.at(total, (w[:, 1].astype(int), w[:, 2].astype(int)), w[:, 3])
    np.testing.assert_array_equal(total, A @ B)
    assert int(w[:, 0].max()) == r.cycles - 1            # the run ends when the last value leaves
    assert (np.diff(w[:, 0]) >= 0).all()
    one = tr[int(w[0, 0])]
    assert one.writes.shape[1] == 3 and len(one.writes) == int((w[:, 0] == w[0, 0]).sum())


def test_output_stationary_running_sums():
    A, B, r = run("os", M=3, N=4, K=5, R=3, C=4)          # one fold: PE (i, j) owns C[i, j]
    tr = r.trace
    assert r.folds == 1
    # PE (i, j) has its final sum from cycle K-1+i+j on
    for i in range(3):
        for j in range(4):
            assert tr.held[5 - 1 + i + j, i, j] == (A @ B)[i, j]
            assert np.isnan(tr.held[i + j - 1, i, j]) if i + j > 0 else True


@pytest.mark.parametrize("df", ["ws", "is"])
def test_preload_shifts_the_stationary_operand_down_row_by_row(df):
    A, B, r = run(df, M=3, N=3, K=3, R=3, C=3)            # one fold
    tr = r.trace
    W = B if df == "ws" else A.T
    assert list(tr.phase[:3]) == ["preload"] * 3
    for p in range(3):
        # at preload cycle p, row 0 has just received row 2-p of the stationary block
        np.testing.assert_array_equal(tr.held[p, 0], W[2 - p])
        assert np.isnan(tr.held[p, p + 1:]).all()
        assert not tr.mac[p].any()
    np.testing.assert_array_equal(tr.held[3], W)          # in place when the stream starts


@pytest.mark.parametrize("df, T", [("os", 7), ("ws", 5), ("is", 6)])
def test_phases(df, T):
    _, _, r = run(df)                                     # M=5, N=6, K=7 on 3×4
    R, C = 3, 4
    ph = r.trace.phase[r.trace.fold == 0]
    assert (ph == "preload").sum() == (0 if df == "os" else R)
    assert (ph == "fill").sum() == min(T, R + C - 2)
    assert (ph == "steady").sum() == max(0, T - (R + C - 2))
    assert (ph == "drain").sum() == R + C - 2
    busy = r.trace.busy[r.trace.fold == 0]
    assert busy[ph == "steady"].min() >= busy[ph == "fill"].max() if (ph == "steady").any() else True


def test_trace_is_off_by_default_for_large_runs_and_bounded():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((128, 128)), rng.standard_normal((128, 128))   # 16 folds × 318 cycles × 1,024 PEs
    assert sy.simulate(A, B, rows=32, cols=32).trace is None
    assert sy.simulate(A[:4, :4], B[:4, :4], rows=4, cols=4).trace is not None
    with pytest.raises(ValueError, match="trace=True would record .* over the limit"):
        sy.simulate(np.ones((512, 512)), np.ones((512, 64)), rows=32, cols=64, trace=True)


# ----------------------------------------------------------------------------------------------
# bad input

def test_errors_name_the_problem():
    A, B = np.ones((3, 4)), np.ones((5, 6))
    with pytest.raises(ValueError, match=r"A is 3×4 and B is 5×6"):
        sy.simulate(A, B, rows=2, cols=2)
    with pytest.raises(ValueError, match="at least one row and one column: rows=0"):
        sy.simulate(A, np.ones((4, 2)), rows=0, cols=2)
    with pytest.raises(ValueError, match="cols=-1"):
        sy.cycles(3, 3, 3, rows=2, cols=-1)
    with pytest.raises(TypeError, match="rows must be an integer"):
        sy.cycles(3, 3, 3, rows=2.5, cols=2)
    with pytest.raises(ValueError, match=r"dataflow must be one of \['ws', 'os', 'is'\]"):
        sy.simulate(A, np.ones((4, 2)), rows=2, cols=2, dataflow="rs")
    with pytest.raises(ValueError, match="A must be a 2-D matrix, got shape"):
        sy.simulate(np.ones(4), np.ones((4, 2)), rows=2, cols=2)
    with pytest.raises(ValueError, match="matrix dimension K must be at least 1"):
        sy.cycles(3, 3, 0, rows=2, cols=2)
    with pytest.raises(ValueError, match="every dimension must be at least 1"):
        sy.simulate(np.ones((0, 3)), np.ones((3, 2)), rows=2, cols=2)
    with pytest.raises(TypeError, match="must hold real numbers"):
        sy.simulate(np.array([["a"]]), np.ones((1, 1)), rows=1, cols=1)
