"""Closed-form times of collectives: rings, meshes and tori, switches, and a switch node joined by a network.

``ls.collectives.time`` is :func:`time` (``collectives.py`` re-exports everything here). labsim's model
(a simplification, not how NCCL or a TPU's ICI schedules work), with ``B`` the bytes of the full
(unsharded) array, ``bw`` a link's bandwidth in one direction and ``α`` its latency per step:

* **Ring** (``"ring"``): device ``i`` sends only to ``i+1 mod n``; a step lasts ``α + (largest message
  of the step) / bw``. AllGather and ReduceScatter take ``n−1`` steps of ``B/n``:
  ``(n−1)·(α + B/(n·bw))``; AllReduce is ReduceScatter then AllGather, twice that; AllToAll (each
  device holds ``B``, a block of ``B/n`` for every device, passed along until it arrives): step ``k``
  carries ``n−k`` blocks, so ``(n−1)·α + B·(n−1)/(2·bw)``.
* **Bidirectional ring** (``"bidir_ring"``): half the data goes each way round, on a device's two ring
  links at once: every bandwidth term halves, the step count stays.
* **Line** (an axis without wraparound): both neighbours, both directions, but the two end devices have
  one link each. An end device must receive the other ``n−1`` shards through that one link, so a line
  costs what a one-way ring costs (labsim's line algorithms reach that bound; ``collectives`` runs them).
* **Mesh and torus** (``"mesh"``, ``"torus"``, ``mesh=(n1, n2, ...)``): one phase per axis, the axes
  one after the other (labsim's choice; How to Scale Your Model notes that a collective over several
  axes can use them all at once {austin2025scaling}). ReduceScatter runs axis 0 first on all ``B``
  bytes, then axis 1 on ``B/n1``, ...; AllGather mirrors it, the last axis first. An axis with
  wraparound links (``wrap``) is a bidirectional ring, one without is a line. ``"torus"`` wraps every
  axis; ``"mesh"`` wraps the axes that ``wrap`` names (none by default). A TPU v5e slice has wraparound
  only on an axis of 16 chips (the full pod axis): a 4×4 slice is a mesh {austin2025scaling}.
* **Switch** (``"switch"``, an NVLink switch): every device reaches every other directly at its link
  bandwidth, in and out at once; one step moves ``(n−1)/n·B`` through each link: ``α + (n−1)·B/(n·bw)``
  for AllGather, ReduceScatter and AllToAll, twice that for AllReduce. ``nvls=True`` lets the switch
  add the arrays itself (NVLink SHARP, third-generation NVSwitch, Hopper and later {nccl-issue-1031}):
  each GPU sends its ``B`` into the switch and receives the sum, so AllReduce costs ``α + B/bw``.
* **Hierarchy** (:func:`hierarchical_time`): nodes of ``g`` GPUs on one switch, joined by a network
  whose link per GPU has bandwidth ``net``. AllReduce = ReduceScatter in each node (switch, ``B``),
  AllReduce of the ``B/g`` piece among the GPUs of the same rank in every node (``g`` rings over the
  network at once, one NIC each), AllGather in each node.
"""
from __future__ import annotations

from ..support.errors import ArgumentError, LabsimError
from ..support.errors import number as _number

import math
from typing import Sequence

import numpy as np

from ..hardware import Link
from ..hardware import get as _get_chip
from ..hardware.systems import NODES
from ..support.choice import Choice


class Collective(Choice):
    """The four collectives (``op=``); each accepts its string too: ``"all_reduce"`` is ``ALL_REDUCE``."""

    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_REDUCE = "all_reduce"
    ALL_TO_ALL = "all_to_all"

    @property
    def title(self) -> str:
        """The name as the text writes it: ``"AllReduce"``."""
        return NAMES[self]


class Topology(Choice):
    """How the devices are joined (``topology=``); each accepts its string too: ``"ring"`` is ``RING``.
    The module docstring gives each one's cost model."""

    RING = "ring"
    BIDIR_RING = "bidir_ring"
    TORUS = "torus"
    MESH = "mesh"
    SWITCH = "switch"


OPS = Collective.values()
TOPOLOGIES = Topology.values()
NAMES = {"all_gather": "AllGather", "reduce_scatter": "ReduceScatter", "all_reduce": "AllReduce",
         "all_to_all": "AllToAll"}


