"""The host/device machine: a Python host thread driving one device through a command queue.

The chapter "Host and device" is built on it; ``ls.simulate`` (``labsim.machines.runtime``), the
one-call summary the opening chapter uses, runs on this machine too: labsim computes the host
timeline in one place. Short name: ``ls.host``.

    m = ls.host.Machine("H100 SXM")
    x = m.put(np.ones(4096, np.float32))      # host -> device copy; returns a future at once
    y = m.call(prog, x)                      # dispatch a compiled program; returns futures at once
    y.shape, y.dtype                         # known without waiting
    y.block_until_ready()                    # the host *waits*; no byte moves
    np.asarray(y)                            # the host reads the value: device -> host copy, then wait
    m.trace                                  # every event on one Trace (labsim.machines.events)

What the machine models, and the numbers it uses:

* **The host thread** pays for every call it makes. In *eager* mode each op costs ``op_time`` of
  Python and framework dispatch; under *jit* the whole call costs ``call_time`` once. Every kernel
  launch also costs the driver ``launch_time`` (default: the chip's ``launch_interval``, the launch
  throughput of one host thread, from the presets). ``op_time`` and ``call_time`` are labsim
  assumptions, not measured figures: they are parameters for that reason.
* **Launch latency** ``launch_latency`` (default: the chip's ``launch_overhead``) runs from the moment
  the host *calls* launch to the earliest start of the kernel. A kernel starts when its launch latency
  has passed, the host's launch call has returned, its stream's earlier work has finished, its inputs
  are ready and the device is free, whichever is latest.
* **The command queue** holds at most ``queue_depth`` commands (launches and copies) that the device
  has not started yet. A host that wants to enqueue into a full queue blocks (a WAIT event
  "queue full") until the device starts the oldest one.
* **Streams** order the work enqueued on them; work on different streams is ordered only by data
  (a kernel waits for its inputs, as JAX arranges) and by events (``record_event`` / ``wait_event``,
  as in CUDA). labsim runs **one kernel at a time** on the device (a simplification: a real GPU can
  run small kernels from several streams side by side), so what streams buy here is overlap of
  copies with kernels.
* **Copy engines** (``copy_engines`` per direction) move bytes over the host link by DMA at the link's
  bandwidth. From **pinned** host memory the copy engine reads directly; from **pageable** memory
  the host thread first copies the data into a pinned staging buffer at ``host_copy_bandwidth`` (a
  labsim assumption), and a read back into pageable memory returns only after the DMA and the copy out
  of the staging buffer (CUDA's documented behaviour for pageable memory {nvidia-cuda-runtime-sync}).
  labsim stages the whole buffer at once; a real driver pipelines it in chunks.
* **Synchronisation**: ``Array.block_until_ready`` waits for one value, ``Machine.get`` (and
  ``np.asarray``) copies a value back and waits for it, ``Machine.synchronize`` waits for everything,
  ``StreamEvent.synchronize`` for one recorded point.
* **CUDA Graphs**: launches made inside ``with m.capture() as graph`` are recorded, not run;
  ``m.replay(graph)`` launches them with one call: one ``launch_time``, one launch latency, then the
  kernels ``graph_gap`` apart (:data:`GRAPH_NODE_GAP`: NVIDIA's post measured 3.4 µs per 2.9 µs kernel
  in a graph on a V100). labsim charges the gap only between graph nodes. Under ``jit`` on a GPU, runs of
  5 or more kernels are launched as one graph, as XLA:GPU does by default (``labsim.machines.graphs``).
* **Device memory**: every live Array (put, resident, a launch's or a call's output) holds its bytes on
  the device until Python collects it, as JAX frees a buffer when its last reference goes;
  ``resident_bytes`` is their sum. A put or an output that would take it past the chip's
  ``hbm_capacity`` raises ``OutOfMemoryError`` naming the array and the excess (a program's
  intermediate buffers are not counted here; ``ls.estimate`` checks their peak).
* **A CPU device** (``synchronous=True``, what ``ls.simulate`` uses on a CPU preset): the host thread
  runs each kernel itself, so it waits for each kernel before it dispatches the next.

Values: arrays put with data carry NumPy values, and a program's outputs get the values of
``ls.evaluate`` on its graph, so a simulated program computes what NumPy computes. Arrays made from a
``ShapeDtype`` alone carry timing only.
"""
from __future__ import annotations

