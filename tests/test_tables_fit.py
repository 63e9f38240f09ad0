"""Every table of the built website fits its page, at desktop (1280 px) and phone (390 px) width.

Each page of ``_build/html`` that holds a table is opened in headless Chromium (the fixtures of
``conftest.py``; without a built site the tests skip, or fail under ``LABSIM_REQUIRE_BOOK=1``).

* At 1280 px no table row is cut: no table scrolls sideways, and no cell (a note row's text included)
  reaches past the right edge of the box that shows the table.
* At 390 px every table keeps all its columns: either it shows as cards (each row a block in which every
  cell shows its column's label, from ``data-label``), or every header cell's text lies inside the visible
  part of the table, or the table scrolls with a visible cue (labsim's "scroll →" hint, or the shaded
  edge labsim.js gives a scrolling markdown table).

The meta-test at the end proves the checker can fail.
"""
from __future__ import annotations

import pytest

from conftest import built_pages, serve_directory, SITE

pytestmark = [pytest.mark.book, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

PAGES = [p for p in built_pages() if "<table" in (SITE / p).read_text(encoding="utf-8")
         and not p.startswith(("genindex", "search"))]

_CHECK = """([phone]) => {
  const problems = [];
  const tables = [...document.querySelectorAll('table')].filter((t) => t.getClientRects().length
    && !t.closest('.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer, footer'));
  tables.forEach((t, i) => {
    const name = 'table ' + (i + 1) + ' ("' + (t.getAttribute('aria-label') || t.querySelector('th, td')?.textContent || '').trim().slice(0, 40) + '")';
    // the box that shows the table: the nearest ancestor that clips sideways
    let box = t.parentElement;
    while (box && box !== document.body && !['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
    const view = (box && box !== document.body) ? box.getBoundingClientRect() : {left: 0, right: innerWidth};
    const scrolls = box && box !== document.body && box.scrollWidth > box.clientWidth + 1;
    const frame = t.closest('.labsim-scroll-frame');
    const hint = frame && frame.querySelector(':scope > .labsim-scroll-hint');
    const cue = scrolls && frame && frame.classList.contains('is-scrollable')
      && (!hint || getComputedStyle(hint).display !== 'none');
    const rows = [...t.querySelectorAll('tbody tr')];
    const cards = rows.length && getComputedStyle(rows[0]).display === 'block';
    if (!phone) {
      if (scrolls) problems.push(name + ': scrolls sideways (' + box.scrollWidth + ' px in ' + box.clientWidth + ' px)');
      const cut = [...t.querySelectorAll('td, th')].filter((c) => c.getClientRects().length
        && c.getBoundingClientRect().right > view.right + 1);
      if (cut.length && !scrolls) problems.push(name + ': ' + cut.length + ' cell(s) cut at the right edge, e.g. "'
                                                + cut[0].textContent.trim().slice(0, 40) + '"');
      return;
    }
    if (cards) {
      // every cell of a row that is not a note shows its column's label
      rows.filter((r) => !r.classList.contains('labsim-note-row')).forEach((r) => {
        // a markdown table's card (labsim.js) has its first cell as the card's bold title, without a label
        const md = t.closest('.labsim-md-cards');
        [...r.children].forEach((c, k) => {
          if (md && k === 0) return;
          const label = getComputedStyle(c, '::before').content;
          const cr = c.getBoundingClientRect();
          if (!c.dataset.label || label === 'none' || label === 'normal' || label === '""')
            problems.push(name + ': a card cell without its label ("' + c.textContent.trim().slice(0, 30) + '")');
          else if (cr.right > innerWidth + 1 || cr.left < -1)
            problems.push(name + ': a card cell past the page ("' + c.dataset.label + '")');
        });
      });
      return;
    }
    const heads = [...t.querySelectorAll('thead th')];
    const hidden = heads.filter((h) => {
      const r = h.getBoundingClientRect();
      return !r.width || r.right > Math.min(view.right, innerWidth) + 1 || r.left < Math.max(view.left, 0) - 1;
    });
    if (hidden.length && !cue)
      problems.push(name + ': ' + hidden.length + ' of ' + heads.length + ' column(s) out of sight ("'
                    + hidden[0].textContent.trim().slice(0, 30) + '") without cards or a scroll cue');
  });
  return problems;
}"""


def table_problems(browser, base_url: str, page: str, viewport: dict) -> list[str]:
    ctx = browser.new_context(viewport=viewport)
    try:
        pg = ctx.new_page()
        pg.goto(base_url + page, wait_until="load")
        pg.wait_for_timeout(300)  # labsim.js marks the scrolling tables after load
        return pg.evaluate(_CHECK, [viewport["width"] < 600])
    finally:
        ctx.close()


def test_there_are_table_pages(site):
    assert PAGES, "no built page holds a table"


@pytest.mark.parametrize("page", PAGES)
def test_tables_fit(page, browser, site_url):
    problems = [f"at desktop width: {p}" for p in table_problems(browser, site_url, page, DESKTOP)]
    problems += [f"at phone width: {p}" for p in table_problems(browser, site_url, page, PHONE)]
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


# ---- the checker itself can fail -------------------------------------------------------------------

_BAD = """<div class="cut-box" style="overflow-x:auto;max-width:300px"><table class="table">
<thead><tr><th>first</th><th>second</th><th>third</th><th>fourth column, far right</th></tr></thead>
<tbody><tr><td style="white-space:nowrap">a cell that is long enough to overflow its box</td><td>2</td><td>3</td>
<td style="white-space:nowrap">another cell that is long enough</td></tr></tbody></table></div>"""


def test_checker_reports_cut_tables(site, browser, tmp_path):
    import test_browser

    page = "book/intro.html"
    test_browser._copy_page_with(tmp_path, site, page, _BAD)
    with serve_directory(tmp_path) as url:
        wide = "\n".join(table_problems(browser, url, page, DESKTOP))
        phone = "\n".join(table_problems(browser, url, page, PHONE))
    assert '("first")' in wide and "scrolls sideways" in wide, wide
    assert "column(s) out of sight" in phone and "without cards or a scroll cue" in phone, phone
