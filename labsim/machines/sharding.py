"""Sharding rules and FSDP's memory: the local shape of a sharded array, the collective a sharded matmul
needs (How to Scale Your Model, "Sharded Matrices" {austin2025scaling}), and FSDP's bytes per device
step by step. ``ls.collectives`` re-exports everything here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .collective_costs import Collective, CollectiveError, Topology, _count, _real, time


def _shape(fn: str, arg: str, shape, ndim: int | None = None) -> tuple[int, ...]:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise CollectiveError(f"{fn}: {arg} must be a tuple of sizes, e.g. (8, 8); got {type(shape).__name__} {shape!r}")
    shape = tuple(shape)
    for d, size in enumerate(shape):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise CollectiveError(f"{fn}: {arg}[{d}] must be a whole number >= 0, got {size!r}")
    if ndim is not None and len(shape) != ndim:
        raise CollectiveError(f"{fn}: {arg} must have {ndim} sizes (a matrix), got {shape}")
    return tuple(int(x) for x in shape)


def _spec(fn: str, arg: str, spec) -> tuple:
    if isinstance(spec, (str, bytes)) or not hasattr(spec, "__iter__"):
        raise CollectiveError(f"{fn}: {arg} must be a tuple with one mesh axis name or None per dimension, e.g. "
                              f"('x', None); got {type(spec).__name__} {spec!r}")
    spec = tuple(spec)
    for s in spec:
        if s is not None and not isinstance(s, str):
            raise CollectiveError(f"{fn}: {arg} {spec} holds {s!r}; each entry is a mesh axis name or None")
    return spec


def _mesh(fn: str, mesh) -> dict:
    if not hasattr(mesh, "keys") or not hasattr(mesh, "__getitem__"):
        raise CollectiveError(f"{fn}: mesh must be a dict of axis names to device counts, e.g. {{'x': 4}}; got "
                              f"{type(mesh).__name__} {mesh!r}")
    return {ax: _count(mesh[ax], f"mesh axis {ax!r}", fn) for ax in mesh.keys()}


def shard(shape: Sequence[int], mesh: dict, spec: Sequence[str | None], *, _fn: str = "shard") -> tuple[int, ...]:
    """The local (per-device) shape of an array of ``shape`` sharded by ``spec`` over ``mesh``.

    ``mesh`` maps axis names to device counts (``{"x": 4, "y": 2}``); ``spec[d]`` names the mesh axis
    that splits dimension ``d``, or None (replicated along it). ``A[I_x, J]`` is ``spec=("x", None)``."""
    shape, spec, mesh = _shape(_fn, "shape", shape), _spec(_fn, "spec", spec), _mesh(_fn, mesh)
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
        k = mesh[ax]
        if size % k:
            raise CollectiveError(f"dimension {d} has {size} entries, which mesh axis {ax!r} ({k} devices) "
                                  f"cannot split equally ({size} is not a multiple of {k})")
        out.append(size // k)
    return tuple(out)


@dataclass(frozen=True)
class MatmulPlan:
    """What a sharded ``C[I, K] = A[I, J] @ B[J, K]`` needs: the collective, on which mesh axis, what it
    moves (full bytes ``nbytes`` of the array the collective acts on), and the result's spec."""

    collective: Collective | None  # None: no communication
    axis: str | None
    operand: str  # "A", "B", "C" (the result) or ""
    nbytes: int
    out_spec: tuple
    rule: str

    def time(self, mesh: dict, link="H100 SXM", topology: Topology | str = "ring") -> float:
        if self.collective is None:
            return 0.0
        if not hasattr(mesh, "keys") or self.axis not in mesh:
            raise CollectiveError(f"MatmulPlan.time: the plan's collective runs on mesh axis {self.axis!r}, which the "
                                  f"mesh {mesh!r} lacks")
        return time(self.collective, self.nbytes, mesh[self.axis], link, topology)


