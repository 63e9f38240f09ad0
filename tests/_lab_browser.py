"""What the JupyterLab browser tests share: a Lab server started as ``make lab`` starts it
(``book/_ext/labsim_lab.py``), rooted at a copy of the chapters, and the page scripts that open a
chapter, run all its cells and read what the page shows.

Used by tests/test_lab_save.py, tests/test_lab_widgets.py and benchmarks/bench_lab_widgets.py.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))


def missing_lab() -> str | None:
    """Why JupyterLab cannot be driven here (a sentence), or None where it can."""
    for mod, why in (("playwright", "the playwright Python package is not installed"),
                     ("jupyterlab", "JupyterLab is not installed (make lab installs it)"),
                     ("jupyterlab_myst", "jupyterlab-myst is not installed (make lab installs it)")):
        if importlib.util.find_spec(mod) is None:
            return why
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_chapters(root: Path) -> None:
    """The chapters and the book's pages, as ``make lab`` sees them, under ``root``."""
    shutil.copy(ROOT / "jupytext.toml", root / "jupytext.toml")
    shutil.copytree(ROOT / "chapters", root / "chapters")
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_static", "_ext"))
    if (ROOT / "ko").is_dir():  # the Korean edition (make lab EDITION=ko), with its own jupytext.toml
        shutil.copytree(ROOT / "ko", root / "ko")


def _widget_data_path(env: dict) -> None:
    """Where anywidget (labsim's live plot widget needs it) is installed outside the interpreter's prefix
    (``pip install --target``), its Lab extension lies beside it: tell Lab through JUPYTER_PATH."""
    spec = importlib.util.find_spec("anywidget")
    if spec is None or not spec.origin:
        return
    share = Path(spec.origin).parents[1] / "share" / "jupyter"
    if (share / "labextensions" / "anywidget").is_dir():
        env["JUPYTER_PATH"] = os.pathsep.join([str(share), *filter(None, [env.get("JUPYTER_PATH")])])


@contextlib.contextmanager
def lab_server(root: Path, token: str, extra: list[str] = ()) -> Iterator[str]:
    """JupyterLab serving ``root`` on a free port; yields its URL. The kernel imports this checkout's labsim."""
    import labsim_lab

    labsim_lab.write_overrides()
    port = free_port()
    cmd, env = labsim_lab.command(root, port, ["--no-browser", f"--IdentityProvider.token={token}",
                                               f"--LabApp.workspaces_dir={root / '.ws'}",
                                               "--LabApp.expose_app_in_browser=True",
                                               "--ServerApp.shutdown_no_activity_timeout=900", *extra])
    env["LABSIM_BOOK"] = ""
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(ROOT)])  # the chapters import labsim
    _widget_data_path(env)
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
            if proc.poll() is not None:
                raise RuntimeError("JupyterLab exited:\n" + (root / "server.log").read_text()[-3000:])
        else:
            raise RuntimeError("JupyterLab did not start in 120 s:\n" + (root / "server.log").read_text()[-3000:])
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def open_lab(browser, url: str, token: str):
    """A page with JupyterLab loaded (a fresh workspace)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.goto(f"{url}/lab?reset&token={token}", wait_until="load")
    pg.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands.hasCommand('notebook:run-all-cells')",
                         timeout=120_000)
    return ctx, pg


CURRENT = "window.__labsimNotebook"  # the tab docmanager:open returned
IDLE = (f"() => {{ const w = {CURRENT}; return w && w.context && w.context.isReady && w.sessionContext "
        "&& w.sessionContext.session && w.sessionContext.session.kernel "
        "&& w.sessionContext.session.kernel.status === 'idle'; }")
BUSY = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-InputPrompt'))
  .some(p => p.textContent.includes('*'))"""
ERRORS = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-OutputArea-output'))
  .filter(o => (o.getAttribute('data-mime-type') || '').includes('error')).map(o => o.innerText.slice(0, 400))"""


def open_chapter(page, rel: str) -> None:
    """Open ``rel`` (a chapter's .md) as a notebook, as a double click in the file browser does; wait
    for its kernel."""
    page.evaluate("async (p) => { window.__labsimNotebook = await window.jupyterapp.commands.execute("
                  "'docmanager:open', {path: p, factory: 'Jupytext Notebook'}); "
                  "window.jupyterapp.shell.activateById(window.__labsimNotebook.id); }", rel)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)


def run_all(page, limit_s: float = 300) -> bool:
    """Run All, then wait until no cell runs (at most ``limit_s``); True if all finished."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_timeout(2000)
    deadline = time.time() + limit_s
    while page.evaluate(BUSY) and time.time() < deadline:
        page.wait_for_timeout(500)
    if page.evaluate(BUSY):
        return False
    page.wait_for_function(IDLE, timeout=60_000)
    return True


def close_chapter(page) -> None:
    page.evaluate(f"async () => {{ const w = {CURRENT}; await w.sessionContext.shutdown(); w.dispose(); }}")
