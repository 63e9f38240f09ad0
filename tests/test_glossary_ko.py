"""The glossary's Korean-to-English index (book/_ext/labsim_glossary_ko.py) is made from the glossary."""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_glossary_ko as ko  # noqa: E402

TEXT = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")


def test_every_entry_is_in_the_index_once_in_korean_order():
    pairs = ko.entries(TEXT)
    terms = re.findall(r"^(\S[^\n]*)\n  \S", TEXT.split("```{glossary}", 1)[1], flags=re.M)
    assert len(pairs) == len(terms) >= 100
    section = ko.index_section(TEXT)
    rows = re.findall(r"^\| (.+?) \| \{term\}`(.+?)` \|$", section, flags=re.M)
    assert sorted(t for _, t in rows) == sorted(t for t, _ in pairs)
    hangul = [k for k, _ in rows if "\uac00" <= k[0] <= "\ud7a3"]
    assert hangul == sorted(hangul) and len(hangul) >= 0.8 * len(rows)


def test_one_korean_term_per_idea():
    # the examples: fusion is 융합 (not 퓨전); divergence is 분기 발산, not "워프 분기" (a branch)
    koreans = [k for _, k in ko.entries(TEXT)]
    assert not any("퓨전" in k for k in koreans)
    assert dict(ko.entries(TEXT))["Divergence"].startswith("분기 발산")


def test_the_index_is_appended_once():
    source = [TEXT]
    ko._source_read(None, ko.DOCNAME, source)
    ko._source_read(None, ko.DOCNAME, source)
    assert source[0].count(ko.HEADING) == 1
    other = [TEXT]
    ko._source_read(None, "chapters/01_journey", other)
    assert other[0] == TEXT