class CollectiveError(LabsimError, ValueError):
    """Bad input to a collective: a count, a shape, a topology or a sharding that cannot work."""


def _topology(topology) -> Topology:
    """``topology=`` as a :class:`Topology`, or a CollectiveError listing the accepted values."""
    return Topology.of(topology, "topology", CollectiveError)


def _link(link, which: str = "chip_link", fn: str = "") -> Link:
    if isinstance(link, Link):
        return link
    if isinstance(link, str):
        chip = _get_chip(link)
        lk = getattr(chip, which, None)
        if lk is None:
            raise CollectiveError(f"chip {chip.name!r} has no {which} in labsim's presets")
        return lk
    raise CollectiveError(f"{fn + ': ' if fn else ''}link must be a Link or a chip preset name, got "
                          f"{type(link).__name__} {link!r}")


def _count(n, name="n", fn: str = "", unit: str = "devices") -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        what = f"a whole number of {unit} >= 1" if unit else "a whole number >= 1"
        raise CollectiveError(f"{fn + ': ' if fn else ''}{name} must be {what}, got {n!r}")
    return int(n)


def _real(fn: str, name: str, v, *, positive: bool = False) -> float:
    """A finite number >= 0 (``positive``: > 0) as a float, or a labsim error naming ``fn`` and ``name``
    (a CollectiveError for a value out of range, an ArgumentTypeError for a string or None)."""
    try:
        return _number(fn, name, v, minimum=0.0, strict_min=positive)
    except ArgumentError:
        raise CollectiveError(f"{fn}: {name} must be {'> 0' if positive else '>= 0'} and finite, got {v!r}") from None


def _latency(fn: str, latency):
    return None if latency is None else _real(fn, "latency", latency)


def _user_comm(fn: str, comm):
    """A reader's ``comm(op, nbytes, n) -> seconds``, wrapped so that a result that is not a finite number of
    seconds >= 0 is a CollectiveError naming ``fn`` (the parallelism models take one instead of a link)."""
    if not callable(comm):
        raise CollectiveError(f"{fn}: comm must be a function comm(op, nbytes, n) -> seconds, got {comm!r}")

    def checked(op, nbytes, n):
        t = comm(op, nbytes, n)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not (math.isfinite(t) and t >= 0):
            raise CollectiveError(f"{fn}: comm({op!r}, {nbytes!r}, {n}) returned {t!r}; it must be a finite "
                                  f"number of seconds >= 0")
        return t
    return checked


def _dims(fn: str, mesh) -> list[int]:
    if isinstance(mesh, (str, bytes)) or not hasattr(mesh, "__iter__"):
        raise CollectiveError(f"{fn}: mesh must be a tuple of device counts, one per axis, e.g. (4, 4); "
                              f"got {type(mesh).__name__} {mesh!r}")
    return [_count(d, "a mesh axis", fn) for d in mesh]


def _op(op) -> Collective:
    """``op=`` as a :class:`Collective`, or a CollectiveError listing the accepted values."""
    return Collective.of(op, "collective", CollectiveError)


def ring_time(op: Collective | str, nbytes: float, n: int, bw: float, latency: float = 0.0,
              directions: int = 1) -> float:
    """Seconds for ``op`` on a ring of ``n`` devices (``directions=2``: a bidirectional ring).

    A line of ``n`` devices (no wraparound) costs the same as the one-way ring (``directions=1``)."""
    n = _count(n, fn="ring_time")
    op = _op(op)
    nbytes, bw = _real("ring_time", "nbytes", nbytes), _real("ring_time", "bw", bw, positive=True)
    latency = _real("ring_time", "latency", latency)
    if directions not in (1, 2) or isinstance(directions, bool):
        raise CollectiveError(f"ring_time: directions must be 1 (a ring) or 2 (a bidirectional ring), got {directions!r}")
    if n == 1:
        return 0.0
    b = nbytes / directions
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) * (latency + b / (n * bw))
    if op == "all_reduce":
        return 2 * (n - 1) * (latency + b / (n * bw))
    return (n - 1) * latency + b * (n - 1) / (2 * bw)  # all_to_all


