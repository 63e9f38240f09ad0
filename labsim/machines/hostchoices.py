"""The host/device machine's choices: :class:`Mode` (``Machine.call``) and :class:`How`
(``kernel_loop``), enums that also accept their strings. ``ls.host`` re-exports them."""
from __future__ import annotations

from ..support.choice import Choice


class Mode(Choice):
    """How :meth:`~labsim.machines.host.Machine.call` dispatches a program (a member or its string)."""

    EAGER = "eager"  # one op per kernel, each paying op_time of Python dispatch
    JIT = "jit"      # one compiled call: call_time once, then the launches


MODES = tuple(m.value for m in Mode)


class How(Choice):
    """How :func:`kernel_loop` dispatches its kernels (a member or its string)."""

    ASYNC = "async"  # dispatch all, synchronise once at the end
    SYNC = "sync"    # synchronise after each kernel (a timing loop with block_until_ready inside)
    GRAPH = "graph"  # capture them once, replay as one launch (a CUDA graph)


__all__ = ["Mode", "MODES", "How"]
