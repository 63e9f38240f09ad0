"""XLA:GPU's command buffers: which kernels of a jitted program the host/device machine launches as one graph.

XLA:GPU records kernel sequences into CUDA graphs by default. Its default ``DebugOptions`` enable
*command buffers* for the command types FUSION, CUBLAS, CUBLASLT, CUSTOM_CALL and CUDNN, and set
``xla_gpu_graph_min_graph_size`` to 5 (``xla/debug_options_flags.cc``). A pass walks the compiled
program's thunks in order: a run of consecutive thunks of those types becomes one command buffer if it
holds at least 5 of them; a shorter run stays ordinary launches. On every execution a command buffer is
launched as one CUDA graph (recorded on the first, updated with the call's buffers afterwards).

labsim's model (:meth:`labsim.machines.host.Machine.call` in ``jit`` mode on a GPU): a fused elementwise
or reduction kernel is a FUSION command, a contraction a CUBLAS command, and every labsim kernel is of
one of these types, so a jitted program of 5 kernels or more is one command buffer and a shorter one
is launched kernel by kernel. labsim leaves out what splits a real program's runs (while loops,
collectives, host callbacks) and the one-off cost of recording the graph on the first call.
"""
from __future__ import annotations

import contextlib
import numbers
from typing import Sequence

from ..compiler.kernel import Kernel, KernelKind
from .events import Event, EventKind
from ..support.errors import ArgumentError, ArgumentTypeError
from .hostarrays import CapturedGraph, HostError

#: ``xla_gpu_graph_min_graph_size``'s default: the fewest commands XLA:GPU records into one command buffer
MIN_GRAPH_SIZE = 5
#: ``xla_gpu_enable_command_buffer``'s default: the command types XLA:GPU records into command buffers
COMMAND_TYPES = ("FUSION", "CUBLAS", "CUBLASLT", "CUSTOM_CALL", "CUDNN")


def command_type(kernel: Kernel) -> str:
    """The XLA:GPU command a labsim kernel stands for: a contraction is a cuBLAS GEMM ("CUBLAS"), every
    other kernel a fusion XLA emits itself ("FUSION")."""
    if not isinstance(kernel, Kernel):
        raise ArgumentTypeError(f"command_type: kernel must be a labsim Kernel, got {type(kernel).__name__}")
    return "CUBLAS" if kernel.kind is KernelKind.CONTRACTION else "FUSION"


def command_buffers(kernels: Sequence[Kernel], *, min_graph_size: int = MIN_GRAPH_SIZE,
                    types: Sequence[str] = COMMAND_TYPES) -> list[tuple[bool, list[int]]]:
    """Cut a program's kernels, in order, into segments as XLA:GPU's command-buffer pass does.

    Returns ``(graph, indices)`` per segment: ``graph`` is True for a run of at least ``min_graph_size``
    consecutive kernels whose command type is in ``types`` (launched as one CUDA graph), False for a
    kernel launched on its own. ``types=()`` turns command buffers off (XLA:
    ``--xla_gpu_enable_command_buffer=``)."""
    if isinstance(min_graph_size, bool) or not isinstance(min_graph_size, numbers.Integral) or min_graph_size < 1:
        raise ArgumentError(f"command_buffers: min_graph_size must be an integer >= 1, got {min_graph_size!r}")
    unknown = [t for t in types if t not in COMMAND_TYPES]
    if unknown:
        raise ArgumentError(f"command_buffers: types must be among {COMMAND_TYPES}, got {unknown}")
    out: list[tuple[bool, list[int]]] = []
    run: list[int] = []

    def flush():
        if len(run) >= min_graph_size:
            out.append((True, list(run)))
        else:
            out.extend((False, [i]) for i in run)
        run.clear()

    for i, k in enumerate(kernels):
        if command_type(k) in types:
            run.append(i)
        else:
            flush()
            out.append((False, [i]))
    flush()
    return out


class GraphLaunches:
    """The host/device machine's CUDA graphs: ``Machine.capture`` records launches, ``Machine.replay`` and
    jitted command buffers launch them with one call. A part of :class:`labsim.machines.host.Machine`,
    kept here with the rule that decides which kernels XLA:GPU puts in one graph."""

    @contextlib.contextmanager
    def capture(self, stream: int = 0):
        """Record the launches made inside the ``with`` block into a :class:`CapturedGraph`; nothing runs."""
        if self._capture is not None:
            raise HostError("capture: already capturing a graph")
        self._capture = CapturedGraph(self._stream(stream), machine=self)
        try:
            yield self._capture
        finally:
            self._capture = None

    def replay(self, graph: CapturedGraph) -> None:
        """Launch every kernel of ``graph`` with one launch call (``cudaGraphLaunch``); they run back to back."""
        if not isinstance(graph, CapturedGraph):
            raise ArgumentTypeError(f"replay: expected a CapturedGraph from m.capture(), got {graph!r:.40}")
        if graph.machine is not None and graph.machine is not self:
            raise ArgumentError(f"replay: this graph was captured on another Machine ({graph.machine.chip.name}, "
                                f"{len(graph)} kernel{'' if len(graph) == 1 else 's'}); a CUDA graph belongs to the device it was captured on: "
                                "capture it again on this machine (with m.capture())")
        if self._capture is not None:
            raise HostError("replay inside a capture: finish the capture first")
        if not graph.nodes:
            raise ArgumentError("replay: the graph is empty (no kernel was launched inside m.capture())")
        def node(n):
            name, d, detail, flops, nb, inputs, outs, values = n

            def done(end):
                for a, v in zip(outs, values):
                    a.ready, a._value, a._captured = end, v, False
            return (name, d, detail, flops, nb,
                    lambda: max((a.ready for a in inputs if not a._captured), default=0.0), done)

        self._graph_launch(graph.stream, f"graph ({len(graph)} kernels)", "one launch for the whole graph",
                           [node(n) for n in graph.nodes])

    def _graph_launch(self, s: int, name: str, label: str, nodes) -> None:
        """One launch call for a CUDA graph, then its nodes on stream ``s`` one after another, ``graph_gap``
        apart. ``nodes``: (name, duration, detail, flops, bytes, inputs_ready(), done(end)) per node."""
        self._enqueue_slot()
        t_call = self._host(name, self.launch_time, EventKind.LAUNCH, label)
        t = max(t_call + max(self.launch_latency, self.launch_time), self._stream_end.get(s, 0.0),
                self._device_free)
        self._started(t)
        for i, (kname, d, detail, flops, nb, inputs_ready, done) in enumerate(nodes):
            t = max(t + (self.graph_gap if i else 0.0), inputs_ready())
            self._events.append(Event(self._unit(s), kname, t, t + d, EventKind.KERNEL,
                                      detail + " (graph node)", nbytes=nb, flops=flops))
            t += d
            done(t)
        self._stream_end[s] = self._device_free = t


__all__ = ["MIN_GRAPH_SIZE", "COMMAND_TYPES", "command_type", "command_buffers", "GraphLaunches"]
