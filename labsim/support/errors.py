"""One validation vocabulary for labsim's public entry points.

Every error labsim raises on purpose is a :class:`LabsimError`, so a user (and the misuse tests) can tell
labsim's refusal from a bug. Each keeps a built-in base (``ValueError``, ``TypeError``, ``MemoryError``)
so that ``except ValueError`` keeps working.

The checks below are what a public function calls on its arguments before it computes anything. Each
message names the function, the argument, the value given and what would be accepted::

    n = count("step_time", "batch", batch, minimum=1)       # an int >= 1 (operator.index, so no 2.5)
    bw = positive("ring_time", "bandwidth", bandwidth)      # a finite number > 0
    p = probability("speculative", "alpha", alpha)          # a finite number in [0, 1]
    fits("Machine.put", "the array", nbytes, chip.hbm_capacity, where="H100 SXM's HBM")
"""
from __future__ import annotations

import math
import operator
from numbers import Real


class LabsimError(Exception):
    """Base of every error labsim raises on purpose (a refusal that names the problem)."""


class ArgumentError(LabsimError, ValueError):
    """An argument of a public function is out of its range or of the wrong kind."""


class ArgumentTypeError(LabsimError, TypeError):
    """An argument of a public function has a type the function cannot use."""


class OutOfMemoryError(LabsimError, MemoryError):
    """Data does not fit where a machine would place it. ``report`` (when given) holds the details."""

    def __init__(self, message, report=None) -> None:
        super().__init__(str(message))
        self.report = report if report is not None else (None if isinstance(message, str) else message)


def _name(fn: str, arg: str) -> str:
    return f"{fn}: {arg}" if fn else arg


def count(fn: str, arg: str, value, *, minimum: int = 0, maximum: int | None = None) -> int:
    """``value`` as an int (``operator.index``: no floats, no strings, no bools) within the bounds."""
    if isinstance(value, bool):
        raise ArgumentTypeError(f"{_name(fn, arg)} must be an integer, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise ArgumentTypeError(f"{_name(fn, arg)} must be an integer, got {value!r} "
                                f"({type(value).__name__})") from None
    if n < minimum:
        raise ArgumentError(f"{_name(fn, arg)} must be at least {minimum:,}, got {n:,}")
    if maximum is not None and n > maximum:
        raise ArgumentError(f"{_name(fn, arg)} must be at most {maximum:,}, got {n:,}")
    return n


def number(fn: str, arg: str, value, *, minimum: float | None = None, maximum: float | None = None,
           strict_min: bool = False) -> float:
    """``value`` as a finite float within the bounds (``strict_min``: strictly greater than ``minimum``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        try:
            import numpy as np
            if isinstance(value, np.generic) and np.isrealobj(value) and not isinstance(value, np.bool_):
                value = value.item()
            else:
                raise TypeError
        except TypeError:
            raise ArgumentTypeError(f"{_name(fn, arg)} must be a number, got {value!r} "
                                    f"({type(value).__name__})") from None
    x = float(value)
    if not math.isfinite(x):
        raise ArgumentError(f"{_name(fn, arg)} must be finite, got {value!r}")
    if minimum is not None and (x <= minimum if strict_min else x < minimum):
        word = "greater than" if strict_min else "at least"
        raise ArgumentError(f"{_name(fn, arg)} must be {word} {minimum:g}, got {value!r}")
    if maximum is not None and x > maximum:
        raise ArgumentError(f"{_name(fn, arg)} must be at most {maximum:g}, got {value!r}")
    return x


def positive(fn: str, arg: str, value) -> float:
    """A finite number > 0 (a rate, a bandwidth, a clock)."""
    return number(fn, arg, value, minimum=0.0, strict_min=True)


def nonnegative(fn: str, arg: str, value) -> float:
    """A finite number >= 0 (a latency, an overhead, a size in bytes)."""
    return number(fn, arg, value, minimum=0.0)


def probability(fn: str, arg: str, value) -> float:
    """A finite number in [0, 1]."""
    return number(fn, arg, value, minimum=0.0, maximum=1.0)


def fits(fn: str, what: str, need: float, capacity: float, *, where: str) -> None:
    """Raise :class:`OutOfMemoryError` if ``need`` bytes do not fit in ``capacity`` bytes at ``where``."""
    if need > capacity:
        raise OutOfMemoryError(
            f"{fn}: {what} needs {need:,.0f} bytes ({need / 2**30:.2f} GiB) but {where} holds "
            f"{capacity:,.0f} bytes ({capacity / 2**30:.2f} GiB): {(need - capacity) / 2**30:.2f} GiB too many")


def flag(fn: str, arg: str, value) -> bool:
    """``value`` as a bool: only ``True`` or ``False`` (a NumPy bool too); no strings, no 0/1."""
    if isinstance(value, bool):
        return value
    import numpy as np
    if isinstance(value, np.bool_):
        return bool(value)
    raise ArgumentTypeError(f"{_name(fn, arg)} must be True or False, got {value!r} ({type(value).__name__})")
