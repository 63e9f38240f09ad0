"""Data, FSDP, tensor, pipeline and expert parallelism: compute against communication for one training step.

    s = ls.collectives.parallelism.step_time("data", params=6.7e9, layers=32, d_model=4096, tokens=2**20,
                                             devices=8, chip="H100 SXM")
    s.compute, s.comm, s.hidden, s.exposed, s.bubble, s.total      # seconds per step, per device

labsim's model (a simplification, stated as labsim's; the formulas are the tests' closed forms):

* **Compute**: a training step costs ``6·P·T`` FLOPs for ``P`` parameters used per token and ``T``
  tokens (2 forward, 4 backward); each device does its share at the chip's dense peak for ``dtype`` (the
  roofline's compute bound: large matrix products, no efficiency factor).
* **Communication**: the collectives' closed forms (:func:`collective_costs.time` on ``link`` and
  ``topology``, or the function ``comm(op, nbytes, n)`` you give, e.g. a hierarchy of nodes). ``b`` is
  bytes per value (bf16: 2).

Per strategy: compute per device, communication per step, and what of it hides behind compute.

* ``data``: ``6PT/n``; AllReduce of the gradients, ``P·b``; hidden up to the backward pass, ``2/3`` of
  compute.
* ``fsdp``: ``6PT/n``; AllGather of ``P·b`` (forward), again (backward), ReduceScatter of ``P·b``; all
  but the first layer's AllGather hides, up to compute.
* ``tensor``: ``6PT/n``; 4 AllReduces per layer of the activations, ``T·d·b``; none hides: each sits
  between two dependent products.
* ``pipeline``: ``6PT/n`` plus the bubble; ``2m`` sends of ``(T·p/n)/m·d·b`` between stages, hidden up
  to compute; the bubble ``(p−1)/(m+p−1)`` of the step is idle.
* ``expert``: ``6PT/n``; 4 AllToAlls per layer of ``T/n·k·d·b`` per device; none hides: the tokens must
  arrive before their expert runs.

Pipeline: ``p`` stages (``stages``, all ``n`` devices by default; at most one stage per layer) and ``m``
microbatches (GPipe {huang2019gpipe}): every device idles for ``p−1`` of ``m+p−1`` slots, a bubble of
``compute·(p−1)/m``. With ``n > p`` the ``n/p`` pipelines are data-parallel copies: each pipeline takes
``T·p/n`` tokens, and an AllReduce of a stage's gradients (``P·b/p``) among the copies joins the sends,
hidden like data parallelism's. Expert parallelism (GShard
{lepikhin2021gshard}): one expert per device, each token sent to ``k`` experts and back (dispatch and
combine, forward and backward). A point-to-point send of ``X`` bytes is charged as an AllGather of
``2X`` on two devices (``α + X/bw``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..hardware import get as _get_chip
from ..support.choice import Choice
import math

from ..support.errors import ArgumentTypeError, LabsimError
from .collective_costs import CollectiveError, Topology, _count, _link, _real, _topology, _user_comm, time


class Strategy(Choice):
    """How a training step is split over devices (``strategy=``); each accepts its string too."""

    DATA = "data"
    FSDP = "fsdp"
    TENSOR = "tensor"
    PIPELINE = "pipeline"
    EXPERT = "expert"


STRATEGIES = Strategy.values()
NAMES = {"data": "data parallel", "fsdp": "FSDP", "tensor": "tensor parallel", "pipeline": "pipeline parallel",
         "expert": "expert parallel"}


@dataclass(frozen=True)
class StepTime:
    """Seconds per training step on one device: compute, communication (``comm``), the part of it that
    overlaps compute (``hidden``), and the pipeline's idle ``bubble``."""

    strategy: Strategy
    devices: int
    compute: float
    comm: float
    hidden: float
    bubble: float
    what: str  # the communication, in words

    @property
    def exposed(self) -> float:
        """Communication that compute does not hide: it adds to the step."""
        return self.comm - self.hidden

    @property
    def total(self) -> float:
        return self.compute + self.bubble + self.exposed


def bubble_fraction(stages: int, microbatches: int) -> float:
    """The share of a GPipe step that a stage idles: ``(p−1)/(m+p−1)``."""
    p, m = _count(stages, "stages", "bubble_fraction", ""), _count(microbatches, "microbatches", "bubble_fraction", "")
    return (p - 1) / (m + p - 1)


def _positive(v, name, fn="step_time"):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v):
        raise CollectiveError(f"{fn}: {name} must be a number > 0 (finite), got {v!r}")
    return v


