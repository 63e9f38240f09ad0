"""Two faces of every interactive figure, written once by a chapter.

- Live (JupyterLab, or any kernel without ``LABSIM_BOOK=1``): ipywidgets controls rerun labsim and
  redraw the Plotly figure.
- Static (the website, built with ``LABSIM_BOOK=1``): the figure for every combination of control
  values is computed at build time and embedded as JSON; range sliders in the page switch between them
  with ``Plotly.react``. No kernel and no network: ``plotly.min.js`` is served from the site itself.
- Print (slides, handouts): ``Figure.save(path)`` and ``Interactive.save(path, **controls)`` draw the same
  Plotly figure with matplotlib (:mod:`labsim.viz.printface`) as SVG, PDF or PNG, the caption under it;
  ``to_matplotlib()`` gives the matplotlib Figure. With ``LABSIM_PRINT_DIR`` set (``make print``) each
  figure writes itself there when shown.

HTML contract (tested by ``tests/test_browser.py``): a ``div.labsim-figure`` with
``data-labsim-kind="static|interactive"`` holding ``input.labsim-slider`` controls (interactive only)
and a ``div.labsim-plot`` with ``role="img"`` and an ``aria-label`` (the alt text).
"""
from __future__ import annotations

import copy
import html
import itertools
import json
import math
import numbers
import os
import re
import uuid
from typing import Any, Callable, Mapping, Sequence

MAX_STATIC_FRAMES = 96


def in_book() -> bool:
    """True while the website is being built (``make book`` sets ``LABSIM_BOOK=1``)."""
    return os.environ.get("LABSIM_BOOK") == "1"


def _fig_json(fig) -> str:
    import plotly.io as pio
    return pio.to_json(fig, validate=False, remove_uids=True, pretty=False).replace("</", "<\\/")