def switch_time(op: Collective | str, nbytes: float, n: int, bw: float, latency: float = 0.0,
                nvls: bool = False) -> float:
    """Seconds for ``op`` on ``n`` devices behind one switch; ``nvls``: the switch reduces (AllReduce only)."""
    n = _count(n, fn="switch_time")
    op = _op(op)
    nbytes, bw = _real("switch_time", "nbytes", nbytes), _real("switch_time", "bw", bw, positive=True)
    latency = _real("switch_time", "latency", latency)
    if n == 1:
        return 0.0
    if nvls and op == "all_reduce":
        return latency + nbytes / bw
    one = latency + (n - 1) * nbytes / (n * bw)
    return 2 * one if op == "all_reduce" else one


def wraps(mesh: Sequence[int], wrap) -> tuple[bool, ...]:
    """Per-axis wraparound: ``wrap`` is None (no axis wraps), True (all), or one bool per axis."""
    dims = tuple(_dims("wraps", mesh))
    if wrap is None or wrap is False:
        return (False,) * len(dims)
    if wrap is True:
        return (True,) * len(dims)
    if isinstance(wrap, (str, bytes)) or not hasattr(wrap, "__iter__"):
        raise CollectiveError(f"wrap must be None, True or one bool per mesh axis {dims}, got {wrap!r}")
    w = tuple(wrap)
    if len(w) != len(dims) or not all(isinstance(x, (bool, np.bool_)) for x in w):
        raise CollectiveError(f"wrap must be None, True or one bool per mesh axis {dims}, got {wrap!r}")
    return tuple(bool(x) for x in w)


def grid_time(op: Collective | str, nbytes: float, mesh: Sequence[int], bw: float, latency: float = 0.0,
              wrap=True) -> float:
    """Seconds for ``op`` on a mesh of ``mesh`` devices, axes one after the other; an axis with
    wraparound is a bidirectional ring, one without a line (a one-way ring's cost)."""
    dims = _dims("grid_time", mesh)
    if not dims:
        raise CollectiveError("grid_time: mesh must name at least one axis, e.g. mesh=(4, 4)")
    w = wraps(dims, wrap)
    op = _op(op)
    nbytes, bw = _real("grid_time", "nbytes", nbytes), _real("grid_time", "bw", bw, positive=True)
    latency = _real("grid_time", "latency", latency)
    if op == "all_reduce":
        return grid_time("reduce_scatter", nbytes, dims, bw, latency, w) + \
            grid_time("all_gather", nbytes, dims, bw, latency, w)
    if op == "all_to_all":  # a block for every device: per-axis AllToAll on the whole local array
        return sum(ring_time(op, nbytes, d, bw, latency, 2 if wr else 1) for d, wr in zip(dims, w))
    # ReduceScatter from axis 0: axis i works on B / (n1·…·n_{i-1}) bytes. AllGather from the last axis
    # mirrors it, so each axis moves the same bytes in both.
    return sum(ring_time("reduce_scatter", nbytes / math.prod(dims[:i]), d, bw, latency, 2 if wr else 1)
               for i, (d, wr) in enumerate(zip(dims, w)))


def time(op: Collective | str, nbytes: float, n: int | None = None, link="H100 SXM",
         topology: Topology | str = "ring",
         mesh: Sequence[int] | None = None, latency: float | None = None, wrap=None, nvls: bool = False) -> float:
    """Closed-form seconds for collective ``op`` on ``nbytes`` (the full, unsharded array's bytes).

    ``link`` is a :class:`~labsim.hardware.Link` or a chip preset name (its ``chip_link``: NVLink for
    the GPUs, one ICI link for the TPUs). ``topology`` is one of ``ring``, ``bidir_ring``, ``torus``
    (give ``mesh``; every axis wraps), ``mesh`` (give ``mesh``; ``wrap`` says which axes wrap, none by
    default) or ``switch`` (``nvls=True``: the switch reduces). ``latency`` overrides the link's."""
    op, topology = _op(op), _topology(topology)
    nbytes = _real("time", "nbytes", nbytes)
    if nvls and topology != "switch":
        raise CollectiveError(f"nvls=True needs topology='switch' (the switch does the sums), got {topology!r}")
    lk = _link(link, fn="time")
    a = lk.latency if latency is None else _real("time", "latency", latency)
    if topology in ("torus", "mesh"):
        if mesh is None:
            raise CollectiveError(f"a {topology} needs mesh=(n1, n2, ...), the devices along each axis")
        dims = _dims("time", mesh)
        if n is not None and _count(n) != math.prod(dims):
            raise CollectiveError(f"n = {n} but the mesh {tuple(dims)} holds {math.prod(dims)} devices")
        return grid_time(op, nbytes, dims, lk.bandwidth, a, True if topology == "torus" else wrap)
    if n is None:
        n = math.prod(mesh) if mesh is not None else None
    if n is None:
        raise CollectiveError("give n, the number of devices")
    n = _count(n)
    if topology == "ring":
        return ring_time(op, nbytes, n, lk.bandwidth, a, 1)
    if topology == "bidir_ring":
        return ring_time(op, nbytes, n, lk.bandwidth, a, 2)
    return switch_time(op, nbytes, n, lk.bandwidth, a, nvls)


