"""The data of :mod:`labsim.viz.journey`: the ten steps, the chapters (steps lit, prerequisites), the reading
paths, and reading times computed from the chapters' sources. See :mod:`labsim.viz.journey` for the rule."""
from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..support.errors import ArgumentError, ArgumentTypeError

#: chapter 1's ten steps (chapters/01_journey.md, "The map: ten steps"); 1-5 once per shape, 6-10 every call
STEPS = ("Trace", "Hand over as HLO", "Optimise", "Generate code", "Load the module",
         "Copy inputs in", "Launch", "Blocks on SMs", "Tensor-core tiles", "Wait, read back")

#: prose words read in a minute
WORDS_PER_MINUTE = 200
#: minutes per code cell: its code shown, or only its output (figure, table, widget) shown
CELL_MINUTES = MappingProxyType({"code": 1.0, "output": 0.5})


@dataclass(frozen=True)
class Chapter:
    """One chapter: its source file's stem, a short name for diagrams, the journey steps it explains
    (1-based numbers into :data:`STEPS`) and the chapters to read before it (their labels)."""
    stem: str
    short: str
    steps: tuple[int, ...]
    prerequisites: tuple[str, ...]


#: label -> Chapter, in book order. Prerequisites are the direct ones (the diagram draws these edges).
CHAPTERS = MappingProxyType({
    "ch-journey": Chapter("01_journey", "Journey", tuple(range(1, 11)), ()),
    "ch-counting": Chapter("02_counting", "Counting", (1,), ("ch-journey",)),
    "ch-roofline": Chapter("03_roofline", "Roofline", (8, 9), ("ch-counting",)),
    "ch-graphs": Chapter("04_graphs", "Graphs", (1, 2), ("ch-counting",)),
    "ch-compiler": Chapter("05_compiler", "Compiler", (3, 4), ("ch-graphs",)),
    "ch-landscape": Chapter("06_landscape", "Landscape", (2, 3, 4, 5), ("ch-compiler",)),
    "ch-gpu": Chapter("07_gpu", "GPU", (7, 8), ("ch-roofline",)),
    "ch-warps": Chapter("08_warps", "Warps", (8,), ("ch-gpu",)),
    "ch-tpu": Chapter("09_tpu", "TPU", (4, 9), ("ch-roofline", "ch-gpu")),
    "ch-tiling": Chapter("10_tiling", "Tiling", (4, 9), ("ch-warps", "ch-tpu")),
    "ch-host-device": Chapter("11_host_device", "Host and device", (5, 6, 7, 10), ("ch-roofline",)),
    "ch-many-chips": Chapter("12_many_chips", "Many chips", (3, 6), ("ch-host-device",)),
    "ch-llm-inference": Chapter("13_llm_inference", "LLM inference", (7, 9), ("ch-many-chips",)),
    "ch-trends": Chapter("14_trends", "Trends", (6, 9), ("ch-tiling", "ch-host-device")),
})

#: reader -> (chapter labels in reading order, why this path). Each path holds every prerequisite of
#: its chapters before them (tests/test_journey_strip.py checks it).
PATHS = MappingProxyType({
    "Performance engineer": (
        ("ch-journey", "ch-counting", "ch-roofline", "ch-host-device", "ch-gpu", "ch-warps", "ch-tpu",
         "ch-tiling", "ch-trends"),
        "You want a kernel or a training step to run faster: where the time goes, then the machines."),
    "Compiler student": (
        ("ch-journey", "ch-counting", "ch-graphs", "ch-compiler", "ch-landscape", "ch-roofline", "ch-gpu",
         "ch-tpu"),
        "You want to know what a compiler does with a program, then what the hardware asks of it."),
    "Serving engineer": (
        ("ch-journey", "ch-counting", "ch-roofline", "ch-host-device", "ch-many-chips", "ch-llm-inference"),
        "You run a model for users: memory, copies, many chips and the cost of each token."),
})


def _chapter(fn: str, label) -> Chapter:
    if not isinstance(label, str):
        raise ArgumentTypeError(f"{fn}: label must be a chapter label (a string) such as 'ch-roofline', got "
                                f"{type(label).__name__} {label!r:.40}; the labels are {', '.join(CHAPTERS)}")
    if label not in CHAPTERS:
        raise ArgumentError(f"{fn}: label {label!r} is not a chapter label; the labels are {', '.join(CHAPTERS)}")
    return CHAPTERS[label]