_SCRIPT = """
<script>
(function () {
  var root = document.getElementById(%(id)s);
  var data = JSON.parse(root.querySelector("script.labsim-data").textContent);
  var plot = root.querySelector(".labsim-plot");
  var ctls = Array.prototype.slice.call(root.querySelectorAll(".labsim-control"));
  var cap = root.parentNode.querySelector(".labsim-caption-text");
  var config = {responsive: true, displayModeBar: false};
  function val(c) { return (c.tagName === "INPUT" || c.tagName === "SELECT") ? c.value : c.dataset.value; }
  function key() { return ctls.map(val).join("_"); }
  function draw() {
    var k = key(), f = data.figures[k] || data.figures[data.initial];
    ctls.forEach(function (c, i) {
      var out = root.querySelector('output[data-param="' + c.dataset.param + '"]');
      if (out) out.textContent = data.labels[i][+val(c)];
      Array.prototype.forEach.call(c.querySelectorAll("button"), function (b) {
        b.setAttribute("aria-pressed", b.dataset.index === c.dataset.value ? "true" : "false");
      });
    });
    if (cap && data.captions) cap.innerHTML = data.captions[k] || data.captions[data.initial] || "";
    if (f.frames) { window.Plotly.newPlot(plot, f.data, f.layout, config).then(function () {
      window.Plotly.addFrames(plot, f.frames); }); }
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
            raise ValueError(f"control kind {kind!r} is not one of {CONTROL_KINDS}")
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
                 captions: Mapping[str, str] | None = None, name: str | None = None,
                 min_px: int | None = None, height: int | None = None) -> str:
    """``controls``: (param name, label, value labels, initial index, kind) per control; ``captions``:
    the caption (HTML) per figure key, shown under the figure with its number (book/_ext numbers it)."""
    fid = "lsfig-" + uuid.uuid4().hex[:10]
    kind = "interactive" if controls else "static"
    ctl = ""
    if controls:
        ctl = ('<div class="labsim-controls">'
               + "".join(_control_html(fid, *c) for c in controls) + "</div>")
    labels = [list(c[2]) for c in controls]
    caps = dict(captions or {})
    payload = ('{"initial": ' + json.dumps(initial) + ', "labels": ' + json.dumps(labels).replace("</", "<\\/")
               + (', "captions": ' + json.dumps(caps).replace("</", "<\\/") if len(set(caps.values())) > 1 else "")
               + ', "figures": {' + ", ".join(f"{json.dumps(k)}: {v}" for k, v in figures.items()) + "}}")
    plot = (f'<div class="labsim-plot" role="img" aria-label="{html.escape(alt)}" '
            f'style="width:100%;min-height:{int(height or 300)}px{f";min-width:{min_px}px" if min_px else ""}"></div>')
    if min_px:  # a wide drawing keeps its size and scrolls sideways, with the book's scroll cue
        plot = f'<div class="labsim-scroll-frame"><div class="labsim-scroll">{plot}</div></div>'
    body = (f'<div class="labsim-figure" id="{fid}" data-labsim-kind="{kind}">{ctl}{plot}'
            f'<script type="application/json" class="labsim-data">{payload}</script>'
            + _SCRIPT % {"id": json.dumps(fid)} + "</div>")
    return _figure_wrap(body, caps.get(initial, ""), name)


def _figure_wrap(body: str, caption: str, name: str | None) -> str:
    """``body`` in a numbered ``<figure>``: the caption's "Figure" is numbered at build time (book/_ext),
    "Figure 5.3", and ``name`` (an id) makes it referable from the text with {figref}`name`."""
    ident = f' id="{html.escape(name)}"' if name else ""
    if not caption:
        return f'<figure class="labsim-figure-box"{ident}>{body}</figure>'
    cap = (f'<figcaption class="labsim-caption"><span class="labsim-fignum" data-name="{html.escape(name or "")}">'
           f'Figure</span> <span class="labsim-caption-text">{caption}</span></figcaption>')
    return f'<figure class="labsim-figure-box"{ident}>{body}{cap}</figure>'


def caption_from_title(fig) -> str:
    """Take a figure's Plotly title out of the figure and return it as caption HTML ("" if it had none).

    The book numbers captions in HTML ("Figure 5.3") instead of drawing titles inside the plot, where a
    modebar or legend could cover them."""
    title = fig.layout.title.text if fig.layout.title is not None else None
    if not title:
        return ""
    fig.layout.title.text = None
    m = fig.layout.margin
    if m is not None and m.t is not None and m.t > 30:
        fig.layout.margin.t = 20
    parts = re.split(r"<br\s*/?>", title)
    main = html.escape(re.sub(r"<[^>]+>", "", parts[0]).strip())
    rest = [re.sub(r"<[^>]+>", "", p).strip() for p in parts[1:]]
    rest = [html.escape(r) for r in rest if r]
    return main + (". " + " ".join(rest) if rest else "")


def _caption(caption, fig, params=None) -> str:
    """The caption HTML for one figure: the caller's (text, or a function of the control values) first,
    else the figure's own title (moved out of the plot)."""
    from_title = caption_from_title(fig)
    if caption is None:
        return from_title
    text = caption(**(params or {})) if callable(caption) else caption
    return html.escape(str(text))


#: Plotly's config for every figure of the book: no modebar (it sat on the titles and legends)
PLOTLY_CONFIG = {"displayModeBar": False, "responsive": True}


def _numbers(vals) -> list[float]:
    if vals is None or isinstance(vals, str) or not hasattr(vals, "__iter__"):
        return []
    return [float(v) for v in vals if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)]


