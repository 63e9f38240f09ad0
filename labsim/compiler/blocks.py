"""Block-level kernels as in Triton: one *program* per block of elements, not one thread per element.

The chapter "Host and device" writes Triton's vector add with it; short name ``ls.blocks``::

    import labsim.blocks as tl

    @tl.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)                    # which block this program handles
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements                    # the last block may run past the end
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)

    run = add_kernel[(tl.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)   # NumPy arrays; out is written
    run.kernel                                                             # a labsim Kernel, for ls.host

labsim runs the kernel the way Triton's interpreter mode does: every program of the grid in turn, each
operation on a whole block at once with NumPy. Meanwhile it counts what the programs do: bytes loaded
and stored (only the lanes the mask lets through), floating-point operations (on every lane, masked or
not, as the hardware computes them), and which lanes each program left idle. :attr:`BlockRun.kernel`
turns those counts into labsim's :class:`~labsim.compiler.kernel.Kernel` (one launch, ``grid`` blocks
of ``num_warps`` warps), so the roofline and the host/device machine can run it.

The same kernel also runs on the SIMT machine: :func:`labsim.compiler.block_emit.lower` traces it into
the executable kernel IR (one CTA per program, the mask as a predicate guarding loads and stores), and
``ls.simt.run_blocks(kernel, grid, *args, BLOCK_SIZE=...)`` runs that on a GPU's SMs.

Rules kept from Triton {triton-vector-add}: parameters annotated ``tl.constexpr`` are compile-time
constants, given by keyword, and each distinct value compiles a separate kernel; ``tl.arange`` needs a
power-of-two length, and a block holds at most 2**20 elements. An unmasked load or store past the end
of an array is an error here (on a GPU it reads or corrupts other memory).
"""
from __future__ import annotations

from ..support.errors import LabsimError

import functools
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ..core.alu import apply as _alu  # the value rules every machine shares
from ..core.avals import ShapeDtype
from ..core.ir import Var
from ..core.ops import Op
from .kernel import Kernel, KernelKind, Launch
from ..hardware import WARP_SIZE as WARP

MAX_BLOCK = 2**20  # Triton's largest block (TRITON_MAX_TENSOR_NUMEL)


class constexpr:  # noqa: N801 (Triton's spelling)
    """Annotation for a compile-time constant parameter (``BLOCK_SIZE: tl.constexpr``)."""


class BlockError(LabsimError, ValueError):
    """A block kernel broke one of Triton's rules; the message names the rule and the program."""


