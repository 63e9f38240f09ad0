"""Build the Korean edition into ``_build/html/ko`` from ``ko/`` (issue 25), after the English build.

    LABSIM_BOOK=1 python book/_ext/labsim_ko_build.py        # make book runs it after the English site

``ko/`` mirrors the English tree (``chapters/X.md`` → ``ko/chapters/X.md``, ``book/Y.md`` →
``ko/book/Y.md``) and each Korean page's code cells are the English page's (``tests/test_korean.py``).
This script writes the Korean edition's Jupyter Book configuration from the English one
(``_config.yml``, ``_toc.yml``), so there is one configuration to maintain: the language is ``ko``, the
execution cache is the English build's (``_build/.jupyter_cache``: identical code cells hit it, so no
chapter runs twice), labsim's Korean renditions of figures and tables come first
(``nb_mime_priority_overrides``, :mod:`labsim.viz.mystnb_ko`), and the table of contents keeps the
pages that exist in Korean, with Korean part captions. The site is built into ``_build/ko`` and copied
to ``_build/html/ko``, where every page's language switch (``book/_ext/labsim_lang.py``) points.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
KO = ROOT / "ko"
OUT = ROOT / "_build" / "ko"
CONF = ROOT / "_build" / "ko-config"
KO_MIME = "application/vnd.labsim.ko+html"
TITLE = "labsim 책"
CAPTIONS = {"Start here": "시작하기", "The journey": "여정", "Counting and the roofline": "세기와 루프라인",
            "Compilers": "컴파일러", "Inside the machines": "기계의 안쪽", "Many chips and serving": "여러 칩과 서빙",
            "Looking ahead": "앞으로", "Reference": "참고 자료"}
FOOTER = ('<p>글과 그림: <a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>. 코드: MIT.</p>\n')


def config(english: dict) -> dict:
    c = dict(english)
    c["title"] = TITLE
    c["execute"] = {**c.get("execute", {}), "cache": str(ROOT / "_build" / ".jupyter_cache")}
    c["bibtex_bibfiles"] = [str(ROOT / b) for b in c.get("bibtex_bibfiles", [])]
    c["html"] = {**c.get("html", {}), "extra_footer": FOOTER}
    sphinx = dict(c.get("sphinx", {}))
    sphinx["local_extensions"] = {k: str(ROOT / v) for k, v in sphinx.get("local_extensions", {}).items()}
    sphinx["config"] = {**sphinx.get("config", {}), "language": "ko",
                        "nb_mime_priority_overrides": [["html", KO_MIME, 1]]}
    c["sphinx"] = sphinx
    return c


def toc(english: dict) -> dict:
    """The English table of contents with the pages that exist in Korean and Korean part captions."""
    t = {"format": english["format"], "root": english["root"], "parts": []}
    for part in english.get("parts", []):
        chapters = [c for c in part.get("chapters", []) if (KO / f"{c['file']}.md").exists()]
        if chapters:
            t["parts"].append({"caption": CAPTIONS.get(part.get("caption"), part.get("caption")),
                               "chapters": chapters})
    return t


def main(argv: list[str]) -> int:
    english_conf = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    english_toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    if not (KO / f"{english_toc['root']}.md").exists():
        print(f"labsim_ko_build: no ko/{english_toc['root']}.md, so no Korean edition to build", file=sys.stderr)
        return 1
    CONF.mkdir(parents=True, exist_ok=True)
    (CONF / "_config.yml").write_text(yaml.safe_dump(config(english_conf), allow_unicode=True, sort_keys=False),
                                      encoding="utf-8")
    (CONF / "_toc.yml").write_text(yaml.safe_dump(toc(english_toc), allow_unicode=True, sort_keys=False),
                                   encoding="utf-8")
    jb = Path(sys.executable).with_name("jb")
    start = time.time()
    cmd = [str(jb), "build", str(KO), "--config", str(CONF / "_config.yml"), "--toc", str(CONF / "_toc.yml"),
           "--path-output", str(OUT), *argv]
    rc = subprocess.call(cmd, cwd=ROOT, env={**os.environ, "LABSIM_BOOK": "1"})
    if rc:
        return rc
    target = ROOT / "_build" / "html" / "ko"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(OUT / "_build" / "html", target)
    print(f"built the Korean edition in {time.time() - start:.0f} s: open _build/html/ko/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["-W", "--keep-going"]))
