"""The site's navigation and colour scheme in headless Chromium, at 1280 and 390 px.

* The visible "site navigation" button (the hamburger of the article header) opens and closes the
  table of contents: on a phone a drawer (the theme's ``<dialog>``), closed by Escape; on a wide screen
  the sidebar, hidden and shown again. On a phone the "Contents of this page" button opens the page's
  contents the same way. (sphinx-book-theme 1.3 binds its handlers to the first copy of each button, the
  hidden one in the page header; book/_static/labsim.js forwards the visible copies' clicks to it.)
* The site is light-only on purpose (_config.yml ``default_mode: light``; labsim.css hides the theme's
  switcher): with the system set to dark the page stays light, whatever mode a reader once stored.
  tests/test_axe.py checks the contrast of every page in that setting.

A meta-test proves the navigation check can fail: the same page without labsim.js.
"""
from __future__ import annotations

import pytest

from conftest import serve_directory

pytestmark = [pytest.mark.book, pytest.mark.browser]

VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
PAGE = "chapters/03_roofline.html"

_STATE = """() => {
  const side = document.getElementById("pst-primary-sidebar");
  const shown = (el) => { const r = el.getBoundingClientRect();
    return getComputedStyle(el).visibility !== "hidden" && r.width > 50 && r.right > 10 && r.left < innerWidth - 10; };
  return {
    drawer: document.getElementById("pst-primary-sidebar-modal").open,
    contents: document.getElementById("pst-secondary-sidebar-modal").open,
    sidebar: !!side && side.childElementCount > 0 && shown(side),
  };
}"""


def navigation_problems(browser, base_url: str, page: str, *, viewport: dict) -> list[str]:
    """Click the visible navigation buttons of ``page`` and report what does not open or close."""
    problems: list[str] = []
    ctx = browser.new_context(viewport=viewport, service_workers="block")
    try:
        pg = ctx.new_page()
        pg.goto(base_url + page, wait_until="load")
        pg.wait_for_function("document.readyState === 'complete'")
        pg.wait_for_timeout(300)
        toggle = pg.locator(".primary-toggle:visible")
        if toggle.count() != 1:
            return [f"{toggle.count()} visible site-navigation buttons, expected 1"]
        before = pg.evaluate(_STATE)
        wide = viewport["width"] >= 992
        if before["drawer"] or before["contents"]:
            problems.append(f"a drawer is open before any click: {before}")
        if wide and not before["sidebar"]:
            problems.append("on a wide screen the site navigation should show at first")
        toggle.click()
        pg.wait_for_timeout(300)
        opened = pg.evaluate(_STATE)
        if wide and opened["sidebar"]:
            problems.append("the site-navigation button did not hide the sidebar")
        if not wide and not (opened["drawer"] and pg.locator("#pst-primary-sidebar-modal .bd-links a").count()):
            problems.append("the site-navigation button did not open the drawer with the chapters")
        if wide:
            toggle.click()
        else:
            pg.keyboard.press("Escape")
        pg.wait_for_timeout(300)
        closed = pg.evaluate(_STATE)
        if closed["drawer"] or (wide and not closed["sidebar"]):
            problems.append(f"the site navigation did not close again: {closed}")
        contents = pg.locator(".secondary-toggle:visible")
        if not wide:
            if contents.count() != 1:
                return problems + [f"{contents.count()} visible page-contents buttons, expected 1"]
            contents.click()
            pg.wait_for_timeout(300)
            if not (pg.evaluate(_STATE)["contents"] and pg.locator("#pst-secondary-sidebar-modal a").count()):
                problems.append("the page-contents button did not open the page's contents")
            pg.keyboard.press("Escape")
            pg.wait_for_timeout(300)
            if pg.evaluate(_STATE)["contents"]:
                problems.append("the page's contents did not close on Escape")
    finally:
        ctx.close()
    return problems


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_navigation_opens_and_closes(device, browser, site_url):
    problems = navigation_problems(browser, site_url, PAGE, viewport=VIEWPORTS[device])
    assert not problems, f"{PAGE} at {device} width:\n  " + "\n  ".join(problems)


def test_site_stays_light_when_the_system_is_dark(browser, site_url):
    ctx = browser.new_context(viewport=VIEWPORTS["phone"], color_scheme="dark", service_workers="block")
    try:
        pg = ctx.new_page()
        # a reader who once chose dark mode on a site of this theme
        pg.add_init_script("try { localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark'); } catch (e) {}")
        pg.goto(site_url + PAGE, wait_until="load")
        pg.wait_for_function("document.readyState === 'complete'")
        pg.wait_for_timeout(300)
        assert pg.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
        assert pg.evaluate("document.documentElement.dataset.theme") == "light"
        assert pg.evaluate("document.body.dataset.defaultMode") == "light", "_config.yml: default_mode: light"
        assert pg.locator(".theme-switch-button:visible").count() == 0
        # the page background and a caption's text stay the light design's
        bg = pg.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), bg
    finally:
        ctx.close()


def test_checker_reports_dead_navigation(site, browser, tmp_path):
    """Without labsim.js the visible buttons are the theme's dead copies: the check must say so."""
    html = (site / PAGE).read_text(encoding="utf-8")
    assert "_static/labsim.js" in html
    target = tmp_path / PAGE
    target.parent.mkdir(parents=True)
    target.write_text(html.replace("_static/labsim.js", "_static/no-such-script.js"), encoding="utf-8")
    (tmp_path / "_static").symlink_to(site / "_static", target_is_directory=True)
    with serve_directory(tmp_path) as url:
        wide = navigation_problems(browser, url, PAGE, viewport=VIEWPORTS["desktop"])
        phone = navigation_problems(browser, url, PAGE, viewport=VIEWPORTS["phone"])
    assert "the site-navigation button did not hide the sidebar" in wide, wide
    assert "the site-navigation button did not open the drawer with the chapters" in phone, phone
    assert "the page-contents button did not open the page's contents" in phone, phone