def _extents(fig) -> dict[str, tuple[float, float, bool]]:
    """Per numeric axis of ``fig`` ("xaxis", "yaxis2", ...): (low, high, has bars) of what its traces and
    data-referenced shapes put there. Stacked bars count by their stacked totals."""
    out: dict[str, list] = {}
    barmode = fig.layout.barmode
    stacks: dict[tuple, float] = {}

    def add(key, vals, bar=False):
        vals = [v for v in vals if math.isfinite(v)]
        if not vals:
            return
        lo, hi, b = out.get(key, (math.inf, -math.inf, False))
        out[key] = (min(lo, *vals), max(hi, *vals), b or bar)

    for t in fig.data:
        axes = {"x": "xaxis" + (getattr(t, "xaxis", None) or "x")[1:], "y": "yaxis" + (getattr(t, "yaxis", None) or "y")[1:]}
        if t.type == "bar":
            val = "x" if t.orientation == "h" else "y"
            cat = "y" if val == "x" else "x"
            v = _numbers(getattr(t, val))
            base = _numbers(t.base) if t.base is not None and not isinstance(t.base, numbers.Real) else \
                [float(t.base or 0)] * len(v)
            cats = list(getattr(t, cat)) if getattr(t, cat) is not None else list(range(len(v)))
            ends = []
            for i, x in enumerate(v):
                b = base[i] if i < len(base) else 0.0
                if barmode in ("stack", "relative") and t.base is None:
                    k = (axes[val], repr(cats[i]) if i < len(cats) else i, x >= 0)
                    b = stacks.get(k, 0.0)
                    stacks[k] = b + x
                ends += [b, b + x]
            add(axes[val], ends, bar=True)
            c = sorted(set(_numbers(getattr(t, cat))))
            # a bar is drawn around its position: half the smallest gap on each side
            half = min((b - a for a, b in zip(c, c[1:])), default=1.0) / 2
            add(axes[cat], [c[0] - half, c[-1] + half] if c else [])
        elif t.type in ("scatter", "scattergl"):
            for letter in "xy":
                add(axes[letter], _numbers(getattr(t, letter)))
    for sh in fig.layout.shapes or ():
        for letter in "xy":
            ref = getattr(sh, letter + "ref", None) or letter
            if re.fullmatch(letter + r"\d*", ref):
                add("xaxis" + ref[1:] if letter == "x" else "yaxis" + ref[1:],
                    _numbers([getattr(sh, letter + "0"), getattr(sh, letter + "1")]))
    return out


def _has_strings(trace, key: str) -> bool:
    """Does ``trace`` put strings (categories) on the axis ``key``?"""
    letter = key[0]
    if (getattr(trace, letter + "axis", None) or letter) != letter + key[5:] or letter not in trace._valid_props:
        return False
    vals = getattr(trace, letter, None)
    return vals is not None and not isinstance(vals, str) and any(isinstance(v, str) for v in vals)


def axis_info(fig) -> dict:
    """What :func:`shared_ranges` needs of one figure, taken once: its extents and, per axis, the
    properties that decide whether the axis may be shared. Small and independent of the figure."""
    ext = _extents(fig)
    axes = {}
    for key in ext:
        a = fig.layout[key] if key in fig.layout else None
        if a is None:
            continue
        axes[key] = dict(fixed=a.range is not None, type=a.type, visible=a.visible, rangemode=a.rangemode,
                         reversed=a.autorange == "reversed",
                         strings=any(_has_strings(t, key) for t in fig.data))
    return {"ext": ext, "axes": axes}


def shared_ranges(figs: Sequence[Any], infos: Sequence[dict] | None = None) -> dict[str, tuple[list[float], bool]]:
    """For each numeric axis of ``figs`` that may be shared: (range, reversed) giving the union over the
    figures (see :func:`share_axes`). Reads the figures only (or their :func:`axis_info` snapshots)."""
    infos = list(infos) if infos is not None else [axis_info(f) for f in figs]
    keys = {k for i in infos for k in i["ext"]}
    out = {}
    for key in sorted(keys):
        live = [(i["axes"][key], i["ext"][key]) for i in infos if key in i["ext"] and key in i["axes"]
                and i["axes"][key]["visible"] is not False]
        if not live or any(a["fixed"] or a["type"] in ("category", "multicategory", "date") for a, _ in live):
            continue
        # a category axis Plotly infers from strings
        if any(a["strings"] for a, _ in live):
            continue
        log = {a["type"] == "log" for a, _ in live}
        if len(log) != 1:
            continue
        log = log.pop()
        lo, hi = min(e[0] for _, e in live), max(e[1] for _, e in live)
        bars = any(e[2] for _, e in live)
        if log:
            if lo <= 0:
                continue
            lo, hi = math.log10(lo), math.log10(hi)
        elif bars or any(a["rangemode"] == "tozero" for a, _ in live):
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        pad = (hi - lo) * 0.05 or (abs(hi) * 0.1 if hi else 1.0)
        lo = lo - pad if (log or lo != 0) else lo
        hi = hi + pad if (log or hi != 0) else hi
        out[key] = ([lo, hi], any(a["reversed"] for a, _ in live))
    return out


