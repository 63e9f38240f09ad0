"""The round trip of a live widget in JupyterLab, measured in the page: from the reader's input event
(a key on a slider, a click on a toggle, a choice in a dropdown) to the figure redrawn.

The round trip starts at the event that changes the control: ``keydown`` for a slider's arrow key,
``click`` for a toggle button (a button acts when it is released), ``input``/``change`` for a dropdown.
A press (``pointerdown``) comes before a click; on the first press in a cell JupyterLab makes that
cell the active one (about 70–90 ms on this 2-core machine, in JupyterLab's own code: selecting the
cell, placing the editor's cursor, styling), while the reader still holds the button. That time is
measured too, from the press, and reported beside the round trip (``press_ms``), not in it.

In the page, ``arm(i)`` watches widget ``i`` (a top-level ``widget-vbox`` holding a Plotly plot): a
capturing listener takes the time of the first input event (``event.timeStamp``), and a
MutationObserver on the widget compares the plot's data and layout after each change of the DOM; when
they differ from before the input (and a plot is there: an Output being redrawn has none for a
while), the next animation frame (the redraw painted) ends the round trip.
A move that changes nothing in the plot within 3 s is counted as unchanged, not timed.

Used by tests/test_lab_widgets.py and benchmarks/bench_lab_widgets.py.
"""
from __future__ import annotations

import math

from _lab_browser import ERRORS, close_chapter, open_chapter, run_all

