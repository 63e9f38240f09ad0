"""Readable listings of kernels: PTX-like code for loop kernels, a tile plan for contractions.

Introduced in "The journey of one matrix product" (step 4) and read closely in "The compiler at work".
The listings are for reading, not for running: they show what a code generator emits (``ld.global``,
arithmetic on registers, ``st.global``) and, for a matrix product, how the work is cut into tiles that
tensor cores (``HMMA``) or an MXU consume.
"""
from __future__ import annotations

import math

from ..core import ops
from ..core.dtypes import HLO_NAME
from ..core.ir import Literal, Var
from ..core.ops import Op, OpKind
from .kernel import KernelKind

_PTX_TYPE = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int32": "s32",
             "int64": "s64", "int8": "s8", "uint8": "u8", "bool": "pred", "int16": "s16",
             "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def _ptx(op: str) -> str:
    return ops.get(op).ptx or op


def _t(dtype: str) -> str:
    return _PTX_TYPE.get(dtype, HLO_NAME.get(dtype, dtype))


def _loop_listing(k) -> str:
    n_out = k.outputs[0].aval.size
    nthreads = k.launch.threads_per_block
    params = [f".param .u64 {_pname(k, v)}" for v in k.inputs] + [f".param .u64 {_pname(k, v)}_out" for v in k.outputs]
    lines = [f"// {k.name}: {' → '.join(k.ops)}; one thread per output element",
             f"// launch: {k.launch}",
             f".entry {k.name.replace('.', '_')}({', '.join(params)})", "{",
             f"  mad.lo.u32   %i, %ctaid.x, {nthreads}, %tid.x;     // i = blockIdx.x * {nthreads} + threadIdx.x",
             f"  setp.ge.u32  %p_done, %i, {n_out};",
             "  @%p_done bra DONE;                            // threads past the end do nothing"]
    reg: dict[int, str] = {}
    counter = [0]

    def fresh(dtype: str) -> str:
        counter[0] += 1
        return f"%{'p' if dtype == 'bool' else 'f' if dtype.startswith(('float', 'bfloat')) else 'r'}{counter[0]}"

    for v in k.inputs:
        r = fresh(v.aval.dtype)
        reg[id(v)] = r
        idx = "i" if v.aval.size == n_out else f"index_map(i)  /* {v.aval.short()} */"
        lines.append(f"  ld.global.{_t(v.aval.dtype):<5} {r}, [{_pname(k, v)} + {v.aval.itemsize}*{idx}];")
    for n in k.nodes:
        opdef = ops.get(n.op)
        args = []
        for a in n.operands:
            if isinstance(a, Literal):
                args.append(str(a))
            else:
                args.append(reg.get(id(a), reg.get(id(k._names.get(id(a), a)), "%?")))
        if opdef.kind in (OpKind.DATA_MOVEMENT,) or n.op == Op.CONSTANT:
            reg[id(n.out)] = args[0] if args else fresh(n.out.aval.dtype)
            lines.append(f"  // {n.op}: no instruction, only a different index into {args[0] if args else 'memory'}")
            continue
        r = fresh(n.out.aval.dtype)
        reg[id(n.out)] = r
        if n.op == Op.COMPARE:
            lines.append(f"  setp.{n.attr('direction')}.{_t(n.operands[0].aval.dtype):<4} {r}, {', '.join(args)};")
        elif n.op == Op.SELECT:
            lines.append(f"  selp.{_t(n.out.aval.dtype):<8} {r}, {args[1]}, {args[2]}, {args[0]};")
        elif n.op == Op.INTEGER_POW:
            lines.append(f"  // x**{n.attr('y')} as repeated multiplies")
            lines.append(f"  mul.{_t(n.out.aval.dtype):<9} {r}, {args[0]}, {args[0]};")
        elif n.op == Op.EXP:
            lines.append(f"  mul.{_t(n.out.aval.dtype):<9} {r}, {args[0]}, 1.4426950;     // exp(x) = 2^(x·log2 e)")
            lines.append(f"  ex2.approx.{_t(n.out.aval.dtype)} {r}, {r};")
        elif opdef.kind is OpKind.ELEMENTWISE:
            lines.append(f"  {_ptx(n.op)}.{_t(n.out.aval.dtype):<{max(1, 12 - len(_ptx(n.op)))}} {r}, {', '.join(args)};")
        else:
            lines.append(f"  // {n.op} (not a loop op)")
    for v in k.outputs:
        lines.append(f"  st.global.{_t(v.aval.dtype):<5} [{_pname(k, v)}_out + {v.aval.itemsize}*i], {reg.get(id(v), '%?')};")
    lines += ["DONE:", "  ret;", "}"]
    return "\n".join(lines)


