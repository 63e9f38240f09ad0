"""The live face's plot: a Plotly chart in a small widget of labsim's own that ``Plotly.react`` redraws.

Why not Plotly's ``FigureWidget``: its page side applies a change with ``Plotly.restyle`` and
``Plotly.relayout`` (each redraws what it touches, then the page sends the whole changed figure back to
the kernel). For chapter 7's drawing of an SM, whose shapes change with the chip, that took about
120–160 ms in Chromium on this project's 2-core machine; ``Plotly.react`` with the same figure took
50–65 ms (it compares the new figure with the one drawn and redraws only what differs).

How it works: the kernel sends the page the first figure whole (the widget's ``figure`` state), then,
for each move of a control, one message with only what changed: for each trace, its top-level
properties whose values differ; for the layout, likewise (a key set to null is removed). When the
number or kinds of the traces change, the traces are sent whole. The page applies the message to its
copy of the figure and calls ``Plotly.react`` once. Nothing is sent back.

plotly.js comes from the installed ``plotly`` package (so it works offline), once per page: the page
code is a small ES module (``anywidget``); the first plot of a page that has no plotly.js of that version
asks its kernel for it (one message of about 4.8 MB) and loads it as a script, and every later plot of
the page uses it. (Plotly's ``FigureWidget`` sends its whole bundle, plotly.js inside, with every widget,
and the page evaluates it again each time: a chapter with nine live figures sent 44 MB.)
"""
from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

_RENDER = r"""
const VERSION = %(version)s;

// plotly.js, loaded once per page: asked of the kernel through the first widget that needs it
function loadPlotly(model) {
  const g = globalThis;
  if (g.Plotly && g.Plotly.version === VERSION) return Promise.resolve(g.Plotly);
  if (!g.__labsimPlotly) {
    g.__labsimPlotly = new Promise((resolve, reject) => {
      const onMsg = (msg) => {
        if (!msg || msg.kind !== "labsim-plotly") return;
        model.off("msg:custom", onMsg);
        const url = URL.createObjectURL(new Blob([msg.source], { type: "text/javascript" }));
        const script = Object.assign(document.createElement("script"), { src: url });
        script.onload = () => { URL.revokeObjectURL(url); resolve(g.Plotly); };
        script.onerror = () => { g.__labsimPlotly = null; reject(new Error("plotly.js did not load")); };
        document.head.appendChild(script);
      };
      model.on("msg:custom", onMsg);
      model.send({ kind: "labsim-need-plotly" });
      setTimeout(() => { if (!(g.Plotly && g.Plotly.version === VERSION)) {
        model.off("msg:custom", onMsg); g.__labsimPlotly = null;
        reject(new Error("plotly.js did not arrive from the kernel in 30 s")); } }, 30000);
    });
  }
  return g.__labsimPlotly;
}

function patched(obj, changes) {  // a new object: obj with each changed key set (null: removed)
  const out = Object.assign({}, obj);
  for (const [k, v] of Object.entries(changes || {})) { if (v === null) delete out[k]; else out[k] = v; }
  return out;
}

function initialize({ model }) {
  model.on("msg:custom", (msg) => {
    if (!msg || msg.kind !== "labsim-plot-change") return;
    const fig = model.get("figure");
    const data = msg.data ? msg.data
      : fig.data.map((t, i) => (msg.traces && msg.traces[i] && Object.keys(msg.traces[i]).length) ? patched(t, msg.traces[i]) : t);
    model.set("figure", { data, layout: patched(fig.layout, msg.layout) });  // the page's copy only
  });
}

function render({ model, el }) {
  const div = document.createElement("div");
  div.className = "labsim-plotwidget";
  el.appendChild(div);
  let drawn = 0, Plotly = null, gone = false;
  const draw = () => {
    if (!Plotly || gone) return null;
    // Plotly writes into what it is given (a resize deletes layout.height): it gets shallow copies,
    // so the model's figure stays as the kernel sent it (arrays are shared: unchanged ones compare equal)
    const f = model.get("figure");
    const layout = Object.assign({}, f.layout);
    div.style.height = layout.height ? layout.height + "px" : "";  // as Plotly's own HTML: the height is the div's
    return Plotly.react(div, f.data.map((t) => Object.assign({}, t)), layout, model.get("config"))
      .then(() => { drawn += 1; div.dataset.labsimDrawn = String(drawn); })
      .catch((e) => console.error("labsim plot:", e));
  };
  loadPlotly(model).then((P) => { Plotly = P; draw(); }).catch((e) => {
    div.textContent = "This figure needs its kernel: " + e.message + ". Run the cell again.";
  });
  const onChange = () => { draw(); };
  model.on("change:figure", onChange);
  let width = 0;  // refit when the width of the page's column changes (the plot's own height changes do not count)
  const resize = new ResizeObserver((entries) => {
    const w = Math.round(entries[0].contentRect.width);
    if (!w || w === width) return;
    const first = width === 0;
    width = w;
    if (!first && Plotly && div._fullLayout) Plotly.Plots.resize(div);
  });
  resize.observe(el);
  return () => { gone = true; model.off("change:figure", onChange); resize.disconnect(); if (Plotly) Plotly.purge(div); };
}

export default { initialize, render };
"""


