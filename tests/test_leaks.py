"""Nothing of the build leaks onto the page a reader sees.

* (chapter sources, no build needed) A code cell that calls ``glue(...)`` (the book's build plumbing
  that hands numbers to the prose) shows no code: it is tagged ``remove-cell``, ``remove-input`` or
  ``hide-input`` (the code is then one click away, behind "Show code cell source").
* (the built site) The text a reader sees, prose, outputs and figure captions (also the captions an
  interactive figure swaps in, from its JSON payload), holds no raw reStructuredText role
  (``:attr:`ProgramCost.time```, from a printed docstring), no plural hedge ("kernel(s)"), no
  "1 blocks", no stale "coming next" box, and no caption with an exponent typed with a caret ("2^6"). Code cells' source and typeset mathematics are not prose and are left out.

Each rule has a meta-test on a made-up page, so that it is known to fail.
"""
from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

import pytest

from conftest import ROOT, built_pages

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
_GLUE_CALL = re.compile(r"^\s*(?:[\w.]+\.)?glue\(", re.M)

#: (name, pattern) of what must not reach a reader
LEAKS = [
    ("raw reST role", re.compile(r":(?:attr|func|meth|class|mod|obj|data|exc|ref|doc|py:\w+):`")),
    ("plural hedge", re.compile(r"\b[A-Za-z]+\(s\)")),
    ("singular count with a plural noun", re.compile(
        r"(?<![\d.,])(?<![-+−] )\b1 (?:blocks|kernels|chips|warps|lanes|steps|waves|SMs|cores|tiles|threads|devices|"
        r"layers|heads|tokens|cycles|instructions|buffers|nodes|ops|passes|rows|columns|elements|bytes)\b")),
    ("stale 'coming next' box", re.compile(r"(?i)\b(?:coming next|what is coming|coming soon)\b")),
]


def unhidden_glue_cells(text: str) -> list[int]:
    """Line numbers of code cells in a MyST notebook that call glue() and show their code."""
    lines = []
    for m in _CELL.finditer(text):
        body = m.group(1)
        tags = set()
        for t in re.findall(r"^:tags:\s*\[(.*?)\]", body, re.M):
            tags |= {x.strip().strip("'\"") for x in t.split(",")}
        if _GLUE_CALL.search(body) and not tags & HIDDEN_TAGS:
            lines.append(text[:m.start()].count("\n") + 1)
    return lines


def visible_text(page_html: str) -> tuple[str, str]:
    """The text of a built page a reader can see (prose, outputs, captions; not code input or math), and
    the text of its captions alone."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page_html, "html.parser")
    main = soup.select_one("main") or soup
    payloads = []
    for script in main.find_all("script"):
        # an interactive figure's captions and alt texts, shown as its controls move
        payloads += re.findall(r'"(?:captions|alts)":\s*(\{.*?\})', script.get_text())
        script.decompose()
    for el in main.select("div.cell_input, .math, style, .headerlink"):
        el.decompose()
    caps = " ".join(c.get_text(" ") for c in main.select("figcaption, caption, .labsim-table-caption"))
    text = main.get_text(" ")
    for p in payloads:
        p = htmllib.unescape(p.encode().decode("unicode_escape", errors="ignore"))
        text, caps = text + " " + p, caps + " " + p
    return re.sub(r"\s+", " ", text), re.sub(r"\s+", " ", caps)


#: in a caption (a figure's, a table's, or one an interactive figure swaps in)
CAPTION_LEAKS = [("caret exponent in a caption", re.compile(r"\b\d+\^\{?-?\d"))]


def leaks_in(text: str, captions: str = "") -> list[str]:
    found = []
    for name, pat in CAPTION_LEAKS:
        for m in pat.finditer(captions):
            found.append(f"{name}: …{captions[max(0, m.start() - 60):m.end() + 40]}…")
    for name, pat in LEAKS:
        for m in pat.finditer(text):
            found.append(f"{name}: …{text[max(0, m.start() - 60):m.end() + 40]}…")
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_glue_call_in_a_visible_code_cell(chapter):
    bad = unhidden_glue_cells(chapter.read_text(encoding="utf-8"))
    assert not bad, (f"{chapter.name}: code cells at lines {bad} call glue() in code a reader sees; tag them "
                     f"hide-input (or move the glue() lines into a remove-cell cell)")


@pytest.mark.book
@pytest.mark.parametrize("page", built_pages())
def test_no_build_leak_on_a_page(page, site):
    found = leaks_in(*visible_text((site / page).read_text(encoding="utf-8")))
    assert not found, f"{page}:\n  " + "\n  ".join(found)


# ---- the checks can fail ----------------------------------------------------------------------------

def test_glue_check_finds_a_visible_glue_cell():
    src = ("```{code-cell} ipython3\n:tags: [remove-cell]\n\nglue('a', 1, display=False)\n```\n\n"
           "```{code-cell} ipython3\n:tags: [hide-input]\n\nglue('b', 2, display=False)\n```\n\n"
           "```{code-cell} ipython3\nx = 3\nglue('c', x, display=False)\nx\n```\n"
           "```{code-cell} ipython3\nprint('no glue here')\n```\n")
    assert unhidden_glue_cells(src) == [13]


def test_leak_check_finds_each_leak_and_spares_code_and_math():
    page = """<html><body><main>
      <p>The time (:attr:`ProgramCost.time`) is the sum.</p>
      <div class="cell_output">3 kernel(s) for layer</div>
      <figcaption>1 blocks on 132 SMs; the value is x · 2^6.</figcaption>
      <div class="admonition"><p>What is coming: chapters 8 to 14.</p></div>
      <div class="cell_input"><pre>glue("x", 1); print("kernel(s)")</pre></div>
      <span class="math">\\(2^{6}\\)</span><p>Figure 3.1 blocks nothing; 11 blocks; 2 kernels; n − 1 steps.</p>
      <p>A GiB is 2^30 bytes (prose, not a caption).</p>
      <script>var d = {"captions": {"0": "1 kernels in a row"}};</script>
    </main></body></html>"""
    found = leaks_in(*visible_text(page))
    kinds = sorted({f.split(":")[0] for f in found})
    assert kinds == ["caret exponent in a caption", "plural hedge", "raw reST role",
                     "singular count with a plural noun", "stale 'coming next' box"], found
    assert len([f for f in found if f.startswith("singular count")]) == 2, found  # caption and payload
    assert len([f for f in found if f.startswith("plural hedge")]) == 1, found  # the output, not the code
    assert len([f for f in found if f.startswith("caret")]) == 1, found  # 2^6 in a caption; not in math or prose
