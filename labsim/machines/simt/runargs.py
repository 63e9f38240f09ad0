"""The checks of ``run_ir``'s keyword arguments, shared by ``ls.simt.run`` and ``ls.simt.run_kernel``
(:mod:`.program`) and callable from ``run_ir`` itself: it imports nothing from the machine, so
:mod:`.machine` can import it without a cycle.
"""
from __future__ import annotations

from ...hardware import Chip
from ...support.errors import ArgumentError, ArgumentTypeError, count
from .results import Timing

# run_ir's keyword arguments, what each accepts (the checks below), and their upper bounds
_RUN_IR_KWARGS = ("policy", "timing", "trace", "schedulers", "sms", "blocks_per_sm", "issue_width", "max_steps",
                  "max_cycles", "record_mem")
MAX_BLOCKS_PER_SM = 1024   # no GPU holds more resident blocks per SM (H100: 32); a bound that stops a typo
MAX_SMS = 1 << 16


def check_run_kwargs(fn: str, chip: Chip, kw: dict) -> dict:
    """Check ``run_ir``'s keyword arguments as ``fn`` received them (before anything runs), so that a bad
    value is refused with its name instead of hanging (``blocks_per_sm=0`` never finishes a wave) or giving
    a silent wrong answer (``sms=-4`` ran zero SMs and reported 0 cycles). Returns ``kw`` unchanged."""
    unknown = sorted(set(kw) - set(_RUN_IR_KWARGS))
    if unknown:
        raise ArgumentTypeError(f"{fn}: unknown keyword argument(s) {', '.join(map(repr, unknown))}; accepted: "
                                f"{', '.join(_RUN_IR_KWARGS)}")
    if kw.get("sms") is not None:
        count(fn, "sms (streaming multiprocessors)", kw["sms"], minimum=1, maximum=MAX_SMS)
    if kw.get("blocks_per_sm") is not None:
        count(fn, "blocks_per_sm (resident blocks per SM)", kw["blocks_per_sm"], minimum=1, maximum=MAX_BLOCKS_PER_SM)
    if kw.get("schedulers") is not None:
        count(fn, "schedulers (warp schedulers per SM)", kw["schedulers"], minimum=1, maximum=64)
    if "issue_width" in kw:
        count(fn, "issue_width (instructions per scheduler per cycle)", kw["issue_width"], minimum=1, maximum=64)
    for name in ("max_steps", "max_cycles"):
        if name in kw:
            count(fn, name, kw[name], minimum=1)
    if "policy" in kw and kw["policy"] not in ("lrr", "gto"):
        raise ArgumentError(f"{fn}: policy must be 'lrr' (loose round-robin) or 'gto' (greedy-then-oldest), "
                            f"got {kw['policy']!r}")
    if kw.get("timing") is not None and not isinstance(kw["timing"], Timing):
        raise ArgumentTypeError(f"{fn}: timing must be an ls.simt.Timing, got {type(kw['timing']).__name__}")
    if "trace" in kw:
        t = kw["trace"]
        if isinstance(t, str) and t != "auto":
            raise ArgumentError(f"{fn}: trace must be True, False, 'auto' or a number of SMs, got {t!r}")
        if not isinstance(t, (bool, str)):
            count(fn, "trace (SMs to play in the issue model)", t, minimum=1, maximum=MAX_SMS)
    if "record_mem" in kw and not isinstance(kw["record_mem"], bool):
        raise ArgumentTypeError(f"{fn}: record_mem must be True or False, got {kw['record_mem']!r}")
    return kw


__all__ = ["MAX_BLOCKS_PER_SM", "MAX_SMS", "check_run_kwargs"]
