"""The built website in headless Chromium: offline, error-free, figures drawn, usable on a phone.

Every page of ``_build/html`` is opened at desktop (1280 px) and phone (390 px) width. A page fails on:

* a request whose URL is not on the local test server (it is aborted and recorded): the site must
  work offline, with no CDN, fonts or analytics from elsewhere;
* a console error or an uncaught exception; a failed request; an HTTP status >= 400;
* a ``.labsim-figure`` whose ``.labsim-plot`` has no ``svg.main-svg`` with at least one trace within
  10 s, or (interactive figures) a control (range slider, toggle buttons, dropdown) that does not
  change the plotted data;
* (interactive figures) after a control moves, a caption or an alt text (the plot's ``aria-label``)
  that is not exactly the one precomputed for the control values now drawn (the figure's JSON payload,
  ``captions`` and ``alts``), or a figure none of whose controls changes its caption, or its alt text
  (a caption that ignores the controls);
* horizontal scrolling of the page at phone width;
* a table (labsim's own or a markdown one) with a cell padded less than 4 px on a side; a row taller
  than 100 px; a table wider than its column that neither scrolls nor shows the scroll cue (the
  ``is-scrollable`` frame's shaded edge from ``book/_static/labsim.css``/``labsim.js``). On a phone a
  labsim table of four or more columns is a stack of cards: there each card *line* (a cell) must be at
  most 100 px tall, not the card. Footnote rows (``tr.labsim-note-row``, prose that spans the table)
  are exempt from the row-height rule;
* an output box (``div.cell_output`` or one of its outputs) that is shown but holds nothing;
* a Plotly title whose box overlaps its figure's legend or modebar;
* a label of a graph drawing (``.labsim-graph svg text``) smaller than 11 px on screen;
* Hangul text in a block that may break inside a word (no ``word-break: keep-all``).

With ``LABSIM_SCREENSHOTS=1``, screenshots of every page go to ``_build/screenshots/``. The Korean
edition's pages (``ko/``) get every check but the moving of controls (the same scripts on the same
payloads as the English pages, where they are moved). The meta-tests at the end prove the
checker can fail: a page with an injected outside script, a figure that never draws, broken tables, and
titles under a legend or a modebar.
"""
from __future__ import annotations

import os

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import SITE, built_pages, serve_directory

