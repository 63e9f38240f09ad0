"""labsim beside a real GPU (``labsim.peers.calibration``): the plan, labsim's predictions against closed
forms derived here from the presets, and the checks on a measurement file.

Notation: launch latency ℓ (``chip.launch_overhead``), host cost of one launch call h
(``chip.launch_interval``), Python's eager dispatch o (``EAGER_OP_TIME``), the latency floor of a kernel
d (``chip.min_kernel_time``), one runtime call a (``HOST_API_TIME``), link bandwidth B, the host's
staging copy bandwidth S, HBM bandwidth M. A kernel starts at max(call + max(ℓ, h), previous end).
"""
from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import labsim as ls
from labsim.host import EAGER_OP_TIME, HOST_COPY_BANDWIDTH, JIT_CALL_TIME
from labsim.machines.roofline import HOST_API_TIME
from labsim.peers import calibration as cal

ROOT = Path(__file__).resolve().parents[1]
CHIPS = ("H200", "H100 SXM")


def cfg(group, **kw):
    return next(c for c in cal.PLAN if c["group"] == group and all(c[k] == v for k, v in kw.items()))


def test_plan_covers_what_the_issue_asks_and_names_each_experiment_once():
    groups = {c["group"] for c in cal.PLAN}
    assert groups == set(cal.GROUPS)
    hows = {(c["via"], c["how"]) for c in cal.PLAN if c["group"] == "launch"}
    assert {("cuda", "async"), ("cuda", "sync"), ("cuda", "graph")} <= hows  # with and without graph replay
    copies = {(c["direction"], c["pinned"]) for c in cal.PLAN if c["group"] == "copy"}
    assert {("h2d", True), ("h2d", False), ("d2h", True), ("d2h", False), ("d2d", True)} <= copies
    mm = {(c["dtype"], c["n"]) for c in cal.PLAN if c["group"] == "matmul"}
    assert len({d for d, _ in mm}) >= 2 and len({n for _, n in mm}) >= 3  # several sizes and dtypes
    assert {c["mode"] for c in cal.PLAN if c["group"] == "chain"} == {"eager", "compiled"}
    keys = [cal.key(c) for c in cal.PLAN]
    assert len(set(keys)) == len(keys)
    # the key does not depend on the order of the mapping
    c = cfg("copy", direction="h2d", pinned=False)
    assert cal.key(dict(reversed(list(c.items())))) == cal.key(c)


@pytest.mark.parametrize("chip", CHIPS)
def test_launch_predictions_follow_the_closed_forms(chip):
    p = ls.hardware.PRESETS[chip]
    ell, h, d, o = p.launch_overhead, p.launch_interval, p.min_kernel_time, EAGER_OP_TIME
    for via, host in (("cuda", h), ("torch", h + o)):
        n = cfg("launch", via=via, how="async")["n"]
        # dispatched back to back: ℓ + N·max(d, h), per kernel
        assert cal.predict(cfg("launch", via=via, how="async"), chip) == pytest.approx(
            (ell + n * max(d, host)) / n, rel=1e-3)
        # synchronised after each: every kernel waits its own max(ℓ, h), then runs d
        assert cal.predict(cfg("launch", via=via, how="sync"), chip) == pytest.approx(max(ell, host) + d, rel=1e-9)
        # graph replay: one launch call for all N kernels, then back to back with labsim's device-side gap g
        # between graph nodes: (max(ℓ, h) + N·d + (N − 1)·g) / N
        n = cfg("launch", via=via, how="graph")["n"]
        g = ls.host.GRAPH_NODE_GAP
        assert g > 0
        assert cal.predict(cfg("launch", via=via, how="graph"), chip) == pytest.approx(
            (max(ell, h) + n * d + (n - 1) * g) / n, rel=1e-9)


@pytest.mark.parametrize("chip", CHIPS)
def test_copy_predictions_follow_the_closed_forms(chip):
    p = ls.hardware.PRESETS[chip]
    B, S, a, M = p.host_link.bandwidth, HOST_COPY_BANDWIDTH, HOST_API_TIME, p.hbm_bandwidth
    for c in (c for c in cal.PLAN if c["group"] == "copy"):
        nb = c["bytes"]
        if c["direction"] == "d2d":
            # one kernel reading and writing nb bytes, memory-bound: 2·nb / (2·nb / M) = M
            assert cal.predict(c, chip) == pytest.approx(M, rel=1e-9)
            continue
        # pinned: one runtime call, then the DMA; pageable adds the staging copy through host memory
        t = a + nb / B + (0 if c["pinned"] else nb / S)
        assert cal.predict(c, chip) == pytest.approx(nb / t, rel=1e-9), cal.key(c)


