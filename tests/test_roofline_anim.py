"""The animated roofline (labsim.viz.roofline_anim): its points are ls.estimate's, its axes stay put, its
three faces work, and bad input gets a labsim error naming the argument."""
from __future__ import annotations

import json
import re

import pytest

import labsim as ls
import labsim.numpy as lnp
import labsim.viz as viz
from labsim.core.avals import ShapeDtype as S
from labsim.support.errors import ArgumentError, ArgumentTypeError

BATCHES = [1, 16, 128, 512, 2048]
D = 4096


def build(b):
    return ls.compile(ls.trace(lambda x, w: lnp.matmul(x, w), S((b, D), "bfloat16"), S((D, D), "bfloat16")))


def _payload(page: str) -> dict:
    m = re.search(r'<script type="application/json" class="labsim-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


@pytest.fixture(scope="module")
def anim():
    return viz.roofline_animation(build, BATCHES, chip=["H100 SXM", "A100 80GB"], name="fig-roof-test")


def test_points_are_ls_estimates_at_every_step(anim):
    for chip in ("H100 SXM", "A100 80GB"):
        frames = anim.frames_for(chip=chip)
        assert len(frames) == len(BATCHES)
        for i, (b, f) in enumerate(zip(BATCHES, frames)):
            k = ls.estimate(build(b), chip).kernels[0]
            point = f.data[2]
            assert point.x[0] == pytest.approx(k.intensity, rel=1e-12)
            assert point.y[0] == pytest.approx(k.achieved_flops / 1e12, rel=1e-12)
            # the trail holds the earlier steps' points, and the bars the kernel's two times
            assert [x for x in f.data[1].x if x is not None] == pytest.approx(
                [ls.estimate(build(v), chip).kernels[0].intensity for v in BATCHES[:i]])
            assert list(f.data[3].x)[:2] == pytest.approx([k.compute_time * 1e6, k.memory_time * 1e6])
            assert max(x for x in f.data[3].x if x) == pytest.approx(k.time * 1e6)  # its time is the longest bar


def test_the_point_crosses_the_ridge_and_the_steps_say_so(anim):
    costs = viz.roofline_anim.roofline_costs(build, BATCHES, chip="H100 SXM")
    bounds = [k.bound.value for k in costs]
    assert bounds[0] == "memory" and bounds[-1] == "compute"  # the run does cross the ridge
    ridge = viz.roofline_anim.ridge_of(costs[0])
    assert ridge == pytest.approx(ls.hardware.get("H100 SXM").ridge_point("bfloat16"))
    flip = viz.roofline_anim.first_compute_bound(costs, BATCHES)
    assert costs[BATCHES.index(flip)].intensity > ridge > costs[BATCHES.index(flip) - 1].intensity
    labels = anim._step_names({"chip": "H100 SXM"}, len(BATCHES))
    assert [lab.split(", ")[1].split(":")[0] for lab in labels] == [f"{b}-bound" for b in bounds]
    assert f"compute-bound at batch {flip:,}" in anim.caption


def test_axes_stay_fixed_across_steps_and_chips(anim, monkeypatch):
    for chip in ("H100 SXM", "A100 80GB"):
        ranges = {(tuple(f.layout.xaxis.range), tuple(f.layout.yaxis.range), tuple(f.layout.xaxis2.range))
                  for f in anim.frames_for(chip=chip)}
        assert len(ranges) == 1
    monkeypatch.setenv("LABSIM_BOOK", "1")
    payload = _payload(anim.to_html())
    xr = {tuple(f["layout"]["xaxis"]["range"]) for f in payload["figures"].values()}
    assert len(xr) == 1
    lo, hi = xr.pop()
    every = [k.intensity for c in ("H100 SXM", "A100 80GB") for k in viz.roofline_anim.roofline_costs(build, BATCHES, chip=c)]
    assert 10 ** lo < min(every) and max(every) < 10 ** hi  # every step's point is inside the fixed axis
    assert payload["anim"]["label"] == "batch" and len(payload["anim"]["steps"]["0"]) == len(BATCHES)


def test_single_chip_print_face(tmp_path):
    a = viz.roofline_animation(build, BATCHES[:3], chip="H100 SXM")
    a.save(tmp_path / "roof.svg", step=1)
    svg = (tmp_path / "roof.svg").read_text()
    assert "batch 16" in svg and "batch 128" not in svg  # step 1 of [1, 16, 128]: its point's label only


def test_bad_input_names_the_argument():
    with pytest.raises(ArgumentError, match="values must be a list of at least 2"):
        viz.roofline_animation(build, [8], chip="H100 SXM")
    with pytest.raises(ArgumentError, match="repeats"):
        viz.roofline_animation(build, [8, 8], chip="H100 SXM")
    with pytest.raises(ArgumentTypeError, match=r"build\(batch=1\) must return a compiled Program"):
        viz.roofline_animation(lambda b: 3, [1, 2], chip="H100 SXM")
    with pytest.raises(ArgumentError, match="kernel=5 is not a kernel index"):
        viz.roofline_animation(build, [1, 2], chip="H100 SXM", kernel=5)
    with pytest.raises(ArgumentTypeError, match="build must be a function"):
        viz.roofline_animation("x", [1, 2], chip="H100 SXM")