def cdiv(a: int, b: int) -> int:
    """Ceiling division: the number of blocks of ``b`` that cover ``a`` elements."""
    return -(-a // b)


# --- what one program sees -------------------------------------------------------------------------

@dataclass
class _Context:
    pid: tuple[int, int, int]
    grid: tuple[int, int, int]
    counts: "Counts"
    lanes: int = 0  # the largest block this program built
    active: int = 0  # lanes of that block a mask let through (set by loads/stores)


_CTX: list[_Context] = []
_TRACER: list = []  # a labsim.compiler.block_emit tracer while one records a kernel for the SIMT machine


def _tracer():
    return _TRACER[-1] if _TRACER else None


def _ctx() -> _Context:
    if not _CTX:
        raise BlockError("tl.program_id, tl.arange, tl.load and tl.store work only inside a @tl.jit kernel "
                         "launched on a grid: kernel[grid](...)")
    return _CTX[-1]


class Block:
    """A block of values (a NumPy array) that one program works on at once."""

    __slots__ = ("v",)

    def __init__(self, v):
        import numpy as np
        self.v = np.asarray(v)

    @property
    def shape(self):
        return self.v.shape

    def _bin(self, other, f, flop: bool):
        import numpy as np
        o = other.v if isinstance(other, Block) else other
        out = f(self.v, o)
        if flop and np.issubdtype(np.asarray(out).dtype, np.floating):
            _ctx().counts.flops += int(np.size(out))
        return Block(out)

    def __add__(self, o): return self._bin(o, lambda a, b: _alu(Op.ADD, a, b), True)
    def __radd__(self, o): return self._bin(o, lambda a, b: _alu(Op.ADD, b, a), True)
    def __sub__(self, o): return self._bin(o, lambda a, b: _alu(Op.SUBTRACT, a, b), True)
    def __rsub__(self, o): return self._bin(o, lambda a, b: _alu(Op.SUBTRACT, b, a), True)
    def __mul__(self, o): return self._bin(o, lambda a, b: _alu(Op.MULTIPLY, a, b), True)
    def __rmul__(self, o): return self._bin(o, lambda a, b: _alu(Op.MULTIPLY, b, a), True)
    def __truediv__(self, o): return self._bin(o, lambda a, b: _alu(Op.DIVIDE, a, b), True)
    def __lt__(self, o): return self._bin(o, lambda a, b: a < b, False)
    def __le__(self, o): return self._bin(o, lambda a, b: a <= b, False)
    def __gt__(self, o): return self._bin(o, lambda a, b: a > b, False)
    def __ge__(self, o): return self._bin(o, lambda a, b: a >= b, False)
    def __and__(self, o): return self._bin(o, lambda a, b: a & b, False)
    def __or__(self, o): return self._bin(o, lambda a, b: a | b, False)
    def __neg__(self): return self._bin(0, lambda a, b: _alu(Op.NEGATE, a), True)

    def __repr__(self) -> str:
        return f"<Block {self.v.dtype}[{self.v.size}]>"


class Pointer:
    """An array argument inside a kernel: a base pointer, or base + a block of offsets (in elements)."""

    __slots__ = ("name", "array", "offsets")

    def __init__(self, name: str, array, offsets: Block | None = None):
        self.name, self.array, self.offsets = name, array, offsets

    def __add__(self, offsets):
        import numpy as np
        if self.offsets is not None:
            raise BlockError(f"{self.name}: add offsets to a base pointer once (x_ptr + offsets)")
        off = offsets if isinstance(offsets, Block) else Block(np.asarray(offsets))
        if not np.issubdtype(off.v.dtype, np.integer):
            raise BlockError(f"{self.name} + offsets: offsets must be integers, got {off.v.dtype}")
        return Pointer(self.name, self.array, off)

    __radd__ = __add__


def program_id(axis: int = 0) -> int:
    """This program's index along ``axis`` of the grid (0, 1 or 2)."""
    if axis not in (0, 1, 2):
        raise BlockError(f"tl.program_id: axis must be 0, 1 or 2, got {axis!r}")
    if _tracer():
        return _tracer().program_id(axis)
    return _ctx().pid[axis]


def num_programs(axis: int = 0) -> int:
    if _tracer():
        return _tracer().num_programs(axis)
    return _ctx().grid[axis]


def arange(start: int, end: int) -> Block:
    """The integers start, ..., end - 1 as one block; its length must be a power of two (Triton's rule)."""
    import numpy as np
    n = end - start
    if n <= 0 or n & (n - 1):
        raise BlockError(f"tl.arange({start}, {end}): the length {n} must be a power of two "
                         "(Triton's rule: blocks have power-of-two sizes)")
    if n > MAX_BLOCK:
        raise BlockError(f"tl.arange({start}, {end}): {n:,} elements is more than a block may hold "
                         f"({MAX_BLOCK:,}, Triton's limit)")
    if _tracer():
        return _tracer().arange(start, end)
    c = _ctx()
    c.lanes = max(c.lanes, n)
    return Block(np.arange(start, end, dtype=np.int32))


def _access(ptr: Pointer, mask, what: str):
    import numpy as np
    if not isinstance(ptr, Pointer) or ptr.offsets is None:
        raise BlockError(f"tl.{what}: give a pointer plus a block of offsets (x_ptr + offsets), got {ptr!r:.40}")
    off = ptr.offsets.v
    m = np.ones(off.shape, bool) if mask is None else np.broadcast_to(
        mask.v if isinstance(mask, Block) else np.asarray(mask), off.shape)
    size = ptr.array.size
    bad = m & ((off < 0) | (off >= size))
    c = _ctx()
    if bad.any():
        lo, hi = int(off[bad].min()), int(off[bad].max())
        raise BlockError(f"program {c.pid[0]} {what}s {ptr.name}[{lo}..{hi}], past the end of its {size:,} "
                         f"elements: mask the tail (mask=offsets < n_elements)")
    c.active = max(c.active, int(m.sum()))
    return off, m


def load(ptr: Pointer, mask=None, other=0.0) -> Block:
    """Load the block ``ptr`` points at; lanes where ``mask`` is False get ``other`` and read nothing."""
    import numpy as np
    if _tracer():
        return _tracer().load(ptr, mask, other)
    off, m = _access(ptr, mask, "load")
    flat = ptr.array.reshape(-1)
    out = np.full(off.shape, other, dtype=flat.dtype)
    out[m] = flat[off[m]]
    counts = _ctx().counts
    counts.bytes_read += int(m.sum()) * flat.itemsize
    counts.loaded.add(ptr.name)
    return Block(out)


def store(ptr: Pointer, value, mask=None) -> None:
    """Store ``value`` where ``mask`` is True; the other lanes write nothing."""
    import numpy as np
    if _tracer():
        return _tracer().store(ptr, value, mask)
    off, m = _access(ptr, mask, "store")
    flat = ptr.array.reshape(-1)
    v = np.broadcast_to(value.v if isinstance(value, Block) else np.asarray(value), off.shape)
    flat[off[m]] = v[m].astype(flat.dtype)
    counts = _ctx().counts
    counts.bytes_written += int(m.sum()) * flat.itemsize
    counts.stored.add(ptr.name)


def _unary(f, name: str, transcendental: bool):
    def op(x: Block) -> Block:
        import numpy as np
        if _tracer():
            return _tracer().unary(name, x)
        out = f(x.v if isinstance(x, Block) else np.asarray(x))
        c = _ctx().counts
        if transcendental:
            c.transcendentals += int(np.size(out))
        else:
            c.flops += int(np.size(out))
        return Block(out)
    op.__name__ = name
    return op


exp = _unary(lambda v: _alu(Op.EXP, v), "exp", True)
sqrt = _unary(lambda v: _alu(Op.SQRT, v), "sqrt", True)


def maximum(a, b) -> Block:
    if _tracer():
        return _tracer().binary("max", a, b)
    return (a if isinstance(a, Block) else Block(a))._bin(b, lambda x, y: _alu(Op.MAXIMUM, x, y), True)


def where(cond, a, b) -> Block:
    if _tracer():
        return _tracer().where(cond, a, b)
    cv = cond.v if isinstance(cond, Block) else cond
    av = a.v if isinstance(a, Block) else a
    bv = b.v if isinstance(b, Block) else b
    return Block(_alu(Op.SELECT, cv, av, bv))


# --- counting and the result of a launch -------------------------------------------------------------

@dataclass
class Counts:
    flops: int = 0
    transcendentals: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    loaded: set = field(default_factory=set)
    stored: set = field(default_factory=set)


@dataclass(frozen=True)
class ProgramRecord:
    """What one program did: its id, the lanes of its block, and how many a mask let through."""

    pid: int
    lanes: int
    active: int

    @property
    def idle(self) -> int:
        return self.lanes - self.active


@dataclass(frozen=True)
class BlockRun:
    """One launch of a block kernel: its grid, constants, counts, per-program records and the Kernel."""

    name: str
    grid: tuple[int, int, int]
    constants: dict
    programs: tuple[ProgramRecord, ...]
    kernel: Kernel
    arrays: dict  # argument name -> the NumPy array (stores wrote into it)

    @property
    def lanes(self) -> int:
        return sum(p.lanes for p in self.programs)

    @property
    def idle_lanes(self) -> int:
        return sum(p.idle for p in self.programs)

    def table(self) -> list[dict]:
        return [{"program": p.pid, "lanes": p.lanes, "active lanes": p.active, "idle lanes": p.idle}
                for p in self.programs]


class JITFunction:
    """A ``@tl.jit`` kernel. ``kernel[grid](*args, CONST=...)`` runs it; ``grid`` is a tuple of up to three
    ints or a function of the constants (``lambda meta: (tl.cdiv(n, meta["BLOCK_SIZE"]),)``)."""

    def __init__(self, fn: Callable, num_warps: int = 4):
        self.fn = fn
        self.name = fn.__name__
        self.num_warps = num_warps
        sig = inspect.signature(fn)
        self.params = list(sig.parameters)
        self.constexprs = [p.name for p in sig.parameters.values()
                           if p.annotation is constexpr or p.annotation in ("tl.constexpr", "constexpr")]
        self.compiled: set = set()  # one compiled variant per distinct tuple of constants
        functools.update_wrapper(self, fn)

    def __getitem__(self, grid):
        return functools.partial(self._launch, grid)

    def __call__(self, *a, **k):
        raise BlockError(f"{self.name} is a kernel: launch it on a grid, {self.name}[grid](...)")

    def _launch(self, grid, *args, **consts) -> BlockRun:
        g3, runtime = self._bind(grid, args, consts)
        self.compiled.add(tuple(sorted(consts.items())))
        return self._run(g3, runtime, args, consts)

    def _bind(self, grid, args, consts):
        """Check the arguments, constants and grid of a launch; the grid as 3 ints and the runtime parameters."""
        import numpy as np

        missing = [c for c in self.constexprs if c not in consts]
        if missing:
            raise BlockError(f"{self.name}: the compile-time constant(s) {missing} must be given by keyword, "
                             f"e.g. {missing[0]}=1024")
        extra = [k for k in consts if k not in self.constexprs]
        if extra:
            raise BlockError(f"{self.name}: {extra} are not tl.constexpr parameters of the kernel "
                             f"(its constants are {self.constexprs})")
        for k, v in consts.items():
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise BlockError(f"{self.name}: {k} must be an int known when the kernel is compiled, got {v!r}")
        runtime = [p for p in self.params if p not in self.constexprs]
        if len(args) != len(runtime):
            raise BlockError(f"{self.name} takes {len(runtime)} arguments ({', '.join(runtime)}) plus the "
                             f"constants by keyword; got {len(args)}")
        g = grid(dict(consts)) if callable(grid) else grid
        g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
        if not 1 <= len(g) <= 3 or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1
                                       for x in g):
            raise BlockError(f"{self.name}: the grid must be 1 to 3 positive ints, got {g!r}")
        g3 = tuple(int(x) for x in g) + (1,) * (3 - len(g))
        return g3, runtime

    def _run(self, g3, runtime, args, consts) -> BlockRun:
        import numpy as np

        arrays, call = {}, {}
        for p, a in zip(runtime, args):
            if isinstance(a, np.ndarray):
                arrays[p] = a
                call[p] = Pointer(p, a)
            else:
                call[p] = a
        counts = Counts()
        records = []
        for z in range(g3[2]):
            for y in range(g3[1]):
                for x in range(g3[0]):
                    ctx = _Context((x, y, z), g3, counts)
                    _CTX.append(ctx)
                    try:
                        self.fn(**call, **consts)
                    finally:
                        _CTX.pop()
                    pid = x + g3[0] * (y + g3[1] * z)
                    records.append(ProgramRecord(pid, ctx.lanes, ctx.active if ctx.lanes else 0))
        ins = tuple(Var(ShapeDtype(arrays[p].shape, str(arrays[p].dtype))) for p in runtime if p in counts.loaded)
        outs = tuple(Var(ShapeDtype(arrays[p].shape, str(arrays[p].dtype))) for p in runtime if p in counts.stored)
        dtype = str(arrays[next(iter(arrays))].dtype) if arrays else "float32"
        tag = ", ".join(f"{k}={v}" for k, v in sorted(consts.items()))
        kernel = Kernel(name=f"{self.name}[{tag}]" if tag else self.name, kind=KernelKind.LOOP, nodes=(),
                        inputs=ins, outputs=outs, flops=counts.flops, transcendentals=counts.transcendentals,
                        bytes_read=counts.bytes_read, bytes_written=counts.bytes_written,
                        given_launch=Launch(g3, (self.num_warps * WARP, 1, 1)), dtype=dtype)
        return BlockRun(self.name, g3, dict(consts), tuple(records), kernel, arrays)


def jit(fn: Callable | None = None, *, num_warps: int = 4):
    """Mark ``fn`` as a block kernel (``@tl.jit``). ``num_warps``: warps per program (Triton's default 4)."""
    if fn is None:
        return lambda f: JITFunction(f, num_warps)
    return JITFunction(fn, num_warps)


__all__ = ["constexpr", "jit", "program_id", "num_programs", "arange", "load", "store", "cdiv", "exp", "sqrt",
           "maximum", "where", "Block", "Pointer", "BlockRun", "ProgramRecord", "JITFunction", "BlockError",
           "MAX_BLOCK"]
