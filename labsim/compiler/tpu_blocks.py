"""labsim's one rule for the VMEM blocks a TPU contraction is cut into.

Introduced in "Inside a TPU" (chapter 9). Two views of a TPU contraction read it: the tile plan that
``kernel.listing_for("TPU v5e")`` prints (:func:`labsim.compiler.plans.matrix_path` and ``_plan``) and the
static schedule that ``ls.tpu.schedule_dot``, ``ls.tpu.estimate`` and ``ls.tpu.run`` time and play
(:func:`labsim.machines.tpu.choose_blocks`). Both call :func:`block_rule`, so the listing shows the block
the schedule uses. It sits on the compiler floor (it imports nothing of the machines) because choosing
the blocks is the compiler's job; the machines only play what it chose.

The rule (labsim's, not XLA's or Pallas's): start from blocks of edge ``max(1024, MXU side)``, shrink
each to the problem (``bm`` rounded up to 8 rows, ``bn`` to the MXU's columns, ``bk`` to its rows),
then halve ``bk``, then ``bn``, then ``bm`` until the blocks fit VMEM (:func:`vmem_bytes`).
"""
from __future__ import annotations

from ..support.errors import count

SUBLANES = 8  # rows of A enter the MXU in groups of 8 (bf16[8,128] @ bf16[128,128] per push)
DEFAULT_BLOCK = 1024  # the compiler's starting block edge, before it is fitted to the problem and to VMEM


def _up(x: int, m: int) -> int:
    return -(-x // m) * m


def vmem_bytes(bm: int, bn: int, bk: int, in_itemsize: int, out_itemsize: int, buffers: int = 2) -> int:
    """VMEM a ``bm × bn × bk`` block step takes: ``buffers`` copies of the A and B blocks and of the C
    block, plus the float32 accumulator: ``buffers·(bm·bk + bk·bn)·s_in + buffers·bm·bn·s_out + 4·bm·bn``.
    Callers check their arguments (``ls.tpu.Blocks.vmem_bytes`` does)."""
    return (buffers * (bm * bk + bk * bn) * in_itemsize + buffers * bm * bn * out_itemsize + 4 * bm * bn)


def block_rule(m: int, n: int, k: int, mxu: tuple[int, int], vmem: int | None, in_itemsize: int = 2,
               out_itemsize: int = 4, double_buffer: bool = True) -> tuple[int, int, int]:
    """The block ``(bm, bn, bk)`` labsim's compiler chooses for ``[m, k] @ [k, n]`` on an MXU of
    ``mxu = (R, C)`` cells with ``vmem`` bytes of VMEM (``None``: not recorded, no fitting). The arguments
    are positive integers (``m``, ``n``, ``k`` may be 0, as in an empty product); a wrong type or sign is
    refused here too, though the public callers (``ls.tpu.choose_blocks``, the tile plan) check first."""
    fn = "tpu_blocks.block_rule"
    m, n, k = (count(fn, a, v) for a, v in (("m", m), ("n", n), ("k", k)))
    r, c = (count(fn, "mxu", v, minimum=1) for v in mxu)
    vmem = None if vmem is None else count(fn, "vmem", vmem, minimum=1)
    edge = max(DEFAULT_BLOCK, r, c)
    bm, bn, bk = min(_up(m, SUBLANES), edge), min(_up(n, c), edge), min(_up(k, r), edge)
    bufs = 2 if double_buffer else 1
    if vmem:
        while vmem_bytes(bm, bn, bk, in_itemsize, out_itemsize, bufs) > vmem:
            if bk > r:
                bk = max(r, bk // 2)
            elif bn > c:
                bn = max(c, bn // 2)
            elif bm > SUBLANES:
                bm = max(SUBLANES, bm // 2)
            else:
                break
    return bm, bn, bk


__all__ = ["DEFAULT_BLOCK", "SUBLANES", "block_rule", "vmem_bytes"]
