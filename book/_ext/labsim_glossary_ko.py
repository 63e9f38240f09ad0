"""The glossary's Korean-to-English index, made from the glossary itself at build time.

``book/glossary.md`` is the one source: each entry is an English term and, on its first definition line,
the Korean term before " — ". When Sphinx reads that page, this extension appends a section
"한국어 찾아보기" with a table sorted in Korean (가나다) order: the Korean term, and the English term as a
link to its entry. A term added to the glossary appears in the index with no second edit.
"""
from __future__ import annotations

import re

DOCNAME = "book/glossary"
HEADING = "## 한국어 찾아보기 (Korean–English index)"


def entries(text: str) -> list[tuple[str, str]]:
    """(English term, Korean term) for every entry of the page's ```{glossary} block."""
    m = re.search(r"^```\{glossary\}\n(.*?)^```", text, flags=re.M | re.S)
    if not m:
        return []
    out, term = [], None
    for line in m.group(1).splitlines():
        if not line.strip() or line.startswith(":"):
            continue
        if not line.startswith((" ", "\t")):
            term = line.strip()
        elif term is not None:
            korean = line.strip().split(" — ", 1)[0].strip()
            out.append((term, korean))
            term = None
    return out


def _key(korean: str) -> tuple[int, str]:
    """Korean order: entries that start with Hangul first, in code-point (가나다) order, then the rest."""
    hangul = re.sub(r"^[^\uac00-\ud7a3]*", "", korean)
    return (0, hangul) if hangul and "\uac00" <= korean[0] <= "\ud7a3" else (1, korean.lower())


def index_section(text: str) -> str:
    rows = sorted(entries(text), key=lambda e: _key(e[1]))
    lines = ["", "", HEADING, "",
             "Every Korean term of the glossary, in 가나다 order, with its English term (a link to the entry).",
             "", "| 한국어 | English |", "|---|---|"]
    for term, korean in rows:
        lines.append(f"| {korean.replace('|', '/')} | {{term}}`{term.replace('|', '/')}` |")
    return "\n".join(lines) + "\n"


def _source_read(app, docname, source) -> None:
    if app is not None and getattr(app.config, "language", "en") == "ko":
        return  # the Korean edition's glossary is itself in Korean order, each entry under both terms
    if docname == DOCNAME and HEADING not in source[0]:
        source[0] = source[0].rstrip("\n") + index_section(source[0])


def setup(app) -> dict:
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
