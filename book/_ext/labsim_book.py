"""Local Sphinx extension for the labsim book: keep the website offline.

What it does, and why:

* Writes ``plotly.offline.get_plotlyjs()`` to ``_static/plotly.min.js`` in the HTML output and adds it
  to every page as a plain (not deferred) ``<script>``, so the inline scripts that ``labsim.viz``
  emits under ``LABSIM_BOOK=1`` can use ``window.Plotly`` without any CDN. The file is written at
  build time and never committed; it always matches the installed plotly package.
* Forces ``nb_ipywidgets_js = {}``: myst-nb would otherwise load require.js and
  ``@jupyter-widgets/html-manager`` from a CDN on every page that has a widget output. The website
  shows no live widgets (the static face of each figure replaces them).
* Drops sphinx-thebe's assets (jupyter-book always loads the extension; we have no thebe): its
  script is added twice, which throws "Identifier 'THEBE_JS_URL' has already been declared", and
  its inline config names a CDN URL for thebe.
* Drops the theme's Font Awesome 4 stylesheet request (a CDN link in some pydata/book theme
  versions); the theme's own local Font Awesome 6 bundle is what the icons use.
* Refuses any remaining script or stylesheet whose URL leaves the site: it is removed from the page
  and a warning names it, which fails the build under ``-W``. The browser test
  (``tests/test_browser.py``) is the second line of defence for anything loaded at run time.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

PLOTLY_FILE = "plotly.min.js"
STATIC_DIR = Path(__file__).resolve().parent.parent / "_static"  # book/_static
CSS_FILE, JS_FILE, FONT_CSS = "labsim.css", "labsim.js", "labsim-font.css"
FONT_FAMILY = "labsim Hangul"
#: (system font collection, face name inside it, CSS weight)
FONT_SOURCES = [
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "Noto Sans CJK KR", 400),
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc", "Noto Sans CJK KR", 700),
]
#: Hangul Jamo, compatibility Jamo, syllables.
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HANGUL_RANGE = "U+1100-11FF, U+3130-318F, U+AC00-D7AF"
_REMOTE = ("http://", "https://", "//")


def _config_inited(app: Sphinx, config) -> None:
    config.nb_ipywidgets_js = {}
    static = list(getattr(config, "html_static_path", None) or [])
    if str(STATIC_DIR) not in static:
        static.append(str(STATIC_DIR))
    config.html_static_path = static
    # pydata-sphinx-theme logs a console error ("Got invalid theme mode") when no default is set.
    ctx = dict(getattr(config, "html_context", None) or {})
    ctx.setdefault("default_mode", "auto")
    config.html_context = ctx
    # Keep MathJax local even if another extension set a CDN path after sphinx-mathjax-offline.
    if str(getattr(config, "mathjax_path", "")).startswith(_REMOTE):
        config.mathjax_path = "mathjax/tex-chtml.js"


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    # priority 200 (the default 500 minus): before page content, after Sphinx's own core scripts.
    app.add_js_file(PLOTLY_FILE, priority=200)
    app.add_css_file(FONT_CSS, priority=900)
    app.add_css_file(CSS_FILE, priority=900)
    app.add_css_file("labsim-fit.css", priority=901)  # figures that need width break out of the text column
    app.add_js_file(JS_FILE, priority=900)


def _url(asset) -> str:
    # Sphinx 7 passes _JavaScript/_CascadingStyleSheet objects (str subclasses with .filename).
    return str(getattr(asset, "filename", asset) or "")


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    for key in ("script_files", "css_files"):
        kept = []
        for asset in context.get(key, []) or []:
            url = _url(asset)
            body = str(getattr(asset, "attributes", {}).get("body", ""))
            if "sphinx-thebe" in url or "THEBE_JS_URL" in body:
                continue
            if url.startswith(_REMOTE):
                if "font-awesome" in url or "fontawesome" in url:
                    continue  # known: local FA6 from the theme replaces it
                logger.warning(
                    "labsim_book: removed remote asset %s from page %s (the site must be offline)",
                    url, pagename, type="labsim", subtype="offline",
                )
                continue
            kept.append(asset)
        if key in context:
            context[key] = kept


def _build_finished(app: Sphinx, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    import plotly.offline

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    target = static / PLOTLY_FILE
    js = plotly.offline.get_plotlyjs()
    if not target.exists() or target.read_text(encoding="utf-8") != js:
        tmp = target.with_suffix(".tmp")
        tmp.write_text(js, encoding="utf-8")
        os.replace(tmp, target)
    logger.info("labsim_book: %s", build_font(Path(__file__).resolve().parents[2], static))


# ---- Numbered figure captions ("Figure 5.3") and {figref}`name` -------------------------------------
# labsim.viz wraps every figure in <figure class="labsim-figure-box" id=NAME> with
# <span class="labsim-fignum" data-name=NAME>Figure</span> in its caption. At read time the figures of a
# page are counted in order; when the page is written each placeholder becomes "Figure C.N", where C is
# the chapter's number (from the numbered table of contents, else the NN_ of chapters/NN_name) and N the
# figure's place on its page. {figref}`NAME` in the text becomes a link "Figure C.N" to it.
_FIGNUM = re.compile(r'<span class="labsim-fignum" data-name="([^"]*)">(?:Figure|그림)</span>')  # 그림: the Korean edition


def _chapter_number(env, docname: str) -> str:
    nums = (getattr(env, "toc_secnumbers", {}) or {}).get(docname, {}).get("")
    if nums:
        return ".".join(map(str, nums))
    m = re.match(r"chapters/(\d+)_", docname)
    return str(int(m.group(1))) if m else ""


def _doctree_read(app: Sphinx, doctree) -> None:
    names = []
    for node in doctree.findall(nodes.raw):
        if "html" in node.get("format", ""):
            names += _FIGNUM.findall(node.astext())
    env = app.env
    if not hasattr(env, "labsim_figures"):
        env.labsim_figures = {}
    env.labsim_figures[env.docname] = names


def _env_purge_doc(app: Sphinx, env, docname: str) -> None:
    getattr(env, "labsim_figures", {}).pop(docname, None)


def _env_merge_info(app: Sphinx, env, docnames, other) -> None:
    if not hasattr(env, "labsim_figures"):
        env.labsim_figures = {}
    env.labsim_figures.update({d: getattr(other, "labsim_figures", {}).get(d, []) for d in docnames})


def _figure_label(env, docname: str, index: int) -> str:
    ch = _chapter_number(env, docname)
    word = "그림" if getattr(env.config, "language", "en") == "ko" else "Figure"  # the Korean edition
    return f"{word} {ch}.{index}" if ch else f"{word} {index}"


class figref_node(nodes.Inline, nodes.Element):
    """{figref}`name`: resolved to a link "Figure C.N" when the page is written."""


def _figref_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    node = figref_node()
    node["target"] = text.strip()
    node += nodes.Text(text.strip())
    return [node], []


def _doctree_resolved(app: Sphinx, doctree, docname: str) -> None:
    env = app.env
    figures = getattr(env, "labsim_figures", {})
    count = 0
    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", "") or "labsim-fignum" not in node.astext():
            continue

        def number(m):
            nonlocal count
            count += 1
            return (f'<span class="labsim-fignum" data-name="{m.group(1)}">'
                    f"{_figure_label(env, docname, count)}</span>")

        node.replace_self(nodes.raw("", _FIGNUM.sub(number, node.astext()), format=node["format"]))
    where = {name: (doc, i + 1) for doc, names in figures.items() for i, name in enumerate(names) if name}
    for node in list(doctree.findall(figref_node)):
        target = node["target"]
        if target not in where:
            logger.warning("labsim_book: {figref}`%s`: no figure is named %r (viz.show/interactive/animate(..., "
                           "name=%r))", target, target, target, location=node, type="labsim", subtype="figref")
            node.replace_self(nodes.Text(target))
            continue
        doc, idx = where[target]
        uri = app.builder.get_relative_uri(docname, doc) if doc != docname else ""
        ref = nodes.reference("", _figure_label(env, doc, idx), internal=True, refuri=f"{uri}#{target}")
        node.replace_self(ref)


def hangul_used(root: Path) -> str:
    """Every Hangul character in the book's sources (book/*.md, chapters/*.md, the Korean edition's ko/**/*.md)
    and in the Korean catalog of what labsim draws (labsim/locales/ko/LC_MESSAGES/*.po), sorted."""
    chars: set[str] = set()
    for pattern in ("book/*.md", "chapters/*.md", "ko/**/*.md", "labsim/locales/*/LC_MESSAGES/*.po"):
        for f in root.glob(pattern):
            chars.update(_HANGUL.findall(f.read_text(encoding="utf-8")))
    return "".join(sorted(chars))


def build_font(root: Path, static: Path) -> str:
    """Write the Hangul subset fonts and ``labsim-font.css`` into ``static``; returns a one-line report."""
    css = static / FONT_CSS
    text = hangul_used(root)
    sources = [(f, name, w) for f, name, w in FONT_SOURCES if Path(f).is_file()]
    reason = None
    if not text:
        reason = "the book uses no Hangul"
    elif not sources:
        reason = "no Noto Sans CJK KR on this system (Debian: apt-get install fonts-noto-cjk)"
    else:
        try:
            from fontTools import subset, ttLib
            import brotli  # noqa: F401  (WOFF2 needs it)
        except ImportError:
            reason = "fontTools/brotli are not installed (pip install 'fonttools[woff]')"
    if reason:
        css.write_text(f"/* labsim-font.css: no Korean web font shipped ({reason}); Hangul falls back "
                       f"to the reader's system fonts. */\n", encoding="utf-8")
        return f"no Korean web font: {reason}; system fonts are used"
    key = hashlib.sha256((text + repr(sources)).encode()).hexdigest()[:12]
    fonts = static / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    faces, total = [], 0
    for path, name, weight in sources:
        out = fonts / f"labsim-hangul-{weight}-{key}.woff2"
        if not out.exists():
            coll = ttLib.TTCollection(path, lazy=True)
            number = next(i for i, f in enumerate(coll.fonts) if f["name"].getDebugName(4) in
                          (name, f"{name} Regular", f"{name} Bold") or f["name"].getDebugName(1) == name)
            opts = subset.Options()
            opts.flavor, opts.font_number, opts.layout_features, opts.name_IDs = "woff2", number, ["*"], ["*"]
            opts.hinting, opts.desubroutinize = False, True
            font = subset.load_font(path, opts)
            sub = subset.Subsetter(opts)
            sub.populate(text=text)
            sub.subset(font)
            tmp = out.with_suffix(".tmp")
            subset.save_font(font, str(tmp), opts)
            os.replace(tmp, out)
        total += out.stat().st_size
        faces.append("@font-face {\n"
                     f'  font-family: "{FONT_FAMILY}"; font-style: normal; font-weight: {weight};\n'
                     f'  font-display: swap; src: url("fonts/{out.name}") format("woff2");\n'
                     f"  unicode-range: {_HANGUL_RANGE};\n}}\n")
    for old in fonts.glob("labsim-hangul-*.woff2"):
        if key not in old.name:
            old.unlink()
    css.write_text(
        f"/* Korean web font: a subset of Noto Sans CJK KR (SIL Open Font License 1.1) holding the\n"
        f"   {len(text)} Hangul characters the book uses; {total:,} bytes in all. Made by labsim_book.py. */\n"
        + "".join(faces)
        + f'html {{ --pst-font-family-base: "{FONT_FAMILY}", var(--pst-font-family-base-system); '
          f'--pst-font-family-heading: "{FONT_FAMILY}", var(--pst-font-family-base-system); }}\n',
        encoding="utf-8")
    return f"Korean web font: {len(text)} Hangul characters, {len(sources)} weights, {total:,} bytes"


def setup(app: Sphinx) -> dict:
    app.setup_extension("labsim_student")  # make book STUDENT=1: the edition without solutions
    app.add_node(figref_node)
    app.add_role("figref", _figref_role)
    app.connect("doctree-read", _doctree_read)
    app.connect("env-purge-doc", _env_purge_doc)
    app.connect("env-merge-info", _env_merge_info)
    app.connect("doctree-resolved", _doctree_resolved)
    app.connect("config-inited", _config_inited, priority=900)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context, priority=900)
    app.connect("build-finished", _build_finished)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
