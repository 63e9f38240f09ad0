"""The host/device machine's choices (:class:`Mode`, :class:`How`) and the chapter's experiment: ``n``
kernels dispatched by one host thread (``ls.host.kernel_loop``). Split from :mod:`labsim.machines.host`
to keep each module short; ``ls.host`` re-exports them."""
from __future__ import annotations

from ..hardware import Chip
from ..support.choices import Choice
from .hostarrays import _count


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


def kernel_loop(n: int, duration: float, *, chip: Chip | str = "H100 SXM", how: How | str = How.ASYNC,
                fused: int = 1, eager: bool = True, **machine_kw):
    """The chapter's experiment: ``n`` kernels of ``duration`` seconds each, dispatched eagerly.

    ``how`` (a :class:`How` or its string): "async" (dispatch all, synchronise once at the end), "sync"
    (synchronise after each, as a timing loop that calls ``block_until_ready`` inside does), or "graph"
    (capture them once, replay as one launch). ``fused`` > 1 fuses every ``fused`` consecutive ops into
    one kernel of ``fused × duration`` (the same work, fewer launches; labsim assumes fusion saves
    nothing but launches). ``eager``: each launch also pays ``op_time`` of Python dispatch (False:
    launches from compiled code). Returns the :class:`~labsim.machines.host.Machine` after the loop.
    """
    from .host import Machine

    how = How.of(how, "kernel_loop", "how")
    n, fused = _count(n, "n"), _count(fused, "fused")
    m = Machine(chip, **machine_kw)
    k = -(-n // fused)
    d = duration * fused
    if how is How.GRAPH:
        with m.capture() as graph:
            for i in range(k):
                m.launch(f"k{i}", duration=d, eager=eager)
        m.replay(graph)
    else:
        for i in range(k):
            m.launch(f"k{i}", duration=d, eager=eager)
            if how is How.SYNC:
                m.synchronize()
    m.synchronize()
    return m


__all__ = ["Mode", "MODES", "How", "kernel_loop"]
