"""Issue 23's acceptance test: the book teaches, chapter by chapter.

Per chapter 01-14: at least five exercises, each with exactly one level class (``level-check``,
``level-estimate``, ``level-design``) and at least one of each level; the "In three lines" summary with
three items right after "What you will learn"; the "you are here" strip in chapters 02-13; a card with
prerequisites and a reading time (computed by ``labsim.viz.journey``); a lab graded by ``ls.labs.check``
in the GPU, warps and tiling chapters; prose with a mean sentence of at most 20 words and none over 40
(measured by ``book/_ext/labsim_prose.py``, as the chapters' authors measure it). If the site is built
(``_build/html``), exercise titles read "Exercise N.k" with N the chapter's number.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SITE
from labsim import viz
from labsim.viz import journey

CHAPTERS = sorted((ROOT / "chapters").glob("[01][0-9]_*.md"))
LEVELS = ("level-check", "level-estimate", "level-design")
STRIP = range(2, 14)  # chapters with the "you are here" strip
LABS = (7, 8, 10)  # chapters with a kernel lab and its checker
MEAN_WORDS, MAX_WORDS = 20, 40


def _prose():
    spec = importlib.util.spec_from_file_location("labsim_prose", ROOT / "book" / "_ext" / "labsim_prose.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("labsim_prose", mod)  # its dataclass looks its module up there
    spec.loader.exec_module(mod)
    return mod


def _number(path: Path) -> int:
    return int(path.name[:2])


def _label(text: str) -> str:
    m = re.search(r"^\((ch-[a-z-]+)\)=\n# ", text, flags=re.M)
    assert m, "no (ch-...)= label before the chapter's title"
    return m.group(1)


def exercises(text: str) -> list[tuple[str, list[str]]]:
    """Every {exercise} directive of a page: (its :label: or title, its classes)."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(`{3,}|:{3,})\{exercise\}(.*)$", line)
        if not m:
            continue
        opts = {}
        for opt in lines[i + 1:]:
            o = re.match(r"^\s*:([\w-]+):\s*(.*)$", opt)
            if not o:
                break
            opts[o.group(1)] = o.group(2)
        found.append((opts.get("label", m.group(2).strip()), opts.get("class", "").split()))
    return found


def summary_items(text: str) -> list[str] | None:
    """The items of the "In three lines" admonition, or None if there is none after "What you will learn"."""
    learn = re.search(r"^(`{3,})\{admonition\} What you will learn\n.*?^\1\s*$", text, flags=re.M | re.S)
    short = re.search(r"^(`{3,})\{admonition\} In three lines\n(.*?)^\1\s*$", text, flags=re.M | re.S)
    if not learn or not short or short.start() < learn.end():
        return None
    if text[learn.end():short.start()].strip():  # right after it: nothing in between
        return None
    body = [ln for ln in short.group(2).splitlines() if ln.strip() and not re.match(r"^:[\w-]+:", ln.strip())]
    if not any(re.match(r"^:class:\s*in-short\s*$", ln.strip()) for ln in short.group(2).splitlines()):
        return None
    return [ln[2:].strip() for ln in body if ln.startswith("- ")] if all(
        ln.startswith(("- ", "  ")) for ln in body) else None


def _ids(paths):
    return [p.stem for p in paths]


def test_there_are_fourteen_chapters():
    assert [_number(p) for p in CHAPTERS] == list(range(1, 15))


@pytest.mark.parametrize("path", CHAPTERS, ids=_ids(CHAPTERS))
def test_exercises_at_three_levels(path):
    ex = exercises(path.read_text(encoding="utf-8"))
    assert len(ex) >= 5, f"{path.name}: {len(ex)} exercises, at least 5 wanted"
    for name, classes in ex:
        levels = [c for c in classes if c in LEVELS]
        assert len(levels) == 1, f"{path.name}: exercise {name} has levels {levels}, exactly one of {LEVELS} wanted"
    have = {c for _, classes in ex for c in classes if c in LEVELS}
    assert have == set(LEVELS), f"{path.name}: no exercise at level {sorted(set(LEVELS) - have)}"


@pytest.mark.parametrize("path", CHAPTERS, ids=_ids(CHAPTERS))
def test_three_line_summary(path):
    items = summary_items(path.read_text(encoding="utf-8"))
    assert items is not None, (f"{path.name}: no '```{{admonition}} In three lines' with ':class: in-short' right "
                               "after 'What you will learn'")
    assert len(items) == 3 and all(items), f"{path.name}: the summary has {len(items)} items, 3 wanted"


