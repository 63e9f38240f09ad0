"""Named choices: enums that also accept their string value (``how="sync"`` or ``How.SYNC``).

A public function that takes one of a few options names them in an :class:`Choice` enum and reads its
argument with :meth:`Choice.of`, which gives a clear error naming the function, the argument and the
options when the value is not one of them.
"""
from __future__ import annotations

from enum import Enum


class Choice(str, Enum):
    """An option of a public function; equal to its string value (``How.SYNC == "sync"``)."""

    @classmethod
    def of(cls, value, where: str, arg: str):
        """``value`` as a member of this enum: a member, or a member's string value."""
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            opts = ", ".join(repr(m.value) for m in cls)
            raise ValueError(f"{where}: {arg} must be one of {opts} (or {cls.__name__}.<NAME>), got {value!r}") \
                from None

    def __str__(self) -> str:
        return self.value


__all__ = ["Choice"]
