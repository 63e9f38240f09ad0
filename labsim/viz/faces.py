"""Two faces of every interactive figure, written once by a chapter.

- Live (JupyterLab, or any kernel without ``LABSIM_BOOK=1``): ipywidgets controls rerun labsim and
  redraw the Plotly figure.
- Static (the website, built with ``LABSIM_BOOK=1``): the figure for every combination of control
  values is computed at build time and embedded as JSON; range sliders in the page switch between them
  with ``Plotly.react``. No kernel and no network: ``plotly.min.js`` is served from the site itself.

HTML contract (tested by ``tests/test_browser.py``): a ``div.labsim-figure`` with
``data-labsim-kind="static|interactive"`` holding ``input.labsim-slider`` controls (interactive only)
and a ``div.labsim-plot`` with ``role="img"`` and an ``aria-label`` (the alt text).
"""
from __future__ import annotations

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
  var sliders = Array.prototype.slice.call(root.querySelectorAll("input.labsim-slider"));
  var config = {responsive: true, displayModeBar: false};
  function key() { return sliders.map(function (s) { return s.value; }).join("_"); }
  function draw() {
    var f = data.figures[key()] || data.figures[data.initial];
    sliders.forEach(function (s, i) {
      var out = root.querySelector('output[data-param="' + s.dataset.param + '"]');
      if (out) out.textContent = data.labels[i][+s.value];
    });
    window.Plotly.react(plot, f.data, f.layout, config);
  }
  sliders.forEach(function (s) { s.addEventListener("input", draw); });
  if (window.Plotly) draw(); else window.addEventListener("load", draw);
})();
</script>
"""


def _static_html(figures: Mapping[str, str], initial: str, alt: str, controls: Sequence[tuple] = ()) -> str:
    """``controls``: (param name, label, value labels, initial index) per slider."""
    fid = "lsfig-" + uuid.uuid4().hex[:10]
    kind = "interactive" if controls else "static"
    ctl = ""
    if controls:
        rows = []
        for name, label, value_labels, idx in controls:
            rows.append(
                f'<label style="display:flex;align-items:center;gap:.5em;flex-wrap:wrap;margin:.2em 0">'
                f'<span style="min-width:8em">{html.escape(label)}</span>'
                f'<input type="range" class="labsim-slider" data-param="{html.escape(name)}" min="0" '
                f'max="{len(value_labels) - 1}" step="1" value="{idx}" style="flex:1;min-width:8em" '
                f'aria-label="{html.escape(label)}">'
                f'<output data-param="{html.escape(name)}" style="min-width:5em">{html.escape(value_labels[idx])}</output>'
                f"</label>")
        ctl = f'<div class="labsim-controls">{"".join(rows)}</div>'
    labels = [list(c[2]) for c in controls]
    payload = ('{"initial": ' + json.dumps(initial) + ', "labels": ' + json.dumps(labels).replace("</", "<\\/")
               + ', "figures": {' + ", ".join(f"{json.dumps(k)}: {v}" for k, v in figures.items()) + "}}")
    return (f'<div class="labsim-figure" id="{fid}" data-labsim-kind="{kind}">{ctl}'
            f'<div class="labsim-plot" role="img" aria-label="{html.escape(alt)}" style="width:100%;min-height:300px"></div>'
            f'<script type="application/json" class="labsim-data">{payload}</script>'
            + _SCRIPT % {"id": json.dumps(fid)} + "</div>")


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
            add(axes[cat], _numbers(getattr(t, cat)))
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


def share_axes(figs: Sequence[Any]) -> None:
    """Give the precomputed steps of an interactive figure one range per numeric axis (the union over
    the steps), so that moving a control shows the change instead of rescaling it away. An axis a step
    fixes itself (``range``), a category axis, a hidden one and a log axis with values ≤ 0 keep Plotly's
    own autorange. Changes the figures in place."""
    ext = [_extents(f) for f in figs]
    keys = {k for e in ext for k in e}
    for key in sorted(keys):
        axes = [f.layout[key] if key in f.layout else None for f in figs]
        live = [(f, a, e[key]) for f, a, e in zip(figs, axes, ext) if key in e and a is not None
                and a.visible is not False]
        if not live or any(a.range is not None or a.type in ("category", "multicategory", "date") for _, a, _ in live):
            continue
        # a category axis Plotly infers from strings
        if any(_has_strings(t, key) for f, _, _ in live for t in f.data):
            continue
        log = {a.type == "log" for _, a, _ in live}
        if len(log) != 1:
            continue
        log = log.pop()
        lo, hi = min(e[0] for _, _, e in live), max(e[1] for _, _, e in live)
        bars = any(e[2] for _, _, e in live)
        if log:
            if lo <= 0:
                continue
            lo, hi = math.log10(lo), math.log10(hi)
        elif bars or any(a.rangemode == "tozero" for _, a, _ in live):
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        pad = (hi - lo) * 0.05 or (abs(hi) * 0.1 if hi else 1.0)
        lo = lo - pad if (log or lo != 0) else lo
        hi = hi + pad if (log or hi != 0) else hi
        for f, a, _ in live:
            rng = [hi, lo] if a.autorange == "reversed" else [lo, hi]
            a.update(range=rng, autorange=False)


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
    """A Plotly figure with alt text. Live: Plotly's own renderer. Book: self-contained HTML."""

    def __init__(self, fig, alt: str) -> None:
        if not alt:
            raise ValueError("every figure needs alt text (what a reader who cannot see it should know)")
        problem = figure_problem(fig)
        if problem:
            raise (TypeError if problem.startswith("expected") else ValueError)(f"show: {problem}")
        self.fig = fig
        self.alt = alt

    def to_html(self) -> str:
        return _static_html({"0": _fig_json(self.fig)}, "0", self.alt)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if in_book():
            return {"text/html": self.to_html(), "text/plain": self.alt}
        bundle = (self.fig._repr_mimebundle_(include, exclude, config=PLOTLY_CONFIG)
                  if hasattr(self.fig, "_repr_mimebundle_") else {})
        bundle = dict(bundle or {})
        bundle.setdefault("text/plain", self.alt)
        return bundle


