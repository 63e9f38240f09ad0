"""The language of what labsim draws: captions, alt texts, axis titles, legends, control labels, tables.

English is the source language. Another language comes from a GNU gettext message catalog,
``labsim/locales/<lang>/LC_MESSAGES/labsim.po``: Babel reads it and compiles it in memory to gettext's
``.mo`` form, and the standard library's :class:`gettext.GNUTranslations` looks strings up. A msgid may
be a template with numbered fields, ``"{0} on the roofline"``: a drawn string that matches it keeps the
fields' text (numbers, units and names stay exactly as computed, so both languages show the same
numbers) and takes the template's translation around them.

    ls.set_language("ko")              # every figure and table drawn from now on is in Korean
    with ls.language("ko"): fig = ...  # only inside the block
    ls.i18n.tr("memory-bound", "ko")   # one string

Figures are translated where the house style finishes them (:func:`labsim.viz.style`) and when shown, so
one figure call draws either language. The website is built once per language from one execution: in the
book build (``LABSIM_BOOK=1``) every HTML output also carries its Korean rendition under the mime type
:data:`KO_MIME` (:func:`install_hooks`), and the Korean build shows that one
(:mod:`labsim.viz.mystnb_ko`). A string the catalog lacks stays English and is recorded
(:func:`misses`, and the file named by ``LABSIM_I18N_MISSES``), so a test can list what is untranslated.
"""
from __future__ import annotations

import contextlib
import functools
import gettext
import html as _html
import io
import json
import os
import re
from pathlib import Path

from .errors import ArgumentError

LANGUAGES = ("en", "ko")
KO_MIME = "application/vnd.labsim.ko+html"
LOCALES = Path(__file__).resolve().parents[1] / "locales"


def _default_language() -> str:
    """``LABSIM_LANG`` if set; else Korean in a kernel JupyterLab started for a page of the Korean edition
    (Jupyter Server names the notebook in ``JPY_SESSION_NAME``: ``ko/chapters/...``); else English."""
    env = os.environ.get("LABSIM_LANG")
    if env in LANGUAGES:
        return env
    session = os.environ.get("JPY_SESSION_NAME", "").replace("\\", "/")
    return "ko" if session.startswith("ko/") or "/ko/chapters/" in session or "/ko/book/" in session else "en"


_state = {"lang": _default_language()}
_misses: set[str] = set()
_LETTERS = re.compile(r"[A-Za-z]{2,}")
_FIELD = re.compile(r"\{(\d+|[a-z]\w*)\}")
#: what a numbered field ``{0}`` matches: a number as labsim prints it ("1,024", "0.35", "-3"), as the
#: catalog tool (book/_ext/labsim_catalog.py) made the field from one; a named field ``{label}`` matches
#: any text, itself translated
_NUMBER = r"(?<![A-Za-z_\d.])[-−]?\d[\d,]*(?:\.\d+)?(?![A-Za-z_\d])"
#: keys of a Plotly figure's JSON (and of labsim's figure payloads) whose strings a reader reads
TEXT_KEYS = {"text", "name", "label", "labels", "ticktext", "hovertemplate", "texttemplate", "title",
             "caption", "captions", "alt", "alts", "steps", "header", "cells", "values", "words"}
#: categorical axis values are read too
DATA_KEYS = {"x", "y", "categoryarray"}
#: keys under a text key that hold no text (a title's font, an annotation's anchor)
STYLE_KEYS = {"font", "family", "color", "xref", "yref", "xanchor", "yanchor", "align", "side", "standoff",
              "pad", "bgcolor", "bordercolor", "valign", "textangle", "type", "method", "args", "execute"}
PLOTLY_MIME = "application/vnd.plotly.v1+json"


def _check(lang: str, where: str = "set_language") -> str:
    if not isinstance(lang, str) or lang not in LANGUAGES:
        raise ArgumentError(f"{where}: language {lang!r} is not one labsim draws; use one of {LANGUAGES}")
    return lang


def set_language(lang: str) -> None:
    """Draw every figure and table from now on in ``lang`` ("en" or "ko")."""
    _state["lang"] = _check(lang)


