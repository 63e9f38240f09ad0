"""Animations with both faces: a play button and a step slider, on the website and in JupyterLab.

``animate(make_frames, controls, alt=...)``: ``make_frames(**params)`` returns the frames of one
animation as a list of Plotly figures, one per step, each with the same traces (number and types) so
Plotly can move between them. Controls work as in :func:`~labsim.viz.interactive` (sliders for numbers,
toggle buttons or a dropdown for names).

- Website (``LABSIM_BOOK=1``): for every combination of control values, one Plotly figure with frames,
  and under it the page's own play, step and slider controls with a live line naming the step
  (:mod:`labsim.viz.animhtml`: keyboard and screen-reader operable, outside the plot); the axes are the
  union over every frame of every combination, so they stay put. Caption and alt text as for any figure.
- JupyterLab: the controls, an ipywidgets ``Play`` button linked to a step slider (both described), a
  line naming the step shown, and the figure of the current step. The frames of a control combination
  are computed once and kept.
- Print: ``Animation.save("a.gif")`` writes every step as a GIF frame; ``.svg``, ``.pdf`` or ``.png`` write
  one step (``step=``, the last by default), drawn with matplotlib (:mod:`labsim.viz.printface`).

Keep frames small (the page must stay under 1 MB): at most :data:`MAX_STEPS` steps, few points per trace.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

import copy
import html
import itertools
import json
from typing import Any, Callable, Mapping, Sequence

from .animhtml import step_text
from .faces import (Figure, Interactive, _caption, _fig_json, _static_html, figure_problem, in_book, min_width,
                    shared_ranges, _apply_ranges, _extents, PLOTLY_CONFIG)

MAX_STEPS = 120


#: the live face runs every control combination up front when there are at most this many
WARM_COMBINATIONS = 8


def _copy(fig):
    """An independent copy of a frame. A Plotly figure is copied as its dict without Plotly's validation
    (the frame was validated, or deliberately built without it, when it was made): ``copy.deepcopy``
    re-validates every property, about 10 times slower, and the live face copies every step; Plotly's
    ``to_dict`` also encodes every array: twice the time of this)."""
    import plotly.graph_objects as go

    if isinstance(fig, go.Figure):  # the constructor copies what it is given (deep), read raw here
        return go.Figure({"data": list(fig._data), "layout": fig._layout}, _validate=False)
    return copy.deepcopy(fig)


def _checked_frames(frames, params) -> list:
    where = f"animate: make_frames({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    if not isinstance(frames, (list, tuple)) or not frames:
        raise ArgumentError(f"{where} must return a non-empty list of Plotly figures, got {type(frames).__name__}")
    if len(frames) > MAX_STEPS:
        raise ArgumentError(f"{where} returned {len(frames)} steps; an animation has at most {MAX_STEPS} "
                         f"(sample the steps)")
    shape = None
    for i, f in enumerate(frames):
        problem = figure_problem(f)
        if problem:
            raise ArgumentError(f"{where}: step {i} cannot be drawn: {problem}")
        s = [t.type for t in f.data]
        if shape is None:
            shape = s
        elif s != shape:
            raise ArgumentError(f"{where}: step {i} has traces {s}, step 0 has {shape}; every step needs the "
                             f"same traces so the animation can move between them")
    return list(frames)


def _frame_layout(f) -> dict:
    """What of a step's layout changes from step to step (annotations, shapes, axis titles)."""
    lay = f.layout.to_plotly_json()
    keep = {k: lay[k] for k in ("annotations", "shapes") if k in lay}
    keep.setdefault("annotations", [])
    keep.setdefault("shapes", [])
    return keep