def matmul(a_shape, a_spec, b_shape, b_spec, mesh: dict, itemsize: int = 2, scatter: bool = False) -> MatmulPlan:
    """Which collective a sharded matmul needs (the rules of How to Scale Your Model, "Sharded Matrices").

    1. No contracting dimension sharded: each device multiplies its shards; no communication.
    2. Both operands' contracting dimension ``J`` sharded on the same axis: each device holds a partial sum
       of all of ``C``: AllReduce it (or ReduceScatter with ``scatter=True``, leaving ``C`` sharded).
    3. One operand's ``J`` sharded: AllGather that operand along ``J`` first, then rule 1.
    4. ``I`` and ``K`` sharded on the same axis: not a valid output sharding: AllGather ``B`` along ``K``.
    """
    (i, j), (j2, k) = _shape("matmul", "a_shape", a_shape, 2), _shape("matmul", "b_shape", b_shape, 2)
    a_spec, b_spec = _spec("matmul", "a_spec", a_spec), _spec("matmul", "b_spec", b_spec)
    if isinstance(itemsize, bool) or not isinstance(itemsize, (int, np.integer)) or itemsize < 1:
        raise CollectiveError(f"matmul: itemsize must be a whole number of bytes >= 1, got {itemsize!r}")
    if j != j2:
        raise CollectiveError(f"matmul: A is {i}×{j} and B is {j2}×{k}; the contracting sizes {j} and {j2} differ")
    shard(a_shape, mesh, a_spec, _fn="matmul"), shard(b_shape, mesh, b_spec, _fn="matmul")
    ai, aj = a_spec
    bj, bk = b_spec
    if aj is not None and aj == bj:
        if scatter:
            return MatmulPlan(Collective.REDUCE_SCATTER, aj, "C", i * k * itemsize, (ai, aj if bk is None else bk),
                              "contracting dim sharded on both: partial sums, ReduceScatter")
        return MatmulPlan(Collective.ALL_REDUCE, aj, "C", i * k * itemsize, (ai, bk),
                          "contracting dim sharded on both: partial sums, AllReduce")
    if aj is not None and bj is not None and aj != bj:
        raise CollectiveError(f"matmul: A's J is sharded on {aj!r} but B's on {bj!r}; gather one first")
    if aj is not None:
        return MatmulPlan(Collective.ALL_GATHER, aj, "A", i * j * itemsize, (ai, bk),
                          "A's contracting dim sharded: AllGather A along J")
    if bj is not None:
        return MatmulPlan(Collective.ALL_GATHER, bj, "B", j * k * itemsize, (ai, bk),
                          "B's contracting dim sharded: AllGather B along J")
    if ai is not None and ai == bk:
        return MatmulPlan(Collective.ALL_GATHER, bk, "B", j * k * itemsize, (ai, None),
                          "I and K on the same axis: AllGather B along K")
    return MatmulPlan(None, None, "", 0, (ai, bk), "no contracting dim sharded: no communication")


# ------------------------------------------------------------------------------------------------ FSDP
def fsdp_timeline(params: int, layers: int, devices: int, bytes_per_param: float = 2, activations: float = 0,
                  temporaries: float = 0, prefetch: bool = True, grad_bytes_per_param: float | None = None) -> list:
    """Bytes on one device at each layer of a forward then a backward pass under FSDP (labsim's model).

    One dict per step: ``phase`` ("forward" or "backward"), ``layer`` (0-based) and the bytes of each
    part: ``shard`` (``params/devices`` of the weights, kept for good), ``gathered`` (unsharded weights:
    the running layer, plus the next one when ``prefetch``: overlapping the next AllGather with this
    layer's compute needs both resident, as PyTorch's FSDP notes say {pytorch-fsdp-notes}),
    ``grad_buffer`` (backward only: the running layer's full gradient before its ReduceScatter),
    ``grad_shards`` (gradient shards of the layers already done), ``activations`` (``activations`` bytes
    for the whole pass, kept layer by layer in forward and freed layer by layer in backward),
    ``temporaries``, and ``total``. Optimiser state is left out."""
    row, layers = _fsdp("fsdp_timeline", params, layers, devices, bytes_per_param, activations, temporaries, prefetch,
                        grad_bytes_per_param)
    return [row(phase, l) for phase, order in (("forward", range(layers)), ("backward", range(layers - 1, -1, -1)))
            for l in order]


