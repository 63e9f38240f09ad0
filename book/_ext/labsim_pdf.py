"""The whole book as one PDF: ``make pdf`` runs this file on the built site.

    python book/_ext/labsim_pdf.py [--site _build/html] [--out _build/pdf/labsim-book.pdf]
    python book/_ext/labsim_pdf.py --edition ko      # the Korean edition: _build/pdf/labsim-book-ko.pdf

Jupyter Book's own LaTeX builder needs a TeX installation; the book is printed instead from the website
it already builds, with the Debian Chromium the browser tests use (driven by Playwright). Each page of
``_toc.yml``, in its order, is opened from ``_build/html``; the script waits until every Plotly figure is
drawn, MathJax has typeset and the fonts (the Korean subset of the glossary included) are in; then

- each animation is replaced by a strip of key frames (its first, last and two between, each labelled
  with its step as the page's own controls name it), drawn by Plotly from the page's real figure;
- a chapter's heading gets its number ("Chapter 3"), as the figures already have theirs ("Fig 3.1");
- ``book/_static/print.css`` is added: it hides navigation, sidebars, search and every control, so each
  interactive figure prints in its opening state, and solutions print open.

The pages are merged (pypdf) behind a title page (with the text's licence, CC BY 4.0, and the code's,
MIT) and a contents page with page numbers; every page but the title is stamped with its number, and the
PDF gets one bookmark per page of the site.
"""
from __future__ import annotations

import argparse
import html
import io
import os
import re
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PRINT_CSS = REPO / "book" / "_static" / "print.css"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: CSS pixels of the window the site is laid out in, and the print scale that fits it on A4 (182 mm)
VIEWPORT_W, SCALE = 860, 0.8
PAGE_W = int(182 / 25.4 * 96 / SCALE) - 8  # the printed column in CSS pixels, less a little for borders
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"}
LICENCE = ("Text and figures: CC BY 4.0 (Creative Commons Attribution 4.0 International, "
           "https://creativecommons.org/licenses/by/4.0/; see LICENSE-text). Code: MIT (see README.md).")
#: the words the PDF adds around the site's pages, per edition (the Korean site: _build/html/ko)
TEXTS = {
    "en": {"chapter": "Chapter {n}", "entry": "Chapter {n}. {title}", "contents": "Contents",
           "subtitle": "How machine-learning code runs on accelerators", "licence": LICENCE,
           "printed": "Printed {date} from the built website (<code>make pdf</code>); every number and figure "
                      "computed by labsim."},
    "ko": {"chapter": "{n}장", "entry": "{n}장. {title}", "contents": "차례",
           "subtitle": "머신러닝 코드가 가속기에서 어떻게 실행되는가",
           "licence": "글과 그림: CC BY 4.0 (크리에이티브 커먼즈 저작자표시 4.0 국제, "
                      "https://creativecommons.org/licenses/by/4.0/; LICENSE-text 참고). 코드: MIT (README.md 참고).",
           "printed": "{date}에 빌드한 웹사이트에서 인쇄했습니다 (<code>make pdf</code>). 모든 수치와 그림은 labsim이 "
                      "계산했습니다."},
}

# Run in each page: wait for the figures, number the chapter, turn each animation into a strip of frames.
PREPARE_JS = r"""
async ([chapter, pageWidth, chapterLabel]) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const plots = () => Array.from(document.querySelectorAll('.labsim-plot'));
  const t0 = Date.now();
  while (Date.now() - t0 < 60000) {
    if (window.Plotly && plots().every((p) => p.querySelector('.main-svg'))) break;
    if (!plots().length && document.readyState === 'complete') break;
    await sleep(100);
  }
  const undrawn = plots().filter((p) => !p.querySelector('.main-svg')).length;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  if (document.fonts && document.fonts.ready) { await document.fonts.ready; }
  const h1 = document.querySelector('article h1, main h1, h1');
  if (chapter && h1) {
    const p = document.createElement('p');
    p.className = 'labsim-print-chapter';
    p.textContent = chapterLabel.replace('{n}', chapter);
    h1.parentNode.insertBefore(p, h1);
  }
  let shrunk = 0;  /* a figure wider than the printed page is zoomed to fit (the page has no scroll bar) */
  for (const gd of plots()) {
    const w = gd._fullLayout && gd._fullLayout.width;
    if (w && w > pageWidth) { gd.style.zoom = String(pageWidth / w); shrunk += 1; }
  }
  let strips = 0;
  for (const step of Array.from(document.querySelectorAll('input.labsim-anim-step'))) {
    let root = step;
    while (root && !(root.querySelector && root.querySelector('.labsim-plot') && root !== step)) root = root.parentElement;
    if (!root) continue;
    const gd = root.querySelector('.labsim-plot');
    const text = root.querySelector('.labsim-anim-text');
    const n = +step.max + 1, start = step.value;
    const keys = Array.from(new Set([0, Math.round((n - 1) / 3), Math.round(2 * (n - 1) / 3), n - 1]));
    const strip = document.createElement('div');
    strip.className = 'labsim-print-strip';
    for (const k of keys) {
      step.value = String(k);
      step.dispatchEvent(new Event('input', {bubbles: true}));
      await sleep(350);
      const w = (gd._fullLayout && gd._fullLayout.width) || 700, h = (gd._fullLayout && gd._fullLayout.height) || 400;
      const url = await window.Plotly.toImage(gd, {format: 'png', width: w, height: h, scale: 1.5});
      const fig = document.createElement('figure');
      const img = document.createElement('img');
      img.src = url;
      img.alt = text ? text.textContent : ('step ' + (k + 1));
      const cap = document.createElement('figcaption');
      cap.textContent = text ? text.textContent : ('step ' + (k + 1) + ' of ' + n);
      fig.appendChild(img); fig.appendChild(cap); strip.appendChild(fig);
    }
    step.value = start;
    step.dispatchEvent(new Event('input', {bubbles: true}));
    gd.classList.add('labsim-print-animated');
    gd.parentNode.insertBefore(strip, gd.nextSibling);
    strips += 1;
  }
  await Promise.all(Array.from(document.images).map((im) => im.complete ? null :
    new Promise((r) => { im.onload = im.onerror = r; })));
  return {plots: plots().length, undrawn: undrawn, strips: strips,
          title: h1 ? h1.textContent.replace(/#$/, '').trim() : document.title};
}
"""


