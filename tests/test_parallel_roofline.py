"""parallel_roofline against closed forms: the crossings, tensor parallelism's ratio, plans and GPipe."""
import math

import pytest

import labsim as ls
from labsim.machines import collective_costs as cc
from labsim.machines import parallel_roofline as pr

H100 = ls.hardware.PRESETS["H100 SXM"]
C = H100.peak_flops("bfloat16")
W = H100.chip_link.bandwidth
P, L, D = 6.7e9, 32, 4096


@pytest.mark.parametrize("n", [2, 8, 64])
def test_data_and_fsdp_crossings_on_a_ring(n):
    want = 2 * C / W * (n - 1) / (2 * n)  # b·C/W·(n−1)/(2n), b = 2
    assert pr.crossing("data", P, n) == pytest.approx(want, rel=1e-12)
    assert pr.crossing("fsdp", P, n) == pytest.approx(want, rel=1e-12)


def test_times_hide_exactly_above_the_crossing():
    t = pr.crossing("data", P, 8, topology="switch")
    below = pr.times("data", P, 0.9 * t, 8, topology="switch")
    above = pr.times("data", P, 1.1 * t, 8, topology="switch")
    assert not below.hidden and below.exposed > 0
    assert above.hidden and above.exposed == 0
    assert above.window == pytest.approx(2 / 3 * above.compute)
    assert above.compute == pytest.approx(6 * P * 1.1 * t / C)


def test_tensor_ratio_closed_form_and_limit():
    for n in (2, 4, 8):
        want = 8 * L * (n - 1) * D * 2 * C / (6 * P * W)
        assert pr.tensor_ratio(P, L, D, n) == pytest.approx(want, rel=1e-12)
    limit = pr.tensor_limit(P, L, D)
    assert limit == math.floor(1 + 6 * P * W / (8 * L * D * 2 * C))
    assert pr.tensor_ratio(P, L, D, limit) <= 1 < pr.tensor_ratio(P, L, D, limit + 1)
    # the ratio does not depend on the tokens
    a = pr.times("tensor", P, 1e3, 8, layers=L, d_model=D)
    b = pr.times("tensor", P, 1e6, 8, layers=L, d_model=D)
    assert a.comm / a.compute == pytest.approx(b.comm / b.compute)


def test_plan_memory_and_times():
    ring = lambda op, nbytes, n: cc.time(op, nbytes, n, H100.chip_link, "ring")  # noqa: E731
    p = pr.plan(P, L, D, 2**20, 4, 16, tp_comm=ring, fsdp_comm=ring)
    assert p.memory == pytest.approx(16 * P / 64 + 2**20 / 16 * D * 2 * L)
    assert p.compute == pytest.approx(6 * P * 2**20 / 64 / C)
    assert p.tp_comm == pytest.approx(4 * L * 2 * 3 / 4 * (2**20 / 16 * D * 2) / W)
    assert p.fsdp_comm == pytest.approx(3 * 15 / 16 * (P / 4 * 2) / W)
    assert p.step == pytest.approx(p.compute + p.tp_comm + max(0, p.fsdp_comm - p.compute))
    one = pr.plan(P, L, D, 2**20, 1, 1, tp_comm=ring, fsdp_comm=ring)
    assert one.tp_comm == one.fsdp_comm == 0 and one.step == one.compute


@pytest.mark.parametrize("p,m", [(4, 4), (4, 16), (8, 8), (1, 3)])
def test_gpipe_idle_share_is_the_bubble(p, m):
    tr = pr.gpipe(p, m, forward=1.0, backward=2.0)
    end = max(e.end for e in tr.events)
    assert end == pytest.approx((m + p - 1) * 3.0)
    for s in range(p):
        busy = sum(e.end - e.start for e in tr.events if e.unit.chip == s)
        assert 1 - busy / end == pytest.approx((p - 1) / (m + p - 1))
    # a stage's forward of microbatch j waits for the previous stage's
    f = {(e.unit.chip, e.name): e for e in tr.events}
    assert all(f[(s, "F1")].start >= f[(s - 1, "F1")].end for s in range(1, p))
    assert all(f[(s, "B1")].start >= f[(s + 1, "B1")].end for s in range(p - 1))


@pytest.mark.parametrize("call,words", [
    (lambda: pr.times("pipeline", P, 10, 8), "strategy"),
    (lambda: pr.times("data", -1, 10, 8), "params"),
    (lambda: pr.times("data", P, float("nan"), 8), "tokens_per_chip"),
    (lambda: pr.times("data", P, 10, 0), "devices"),
    (lambda: pr.times("tensor", P, 10, 8), "layers"),
    (lambda: pr.times("data", P, 10, 8, comm=3), "comm"),
    (lambda: pr.times("data", P, 10, 8, comm=lambda o, b, n: -1.0), "returned"),
    (lambda: pr.crossing("tensor", P, 8), "tensor_limit"),
    (lambda: pr.tensor_limit(P, L, D, degrees=[]), "degrees"),
    (lambda: pr.gpipe(0, 4), "stages"),
    (lambda: pr.gpipe(4, 4, forward=0), "forward"),
    (lambda: pr.times("data", P, 10, 8, chip="nope"), "times: chip"),
    (lambda: pr.times("data", P, 10, 8, dtype="int3"), "times: dtype"),
    (lambda: pr.times("data", P, 10, 8, topology="star"), "times: topology"),
    (lambda: pr.plan(P, L, D, 1e4, 2, 0), "fsdp"),
])
def test_bad_input_names_the_argument(call, words):
    with pytest.raises(ls.LabsimError) as e:
        call()
    assert words in str(e.value)


def test_gpipe_figure_draws_the_schedule():
    from labsim.viz.pipeline import gpipe_figure

    fig = gpipe_figure(4, 3, forward=0.5, backward=1.0)
    fwd, bwd = fig.data
    assert len(fwd.x) == len(bwd.x) == 4 * 3
    # in units of a forward pass: forwards last 1, backwards 2; stage 4 starts its first forward at 3
    assert set(fwd.x) == {1.0} and set(bwd.x) == {2.0}
    assert min(b for b, y in zip(fwd.base, fwd.y) if y == "stage 4") == 3.0
    end = max(b + w for b, w in zip(bwd.base, bwd.x))
    assert end == pytest.approx((3 + 4 - 1) * 3)


def test_gpipe_refuses_a_schedule_too_large_to_lay_out():
    with pytest.raises(ls.ArgumentError, match=r"stages × microbatches .* more than the 100,000"):
        pr.gpipe(10**6, 10**6)
    assert len(pr.gpipe(100, 1000).events) == 2 * 100 * 1000  # at the limit it still lays out
