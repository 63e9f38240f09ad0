"""labsim.viz.charts: the chapters' charts carry the traces and axes they should, built from labsim's
numbers, and each converts to the print face (matplotlib)."""
import math

import numpy as np
import pytest

import labsim as ls
from labsim import viz
from labsim.models import counting


def _print_face(fig):
    import matplotlib.pyplot as plt

    mfig = viz.to_matplotlib(fig)
    assert mfig.axes, "the print face drew no axes"
    plt.close(mfig)


def test_chart_lines_from_labsim_counts_on_log_axes():
    ns = [16, 64, 256, 1024]
    series = [viz.line(ns, [counting.blas(level, n).intensity for n in ns], f"level {level}", markers=True)
              for level in (1, 2, 3)]
    fig = viz.chart(series, xlog=True, ylog=True, xtitle="n", ytitle="FLOP per byte", title="BLAS")
    assert [t.name for t in fig.data] == ["level 1", "level 2", "level 3"]
    assert fig.data[2].y[-1] == pytest.approx(counting.blas(3, 1024).intensity)
    assert fig.data[0].mode == "lines+markers"
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text == "FLOP per byte"
    _print_face(fig)


def test_chart_bars_stack_rules_and_log_range():
    h100 = ls.hardware.PRESETS["H100 SXM"]
    x = ["a", "b"]
    fig = viz.chart([viz.bars(x, [1.0, 2.0], "one", color=viz.ROLE["memory"], text=["1", "2"], text_outside=True),
                     viz.bars(x, [3.0, 4.0], "two", outline=viz.ROLE["memory"]),
                     viz.line(x, [h100.hbm_bandwidth / 1e12] * 2, "HBM TB/s", dash="dot")],
                    barmode="stack", ylog=True, yrange=(0.1, 100), categories=x,
                    rules=[viz.rule("y", 1.0, "one")])
    assert fig.layout.barmode == "stack"
    assert fig.layout.yaxis.range == (-1.0, 2.0)  # log10 of the data range
    assert fig.data[0].textposition == "outside" and fig.data[1].marker.line.color == viz.ROLE["memory"]
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].y0 == 1.0
    # the rule is named in the legend, drawn as the line is (not written over the plot)
    entry = [t for t in fig.data if t.name == "one" and t.type == "scatter"]
    assert len(entry) == 1 and entry[0].showlegend and entry[0].line.dash == "dot" and not fig.layout.annotations
    assert list(fig.layout.xaxis.categoryarray) == x
    _print_face(fig)


def test_share_bars_are_shares_of_each_total():
    runs = {c: ls.simulate(ls.compile(ls.trace(lambda a, b: a @ b, *[ls.ShapeDtype((256, 256), "bfloat16")] * 2)), c)
            for c in ("A100 80GB", "H100 SXM")}
    rows = {c: {"kernels": r.kernel_time, "copies": r.copy_time, "other": r.time - r.kernel_time - r.copy_time}
            for c, r in runs.items()}
    colors = {"kernels": viz.ROLE["compute"], "copies": viz.ROLE["memory"], "other": viz.ROLE["overhead"]}
    fig = viz.share_bars(rows, colors, xtitle="share of the call (%)")
    assert [t.name for t in fig.data] == list(colors)
    for i, c in enumerate(rows):
        assert sum(t.x[i] for t in fig.data) == pytest.approx(100)
        assert fig.data[1].x[i] == pytest.approx(100 * runs[c].copy_time / runs[c].time)
    assert all(t.orientation == "h" for t in fig.data) and fig.layout.barmode == "stack"
    assert list(fig.layout.xaxis.range) == [0, 100]
    _print_face(fig)


def test_ratio_bars_have_the_line_at_one():
    """The roofline's time of one program on the H100 over the A100, kernel by kernel."""
    spec = ls.ShapeDtype((1024, 1024), "bfloat16")
    prog = ls.compile(ls.trace(lambda a, b: ls.nn.relu(a @ b), spec, spec))
    new, old = ls.estimate(prog, "H100 SXM"), ls.estimate(prog, "A100 80GB")
    ratios = [n.time / o.time for n, o in zip(new.kernels, old.kernels)]
    fig = viz.ratio_bars([k.kernel for k in new.kernels], ratios, xtitle="H100 ÷ A100",
                         text=[f"{r:.2f}" for r in ratios], colors=[viz.ROLE["match"]] * len(ratios))
    assert list(fig.data[0].x) == pytest.approx(ratios) and fig.data[0].orientation == "h"
    assert all(r < 1 for r in ratios)  # the newer chip is faster on every kernel
    assert fig.layout.shapes[0].x0 == 1.0 and fig.layout.yaxis.autorange == "reversed"
    _print_face(fig)


