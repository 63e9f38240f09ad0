"""Collectives over many chips: values step by step, times in closed form, sharding rules.

    r = ls.collectives.all_reduce(shards, link="H100 SXM")    # shards: one NumPy array per device
    r.values          # the result on every device (a list, one array per device)
    r.trace           # one COPY event per send, on the sending device's LINK unit
    r.time            # seconds: the sum of the steps' times
    ls.collectives.time("all_reduce", nbytes, n=8, link="H100 SXM", topology="ring")   # closed form

The step-by-step runs here play the algorithms of ``collective_steps.py`` (ring, bidirectional ring,
line) on ``ring``, ``bidir_ring``, ``torus``, ``mesh`` (axes with or without wraparound) and ``switch``
(``nvls=True``: the switch adds); a step lasts ``α + (largest message of the step) / bw``, and every
run's time equals the closed form of ``collective_costs.py`` (its docstring gives the model and the
formulas). The closed forms, ``hierarchical_time`` (switch nodes joined by a network), the sharding
rules and FSDP's memory (``sharding.py``) are re-exported here, so ``ls.collectives`` is the one name.

The choices are enums that also take their strings: ``op`` a :class:`Collective` (``"all_reduce"``),
``topology`` a :class:`Topology` (``"ring"``), a parallelism ``strategy`` a :class:`Strategy`
(``"fsdp"``); a result's ``.op`` and ``.topology`` are the members, equal to their strings.
"""
from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass

import numpy as np

from . import collective_steps as _steps
from . import parallelism
from .parallelism import Strategy
from .collective_costs import (NAMES, OPS, TOPOLOGIES, Collective, CollectiveError, Topology, _count, _link, _op,
                               _topology, grid_time, hierarchical_time, node_time, ring_time, switch_time, time,
                               wraps)
from .events import Event, EventKind, Trace, UnitId, UnitKind
from .sharding import MatmulPlan, fsdp_memory, fsdp_peak, fsdp_timeline, matmul, shard

# ------------------------------------------------------------------------------------- step by step
#: A run of 256 devices makes 130,560 COPY events. Its sends pass Event's checks by construction (a LINK
#: UnitId, end > start, nbytes >= 0), and the checks were half the run's time, so ``_Run.step`` fills
#: each event's fields directly. Only while Event has exactly these fields and no slots; otherwise it
#: calls the constructor. (tests/test_collectives.py checks that both give equal events.)
_nbytes_of = operator.itemgetter(2)  # a send's bytes
_TRUSTED_EVENTS = (tuple(f.name for f in dataclasses.fields(Event)) ==
                   ("unit", "name", "start", "end", "kind", "detail", "nbytes", "flops")
                   and not hasattr(Event, "__slots__"))

@dataclass(frozen=True)
class Result:
    """What a collective leaves on each device, the sends it made, and how long it took."""

    op: Collective
    values: list
    trace: Trace
    steps: int
    time: float
    topology: Topology
    padded_bytes: int = 0  # zeros added to each device's array so that n devices share it equally (all_reduce)