def hierarchical_time(op: Collective | str, nbytes: float, n: int, node_link, network, per_node: int = 8,
                      latency: float | None = None, nvls: bool = False) -> float:
    """Closed-form seconds for ``op`` on ``n`` GPUs: nodes of ``per_node`` GPUs on one switch
    (``node_link``), the nodes joined by a network with one link per GPU (``network``).

    Up to ``per_node`` GPUs it is the switch alone (``nvls`` as in :func:`switch_time`). Beyond, with
    ``g = per_node`` and ``k = n/g`` nodes: AllReduce = switch ReduceScatter of ``B`` + ring AllReduce
    of ``B/g`` over ``k`` nodes on the network + switch AllGather of ``B``; ReduceScatter and AllGather
    are their halves; AllToAll sends ``(g−1)/n·B`` through the switch and ``(n−g)/n·B`` through the
    network at once: ``α + max`` of the two. ``latency`` overrides both links' latencies."""
    op = _op(op)
    n, g = _count(n, fn="hierarchical_time"), _count(per_node, "per_node", "hierarchical_time")
    nbytes = _real("hierarchical_time", "nbytes", nbytes)
    latency = _latency("hierarchical_time", latency)
    nv, net = _link(node_link, fn="hierarchical_time"), _link(network, fn="hierarchical_time")
    a_nv = nv.latency if latency is None else latency
    a_net = net.latency if latency is None else latency
    if n <= g:
        return switch_time(op, nbytes, n, nv.bandwidth, a_nv, nvls)
    if n % g:
        raise CollectiveError(f"n = {n} GPUs do not fill whole nodes of {g} (n must be a multiple of per_node)")
    k = n // g
    if op == "all_to_all":
        return max(a_nv, a_net) + max((g - 1) * nbytes / (n * nv.bandwidth), (n - g) * nbytes / (n * net.bandwidth))
    rs_in = switch_time("reduce_scatter", nbytes, g, nv.bandwidth, a_nv)
    across = ring_time(op, nbytes / g, k, net.bandwidth, a_net, 1)
    if op == "all_reduce":
        return 2 * rs_in + across  # the switch's AllGather costs what its ReduceScatter does
    return rs_in + across


def node_time(op: Collective | str, nbytes: float, n: int, node: str = "DGX H100", nvls: bool = False,
              latency: float | None = None) -> float:
    """:func:`hierarchical_time` for ``n`` GPUs in nodes of the preset ``node`` (``hardware.systems.NODES``):
    its GPUs' NVLink through the node's switch, its scale-out network between nodes."""
    if not isinstance(node, str) or node not in NODES:
        raise CollectiveError(f"unknown node {node!r}; labsim knows {', '.join(NODES)}")
    sysm = NODES[node]
    _count(n, fn="node_time"), _real("node_time", "nbytes", nbytes), _latency("node_time", latency)
    return hierarchical_time(op, nbytes, n, sysm.preset.chip_link, sysm.scale_out, sysm.size, latency, nvls)


__all__ = ["Collective", "Topology", "OPS", "TOPOLOGIES", "NAMES", "CollectiveError", "ring_time", "switch_time",
           "grid_time", "wraps", "time", "hierarchical_time", "node_time"]