@pytest.mark.parametrize("chip", CHIPS)
def test_matmul_predictions_are_the_roofline_of_one_product(chip):
    p = ls.hardware.PRESETS[chip]
    size = {"bfloat16": 2, "float16": 2, "float32": 4}
    for c in (c for c in cal.PLAN if c["group"] == "matmul"):
        n, dt = c["n"], c["dtype"]
        rate = p.matrix_flops["tf32" if dt == "float32" else dt] * p.gemm_efficiency  # float32 on TF32 cores
        flops = 2 * n**3
        t = max(flops / rate, 3 * n * n * size[dt] / p.hbm_bandwidth, p.min_kernel_time)
        assert cal.predict(c, chip) == pytest.approx(flops / t, rel=1e-9), cal.key(c)


@pytest.mark.parametrize("chip", CHIPS)
def test_chain_predictions_eager_pays_per_op_compiled_per_call(chip):
    p = ls.hardware.PRESETS[chip]
    ell, h, a_jit, M, d0 = p.launch_overhead, p.launch_interval, JIT_CALL_TIME, p.hbm_bandwidth, p.min_kernel_time
    for c in (c for c in cal.PLAN if c["group"] == "chain"):
        k, n, reps = c["ops"], c["n"], c["reps"]
        d = max(8 * n / M, d0)  # one multiply reads and writes n float32
        if c["mode"] == "eager":  # k kernels per call, each costing the host o + h
            per_call = k * max(EAGER_OP_TIME + h, d)
        else:  # one fused kernel per call: one call, one launch, and the bytes moved once
            per_call = max(a_jit + h, d)
        got = cal.predict(c, chip)
        assert abs(got - per_call) <= (ell + d) / reps + 1e-12, (cal.key(c), got, per_call)
    # fusion is the point: sixteen eager ops of a big vector cost about sixteen compiled calls' worth
    big = {m: cal.predict(cfg("chain", n=2**24, ops=16, mode=m), chip) for m in ("eager", "compiled")}
    assert big["eager"] / big["compiled"] > 10


def measured_like(scale_time=2.0, scale_rate=0.5, error_at=()):
    """A measurement file whose values are labsim's predictions scaled: times × scale_time, rates × scale_rate."""
    ms = []
    for i, c in enumerate(cal.PLAN):
        unit = cal.UNITS[c["group"]]
        if i in error_at:
            ms.append({"config": dict(c), "unit": unit, "value": None, "error": "RuntimeError: no CuPy"})
            continue
        v = cal.predict(c, "H200") * (scale_time if unit == "s" else scale_rate)
        ms.append({"config": dict(c), "unit": unit, "value": v, "samples": [v, v]})
    return {"schema": cal.SCHEMA, "date": "2026-12-01T00:00:00+00:00", "device": {"name": "NVIDIA H200"},
            "software": {"torch": "x"}, "measurements": ms}


def test_rows_put_each_measurement_beside_labsim_and_say_which_way_it_errs():
    data = measured_like(error_at=(0,))
    rows = cal.rows(data)
    assert len(rows) == len(cal.PLAN)
    assert rows[0].measured is None and rows[0].ratio is None and "CuPy" in rows[0].error
    for r in rows[1:]:
        if r.unit == "s":  # the GPU took twice as long: labsim was optimistic
            assert r.ratio == pytest.approx(2.0) and r.labsim_optimistic is True
        else:  # half the rate labsim predicts: also optimistic
            assert r.ratio == pytest.approx(0.5) and r.labsim_optimistic is True
    faster = cal.rows(measured_like(scale_time=0.5, scale_rate=2.0))
    assert not any(r.labsim_optimistic for r in faster)
    # without data: every prediction, nothing measured
    bare = cal.rows()
    assert [r.experiment for r in bare] == [r.experiment for r in rows]
    assert all(r.measured is None and r.labsim > 0 for r in bare)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("device"), "missing 'device'"),
    (lambda d: d.update(schema=99), "schema 99"),
    (lambda d: d["measurements"][0].update(unit="ms"), "unit must be 's'"),
    (lambda d: d["measurements"][1].update(value=-1.0), "positive finite"),
    (lambda d: d["measurements"][1].update(value=float("nan")), "positive finite"),
    (lambda d: d["measurements"][2].update(value=None), "needs an 'error'"),
    (lambda d: d["measurements"].append(copy.deepcopy(d["measurements"][3])), "measured twice"),
    (lambda d: d["measurements"].pop(), "missing ["),
    (lambda d: d["measurements"][0]["config"].update(how="sometimes"), "how must be one of"),
    (lambda d: d["measurements"][0]["config"].pop("n"), "missing ['n']"),
    (lambda d: d["measurements"][0]["config"].update(group="train"), "unknown group 'train'"),
    (lambda d: d["measurements"][-1]["config"].update(n=2**20), "not planned"),
])
def test_validate_names_what_is_wrong(change, message):
    data = measured_like()
    cal.validate(data)  # the untouched file is valid
    change(data)
    with pytest.raises((ValueError, TypeError), match=message.replace("[", r"\[").replace("(", r"\(")):
        cal.validate(data)