class _Run:
    def __init__(self, op, n, lk, topology):
        self.op, self.n, self.lk, self.topology = op, n, lk, topology
        self.events: list[Event] = []
        self.now, self.steps = 0.0, 0
        self._units: dict = {}  # one UnitId per (device, link): thousands of sends share them
        self._paths: dict = {}  # "device 3 → device 4", made once per pair
        self._routes: dict = {}  # (src, dst, link) -> (unit, path)

    def _unit(self, src, idx):
        u = self._units.get((src, idx))
        if u is None:
            u = self._units[(src, idx)] = UnitId(src, UnitKind.LINK, idx)
        return u

    def step(self, sends):
        """``sends``: (src, dst, nbytes, what, link index) all at once; the step lasts α + max bytes / bw."""
        if not sends:
            return
        d = self.lk.latency + max(map(_nbytes_of, sends)) / self.lk.bandwidth
        t0, t1, copy, ev = self.now, self.now + d, EventKind.COPY, self.events.append
        routes = self._routes
        new, fill = object.__new__, object.__setattr__
        for src, dst, nb, what, idx in sends:
            route = routes.get((src, dst, idx))
            if route is None:
                route = routes[(src, dst, idx)] = self._route(src, dst, idx)
            u, path = route
            if _TRUSTED_EVENTS:
                e = new(Event)
                fill(e, "__dict__", {"unit": u, "name": what, "start": t0, "end": t1, "kind": copy, "detail": path,
                                     "nbytes": int(nb), "flops": None})
                ev(e)
            else:
                ev(Event(u, what, t0, t1, copy, path, nbytes=int(nb)))
        self.now = t1
        self.steps += 1

    def _route(self, src, dst, idx):
        """The sending unit and the words "device 3 → device 4" of one (src, dst, link), made once."""
        path = self._paths.get((src, dst))
        if path is None:
            path = self._paths[(src, dst)] = f"device {src} → " + (dst if isinstance(dst, str) else f"device {dst}")
        return self._unit(src, idx), path

    def result(self, values, padded_bytes: int = 0):
        units = [self._unit(i, 0) for i in range(self.n)]  # the same objects the events hold: cheap set look-ups
        units += [self._units[k] for k in sorted(self._units) if k[1] != 0]
        return Result(self.op, values, Trace(self.events, units=tuple(units) if self.events else ()),
                      self.steps, self.now, self.topology, padded_bytes)


def _check_shards(shards, what="shards", op=""):
    if not isinstance(shards, (list, tuple)) or not shards:
        raise CollectiveError(f"{op + ': ' if op else ''}{what} must be a non-empty list with one NumPy array per "
                              f"device, got {type(shards).__name__}")
    arrs = [np.asarray(s) for s in shards]
    for i, a in enumerate(arrs):
        if a.dtype.kind not in "biufc":
            raise CollectiveError(f"{op + ': ' if op else ''}{what}[{i}] must be an array of numbers, got "
                                  f"dtype {a.dtype} ({type(shards[i]).__name__})")
    return arrs


def _same_shape(arrs, op):
    s0 = arrs[0].shape
    for i, a in enumerate(arrs):
        if a.shape != s0:
            raise CollectiveError(f"{op}: device {i} holds shape {a.shape}, device 0 holds {s0}; "
                                  "every device must hold the same shape")


def _axis(a, axis, op):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise CollectiveError(f"{op}: axis must be an integer, got {type(axis).__name__} {axis!r}")
    if a.ndim == 0:
        raise CollectiveError(f"{op}: the arrays are scalars; there is no axis to split or join")
    if not -a.ndim <= axis < a.ndim:
        raise CollectiveError(f"{op}: axis {axis} is out of range for arrays of {a.ndim} dims")
    return axis % a.ndim


def _topo(topology, op, mesh, n, wrap=None) -> tuple[Topology, tuple]:
    """The topology checked (a :class:`Topology`), and the grid's axes with their wraparound (``()`` for
    the other topologies)."""
    topology = _topology(topology)
    allowed = (Topology.RING, Topology.SWITCH) if op == Collective.ALL_TO_ALL else tuple(Topology)
    if topology not in allowed:
        raise CollectiveError(f"the step-by-step {op} supports topology {', '.join(repr(t.value) for t in allowed)}, "
                              f"got {topology.value!r} (use collectives.time for its closed form)")
    if topology not in (Topology.TORUS, Topology.MESH):
        return topology, ()
    if mesh is None:
        raise CollectiveError(f"a {topology} needs mesh=(n1, n2, ...), the devices along each axis")
    dims = tuple(_count(d, "a mesh axis") for d in mesh)
    if math.prod(dims) != n:
        raise CollectiveError(f"the mesh {dims} holds {math.prod(dims)} devices but {n} arrays were given")
    return topology, tuple(zip(dims, wraps(dims, True if topology == Topology.TORUS else wrap)))