pytestmark = [pytest.mark.book, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
FIGURE_TIMEOUT_MS = 10_000
SLIDER_TIMEOUT_MS = 5_000

PAGES = built_pages()


@dataclass
class PageReport:
    page: str
    outside: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    figures: int = 0
    sliders: int = 0

    def all_problems(self) -> list[str]:
        return [f"outside request: {u}" for u in self.outside] + self.problems


_PLOT_DRAWN = """(root) => {
  const p = root.querySelector('.labsim-plot');
  return !!(p && p.querySelector('svg.main-svg') && Array.isArray(p.data) && p.data.length > 0);
}"""

_PLOT_DATA = "(root) => JSON.stringify(root.querySelector('.labsim-plot').data)"

# The caption and alt text shown, and those the payload holds for the control values drawn (null when
# the figure has no labsim payload, as the checker's own hand-made figures).
_TEXTS = """(root) => {
  const el = root.querySelector('script.labsim-data');
  if (!el) return null;
  const data = JSON.parse(el.textContent);
  const val = (c) => (c.tagName === 'INPUT' || c.tagName === 'SELECT') ? c.value : c.dataset.value;
  let key = [...root.querySelectorAll('.labsim-control')].map(val).join('_');
  if (!(key in data.figures)) key = data.initial;
  const text = (h) => { const t = document.createElement('template'); t.innerHTML = h; return t.content.textContent; };
  const box = root.closest('.labsim-figure-box');
  const cap = box && box.querySelector('figcaption .labsim-caption-text');
  return {key: key, caption: cap ? cap.textContent : null,
          wantCaption: data.captions && key in data.captions ? text(data.captions[key]) : null,
          alt: root.querySelector('.labsim-plot').getAttribute('aria-label'),
          wantAlt: data.alts && key in data.alts ? data.alts[key] : null};
}"""

_MOVE_SLIDER = """(s) => {
  if (s.tagName === 'SELECT') {
    s.selectedIndex = s.selectedIndex === s.options.length - 1 ? 0 : s.options.length - 1;
    s.dispatchEvent(new Event('change', {bubbles: true}));
    return s.value;
  }
  const buttons = s.querySelectorAll('button');
  if (s.tagName !== 'INPUT' && buttons.length) {
    const other = Array.prototype.find.call(buttons, (b) => b.getAttribute('aria-pressed') !== 'true');
    (other || buttons[0]).click();
    return s.dataset.value;
  }
  const min = s.min === '' ? 0 : Number(s.min), max = s.max === '' ? 100 : Number(s.max);
  const cur = Number(s.value);
  s.value = String(cur !== max ? max : min);
  s.dispatchEvent(new Event('input', {bubbles: true}));
  s.dispatchEvent(new Event('change', {bubbles: true}));
  return s.value;
}"""

_SETTLED = """async () => {
  const mj = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
  if (mj) { await mj; }
  await document.fonts.ready;
  return true;
}"""

_H_OVERFLOW = """() => {
  const w = window.innerWidth, d = document.documentElement.scrollWidth, b = document.body.scrollWidth;
  const bodyClips = ['hidden', 'clip'].includes(getComputedStyle(document.body).overflowX);
  return {inner: w, doc: d, body: b, overflow: d > w + 1 || (!bodyClips && b > w + 1)};
}"""


MIN_CELL_PADDING_PX = 4
MAX_ROW_HEIGHT_PX = 100

_TABLES = """([minPad, maxRow]) => {
  const problems = [];
  const visible = (e) => e.offsetParent !== null && e.getClientRects().length > 0;
  // Sphinx's general index lays out links in a table; it holds no data.
  const tables = [...document.querySelectorAll('table:not(.indextable)')].filter(visible);
  tables.forEach((t, i) => {
    const cap = (t.getAttribute('aria-label') || (t.caption && t.caption.textContent) || '').trim();
    const name = 'table ' + (i + 1) + (cap ? ' (' + cap.slice(0, 60) + ')' : '');
    // 1. padding: every shown cell, at least minPad px on each side
    for (const c of t.querySelectorAll('th, td')) {
      if (!visible(c)) continue;
      const cs = getComputedStyle(c);
      const pads = ['Left', 'Right', 'Top', 'Bottom'].map((s) => parseFloat(cs['padding' + s]));
      if (Math.min(...pads) < minPad - 0.01) {
        problems.push(name + ': cell "' + c.textContent.trim().slice(0, 30) + '" padding ' + pads.join('/') + ' px');
        break;
      }
    }
    // 2. row height: rows of a table; on cards, each card line (a cell)
    for (const r of t.querySelectorAll('tbody tr, thead tr')) {
      if (!visible(r) || r.classList.contains('labsim-note-row')) continue;
      const card = getComputedStyle(r).display === 'block';
      const parts = card ? [...r.children].filter(visible) : [r];
      const tall = parts.find((p) => p.getBoundingClientRect().height > maxRow);
      if (tall) {
        problems.push(name + ': ' + (card ? 'card line' : 'row') + ' "' + tall.textContent.trim().slice(0, 40)
                      + '" is ' + Math.round(tall.getBoundingClientRect().height) + ' px tall');
        break;
      }
    }
    // 3. fits its column, or scrolls with a cue
    let scroller = null;
    for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== 'visible') { scroller = e; break; }
    }
    const tw = t.getBoundingClientRect().width;
    const colEl = t.closest('.bd-article') || document.body;
    const avail = scroller ? scroller.clientWidth : colEl.clientWidth;
    if (tw <= avail + 1) return;
    const ox = scroller ? getComputedStyle(scroller).overflowX : 'visible';
    if (!['auto', 'scroll'].includes(ox)) {
      problems.push(name + ': ' + Math.round(tw) + ' px wide in a ' + Math.round(avail) + ' px column, cut off (overflow-x ' + ox + ')');
      return;
    }
    const frame = scroller.closest('.labsim-scroll-frame');
    const after = frame && getComputedStyle(frame, '::after');
    const cue = frame && frame.classList.contains('is-scrollable') && after.content !== 'none'
      && after.backgroundImage.includes('gradient') && parseFloat(after.opacity) > 0;
    if (!cue) problems.push(name + ': scrolls sideways (' + Math.round(tw) + ' px in ' + Math.round(avail) + ' px) with no visible cue');
  });
  // 4. empty output boxes
  const media = 'img, svg, canvas, iframe, video, table, .labsim-figure, mjx-container, input, select';
  const empty = (o) => visible(o) && o.getBoundingClientRect().height >= 1
    && o.textContent.trim() === '' && !o.querySelector(media);
  for (const o of document.querySelectorAll('div.cell_output, div.cell_output > .output')) {
    if (o.matches('.output') && empty(o.parentElement)) continue;  // reported as its box
    if (empty(o)) {
      problems.push('empty output box (' + Math.round(o.getBoundingClientRect().height) + ' px tall) after "'
        + ((o.closest('.cell') || o).previousElementSibling || {textContent: ''}).textContent.trim().slice(0, 40) + '"');
    }
  }
  return problems;
}"""


MIN_LABEL_PX = 11
# Graph drawings: the on-screen size of every label (its font size in the SVG's units times the SVG's
# scale on screen). Drawings in hidden tabs or closed toggles are skipped (they have no box).
_GRAPH_LABELS = """(minPx) => {
  const bad = [];
  document.querySelectorAll('.labsim-graph svg').forEach((svg, i) => {
    if (!svg.getBoundingClientRect().width) { return; }
    let smallest = Infinity, word = '';
    svg.querySelectorAll('text').forEach((t) => {
      const m = t.getScreenCTM();
      if (!m || !t.textContent.trim()) { return; }
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (px < smallest) { smallest = px; word = t.textContent.trim(); }
    });
    if (smallest < minPx - 0.05) {
      bad.push(`graph drawing ${i}: label "${word.slice(0, 30)}" is ${smallest.toFixed(1)} px (< ${minPx} px)`);
    }
  });
  return bad;
}"""

# Hangul text must not break inside a word (word-break: keep-all on every block that holds it)
_HANGUL_BREAKS = """() => {
  const bad = [];
  document.querySelectorAll('.bd-article h1, .bd-article h2, .bd-article h3, .bd-article p, .bd-article dd, .bd-article td').forEach((el) => {
    if (/[\uac00-\ud7af]/.test(el.textContent) && getComputedStyle(el).wordBreak !== 'keep-all') {
      bad.push(`Hangul may break inside a word in <${el.tagName.toLowerCase()}>: "${el.textContent.trim().slice(0, 30)}"`);
    }
  });
  return bad.slice(0, 5);
}"""

_TITLE_OVERLAPS = """() => {
  const problems = [];
  const box = (e) => { const r = e && e.getBoundingClientRect(); return r && r.width > 0 && r.height > 0 ? r : null; };
  const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  document.querySelectorAll('.js-plotly-plot').forEach((plot, i) => {
    if (!plot.getClientRects().length) return;
    const fig = plot.closest('.labsim-figure');
    const name = 'figure ' + ((fig && fig.id) || plot.id || '#' + (i + 1));
    const title = [...plot.querySelectorAll('.g-gtitle text.gtitle')].find((t) => t.textContent.trim() && box(t));
    if (!title) return;
    const t = box(title), label = '"' + title.textContent.trim().slice(0, 40) + '"';
    plot.querySelectorAll('g.legend').forEach((lg) => {
      const r = box(lg.querySelector('rect.bg') || lg);
      if (r && hit(t, r)) problems.push(name + ': title ' + label + ' overlaps its legend');
    });
    const mb = plot.querySelector('.modebar-container .modebar');
    const r = mb && getComputedStyle(mb.parentElement).display !== 'none' && box(mb);
    if (r && hit(t, r)) problems.push(name + ': title ' + label + ' overlaps its modebar');
  });
  return problems;
}"""


def _text_problems(fid: str, name: str, first: dict, now: dict, changed: dict) -> list[str]:
    """After control ``name`` moved: the caption and alt text shown must be those precomputed for the
    key now drawn. Records in ``changed`` whether each differs from the figure's first one."""
    out = []
    for what, shown, want in (("caption", now["caption"], now["wantCaption"]), ("alt", now["alt"], now["wantAlt"])):
        if want is None:
            out.append(f"figure {fid}: the payload has no {what} for control values {now['key']}")
        elif shown is None:
            out.append(f"figure {fid}: no {what} is shown (a figure with controls needs a caption)")
        elif shown != want:
            out.append(f"figure {fid}: after moving {name!r} the {what} is {(shown or '')[:70]!r}, "
                       f"not {want[:70]!r} (values {now['key']})")
        changed[what] = changed[what] or shown != first[what]
    return out


def _slug(page: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", page.removesuffix(".html"))


def check_page(browser, base_url: str, page: str, *, viewport: dict, screenshot: Path | None = None,
               sliders: bool = True, figure_timeout_ms: int = FIGURE_TIMEOUT_MS) -> PageReport:
    """Open ``base_url + page`` and report every way it breaks the site's rules."""
    rep = PageReport(page)
    ctx = browser.new_context(viewport=viewport, service_workers="block")
    try:
        pg = ctx.new_page()

        def route(r):
            url = r.request.url
            if url.startswith(base_url):
                r.continue_()
            else:
                rep.outside.append(url)
                r.abort()

        pg.route("**/*", route)

        def on_console(msg):
            if msg.type != "error":
                return
            loc = (msg.location or {}).get("url", "")
            if loc and not loc.startswith(base_url) and loc in rep.outside:
                return  # the console echo of a request we aborted; already recorded
            if "Failed to load resource" in msg.text and any(u in msg.text for u in rep.outside):
                return
            rep.problems.append(f"console error: {msg.text} @ {loc}")

        pg.on("console", on_console)
        pg.on("pageerror", lambda exc: rep.problems.append(f"uncaught exception: {exc}"))
        pg.on("requestfailed", lambda req: None if not req.url.startswith(base_url)
              else rep.problems.append(f"request failed: {req.url} ({req.failure})"))
        pg.on("response", lambda res: res.status >= 400 and rep.problems.append(
            f"HTTP {res.status}: {res.url}"))

        pg.goto(base_url + page, wait_until="load")
        # Playwright's "networkidle" is unreliable with request routing (it sometimes waits its full
        # timeout), so wait for what the site itself loads late: MathJax's typesetting and fonts.
        pg.wait_for_function("document.readyState === 'complete'")
        pg.evaluate(_SETTLED)
        pg.wait_for_timeout(250)

        figures = pg.locator(".labsim-figure")
        rep.figures = figures.count()
        for i in range(rep.figures):
            fig = figures.nth(i)
            fid = fig.get_attribute("id") or f"#{i}"
            handle = fig.element_handle()
            try:
                pg.wait_for_function(f"(root) => ({_PLOT_DRAWN})(root)", arg=handle,
                                     timeout=figure_timeout_ms)
            except Exception:  # noqa: BLE001
                rep.problems.append(f"figure {fid} did not render (no svg.main-svg with a trace)")
                continue
            if not sliders or fig.get_attribute("data-labsim-kind") != "interactive":
                continue
            # every control: range sliders, toggle-button groups and dropdowns
            inputs = fig.locator("input.labsim-slider, .labsim-control:not(input)")
            if inputs.count() == 0:
                rep.problems.append(f"interactive figure {fid} has no control (.labsim-control)")
            first = handle.evaluate(_TEXTS)
            changed = {"caption": False, "alt": False}
            for j in range(inputs.count()):
                rep.sliders += 1
                slider = inputs.nth(j)
                name = slider.get_attribute("data-param") or str(j)
                before = handle.evaluate(_PLOT_DATA)
                slider.evaluate(_MOVE_SLIDER)
                try:
                    pg.wait_for_function(f"([root, b]) => ({_PLOT_DATA})(root) !== b",
                                         arg=[handle, before], timeout=SLIDER_TIMEOUT_MS)
                except Exception:  # noqa: BLE001
                    rep.problems.append(f"figure {fid}: moving control {name!r} did not change the plot")
                if first is not None:
                    rep.problems += [p for p in _text_problems(fid, name, first, handle.evaluate(_TEXTS), changed)
                                     if p not in rep.problems]
            if first is not None and inputs.count():
                rep.problems += [f"figure {fid}: no control changes its {what}" for what in ("caption", "alt")
                                 if not changed[what]]

        rep.problems += pg.evaluate(_TITLE_OVERLAPS)
        rep.problems += pg.evaluate(_GRAPH_LABELS, MIN_LABEL_PX)
        rep.problems += pg.evaluate(_HANGUL_BREAKS)
        rep.problems += pg.evaluate(_TABLES, [MIN_CELL_PADDING_PX, MAX_ROW_HEIGHT_PX])
        if viewport["width"] < 600:
            o = pg.evaluate(_H_OVERFLOW)
            if o["overflow"]:
                rep.problems.append(
                    f"scrolls horizontally at {o['inner']} px (document {o['doc']} px, body {o['body']} px)")
        if screenshot is not None:
            pg.screenshot(path=str(screenshot), full_page=True)
    finally:
        ctx.close()
    return rep


def test_site_is_built(site):
    assert PAGES, "no pages found in the built site"
    assert "book/intro.html" in PAGES


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_page(page, device, browser, site_url, screenshot_dir):
    viewport = DESKTOP if device == "desktop" else PHONE
    # full-page screenshots (1-2 s a long page) only when asked: LABSIM_SCREENSHOTS=1 make test
    shot = screenshot_dir / f"{_slug(page)}-{device}.png" if os.environ.get("LABSIM_SCREENSHOTS") == "1" else None
    # the Korean edition's pages (ko/) run the same figure scripts on the same payloads as the English
    # pages, whose controls are moved: there, every figure is drawn and checked, but no control moved
    rep = check_page(browser, site_url, page, viewport=viewport, screenshot=shot,
                     sliders=device == "desktop" and not page.startswith("ko/"))
    print(f"{page} [{device}]: {rep.figures} figures, {rep.sliders} sliders moved")
    assert not rep.all_problems(), f"{page} at {device} width:\n  " + "\n  ".join(rep.all_problems())


# ---- the checker itself can fail -------------------------------------------------------------------

def _copy_page_with(tmp_path: Path, site: Path, page: str, snippet: str) -> Path:
    """Copy one built page into tmp_path (sharing the site's _static) with ``snippet`` before </body>."""
    html = (site / page).read_text(encoding="utf-8")
    assert "</body>" in html
    target = tmp_path / page
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html.replace("</body>", snippet + "\n</body>", 1), encoding="utf-8")
    # Everything else the page refers to (_static, searchindex.js, sibling pages) is linked, not copied.
    own = Path(page).parts[0] if len(Path(page).parts) > 1 else None
    for item in site.iterdir():
        if item.name == own:
            for sub in item.iterdir():
                if not (target.parent / sub.name).exists():
                    (target.parent / sub.name).symlink_to(sub, target_is_directory=sub.is_dir())
        elif not (tmp_path / item.name).exists():
            (tmp_path / item.name).symlink_to(item, target_is_directory=item.is_dir())
    return target


def test_checker_reports_outside_request(site, browser, tmp_path):
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page, '<script src="https://example.com/x.js"></script>')
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    assert rep.outside == ["https://example.com/x.js"], rep
    assert rep.problems == [], f"the untouched parts of the page should pass: {rep.problems}"