def _pname(k, v: Var) -> str:
    return k._names.get(("p", id(v))) or f"buf{v.id}"


def _reduction_listing(k) -> str:
    red = next(n for n in k.nodes if n.op in ops.REDUCTION)
    x = red.operands[0].aval
    n_out = max(red.out.aval.size, 1)
    per = x.size // n_out
    comb = ops.get(red.op).ptx
    t = _t(red.out.aval.dtype)
    return "\n".join([
        f"// {k.name}: {' → '.join(k.ops)}",
        f"// launch: {k.launch}; one block per output element ({n_out}), {per} inputs each",
        f".entry {k.name.replace('.', '_')}(...)", "{",
        f"  acc = identity({comb});",
        f"  for (j = threadIdx.x; j < {per}; j += blockDim.x)     // strided loop over this row",
        f"      acc = {comb}.{t}(acc, ld.global.{t} [in + row*{per} + j]);",
        f"  acc = warp_shuffle_reduce({comb}, acc);              // 5 shfl.sync steps inside a warp",
        f"  st.shared [warp_id], acc;  bar.sync 0;               // then across warps via shared memory",
        f"  if (threadIdx.x == 0) st.global.{t} [out + {red.out.aval.itemsize}*blockIdx.x], reduce(shared);",
        "}",
    ])


def _contraction_listing(k) -> str:
    dot = next(n for n in k.nodes if n.op in ops.CONTRACTION)
    lhs, rhs = dot.operands[0].aval, dot.operands[1].aval
    b, m, n, kk = ops.dot_mnk(lhs, rhs, dot.params)
    tm, tn, tk = k.tile
    steps = math.ceil(kk / tk)
    isz = lhs.itemsize
    mma = "HMMA.16816 (16×8×16, tensor cores)" if lhs.dtype in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2") \
        else "FFMA (fp32 lanes; or TF32 HMMA if allowed)"
    epi = [n_ for n_ in k.nodes if n_ is not dot]
    lines = [
        f"// {k.name}: {' → '.join(k.ops)}",
        f"// C[{b}×{m}×{n}] = A[{m}×{kk}] · B[{kk}×{n}]" + (f", batch {b}" if b > 1 else ""),
        f"// tile plan: each block computes a {tm}×{tn} tile of C; K in steps of {tk} ({steps} steps)",
        f"// launch: {k.launch}  ({k.launch.blocks} tiles)",
        f"for each block (bm, bn{', batch' if b > 1 else ''}):                 // runs on one SM",
        f"    acc[{tm}×{tn}] = 0                         // fp32 accumulators in registers",
        f"    for k0 in 0..{kk} step {tk}:               // {steps} iterations",
        f"        A_s ← A[bm·{tm} : +{tm}, k0 : +{tk}]    // {tm * tk * isz} B, global → shared (cp.async)",
        f"        B_s ← B[k0 : +{tk}, bn·{tn} : +{tn}]    // {tk * tn * isz} B",
        f"        acc += A_s · B_s                       // {mma}",
    ]
    if epi:
        lines.append(f"    acc = {' → '.join(e.op for e in epi)}(acc)   // fused epilogue, still in registers")
    lines.append(f"    C[bm·{tm} : +{tm}, bn·{tn} : +{tn}] ← acc          // the only write of C to device memory")
    return "\n".join(lines)


def _copy_listing(k) -> str:
    n = k.nodes[-1]
    return "\n".join([
        f"// {k.name}: {' → '.join(k.ops)}: moves {k.bytes_read} B in, {k.bytes_written} B out, no arithmetic",
        f"// launch: {k.launch}",
        f"  ld.global [in + index_map(i)]  →  st.global [out + i]      // {n.op}: {n.out.aval.short()}",
    ])


def _library_listing(k) -> str:
    n = next(n for n in k.nodes if n.op in ops.COMPOSITE)
    ins = ", ".join(a.aval.short() for a in n.operands)
    return "\n".join([
        f"// {k.name}: {' → '.join(k.ops)}: a library kernel (not decomposed by the compiler)",
        f"// launch: {k.launch}",
        f"  call {n.op}({ins}) -> {n.out.aval.short()}{ops.get(n.op).format_attrs(n.params)}",
    ])


def listing(k) -> str:
    """The kernel's listing: labsim's pseudo-PTX for a loop kernel, a tile plan for a contraction."""
    if any(n.op in ops.COMPOSITE for n in k.nodes):
        return _library_listing(k)
    return {KernelKind.LOOP: _loop_listing, KernelKind.REDUCTION: _reduction_listing,
            KernelKind.CONTRACTION: _contraction_listing, KernelKind.COPY: _copy_listing}[k.kind](k)
