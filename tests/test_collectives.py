"""labsim.collectives: values against NumPy, step-by-step times against closed forms derived here."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import labsim as ls
from labsim import collectives as col
from labsim.hardware import Link

LINK = Link("test link", 1e9, latency=1e-6)  # 1 GB/s, 1 µs: easy numbers


def _shards(rng, n, shape):
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 7), rows=st.integers(1, 5), cols=st.integers(1, 4), seed=st.integers(0, 99),
       topology=st.sampled_from(["ring", "switch"]))
def test_values_match_numpy(n, rows, cols, seed, topology):
    rng = np.random.default_rng(seed)
    parts = _shards(rng, n, (rows, cols))
    ag = col.all_gather(parts, axis=1, link=LINK, topology=topology)
    for v in ag.values:
        np.testing.assert_array_equal(v, np.concatenate(parts, axis=1))
    full = _shards(rng, n, (rows * n, cols))
    total = np.sum(full, axis=0)
    rs = col.reduce_scatter(full, link=LINK, topology=topology)
    for i, v in enumerate(rs.values):
        np.testing.assert_allclose(v, total[i * rows:(i + 1) * rows], rtol=1e-5, atol=1e-5)
    ar = col.all_reduce(full, link=LINK, topology=topology)
    for v in ar.values:
        np.testing.assert_allclose(v, total, rtol=1e-5, atol=1e-5)
    # AllToAll: device j gets block j of every device, joined along axis 1
    a2a = col.all_to_all(full, split_axis=0, concat_axis=1, link=LINK, topology=topology)
    for j, v in enumerate(a2a.values):
        np.testing.assert_array_equal(v, np.concatenate([f[j * rows:(j + 1) * rows] for f in full], axis=1))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("op", col.OPS)
@pytest.mark.parametrize("topology", ["ring", "switch"])
def test_simulated_time_equals_closed_form(n, op, topology):
    """Ring: B = n·k·4 bytes. AllGather / ReduceScatter: n−1 steps, each α + (B/n)/bw. AllReduce: twice.
    AllToAll: step k carries (n−k) blocks of B/n: Σ_k (n−k)·B/n = B·(n−1)/2 bytes over (n−1) steps.
    Switch: one step moving (n−1)·B/n through each link (two for AllReduce)."""
    k = 6
    B = n * k * 4
    rng = np.random.default_rng(n)
    arrays = _shards(rng, n, (k,)) if op == "all_gather" else _shards(rng, n, (n * k,))
    r = col.run(op, arrays, link=LINK, topology=topology)
    a, bw = LINK.latency, LINK.bandwidth
    if n == 1:
        expected = 0.0
    elif topology == "ring":
        expected = {"all_gather": (n - 1) * (a + B / n / bw), "reduce_scatter": (n - 1) * (a + B / n / bw),
                    "all_reduce": 2 * (n - 1) * (a + B / n / bw),
                    "all_to_all": (n - 1) * a + B * (n - 1) / 2 / bw}[op]
    else:
        one = a + (n - 1) * B / n / bw
        expected = 2 * one if op == "all_reduce" else one
    assert r.time == pytest.approx(expected, rel=1e-12)
    assert r.time == pytest.approx(col.time(op, B, n, LINK, topology), rel=1e-12)
    # the trace holds the same time and the bytes sent: ring AllGather sends (n−1)·B/n per device
    if n > 1:
        assert r.trace.end == pytest.approx(r.time)
        if op == "all_gather" and topology == "ring":
            assert sum(e.nbytes for e in r.trace.events) == n * (n - 1) * B // n


@settings(max_examples=20, deadline=None)
@given(mesh=st.sampled_from([(2,), (3,), (5,), (2, 2), (2, 3), (3, 2, 2), (4, 2)]), k=st.integers(1, 3),
       seed=st.integers(0, 99))
def test_bidir_and_torus_values_match_numpy(mesh, k, seed):
    """The same results as NumPy on a bidirectional ring and on a torus (devices row-major over the mesh)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(mesh))
    parts = _shards(rng, n, (k, 2))
    full = _shards(rng, n, (n * k, 2))
    total = np.sum(full, axis=0)
    for topo, m in (("bidir_ring", None), ("torus", mesh)):
        for v in col.all_gather(parts, link=LINK, topology=topo, mesh=m).values:
            np.testing.assert_array_equal(v, np.concatenate(parts))
        for i, v in enumerate(col.reduce_scatter(full, link=LINK, topology=topo, mesh=m).values):
            np.testing.assert_allclose(v, total[i * k:(i + 1) * k], rtol=1e-5, atol=1e-5)
        for v in col.all_reduce(full, link=LINK, topology=topo, mesh=m).values:
            np.testing.assert_allclose(v, total, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mesh", [(2,), (4,), (8,), (4, 4), (2, 4), (4, 2), (2, 2, 2), (3, 2)])
@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter", "all_reduce"])
def test_bidir_and_torus_time_equals_closed_form(mesh, op):
    """Bidirectional ring of n: n−1 steps, each α + (B/n)/2 / bw (half of every chunk each way).
    Torus (n1, n2, ...): axis i is a bidirectional ring of n_i on B/(n1·…·n_{i−1}) bytes, so
    Σ_i (n_i − 1)·(α + B/(n1·…·n_i)/2/bw) for ReduceScatter, the same for AllGather, twice for AllReduce.
    Sizes are multiples of 2n so every half-chunk is equal."""
    n = int(np.prod(mesh))
    k = 2 * n * 3
    B = k * 4
    a, bw = LINK.latency, LINK.bandwidth
    arrays = [np.ones(k // n if op == "all_gather" else k, np.float32) for _ in range(n)]
    rs_torus = sum((d - 1) * (a + B / int(np.prod(mesh[:i + 1])) / 2 / bw) for i, d in enumerate(mesh))
    expected = rs_torus * (2 if op == "all_reduce" else 1)
    r = col.run(op, arrays, link=LINK, topology="torus", mesh=mesh)
    assert r.time == pytest.approx(expected, rel=1e-12)
    assert r.time == pytest.approx(col.time(op, B, n, LINK, "torus", mesh=mesh), rel=1e-12)
    assert r.steps == sum(d - 1 for d in mesh) * (2 if op == "all_reduce" else 1)
    if len(mesh) == 1:
        b = col.run(op, arrays, link=LINK, topology="bidir_ring")
        assert b.time == pytest.approx(r.time, rel=1e-12)
        assert b.time == pytest.approx(col.time(op, B, n, LINK, "bidir_ring"), rel=1e-12)
    # every send of a torus run is on a link of its axis: index 2·axis (one way) or 2·axis + 1 (the other)
    if n > 1:
        assert {e.unit.index for e in r.trace.events} <= set(range(2 * len(mesh)))


def test_ring_allreduce_trace_steps_and_units():
    r = col.all_reduce([np.ones(8, np.float32)] * 4, link=LINK)
    assert r.steps == 2 * (4 - 1)
    assert {e.unit.kind for e in r.trace.events} == {ls.UnitKind.LINK}
    assert len(r.trace.events) == 4 * r.steps  # every device sends once per step
    assert [e.unit.chip for e in r.trace.events[:4]] == [0, 1, 2, 3]


def test_closed_forms_other_topologies():
    """Bidirectional ring halves the bandwidth term; a torus is per-axis bidirectional rings in sequence."""
    B, a, bw = 1e9, 1e-6, 1e9
    assert col.time("all_gather", B, 8, LINK, "bidir_ring") == pytest.approx(7 * (a + B / 16 / bw))
    assert col.time("all_reduce", B, 8, LINK, "bidir_ring") == pytest.approx(14 * (a + B / 16 / bw))
    # 4×4 torus AllGather: axis 1 gathers B/4 over 4 devices, axis 2 gathers B over 4
    ag = 3 * (a + (B / 4) / 8 / bw) + 3 * (a + B / 8 / bw)
    assert col.time("all_gather", B, None, LINK, "torus", mesh=(4, 4)) == pytest.approx(ag)
    # ReduceScatter mirrors it: B over axis 1, then B/4 over axis 2; AllReduce = both
    assert col.time("reduce_scatter", B, None, LINK, "torus", mesh=(4, 4)) == pytest.approx(ag)
    assert col.time("all_reduce", B, 16, LINK, "torus", mesh=(4, 4)) == pytest.approx(2 * ag)
    # a torus of one axis is a bidirectional ring; fewer steps than a 16-ring
    assert col.time("all_reduce", B, None, LINK, "torus", mesh=(16,)) == pytest.approx(
        col.time("all_reduce", B, 16, LINK, "bidir_ring"))
    assert col.time("all_reduce", 1, None, LINK, "torus", mesh=(4, 4)) < col.time("all_reduce", 1, 16, LINK, "bidir_ring")


def test_presets_links():
    """H100's chip_link is NVLink 4 at 450 GB/s per direction; AllReduce of 14 GB on 8 ring: 2·7/8·14e9/450e9."""
    t = col.time("all_reduce", 14e9, 8, "H100 SXM", "ring", latency=0)
    assert t == pytest.approx(2 * 7 / 8 * 14e9 / 450e9)
    assert col.time("all_reduce", 14e9, 8, ls.hardware.PRESETS["H100 SXM"].host_link, "ring", latency=0) == pytest.approx(t * 450 / 64)  # PCIe 5: 64 GB/s


def test_bad_input_errors():
    with pytest.raises(col.CollectiveError, match="10 entries.*3 devices.*10 is not a multiple of 3"):
        col.reduce_scatter([np.ones(10)] * 3, link=LINK)
    with pytest.raises(col.CollectiveError, match="n must be a whole number of devices >= 1"):
        col.time("all_reduce", 10, 0, LINK)
    with pytest.raises(col.CollectiveError, match="unknown topology .hypercube."):
        col.time("all_reduce", 10, 4, LINK, "hypercube")
    with pytest.raises(col.CollectiveError, match="device 1 holds shape"):
        col.all_gather([np.ones(3), np.ones(4)], link=LINK)
    with pytest.raises(col.CollectiveError, match="needs mesh"):
        col.time("all_gather", 10, 4, LINK, "torus")
    with pytest.raises(col.CollectiveError, match="n = 8 but the mesh"):
        col.time("all_gather", 10, 8, LINK, "torus", mesh=(2, 2))
    with pytest.raises(col.CollectiveError, match=r"the mesh \(2, 2\) holds 4 devices but 3 arrays"):
        col.all_gather([np.ones(2)] * 3, link=LINK, topology="torus", mesh=(2, 2))
    with pytest.raises(col.CollectiveError, match="all_to_all supports topology 'ring', 'switch'"):
        col.all_to_all([np.ones(4)] * 2, link=LINK, topology="torus", mesh=(2,))
    with pytest.raises(col.CollectiveError, match="non-empty list"):
        col.all_gather([], link=LINK)
    with pytest.raises(col.CollectiveError, match="dimension 0 has 10 entries.*'x' \\(4 devices\\)"):
        col.shard((10, 4), {"x": 4}, ("x", None))


def test_shard_and_matmul_rules():
    mesh = {"x": 4, "y": 2}
    assert col.shard((16, 8), mesh, ("x", "y")) == (4, 4)
    assert col.shard((16, 8), mesh, (None, "x")) == (16, 2)
    # contracting dim sharded on both → AllReduce of C (I·K·2 bytes); scatter → ReduceScatter
    p = col.matmul((64, 32), (None, "x"), (32, 16), ("x", None), mesh)
    assert (p.collective, p.axis, p.nbytes) == ("all_reduce", "x", 64 * 16 * 2)
    assert p.time(mesh, LINK) == pytest.approx(col.time("all_reduce", 64 * 16 * 2, 4, LINK))
    assert col.matmul((64, 32), (None, "x"), (32, 16), ("x", None), mesh, scatter=True).collective == "reduce_scatter"
    # one contracting dim sharded → AllGather that operand
    p = col.matmul((64, 32), ("y", "x"), (32, 16), (None, None), mesh)
    assert (p.collective, p.operand, p.nbytes) == ("all_gather", "A", 64 * 32 * 2)
    # data parallel / model parallel on different axes → nothing
    assert col.matmul((64, 32), ("x", None), (32, 16), (None, "y"), mesh).collective is None
    assert col.matmul((64, 32), ("x", None), (32, 16), (None, "x"), mesh).collective == "all_gather"
    with pytest.raises(col.CollectiveError, match="contracting sizes 32 and 31 differ"):
        col.matmul((64, 32), (None, None), (31, 16), (None, None), mesh)


def test_fsdp_memory_closed_form():
    """Forward, layer l < L−1: P·b/D + 2·P·b/L (the running layer and the prefetched next one) +
    (l+1)/L·activations + temporaries; the last forward layer holds one layer. Backward, layer l: the
    same two layers (one at l = 0) + a gradient buffer of P·b/L + gradient shards of the L−1−l layers
    done + (l+1)/L·activations. The peak is the first backward step (P·b/D + 3·P·b/L + activations +
    temporaries) when activations dominate, one of the last when the gradient shards do."""
    P, L, D, A, T = 1_000_000, 10, 8, 5000, 100
    mem = col.fsdp_memory(P, L, D, 2, activations=A, temporaries=T)
    assert len(mem) == 2 * L
    shard, layer = P * 2 / D, P * 2 / L
    assert mem[0] == pytest.approx(shard + 2 * layer + A / L + T)
    assert mem[L - 1] == pytest.approx(shard + layer + A + T)  # nothing left to prefetch
    assert mem[L] == pytest.approx(shard + 2 * layer + layer + A + T)  # backward of the last layer
    assert mem[-1] == pytest.approx(shard + layer + layer + P * 2 / D * (L - 1) / L + A / L + T)
    assert col.fsdp_peak(P, L, D, 2, A, T) == max(mem) == mem[-2]  # layer 1: still two layers resident
    big = 10_000_000
    assert col.fsdp_peak(P, L, D, 2, big, T) == pytest.approx(shard + 3 * layer + big + T)
    # without prefetch one layer is resident: the old "shard + one layer" holds only then
    no = col.fsdp_memory(P, L, D, 2, activations=A, temporaries=T, prefetch=False)
    assert no[0] == pytest.approx(shard + layer + A / L + T)
    assert col.fsdp_peak(P, L, D, 2, big, T, prefetch=False) == pytest.approx(shard + 2 * layer + big + T)
    rows = col.fsdp_timeline(P, L, D, 2, A, T)
    assert [r["phase"] for r in rows] == ["forward"] * L + ["backward"] * L
    assert [r["layer"] for r in rows[L:]] == list(range(L - 1, -1, -1))
    assert all(r["total"] == pytest.approx(m) for r, m in zip(rows, mem))
    cfg = ls.llm.PRESETS["LLaMA-2-7B"]
    P = ls.llm.param_count(cfg)
    assert col.fsdp_peak(P, cfg.n_layers, 8) < (P * 2 + P * 2) / 4  # far below replicated weights + gradients
    with pytest.raises(col.CollectiveError, match="layers must be"):
        col.fsdp_memory(P, 0, 8)
    with pytest.raises(col.CollectiveError, match="activations must be >= 0"):
        col.fsdp_memory(P, 4, 8, activations=-1)


def test_ring_drawing_frames():
    """One frame per step plus the start, the same traces in each; at the end every chunk is complete."""
    from labsim import viz
    for n in (2, 4, 8):
        frames = viz.collectives.ring_frames(n)
        assert len(frames) == 1 + 2 * (n - 1) == len(viz.collectives.ring_steps("all_reduce", n))
        assert len({len(f.data) for f in frames}) == 1
        last = {t.name: t for t in frames[-1].data}
        assert len([x for x in last["complete sum"].x if x is not None]) == n * n
        first = {t.name: t for t in frames[0].data}
        assert len([x for x in first["own data"].x if x is not None]) == n * n
    with pytest.raises(ValueError, match="at least 2 devices"):
        viz.collectives.ring_frames(1)


# ---- one name per idea: the choices are enums that accept their strings ----------------------------------
def test_choices_are_enums_that_accept_their_strings():
    T, C = col.Topology, col.Collective
    assert col.TOPOLOGIES == ("ring", "bidir_ring", "torus", "mesh", "switch") == T.values()
    assert col.OPS == C.values() and col.parallelism.STRATEGIES == col.Strategy.values()
    parts = [np.arange(8.0)] * 4
    by_name = col.all_reduce(parts, link=LINK, topology="Ring")  # any case
    by_enum = col.all_reduce(parts, link=LINK, topology=T.RING)
    assert by_name.topology is T.RING and by_name.op is C.ALL_REDUCE and by_name.time == by_enum.time
    # a member is its string: compares, hashes, prints and formats as it
    assert by_name.topology == "ring" and {"ring": 1}[T.RING] == 1 and f"{T.BIDIR_RING}" == "bidir_ring"
    assert repr(T.SWITCH) == "'switch'" and C.ALL_TO_ALL.title == "AllToAll" == col.NAMES[C.ALL_TO_ALL]
    assert col.time(C.ALL_GATHER, 1e6, 8, LINK, T.SWITCH) == col.time("all_gather", 1e6, 8, LINK, "switch")
    assert col.run(C.ALL_GATHER, parts, link=LINK).op is C.ALL_GATHER
    assert col.matmul((8, 16), (None, "x"), (16, 4), ("x", None), {"x": 4}).collective is C.ALL_REDUCE
    s = col.parallelism.step_time("FSDP", params=1e9, layers=8, d_model=1024, tokens=2**16, devices=8)
    assert s.strategy is col.Strategy.FSDP


@pytest.mark.parametrize("call, arg, accepted", [
    (lambda: col.time("all_reduce", 1e6, 8, LINK, "hypercube"), "topology", "'ring', 'bidir_ring', 'torus'"),
    (lambda: col.all_gather([np.ones(2)] * 2, link=LINK, topology=3), "topology", ".*'mesh', 'switch'"),
    (lambda: col.time("allreduce", 1e6, 8, LINK), "collective", "'all_gather', 'reduce_scatter', 'all_reduce'"),
    (lambda: col.run("broadcast", [np.ones(2)] * 2, link=LINK), "collective", ".*'all_to_all'"),
    (lambda: col.parallelism.step_time("zero", 1e9, 8, 1024, 2**16, 8), "strategy", "'data', 'fsdp', 'tensor'"),
    (lambda: col.parallelism.step_time("data", 1e9, 8, 1024, 2**16, 8, topology="star"), "topology", "'ring'"),
])
def test_a_wrong_choice_names_the_argument_and_the_accepted_values(call, arg, accepted):
    with pytest.raises(col.CollectiveError, match=f"unknown {arg} .*; expected one of {accepted}"):
        call()


def test_the_enum_itself_refuses_a_wrong_string_with_the_accepted_values():
    with pytest.raises(ValueError, match="'cube' is not a Topology; expected one of 'ring', 'bidir_ring'"):
        col.Topology("cube")


def test_collectives_exports_only_its_api():
    """``ls.collectives.__all__`` names what a reader calls: every name exists, none is private, and a
    star import brings exactly those names."""
    assert len(col.__all__) == len(set(col.__all__))
    assert all(hasattr(col, n) and not n.startswith("_") for n in col.__all__)
    ns = {}
    exec("from labsim.collectives import *", ns)
    assert set(ns) - {"__builtins__"} == set(col.__all__)
    for mod in (col.parallelism, __import__("labsim.machines.sharding", fromlist=["x"]),
                __import__("labsim.machines.collective_costs", fromlist=["x"])):
        assert all(hasattr(mod, n) and not n.startswith("_") for n in mod.__all__), mod.__name__
    # what a reader needs is there: the public functions and classes of collectives are all in __all__
    import inspect
    own = {"labsim.machines.collectives", "labsim.machines.collective_costs", "labsim.machines.sharding",
           "labsim.machines.parallelism"}
    public = {n for n, v in vars(col).items()
              if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ in own}
    assert public <= set(col.__all__), public - set(col.__all__)


def test_ring_all_to_all_sends_the_blocks_still_on_their_way():
    """Step k: every device forwards the n−k blocks still in flight, one link hop (labsim's ring AllToAll)."""
    n, rows = 5, 10
    parts = [np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) + 100 * i for i in range(n)]
    r = col.all_to_all(parts, split_axis=0, concat_axis=1, link=LINK)
    block = parts[0][: rows // n].nbytes
    assert r.steps == n - 1 and len(r.trace.events) == n * (n - 1)
    for k in range(1, n):
        step = [e for e in r.trace.events if e.start == pytest.approx(r.trace.events[(k - 1) * n].start)]
        assert [e.nbytes for e in step] == [(n - k) * block] * n and {e.name for e in step} == {f"{n - k} blocks"}
    for j, v in enumerate(r.values):
        np.testing.assert_array_equal(v, np.concatenate([np.split(p, n)[j] for p in parts], axis=1))


def test_the_runs_events_are_the_events_the_constructor_makes():
    """_Run fills its COPY events' fields directly (130,560 of them for AllReduce over 256 devices); they
    equal, hash and print as Event(...) built with its checks."""
    from labsim.machines.events import Event
    r = col.all_reduce([np.ones(6, np.float32)] * 3, link=LINK)
    for e in r.trace.events:
        twin = Event(e.unit, e.name, e.start, e.end, e.kind, e.detail, nbytes=e.nbytes)
        assert e == twin and hash(e) == hash(twin) and repr(e) == repr(twin) and e.duration == twin.duration
    with pytest.raises(Exception):
        r.trace.events[0].start = 0.0  # still frozen