def _apply_ranges(fig, ranges) -> None:
    for key, (rng, rev) in ranges.items():
        if key in fig.layout and fig.layout[key] is not None:
            fig.layout[key].update(range=[rng[1], rng[0]] if rev else list(rng), autorange=False)


def share_axes(figs: Sequence[Any]) -> None:
    """Give the precomputed steps of an interactive figure one range per numeric axis (the union over
    the steps), so that moving a control shows the change instead of rescaling it away. An axis a step
    fixes itself (``range``), a category axis, a hidden one and a log axis with values ≤ 0 keep Plotly's
    own autorange. Changes the figures in place."""
    ranges = shared_ranges(figs)
    for f in figs:
        _apply_ranges(f, {k: v for k, v in ranges.items() if k in _extents(f)})


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def figure_problem(fig) -> str | None:
    """Why ``fig`` cannot be shown (not a Plotly figure, nothing drawn, only NaN data), or None if it can."""
    if not hasattr(fig, "to_plotly_json") or not hasattr(fig, "data"):
        return f"expected a Plotly figure, got {type(fig).__name__} {fig!r:.40}"
    layout = getattr(fig, "layout", None)
    decorated = layout is not None and any(getattr(layout, k, None) for k in ("annotations", "shapes", "images"))
    if not fig.data and not decorated:
        return "the figure is empty (no traces, annotations or shapes)"
    drawn = False  # does any trace draw at least one point (a numeric axis with no finite value draws none)?
    for t in fig.data:
        draws = True
        for key in ("x", "y", "z"):
            vals = getattr(t, key, None) if key in getattr(t, "_valid_props", {key}) else None
            if vals is None or isinstance(vals, str) or not hasattr(vals, "__iter__"):
                continue
            nums = [v for v in vals if isinstance(v, numbers.Real) and not isinstance(v, bool)]
            if nums and not any(math.isfinite(v) for v in nums):
                draws = False
        drawn = drawn or draws
    if fig.data and not drawn and not decorated:
        return "every trace's data is NaN or infinite, so nothing would be drawn"
    return None


class Figure:
    """A Plotly figure with alt text and a numbered caption. Live: Plotly's own renderer with the caption
    under it. Book: self-contained HTML in a ``<figure>``.

    ``caption``: the caption text; without one, the figure's Plotly title becomes the caption (and
    leaves the plot). ``name``: an id that makes the figure referable from the text."""

    def __init__(self, fig, alt: str, caption: str | None = None, name: str | None = None) -> None:
        if not alt:
            raise ValueError("every figure needs alt text (what a reader who cannot see it should know)")
        problem = figure_problem(fig)
        if problem:
            raise (TypeError if problem.startswith("expected") else ValueError)(f"show: {problem}")
        self.fig = fig
        self.alt = alt
        self.name = name
        self.caption = _caption(caption, fig)

    def to_matplotlib(self, *, _number: str | None = None):
        """The print face: this figure drawn with matplotlib (:mod:`labsim.viz.printface`), caption under it."""
        from .printface import to_matplotlib
        return to_matplotlib(self.fig, caption=self.caption, number=_number)

    def save(self, path, *, _number: str | None = None):
        """Write the print face (matplotlib, :mod:`labsim.viz.printface`) of this figure to ``path``: the
        format follows the suffix, .svg, .pdf or .png (anything else is a ValueError naming it). The
        caption is printed under the figure. Returns the path."""
        from .printface import check_suffix, save_matplotlib
        check_suffix(path)
        return save_matplotlib(self.to_matplotlib(_number=_number), path)

    def to_html(self) -> str:
        return _static_html({"0": _fig_json(self.fig)}, "0", self.alt, captions={"0": self.caption}, name=self.name,
                            min_px=min_width(self.fig), height=self.fig.layout.height)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if _printing(self):
            return {"text/plain": self.alt}
        if in_book():
            return {"text/html": self.to_html(), "text/plain": self.alt}
        bundle = (self.fig._repr_mimebundle_(include, exclude, config=PLOTLY_CONFIG)
                  if hasattr(self.fig, "_repr_mimebundle_") else {})
        bundle = dict(bundle or {})
        if self.caption and "text/html" in bundle:
            bundle["text/html"] += _live_caption(self.caption)
        bundle.setdefault("text/plain", self.alt)
        return bundle