def toc_pages(repo: Path = REPO, edition: str = "en") -> list[tuple[str, str | None]]:
    """The site's pages in the order of ``_toc.yml`` (the Korean edition's: written by
    ``labsim_ko_build.py``): (file without suffix, its part's caption)."""
    import yaml

    path = repo / "_toc.yml" if edition == "en" else repo / "_build" / "ko-config" / "_toc.yml"
    toc = yaml.safe_load(path.read_text(encoding="utf-8"))
    pages: list[tuple[str, str | None]] = [(toc["root"], None)]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            pages.append((ch["file"], part.get("caption")))
    return pages


def chapter_number(file: str) -> int | None:
    m = re.match(r"chapters/(\d+)_", file)
    return int(m.group(1)) if m else None


def chromium_path() -> str:
    for cand in (os.environ.get("LABSIM_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser")):
        if cand and Path(cand).exists():
            return cand
    raise SystemExit("labsim_pdf: no Chromium at /usr/bin/chromium (or $LABSIM_CHROMIUM): apt-get install chromium")


def _esc(s: str) -> str:
    return html.escape(s, quote=True)


FRONT_CSS = """
@page { size: A4; margin: 16mm 14mm 18mm 14mm; }
body { font-family: 'Noto Serif', 'DejaVu Serif', 'Noto Serif CJK KR', 'Noto Sans CJK KR', serif; color: #000; }
.title { height: 240mm; display: flex; flex-direction: column; justify-content: center; page-break-after: always; }
.title h1 { font-size: 34pt; margin: 0 0 8mm 0; } .title .sub { font-size: 15pt; color: #333; }
.title .meta { margin-top: 30mm; font-size: 10.5pt; color: #333; line-height: 1.5; }
h2 { font-size: 20pt; } .part { font-weight: bold; margin: 5mm 0 1mm 0; font-size: 11pt; }
.row { display: flex; font-size: 11pt; margin: 1mm 0 1mm 4mm; }
.row .t { flex: 1; border-bottom: 1px dotted #999; margin-right: 2mm; } .row .n { min-width: 10mm; text-align: right; }
"""


def title_html(title: str, subtitle: str, author: str, date: str, edition: str = "en") -> str:
    words = TEXTS[edition]
    return (f'<section class="title"><h1>{_esc(title)}</h1><div class="sub">{_esc(subtitle)}</div>'
            f'<div class="meta">{_esc(author)}<br>{words["printed"].format(date=date)}<br><br>'
            f'{_esc(words["licence"])}</div></section>')


def contents_html(entries: list[tuple[str | None, str, int]], edition: str = "en") -> str:
    """The contents: (part caption, entry text, page number) in order."""
    out, part = [f"<h2>{_esc(TEXTS[edition]['contents'])}</h2>"], object()
    for cap, text, page in entries:
        if cap != part and cap:
            out.append(f'<div class="part">{_esc(cap)}</div>')
        part = cap
        out.append(f'<div class="row"><span class="t">{_esc(text)}</span><span class="n">{page}</span></div>')
    return "\n".join(out)


def _doc(body: str, lang: str = "en") -> str:
    return (f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><style>{FRONT_CSS}</style></head>"
            f"<body>{body}</body></html>")


def numbers_pdf(page, n: int, label: str) -> bytes:
    """An n-page PDF, blank but for each page's number in its footer, to stamp on the merged book."""
    page.set_content(_doc("<div style='page-break-after:always;height:1px'></div>" * (n - 1) + "<div></div>"))
    footer = (f"<div style='width:100%;font-size:8pt;color:#444;text-align:center;font-family:serif'>"
              f"{_esc(label)} · <span class='pageNumber'></span></div>")
    return page.pdf(format="A4", margin=MARGIN, display_header_footer=True, header_template="<span></span>",
                    footer_template=footer, print_background=False)


