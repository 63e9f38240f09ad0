"""Argument checks shared by the model modules (``ls.llm``, ``ls.serving``): a model, a chip, a dtype, a
context length and a memory budget, each refused with a labsim error that names the function, the
argument, its value and what would be accepted (the vocabulary of :mod:`labsim.support.errors`)."""
from __future__ import annotations

from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError, OutOfMemoryError, count


def model(fn: str, cfg):
    """``cfg`` (a preset name or a TransformerConfig) as a TransformerConfig."""
    from . import llm
    try:
        return llm.get(cfg)
    except TypeError as e:  # not a name nor a config (llm.get's ArgumentTypeError): say which call
        raise ArgumentTypeError(f"{fn}: cfg: {e}") from None


def chip(fn: str, value, arg: str = "chip"):
    """``value`` (a preset name or a Chip) as a Chip."""
    from ..hardware import get as get_chip
    try:
        return get_chip(value)
    except ArgumentTypeError as e:  # not a name at all: say which function and argument
        raise ArgumentTypeError(f"{fn}: {arg}: {e}") from None
    except LabsimError:
        raise
    except TypeError as e:
        raise ArgumentTypeError(f"{fn}: {arg}: {e}") from None


def matrix_dtype(fn: str, c, dtype) -> str:
    """A dtype the chip has a matrix rate for."""
    if not isinstance(dtype, str) or dtype not in c.matrix_flops:
        raise ArgumentError(f"{fn}: {c.name} has no matrix rate for dtype {dtype}; it has {list(c.matrix_flops)}")
    return dtype


def context(fn: str, cfg, positions: int, what: str = "the context", hint: str = "") -> int:
    """Refuse ``positions`` beyond the model's maximum context (``max_seq``)."""
    if positions > cfg.max_seq:
        raise ArgumentError(f"{fn}: {what} is {positions:,} tokens, beyond {cfg.name}'s maximum context of "
                            f"{cfg.max_seq:,} tokens (max_seq){hint}")
    return positions


def pairs(fn: str, arg: str, seqs) -> list[tuple[int, int]]:
    """A list of (new_tokens, kv_len) pairs of whole numbers: new_tokens >= 1, kv_len >= 0."""
    if isinstance(seqs, (str, bytes)) or not hasattr(seqs, "__iter__"):
        raise ArgumentTypeError(f"{fn}: {arg} must be a list of (new_tokens, kv_len) pairs, got "
                                f"{type(seqs).__name__} {seqs!r}")
    out = []
    for i, s in enumerate(seqs):
        if isinstance(s, (str, bytes)) or not hasattr(s, "__len__") or len(s) != 2:
            raise ArgumentError(f"{fn}: {arg}[{i}] must be a pair (new_tokens, kv_len), got {s!r}")
        out.append((count(fn, f"{arg}[{i}] new_tokens", s[0], minimum=1),
                    count(fn, f"{arg}[{i}] kv_len", s[1], minimum=0)))
    if not out:
        raise ArgumentError(f"{fn}: {arg} is empty (give at least one (new_tokens, kv_len))")
    return out


def memory(fn: str, cfg, c, weights: float, kv: float, *, hint: str = "") -> None:
    """Refuse a step whose weights and KV cache do not fit in one chip's HBM, with the numbers."""
    need, cap = weights + kv, c.hbm_capacity
    if need > cap:
        chips = -(-int(need) // int(cap))
        raise OutOfMemoryError(
            f"{fn}: {cfg.name} needs {need / 2**30:,.1f} GiB on one chip (weights {weights / 2**30:,.1f} GiB + "
            f"KV cache {kv / 2**30:,.1f} GiB) but the {c.name} holds {cap / 2**30:,.1f} GiB: "
            f"{(need - cap) / 2**30:,.1f} GiB too many. Split the model over at least {chips} chips (tensor "
            f"parallelism), use a smaller batch, context or dtype{hint}",
            report={"weights": weights, "kv_cache": kv, "capacity": cap, "chips_needed": chips})


def pos(v, name: str, where: str) -> int:
    return count(where, name, v, minimum=1)


def span(fn: str, arg: str, r, lo: int) -> tuple[int, int]:
    """An inclusive range (lo, hi) of whole numbers with ``lo`` <= lo <= hi."""
    if isinstance(r, (str, bytes)) or not hasattr(r, "__len__") or len(r) != 2:
        raise ArgumentError(f"{fn}: {arg} must be a range (lo, hi) of whole numbers, got {r!r}")
    a, b = count(fn, f"{arg}[0]", r[0], minimum=lo), count(fn, f"{arg}[1]", r[1], minimum=lo)
    if a > b:
        raise ArgumentError(f"{fn}: {arg} must run from low to high, got {r!r}")
    return a, b


def seed(fn: str, seed) -> int:
    return count(fn, "seed", seed, minimum=0)
