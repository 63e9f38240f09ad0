"""Captions and alt texts follow their figures: computed from the control values drawn, on every face.

* Live face (JupyterLab): moving a control through its ipywidgets sets the caption and the alt text
  shown under the figure to the strings computed for the new values (figures and animations).
* Static face (the website): every figure with controls embeds one caption and one alt text per
  combination of control values; the page's script shows the pair of the combination drawn
  (``tests/test_browser.py`` checks that in Chromium).
* The chapters: every ``viz.interactive`` / ``viz.animate`` call gives ``caption=`` and ``alt=`` as
  functions of the controls (checked in the sources), and in the built site every figure with controls
  has captions and alt texts that change with them (checked in the embedded JSON, no browser needed).
"""
from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

import plotly.graph_objects as go
import pytest

import labsim.viz as lv
from conftest import ROOT, SITE, built_pages, missing


def _bars(chip, n):
    return go.Figure(go.Bar(x=list(range(n)), y=[len(chip)] * n))


def _caption(chip, n):
    return f"{lv.plural(n, 'bar')} for the {chip}"


def _alt(chip, n):
    return f"Bar chart of {lv.plural(n, 'bar')}, each as tall as the {chip}'s name is long."


def _hidden_text(value: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", value)).strip()


def test_live_face_caption_and_alt_follow_the_controls():
    pytest.importorskip("ipywidgets")
    fig = lv.interactive(_bars, {"chip": ["H100", "A100", "TPU v5e"], "n": [1, 2, 3]}, alt=_alt, caption=_caption)
    fig.widget
    assert _hidden_text(fig.caption_widget.value) == "Figure. " + _caption("A100", 2)
    assert _hidden_text(fig.alt_widget.value) == _alt("A100", 2)
    for name, value in (("n", 1), ("chip", "TPU v5e"), ("n", 3)):
        before = (fig.caption_widget.value, fig.alt_widget.value)
        fig.controls[name].value = value  # what the reader's slider or toggle does
        want = {**fig.params, name: value}
        assert fig.params == want
        assert _hidden_text(fig.caption_widget.value) == "Figure. " + html.escape(_caption(**want)).replace(
            "&#x27;", "'")
        assert _hidden_text(fig.alt_widget.value) == _alt(**want)
        assert (fig.caption_widget.value, fig.alt_widget.value) != before
    assert _hidden_text(fig.caption_widget.value) == "Figure. 3 bars for the TPU v5e"
    assert "1 bar " in _caption("H100", 1) and "1 bars" not in _caption("H100", 1)


def test_live_face_of_an_animation_caption_and_alt_follow_the_controls():
    pytest.importorskip("ipywidgets")

    def frames(n):
        return [go.Figure(go.Bar(x=list(range(n)), y=[t + 1] * n)) for t in range(3)]

    a = lv.animate(frames, {"n": [1, 2, 4]}, alt=lambda n: f"{lv.plural(n, 'bar')} growing",
                   caption=lambda n: f"{lv.plural(n, 'bar')}, step by step")
    a.widget
    assert _hidden_text(a.caption_widget.value) == "Figure. 2 bars, step by step"
    a.controls["n"].value = 1
    assert _hidden_text(a.caption_widget.value) == "Figure. 1 bar, step by step"
    assert _hidden_text(a.alt_widget.value) == "1 bar growing"
    a.step_slider.value = 2  # a step changes neither
    assert _hidden_text(a.alt_widget.value) == "1 bar growing"


def _payload(page: str) -> dict:
    m = re.search(r'<script type="application/json" class="labsim-data">(.*?)</script>', page, re.S)
    assert m, "no embedded figure data"
    return json.loads(m.group(1))


def test_static_face_embeds_a_caption_and_an_alt_per_combination(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    controls = {"chip": ["H100", "A100"], "n": [1, 2, 3]}
    fig = lv.interactive(_bars, controls, alt=_alt, caption=_caption)
    page = fig.to_html()
    data = _payload(page)
    assert set(data["captions"]) == set(data["alts"]) == set(data["figures"]) and len(data["figures"]) == 6
    for i, chip in enumerate(controls["chip"]):
        for j, n in enumerate(controls["n"]):
            assert data["alts"][f"{i}_{j}"] == _alt(chip, n)
            assert html.unescape(data["captions"][f"{i}_{j}"]) == _caption(chip, n)
    # the page opens on the default values, with their alt text and caption
    assert f'aria-label="{html.escape(_alt("A100", 2))}"' in page
    assert html.escape(_caption("A100", 2)) in page
    # the script looks the caption up when it draws (the <figcaption> comes after the script)
    script = page[page.index("<script>"):]
    assert 'closest(".labsim-figure-box")' in script and 'setAttribute("aria-label"' in script


def test_static_face_of_an_animation_embeds_alts(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")

    def frames(n):
        return [go.Figure(go.Bar(x=list(range(n)), y=[t + 1] * n)) for t in range(3)]

    a = lv.animate(frames, {"n": [1, 2]}, alt=lambda n: f"{lv.plural(n, 'bar')} growing",
                   caption=lambda n: f"{lv.plural(n, 'bar')}, step by step")
    data = _payload(a.to_html())
    assert data["alts"] == {"0": "1 bar growing", "1": "2 bars growing"}
    assert data["captions"] == {"0": "1 bar, step by step", "1": "2 bars, step by step"}


# ---- the chapters' sources: every figure with controls has computed caption and alt ----------------

#: calls that make a figure with controls; a library helper that computes its own caption per step
#: (pass_slider: the pass's title) is checked in the built site only
FIGURE_CALLS = {"interactive", "animate"}
PAGES = sorted(ROOT.glob("chapters/[0-9]*.md")) + [ROOT / "chapters/_template.md", ROOT / "book/how-to-run.md"]


def _code(path: Path) -> list[tuple[int, str]]:
    """(first line, source) of every python code block of a MyST page (``{code-cell}`` and ```` ```python ````)."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^```(?:\{code-cell\}\s*ipython3|python)[^\n]*\n(.*?)^```", text, re.S | re.M):
        body = re.sub(r"^:[a-z_]+:.*$", "", m.group(1), flags=re.M)  # cell options, kept as blank lines
        out.append((text[:m.start()].count("\n") + 2, body))
    return out


def _library_function(node: ast.AST) -> bool:
    """``viz.tpu.systolic_caption``: an attribute chain from ``viz`` that names a function of labsim.viz."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "viz" and parts):
        return False
    obj = lv
    for part in reversed(parts):
        obj = getattr(obj, part, None)
    return callable(obj)


def _function_valued(node: ast.AST, defined: set[str]) -> bool:
    return (isinstance(node, ast.Lambda) or (isinstance(node, ast.Name) and node.id in defined)
            or _library_function(node))


def figure_call_problems(path: Path) -> list[str]:
    """Each ``viz.interactive``/``viz.animate`` call of ``path`` whose caption or alt is missing or is not
    a function (a lambda, or the name of a function the page defines)."""
    problems = []
    for line, src in _code(path):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue  # a listing that is not meant to run
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        defined |= {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda)
                    for t in n.targets if isinstance(t, ast.Name)}
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name not in FIGURE_CALLS and not name.endswith("_animation"):
                continue
            kw = {k.arg: k.value for k in call.keywords}
            # an animation without controls (no second argument) may have fixed texts; it still needs them
            controls = len(call.args) > 1 or "controls" in kw or name == "interactive" or name.endswith("_animation")
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line + call.lineno - 1}"
            # a library helper (viz.tpu.systolic_animation) computes its alt text from its controls itself
            for arg in ("caption",) if name.endswith("_animation") else ("caption", "alt"):
                if arg not in kw:
                    problems.append(f"{where}: {name}(...) has no {arg}=")
                elif controls and not _function_valued(kw[arg], defined):
                    problems.append(f"{where}: {name}(...)'s {arg}= is not a function of the controls")
    return problems


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_figures_with_controls_compute_caption_and_alt(path):
    problems = figure_call_problems(path)
    assert not problems, "\n".join(problems)


def test_the_source_check_can_fail(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("```{code-cell} ipython3\n"
                    "def alt(n):\n    return f'{n}'\n"
                    "viz.interactive(f, {'n': [1, 2]}, alt=alt, caption=lambda n: f'{n}')\n"
                    "viz.interactive(f, {'n': [1, 2]}, alt=alt, caption='fixed')\n"
                    "viz.animate(f, {'n': [1, 2]}, alt='fixed')\n"
                    "viz.animate(f, alt='fixed', caption='fixed')\n"
                    "viz.tpu.systolic_animation()\n```\n", encoding="utf-8")
    problems = [p.split(": ", 1)[1] for p in figure_call_problems(page)]
    assert problems == ["interactive(...)'s caption= is not a function of the controls",
                        "animate(...) has no caption=", "animate(...)'s alt= is not a function of the controls",
                        "systolic_animation(...) has no caption="], problems


# ---- the built site: every figure with controls has captions and alts that change with them --------

def payload_problems(page_html: str) -> list[str]:
    """For every figure with controls in a built page: a numbered caption, and a caption and an alt text
    per combination of control values that are not the same for every combination. For an animation
    without controls: a numbered caption."""
    problems = []
    for box in re.finditer(r'<figure class="labsim-figure-box"[^>]*>(.*?)</figure>', page_html, re.S):
        body = box.group(1)
        m = re.search(r'<div class="labsim-figure" id="([^"]+)" data-labsim-kind="(\w+)">.*?'
                      r'<script type="application/json" class="labsim-data">(.*?)</script>', body, re.S)
        if not m:
            continue
        fid, kind, data = m.group(1), m.group(2), json.loads(m.group(3))
        numbered = 'class="labsim-fignum"' in body
        if kind != "interactive":
            if any("frames" in f for f in data["figures"].values()) and not numbered:
                problems.append(f"animation {fid} has no numbered caption")
            continue
        if not numbered:
            problems.append(f"figure {fid}: no numbered caption")
        for what, texts in (("caption", data.get("captions") or {}), ("alt text", data.get("alts") or {})):
            if set(texts) != set(data["figures"]) or not all(texts.values()):
                problems.append(f"figure {fid}: no {what} for some combinations of control values")
            elif len(set(texts.values())) < 2:
                problems.append(f"figure {fid}: the {what} is the same for every control value: "
                                f"{next(iter(texts.values()))[:60]!r}")
    return problems


def test_payload_check_can_fail(monkeypatch):
    monkeypatch.setenv("LABSIM_BOOK", "1")
    good = lv.interactive(_bars, {"chip": ["H100", "A100"], "n": [1, 2]}, alt=_alt, caption=_caption).to_html()
    fixed = lv.interactive(_bars, {"chip": ["H100", "A100"], "n": [1, 2]}, alt="bars", caption="Bars").to_html()
    untitled = lv.animate(lambda: [go.Figure(go.Bar(y=[1])), go.Figure(go.Bar(y=[2]))], alt="bars").to_html()
    assert payload_problems(good) == []
    got = payload_problems(fixed)
    assert len(got) == 2 and "caption is the same" in got[0] and "alt text is the same" in got[1], got
    got = payload_problems(untitled)
    assert len(got) == 1 and got[0].endswith("has no numbered caption"), got


def _site_pages(prefixes) -> list[str]:
    return [p for p in built_pages() if p.startswith(prefixes)]


@pytest.mark.book
@pytest.mark.parametrize("page", _site_pages(("chapters/", "book/")) or ["(no built site)"])
def test_built_figures_have_captions_and_alts_that_follow_the_controls(page):
    if not (SITE / page).is_file():
        missing("the book is not built (make book)")
    problems = payload_problems((SITE / page).read_text(encoding="utf-8"))
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)
