"""Compute against communication as rooflines: when does each kind of parallelism hide its collectives?

    from labsim.machines import parallel_roofline as pr
    r = pr.times("data", params=6.7e9, tokens_per_chip=4096, devices=8, chip="H100 SXM", topology="switch")
    r.compute, r.window, r.comm          # seconds per training step on one chip
    pr.crossing("data", 6.7e9, 8, chip="H100 SXM", topology="switch")   # tokens per chip where they meet

labsim's model (a simplification, stated as labsim's; the tests check it against these closed forms).
A step costs ``6·P`` FLOPs per token (2 forward, 4 backward) at the chip's dense peak ``C``. ``b`` is
bytes per value (bf16: 2). ``comm(op, nbytes, n)`` is a collective's time: by default the closed form
:func:`collective_costs.time` on the chip's link and ``topology``.

* ``data``: each chip holds the whole model and ``T`` tokens. Compute ``6PT/C``; the gradients'
  AllReduce of ``P·b`` bytes can overlap only the backward pass, the **window** ``4PT/C``. On a ring
  (no latency) it hides when ``T ≥ b·C/W · (n−1)/(2n)``, for link bandwidth ``W``.
* ``fsdp``: as ``data``, but the weights are sharded: two AllGathers of ``P·b`` (forward, backward) and a
  ReduceScatter of ``P·b``; the window is the whole compute, ``6PT/C``. On a ring it hides when
  ``T ≥ b·C/W · (n−1)/(2n)``: the same bound as ``data``.
* ``tensor``: a group of ``n`` chips shares every weight matrix and sees the same ``T`` tokens. Compute
  ``6PT/(nC)``; 4 AllReduces per layer of the activations, ``T·d·b`` bytes each. Both grow with ``T``, so
  the ratio comm/compute depends on ``n`` and the width ``d`` only. The window is the whole compute: it
  assumes the AllReduces overlap the products (collective matmuls); :mod:`parallelism` charges them all.
  On a ring it hides when ``n − 1 ≤ 6P·W / (8·L·d·b·C)`` (``≈ 9d·W/(b·C)`` for ``P ≈ 12·L·d²``).

:func:`plan` puts tensor parallelism inside a group and FSDP across groups for the worked problem of
choosing a strategy: memory per chip, then time. :func:`gpipe` is pipeline parallelism's schedule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from ..hardware import get as _get_chip
from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError
from .collective_costs import CollectiveError, _count, _link, _topology, _user_comm, time
from .events import EventKind, Trace, UnitId, UnitKind

ROOF_STRATEGIES = ("data", "fsdp", "tensor")
#: bytes per parameter of mixed-precision Adam: bf16 weights and gradients (2 + 2), float32 master
#: weights, momentum and variance (4 + 4 + 4): ZeRO's 16 bytes per parameter {rajbhandari2020zero}
ADAM_BYTES = 16


@dataclass(frozen=True)
class Roof:
    """Seconds per training step on one chip: ``compute``, the part of it communication may overlap
    (``window``), and the communication (``comm``)."""

    strategy: str
    compute: float
    window: float
    comm: float

    @property
    def hidden(self) -> bool:
        return self.comm <= self.window

    @property
    def exposed(self) -> float:
        return max(0.0, self.comm - self.window)


def _pos(fn: str, name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
        raise CollectiveError(f"{fn}: {name} must be a finite number > 0, got {v!r}")
    return float(v)


def _named(fn: str, name: str, e: Exception) -> Exception:
    """The same kind of labsim error, its message prefixed with the function and the argument."""
    try:
        return type(e)(f"{fn}: {name}: {e}")
    except TypeError:  # an error class with another constructor: say it as a CollectiveError
        return CollectiveError(f"{fn}: {name}: {e}")


def _peak(fn: str, chip, dtype: str):
    try:
        c = _get_chip(chip)
    except LabsimError as e:
        raise _named(fn, "chip", e) from None
    except (TypeError, KeyError) as e:
        raise ArgumentTypeError(f"{fn}: chip: {e}") from None
    try:
        return c, c.peak_flops(dtype)
    except LabsimError as e:
        raise _named(fn, "dtype", e) from None
    except (TypeError, KeyError, ValueError) as e:
        raise CollectiveError(f"{fn}: dtype={dtype!r}: {e}") from None


def _comm(fn: str, c, link, topology, comm, latency) -> Callable:
    if comm is not None:
        return _user_comm(fn, comm)
    lk = _link(link, fn=fn) if link is not None else c.chip_link
    if lk is None:
        raise CollectiveError(f"{fn}: chip {c.name!r} has no chip_link: give link= or comm=")
    try:
        topo = _topology(topology)
    except LabsimError as e:
        raise _named(fn, "topology", e) from None
    return lambda op, nbytes, n: time(op, nbytes, n, lk, topo, latency=latency)


def _strategy(fn: str, s) -> str:
    if s not in ROOF_STRATEGIES:
        raise CollectiveError(f"{fn}: strategy must be one of {', '.join(ROOF_STRATEGIES)}, got {s!r}")
    return s


def _shape(fn: str, strategy: str, layers, d_model):
    if strategy != "tensor":
        return None, None
    if layers is None or d_model is None:
        raise CollectiveError(f"{fn}: strategy 'tensor' needs layers= and d_model= (its AllReduces are per layer "
                              f"and d_model wide), got layers={layers!r}, d_model={d_model!r}")
    return _count(layers, "layers", fn, ""), _count(d_model, "d_model", fn, "")


def times(strategy: str, params: float, tokens_per_chip: float, devices: int, *, layers: int | None = None,
          d_model: int | None = None, chip="H100 SXM", link=None, topology="ring", comm: Callable | None = None,
          bytes_per_value: float = 2, dtype: str = "bfloat16", latency: float | None = None) -> Roof:
    """Compute, overlap window and communication of one step on one chip (module docstring).
    ``tokens_per_chip``: for ``tensor``, the tokens the whole group of ``devices`` works on."""
    fn = "times"
    strategy = _strategy(fn, strategy)
    P, T, b = _pos(fn, "params", params), _pos(fn, "tokens_per_chip", tokens_per_chip), \
        _pos(fn, "bytes_per_value", bytes_per_value)
    n = _count(devices, "devices", fn)
    L, d = _shape(fn, strategy, layers, d_model)
    c, peak = _peak(fn, chip, dtype)
    cm = _comm(fn, c, link, topology, comm, latency)
    if strategy == "tensor":
        compute = 6 * P * T / n / peak
        t = 4 * L * cm("all_reduce", T * d * b, n) if n > 1 else 0.0
        return Roof(strategy, compute, compute, t)
    compute = 6 * P * T / peak
    if n == 1:
        return Roof(strategy, compute, compute, 0.0)
    if strategy == "data":
        return Roof(strategy, compute, compute * 2 / 3, cm("all_reduce", P * b, n))
    return Roof(strategy, compute, compute, 2 * cm("all_gather", P * b, n) + cm("reduce_scatter", P * b, n))


def crossing(strategy: str, params: float, devices: int, **kw) -> float:
    """Tokens per chip at which ``data`` or ``fsdp`` communication equals its window: above it, it hides.
    Keyword arguments as for :func:`times`."""
    strategy = _strategy("crossing", strategy)
    if strategy == "tensor":
        raise CollectiveError("crossing: strategy 'tensor' has no crossing in tokens (compute and communication "
                              "both grow with them); use tensor_limit for the largest group that hides")
    r = times(strategy, params, 1.0, devices, **kw)  # window and comm for one token per chip
    return r.comm / r.window


def tensor_ratio(params: float, layers: int, d_model: int, devices: int, **kw) -> float:
    """Tensor parallelism's communication over its compute on ``devices`` chips (independent of tokens)."""
    r = times("tensor", params, 1.0, devices, layers=layers, d_model=d_model, **kw)
    return r.comm / r.compute


