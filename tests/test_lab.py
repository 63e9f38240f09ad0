"""JupyterLab as a reader uses it, in headless Chromium.

The server starts the way ``make lab`` starts it (``book/_ext/labsim_lab.py``: jupytext, the book's
contents manager, markdown opening as notebooks, jupyterlab-myst), rooted at a copy of the chapters so
that nothing in the repository is written. For two chapters the test opens the ``.md``, runs all cells,
and asserts:

* no cell shows an error;
* the rendered markdown holds no raw MyST role or directive (``{term}``, ``{glue:text}``, a fenced
  ``{exercise}``...): jupyterlab-myst renders them, and computed values come from the kernel;
* the cells the website hides are collapsed;
* moving one control of every live widget changes the data of that widget's figure;
* no widget readout is clipped.

Screenshots go to ``_build/screenshots/lab-*.png`` beside the site's. The times (server start to a
rendered chapter, control to redrawn figure) are printed.
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("playwright")
pytest.importorskip("jupyterlab")
if importlib.util.find_spec("jupyterlab_myst") is None:
    pytest.skip("jupyterlab-myst is not installed (make lab installs it)", allow_module_level=True)

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_lab  # noqa: E402,F401
from _lab_browser import copy_chapters, lab_server  # noqa: E402

# "ko/…": the Korean edition's chapter (make lab EDITION=ko); its kernel draws in Korean
CHAPTERS = ["03_roofline", "ko/05_compiler"]
TOKEN = "labsim-test"
RAW_ROLE = re.compile(r"\{(?:glue(?::\w+)?|term|cite|doc|ref|eval|figref|numref|exercise|solution)\}`?|^```\{", re.M)
SHOTS = ROOT / "_build" / "screenshots"
TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    copy_chapters(root)
    t0 = time.perf_counter()
    with lab_server(root, TOKEN) as url:  # tests/_lab_browser.py: JupyterLab as `make lab` starts it
        TIMES["server start"] = time.perf_counter() - t0
        yield url, root


_BUSY = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-InputPrompt'))
  .some(p => p.textContent.includes('*'))"""
_ERRORS = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-OutputArea-output'))
  .filter(o => (o.getAttribute('data-mime-type') || '').includes('error') || /Traceback \\(most recent call last\\)/.test(o.innerText))
  .map(o => o.innerText.slice(0, 400))"""
_MARKDOWN = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown, .jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .myst'))
  .map(m => m.innerText)"""
_HIDDEN = """() => ({collapsed: document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell .jp-InputPlaceholder, .jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-collapsed').length})"""
_READOUTS = """() => Array.from(document.querySelectorAll('.widget-readout, .widget-dropdown select, .widget-toggle-button'))
  .filter(r => r.offsetParent && r.scrollWidth > r.clientWidth + 1).map(r => r.innerText || r.value)"""
