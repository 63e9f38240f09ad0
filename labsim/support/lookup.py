"""Case-insensitive lookup in a table of presets, with an error that lists the names it knows."""
from __future__ import annotations

from .errors import ArgumentTypeError, LabsimError

from typing import Mapping, TypeVar

T = TypeVar("T")


class UnknownNameError(LabsimError, ValueError, KeyError):
    """A name that is not in a table of presets. A ValueError (a bad argument value), and a KeyError
    too so that ``except KeyError`` around a preset lookup keeps working; printed as a plain message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def lookup(presets: Mapping[str, T], name, kind: str, cls: type) -> T:
    """``presets[name]`` ignoring case; an instance of ``cls`` passes through unchanged."""
    if isinstance(name, cls):
        return name
    if not isinstance(name, str):
        raise ArgumentTypeError(f"expected a {kind} name (a string) or a {cls.__name__}, got {type(name).__name__} "
                        f"{name!r:.40}; presets are {sorted(presets)}")
    key = {k.lower(): k for k in presets}.get(name.lower())
    if key is None:
        raise UnknownNameError(f"unknown {kind} {name!r}; presets are {sorted(presets)}")
    return presets[key]
