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

Captions and alt texts follow the controls: ``caption`` and ``alt`` may be functions of the control
values. The static face embeds both for every combination (``captions`` and ``alts`` in the JSON
payload, :mod:`labsim.viz.statichtml`) and its script shows the pair of the values drawn; the live
face sets them in two HTML widgets under the figure (``caption_widget``; ``alt_widget``, hidden from
sight, for screen readers) each time a control moves.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import copy
import html
import itertools
import math
import numbers
import os
import re
from typing import Any, Callable, Mapping, Sequence

# re-exported: the static face's HTML and the shared axes moved to their own modules
from .axes import _apply_ranges, _extents, _has_strings, _numbers, axis_info, share_axes, shared_ranges  # noqa: F401
from .statichtml import (CONTROL_KINDS, TOGGLE_MAX, _control_html, _figure_wrap, _SCRIPT,  # noqa: F401
                         _static_html, control_kind, min_width)

MAX_STATIC_FRAMES = 96


def in_book() -> bool:
    """True while the website is being built (``make book`` sets ``LABSIM_BOOK=1``)."""
    return os.environ.get("LABSIM_BOOK") == "1"


def _fig_json(fig) -> str:
    import plotly.io as pio
    return pio.to_json(fig, validate=False, remove_uids=True, pretty=False).replace("</", "<\\/")



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
    else the figure's own title (moved out of the plot); in the language labsim draws in."""
    from ..support.i18n import tr
    from_title = caption_from_title(fig)
    if caption is None:
        return tr(from_title)
    text = caption(**(params or {})) if callable(caption) else caption
    return tr(html.escape(str(text)))


#: Plotly's config for every figure of the book: no modebar (it sat on the titles and legends)
PLOTLY_CONFIG = {"displayModeBar": False, "responsive": True}


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
            raise ArgumentError("every figure needs alt text (what a reader who cannot see it should know)")
        problem = figure_problem(fig)
        if problem:
            raise (ArgumentTypeError if problem.startswith("expected") else ArgumentError)(f"show: {problem}")
        from ..support.i18n import tr, translate_figure
        self.fig = translate_figure(fig)  # in the language labsim draws in (ls.set_language)
        self.alt = tr(alt)
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
    from .printface.style import figure_word  # "Figure", or "그림" when labsim draws in Korean
    return (f'<div class="labsim-caption" style="font-size:.9em;color:#444;margin:.2em 0 .8em">'
            f"<b>{figure_word()}.</b> {caption}</div>")


#: visually hidden, read by screen readers (the live face's plot has no aria-label of its own)
_SR_ONLY = "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap"


def _live_alt(alt: str) -> str:
    return f'<div class="labsim-alt" style="{_SR_ONLY}">{html.escape(str(alt))}</div>'


def show(fig, alt: str, *, caption: str | None = None, name: str | None = None) -> Figure:
    """Wrap a Plotly figure for display (both faces). ``alt`` describes it for screen readers; ``caption``
    is printed under it, numbered ("Figure 5.3"); ``name`` makes it referable: {figref}`name`."""
    return Figure(fig, alt, caption=caption, name=name)


