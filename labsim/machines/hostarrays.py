"""The values the host/device machine hands out (``labsim.machines.host``): device arrays as futures,
recorded stream events, captured CUDA graphs, and the compile cache of jitted graphs. Split from
``host`` to keep each module short; ``ls.host`` re-exports them.
"""
from __future__ import annotations

import math
import numbers
from collections import OrderedDict
from dataclasses import dataclass, field

from ..compiler.pipeline import compile as _compile
from ..compiler.program import Program
from ..core.avals import ShapeDtype
from ..core.ir import Graph
from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError, fits


class HostError(LabsimError, RuntimeError):
    """A host/device call made in a state where it cannot run (inside a graph capture, a value not yet computed)."""

# "Machine" in the annotations below is labsim.machines.host.Machine (not imported: host imports this module)


def _seconds(v, name: str, *, positive: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0 \
            or (positive and v == 0):
        need = "> 0" if positive else ">= 0"
        raise ArgumentError(f"Machine: {name} must be a finite number {need}, got {v!r}")
    return float(v)


def _aval_of(fn: str, x) -> tuple[ShapeDtype, object]:
    """(aval, value) of what ``put``/``resident`` received: a ShapeDtype (timing only) or an array-like."""
    import numpy as np

    if isinstance(x, ShapeDtype):
        return x, None
    if isinstance(x, Array):
        raise ArgumentTypeError(f"{fn}: {x.name} is already a device Array; pass a NumPy array or a ShapeDtype")
    try:
        value = np.asarray(x)
    except (ValueError, TypeError) as e:
        raise ArgumentTypeError(f"{fn}: x must be a NumPy array (or array-like) or a ShapeDtype, got "
                                f"{type(x).__name__} that NumPy cannot make an array of ({e})") from None
    if value.dtype.kind not in "biufc":
        raise ArgumentTypeError(f"{fn}: x must hold numbers (bool, int, float or complex), got dtype {value.dtype}")
    return ShapeDtype(value.shape, str(value.dtype)), value


def _reserve(machine: "Machine", fn: str, what: str, nbytes: int) -> None:
    """Refuse (OutOfMemoryError) ``nbytes`` more on ``machine``'s device when the live arrays and them do not
    fit its memory (``chip.hbm_capacity``); the bytes are counted when the Array is made."""
    cap = machine.chip.hbm_capacity
    if machine.resident_bytes + nbytes > cap:
        held = f" with {machine.resident_bytes:,} bytes already resident" if machine.resident_bytes else ""
        fits(fn, what, machine.resident_bytes + nbytes, cap,
             where=f"{machine.chip.name}'s device memory{held}")


_TOKEN = ShapeDtype((), "float32")  # the output of a kernel launched by name, without out= or a value


def _launch_value(name: str, fn, inputs, out, declared) -> tuple[ShapeDtype, object]:
    """The aval and value of ``Machine.launch``'s output: ``fn``'s value (when every input has one) must
    have the declared shape (``out`` or the kernel's output); undeclared, the aval is the value's."""
    import numpy as np

    if out is not None and not isinstance(out, ShapeDtype):
        raise ArgumentTypeError(f"Machine.launch {name}: out must be a ShapeDtype (ls.ShapeDtype(shape, dtype)), "
                                f"got {type(out).__name__}")
    if fn is not None and not callable(fn):
        raise ArgumentTypeError(f"Machine.launch {name}: fn must be a function of the inputs' values, got "
                                f"{type(fn).__name__}")
    value = None
    if fn is not None and all(a.has_value for a in inputs):
        value = np.asarray(fn(*(a._value for a in inputs)))
        if value.dtype.kind not in "biufc":
            raise ArgumentTypeError(f"Machine.launch {name}: fn returned dtype {value.dtype}; it must return numbers")
    if value is None:
        return (declared if declared is not None else _TOKEN), None
    if declared is None:
        return ShapeDtype(value.shape, str(value.dtype)), value
    if tuple(value.shape) != tuple(declared.shape):
        raise ArgumentError(f"Machine.launch {name}: fn returned shape {tuple(value.shape)} but the output is "
                            f"declared {declared} (out=, or the kernel's output); return that shape or pass "
                            f"out=ls.ShapeDtype({tuple(value.shape)}, {str(value.dtype)!r})")
    if str(value.dtype) != declared.dtype:
        from ..core.dtypes import numpy_dtype
        if not np.can_cast(value.dtype, numpy_dtype(declared.dtype), "same_kind"):
            raise ArgumentError(f"Machine.launch {name}: fn returned dtype {value.dtype}, which does not convert "
                                f"to the declared {declared.dtype} without changing kind")
        value = value.astype(numpy_dtype(declared.dtype))
    return declared, value


def _count(v, name: str, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ArgumentError(f"Machine: {name} must be an integer >= {lo}, got {v!r}")
    return int(v)


class Array:
    """A device array as JAX returns it: a future. ``shape`` and ``dtype`` are known at once; the value
    exists on the device from ``ready`` (seconds on the machine's clock) and on the host only after
    ``np.asarray`` (or ``Machine.get``) copies it back."""

    __slots__ = ("machine", "name", "aval", "ready", "_value", "pinned", "_captured", "_held")

    def __init__(self, machine: "Machine", name: str, aval: ShapeDtype, ready: float, value=None,
                 pinned: bool = True):
        self.machine, self.name, self.aval, self.ready = machine, name, aval, ready
        self._value, self.pinned, self._captured = value, pinned, False
        self._held = aval.nbytes  # device bytes this array holds until it is collected (as JAX frees them)
        machine.resident_bytes = getattr(machine, "resident_bytes", 0) + self._held

    def __del__(self):
        try:
            self.machine.resident_bytes -= self._held
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> str:
        return self.aval.dtype

    @property
    def nbytes(self) -> int:
        return self.aval.nbytes

    @property
    def has_value(self) -> bool:
        return self._value is not None

    def block_until_ready(self) -> "Array":
        """The host waits until the device has computed this array. No byte moves."""
        self.machine._wait_until(self._ready_or_raise("block_until_ready"), "block_until_ready",
                                 f"wait for {self.name} (no copy)")
        return self

    def _ready_or_raise(self, what: str) -> float:
        if self._captured:
            raise HostError(f"{what}: {self.name} was produced inside a graph capture and is computed only "
                               "when the graph is replayed (m.replay(graph))")
        return self.ready

    def __array__(self, dtype=None, copy=None):
        v = self.machine.get(self)
        if v is None:
            raise ArgumentError(f"{self.name} was computed from shapes only (no input values), so there is no "
                             "value to read; put NumPy arrays, not ShapeDtypes, to get values")
        return v if dtype is None else v.astype(dtype)

    def __repr__(self) -> str:
        return f"<Array {self.name}: {self.aval}, ready at {self.ready * 1e6:.3g} µs>"


@dataclass
class StreamEvent:
    """A point recorded on a stream (``cudaEventRecord``): it is reached when the stream's earlier work is done."""

    machine: "Machine"
    stream: int
    time: float

    def synchronize(self) -> None:
        """The host waits until the device reaches this point (``cudaEventSynchronize``)."""
        self.machine._wait_until(self.time, "event synchronize", f"wait for an event on stream {self.stream}")

    def elapsed(self, later: "StreamEvent") -> float:
        """Device time from this event to ``later`` (``cudaEventElapsedTime``, in seconds)."""
        if not isinstance(later, StreamEvent) or later.machine is not self.machine:
            raise ArgumentTypeError(f"StreamEvent.elapsed: later must be a StreamEvent of the same machine "
                                    f"(m.record_event()), got {later!r:.40}")
        return later.time - self.time


@dataclass
class CapturedGraph:
    """Kernels recorded by ``Machine.capture`` for one-launch replay (a CUDA Graph)."""

    stream: int
    nodes: list = field(default_factory=list)  # (name, duration, detail, flops, bytes, inputs, outputs, values)
    machine: object = field(default=None, repr=False)  # the Machine it was captured on (replays only there)

    def __len__(self) -> int:
        return len(self.nodes)


_CACHE: "OrderedDict[tuple[int, str], tuple[Graph, Program]]" = OrderedDict()


def _compiled(g: Graph, mode: str) -> Program:
    """``g`` compiled for ``mode`` (jit: the full pipeline; eager: no passes), kept for the next call as
    JAX keeps a jitted function's executable: the 64 most recent graphs, held so their ids stay theirs."""
    key = (id(g), mode)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is g:
        _CACHE.move_to_end(key)
        return hit[1]
    p = _compile(g) if mode == "jit" else _compile(g, passes=[])
    _CACHE[key] = (g, p)
    if len(_CACHE) > 64:
        _CACHE.popitem(last=False)
    return p


class _Ready:
    """A stand-in input that is ready at ``ready`` (a program's intermediate buffer)."""

    __slots__ = ("ready",)

    def __init__(self, ready: float):
        self.ready = ready