def _chapters_dir() -> Path:
    here = Path(__file__).resolve().parents[2] / "chapters"
    for d in (here, Path.cwd(), Path.cwd() / "chapters"):
        if (d / f"{CHAPTERS['ch-journey'].stem}.md").is_file():
            return d
    raise ArgumentError(f"the chapter sources (chapters/*.md) are not beside labsim ({here}) nor in the working "
                        f"directory ({Path.cwd()}): pass source= with a chapter's text")


def chapter_source(label: str) -> str:
    """The MyST source of the chapter ``label`` (from chapters/ in the book's checkout)."""
    ch = _chapter("chapter_source", label)
    return (_chapters_dir() / f"{ch.stem}.md").read_text(encoding="utf-8")


def chapter_title(label: str, source: str | None = None) -> str:
    """The chapter's title: its ``# Title`` line."""
    _chapter("chapter_title", label)
    text = chapter_source(label) if source is None else source
    m = re.search(r"^# (.+)$", text, flags=re.M)
    return m.group(1).strip() if m else label


_FENCE = re.compile(r"^\s*(`{3,}|:{3,}|~{3,})\s*(\{[\w:-]+\})?(.*)$")
_NOT_PROSE = {"{code-cell}", "{code-block}", "{code}", "{math}", "{raw}", "{list-table}", "{table}", "{glue:figure}"}
_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`|``?[^`]+``?|\$[^$\n]+\$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"[\w\u00C0-\uFFFF]+(?:[-'’.][\w\u00C0-\uFFFF]+)*")


def source_counts(source: str) -> dict:
    """Prose words and code cells of a chapter's source: {"words", "code_cells", "output_cells"}."""
    if not isinstance(source, str):
        raise ArgumentTypeError(f"source_counts: source must be a chapter's text (a string), got "
                                f"{type(source).__name__}")
    text = re.sub(r"\A---\n.*?\n---\n", "", source, flags=re.S)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"^\$\$.*?\$\$", "", text, flags=re.S | re.M)  # display math, one line or several
    words = code = output = 0
    lines = iter(text.splitlines())
    for line in lines:
        m = _FENCE.match(line)
        if m:
            directive = m.group(2)
            if directive is None and not m.group(3).strip():
                continue  # a closing fence (or an empty opening one: a plain code block is rare)
            if directive is None or directive in _NOT_PROSE:
                body = []  # a code cell or code block: read to its closing fence, keep its options
                for inner in lines:
                    if inner.strip() == m.group(1):
                        break
                    body.append(inner)
                tags = " ".join(b for b in body if b.lstrip().startswith(":tags:"))
                if directive == "{code-cell}" and "remove-cell" not in tags:
                    if "remove-input" in tags:
                        output += 1
                    else:
                        code += 1
            continue  # a prose directive's fence: its body is prose, read on
        s = line.strip()
        if not s or s.startswith(("|", "#")) or re.match(r"^:[\w-]+:", s) or re.match(r"^\(.*\)=$", s):
            continue
        s = _ROLE.sub(" WORD ", _LINK.sub(r"\1", s))
        words += len(_WORD.findall(s))
    return {"words": words, "code_cells": code, "output_cells": output}


def reading_time(label: str, source: str | None = None) -> int:
    """Minutes to read the chapter ``label`` and run its cells (the module's rule), from its source
    (or from ``source``, a chapter's text)."""
    _chapter("reading_time", label)
    c = source_counts(chapter_source(label) if source is None else source)
    minutes = (c["words"] / WORDS_PER_MINUTE + c["code_cells"] * CELL_MINUTES["code"]
               + c["output_cells"] * CELL_MINUTES["output"])
    return max(1, math.ceil(minutes))


def path_minutes(reader: str) -> int:
    """Minutes to read one of :data:`PATHS` (the sum of its chapters' :func:`reading_time`)."""
    if reader not in PATHS:
        raise ArgumentError(f"path_minutes: reader {reader!r} is not a reading path; the paths are "
                            f"{', '.join(PATHS)}")
    return sum(reading_time(label) for label in PATHS[reader][0])


def chapter_table(base: str = "../chapters/"):
    """Every chapter with its prerequisites (links under ``base``) and reading time, as a labsim Table."""
    from ..support.tables import Table

    def link(label: str) -> str:
        return f'<a href="{html.escape(base + CHAPTERS[label].stem)}.html#{label}">{html.escape(chapter_title(label))}</a>'

    rows = [{"chapter": f"<span>{link(label)}</span>",
             # one <span>: a card's cell lays its children out as one flex item each
             "read first": "<span>" + (", ".join(link(p) for p in ch.prerequisites) or "nothing") + "</span>",
             "minutes": reading_time(label)} for label, ch in CHAPTERS.items()]
    return Table(rows, "The chapters, what to read first, and reading time", cards=True,
                 html_cols=("chapter", "read first"))