def _equal(a, b) -> bool:
    """Deep equality of plain figure JSON (dicts, lists, NumPy arrays, scalars)."""
    if type(a) is not type(b):
        if hasattr(a, "shape") or hasattr(b, "shape"):
            import numpy as np
            return np.asarray(a).shape == np.asarray(b).shape and bool(np.array_equal(a, b))
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if hasattr(a, "shape"):
        import numpy as np
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return a == b


def _changes(old: dict, new: dict, keep=("type", "uid")) -> dict:
    """The top-level keys of ``new`` whose values differ from ``old``'s, and ``old``'s keys that ``new``
    lacks (as None, which resets them); a key with an empty dict counts as absent."""
    out = {k: v for k, v in new.items() if k not in keep and (k not in old or not _equal(old[k], v))
           and not (k not in old and _empty(v))}
    out.update({k: None for k in old if k not in new and k not in keep and not _empty(old[k])})
    return out


def _empty(v) -> bool:
    """An empty container, drawn as its absence (a figure whose title was moved to the caption keeps
    ``title: {}``; sending it made the page relayout the first move for nothing)."""
    return isinstance(v, dict) and not v


def plain(v: Any) -> Any:
    """Figure JSON as plain JSON values: NumPy arrays and scalars to lists and numbers, tuples to lists,
    NaN and infinities to null (as Plotly's own JSON encoder writes them)."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if hasattr(v, "tolist"):  # NumPy arrays and scalars
        return plain(v.tolist())
    if hasattr(v, "isoformat"):
        return v.isoformat()
    raise TypeError(f"a figure value of type {type(v).__name__} cannot be sent to the page: {v!r:.80}")


def figure_json(fig) -> dict:
    """``{"data": [...], "layout": {...}}`` of a Plotly figure, as plain JSON (read without Plotly's
    validators: the figure was validated when it was made)."""
    if not (hasattr(fig, "_data") and hasattr(fig, "_layout")):
        from ..support.errors import ArgumentError
        raise ArgumentError(f"live plot: expected a Plotly figure, got {type(fig).__name__}: {fig!r:.80}")
    return {"data": plain(list(fig._data)), "layout": plain(dict(fig._layout))}


@functools.lru_cache(maxsize=1)
def plotly_js() -> tuple[str, str]:
    """plotly.js from the installed ``plotly`` package: (version, source)."""
    import plotly

    src = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    version = src.split("plotly.js v", 1)[1].split()[0] if "plotly.js v" in src[:200] else ""
    return version, src


@functools.lru_cache(maxsize=1)
def _esm() -> str:
    import json

    return _RENDER % {"version": json.dumps(plotly_js()[0])}


@functools.lru_cache(maxsize=1)
def widget_class():
    """The widget class (made on first use: it needs ``anywidget``, and its page code is plotly.js)."""
    import anywidget
    import traitlets

    class PlotWidget(anywidget.AnyWidget):
        """A Plotly chart that :meth:`change_to` redraws in place (see the module's docstring)."""

        _esm = _esm()
        figure = traitlets.Dict().tag(sync=True)
        config = traitlets.Dict().tag(sync=True)

        def __init__(self, fig, config: dict | None = None, **kw) -> None:
            super().__init__(figure=figure_json(fig), config=dict(config or {}), **kw)
            self.sent: list[dict] = []  # the change messages, the newest last (kept: the last 4)
            self.on_msg(self._from_page)

        def _from_page(self, _widget, content, _buffers) -> None:
            """The page's one request: plotly.js, for a page that has none of this version yet."""
            if isinstance(content, dict) and content.get("kind") == "labsim-need-plotly":
                self.send({"kind": "labsim-plotly", "source": plotly_js()[1]})

        def change_to(self, fig) -> dict:
            """Draw ``fig`` in place of the figure shown; returns the message sent ({} if nothing changed)."""
            new, old = figure_json(fig), self.figure
            msg: dict[str, Any] = {}
            kinds = [t.get("type", "scatter") for t in new["data"]]
            if kinds != [t.get("type", "scatter") for t in old["data"]]:
                msg["data"] = new["data"]
            else:
                traces = [_changes(o, n) for o, n in zip(old["data"], new["data"])]
                if any(traces):
                    msg["traces"] = traces
            layout = _changes(old["layout"], new["layout"])
            if layout:
                msg["layout"] = layout
            if not msg:
                return {}
            msg["kind"] = "labsim-plot-change"
            self.send(msg)
            # the kernel's state follows without a second message, for a page that asks for it again
            self._trait_values["figure"] = new
            self.sent = [*self.sent[-3:], msg]
            return msg

    return PlotWidget