def _phases(op: str, arrs: list, ax: int, topology: str, grid: tuple, run: "_Run") -> list:
    """Run AllGather or ReduceScatter on ``arrs`` (device order): one phase per grid axis (ReduceScatter
    from axis 0, AllGather from the last axis, so that device d ends with chunk d), else one ring. A grid
    axis with wraparound is a bidirectional ring, one without a line."""
    n = len(arrs)
    values = {d: arrs[d] for d in range(n)}
    if grid:
        dims = tuple(d for d, _ in grid)
        axes = list(range(len(dims))) if op == "reduce_scatter" else list(range(len(dims)))[::-1]
        plan = [(a, "bidir" if grid[a][1] else "line", _steps.groups(dims, a)) for a in axes]
    else:
        plan = [(0, "bidir" if topology == Topology.BIDIR_RING else "ring", [list(range(n))])]
    fn = _steps.scatter if op == "reduce_scatter" else _steps.gather
    for a, mode, groups in plan:
        new, per_group = {}, []
        for members in groups:
            out, steps = fn(values, members, ax, mode, 2 * a)
            new.update(out)
            per_group.append(steps)
        for k in range(max((len(st) for st in per_group), default=0)):
            run.step([send for st in per_group if k < len(st) for send in st[k]])
        values = new
    return [values[d] for d in range(n)]


def all_gather(shards, axis: int = 0, link="H100 SXM", topology: Topology | str = "ring", mesh=None,
               wrap=None) -> Result:
    """Every device ends with the concatenation of all shards along ``axis`` (device 0's first).

    ``topology``: ``ring``, ``bidir_ring`` (half of each shard each way round), ``torus`` (give ``mesh``;
    devices numbered row-major; one bidirectional ring per axis, the last axis first), ``mesh`` (the
    same, but an axis wraps only if ``wrap`` says so; one without is a line) or ``switch``."""
    arrs = _check_shards(shards, op="all_gather")
    _same_shape(arrs, "all_gather")
    ax = _axis(arrs[0], axis, "all_gather")
    n = len(arrs)
    topology, grid = _topo(topology, Collective.ALL_GATHER, mesh, n, wrap)
    run = _Run(Collective.ALL_GATHER, n, _link(link), topology)
    return run.result(_gather(arrs, ax, topology, grid, run))


def _gather(arrs, ax, topology, grid, run):
    n = len(arrs)
    if topology == Topology.SWITCH:
        if n > 1:  # every device sends its shard to every other at once, through its one link
            run.step([(i, (i + 1) % n, arrs[i].nbytes * (n - 1), f"chunk {i} to all", 0) for i in range(n)])
        return [np.concatenate(arrs, axis=ax) for _ in range(n)]
    return _phases("all_gather", arrs, ax, topology, grid, run)


def reduce_scatter(arrays, axis: int = 0, link="H100 SXM", topology: Topology | str = "ring", mesh=None,
                   wrap=None) -> Result:
    """Device ``i`` ends with chunk ``i`` (along ``axis``) of the sum of every device's array."""
    arrs, ax = _check_rs(arrays, axis, "reduce_scatter")
    n = len(arrs)
    topology, grid = _topo(topology, Collective.REDUCE_SCATTER, mesh, n, wrap)
    run = _Run(Collective.REDUCE_SCATTER, n, _link(link), topology)
    return run.result(_scatter(arrs, ax, topology, grid, run))


def _check_rs(arrays, axis, op):
    arrs = _check_shards(arrays, "arrays", op)
    _same_shape(arrs, op)
    ax = _axis(arrs[0], axis, op)
    n = len(arrs)
    if arrs[0].shape[ax] % n:
        raise CollectiveError(f"{op}: axis {ax} has {arrs[0].shape[ax]} entries, which {n} devices "
                              f"cannot share equally ({arrs[0].shape[ax]} is not a multiple of {n})")
    return arrs, ax


