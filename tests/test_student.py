"""The student edition (``make book STUDENT=1``) keeps every exercise and drops every solution."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_student  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
GLUE_DEF = re.compile(r"glue\(\s*f?[\"']([\w-]+)")
GLUE_USE = re.compile(r"\{glue(?::\w+)?\}`([\w-]+)")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_strip_keeps_exercises_and_drops_solutions(path):
    text = path.read_text(encoding="utf-8")
    out = labsim_student.strip_solutions(text)
    n_solutions = text.count("{solution-start}")
    assert n_solutions > 0, f"{path.name} has no gated solution to strip"
    assert "{solution-start}" not in out and "{solution-end}" not in out
    assert out.count("{exercise}") == text.count("{exercise}")
    assert out.count(labsim_student.NOTE) == n_solutions
    # no value the student edition quotes was computed only inside a solution
    only_in_solutions = set(GLUE_DEF.findall(text)) - set(GLUE_DEF.findall(out))
    quoted = only_in_solutions & set(GLUE_USE.findall(out))
    assert not quoted, f"{path.name}: the student edition quotes values computed only in solutions: {quoted}"


def test_strip_is_exact_on_a_small_page():
    page = ("intro\n\n```{exercise} E\n:label: e1\nDo it.\n```\n\n````{solution-start} e1\n:class: dropdown\n````\n\n"
            "secret\n\n```{code-cell} ipython3\nprint('secret')\n```\n\n````{solution-end}\n````\n\nafter\n")
    out = labsim_student.strip_solutions(page)
    assert "secret" not in out and out.startswith("intro") and out.rstrip().endswith("after")
    assert "Do it." in out


@pytest.mark.slow
def test_student_build_of_one_chapter_has_no_solution(tmp_path):
    """A real build (Jupyter Book, executed) of the chapter with the fewest solutions."""
    jb = Path(sys.executable).parent / "jb"
    if not jb.exists():
        pytest.skip("jupyter-book is not installed in this environment")
    env = dict(os.environ, LABSIM_BOOK="1", LABSIM_STUDENT="1", PYTHONPATH=str(ROOT))
    chapter = ROOT / "chapters" / "08_warps.md"
    run = subprocess.run([str(jb), "build", str(chapter), "--path-output", str(tmp_path)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    html = next(tmp_path.rglob("08_warps.html")).read_text(encoding="utf-8")
    assert 'class="solution' not in html and "Solution to" not in html
    assert html.count("student edition") == chapter.read_text().count("{solution-start}")
    assert "exercise" in html
