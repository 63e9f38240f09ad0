"""One event type for every timeline: host threads, copy engines, streams, SMs, warps, PE rows, links.

Machines record :class:`Event` values into a :class:`Trace`; ``labsim.viz`` only reads them.
Every event sits on a typed :class:`UnitId` (which chip, what kind of unit, which one); its ``label``
is derived from those fields and is meant only for drawing. Code that selects events reads the fields.

A machine that keeps its own schedule (per cycle, per block) turns it into a Trace with
:meth:`Trace.from_intervals` (one unit kind and event kind per call; cycles become seconds with
``clock_hz``) and joins several with :meth:`Trace.merge`; ``labsim.viz.timeline`` then draws it like
any other::

    dma = Trace.from_intervals([(0, "load A", 0, 40)], kind=UnitKind.DMA, event=EventKind.COPY, clock_hz=f)
    mxu = Trace.from_intervals([(0, "A·B", 40, 104)], kind=UnitKind.MXU, clock_hz=f)
    viz.timeline(Trace.merge(dma, mxu))

Chips are numbered 0, 1, ... within a trace. The host (CPU threads driving the devices) counts as its
own chip, numbered :data:`HOST_CHIP` (-1); a device's copy engines, streams and links belong to it.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import json
from dataclasses import dataclass, field
from enum import Enum

HOST_CHIP = -1  # the ``chip`` of units on the host side (host threads)


class UnitKind(Enum):
    """What a unit is; the value is the start of its label."""

    HOST_THREAD = "host thread"
    COPY_ENGINE = "copy engine"
    STREAM = "stream"
    SM = "SM"
    WARP = "warp"
    PE_ROW = "PE row"
    LINK = "link"
    MXU = "MXU"  # a TPU's systolic matrix unit
    VPU = "VPU"  # a TPU's vector unit
    DMA = "DMA"  # a DMA queue moving blocks between HBM and on-chip memory (a TPU's HBM <-> VMEM)


class Direction(Enum):
    """Which way a copy engine moves data: host to device or device to host."""

    H2D = "H→D"
    D2H = "D→H"


class EventKind(Enum):
    """What an event is; the value names its colour and legend entry."""

    KERNEL = "kernel"  # a kernel running on a stream
    COPY = "copy"      # a copy engine moving bytes
    LAUNCH = "launch"  # the host enqueueing a kernel launch
    API = "api"        # any other host runtime call (e.g. enqueueing a copy)
    WAIT = "wait"      # a host thread blocked until the device is done
    COMPUTE = "compute"  # a unit inside a chip doing arithmetic (an MXU block, VPU work, a warp's instructions)


# kinds of which a chip usually has one (per direction): their label omits index 0
_SINGLE = (UnitKind.HOST_THREAD, UnitKind.COPY_ENGINE)


@dataclass(frozen=True)
class UnitId:
    """One unit that events occupy: ``index``-th unit of ``kind`` on ``chip``.

    ``chip`` is :data:`HOST_CHIP` for host threads and a device index (0, 1, ...) for everything else.
    ``direction`` is required for copy engines (one numbering per direction) and optional for links.
    """

    chip: int
    kind: UnitKind
    index: int = 0
    direction: Direction | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, UnitKind):
            raise ArgumentTypeError(f"UnitId kind must be a UnitKind, got {self.kind!r}")
        for name in ("chip", "index"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool):
                raise ArgumentTypeError(f"UnitId {name} must be an int, got {v!r}")
        if self.index < 0:
            raise ArgumentError(f"UnitId index must be >= 0, got {self.index}")
        if self.kind is UnitKind.HOST_THREAD and self.chip != HOST_CHIP:
            raise ArgumentError(f"a host thread is on chip HOST_CHIP ({HOST_CHIP}), got chip {self.chip}")
        if self.kind is not UnitKind.HOST_THREAD and self.chip < 0:
            raise ArgumentError(f"a {self.kind.value} is on a device chip (>= 0), got chip {self.chip}")
        if self.direction is not None and not isinstance(self.direction, Direction):
            raise ArgumentTypeError(f"UnitId direction must be a Direction or None, got {self.direction!r}")
        if self.kind is UnitKind.COPY_ENGINE and self.direction is None:
            raise ArgumentError("a copy engine needs a direction (Direction.H2D or Direction.D2H)")
        if self.direction is not None and self.kind not in (UnitKind.COPY_ENGINE, UnitKind.LINK):
            raise ArgumentError(f"a {self.kind.value} has no direction, got {self.direction}")

    @property
    def label(self) -> str:
        """Display string, e.g. "host thread", "copy engine H→D", "stream 0", "SM 3" (no chip)."""
        parts = [self.kind.value]
        if self.kind not in _SINGLE or self.index:
            parts.append(str(self.index))
        if self.direction is not None:
            parts.append(self.direction.value)
        return " ".join(parts)

    @property
    def on_host(self) -> bool:
        return self.chip == HOST_CHIP


@dataclass(frozen=True)
class Event:
    """Something that occupied ``unit`` from ``start`` to ``end`` (seconds).

    ``name`` is what the event concerns: a kernel's name for kernels and their launches, a value's name
    for copies and their enqueue calls. ``nbytes`` is the bytes a copy moves or a kernel reads and
    writes; ``flops`` a kernel's floating-point operations. ``detail`` is free text, for display only.
    """

    unit: UnitId
    name: str
    start: float
    end: float
    kind: EventKind
    detail: str = ""
    nbytes: int | None = None
    flops: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.unit, UnitId):
            raise ArgumentTypeError(f"Event unit must be a UnitId, got {type(self.unit).__name__} {self.unit!r}")
        if not isinstance(self.kind, EventKind):
            raise ArgumentTypeError(f"Event kind must be an EventKind, got {type(self.kind).__name__} {self.kind!r}")
        if self.end < self.start:
            raise ArgumentError(f"event {self.name!r} on {self.unit.label!r} ends ({self.end}) "
                             f"before it starts ({self.start})")
        for name in ("nbytes", "flops"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise ArgumentError(f"event {self.name!r}: {name} must be >= 0, got {v}")

    @property
    def duration(self) -> float:
        return self.end - self.start


def _unit_arg(unit: object) -> UnitId:
    if not isinstance(unit, UnitId):
        raise ArgumentTypeError(f"unit must be a UnitId, got {type(unit).__name__} {unit!r}")
    return unit


@dataclass(frozen=True)
class Trace:
    """Time-stamped events on typed units, in the display order of ``units``.

    ``units`` defaults to the order in which events first use them; given explicitly it must hold every
    unit an event uses. ``chip_names[i]`` names chip ``i`` (optional; used by :meth:`to_chrome_json`).
    """

    events: tuple[Event, ...]
    units: tuple[UnitId, ...] = field(default=())
    chip_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(self.events))
        object.__setattr__(self, "units", tuple(_unit_arg(u) for u in self.units))
        object.__setattr__(self, "chip_names", tuple(self.chip_names))
        if len(set(self.units)) != len(self.units):
            raise ArgumentError("Trace units must be distinct")
        seen, known = list(self.units), set(self.units)  # the set keeps the check linear in events
        for e in self.events:
            if e.unit not in known:
                if self.units:
                    raise ArgumentError(f"event {e.name!r} is on {e.unit}, which is not in the trace's units")
                seen.append(e.unit)
                known.add(e.unit)
        object.__setattr__(self, "units", tuple(seen))

    @property
    def start(self) -> float:
        return min((e.start for e in self.events), default=0.0)

    @property
    def end(self) -> float:
        return max((e.end for e in self.events), default=0.0)

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def chips(self) -> tuple[int, ...]:
        """The chips that have units in this trace, host (:data:`HOST_CHIP`) first."""
        return tuple(sorted({u.chip for u in self.units}))

    def chip_name(self, chip: int) -> str:
        """Display name of ``chip``: "host", "chip 0: <name>" or "chip 0"."""
        if chip == HOST_CHIP:
            return "host"
        return f"chip {chip}: {self.chip_names[chip]}" if 0 <= chip < len(self.chip_names) else f"chip {chip}"

    def on(self, unit: UnitId) -> tuple[Event, ...]:
        unit = _unit_arg(unit)
        return tuple(e for e in self.events if e.unit == unit)

    def of_kind(self, kind: EventKind | str) -> tuple[Event, ...]:
        """Events of ``kind`` (an :class:`EventKind`, or its value such as ``"copy"``)."""
        kind = kind if isinstance(kind, EventKind) else EventKind(kind)
        return tuple(e for e in self.events if e.kind is kind)

    def units_of(self, kind: UnitKind, *, chip: int | None = None,
                 direction: Direction | None = None) -> tuple[UnitId, ...]:
        """The trace's units of ``kind`` (on ``chip``, in ``direction``, when given), in display order."""
        if not isinstance(kind, UnitKind):
            raise ArgumentTypeError(f"kind must be a UnitKind, got {kind!r}")
        return tuple(u for u in self.units if u.kind is kind and (chip is None or u.chip == chip)
                     and (direction is None or u.direction is direction))

    def busy(self, unit: UnitId) -> float:
        return sum(e.duration for e in self.on(unit))

    def shifted(self, dt: float) -> "Trace":
        """The same events ``dt`` seconds later, on the same units (a plain :class:`Trace`): how a run of
        several kernels lays each kernel's trace after the one before."""
        evs = tuple(Event(e.unit, e.name, e.start + dt, e.end + dt, e.kind, e.detail, e.nbytes, e.flops)
                    for e in self.events)
        return Trace(evs, self.units, self.chip_names)

    @classmethod
    def merge(cls, *traces: "Trace") -> "Trace":
        """One Trace of the events of ``traces`` on one clock (e.g. a TPU's DMA copies from one
        :meth:`from_intervals` call and its MXU work from another). Units keep their order, first
        trace first; ``chip_names`` are the longest given. Two traces may share a unit."""
        for t in traces:
            if not isinstance(t, Trace):
                raise ArgumentTypeError(f"Trace.merge: every argument must be a Trace, got {type(t).__name__}")
        units = tuple(dict.fromkeys(u for t in traces for u in t.units))
        names = max((t.chip_names for t in traces), key=len, default=())
        return cls(tuple(e for t in traces for e in t.events), units, names)

    @classmethod
    def from_intervals(cls, intervals, *, kind: UnitKind, chip: int = 0,
                       event: EventKind = EventKind.COMPUTE, clock_hz: float | None = None, merge: bool = False,
                       units: tuple[UnitId, ...] = (), chip_names: tuple[str, ...] = ()) -> "Trace":
        """A Trace from plain intervals, for a machine that keeps its own schedule (cycles per warp,
        blocks per MXU, ...).

        ``intervals``: tuples ``(unit, name, start, end)`` or ``(unit, name, start, end, detail)``, where
        ``unit`` is an index (the ``unit``-th unit of ``kind`` on ``chip``) or a :class:`UnitId`.
        Times are seconds, or cycles when ``clock_hz`` is given (each is divided by it). Every event gets
        the kind ``event`` (default :attr:`EventKind.COMPUTE`). ``merge=True`` joins back-to-back
        intervals of the same unit and name into one event (a warp issuing on 40 cycles in a row is one
        bar, not 40). ``units`` and ``chip_names`` are passed on to the Trace::

            Trace.from_intervals([(0, "mma", 0, 64), (1, "mma", 8, 72)], kind=UnitKind.MXU, clock_hz=940e6)
        """
        if not isinstance(kind, UnitKind):
            raise ArgumentTypeError(f"from_intervals: kind must be a UnitKind, got {kind!r}")
        if not isinstance(event, EventKind):
            raise ArgumentTypeError(f"from_intervals: event must be an EventKind, got {event!r}")
        if clock_hz is not None and (isinstance(clock_hz, bool) or not isinstance(clock_hz, (int, float))
                                     or not clock_hz > 0 or clock_hz == float("inf")):
            raise ArgumentError(f"from_intervals: clock_hz must be a finite number > 0 (cycles per second), "
                             f"got {clock_hz!r}")
        made: dict[int, UnitId] = {}
        events: list[Event] = []
        last: dict[UnitId, int] = {}  # unit -> position in events of its latest event, for merge
        for n, item in enumerate(intervals):
            if not isinstance(item, (tuple, list)) or len(item) not in (4, 5):
                raise ArgumentError(f"from_intervals: interval {n} must be (unit, name, start, end[, detail]), "
                                 f"got {item!r:.60}")
            u, name, start, end = item[:4]
            detail = str(item[4]) if len(item) == 5 else ""
            if not isinstance(u, UnitId):
                if u not in made:
                    made[u] = UnitId(chip, kind, u)
                u = made[u]
            if clock_hz is not None:
                start, end = start / clock_hz, end / clock_hz
            i = last.get(u)
            if merge and i is not None and events[i].name == name and events[i].end == start:
                prev = events[i]
                events[i] = Event(u, name, prev.start, end, event, prev.detail)
                continue
            last[u] = len(events)
            events.append(Event(u, str(name), start, end, event, detail))
        return cls(tuple(events), units, chip_names)

    def to_chrome_json(self) -> str:
        """Chrome/Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing).

        One process per chip (pid = chip + 1, so the host is pid 0), one thread per unit within it
        (tid = the unit's position among its chip's units), named from the labels; times in µs.
        """
        tids: dict[UnitId, tuple[int, int]] = {}
        meta: list[dict] = []
        for chip in self.chips:
            pid = chip + 1
            meta += [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": self.chip_name(chip)}},
                     {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}]
            for tid, u in enumerate(u for u in self.units if u.chip == chip):
                tids[u] = (pid, tid)
                meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": u.label}},
                         {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                          "args": {"sort_index": tid}}]
        evs = []
        for e in self.events:
            args = {"detail": e.detail} | {k: v for k, v in (("bytes", e.nbytes), ("flops", e.flops)) if v is not None}
            pid, tid = tids[e.unit]
            evs.append({"name": e.name, "cat": e.kind.value, "ph": "X", "pid": pid, "tid": tid,
                        "ts": e.start * 1e6, "dur": e.duration * 1e6, "args": args})
        return json.dumps({"traceEvents": meta + evs})
