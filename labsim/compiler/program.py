"""A compiled program: the optimised graph, its kernels in launch order, and every pass's graph."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.ir import Graph, Var
from ..support.tables import html_table
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

    def buffer(self, v: Var) -> Var:
        """The device buffer that holds ``v`` (a reshape's result shares its operand's buffer)."""
        return self.alias.get(id(v), v)

    def table(self) -> list[dict]:
        """One row per kernel: name, kind, ops, FLOPs, bytes read and written, launch shape."""
        return [{"kernel": k.name, "kind": k.kind.value, "ops": " → ".join(k.ops), "FLOPs": k.flops,
                 "transcendentals": k.transcendentals, "bytes read": k.bytes_read,
                 "bytes written": k.bytes_written, "launch": str(k.launch)} for k in self.kernels]

    def _repr_html_(self) -> str:
        return html_table(self.table(), caption=f"{len(self.kernels)} kernel(s) for {self.graph.name}",
                          units={"FLOPs": "FLOP", "bytes read": "B", "bytes written": "B"})

    def __repr__(self) -> str:
        return f"<Program {self.graph.name}: {len(self.kernels)} kernels, {self.flops} FLOPs, {self.bytes} bytes>"