def _scatter(arrs, ax, topology, grid, run):
    n = len(arrs)
    if topology == Topology.SWITCH:
        acc = np.stack([_steps._chunked(a, n, ax) for a in arrs])  # acc[k, i]: device k's chunk i
        if n > 1:
            run.step([(i, (i + 1) % n, acc[i, 0].nbytes * (n - 1), "partial sums to owners", 0) for i in range(n)])
        total = acc[0].copy()
        for k in range(1, n):  # device 0's chunks, then device 1's, ...: the order the owners add them
            total += acc[k]
        return list(total)
    return _phases("reduce_scatter", arrs, ax, topology, grid, run)


def all_reduce(arrays, link="H100 SXM", topology: Topology | str = "ring", axis: int = 0, mesh=None, wrap=None,
               nvls: bool = False) -> Result:
    """Every device ends with the sum of all arrays: ReduceScatter, then AllGather (the ring algorithm).

    ``nvls=True`` (``topology="switch"`` only): the switch adds (NVLink SHARP): one step in which every
    device sends its whole array into the switch and receives the sum.

    Any size works, as NCCL's AllReduce takes any count: when the arrays are scalars, or their ``axis`` has
    a length the ``n`` devices do not divide, each device's array is flattened and padded with zeros to a
    multiple of ``n`` elements, reduced, and the padding dropped. ``result.padded_bytes`` gives the zero
    bytes added per device (0 when none), and the times include them (labsim's choice; NCCL instead sends
    unequal chunks)."""
    if nvls:
        topology = _topology(topology)
        if topology != Topology.SWITCH:
            raise CollectiveError(f"nvls=True needs topology='switch' (the switch does the sums), got {topology!r}")
        arrs = _check_shards(arrays, "arrays", "all_reduce")
        _same_shape(arrs, "all_reduce")
        run_ = _Run(Collective.ALL_REDUCE, len(arrs), _link(link), topology)
        if len(arrs) > 1:
            run_.step([(i, "switch", a.nbytes, "array into the switch; the sum back", 0) for i, a in enumerate(arrs)])
        total = np.sum(arrs, axis=0)
        return run_.result([total.copy() for _ in arrs])
    arrs = _check_shards(arrays, "arrays", "all_reduce")
    _same_shape(arrs, "all_reduce")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise CollectiveError(f"all_reduce: axis must be an integer, got {type(axis).__name__} {axis!r}")
    n, shape = len(arrs), arrs[0].shape
    pad = 0
    if arrs[0].ndim == 0 or shape[_axis(arrs[0], axis, "all_reduce")] % n:
        size = arrs[0].size
        pad = (-size) % n if size else n  # an empty array still gives each device one (zero) element
        arrs = [np.concatenate([a.reshape(-1), np.zeros(pad, a.dtype)]) for a in arrs]
        ax = 0
    else:
        ax = _axis(arrs[0], axis, "all_reduce")
    topology, grid = _topo(topology, Collective.ALL_REDUCE, mesh, n, wrap)
    # one run: ReduceScatter's steps, then AllGather's
    run_ = _Run(Collective.ALL_REDUCE, n, _link(link, fn="all_reduce"), topology)
    out = _gather(_scatter(arrs, ax, topology, grid, run_), ax, topology, grid, run_)
    if pad or arrs[0].shape != shape:
        size = math.prod(shape)
        out = [o[:size].reshape(shape) for o in out]
    return run_.result(out, pad * arrs[0].itemsize)


