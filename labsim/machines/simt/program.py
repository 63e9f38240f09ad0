"""Running a compiled program's kernels on the SIMT machine, one after another (``ls.simt.run``).

Each kernel is lowered to the kernel IR (:func:`labsim.compiler.emit.kernel_ir`, for the chip's
generation) and run by :func:`~labsim.machines.simt.machine.run_ir` on real data; the buffers it writes
feed the kernels after it, as device memory does. The outputs are what ``ls.evaluate`` returns for the
program's graph, computed by the instructions the listings print.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...compiler.emit import kernel_ir
from ...compiler.kernel import Kernel
from ...compiler.program import Program
from ...core.dtypes import numpy_dtype
from ...core.interpreter import coerce_args
from ...core.ir import Literal
from ...hardware import Chip, get as get_chip
from ..events import Trace
from ...support.errors import ArgumentError, ArgumentTypeError
from .machine import KernelRun, SimtError, run_ir
from .runargs import MAX_BLOCKS_PER_SM, MAX_SMS, check_run_kwargs  # noqa: F401  (re-exported)

@dataclass
class ProgramRun:
    """Outputs (as ``ls.evaluate`` returns them) and one :class:`KernelRun` per kernel."""

    outputs: object
    kernels: list[KernelRun]
    chip: Chip | None = None  # the chip the kernels ran on

    @property
    def thread_instructions(self) -> int:
        return sum(k.thread_instructions for k in self.kernels)

    @property
    def warp_instructions(self) -> int:
        return sum(k.warp_instructions for k in self.kernels)

    @property
    def trace(self) -> Trace:
        """The run as an ``ls.Trace`` (what ``viz.timeline`` draws): the kernels one after another on
        stream 0, and on each SM that the issue model played, the span from its first to its last issued
        instruction of each kernel. Cycles become seconds at the SM clock the preset implies
        (:meth:`labsim.Chip.sm_clock`). Needs a timed run: ``ls.simt.run(..., trace="auto")`` or
        ``trace=True`` (the default, ``trace=False``, computes values only)."""
        untimed = [k.ir.name for k in self.kernels if k.trace is None]
        if untimed:
            raise SimtError(f"ls.simt.run(...).trace: kernel(s) {', '.join(untimed)} ran for values only; run "
                            f"with trace='auto' or trace=True to record the timing")
        parts, t0 = [], 0.0
        for k in self.kernels:  # each kernel's own trace (its WarpTrace), after the one before
            parts.append(k.trace.shifted(t0))
            t0 += k.trace.cycles / k.trace.clock_hz
        events = [e for p in parts for e in p.events]
        return Trace(events, chip_names=(self.chip.name,) if self.chip is not None else ())


def run(prog: Program, *args, chip="H100 SXM", select: str = "select", **kw) -> ProgramRun:
    """Run every kernel of ``prog`` on ``chip``'s SIMT machine with inputs ``args`` (flat, or the
    pytrees the function was traced with). ``select`` lowers ``where`` as ``"select"`` or as a
    ``"branch"`` (:func:`labsim.compiler.emit.kernel_ir`). Other keyword arguments go to :func:`run_ir` (``policy``,
    ``timing``, ``trace``, ...); ``trace`` defaults to ``False`` here (values only)."""
    if not isinstance(prog, Program):
        raise ArgumentTypeError(f"ls.simt.run: expected a compiled Program (ls.compile(graph)), got {type(prog).__name__}")
    c = get_chip(chip)
    if c.sm is None:
        raise SimtError(f"ls.simt.run: chip {c.name!r} is not a GPU with SMs; the SIMT machine runs NVIDIA-style "
                        f"GPUs (for example 'H100 SXM'); a TPU's programs run with ls.tpu.run")
    if select not in ("select", "branch"):
        raise ArgumentError(f"ls.simt.run: select must be 'select' or 'branch', got {select!r}")
    check_run_kwargs("ls.simt.run", c, kw)
    g = prog.graph
    buffers: dict[int, np.ndarray] = {}
    # checked as ls.evaluate checks them: count, structure, numeric, shape, a safe dtype
    for v, arr in zip(g.inputs, coerce_args(g, args, "ls.simt.run")):
        buffers[id(v)] = np.array(arr, copy=True).ravel()  # the machine never writes into the caller's array
    for n in g.nodes:
        if n.op == "constant":
            buffers[id(n.out)] = np.asarray(n.params["value"].array, numpy_dtype(n.out.aval.dtype)).ravel()
    kw.setdefault("trace", False)
    runs = []
    for k in prog.kernels:
        runs.append(run_kernel(k, buffers, c, select=select, **kw))
    outs = []
    for o in g.outputs:
        if isinstance(o, Literal):
            outs.append(np.asarray(o.value, numpy_dtype(o.aval.dtype)))
            continue
        buf = buffers[id(prog.buffer(o))]
        outs.append(buf.reshape(o.aval.shape).astype(numpy_dtype(o.aval.dtype)))
    return ProgramRun(outs[0] if len(outs) == 1 else tuple(outs), runs, c)


def run_kernel(k: Kernel, buffers: dict[int, np.ndarray], chip="H100 SXM", *, select: str = "select",
               **kw) -> KernelRun:
    """Run one kernel with its inputs from ``buffers`` (by ``id`` of the Var); writes its outputs there."""
    check_run_kwargs("ls.simt.run_kernel", get_chip(chip), kw)
    ir = kernel_ir(k, chip, select=select)
    missing = [str(v) for v in k.inputs if id(v) not in buffers]
    if missing:
        raise ArgumentError(f"kernel {k.name}: no data for {missing}")
    r = run_ir(ir, [buffers[id(v)] for v in k.inputs], chip, **kw)
    for v, (name, _, _) in zip(k.outputs, ir.params[ir.n_inputs:]):
        buffers[id(v)] = r.outputs[name]
    return r


__all__ = ["ProgramRun", "check_run_kwargs", "kernel_ir", "run", "run_kernel"]
