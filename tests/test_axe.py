"""axe-core (WCAG 2.1 A and AA) over every page of the built site, at 1280 and 390 px, light and dark.

axe-core's own script comes with the ``axe-playwright-python`` package (the test extra of
pyproject.toml, pinned in requirements/lock.txt), which ships ``axe.min.js``; the test injects it into
each page and fails on any violation of impact *critical* or *serious*.

* Every page is opened at both widths (one browser context each; their axe runs go side by side, one
  renderer process each), with the system colour scheme light: all WCAG 2.1 A/AA rules run, plus
  ``label-content-name-mismatch`` (WCAG 2.5.3, which axe counts as experimental and leaves out by
  default), ``color-contrast`` and ``link-in-text-block``, in one axe run.
* Then the same page is switched to ``prefers-color-scheme: dark``: the site is light-only on purpose
  (_config.yml, book/_static/labsim.css), so every element must keep the colours it had in light mode
  (compared element by element); then light's contrast results hold for dark too. Only where some
  colour changed do the colour checks run again in dark (and report there). Colours do not depend on
  the width, so the dark comparison runs at desktop width. The Korean edition's pages (``ko/``) run the
  light pass at desktop width: their markup, style sheets and scripts are the English pages'.
* Syntax-highlighted code is left out of axe's contrast rule, which takes most of its time on the
  thousands of token spans; instead every distinct (token colour, code background) pair on the page is
  measured with the WCAG formula and must reach 4.5:1.
* The inside of Plotly's SVGs is left out: axe cannot read text drawn there (the figures' sizes and
  overlaps are checked by tests/test_browser.py); the figure's ``role="img"`` element and its name are
  still checked.

The meta-tests at the end prove the checker can fail: an image without a name, a sideways scroller that
the keyboard cannot reach, and text that loses its contrast only in dark mode.
"""
from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

from conftest import built_pages, missing, serve_directory

pytestmark = [pytest.mark.book, pytest.mark.browser]

PAGES = built_pages()
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
FAILING_IMPACTS = ("critical", "serious")
#: Rules whose result can change with the colour scheme: run again with the system set to dark.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
#: axe cannot see into Plotly's drawing; tests/test_browser.py measures its text instead.
EXCLUDE = [[".labsim-plot .svg-container"]]
#: for the contrast rules: code tokens are measured by _CODE_CONTRAST instead
EXCLUDE_CONTRAST = EXCLUDE + [[".highlight"]]
MIN_CONTRAST = 4.5

# The colour rules leave syntax-highlighted code to _CODE_CONTRAST; a rule's own selector does it, so
# that one axe run holds every rule (each run pays for axe's walk over the page once).
_RUN_AXE = """async ([tags, rules, exclude, impacts]) => {
  axe.configure({rules: [
    {id: "color-contrast", selector: "*:not(.highlight *)"},
    {id: "link-in-text-block", selector: "a[href]:not(.highlight *), [role=link]:not(.highlight *)"}]});
  const options = rules
    ? {runOnly: {type: "rule", values: rules}, resultTypes: ["violations"]}
    : {runOnly: {type: "tag", values: tags},
       rules: {"label-content-name-mismatch": {enabled: true}, "color-contrast": {enabled: true},
               "link-in-text-block": {enabled: true}},
       resultTypes: ["violations"]};
  const r = await axe.run({exclude: exclude}, options);
  return r.violations.filter(v => impacts.includes(v.impact)).map(v =>
    `${v.impact} ${v.id} (${v.nodes.length} node${v.nodes.length === 1 ? "" : "s"}): ` +
    v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | "));
}"""

_COLOURS = """() => Array.from(document.querySelectorAll("body *"), (el) => {
  const c = getComputedStyle(el);
  return c.color + "/" + c.backgroundColor + "/" + c.borderTopColor;
})"""

_CODE_CONTRAST = """(minRatio) => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((acc, v, i) => acc + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.99)) { return c.slice(0, 3); }
    }
    return [255, 255, 255];
  };
  const bad = new Set();
  document.querySelectorAll(".highlight pre").forEach((pre) => {
    const bg = background(pre);
    pre.querySelectorAll("span").forEach((sp) => {
      if (!sp.textContent.trim() || sp.children.length) { return; }
      const fg = rgb(getComputedStyle(sp).color).slice(0, 3);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < minRatio) { bad.add(`code token .${sp.className} rgb(${fg}) on rgb(${bg}): ${ratio.toFixed(2)}:1`); }
    });
  });
  return [...bad];
}"""