def _live_control(w, label: str, opts, value, kind: str):
    """One ipywidgets control of the live face, drawn as the static face draws it (its label and value
    labels in the language labsim draws in)."""
    from ..support.i18n import tr
    label = tr(label)
    opts = [(tr(text), v) for text, v in opts]
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
            raise ArgumentError("interactive() needs at least one control")
        self.make_fig = make_fig
        self.controls_spec = {k: list(v) for k, v in controls.items()}
        for k, vals in self.controls_spec.items():
            if not vals:
                raise ArgumentError(f"control {k!r} has no values")
            bad = [v for v in vals if _is_nan(v) or (isinstance(v, float) and math.isinf(v))]
            if bad:
                raise ArgumentError(f"control {k!r} has the value {bad[0]!r}; a control's values must be finite")
            if len(set(map(repr, vals))) < len(vals):
                raise ArgumentError(f"control {k!r} repeats a value: {vals}")
        for k in kinds or {}:
            if k not in self.controls_spec:
                raise ArgumentError(f"kind for unknown control {k!r}; controls are {list(self.controls_spec)}")
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
                raise ArgumentError(f"default for unknown control {k!r}; controls are {list(self.controls_spec)}")
            if v not in self.controls_spec[k]:
                raise ArgumentError(f"default {k}={v!r} is not one of its values {self.controls_spec[k]}")
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
            raise ArgumentError(f"interactive: make_fig({', '.join(f'{k}={v!r}' for k, v in params.items())}) "
                             f"gave no figure to draw: {problem}")
        return fig

    # -- shared ----------------------------------------------------------------------------------
    def _fmt(self, k: str, v: Any) -> str:
        f = self.formats.get(k)
        return f(v) if f else (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v))

    def alt_text(self, **params) -> str:
        from ..support.i18n import tr
        return tr(self.alt(**params) if callable(self.alt) else self.alt)

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

    def _live_texts(self, w):
        """The live face's caption and alt text: two HTML widgets under the figure, set from the control
        values drawn (:meth:`_show_texts`). The alt text is hidden from sight and read by screen readers."""
        self.caption_widget, self.alt_widget = w.HTML(), w.HTML()
        self._show_texts()
        return [self.caption_widget, self.alt_widget]

    def _show_texts(self) -> None:
        self.caption_widget.value = _live_caption(self.caption) if self.caption else ""
        self.alt_widget.value = _live_alt(self.alt_text(**self.params))

    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as w

            from .liveplot import LivePlot

            msg = w.HTML()
            self._live_controls(w)
            texts = self._live_texts(w)
            self.plot = LivePlot(w, self.figure, self.alt_text(**self.params), figure_cls=Figure,
                                 config=PLOTLY_CONFIG)
            out = self.plot.view

            def on_change(change, _key=None):
                vals = {k: s.value for k, s in self.controls.items()}
                fig = self.update(**vals)
                if not self.error:  # the plot's message first: the page redraws it before the texts
                    self.plot.show(fig, self.alt_text(**self.params))
                msg.value = f"<span style='color:#D55E00'>{html.escape(self.error)}</span>" if self.error else ""
                self._show_texts()

            for s in self.controls.values():
                s.observe(on_change, names="value")
            self._on_change = on_change
            box = w.VBox([*self.controls.values(), msg, out, *texts],
                         layout=w.Layout(border="1px solid #DDDDDD", padding="6px"))
            self._widget = box
        return self._widget

    # -- static face -----------------------------------------------------------------------------
    def _combos(self):
        keys = list(self.controls_spec)
        grids = [range(len(self.controls_spec[k])) for k in keys]
        n = math.prod(len(g) for g in grids)
        if n > MAX_STATIC_FRAMES:
            raise ArgumentError(f"interactive figure has {n} combinations of control values; the website embeds "
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
        steps, caps, alts = {}, {}, {}
        for key, params in self._combos():
            try:
                fig = self._checked(self.make_fig(**params), params)
            except Exception as e:
                raise RuntimeError(f"interactive figure failed at {params}: {type(e).__name__}: {e}") from e
            caps[key] = _caption(self.caption_spec, fig, params)
            alts[key] = self.alt_text(**params)
            steps[key] = fig
        if self.shared_axes:
            share_axes(list(steps.values()))
        figures = {k: _fig_json(f) for k, f in steps.items()}
        initial, controls = self._static_controls()
        widths = [w for w in map(min_width, steps.values()) if w]
        return _static_html(figures, initial, self.alt_text(**self.params), controls, captions=caps, alts=alts,
                            name=self.name,
                            min_px=max(widths) if widths else None,
                            height=min((f.layout.height or 450) for f in steps.values()))

    # -- print face ------------------------------------------------------------------------------
    def print_params(self, params: Mapping[str, Any]) -> dict:
        """The control values for the print face: ``params`` over the current ones, each checked (an
        unknown control, or a value that is not among the control's values, is a ValueError naming both)."""
        for k, v in params.items():
            if k not in self.controls_spec or k == "_" and getattr(self, "_no_controls", False):
                names = [] if getattr(self, "_no_controls", False) else list(self.controls_spec)
                raise ArgumentError(f"save: {k}={v!r}: the figure has no control {k!r}; its controls are {names}")
            if not any(v == x and type(v) is type(x) or repr(v) == repr(x) for x in self.controls_spec[k]):
                raise ArgumentError(f"save: {k}={v!r} is not one of the values of control {k!r}: "
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