@pytest.mark.parametrize("path", [p for p in CHAPTERS if _number(p) in STRIP], ids=_ids(p for p in CHAPTERS
                                                                                          if _number(p) in STRIP))
def test_strip_opens_the_chapter(path):
    text = path.read_text(encoding="utf-8")
    label = _label(text)
    after_title = text.split(f"({label})=\n# ", 1)[1].split("\n", 1)[1]
    m = re.match(r"\n```\{code-cell\} ipython3\n:tags: \[remove-input\]\n(.*?)\n```\n", after_title, flags=re.S)
    assert m, f"{path.name}: the line after the title is not a hidden-input code cell"
    assert f'viz.you_are_here("{label}")' in m.group(1), f"{path.name}: the first cell does not draw its strip"


@pytest.mark.parametrize("path", CHAPTERS, ids=_ids(CHAPTERS))
def test_card_gives_prerequisites_and_reading_time(path):
    label = _label(path.read_text(encoding="utf-8"))
    strip = viz.you_are_here(label)
    page = strip.to_html()
    assert "Read first:" in page and "Reading time:" in page
    assert strip.minutes == journey.reading_time(label) >= 1
    assert re.search(rf"about {strip.minutes} minutes?", re.sub(r"<[^>]+>", "", page))
    for pre in journey.CHAPTERS[label].prerequisites:
        assert f'href="{journey.CHAPTERS[pre].stem}.html#{pre}"' in page
    if _number(path) > 1:
        assert journey.CHAPTERS[label].prerequisites, f"{path.name}: no prerequisite"


@pytest.mark.parametrize("path", [p for p in CHAPTERS if _number(p) in LABS],
                         ids=_ids(p for p in CHAPTERS if _number(p) in LABS))
def test_lab_with_a_labsim_checker(path):
    text = path.read_text(encoding="utf-8")
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    assert any(re.search(r"\bls\.labs\.check\(", c) for c in cells), f"{path.name}: no cell calls ls.labs.check"


@pytest.mark.parametrize("path", CHAPTERS, ids=_ids(CHAPTERS))
def test_short_sentences(path):
    stats = _prose().measure(path)
    long = stats.over(MAX_WORDS)
    assert stats.mean <= MEAN_WORDS, f"{path.name}: mean sentence {stats.mean:.1f} words, at most {MEAN_WORDS} wanted"
    assert not long, (f"{path.name}: {len(long)} sentences over {MAX_WORDS} words, the first "
                      f"({long[0][0]} words): {long[0][1][:120]}")


def test_built_site_numbers_exercises_per_chapter():
    pages = sorted((SITE / "chapters").glob("[01][0-9]_*.html")) if SITE.is_dir() else []
    if not pages:
        pytest.skip("no built site (_build/html): run `make book`")
    for page in pages:
        html = page.read_text(encoding="utf-8")
        titles = re.findall(r'<span class="caption-number">Exercise ([\d.]+) </span>', html)
        want = [f"{_number(page)}.{k}" for k in range(1, len(titles) + 1)]
        assert titles == want, f"{page.name}: exercise titles {titles[:4]}..., wanted {want[:4]}..."


def _ext(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "book" / "_ext" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("path", CHAPTERS, ids=_ids(CHAPTERS))
def test_student_edition_keeps_every_exercise(path):
    text = path.read_text(encoding="utf-8")
    student = _ext("labsim_student").strip_solutions(text)
    assert exercises(student) == exercises(text)
    assert "{solution-start}" not in student


def test_exercises_are_numbered_per_chapter():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "labsim_exnum" in config["sphinx"]["local_extensions"]
    exnum = _ext("labsim_exnum")

    class Env:
        toc_secnumbers: dict = {}
        toc_fignumbers = {"chapters/03_roofline": {"exercise": {"b": (9,), "a": (8,), "c": (11,)}, "figure": {"f": (2,)}},
                          "chapters/12_many_chips": {"exercise": {"z": (40,)}},
                          "book/reading_paths": {"exercise": {"y": (1,)}}}

    env = Env()
    assert exnum.renumber(env) == ["chapters/03_roofline", "chapters/12_many_chips"]
    assert env.toc_fignumbers["chapters/03_roofline"]["exercise"] == {"a": (3, 1), "b": (3, 2), "c": (3, 3)}
    assert env.toc_fignumbers["chapters/12_many_chips"]["exercise"] == {"z": (12, 1)}
    assert env.toc_fignumbers["chapters/03_roofline"]["figure"] == {"f": (2,)}  # figures are labsim_book's
    assert env.toc_fignumbers["book/reading_paths"]["exercise"] == {"y": (1,)}  # not a chapter: unchanged
    assert exnum.renumber(env) == []  # numbered once, stable
