"""``labsim.viz``: every picture in the book. It only *reads* what the core records.

- :func:`draw_graph` — a Graph or Program as a Graphviz drawing (kernels as boxes around their ops).
- :func:`timeline` — a :class:`~labsim.events.Trace` as a Plotly Gantt chart.
- :func:`show` — a Plotly figure with two faces: live in JupyterLab, self-contained HTML on the website.
- :func:`interactive` — a figure driven by controls: ipywidgets in JupyterLab; on the website the same
  figure precomputed for every control value and switched by sliders in the page.
- :func:`animate` — a stepped figure with a play button and a step slider (both faces).
- :func:`roofline_animation` — a kernel's point moving on the roofline as a size grows, from ls.estimate runs.
- :func:`pass_slider` — a compiler pipeline pass by pass: one figure, a slider over passes, before and after.
- :mod:`gpu_extra` — Little's law and split-K figures (chapters 8 and 10); :mod:`serving` — serving figures (chapter 13).
- :mod:`gpu` — an SM drawn from a preset, occupancy, waves, coalescing and warp animations (chapters 7–8).
- :func:`timeline_spans`, :func:`timeline_steps` — a timeline with measured spans; a timeline step by step.
- :func:`programs` — the programs of a block kernel (``ls.blocks``) over their lanes, masked lanes idle.
- :func:`save`, :func:`to_matplotlib` — the print face: any figure as SVG, PDF or PNG (GIF for an animation),
  drawn with matplotlib from the same Plotly figure (``fig.save(path)`` on every face object).
- :func:`chart` with :func:`line`, :func:`points`, :func:`bars`, :func:`rule`; :func:`share_bars`,
  :func:`ratio_bars`, :func:`closed_form_vs_machine`, :func:`slot_grids`, :func:`status_grid`, :func:`message` — the chapters'
  charts of labsim's numbers (:mod:`.charts`).
- :func:`fmt_si` — a number with an SI prefix and its unit ("1.2 ms"); :mod:`calibration` — the
  calibration figures of the accuracy page.
- :func:`plural` — a number with its noun in the right grammatical number, for computed captions.
- :func:`you_are_here` — chapter 1's ten steps with a chapter's steps lit, its prerequisites and reading
  time (:mod:`.journey`: the chapters' data, reading paths and their diagram).
- :func:`tabs` — several texts (IR dumps, listings) side by side as tabs; stacked sections without JavaScript.
"""
from . import gpu
from .faces import Figure, Interactive, control_kind, in_book, interactive, show
from .animate import Animation, animate
from .glue import glue
from .graph import GraphDrawing, draw_graph, pipeline_diagram
from .palette import KIND_COLORS, NEUTRAL, OKABE_ITO, ROLE, SEQUENCE, TINT, role
from .plots import bar_compare, buffer_chart, roofline, style, timeline
from .charts import (bars, chart, closed_form_vs_machine, line, message, points, ratio_bars, rule, share_bars,
                     slot_grids, status_grid)
from .hostviz import programs, timeline_spans, timeline_steps
from .passes import pass_figure, pass_slider
from .tabs import Tabs, tabs
from .printface import save, to_matplotlib
from . import tpu
from . import collectives
from . import gpu_extra, serving
from . import roofline_anim
from .roofline_anim import roofline_animation
from ..support.text import plural
from ..support.tables import fmt_si
from . import calibration
from . import journey
from .journey import you_are_here

__all__ = ["glue", "Figure", "Interactive", "in_book", "interactive", "show", "Animation", "animate", "control_kind",
           "ROLE", "TINT", "NEUTRAL", "SEQUENCE", "role", "GraphDrawing", "draw_graph", "pipeline_diagram",
           "KIND_COLORS", "OKABE_ITO", "bar_compare", "buffer_chart", "roofline", "style", "timeline",
           "Tabs", "tabs", "pass_figure", "pass_slider", "gpu", "tpu", "programs", "timeline_spans", "timeline_steps",
           "save", "to_matplotlib", "collectives", "plural", "gpu_extra", "serving",
           "bars", "chart", "closed_form_vs_machine", "line", "message", "points", "ratio_bars", "rule", "share_bars",
           "slot_grids", "status_grid", "fmt_si", "calibration", "roofline_anim", "roofline_animation",
           "journey", "you_are_here"]
