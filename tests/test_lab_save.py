"""JupyterLab's real save leaves a chapter as it was, in headless Chromium.

The server starts as ``make lab`` starts it (``book/_ext/labsim_lab.py``), rooted at a git checkout of
the chapters in a temporary directory, with Lab's autosave every few seconds. For each chapter the test
opens the ``.md`` as a reader does, runs all cells, waits past several autosaves, saves (Ctrl+S's
command), and asserts that ``git diff`` of ``chapters/`` is empty: the kernel's spec that Lab writes
into the notebook ("Python 3 (ipykernel)"), the values jupyterlab-myst computes in markdown cells
(``user_expressions``), the translations made for Lab (computed values, ``{term}``/``{cite}``/``{ref}``
links, collapsed cells, split solution cells) never reach the file. A real edit to one cell changes that
cell's line and nothing else. It also checks what the reader sees: citations, glossary terms and
references as words, not keys; a solution with code collapsed as a whole when the chapter opens; and,
opened again (the first chapter), the values computed last time in place of their code before Run All.

By default four chapters (those of issue 24: 7, 9, 11, 13) run; ``LABSIM_LAB_CHAPTERS=all`` runs all
fourteen (slower: about a minute a chapter on a loaded 2-core machine), or give a comma-separated list.
"""
from __future__ import annotations

import difflib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("playwright")
pytest.importorskip("jupyterlab")
if importlib.util.find_spec("jupyterlab_myst") is None:
    pytest.skip("jupyterlab-myst is not installed (make lab installs it)", allow_module_level=True)
if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_lab  # noqa: E402,F401
from _lab_browser import BUSY, CURRENT, ERRORS, IDLE, copy_chapters, lab_server  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ALL = sorted(p.stem for p in (ROOT / "chapters").glob("[0-9]*.md"))
_WANT = os.environ.get("LABSIM_LAB_CHAPTERS", "")
CHAPTERS = ALL if _WANT == "all" else [c for c in ALL if c[:2] in (_WANT.split(",") if _WANT else
                                                                 ["07", "09", "11", "13"])]
TOKEN = "labsim-save-test"
AUTOSAVE_S = 2
TIMES: dict[str, float] = {}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("labsave")
    copy_chapters(root)
    (root / ".gitignore").write_text("_notebooks/\n.ipynb_checkpoints/\n.ws/\n.settings/\nserver.log\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "chapters")
    # Lab's own autosave, every few seconds (its default is 120 s), through the user settings of this run
    settings = root / ".settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": True,
                                                                     "autosaveInterval": AUTOSAVE_S}))
    try:
        # tests/_lab_browser.py: JupyterLab as `make lab` starts it, with this run's user settings
        with lab_server(root, TOKEN, [f"--LabApp.user_settings_dir={root / '.settings'}"]) as url:
            yield url, root
    finally:
        print(json.dumps(TIMES, indent=1))


@pytest.fixture(scope="module")
def page(lab, browser):
    url, _ = lab
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.goto(f"{url}/lab?reset&token={TOKEN}", wait_until="load")
    pg.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands.hasCommand('notebook:run-all-cells')",
                         timeout=120_000)
    yield pg
    ctx.close()


# the page probes shared with the other JupyterLab tests (tests/_lab_browser.py)
_CURRENT, _IDLE, _BUSY, _ERRORS = CURRENT, IDLE, BUSY, ERRORS
_MARKDOWN = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .jp-RenderedMarkdown, .jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .myst'))
  .map(m => m.innerText).join('\\n')"""
# how many cells the page draws with their source collapsed
_COLLAPSED = f"() => {_CURRENT}.content.widgets.filter(c => c.inputHidden).length"


def _expected_collapsed(root: Path, rel: str) -> int:
    """How many cells the book's contents manager opens collapsed (hidden tags, solutions with code)."""
    nb = labsim_lab.SyncLabContentsManager(root_dir=str(root)).get(rel, content=True, type="notebook")["content"]
    return sum(1 for c in nb.cells if c.metadata.get("jupyter", {}).get("source_hidden"))


def _open(page, rel: str) -> None:
    page.evaluate("async (p) => { window.__labsimNotebook = await window.jupyterapp.commands.execute("
                  "'docmanager:open', {path: p, factory: 'Jupytext Notebook'}); "
                  "window.jupyterapp.shell.activateById(window.__labsimNotebook.id); }", rel)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function(_IDLE, timeout=120_000)


def _save_and_close(page) -> None:
    """Ctrl+S's command, then wait until Lab has the file as saved; close the tab and its kernel."""
    page.evaluate(f"() => {_CURRENT}.context.save()")  # what docmanager:save (Ctrl+S) calls
    page.wait_for_function(f"() => !{_CURRENT}.context.model.dirty", timeout=60_000)
    page.wait_for_timeout(500)
    page.evaluate(f"async () => {{ const w = {_CURRENT}; await w.sessionContext.shutdown(); w.dispose(); }}")


