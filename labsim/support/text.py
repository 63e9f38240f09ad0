"""Words for numbers in captions, alt text and tables: ``plural(1, "block")`` is "1 block".

Captions and alt text are computed from the state a figure shows, so they must read right for every
value a control can take: "1 block", "2 blocks", "1.5 µs" (a unit is never pluralised).
"""
from __future__ import annotations
from .errors import ArgumentTypeError

import numbers

__all__ = ["plural", "count"]


def plural(n, singular: str, plural_form: str | None = None, fmt: str = "{:,}") -> str:
    """``n`` with the noun in the right grammatical number: ``plural(1, "block")`` → "1 block",
    ``plural(3, "block")`` → "3 blocks", ``plural(2, "entry", "entries")`` → "2 entries".

    Only exactly 1 takes the singular (English: "0 blocks", "1.0 blocks" are plural readings too, but a
    float equal to 1 reads "1 block" when ``fmt`` prints it as 1). ``fmt`` formats the number."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise ArgumentTypeError(f"plural: n must be a number, got {type(n).__name__} {n!r}")
    text = fmt.format(n)
    one = text.strip() in ("1", "1.0", "1.00") or (n == 1 and text.strip().startswith("1") and
                                                   text.strip().rstrip("0").rstrip(".") == "1")
    word = singular if one else (plural_form if plural_form is not None else _plural(singular))
    return f"{text} {word}"


def count(n, singular: str, plural_form: str | None = None) -> str:
    """The noun alone in the number ``n`` asks for: ``count(1, "block")`` → "block"."""
    return plural(n, singular, plural_form).split(" ", 1)[1]


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"
