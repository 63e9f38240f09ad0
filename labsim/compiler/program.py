"""A compiled program: the optimised graph, its kernels in launch order, and every pass's graph."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.ir import Graph, Var
from ..support.tables import html_table
from ..support.text import plural
from .buffers import assign_buffers
from .kernel import Kernel


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled program: the optimised graph, its kernels in launch order, and every pass's graph."""

    graph: Graph
    kernels: tuple[Kernel, ...]
    stages: tuple[tuple[str, Graph], ...]
    constants: tuple[Var, ...] = ()
    alias: dict = field(default_factory=dict, repr=False)

    @property
    def source(self) -> Graph:
        return self.stages[0][1]

    @property
    def flops(self) -> int:
        return sum(k.flops for k in self.kernels)

    @property
    def transcendentals(self) -> int:
        return sum(k.transcendentals for k in self.kernels)

    @property
    def bytes_read(self) -> int:
        return sum(k.bytes_read for k in self.kernels)

    @property
    def bytes_written(self) -> int:
        return sum(k.bytes_written for k in self.kernels)

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def plan(self):
        """The fusion plan the kernels follow (:class:`~labsim.compiler.fusion.FusionPlan`), or None."""
        return self.graph.plan

    @property
    def buffers(self):
        """The buffer assignment (lifetimes, offsets, peak memory): :func:`labsim.compiler.buffers.assign_buffers`."""
        return assign_buffers(self)

    def stage(self, name: str) -> Graph:
        """The graph after pass ``name`` (``"traced"``: the graph the program was compiled from)."""
        for n, g in self.stages:
            if n == name:
                return g
        raise KeyError(f"no stage {name!r}; the stages are {[n for n, _ in self.stages]}")

    def max_error(self, *, positive: bool = False, seed: int = 0) -> float:
        """Largest absolute difference between the outputs of the traced graph and of the compiled graph,
        evaluated with NumPy on the same random float32 inputs: standard normal, or uniform in [0.5, 2)
        with ``positive=True`` (for a ``sqrt`` or ``log``). 0 or float32 rounding when every pass kept the
        program's meaning."""
        import numpy as np

        from ..core.interpreter import evaluate

        rng = np.random.default_rng(seed)
        draw = (lambda s: rng.uniform(0.5, 2.0, s)) if positive else rng.standard_normal
        args = [np.asarray(draw(a.shape), np.float32) for a in self.source.in_avals]
        a, b = evaluate(self.source, *args), evaluate(self.graph, *args)
        a, b = (a, b) if isinstance(a, tuple) else ((a,), (b,))
        return max((float(np.max(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64)), initial=0.0))
                    for u, v in zip(a, b)), default=0.0)

    def buffer(self, v: Var) -> Var:
        """The device buffer that holds ``v`` (a reshape's result shares its operand's buffer)."""
        return self.alias.get(id(v), v)

    def table(self) -> list[dict]:
        """One row per kernel: name, kind, ops, FLOPs, bytes read and written, launch shape."""
        return [{"kernel": k.name, "kind": k.kind.value, "ops": k.ops_summary(), "FLOPs": k.flops,
                 "transcendentals": k.transcendentals, "bytes read": k.bytes_read,
                 "bytes written": k.bytes_written, "launch": str(k.launch)} for k in self.kernels]

    def _repr_html_(self) -> str:
        return html_table(self.table(), caption=f"{plural(len(self.kernels), 'kernel')} for {self.graph.name}",
                          units={"FLOPs": "FLOP", "bytes read": "B", "bytes written": "B"})

    def __repr__(self) -> str:
        return f"<Program {self.graph.name}: {len(self.kernels)} kernels, {self.flops} FLOPs, {self.bytes} bytes>"
