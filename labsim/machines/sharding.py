"""Sharding rules and FSDP's memory: the local shape of a sharded array, the collective a sharded matmul
needs (How to Scale Your Model, "Sharded Matrices" {austin2025scaling}), and FSDP's bytes per device
step by step. ``ls.collectives`` re-exports everything here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .collective_costs import Collective, CollectiveError, Topology, _count, time


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

    collective: Collective | None  # None: no communication
    axis: str | None
    operand: str  # "A", "B", "C" (the result) or ""
    nbytes: int
    out_spec: tuple
    rule: str

    def time(self, mesh: dict, link="H100 SXM", topology: Topology | str = "ring") -> float:
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
    params, layers, devices = _count(params, "params"), _count(layers, "layers"), _count(devices, "devices")
    gb = bytes_per_param if grad_bytes_per_param is None else grad_bytes_per_param
    for v, nm in ((bytes_per_param, "bytes_per_param"), (activations, "activations"), (temporaries, "temporaries"),
                  (gb, "grad_bytes_per_param")):
        if not v >= 0:
            raise CollectiveError(f"{nm} must be >= 0, got {v!r}")
    shard_b = params * bytes_per_param / devices
    layer = params * bytes_per_param / layers
    out = []
    for phase, order in (("forward", range(layers)), ("backward", range(layers - 1, -1, -1))):
        for l in order:
            nxt = (l + 1 < layers) if phase == "forward" else (l > 0)
            row = {"phase": phase, "layer": l, "shard": shard_b,
                   "gathered": layer * (2 if prefetch and nxt else 1),
                   "grad_buffer": params * gb / layers if phase == "backward" else 0.0,
                   "grad_shards": params * gb / devices * (layers - 1 - l) / layers if phase == "backward" else 0.0,
                   "activations": (l + 1) / layers * activations, "temporaries": temporaries}
            row["total"] = sum(row[k] for k in ("shard", "gathered", "grad_buffer", "grad_shards", "activations",
                                                "temporaries"))
            out.append(row)
    return out


def fsdp_memory(params: int, layers: int, devices: int, bytes_per_param: float = 2, activations: float = 0,
                temporaries: float = 0, prefetch: bool = True,
                grad_bytes_per_param: float | None = None) -> list[float]:
    """Total bytes on one device at each of the ``2·layers`` steps of :func:`fsdp_timeline` (forward, then
    backward from the last layer). With ``prefetch`` the forward holds the shard and two full layers; the
    backward adds the running layer's gradient buffer."""
    return [r["total"] for r in fsdp_timeline(params, layers, devices, bytes_per_param, activations, temporaries,
                                              prefetch, grad_bytes_per_param)]


def fsdp_peak(params: int, layers: int, devices: int, bytes_per_param: float = 2, activations: float = 0,
              temporaries: float = 0, prefetch: bool = True, grad_bytes_per_param: float | None = None) -> float:
    """Peak bytes per device under FSDP, the largest step of :func:`fsdp_memory`. Where activations dominate
    it is the start of the backward pass: shard + two full layers (with ``prefetch``) + one layer's
    gradient buffer + activations + temporaries; where the gradient shards do, the end of it."""
    return max(fsdp_memory(params, layers, devices, bytes_per_param, activations, temporaries, prefetch,
                           grad_bytes_per_param))


__all__ = ["shard", "MatmulPlan", "matmul", "fsdp_timeline", "fsdp_memory", "fsdp_peak"]
