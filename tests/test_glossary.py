"""The glossary page: every entry has an English term, a Korean term and a meaning."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

GLOSSARY = Path(__file__).resolve().parents[1] / "book" / "glossary.md"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
DASH = " — "  # em dash between the Korean term and the English meaning


def glossary_block(text: str) -> list[str]:
    m = re.search(r"^```\{glossary\}\n(.*?)^```", text, flags=re.M | re.S)
    assert m, "no ```{glossary} block in book/glossary.md"
    return m.group(1).splitlines()


def parse(text: str) -> list[tuple[str, list[str]]]:
    """Return (term, definition lines) pairs, as Sphinx's glossary directive reads them."""
    entries: list[tuple[str, list[str]]] = []
    for line in glossary_block(text):
        if not line.strip() or line.startswith(":"):
            continue  # blank lines and directive options such as :sorted:
        if line[0].isspace():
            assert entries, f"definition before any term: {line!r}"
            entries[-1][1].append(line.strip())
        else:
            entries.append((line.strip(), []))
    return entries


ENTRIES = parse(GLOSSARY.read_text(encoding="utf-8"))


def test_title_and_sorted_option():
    text = GLOSSARY.read_text(encoding="utf-8")
    assert text.startswith("# Glossary (용어집)")
    assert ":sorted:" in glossary_block(text)


def test_at_least_sixty_entries():
    assert len(ENTRIES) >= 60, len(ENTRIES)


def test_no_duplicate_terms():
    seen: dict[str, str] = {}
    for term, _ in ENTRIES:
        key = term.casefold()
        assert key not in seen, f"duplicate term {term!r} (also {seen[key]!r})"
        seen[key] = term


@pytest.mark.parametrize("term, lines", ENTRIES, ids=[t for t, _ in ENTRIES])
def test_entry_has_korean_term_and_meaning(term, lines):
    assert lines, f"{term}: no definition"
    assert len(lines) == 1, f"{term}: definition should be one line, got {len(lines)}"
    korean, sep, meaning = lines[0].partition(DASH)
    assert sep, f"{term}: expected 'Korean term — meaning', got {lines[0]!r}"
    assert HANGUL.search(korean), f"{term}: Korean term {korean!r} has no Hangul"
    assert not HANGUL.search(meaning), f"{term}: the meaning should be in English"
    assert len(meaning.strip()) >= 10 and meaning.rstrip().endswith("."), f"{term}: {meaning!r}"


@pytest.mark.parametrize(
    "term",
    ["Tracing", "HLO", "Warp", "Tensor core", "Systolic array", "Roofline model", "KV cache",
     "AllReduce", "PagedAttention", "Operator fusion", "CUDA Graph", "Ridge point"],
)
def test_core_terms_present(term):
    assert term in {t for t, _ in ENTRIES}
