"""What the book's JupyterLab contents manager does to a chapter, without a browser (book/_ext/labsim_lab*.py).

``{term}``, ``{cite}`` and ``{ref}`` open as links with words (not keys) and come back exactly on save;
solutions with code collapse as a whole; the kernel spec Lab writes and jupyterlab-myst's computed inline
values (``user_expressions``) never reach the ``.md``, and the latter come back from the paired notebook.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupytext")
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_lab  # noqa: E402
import labsim_lab_roles as roles  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9]*.md"))
LAB_KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_roles_translate_both_ways_on_every_chapter(path: Path):
    text = path.read_text(encoding="utf-8")
    lab = roles.roles_to_links(text, f"chapters/{path.name}")
    assert not re.search(r"\{(term|cite|ref)\}`", lab), "a role is left for jupyterlab-myst to show as a key"
    assert roles.links_to_roles(lab) == text


def test_the_words_a_reader_sees():
    lab = roles.roles_to_links("{cite}`austin2025scaling` {term}`warps <Warp>` {ref}`ch-roofline` {cite}`a-missing-key`",
                               "chapters/09_tpu.md")
    assert "[(Austin et al., 2025)](../book/references.md#labsim-cite=austin2025scaling)" in lab
    assert lab.count("[warps](../book/glossary.md#labsim-term=warps%20%3CWarp%3E \"워프 — ") == 1
    title = (ROOT / "chapters" / "03_roofline.md").read_text(encoding="utf-8").split("\n# ", 1)[1].split("\n")[0]
    assert f"[{title}](03_roofline.md#labsim-ref=ch-roofline)" in lab
    assert "[(a-missing-key)]" in lab  # an unknown key shows as itself, and still comes back
    assert roles.links_to_roles(lab).endswith("{cite}`a-missing-key`")
    # words a reader types that look like markdown are escaped in the link, the role comes back exactly
    odd = "{term}`a_b *c* [d] <Warp>`"
    assert roles.links_to_roles(roles.roles_to_links(odd)) == odd


def _cells(*sources):
    out = []
    for s in sources:
        out.append(nbformat.v4.new_code_cell(s[5:]) if s.startswith("code:") else nbformat.v4.new_markdown_cell(s))
    return out


def test_a_solution_with_code_collapses_as_a_whole_and_comes_back():
    start = "```{exercise} E\n:label: ex-1\nDo it.\n```\n\n````{solution-start} ex-1\n:class: dropdown\n````\n\nFirst."
    end = "Last words.\n\n````{solution-end}\n````\n\n```{exercise} F\nNext one.\n```"
    nb = nbformat.v4.new_notebook(cells=_cells("Before.", start, "code:x = 1", "Middle.", "code:y = 2", end, "code:z = 3"))
    disk = nbformat.reads(nbformat.writes(nb), as_version=4)
    labsim_lab.for_lab(nb, "chapters/x.md")
    hidden = [c.source for c in nb.cells if c.metadata.get("jupyter", {}).get("source_hidden")]
    assert hidden == ["x = 1", "Middle.", "y = 2", "Last words.\n\n````{solution-end}\n````"]
    assert all(c.metadata["jupyter"].get("outputs_hidden") for c in nb.cells if c.cell_type == "code"
               and c.source != "z = 3")
    assert [c.source for c in nb.cells][-2:] == ["```{exercise} F\nNext one.\n```", "z = 3"]  # visible
    labsim_lab.for_disk(nb)
    assert [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells] == \
        [(c.cell_type, c.source, dict(c.metadata)) for c in disk.cells]


def test_lab_kernelspec_and_computed_values_stay_out_of_the_md(tmp_path: Path):
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(ROOT / "jupytext.toml", root)
    shutil.copytree(ROOT / "chapters", root / "chapters")
    rel = "chapters/13_llm_inference.md"
    before = (root / rel).read_bytes()
    cm = labsim_lab.SyncLabContentsManager(root_dir=str(root))
    nb = cm.get(rel, content=True, type="notebook")["content"]
    nb.metadata["kernelspec"] = dict(LAB_KERNELSPEC)  # what Lab writes when the kernel starts
    with_values = [c for c in nb.cells if c.cell_type == "markdown" and "{eval}" in c.source]
    assert with_values
    for i, cell in enumerate(with_values):  # what jupyterlab-myst writes when it runs a markdown cell
        cell.metadata["user_expressions"] = [{"expression": f"e{i}", "result": {"status": "ok",
                                                                              "data": {"text/plain": f"'{i}'"}}}]
    cm.save({"type": "notebook", "format": "json", "content": nb}, rel)
    assert (root / rel).read_bytes() == before
    pair = nbformat.read(root / "_notebooks" / "13_llm_inference.ipynb", as_version=4)
    assert sum("user_expressions" in c.metadata for c in pair.cells) == len(with_values)
    again = cm.get(rel, content=True, type="notebook")["content"]
    back = [c.metadata.get("user_expressions") for c in again.cells if c.cell_type == "markdown" and "{eval}" in c.source]
    assert back == [c.metadata["user_expressions"] for c in with_values]
    # another kernel chosen by the reader is a real change, and is kept
    again.metadata["kernelspec"] = {"display_name": "Other", "language": "python", "name": "other"}
    cm.save({"type": "notebook", "format": "json", "content": again}, rel)
    assert "name: other" in (root / rel).read_text(encoding="utf-8")


def test_no_browser_is_an_option_of_the_launcher(monkeypatch):
    seen = {}
    monkeypatch.setattr(labsim_lab, "write_overrides", lambda: None)
    monkeypatch.setattr(labsim_lab.subprocess, "call", lambda cmd, env: seen.setdefault("cmd", cmd) and 0)
    assert labsim_lab.main(["--no-browser", "--port", "8899", "--", "--ServerApp.open_browser=False"]) == 0
    assert "--no-browser" in seen["cmd"] and "--ServerApp.port=8899" in seen["cmd"]
    assert seen["cmd"][-1] == "--ServerApp.open_browser=False"