def test_checker_reports_figure_that_does_not_render(site, browser, tmp_path):
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page,
                    '<div class="labsim-figure" id="lsfig-broken" data-labsim-kind="static">'
                    '<div class="labsim-plot" role="img" aria-label="never drawn"></div></div>')
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP, figure_timeout_ms=2_000)
    assert rep.figures == 1
    assert any("lsfig-broken did not render" in p for p in rep.problems), rep


def test_screenshots_written(site, screenshot_dir):
    shots = sorted(screenshot_dir.glob("*.png"))
    if not shots:
        pytest.skip("run after the page tests (they write the screenshots)")
    assert all(s.stat().st_size > 1000 for s in shots)



def _contract_figure(fid: str, kind: str, *, slider_works: bool = True) -> str:
    """A figure in labsim.viz's HTML contract, drawn with the site's own Plotly."""
    controls = ('<div class="labsim-controls"><input type="range" class="labsim-slider" data-param="n"'
                ' min="1" max="5" step="1" value="1"><output>1</output></div>') if kind == "interactive" else ""
    factor = "n" if slider_works else "1"
    return f"""<div class="labsim-figure" id="{fid}" data-labsim-kind="{kind}">{controls}
<div class="labsim-plot" role="img" aria-label="test figure"></div>
<script>(function () {{
  function go() {{
    var root = document.getElementById("{fid}"), plot = root.querySelector(".labsim-plot");
    function draw(n) {{ Plotly.react(plot, [{{x: [1, 2, 3], y: [1, 2 * {factor}, 3 * {factor}]}}], {{}}); }}
    draw(1);
    var s = root.querySelector("input.labsim-slider");
    if (s) {{ s.addEventListener("input", function () {{ var n = +s.value; draw(n); }}); }}
  }}
  if (window.Plotly) {{ go(); }} else {{ window.addEventListener("load", go); }}
}})();</script></div>"""