import heapq
import math
from typing import Any, Callable, Sequence

from ..compiler.kernel import Kernel
from ..compiler.program import Program
from ..core.avals import ShapeDtype
from ..core.interpreter import evaluate
from ..core.ir import Graph
from ..hardware import Chip, ChipKind, Link, get, get_link
from .events import HOST_CHIP, Direction, Event, EventKind, Trace, UnitId, UnitKind
from ..support.errors import ArgumentError, ArgumentTypeError, flag
from . import graphs as _graphs
from .graphs import MIN_GRAPH_SIZE, command_buffers  # noqa: F401  (ls.host.command_buffers, ...)
from .roofline import HOST_API_TIME, kernel_cost

# labsim assumptions (no primary source gives them; the chapter says so): the host's cost of one eager
# op (Python, the framework's dispatcher, argument checks) and of one jitted call (cache look-up,
# argument handling), and the host's memcpy bandwidth into a pinned staging buffer
EAGER_OP_TIME = 10e-6
JIT_CALL_TIME = 20e-6
HOST_COPY_BANDWIDTH = 10e9
QUEUE_DEPTH = 1024  # commands the device has not started yet; a labsim assumption (CUDA does not publish one)
# the device-side gap between two nodes of a CUDA graph: an estimate from NVIDIA's CUDA Graphs post
# (nvidia2019cudagraphs, V100, 2019): a 2.9 us kernel took 3.4 us per kernel inside a graph
GRAPH_NODE_GAP = 3.4e-6 - 2.9e-6

# the units of one device: the host thread (on the host), and on chip 0 stream 0 and copy engine 0 per direction
HOST = UnitId(HOST_CHIP, UnitKind.HOST_THREAD)
H2D = UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.H2D)
STREAM = UnitId(0, UnitKind.STREAM, 0)
D2H = UnitId(0, UnitKind.COPY_ENGINE, 0, Direction.D2H)

from .hostarrays import (Array, CapturedGraph, StreamEvent, _aval_of, _compiled, _count, _Ready,  # noqa: E402
                         HostError, _launch_value, _reserve, _seconds)
from .hostchoices import MODES, How, Mode  # noqa: E402
from . import hostloop as _loop  # noqa: E402
from .hostloop import EXPLICIT_KERNELS  # noqa: E402