def get_language() -> str:
    return _state["lang"]


@contextlib.contextmanager
def language(lang: str):
    """``with language("ko"):`` draws in Korean inside the block only."""
    old = _state["lang"]
    _state["lang"] = _check(lang)
    try:
        yield
    finally:
        _state["lang"] = old


@functools.lru_cache(maxsize=None)
def catalog(lang: str) -> tuple[gettext.GNUTranslations | None, tuple]:
    """The compiled catalog of ``lang`` and its templates ((regex, msgid) for msgids with fields)."""
    path = LOCALES / lang / "LC_MESSAGES" / "labsim.po"
    if lang == "en" or not path.exists():
        return None, ()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    with open(path, "rb") as f:
        cat = read_po(f, locale=lang)
    buf = io.BytesIO()
    write_mo(buf, cat)
    buf.seek(0)
    trans = gettext.GNUTranslations(buf)
    templates = []
    for msg in cat:
        if msg.id and isinstance(msg.id, str) and _FIELD.search(msg.id) and msg.string:
            parts = _FIELD.split(msg.id)
            rx = "".join(re.escape(p) if k % 2 == 0 else
                         f"(?P<f{p}>{_NUMBER if p.isdigit() else '.+?'})" for k, p in enumerate(parts))
            templates.append((re.compile(rx + r"\Z", re.S), msg.id))
    return trans, tuple(templates)


def _lookup(text: str, lang: str) -> str | None:
    trans, templates = catalog(lang)
    if trans is None:
        return None
    found = trans.gettext(text)
    if found != text or text in trans._catalog:  # an identical msgstr means "stays as it is" (a name, code)
        return found
    for rx, msgid in templates:
        m = rx.match(text)
        if m:
            fields = {k[1:]: tr(v, lang, record=False) for k, v in m.groupdict().items()}
            return _FIELD.sub(lambda f: fields.get(f.group(1), f.group(0)), trans.gettext(msgid))
    return None


_SPLIT = re.compile(r"(<[^>]+>|\n|(?<=[.:;!?])\s+(?=[A-Z0-9(\"']))")


@functools.lru_cache(maxsize=65536)
def _tr(text: str, lang: str) -> tuple[str, tuple[str, ...]]:
    """``text`` in ``lang`` and the pieces of it the catalog lacked. A string is looked up whole, then
    piece by piece: split at tags and line breaks, then into sentences."""
    core = text.strip()
    if not _LETTERS.search(core) or _is_code(core):
        return text, ()
    found = _lookup(core, lang)
    missing: tuple[str, ...] = ()
    if found is None:
        parts = _SPLIT.split(core)
        if len(parts) > 1:
            done = [(_tr(p, lang) if k % 2 == 0 else (p, ())) for k, p in enumerate(parts)]
            found = "".join(t for t, _ in done)
            missing = tuple(m for _, ms in done for m in ms)
        else:
            return text, (core,)
    lead = text[:len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return lead + found + trail, missing


_CODE = re.compile(r"^(%\w+ = |[\w.]+\(.*\)$|[\w.]+ = )|\b[a-z]+\d*\[[\d,]*\]|^(?=[\w.]*[_.])[\w.]+$|[{}]|->|::"
                   r"|^ch-[\w-]+$|^[a-z][\w.]*(\s{2,}|\s+%)|^[\w.]+\s*[:=]\s*$")


def _is_code(text: str) -> bool:
    """A listing line, an identifier or a label key: drawn as it is in every language."""
    return bool(_CODE.search(text))


def tr(text, lang: str | None = None, *, record: bool = True):
    """``text`` in ``lang`` (default: the current language); unchanged if the catalog lacks it (then
    recorded as a miss). Anything but a string is returned as it is."""
    lang = _check(lang, "tr") if lang else _state["lang"]
    if lang == "en" or not isinstance(text, str):
        return text
    out, missing = _tr(text, lang)
    if record:
        for m in missing:
            _note_miss(m)
    return out


def _note_miss(text: str) -> None:
    if text in _misses:
        return
    _misses.add(text)
    path = os.environ.get("LABSIM_I18N_MISSES")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(text, ensure_ascii=False) + "\n")