def _printing(obj) -> bool:
    """With ``LABSIM_PRINT_DIR`` set (``make print``): write ``obj``'s print face there and return True
    (the caller then shows only its alt text: nothing but the print face is wanted)."""
    if not os.environ.get("LABSIM_PRINT_DIR"):
        return False
    from .printface import auto_save
    auto_save(obj)
    return True


def _live_caption(caption: str) -> str:
    return (f'<div class="labsim-caption" style="font-size:.9em;color:#444;margin:.2em 0 .8em">'
            f"<b>Figure.</b> {caption}</div>")


def show(fig, alt: str, *, caption: str | None = None, name: str | None = None) -> Figure:
    """Wrap a Plotly figure for display (both faces). ``alt`` describes it for screen readers; ``caption``
    is printed under it, numbered ("Figure 5.3"); ``name`` makes it referable: {figref}`name`."""
    return Figure(fig, alt, caption=caption, name=name)


def _live_control(w, label: str, opts, value, kind: str):
    """One ipywidgets control of the live face, drawn as the static face draws it."""
    common = dict(description=label, style={"description_width": "initial"})
    if kind == "slider":
        return w.SelectionSlider(options=opts, value=value, continuous_update=False,
                                 layout=w.Layout(width="min(100%, 40em)"), **common)
    if kind == "toggle":
        return w.ToggleButtons(options=opts, value=value, layout=w.Layout(width="auto"),
                               style={"description_width": "initial", "button_width": "auto"},
                               description=label)
    return w.Dropdown(options=opts, value=value, layout=w.Layout(width="min(100%, 28em)"), **common)


