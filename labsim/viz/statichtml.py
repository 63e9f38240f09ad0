"""The static face's HTML: a figure's controls, its embedded JSON (every combination of control values
precomputed) and the script that switches between them in the page. Used by :mod:`labsim.viz.faces`.

The script draws the figure of the current control values with ``Plotly.react`` and sets, for the same
key, the caption under the figure (``payload["captions"]``) and the plot's ``aria-label`` (the alt text,
``payload["alts"]``). The caption (a ``<figcaption>`` after the script) does not exist yet when the
script runs, so it is looked up at each draw.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import html
import json
import numbers
import uuid
from typing import Any, Mapping, Sequence


_SCRIPT = """
<script>
(function () {
  var root = document.getElementById(%(id)s);
  var data = JSON.parse(root.querySelector("script.labsim-data").textContent);
  var plot = root.querySelector(".labsim-plot");
  var ctls = Array.prototype.slice.call(root.querySelectorAll(".labsim-control"));
  var config = {responsive: true, displayModeBar: false};
  function val(c) { return (c.tagName === "INPUT" || c.tagName === "SELECT") ? c.value : c.dataset.value; }
  function key() { return ctls.map(val).join("_"); }
  function caption() {  /* the <figcaption> follows this script: look it up when drawing, not before */
    var box = root.closest(".labsim-figure-box");
    return box && box.querySelector("figcaption .labsim-caption-text");
  }
  function draw() {
    var k = key();
    if (!data.figures[k]) k = data.initial;
    var f = data.figures[k], cap = caption();
    /* the Plotly template every state shares is stored once (page weight), put back before drawing */
    if (data.template && f.layout && !f.layout.template) f.layout.template = data.template;
    ctls.forEach(function (c, i) {
      var out = root.querySelector('output[data-param="' + c.dataset.param + '"]');
      if (out) out.textContent = data.labels[i][+val(c)];
      Array.prototype.forEach.call(c.querySelectorAll("button"), function (b) {
        b.setAttribute("aria-pressed", b.dataset.index === c.dataset.value ? "true" : "false");
      });
    });
    if (cap && data.captions && k in data.captions) cap.innerHTML = data.captions[k];
    if (data.alts && k in data.alts) plot.setAttribute("aria-label", data.alts[k]);
    if (f.frames) {  /* an animation: its own controls (labsim.viz.animhtml) hear when its frames are in */
      window.Plotly.newPlot(plot, f.data, f.layout, config).then(function () {
        return window.Plotly.addFrames(plot, f.frames);
      }).then(function () { root.dispatchEvent(new CustomEvent("labsim:drawn", {detail: k})); });
    }
    else { window.Plotly.react(plot, f.data, f.layout, config); }
  }
  ctls.forEach(function (c) {
    c.addEventListener(c.tagName === "SELECT" ? "change" : "input", draw);
    Array.prototype.forEach.call(c.querySelectorAll("button"), function (b) {
      b.addEventListener("click", function () { c.dataset.value = b.dataset.index; draw(); });
    });
  });
  if (window.Plotly) draw(); else window.addEventListener("load", draw);
})();
</script>
"""

#: a categorical control with at most this many values is a row of toggle buttons; more make a dropdown
TOGGLE_MAX = 4
CONTROL_KINDS = ("slider", "toggle", "select")


def control_kind(values: Sequence[Any], kind: str | None = None) -> str:
    """How a control is drawn: "slider" for numbers (ordered), "toggle" for a few categories (strings,
    booleans), "select" (a dropdown) for many. ``kind`` overrides, e.g. "slider" for ordered names."""
    if kind is not None:
        if kind not in CONTROL_KINDS:
            raise ArgumentError(f"control kind {kind!r} is not one of {CONTROL_KINDS}")
        return kind
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)
    if numeric:
        return "slider"
    return "toggle" if len(values) <= TOGGLE_MAX else "select"


def _control_html(fid: str, name: str, label: str, value_labels: Sequence[str], idx: int, kind: str) -> str:
    n, lab = html.escape(name), html.escape(label)
    cid = f"{fid}-{n}"
    head = f'<label class="labsim-control-label" for="{cid}">{lab}</label>'
    if kind == "slider":
        ticks = "".join(f'<option value="{i}"></option>' for i in range(len(value_labels)))
        width = max(len(v) for v in value_labels)
        body = (f'<input type="range" id="{cid}" class="labsim-control labsim-slider" data-param="{n}" min="0" '
                f'max="{len(value_labels) - 1}" step="1" value="{idx}" list="{cid}-ticks" aria-label="{lab}">'
                f'<datalist id="{cid}-ticks">{ticks}</datalist>'
                f'<output class="labsim-readout" data-param="{n}" for="{cid}" style="min-width:{width + 1}ch">'
                f'{html.escape(value_labels[idx])}</output>')
    elif kind == "toggle":
        head = f'<span class="labsim-control-label" id="{cid}-label">{lab}</span>'
        buttons = "".join(
            f'<button type="button" data-index="{i}" aria-pressed="{"true" if i == idx else "false"}">'
            f"{html.escape(v)}</button>" for i, v in enumerate(value_labels))
        body = (f'<div class="labsim-control labsim-toggle" role="group" aria-labelledby="{cid}-label" '
                f'data-param="{n}" data-value="{idx}">{buttons}</div>')
    else:
        opts = "".join(f'<option value="{i}"{" selected" if i == idx else ""}>{html.escape(v)}</option>'
                       for i, v in enumerate(value_labels))
        body = f'<select id="{cid}" class="labsim-control labsim-select" data-param="{n}">{opts}</select>'
    return f'<div class="labsim-control-row labsim-kind-{kind}">{head}<div class="labsim-control-body">{body}</div></div>'


def min_width(fig) -> int | None:
    """The narrowest width (CSS px) a figure may be drawn at, if it says (``layout.meta["min_width"]``:
    a drawing whose labels would otherwise shrink under 11 px). Narrower pages scroll it sideways."""
    meta = fig.layout.meta if fig.layout.meta is not None else None
    return int(meta["min_width"]) if isinstance(meta, dict) and meta.get("min_width") else None


def _static_html(figures: Mapping[str, str], initial: str, alt: str, controls: Sequence[tuple] = (), *,
                 captions: Mapping[str, str] | None = None, alts: Mapping[str, str] | None = None,
                 name: str | None = None, min_px: int | None = None, height: int | None = None,
                 anim: Mapping[str, Any] | None = None) -> str:
    """``controls``: (param name, label, value labels, initial index, kind) per control; ``captions``:
    the caption (HTML) per figure key, shown under the figure with its number (book/_ext numbers it);
    ``alts``: the alt text per figure key (else ``alt`` for every key). A figure with controls embeds
    both per key in its JSON payload, and the page's script shows the pair of the key drawn. ``anim``
    (an animation, :mod:`labsim.viz.animhtml`): ``label``, ``ms``, ``ease``, ``steps`` and ``start`` per
    key; its play, step and slider controls are drawn under the plot, outside its ``role="img"``."""
    fid = "lsfig-" + uuid.uuid4().hex[:10]
    kind = "interactive" if controls else "static"
    ctl = ""
    if controls:
        ctl = ('<div class="labsim-controls">'
               + "".join(_control_html(fid, *c) for c in controls) + "</div>")
    labels = [list(c[2]) for c in controls]
    caps = dict(captions or {})
    alts = {k: str(v) for k, v in (alts or {}).items()}
    alt = alts.get(initial, alt)
    texts = ""
    if controls or len(set(caps.values())) > 1:
        texts += ', "captions": ' + json.dumps(caps)
    if controls or len(set(alts.values())) > 1:
        texts += ', "alts": ' + json.dumps(alts or {k: alt for k in figures})
    if anim:
        texts += ', "anim": ' + json.dumps(dict(anim))
    figures, template = _shared_template(figures)
    if template is not None:
        texts += ', "template": ' + template
    payload = ('{"initial": ' + json.dumps(initial) + ', "labels": ' + json.dumps(labels)
               + texts).replace("</", "<\\/") + (', "figures": {' + ", ".join(
                   f"{json.dumps(k)}: {v}" for k, v in figures.items()) + "}}")
    plot = (f'<div class="labsim-plot" role="img" aria-label="{html.escape(alt)}" '
            f'style="width:100%;min-height:{int(height or 300)}px{f";min-width:{min_px}px" if min_px else ""}"></div>')
    if min_px:  # a wide drawing keeps its size and scrolls sideways, with the book's scroll cue
        plot = f'<div class="labsim-scroll-frame"><div class="labsim-scroll">{plot}</div></div>'
    chrome, anim_script = "", ""
    if anim:
        from .animhtml import ANIM_SCRIPT, anim_controls, step_text
        names, start = anim["steps"][initial], anim["start"][initial]
        chrome = anim_controls(fid, anim["label"], len(names), start,
                               step_text(anim["label"], names[start], start, len(names)))
        anim_script = ANIM_SCRIPT % {"id": json.dumps(fid)}
    body = (f'<div class="labsim-figure" id="{fid}" data-labsim-kind="{kind}">{ctl}{plot}{chrome}'
            f'<script type="application/json" class="labsim-data">{payload}</script>'
            + anim_script + _SCRIPT % {"id": json.dumps(fid)} + "</div>")
    return _figure_wrap(body, caps.get(initial, ""), name)


def _shared_template(figures: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
    """Take the Plotly template out of every figure's JSON when all the figures of a control set share it,
    and return it once (the page's script puts it back before drawing). A figure's states repeated the
    same template (about 7 kB) once per state: half of a page's weight on the pages with most states."""
    if len(figures) < 2:
        return dict(figures), None
    parsed = {k: json.loads(v) for k, v in figures.items()}
    temps = {json.dumps((f.get("layout") or {}).get("template"), sort_keys=True) for f in parsed.values()}
    if len(temps) != 1 or temps == {"null"}:
        return dict(figures), None
    template = None
    for f in parsed.values():
        template = f["layout"].pop("template")
    out = {k: json.dumps(f, separators=(",", ":")).replace("</", "<\\/") for k, f in parsed.items()}
    return out, json.dumps(template, separators=(",", ":")).replace("</", "<\\/")


def _figure_wrap(body: str, caption: str, name: str | None) -> str:
    """``body`` in a numbered ``<figure>``: the caption's "Figure" is numbered at build time (book/_ext),
    "Figure 5.3", and ``name`` (an id) makes it referable from the text with {figref}`name`."""
    ident = f' id="{html.escape(name)}"' if name else ""
    if not caption:
        return f'<figure class="labsim-figure-box"{ident}>{body}</figure>'
    cap = (f'<figcaption class="labsim-caption"><span class="labsim-fignum" data-name="{html.escape(name or "")}">'
           f'Figure</span> <span class="labsim-caption-text">{caption}</span></figcaption>')
    return f'<figure class="labsim-figure-box"{ident}>{body}{cap}</figure>'
