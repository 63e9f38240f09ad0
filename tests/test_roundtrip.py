"""Saving a chapter in JupyterLab never breaks anything.

JupyterLab (``make lab``) reads and writes the chapters through jupytext's contents manager, rooted at
the repository so that ``jupytext.toml`` applies. These tests do what a reader's session does to every
chapter: open the ``.md`` as a notebook, run it (outputs and execution counts, as a saved executed
notebook has, the kernel spec that JupyterLab writes, the computed inline values jupyterlab-myst keeps; executing for real is ``tests/test_chapters.py``'s job), save it, and then open and save it
once more (the second time the outputs come back from the paired notebook). The ``.md`` must come back
byte for byte: front matter kept, no formatting churn. The paired ``.ipynb`` must land in
``_notebooks/``, where neither git nor the book looks, and the book must not find any document twice
when pairs are present, in that folder or (from an older configuration) beside the chapter.

Everything happens on copies in a temporary directory; the real chapters are never written.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

PAIRS = "_notebooks"  # where jupytext.toml pairs chapters/<name>.md to: _notebooks/<name>.ipynb


def _has_kernelspec(path: Path) -> bool:
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))  # the template too: new chapters start from it
PAGES = [p for p in sorted((ROOT / "book").glob("*.md")) if _has_kernelspec(p)]  # notebook pages of book/
KO_CHAPTERS = sorted((ROOT / "ko" / "chapters").glob("*.md"))  # the Korean edition (ko/jupytext.toml pairs them)
DOCS = CHAPTERS + PAGES + KO_CHAPTERS


def _lab_copy(dest: Path) -> Path:
    """The part of the repository that JupyterLab's contents manager sees: config, chapters, book pages."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "jupytext.toml", dest / "jupytext.toml")
    shutil.copytree(ROOT / "chapters", dest / "chapters")
    shutil.copytree(ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("_static", "_ext"))
    if (ROOT / "ko").is_dir():
        shutil.copytree(ROOT / "ko", dest / "ko", ignore=shutil.ignore_patterns(PAIRS))
    return dest


_LOOP_THREAD = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="roundtrip")


def _run(coro):
    """Run a coroutine to completion in one helper thread, always the same: an event loop may already be
    running in this one (Playwright's sync API, used by the browser tests, leaves one behind), and the
    contents manager's notebook-signature database (SQLite) must stay in the thread that opened it."""
    return _LOOP_THREAD.submit(asyncio.run, coro).result()


class _Sync:
    """Calls an asynchronous contents manager as a synchronous one."""

    def __init__(self, cm):
        self.cm = cm

    def get(self, *args, **kwargs):
        return _run(self.cm.get(*args, **kwargs))

    def save(self, *args, **kwargs):
        return _run(self.cm.save(*args, **kwargs))


sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_lab  # noqa: E402  (make lab's launcher and contents manager)


def _contents_manager(root: Path, kind: str = "sync"):
    """The contents manager ``make lab`` runs (book/_ext/labsim_lab.py: jupytext's, which collapses the
    cells the website hides and opens computed values as inline expressions, both undone on save),
    rooted where ``make lab`` roots the server. ``async`` is the one JupyterLab runs."""
    if kind == "sync":
        return labsim_lab.SyncLabContentsManager(root_dir=str(root))
    return _Sync(labsim_lab.LabContentsManager(root_dir=str(root)))