def misses() -> set[str]:
    """Every string asked for in another language that its catalog lacked, in this process."""
    return set(_misses)


def translate_json(obj, lang: str | None = None, *, _key: str = ""):
    """A copy of a figure's JSON (dicts, lists, strings) with the strings a reader reads translated."""
    lang = _check(lang, "translate_json") if lang else _state["lang"]
    if lang == "en":
        return obj
    if isinstance(obj, dict):
        out = {k: (v if k in ("template", "config") or k in STYLE_KEYS else
                   translate_json(v, lang, _key=k if k in TEXT_KEYS | DATA_KEYS or _key not in TEXT_KEYS else _key))
               for k, v in obj.items()}
        for k, v in out.items():  # an axis title, wrapped again for the width of its translation
            title = v.get("title") if isinstance(v, dict) and _AXIS.match(k) else None
            if isinstance(title, dict) and isinstance(title.get("text"), str) and title["text"] != obj[k]["title"]["text"]:
                v["title"] = {**title, "text": _rewrap(title["text"], TITLE_WIDTH[k[0]])}
        return out
    if isinstance(obj, (list, tuple)):
        return [translate_json(v, lang, _key=_key) for v in obj]
    if isinstance(obj, str) and _key in TEXT_KEYS:
        return tr(obj, lang)
    if isinstance(obj, str) and _key in DATA_KEYS and not _is_number(obj):
        return tr(obj, lang)
    return obj


_AXIS = re.compile(r"^[xy]axis\d*$")
#: how wide a translated axis title may run on one line, in Latin characters (labsim.viz.plots wraps
#: English titles at 32 and 26; a translation gets less room: a phone's plot beside long category labels
#: is narrow); a Hangul syllable is about as wide as two Latin letters
TITLE_WIDTH = {"x": 24, "y": 20}


def _width(text: str) -> float:
    return sum(2.0 if "\uac00" <= c <= "\ud7a3" else 1.0 for c in re.sub(r"<[^>]+>", "", text))


def _rewrap(text: str, limit: float) -> str:
    """An axis title on one line if it fits ``limit``, else on two, cut at the space nearest its middle
    (by width): a translation is often longer or shorter than the English the title was wrapped for."""
    flat = re.sub(r"\s*<br\s*/?>\s*", " ", text).strip()
    if _width(flat) <= limit:
        return flat
    spaces = [i for i, ch in enumerate(flat) if ch == " "]
    if not spaces:
        return flat
    half = _width(flat) / 2
    cut = min(spaces, key=lambda i: abs(_width(flat[:i]) - half))
    return flat[:cut] + "<br>" + flat[cut + 1:]


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def translate_figure(fig, lang: str | None = None):
    """Translate a Plotly figure in place (its layout and traces) and return it."""
    lang = _check(lang, "translate_figure") if lang else _state["lang"]
    if lang == "en" or fig is None or not hasattr(fig, "to_plotly_json"):
        return fig
    d = fig.to_plotly_json()
    layout = {k: v for k, v in d.get("layout", {}).items() if k != "template"}
    new_layout = _changed(layout, translate_json(layout, lang))
    with fig.batch_update():
        if new_layout:
            fig.update_layout(new_layout)
        for trace, t in zip(fig.data, d.get("data", [])):
            change = _changed(t, translate_json(t, lang))
            if change:
                trace.update(change)
    return fig