def test_checker_accepts_working_figures_and_catches_a_dead_slider(site, browser, tmp_path):
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page,
                    _contract_figure("lsfig-static", "static")
                    + _contract_figure("lsfig-live", "interactive")
                    + _contract_figure("lsfig-dead", "interactive", slider_works=False))
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    assert rep.figures == 3 and rep.sliders == 2, rep
    assert rep.outside == [], rep
    assert rep.problems == ["figure lsfig-dead: moving control 'n' did not change the plot"], rep


_BROKEN_TABLES = """<div class="bd-article"><div style="width: 600px">
<table class="table" aria-label="tight"><tbody><tr><td style="padding: 1px !important">4,096</td>
<td style="padding: 1px !important">137,438,953,472</td></tr></tbody></table>
<table class="table" aria-label="tower"><tbody><tr><td style="height: 300px">tall</td></tr></tbody></table>
<div style="overflow-x: hidden"><table class="table" aria-label="clipped"><tbody><tr>
<td style="min-width: 2000px">wide</td></tr></tbody></table></div>
<div style="overflow-x: auto"><table class="table" aria-label="no cue"><tbody><tr>
<td style="min-width: 2000px">wide</td></tr></tbody></table></div>
<div class="cell_output docutils container"><div class="output text_plain highlight-myst-ansi">
<pre style="min-height: 2em"> </pre></div></div>
</div></div>"""


