"""Collectives over many chips: values step by step on a ring, times in closed form, sharding rules.

    r = ls.collectives.all_reduce(shards, link="H100 SXM")    # shards: one NumPy array per device
    r.values          # the result on every device (a list, one array per device)
    r.trace           # one COPY event per send, on the sending device's LINK unit
    r.time            # seconds: the sum of the steps' times
    ls.collectives.time("all_reduce", nbytes, n=8, link="H100 SXM", topology="ring")   # closed form

labsim's model (a simplification, not how NCCL or a TPU's ICI schedules work):

* **Ring** (``topology="ring"``): device ``i`` sends only to ``i+1 mod n`` over one link of bandwidth
  ``bw`` (bytes/s, one direction) and latency ``α``. All devices send at once; a step lasts
  ``α + (largest message of the step) / bw``. With ``B`` the bytes of the full (unsharded) array:
  AllGather and ReduceScatter take ``n−1`` steps of ``B/n`` each: ``(n−1)·(α + B/(n·bw))``;
  AllReduce = ReduceScatter then AllGather: ``2(n−1)·(α + B/(n·bw))``; AllToAll (each device holds
  ``B``, a block of ``B/n`` for every device; blocks are passed along until they arrive): step ``k``
  carries ``(n−k)`` blocks, so ``(n−1)·α + B·(n−1)/(2·bw)``.
* **Bidirectional ring** (``"bidir_ring"``): half the data goes each way round, on the two links of each
  device at once: every bandwidth term halves, the step count is the same.
* **Torus** (``"torus"``, ``mesh=(n1, n2, ...)``): a bidirectional ring along each axis (wraparound
  links), the axes done one after the other (labsim's choice; How to Scale Your Model notes that
  a collective over several axes can use all of them at once {austin2025scaling}). Devices are
  numbered row-major over the mesh. ReduceScatter reduces along the first axis first (on all ``B``
  bytes, then on ``B/n1``, ...); AllGather mirrors it, the last axis first, so device ``d`` holds chunk
  ``d`` in both. Axis ``i`` costs a bidirectional ring of ``n_i`` on ``B/(n1·…·n_{i−1})`` bytes.
* **Switch** (``"switch"``, an NVLink switch): every device reaches every other directly, at its own link
  bandwidth ``bw`` in and out; one step moves ``(n−1)/n·B`` through each device's link:
  ``α + (n−1)·B/(n·bw)`` for AllGather, ReduceScatter and AllToAll, twice that for AllReduce.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..hardware import Link
from ..hardware import get as _get_chip
from .events import Event, EventKind, Trace, UnitId, UnitKind

OPS = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
TOPOLOGIES = ("ring", "bidir_ring", "torus", "switch")
NAMES = {"all_gather": "AllGather", "reduce_scatter": "ReduceScatter", "all_reduce": "AllReduce",
         "all_to_all": "AllToAll"}


class CollectiveError(ValueError):
    """Bad input to a collective: a count, a shape, a topology or a sharding that cannot work."""


def _link(link, which: str = "chip_link") -> Link:
    if isinstance(link, Link):
        return link
    if isinstance(link, str):
        chip = _get_chip(link)
        lk = getattr(chip, which, None)
        if lk is None:
            raise CollectiveError(f"chip {chip.name!r} has no {which} in labsim's presets")
        return lk
    raise CollectiveError(f"link must be a Link or a chip preset name, got {type(link).__name__} {link!r}")


def _count(n, name="n") -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise CollectiveError(f"{name} must be a whole number of devices >= 1, got {n!r}")
    return int(n)


# ------------------------------------------------------------------------------------------- closed forms
def ring_time(op: str, nbytes: float, n: int, bw: float, latency: float = 0.0, directions: int = 1) -> float:
    """Seconds for ``op`` on a ring of ``n`` devices (see the module docstring for the formulas)."""
    n = _count(n)
    if op not in OPS:
        raise CollectiveError(f"unknown collective {op!r}; expected one of {', '.join(OPS)}")
    if n == 1:
        return 0.0
    b = nbytes / directions
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) * (latency + b / (n * bw))
    if op == "all_reduce":
        return 2 * (n - 1) * (latency + b / (n * bw))
    return (n - 1) * latency + b * (n - 1) / (2 * bw)  # all_to_all


def time(op: str, nbytes: float, n: int | None = None, link="H100 SXM", topology: str = "ring",
         mesh: Sequence[int] | None = None, latency: float | None = None) -> float:
    """Closed-form seconds for collective ``op`` on ``nbytes`` (the full, unsharded array's bytes).

    ``link`` is a :class:`~labsim.hardware.Link` or a chip preset name (its ``chip_link``: NVLink for
    the GPUs, one ICI link for the TPUs). ``topology`` is one of ``ring``, ``bidir_ring``, ``torus``
    (give ``mesh``) or ``switch``. ``latency`` overrides the link's per-message latency."""
    if op not in OPS:
        raise CollectiveError(f"unknown collective {op!r}; expected one of {', '.join(OPS)}")
    if topology not in TOPOLOGIES:
        raise CollectiveError(f"unknown topology {topology!r}; expected one of {', '.join(TOPOLOGIES)}")
    if not nbytes >= 0:
        raise CollectiveError(f"nbytes must be >= 0, got {nbytes!r}")
    lk = _link(link)
    a = lk.latency if latency is None else latency
    if topology == "torus":
        if mesh is None:
            raise CollectiveError("a torus needs mesh=(n1, n2, ...), the devices along each axis")
        dims = [_count(d, "a mesh axis") for d in mesh]
        if n is not None and _count(n) != math.prod(dims):
            raise CollectiveError(f"n = {n} but the mesh {tuple(dims)} holds {math.prod(dims)} devices")
        if op == "all_reduce":
            return time("reduce_scatter", nbytes, None, lk, "torus", dims, a) + \
                time("all_gather", nbytes, None, lk, "torus", dims, a)
        if op == "all_to_all":  # a block for every device: per-axis AllToAll on the whole local array
            return sum(ring_time(op, nbytes, d, lk.bandwidth, a, 2) for d in dims)
        # ReduceScatter from axis 0: axis i works on B / (n1·…·n_{i-1}) bytes. AllGather from the last
        # axis mirrors it, so each axis moves the same bytes in both.
        return sum(ring_time("reduce_scatter", nbytes / math.prod(dims[:i]), d, lk.bandwidth, a, 2)
                   for i, d in enumerate(dims))
    if n is None:
        n = math.prod(mesh) if mesh is not None else None
    if n is None:
        raise CollectiveError("give n, the number of devices")
    n = _count(n)
    if topology == "ring":
        return ring_time(op, nbytes, n, lk.bandwidth, a, 1)
    if topology == "bidir_ring":
        return ring_time(op, nbytes, n, lk.bandwidth, a, 2)
    if n == 1:
        return 0.0
    one = a + (n - 1) * nbytes / (n * lk.bandwidth)  # switch: one direct step
    return 2 * one if op == "all_reduce" else one


# ------------------------------------------------------------------------------------- step by step
@dataclass(frozen=True)
class Result:
    """What a collective leaves on each device, the sends it made, and how long it took."""

    op: str
    values: list
    trace: Trace
    steps: int
    time: float
    topology: str


class _Run:
    def __init__(self, op, n, lk, topology):
        self.op, self.n, self.lk, self.topology = op, n, lk, topology
        self.events: list[Event] = []
        self.now, self.steps = 0.0, 0

    def step(self, sends):
        """``sends``: (src, dst, nbytes, what, link index) all at once; the step lasts α + max bytes / bw."""
        if not sends:
            return
        d = self.lk.latency + max(s[2] for s in sends) / self.lk.bandwidth
        for src, dst, nb, what, idx in sends:
            self.events.append(Event(UnitId(src, UnitKind.LINK, idx), what, self.now, self.now + d,
                                     EventKind.COPY, f"device {src} → device {dst}", nbytes=int(nb)))
        self.now += d
        self.steps += 1

    def result(self, values):
        units = [UnitId(i, UnitKind.LINK, 0) for i in range(self.n)]
        used = {e.unit for e in self.events}
        units += sorted((u for u in used if u not in units), key=lambda u: (u.chip, u.index))
        return Result(self.op, values, Trace(self.events, units=tuple(units) if self.events else ()),
                      self.steps, self.now, self.topology)


def _check_shards(shards, what="shards"):
    if not isinstance(shards, (list, tuple)) or not shards:
        raise CollectiveError(f"{what} must be a non-empty list with one NumPy array per device")
    arrs = [np.asarray(s) for s in shards]
    return arrs


def _same_shape(arrs, op):
    s0 = arrs[0].shape
    for i, a in enumerate(arrs):
        if a.shape != s0:
            raise CollectiveError(f"{op}: device {i} holds shape {a.shape}, device 0 holds {s0}; "
                                  "every device must hold the same shape")


def _axis(a, axis, op):
    if a.ndim == 0:
        raise CollectiveError(f"{op}: the arrays are scalars; there is no axis to split or join")
    if not -a.ndim <= axis < a.ndim:
        raise CollectiveError(f"{op}: axis {axis} is out of range for arrays of {a.ndim} dims")
    return axis % a.ndim


def _topo(topology, op, mesh, n):
    """The topology checked, and the torus's axes (``()`` for the other topologies)."""
    allowed = ("ring", "switch") if op == "all_to_all" else TOPOLOGIES
    if topology not in allowed:
        raise CollectiveError(f"the step-by-step {op} supports topology {', '.join(map(repr, allowed))}, got "
                              f"{topology!r}" + (" (use collectives.time for its closed form)"
                                                 if topology in TOPOLOGIES else ""))
    if topology != "torus":
        return ()
    if mesh is None:
        raise CollectiveError("a torus needs mesh=(n1, n2, ...), the devices along each axis")
    dims = tuple(_count(d, "a mesh axis") for d in mesh)
    if math.prod(dims) != n:
        raise CollectiveError(f"the mesh {dims} holds {math.prod(dims)} devices but {n} arrays were given")
    return dims


# A ring runs over ``members`` (device ids in ring order, ``reverse`` for the other way round); each
# function returns what every member ends with and the sends of each step: (src, dst, nbytes, what).
def _ring_ag(pieces: dict, members: list, reverse: bool):
    """AllGather: member k starts with ``pieces[members[k]]``; every member ends with all pieces."""
    order = members[::-1] if reverse else members
    m = len(order)
    have = {d: {d: pieces[d]} for d in members}
    steps = []
    for s in range(m - 1):
        sends = []
        for p in range(m):
            src, dst, c = order[p], order[(p + 1) % m], order[(p - s) % m]
            sends.append((src, dst, have[src][c].nbytes, f"chunk of device {c}"))
        moved = [(order[(p + 1) % m], order[(p - s) % m], have[order[p]][order[(p - s) % m]]) for p in range(m)]
        for dst, c, v in moved:
            have[dst][c] = v
        steps.append(sends)
    return have, steps


def _ring_rs(chunks: dict, members: list, reverse: bool):
    """ReduceScatter: ``chunks[d][k]`` is device d's chunk destined for ``members[k]``; member d ends with
    the sum over members of their chunk for d."""
    order = members[::-1] if reverse else members
    m = len(order)
    idx = {d: k for k, d in enumerate(members)}
    acc = {d: {order[c]: chunks[d][idx[order[c]]] for c in range(m)} for d in members}
    steps = []
    for s in range(m - 1):
        sends, moved = [], []
        for p in range(m):
            src, dst, c = order[p], order[(p + 1) % m], order[(p - s - 1) % m]
            sends.append((src, dst, acc[src][c].nbytes, f"partial sum for device {c}"))
            moved.append((dst, c, acc[src][c]))
        for dst, c, v in moved:
            acc[dst][c] = acc[dst][c] + v
        steps.append(sends)
    return {d: acc[d][d] for d in members}, steps


def _halves(a, ax):
    return np.array_split(a, 2, axis=ax)


def _dir_ag(values: dict, members: list, ax: int, bidir: bool, base: int):
    """AllGather within ``members``; returns each member's concatenation and the steps (link ``base``/``base+1``)."""
    if not bidir:
        have, steps = _ring_ag(values, members, False)
        steps = [[(a, b, nb, w, base) for a, b, nb, w in st] for st in steps]
        return {d: np.concatenate([have[d][k] for k in members], axis=ax) for d in members}, steps
    h = {d: _halves(values[d], ax) for d in members}
    have0, s0 = _ring_ag({d: h[d][0] for d in members}, members, False)
    have1, s1 = _ring_ag({d: h[d][1] for d in members}, members, True)
    steps = [[(a, b, nb, w, base) for a, b, nb, w in x] + [(a, b, nb, w, base + 1) for a, b, nb, w in y]
             for x, y in zip(s0, s1)]
    return {d: np.concatenate([p for k in members for p in (have0[d][k], have1[d][k])], axis=ax)
            for d in members}, steps


def _dir_rs(values: dict, members: list, ax: int, bidir: bool, base: int):
    """ReduceScatter within ``members``: member k ends with chunk k of the group's sum (along ``ax``)."""
    m = len(members)
    split = {d: np.split(values[d], m, axis=ax) for d in members}
    if not bidir:
        out, steps = _ring_rs(split, members, False)
        return out, [[(a, b, nb, w, base) for a, b, nb, w in st] for st in steps]
    h = {d: [_halves(c, ax) for c in split[d]] for d in members}
    out0, s0 = _ring_rs({d: [c[0] for c in h[d]] for d in members}, members, False)
    out1, s1 = _ring_rs({d: [c[1] for c in h[d]] for d in members}, members, True)
    steps = [[(a, b, nb, w, base) for a, b, nb, w in x] + [(a, b, nb, w, base + 1) for a, b, nb, w in y]
             for x, y in zip(s0, s1)]
    return {d: np.concatenate([out0[d], out1[d]], axis=ax) for d in members}, steps


def _groups(dims, axis):
    """Devices (row-major ids) that differ only along mesh ``axis``, each list in coordinate order."""
    n = math.prod(dims)
    out = {}
    for d in range(n):
        coords = list(np.unravel_index(d, dims))
        key = tuple(coords[:axis] + coords[axis + 1:])
        out.setdefault(key, []).append(d)
    return list(out.values())


def _phases(op: str, arrs: list, ax: int, topology: str, dims: tuple, run: "_Run") -> list:
    """Run AllGather or ReduceScatter on ``arrs`` (device order): one phase per torus axis (ReduceScatter
    from axis 0, AllGather from the last axis, so that device d ends with chunk d), else one ring."""
    n = len(arrs)
    values = {d: arrs[d] for d in range(n)}
    if topology == "torus":
        axes = list(range(len(dims))) if op == "reduce_scatter" else list(range(len(dims)))[::-1]
        plan = [(a, _groups(dims, a)) for a in axes]
    else:
        plan = [(0, [list(range(n))])]
    bidir = topology in ("bidir_ring", "torus")
    fn = _dir_rs if op == "reduce_scatter" else _dir_ag
    for a, groups in plan:
        new, per_group = {}, []
        for members in groups:
            out, steps = fn(values, members, ax, bidir, 2 * a)
            new.update(out)
            per_group.append(steps)
        for k in range(max((len(st) for st in per_group), default=0)):
            run.step([send for st in per_group for send in st[k]])
        values = new
    return [values[d] for d in range(n)]


def all_gather(shards, axis: int = 0, link="H100 SXM", topology: str = "ring", mesh=None) -> Result:
    """Every device ends with the concatenation of all shards along ``axis`` (device 0's first).

    ``topology``: ``ring``, ``bidir_ring`` (half of each shard each way round), ``torus`` (give ``mesh``;
    devices numbered row-major; one bidirectional ring per axis, the last axis first) or ``switch``."""
    arrs = _check_shards(shards)
    _same_shape(arrs, "all_gather")
    ax = _axis(arrs[0], axis, "all_gather")
    n = len(arrs)
    dims = _topo(topology, "all_gather", mesh, n)
    run = _Run("all_gather", n, _link(link), topology)
    if topology == "switch":
        if n > 1:  # every device sends its shard to every other at once, through its one link
            run.step([(i, (i + 1) % n, arrs[i].nbytes * (n - 1), f"chunk {i} to all", 0) for i in range(n)])
        return run.result([np.concatenate(arrs, axis=ax) for _ in range(n)])
    return run.result(_phases("all_gather", arrs, ax, topology, dims, run))


def reduce_scatter(arrays, axis: int = 0, link="H100 SXM", topology: str = "ring", mesh=None) -> Result:
    """Device ``i`` ends with chunk ``i`` (along ``axis``) of the sum of every device's array."""
    arrs = _check_shards(arrays, "arrays")
    _same_shape(arrs, "reduce_scatter")
    ax = _axis(arrs[0], axis, "reduce_scatter")
    n = len(arrs)
    if arrs[0].shape[ax] % n:
        raise CollectiveError(f"reduce_scatter: axis {ax} has {arrs[0].shape[ax]} entries, which {n} devices "
                              f"cannot share equally ({arrs[0].shape[ax]} is not a multiple of {n})")
    dims = _topo(topology, "reduce_scatter", mesh, n)
    run = _Run("reduce_scatter", n, _link(link), topology)
    if topology == "switch":
        acc = [np.split(a, n, axis=ax) for a in arrs]
        if n > 1:
            run.step([(i, (i + 1) % n, acc[i][0].nbytes * (n - 1), "partial sums to owners", 0) for i in range(n)])
        return run.result([sum(acc[k][i] for k in range(n)) for i in range(n)])
    return run.result(_phases("reduce_scatter", arrs, ax, topology, dims, run))


def all_reduce(arrays, link="H100 SXM", topology: str = "ring", axis: int = 0, mesh=None) -> Result:
    """Every device ends with the sum of all arrays: ReduceScatter, then AllGather (the ring algorithm)."""
    rs = reduce_scatter(arrays, axis=axis, link=link, topology=topology, mesh=mesh)
    ag = all_gather(rs.values, axis=axis, link=link, topology=topology, mesh=mesh)
    shift = rs.time
    events = list(rs.trace.events) + [Event(e.unit, e.name, e.start + shift, e.end + shift, e.kind, e.detail,
                                            nbytes=e.nbytes) for e in ag.trace.events]
    units = tuple(dict.fromkeys(rs.trace.units + ag.trace.units))
    return Result("all_reduce", ag.values, Trace(events, units=units) if events else Trace(()), rs.steps + ag.steps,
                  rs.time + ag.time, topology)


def all_to_all(shards, split_axis: int = 0, concat_axis: int = 0, link="H100 SXM", topology: str = "ring",
               mesh=None) -> Result:
    """Device ``i`` splits its array into ``n`` blocks along ``split_axis`` and sends block ``j`` to device
    ``j``; device ``j`` ends with the blocks from devices 0..n−1 joined along ``concat_axis``."""
    arrs = _check_shards(shards)
    _same_shape(arrs, "all_to_all")
    sa = _axis(arrs[0], split_axis, "all_to_all")
    ca = _axis(arrs[0], concat_axis, "all_to_all")
    n = len(arrs)
    if arrs[0].shape[sa] % n:
        raise CollectiveError(f"all_to_all: split axis {sa} has {arrs[0].shape[sa]} entries, which {n} devices "
                              f"cannot share equally ({arrs[0].shape[sa]} is not a multiple of {n})")
    _topo(topology, "all_to_all", mesh, n)
    run = _Run("all_to_all", n, _link(link), topology)
    blocks = [np.split(a, n, axis=sa) for a in arrs]
    got = [{i: blocks[i][i]} for i in range(n)]
    if topology == "ring":
        flight = [[(j, i, blocks[i][j]) for j in range(n) if j != i] for i in range(n)]
        while any(flight):
            sends, new = [], [[] for _ in range(n)]
            for i in range(n):
                if flight[i]:
                    sends.append((i, (i + 1) % n, sum(b.nbytes for _, _, b in flight[i]),
                                  f"{len(flight[i])} blocks", 0))
                    for dst, src, b in flight[i]:
                        if dst == (i + 1) % n:
                            got[dst][src] = b
                        else:
                            new[(i + 1) % n].append((dst, src, b))
            flight = new
            run.step(sends)
    else:
        if n > 1:
            run.step([(i, (i + 1) % n, sum(blocks[i][j].nbytes for j in range(n) if j != i), "blocks to all", 0)
                      for i in range(n)])
        got = [{i: blocks[i][j] for i in range(n)} for j in range(n)]
    return run.result([np.concatenate([g[i] for i in range(n)], axis=ca) for g in got])


def run(op: str, arrays, link="H100 SXM", topology: str = "ring", **kw) -> Result:
    """Run collective ``op`` (one of :data:`OPS`) step by step."""
    fns = {"all_gather": all_gather, "reduce_scatter": reduce_scatter, "all_reduce": all_reduce,
           "all_to_all": all_to_all}
    if op not in fns:
        raise CollectiveError(f"unknown collective {op!r}; expected one of {', '.join(OPS)}")
    return fns[op](arrays, link=link, topology=topology, **kw)


def ring_schedule(op: str, n: int) -> list[list[tuple[int, int, int]]]:
    """The ring's sends, step by step: ``(src, dst, chunk)`` per device (for drawing).

    ReduceScatter step ``s`` sends partial chunk ``(i−s−1) mod n``; AllGather step ``s`` sends finished
    chunk ``(i−s) mod n`` (AllGather after ReduceScatter starts from chunk ``i+1``, the one device ``i``
    finished). AllReduce is ReduceScatter's ``n−1`` steps then AllGather's."""
    n = _count(n)
    rs = [[(i, (i + 1) % n, (i - s - 1) % n) for i in range(n)] for s in range(n - 1)]
    ag = [[(i, (i + 1) % n, (i - s) % n) for i in range(n)] for s in range(n - 1)]
    if op == "reduce_scatter":
        return rs
    if op == "all_gather":
        return ag
    if op == "all_reduce":
        return rs + ag
    raise CollectiveError(f"ring_schedule draws reduce_scatter, all_gather or all_reduce, got {op!r}")


# -------------------------------------------------------------------------------------------- sharding
def shard(shape: Sequence[int], mesh: dict, spec: Sequence[str | None]) -> tuple[int, ...]:
    """The local (per-device) shape of an array of ``shape`` sharded by ``spec`` over ``mesh``.

    ``mesh`` maps axis names to device counts (``{"x": 4, "y": 2}``); ``spec[d]`` names the mesh axis
    that splits dimension ``d``, or None (replicated along it). ``A[I_x, J]`` is ``spec=("x", None)``."""
    shape, spec = tuple(shape), tuple(spec)
    if len(spec) != len(shape):
        raise CollectiveError(f"spec {spec} has {len(spec)} entries for an array of {len(shape)} dims {shape}")
    used = [s for s in spec if s is not None]
    if len(set(used)) != len(used):
        raise CollectiveError(f"spec {spec} uses a mesh axis twice; each mesh axis may split one dimension")
    out = []
    for d, (size, ax) in enumerate(zip(shape, spec)):
        if ax is None:
            out.append(size)
            continue
        if ax not in mesh:
            raise CollectiveError(f"spec {spec} names mesh axis {ax!r}, which the mesh {dict(mesh)} lacks")
        k = _count(mesh[ax], f"mesh axis {ax!r}")
        if size % k:
            raise CollectiveError(f"dimension {d} has {size} entries, which mesh axis {ax!r} ({k} devices) "
                                  f"cannot split equally ({size} is not a multiple of {k})")
        out.append(size // k)
    return tuple(out)


@dataclass(frozen=True)
class MatmulPlan:
    """What a sharded ``C[I, K] = A[I, J] @ B[J, K]`` needs: the collective, on which mesh axis, what it
    moves (full bytes ``nbytes`` of the array the collective acts on), and the result's spec."""

    collective: str | None  # None: no communication
    axis: str | None
    operand: str  # "A", "B", "C" (the result) or ""
    nbytes: int
    out_spec: tuple
    rule: str

    def time(self, mesh: dict, link="H100 SXM", topology: str = "ring") -> float:
        if self.collective is None:
            return 0.0
        return time(self.collective, self.nbytes, mesh[self.axis], link, topology)


def matmul(a_shape, a_spec, b_shape, b_spec, mesh: dict, itemsize: int = 2, scatter: bool = False) -> MatmulPlan:
    """Which collective a sharded matmul needs (the rules of How to Scale Your Model, "Sharded Matrices").

    1. No contracting dimension sharded: each device multiplies its shards; no communication.
    2. Both operands' contracting dimension ``J`` sharded on the same axis: each device holds a partial sum
       of all of ``C``: AllReduce it (or ReduceScatter with ``scatter=True``, leaving ``C`` sharded).
    3. One operand's ``J`` sharded: AllGather that operand along ``J`` first, then rule 1.
    4. ``I`` and ``K`` sharded on the same axis: not a valid output sharding: AllGather ``B`` along ``K``.
    """
    (i, j), (j2, k) = tuple(a_shape), tuple(b_shape)
    if j != j2:
        raise CollectiveError(f"matmul: A is {i}×{j} and B is {j2}×{k}; the contracting sizes {j} and {j2} differ")
    shard(a_shape, mesh, a_spec), shard(b_shape, mesh, b_spec)
    ai, aj = a_spec
    bj, bk = b_spec
    if aj is not None and aj == bj:
        if scatter:
            return MatmulPlan("reduce_scatter", aj, "C", i * k * itemsize, (ai, aj if bk is None else bk),
                              "contracting dim sharded on both: partial sums, ReduceScatter")
        return MatmulPlan("all_reduce", aj, "C", i * k * itemsize, (ai, bk),
                          "contracting dim sharded on both: partial sums, AllReduce")
    if aj is not None and bj is not None and aj != bj:
        raise CollectiveError(f"matmul: A's J is sharded on {aj!r} but B's on {bj!r}; gather one first")
    if aj is not None:
        return MatmulPlan("all_gather", aj, "A", i * j * itemsize, (ai, bk),
                          "A's contracting dim sharded: AllGather A along J")
    if bj is not None:
        return MatmulPlan("all_gather", bj, "B", j * k * itemsize, (ai, bk),
                          "B's contracting dim sharded: AllGather B along J")
    if ai is not None and ai == bk:
        return MatmulPlan("all_gather", bk, "B", j * k * itemsize, (ai, None),
                          "I and K on the same axis: AllGather B along K")
    return MatmulPlan(None, None, "", 0, (ai, bk), "no contracting dim sharded: no communication")


# ------------------------------------------------------------------------------------------------ FSDP
def fsdp_memory(params: int, layers: int, devices: int, bytes_per_param: float = 2,
                activations: float = 0, temporaries: float = 0) -> list[float]:
    """Bytes on one device after each layer of a forward pass under FSDP (labsim's model).

    Every device keeps ``params/devices`` of the parameters for good (its shard); before layer ``l``
    it AllGathers that layer's ``params/layers`` in full and drops them after. ``activations`` (bytes
    for the whole pass) are kept layer by layer for the backward pass; ``temporaries`` is working space.
    Entry ``l``: ``shards + one full layer + (l+1)/layers · activations + temporaries``."""
    params, layers, devices = _count(params, "params"), _count(layers, "layers"), _count(devices, "devices")
    for v, nm in ((bytes_per_param, "bytes_per_param"), (activations, "activations"), (temporaries, "temporaries")):
        if not v >= 0:
            raise CollectiveError(f"{nm} must be >= 0, got {v!r}")
    shards = params * bytes_per_param / devices
    layer = params * bytes_per_param / layers
    return [shards + layer + (l + 1) / layers * activations + temporaries for l in range(layers)]


def fsdp_peak(params: int, layers: int, devices: int, bytes_per_param: float = 2,
              activations: float = 0, temporaries: float = 0) -> float:
    """Peak bytes per device under FSDP: persistent shards + one full layer + activations + temporaries."""
    return max(fsdp_memory(params, layers, devices, bytes_per_param, activations, temporaries))


__all__ = ["OPS", "TOPOLOGIES", "NAMES", "CollectiveError", "Result", "MatmulPlan", "time", "ring_time",
           "all_gather", "reduce_scatter", "all_reduce", "all_to_all", "run", "ring_schedule", "shard",
           "matmul", "fsdp_memory", "fsdp_peak"]