_SETTLED = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  if (document.fonts && document.fonts.ready) { await document.fonts.ready; }
}"""


def axe_script() -> str:
    """axe-core's script, from the installed axe-playwright-python package."""
    try:
        src = importlib.resources.files("axe_playwright_python").joinpath("axe.min.js")
    except ModuleNotFoundError:
        missing("the axe-playwright-python package is not installed: run `make test` (test extra)")
    text = src.read_text(encoding="utf-8")
    assert text.lstrip().startswith("/*! axe v4"), "axe.min.js should be axe-core 4.x"
    return text


@pytest.fixture(scope="module")
def axe_js() -> str:
    return axe_script()


def _start(pg, rules, exclude) -> None:
    """Start an axe run in the page and return at once: the pages of both widths run side by side (one
    renderer process each, so two cores share the work)."""
    pg.evaluate("(a) => { window.__labsimAxe = (" + _RUN_AXE + ")(a); }", [TAGS, rules, exclude, list(FAILING_IMPACTS)])


def _result(pg) -> list[str]:
    return pg.evaluate("() => window.__labsimAxe")


def axe_views(browser, base_url: str, pages: list[str], *, viewports: dict[str, dict],
              axe_js: str, dark: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """Run axe on each page at each width (light: every rule; dark, at the widths in ``dark`` (all by
    default): the colours compared to light's, and where they differ the colour rules again) and return
    the failures by view ("page width scheme")."""
    found: dict[str, list[str]] = {}
    contexts = []
    try:
        tabs = {}
        for name, viewport in viewports.items():
            ctx = browser.new_context(viewport=viewport, service_workers="block")
            contexts.append(ctx)
            ctx.add_init_script(script=axe_js)
            # offline, as the site must be: anything not on the test server is refused
            ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base_url) else r.abort())
            tabs[name] = ctx.new_page()
        for page in pages:
            light = {}
            for name, pg in tabs.items():
                pg.emulate_media(color_scheme="light")
                pg.goto(base_url + page, wait_until="load")
                pg.wait_for_function("document.readyState === 'complete' && typeof axe !== 'undefined'")
                pg.evaluate(_SETTLED)
            for name, pg in tabs.items():
                light[name] = pg.evaluate(_COLOURS)
                _start(pg, None, EXCLUDE)
            for name, pg in tabs.items():
                found[f"{page} {name} light"] = _result(pg) + pg.evaluate(_CODE_CONTRAST, MIN_CONTRAST)
                if dark is None or name in dark:
                    pg.emulate_media(color_scheme="dark")
            again = []
            for name, pg in tabs.items():
                if dark is not None and name not in dark:
                    continue
                dark_colours = pg.evaluate(_COLOURS)
                changed = (sum(a != b for a, b in zip(light[name], dark_colours))
                           + abs(len(light[name]) - len(dark_colours)))
                found[f"{page} {name} dark"] = (
                    [f"{changed} elements change colour when the system is dark"] if changed else [])
                if changed:  # light's contrast results do not hold here: measure dark's own
                    found[f"{page} {name} dark"] += pg.evaluate(_CODE_CONTRAST, MIN_CONTRAST)
                    _start(pg, COLOUR_RULES, EXCLUDE_CONTRAST)
                    again.append(name)
            for name in again:
                found[f"{page} {name} dark"] += _result(tabs[name])
    finally:
        for ctx in contexts:
            ctx.close()
    return found


#: the pages in four groups, each one test (make test's two workers share them); the Korean edition's
#: pages (ko/) are checked at desktop width: their markup, styles and scripts are the English pages',
#: checked at both widths, and only their words differ
ENGLISH = [p for p in PAGES if not p.startswith("ko/")]
KOREAN = [p for p in PAGES if p.startswith("ko/")]
GROUPS = {"en-1": ENGLISH[::2], "en-2": ENGLISH[1::2], "ko-1": KOREAN[::2], "ko-2": KOREAN[1::2]}


