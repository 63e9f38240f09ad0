"""The landing page (book/intro.md) lists every chapter the table of contents has, and no other, and
says nothing is still to come (the review found it announcing chapters 7-14 after they were written)."""
from __future__ import annotations

import re

import yaml

from conftest import ROOT


def _toc_chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [c["file"] for part in toc["parts"] for c in part.get("chapters", []) if c["file"].startswith("chapters/")]


def test_landing_page_lists_every_chapter_in_order():
    intro = (ROOT / "book/intro.md").read_text(encoding="utf-8")
    listed = ["chapters/" + m for m in re.findall(r"^\| \{doc\}`\.\./chapters/([^`]+)`", intro, re.M)]
    assert listed == _toc_chapters()
    for stale in ("still to come", "come next", "is coming"):
        assert stale not in intro, f"book/intro.md still says {stale!r}"
