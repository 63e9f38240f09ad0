"""Every animation of the built website, driven by the keyboard alone in headless Chromium.

For each page with an animation (``div.labsim-anim``, :mod:`labsim.viz.animhtml`), at desktop width:

* the Play button is reached with Tab from the plot, and its controls sit outside the plot's
  ``role="img"``; each has an accessible name (button text, a ``<label>`` for the slider); the step text
  is ``aria-live="polite"``;
* Enter on Play plays (the step text changes), Space pauses (it stops changing), Tab + Enter on "Back"
  and "Next" step one back and one forward, Tab to the slider then Home, ArrowRight and End go to the
  first, second and last step; each change shows in the live step text ("cycle 12 (3 of 24)");
* no console error or uncaught exception while doing so (pausing used to reject Plotly's promise).

At phone width (390 px): the controls sit below the plot (not on its axis titles), inside the page, the
slider at least 120 px wide, and the step text wraps rather than being cut.

The meta-test at the end proves the checker fails on an animation whose controls do nothing. Set
``LABSIM_REQUIRE_BOOK=1`` to fail, not skip, without a built site or Chromium (as tests/test_browser.py).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import SITE, built_pages, missing, serve_directory

pytestmark = [pytest.mark.book, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _anim_pages() -> list[str]:
    return [p for p in built_pages() if 'class="labsim-anim"' in (SITE / p).read_text(encoding="utf-8")]


PAGES = _anim_pages()

_FRAMES_IN = """(root) => { const p = root.querySelector('.labsim-plot');
  return !!(p && p._transitionData && p._transitionData._frames && p._transitionData._frames.length); }"""

_STRUCTURE = """(root) => {
  const bad = [], q = (s) => root.querySelector(s);
  const parts = {play: q('.labsim-anim-play'), back: q('.labsim-anim-back'), next: q('.labsim-anim-next'),
                 slider: q('input[type=range].labsim-anim-step'), text: q('.labsim-anim-text')};
  for (const [k, el] of Object.entries(parts)) {
    if (!el) { bad.push('no ' + k + ' control'); continue; }
    if (el.closest('[role="img"]')) bad.push(k + ' is inside the plot\\'s role="img"');
  }
  if (parts.text && parts.text.getAttribute('aria-live') !== 'polite') bad.push('the step text is not aria-live="polite"');
  for (const k of ['play', 'back', 'next']) {
    if (parts[k] && parts[k].tagName !== 'BUTTON') bad.push(k + ' is not a <button>');
    if (parts[k] && !parts[k].textContent.trim()) bad.push(k + ' has no accessible name');
  }
  const lab = parts.slider && parts.slider.id && document.querySelector('label[for="' + parts.slider.id + '"]');
  if (parts.slider && !(lab && lab.textContent.trim())) bad.push('the step slider has no <label>');
  return bad;
}"""

_PHONE_LAYOUT = """(root) => {
  const bad = [], r = (e) => e.getBoundingClientRect();
  const svg = root.querySelector('.labsim-plot svg.main-svg'), row = root.querySelector('.labsim-anim');
  const slider = root.querySelector('.labsim-anim-step'), text = root.querySelector('.labsim-anim-text');
  if (svg && row && r(row).top < r(svg).bottom - 1) bad.push('the controls overlap the plot');
  if (row && r(row).right > window.innerWidth + 1) bad.push('the controls run off the page (' + Math.round(r(row).right) + ' px)');
  if (slider && r(slider).width < 120) bad.push('the step slider is ' + Math.round(r(slider).width) + ' px wide (< 120)');
  if (text && text.scrollWidth > text.clientWidth + 1) bad.push('the step text is cut');
  return bad;
}"""

_STEP = re.compile(r"\((\d+) (?:of|/) (\d+)\)\s*$")  # "(2 of 7)"; the Korean edition's "(2 / 7)"


def _where(text: str) -> tuple[int, int] | None:
    m = _STEP.search(text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def drive_animations(browser, base_url: str, page: str, *, viewport=DESKTOP, keyboard: bool = True,
                     then_phone: bool = False) -> list[str]:
    """Open the page and drive every animation as the module docstring says; the problems found.
    ``then_phone``: afterwards narrow the same page to phone width and check the layout there (one load)."""
    problems: list[str] = []
    ctx = browser.new_context(viewport=viewport, service_workers="block", reduced_motion="no-preference")
    try:
        pg = ctx.new_page()
        # a failed load is reported by its response (the console's echo does not name the URL); the
        # browser's own favicon guess is not the page's
        pg.on("console", lambda m: m.type == "error" and not m.text.startswith("Failed to load resource")
              and problems.append(f"console error: {m.text}"))
        pg.on("response", lambda r: r.status >= 400 and not r.url.endswith("/favicon.ico")
              and problems.append(f"HTTP {r.status}: {r.url}"))
        pg.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
        pg.goto(base_url + page, wait_until="load")
        figs = pg.locator(".labsim-figure:has(.labsim-anim)")
        if figs.count() == 0:
            return [f"{page}: no animation"]
        for i in range(figs.count()):
            fig = figs.nth(i)
            name = f"{page} animation {i + 1} ({fig.get_attribute('id')})"
            h = fig.element_handle()
            try:
                pg.wait_for_function(_FRAMES_IN, arg=h, timeout=15_000)
            except Exception:  # noqa: BLE001
                problems.append(f"{name}: its frames never loaded")
                continue
            if not keyboard:
                problems += [f"{name} at {viewport['width']} px: {p}" for p in h.evaluate(_PHONE_LAYOUT)]
                continue
            problems += [f"{name}: {p}" for p in h.evaluate(_STRUCTURE)]
            ms = h.evaluate("(r) => JSON.parse(r.querySelector('script.labsim-data').textContent).anim.ms")
            text = lambda: fig.locator(".labsim-anim-text").text_content() or ""
            focused = lambda: pg.evaluate("() => document.activeElement && document.activeElement.className || ''")
            fig.locator(".labsim-plot").evaluate("(p) => { p.tabIndex = -1; p.focus(); }")
            pg.keyboard.press("Tab")
            if "labsim-anim-play" not in focused():
                problems.append(f"{name}: Tab from the plot reaches {focused()!r}, not the Play button")
                fig.locator(".labsim-anim-play").focus()
            before = text()
            pg.keyboard.press("Enter")
            try:
                pg.wait_for_function("([r, t]) => r.querySelector('.labsim-anim-text').textContent !== t",
                                     arg=[h, before], timeout=4 * ms + 1000)
            except Exception:  # noqa: BLE001
                problems.append(f"{name}: Enter on Play did not change the step text ({before!r})")
            pg.keyboard.press("Space")  # pause
            paused = text()
            pg.wait_for_timeout(int(1.6 * ms))
            if text() != paused:
                problems.append(f"{name}: Space on Pause did not stop it ({paused!r} became {text()!r})")
            at = _where(paused)
            if at is None:
                problems.append(f"{name}: the step text {paused!r} does not say which step of how many")
                continue
            pg.keyboard.press("Tab")  # Back
            pg.keyboard.press("Enter")
            want = max(at[0] - 1, 1)
            if _where(text()) != (want, at[1]):
                problems.append(f"{name}: Back from step {at[0]} shows {text()!r}, not step {want}")
            pg.keyboard.press("Tab")  # Next
            pg.keyboard.press("Enter")
            if _where(text()) != (min(want + 1, at[1]), at[1]):
                problems.append(f"{name}: Next from step {want} shows {text()!r}")
            pg.keyboard.press("Tab")  # the step slider
            if "labsim-anim-step" not in focused():
                problems.append(f"{name}: Tab after Next reaches {focused()!r}, not the step slider")
                fig.locator(".labsim-anim-step").focus()
            for key, want in (("Home", 1), ("ArrowRight", 2), ("End", at[1])):
                pg.keyboard.press(key)
                if _where(text()) != (want, at[1]):
                    problems.append(f"{name}: {key} on the slider shows {text()!r}, not step {want} of {at[1]}")
            pg.wait_for_timeout(300)  # a transition in flight, interrupted, must not log an error either
        if then_phone and keyboard:
            pg.set_viewport_size(PHONE)
            pg.wait_for_timeout(600)  # Plotly redraws responsive figures on resize
            for i in range(figs.count()):
                problems += [f"{page} animation {i + 1} at {PHONE['width']} px: {p}"
                             for p in figs.nth(i).element_handle().evaluate(_PHONE_LAYOUT)]
    finally:
        ctx.close()
    return problems


@pytest.fixture(scope="module")
def anim_site_url():
    if not (SITE / "index.html").is_file():
        missing(f"the book is not built ({SITE}/index.html is missing): run `make book`")
    with serve_directory(SITE) as url:
        yield url


@pytest.mark.parametrize("page", PAGES or ["(no built page with an animation)"])
def test_animations_by_keyboard_and_on_a_phone(page, browser, anim_site_url):
    if not PAGES:
        missing("no built page has an animation (make book)")
    problems = drive_animations(browser, anim_site_url, page, then_phone=True)
    assert not problems, "\n  ".join(problems)


def _page(tmp_path: Path, monkeypatch, *, working: bool) -> str:
    """A page with one labsim animation (the site's script, or with its animation script removed)."""
    import plotly
    import plotly.graph_objects as go

    import labsim.viz as viz

    monkeypatch.setenv("LABSIM_BOOK", "1")
    a = viz.animate(lambda: [go.Figure(go.Bar(x=[0, 1], y=[t, 5 - t])) for t in range(5)], alt="bars",
                    caption="Two bars trading places", step_label="cycle", frame_ms=200)
    html = a.to_html()
    if not working:  # the controls are drawn but nothing answers them
        html = re.sub(r'<script>\s*\(function \(\) \{\s*var root[^<]*?data\.anim.*?</script>', "", html, count=1,
                      flags=re.S)
        assert "data.anim" not in html
    shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", tmp_path / "plotly.min.js")
    (tmp_path / "anim.html").write_text('<!doctype html><html><head><meta charset="utf-8">'
                                        '<script src="plotly.min.js"></script></head><body>'
                                        + html + "</body></html>", encoding="utf-8")
    return "anim.html"


def test_checker_passes_a_working_animation_and_fails_a_dead_one(browser, tmp_path, monkeypatch):
    page = _page(tmp_path, monkeypatch, working=True)
    with serve_directory(tmp_path) as url:
        assert drive_animations(browser, url, page, then_phone=True) == []
        assert drive_animations(browser, url, page, viewport=PHONE, keyboard=False) == []
    page = _page(tmp_path, monkeypatch, working=False)
    with serve_directory(tmp_path) as url:
        got = drive_animations(browser, url, page)
    assert any("Enter on Play did not change the step text" in p for p in got), got
    assert any("End on the slider shows 'cycle: 0 (1 of 5)', not step 5 of 5" in p for p in got), got
