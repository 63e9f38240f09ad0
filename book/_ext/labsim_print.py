"""The print face of every figure of the book: ``make print`` runs this file.

    python book/_ext/labsim_print.py [--out _build/print] [chapter ...]

Each chapter (``chapters/NN_name.md``) and each page of ``book/`` that runs code (or only those named:
``07_gpu``, ``07`` or ``accuracy``) is read with jupytext
and run top to bottom by nbclient in a fresh kernel with ``LABSIM_PRINT_DIR=<out>/<chapter>``. There
every figure the chapter displays writes its own print face (``labsim.viz.printface.auto_save``): a
captioned figure as ``fig-N.pdf`` and ``fig-N.png`` (and ``fig-N.gif`` for an animation), N its number
in the chapter as the website numbers it. Each chapter's folder gets an ``index.md`` (file → caption)
and ``<out>/index.md`` lists the chapters. A chapter that fails is reported, the others still run, and
the exit status is 1.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def _is_notebook(path: Path) -> bool:
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


def chapters(names: list[str]) -> list[Path]:
    """The chapters, then the book's pages that run code (the appendices), or only those named."""
    found = [p for p in sorted((REPO / "chapters").glob("[0-9][0-9]_*.md"))]
    found += [p for p in sorted((REPO / "book").glob("*.md")) if _is_notebook(p)]
    if not names:
        return found
    out = []
    for n in names:
        hits = [p for p in found if p.stem == n or p.stem.split("_")[0] == n]
        if not hits:
            raise SystemExit(f"labsim_print: no chapter {n!r}; the chapters are {[p.stem for p in found]}")
        out += hits
    return out


def run_chapter(path: Path, out: Path) -> tuple[float, int, str | None]:
    """Run one chapter with the print face on; returns (seconds, figures written, error or None)."""
    import jupytext
    import nbclient

    folder = out / path.stem
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    m = re.match(r"(\d+)_", path.stem)
    number = str(int(m.group(1))) if m else ""  # a page outside the chapters numbers its figures 1, 2, ...
    title = f"Chapter {number}" if number else path.stem
    (folder / "index.md").write_text(
        f"# {title}: the figures for print\n\n| files | figure | caption |\n| --- | --- | --- |\n",
        encoding="utf-8")
    env = {"LABSIM_PRINT_DIR": str(folder.resolve()), "LABSIM_PRINT_CHAPTER": number,
           "PYDEVD_DISABLE_FILE_VALIDATION": "1", "MPLBACKEND": "Agg"}
    old = {k: os.environ.get(k) for k in (*env, "LABSIM_BOOK")}
    os.environ.update(env)
    os.environ.pop("LABSIM_BOOK", None)
    t0 = time.perf_counter()
    error = None
    try:
        nb = jupytext.read(path)
        nbclient.NotebookClient(nb, kernel_name="python3", timeout=300, allow_errors=False,
                                resources={"metadata": {"path": str(path.parent)}}).execute()
    except Exception as e:  # report and go on with the next chapter
        error = f"{type(e).__name__}: {str(e)[-1500:]}"
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    rows = [r for r in (folder / "index.md").read_text(encoding="utf-8").splitlines() if r.startswith("| [")]
    return time.perf_counter() - t0, len(rows), error


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO / "_build" / "print"))
    ap.add_argument("chapters", nargs="*")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = chapters(args.chapters)
    lines, failed, dropped, total, t_all = [], [], set(), 0, time.perf_counter()
    for p in paths:
        secs, n, err = run_chapter(p, out)
        total += n
        print(f"{p.stem:<20} {n:>3} figure{' ' if n == 1 else 's'}  {secs:6.1f} s" + ("  FAILED" if err else ""),
              flush=True)
        if err:
            failed.append(p.stem)
            print(re.sub(r"\x1b\[[0-9;]*m", "", err), file=sys.stderr)
        if n == 0 and not err:  # a page without figures (the hardware table) gets no folder
            shutil.rmtree(out / p.stem, ignore_errors=True)
            dropped.add(p.stem)
            continue
        lines.append(f"- [{p.stem}]({p.stem}/index.md): {n} figure{'' if n == 1 else 's'}" + (" (FAILED)" if err else ""))
    # the index of every chapter run so far (a run of a few chapters keeps the others' entries)
    index = out / "index.md"
    keep = {}
    if index.exists():
        for row in index.read_text(encoding="utf-8").splitlines():
            m = re.match(r"- \[([^\]]+)\]", row)
            if m:
                keep[m.group(1)] = row
    keep.update({re.match(r"- \[([^\]]+)\]", r).group(1): r for r in lines})
    for stem in dropped:
        keep.pop(stem, None)
    index.write_text("# The figures of the book, for print and slides\n\nPDF and PNG per figure (GIF for an "
                     "animation), numbered as on the website.\n\n" + "\n".join(keep[k] for k in sorted(keep)) + "\n",
                     encoding="utf-8")
    print(f"{total} figures from {len(paths)} pages in {time.perf_counter() - t_all:.0f} s: {out}/index.md")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