def test_checker_reports_broken_tables_and_empty_output(site, browser, tmp_path):
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page, _BROKEN_TABLES)
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    text = "\n".join(rep.problems)
    assert "(tight): cell \"4,096\" padding 1/1/1/1 px" in text, text
    assert re.search(r"\(tower\): row \"tall\" is 3\d\d px tall", text), text
    assert re.search(r"\(clipped\): 20\d\d px wide in a 600 px column, cut off \(overflow-x hidden\)", text), text
    assert "(no cue): scrolls sideways" in text, text
    assert "empty output box" in text, text
    assert len(rep.problems) == 5, text


def test_checker_accepts_a_labsim_table_that_scrolls_and_cards_on_a_phone(site, browser, tmp_path):
    from labsim.support.tables import html_table

    rows = [{"kernel": f"k{i}", "ops": "broadcast → multiply → add → maximum", "FLOPs": 8_623_493_120,
             "bytes read": 33_600_000 + i, "bytes written": 16_800_000, "launch": "grid 4096×1×1 × block 256×1×1",
             "why": "a long explanation " * 12} for i in range(3)]
    wide = html_table(rows, "wide", units={"FLOPs": "FLOP", "bytes read": "B", "bytes written": "B"}, notes=["why"])
    _copy_page_with(tmp_path, site, page := "book/intro.html",
                    f'<div class="bd-article"><div style="max-width: 500px">{wide}</div></div>')
    with serve_directory(tmp_path) as url:
        desk = check_page(browser, url, page, viewport=DESKTOP)
        phone = check_page(browser, url, page, viewport=PHONE)
    assert desk.problems == [] and phone.problems == [], (desk.problems, phone.problems)



