"""Graphviz drawings are readable on a phone (issue 22, item 3): at 390 px no drawing hides more than
:data:`MAX_HIDDEN` of its width behind its sideways scroller unless it offers pan and zoom: the scroller
pans, and a "whole drawing" button (book/_static/labsim.js) zooms out to the page's width and back
(both checked by pressing it). The "full size" button does not count: on a phone it is wider still.

A drawing too wide for a phone carries a second, narrower layout (``labsim/viz/graph_layout.py``) that
a container query shows there; this test measures what the reader gets. Every drawing is measured,
including those in tabs other than the open one (each tab is opened in turn). Exactly one layout of a
two-layout drawing is displayed at either width, and the hidden one is out of the accessibility tree.
Without a built site the tests skip (or fail under ``LABSIM_REQUIRE_BOOK=1``)."""
from __future__ import annotations

import pytest

from conftest import built_pages, serve_directory, SITE

pytestmark = [pytest.mark.book, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
#: the most of a drawing's width that may lie off-screen in its scroller at phone width
MAX_HIDDEN = 0.40

PAGES = [p for p in built_pages() if "labsim-graph" in (SITE / p).read_text(encoding="utf-8")]

_MEASURE = """async (maxHidden) => {
  const out = [];
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)));
  const boxes = [...document.querySelectorAll('.labsim-graph-box')];
  for (let i = 0; i < boxes.length; i++) {
    const box = boxes[i];
    const panel = box.closest('[role="tabpanel"]');
    if (panel && panel.hidden) {
      const tab = document.querySelector(`[role="tab"][aria-controls="${panel.id}"]`);
      if (tab) { tab.click(); await frame(); }
    }
    const scroll = box.querySelector('.labsim-scroll');
    if (!scroll || !scroll.getBoundingClientRect().width) continue;  // a closed toggle
    const shown = [...box.querySelectorAll('svg')].filter((s) => s.getBoundingClientRect().width > 0);
    if (box.classList.contains('labsim-graph-two')) {
      if (shown.length !== 1) out.push(`drawing ${i}: ${shown.length} layouts shown, not 1`);
      const hidden = box.querySelector(shown[0] && shown[0].closest('.labsim-graph-narrow') ?
                                       '.labsim-graph-wide' : '.labsim-graph-narrow');
      if (hidden && getComputedStyle(hidden).display !== 'none') out.push(`drawing ${i}: the hidden layout is displayed`);
    }
    const lost = (scroll.scrollWidth - scroll.clientWidth) / scroll.scrollWidth;
    const zoom = box.querySelector('.labsim-graph-whole');
    const zoomShown = zoom && zoom.getBoundingClientRect().width > 0;
    if (lost > maxHidden && !zoomShown) {
      out.push(`drawing ${i}: ${(100 * lost).toFixed(0)} % of its width is off-screen (${scroll.scrollWidth} px in ${scroll.clientWidth} px) and no zoom control`);
    }
    if (zoomShown) {  // the zoom shows the whole drawing, and gives the readable size back
      zoom.click(); await frame();
      const left = (scroll.scrollWidth - scroll.clientWidth) / scroll.scrollWidth;
      if (left > 0.01 || zoom.getAttribute('aria-pressed') !== 'true') {
        out.push(`drawing ${i}: zoomed out, ${(100 * left).toFixed(0)} % is still off-screen`);
      }
      zoom.click(); await frame();
      const back = (scroll.scrollWidth - scroll.clientWidth) / scroll.scrollWidth;
      if (Math.abs(back - lost) > 0.01 || zoom.getAttribute('aria-pressed') !== 'false') {
        out.push(`drawing ${i}: zoomed in again, ${(100 * back).toFixed(0)} % off-screen, not ${(100 * lost).toFixed(0)} %`);
      }
    }
    out.push(`#lost ${i} ${lost.toFixed(3)}`);
  }
  return out;
}"""


def graph_report(browser, base_url: str, page: str, viewport: dict, max_hidden: float = MAX_HIDDEN) -> tuple[list, list]:
    """(problems, fraction hidden per drawing) of ``page`` at ``viewport``."""
    ctx = browser.new_context(viewport=viewport)
    try:
        pg = ctx.new_page()
        pg.goto(f"{base_url}/{page}", wait_until="load")
        rows = pg.evaluate(_MEASURE, max_hidden)
    finally:
        ctx.close()
    lost = [float(r.split()[-1]) for r in rows if r.startswith("#lost")]
    return [r for r in rows if not r.startswith("#lost")], lost


def test_there_are_drawing_pages(site):
    assert PAGES, "no built page holds a Graphviz drawing"


@pytest.mark.parametrize("page", PAGES)
def test_drawings_readable_on_a_phone(page, browser, site_url):
    problems, lost = graph_report(browser, site_url, page, PHONE)
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page", PAGES)
def test_one_layout_at_desktop(page, browser, site_url):
    problems, _ = graph_report(browser, site_url, page, DESKTOP, max_hidden=1.0)
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


# ---- the checker itself can fail -------------------------------------------------------------------

_SVG = ('<div class="labsim-graph" role="img" aria-label="wide"><svg width="900pt" height="40pt" viewBox="0 0 900 40" '
        'style="width:100%;max-width:1200px;min-width:1000px"><text x="0" y="20" font-size="14">add</text></svg></div>')
# no .labsim-graph-frame: labsim.js gives it no zoom
_WIDE = f'<div class="labsim-graph-box"><div class="labsim-scroll-frame"><div class="labsim-scroll">{_SVG}</div></div></div>'
# as the book draws it: labsim.js adds the zoom
_ZOOM = (f'<div class="labsim-graph-box"><div class="labsim-scroll-frame labsim-graph-frame"><div class="labsim-scroll">'
         f'{_SVG}</div></div></div>')
_BOTH = ('<div class="labsim-graph-box labsim-graph-two"><div class="labsim-scroll-frame labsim-graph-frame">'
         '<div class="labsim-scroll"><div class="labsim-graph" role="img" aria-label="two">'
         '<div class="labsim-graph-wide"><svg width="90pt" height="40pt" style="width:100px"></svg></div>'
         '<div class="labsim-graph-narrow" aria-hidden="true"><svg width="90pt" height="40pt" style="width:100px">'
         '</svg></div></div></div></div></div>')


def test_checker_reports_a_drawing_off_screen_and_two_layouts_shown(site, browser, tmp_path):
    import test_browser

    page = "book/intro.html"
    test_browser._copy_page_with(tmp_path, site, page, _WIDE + _BOTH + _ZOOM)
    with serve_directory(tmp_path) as url:
        problems, lost = graph_report(browser, url, page, PHONE)
    text = "\n".join(problems)
    assert len(lost) == 3 and lost[0] > 0.6 and lost[2] > 0.6, lost
    assert len([p for p in problems if "off-screen" in p]) == 1, text  # the zoomable one passes
    assert "% of its width is off-screen" in text and "no zoom control" in text, text
    assert "2 layouts shown, not 1" in text, text
