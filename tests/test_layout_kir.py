"""The floors below the compiler stay in rooms of a size to live in (issue 20): no module of the kernel IR,
the lowering, the op and ALU tables, the SIMT machine or the hardware facts is over 500 lines, the warp
size is stated once (in labsim/hardware), and no instruction of the kernel IR carries a Python function."""
from __future__ import annotations

import re
from pathlib import Path

import labsim as ls
import labsim.numpy as lnp

ROOT = Path(__file__).resolve().parents[1] / "labsim"
OWNED = ["compiler", "core", "machines/simt", "hardware", "machines/roofline.py"]


def _modules():
    for part in OWNED:
        p = ROOT / part
        yield from ([p] if p.is_file() else sorted(p.rglob("*.py")))


def test_no_module_over_500_lines():
    big = {str(p.relative_to(ROOT)): n for p in _modules() if (n := len(p.read_text().splitlines())) > 500}
    assert not big, f"modules over 500 lines: {big}"


def test_the_warp_size_is_a_hardware_fact():
    stated = [str(p.relative_to(ROOT)) for p in _modules() if re.search(r"^WARP(_SIZE)? = 32", p.read_text(), re.M)]
    assert stated == ["hardware/chip.py"], stated


def test_instructions_name_their_op_not_a_function():
    S = ls.ShapeDtype
    prog = ls.compile(ls.trace(lambda x, y: lnp.exp(x) ** y + ls.nn.gelu(x), S((64,)), S((64,))))
    for k in prog.kernels:
        ir = ls.simt.kernel_ir(k, "H100 SXM")
        for ins in ir.code:
            assert not any(callable(v) for v in ins.attrs.values()), ins.text()
        assert any(ins.attrs.get("alu") == ls.Op.POWER for ins in ir.code)
