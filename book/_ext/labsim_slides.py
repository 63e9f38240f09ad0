"""One PDF deck per chapter for a lecturer: ``make slides`` runs this file after ``make print``.

    python book/_ext/labsim_slides.py [--print _build/print] [--out _build/slides] [chapter ...]

``make print`` (book/_ext/labsim_print.py) draws every figure of every chapter with matplotlib into
``_build/print/<chapter>/fig-N.{pdf,png}`` (``fig-N.gif`` for an animation) and lists them, with their
numbers and captions, in ``_build/print/<chapter>/index.md``. This file turns each chapter's list into
``_build/slides/<chapter>.pdf``: a title slide (the chapter's number and title), then one 16:9 slide per
figure, in the book's order, with its number ("Figure 3.1") as the slide's title, the figure, and its
caption under it. An animation's slide shows a strip of key frames (first, two between, last) taken
from its GIF; a figure without a caption in the book gets "Chapter N, unnumbered figure".
"""
from __future__ import annotations

import argparse
import re
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SLIDE_IN = (13.333, 7.5)  # 16:9, as presentation programs make it
ROW = re.compile(r"^\| (?P<files>.+?) \| (?P<label>[^|]+?) \| (?P<caption>.*) \|$")


def read_index(folder: Path) -> list[dict]:
    """The figures a chapter's ``index.md`` lists: files (name → path), label and caption."""
    out = []
    for line in (folder / "index.md").read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m or not line.startswith("| ["):
            continue
        files = {Path(n).suffix: folder / n for n in re.findall(r"\]\(([^)]+)\)", m.group("files"))}
        out.append({"files": files, "label": m.group("label").strip(), "caption": m.group("caption").strip()})
    return out


def chapter_folders(print_dir: Path, names: list[str]) -> list[Path]:
    """The chapters ``_build/print/index.md`` lists, in its order (or only those named)."""
    index = print_dir / "index.md"
    if not index.exists():
        raise SystemExit(f"labsim_slides: no {index}: run make print first")
    stems = re.findall(r"^- \[([^\]]+)\]", index.read_text(encoding="utf-8"), flags=re.M)
    if names:
        wanted = [s for s in stems if s in names or s.split("_")[0] in names]
        missing = [n for n in names if not any(s == n or s.split("_")[0] == n for s in stems)]
        if missing:
            raise SystemExit(f"labsim_slides: no chapter {missing} in {index}; it lists {stems}")
        stems = wanted
    return [print_dir / s for s in stems]


def chapter_title(stem: str) -> str:
    """"Chapter 3: Processors and the roofline" from the chapter's first heading."""
    for src in (REPO / "chapters" / f"{stem}.md", REPO / "book" / f"{stem}.md"):
        if src.exists():
            m = re.search(r"^# (.+)$", src.read_text(encoding="utf-8"), flags=re.M)
            head = m.group(1).strip() if m else stem
            num = re.match(r"(\d+)_", stem)
            return f"Chapter {int(num.group(1))}: {head}" if num else head
    return stem


def key_frames(gif: Path, n: int = 4):
    """Up to ``n`` frames of a GIF, evenly spread from the first to the last: (RGB array, "step i of m")."""
    import numpy as np
    from PIL import Image, ImageSequence

    with Image.open(gif) as im:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)]
    m = len(frames)
    picks = sorted({round(i * (m - 1) / (n - 1)) for i in range(n)}) if m > n else range(m)
    return [(frames[i], f"step {i + 1} of {m}") for i in picks]


def _image(path: Path):
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def slide(pdf, title: str, images: list, caption: str, footer: str) -> None:
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=SLIDE_IN, dpi=100)
    fig.text(0.04, 0.93, title, fontsize=24, weight="bold", va="center")
    n = len(images)
    cols = 1 if n == 1 else 2
    rows = (n + cols - 1) // cols
    top, bottom = 0.87, 0.17
    h = (top - bottom) / rows
    w = 0.92 / cols
    for i, (img, name) in enumerate(images):
        r, c = divmod(i, cols)
        ax = fig.add_axes((0.04 + c * w, top - (r + 1) * h, w * 0.98, h * 0.93))
        ax.imshow(img, interpolation="antialiased")
        ax.set_axis_off()
        if name:
            ax.set_title(name, fontsize=11, color="#333")
    fig.text(0.04, 0.12, "\n".join(textwrap.wrap(caption, 130)[:3]), fontsize=14, va="top")
    fig.text(0.96, 0.025, footer, fontsize=10, ha="right", color="#555")
    pdf.savefig(fig)
    plt.close(fig)


def title_slide(pdf, title: str, n: int) -> None:
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=SLIDE_IN, dpi=100)
    fig.text(0.06, 0.58, title, fontsize=32, weight="bold", wrap=True)
    fig.text(0.06, 0.45, f"{n} figure{'' if n == 1 else 's'}, one per slide, drawn by labsim (make print)",
             fontsize=16, color="#333")
    fig.text(0.06, 0.08, "The labsim book. Text and figures: CC BY 4.0; code: MIT.", fontsize=11, color="#555")
    pdf.savefig(fig)
    plt.close(fig)


def build_deck(folder: Path, out: Path) -> int:
    """Write one chapter's deck; returns its number of slides (the title slide included)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_pdf import PdfPages

    figures = read_index(folder)
    title = chapter_title(folder.name)
    num = re.match(r"(\d+)_", folder.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    with PdfPages(out, metadata={"Title": f"{title}: figures", "Author": "The labsim book authors"}) as pdf:
        title_slide(pdf, title, len(figures))
        for k, f in enumerate(figures, 1):
            if ".gif" in f["files"]:
                images = key_frames(f["files"][".gif"])
            elif ".png" in f["files"]:
                images = [(_image(f["files"][".png"]), "")]
            else:
                raise SystemExit(f"labsim_slides: {folder}/index.md lists a figure without a PNG or GIF: {f}")
            label = f["label"] if f["label"].startswith("Figure") else (
                f"Chapter {int(num.group(1))}, unnumbered figure" if num else "Unnumbered figure")
            caption = "" if f["caption"] == "(no caption)" else f["caption"]
            slide(pdf, label, images, caption, f"{title} · slide {k + 1}")
    return len(figures) + 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--print", dest="print_dir", default=str(REPO / "_build" / "print"))
    ap.add_argument("--out", default=str(REPO / "_build" / "slides"))
    ap.add_argument("chapters", nargs="*")
    args = ap.parse_args(argv)
    t0, total = time.perf_counter(), 0
    for folder in chapter_folders(Path(args.print_dir), args.chapters):
        n = build_deck(folder, Path(args.out) / f"{folder.name}.pdf")
        total += n
        print(f"{folder.name:<20} {n:>3} slides", flush=True)
    print(f"{total} slides in {time.perf_counter() - t0:.0f} s: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
