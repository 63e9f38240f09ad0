"""One event type for every timeline: host threads, copy engines, streams, SMs, warps, PE rows, links.

Machines record :class:`Event` values into a :class:`Trace`; ``labsim.viz`` only reads them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Event:
    """Something that occupied ``unit`` from ``start`` to ``end`` (seconds)."""

    unit: str
    name: str
    start: float
    end: float
    kind: str = ""  # e.g. "kernel", "copy", "launch", "wait", "api"
    detail: str = ""

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"event {self.name!r} on {self.unit!r} ends ({self.end}) before it starts ({self.start})")

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Trace:
    """Time-stamped events on named units, in the display order of ``units``."""

    events: tuple[Event, ...]
    units: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.units:
            seen: list[str] = []
            for e in self.events:
                if e.unit not in seen:
                    seen.append(e.unit)
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

    def on(self, unit: str) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.unit == unit)

    def of_kind(self, kind: str) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.kind == kind)

    def busy(self, unit: str) -> float:
        return sum(e.duration for e in self.on(unit))

    def to_chrome_json(self) -> str:
        """Chrome/Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing)."""
        tids = {u: i for i, u in enumerate(self.units)}
        evs = [{"name": e.name, "cat": e.kind, "ph": "X", "pid": 0, "tid": tids[e.unit],
                "ts": e.start * 1e6, "dur": e.duration * 1e6, "args": {"detail": e.detail}} for e in self.events]
        meta = [{"name": "thread_name", "ph": "M", "pid": 0, "tid": i, "args": {"name": u}} for u, i in tids.items()]
        return json.dumps({"traceEvents": meta + evs})