_BOXES = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-OutputArea-output .widget-vbox'))
    .filter(b => b.querySelector('.js-plotly-plot') && !b.parentElement.closest('.widget-vbox'))"""

_SETUP = """() => {
  window.__lwBoxes = %s;
  window.__lwSig = (box) => {  // the Plotly graph div (the innermost .js-plotly-plot that Plotly drew)
    const gd = Array.from(box.querySelectorAll('.js-plotly-plot')).filter(g => g._fullLayout).pop();
    return gd ? JSON.stringify([gd.data, gd.layout]) : ''; };
  window.__lwArm = (i, limitMs) => {
    const box = window.__lwBoxes()[i];
    const before = window.__lwSig(box);
    let t0 = null, press = null, done = false;
    const mark = (e) => { if (!box.contains(e.target)) return;
      if (e.type === 'pointerdown') { if (press === null) press = e.timeStamp; } else if (t0 === null) t0 = e.timeStamp; };
    const kinds = ['keydown', 'pointerdown', 'click', 'change', 'input'];
    kinds.forEach(k => window.addEventListener(k, mark, true));
    window.__lwResult = new Promise(resolve => {
      const finish = (v) => { if (done) return; done = true; obs.disconnect();
        kinds.forEach(k => window.removeEventListener(k, mark, true)); resolve(v); };
      const obs = new MutationObserver(() => {
        const now = window.__lwSig(box);  // '' while an Output redraw has no plot yet: not drawn
        if (done || t0 === null || !now || now === before) return;
        requestAnimationFrame(() => { const now = performance.now();
          finish({ms: now - t0, press_ms: now - (press === null ? t0 : press)}); });
      });
      obs.observe(box, {subtree: true, childList: true, attributes: true, characterData: true});
      setTimeout(() => finish(null), limitMs);
    });
  };
  const boxes = window.__lwBoxes();
  boxes.forEach((b, i) => b.setAttribute('data-labsim-lw', String(i)));
  return boxes.length;
}""" % _BOXES

_CONTROLS = """(i) => {
  const box = window.__lwBoxes()[i];
  const out = [];
  box.querySelectorAll('.widget-dropdown select').forEach((s, k) => out.push({kind: 'dropdown', k, n: s.options.length}));
  box.querySelectorAll('.widget-toggle-buttons').forEach((t, k) => out.push({kind: 'toggle', k,
      n: t.querySelectorAll('.widget-toggle-button').length}));
  box.querySelectorAll('.noUi-handle').forEach((h, k) => out.push({kind: 'slider', k,
      n: Math.round(+h.getAttribute('aria-valuemax') - +h.getAttribute('aria-valuemin')) + 1}));
  return out;
}"""

_LABEL = """(i) => { const box = window.__lwBoxes()[i];
  const d = Array.from(box.querySelectorAll('.widget-label')).map(l => l.innerText.trim()).filter(Boolean);
  return d.join(', ').slice(0, 60); }"""


#: how long a click holds the button down (ms): a reader's click takes about a tenth of a second
PRESS_MS = 100


def _move(page, i: int, ctl: dict, j: int) -> None:
    """The reader's input on control ``ctl`` of widget ``i``: move ``j`` of several (forth, then back)."""
    box = page.locator(f'[data-labsim-lw="{i}"]')
    if ctl["kind"] == "dropdown":
        sel = box.locator(".widget-dropdown select").nth(ctl["k"])
        opts = sel.locator("option").all_inner_texts()
        cur = sel.evaluate("s => s.selectedIndex")
        sel.select_option(index=(cur + 1) % len(opts))
    elif ctl["kind"] == "toggle":
        group = box.locator(".widget-toggle-buttons").nth(ctl["k"])
        buttons = group.locator(".widget-toggle-button")
        active = [k for k in range(buttons.count()) if "mod-active" in (buttons.nth(k).get_attribute("class") or "")]
        button = buttons.nth(((active[0] if active else 0) + 1) % buttons.count())
        button.scroll_into_view_if_needed()
        box_ = button.bounding_box()
        page.mouse.move(box_["x"] + box_["width"] / 2, box_["y"] + box_["height"] / 2)
        page.mouse.down()  # a reader's click: pressed, held about a tenth of a second, released
        page.wait_for_timeout(PRESS_MS)
        page.mouse.up()
    else:
        handle = box.locator(".noUi-handle").nth(ctl["k"])
        now, top = float(handle.get_attribute("aria-valuenow")), float(handle.get_attribute("aria-valuemax"))
        low = float(handle.get_attribute("aria-valuemin"))
        key = "ArrowRight" if (j // 3) % 2 == 0 and now < top or now <= low else "ArrowLeft"
        handle.focus()
        page.keyboard.press(key)


#: moves of each widget at least (spread over its controls): the 95th percentile of 20 is the 19th
#: slowest, so one move that met a hiccup of the machine (another process, a collection) is not the p95
SAMPLES = 20


def measure_chapter(page, rel: str, moves: int = 4, limit_ms: int = 3000, top_level_only: bool = True,
                    samples: int = SAMPLES):
    """Open ``rel``, run all, then move every control of every live widget ``moves`` times, or more: each
    widget is moved at least ``samples`` times in all.

    Returns (rows, errors): one row per widget, ``(label, times_ms, unchanged, press_times_ms)``
    (from the input event, and from the press where there is one), and the error outputs of the
    chapter (none expected)."""
    open_chapter(page, rel)
    finished = run_all(page)
    page.wait_for_timeout(1500)
    errors = page.evaluate(ERRORS) + ([] if finished else [f"{rel}: cells still running after Run All's limit"])
    rows = []
    n = page.evaluate(_SETUP)
    for i in range(n):
        page.evaluate(f"(i) => {_BOXES}()[i].scrollIntoView()", i)
        label = page.evaluate(_LABEL, i) or f"widget {i + 1}"
        times, presses, unchanged = [], [], 0
        controls = [c for c in page.evaluate(_CONTROLS, i) if c["n"] >= 2]
        per_control = max(moves, math.ceil(samples / max(1, len(controls))))
        plan = [(ctl, j) for ctl in controls for j in range(per_control)]
        k = 0
        # a move that redraws nothing (a value whose figure is the same) is not timed: move on, round
        # the controls again, until the widget has ``samples`` timed moves (at most twice that many moves)
        while k < len(plan) or (len(times) < samples and controls and k < 2 * max(samples, len(plan))):
            ctl, j = plan[k] if k < len(plan) else (controls[k % len(controls)], per_control + k // len(controls))
            k += 1
            page.evaluate("([i, l]) => window.__lwArm(i, l)", [i, limit_ms])
            _move(page, i, ctl, j)
            got = page.evaluate("() => window.__lwResult")
            if got is None:
                unchanged += 1
            else:
                times.append(got["ms"])
                presses.append(got["press_ms"])
        rows.append((label, times, unchanged, presses))
    close_chapter(page)
    return rows, errors


def pct(xs, q: float) -> float:
    """The q-th percentile (nearest rank) of ``xs``; NaN for none."""
    if not xs:
        return math.nan
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]
