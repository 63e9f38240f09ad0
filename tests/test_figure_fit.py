"""Every Plotly figure of the built website fits its page, at desktop (1280 px) and phone (390 px) width.

Each page of ``_build/html`` that holds a labsim figure is opened in headless Chromium (the fixtures of
``conftest.py``; without a built site the tests skip, or fail under ``LABSIM_REQUIRE_BOOK=1``). For every
Plotly figure, in the state it opens in and at both ends of each of its controls (the first and the last
value of a slider, a toggle group or a dropdown, the other controls as they open), the text the figure
draws (tick labels, axis and panel titles, legend entries, annotations, bar and point labels) must:

* be at least 11 px tall on screen at phone width (font size times the SVG's scale);
* not overlap another text label of the same figure (SVG bounding boxes, by more than 2 px each way);
* lie inside the figure's SVG (a label cut by the plot's edge is clipped).

Animation chrome (Plotly's play/pause menu and step slider) is checked by the browser test of the
animations, not here. The meta-tests at the end prove the checker can fail.
"""
from __future__ import annotations

import pytest

from conftest import built_pages, serve_directory, SITE

pytestmark = [pytest.mark.book, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
MIN_TEXT_PX = 11
OVERLAP_PX = 2

# Only pages that hold a labsim figure are opened (keeps the run short).
PAGES = [p for p in built_pages() if "labsim-figure" in (SITE / p).read_text(encoding="utf-8")]

_CHECK = """async ([minPx, overlapPx, checkSize]) => {
  const problems = [];
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const visible = (el, stop) => {
    for (let e = el; e && e !== stop; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || parseFloat(cs.opacity) === 0) return false;
    }
    return true;
  };
  // how deep two convex quadrilaterals (a label's box as drawn, rotated or not) overlap: the smallest
  // overlap of their projections on the edge normals (separating axis test); <= 0 when apart
  const depth = (p, q) => {
    if (!p || !q) return Infinity;
    let d = Infinity;
    for (const poly of [p, q]) {
      for (let i = 0; i < 4; i++) {
        const [x0, y0] = poly[i], [x1, y1] = poly[(i + 1) % 4];
        const len = Math.hypot(x1 - x0, y1 - y0) || 1, nx = (y0 - y1) / len, ny = (x1 - x0) / len;
        const pr = (r) => r.map(([x, y]) => x * nx + y * ny);
        const a = pr(p), b = pr(q);
        d = Math.min(d, Math.min(Math.max(...a), Math.max(...b)) - Math.max(Math.min(...a), Math.min(...b)));
      }
    }
    return d;
  };
  const skip = 'g.slider-container, g.updatemenu-container, g.hoverlayer, .modebar-container';
  const measure = (plot, name, state, small) => {
    const svg = plot.querySelector('svg.main-svg');
    if (!svg) return;
    const frameBox = svg.getBoundingClientRect();
    if (!frameBox.width) return;  // in a hidden tab or a closed toggle
    const labels = [];
    plot.querySelectorAll('svg.main-svg text').forEach((t) => {
      const word = t.textContent.trim();
      if (!word || t.closest(skip) || !visible(t, plot)) return;
      const r = t.getBoundingClientRect();
      if (!r.width || !r.height) return;
      const m = t.getScreenCTM();
      const px = parseFloat(getComputedStyle(t).fontSize) * (m ? Math.hypot(m.a, m.b) : 1);
      const b = t.getBBox();
      const q = m ? [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(
        ([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]) : null;
      labels.push({t, word, r, px, q});
    });
    const where = name + ' (' + state + ')';
    if (checkSize) {
      const tiny = labels.filter((l) => l.px < minPx - 0.05).sort((a, b) => a.px - b.px);
      if (tiny.length) small.push(where + ': ' + tiny.length + ' label(s) under ' + minPx + ' px, e.g. "'
        + tiny[0].word.slice(0, 30) + '" at ' + tiny[0].px.toFixed(1) + ' px');
    }
    for (const l of labels) {
      const r = l.r;
      if (r.left < frameBox.left - 1 || r.right > frameBox.right + 1 || r.top < frameBox.top - 1 || r.bottom > frameBox.bottom + 1) {
        problems.push(where + ': label "' + l.word.slice(0, 30) + '" is clipped by the figure\\'s edge');
      }
    }
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) {
        const a = labels[i], b = labels[j];
        if (a.t.contains(b.t) || b.t.contains(a.t)) continue;
        const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (w > overlapPx && h > overlapPx && depth(a.q, b.q) > overlapPx) {
          problems.push(where + ': labels "' + a.word.slice(0, 25) + '" and "' + b.word.slice(0, 25) + '" overlap');
        }
      }
    }
  };
  const setTo = async (plot, c, end) => {
    const before = JSON.stringify(plot.data);
    if (c.tagName === 'SELECT') {
      c.selectedIndex = end === 'first' ? 0 : c.options.length - 1;
      c.dispatchEvent(new Event('change', {bubbles: true}));
    } else if (c.tagName === 'INPUT') {
      c.value = end === 'first' ? c.min : c.max;
      c.dispatchEvent(new Event('input', {bubbles: true}));
      c.dispatchEvent(new Event('change', {bubbles: true}));
    } else {
      const bs = c.querySelectorAll('button');
      (end === 'first' ? bs[0] : bs[bs.length - 1]).click();
    }
    for (let k = 0; k < 40 && JSON.stringify(plot.data) === before; k++) await frame();
    await frame();
  };
  const small = [];
  const figs = [...document.querySelectorAll('.labsim-figure')];
  for (let i = 0; i < figs.length; i++) {
    const fig = figs[i], plot = fig.querySelector('.js-plotly-plot');
    if (!plot) continue;
    const num = fig.closest('.labsim-figure-box') && fig.closest('.labsim-figure-box').querySelector('.labsim-fignum');
    const name = (num && num.textContent.trim() !== 'Figure' ? num.textContent.trim() : 'figure #' + (i + 1)) + ' ' + (fig.id || '');
    measure(plot, name, 'as it opens', small);
    const ctls = [...fig.querySelectorAll('.labsim-control')];
    const opening = ctls.map((c) => c.tagName === 'SELECT' ? c.selectedIndex : c.tagName === 'INPUT' ? c.value : c.dataset.value);
    for (let j = 0; j < ctls.length; j++) {
      const c = ctls[j], label = c.dataset.param || String(j);
      for (const end of ['first', 'last']) {
        await setTo(plot, c, end);
        measure(plot, name, label + ' at its ' + end + ' value', small);
      }
      // back to where it opened, so each control is checked with the others as they open
      if (c.tagName === 'SELECT') { c.selectedIndex = opening[j]; c.dispatchEvent(new Event('change', {bubbles: true})); }
      else if (c.tagName === 'INPUT') { c.value = opening[j]; c.dispatchEvent(new Event('input', {bubbles: true})); }
      else { c.querySelectorAll('button')[+opening[j]].click(); }
      await frame();
    }
  }
  return [...new Set(problems.concat(small))];
}"""

_DRAWN = """() => [...document.querySelectorAll('.labsim-figure')].every((f) => {
  const p = f.querySelector('.labsim-plot');
  return !p || (p.querySelector('svg.main-svg') && Array.isArray(p.data));
})"""


def _drawn_page(browser, base_url: str, page: str, viewport: dict):
    ctx = browser.new_context(viewport=viewport, service_workers="block")
    pg = ctx.new_page()
    # offline, and without MathJax (it typesets prose, never a figure's text; it is the slow part of a load)
    pg.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base_url)
             and "mathjax" not in r.request.url.lower() else r.abort())
    pg.goto(base_url + page, wait_until="load")
    pg.wait_for_function("document.readyState === 'complete'")
    pg.evaluate("async () => { await document.fonts.ready; }")
    pg.wait_for_function(_DRAWN, timeout=15_000)
    pg.wait_for_timeout(100)
    return ctx, pg


