"""Round trip of every live widget in JupyterLab, in headless Chromium: from the reader's input event to
the figure redrawn in the page (tests/_lab_roundtrip.py). Target: p95 ≤ 150 ms (issue 24). The last
column measures from the press of a toggle button instead of its click: a click holds the button down
100 ms, as a reader's does, while JupyterLab makes the cell the active one; for sliders and dropdowns the
two are the same.

JupyterLab starts as ``make lab`` starts it, rooted at a copy of the chapters; each chapter with a live
widget is opened and run all, then every control of every live widget moves ``LABSIM_LAB_WIDGET_MOVES``
times (4) or more, until each widget has 20 timed moves. ``LABSIM_LAB_WIDGETS`` picks chapters (comma-separated numbers; default: all). Prints one row per
widget, or why it cannot run (no JupyterLab, jupyterlab-myst, playwright or Chromium).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
os.environ.pop("LABSIM_BOOK", None)

from _lab_browser import ROOT, copy_chapters, lab_server, missing_lab, open_lab  # noqa: E402

TARGET_MS = 150.0


def main() -> None:
    why = missing_lab()
    chromium = next((c for c in (os.environ.get("LABSIM_CHROMIUM"), "/usr/bin/chromium") if c and Path(c).is_file()), None)
    if why or chromium is None:
        print(f"skipped: live-widget round trip needs JupyterLab in Chromium: {why or 'no Chromium at /usr/bin/chromium'}")
        return
    from playwright.sync_api import sync_playwright

    from _lab_roundtrip import SAMPLES, measure_chapter, pct
    want = os.environ.get("LABSIM_LAB_WIDGETS", "")
    chapters = [p.stem for p in sorted((ROOT / "chapters").glob("[0-9]*.md"))
                if not want or p.stem[:2] in want.split(",")]
    moves = int(os.environ.get("LABSIM_LAB_WIDGET_MOVES", "4"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="benchlab") as tmp, sync_playwright() as pw:
        root = Path(tmp)
        copy_chapters(root)
        browser = pw.chromium.launch(executable_path=chromium, headless=True)
        with lab_server(root, "labsim-bench") as url:
            ctx, page = open_lab(browser, url, "labsim-bench")
            for ch in chapters:
                found, errors = measure_chapter(page, f"chapters/{ch}.md", moves=moves)
                for label, times, unchanged, presses in found:
                    rows.append((ch, label, times, unchanged, presses))
                for e in errors:
                    print(f"{ch}: error output: {e[:200]}")
            ctx.close()
        browser.close()
    print(f"Live widgets in JupyterLab: input event to figure redrawn (ms; every control moved {moves} times or more, "
          f"each widget until {SAMPLES} moves redrew it; target p95 ≤ {TARGET_MS:.0f} ms)\n")
    print("| chapter | widget | moves | unchanged | p50 | p95 | max | ok | p95 from the press (held 100 ms) |\n"
          "|---|---|---|---|---|---|---|---|---|")
    for ch, label, t, un, pr in rows:
        p95 = pct(t, 95)
        print(f"| {ch} | {label} | {len(t)} | {un} | {pct(t, 50):.0f} | {p95:.0f} | {max(t, default=float('nan')):.0f} "
              f"| {'yes' if p95 <= TARGET_MS else 'NO'} | {pct(pr, 95):.0f} |")
    every = [x for r in rows for x in r[2]]
    print(f"\nAll {len(every)} moves: p50 {pct(every, 50):.0f} ms, p95 {pct(every, 95):.0f} ms, max {max(every, default=float('nan')):.0f} ms.")
    print(f"\n{sum(pct(r[2], 95) <= TARGET_MS for r in rows)} of {len(rows)} widgets meet the target.")


if __name__ == "__main__":
    main()