def test_closed_form_vs_machine_draws_the_simt_formula_and_points():
    ws = list(range(1, 9))
    closed = {"closed form": (ws, [ls.simt.latency_utilisation(w, 400, 8, "lrr") for w in ws])}
    machine = {"machine": ([1, 4], [0.02, 0.09])}
    fig = viz.closed_form_vs_machine(closed, machine, xtitle="warps", yformat=".0%", yrange=(0, 1.05))
    assert [t.mode for t in fig.data] == ["lines", "markers"]
    assert fig.data[1].marker.color == viz.ROLE["match"]
    assert fig.data[0].y[3] == pytest.approx(ls.simt.latency_utilisation(4, 400, 8, "lrr"))
    assert fig.layout.yaxis.tickformat == ".0%"
    _print_face(fig)


def test_slot_grids_colour_each_state():
    """The KV-memory snapshots of labsim's allocator (0 free, 1 stored, 2 reserved), one grid per scheme."""
    reqs = ls.serving.random_requests(20, seed=1, prompt=(16, 64), output=(16, 64), rate=0.5)
    runs = {s: ls.serving.simulate_kv_allocation(reqs, 2048, scheme=s, block=16, snapshot_step=20)
            for s in ("contiguous", "paged")}
    grids = {s: r.snapshot.reshape(-1, 64) for s, r in runs.items()}
    fig = viz.slot_grids(grids, [("free", "idle"), ("KV stored", "memory"), ("reserved, empty", "mismatch")],
                         title="KV")
    heat = [t for t in fig.data if t.type == "heatmap"]
    assert len(heat) == 2 and heat[0].zmax == 2.5
    assert np.array_equal(np.asarray(heat[1].z), grids["paged"])
    assert [t.name for t in fig.data if t.type == "scatter"] == ["free", "KV stored", "reserved, empty"]
    assert [a.text for a in fig.layout.annotations] == ["contiguous", "paged"]
    _print_face(fig)


def test_message_has_no_axes():
    fig = viz.message("The CPU preset lists no float8 rate.")
    assert fig.layout.annotations[0].text.startswith("The CPU") and fig.layout.xaxis.visible is False
    _print_face(fig)


@pytest.mark.parametrize("call, name", [
    (lambda: viz.line([1, 2], [1], "a"), "y"),
    (lambda: viz.bars(["a"], [1], text=["x", "y"]), "text"),
    (lambda: viz.rule("z", 1), "axis"),
    (lambda: viz.rule("x", math.nan), "value"),
    (lambda: viz.chart([]), "series"),
    (lambda: viz.chart([viz.line([1], [1])], barmode="overlay"), "barmode"),
    (lambda: viz.chart([viz.line([1], [1])], ylog=True, yrange=(0, 1)), "yrange"),
    (lambda: viz.share_bars({"a": {"x": 1}}, {"x": "#000", "y": "#111"}), "no value"),
    (lambda: viz.slot_grids({"g": [[0, 5]]}, [("free", "idle")]), "grid"),
    (lambda: viz.message(""), "text"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_status_grid_marks_each_cell():
    """labsim against XLA's recorded counts, one row per reference function (the accuracy page's grid)."""
    rows = ls.parity.xla_rows(ls.parity.load("xla.json"))[:4]
    cells = [["not run" if r.error else ("match" if r.flops == r.xla_flops else "differs"),
              "not run" if r.error else ("match" if r.kernels_match else "differs")] for r in rows]
    fig = viz.status_grid(cells, [r.name for r in rows], ["FLOPs", "kernels"],
                          {"match": ("match", "="), "differs": ("mismatch", "≠"), "not run": ("idle", "–")})
    h = fig.data[0]
    order = ["match", "differs", "not run"]
    assert [list(r) for r in h.z] == [[order.index(c) for c in row] for row in cells]
    assert list(h.y) == [r.name for r in rows] and fig.layout.yaxis.autorange == "reversed"
    assert {t for row in h.text for t in row} <= {"=", "≠", "–"}
    _print_face(fig)
    with pytest.raises(ValueError, match="cells"):
        viz.status_grid([["maybe"]], ["f"], ["x"], {"match": ("match", "=")})