def step_time(strategy: Strategy | str, params: float, layers: int, d_model: int, tokens: float, devices: int,
              chip="H100 SXM", link=None, topology: Topology | str = "ring", comm: Callable | None = None,
              microbatches: int = 8, top_k: int = 2, bytes_per_value: float = 2, dtype: str = "bfloat16",
              latency: float | None = None, stages: int | None = None) -> StepTime:
    """One training step of a transformer of ``params`` parameters (used per token), ``layers`` layers of
    width ``d_model``, on ``tokens`` tokens, split over ``devices`` by ``strategy`` (see the module
    docstring). ``link`` defaults to the chip's ``chip_link``; ``comm(op, nbytes, n)`` replaces the
    closed form on ``link``/``topology`` (e.g. ``collectives.hierarchical_time`` with its links)."""
    strategy = Strategy.of(strategy, "strategy", CollectiveError)
    _positive(params, "params"), _positive(tokens, "tokens"), _positive(bytes_per_value, "bytes_per_value")
    fn = "step_time"
    layers, d_model = _count(layers, "layers", fn, ""), _count(d_model, "d_model", fn, "")
    n = _count(devices, "devices", fn)
    m, k = _count(microbatches, "microbatches", fn, ""), _count(top_k, "top_k", fn, "")
    latency = None if latency is None else _real(fn, "latency", latency)
    try:
        c = _get_chip(chip)
    except ArgumentTypeError as e:  # not a name at all: say which function and argument
        raise ArgumentTypeError(f"{fn}: chip: {e}") from None
    except LabsimError:
        raise
    except TypeError as e:
        raise ArgumentTypeError(f"{fn}: chip: {e}") from None
    lk = _link(link, fn=fn) if link is not None else c.chip_link
    if comm is not None:
        comm = _user_comm(fn, comm)
    if comm is None:
        if lk is None:
            raise CollectiveError(f"chip {c.name!r} has no chip_link: give link= or comm=")
        topology = _topology(topology)

        def comm(op, nbytes, count):
            return time(op, nbytes, count, lk, topology, latency=latency)
    compute = 6 * params * tokens / n / c.peak_flops(dtype)
    b = bytes_per_value
    bubble, hidden = 0.0, 0.0
    if n == 1:
        return StepTime(strategy, n, compute, 0.0, 0.0, 0.0, "nothing: one device")
    if strategy == "data":
        t = comm("all_reduce", params * b, n)
        hidden = min(t, compute * 2 / 3)
        what = f"AllReduce of the gradients ({params * b / 1e9:.3g} GB)"
    elif strategy == "fsdp":
        t = 2 * comm("all_gather", params * b, n) + comm("reduce_scatter", params * b, n)
        first = comm("all_gather", params * b / layers, n)
        hidden = min(t - first, compute)
        what = "AllGather of the weights (forward, backward), ReduceScatter of the gradients"
    elif strategy == "tensor":
        t = 4 * layers * comm("all_reduce", tokens * d_model * b, n)
        what = f"4 AllReduces of the activations per layer ({tokens * d_model * b / 1e6:.3g} MB each)"
    elif strategy == "pipeline":
        p = n if stages is None else _count(stages, "stages")
        if p > layers or n % p:
            raise CollectiveError(f"pipeline: stages = {p} must be at most layers = {layers} and divide "
                                  f"devices = {n}")
        x = tokens * p / n / m * d_model * b
        sends = 2 * m * comm("all_gather", 2 * x, 2) if p > 1 else 0.0
        grads = comm("all_reduce", params * b / p, n // p) if n > p else 0.0
        t = sends + grads
        hidden = min(sends, compute) + min(grads, compute * 2 / 3)
        bubble = compute * (p - 1) / m
        what = f"{2 * m} sends of a microbatch's activations ({x / 1e6:.3g} MB) to the next stage" + \
            (f"; AllReduce of a stage's gradients over {n // p} pipelines" if n > p else "")
    else:  # expert
        per_device = tokens / n * k * d_model * b
        t = 4 * layers * comm("all_to_all", per_device, n)
        what = f"4 AllToAlls per layer (dispatch, combine; {per_device / 1e6:.3g} MB per device)"
    return StepTime(strategy, n, compute, t, hidden, bubble, what)


def compare(params: float, layers: int, d_model: int, tokens: float, devices: int, **kw) -> list[StepTime]:
    """:func:`step_time` for every strategy, in the order of :data:`STRATEGIES`."""
    import inspect

    known = [p for p in inspect.signature(step_time).parameters
             if p not in ("strategy", "params", "layers", "d_model", "tokens", "devices")]
    bad = sorted(set(kw) - set(known))
    if bad:
        raise CollectiveError(f"compare: no argument {', '.join(map(repr, bad))}; its keyword arguments are "
                              f"{', '.join(known)}")
    return [step_time(s, params, layers, d_model, tokens, devices, **kw) for s in STRATEGIES]


__all__ = ["Strategy", "STRATEGIES", "NAMES", "StepTime", "bubble_fraction", "step_time", "compare"]
