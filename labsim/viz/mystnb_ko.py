"""MyST-NB's side of the Korean edition (issue 25): a mime renderer plugin (entry point group
``myst_nb.mime_renderers`` in pyproject.toml).

The book build executes each chapter once, in English; every HTML output then also carries its Korean
rendition under :data:`labsim.support.i18n.KO_MIME` (:func:`labsim.support.i18n.install_hooks`). The Korean build reads
the same cached execution (its chapters' code cells are the English ones, tested) and lists
:data:`KO_MIME` first in ``nb_mime_priority_overrides`` (``ko/_config.yml``); this plugin draws it as
HTML. A value glued as plain text (a word such as "memory-bound") is looked up in labsim's Korean
catalog when the page's language is Korean. The English build never lists :data:`KO_MIME`, so nothing
here changes it.
"""
from __future__ import annotations

from ..support.i18n import KO_MIME, tr


def _language(renderer) -> str:
    env = getattr(getattr(renderer, "renderer", None), "sphinx_env", None)
    lang = getattr(getattr(env, "config", None), "language", None)
    return lang or "en"


class KoreanMimeRenderer:
    """Draws :data:`KO_MIME` outputs as HTML; translates glued words on Korean pages."""

    mime_priority_overrides = ()

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type == KO_MIME:
            return renderer.render_text_html_inline(data) if inline else renderer.render_text_html(data)
        if inline and data.mime_type == "text/plain" and _language(renderer) == "ko":
            text = data.string.strip("'\"") if data.string[:1] in "'\"" else data.string
            korean = tr(text, "ko", record=False)
            if korean != text:
                from docutils import nodes
                return [nodes.inline(korean, korean, classes=["output", "text_plain"])]
        return None