def show(fig, alt: str) -> Figure:
    """Wrap a Plotly figure for display (both faces). ``alt`` describes it for screen readers."""
    return Figure(fig, alt)


class Interactive:
    """A figure recomputed from control values. See the module docstring for the two faces."""

    def __init__(self, make_fig: Callable[..., Any], controls: Mapping[str, Sequence[Any]], *,
                 alt: str | Callable[..., str], defaults: Mapping[str, Any] | None = None,
                 labels: Mapping[str, str] | None = None, formats: Mapping[str, Callable[[Any], str]] | None = None,
                 shared_axes: bool = True):
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
        self.labels = {k: (labels or {}).get(k, k) for k in self.controls_spec}
        self.formats = dict(formats or {})
        self.shared_axes = shared_axes
        self.alt = alt
        defaults = dict(defaults or {})
        for k, v in defaults.items():
            if k not in self.controls_spec:
                raise ValueError(f"default for unknown control {k!r}; controls are {list(self.controls_spec)}")
            if v not in self.controls_spec[k]:
                raise ValueError(f"default {k}={v!r} is not one of its values {self.controls_spec[k]}")
        self.params = {k: defaults.get(k, vals[len(vals) // 2]) for k, vals in self.controls_spec.items()}
        self.figure = self._checked(self.make_fig(**self.params), self.params)
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
        self.params, self.figure, self.error = new, fig, None
        return fig

    # -- live face -------------------------------------------------------------------------------
    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as w
            from IPython.display import display

            out = w.Output()
            msg = w.HTML()
            for k, vals in self.controls_spec.items():
                opts = [(self._fmt(k, v), v) for v in vals]
                s = w.SelectionSlider(options=opts, value=self.params[k], description=self.labels[k],
                                      continuous_update=False, style={"description_width": "initial"},
                                      layout=w.Layout(width="min(100%, 36em)"))
                self.controls[k] = s

            def on_change(change, _key=None):
                vals = {k: s.value for k, s in self.controls.items()}
                fig = self.update(**vals)
                msg.value = f"<span style='color:#D55E00'>{self.error}</span>" if self.error else ""
                with out:
                    out.clear_output(wait=True)
                    display(Figure(fig, self.alt_text(**self.params)))

            for s in self.controls.values():
                s.observe(on_change, names="value")
            with out:
                display(Figure(self.figure, self.alt_text(**self.params)))
            self._on_change = on_change
            self._widget = w.VBox([*self.controls.values(), msg, out])
        return self._widget

    # -- static face -----------------------------------------------------------------------------
    def to_html(self) -> str:
        keys = list(self.controls_spec)
        grids = [range(len(self.controls_spec[k])) for k in keys]
        n = 1
        for g in grids:
            n *= len(g)
        if n > MAX_STATIC_FRAMES:
            raise ValueError(f"interactive figure has {n} combinations of control values; the website embeds "
                             f"at most {MAX_STATIC_FRAMES} (use fewer values per control)")
        steps = {}
        for combo in itertools.product(*grids):
            params = {k: self.controls_spec[k][i] for k, i in zip(keys, combo)}
            try:
                fig = self._checked(self.make_fig(**params), params)
            except Exception as e:
                raise RuntimeError(f"interactive figure failed at {params}: {type(e).__name__}: {e}") from e
            steps["_".join(map(str, combo))] = fig
        if self.shared_axes:
            share_axes(list(steps.values()))
        figures = {k: _fig_json(f) for k, f in steps.items()}
        init_idx = [self.controls_spec[k].index(self.params[k]) for k in keys]
        controls = [(k, self.labels[k], [self._fmt(k, v) for v in self.controls_spec[k]], i)
                    for k, i in zip(keys, init_idx)]
        return _static_html(figures, "_".join(map(str, init_idx)), self.alt_text(**self.params), controls)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if in_book():
            return {"text/html": self.to_html(), "text/plain": self.alt_text(**self.params)}
        return self.widget._repr_mimebundle_(include=include, exclude=exclude)


def interactive(make_fig: Callable[..., Any], controls: Mapping[str, Sequence[Any]], *, alt, defaults=None,
                labels=None, formats=None, shared_axes: bool = True) -> Interactive:
    """A figure the reader drives: ``make_fig(**params)`` returns a Plotly figure for one choice of
    control values; ``controls`` maps each parameter to the values a slider steps through.

    ``shared_axes``: on the website every step gets the same numeric axis ranges (the union over the
    steps, see :func:`share_axes`), so a change shows as a change; pass False where the steps are
    unrelated pictures."""
    return Interactive(make_fig, controls, alt=alt, defaults=defaults, labels=labels, formats=formats,
                       shared_axes=shared_axes)
