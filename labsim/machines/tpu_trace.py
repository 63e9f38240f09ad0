"""A TPU dot's static schedule as an ``ls.Trace``: the one record ``viz.timeline`` draws.

:func:`labsim.machines.tpu.schedule_dot` returns a :class:`~labsim.machines.tpu.DotSchedule` (steps with
their copy-in, MXU and copy-out intervals). :func:`schedule_events` turns its steps into
:class:`~labsim.machines.events.Event` values on the chip's DMA queue, MXU and VPU, the events
``ls.tpu.run(...).trace`` holds for a contraction kernel (a test holds the two equal);
:func:`schedule_trace` wraps them in a :class:`~labsim.machines.events.Trace`, so the TPU schedule is
one more trace that ``viz.timeline`` draws, as ``viz.tpu.schedule_chart`` does.
"""
from __future__ import annotations

from ..support import errors
from .events import Event, EventKind, Trace, UnitId, UnitKind

DMA = UnitId(0, UnitKind.DMA)  # the chip's DMA queue between HBM and VMEM
MXU = UnitId(0, UnitKind.MXU)  # its MXUs, treated as one array (as ls.tpu does)
VPU = UnitId(0, UnitKind.VPU)  # its vector unit


def schedule_events(sched, name: str = "dot", *, start: float = 0.0, detail: str = "", steps=None) -> list[Event]:
    """The events of ``sched``'s steps (all, or the given ``steps``), shifted by ``start`` seconds.

    Per step: the copy of its A and B blocks into VMEM (``COPY`` on the DMA queue, where it copied
    anything), its MXU work (``COMPUTE``; the padded FLOPs at the schedule's matrix rate), the VPU
    epilogue after the MXU on the last step along K (``COMPUTE``, labelled ``detail``) and the copy of
    the C block back to HBM (``COPY``)."""
    evs = []
    for s in (sched.steps if steps is None else steps):
        if s.load_bytes:
            evs.append(Event(DMA, f"{name} in {s.index}", start + s.load[0], start + s.load[1], EventKind.COPY,
                             detail="A and B blocks, HBM → VMEM", nbytes=s.load_bytes))
        mxu_end = min(s.compute[0] + s.padded_flops / sched.peak_flops, s.compute[1])
        evs.append(Event(MXU, f"{name} {s.index}", start + s.compute[0], start + mxu_end, EventKind.COMPUTE,
                         detail=f"{s.folds} folds", flops=s.flops))
        if s.compute[1] > mxu_end:
            evs.append(Event(VPU, f"{name} epilogue {s.index}", start + mxu_end, start + s.compute[1],
                             EventKind.COMPUTE, detail=detail))
        if s.store is not None:
            evs.append(Event(DMA, f"{name} out {s.index}", start + s.store[0], start + s.store[1], EventKind.COPY,
                             detail="C block, VMEM → HBM", nbytes=s.store_bytes))
    return evs


def schedule_trace(sched, *, most: int | None = None, name: str = "dot") -> Trace:
    """``sched`` (a ``DotSchedule`` from ``ls.tpu.schedule_dot``) as an ``ls.Trace``: its first ``most``
    steps (all by default) on the DMA queue, the MXU and, if an epilogue ran, the VPU of chip 0."""
    from .tpu import DotSchedule

    if not isinstance(sched, DotSchedule):
        raise errors.ArgumentTypeError(f"schedule_trace: sched must be a DotSchedule (ls.tpu.schedule_dot(m, n, k, "
                                       f"chip)), got {type(sched).__name__} {sched!r:.40}")
    steps = sched.steps if most is None else sched.steps[:errors.count("schedule_trace", "most", most, minimum=1)]
    evs = sorted(schedule_events(sched, name, steps=steps), key=lambda e: e.start)
    used = {e.unit for e in evs}
    return Trace(tuple(evs), units=tuple(u for u in (DMA, MXU, VPU) if u in used),
                 chip_names=(sched.core.chip.name,))


__all__ = ["DMA", "MXU", "VPU", "schedule_events", "schedule_trace"]
