"""Decoded instructions: the machine's fast path while every warp of a wave runs the same instruction
with all 32 lanes active.

In that case an instruction's operands are whole register arrays (one row per warp, one column per
lane), immediates are constants and a parameter's address is one array: none of them needs looking up
again. :func:`decode` turns each register-to-register instruction of a kernel, once per wave, into a
value rule and its operand arrays; the machine then runs it as ``dst[...] = rule(*operands)``. The rule
is the same one the general handlers of :mod:`.values` use (the ALU table for an instruction that names
its Op), so the values are the same to the bit; only the lookups are saved. Loads, stores, shared
memory, copies, matrix tiles and control flow take the general path.
"""
from __future__ import annotations

import numpy as np

from ...compiler.isa import Imm, KernelIR, Param, Reg, Special
from ...core import alu
from .state import _Memory, _Wave, reg_dtype
from .values import _ARITH, _UNARY, INSTRUCTIONS, _cmp, _converted, _wide_mad


def _value(wave: _Wave, mem: _Memory, s):
    """Operand ``s`` for every warp of the wave at once (a register's array itself, not a copy)."""
    if isinstance(s, Reg):
        return wave.regs[s.name]
    if isinstance(s, Special):
        return wave.special[s]
    if isinstance(s, Imm):
        return np.asarray(s.value, dtype=reg_dtype(s.type))
    if isinstance(s, Param):
        return np.asarray(mem.base(s.index), np.uint64)  # the same for every lane: broadcast when written
    return None


def _rule(ins):
    """The value rule of a register-to-register instruction, chosen as ``values._execute`` chooses its
    handler; None for the instructions that take the general path."""
    op = ins.op
    h = INSTRUCTIONS.get(op)
    if h is not None:
        if op == "setp":
            return _cmp(ins.mod[0])
        if op == "selp":
            return lambda a, b, p: np.where(p, a, b)
        if op == "mad":
            return _wide_mad if "wide" in ins.mod else (lambda a, b, c: a * b + c)
        if op in ("mov", "cvt"):
            return lambda a: _converted(ins, a)
        return None
    rule = ins.attrs.get("alu")
    if rule is not None:
        return alu.ALU.get(rule)
    if op in _ARITH:
        return _ARITH[op]
    return _UNARY.get(op)


def decode(ir: KernelIR, wave: _Wave, mem: _Memory) -> list:
    """Per pc: ``(rule, operand arrays, destination array)`` for the fast path, or None."""
    out = []
    for ins in ir.code:
        fast = None
        if ins.dst is not None and ins.guard is None and not (ins.op == "ld" and "param" not in ins.mod):
            rule = (lambda a: a) if ins.op == "ld" else _rule(ins)
            args = [_value(wave, mem, s) for s in ins.srcs]
            if rule is not None and all(a is not None for a in args):
                fast = (rule, tuple(args), wave.regs[ins.dst.name])
        out.append(fast)
    return out
