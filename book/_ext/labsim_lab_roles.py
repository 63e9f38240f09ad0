"""What JupyterLab shows for the book's own MyST roles and for solutions (used by ``labsim_lab.py``).

jupyterlab-myst knows nothing of the book's glossary, bibliography or labels, so ``{term}``, ``{cite}``
and ``{ref}`` would show their raw keys ("austin2025scaling", "ch-roofline"). On opening, each becomes a
markdown link that jupyterlab-myst renders:

* ``{term}`abstract values <Abstract value>``` -> the words "abstract values", a link to the glossary
  whose tooltip is the glossary's Korean term and meaning;
* ``{cite}`a,b``` -> "(Austin et al., 2025; Jouppi et al., 2023)" from ``book/references.bib``, a link
  to the references page;
* ``{ref}`ch-roofline``` -> the chapter's title, a link to the chapter.

The link's address keeps the role's text, percent-encoded (``...#labsim-cite=a%2Cb``), so
:func:`links_to_roles` gives back exactly what was on disk, whatever the link's words.

Solutions: a ``{solution-start}`` ... ``{solution-end}`` pair that spans cells (a solution with code)
collapses as a whole: every cell after the one that opens it, through the one that closes it, opens
with its source and outputs hidden. A closing cell that goes on past ``{solution-end}`` (to the next
exercise) is split there into two cells, joined again on save.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from urllib.parse import quote, unquote

REPO = Path(__file__).resolve().parent.parent.parent

_ROLE = re.compile(r"\{(term|cite|ref)\}`([^`]+)`")
_LINK = re.compile(r'\[(?:[^\]\\]|\\.)*\]\(([^()\s]*?)#labsim-(term|cite|ref)=([^()\s]*)(?: "[^"]*")?\)')
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)  # "words <target>"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


def _escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _strip_roles(text: str) -> str:
    return re.sub(r"\{[\w:-]+\}`([^`]*)`", r"\1", text)


@functools.lru_cache(maxsize=None)
def glossary() -> dict[str, str]:
    """Glossary term (lower case) -> "Korean — meaning", from ``book/glossary.md``."""
    path = REPO / "book" / "glossary.md"
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    lines = path.read_text(encoding="utf-8").splitlines()
    for term, meaning in zip(lines, lines[1:]):
        if term and not term[0].isspace() and not term.startswith(("```", ":")) and meaning.startswith("  "):
            out[term.strip().lower()] = _strip_roles(meaning.strip())
    return out


def _surname(person) -> str:
    name = " ".join(person.last_names) or " ".join(person.first_names) or str(person)
    return name.replace("{", "").replace("}", "")


@functools.lru_cache(maxsize=None)
def bibliography() -> dict[str, str]:
    """Bib key -> "Austin et al., 2025", from ``book/references.bib`` (pybtex)."""
    path = REPO / "book" / "references.bib"
    try:
        from pybtex.database import parse_file

        db = parse_file(str(path))
    except Exception:  # pragma: no cover - pybtex is part of the book's environment (sphinxcontrib-bibtex)
        return {}
    out = {}
    for key, entry in db.entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        if not people:
            who = entry.fields.get("organization") or entry.fields.get("publisher") or key
        elif len(people) == 1:
            who = _surname(people[0])
        elif len(people) == 2:
            who = f"{_surname(people[0])} and {_surname(people[1])}"
        else:
            who = f"{_surname(people[0])} et al."
        year = entry.fields.get("year", "n.d.")
        out[key] = f"{who.replace('{', '').replace('}', '')}, {year}"
    return out


@functools.lru_cache(maxsize=None)
def labels() -> dict[str, tuple[str, str]]:
    """``(label)=`` before a heading -> (the heading's words, the file relative to the repository)."""
    out = {}
    for path in sorted(REPO.glob("chapters/*.md")) + sorted(REPO.glob("book/*.md")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^\(([\w.:-]+)\)=\s*\n+#+\s+(.+)$", text, re.M):
            out[m.group(1)] = (_strip_roles(m.group(2).strip()), path.relative_to(REPO).as_posix())
    return out


def _relative(target: str, here: str | None) -> str:
    """``target`` (relative to the repository) as a link from the document ``here``."""
    if not here:
        return target
    up = len(Path(here).parent.parts)
    start = Path(here).parent.as_posix()
    if up and target.startswith(start + "/"):
        return target[len(start) + 1:]
    return "../" * up + target


def _link(words: str, where: str, role: str, content: str, title: str = "") -> str:
    title = f' "{title}"' if title else ""
    return f"[{_escape(words)}]({where}#labsim-{role}={quote(content, safe='')}{title})"


def roles_to_links(text: str, here: str | None = None) -> str:
    """``{term}``, ``{cite}`` and ``{ref}`` as links jupyterlab-myst renders; ``here`` is the document."""
    def sub(m):
        role, content = m.group(1), m.group(2)
        explicit = _EXPLICIT.match(content)
        words, target = (explicit.group(1), explicit.group(2)) if explicit else (content, content)
        if role == "term":
            meaning = glossary().get(target.strip().lower(), "").replace('"', "'")
            return _link(words, _relative("book/glossary.md", here), role, content, meaning)
        if role == "cite":
            bib = bibliography()
            keys = [k.strip() for k in content.split(",")]
            return _link("(" + "; ".join(bib.get(k, k) for k in keys) + ")",
                         _relative("book/references.md", here), role, content)
        title, file = labels().get(target.strip(), (target, ""))
        return _link(words if explicit else title, _relative(file, here) if file else "", role, content)
    return _ROLE.sub(sub, text)


def links_to_roles(text: str) -> str:
    """The inverse of :func:`roles_to_links`."""
    return _LINK.sub(lambda m: f"{{{m.group(2)}}}`{unquote(m.group(3))}`", text)


# ---- solutions that span cells ----------------------------------------------------------------------
_START = re.compile(r"^`{3,}\{solution-start\}", re.M)
_END = re.compile(r"^(`{3,})\{solution-end\}[^\n]*\n\1[ \t]*$", re.M)
SPLIT, TAIL = "labsim_lab_split", "labsim_lab_tail"


def _opens(text: str) -> bool:
    """Does a solution open in ``text`` and stay open at its end?"""
    starts = [m.start() for m in _START.finditer(text)]
    ends = [m.start() for m in _END.finditer(text)]
    return bool(starts) and (not ends or max(starts) > max(ends))


def solution_cells(cells, new_cell) -> tuple[list, list]:
    """Split closing cells that go on past ``{solution-end}``; return (the cells, those to collapse)."""
    out, hide, inside = [], [], False
    for cell in cells:
        if not inside:
            out.append(cell)
            inside = cell.cell_type == "markdown" and _opens(cell.source)
            continue
        end = _END.search(cell.source) if cell.cell_type == "markdown" else None
        if end is None:
            out.append(cell)
            hide.append(cell)
            continue
        head, rest = cell.source[:end.end()], cell.source[end.end():]
        tail = rest.lstrip()
        if tail:
            sep = rest[:len(rest) - len(tail)]
            first = new_cell(head, dict(cell.metadata, **{SPLIT: sep}))
            second = new_cell(tail, dict(cell.metadata, **{TAIL: True}))
            out += [first, second]
            hide.append(first)
            inside = _opens(tail)
        else:
            out.append(cell)
            hide.append(cell)
            inside = False
    return out, hide


def join_split_cells(cells) -> list:
    """Undo the splits of :func:`solution_cells` (the user_expressions of both halves are kept)."""
    out = []
    for cell in cells:
        if cell.get("metadata", {}).pop(TAIL, None) and out and SPLIT in out[-1].get("metadata", {}):
            first = out[-1]
            first.source = first.source + first.metadata.pop(SPLIT) + cell.source
            exprs = []
            for e in (first.metadata.get("user_expressions") or []) + (cell.metadata.get("user_expressions") or []):
                if e not in exprs:
                    exprs.append(e)
            if exprs:
                first.metadata["user_expressions"] = exprs
            continue
        out.append(cell)
    for cell in out:
        cell.get("metadata", {}).pop(SPLIT, None)
    return out