def _diff(root: Path) -> str:
    return _git(root, "diff", "--", "chapters")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_lab_save_and_autosave_keep_the_chapter(lab, page, chapter):
    url, root = lab
    rel = f"chapters/{chapter}.md"
    mtime = (root / rel).stat().st_mtime_ns
    t0 = time.perf_counter()
    _open(page, rel)
    # as opened: the cells the website hides, and every cell of a solution with code, collapsed
    expected = _expected_collapsed(root, rel)
    assert expected and page.evaluate(_COLLAPSED) == expected, \
        f"{chapter}: {expected} cells should open collapsed, the page draws {page.evaluate(_COLLAPSED)}"
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_timeout(2000)
    deadline = time.time() + 300
    while page.evaluate(_BUSY) and time.time() < deadline:
        page.wait_for_timeout(500)
    assert not page.evaluate(_BUSY), f"{chapter}: cells still running after 300 s"
    page.wait_for_function(_IDLE, timeout=60_000)  # the last markdown cells' inline values
    page.wait_for_timeout(2000)
    assert not page.evaluate(_ERRORS), f"{chapter}: error output in JupyterLab"
    TIMES[f"{chapter}: open + run all (s)"] = round(time.perf_counter() - t0, 1)

    # what the reader sees: words, not keys
    text = page.evaluate(_MARKDOWN)
    source = (ROOT / rel).read_text(encoding="utf-8")
    for key in ("austin2025scaling", "nvidia-cuda-guide", "kwon2023vllm", "ch-roofline", "ch-gpu", "ch-host-device"):
        if f"`{key}`" in source:
            assert key not in text, f"{chapter}: the raw key {key!r} shows in JupyterLab"
    if "{cite}`" in source:
        assert "et al., 20" in text or "Corporation, " in text, f"{chapter}: no citation renders as (Author, year)"
    assert "glue.text(" not in text, f"{chapter}: a computed value shows as code after Run All"

    # wait past autosaves (every AUTOSAVE_S seconds), then save as Ctrl+S does
    page.wait_for_timeout(3 * AUTOSAVE_S * 1000)  # Run All took far longer: Lab autosaved all along
    _save_and_close(page)
    TIMES[f"{chapter}: total (s)"] = round(time.perf_counter() - t0, 1)
    assert (root / rel).stat().st_mtime_ns != mtime, f"{chapter}: Lab never wrote the file (the test saves nothing)"
    assert (root / "_notebooks" / f"{chapter}.ipynb").is_file(), f"{chapter}: no paired notebook written"
    diff = _diff(root)
    assert not diff, f"saving {rel} in JupyterLab changed it:\n{diff[:4000]}"
    if chapter != CHAPTERS[0]:
        return
    # opened again, before Run All: the values computed last time (kept in the pair), not their code
    _open(page, rel)
    page.wait_for_timeout(2000)
    text = page.evaluate(_MARKDOWN)
    # the kernel's spec and language, collapsed outputs: as Lab records them, so opening is no change
    assert not page.evaluate(f"() => {_CURRENT}.context.model.dirty"), \
        f"{chapter}: reopened, the tab is marked modified as soon as its kernel starts"
    page.evaluate(f"async () => {{ const w = {_CURRENT}; await w.sessionContext.shutdown(); w.dispose(); }}")
    assert "glue.text(" not in text, f"{chapter}: reopened, a computed value shows as code until Run All"
    assert not _diff(root), f"{chapter}: reopening changed the file"


def test_lab_edit_changes_only_that_cell(lab, page):
    """A reader's edit to one markdown cell (one with a computed value, a term and a citation around it)
    changes that line of the .md and nothing else, through autosave and save."""
    url, root = lab
    chapter = "12_many_chips" if "12_many_chips" in ALL else ALL[0]
    rel = f"chapters/{chapter}.md"
    _open(page, rel)
    page.evaluate(f"""() => {{
      const cells = {_CURRENT}.content.widgets;
      const c = cells.find(c => c.model.type === 'markdown' && /labsim-(cite|term)=/.test(c.model.sharedModel.getSource())
                            && /\\{{eval\\}}/.test(c.model.sharedModel.getSource()));
      const src = c.model.sharedModel.getSource();
      c.model.sharedModel.setSource(src + ' A reader\\'s note.');
    }}""")
    page.wait_for_timeout(3 * AUTOSAVE_S * 1000)
    _save_and_close(page)
    diff = _diff(root).splitlines()
    removed = [l[1:] for l in diff if l.startswith("-") and not l.startswith("---")]
    added = [l[1:] for l in diff if l.startswith("+") and not l.startswith("+++")]
    assert len(removed) == 1 and added == [removed[0] + " A reader's note."], "\n".join(diff)
    # the line that changed is the edited cell's last line, as it is on disk (roles, not Lab's links)
    assert "labsim-" not in added[0] and "{eval}" not in added[0]
    _git(root, "checkout", "--", "chapters")