def tensor_limit(params: float, layers: int, d_model: int, degrees: Sequence[int] = tuple(range(1, 65)),
                 **kw) -> int:
    """The largest group size in ``degrees`` whose tensor-parallel communication fits in its compute."""
    ds = sorted({_count(g, "degrees", "tensor_limit") for g in degrees}) if hasattr(degrees, "__iter__") else None
    if not ds:
        raise CollectiveError(f"tensor_limit: degrees must be a non-empty sequence of counts, got {degrees!r}")
    ok = [g for g in ds if tensor_ratio(params, layers, d_model, g, **kw) <= 1]
    return max(ok) if ok else 0


@dataclass(frozen=True)
class Plan:
    """One choice of ``tp`` (tensor parallel inside a group) × ``fsdp`` (groups, weights sharded over
    them): bytes per chip and seconds per step on one chip."""

    tp: int
    fsdp: int
    memory: float
    compute: float
    tp_comm: float
    fsdp_comm: float

    @property
    def exposed(self) -> float:
        """Tensor parallelism's AllReduces all add (as in :mod:`parallelism`); FSDP's hide up to compute."""
        return self.tp_comm + max(0.0, self.fsdp_comm - self.compute)

    @property
    def step(self) -> float:
        return self.compute + self.exposed


def plan(params: float, layers: int, d_model: int, tokens: float, tp: int, fsdp: int, *, chip="H100 SXM",
         tp_comm: Callable | None = None, fsdp_comm: Callable | None = None, bytes_per_value: float = 2, state_bytes: float = ADAM_BYTES,
         dtype: str = "bfloat16") -> Plan:
    """A step of ``tokens`` on ``tp × fsdp`` chips. Memory per chip: ``state_bytes`` per parameter sharded
    over all chips, plus each layer's input kept for the backward pass (activation checkpointing) for the
    group's ``tokens/fsdp`` tokens. ``tp_comm(op, nbytes, n)`` runs inside a group, ``fsdp_comm`` across
    groups (on the group's ``P/tp`` parameters); either defaults to a ring on the chip's ``chip_link``."""
    fn = "plan"
    P, T = _pos(fn, "params", params), _pos(fn, "tokens", tokens)
    b, s = _pos(fn, "bytes_per_value", bytes_per_value), _pos(fn, "state_bytes", state_bytes)
    L, d = _count(layers, "layers", fn, ""), _count(d_model, "d_model", fn, "")
    g, k = _count(tp, "tp", fn), _count(fsdp, "fsdp", fn)
    c, peak = _peak(fn, chip, dtype)
    tcm, fcm = _comm(fn, c, None, "ring", tp_comm, None), _comm(fn, c, None, "ring", fsdp_comm, None)
    group_tokens = T / k
    memory = s * P / (g * k) + group_tokens * d * b * L
    compute = 6 * P * T / (g * k) / peak
    t_tp = 4 * L * tcm("all_reduce", group_tokens * d * b, g) if g > 1 else 0.0
    shard = P / g * b
    t_f = 2 * fcm("all_gather", shard, k) + fcm("reduce_scatter", shard, k) if k > 1 else 0.0
    return Plan(g, k, memory, compute, t_tp, t_f)


