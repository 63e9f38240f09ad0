"""The executable kernel IR: what one GPU thread runs, as a short list of typed instructions.

Introduced in "Inside a GPU" and "Warps: scheduling and divergence". ``labsim.compiler.emit`` lowers a
:class:`~labsim.compiler.kernel.Kernel` into a :class:`KernelIR`; ``labsim.machines.simt`` executes it
with real values (``ls.simt.run``); :meth:`KernelIR.render` prints it as labsim's *pseudo-PTX*, and that
rendering is the kernel's listing, so a listing can no longer say something the machine does not run.

The IR is close to PTX where it can be:

* **typed virtual registers** (:class:`Reg`): ``%r`` 32-bit integers, ``%rd`` 64-bit addresses, ``%f``
  floating point, ``%p`` predicates; each has a PTX type (``f32``, ``u32``, ``u64``, ``pred``, ...).
* **special registers** (:class:`Special`): ``%tid.x`` (thread in block), ``%ntid.x`` (threads per
  block), ``%ctaid.x`` (block in grid), ``%nctaid.x``, ``%laneid``, ``%warpid``.
* **predicates and guarded branches**: ``setp.lt.u32 %p1, %r1, %r2;`` and ``@%p1 bra LABEL;``.
* **loads and stores with explicit address arithmetic**: ``ld.param.u64 %rd1, [x];``,
  ``mad.wide.u32 %rd2, %r1, 4, %rd1;``, ``ld.global.f32 %f1, [%rd2];``.
* arithmetic on the FMA lanes, special functions on the SFUs (``ex2.approx``, ``lg2.approx``,
  ``rcp.approx``, ``rsqrt.approx``, ``tanh.approx``), shuffles (``shfl.sync.bfly``), shared memory and
  barriers (``bar.sync``) for reductions, and a tile-level matrix instruction for contractions
  (``mma.sync`` fed by ``cp.async`` on Ampere, ``wgmma`` fed by TMA on Hopper).

What is labsim's, not PTX's: 16-bit floats are held in registers as the reference interpreter holds
them (``labsim.core.dtypes.numpy_dtype``); integer ``div``/``rem`` on kernel *values* follow the IR's
floor-division semantics; library functions without a PTX instruction (``erf``, ``pow``) are shown as
``call``; the matrix instructions work on whole shared-memory tiles.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

from dataclasses import dataclass, field

from .launch import Launch
from .instr import (Imm, Instr, Label, Operand, Param, Reg, Special, Pipe, ptx_type, reg_dtype,  # noqa: F401
                    successors)


@dataclass
class KernelIR:
    """One kernel in the executable IR.

    ``params`` name the buffers the kernel reads and writes (inputs first, then outputs), with their
    dtypes and element counts; ``code`` is the instruction list and ``labels`` maps a label to the index
    of the instruction it stands before. ``grid`` and ``block`` are the launch (1-D: blocks, threads per
    block); ``shared_bytes`` the static shared memory per block. ``tiles`` names shared-memory tiles and
    accumulators of a contraction (name -> (rows, cols)). ``reconverge`` maps the index of each
    potentially divergent branch to its reconvergence point (the immediate post-dominator), computed
    by :func:`immediate_post_dominators`. ``launch`` (an ``ls.Launch``) is the launch every reader uses
    (roofline, SIMT occupancy, listing): grid, block and the shared memory a real kernel declares. For
    a contraction that is less than ``shared_bytes``, labsim's own layout (16-bit tiles held as fp32,
    accumulators in shared memory); elsewhere the two are equal.
    """

    name: str
    params: list[tuple[str, str, int]]  # (name, labsim dtype, elements)
    n_inputs: int
    code: list[Instr]
    labels: dict[str, int]
    grid: int
    block: int
    shared_bytes: int = 0
    header: list[str] = field(default_factory=list)
    tiles: dict = field(default_factory=dict)
    arch: str = ""
    reconverge: dict[int, int] = field(default_factory=dict)
    launch: Launch | None = None

    def __post_init__(self) -> None:
        from .verify_ir import check_labels
        check_labels(self)  # before the post-dominators, which follow the branches
        if not self.reconverge:
            self.reconverge = immediate_post_dominators(self.code, self.labels)
        if self.launch is None:
            self.launch = Launch((self.grid, 1, 1), (self.block, 1, 1), self.shared_bytes)

    def verify(self) -> "KernelIR":
        """Check the IR (as ``Graph.verify`` checks a graph): raises :class:`IRError` naming the
        instruction. See :func:`labsim.compiler.verify_ir.verify`."""
        from .verify_ir import verify
        verify(self)
        return self

    @property
    def warps_per_block(self) -> int:
        return -(-self.block // 32)

    def registers(self) -> list[Reg]:
        seen: dict[str, Reg] = {}
        for ins in self.code:
            for r in ((ins.dst,) if ins.dst is not None else ()) + ins.reads():
                seen.setdefault(r.name, r)
        return list(seen.values())

    @property
    def registers_per_thread(self) -> int:
        """32-bit registers a thread needs if every virtual register kept its own (an upper bound: real
        register allocation reuses registers; 64-bit registers count twice, predicates not at all)."""
        return sum(2 if r.type in ("u64", "s64", "f64") else 0 if r.type == "pred" else 1 for r in self.registers())

    def render(self) -> str:
        """The listing: labsim's pseudo-PTX, one instruction per line, labels on their own lines."""
        at = {}
        for name, pc in self.labels.items():
            at.setdefault(pc, []).append(name)
        params = ", ".join(f".param .u64 {n}" for n, _, _ in self.params)
        lines = list(self.header)
        lines.append(f".entry {self.name.replace('.', '_')}({params})")
        lines.append("{")
        if self.shared_bytes:
            note = "" if self.launch.shared_bytes == self.shared_bytes else \
                f"   // labsim's layout; the launch declares {self.launch.shared_bytes} B"
            lines.append(f"  .shared .align 16 .b8 smem[{self.shared_bytes}];{note}")
        for pc, ins in enumerate(self.code):
            for name in at.get(pc, ()):
                lines.append(f"{name}:")
            t = "  " + ins.text()
            if ins.comment:
                t = f"{t:<52} // {ins.comment}"
            lines.append(t.rstrip())
        for name in at.get(len(self.code), ()):
            lines.append(f"{name}:")
        lines.append("}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def count(self, op: str | None = None, pipe: Pipe | None = None) -> int:
        """Static count of instructions with mnemonic prefix ``op`` and/or on ``pipe``."""
        return sum(1 for i in self.code if (op is None or i.mnemonic().startswith(op))
                   and (pipe is None or i.pipe is pipe))


def immediate_post_dominators(code: list[Instr], labels: dict[str, int]) -> dict[int, int]:
    """For each guarded branch (or guarded exit), its immediate post-dominator: the first instruction
    every path from it must reach, where a divergent warp's two halves meet again (GPGPU-Sim's rule).
    The exit node is ``len(code)``. Computed by the classic iterative data-flow over post-dominator sets.
    """
    n = len(code)
    succ = {pc: successors(code, labels, pc) for pc in range(n)}
    full = (1 << (n + 1)) - 1
    pdom = [full] * (n + 1)  # bit sets: bit d of pdom[v] = d post-dominates v
    pdom[n] = 1 << n
    changed = True
    while changed:
        changed = False
        for v in reversed(range(n)):
            new = full
            for t in succ[v]:
                new &= pdom[t]
            new |= 1 << v
            if new != pdom[v]:
                pdom[v] = new
                changed = True
    out = {}
    for pc, ins in enumerate(code):
        if ins.guard is not None and ins.op in ("bra", "exit", "ret"):
            strict = pdom[pc] & ~(1 << pc)
            # the immediate post-dominator: the strict post-dominator that all the others post-dominate
            out[pc] = next(c for c in range(n + 1) if strict >> c & 1 and pdom[c] & strict == strict)
    return out


class Builder:
    """Writes a :class:`KernelIR` instruction by instruction: fresh typed registers, labels, guards."""

    _PREFIX = {"pred": "%p", "u64": "%rd", "s64": "%rd", "f64": "%fd"}

    def __init__(self) -> None:
        self.code: list[Instr] = []
        self.labels: dict[str, int] = {}
        self._n: dict[str, int] = {}

    def reg(self, type: str) -> Reg:
        prefix = self._PREFIX.get(type) or ("%f" if type.startswith(("f", "bf", "e4", "e5")) else "%r")
        self._n[prefix] = self._n.get(prefix, 0) + 1
        return Reg(f"{prefix}{self._n[prefix]}", type)

    def label(self, name: str) -> Label:
        if name in self.labels:
            raise ArgumentError(f"label {name} defined twice")
        self.labels[name] = len(self.code)
        return Label(name)

    def fresh_label(self, base: str) -> str:
        self._n["L" + base] = self._n.get("L" + base, 0) + 1
        return f"{base}_{self._n['L' + base]}"

    def emit(self, op: str, dst: Reg | None = None, *srcs, type: str = "", mod: tuple = (), guard: Reg | None = None,
             neg: bool = False, pipe: Pipe = Pipe.ALU, comment: str = "", **attrs) -> Reg | None:
        self.code.append(Instr(op, dst, tuple(srcs), type, tuple(mod), guard, neg, pipe, attrs, comment))
        return dst

    def op(self, op: str, type: str, *srcs, mod: tuple = (), pipe: Pipe = Pipe.ALU, comment: str = "",
           dst_type: str | None = None, **attrs) -> Reg:
        """``dst = op.type srcs`` into a fresh register; returns it."""
        d = self.reg(dst_type or type)
        self.emit(op, d, *srcs, type=type, mod=mod, pipe=pipe, comment=comment, **attrs)
        return d

    def build(self, name: str, params, n_inputs: int, grid: int, block: int, **kw) -> KernelIR:
        return KernelIR(name, list(params), n_inputs, list(self.code), dict(self.labels), grid, block, **kw)


__all__ = ["Builder", "Imm", "Instr", "KernelIR", "Label", "Operand", "Param", "Reg", "Special", "Pipe",
           "immediate_post_dominators", "ptx_type", "reg_dtype", "successors"]
