"""Meshes without wraparound, switch nodes joined by a network, NVLS, and the parallelism step model:
values against NumPy, times against closed forms derived here."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import labsim as ls
from labsim import collectives as col
from labsim.hardware import Link
from labsim.hardware.systems import NODES, SCALE_OUT_400G, SYSTEMS

LINK = Link("test link", 1e9, latency=1e-6)  # 1 GB/s, 1 µs
NET = Link("test network", 1e8, latency=5e-6)  # 100 MB/s, 5 µs


def _shards(rng, n, shape):
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


@settings(max_examples=20, deadline=None)
@given(mesh=st.sampled_from([(2,), (3,), (5,), (2, 2), (4, 4), (2, 3), (3, 2, 2)]), k=st.integers(1, 3),
       seed=st.integers(0, 99), wrap_first=st.booleans())
def test_mesh_values_match_numpy(mesh, k, seed, wrap_first):
    """A mesh (lines, or a ring on a wrapped axis) gives NumPy's concatenation and sums."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(mesh))
    wrap = (wrap_first,) + (False,) * (len(mesh) - 1)
    parts, full = _shards(rng, n, (k, 2)), _shards(rng, n, (n * k, 2))
    total = np.sum(full, axis=0)
    for v in col.all_gather(parts, link=LINK, topology="mesh", mesh=mesh, wrap=wrap).values:
        np.testing.assert_array_equal(v, np.concatenate(parts))
    for i, v in enumerate(col.reduce_scatter(full, link=LINK, topology="mesh", mesh=mesh, wrap=wrap).values):
        np.testing.assert_allclose(v, total[i * k:(i + 1) * k], rtol=1e-5, atol=1e-5)
    for v in col.all_reduce(full, link=LINK, topology="mesh", mesh=mesh, wrap=wrap).values:
        np.testing.assert_allclose(v, total, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mesh", [(2,), (4,), (8,), (4, 4), (2, 4), (3, 2)])
@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter", "all_reduce"])
def test_mesh_time_equals_closed_form(mesh, op):
    """A line of n has the one-way ring's cost: n−1 steps of α + (B/n)/bw (an end device receives n−1
    chunks over its one link). Mesh (n1, n2): Σ_i (n_i − 1)·(α + B/(n1·…·n_i)/bw) for ReduceScatter."""
    n = int(np.prod(mesh))
    k = 2 * n * 3
    B = k * 4
    a, bw = LINK.latency, LINK.bandwidth
    arrays = [np.ones(k // n if op == "all_gather" else k, np.float32) for _ in range(n)]
    rs = sum((d - 1) * (a + B / int(np.prod(mesh[:i + 1])) / bw) for i, d in enumerate(mesh))
    expected = rs * (2 if op == "all_reduce" else 1)
    r = col.run(op, arrays, link=LINK, topology="mesh", mesh=mesh)
    assert r.time == pytest.approx(expected, rel=1e-12)
    assert r.time == pytest.approx(col.time(op, B, n, LINK, "mesh", mesh=mesh), rel=1e-12)
    assert r.steps == sum(d - 1 for d in mesh) * (2 if op == "all_reduce" else 1)
    if n > 1:
        assert r.trace.end == pytest.approx(r.time)
    if len(mesh) == 1:  # the line costs what the one-way ring costs, twice the torus's bandwidth term
        assert r.time == pytest.approx(col.time(op, B, n, LINK, "ring"), rel=1e-12)


def test_mesh_doubles_the_bandwidth_term_of_a_torus():
    """v5e 4×4: no wraparound (How to Scale Your Model, tpus.md Q5). Without latency the mesh takes twice the torus."""
    B = 1e9
    mesh_t = col.time("all_reduce", B, None, LINK, "mesh", mesh=(4, 4), latency=0)
    torus_t = col.time("all_reduce", B, None, LINK, "torus", mesh=(4, 4), latency=0)
    assert mesh_t == pytest.approx(2 * torus_t)
    assert mesh_t == pytest.approx(2 * (3 * B / 4 / 1e9 + 3 * B / 16 / 1e9))
    # one wrapped axis: a bidirectional ring on that axis only
    part = col.time("all_reduce", B, None, LINK, "mesh", mesh=(4, 4), wrap=(True, False), latency=0)
    assert part == pytest.approx(2 * (3 * B / 4 / 2 / 1e9 + 3 * B / 16 / 1e9))
    # AllToAll on a line: the one-way ring's (n−1)·α + B·(n−1)/(2·bw)
    assert col.time("all_to_all", B, None, LINK, "mesh", mesh=(8,)) == pytest.approx(7 * 1e-6 + B * 7 / 2 / 1e9)


def test_tpu_slices_wrap_only_on_full_axes():
    v5e, v4 = SYSTEMS["TPU v5e pod"], SYSTEMS["TPU v4 pod"]
    assert v5e.ici_axes == 2 and v4.ici_axes == 3
    assert v5e.wrap((4, 4)) == (False, False)
    assert v5e.wrap((16, 16)) == (True, True)
    assert v5e.wrap((8, 16)) == (False, True)
    assert v4.wrap((4, 4, 8)) == (True, True, True)
    assert v4.wrap((2, 2, 4)) == (False, False, True)
    with pytest.raises(ValueError, match="2 ICI axes"):
        v5e.wrap((4, 4, 4))
    with pytest.raises(ValueError, match="not a TPU pod"):
        NODES["DGX H100"].wrap((8,))


def test_nvls_allreduce_moves_about_b_per_gpu():
    """NVLS: one step, each GPU sends B into the switch and receives the sum: α + B/bw, against the
    switch's 2·(α + (n−1)/n·B/bw); the values are the sum."""
    rng = np.random.default_rng(3)
    xs = _shards(rng, 8, (64,))
    r = col.all_reduce(xs, link=LINK, topology="switch", nvls=True)
    for v in r.values:
        np.testing.assert_allclose(v, np.sum(xs, axis=0), rtol=1e-5, atol=1e-5)
    B = xs[0].nbytes
    assert r.steps == 1 and r.time == pytest.approx(LINK.latency + B / LINK.bandwidth)
    assert r.time == pytest.approx(col.time("all_reduce", B, 8, LINK, "switch", nvls=True))
    plain = col.time("all_reduce", B, 8, LINK, "switch", latency=0)
    assert col.time("all_reduce", B, 8, LINK, "switch", nvls=True, latency=0) == pytest.approx(plain * 8 / 14)
    # NVLS changes only AllReduce
    assert col.time("all_gather", B, 8, LINK, "switch", nvls=True) == col.time("all_gather", B, 8, LINK, "switch")
    with pytest.raises(col.CollectiveError, match="nvls=True needs topology='switch'"):
        col.time("all_reduce", B, 8, LINK, "ring", nvls=True)
    with pytest.raises(col.CollectiveError, match="nvls=True needs topology='switch'"):
        col.all_reduce(xs, link=LINK, topology="ring", nvls=True)


@pytest.mark.parametrize("nodes", [2, 4, 32])
def test_hierarchical_allreduce_closed_form(nodes):
    """n = 8·k GPUs: switch ReduceScatter (α + 7/8·B/bw) + ring AllReduce of B/8 over k nodes on the
    network (2(k−1)·(α' + B/8/k/bw')) + switch AllGather (α + 7/8·B/bw)."""
    B, g = 1e9, 8
    n = g * nodes
    intra = LINK.latency + 7 / 8 * B / LINK.bandwidth
    across = 2 * (nodes - 1) * (NET.latency + B / g / nodes / NET.bandwidth)
    assert col.hierarchical_time("all_reduce", B, n, LINK, NET, g) == pytest.approx(2 * intra + across)
    assert col.hierarchical_time("reduce_scatter", B, n, LINK, NET, g) == pytest.approx(intra + across / 2)
    assert col.hierarchical_time("all_gather", B, n, LINK, NET, g) == pytest.approx(intra + across / 2)
    a2a = max(LINK.latency, NET.latency) + max(7 * B / n / LINK.bandwidth, (n - g) * B / n / NET.bandwidth)
    assert col.hierarchical_time("all_to_all", B, n, LINK, NET, g) == pytest.approx(a2a)
    # up to one node it is the switch
    assert col.hierarchical_time("all_reduce", B, 8, LINK, NET, g) == col.time("all_reduce", B, 8, LINK, "switch")
    with pytest.raises(col.CollectiveError, match="n = 12 GPUs do not fill whole nodes of 8"):
        col.hierarchical_time("all_reduce", B, 12, LINK, NET, g)


def test_dgx_h100_node_and_network():
    """A DGX H100 node holds 8 GPUs; its network gives each GPU 400 Gb/s = 50 GB/s each way."""
    node = NODES["DGX H100"]
    assert node.size == 8 and node.chip == "H100 SXM"
    assert SCALE_OUT_400G.bandwidth == 50e9 and node.scale_out is SCALE_OUT_400G
    B = 2 * ls.llm.param_count(ls.llm.PRESETS["LLaMA-2-7B"])
    nv = ls.hardware.PRESETS["H100 SXM"].chip_link.bandwidth
    t8, t64 = col.node_time("all_reduce", B, 8), col.node_time("all_reduce", B, 64)
    assert t8 == pytest.approx(2 * 7 / 8 * B / nv)
    assert t64 == pytest.approx(2 * 7 / 8 * B / nv + 2 * 7 / 8 * B / 8 / 50e9)
    assert t64 > t8 * 1.5  # the network, 9x slower than NVLink, dominates
    assert col.node_time("all_reduce", B, 8, nvls=True) == pytest.approx(B / nv)
    with pytest.raises(col.CollectiveError, match="unknown node 'DGX Z'"):
        col.node_time("all_reduce", B, 8, node="DGX Z")


# ----------------------------------------------------------------------------------------- parallelism
P, L, D, T = 6.7e9, 32, 4096, 2 ** 20
PEAK = ls.hardware.PRESETS["H100 SXM"].peak_flops("bfloat16")
NV = ls.hardware.PRESETS["H100 SXM"].chip_link


def test_bubble_fraction():
    assert col.parallelism.bubble_fraction(4, 4) == pytest.approx(3 / 7)
    assert col.parallelism.bubble_fraction(8, 32) == pytest.approx(7 / 39)
    assert col.parallelism.bubble_fraction(1, 8) == 0


@pytest.mark.parametrize("n", [2, 8])
def test_step_times_closed_forms(n):
    par = col.parallelism
    compute = 6 * P * T / n / PEAK
    ar = lambda b: col.time("all_reduce", b, n, NV, "ring")  # noqa: E731
    ar_n = lambda b, k: col.time("all_reduce", b, k, NV, "ring")  # noqa: E731
    s = par.step_time("data", P, L, D, T, n)
    assert s.compute == pytest.approx(compute) and s.comm == pytest.approx(ar(2 * P))
    assert s.hidden == pytest.approx(min(ar(2 * P), 2 / 3 * compute))
    assert s.total == pytest.approx(compute + s.comm - s.hidden)
    f = par.step_time("fsdp", P, L, D, T, n)
    ag, rs = col.time("all_gather", 2 * P, n, NV), col.time("reduce_scatter", 2 * P, n, NV)
    assert f.comm == pytest.approx(2 * ag + rs)
    assert f.hidden == pytest.approx(min(2 * ag + rs - col.time("all_gather", 2 * P / L, n, NV), compute))
    t = par.step_time("tensor", P, L, D, T, n)
    assert t.comm == pytest.approx(4 * L * ar(T * D * 2)) and t.hidden == 0 and t.exposed == t.comm
    p = par.step_time("pipeline", P, L, D, T, n, microbatches=16)
    x = T / 16 * D * 2
    assert p.comm == pytest.approx(2 * 16 * (NV.latency + x / NV.bandwidth))
    assert p.bubble == pytest.approx(compute * (n - 1) / 16)
    assert p.bubble / (p.compute + p.bubble) == pytest.approx(par.bubble_fraction(n, 16))
    # n/p pipelines of p = 2 stages: the sends carry T·p/n tokens per pipeline; a stage's gradients are AllReduced
    if n == 8:
        q = par.step_time("pipeline", P, L, D, T, n, microbatches=16, stages=2)
        x2 = T * 2 / n / 16 * D * 2
        sends, grads = 2 * 16 * (NV.latency + x2 / NV.bandwidth), ar_n(2 * P / 2, n // 2)
        assert q.comm == pytest.approx(sends + grads)
        assert q.hidden == pytest.approx(min(sends, compute) + min(grads, 2 / 3 * compute))
        assert q.bubble == pytest.approx(compute / 16)
    with pytest.raises(col.CollectiveError, match="stages = 64 must be at most layers = 32"):
        par.step_time("pipeline", P, L, D, T, 64)
    e = par.step_time("expert", P, L, D, T, n, top_k=2)
    assert e.comm == pytest.approx(4 * L * col.time("all_to_all", T / n * 2 * D * 2, n, NV))
    assert [r.strategy for r in par.compare(P, L, D, T, n)] == list(par.STRATEGIES)


def test_step_time_with_a_hierarchy_and_bad_input():
    par = col.parallelism
    comm = lambda op, b, n: col.node_time(op, b, n)  # noqa: E731
    s64 = par.step_time("data", P, L, D, T, 64, comm=comm)
    assert s64.comm == pytest.approx(col.node_time("all_reduce", 2 * P, 64))
    # tensor parallelism across nodes: its AllReduces cross the network and nothing hides them
    assert par.step_time("tensor", P, L, D, T, 64, comm=comm).exposed > 10 * s64.exposed
    assert par.step_time("data", P, L, D, T, 1).comm == 0
    with pytest.raises(col.CollectiveError, match="unknown strategy 'zero'"):
        par.step_time("zero", P, L, D, T, 8)
    with pytest.raises(col.CollectiveError, match="tokens must be a number > 0"):
        par.step_time("data", P, L, D, 0, 8)
    with pytest.raises(col.CollectiveError, match="microbatches must be a whole number"):
        par.step_time("pipeline", P, L, D, T, 8, microbatches=0)


# ----------------------------------------------------------------------------------------------- figures
def test_topology_curves_stop_the_switch_at_one_node():
    from labsim import viz
    c = viz.collectives.topology_curves("H100 SXM", "all_reduce", 1e9)
    xs, ts, built = c["one node: NVSwitch"]
    assert max(xs) == 8 and built
    xs, ts, built = c["nodes of 8 joined by 400 Gb/s networking"]
    assert xs[0] == 8 and xs[-1] == 256 and built
    assert ts == [col.node_time("all_reduce", 1e9, n) for n in xs]
    assert not c["one NVLink switch for all (no H100 system)"][2]
    assert "one node: NVSwitch adds (NVLS)" not in viz.collectives.topology_curves("H100 SXM", "all_gather", 1e9)
    v = viz.collectives.topology_curves("TPU v5e", "all_reduce", 1e9)
    xs, mesh_t, _ = v["slice as built: mesh, wraparound only on axes of 16"]
    _, torus_t, built = v["torus on every axis (only 16 × 16 has it)"]
    assert not built
    assert mesh_t[xs.index(16)] == pytest.approx(2 * torus_t[xs.index(16)])  # 4×4: no wraparound
    assert mesh_t[-1] == pytest.approx(torus_t[-1])  # 16×16: the pod's torus
    with pytest.raises(ValueError, match="chip='B200'"):
        viz.collectives.topology_curves("B200", "all_reduce", 1e9)
    fig = viz.collectives.cost_figure("H100 SXM", "all_reduce", 256, 10)
    # the figure style wraps a legend entry over 40 characters onto two lines
    assert [t.name.replace("<br>", " ") for t in fig.data] == list(viz.collectives.topology_curves("H100 SXM", "all_reduce", 1).keys())


def test_fsdp_and_parallelism_figures():
    from labsim import viz
    fig = viz.collectives.fsdp_figure(10_000, 4, 2, 2, 800)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 5 and all(len(b.y) == 8 for b in bars)
    rows = col.fsdp_timeline(10_000, 4, 2, 2, 800)
    stacked = [sum(b.y[i] for b in bars) for i in range(8)]
    assert stacked == pytest.approx([r["total"] / 1e9 for r in rows])
    steps = col.parallelism.compare(P, L, D, T, 8)
    fig = viz.collectives.parallelism_figure(steps, "t")
    exposed = {t.name: t for t in fig.data}["communication exposed (adds to the step)"]
    assert list(exposed.x) == pytest.approx([s.exposed * 1e3 for s in steps[::-1]])
