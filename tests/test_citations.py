"""Citations: every bibliography entry is cited by some page, and every cited key exists (issue 9, point 12).

Pages are book/*.md and chapters/*.md. A citation is a MyST role {cite}, {cite:p} or {cite:t} (keys
separated by commas). ``book/references.md`` prints the whole bibliography with ``:all:``, so an entry that
no page cites would still be listed there without anything in the book resting on it; this test catches
that. A hardware preset's ``sources`` keys are printed as plain text by book/hardware.md, not as
citations, so they do not count: the page cites each of those keys with a role as well.
"""
from __future__ import annotations

import re

import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
PAGES = sorted(p for p in [*ROOT.glob("book/*.md"), *ROOT.glob("chapters/*.md")]
               if not p.name.startswith("_"))  # chapters/_template.md is not a page of the book
ROLE = re.compile(r"\{cite(?::[pt])?\}`([^`]+)`")
ENTRY = re.compile(r"^@\w+\{\s*([^,\s]+)\s*,", re.M)


def bib_keys() -> set[str]:
    return set(ENTRY.findall(BIB.read_text(encoding="utf-8")))


def cited_keys() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    for page in PAGES:
        for m in ROLE.finditer(page.read_text(encoding="utf-8")):
            for key in m.group(1).split(","):
                cited.setdefault(key.strip(), []).append(page.relative_to(ROOT).as_posix())
    return cited


def test_the_test_sees_the_bibliography_and_the_pages():
    assert len(bib_keys()) > 20
    assert any(p.name == "01_journey.md" for p in PAGES)
    assert "nvidia2019cudagraphs" in cited_keys()


def test_every_cited_key_exists():
    missing = {k: v for k, v in cited_keys().items() if k not in bib_keys()}
    assert not missing, f"cited but not in references.bib: {missing}"


def test_every_bibliography_entry_is_cited():
    uncited = sorted(bib_keys() - set(cited_keys()))
    assert not uncited, f"in references.bib but cited by no page: {uncited}"


def test_role_parser():
    text = "see {cite}`a,b` and {cite:p}`c` and {cite:t}`d`, not `e`"
    assert [k for m in ROLE.finditer(text) for k in m.group(1).split(",")] == ["a", "b", "c", "d"]


def test_the_bibliography_parses():
    """The file as the book's BibTeX reader (pybtex, under sphinxcontrib-bibtex) reads it: a merge that
    drops one closing brace fails here, not in the middle of ``make book``."""
    pybtex = pytest.importorskip("pybtex.database")
    data = pybtex.parse_file(str(BIB), bib_format="bibtex")
    assert set(data.entries) == bib_keys()
