"""The static face of an animation: its play, step and slider controls as real HTML, outside the plot.

Plotly's own animation buttons and slider are drawn inside the plot's SVG, which the page marks
``role="img"``: a keyboard cannot reach them and a screen reader does not see them, they sit on the axis
titles of a narrow figure, and a long step label is cut at the figure's edge. The animation's controls are
therefore a row of HTML under the plot (:func:`anim_controls`):

- a Play/Pause button, "Back" and "Next" buttons (one step each) (``<button>``: Tab, Space and Enter);
- a step slider (``<input type="range">``: arrow keys, Home, End) whose ``aria-valuetext`` is the step's
  label;
- a line of text, ``aria-live="polite"``, that says which step is shown ("cycle 12 (3 of 24)"); a screen
  reader reads it at each step.

The script (:data:`ANIM_SCRIPT`) moves between the Plotly frames of the figure drawn with
``Plotly.animate`` (a short eased transition when playing or stepping, none when the reader prefers
reduced motion), and swallows the promise Plotly rejects when a new step interrupts the last one (it
printed ``Uncaught (in promise) undefined`` on every pause). It learns of each new figure (a control moved)
from the ``labsim:drawn`` event the figure's own script sends (:mod:`labsim.viz.statichtml`), stops playing
and shows that figure's opening step.

The payload's ``anim`` entry: ``label`` (the step slider's name, "cycle"), ``ms`` (time per step when
playing), ``ease`` (the transition's length), ``steps`` (per figure key, the labels of its steps) and
``start`` (per figure key, the step the figure opens on).
"""
from __future__ import annotations

import html

#: the transition between two steps (ms): long enough to see what moved, shorter than a step
EASE_MS = 260

_ROW = "display:flex;flex-wrap:wrap;align-items:center;gap:.4em .6em;margin:.4em 0 .2em"
_BUTTON = ("font:inherit;font-size:.95em;min-height:2.2em;min-width:2.6em;padding:.15em .7em;border:1px solid #888;"
           "border-radius:4px;background:#fff;color:#222;cursor:pointer")
_TEXT = "margin:.1em 0 .3em;font-size:.92em;color:inherit;min-height:1.3em;overflow-wrap:anywhere"


def anim_controls(fid: str, label: str, n: int, start: int, first_text: str) -> str:
    """The animation's controls (see the module docstring) for a figure ``fid`` of ``n`` steps that opens
    on step ``start``; ``first_text`` is the step text shown before the script runs."""
    lab = html.escape(label)
    sid = f"{fid}-step"
    return (f'<div class="labsim-anim" role="group" aria-label="Animation controls ({lab})" style="{_ROW}">'
            f'<button type="button" class="labsim-anim-play" style="{_BUTTON}"><span aria-hidden="true">&#9654;</span> '
            f'<span class="labsim-anim-play-text">Play</span></button>'
            f'<button type="button" class="labsim-anim-back" style="{_BUTTON}">'
            f'<span aria-hidden="true">&#9664;</span> Back</button>'
            f'<button type="button" class="labsim-anim-next" style="{_BUTTON}">Next '
            f'<span aria-hidden="true">&#9654;</span></button>'
            f'<label for="{sid}" class="labsim-anim-label" style="font-size:.92em">{lab}</label>'
            f'<input type="range" id="{sid}" class="labsim-anim-step" min="0" max="{max(n - 1, 0)}" step="1" '
            f'value="{start}" aria-valuetext="{html.escape(first_text)}" '
            f'style="flex:1 1 8em;min-width:8em;min-height:2.2em;margin:0">'
            f'</div>'
            f'<p class="labsim-anim-text" aria-live="polite" aria-atomic="true" style="{_TEXT}">'
            f'{html.escape(first_text)}</p>')


def step_text(label: str, name: str, i: int, n: int) -> str:
    """The live line's text for step ``i`` (from 0) of ``n``, as the script writes it."""
    return f"{label}: {name} ({i + 1} of {n})"


ANIM_SCRIPT = """
<script>
(function () {
  var root = document.getElementById(%(id)s);
  var data = JSON.parse(root.querySelector("script.labsim-data").textContent);
  var a = data.anim, plot = root.querySelector(".labsim-plot");
  var play = root.querySelector(".labsim-anim-play"), playText = root.querySelector(".labsim-anim-play-text");
  var back = root.querySelector(".labsim-anim-back"), next = root.querySelector(".labsim-anim-next");
  var range = root.querySelector(".labsim-anim-step"), text = root.querySelector(".labsim-anim-text");
  var still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  var names = [], i = 0, timer = null, ready = false;
  /* the words the script writes, in the page's language (labsim.support.i18n translates the payload) */
  var words = Object.assign({play: "Play", pause: "Pause", count: "%%1 of %%2"}, a.words || {});
  function quiet(p) { if (p && typeof p.catch === "function") p.catch(function () {}); }
  function say() {
    var n = names.length, t = a.label + ": " + names[i] + " (" + words.count.replace("%%1", i + 1).replace("%%2", n) + ")";
    range.max = String(Math.max(n - 1, 0)); range.value = String(i);
    range.setAttribute("aria-valuetext", t);
    text.textContent = t;
    /* aria-disabled, not disabled: a disabled button drops the keyboard focus the reader just used */
    back.setAttribute("aria-disabled", i <= 0 ? "true" : "false");
    next.setAttribute("aria-disabled", i >= n - 1 ? "true" : "false");
  }
  function show(k, ease) {
    if (!names.length) return;
    i = Math.max(0, Math.min(names.length - 1, k)); say();
    if (!ready) return;
    var t = ease && !still ? Math.min(a.ease, a.ms) : 0;
    quiet(window.Plotly.animate(plot, [String(i)], {mode: "immediate", frame: {duration: t, redraw: true},
                                                    transition: {duration: t, easing: "cubic-in-out"}}));
  }
  function stop() {
    if (timer) { clearTimeout(timer); timer = null; }
    playText.textContent = words.play; play.firstChild.textContent = "\\u25b6";
  }
  function tick() {
    if (i >= names.length - 1) { stop(); return; }
    show(i + 1, true);
    timer = setTimeout(tick, a.ms);
  }
  play.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (i >= names.length - 1) show(0, false);
    playText.textContent = words.pause; play.firstChild.textContent = "\\u275a\\u275a";
    timer = setTimeout(tick, still ? a.ms : Math.min(a.ms, 250));
  });
  back.addEventListener("click", function () { stop(); show(i - 1, true); });
  next.addEventListener("click", function () { stop(); show(i + 1, true); });
  range.addEventListener("input", function () { stop(); show(+range.value, false); });
  root.addEventListener("labsim:drawn", function (e) {
    stop();
    names = a.steps[e.detail] || [];
    ready = true;
    i = (a.start && e.detail in a.start) ? a.start[e.detail] : 0;
    say();
  });
})();
</script>
"""
