"""``KernelIR.verify()``: the checks every lowering's output passes, as ``Graph.verify`` checks a graph.

Run after every emit (:func:`labsim.compiler.emit.kernel_ir`, the block kernels of ``ls.blocks``). It
checks what the SIMT machine would otherwise trip over in the middle of a run:

* every register an instruction reads is written on some path from the kernel's entry;
* every branch target is a label, and every label stands before an instruction (or at the end);
* every guarded branch or exit has a reconvergence point that both of its paths reach;
* shared-memory accesses with a constant address (and the tiles of the matrix instructions and TMA
  copies) lie inside the kernel's shared memory;
* the launch (``ir.launch``) is the IR's own: its blocks and threads are ``ir.grid`` and ``ir.block``.
"""
from __future__ import annotations

from ..support.errors import ArgumentTypeError, LabsimError

import numpy as np

from .instr import Imm, Label, Param, reg_dtype, successors


class IRError(LabsimError, ValueError):
    """A kernel IR that breaks one of :func:`verify`'s rules (the message names the instruction)."""


def _where(ir: "KernelIR", pc: int) -> str:
    return f"kernel {ir.name}, pc {pc} ({ir.code[pc].text()})" if pc < len(ir.code) else f"kernel {ir.name}, end"


def check_labels(ir: "KernelIR") -> None:
    """Branch targets are labels the kernel defines; labels stand inside the code; parameters exist."""
    n = len(ir.code)
    for name, pc in ir.labels.items():
        if not 0 <= pc <= n:
            raise IRError(f"kernel {ir.name}: label {name} stands at {pc}, outside the code (0..{n})")
    for pc, ins in enumerate(ir.code):
        for s in ins.srcs:
            if isinstance(s, Label) and s.name not in ir.labels:
                raise IRError(f"{_where(ir, pc)}: branch to label {s.name}, which the kernel does not define")
        if ins.op == "bra" and not (ins.srcs and isinstance(ins.srcs[0], Label)):
            raise IRError(f"{_where(ir, pc)}: a branch needs a label as its target")
        for s in ins.srcs:
            if isinstance(s, Param) and not 0 <= s.index < len(ir.params):
                raise IRError(f"{_where(ir, pc)}: parameter {s} is not one of the kernel's {len(ir.params)}")


def _defined_before_use(ir: "KernelIR") -> None:
    """Forward data flow over the control-flow graph: the registers written on some path to each pc."""
    code, n = ir.code, len(ir.code)
    index: dict[str, int] = {}
    for ins in code:
        for r in ((ins.dst,) if ins.dst is not None else ()) + ins.reads():
            index.setdefault(r.name, len(index))
    gen = [(1 << index[ins.dst.name]) if ins.dst is not None else 0 for ins in code]
    succ = [successors(code, ir.labels, pc) for pc in range(n)]
    into = [0] * (n + 1)
    seen = [False] * (n + 1)
    seen[0] = True
    work = [0] if n else []
    while work:
        pc = work.pop()
        out = into[pc] | gen[pc]
        for t in succ[pc]:
            if t < n and (not seen[t] or out & ~into[t]):
                seen[t] = True
                into[t] |= out
                work.append(t)
    for pc, ins in enumerate(code):
        if not seen[pc]:
            continue  # unreachable code reads nothing
        for r in ins.reads():
            if not into[pc] >> index[r.name] & 1:
                raise IRError(f"{_where(ir, pc)}: register {r.name} is read before any instruction writes it")


def _reaches(ir: "KernelIR", start: int, goal: int, succ) -> bool:
    n = len(ir.code)
    stack, seen = [start], {start}
    while stack:
        pc = stack.pop()
        if pc == goal:
            return True
        if pc >= n:
            continue
        for t in succ(pc):
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return False


def _reconvergence(ir: "KernelIR") -> None:
    n = len(ir.code)
    succ = lambda pc: successors(ir.code, ir.labels, pc)
    for pc, ins in enumerate(ir.code):
        divergent = ins.guard is not None and ins.op in ("bra", "exit", "ret")
        if not divergent:
            if pc in ir.reconverge:
                raise IRError(f"{_where(ir, pc)}: a reconvergence point for an instruction that cannot diverge")
            continue
        rp = ir.reconverge.get(pc)
        if rp is None:
            raise IRError(f"{_where(ir, pc)}: a guarded branch without a reconvergence point")
        if not 0 <= rp <= n:
            raise IRError(f"{_where(ir, pc)}: reconvergence point {rp} is outside the code (0..{n})")
        for t in succ(pc):
            if not _reaches(ir, t, rp, succ):
                raise IRError(f"{_where(ir, pc)}: the path through {t} never reaches the reconvergence point {rp}")


def _span(ir: "KernelIR", pc: int, what: str, start: int, nbytes: int) -> None:
    if start < 0 or start + nbytes > ir.shared_bytes:
        raise IRError(f"{_where(ir, pc)}: {what} bytes {start}..{start + nbytes} lie outside the kernel's "
                      f"{ir.shared_bytes} B of shared memory")


def _shared(ir: "KernelIR") -> None:
    for pc, ins in enumerate(ir.code):
        at = ins.attrs
        if ins.op in ("ld", "st") and "shared" in ins.mod:
            if ir.shared_bytes <= 0:
                raise IRError(f"{_where(ir, pc)}: a shared-memory access in a kernel with no shared memory")
            if ins.srcs and isinstance(ins.srcs[0], Imm):
                _span(ir, pc, "the access's", int(ins.srcs[0].value), reg_dtype(ins.type).itemsize)
        elif ins.op in ("mma", "wgmma", "fma") and "tm" in at:
            isz = np.dtype(reg_dtype(at["dtype"])).itemsize
            _span(ir, pc, "the A tile's", at["a"], at["tm"] * at["tk"] * isz)
            _span(ir, pc, "the B tile's", at["b"], at["tk"] * at["tn"] * isz)
            _span(ir, pc, "the accumulators'", at["acc"], at["tm"] * at["tn"] * 4)
        elif ins.op == "cp" and at.get("bulk") and ins.srcs and isinstance(ins.srcs[0], Imm):
            br, bc = at["box"]
            _span(ir, pc, "the TMA box's", int(ins.srcs[0].value), br * bc * reg_dtype(at["dtype"]).itemsize)


def _launch(ir: "KernelIR") -> None:
    la = ir.launch
    if la.blocks != ir.grid or la.threads_per_block != ir.block:
        raise IRError(f"kernel {ir.name}: the launch ({la}) is not the IR's own grid {ir.grid} × block {ir.block}")


def verify(ir: "KernelIR") -> "KernelIR":
    """Raise :class:`IRError` if ``ir`` breaks a rule (see the module's docstring); return ``ir``."""
    if not all(hasattr(ir, a) for a in ("code", "labels", "reconverge", "launch")):  # a KernelIR
        raise ArgumentTypeError(f"verify: ir must be a KernelIR, got {type(ir).__name__}")
    check_labels(ir)
    _defined_before_use(ir)
    _reconvergence(ir)
    _shared(ir)
    _launch(ir)
    return ir


__all__ = ["IRError", "check_labels", "verify"]
