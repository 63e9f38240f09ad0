"""Shared fixtures: the repository layout, the built site, a local web server, headless Chromium.

Book and browser tests need the site built by ``make book`` in ``_build/html``. Without it they are
skipped with a reason, unless ``LABSIM_REQUIRE_BOOK=1`` (set by ``make test`` and CI): then they fail.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, settings

# The Hypothesis profiles of the suite ("labsim", the default; "fuzz" for make fuzz): tests set only
# ``max_examples`` (their budget). Tracing and compiling a random program takes milliseconds to a second on a loaded 2-core machine, so no deadline.
settings.register_profile("labsim", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
# ``make fuzz``: the long fuzzer run; failures are not saved to (or replayed from) the local database, so a
# run explores fresh programs, and each failure is printed with its reproduction blob.
settings.register_profile("fuzz", parent=settings.get_profile("labsim"), database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "labsim"))

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
REQUIRE_BOOK = os.environ.get("LABSIM_REQUIRE_BOOK", "") not in ("", "0")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing(reason: str) -> None:
    """Skip the test, or fail it when the book is required (make test, CI)."""
    if REQUIRE_BOOK:
        pytest.fail(f"{reason} (LABSIM_REQUIRE_BOOK=1, so this is a failure)", pytrace=False)
    pytest.skip(reason)


def built_pages(site: Path = SITE) -> list[str]:
    """Every HTML page of the built site, relative to it (theme fragments under _static excluded)."""
    if not (site / "index.html").is_file():
        return []
    pages = []
    for p in sorted(site.rglob("*.html")):
        rel = p.relative_to(site).as_posix()
        if rel.startswith(("_static/", "_sources/", "_images/", "ko/_static/", "ko/_sources/", "ko/_images/")):
            continue
        pages.append(rel)
    return pages


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature from the stdlib
        pass


@contextlib.contextmanager
def serve_directory(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 at a free port from a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        missing(f"the book is not built ({SITE}/index.html is missing): run `make book`")
    return SITE


@pytest.fixture(scope="session")
def site_url(site: Path) -> Iterator[str]:
    with serve_directory(site) as url:
        yield url


def chromium_path() -> str | None:
    env = os.environ.get("LABSIM_CHROMIUM")
    for cand in (env, "/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright Python package is not installed: run `make test`")
    exe = chromium_path()
    if exe is None:
        missing("no Chromium at /usr/bin/chromium (or $LABSIM_CHROMIUM): `apt-get install chromium`")
    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


# ---- notebook execution times, printed at the end of the run (filled by test_chapters.py) ----
NOTEBOOK_TIMES: dict[str, float] = {}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not NOTEBOOK_TIMES:
        return
    terminalreporter.section("notebook execution times (fresh kernel, or the book build's cached run)")
    for name, secs in sorted(NOTEBOOK_TIMES.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{secs:7.1f} s  {name}")


# ---- two workers (make test: pytest -n 2 --dist loadgroup, pytest-xdist) ----
#: test files that share one worker, one after another: the JupyterLab tests (one Lab server at a time)
#: and the tests that run a Jupyter Book build of their own
XDIST_GROUPS = {"test_lab.py": "lab", "test_lab_save.py": "lab", "test_lab_widgets.py": "lab",
                "test_roundtrip.py": "jb", "test_student.py": "jb"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        group = XDIST_GROUPS.get(Path(str(item.fspath)).name)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
