"""The Korean edition (issue 25): every page translated, running the English page's code, in the glossary's
terms; labsim draws figures and tables in Korean from its gettext catalog; the built Korean site.

The page checks are ``book/_ext/labsim_ko_check.py`` (one rule for the tests and for translators)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_ko_check as check  # noqa: E402

import labsim as ls  # noqa: E402
from labsim.support import i18n  # noqa: E402

HANGUL = re.compile(r"[\uac00-\ud7a3]")
CHAPTERS = sorted(p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*.md"))
TOC_PAGES = re.findall(r"file: (\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
KO_PAGES = sorted(p.relative_to(ROOT / "ko").as_posix() for p in (ROOT / "ko").rglob("*.md"))
GLOSSARY = check.glossary()


def test_every_chapter_has_a_korean_edition():
    missing = [c for c in CHAPTERS if not (ROOT / "ko" / "chapters" / c).is_file()]
    assert not missing, f"chapters without a Korean edition: {missing}"
    assert len(CHAPTERS) == 14


def test_every_page_of_the_book_has_a_korean_edition():
    missing = [p for p in TOC_PAGES + ["book/intro"] if not (ROOT / "ko" / f"{p}.md").is_file()]
    assert not missing, f"pages of _toc.yml without a Korean edition under ko/: {missing}"


@pytest.mark.parametrize("page", KO_PAGES)
def test_korean_page_runs_the_english_code_and_is_translated(page):
    """Same header, code cells, labels, headings, role targets and directives as the English page; Korean
    prose in every section; no English sentence left; the glossary's Korean terms, English in
    parentheses at first use."""
    english = (ROOT / page).read_text(encoding="utf-8")
    korean = (ROOT / "ko" / page).read_text(encoding="utf-8")
    problems = check.problems(english, korean, GLOSSARY)
    assert not problems, f"ko/{page}:\n  " + "\n  ".join(problems[:40])


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_korean_sentences_are_short(chapter):
    """Short sentences, as the English edition's (labsim_ko_check.sentences: Hangul syllables per
    sentence). A typical English sentence of 15 words is about 25 syllables in Korean."""
    lengths = [n for n, _ in check.sentences((ROOT / "ko" / "chapters" / chapter).read_text(encoding="utf-8"))]
    assert len(lengths) > 100
    assert sum(lengths) / len(lengths) <= 30, f"{chapter}: mean {sum(lengths) / len(lengths):.1f} syllables"
    assert max(lengths) <= 100, f"{chapter}: a sentence of {max(lengths)} syllables"


def test_the_checker_catches_what_it_should():
    en = (ROOT / "chapters" / "03_roofline.md").read_text(encoding="utf-8")
    ko = (ROOT / "ko" / "chapters" / "03_roofline.md").read_text(encoding="utf-8")
    assert check.problems(en, ko, GLOSSARY) == []
    # a changed code cell, a dropped heading, an English sentence, a replaced term: each is reported
    changed = ko.replace("import numpy as np", "import numpy as np  # 한국어", 1)
    assert any("code cell" in p for p in check.problems(en, changed, GLOSSARY))
    first_h2 = re.search(r"^## .*$", ko, flags=re.M).group(0)
    assert any("heading" in p for p in check.problems(en, ko.replace(first_h2 + "\n", "", 1), GLOSSARY))
    english = ko.replace("\n\n", "\n\nThis sentence was never translated into Korean.\n\n", 1)
    assert any("untranslated" in p for p in check.problems(en, english, GLOSSARY))
    assert any("퓨전" in p for p in check.problems(en, ko + "\n퓨전\n", GLOSSARY))


def test_one_korean_term_per_idea_across_the_edition():
    text = "\n".join((ROOT / "ko" / p).read_text(encoding="utf-8") for p in KO_PAGES)
    for wrong, right in check.FORBIDDEN.items():
        assert wrong not in text, f"{wrong!r} in the Korean edition; the glossary's term is {right!r}"
    # every {term} role shows the glossary's Korean form of its key
    bad = []
    for target in re.findall(r"\{term\}`([^`]*)`", text):
        key = check._key(target).lower()
        want = GLOSSARY.get(key)
        shown = re.sub(r"\s*<[^<>]+>\s*$", "", target)
        if want and HANGUL.search(want) and want not in shown:
            bad.append((target, want))
    assert not bad, bad[:10]


def test_the_korean_glossary_has_every_english_term():
    english = {k for k in GLOSSARY}
    text = (ROOT / "ko" / "book" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    terms = {line.strip().lower() for line in block.splitlines() if line.strip() and not line.startswith((" ", ":"))}
    assert english <= terms, f"English terms missing from the Korean glossary: {sorted(english - terms)[:10]}"
    assert sum(1 for t in terms if HANGUL.search(t)) >= 0.8 * len(english)


# ---- labsim draws in Korean ----

def test_catalog_entries_keep_their_fields():
    from babel.messages.pofile import read_po
    with open(i18n.LOCALES / "ko" / "LC_MESSAGES" / "labsim.po", "rb") as f:
        cat = read_po(f, locale="ko")
    entries = [m for m in cat if m.id]
    assert len(entries) >= 1000
    bad = [m.id for m in entries if sorted(re.findall(r"\{\d+\}", m.id)) != sorted(re.findall(r"\{\d+\}", m.string))]
    assert not bad, f"translations that lose or add a field: {bad[:5]}"
    assert not [m.id for m in entries if not m.string], "entries without a translation"


def test_tr_translates_whole_strings_templates_and_pieces():
    assert i18n.tr("memory-bound", "ko") == "메모리 바운드"
    assert i18n.tr("memory-bound", "en") == "memory-bound"
    # a template keeps the computed numbers exactly
    assert "989" in i18n.tr("3.2 TFLOP/s under a roof of 989 TFLOP/s", "ko")
    assert i18n.tr("memory-bound<br>compute-bound", "ko") == "메모리 바운드<br>연산 바운드"
    assert i18n.tr(3.5, "ko") == 3.5
    with pytest.raises(ls.ArgumentError, match="language 'fr'"):
        ls.set_language("fr")
    # a language labsim has no catalog for is refused, not answered in English
    for call in (lambda: i18n.tr("memory-bound", "fr"), lambda: i18n.translate_html("<p>x</p>", "KO"),
                 lambda: i18n.translate_json({"text": "x"}, "de")):
        with pytest.raises(ls.ArgumentError, match="is not one labsim draws"):
            call()


def test_language_setting_is_scoped():
    assert ls.get_language() == "en"
    with ls.language("ko"):
        assert ls.get_language() == "ko"
    assert ls.get_language() == "en"


def _figure_texts(fig) -> list[str]:
    d = fig.to_plotly_json()
    out = []
    lay = d.get("layout", {})
    for key, ax in lay.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(ax, dict):
            out.append(((ax.get("title") or {}).get("text")) or "")
    out += [t.get("name") or "" for t in d.get("data", []) if t.get("showlegend", True) is not False]
    return [t for t in out if re.search(r"[A-Za-z]{3,}", t or "") or HANGUL.search(t or "")]


def _helpers():
    from labsim import viz
    chip = ls.hardware.PRESETS["H100 SXM"]
    x = ls.ShapeDtype((512, 4096), "bfloat16")
    w = ls.ShapeDtype((4096, 4096), "bfloat16")
    prog = ls.compile(ls.trace(lambda a, b: ls.numpy.maximum(a @ b, 0), x, w))
    run = ls.simulate(prog, chip)
    k = ls.estimate(prog, chip).kernels[0]
    return {
        "roofline": lambda: viz.roofline(chip, [("x·W", k.intensity, k.achieved_flops)], dtype="bfloat16"),
        "timeline": lambda: viz.timeline(run.trace),
        "bar_compare": lambda: viz.bar_compare(["compute", "memory"], [1.0, 2.0], xlabel="time (µs)"),
        "buffer_chart": lambda: viz.buffer_chart(prog.buffers, names=False),
    }


@pytest.mark.parametrize("name", ["roofline", "timeline", "bar_compare", "buffer_chart"])
def test_figure_helpers_draw_korean_labels_when_asked(name):
    helpers = _helpers()
    english = _figure_texts(helpers[name]())
    with ls.language("ko"):
        korean = _figure_texts(helpers[name]())
    assert english and len(english) == len(korean)
    assert any(HANGUL.search(t) for t in korean), f"{name}: no Korean label in {korean}"
    # numbers drawn are the same in both languages
    num = re.compile(r"\d[\d,.]*")
    assert sorted(n for t in english for n in num.findall(t)) == sorted(n for t in korean for n in num.findall(t))


def test_book_outputs_carry_a_korean_rendition(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    bundle = i18n._bundle({"text/html": "<p>memory-bound</p>", "text/plain": "x",
                           "application/papermill.record/text/html": "<b>compute-bound</b>"})
    assert bundle[i18n.KO_MIME] == "<p>메모리 바운드</p>"
    assert bundle["application/papermill.record/" + i18n.KO_MIME] == "<b>연산 바운드</b>"
    assert bundle["text/html"] == "<p>memory-bound</p>"
    monkeypatch.setenv("LABSIM_BOOK", "0")
    assert i18n.KO_MIME not in i18n._bundle({"text/html": "<p>memory-bound</p>"})


def test_translate_html_leaves_code_and_scripts():
    page = ('<div aria-label="memory-bound"><pre>memory-bound</pre><script>var s = "memory-bound";</script>'
            '<p>memory-bound</p></div>')
    out = i18n.translate_html(page, "ko")
    assert out.count("메모리 바운드") == 2 and "<pre>memory-bound</pre>" in out and '"memory-bound";' in out


# ---- the built site (make book) ----

def _site():
    from conftest import SITE, missing
    if not (SITE / "ko" / "index.html").is_file() and not (SITE / "ko" / "book" / "intro.html").is_file():
        missing(f"the Korean edition is not built ({SITE}/ko): run `make book`")
    return SITE


def test_nothing_the_book_draws_is_missing_from_the_catalog():
    """Every string of every figure, table and glued word of the executed book has its Korean entry
    (or an identical one for a name or code)."""
    _site()
    import labsim_catalog
    found = labsim_catalog.missing()
    assert not found, f"{len(found)} strings the Korean catalog lacks, e.g. {list(found)[:8]}"


@pytest.mark.parametrize("page", [p[:-3] for p in KO_PAGES])
def test_language_switch_links_resolve_both_ways(page):
    site = _site()
    from labsim_lang import switch_href
    for lang, path in (("en", site / f"{page}.html"), ("ko", site / "ko" / f"{page}.html")):
        text = path.read_text(encoding="utf-8")
        links = re.findall(r'<a class="labsim-lang" href="([^"]+)"', text)
        assert len(links) == 1, f"{path}: {len(links)} language switches"
        target = (path.parent / links[0]).resolve()
        assert target.is_file(), f"{path}: the switch points at {links[0]}, which does not exist"
        assert links[0] == switch_href(page, lang)[0]
    assert 'lang="ko"' in (site / "ko" / f"{page}.html").read_text(encoding="utf-8")[:400]


_PAYLOAD = re.compile(r'<script type="application/json" class="labsim-data">(.*?)</script>', re.S)


def _numbers(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k != "template":
                _numbers(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _numbers(v, out)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out.append(obj)
    return out


@pytest.mark.parametrize("chapter", [c[:-3] for c in CHAPTERS])
def test_korean_figures_show_the_same_numbers_in_korean(chapter):
    site = _site()
    en = (site / "chapters" / f"{chapter}.html").read_text(encoding="utf-8")
    ko = (site / "ko" / "chapters" / f"{chapter}.html").read_text(encoding="utf-8")
    ep, kp = _PAYLOAD.findall(en), _PAYLOAD.findall(ko)
    assert len(ep) == len(kp), f"{chapter}: {len(ep)} figures in English, {len(kp)} in Korean"
    for k, (a, b) in enumerate(zip(ep, kp)):
        assert _numbers(json.loads(a), []) == _numbers(json.loads(b), []), f"{chapter}: figure {k + 1}'s data differ"
    korean_figs = sum(1 for b in kp if HANGUL.search(b))
    assert korean_figs >= 0.9 * len(kp), f"{chapter}: only {korean_figs} of {len(kp)} figures have Korean text"
    # the glued values (numbers) are the English page's
    num = re.compile(r'<span class="pasted-text">([^<]*)</span>')
    assert {v for v in num.findall(en) if not re.search(r"[A-Za-z]", v)} == \
        {v for v in num.findall(ko) if not re.search(r"[A-Za-z\uac00-\ud7a3]", v)}


def test_print_face_draws_korean_with_a_cjk_font():
    import plotly.graph_objects as go
    from labsim import viz
    from labsim.viz.printface.style import CJK_FONTS
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="memory-bound"))
    with ls.language("ko"):
        shown = viz.Figure(viz.style(fig).update_layout(xaxis_title="time (µs)"), alt="memory-bound",
                           caption="memory-bound")
        mfig = shown.to_matplotlib(_number="3.1")
    texts = [t for t in mfig.findobj(lambda o: hasattr(o, "get_text") and o.get_text())]
    words = " ".join(t.get_text() for t in texts)
    assert "그림 3.1." in words and "메모리 바운드" in words and "시간 (µs)" in words
    korean = [t for t in texts if HANGUL.search(t.get_text())]
    assert korean and all(set(t.get_fontfamily()) & set(CJK_FONTS) for t in korean)
    english = viz.Figure(go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="memory-bound")), alt="a", caption="b")
    assert "Figure 3.1." in " ".join(t.get_text() for t in english.to_matplotlib(_number="3.1").findobj(
        lambda o: hasattr(o, "get_text") and o.get_text()))


def test_live_face_controls_and_caption_follow_the_language():
    import ipywidgets as w
    from labsim.viz.faces import _live_caption, _live_control
    with ls.language("ko"):
        c = _live_control(w, "batch", [("compute", 1), ("memory", 2)], 1, "dropdown")
        assert HANGUL.search(c.description) and [t for t, _ in c.options] == ["연산", "메모리"]
        assert "<b>그림.</b>" in _live_caption("x")
    assert "<b>Figure.</b>" in _live_caption("x")
    assert _live_control(w, "batch", [("compute", 1)], 1, "dropdown").description == "batch"


@pytest.mark.parametrize("chapter", [c[:-3] for c in CHAPTERS])
def test_korean_figures_are_numbered_in_korean(chapter):
    site = _site()
    en = (site / "chapters" / f"{chapter}.html").read_text(encoding="utf-8")
    ko = (site / "ko" / "chapters" / f"{chapter}.html").read_text(encoding="utf-8")
    num = r'<span class="labsim-fignum" data-name="[^"]*">{} (\d+\.\d+)</span>'
    english, korean = re.findall(num.format("Figure"), en), re.findall(num.format("그림"), ko)
    assert english, f"{chapter}: no numbered figure on the English page (the pattern no longer matches)"
    assert korean == english, f"{chapter}: Korean figure numbers {korean}, English {english}"