def print_site(site: Path, pages, log=print, edition: str = "en") -> list[dict]:
    """Print each page of the site; returns per page: file, part, title, chapter number, pdf bytes."""
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        ctx = browser.new_context(viewport={"width": VIEWPORT_W, "height": 1200}, reduced_motion="reduce")
        page = ctx.new_page()
        for file, part in pages:
            t0 = time.perf_counter()
            path = site / f"{file}.html"
            if not path.exists():
                raise SystemExit(f"labsim_pdf: {path} is missing: build the site first (make book)")
            page.goto(path.resolve().as_uri(), wait_until="load", timeout=120_000)
            num = chapter_number(file)
            info = page.evaluate(PREPARE_JS, [num, PAGE_W, TEXTS[edition]["chapter"]])
            if info["undrawn"]:
                raise SystemExit(f"labsim_pdf: {file}: {info['undrawn']} of {info['plots']} figures were never drawn")
            page.add_style_tag(path=str(PRINT_CSS))
            page.emulate_media(media="print")
            pdf = page.pdf(format="A4", margin=MARGIN, scale=SCALE, print_background=True,
                           prefer_css_page_size=False)
            page.emulate_media(media="screen")
            out.append({"file": file, "part": part, "title": info["title"], "chapter": num, "pdf": pdf})
            log(f"{file:<28} {info['plots']:>3} figures, {info['strips']} animations as strips  "
                f"{time.perf_counter() - t0:5.1f} s")
        browser.close()
    return out


def build(site: Path, out: Path, log=print, edition: str = "en") -> tuple[int, int]:
    """Print the site into one PDF at ``out``; returns (pages, bytes)."""
    import yaml
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    words = TEXTS[edition]
    conf = REPO / "_config.yml" if edition == "en" else REPO / "_build" / "ko-config" / "_config.yml"
    cfg = yaml.safe_load(conf.read_text(encoding="utf-8"))
    printed = print_site(site, toc_pages(REPO, edition), log=log, edition=edition)
    readers = [PdfReader(io.BytesIO(p["pdf"])) for p in printed]

    def entry(p):
        return words["entry"].format(n=p["chapter"], title=p["title"]) if p["chapter"] else p["title"]

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        date = time.strftime("%Y-%m-%d")
        page.set_content(_doc(title_html(cfg.get("title", "The labsim book"), words["subtitle"],
                                         cfg.get("author", ""), date, edition), edition))
        title = page.pdf(format="A4", margin=MARGIN)
        n_contents = 1
        for _ in range(3):  # the contents' own length moves every page number: settle it
            first = 1 + len(PdfReader(io.BytesIO(title)).pages) + n_contents
            starts, at = [], first
            for r in readers:
                starts.append(at)
                at += len(r.pages)
            entries = [(p["part"], entry(p), s) for p, s in zip(printed, starts)]
            page.set_content(_doc(contents_html(entries, edition), edition))
            page_pdf = page.pdf(format="A4", margin=MARGIN)
            got = len(PdfReader(io.BytesIO(page_pdf)).pages)
            if got == n_contents:
                break
            n_contents = got
        total = at - 1
        stamps = PdfReader(io.BytesIO(numbers_pdf(page, total, cfg.get("title", "The labsim book"))))
        browser.close()

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(title)))
    writer.append(PdfReader(io.BytesIO(page_pdf)))
    writer.add_outline_item(words["contents"], len(writer.pages) - n_contents)
    for p, r, s in zip(printed, readers, starts):
        writer.append(r)
        writer.add_outline_item(entry(p), s - 1)
    assert len(writer.pages) == total, (len(writer.pages), total)
    for i, pg in enumerate(writer.pages):
        if i:  # the title page has no number
            pg.merge_page(stamps.pages[i])
            pg.compress_content_streams()  # merging leaves the page's content uncompressed (24 MiB, not 6)
    writer.add_metadata({"/Title": cfg.get("title", "The labsim book"), "/Author": cfg.get("author", ""),
                         "/Subject": words["licence"], "/Lang": edition})
    writer.compress_identical_objects()
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        writer.write(f)
    return total, out.stat().st_size


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=str(REPO / "_build" / "html"))
    ap.add_argument("--out", default=None, help="default: _build/pdf/labsim-book.pdf (-ko.pdf for --edition ko)")
    ap.add_argument("--edition", choices=tuple(TEXTS), default="en")
    args = ap.parse_args(argv)
    site = Path(args.site)
    if args.edition == "ko" and site == REPO / "_build" / "html":
        site = site / "ko"
    args.out = args.out or str(REPO / "_build" / "pdf" / ("labsim-book.pdf" if args.edition == "en" else
                                                          "labsim-book-ko.pdf"))
    if not (site / "index.html").exists() and not (site / "book" / "intro.html").exists():
        raise SystemExit(f"labsim_pdf: no built site at {site}: run make book first")
    t0 = time.perf_counter()
    pages, size = build(site, Path(args.out), edition=args.edition)
    print(f"{args.out}: {pages} pages, {size / 2**20:.1f} MiB in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
