"""The lowering's state and its builder helpers: scopes of computed values, index arithmetic (folded and
shared), parameters and addresses, loads and stores, loops over a block's elements, and the final build."""
from __future__ import annotations

from ...core import ops
from ...core.dtypes import ITEMSIZE
from ...core.ir import Literal, Node, Var
from ...core.trace import expand_composites, trace_decomposition
from ...hardware import Chip
from ..isa import Builder, Imm, KernelIR, Label, Param, Reg, Special, Pipe, ptx_type
from ..launch import Launch
from ..plans import PSEUDO_IR
from .table import LoweringError


class _Base:
    """The state of lowering one kernel: builder, parameters, memo of computed values (scoped)."""

    def __init__(self, k: "Kernel", chip: Chip | None) -> None:
        self.k = k
        self.chip = chip
        self.b = Builder()
        self.producer: dict[int, Node] = {}
        self.alias: dict[int, object] = {}  # inner decomposition input -> outer atom; composite out -> inner out
        for n in k.nodes:
            self._add_node(n)
        given = list(k.param_names) if len(k.param_names) == len(k.inputs) + len(k.outputs) else []
        allv = (*k.inputs, *k.outputs)
        pn = [given[i] if given else f"buf{v.id}" for i, v in enumerate(allv)]
        names = pn[:len(k.inputs)]
        onames = [x + "_out" for x in pn[len(k.inputs):]]
        self.views = {id(a): b for a, b in k.views}
        self.params = [(nm, v.aval.dtype, v.aval.size) for nm, v in zip(names + onames, (*k.inputs, *k.outputs))]
        self.in_param = {id(v): i for i, v in enumerate(k.inputs)}
        self.base: dict[int, Reg] = {}
        self.scopes: list[dict] = [{}]
        self.uniform: set[str] = set()
        self.cooperative = False  # True while emitting top-level code of a reduction kernel

    # --- nodes and composites
    def _add_node(self, n: Node) -> None:
        if n.op in ops.COMPOSITE:
            g = expand_composites(trace_decomposition(n.op, tuple(a.aval for a in n.operands), n.params))
            for inner, outer in zip(g.inputs, n.operands):
                self.alias[id(inner)] = outer
            for m in g.nodes:
                self._add_node(m)
            self.alias[id(n.out)] = g.outputs[0]
            return
        self.producer[id(n.out)] = n

    def resolve(self, a):
        while isinstance(a, Var) and id(a) in self.alias and id(a) not in self.in_param:
            a = self.alias[id(a)]
        return a

    # --- memo (scoped: a value computed inside a loop body is not visible after the loop)
    def get(self, key):
        for s in reversed(self.scopes):
            if key in s:
                return s[key]
        return None

    def put(self, key, val):
        self.scopes[-1][key] = val
        return val

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    @staticmethod
    def _k(x):
        return ("i", x.value) if isinstance(x, Imm) else (x.name if isinstance(x, Reg) else str(x))

    def is_uniform(self, *xs) -> bool:
        return all(isinstance(x, Imm) or (isinstance(x, Reg) and x.name in self.uniform) or x is Special.CTAID
                   or x is Special.NTID or x is Special.NCTAID for x in xs)

    # --- index arithmetic (u32), folded and shared
    def iop(self, op: str, *srcs, comment: str = "", mod: tuple = ()) -> Imm | Reg:
        vals = [s.value if isinstance(s, Imm) else None for s in srcs]
        if all(v is not None for v in vals):
            a = vals
            r = {"add": lambda: a[0] + a[1], "mul": lambda: a[0] * a[1], "div": lambda: a[0] // a[1],
                 "rem": lambda: a[0] % a[1], "mad": lambda: a[0] * a[1] + a[2], "sub": lambda: a[0] - a[1]}[op]()
            return Imm(int(r), "u32")
        if op == "add":
            if vals[0] == 0:
                return srcs[1]
            if vals[1] == 0:
                return srcs[0]
        if op == "mul":
            if 0 in vals:
                return Imm(0, "u32")
            if vals[1] == 1:
                return srcs[0]
            if vals[0] == 1:
                return srcs[1]
        if op == "sub" and vals[1] == 0:
            return srcs[0]
        if op == "div" and vals[1] == 1:
            return srcs[0]
        if op == "rem" and vals[1] == 1:
            return Imm(0, "u32")
        if op == "mad":
            if vals[1] == 1:
                return self.iop("add", srcs[0], srcs[2])
            if vals[2] == 0:
                return self.iop("mul", srcs[0], srcs[1])
            if vals[0] == 0 or vals[1] == 0:
                return srcs[2]
        key = ("iop", op, mod, tuple(self._k(s) for s in srcs))
        hit = self.get(key)
        if hit is not None:
            return hit
        if op == "mad":
            mod = mod or ("lo",)
        if op == "mul":
            mod = mod or ("lo",)
        d = self.b.op(op, "u32", *srcs, mod=mod, comment=comment)
        if self.is_uniform(*srcs):
            self.uniform.add(d.name)
        return self.put(key, d)

    def unravel(self, flat, shape) -> tuple:
        if len(shape) == 0:
            return ()
        coords = []
        stride = 1
        strides = []
        for d in reversed(shape):
            strides.append(stride)
            stride *= d
        strides = strides[::-1]
        for i, (d, s) in enumerate(zip(shape, strides)):
            if d == 1:
                coords.append(Imm(0, "u32"))
                continue
            q = self.iop("div", flat, Imm(s, "u32"))
            coords.append(q if i == 0 else self.iop("rem", q, Imm(d, "u32")))
        return tuple(coords)

    def linear(self, coords, shape):
        acc = Imm(0, "u32")
        for c, d in zip(coords, shape):
            acc = self.iop("mad", acc, Imm(d, "u32"), c) if not (isinstance(acc, Imm) and acc.value == 0) else c
        return acc

    # --- values
    def param_base(self, idx: int) -> Reg:
        if idx not in self.base:
            name = self.params[idx][0]
            r = self.b.op("ld", "u64", Param(name, idx), mod=("param",), comment=f"address of {name}")
            self.uniform.add(r.name)
            self.base[idx] = r
        return self.base[idx]

    def address(self, idx: int, lin) -> Reg:
        isz = ITEMSIZE[self.params[idx][1]]
        base = self.param_base(idx)
        key = ("addr", idx, self._k(lin))
        hit = self.get(key)
        if hit is not None:
            return hit
        if isinstance(lin, Imm):
            if lin.value == 0:
                return base
            d = self.b.op("add", "u64", base, Imm(lin.value * isz, "u64"))
        else:
            d = self.b.op("mad", "u32", lin, Imm(isz, "u32"), base, mod=("wide",), dst_type="u64")
        if self.is_uniform(lin):
            self.uniform.add(d.name)
        return self.put(key, d)

    def load(self, var: Var, coords) -> Reg:
        key = ("val", id(var), tuple(self._k(c) for c in coords))
        hit = self.get(key)
        if hit is not None:
            return hit
        idx = self.in_param[id(var)]
        lin = self.linear(coords, var.aval.shape)
        a = self.address(idx, lin)
        t = ptx_type(var.aval.dtype)
        r = self.b.op("ld", t, a, mod=("global",), pipe=Pipe.MEM)
        if self.is_uniform(a):
            self.uniform.add(r.name)
        return self.put(key, r)

    def value(self, atom, coords) -> Reg | Imm:
        atom = self.resolve(atom)
        if isinstance(atom, Literal):
            return Imm(atom.value, ptx_type(atom.aval.dtype))
        if id(atom) in self.in_param:
            return self.load(atom, coords)
        buf = self.views.get(id(atom))
        if buf is not None and id(buf) in self.in_param:  # a reshape of an input: the same bytes, other shape
            return self.load(buf, self.unravel(self.linear(coords, atom.aval.shape), buf.aval.shape))
        n = self.producer.get(id(atom))
        if n is None:
            raise LoweringError(f"kernel {self.k.name}: value {atom} has no producer in the kernel")
        key = ("val", id(atom), tuple(self._k(c) for c in coords))
        hit = self.get(key)
        if hit is not None:
            return hit
        return self.put(key, self.node_value(n, coords))

    def lane(self):
        if self.get(("lane",)) is None:
            self.put(("lane",), self.b.op("mov", "u32", Special.LANEID))
        return self.get(("lane",))

    def warp(self):
        if self.get(("warp",)) is None:
            self.put(("warp",), self.b.op("shr", "u32", Special.TID, Imm(5, "u32"), mod=(), comment="warp = tid / 32"))
        return self.get(("warp",))

    # --- contraction epilogue: the dot's value at a coordinate is an accumulator in shared memory

    def store(self, out_index: int, var: Var, coords) -> None:
        v = self.value(var, coords)
        idx = len(self.k.inputs) + out_index
        lin = self.linear(coords, var.aval.shape)
        a = self.address(idx, lin)
        t = ptx_type(var.aval.dtype)
        if isinstance(v, Imm):
            v = self.b.op("mov", t, v)
        self.b.emit("st", None, a, v, type=t, mod=("global",), pipe=Pipe.MEM)


