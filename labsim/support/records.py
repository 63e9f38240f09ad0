"""Plain result records: frozen dataclasses read by attribute (``s.used``), never string-keyed dicts.

A :class:`Record` also answers ``s["used"]`` (the old dict keys) so that code written against the
dicts keeps running while it moves to attributes, and :meth:`Record.as_dict` gives a table row.
"""
from __future__ import annotations

from dataclasses import asdict


class Record:
    """Base of labsim's result records (a frozen dataclass adds the fields)."""

    def __getitem__(self, key: str):
        if not isinstance(key, str) or key not in self.__dataclass_fields__:  # type: ignore[attr-defined]
            raise KeyError(f"{type(self).__name__} has no field {key!r}; its fields are "
                           f"{list(self.__dataclass_fields__)}")  # type: ignore[attr-defined]
        return getattr(self, key)

    def as_dict(self) -> dict:
        return asdict(self)  # type: ignore[call-overload]


__all__ = ["Record"]
