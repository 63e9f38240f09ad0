"""A choice among a few named options: an enum whose members are also their strings.

One name per idea: where a function takes one of a few options (a topology, a collective, a
parallelism strategy), the options are a :class:`Choice` enum, and the function accepts the member or
its string (``topology=Topology.RING`` or ``topology="ring"``, any case). A member compares, hashes,
prints, formats and reprs as its string, so ``result.topology == "ring"`` and ``f"{result.topology}"`` keep
working. A wrong value raises an error that names the argument and lists the accepted values.

    class Topology(Choice):
        RING = "ring"
        SWITCH = "switch"

    Topology.of("Ring", "topology")      # Topology.RING
    Topology.of("cube", "topology")      # ValueError: unknown topology 'cube'; expected one of 'ring', 'switch'
"""
from __future__ import annotations
from .errors import ArgumentError

import enum


class Choice(str, enum.Enum):
    """Base of labsim's string enums: members equal (and hash as) their value; the class converts a
    string (any case) to its member, and refuses anything else with the accepted values."""

    __str__ = str.__str__
    __format__ = str.__format__
    __hash__ = str.__hash__

    def __repr__(self) -> str:  # as the string it stands for: errors and dataclass reprs quote 'ring'
        return repr(self.value)

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str):
            for m in cls:
                if m.value.lower() == value.lower():
                    return m
        raise ArgumentError(f"{value!r} is not a {cls.__name__}; expected one of "
                         f"{', '.join(repr(m.value) for m in cls)}")

    @classmethod
    def values(cls) -> tuple[str, ...]:
        """The accepted strings, in the order the members are declared."""
        return tuple(m.value for m in cls)

    @classmethod
    def of(cls, value, arg: str, error: type[Exception] = ValueError, allowed=None, *, where: str | None = None):
        """``value`` (a member or its string, any case) as a member of ``cls``; else ``error`` naming
        ``arg`` and the accepted values (``allowed``: a subset of the members, where only some apply), after
        ``where`` (the function called) when given: "call: unknown mode 'fast'; expected one of ..."."""
        allowed = tuple(cls) if allowed is None else tuple(cls(a) for a in allowed)
        member = None
        if isinstance(value, (str, cls)):
            try:
                member = cls(value)
            except ValueError:
                member = None
        if member is None or member not in allowed:
            accepted = ", ".join(repr(m.value) for m in allowed)
            raise error(f"{where + ': ' if where else ''}unknown {arg} {value!r}; expected one of {accepted}")
        return member


__all__ = ["Choice"]
