"""The language switch of the two editions (issue 25): every page links to the same page in the other
language, at the top of the page (``a.labsim-lang``, with ``hreflang``), and tells the browser its
language (``<html lang>`` follows Sphinx's ``language``). In the Korean edition it also shows values
glued as text in Korean (:func:`_translate_glued_text`).

The English site is ``_build/html``; the Korean one is ``_build/html/ko`` (built by
``book/_ext/labsim_ko_build.py`` from ``ko/``, which mirrors the English tree: ``chapters/X.md`` →
``ko/chapters/X.md``). A page that has no Korean version yet links to the Korean edition's first page.
"""
from __future__ import annotations

import html
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parents[2]
KO_ROOT_DOC = "book/intro"


def switch_href(docname: str, language: str, ko_root: Path = ROOT / "ko") -> tuple[str, str, str]:
    """(href, hreflang, text) of the link from page ``docname`` in ``language`` to the other edition."""
    up = "../" * docname.count("/")
    if language == "ko":
        return f"../{up}{docname}.html", "en", "English"
    target = docname if (ko_root / f"{docname}.md").exists() else KO_ROOT_DOC
    return f"{up}ko/{target}.html", "ko", "한국어"


def _translate_glued_text(doctree) -> int:
    """In the Korean edition, a value glued as text (``{glue:text}``: a word such as "memory-bound" or a
    sentence labsim computed) is shown in Korean from labsim's catalog; numbers stay as they are."""
    from labsim.support.i18n import tr
    changed = 0
    for node in list(doctree.findall(nodes.inline)):
        if "pasted-text" not in node.get("classes", []):
            continue
        text = node.astext()
        korean = tr(text, "ko")
        if korean != text:
            node.children = [nodes.Text(korean)]
            changed += 1
    return changed


def _doctree_resolved(app: Sphinx, doctree, docname: str) -> None:
    if app.builder.format != "html":
        return
    if (app.config.language or "en") == "ko":
        _translate_glued_text(doctree)
    href, lang, text = switch_href(docname, app.config.language or "en")
    # the link's name is its text, in its own language (lang=), so a screen reader says it rightly
    title = "이 쪽을 영어로 읽기" if lang == "en" else "Read this page in Korean"
    link = (f'<p class="labsim-lang-switch"><a class="labsim-lang" href="{html.escape(href)}" '
            f'hreflang="{lang}" lang="{lang}" title="{html.escape(title)}">{text}</a></p>')
    section = next(iter(doctree.findall(nodes.section)), None)
    where = section if section is not None else doctree
    title = next((i for i, n in enumerate(where.children) if isinstance(n, nodes.title)), -1)
    where.insert(title + 1, nodes.raw("", link, format="html"))


def setup(app: Sphinx) -> dict:
    app.connect("doctree-resolved", _doctree_resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
