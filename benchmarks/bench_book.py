"""Benchmark the book: a clean build, execution time per notebook, and the weight of each page.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/bench_book.py``). It builds the whole book
into a temporary folder with a fresh Jupyter cache, exactly as ``make book`` does (``LABSIM_BOOK=1
jb build . -W --keep-going``), so nothing is reused from ``_build/``. Then it prints three tables:

1. the clean build time;
2. the execution time of every notebook page, as jupyter-cache recorded it during that build;
3. the weight of every built page: its HTML plus the images and other files only it refers to
   (``_images/``, local figures), leaving out the JavaScript, CSS and fonts all pages share under
   ``_static/``. Pages over 2 MB are flagged: on a phone over a slow link they are the ones to fix.

Options: ``--keep`` leaves the temporary build in place and prints its path.
"""
from __future__ import annotations

import argparse
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
HEAVY_BYTES = 2 * 1024 * 1024
SHARED = {"searchindex.js", "objects.inv"}  # site-wide files every page refers to


class _Refs(html.parser.HTMLParser):
    """Collects the local files a page refers to through src/href/data attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "data", "poster") and value:
                self.refs.add(value)
            elif name == "srcset" and value:
                self.refs.update(part.strip().split(" ")[0] for part in value.split(","))


def page_weights(site: Path) -> list[tuple[str, int, int, int]]:
    """(page, html bytes, own asset bytes, total) for every page outside _static/_sources."""
    rows = []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        if rel.startswith(("_static/", "_sources/", "_images/")):
            continue
        parser = _Refs()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        own = 0
        seen: set[Path] = set()
        for ref in parser.refs:
            parts = urlsplit(ref)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            try:
                inside = target.relative_to(site.resolve()).as_posix()
            except ValueError:
                continue
            if (inside.startswith(("_static/", "_sources/")) or inside in SHARED
                    or target.suffix == ".html" or not target.is_file()):
                continue
            if target not in seen:
                seen.add(target)
                own += target.stat().st_size
        size = page.stat().st_size
        rows.append((rel, size, own, size + own))
    return rows


def execution_times(cache_dir: Path) -> list[tuple[str, float]]:
    from jupyter_cache import get_cache

    rows = []
    for rec in get_cache(str(cache_dir)).list_cache_records():
        uri = Path(rec.uri)
        try:
            name = uri.relative_to(ROOT).as_posix()
        except ValueError:
            name = str(uri)
        rows.append((name, float((rec.data or {}).get("execution_seconds", float("nan")))))
    return sorted(rows)


def clean_build(out: Path) -> float:
    env = dict(os.environ, LABSIM_BOOK="1")
    jb = Path(sys.executable).with_name("jb")
    cmd = [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "--keep-going"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"clean build failed (exit {proc.returncode})")
    return elapsed


def _mb(n: int) -> str:
    return f"{n / 1e6:8.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary build")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="labsim-bench-"))
    try:
        secs = clean_build(tmp)
        build = tmp / "_build"
        print("\nClean book build (fresh Jupyter cache, execution included)")
        print(f"  {'what':<40} {'seconds':>8}")
        print(f"  {'jb build . -W --keep-going':<40} {secs:8.1f}")

        print("\nNotebook execution during that build")
        print(f"  {'notebook':<40} {'seconds':>8}")
        times = execution_times(build / ".jupyter_cache")
        for name, t in times:
            print(f"  {name:<40} {t:8.2f}")
        print(f"  {'total':<40} {sum(t for _, t in times):8.2f}")

        print("\nPage weight (HTML + its own images/files; shared _static/ excluded)")
        print(f"  {'page':<40} {'HTML MB':>8} {'own MB':>8} {'total MB':>8}  flag")
        rows = page_weights(build / "html")
        for rel, size, own, total in rows:
            flag = "OVER 2 MB" if total > HEAVY_BYTES else ""
            print(f"  {rel:<40} {_mb(size)} {_mb(own)} {_mb(total)}  {flag}")
        static = sum(p.stat().st_size for p in (build / "html" / "_static").rglob("*") if p.is_file())
        print(f"  {'(shared _static/, loaded once)':<40} {'':>8} {'':>8} {_mb(static)}")
        heavy = [r[0] for r in rows if r[3] > HEAVY_BYTES]
        print(f"\n{len(rows)} pages, {len(heavy)} over 2 MB" + (f": {', '.join(heavy)}" if heavy else ""))
    finally:
        if args.keep:
            print(f"build kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
