"""Pytrees: nested tuples, lists and dicts of arrays, flattened to a list of leaves and a structure.

As in JAX, a **pytree** is a container (tuple, named tuple, list, dict, or ``None``, which holds no
leaves) whose items are pytrees; everything else (an array, a :class:`ShapeDtype`, a Tracer, a
number) is a leaf. Dict keys are visited in sorted order, so ``{"w": ..., "b": ...}`` flattens to
``[b, w]``, and two dicts with the same keys have the same structure whatever their insertion order.
``trace``, ``evaluate`` and ``grad`` use this to accept parameters as ``{"w1": ..., "b1": ...}``.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import re
from dataclasses import dataclass
from typing import Any, Callable, Hashable

_NODE_KINDS = ("tuple", "list", "dict", "None")


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree, without its leaves.

    ``kind`` is ``"leaf"``, ``"None"``, ``"tuple"``, ``"list"`` or ``"dict"``; ``keys`` are a dict's
    sorted keys; ``node_type`` is a named tuple's class (None for a plain tuple).
    """

    kind: str
    children: tuple["TreeDef", ...] = ()
    keys: tuple[Hashable, ...] = ()
    node_type: type | None = None

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def _text(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "None":
            return "None"
        items = [c._text() for c in self.children]
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {t}" for k, t in zip(self.keys, items)) + "}"
        if self.kind == "list":
            return "[" + ", ".join(items) + "]"
        if self.node_type is not None:
            return f"{self.node_type.__name__}(" + ", ".join(f"{k}={t}" for k, t in zip(self.keys, items)) + ")"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def __repr__(self) -> str:
        return f"TreeDef({self._text()})"


LEAF = TreeDef("leaf")


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ArgumentTypeError(f"pytree: dict keys must be sortable (all str, or all numbers); got "
                        f"{sorted({type(k).__name__ for k in d})}") from None


def _flatten(x: Any, leaves: list, is_leaf: Callable[[Any], bool] | None) -> TreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    if x is None:
        return TreeDef("None")
    if type(x) is dict:
        keys = _sorted_keys(x)
        return TreeDef("dict", tuple(_flatten(x[k], leaves, is_leaf) for k in keys), keys)
    if type(x) is list:
        return TreeDef("list", tuple(_flatten(y, leaves, is_leaf) for y in x))
    if type(x) is tuple:
        return TreeDef("tuple", tuple(_flatten(y, leaves, is_leaf) for y in x))
    if _is_namedtuple(x):
        return TreeDef("tuple", tuple(_flatten(y, leaves, is_leaf) for y in x), tuple(type(x)._fields), type(x))
    leaves.append(x)
    return LEAF


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """``(leaves, treedef)``: the leaves in order (dict keys sorted) and the structure holding them.

    ``is_leaf(x)`` true stops the descent at ``x``, as in JAX.
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree`` in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeDef:
    """The :class:`TreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def _build(td: TreeDef, it) -> Any:
    if td.kind == "leaf":
        return next(it)
    if td.kind == "None":
        return None
    items = [_build(c, it) for c in td.children]
    if td.kind == "dict":
        return dict(zip(td.keys, items))
    if td.kind == "list":
        return items
    return td.node_type(*items) if td.node_type is not None else tuple(items)


def tree_unflatten(treedef: TreeDef, leaves) -> Any:
    """The pytree of structure ``treedef`` holding ``leaves`` (in flattening order)."""
    if not isinstance(treedef, TreeDef):
        raise ArgumentTypeError(f"tree_unflatten: expected a TreeDef, got {type(treedef).__name__}")
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ArgumentError(f"tree_unflatten: {treedef} has {treedef.num_leaves} leaves, got {len(leaves)}")
    return _build(treedef, iter(leaves))


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` to the leaves of ``tree`` (and the matching leaves of ``rest``); keep the structure.

    Every tree in ``rest`` must have exactly the structure of ``tree``.
    """
    leaves, td = tree_flatten(tree, is_leaf)
    others = []
    for i, r in enumerate(rest, start=1):
        rl, rtd = tree_flatten(r, is_leaf)
        if rtd != td:
            raise ArgumentError(f"tree_map: tree {i} has structure {rtd}, but tree 0 has structure {td}")
        others.append(rl)
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


def _key_name(k: Hashable) -> str:
    return re.sub(r"[^\w]", "_", str(k)) or "_"


def leaf_paths(treedef: TreeDef) -> list[tuple[str, ...]]:
    """The path of every leaf, as readable keys: dict key, named-tuple field, or position."""
    if treedef.kind == "leaf":
        return [()]
    out = []
    names = treedef.keys if treedef.keys else range(len(treedef.children))
    for k, c in zip(names, treedef.children):
        out += [(_key_name(k),) + p for p in leaf_paths(c)]
    return out


def leaf_names(treedef: TreeDef, root: str) -> tuple[str, ...]:
    """Names for the leaves: ``root`` for a leaf, ``root.w1`` / ``root.0.b`` inside containers."""
    return tuple(".".join((root,) + p) for p in leaf_paths(treedef))


__all__ = ["TreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
           "leaf_paths", "leaf_names"]