def _fsdp(fn, params, layers, devices, bytes_per_param, activations, temporaries, prefetch, grad_bytes_per_param):
    """The checked arguments as ``row(phase, layer)``, one step of :func:`fsdp_timeline`, and ``layers``."""
    params = _real(fn, "params", params, positive=True)
    layers, devices = _count(layers, "layers", fn, "layers"), _count(devices, "devices", fn)
    gb = bytes_per_param if grad_bytes_per_param is None else grad_bytes_per_param
    bytes_per_param = _real(fn, "bytes_per_param", bytes_per_param)
    activations, temporaries = _real(fn, "activations", activations), _real(fn, "temporaries", temporaries)
    gb = _real(fn, "grad_bytes_per_param", gb)
    shard_b = params * bytes_per_param / devices
    layer = params * bytes_per_param / layers

    def row(phase, l):
        nxt = (l + 1 < layers) if phase == "forward" else (l > 0)
        r = {"phase": phase, "layer": l, "shard": shard_b,
             "gathered": layer * (2 if prefetch and nxt else 1),
             "grad_buffer": params * gb / layers if phase == "backward" else 0.0,
             "grad_shards": params * gb / devices * (layers - 1 - l) / layers if phase == "backward" else 0.0,
             "activations": (l + 1) / layers * activations, "temporaries": temporaries}
        r["total"] = sum(r[k] for k in ("shard", "gathered", "grad_buffer", "grad_shards", "activations",
                                        "temporaries"))
        return r

    return row, layers


def fsdp_memory(params: int, layers: int, devices: int, bytes_per_param: float = 2, activations: float = 0,
                temporaries: float = 0, prefetch: bool = True,
                grad_bytes_per_param: float | None = None) -> list[float]:
    """Total bytes on one device at each of the ``2·layers`` steps of :func:`fsdp_timeline` (forward, then
    backward from the last layer). With ``prefetch`` the forward holds the shard and two full layers; the
    backward adds the running layer's gradient buffer."""
    row, L = _fsdp("fsdp_memory", params, layers, devices, bytes_per_param, activations, temporaries, prefetch,
                   grad_bytes_per_param)
    return [row(phase, l)["total"] for phase, order in (("forward", range(L)), ("backward", range(L - 1, -1, -1)))
            for l in order]


def fsdp_peak(params: int, layers: int, devices: int, bytes_per_param: float = 2, activations: float = 0,
              temporaries: float = 0, prefetch: bool = True, grad_bytes_per_param: float | None = None) -> float:
    """Peak bytes per device under FSDP, the largest step of :func:`fsdp_memory`. Where activations dominate
    it is the start of the backward pass: shard + two full layers (with ``prefetch``) + one layer's
    gradient buffer + activations + temporaries; where the gradient shards do, the end of it."""
    row, L = _fsdp("fsdp_peak", params, layers, devices, bytes_per_param, activations, temporaries, prefetch,
                   grad_bytes_per_param)
    # each phase's total is linear in the layer index except where the prefetched next layer is absent (the
    # forward's last layer, the backward's layer 0): the maximum is at one of these few steps, O(1) not O(layers)
    steps = {("forward", l) for l in (0, L - 2, L - 1) if 0 <= l < L} | \
        {("backward", l) for l in (0, 1, L - 1) if 0 <= l < L}
    return max(row(p, l)["total"] for p, l in steps)


__all__ = ["shard", "MatmulPlan", "matmul", "fsdp_timeline", "fsdp_memory", "fsdp_peak"]
