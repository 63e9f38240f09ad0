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

import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

PLOTLY_FILE = "plotly.min.js"
_REMOTE = ("http://", "https://", "//")


def _config_inited(app: Sphinx, config) -> None:
    config.nb_ipywidgets_js = {}
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


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _config_inited, priority=900)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context, priority=900)
    app.connect("build-finished", _build_finished)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
