"""Keep labsim's Korean catalog (``labsim/locales/ko/LC_MESSAGES/labsim.po``) complete (issue 25).

    python book/_ext/labsim_catalog.py missing [out.json]    # what the executed book draws that the catalog lacks
    python book/_ext/labsim_catalog.py merge part.json ...   # add translations {msgid: msgstr} to the catalog

``missing`` reads every output of the executed book (``_build/jupyter_execute``, written by ``make book``):
HTML of figures and tables, Plotly JSON, and words glued as text. It asks :func:`labsim.support.i18n.tr` for each
string in Korean and lists what the catalog lacked, as templates: each number becomes a field ``{0}``,
``{1}``, ... (the catalog matches a template whatever the numbers, so one entry serves every chip and
size). A translator gives each template its Korean, keeping every field; ``merge`` adds them.
``tests/test_korean.py`` fails when anything the book draws is missing.
"""
from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = ROOT / "_build" / "jupyter_execute"
PO = ROOT / "labsim" / "locales" / "ko" / "LC_MESSAGES" / "labsim.po"
NUM = re.compile(__import__("labsim.support.i18n", fromlist=["_NUMBER"])._NUMBER)  # the numbers a field matches


def template(text: str) -> str:
    """``text`` with each number replaced by a numbered field."""
    count = iter(range(10**6))
    return NUM.sub(lambda m: "{%d}" % next(count), text)


def missing(executed: Path = EXECUTED, lang: str = "ko") -> dict[str, list[str]]:
    """{template: [pages]} of every string the executed book draws that ``lang``'s catalog lacks."""
    sys.path.insert(0, str(ROOT))
    from labsim.support import i18n
    where: dict[str, set[str]] = collections.defaultdict(set)
    for nb in sorted(executed.rglob("*.ipynb")):
        outputs = [out for cell in json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
                   for out in cell.get("outputs", [])]
        glued = nb.with_suffix(".glue.json")  # what MyST-NB keeps of glue() outputs
        if glued.exists():
            outputs += [dict(out, data={"application/papermill.record/" + k: v for k, v in out["data"].items()})
                        for out in json.loads(glued.read_text(encoding="utf-8")).values()]
        for out in outputs:
            if True:
                for key, value in out.get("data", {}).items():
                    value = "".join(value) if isinstance(value, list) else value
                    i18n._misses.clear()
                    if key.endswith("text/html"):
                        i18n.translate_html(value, lang)
                    elif key.endswith("plotly.v1+json"):
                        i18n.translate_json(value, lang)
                    elif key.endswith("text/plain") and key.startswith("application/papermill") \
                            and value[:1] in "'\"":
                        i18n.tr(value.strip("'\""), lang)
                    for m in i18n.misses():
                        where[template(m)].add(nb.stem)
    i18n._misses.clear()
    return {t: sorted(p) for t, p in sorted(where.items())}


def merge(parts: list[Path], po: Path = PO) -> tuple[int, int]:
    """Add the translations of ``parts`` (JSON {msgid: msgstr}) to the catalog; (added, refused)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po
    if po.exists():
        with open(po, "rb") as f:
            cat = read_po(f, locale="ko")
    else:
        cat = Catalog(locale="ko", project="labsim", version="0.1.0", charset="utf-8")
    added = refused = 0
    for part in parts:
        for msgid, msgstr in json.loads(Path(part).read_text(encoding="utf-8")).items():
            fields = sorted(re.findall(r"\{\w+\}", msgid))
            if not msgstr or sorted(re.findall(r"\{\w+\}", msgstr)) != fields:
                refused += 1
                continue
            if msgid in cat:  # Catalog.add keeps an existing entry's old string: replace it
                cat[msgid].string = msgstr
            else:
                cat.add(msgid, msgstr)
            added += 1
    po.parent.mkdir(parents=True, exist_ok=True)
    with open(po, "wb") as f:
        write_po(f, cat, width=0, sort_output=True, omit_header=False)
    return added, refused


def main(argv: list[str]) -> int:
    if argv[:1] == ["missing"]:
        found = missing()
        text = json.dumps(found, ensure_ascii=False, indent=0)
        if len(argv) > 1:
            Path(argv[1]).write_text(text, encoding="utf-8")
        print(f"{len(found)} strings the Korean catalog lacks", file=sys.stderr)
        return 0
    if argv[:1] == ["merge"] and len(argv) > 1:
        added, refused = merge([Path(a) for a in argv[1:]])
        print(f"added {added}, refused {refused} (empty, or fields that differ from the msgid's)")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
