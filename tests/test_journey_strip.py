"""labsim.viz.journey: the "you are here" strip, reading times and reading paths (issue 23)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from labsim import viz
from labsim.support.errors import LabsimError
from labsim.viz import journey


class _Steps(HTMLParser):
    """The strip's list items: (class, aria-current, text) for each step, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[list] = []
        self.links: list[str] = []
        self._in = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "li":
            self.items.append([a.get("class", ""), a.get("aria-current"), ""])
            self._in += 1
        elif tag == "a":
            self.links.append(a.get("href", ""))

    def handle_endtag(self, tag):
        if tag == "li":
            self._in -= 1

    def handle_data(self, data):
        if self._in:
            self.items[-1][2] += data


@pytest.mark.parametrize("label", list(journey.CHAPTERS))
def test_lit_steps_match_the_data(label):
    strip = viz.you_are_here(label)
    p = _Steps()
    p.feed(strip.to_html())
    assert len(p.items) == len(journey.STEPS) == 10
    lit = [i for i, (cls, cur, _) in enumerate(p.items, 1) if "labsim-journey-lit" in cls.split()]
    assert lit == sorted(journey.CHAPTERS[label].steps)
    # the non-colour cues: aria-current and a spoken "explained here" on exactly the lit steps
    assert [i for i, (_, cur, _) in enumerate(p.items, 1) if cur == "step"] == lit
    assert [i for i, (_, _, text) in enumerate(p.items, 1) if "explained here" in text] == lit
    for (_, _, text), name in zip(p.items, journey.STEPS):
        assert name in text.replace("&amp;", "&")


@pytest.mark.parametrize("label", list(journey.CHAPTERS))
def test_card_links_the_prerequisites_and_gives_minutes(label):
    strip = viz.you_are_here(label)
    p = _Steps()
    p.feed(strip.to_html())
    want = [f"{journey.CHAPTERS[q].stem}.html#{q}" for q in journey.CHAPTERS[label].prerequisites]
    assert p.links == ["01_journey.html#ch-journey"] + want  # chapter 1's map, then the prerequisites
    assert strip.minutes == journey.reading_time(label) >= 1
    m = re.search(r"about (\d+) minutes?", strip.card_text())
    assert m and int(m.group(1)) == strip.minutes
    assert ("Read first: none" in strip.card_text()) == (not want)


def test_bad_label_names_it_and_the_known_ones():
    with pytest.raises(LabsimError) as e:
        viz.you_are_here("ch-roof")
    msg = str(e.value)
    assert "you_are_here" in msg and "'ch-roof'" in msg and "ch-roofline" in msg and "ch-trends" in msg
    with pytest.raises(LabsimError, match="you_are_here: label must be a chapter label"):
        viz.you_are_here(3)
    with pytest.raises(LabsimError, match="reading_time: label 'x'"):
        journey.reading_time("x")
    with pytest.raises(LabsimError, match="chapter_map: label 'ch-nope'"):
        journey.chapter_map(highlight=["ch-nope"])


def _page(words: int, cells: int = 0, hidden: int = 0) -> str:
    body = " ".join(["word"] * words)
    code = "\n```{code-cell} ipython3\nx = 1\n```\n" * cells
    out = "\n```{code-cell} ipython3\n:tags: [remove-input]\n\nx\n```\n" * hidden
    gone = "\n```{code-cell} ipython3\n:tags: [remove-cell]\n\nx\n```\n" * 5
    return f"---\nkernelspec: {{}}\n---\n\n(ch-x)=\n# Title here\n\n{body}.\n{code}{out}{gone}\n```python\nnot prose\n```\n"


def test_reading_time_follows_the_rule_and_grows_with_words():
    c = journey.source_counts(_page(1000, 3, 2))
    assert c == {"words": 1000, "code_cells": 3, "output_cells": 2}
    wpm, per = journey.WORDS_PER_MINUTE, journey.CELL_MINUTES
    expect = -(-(1000 / wpm + 3 * per["code"] + 2 * per["output"]) // 1)
    assert journey.reading_time("ch-roofline", source=_page(1000, 3, 2)) == expect
    times = [journey.reading_time("ch-roofline", source=_page(n)) for n in (200, 2000, 6000)]
    assert times[0] < times[1] < times[2]
    assert times[2] == -(-6000 // wpm)


def test_prose_words_leave_out_code_options_tables_and_math():
    src = ("```{exercise} A title\n:label: ex-x-1\n:class: level-check\nOne two three.\n```\n"
           "| a | b |\n|---|---|\n\n$$\nx = y\n$$\n\n<!-- hidden words here -->\n"
           "Use {term}`GEMM <gemm>` and `code` with [a link](x.md).\n")
    assert journey.source_counts(src)["words"] == 3 + 7


def test_paths_hold_their_prerequisites_first():
    for who, (path, why) in journey.PATHS.items():
        assert why.strip() and len(path) == len(set(path))
        for i, label in enumerate(path):
            for p in journey.CHAPTERS[label].prerequisites:
                assert p in path[:i], f"{who}: {label} needs {p} first"


def test_prerequisites_come_earlier_in_the_book():
    order = list(journey.CHAPTERS)
    for label, ch in journey.CHAPTERS.items():
        assert all(order.index(p) < order.index(label) for p in ch.prerequisites)
        assert ch.steps and all(1 <= s <= len(journey.STEPS) for s in ch.steps)


def test_chapter_map_has_every_chapter_and_edge():
    d = journey.chapter_map(highlight=journey.PATHS["Serving engineer"][0])
    for label, ch in journey.CHAPTERS.items():
        assert f"{ch.short}" in d.alt
        for p in ch.prerequisites:
            assert f"{p} -> {label}" in d.source.replace('"', "")
    assert d.min_width_px() <= 390 - 32  # readable on a phone without scrolling sideways


def test_reading_paths_page_lists_the_paths_of_the_module():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "book" / "reading_paths.md").read_text(encoding="utf-8")
    blocks = re.split(r"^\*\*An? ([a-z ]+)\.\*\*", text, flags=re.M)[1:]
    found = {who.strip().capitalize(): re.findall(r"^\d+\. \{ref\}`(ch-[a-z-]+)`", body, flags=re.M)
             for who, body in zip(blocks[::2], blocks[1::2])}
    assert found == {who: list(path) for who, (path, _) in journey.PATHS.items()}


def test_chapter_table_and_path_minutes_come_from_the_data():
    page = journey.chapter_table()._repr_html_()
    for label, ch in journey.CHAPTERS.items():
        assert f'href="../chapters/{ch.stem}.html#{label}"' in page
        assert f'data-value="{journey.reading_time(label)}"' in page
    for who, (path, _) in journey.PATHS.items():
        assert journey.path_minutes(who) == sum(journey.reading_time(label) for label in path)
    with pytest.raises(LabsimError, match="path_minutes: reader 'Nobody' .*Serving engineer"):
        journey.path_minutes("Nobody")


def test_card_alone_has_no_steps():
    card = viz.you_are_here("ch-journey", steps=False)
    p = _Steps()
    p.feed(card.to_html())
    assert p.items == [] and "Read first:" in card.to_html() and "Reading time:" in card.to_html()
    assert repr(card) == card.card_text()
    with pytest.raises(LabsimError, match="you_are_here: steps must be True or False, got 'no'"):
        viz.you_are_here("ch-journey", steps="no")
