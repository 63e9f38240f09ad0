"""Every chapter and every notebook page of the book runs top to bottom in a fresh kernel.

Each MyST-markdown notebook (``chapters/*.md`` except ``_template.md``; the ``book/*.md`` pages that
have a kernelspec) is read with jupytext and executed with nbclient in a new ``python3`` kernel of this
environment. Any error fails the test, and so does a notebook whose cells take 60 s or more. Execution
happens without ``LABSIM_BOOK``, so this covers the JupyterLab face (live widgets) that the website
build does not run. The times are printed in the pytest summary.

Under ``make test`` (``LABSIM_REQUIRE_BOOK=1``) the book build has just executed every page in a fresh
kernel and kept the result in jupyter-cache (``_build/.jupyter_cache``; only successful executions are
kept, keyed by a hash of the page's code cells). When the cache holds an execution of a page's current
code, made after the last change to labsim's sources and to the data the book reads, the test takes that
execution's record (success, and its time, which must be under the limit) instead of running the page a
second time; otherwise, or with ``LABSIM_FRESH_NOTEBOOKS=1``, it runs the page fresh as above.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import NOTEBOOK_TIMES, REQUIRE_BOOK, ROOT

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
import nbclient.client  # noqa: E402
import nbclient.util  # noqa: E402

LIMIT_S = 60.0
CACHE = ROOT / "_build" / ".jupyter_cache"
# What the book's outputs depend on besides the page itself (the Makefile drops the cache when these change).
CACHE_INPUTS = ("labsim/**/*.py", "book/data/*.json", "crosscheck/refs/*.json")


class _Client(nbclient.NotebookClient):
    """nbclient, waiting for each cell's reply in one-second slices.

    With live widgets in the chapter (comm messages on the kernel's channels), the asynchronous ZeroMQ
    poll that nbclient waits on for a cell's ``execute_reply`` sometimes misses the wake-up: the reply
    is there, but the wait only ends at the cell timeout, and nothing fails. That was the "kernel
    stall" of exactly 120 s (the timeout), several times per chapter. Polling in slices picks the
    reply up within a second; a cell that really runs past the timeout still fails."""

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        import asyncio
        from queue import Empty

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                msg = await nbclient.util.ensure_async(self.kc.shell_channel.get_msg(timeout=1.0))
            except Empty:
                if deadline is not None and time.monotonic() > deadline:
                    task_poll_kernel_alive.cancel()
                    raise nbclient.exceptions.CellTimeoutError.error_from_timeout_and_cell(
                        "Cell execution timed out", timeout, cell) from None
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if self.record_timing:
                cell["metadata"]["execution"]["shell.execute_reply"] = nbclient.client.timestamp(msg)
            try:
                await asyncio.wait_for(task_poll_output_msg, self.iopub_timeout)
            except (asyncio.TimeoutError, Empty):
                self.log.warning("Timeout waiting for IOPub output")
            task_poll_kernel_alive.cancel()
            return msg


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
    record = _cached_execution(path)
    if record is not None:
        secs = float(record.data["execution_seconds"])
        NOTEBOOK_TIMES[path.relative_to(ROOT).as_posix() + " (book build, cached)"] = secs
        print(f"{path.relative_to(ROOT)}: executed by the book build in {secs:.1f} s (jupyter-cache record {record.pk})")
        # The book build's time covers the kernel's start as well as the cells: a stricter bound than below.
        assert secs < LIMIT_S, f"{path.relative_to(ROOT)}: the book build ran it in {secs:.1f} s (limit {LIMIT_S:.0f} s)"
        return
    monkeypatch.delenv("LABSIM_BOOK", raising=False)  # the JupyterLab face, not the website's
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = jupytext.read(path)
    client = _Client(
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
    # kernel is the machine's business and gets a generous bound of its own (the old stalls of exactly
    # the cell timeout were missed wake-ups in nbclient's wait for a reply: see _Client).
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


def _cached_execution(path: Path):
    """The jupyter-cache record of the book build's successful execution of ``path``'s current code, or None.

    Only under ``LABSIM_REQUIRE_BOOK=1`` (the book was built just before, by ``make test`` or CI), not
    with ``LABSIM_FRESH_NOTEBOOKS=1``, and only a record newer than every file in ``CACHE_INPUTS``."""
    import os
    from datetime import datetime, timezone

    if not REQUIRE_BOOK or os.environ.get("LABSIM_FRESH_NOTEBOOKS", "") not in ("", "0"):
        return None
    if not (CACHE / "global.db").is_file():
        return None
    try:
        from jupyter_cache import get_cache
    except ImportError:
        return None
    try:
        record = get_cache(str(CACHE)).match_cache_notebook(jupytext.read(path))
    except KeyError:  # no execution of this code in the cache
        return None
    if not isinstance(record.data, dict) or not isinstance(record.data.get("execution_seconds"), (int, float)):
        return None
    created = record.created  # jupyter-cache stores naive UTC times
    created = created.replace(tzinfo=timezone.utc) if created.tzinfo is None else created
    newest = max((p.stat().st_mtime for pat in CACHE_INPUTS for p in ROOT.glob(pat)), default=0.0)
    if created.timestamp() <= newest:
        return None  # labsim or the book's data changed after that execution: run the page again
    return record
