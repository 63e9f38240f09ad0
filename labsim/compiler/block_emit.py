"""Lower a Triton-like block kernel (``ls.blocks``) to the executable kernel IR, so the SIMT machine runs it.

``ls.blocks`` runs a ``@tl.jit`` kernel the way Triton's interpreter does: each program's block at once,
with NumPy. Here the same kernel is *traced* instead: it is called once with symbolic values in place of
``tl.program_id``, ``tl.arange`` and the arrays, which records its operations in program order; then
each operation becomes instructions of a :class:`~labsim.compiler.isa.KernelIR`, as Triton compiles a
program to PTX:

* one CTA runs one program: ``tl.program_id(0)`` is ``%ctaid.x``; the CTA has ``num_warps * 32``
  threads (fewer if the block is smaller);
* each thread handles ``BLOCK_SIZE / threads`` elements of the block: element ``tid + k * threads``
  for k = 0, 1, ..., so that each warp-wide load touches consecutive addresses (coalesced);
* the mask is a predicate (``setp.lt.s32 %p, offsets, n``) that guards the loads and stores
  (``@%p ld.global``, ``@%p st.global``): lanes past the end compute but neither read nor write;
  a masked load first sets its register to ``other``.

Lowered: ``+ - * /``, comparisons, ``&`` and ``|`` of masks, unary minus, ``tl.maximum``, ``tl.where``,
``tl.exp`` (one instruction that computes exp as ``ls.evaluate`` does; PTX: ``ex2.approx`` of x·log2 e), ``tl.sqrt``, ``tl.program_id(0)``, ``tl.num_programs(0)``,
``tl.arange``, ``tl.load`` and ``tl.store`` with ``mask`` (elementwise block programs, one-dimensional
grids). Anything else raises :class:`~labsim.compiler.blocks.BlockError` naming the operation. Runtime
scalars (``n_elements``) become immediates: each launch is lowered for its own values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..support.text import plural
from ..core.ops import Op
from . import blocks as _bl
from .blocks import WARP, BlockError, JITFunction
from .emit import LOWERING
from .isa import Builder, Imm, KernelIR, Param, Special, Pipe, ptx_type

_OPS = {"add": Op.ADD, "sub": Op.SUBTRACT, "mul": Op.MULTIPLY, "div": Op.DIVIDE, "max": Op.MAXIMUM}

MAX_PER_THREAD = 64  # elements per thread the lowering unrolls at most


class _Sym:
    """A symbolic block (or scalar) value of a traced kernel: an operation and its operands."""

    __slots__ = ("tracer", "op", "args", "kind", "type", "scalar", "id")

    def __init__(self, tracer, op, args, kind, type_, scalar):
        self.tracer, self.op, self.args, self.kind, self.type, self.scalar = tracer, op, args, kind, type_, scalar
        self.id = len(tracer.nodes)
        tracer.nodes.append(self)

    def __add__(self, o): return self.tracer.binary("add", self, o)
    def __radd__(self, o): return self.tracer.binary("add", o, self)
    def __sub__(self, o): return self.tracer.binary("sub", self, o)
    def __rsub__(self, o): return self.tracer.binary("sub", o, self)
    def __mul__(self, o): return self.tracer.binary("mul", self, o)
    def __rmul__(self, o): return self.tracer.binary("mul", o, self)
    def __truediv__(self, o): return self.tracer.binary("div", self, o)
    def __rtruediv__(self, o): return self.tracer.binary("div", o, self)
    def __lt__(self, o): return self.tracer.compare("lt", self, o)
    def __le__(self, o): return self.tracer.compare("le", self, o)
    def __gt__(self, o): return self.tracer.compare("gt", self, o)
    def __ge__(self, o): return self.tracer.compare("ge", self, o)
    def __and__(self, o): return self.tracer.logic("and", self, o)
    def __rand__(self, o): return self.tracer.logic("and", o, self)
    def __or__(self, o): return self.tracer.logic("or", self, o)
    def __ror__(self, o): return self.tracer.logic("or", o, self)
    def __neg__(self): return self.tracer.unary("neg", self)

    def __bool__(self):
        raise BlockError("Python control flow on a block value (if/while/and/or) is not lowered to the SIMT "
                         "machine; use tl.where or a mask")

    def _unsupported(name):  # noqa: N805
        def f(self, *a):
            raise BlockError(f"the SIMT lowering of block kernels does not support the operation {name}")
        return f

    __floordiv__ = __rfloordiv__ = _unsupported("//")
    __mod__ = __rmod__ = _unsupported("%")
    __pow__ = __rpow__ = _unsupported("**")
    __eq__ = _unsupported("==")
    __ne__ = _unsupported("!=")
    __getitem__ = _unsupported("indexing a block")
    __hash__ = object.__hash__
    del _unsupported

    def __repr__(self) -> str:
        return f"<traced {self.op} {self.type}>"


class _Ptr:
    """An array argument while tracing: its name, array, and optionally a block of offsets."""

    def __init__(self, name, array, offsets=None):
        self.name, self.array, self.offsets = name, array, offsets

    def __add__(self, o):
        if self.offsets is not None:
            raise BlockError(f"{self.name}: add offsets to a base pointer once (x_ptr + offsets)")
        if not isinstance(o, _Sym) or o.kind != "int":
            raise BlockError(f"{self.name} + offsets: the SIMT lowering needs a block of integer offsets "
                             f"built from tl.arange, got {o!r}")
        return _Ptr(self.name, self.array, o)

    __radd__ = __add__


class _Tracer:
    def __init__(self, name: str):
        self.name = name
        self.nodes: list[_Sym] = []
        self.effects: list[_Sym] = []  # in program order: loads and stores
        self.block: int | None = None
        self.loaded: list[str] = []
        self.stored: list[str] = []

    # the tl.* functions, while tracing
    def program_id(self, axis):
        if axis != 0:
            raise BlockError(f"the SIMT lowering runs one-dimensional grids only: tl.program_id({axis})")
        return _Sym(self, "pid", (), "int", "s32", True)

    def num_programs(self, axis):
        if axis != 0:
            raise BlockError(f"the SIMT lowering runs one-dimensional grids only: tl.num_programs({axis})")
        return _Sym(self, "nprog", (), "int", "s32", True)

    def arange(self, start, end):
        n = end - start
        if self.block is not None and n != self.block:
            raise BlockError(f"tl.arange({start}, {end}): the SIMT lowering needs every block of a program to "
                             f"have the same length ({self.block})")
        self.block = n
        return _Sym(self, "arange", (int(start),), "int", "s32", False)

    def _operand_kind(self, x):
        if isinstance(x, _Sym):
            return x.kind, x.type
        if isinstance(x, (bool, np.bool_)):
            raise BlockError(f"a Python bool {x!r} in block arithmetic is not lowered")
        if isinstance(x, (int, np.integer)):
            return "int", "s32"
        if isinstance(x, (float, np.floating)):
            return "float", None
        raise BlockError(f"the SIMT lowering does not support the operand {x!r:.40} "
                         "(block values, Python ints and floats only)")

    def _result(self, what, *xs):
        kinds = [self._operand_kind(x) for x in xs]
        if any(k == "pred" for k, _ in kinds):
            raise BlockError(f"{what} of a mask: masks combine with & and | only")
        ftypes = {t for k, t in kinds if k == "float" and t}
        if len(ftypes) > 1:
            raise BlockError(f"{what} of blocks of different float types {sorted(ftypes)}")
        if any(k == "float" for k, _ in kinds):
            return "float", (ftypes.pop() if ftypes else "f32")
        return "int", "s32"

    def binary(self, op, a, b):
        kind, t = self._result({"add": "+", "sub": "-", "mul": "*", "div": "/", "max": "tl.maximum"}[op], a, b)
        if op == "div" and kind == "int":
            raise BlockError("integer division of blocks (/ on ints) is not lowered; convert to floats first")
        return _Sym(self, op, (a, b), kind, t, all(not isinstance(x, _Sym) or x.scalar for x in (a, b)))

    def compare(self, cmp, a, b):
        _, t = self._result("comparison", a, b)
        return _Sym(self, "setp", (cmp, a, b, t), "pred", "pred",
                    all(not isinstance(x, _Sym) or x.scalar for x in (a, b)))

    def logic(self, op, a, b):
        for x in (a, b):
            if not (isinstance(x, _Sym) and x.kind == "pred"):
                raise BlockError(f"{'&' if op == 'and' else '|'} combines masks (comparisons) only, got {x!r:.40}")
        return _Sym(self, op, (a, b), "pred", "pred", a.scalar and b.scalar)

    def unary(self, name, x):
        if name not in ("exp", "sqrt", "neg"):
            raise BlockError(f"the SIMT lowering does not support tl.{name}")
        kind, t = self._result(f"tl.{name}", x)
        if name != "neg" and kind != "float":
            raise BlockError(f"tl.{name} of an integer block is not lowered")
        if not isinstance(x, _Sym):
            raise BlockError(f"tl.{name} of a Python number: compute it in Python")
        return _Sym(self, name, (x,), kind, t, x.scalar)

    def where(self, cond, a, b):
        if not (isinstance(cond, _Sym) and cond.kind == "pred"):
            raise BlockError(f"tl.where: the condition must be a comparison of blocks, got {cond!r:.40}")
        kind, t = self._result("tl.where", a, b)
        return _Sym(self, "selp", (a, b, cond), kind, t,
                    all(not isinstance(x, _Sym) or x.scalar for x in (a, b, cond)))

    def _check(self, ptr, mask, what):
        if not isinstance(ptr, _Ptr) or ptr.offsets is None:
            raise BlockError(f"tl.{what}: give a pointer plus a block of offsets (x_ptr + offsets), got {ptr!r:.40}")
        if ptr.offsets.scalar:
            raise BlockError(f"tl.{what} of {ptr.name}: scalar loads and stores are not lowered; "
                             "the offsets must be a block built from tl.arange")
        if mask is not None and not (isinstance(mask, _Sym) and mask.kind == "pred"):
            raise BlockError(f"tl.{what}: the mask must be a comparison of blocks (offsets < n), got {mask!r:.40}")

    def load(self, ptr, mask, other):
        self._check(ptr, mask, "load")
        t = ptx_type(str(ptr.array.dtype))
        kind = "float" if ptr.array.dtype.kind == "f" else "int"
        if kind == "int" and t != "s32":
            raise BlockError(f"tl.load of {ptr.name}: integer arrays other than int32 are not lowered ({t})")
        if ptr.name not in self.loaded:
            self.loaded.append(ptr.name)
        s = _Sym(self, "load", (ptr, mask, other), kind, t, False)
        self.effects.append(s)
        return s

    def store(self, ptr, value, mask):
        self._check(ptr, mask, "store")
        self._operand_kind(value)
        if ptr.name not in self.stored:
            self.stored.append(ptr.name)
        s = _Sym(self, "store", (ptr, value, mask), "none", "", False)
        self.effects.append(s)


@dataclass
class BlockProgram:
    """A block kernel lowered for one launch: its :class:`KernelIR` (``grid`` CTAs of ``threads``
    threads, each thread ``per_thread`` elements of the block) and the arrays its parameters name."""

    ir: KernelIR
    arrays: dict  # parameter name -> the NumPy array of the launch (stores go to the outputs)
    block_size: int
    threads: int
    per_thread: int

    @property
    def programs(self) -> int:
        return self.ir.grid

    @property
    def warps(self) -> int:
        return self.ir.grid * self.ir.warps_per_block


def lower(kernel: JITFunction, grid, *args, **consts) -> BlockProgram:
    """Trace ``kernel`` for the launch ``kernel[grid](*args, **consts)`` and emit its kernel IR."""
    if not isinstance(kernel, JITFunction):
        raise BlockError(f"lower() takes a @tl.jit kernel, got {kernel!r:.40}")
    g3, runtime = kernel._bind(grid, args, consts)
    if g3[1:] != (1, 1):
        raise BlockError(f"{kernel.name}: the SIMT lowering runs one-dimensional grids only, got {g3}")
    tr = _Tracer(kernel.name)
    call, arrays = {}, {}
    for p, a in zip(runtime, args):
        if isinstance(a, np.ndarray):
            arrays[p] = a
            call[p] = _Ptr(p, a)
        elif isinstance(a, (bool, int, float, np.integer, np.floating)):
            call[p] = a
        else:
            raise BlockError(f"{kernel.name}: argument {p} must be a NumPy array or a number, got {type(a).__name__}")
    _bl._TRACER.append(tr)
    try:
        kernel.fn(**call, **consts)
    finally:
        _bl._TRACER.pop()
    if tr.block is None:
        raise BlockError(f"{kernel.name}: no tl.arange, so no block to lower")
    if not tr.stored:
        raise BlockError(f"{kernel.name}: stores nothing")
    threads = min(tr.block, kernel.num_warps * WARP)
    per = tr.block // threads
    if per > MAX_PER_THREAD:
        raise BlockError(f"{kernel.name}: BLOCK_SIZE={tr.block} over {threads} threads is {per} elements per "
                         f"thread; the SIMT lowering unrolls at most {MAX_PER_THREAD} (raise num_warps)")
    outs = [p for p in runtime if p in tr.stored]
    ins = [p for p in runtime if p in tr.loaded and p not in tr.stored]
    order = ins + outs
    index = {p: i for i, p in enumerate(order)}
    params = [(p, str(arrays[p].dtype), int(arrays[p].size)) for p in order]
    ir = _emit(tr, kernel, g3[0], threads, per, index, params, len(ins), consts)
    return BlockProgram(ir, {p: arrays[p] for p in order}, tr.block, threads, per)


def _emit(tr: _Tracer, kernel, grid, threads, per, index, params, n_inputs, consts) -> KernelIR:
    bld = Builder()
    base = {}
    for name, i in index.items():
        base[name] = bld.op("ld", "u64", Param(name, i), mod=("param",), comment=f"address of {name}")
    tid = bld.op("mov", "u32", Special.TID)
    scalars: dict[int, object] = {}

    def val(x, env, t):
        if isinstance(x, _Sym):
            return scalars[x.id] if x.scalar else env[x.id]
        return Imm(int(x), "s32") if t == "s32" else Imm(float(x), t)

    def num(x, env, t):
        """Operand ``x`` as type ``t``, converting an int block to float where needed."""
        v = val(x, env, t)
        if isinstance(x, _Sym) and x.type != t:
            return bld.op("cvt", x.type, v, mod=("rn", t), dst_type=t, comment=f"{x.type} -> {t}")
        return v

    def node(s: _Sym, env, k):
        a = s.args
        if s.op == "pid":
            return bld.op("mov", "s32", Special.CTAID, comment="tl.program_id(0)")
        if s.op == "nprog":
            return bld.op("mov", "s32", Special.NCTAID, comment="tl.num_programs(0)")
        if s.op == "arange":
            if a[0] + k * threads == 0:
                return bld.op("mov", "s32", tid, comment="tl.arange: element tid")
            return bld.op("add", "s32", tid, Imm(a[0] + k * threads, "s32"),
                          comment=f"tl.arange: element {a[0]} + tid" + (f" + {k * threads}" if k else ""))
        if s.op in ("add", "sub", "mul", "div", "max"):
            mod = ("rn",) if s.op == "div" else ()
            return bld.op(s.op, s.type, num(a[0], env, s.type), num(a[1], env, s.type), mod=mod, alu=_OPS[s.op])
        if s.op == "setp":
            cmp, x, y, t = a
            return bld.op("setp", t, num(x, env, t), num(y, env, t), mod=(cmp,), dst_type="pred")
        if s.op in ("and", "or"):
            return bld.op(s.op, "pred", val(a[0], env, "pred"), val(a[1], env, "pred"))
        if s.op == "neg":
            return bld.op("neg", s.type, val(a[0], env, s.type), alu=Op.NEGATE)
        if s.op == "exp":
            name, mod, unit, note = LOWERING[Op.EXP]
            return bld.op(name, s.type, val(a[0], env, s.type), mod=mod, pipe=unit, comment=f"tl.exp; {note}",
                          alu=Op.EXP)
        if s.op == "sqrt":
            return bld.op("sqrt", s.type, val(a[0], env, s.type), mod=("approx",), pipe=Pipe.SFU, comment="tl.sqrt",
                          alu=Op.SQRT)
        if s.op == "selp":
            x, y, c = a
            return bld.op("selp", s.type, num(x, env, s.type), num(y, env, s.type), val(c, env, "pred"),
                          comment="tl.where")
        ptr, second, mask = a if s.op == "store" else (a[0], a[2], a[1])
        t = ptx_type(str(ptr.array.dtype))
        addr = bld.op("mad", "u32", val(ptr.offsets, env, "s32"), Imm(ptr.array.itemsize, "u32"), base[ptr.name],
                      mod=("wide",), dst_type="u64", comment=f"&{ptr.name}[offsets]")
        guard = val(mask, env, "pred") if mask is not None else None
        if s.op == "load":
            d = bld.reg(t)
            if guard is not None:
                other = second
                bld.emit("mov", d, Imm(int(other), t) if s.kind == "int" else Imm(float(other), t), type=t,
                         comment="masked lanes get `other`")
            bld.emit("ld", d, addr, type=t, mod=("global",), guard=guard, pipe=Pipe.MEM,
                     comment=f"tl.load({ptr.name})" + (", masked" if guard is not None else ""))
            return d
        v = num(second, env, t)
        bld.emit("st", None, addr, v, type=t, mod=("global",), guard=guard, pipe=Pipe.MEM,
                 comment=f"tl.store({ptr.name})" + (", masked" if guard is not None else ""))
        return None

    for s in tr.nodes:
        if s.scalar:
            scalars[s.id] = node(s, {}, 0)
    for k in range(per):
        env: dict[int, object] = {}
        for s in tr.nodes:
            if not s.scalar:
                env[s.id] = node(s, env, k)
    bld.emit("exit", pipe=Pipe.CONTROL)
    tag = ", ".join(f"{c}={v}" for c, v in sorted(consts.items()))
    given = getattr(kernel, "given_launch", None)
    launch = given if given is not None and given.blocks == grid and given.threads_per_block == threads else None
    return bld.build(kernel.name, params, n_inputs, grid, threads, launch=launch,
                     header=[f"// block kernel {kernel.name}[{tag}]: one CTA per program, {threads} threads x "
                             f"{plural(per, 'element')} each (element tid + k*{threads} of the block)",
                             "// pseudo-PTX: PTX-like for reading (labsim's kernel IR, run by ls.simt)"]).verify()


__all__ = ["BlockProgram", "MAX_PER_THREAD", "lower"]
