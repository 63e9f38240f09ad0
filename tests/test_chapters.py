"""Every chapter and every notebook page of the book runs top to bottom in a fresh kernel.

Each MyST-markdown notebook (``chapters/*.md`` except ``_template.md``; the ``book/*.md`` pages that
have a kernelspec) is read with jupytext and executed with nbclient in a new ``python3`` kernel of this
environment. Any error fails the test, and so does a notebook whose cells take 60 s or more. Execution
happens without ``LABSIM_BOOK``, so this covers the JupyterLab face (live widgets) that the website
build does not run. The times are printed in the pytest summary.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import ROOT, NOTEBOOK_TIMES

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")

LIMIT_S = 60.0


def _is_notebook(path: Path) -> bool:
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


def notebooks() -> list[Path]:
    chapters = [p for p in sorted((ROOT / "chapters").glob("*.md")) if p.name != "_template.md"]
    pages = [p for p in sorted((ROOT / "book").glob("*.md")) if _is_notebook(p)]
    return chapters + pages


NOTEBOOKS = notebooks()


def test_there_are_chapters():
    assert any(p.parent.name == "chapters" for p in NOTEBOOKS), "no chapters/*.md found"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_executes(path: Path, monkeypatch):
    monkeypatch.delenv("LABSIM_BOOK", raising=False)  # the JupyterLab face, not the website's
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = jupytext.read(path)
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=int(LIMIT_S) * 2,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    t0 = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        pytest.fail(f"{path.relative_to(ROOT)} failed:\n{err}", pytrace=False)
    finally:
        elapsed = time.perf_counter() - t0
        NOTEBOOK_TIMES[path.relative_to(ROOT).as_posix()] = elapsed
    cells = _cell_seconds(nb)
    print(f"{path.relative_to(ROOT)}: {elapsed:.1f} s in all, {cells:.1f} s running cells")
    # The limit is on the chapter's own work (its cells, top to bottom). Starting and stopping the
    # kernel is the machine's business: it once stalled for ~2 minutes on a loaded CI machine, so it
    # only gets a generous bound of its own.
    assert cells < LIMIT_S, f"{path.relative_to(ROOT)}: cells took {cells:.1f} s (limit {LIMIT_S:.0f} s)"
    assert elapsed - cells < 3 * LIMIT_S, f"{path.relative_to(ROOT)}: kernel start/stop took {elapsed - cells:.0f} s"


def _cell_seconds(nb) -> float:
    """Sum of the cells' execution times, from the timing metadata nbclient records."""
    from datetime import datetime

    total = 0.0
    for cell in nb.cells:
        ex = cell.get("metadata", {}).get("execution", {})
        start, end = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
        if start and end:
            parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))
            total += (parse(end) - parse(start)).total_seconds()
    return total