_WIDGETS = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-OutputArea-output .widget-vbox'))
  .filter(b => b.querySelector('.js-plotly-plot') && !b.parentElement.closest('.widget-vbox')).length"""
_PLOT_OF = """(i) => {
  const boxes = Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-OutputArea-output .widget-vbox'))
    .filter(b => b.querySelector('.js-plotly-plot') && !b.parentElement.closest('.widget-vbox'));
  const gd = boxes[i].querySelector('.js-plotly-plot');
  return gd && gd.data ? JSON.stringify(gd.data) : null;
}"""
_MOVE = """(i) => {
  const boxes = Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-OutputArea-output .widget-vbox'))
    .filter(b => b.querySelector('.js-plotly-plot') && !b.parentElement.closest('.widget-vbox'));
  const box = boxes[i];
  box.scrollIntoView();
  const sel = box.querySelector('.widget-dropdown select');
  if (sel) { sel.selectedIndex = (sel.selectedIndex + 1) % sel.options.length; sel.dispatchEvent(new Event('change', {bubbles: true})); return 'dropdown'; }
  const toggles = Array.from(box.querySelectorAll('.widget-toggle-button'));
  if (toggles.length) { const other = toggles.find(b => !b.classList.contains('mod-active')) || toggles[0]; other.click(); return 'toggle'; }
  return null;
}"""


def _slider_handle(page, i):
    boxes = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .widget-vbox:has(.js-plotly-plot)")
    return boxes.nth(i).locator(".widget-slider .ui-slider-handle, .widget-hslider .noUi-handle").first


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_in_jupyterlab(lab, chapter, browser):
    url, root = lab
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    t0 = time.perf_counter()
    folder = "ko/chapters" if chapter.startswith("ko/") else "chapters"
    korean, chapter = chapter.startswith("ko/"), chapter.split("/")[-1]
    page.goto(f"{url}/lab/tree/{folder}?reset&token={TOKEN}", wait_until="load")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands.hasCommand('notebook:run-all-cells')",
                           timeout=120_000)
    # as a reader does: a double click on the chapter in the file browser opens it as a notebook
    item = page.locator(".jp-DirListing-item", has_text=f"{chapter}.md")
    item.wait_for(timeout=60_000)
    item.dblclick()
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget; "
                           "return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel "
                           "&& w.sessionContext.session.kernel.status === 'idle'; }", timeout=120_000)
    TIMES[f"{chapter}: rendered (s)"] = time.perf_counter() - t0
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_timeout(2000)
    deadline = time.time() + 240
    while page.evaluate(_BUSY) and time.time() < deadline:
        page.wait_for_timeout(500)
    page.wait_for_timeout(1500)
    TIMES[f"{chapter}: open + run all (s)"] = time.perf_counter() - t0
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"lab-{chapter}.png"))
    assert not page.evaluate(_BUSY), f"{chapter}: cells still running after 240 s"

    errors = page.evaluate(_ERRORS)
    assert not errors, f"{chapter}: error output in JupyterLab:\n" + "\n---\n".join(errors)

    # jupyterlab-myst renders each markdown cell; a cell is rendered lazily, so bring each into view
    texts = page.evaluate(_MARKDOWN)
    raw = [m.group(0) + " in: " + t[max(0, m.start() - 40):m.end() + 40].replace("\n", " ")
           for t in texts for m in [RAW_ROLE.search(t)] if m]
    assert texts, f"{chapter}: no rendered markdown found"
    assert not raw, f"{chapter}: raw MyST in rendered markdown:\n" + "\n".join(raw[:10])

    assert page.evaluate(_HIDDEN)["collapsed"] > 0, f"{chapter}: no hidden cell is collapsed"

    clipped = page.evaluate(_READOUTS)
    assert not clipped, f"{chapter}: clipped widget readouts: {clipped}"

    n = page.evaluate(_WIDGETS)
    assert n > 0, f"{chapter}: no live widget with a figure"
    if korean:  # the Korean chapter's kernel draws in Korean (JPY_SESSION_NAME names a ko/ page)
        plots = page.evaluate("() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                              ".js-plotly-plot')).map(g => JSON.stringify(g.layout || {}))")
        assert plots and sum(bool(re.search("[\uac00-\ud7a3]", p)) for p in plots) >= 0.8 * len(plots), \
            f"ko/{chapter}: figures not in Korean in JupyterLab"
    for i in range(n):
        before = page.evaluate(_PLOT_OF, i)
        t1 = time.perf_counter()
        how = page.evaluate(_MOVE, i)
        if how is None:
            handle = _slider_handle(page, i)
            handle.scroll_into_view_if_needed()
            handle.focus()
            page.keyboard.press("ArrowRight")
            how = "slider"
        page.wait_for_function("([i, b]) => (" + _PLOT_OF + ")(i) !== b", arg=[i, before], timeout=20_000)
        TIMES.setdefault(f"{chapter}: control -> figure (s)", 0.0)
        TIMES[f"{chapter}: control -> figure (s)"] = max(TIMES[f"{chapter}: control -> figure (s)"],
                                                          time.perf_counter() - t1)
    page.screenshot(path=str(SHOTS / f"lab-{chapter}-moved.png"))
    ctx.close()
    print(json.dumps(TIMES, indent=1))