def all_to_all(shards, split_axis: int = 0, concat_axis: int = 0, link="H100 SXM", topology: Topology | str = "ring",
               mesh=None) -> Result:
    """Device ``i`` splits its array into ``n`` blocks along ``split_axis`` and sends block ``j`` to device
    ``j``; device ``j`` ends with the blocks from devices 0..n−1 joined along ``concat_axis``."""
    arrs = _check_shards(shards, op="all_to_all")
    _same_shape(arrs, "all_to_all")
    sa = _axis(arrs[0], split_axis, "all_to_all")
    ca = _axis(arrs[0], concat_axis, "all_to_all")
    n = len(arrs)
    if arrs[0].shape[sa] % n:
        raise CollectiveError(f"all_to_all: split axis {sa} has {arrs[0].shape[sa]} entries, which {n} devices "
                              f"cannot share equally ({arrs[0].shape[sa]} is not a multiple of {n})")
    topology, _ = _topo(topology, Collective.ALL_TO_ALL, mesh, n)
    run = _Run(Collective.ALL_TO_ALL, n, _link(link), topology)
    blocks = np.stack([_steps._chunked(a, n, sa) for a in arrs])  # blocks[i, j]: device i's block for j
    got = np.empty_like(blocks)  # got[j, i]: the block device j received from device i
    src = np.arange(n)
    got[src, src] = blocks[src, src]  # its own block stays
    bnb = blocks[0, 0].nbytes
    if topology == Topology.RING:
        # every block rides the ring towards its device: at step k each device forwards the n−k blocks
        # that left device i−k+1 and are still on their way; the one k hops from its source arrives
        for k in range(1, n):
            dst = (src + k) % n
            got[dst, src] = blocks[src, dst]
            run.step([(i, (i + 1) % n, (n - k) * bnb, f"{n - k} blocks", 0) for i in range(n)])
    elif n > 1:  # the switch: every block goes straight to its device, all at once
        got = blocks.swapaxes(0, 1)
        run.step([(i, (i + 1) % n, (n - 1) * bnb, "blocks to all", 0) for i in range(n)])
    return run.result([_steps._unchunked(g, ca) for g in got])


def run(op: Collective | str, arrays, link="H100 SXM", topology: Topology | str = "ring", **kw) -> Result:
    """Run collective ``op`` (a :class:`Collective` or its string, one of :data:`OPS`) step by step."""
    import inspect

    fns = {Collective.ALL_GATHER: all_gather, Collective.REDUCE_SCATTER: reduce_scatter,
           Collective.ALL_REDUCE: all_reduce, Collective.ALL_TO_ALL: all_to_all}
    op = _op(op)
    known = [p for p in inspect.signature(fns[op]).parameters if p not in ("arrays", "shards", "link", "topology")]
    bad = sorted(set(kw) - set(known))
    if bad:
        raise CollectiveError(f"run: {op.value} takes no argument {', '.join(map(repr, bad))}; its keyword "
                              f"arguments are {', '.join(known)}")
    return fns[op](arrays, link=link, topology=topology, **kw)


def ring_schedule(op: Collective | str, n: int) -> list[list[tuple[int, int, int]]]:
    """The ring's sends, step by step: ``(src, dst, chunk)`` per device (for drawing).

    ReduceScatter step ``s`` sends partial chunk ``(i−s−1) mod n``; AllGather step ``s`` sends finished
    chunk ``(i−s) mod n`` (AllGather after ReduceScatter starts from chunk ``i+1``, the one device ``i``
    finished). AllReduce is ReduceScatter's ``n−1`` steps then AllGather's."""
    n, op = _count(n), _op(op)
    rs = [[(i, (i + 1) % n, (i - s - 1) % n) for i in range(n)] for s in range(n - 1)]
    ag = [[(i, (i + 1) % n, (i - s) % n) for i in range(n)] for s in range(n - 1)]
    if op == "reduce_scatter":
        return rs
    if op == "all_gather":
        return ag
    if op == "all_reduce":
        return rs + ag
    raise CollectiveError(f"ring_schedule draws reduce_scatter, all_gather or all_reduce, got {op.value!r}")


__all__ = ["Collective", "Topology", "Strategy", "OPS", "TOPOLOGIES", "NAMES", "CollectiveError", "Result",
           "MatmulPlan", "time", "ring_time", "switch_time", "grid_time", "wraps", "hierarchical_time",
           "node_time", "parallelism", "all_gather", "reduce_scatter", "all_reduce", "all_to_all", "run",
           "ring_schedule", "shard", "matmul", "fsdp_timeline", "fsdp_memory", "fsdp_peak"]
