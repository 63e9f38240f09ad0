"""Several texts side by side as tabs (IR dumps of one function, for example).

``tabs({"jaxpr": text, "HLO": text2})`` shows one tab per entry. The HTML works offline: a few lines of
inline JavaScript turn the panels into tabs, and without JavaScript (or where a notebook does not run
scripts in outputs) the panels stay stacked, each under its own heading, so nothing is hidden.

HTML contract (tested by ``tests/test_viz.py``): a ``div.labsim-tabs`` holding one
``section.labsim-tab-panel`` per entry, in order, each with an ``h4.labsim-tab-label`` and the panel's
content (text in a ``pre``, or the HTML of an object that has ``_repr_html_``). The script adds a
``div.labsim-tablist`` (``role="tablist"``) of ``button`` elements (``role="tab"``) and hides every
panel but the chosen one.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import html
import json
import uuid
from typing import Any, Mapping

_SCRIPT = """<script>
(function () {
  var root = document.getElementById(%(id)s);
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var panels = Array.prototype.slice.call(root.querySelectorAll(":scope > section.labsim-tab-panel"));
  var bar = document.createElement("div");
  bar.className = "labsim-tablist";
  bar.setAttribute("role", "tablist");
  bar.style.cssText = "display:flex;flex-wrap:wrap;gap:2px;border-bottom:1px solid #999;margin-bottom:.3em";
  var buttons = panels.map(function (p, i) {
    var b = document.createElement("button");
    b.type = "button";
    b.setAttribute("role", "tab");
    b.id = p.id + "-tab";
    b.setAttribute("aria-controls", p.id);
    b.textContent = p.querySelector(".labsim-tab-label").textContent;
    b.style.cssText = "border:1px solid #999;border-bottom:none;padding:.2em .8em;cursor:pointer;font:inherit";
    b.addEventListener("click", function () { pick(i); });
    b.addEventListener("keydown", function (e) {
      var j = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : null;
      if (j !== null) { pick((j + panels.length) %% panels.length); buttons[(j + panels.length) %% panels.length].focus(); }
    });
    bar.appendChild(b);
    p.setAttribute("role", "tabpanel");
    p.setAttribute("aria-labelledby", b.id);
    p.querySelector(".labsim-tab-label").style.display = "none";
    return b;
  });
  function pick(k) {
    panels.forEach(function (p, i) {
      p.hidden = i !== k;
      buttons[i].setAttribute("aria-selected", i === k ? "true" : "false");
      buttons[i].tabIndex = i === k ? 0 : -1;
      buttons[i].style.background = i === k ? "#0072B2" : "transparent";
      buttons[i].style.color = i === k ? "#fff" : "inherit";
    });
  }
  root.insertBefore(bar, panels[0]);
  pick(%(initial)d);
})();
</script>"""


def _panel_html(content: Any) -> str:
    if hasattr(content, "_repr_html_"):
        return content._repr_html_()
    return (f'<pre style="overflow-x:auto;margin:0;white-space:pre">'
            f"{html.escape(str(content).rstrip())}</pre>")


class Tabs:
    """Labelled panels shown as tabs (see the module docstring)."""

    def __init__(self, panels: Mapping[str, Any], initial: str | None = None) -> None:
        if not panels:
            raise ArgumentError("tabs() needs at least one panel")
        self.panels = dict(panels)
        if any(not str(k).strip() for k in self.panels):
            raise ArgumentError("every tab needs a label")
        if initial is not None and initial not in self.panels:
            raise ArgumentError(f"initial tab {initial!r} is not one of {list(self.panels)}")
        self.initial = list(self.panels).index(initial) if initial is not None else 0

    def to_html(self) -> str:
        tid = "lstabs-" + uuid.uuid4().hex[:10]
        sections = "".join(
            f'<section class="labsim-tab-panel" id="{tid}-{i}">'
            f'<h4 class="labsim-tab-label" style="margin:.6em 0 .2em">{html.escape(str(label))}</h4>'
            f"{_panel_html(content)}</section>"
            for i, (label, content) in enumerate(self.panels.items()))
        return (f'<div class="labsim-tabs" id="{tid}">{sections}'
                + _SCRIPT % {"id": json.dumps(tid), "initial": self.initial} + "</div>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:  # text/plain: the stacked form
        return "\n\n".join(f"== {label} ==\n{str(c).rstrip() if not hasattr(c, '_repr_html_') else c!r}"
                           for label, c in self.panels.items())


def tabs(panels: Mapping[str, Any], *, initial: str | None = None) -> Tabs:
    """Show ``panels`` ({label: text or displayable object}) as tabs, the first (or ``initial``) open.

    Text is shown as-is in a monospaced block (an IR dump, a listing, a printed graph)."""
    return Tabs(panels, initial)