def test_load_reads_a_file_and_reports_bad_json(tmp_path):
    assert cal.load(tmp_path / "absent.json") is None
    good = tmp_path / "good.json"
    good.write_text(json.dumps(measured_like()))
    assert cal.load(good)["device"]["name"] == "NVIDIA H200"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        cal.load(bad)


def test_preset_for_maps_device_names_and_refuses_unknown_ones():
    assert cal.preset_for("NVIDIA H200") == "H200"
    assert cal.preset_for("NVIDIA H100 80GB HBM3") == "H100 SXM"
    with pytest.raises(ValueError, match="no labsim preset for device 'Radeon"):
        cal.preset_for("Radeon Instinct MI300X")
    with pytest.raises(ValueError, match="unknown group"):
        cal.predict({"group": "train"}, "H200")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="needs PyTorch (make crosscheck installs it; it also runs this smoke run)")
def test_the_calibration_script_runs_its_cpu_smoke_plan_and_writes_a_valid_file(tmp_path):
    out = tmp_path / "smoke.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "calibrate_gpu.py"), "--smoke", "--repeats", "2",
                        "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    data = cal.validate(json.loads(out.read_text()), smoke=True)
    assert all(m["value"] is not None for m in data["measurements"]), data["measurements"]
    assert all(len(m["samples"]) == 2 for m in data["measurements"])


def test_ratio_figure_draws_each_measured_experiment_once_and_colours_by_agreement():
    from labsim.viz.calibration import AGREE, ratio_figure
    from labsim.viz.palette import ROLE

    data = measured_like(scale_time=1.1, scale_rate=1.1, error_at=(0, 1))
    rows = cal.rows(data)
    # make one row disagree: three times slower than predicted
    ms = data["measurements"]
    ms[2] = dict(ms[2], value=ms[2]["value"] / 1.1 * 3)
    rows = cal.rows(data)
    fig = ratio_figure(rows)
    drawn = [y for t in fig.data for y in t.y]
    assert len(drawn) == len(set(drawn)) == len(cal.PLAN) - 2  # the two unmeasured rows are not drawn
    agree, off = fig.data
    assert agree.marker.color == ROLE["match"] and off.marker.color == ROLE["mismatch"]
    assert list(off.x) == [pytest.approx(3.0)]
    assert all(1 / AGREE <= x <= AGREE for x in agree.x)
    lo, hi = fig.layout.xaxis.range  # log axis wide enough for the farthest dot
    assert fig.layout.xaxis.type == "log" and 10**lo < 1 / 3 and 10**hi > 3
    with pytest.raises(ValueError, match="no row has a measurement"):
        ratio_figure(cal.rows())


def test_table_formats_each_unit_and_says_why_a_row_is_empty():
    rows = cal.rows(measured_like(error_at=(0,)))
    t = cal.table(rows)
    assert t[0]["measured"].startswith("not measured (RuntimeError")
    units = {r.unit: rec for r, rec in zip(rows[1:], t[1:])}
    assert units["s"]["labsim"].endswith("µs") and units["B/s"]["labsim"].endswith("B/s")
    assert units["FLOP/s"]["labsim"].endswith("TFLOP/s")
    assert cal.fmt(4.8e12, "B/s") == "4.8 TB/s" and cal.fmt(6.4e10, "B/s") == "64 GB/s"
    # nothing measured: the table is the predictions alone (two columns, no column of dashes)
    assert list(cal.table(cal.rows())[0]) == ["experiment", "labsim"]
    assert t[1]["experiment"] == f"{rows[1].group}: {rows[1].experiment}"
    with pytest.raises(ValueError, match="unknown unit 'W'"):
        cal.fmt(1.0, "W")


def test_recorded_h200_measurements_sit_below_labsims_bounds():
    """The H200 measurements recorded from the fact sheet (not labsim's) against labsim's roofline: a
    rate can reach the bound but never exceed it, and these reach most of it."""
    from labsim.peers import measured

    rows = measured.rows("H200")
    assert len(rows) == len(measured.H200) == 2
    h200 = ls.hardware.PRESETS["H200"]
    mm, d2d = measured.H200
    assert mm.unit == "FLOP/s" and d2d.unit == "B/s"
    assert mm.predict() == pytest.approx(h200.matrix_flops["bfloat16"], rel=1e-6)  # 8192³ is compute-bound
    assert d2d.predict() == pytest.approx(h200.hbm_bandwidth, rel=1e-3)
    for r in rows:
        assert r["measured (low)"] <= r["measured (high)"]
        assert 0.7 < r["measured ÷ labsim (low)"] <= r["measured ÷ labsim (high)"] <= 1.0, r
    assert "not made by labsim" in measured.SOURCE