def _check(pg, viewport: dict) -> list[str]:
    return pg.evaluate(_CHECK, [MIN_TEXT_PX, OVERLAP_PX, viewport["width"] < 600])


def fit_problems(browser, base_url: str, page: str, viewport: dict) -> list[str]:
    """Open ``base_url + page`` at ``viewport`` and list every figure label that is too small (phone
    width only), overlaps another or is clipped, in every state the check visits."""
    ctx, pg = _drawn_page(browser, base_url, page, viewport)
    try:
        return _check(pg, viewport)
    finally:
        ctx.close()


def test_there_are_figure_pages(site):
    assert PAGES, "no built page holds a labsim figure"


@pytest.mark.parametrize("page", PAGES)
def test_figures_fit(page, browser, site_url):
    """Desktop, then the same page narrowed to a phone's width (Plotly redraws responsive figures on
    the resize, as on a phone turned sideways): one load per page keeps the run short."""
    ctx, pg = _drawn_page(browser, site_url, page, DESKTOP)
    try:
        # a Korean page's figures are the English page's with other words: a longer label shows at a
        # phone's width first, so its desktop pass (the English page's has run) is left out
        problems = [] if page.startswith("ko/") else [f"at desktop width: {p}" for p in _check(pg, DESKTOP)]
        pg.set_viewport_size(PHONE)
        pg.evaluate("() => new Promise((r) => setTimeout(r, 400))")  # Plotly's resize handler is debounced
        pg.wait_for_function(_DRAWN, timeout=15_000)
        problems += [f"at phone width: {p}" for p in _check(pg, PHONE)]
    finally:
        ctx.close()
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


# ---- the checker itself can fail -------------------------------------------------------------------

_BAD = """<figure class="labsim-figure-box"><div class="labsim-figure" id="lsfig-bad" data-labsim-kind="static">
<div class="labsim-plot" style="width: 360px"></div>
<script>(function () {
  function go() {
    var plot = document.getElementById("lsfig-bad").querySelector(".labsim-plot");
    Plotly.newPlot(plot, [{x: [1, 2], y: [1, 2], mode: "markers+text", text: ["twin", "lone"],
                           textposition: "top center", textfont: {size: 8}},
                          {x: [1], y: [1], mode: "text", text: ["on top of twin"], textposition: "top center"}],
                   {height: 260, margin: {l: 40, r: 10, t: 10, b: 40}, showlegend: false, xaxis: {range: [0.5, 2.5]},
                    annotations: [
                     {x: 2, y: 1.5, text: "a label that runs far past the right edge", showarrow: false,
                      xanchor: "left", xref: "x", yref: "y"}]},
                   {displayModeBar: false});
  }
  if (window.Plotly) { go(); } else { window.addEventListener("load", go); }
})();</script></div></figure>"""


def test_checker_reports_small_overlapping_and_clipped_labels(site, browser, tmp_path):
    import test_browser

    page = "book/intro.html"
    test_browser._copy_page_with(tmp_path, site, page, _BAD)
    with serve_directory(tmp_path) as url:
        problems = fit_problems(browser, url, page, PHONE)
    text = "\n".join(problems)
    assert "label(s) under 11 px" in text and '"twin" at 8.0 px' in text, text
    assert 'labels "twin" and "on top of twin" overlap' in text, text
    assert 'label "a label that runs far past the' in text and "clipped" in text, text