class Interactive:
    """A figure recomputed from control values. See the module docstring for the two faces."""

    def __init__(self, make_fig: Callable[..., Any], controls: Mapping[str, Sequence[Any]], *,
                 alt: str | Callable[..., str], defaults: Mapping[str, Any] | None = None,
                 labels: Mapping[str, str] | None = None, formats: Mapping[str, Callable[[Any], str]] | None = None,
                 shared_axes: bool = True, caption=None, name: str | None = None,
                 kinds: Mapping[str, str] | None = None):
        if not controls:
            raise ValueError("interactive() needs at least one control")
        self.make_fig = make_fig
        self.controls_spec = {k: list(v) for k, v in controls.items()}
        for k, vals in self.controls_spec.items():
            if not vals:
                raise ValueError(f"control {k!r} has no values")
            bad = [v for v in vals if _is_nan(v) or (isinstance(v, float) and math.isinf(v))]
            if bad:
                raise ValueError(f"control {k!r} has the value {bad[0]!r}; a control's values must be finite")
            if len(set(map(repr, vals))) < len(vals):
                raise ValueError(f"control {k!r} repeats a value: {vals}")
        for k in kinds or {}:
            if k not in self.controls_spec:
                raise ValueError(f"kind for unknown control {k!r}; controls are {list(self.controls_spec)}")
        self.kinds = {k: control_kind(v, (kinds or {}).get(k)) for k, v in self.controls_spec.items()}
        self.labels = {k: (labels or {}).get(k, k) for k in self.controls_spec}
        self.formats = dict(formats or {})
        self.shared_axes = shared_axes
        self.alt = alt
        self.caption_spec = caption
        self.name = name
        defaults = dict(defaults or {})
        for k, v in defaults.items():
            if k not in self.controls_spec:
                raise ValueError(f"default for unknown control {k!r}; controls are {list(self.controls_spec)}")
            if v not in self.controls_spec[k]:
                raise ValueError(f"default {k}={v!r} is not one of its values {self.controls_spec[k]}")
        self.params = {k: defaults.get(k, vals[len(vals) // 2]) for k, vals in self.controls_spec.items()}
        self.figure = self._checked(self.make_fig(**self.params), self.params)
        self.caption = _caption(self.caption_spec, self.figure, self.params)
        self._seen = [axis_info(self.figure)]
        self.error: str | None = None
        self._widget = None
        self.controls: dict[str, Any] = {}

    @staticmethod
    def _checked(fig, params):
        """``fig`` if it can be drawn; else a ValueError naming the control values that made it."""
        problem = figure_problem(fig)
        if problem:
            raise ValueError(f"interactive: make_fig({', '.join(f'{k}={v!r}' for k, v in params.items())}) "
                             f"gave no figure to draw: {problem}")
        return fig

    # -- shared ----------------------------------------------------------------------------------
    def _fmt(self, k: str, v: Any) -> str:
        f = self.formats.get(k)
        return f(v) if f else (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v))

    def alt_text(self, **params) -> str:
        return self.alt(**params) if callable(self.alt) else self.alt

    def update(self, **params):
        """Recompute the figure for new control values (the live callback, also used by tests).

        A failure leaves the previous figure in place and records the message in ``self.error``.
        """
        new = {**self.params, **params}
        try:
            fig = self._checked(self.make_fig(**new), new)
        except Exception as e:  # the figure must never be left broken by a bad combination
            self.error = f"{type(e).__name__}: {e}"
            return self.figure
        self.caption = _caption(self.caption_spec, fig, new)
        if self.shared_axes:
            fig = self._steady(fig)
        self.params, self.figure, self.error = new, fig, None
        return fig

    def _steady(self, fig):
        """Live face: the axes cover every figure the reader has seen so far (they grow, never jump
        back), so a move of a control shows as a change. The figure is copied before it is changed."""
        info = axis_info(fig)
        self._seen.append(info)
        del self._seen[:-48]
        ranges = shared_ranges((), self._seen)
        _apply_ranges(fig, {k: v for k, v in ranges.items() if k in info["ext"]})
        return fig

    # -- live face -------------------------------------------------------------------------------
    def _live_controls(self, w):
        for k, vals in self.controls_spec.items():
            opts = [(self._fmt(k, v), v) for v in vals]
            self.controls[k] = _live_control(w, self.labels[k], opts, self.params[k], self.kinds[k])
        return list(self.controls.values())

    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as w
            from IPython.display import display

            out = w.Output()
            msg = w.HTML()
            self._live_controls(w)

            def on_change(change, _key=None):
                vals = {k: s.value for k, s in self.controls.items()}
                fig = self.update(**vals)
                msg.value = f"<span style='color:#D55E00'>{html.escape(self.error)}</span>" if self.error else ""
                with out:
                    out.clear_output(wait=True)
                    display(Figure(fig, self.alt_text(**self.params), caption=None))
                    if self.caption:
                        display(_HTMLText(_live_caption(self.caption)))

            for s in self.controls.values():
                s.observe(on_change, names="value")
            with out:
                display(Figure(self.figure, self.alt_text(**self.params)))
                if self.caption:
                    display(_HTMLText(_live_caption(self.caption)))
            self._on_change = on_change
            box = w.VBox([*self.controls.values(), msg, out],
                         layout=w.Layout(border="1px solid #DDDDDD", padding="6px"))
            self._widget = box
        return self._widget

    # -- static face -----------------------------------------------------------------------------
    def _combos(self):
        keys = list(self.controls_spec)
        grids = [range(len(self.controls_spec[k])) for k in keys]
        n = math.prod(len(g) for g in grids)
        if n > MAX_STATIC_FRAMES:
            raise ValueError(f"interactive figure has {n} combinations of control values; the website embeds "
                             f"at most {MAX_STATIC_FRAMES} (use fewer values per control)")
        for combo in itertools.product(*grids):
            yield "_".join(map(str, combo)), {k: self.controls_spec[k][i] for k, i in zip(keys, combo)}

    def _static_controls(self):
        keys = list(self.controls_spec)
        init_idx = [self.controls_spec[k].index(self.params[k]) for k in keys]
        controls = [(k, self.labels[k], [self._fmt(k, v) for v in self.controls_spec[k]], i, self.kinds[k])
                    for k, i in zip(keys, init_idx)]
        return "_".join(map(str, init_idx)), controls

    def to_html(self) -> str:
        steps, caps = {}, {}
        for key, params in self._combos():
            try:
                fig = self._checked(self.make_fig(**params), params)
            except Exception as e:
                raise RuntimeError(f"interactive figure failed at {params}: {type(e).__name__}: {e}") from e
            caps[key] = _caption(self.caption_spec, fig, params)
            steps[key] = fig
        if self.shared_axes:
            share_axes(list(steps.values()))
        figures = {k: _fig_json(f) for k, f in steps.items()}
        initial, controls = self._static_controls()
        widths = [w for w in map(min_width, steps.values()) if w]
        return _static_html(figures, initial, self.alt_text(**self.params), controls, captions=caps, name=self.name,
                            min_px=max(widths) if widths else None,
                            height=min((f.layout.height or 450) for f in steps.values()))

    # -- print face ------------------------------------------------------------------------------
    def print_params(self, params: Mapping[str, Any]) -> dict:
        """The control values for the print face: ``params`` over the current ones, each checked (an
        unknown control, or a value that is not among the control's values, is a ValueError naming both)."""
        for k, v in params.items():
            if k not in self.controls_spec or k == "_" and getattr(self, "_no_controls", False):
                names = [] if getattr(self, "_no_controls", False) else list(self.controls_spec)
                raise ValueError(f"save: {k}={v!r}: the figure has no control {k!r}; its controls are {names}")
            if not any(v == x and type(v) is type(x) or repr(v) == repr(x) for x in self.controls_spec[k]):
                raise ValueError(f"save: {k}={v!r} is not one of the values of control {k!r}: "
                                 f"{self.controls_spec[k]}")
        return {**self.params, **params}

    def to_matplotlib(self, *, _number: str | None = None, **params):
        """The print face at these control values (the current ones where a control is not given)."""
        from .printface import to_matplotlib

        full = self.print_params(params)
        if full == self.params:
            fig, caption = self.figure, self.caption
        else:
            fig = copy.deepcopy(self._checked(self.make_fig(**full), full))
            caption = _caption(self.caption_spec, fig, full)
        return to_matplotlib(fig, caption=caption, number=_number)

    def save(self, path, *, _number: str | None = None, **params):
        """Write the print face of the figure at these control values (the current ones where a control
        is not given) to ``path``: .svg, .pdf or .png by the suffix. The caption is printed under it."""
        from .printface import check_suffix, save_matplotlib

        check_suffix(path)
        return save_matplotlib(self.to_matplotlib(_number=_number, **params), path)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if _printing(self):
            return {"text/plain": self.alt_text(**self.params)}
        if in_book():
            return {"text/html": self.to_html(), "text/plain": self.alt_text(**self.params)}
        return self.widget._repr_mimebundle_(include=include, exclude=exclude)


class _HTMLText:
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_html_(self) -> str:
        return self.text


def interactive(make_fig: Callable[..., Any], controls: Mapping[str, Sequence[Any]], *, alt, defaults=None,
                labels=None, formats=None, shared_axes: bool = True, caption=None, name: str | None = None,
                kinds: Mapping[str, str] | None = None) -> Interactive:
    """A figure the reader drives: ``make_fig(**params)`` returns a Plotly figure for one choice of
    control values; ``controls`` maps each parameter to the values it can take.

    Numbers get a slider with ticks; a few names or booleans get toggle buttons, many a dropdown
    (``kinds={"param": "slider"}`` overrides, e.g. for names in an order). ``caption`` (text, or a
    function of the control values) is printed under the figure and numbered; without it the figure's
    title becomes the caption. ``name`` makes the figure referable: {figref}`name`.

    ``shared_axes``: on the website every step gets the same numeric axis ranges (the union over the
    steps, see :func:`share_axes`), so a change shows as a change; pass False where the steps are
    unrelated pictures."""
    return Interactive(make_fig, controls, alt=alt, defaults=defaults, labels=labels, formats=formats,
                       shared_axes=shared_axes, caption=caption, name=name, kinds=kinds)