def _titled_figure(fid: str, layout: str, config: str) -> str:
    """A drawn figure with a title and a two-entry legend, laid out by ``layout`` (JS object text)."""
    return f"""<div class="labsim-figure" id="{fid}" data-labsim-kind="static" style="width: 380px">
<div class="labsim-plot" role="img" aria-label="titled figure"></div>
<script>(function () {{
  function go() {{
    var plot = document.getElementById("{fid}").querySelector(".labsim-plot");
    Plotly.newPlot(plot, [{{x: [1, 2], y: [1, 2], name: "first series"}}, {{x: [1, 2], y: [2, 1], name: "second"}}],
                   Object.assign({{height: 300, showlegend: true, margin: {{t: 60}}}}, {layout}), {config});
  }}
  if (window.Plotly) {{ go(); }} else {{ window.addEventListener("load", go); }}
}})();</script></div>"""


def test_checker_reports_a_title_under_its_legend_or_modebar(site, browser, tmp_path):
    title = '{text: "A title as long as a line of the page", x: %s, xanchor: "%s", y: 0.98, yanchor: "top"}'
    good = _titled_figure("lsfig-good", '{title: %s, legend: {orientation: "h", xref: "container", '
                          'yref: "container", x: 0, y: 0, yanchor: "bottom"}}' % (title % (0, "left")),
                          '{displayModeBar: false}')
    legend = _titled_figure("lsfig-legend", '{title: %s, legend: {orientation: "h", yref: "container", x: 0, '
                            'y: 0.98, yanchor: "top"}}' % (title % (0, "left")), '{displayModeBar: false}')
    modebar = _titled_figure("lsfig-modebar", '{title: %s, legend: {orientation: "h", yref: "container", '
                             'x: 0, y: 0, yanchor: "bottom"}}' % (title % (1, "right")), '{displayModeBar: true}')
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page, good + legend + modebar)
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    assert rep.figures == 3, rep
    assert rep.problems == ['figure lsfig-legend: title "A title as long as a line of the page" overlaps its legend',
                            'figure lsfig-modebar: title "A title as long as a line of the page" overlaps its modebar'
                            ], rep.problems