class Machine(_graphs.GraphLaunches):
    """One host thread driving one device; every call advances the host clock ``now`` and records events.

    ``chip``: a preset name or a :class:`~labsim.hardware.Chip`. ``host_link``: a name from
    ``ls.hardware.HOST_LINKS`` ("PCIe Gen4 x16", "NVLink-C2C", ...) or a Link (default: the chip's).
    The times default to the chip's presets and labsim's assumptions (module constants); see the module
    docstring for what each one means.
    """

    def __init__(self, chip: Chip | str = "H100 SXM", *, host_link: Link | str | None = None,
                 launch_latency: float | None = None, launch_time: float | None = None,
                 op_time: float = EAGER_OP_TIME, call_time: float = JIT_CALL_TIME,
                 api_time: float = HOST_API_TIME, queue_depth: int = QUEUE_DEPTH, copy_engines: int = 1,
                 host_copy_bandwidth: float = HOST_COPY_BANDWIDTH, graph_gap: float = GRAPH_NODE_GAP,
                 command_buffers: bool | None = None, min_graph_size: int = _graphs.MIN_GRAPH_SIZE,
                 synchronous: bool = False):
        self.chip = get(chip)
        self.link = self.chip.host_link if host_link is None else get_link(host_link)
        self.launch_latency = _seconds(self.chip.launch_overhead if launch_latency is None else launch_latency,
                                       "launch_latency")
        self.launch_time = _seconds(self.chip.launch_interval if launch_time is None else launch_time,
                                    "launch_time")
        self.op_time = _seconds(op_time, "op_time")
        self.call_time = _seconds(call_time, "call_time")
        self.api_time = _seconds(api_time, "api_time")
        self.queue_depth = _count(queue_depth, "queue_depth")
        self.copy_engines = _count(copy_engines, "copy_engines")
        self.host_copy_bandwidth = _seconds(host_copy_bandwidth, "host_copy_bandwidth", positive=True)
        self.graph_gap = _seconds(graph_gap, "graph_gap")
        if command_buffers is not None and not isinstance(command_buffers, bool):
            raise ArgumentError(f"Machine: command_buffers must be True, False or None, got {command_buffers!r}")
        # None: XLA:GPU's default, command buffers on a GPU (not on a TPU or a CPU)
        self.command_buffers = self.chip.kind is ChipKind.GPU if command_buffers is None else command_buffers
        self.min_graph_size = _count(min_graph_size, "min_graph_size")
        if not isinstance(synchronous, bool):
            raise ArgumentError(f"Machine: synchronous must be True or False, got {synchronous!r}")
        self.synchronous = synchronous  # the host thread runs each kernel itself (a CPU)
        self.now = 0.0  # the host thread's clock
        self._events: list[Event] = []
        self._stream_end: dict[int, float] = {}
        self._device_free = 0.0  # one kernel at a time
        self._engines = {d: [0.0] * self.copy_engines for d in Direction}
        self._pending: list[float] = []  # start times of enqueued commands, a heap
        self._capture: CapturedGraph | None = None
        self._costs: dict[int, Any] = {}
        self._units: dict[int, UnitId] = {0: STREAM}
        self._n = 0
        self.resident_bytes = 0  # bytes of the live Arrays on the device (each frees its bytes when collected)

    # --- bookkeeping -------------------------------------------------------------------------------
    def _host(self, name: str, dt: float, kind: EventKind, detail: str = "", nbytes=None) -> float:
        """The host thread is busy for ``dt`` from ``now``; returns the start."""
        t = self.now
        if dt > 0:
            self._events.append(Event(HOST, name, t, t + dt, kind, detail, nbytes=nbytes))
        self.now = t + dt
        return t

    def _wait_until(self, t: float, name: str, detail: str) -> None:
        if self._capture is not None:
            raise HostError(f"{name} inside a graph capture: CUDA forbids synchronising while capturing")
        if t > self.now:
            self._events.append(Event(HOST, name, self.now, t, EventKind.WAIT, detail))
            self.now = t

    def _enqueue_slot(self) -> None:
        """Block while the command queue holds ``queue_depth`` commands the device has not started."""
        pend = self._pending
        while pend and pend[0] <= self.now:
            heapq.heappop(pend)
        if len(pend) >= self.queue_depth:
            t = pend[0]
            while len(pend) >= self.queue_depth:
                t = heapq.heappop(pend)
            self._events.append(Event(HOST, "queue full", self.now, t, EventKind.WAIT,
                                      f"{self.queue_depth} commands waiting; the host blocks"))
            self.now = t

    def _started(self, t: float) -> None:
        heapq.heappush(self._pending, t)

    def _stream(self, stream: int) -> int:
        return _count(stream, "stream", 0)

    def _unit(self, stream: int) -> UnitId:
        u = self._units.get(stream)
        if u is None:
            u = self._units[stream] = UnitId(0, UnitKind.STREAM, stream)
        return u

    def _fresh(self, base: str) -> str:
        self._n += 1
        return f"{base}{self._n}"

    # --- copies ------------------------------------------------------------------------------------
    def _engine(self, direction: Direction, earliest: float, nbytes: int) -> tuple[UnitId, float, float]:
        free = self._engines[direction]
        i = min(range(len(free)), key=lambda j: free[j])
        start = max(earliest, free[i])
        end = start + self.link.transfer_time(nbytes)
        free[i] = end
        return UnitId(0, UnitKind.COPY_ENGINE, i, direction), start, end

    def put(self, x, *, name: str | None = None, pinned: bool = True, stream: int = 0) -> Array:
        """Copy ``x`` (a NumPy array, or a ShapeDtype for timing only) host → device (``jax.device_put``).

        Returns at once with the future. From pageable memory (``pinned=False``) the host first copies the
        data into a pinned staging buffer; the DMA follows.
        """
        flag("Machine.put", "pinned", pinned)
        if name is not None and not isinstance(name, str):
            raise ArgumentTypeError(f"Machine.put: name must be a string, got {name!r}")
        if self._capture is not None:
            raise HostError("put inside a graph capture: labsim captures kernel launches only")
        s = self._stream(stream)
        aval, value = _aval_of("Machine.put", x)
        name = name or self._fresh("x")
        nb = aval.nbytes
        _reserve(self, "Machine.put", f"the array {name} ({aval})", nb)
        self._enqueue_slot()
        if not pinned:
            self._host(f"stage {name}", nb / self.host_copy_bandwidth, EventKind.COPY,
                       f"pageable: copy {nb:,} B into a pinned staging buffer", nbytes=nb)
        self._host(f"put {name}", self.api_time, EventKind.API, "enqueue copy to device", nbytes=nb)
        unit, start, end = self._engine(Direction.H2D, max(self.now, self._stream_end.get(s, 0.0)), nb)
        self._events.append(Event(unit, name, start, end, EventKind.COPY,
                                  f"{nb:,} B over {self.link.name} ({'pinned' if pinned else 'staged'})",
                                  nbytes=nb))
        self._started(start)
        self._stream_end[s] = end
        return Array(self, name, aval, end, value, pinned)

    def resident(self, x, *, name: str | None = None) -> Array:
        """An array already in device memory (put there by an earlier call, or a model's weights): no copy,
        ready now. ``x`` is a NumPy array or a ShapeDtype (timing only)."""
        aval, value = _aval_of("Machine.resident", x)
        name = name or self._fresh("x")
        _reserve(self, "Machine.resident", f"the array {name} ({aval})", aval.nbytes)
        return Array(self, name, aval, self.now, value)

    def get(self, a: Array, *, pinned: bool = True, stream: int = 0):
        """Read ``a`` on the host (``np.asarray``, ``jax.device_get``): copy it device → host, wait, return
        its value (None for an array made from shapes only). Into pageable memory the host also copies
        the bytes out of the staging buffer after the DMA."""
        return self.device_get(a, pinned=pinned, stream=stream)[0]

    def device_get(self, *arrays: Array, pinned: bool = True, stream: int = 0) -> tuple:
        """Read several arrays at once (``jax.device_get`` of a tuple): the host enqueues every copy to
        host, then waits once for the last. Returns their values (None for arrays of shapes only)."""
        for a in arrays:
            if not isinstance(a, Array) or a.machine is not self:
                raise ArgumentTypeError(f"get: expected an Array of this machine, got {type(a).__name__} {a!r:.40}")
        flag("Machine.get", "pinned", pinned)
        readies = [a._ready_or_raise("get") for a in arrays]
        if self._capture is not None:
            raise HostError("get inside a graph capture: CUDA forbids synchronising while capturing")
        s = self._stream(stream)
        last = self.now
        for a, ready in zip(arrays, readies):
            nb = a.nbytes
            self._enqueue_slot()
            self._host(f"read back: {a.name}", self.api_time, EventKind.API, "np.asarray: enqueue copy to host",
                       nbytes=nb)
            unit, start, end = self._engine(Direction.D2H, max(self.now, ready, self._stream_end.get(s, 0.0)), nb)
            self._events.append(Event(unit, a.name, start, end, EventKind.COPY,
                                      f"read back: {nb:,} B over {self.link.name}", nbytes=nb))
            self._started(start)
            self._stream_end[s] = max(self._stream_end.get(s, 0.0), end)
            last = max(last, end)
        self._wait_until(last, "read back", "wait for the copy to host (np.asarray)")
        if not pinned:
            for a in arrays:
                self._host(f"unstage {a.name}", a.nbytes / self.host_copy_bandwidth, EventKind.COPY,
                           f"pageable: copy {a.nbytes:,} B out of the staging buffer", nbytes=a.nbytes)
        return tuple(a._value for a in arrays)

    # --- kernels -----------------------------------------------------------------------------------
    def _cost(self, k: Kernel):
        c = self._costs.get(id(k))
        if c is None:
            c = self._costs[id(k)] = (k, kernel_cost(k, self.chip))
        return c[1]

    def _kernel(self, name: str, duration: float, detail: str, flops, nbytes, inputs: Sequence[Array],
                stream: int, host_cost: float, host_label: str) -> float:
        """Enqueue one kernel: the host's launch call, then the kernel on ``stream``. Returns its end."""
        self._enqueue_slot()
        t_call = self._host(name, host_cost, EventKind.LAUNCH, host_label)
        deps = max((a.ready for a in inputs), default=0.0)
        start = max(t_call + max(self.launch_latency, host_cost), self._stream_end.get(stream, 0.0),
                    self._device_free, deps)
        end = start + duration
        self._events.append(Event(self._unit(stream), name, start, end, EventKind.KERNEL,
                                  detail, nbytes=nbytes, flops=flops))
        self._started(start)
        self._stream_end[stream] = self._device_free = end
        if self.synchronous and self._capture is None:  # a CPU: the host thread runs the kernel itself
            self._wait_until(end, name, "runs the kernel on the cores")
        return end

    def launch(self, kernel: Kernel | str, *inputs: Array, duration: float | None = None, stream: int = 0,
               out: ShapeDtype | None = None, fn: Callable | None = None, eager: bool = True) -> Array:
        """Launch one kernel: a lowered :class:`~labsim.compiler.kernel.Kernel` (costed by the roofline
        on this chip) or a name with a ``duration`` in seconds. Returns the future of its output
        (``out``, default the kernel's first output, else the shape of ``fn``'s value, else a scalar token).
        ``fn`` computes the output's value from the inputs' values; a value whose shape differs from ``out``
        (or the kernel's output) is refused, so the array's shape, dtype and bytes are its value's. ``eager`` adds ``op_time`` of Python dispatch to the launch call."""
        s = self._stream(stream)
        flag("Machine.launch", "eager", eager)
        if isinstance(kernel, Kernel):
            kc = self._cost(kernel)
            name, d = kernel.name, kc.time if duration is None else _seconds(duration, "duration")
            detail, flops, nb = f"{kc.flops:,} FLOPs, {kc.bytes:,} B, {kc.bound.value}-bound", kc.flops, kc.bytes
            declared = out or (kernel.outputs[0].aval if kernel.outputs else None)
        elif isinstance(kernel, str):
            if duration is None:
                raise ArgumentError(f"launch: a kernel given by name ({kernel!r}) needs a duration in seconds")
            name, d, detail, flops, nb = kernel, _seconds(duration, "duration"), "", None, None
            declared = out
        else:
            raise ArgumentTypeError(f"launch: kernel must be a Kernel or a name, got {type(kernel).__name__} {kernel!r:.40}")
        for a in inputs:
            if not isinstance(a, Array) or a.machine is not self:
                raise ArgumentTypeError(f"launch {name}: inputs must be Arrays of this machine, got {a!r:.40}")
        aval, value = _launch_value(name, fn, inputs, out, declared)
        _reserve(self, "Machine.launch", f"the output of {name} ({aval})", aval.nbytes)
        res = Array(self, self._fresh(f"{name}:"), aval, 0.0, value)
        host_cost = self.launch_time + (self.op_time if eager else 0.0)
        if self._capture is not None:
            self._capture.nodes.append((name, d, detail, flops, nb, tuple(inputs), (res,), (value,)))
            res._captured = True
            return res
        res.ready = self._kernel(name, d, detail, flops, nb, inputs, s, host_cost,
                                 "eager op: dispatch and launch" if eager else "launch")
        return res

    def _program(self, prog: Program | Graph, mode: str) -> Program:
        if isinstance(prog, Program):
            return prog
        if isinstance(prog, Graph):
            return _compiled(prog, Mode(mode).value)
        raise ArgumentTypeError(f"call: prog must be a Program or a traced Graph, got {type(prog).__name__} {prog!r:.40}")

    def call(self, prog: Program | Graph, *args: Array, mode: Mode | str = Mode.JIT, stream: int = 0):
        """Dispatch one call of ``prog`` and return its output future(s) at once.

        ``mode="jit"``: the host pays ``call_time`` once, then ``launch_time`` per kernel. ``"eager"``: each
        kernel is one op, and the host pays ``op_time + launch_time`` for each. A traced Graph is compiled
        for the mode (``jit``: the full pipeline; ``eager``: no passes, one kernel per op).
        """
        mode = Mode.of(mode, "mode", ArgumentError, where="Machine.call")
        s = self._stream(stream)
        prog = self._program(prog, mode)
        g = prog.graph
        if len(args) != len(g.inputs):
            raise ArgumentTypeError(f"call: {g.name} takes {len(g.inputs)} inputs, got {len(args)}")
        for a, v in zip(args, g.inputs):
            if not isinstance(a, Array) or a.machine is not self:
                raise ArgumentTypeError(f"call: inputs must be Arrays of this machine (m.put(x)), got {a!r:.40}")
            if tuple(a.shape) != tuple(v.aval.shape) or a.dtype != v.aval.dtype:
                raise ArgumentError(f"call: {g.name} expects {v.aval} for input {g.inputs.index(v)}, got {a.aval}")
        values = None
        if all(a.has_value for a in args):
            out = evaluate(g, *(a._value for a in args))
            values = out if isinstance(out, tuple) else (out,)
        ready = {id(v): a.ready for v, a in zip(g.inputs, args)}
        for c in prog.constants:
            ready[id(c)] = 0.0
        names = g.names()
        _reserve(self, "Machine.call", f"the outputs of {g.name}", sum(o.aval.nbytes for o in g.outputs))
        outs = [Array(self, names.get(id(o), f"out{i}"), o.aval, 0.0, None if values is None else values[i])
                for i, o in enumerate(g.outputs)]
        if mode is Mode.JIT and self._capture is None:
            self._host(f"call {g.name}", self.call_time, EventKind.API, "jit: one dispatch for the whole call")
        kernels = prog.kernels
        if mode is Mode.JIT and self._capture is None and self.command_buffers:
            segments = _graphs.command_buffers(kernels, min_graph_size=self.min_graph_size)
        else:
            segments = [(False, [i]) for i in range(len(kernels))]
        for graph, idx in segments:
            if graph:  # one command buffer: one launch, then its kernels as graph nodes
                def node(k):
                    kc = self._cost(k)
                    dep = lambda: max((ready.get(id(prog.buffer(v)), ready.get(id(v), 0.0)) for v in k.inputs),
                                      default=0.0)
                    return (k.name, kc.time, f"{kc.flops:,} FLOPs, {kc.bytes:,} B, {kc.bound.value}-bound",
                            kc.flops, kc.bytes, dep, lambda end: ready.update({id(o): end for o in k.outputs}))
                self._graph_launch(s, f"command buffer ({len(idx)} kernels)",
                                   "jit: XLA:GPU launches the command buffer as one CUDA graph",
                                   [node(kernels[i]) for i in idx])
                continue
            k = kernels[idx[0]]
            kc = self._cost(k)
            deps = [ready.get(id(prog.buffer(v)), ready.get(id(v), 0.0)) for v in k.inputs]
            detail = f"{kc.flops:,} FLOPs, {kc.bytes:,} B, {kc.bound.value}-bound"
            host_cost = self.launch_time + (self.op_time if mode is Mode.EAGER else 0.0)
            if self._capture is not None:
                self._capture.nodes.append((k.name, kc.time, detail, kc.flops, kc.bytes, (), (), ()))
                end = math.inf
            else:
                token = _Ready(max(deps, default=0.0))
                end = self._kernel(k.name, kc.time, detail, kc.flops, kc.bytes, (token,), s, host_cost,
                                   "eager op: dispatch and launch" if mode is Mode.EAGER
                                   else "call (dispatch and thread pool)" if self.synchronous else "launch")
            for o in k.outputs:
                ready[id(o)] = end
        for o, a in zip(g.outputs, outs):
            a.ready = ready.get(id(prog.buffer(o)), ready.get(id(o), 0.0))
            if self._capture is not None and self._capture.nodes:  # ready when the graph's last kernel ends
                a._captured = True
                node = self._capture.nodes[-1]
                self._capture.nodes[-1] = node[:6] + (node[6] + (a,), node[7] + (a._value,))
        return outs[0] if len(outs) == 1 else tuple(outs)

    # --- synchronisation and streams ---------------------------------------------------------------
    def synchronize(self) -> None:
        """The host waits until every stream and copy engine is idle (``cudaDeviceSynchronize``)."""
        t = max([self._device_free, *self._stream_end.values(), *(x for v in self._engines.values() for x in v)])
        self._wait_until(t, "synchronize", "wait until the device is idle")

    def record_event(self, stream: int = 0) -> StreamEvent:
        """Record a point on ``stream``: reached when the work enqueued on it so far is done."""
        s = self._stream(stream)
        self._host("record event", self.api_time, EventKind.API, f"on stream {s}")
        return StreamEvent(self, s, self._stream_end.get(s, 0.0))

    def wait_event(self, event: StreamEvent, stream: int = 0) -> None:
        """Later work on ``stream`` starts only after ``event`` (``cudaStreamWaitEvent``); the host does not wait."""
        if not isinstance(event, StreamEvent) or event.machine is not self:
            raise ArgumentTypeError(f"wait_event: expected a StreamEvent of this machine, got {event!r:.40}")
        s = self._stream(stream)
        self._host("wait event", self.api_time, EventKind.API, f"stream {s} waits for stream {event.stream}")
        self._stream_end[s] = max(self._stream_end.get(s, 0.0), event.time)

    # --- results -----------------------------------------------------------------------------------
    @property
    def trace(self) -> Trace:
        """Every event so far: host thread, H→D copy engines, streams, D→H copy engines, in that order."""
        used = {e.unit for e in self._events}

        def key(u: UnitId):
            order = {UnitKind.HOST_THREAD: 0, UnitKind.STREAM: 2}.get(u.kind, 1 if u.direction is Direction.H2D else 3)
            return (order, u.index)

        return Trace(tuple(self._events), tuple(sorted(used, key=key)), chip_names=(self.chip.name,))

    @property
    def device_time(self) -> float:
        """When the device finishes everything enqueued so far."""
        return max([self._device_free, *self._stream_end.values(), *(x for v in self._engines.values() for x in v)])


def kernel_loop(n: int, duration: float, *, chip: Chip | str = "H100 SXM", how: How | str = How.ASYNC,
                fused: int = 1, eager: bool = True, **machine_kw) -> Machine:
    """The chapter's experiment: ``n`` kernels of ``duration`` seconds each, dispatched eagerly, on a new
    :class:`Machine` (``machine_kw`` go to it), returned after the loop. ``how``: "async", "sync" or
    "graph"; ``fused`` ops per kernel; ``eager`` adds ``op_time`` per launch. Past
    :data:`EXPLICIT_KERNELS` kernels the steady state is aggregated (:mod:`labsim.machines.hostloop`)."""
    return _loop.kernel_loop(Machine, n, duration, chip=chip, how=how, fused=fused, eager=eager, **machine_kw)


__all__ = ["Array", "CapturedGraph", "Machine", "StreamEvent", "kernel_loop", "How", "Mode", "HOST", "H2D", "STREAM",
           "D2H", "command_buffers", "EAGER_OP_TIME", "JIT_CALL_TIME", "HOST_COPY_BANDWIDTH", "QUEUE_DEPTH",
           "GRAPH_NODE_GAP", "MIN_GRAPH_SIZE", "MODES", "EXPLICIT_KERNELS"]