def _global_index(L: _Base, threads: int) -> Reg:
    b = L.b
    i = b.op("mad", "u32", Special.CTAID, Special.NTID, Special.TID, mod=("lo",),
             comment=f"i = blockIdx.x * {threads} + threadIdx.x")
    return i


def _strided(L: _Base, count: int, body, what: str) -> None:
    """for (e = tid; e < count; e += ntid) body(e)"""
    b = L.b
    e = b.reg("u32")
    b.emit("mov", e, Special.TID, type="u32", comment=what)
    top, end = b.fresh_label("T"), b.fresh_label("T_END")
    b.label(top)
    p = b.op("setp", "u32", e, Imm(count, "u32"), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label(end), guard=p, pipe=Pipe.CONTROL)
    L.push()
    body(e)
    L.pop()
    b.emit("add", e, e, Special.NTID, type="u32")
    b.emit("bra", None, Label(top), mod=("uni",), pipe=Pipe.CONTROL)
    b.label(end)


def _build(L: _Base, grid: int, block: int, shared: int, how: str, launch: Launch | None = None) -> KernelIR:
    k = L.k
    launch = launch or Launch((grid, 1, 1), (block, 1, 1), shared)
    header = [f"// {k.name}: {' → '.join(k.ops)}; {how}", PSEUDO_IR, f"// launch: {launch}"]
    ir = L.b.build(k.name, L.params, len(k.inputs), grid, block, shared_bytes=shared, header=header, launch=launch)
    return ir
