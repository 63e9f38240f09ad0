"""The systolic-array animation (labsim.viz.systolic): every number drawn comes from the simulation,
frames are animate()-ready (same traces in each), the page stays small and a control change is fast."""
from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest

pytest.importorskip("plotly")

from labsim import systolic as sy  # noqa: E402
from labsim.viz import palette  # noqa: E402
from labsim.viz import systolic as vs  # noqa: E402


def num(s: str) -> float:
    return float(s.replace("−", "-"))


def pe_lines(fig, i, j, C):
    """The three text lines of PE (i, j): (south, east, held) without arrows and tags."""
    txt = fig.data[1].text[i * C + j]
    south, east, held = txt.split("<br>")
    held = re.sub(r"</?b>", "", held).strip()
    return south.strip().lstrip("↓"), east.strip().lstrip("→"), held


@pytest.mark.parametrize("df", ["ws", "os", "is"])
def test_one_frame_per_cycle_with_the_same_traces(df):
    A, B = vs.example_operands(4, 4, 4)
    frames = vs.systolic_frames(A, B, rows=4, cols=4, dataflow=df)
    assert len(frames) == sy.cycles(4, 4, 4, rows=4, cols=4, dataflow=df)
    kinds = [t.type for t in frames[0].data]
    assert kinds == ["heatmap", "scatter", "scatter", "scatter", "scatter"]
    assert all([t.type for t in f.data] == kinds for f in frames)
    assert all(len(f.data[1].text) == 16 for f in frames)
    labels = vs.step_labels(A, B, rows=4, cols=4, dataflow=df)
    assert len(labels) == len(frames) and labels[0] == f"1 of {len(frames)} · " + ("fill" if df == "os" else "preload")


@pytest.mark.parametrize("df", ["ws", "os", "is"])
def test_the_numbers_in_the_cells_are_the_simulation_s(df):
    A, B = vs.example_operands(5, 6, 7, seed=3)
    r = sy.simulate(A, B, rows=3, cols=4, dataflow=df, trace=True)
    frames = vs.systolic_frames(A, B, rows=3, cols=4, dataflow=df, max_steps=10_000)
    assert len(frames) == r.cycles
    checked = 0
    for t in range(0, r.cycles, 7):
        for i in range(3):
            for j in range(4):
                south, east, held = pe_lines(frames[t], i, j, 4)
                for shown, val in ((south, r.trace.south[t, i, j]), (east, r.trace.east[t, i, j]),
                                   (held, r.trace.held[t, i, j])):
                    if np.isnan(val):
                        assert shown == ""
                    else:
                        assert num(shown) == pytest.approx(val)
                        checked += 1
    assert checked > 100
    # the output buffer of the last frame is A @ B
    out = [num(s) for s in frames[-1].data[4].text]
    np.testing.assert_array_equal(np.array(out).reshape(5, 6), A @ B)
    # and is empty before the first write
    first_write = int(r.trace.writes[0, 0])
    assert all(s == "" for s in frames[first_write - 1].data[4].text) if first_write > 0 else True


def test_operands_wait_at_the_edges_skewed():
    """os, cycle 0: A[i, k] enters row i at cycle k + i, so the value shown d cells left of row i is
    A[i, d - i] (the one that enters d cycles from now); likewise B above column j."""
    A, B = vs.example_operands(4, 4, 4, seed=5)
    f0 = vs.systolic_frames(A, B, rows=4, cols=4, dataflow="os", queue=3)[0]
    left = {(int(y), -int(x)): s for x, y, s in zip(f0.data[2].x, f0.data[2].y, f0.data[2].text)}
    top = {(int(x), -int(y)): s for x, y, s in zip(f0.data[3].x, f0.data[3].y, f0.data[3].text)}
    for i in range(4):
        for d in range(1, 4):
            k = d - i
            assert left[(i, d)] == (vs._fmt(A[i, k]) if 0 <= k < 4 else "")
    for j in range(4):
        for d in range(1, 4):
            k = d - j
            assert top[(j, d)] == (vs._fmt(B[k, j]) if 0 <= k < 4 else "")


def test_preload_shows_the_stationary_rows_waiting_above():
    A, B = vs.example_operands(3, 3, 3, seed=2)
    f = vs.systolic_frames(A, B, rows=3, cols=3, dataflow="ws", queue=3)[0]   # preload cycle 0
    top = {(int(x), -int(y)): s for x, y, s in zip(f.data[3].x, f.data[3].y, f.data[3].text)}
    # row 2 of B entered this cycle; rows 1 and 0 wait 1 and 2 cycles above
    for j in range(3):
        assert top[(j, 1)] == vs._fmt(B[1, j]) and top[(j, 2)] == vs._fmt(B[0, j]) and top[(j, 3)] == ""
        assert pe_lines(f, 0, j, 3)[2] == vs._fmt(B[2, j])


def test_colours_come_from_the_palette_and_long_runs_are_sampled():
    A, B = vs.example_operands(8, 8, 8)
    frames = vs.systolic_frames(A, B, rows=4, cols=4, dataflow="ws", max_steps=40)
    r = sy.simulate(A, B, rows=4, cols=4, dataflow="ws")
    assert len(frames) == 40 < r.cycles
    shown = vs.shown_cycles(r.cycles, 40)
    assert shown[0] == 0 and shown[-1] == r.cycles - 1 and len(shown) == 40
    allowed = set(palette.ROLE.values()) | set(palette.TINT.values()) | {"rgba(0,0,0,0)"}
    assert {c for _, c in frames[0].data[0].colorscale} <= allowed
    with pytest.raises(ValueError, match="no trace"):
        vs.systolic_frames(np.ones((64, 64)), np.ones((64, 64)), rows=32, cols=32,
                           result=sy.simulate(np.ones((64, 64)), np.ones((64, 64)), rows=32, cols=32, trace=False))


def test_animation_page_weight_and_control_latency(monkeypatch):
    """The website face of a 4×4 array, 4·4·4, three dataflows: under 1 MB; the live face: a control
    change (new frames) well under the 100 ms budget once warm (p95 printed by bench_systolic.py)."""
    monkeypatch.setenv("LABSIM_BOOK", "1")
    a = vs.systolic_animation({"dataflow": ["ws", "os", "is"]})
    page = a._repr_mimebundle_()["text/html"]
    assert len(page.encode()) < 1_000_000
    payload = json.loads(re.search(r'<script type="application/json" class="labsim-data">(.*?)</script>', page,
                                   re.S).group(1).replace("<\\/", "</"))
    assert len(payload["figures"]) == 3
    assert all(len(f["frames"]) in (10, 14) for f in payload["figures"].values())
    monkeypatch.delenv("LABSIM_BOOK")
    b = vs.systolic_animation({"dataflow": ["ws", "os", "is"], "K": [2, 4]})
    times = []
    for df in ("os", "is", "ws"):
        for K in (2, 4):
            t0 = time.perf_counter()
            b.update(dataflow=df, K=K)
            times.append(time.perf_counter() - t0)
            assert b.error is None
    assert min(times) < 0.5
    with pytest.raises(ValueError, match="unknown controls"):
        vs.systolic_animation({"size": [1]})