#: the most (stage, micro-batch) pairs gpipe() lays out: two events each, a schedule anyone can draw
MAX_GPIPE_CELLS = 100_000


def gpipe(stages: int, microbatches: int, forward: float = 1.0, backward: float = 2.0) -> Trace:
    """GPipe's schedule {huang2019gpipe}: every microbatch's forward through the ``stages``, then every
    backward in reverse; ``forward``/``backward`` seconds per stage and microbatch. One row per stage;
    each stage idles ``(p−1)/(m+p−1)`` of the step."""
    fn = "gpipe"
    p, m = _count(stages, "stages", fn, ""), _count(microbatches, "microbatches", fn, "")
    tf, tb = _pos(fn, "forward", forward), _pos(fn, "backward", backward)
    if p * m > MAX_GPIPE_CELLS:
        raise ArgumentError(f"{fn}: stages × microbatches = {p:,} × {m:,} = {p * m:,} is more than the "
                            f"{MAX_GPIPE_CELLS:,} (stage, micro-batch) pairs a drawn schedule holds; the bubble "
                            f"fraction (p−1)/(m+p−1) needs no schedule")
    out = []
    for s in range(p):
        u = UnitId(s, UnitKind.STREAM)  # one device per stage: the row reads "stage s+1 · stream"
        for j in range(m):
            out.append((u, f"F{j + 1}", (s + j) * tf, (s + j + 1) * tf))
            start = (m + p - 1) * tf + (p - 1 - s + j) * tb
            out.append((u, f"B{j + 1}", start, start + tb))
    return Trace.from_intervals(out, kind=UnitKind.STREAM, event=EventKind.COMPUTE,
                                chip_names=tuple(f"stage {s + 1}" for s in range(p)))


__all__ = ["ROOF_STRATEGIES", "ADAM_BYTES", "Roof", "times", "crossing", "tensor_ratio", "tensor_limit", "Plan",
           "plan", "gpipe"]
