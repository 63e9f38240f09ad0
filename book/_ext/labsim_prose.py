"""Sentence statistics of a chapter's prose, for the book's plain-English rule (issue 23).

Many readers read English as a second language, so the book keeps sentences short: a mean under 20
words per chapter and no sentence over 40. This module measures that the same way for everyone:

    python book/_ext/labsim_prose.py chapters/03_roofline.md           # mean, max, count over 40
    python book/_ext/labsim_prose.py chapters/*.md --long 35           # and every sentence over 35 words

What counts as prose: paragraphs, list items, admonition and exercise bodies, block quotes, captions
and figure captions written as paragraphs. What does not: the YAML header, code cells and code blocks, directive
option lines (``:label: ...``), tables (lines starting with ``|``), display math (``$$ ... $$``),
headings, HTML comments and MyST targets (``(label)=``).

How words are counted: an inline role or literal (``{term}`x <y>```, ``{glue:text}`key```, ```code```,
``$math$``) is one word (a citation is none); a link ``[text](url)`` counts its text. A sentence ends at
``.``, ``!`` or ``?`` before a space and a capital, digit, quote, bracket or inline role, and at the end
of a paragraph or list item (each list item is a sentence of its own, or several). Colons and
semicolons do not end sentences: a semicolon is no cure for a long sentence. Common abbreviations (e.g., i.e., etc., vs., Fig.) do not end sentences.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})(.*)$")
_PROSE_DIRECTIVES = {"admonition", "note", "tip", "warning", "important", "exercise", "solution",
                     "solution-start", "hint", "caution", "attention", "seealso", "epigraph", "sidebar",
                     "margin", "dropdown", "topic", "danger", "error", "card", "div"}
_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|Fig|Figs|Eq|Ch|No|approx|resp|al)\.", re.I)
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LITERAL = re.compile(r"``?[^`]+``?")
_MATH = re.compile(r"\$[^$\n]+\$")
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_A-Z0-9\u00C0-\uFFFF]|WORD|labsim\b|jnp\b|torch\b)")
_WORD = re.compile(r"[\w\u00C0-\uFFFF]")


@dataclass
class ProseStats:
    """The sentences of one file's prose and their lengths in words."""
    path: str
    sentences: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.lengths) if self.lengths else 0.0

    @property
    def longest(self) -> int:
        return max(self.lengths, default=0)

    def over(self, limit: int) -> list[tuple[int, str]]:
        return [(n, s) for n, s in zip(self.lengths, self.sentences) if n > limit]


def _role(match: re.Match) -> str:
    name, body = match.group(1), match.group(2)
    if name in ("cite", "cite:p", "cite:t", "footcite"):
        return ""
    if name in ("term", "ref", "numref", "doc", "eq", "download"):
        text = body.split("<")[0].strip() if "<" in body else body
        return text or "WORD"
    return "WORD"


def _clean(text: str) -> str:
    text = _ROLE.sub(_role, text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _LITERAL.sub("WORD", text)
    text = _MATH.sub("WORD", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def prose_blocks(source: str) -> list[str]:
    """The prose of a MyST page as a list of blocks: paragraphs and list items, markup still in."""
    lines = source.splitlines()
    if lines and lines[0].strip() == "---":  # the YAML header
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1:]
    blocks: list[str] = []
    current: list[str] = []
    stack: list[tuple[str, bool]] = []  # open fences: (marker, is prose)
    in_math = in_comment = False

    def flush():
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for raw in lines:
        line = raw.strip()
        if in_comment:
            in_comment = "-->" not in line
            continue
        if line.startswith("<!--"):
            flush()
            in_comment = "-->" not in line
            continue
        fence = _FENCE.match(raw)
        if fence:
            marker, rest = fence.group(2), fence.group(3).strip()
            if stack and marker[0] == stack[-1][0][0] and len(marker) >= len(stack[-1][0]) and not rest:
                flush()
                stack.pop()
                continue
            if rest or not stack or marker[0] != stack[-1][0][0]:
                flush()
                name = re.match(r"\{([\w:-]+)\}", rest)
                prose = bool(name) and name.group(1) in _PROSE_DIRECTIVES
                stack.append((marker, prose and all(p for _, p in stack)))
                continue
        if stack and not stack[-1][1]:
            continue
        if line == "$$" or (line.startswith("$$") and not line.endswith("$$")) or \
                (in_math and line.endswith("$$")):
            flush()
            in_math = not in_math if line == "$$" or not (line.startswith("$$") and line.endswith("$$")) \
                else in_math
            continue
        if in_math or (line.startswith("$$") and line.endswith("$$") and len(line) > 2):
            continue
        if not line or line.startswith(("#", "|", ":", "(")) and (
                line.startswith(("#", "|")) or re.match(r"^:[\w-]+:", line) or re.match(r"^\(.+\)=$", line)):
            flush()
            continue
        if line.startswith("+++") or line.startswith("```"):
            flush()
            continue
        bullet = re.match(r"^(?:[-*+]|\d+[.)])\s+", line)
        if bullet:
            flush()
            line = line[bullet.end():]
        line = re.sub(r"^>\s?", "", line)
        current.append(line)
    flush()
    return blocks


def sentences(block: str) -> list[str]:
    """The sentences of one block of prose, cleaned of markup."""
    text = _clean(block)
    protected = _ABBREV.sub(lambda m: m.group(0).replace(".", "\0"), text)
    parts = [p.replace("\0", ".").strip() for p in _SPLIT.split(protected)]
    return [p for p in parts if _WORD.search(p)]


def words(sentence: str) -> int:
    return sum(1 for tok in sentence.split() if _WORD.search(tok))


def measure(path: str | Path) -> ProseStats:
    """Sentence statistics of the MyST file at ``path``."""
    stats = ProseStats(str(path))
    for block in prose_blocks(Path(path).read_text(encoding="utf-8")):
        for s in sentences(block):
            stats.sentences.append(s)
            stats.lengths.append(words(s))
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--long", type=int, default=None, metavar="N",
                        help="also print every sentence over N words")
    args = parser.parse_args(argv)
    print(f"{'file':36} {'sentences':>9} {'mean':>6} {'max':>4} {'>40':>4}")
    for f in args.files:
        s = measure(f)
        print(f"{Path(f).name:36} {len(s.lengths):9d} {s.mean:6.1f} {s.longest:4d} {len(s.over(40)):4d}")
        if args.long is not None:
            for n, text in s.over(args.long):
                print(f"    [{n}] {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