class Animation(Interactive):
    """A stepped figure driven by a play button and a step slider (see the module docstring)."""

    def __init__(self, make_frames: Callable[..., Sequence[Any]], controls: Mapping[str, Sequence[Any]] | None = None,
                 *, alt, step_label: str = "step", step_labels: Callable[..., Sequence[str]] | None = None,
                 defaults=None, labels=None, formats=None, caption=None, name: str | None = None,
                 kinds=None, frame_ms: int = 500, start: int | None = None):
        self.make_frames = make_frames
        self.step_label = step_label
        self.step_labels_fn = step_labels
        self.frame_ms = int(frame_ms)
        self.start = start
        self._frames_cache: dict[tuple, list] = {}
        self._ready_cache: dict[tuple, list] = {}
        self.step = 0
        controls = dict(controls or {})
        self._no_controls = not controls
        if self._no_controls:
            controls = {"_": [0]}
        super().__init__(lambda **p: _copy(self.frames_for(**p)[0]), controls, alt=alt, defaults=defaults,
                         labels=labels, formats=formats, shared_axes=True, caption=caption, name=name, kinds=kinds)
        # Live face, a few control combinations: run them all now, as the website's face does, so that a
        # move of a control answers at once (the first run of a combination is what a reader waits for).
        if not in_book() and not self._no_controls:
            combos = list(itertools.product(*self.controls_spec.values()))
            if len(combos) <= WARM_COMBINATIONS:
                for combo in combos:
                    try:
                        self.frames_for(**{**self.params, **dict(zip(self.controls_spec, combo))})
                    except Exception:  # a combination that fails says so when the reader picks it
                        pass

    def _params(self, params):
        return {} if self._no_controls else {k: v for k, v in params.items() if k != "_"}

    def frames_for(self, **params) -> list:
        """The frames (Plotly figures) of the animation for these control values, made once (do not
        change them: the faces copy them before fixing their axes)."""
        key = tuple(sorted((k, repr(v)) for k, v in params.items()))
        if key not in self._frames_cache:
            frames = _checked_frames(self.make_frames(**self._params(params)), params)
            ranges = shared_ranges(frames)
            self._frames_cache[key] = (frames, ranges)
            if len(self._frames_cache) > 32:
                self._frames_cache.pop(next(iter(self._frames_cache)))
        return self._frames_cache[key][0]

    def _ranges_for(self, **params):
        self.frames_for(**params)
        return self._frames_cache[tuple(sorted((k, repr(v)) for k, v in params.items()))][1]

    def _ready(self, **params) -> list:
        """The live face's steps for these control values, made once: copies of the frames with their
        titles moved out (the caption carries them) and the axes of every step made one, so that
        playing only switches between finished figures."""
        key = ("ready",) + tuple(sorted((k, repr(v)) for k, v in params.items()))
        if key not in self._ready_cache:
            ranges = self._ranges_for(**params)
            ready = []
            for f in self.frames_for(**params):
                g = _copy(f)
                _caption(None, g)
                _apply_ranges(g, {k: v for k, v in ranges.items() if k in _extents(g)})
                ready.append(g)
            self._ready_cache[key] = ready
            if len(self._ready_cache) > 8:
                self._ready_cache.pop(next(iter(self._ready_cache)))
        return self._ready_cache[key]

    def _step_names(self, params, n) -> list[str]:
        if self.step_labels_fn is not None:
            names = [str(s) for s in self.step_labels_fn(**self._params(params))]
            if len(names) != n:
                raise ArgumentError(f"animate: step_labels gave {len(names)} labels for {n} steps")
            return names
        return [str(i) for i in range(n)]

    # -- static face: one Plotly figure with frames per control combination ----------------------
    def start_step(self, frames) -> int:
        """The step the figure opens on: ``start`` if given, else the frames' own choice
        (``frames[0].layout.meta["labsim_start"]``, e.g. the last step of a run that starts empty), else 0.
        Negative counts from the end."""
        n = len(frames)
        want = self.start
        if want is None:
            meta = frames[0].layout.meta
            want = meta.get("labsim_start", 0) if isinstance(meta, dict) else 0
        if not isinstance(want, int) or isinstance(want, bool) or not -n <= want < n:
            raise ArgumentError(f"animate: start={want!r} is not a step of this animation (it has {n}: 0 to {n - 1}, "
                             f"or -1 to -{n} from the end)")
        return want % n

    def _animated(self, frames, start: int):
        """One Plotly figure holding every step as a frame, drawn at step ``start``. Its controls are the
        page's own HTML (:mod:`labsim.viz.animhtml`), not Plotly's buttons and slider inside the plot."""
        import plotly.graph_objects as go

        base = _copy(frames[start])
        base.frames = [go.Frame(data=f.data, layout=_frame_layout(f), name=str(i)) for i, f in enumerate(frames)]
        return base

    def to_html(self) -> str:
        figures, caps, alts, steps, starts = {}, {}, {}, {}, {}
        all_frames, all_params = {}, {}
        for key, params in self._combos():
            all_params[key] = params
            alts[key] = self.alt_text(**params)
            try:
                frames = self.frames_for(**params)
            except Exception as e:
                raise RuntimeError(f"animation failed at {self._params(params)}: {type(e).__name__}: {e}") from e
            caps[key] = _caption(self.caption_spec, _copy(frames[0]), self._params(params))
            all_frames[key] = [_copy(f) for f in frames]
        # one set of axes for every step of every combination: a change of control shows as a change
        flat = [f for fr in all_frames.values() for f in fr]
        ranges = shared_ranges(flat)
        for key, frames in all_frames.items():
            for f in frames:
                _apply_ranges(f, {k: v for k, v in ranges.items() if k in _extents(f)})
                _caption(None, f)  # titles leave the plot (the caption carries them)
            starts[key] = self.start_step(frames)
            steps[key] = self._step_names(all_params[key], len(frames))
            figures[key] = _fig_json(self._animated(frames, starts[key]))
        initial, controls = self._static_controls()
        if self._no_controls:
            controls = []
        from .animhtml import EASE_MS
        anim = {"label": self.step_label, "ms": self.frame_ms, "ease": EASE_MS, "steps": steps, "start": starts,
                "words": {"play": "Play", "pause": "Pause", "count": "%1 of %2"}}
        # the plot's reserved height is the first figure's (the last combination's could be taller: a gap)
        first = all_frames.get(initial) or next(iter(all_frames.values()))
        return _static_html(figures, initial, self.alt_text(**self.params), controls, captions=caps, alts=alts,
                            name=self.name, height=first[0].layout.height or 360, anim=anim,
                            min_px=max((min_width(fr[0]) or 0 for fr in all_frames.values()), default=0) or None)

    def alt_text(self, **params) -> str:
        from ..support.i18n import tr
        return tr(self.alt(**self._params(params)) if callable(self.alt) else self.alt)

    # -- print face: a GIF of every step, or one step as a still -----------------------------------
    def print_frames(self, **params) -> tuple[list, str]:
        """The steps for these control values as the print face draws them (copies, titles out, one set
        of axes for every step) and their caption."""
        full = self.print_params(params)
        frames = [copy.deepcopy(f) for f in self._ready(**full)]
        caption = _caption(self.caption_spec, copy.deepcopy(self.frames_for(**full)[0]), self._params(full))
        return frames, caption

    def to_matplotlib(self, *, step: int | None = None, _number: str | None = None, **params):
        """The print face of one step (default: the last; negative counts from the end)."""
        from .printface import to_matplotlib

        frames, caption = self.print_frames(**params)
        n = len(frames)
        i = n - 1 if step is None else step
        if not isinstance(i, int) or isinstance(i, bool) or not -n <= i < n:
            raise ArgumentError(f"save: step={step!r} is not a step of this animation (it has {n}: 0 to {n - 1})")
        return to_matplotlib(frames[i], caption=caption, number=_number)

    def save(self, path, *, step: int | None = None, _number: str | None = None, **params):
        """Write the print face to ``path``: a ``.gif`` has every step as one frame (played at
        ``frame_ms`` per step); ``.svg``, ``.pdf`` and ``.png`` show one step, ``step`` (default: the
        last; negative counts from the end). Controls as for :meth:`Interactive.save`."""
        from .printface import ANIMATION_FORMATS, check_suffix, save_gif, save_matplotlib

        suffix = check_suffix(path, ANIMATION_FORMATS)
        if suffix == ".gif":
            if step is not None:
                raise ArgumentError(f"save: a .gif holds every step; step={step!r} is for a still (.svg, .pdf, .png)")
            frames, caption = self.print_frames(**params)
            return save_gif(frames, path, caption=caption, number=_number, frame_ms=self.frame_ms)
        return save_matplotlib(self.to_matplotlib(step=step, _number=_number, **params), path)

    # -- live face: controls, a Play button linked to a step slider, the current step -------------
    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as w

            from .liveplot import LivePlot

            msg = w.HTML()
            controls = [] if self._no_controls else self._live_controls(w)
            texts = self._live_texts(w)
            first = self.frames_for(**self.params)
            n, at = len(first), self.start_step(first)
            from ..support.i18n import tr  # the controls' words in the language labsim draws in
            play = w.Play(value=at, min=0, max=n - 1, step=1, interval=self.frame_ms, description=tr("Play"),
                          tooltip=tr("Play"))
            step = w.IntSlider(value=at, min=0, max=n - 1, description=tr(self.step_label),
                               continuous_update=True, style={"description_width": "initial"},
                               layout=w.Layout(width="min(100%, 40em)"))
            w.jslink((play, "value"), (step, "value"))
            now = w.HTML()  # the step shown, in words (as the website's live line)
            self.step_text = now
            self.play, self.step_slider = play, step

            def draw():
                frames = self.frames_for(**self.params)
                i = min(step.value, len(frames) - 1)
                self.step = i
                names = self._step_names(self.params, len(frames))
                now.value = (f'<div class="labsim-anim-text" aria-live="polite">'
                             f'{html.escape(step_text(self.step_label, names[i], i, len(frames)))}</div>')
                fig, alt = self._ready(**self.params)[i], self.alt_text(**self.params)
                if self.plot is None:
                    self.plot = LivePlot(w, fig, alt, figure_cls=Figure, config=PLOTLY_CONFIG)
                else:
                    self.plot.show(fig, alt)

            def on_control(change):
                new = {k: s.value for k, s in self.controls.items()}
                try:
                    frames = self.frames_for(**{**self.params, **new})
                except Exception as e:  # the figure is never left broken
                    self.error = f"{type(e).__name__}: {e}"
                    msg.value = f"<span style='color:#D55E00'>{html.escape(self.error)}</span>"
                    return
                self.error, msg.value = None, ""
                self.params = {**self.params, **new}
                self.caption = _caption(self.caption_spec, _copy(frames[0]), self._params(self.params))
                play.max = step.max = len(frames) - 1
                step.value = min(step.value, step.max)
                draw()  # the plot's message first: the page redraws it before the texts change
                self._show_texts()

            for c in self.controls.values():
                c.observe(on_control, names="value")
            step.observe(lambda change: draw(), names="value")
            self._on_change = on_control
            self._draw = draw
            self.plot = None
            draw()
            self._widget = w.VBox([*controls, w.HBox([play, step]), now, msg, self.plot.view, *texts],
                                  layout=w.Layout(border="1px solid #DDDDDD", padding="6px"))
        return self._widget

    def update(self, **params):
        """Recompute for new control values (tests use it like the live callback); returns step 0."""
        new = {**self.params, **params}
        try:
            frames = self.frames_for(**new)
        except Exception as e:
            self.error = f"{type(e).__name__}: {e}"
            return self.figure
        fig = _copy(frames[0])
        self.caption = _caption(self.caption_spec, fig, self._params(new))
        self.params, self.figure, self.error = new, fig, None
        return fig


def animate(make_frames: Callable[..., Sequence[Any]], controls: Mapping[str, Sequence[Any]] | None = None, *,
            alt, step_label: str = "step", step_labels=None, defaults=None, labels=None, formats=None,
            caption=None, name: str | None = None, kinds=None, frame_ms: int = 500,
            start: int | None = None) -> Animation:
    """An animation with a play button and a step slider on both faces (see the module docstring).

    ``make_frames(**params)`` returns one Plotly figure per step (same traces in each). ``step_labels``
    (a function of the control values) names the steps ("cycle 3"); ``frame_ms`` is the time per step
    when playing; ``start`` the step the figure opens on (negative counts from the end; default: the
    frames' own ``layout.meta["labsim_start"]``, else 0)."""
    return Animation(make_frames, controls, alt=alt, step_label=step_label, step_labels=step_labels,
                     defaults=defaults, labels=labels, formats=formats, caption=caption, name=name,
                     kinds=kinds, frame_ms=frame_ms, start=start)
