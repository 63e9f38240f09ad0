"""A kernel's listing is named after that kernel and holds its ops, and the chapters print the kernel
they name (chapter 1 once printed the `maximum` kernel under the heading "the `add` kernel": it picked
the kernel by its place in the program, ``eager.kernels[2]``, which moved when the bias add absorbed
its broadcast)."""
from __future__ import annotations

import re

import pytest

import labsim as ls
import labsim.numpy as lnp
from conftest import ROOT

S = ls.ShapeDtype
# the instruction each op leaves in an elementwise listing
INSTRUCTION = {"add": "add.", "maximum": "max.", "multiply": "mul.", "exp": "ex2.", "subtract": "sub."}


def _layer(a, b, bias):
    return ls.nn.relu(lnp.dot(a, b) + bias)


def _programs():
    g = ls.trace(_layer, S((64, 64), "bfloat16"), S((64, 64), "bfloat16"), S((64,), "bfloat16"))
    yield "layer, eager", ls.compile(g, passes=[])
    yield "layer, compiled", ls.compile(g)
    yield "chain, eager", ls.compile(ls.trace(lambda x, y: lnp.exp(x * y - y), S((256,)), S((256,))), passes=[])
    yield "softmax", ls.compile(ls.trace(lambda x: ls.nn.softmax(x, axis=-1), S((8, 128))))


@pytest.mark.parametrize("what,prog", list(_programs()), ids=lambda v: v if isinstance(v, str) else "")
def test_each_listing_is_named_after_its_kernel_and_lists_its_ops(what, prog):
    for k in prog.kernels:
        head = k.listing.splitlines()[0]
        m = re.match(r"// (\S+): (.*?)(;|\s{2,}\[|$)", head)
        assert m, f"{what}: listing of {k.name} starts {head!r}"
        assert m.group(1) == k.name, f"{what}: the listing of {k.name} is headed {m.group(1)}"
        assert m.group(2).split(" → ") == list(k.ops), f"{what}: {k.name} has ops {k.ops}, its listing says {m.group(2)}"
        entry = [line for line in k.listing.splitlines() if line.startswith(".entry ")]
        if entry:  # an elementwise kernel's pseudo-PTX: its entry point and its instructions
            assert entry[0].startswith(f".entry {k.name.replace('.', '_')}("), (k.name, entry[0])
            body = k.listing.split(entry[0], 1)[1]
            for op in k.ops:
                if op in INSTRUCTION:
                    assert INSTRUCTION[op] in body, f"{what}: {k.name} does {op} but its listing has no {INSTRUCTION[op]}"


def test_chapter_1_prints_the_add_kernel_it_names():
    text = (ROOT / "chapters/01_journey.md").read_text(encoding="utf-8")
    assert "listing of the eager program's `add` kernel" in text
    m = re.search(r"^(add_kernel = .*)$", text, re.M)
    assert m, "chapter 1 no longer picks the add kernel as `add_kernel = ...`"
    eager = dict(_programs())["layer, eager"]
    scope = {"eager": eager}
    exec(m.group(1), scope)
    k = scope["add_kernel"]
    assert "add" in k.ops and "maximum" not in k.ops, k.ops
    assert "add." in k.listing and "max." not in k.listing
    assert "print(add_kernel.listing)" in text
