"""Checks of a Korean page against its English source (issue 25: one source of truth, a full translation).

The Korean edition lives in ``ko/``, mirroring the English tree (``chapters/X.md`` → ``ko/chapters/X.md``,
``book/Y.md`` → ``ko/book/Y.md``). A Korean page must run exactly the English page's code, so that the
book build's execution cache serves both editions and every number and figure is the same:

    python book/_ext/labsim_ko_check.py ko/chapters/03_roofline.md      # every problem, one per line

What is compared (``problems(en, ko)``): the YAML header and every code cell, byte for byte and in order;
the MyST targets ``(label)=``; the heading levels in order; the targets of cross-reference, citation and
glue roles and the glossary keys of ``{term}`` roles; the directives used. What is required of the
Korean prose: Hangul in every section that has prose; no run of four or more English words outside
code, math, role targets, links, parentheses and names (``ALLOWED_ENGLISH``); each ``{term}`` shows the
glossary's Korean form of its key; the first use of a glossary term in a page is followed by its English
form in parentheses; none of the replaced spellings (``FORBIDDEN``).
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{[^}]*\})?(.*)$")
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_TARGET_ROLES = {"ref", "numref", "doc", "eq", "cite", "cite:p", "cite:t", "glue:text", "glue:md", "glue",
                 "glue:figure", "download", "numref"}
#: spellings the glossary replaced: (wrong, the glossary's term)
FORBIDDEN = {"퓨전": "융합", "워프 분기": "분기 발산"}
#: English runs that are names, titles or fixed notation, not untranslated prose
ALLOWED_ENGLISH = ["How to Scale Your Model", "Dive into Deep Learning", "Attention Is All You Need",
                   "Roofline: An Insightful Visual Performance Model", "Python 3 (ipykernel)",
                   "Data Movement Is All You Need", "Making Deep Learning Go Brrrr From First Principles"]


def _key(target: str) -> str:
    m = re.search(r"<([^<>]+)>\s*$", target)
    return (m.group(1) if m else target).strip()


def split(text: str) -> dict:
    """The parts of a MyST page: header, code cells, labels, headings, roles, directives, and the prose
    of each section (a list of (heading line, prose lines))."""
    lines = text.split("\n")
    out = {"header": "", "code": [], "labels": [], "headings": [], "roles": Counter(), "terms": [],
           "directives": Counter(), "sections": [["(top)", []]]}
    i = 0
    if lines and lines[0] == "---":
        j = lines.index("---", 1)
        out["header"] = "\n".join(lines[:j + 1])
        i = j + 1
    stack: list[str] = []  # the markers of open directive fences
    names: list[str] = []  # their directive names
    code: list[str] | None = None  # lines of an open code-like fence
    code_marker, code_cell, math = "", False, False
    for line in lines[i:]:
        m = _FENCE.match(line)
        if code is not None:
            if m and m.group(2)[0] == code_marker[0] and len(m.group(2)) >= len(code_marker) \
                    and not m.group(3) and not m.group(4).strip():
                if code_cell:
                    out["code"].append("\n".join(code))
                code = None
            else:
                code.append(line)
            continue
        if m:
            marker, name, rest = m.group(2), (m.group(3) or "")[1:-1], m.group(4).strip()
            if not name and not rest and stack and marker[0] == stack[-1][0] and len(marker) >= len(stack[-1]):
                stack.pop()
                names.pop()
                continue
            if name in {"code-cell", "code-block", "code", "math", "raw", "mermaid"} or \
                    (not name and marker[0] in "`~"):
                code, code_marker, code_cell = [line.strip()], marker, name == "code-cell"
                continue
            stack.append(marker)
            names.append(name)
            out["directives"][name] += 1
            if rest:
                out["sections"][-1][1].append(rest)
                for role, target in _ROLE.findall(rest):
                    _note_role(out, role, target, rest)
            continue
        st = line.strip()
        if math:
            math = "$$" not in st
            continue
        if st.startswith("$$"):
            math = st == "$$" or not st[2:].rstrip().endswith("$$")
            continue
        if re.match(r"^\s*\([\w:.-]+\)=\s*$", line):
            out["labels"].append(st)
            continue
        h = re.match(r"^(#{1,6})\s+(.*)$", line)
        if h:
            out["headings"].append(len(h.group(1)))
            out["sections"].append([line, [h.group(2)]])
            for role, target in _ROLE.findall(line):
                _note_role(out, role, target, line)
            continue
        if re.match(r"^\s*:[\w-]+:", line) or st.startswith("<!--") or line.startswith("+++"):
            continue
        for role, target in _ROLE.findall(line):
            _note_role(out, role, target, line)
        if names and names[-1] == "glossary" and line[:1] not in (" ", "\t"):
            continue  # a glossary's term line: the English term stays as a term (and link key)
        out["sections"][-1][1].append(line)
    return out


def _note_role(out: dict, role: str, target: str, line: str) -> None:
    if role == "term":
        out["terms"].append((target, line))
        out["roles"][("term", _key(target).lower())] += 0  # keys compared as a set below
    elif role in _TARGET_ROLES:
        out["roles"][(role, _key(target))] += 1


def glossary(path: Path | None = None) -> dict[str, str]:
    """English term (lower case) → the Korean term the book uses for it."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from labsim_glossary_ko import entries
    text = (path or ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    out = {}
    for en, ko in entries(text):
        ko = re.sub(r"\s*\([^)]*\)\s*$", "", ko).strip() or ko
        out[en.lower()] = ko.split(",")[0].strip()
    return out


def _strip(line: str) -> str:
    """A prose line without what may stay English: roles, code, math, links' targets, parentheses, HTML."""
    s = _ROLE.sub(" ", line)
    s = re.sub(r"``?[^`]+``?", " ", s)
    s = re.sub(r"\$[^$]+\$", " ", s)
    s = re.sub(r"\]\([^)]*\)", "]", s)
    s = re.sub(r"<[^>]+>", " ", s)
    s = re.sub(r"https?://\S+", " ", s)
    for _ in range(3):
        s = re.sub(r"\([^()]*\)", " ", s)
    for name in ALLOWED_ENGLISH:
        s = s.replace(name, " ")
    return s


def english_runs(line: str, n: int = 4) -> list[str]:
    """Runs of ``n`` or more English words in a prose line (outside what may stay English)."""
    s = _strip(line)
    word = r"[A-Za-z][A-Za-z'’-]*"
    return [m.group(0) for m in re.finditer(rf"{word}(?:[ ,/]+{word}){{{n - 1},}}", s)]


def problems(en_text: str, ko_text: str, gloss: dict[str, str] | None = None) -> list[str]:
    """Every way ``ko_text`` fails to be a faithful, full Korean edition of ``en_text``."""
    en, ko = split(en_text), split(ko_text)
    out = []
    if en["header"] != ko["header"]:
        out.append("the YAML header differs from the English page's")
    if len(en["code"]) != len(ko["code"]):
        out.append(f"{len(ko['code'])} code cells, the English page has {len(en['code'])}")
    for k, (a, b) in enumerate(zip(en["code"], ko["code"]), 1):
        if a != b:
            first = next((x for x, y in zip(a.split("\n"), b.split("\n")) if x != y), a.split("\n")[0])
            out.append(f"code cell {k} differs from the English page's (at: {first.strip()[:70]!r})")
    if en["labels"] != ko["labels"]:
        out.append(f"labels differ: missing {sorted(set(en['labels']) - set(ko['labels']))}, "
                   f"extra {sorted(set(ko['labels']) - set(en['labels']))}")
    if en["headings"] != ko["headings"]:
        out.append(f"heading levels differ: English {en['headings']}, Korean {ko['headings']}")
    ek = {k for k in en["roles"] if k[0] != "term"}
    kk = {k for k in ko["roles"] if k[0] != "term"}
    for role, target in sorted(ek - kk):
        out.append(f"role {{{role}}}`{target}` of the English page is missing")
    for role, target in sorted(kk - ek):
        out.append(f"role {{{role}}}`{target}` is not in the English page")
    eterms = {_key(t).lower() for t, _ in en["terms"]}
    kterms = {_key(t).lower() for t, _ in ko["terms"]}
    for t in sorted(eterms - kterms):
        out.append(f"glossary term {t!r} is linked in the English page but not in the Korean one")
    dd = en["directives"] - ko["directives"]
    if dd or ko["directives"] - en["directives"]:
        out.append(f"directives differ: English has more {dict(dd)}, Korean has more "
                   f"{dict(ko['directives'] - en['directives'])}")
    for (head, body), (_, ebody) in zip(ko["sections"], en["sections"]):
        eprose = " ".join(_strip(x) for x in ebody)
        if re.search(r"[A-Za-z]{3,}", eprose) and not _HANGUL.search(" ".join(body)):
            out.append(f"section {head[:60]!r} has no Korean prose")
    for _, body in ko["sections"]:
        for line in body:
            for run in english_runs(line):
                out.append(f"untranslated English: {run[:80]!r} in {line.strip()[:80]!r}")
    for wrong, right in FORBIDDEN.items():
        if wrong in ko_text:
            out.append(f"{wrong!r} appears; the glossary's term is {right!r}")
    if gloss is None:
        gloss = glossary()
    seen = set()
    for target, line in ko["terms"]:
        key = _key(target).lower()
        shown = re.sub(r"\s*<[^<>]+>\s*$", "", target)
        want = gloss.get(key)
        if want and _HANGUL.search(want) and want not in shown:
            out.append(f"{{term}}`{target}` shows {shown!r}; the glossary's Korean term is {want!r}")
        if key not in seen:
            seen.add(key)
            if want and _HANGUL.search(want):
                after = line.split(target + "`", 1)[-1]
                if not re.match(r"^[\w\uac00-\ud7a3]{0,3}\s*\([^)]*[A-Za-z]", after):
                    out.append(f"first use of {key!r}: put the English term in parentheses after it")
    return out


def english_of(ko_path: Path) -> Path:
    rel = ko_path.resolve().relative_to((ROOT / "ko").resolve()) if ko_path.is_absolute() else \
        Path(*Path(ko_path).parts[Path(ko_path).parts.index("ko") + 1:])
    return ROOT / rel


def main(argv: list[str]) -> int:
    bad = 0
    gloss = glossary()
    for arg in argv:
        ko_path = Path(arg)
        rel = Path(*ko_path.parts[ko_path.parts.index("ko") + 1:])
        en_path = ko_path.parents[len(rel.parts)] / rel
        found = problems(en_path.read_text(encoding="utf-8"), ko_path.read_text(encoding="utf-8"), gloss)
        for p in found:
            print(f"{arg}: {p}")
        print(f"{arg}: {len(found)} problem(s)")
        bad += bool(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def sentences(text: str) -> list[tuple[int, str]]:
    """(Hangul syllables, sentence) for every sentence of a Korean page's prose (tables and code left out):
    a paragraph or list item is split after a sentence ending (다, 요, 까, then . ? !)."""
    out = []
    for _, body in split(text)["sections"]:
        paras, cur = [], []
        for line in body:
            item = line.lstrip().startswith(("- ", "* ", "|")) or re.match(r"^\s*\d+\.\s", line)
            if (not line.strip() or item) and cur:
                paras.append(" ".join(cur))
                cur = []
            if line.strip() and not line.lstrip().startswith("|"):
                cur.append(_strip(line))
        if cur:
            paras.append(" ".join(cur))
        for p in paras:
            p = re.sub(r"\s+([.?!])", r"\1", p)
            for s in re.split(r"(?<=[다요까])[.?!]\s+", p):
                n = len(_HANGUL.findall(s))
                if n:
                    out.append((n, s.strip()))
    return out
