"""Exercises numbered per chapter, "Exercise 3.1, 3.2, ..." as figures are (issue 23).

sphinx-exercise numbers exercises with Sphinx's numfig machinery. The book's table of contents is not
numbered, so Sphinx counts every enumerable node across the whole book ("Exercise 8" in chapter 3).
After Sphinx has assigned its numbers (``env-get-updated``, where the toctree collector writes
``env.toc_fignumbers``), this extension renumbers each page's exercises in their order on the page as
(chapter, k): the chapter is the one ``labsim_book`` gives figures (the numbered toctree if there is one,
else the NN of ``chapters/NN_name``, or of ``NN_name`` when a chapter is built alone). Titles ("Exercise 3.1"), solutions ("Solution to Exercise 3.1")
and {numref} links all read these numbers. A page that is not a numbered chapter keeps Sphinx's number.

The student edition (``labsim_student``) cuts only solutions, never exercises, so the numbers stay.
"""
from __future__ import annotations

import re

FIGTYPE = "exercise"


def chapter_number(env, docname: str) -> tuple[int, ...]:
    """The chapter's number as a tuple, () for a page that is not a numbered chapter."""
    nums = (getattr(env, "toc_secnumbers", {}) or {}).get(docname, {}).get("")
    if nums:
        return tuple(nums)
    m = re.match(r"(?:chapters/)?(\d\d)_", docname)  # chapters/NN_name (NN_name when a page is built alone)
    return (int(m.group(1)),) if m else ()


def renumber(env) -> list[str]:
    """Number each chapter's exercises (chapter, 1), (chapter, 2), ... in page order; the docnames changed."""
    changed = []
    for docname, fignums in (getattr(env, "toc_fignumbers", {}) or {}).items():
        numbers = fignums.get(FIGTYPE)
        ch = chapter_number(env, docname)
        if not numbers or not ch:
            continue
        order = sorted(numbers, key=lambda ident: numbers[ident])  # Sphinx counted them in page order
        new = {ident: ch + (k,) for k, ident in enumerate(order, 1)}
        if new != numbers:
            fignums[FIGTYPE] = new
            changed.append(docname)
    return changed


def _env_get_updated(app, env) -> list[str]:
    renumber(env)
    return []  # the toctree collector already asked to rewrite every page whose numbers it (re)assigned


def setup(app) -> dict:
    # after the toctree collector (priority 500) has written env.toc_fignumbers
    app.connect("env-get-updated", _env_get_updated, priority=900)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