def test_checker_moves_toggles_and_dropdowns_of_a_real_figure(site, browser, tmp_path, monkeypatch):
    """A figure from labsim.viz with a toggle group and a dropdown: the checker moves both."""
    import plotly.graph_objects as go
    import labsim.viz as lv

    monkeypatch.setenv("LABSIM_BOOK", "1")
    names = [f"c{i}" for i in range(6)]
    fig = lv.interactive(lambda mode, chip: go.Figure(go.Bar(x=[chip], y=[1 + names.index(chip) + (mode == "b")])),
                         {"mode": ["a", "b"], "chip": names}, alt=lambda mode, chip: f"bars of {chip} in mode {mode}",
                         caption=lambda mode, chip: f"The {chip}'s bar, mode {mode} & <more>")
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page, fig.to_html())
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    assert rep.figures == 1 and rep.sliders == 2, rep
    assert rep.problems == [], rep


def test_checker_reports_captions_that_do_not_follow_the_controls(site, browser, tmp_path, monkeypatch):
    """A caption fixed for every control value, and the old page script (it looked the caption up before
    the caption existed, so the caption never changed): the checker reports both."""
    import plotly.graph_objects as go
    import labsim.viz as lv

    monkeypatch.setenv("LABSIM_BOOK", "1")

    def make(n):
        return go.Figure(go.Bar(x=list(range(n)), y=[n] * n))

    fixed = lv.interactive(make, {"n": [1, 2, 3]}, alt=lambda n: lv.plural(n, "bar"), caption="Some bars")
    stale = lv.interactive(make, {"n": [1, 2, 3]}, alt=lambda n: lv.plural(n, "bar"),
                           caption=lambda n: f"{lv.plural(n, 'bar')} in a row").to_html()
    assert "cap = caption();" in stale
    stale = stale.replace("cap = caption();", "cap = null;")  # the caption is never updated
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page, fixed.to_html().replace("lsfig-", "lsfig-fixed-")
                    + stale.replace("lsfig-", "lsfig-stale-"))
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    text = "\n".join(rep.problems)
    assert rep.figures == 2, rep
    assert re.search(r"figure lsfig-fixed-\w+: no control changes its caption", text), text
    assert len([p for p in rep.problems if "lsfig-fixed" in p]) == 1, text
    assert re.search(r"figure lsfig-stale-\w+: after moving 'n' the caption is '2 bars in a row', "
                     r"not '3 bars in a row'", text), text
    assert re.search(r"figure lsfig-stale-\w+: no control changes its caption", text), text
    assert "alt" not in text, text  # both figures' alt texts follow the controls


def test_checker_reports_a_graph_with_tiny_labels(site, browser, tmp_path):
    tiny = ('<div class="labsim-graph" role="img" aria-label="tiny"><svg width="1000" height="40" '
            'viewBox="0 0 1000 40" style="width: 200px"><text x="0" y="20" font-size="10">add</text></svg></div>')
    page = "book/intro.html"
    _copy_page_with(tmp_path, site, page, tiny)
    with serve_directory(tmp_path) as url:
        rep = check_page(browser, url, page, viewport=DESKTOP)
    assert any('label "add" is 2.0 px' in p for p in rep.problems), rep
