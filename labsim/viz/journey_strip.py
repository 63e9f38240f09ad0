"""The "you are here" strip of :mod:`labsim.viz.journey`: HTML, like labsim's tables and tabs.

HTML contract of the strip (tested by ``tests/test_journey_strip.py``): a ``nav.labsim-journey`` with an
``aria-label``; two ``ol.labsim-journey-steps`` (steps 1-5, compiled once per shape; 6-10, run on every
call), one ``li`` per step, a lit step with class ``labsim-journey-lit`` and ``aria-current="step"``;
then ``p.labsim-journey-card`` with the prerequisites (links) and the reading time. A lit step is filled
with the palette's compute blue *and* bold *and* outlined in a solid line (an unlit one: white, a dashed
grey line), and a screen reader hears "explained here": the cue never rests on colour alone. On a
narrow page the two halves stack: two rows of five.
"""
from __future__ import annotations

import html

from ..support.text import plural
from .journey_data import CHAPTERS, STEPS
from .palette import ROLE, TINT

_HIDDEN = ("position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;"
           "clip:rect(0,0,0,0);white-space:nowrap;border:0")
_LIT = (f"background:{ROLE['compute']};color:#fff;font-weight:700;border:2px solid #000")
_DIM = "background:#fff;color:#444;font-weight:400;border:1px dashed #767676"
_HALVES = (("Compile: once per shape", 1, TINT["vector"]), ("Run: every call", 6, TINT["memory"]))


def _href(label: str) -> str:
    return f"{CHAPTERS[label].stem}.html#{label}"


class JourneyStrip:
    """The "you are here" strip of one chapter (see the module docstring); ``_repr_html_`` draws it."""

    def __init__(self, label: str, title: str, lit: tuple[int, ...], prerequisites: tuple[tuple[str, str], ...],
                 minutes: int, counts: dict, steps: bool = True) -> None:
        self.steps = steps  # False: the card alone (chapter 1, which draws its full map itself)
        self.label = label
        self.title = title
        self.lit = lit  # 1-based step numbers
        self.prerequisites = prerequisites  # (label, title) pairs
        self.minutes = minutes
        self.counts = counts

    @property
    def lit_names(self) -> list[str]:
        return [STEPS[i - 1] for i in self.lit]

    def _steps_text(self) -> str:
        names = [f"{i} ({n})" for i, n in zip(self.lit, self.lit_names)]
        if len(names) == 10:
            return "all ten steps"
        return ("step " if len(names) == 1 else "steps ") + (", ".join(names[:-1]) + " and " + names[-1]
                                                              if len(names) > 1 else names[0])

    @property
    def alt(self) -> str:
        return (f"You are here: chapter 1's journey of ten steps; this chapter explains {self._steps_text()}.")

    def card_text(self) -> str:
        """The card under the strip as plain text: prerequisites and reading time."""
        pre = ", ".join(t for _, t in self.prerequisites) or "none"
        return f"Read first: {pre}. Reading time: about {plural(self.minutes, 'minute')}."

    def _rule(self) -> str:
        c = self.counts
        return (f"{c['words']:,} words of prose at 200 a minute, {plural(c['code_cells'], 'code cell')} at "
                f"1 minute, {plural(c['output_cells'], 'figure or table', 'figures or tables')} at half a minute")

    def to_html(self) -> str:
        halves = []
        for name, first, tint in _HALVES:
            items = []
            for i in range(first, first + 5):
                lit = i in self.lit
                cue = '<span style="%s"> (explained here)</span>' % _HIDDEN if lit else ""
                items.append(
                    f'<li class="labsim-journey-step{" labsim-journey-lit" if lit else ""}"'
                    f'{" aria-current=" + chr(34) + "step" + chr(34) if lit else ""} style="{_LIT if lit else _DIM};'
                    'flex:1 1 0;min-width:0;margin:0;padding:3px 2px;border-radius:4px;text-align:center;'
                    'font-size:12px;line-height:1.25;overflow-wrap:anywhere;hyphens:auto">'
                    f'<span style="display:block">{i}</span>{html.escape(STEPS[i - 1])}{cue}</li>')
            halves.append(
                f'<div style="flex:1 1 300px;min-width:0;background:{tint};border-radius:6px;padding:3px 4px">'
                f'<p style="margin:0 0 2px;font-size:12px;line-height:1.3;color:#222">{html.escape(name)}</p>'
                f'<ol class="labsim-journey-steps" start="{first}" style="display:flex;gap:3px;list-style:none;'
                f'margin:0;padding:0">{"".join(items)}</ol></div>')
        pre = ", ".join(f'<a href="{_href(lab)}">{html.escape(t)}</a>' for lab, t in self.prerequisites) or "none"
        card = (f'<p class="labsim-journey-card" style="margin:.4em 0 0;font-size:14px;line-height:1.4">'
                f'<strong>Read first:</strong> {pre}. <strong>Reading time:</strong> about '
                f'<span class="labsim-journey-minutes" title="{html.escape(self._rule())}">'
                f'{plural(self.minutes, "minute")}</span> ({html.escape(self._rule())}).</p>')
        head = (f'<p style="margin:0 0 .3em;font-size:14px;line-height:1.4"><strong>You are here.</strong> '
                f'<a href="{_href("ch-journey")}">Chapter 1</a> follows one call through ten steps. This chapter '
                f'explains {self._steps_text()}, drawn filled, bold and outlined.</p>')
        strip = f'{head}<div style="display:flex;flex-wrap:wrap;gap:4px">{"".join(halves)}</div>' if self.steps else ""
        return (f'<nav class="labsim-journey" aria-label="You are here: this chapter on the journey" '
                f'style="margin:.2em 0 1em">{strip}{card}</nav>')

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        marks = " ".join(f"[{i} {s}]" if i in self.lit else f"{i} {s}" for i, s in enumerate(STEPS, 1))
        return f"You are here ({self.title}): {marks}\n{self.card_text()}" if self.steps else self.card_text()