def _run_and_save(cm, rel: str) -> int:
    """Open ``rel`` as JupyterLab does, give it what running it leaves behind, save it as Ctrl+S does.
    Returns how many code cells had outputs when it was opened."""
    model = cm.get(rel, content=True, type="notebook")
    nb = model["content"]
    tagged = [c for c in nb.cells if set(c.metadata.get("tags", ())) & labsim_lab.HIDDEN.keys()]
    assert all(c.metadata.get("jupyter", {}).get("source_hidden") or c.metadata.get("jupyter", {}).get("outputs_hidden")
               for c in tagged), f"{rel}: a cell the website hides does not open collapsed in JupyterLab"
    assert not any("{glue:text}" in c.source for c in nb.cells if c.cell_type == "markdown"), \
        f"{rel}: a computed value still opens as a {{glue:text}} role, which JupyterLab cannot render"
    had_outputs = sum(1 for cell in nb.cells if cell.cell_type == "code" and cell.get("outputs"))
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=f"cell {count} ran\n"),
            nbformat.v4.new_output("execute_result", data={"text/plain": f"{count}"}, execution_count=count),
        ]
        # What JupyterLab and the kernel record in a cell (timing, scroll state).
        cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00.000Z",
                                      "shell.execute_reply": "2026-01-01T00:00:00.100Z"}
        cell.metadata["scrolled"] = True
        cell.metadata["trusted"] = True
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("#"):
            cell.metadata["jp-MarkdownHeadingCollapsed"] = True  # a folded heading
            break
    # What jupyterlab-myst records in a markdown cell with computed values when it runs it.
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "{eval}" in cell.source:
            cell.metadata["user_expressions"] = [{"expression": "glue.text('x')", "result": {
                "status": "ok", "data": {"text/plain": "'1'"}, "metadata": {}}}]
    # What the kernel, JupyterLab (its kernel's display name) and the widget manager add to the notebook.
    if "kernelspec" in nb.metadata:
        nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.12.0", "pygments_lexer": "ipython3",
                                    "file_extension": ".py", "mimetype": "text/x-python"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                           "version_minor": 0}}
    cm.save({"type": "notebook", "format": "json", "content": nb}, rel)
    return had_outputs


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_saving_in_jupyterlab_keeps_the_md(path: Path, kind: str, tmp_path: Path):
    root = _lab_copy(tmp_path / "repo")
    rel = path.relative_to(ROOT).as_posix()
    before = (root / rel).read_bytes()
    cm = _contents_manager(root, kind)
    for session in ("first save", "second save, outputs read back from the pair"):
        had_outputs = _run_and_save(cm, rel)
        if session.startswith("second") and path.parent.name == "chapters":
            assert had_outputs, f"reopening {rel} did not bring back the outputs from its pair"
        after = (root / rel).read_bytes()
        if after != before:
            import difflib

            diff = "".join(difflib.unified_diff(before.decode().splitlines(True), after.decode().splitlines(True),
                                                f"{rel} (committed)", f"{rel} (after {session})", n=1))
            pytest.fail(f"saving {rel} in JupyterLab changes it ({session}):\n{diff}", pytrace=False)

    name = Path(rel).stem
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.ipynb")
                     if ".ipynb_checkpoints" not in p.parts)
    if path.parent.name == "chapters":
        pairs = f"ko/{PAIRS}" if rel.startswith("ko/") else PAIRS  # ko/jupytext.toml: ko/_notebooks
        pair = root / pairs / f"{name}.ipynb"
        assert written == [f"{pairs}/{name}.ipynb"], f"paired notebooks written: {written}"
        nb = nbformat.read(pair, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(c.outputs and c.execution_count for c in code), "the pair keeps the outputs"
        assert nb.metadata["kernelspec"]["name"] == "python3"
    else:
        assert written == [], f"a book page is not paired, but saving {rel} wrote {written}"


def test_pairs_are_ignored_by_git_and_the_book():
    assert (ROOT / "jupytext.toml").read_text(encoding="utf-8").count(f"{PAIRS}///ipynb") == 1
    ignored = subprocess.run(["git", "check-ignore", "-q", f"{PAIRS}/01_journey.ipynb"], cwd=ROOT)
    if ignored.returncode == 128:
        pytest.skip("not a git checkout")
    assert ignored.returncode == 0, f"git does not ignore {PAIRS}/"
    yaml = pytest.importorskip("yaml")
    excluded = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["exclude_patterns"]
    assert PAIRS in excluded and f"{PAIRS}/**" in excluded and "**.ipynb" in excluded


def _make_pairs(root: Path) -> list[str]:
    """Save every chapter through the contents manager (pairs in _notebooks/), and leave a stale pair
    beside one chapter, as the old configuration (formats = "ipynb,md:myst") wrote it."""
    cm = _contents_manager(root)
    for path in CHAPTERS:
        _run_and_save(cm, path.relative_to(ROOT).as_posix())
    beside = root / "chapters" / "03_roofline.ipynb"
    nbformat.write(jupytext.read(root / "chapters" / "03_roofline.md"), beside)
    pairs = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.ipynb"))
    assert f"{PAIRS}/03_roofline.ipynb" in pairs and "chapters/03_roofline.ipynb" in pairs
    return pairs


def test_the_book_finds_each_document_once_with_pairs_present(tmp_path: Path):
    """Sphinx's source discovery, with the book's configuration: no document twice, no notebook."""
    pytest.importorskip("jupyter_book")
    from jupyter_book.config import get_final_config
    from sphinx.project import EXCLUDE_PATHS
    from sphinx.util.matching import get_matching_files

    root = _lab_copy(tmp_path / "repo")
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    shutil.copy(ROOT / "_toc.yml", root / "_toc.yml")
    _make_pairs(root)
    config, _ = get_final_config(user_yaml=root / "_config.yml", cli_config={"latex_individualpages": False},
                                 sourcedir=root)
    suffixes = (".md", ".ipynb", ".rst")  # what the book parses (myst-nb: .md, .ipynb; Sphinx: .rst)
    found: dict[str, list[str]] = {}
    for filename in get_matching_files(root, ("**",), [*config["exclude_patterns"], *EXCLUDE_PATHS]):
        stem, suffix = os.path.splitext(filename)
        if suffix in suffixes:
            found.setdefault(Path(stem).as_posix(), []).append(Path(filename).as_posix())
    twice = {doc: files for doc, files in found.items() if len(files) > 1}
    assert not twice, f"documents found more than once: {twice}"
    notebooks = [f for files in found.values() for f in files if f.endswith(".ipynb")]
    assert not notebooks, f"the book would read these notebooks: {notebooks}"
    for path in CHAPTERS:
        if path.name != "_template.md":
            assert found[f"chapters/{path.stem}"] == [f"chapters/{path.name}"]


@pytest.mark.slow
def test_the_book_builds_with_pairs_present(tmp_path: Path):
    """``jb build . -W`` on a copy of the repository in which every chapter was saved from JupyterLab."""
    jb = shutil.which("jb", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if jb is None:
        pytest.skip("jupyter-book (jb) is not installed")
    root = tmp_path / "repo"
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns(
        ".git", ".venv", "_build", PAIRS, "*.ipynb", ".ipynb_checkpoints", "__pycache__", ".pytest_cache",
        ".hypothesis", ".jupyter_cache", "*.egg-info", "generated"))
    _make_pairs(root)
    # The book build's execution cache, where there is one: this test is about the paired files, and
    # the cache (keyed by each page's code) spares it executing every chapter a second time.
    cache = ROOT / "_build" / ".jupyter_cache"
    if cache.is_dir():
        shutil.copytree(cache, root / "_build" / ".jupyter_cache")
    env = dict(os.environ, LABSIM_BOOK="1")
    # The chapters import labsim from this repository, whichever way it is installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    proc = subprocess.run([jb, "build", ".", "-W", "--keep-going"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1200)
    log = proc.stdout + proc.stderr
    assert "multiple files found" not in log, log[-6000:]
    assert proc.returncode == 0, f"jb build failed with the paired notebooks present:\n{log[-6000:]}"
    assert (root / "_build" / "html" / "chapters" / "03_roofline.html").is_file()
    assert not (root / "_build" / "html" / PAIRS).exists()


@pytest.mark.parametrize("text", [
    "{glue:text}`a`", "{glue:text}`b_2:,.0f` and {glue:text}`c:.3g`", 'odd {glue:text}`d:"x"` spec',
    "no role here", "{glue:text}`e:>8,.1f`"])
def test_glue_roles_and_inline_expressions_translate_both_ways(text):
    lab = labsim_lab.glue_to_eval(text)
    assert "{glue:text}" not in lab
    assert labsim_lab.eval_to_glue(lab) == text


def test_glue_text_formats_as_myst_nb_does():
    from labsim.viz import glue

    glue("rt_value", 1234567.891, display=False)
    assert glue.text("rt_value", ",.0f") == "1,234,568"
    assert glue.text("rt_value") == "1234567.891"
    with pytest.raises(KeyError, match="nothing was glued"):
        glue.text("rt_missing")