def test_there_are_pages_in_both_editions():
    assert ENGLISH and "book/intro.html" in ENGLISH
    assert KOREAN and len(KOREAN) == len(ENGLISH), "every English page has its Korean edition"


@pytest.mark.parametrize("group", list(GROUPS))
def test_axe_finds_no_critical_or_serious_violation(group, browser, site_url, axe_js):
    pages = GROUPS[group]
    assert pages, "no pages found in the built site"
    # a colour is the same at every width: the dark scheme is compared at desktop width, in English (the
    # Korean pages share the English pages' style sheets)
    views = VIEWPORTS if group.startswith("en") else {"desktop": VIEWPORTS["desktop"]}
    dark = ("desktop",) if group.startswith("en") else ()
    found = axe_views(browser, site_url, pages, viewports=views, axe_js=axe_js, dark=dark)
    assert len(found) == (len(views) + len(dark)) * len(pages)
    bad = {view: v for view, v in found.items() if v}
    assert not bad, f"axe-core: {len(bad)} of {len(found)} views fail:\n" + "\n".join(
        f"  {view}: " + "; ".join(v) for view, v in bad.items())


def test_axe_script_is_shipped_and_pinned():
    """The package that brings axe-core is a pinned test dependency, and it ships the script."""
    root = Path(__file__).resolve().parent.parent
    assert "axe-playwright-python" in (root / "pyproject.toml").read_text(encoding="utf-8")
    assert "axe-playwright-python==" in (root / "requirements" / "lock.txt").read_text(encoding="utf-8")
    assert len(axe_script()) > 100_000


def test_labsim_table_scroller_is_a_named_keyboard_region():
    """labsim's tables scroll sideways inside a region the keyboard reaches, named by the caption."""
    from labsim.support.tables import html_table

    h = html_table([{"chip": "A", "TFLOP/s": 1.5}], caption="Two chips")
    assert 'class="labsim-scroll" tabindex="0" role="region" aria-label="Table: Two chips"' in h
    assert 'aria-label="Table"' in html_table([{"chip": "A", "TFLOP/s": 1.5}])


# ---- the checker itself can fail -------------------------------------------------------------------

_BAD = """<div class="bd-article" id="axe-meta">
<img src="nowhere.png" style="width:10px;height:10px">
<div id="axe-scroller" style="overflow-x:auto;width:120px"><div style="width:900px">a wide line of text</div></div>
<style>@media (prefers-color-scheme: dark) { #axe-dark-only { color: #d9d9d9 !important; } }</style>
<p id="axe-dark-only" style="color:#222;background:#fff">Readable in light mode only.</p>
<p id="axe-pale-text" style="color:#c8c8c8;background:#fff">Pale in both modes.</p>
<div class="highlight"><pre><span class="axe-pale">pale_token</span> = <span class="n">x</span></pre></div>
<style>.axe-pale { color: #c8c8c8 !important; }</style>
</div>"""


def test_checker_reports_violations_in_light_and_dark(site, browser, tmp_path, axe_js):
    page = "book/intro.html"
    html = (site / page).read_text(encoding="utf-8")
    target = tmp_path / page
    target.parent.mkdir(parents=True)
    target.write_text(html.replace("</body>", _BAD + "\n</body>", 1), encoding="utf-8")
    (tmp_path / "_static").symlink_to(site / "_static", target_is_directory=True)
    with serve_directory(tmp_path) as url:
        found = axe_views(browser, url, [page], viewports={"desktop": VIEWPORTS["desktop"]}, axe_js=axe_js)
    light, dark = " ".join(found[f"{page} desktop light"]), " ".join(found[f"{page} desktop dark"])
    assert "critical image-alt" in light, found
    assert "serious scrollable-region-focusable" in light and "#axe-scroller" in light, found
    assert "serious color-contrast (1 node): #axe-pale-text" in light, found  # code tokens not counted
    assert "code token .axe-pale rgb(200,200,200)" in light, found
    assert "serious color-contrast" in dark and "#axe-dark-only" in dark, found
    assert "1 elements change colour when the system is dark" in dark, found
    assert "code token .axe-pale rgb(200,200,200)" in dark, found
