"""The SIMT machine's fast path (every warp at one instruction, all lanes active: decoded instructions on
whole register arrays) computes what the general path computes, to the bit: outputs, instruction counts
and memory records; and it is the path the compiler's kernels take."""
from __future__ import annotations

import numpy as np
import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim.compiler.isa import Builder, Imm, Param, Pipe, Special
from labsim.machines.simt import decoded, machine

S = ls.ShapeDtype

PROGRAMS = {
    "fma_relu": (lambda x, y: lnp.maximum(x * y + 1.5, 0.0), [S((64, 96)), S((64, 96))]),
    "gelu": (lambda x: ls.nn.gelu(x), [S((48, 80))]),
    "softmax": (lambda x: ls.nn.softmax(x, axis=-1), [S((40, 70))]),
    "matmul_bf16": (lambda a, b: a @ b, [S((72, 40), "bfloat16"), S((40, 56), "bfloat16")]),
}


def _general_only(monkeypatch):
    """Make every instruction take the general path (no decoded instruction)."""
    monkeypatch.setattr(machine, "decode", lambda ir, wave, mem: [None] * len(ir.code))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fast_path_equals_the_general_path_to_the_bit(name, monkeypatch):
    f, specs = PROGRAMS[name]
    prog = ls.compile(ls.trace(f, *specs))
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(s.shape).astype(np.float32) for s in specs]
    fast = ls.simt.run(prog, *xs, chip="A100 80GB")
    _general_only(monkeypatch)
    slow = ls.simt.run(prog, *xs, chip="A100 80GB")
    for a, b in zip(np.atleast_1d(fast.outputs), np.atleast_1d(slow.outputs)):
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    assert fast.thread_instructions == slow.thread_instructions
    assert fast.warp_instructions == slow.warp_instructions
    for kf, ks in zip(fast.kernels, slow.kernels):
        assert len(kf.mem) == len(ks.mem)
        for mf, ms in zip(kf.mem, ks.mem):
            assert (mf.pc, mf.store) == (ms.pc, ms.store)
            for field in ("warps", "lanes", "sectors", "lines"):
                assert np.array_equal(getattr(mf, field), getattr(ms, field))


def test_compiled_elementwise_kernel_is_mostly_decoded():
    prog = ls.compile(ls.trace(lambda x: lnp.exp(x) * 2.0 + x, S((256, 256))))
    ir = ls.simt.kernel_ir(prog.kernels[0], "H100 SXM")
    from labsim.machines.simt.state import _Memory, _Wave
    mem = _Memory(ir, [np.zeros(size, np.float32) for _, _, size in ir.params])
    fast = decoded.decode(ir, _Wave(ir, np.arange(2)), mem)
    arith = [pc for pc, ins in enumerate(ir.code) if ins.dst is not None and ins.guard is None
             and ins.op not in ("ld", "shfl")]
    assert arith, "the kernel has register-to-register instructions"
    assert all(fast[pc] is not None for pc in arith)
    loads = [pc for pc, ins in enumerate(ir.code) if ins.op == "ld" and "global" in ins.mod]
    assert loads and all(fast[pc] is None for pc in loads)


def test_a_load_into_its_own_address_register_records_the_address():
    """``ld.global.u64 %rd, [%rd]`` (pointer chasing): the memory record counts the sectors of the address
    the load read, not of the value it wrote."""
    bld = Builder()
    p = bld.op("ld", "u64", Param("ptrs", 0), mod=("param",))
    tid = bld.op("mov", "u32", Special.TID)
    a = bld.op("mad", "u32", tid, Imm(8, "u32"), p, mod=("wide",), dst_type="u64")
    bld.emit("ld", a, a, type="u64", mod=("global",), pipe=Pipe.MEM)  # a <- ptrs[tid]: 4 KiB apart
    out = bld.op("ld", "u64", Param("out", 1), mod=("param",))
    o = bld.op("mad", "u32", tid, Imm(8, "u32"), out, mod=("wide",), dst_type="u64")
    bld.emit("st", None, o, a, type="u64", mod=("global",), pipe=Pipe.MEM)
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("chase", [("ptrs", "int64", 32), ("out", "int64", 32)], n_inputs=1, grid=1, block=32).verify()
    vals = np.arange(32, dtype=np.int64) * 4096 + (7 << 40)
    run = ls.simt.run_ir(ir, {"ptrs": vals}, trace=False)
    assert np.array_equal(run.outputs["out"], vals)
    load = [m for m in run.mem if not m.store][0]
    assert load.sectors.tolist() == [8]  # 32 consecutive 8-byte addresses: 256 bytes, 8 sectors