def _changed(old, new):
    """The parts of ``new`` that differ from ``old`` (a dict of them; a changed list is given whole)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = {}
        for k, v in new.items():
            if isinstance(v, dict):
                sub = _changed(old.get(k), v)
                if sub:
                    out[k] = sub
            elif _differs(old.get(k), v):
                out[k] = v
        return out
    return new if _differs(old, new) else None


def _differs(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) != len(b) or any(_differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return bool(_changed(a, b))
    return (isinstance(a, str) or isinstance(b, str)) and a != b


_SCRIPT_JSON = re.compile(r'(<script type="application/json"[^>]*>)(.*?)(</script>)', re.S)
_SKIP = re.compile(r"(<script\b.*?</script>|<style\b.*?</style>|<pre\b.*?</pre>|<code\b.*?</code>)", re.S | re.I)
_ATTR = re.compile(r'\b(aria-label|aria-valuetext|title|alt|placeholder|data-label)="([^"]*)"')
_TEXT = re.compile(r">([^<>]+)<")


def _json_block(m: re.Match, lang: str) -> str:
    try:
        payload = json.loads(m.group(2))
    except ValueError:
        return m.group(0)
    out = translate_json(payload, lang, _key="")
    for key in ("labels", "captions", "alts"):
        if key in payload:
            out[key] = translate_json(payload[key], lang, _key="labels")
    if isinstance(payload.get("anim"), dict):
        out["anim"] = {k: translate_json(v, lang, _key="label" if k in ("label", "steps") else k)
                       for k, v in payload["anim"].items()}
    text = json.dumps(out, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return m.group(1) + text + m.group(3)


def _html_part(part: str, lang: str) -> str:
    part = _ATTR.sub(lambda a: f'{a.group(1)}="{_html.escape(tr(_html.unescape(a.group(2)), lang))}"', part)
    return _TEXT.sub(lambda t: ">" + (_html.escape(tr(_html.unescape(t.group(1)), lang), quote=False)
                                      if _LETTERS.search(t.group(1)) else t.group(1)) + "<", part)


def translate_html(text: str, lang: str | None = None) -> str:
    """The HTML a labsim object shows, in ``lang``: its text, alt and label attributes, and the JSON
    payloads of its figures; scripts, styles, code and listings stay as they are."""
    lang = _check(lang, "translate_html") if lang else _state["lang"]
    if lang == "en" or not text:
        return text
    out, last = [], 0
    for m in _SKIP.finditer(text):
        out.append(_html_part(text[last:m.start()], lang))
        block = m.group(0)
        jm = _SCRIPT_JSON.fullmatch(block)
        out.append(_json_block(jm, lang) if jm else block)
        last = m.end()
    out.append(_html_part(text[last:], lang))
    return "".join(out)


def _bundle(data: dict) -> dict:
    """A display bundle as this kernel shows it: in the current language; in the book build with the
    Korean rendition of its HTML added (also under glue's prefix), for the Korean site."""
    if not isinstance(data, dict):
        return data
    lang = _state["lang"]
    if lang != "en":
        data = {k: (translate_html(v, lang) if k.endswith("text/html") and isinstance(v, str) else
                    translate_json(v, lang) if k.endswith(PLOTLY_MIME) and isinstance(v, dict) else v)
                for k, v in data.items()}
    if os.environ.get("LABSIM_BOOK") == "1":
        extra = {k[: -len("text/html")] + KO_MIME: translate_html(v, "ko")
                 for k, v in data.items() if k.endswith("text/html") and isinstance(v, str)}
        if extra:
            data = {**data, **extra}
    return data


def install_hooks() -> bool:
    """Make this IPython kernel's outputs follow :func:`set_language`, and in the book build carry
    their Korean rendition (:data:`KO_MIME`), so that the Korean site is built from the English build's
    one execution. Called when labsim is imported; does nothing outside IPython. (The running shell is
    found through ``builtins.get_ipython``, which IPython defines, so labsim imports no display library
    here.)"""
    import builtins
    ip = getattr(builtins, "get_ipython", lambda: None)()
    if ip is None or getattr(ip, "_labsim_ko_hooks", False):
        return False
    pub, hook = getattr(ip, "display_pub", None), getattr(ip, "displayhook", None)
    if pub is None or hook is None:
        return False
    publish, write = pub.publish, hook.write_format_data

    def _publish(data, metadata=None, *args, **kw):
        return publish(_bundle(data), metadata, *args, **kw)

    def _write(format_dict, md_dict=None):
        return write(_bundle(format_dict), md_dict)

    pub.publish = _publish
    hook.write_format_data = _write
    ip._labsim_ko_hooks = True
    return True
