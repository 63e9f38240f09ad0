"""The print face (``labsim.viz.printface``): time to draw one figure with matplotlib, and to write it.

For a few figures of different kinds (a roofline, a timeline, a heatmap animation step, the SM drawing,
a pass figure with two Graphviz drawings) it prints the best of three wall times of ``to_matplotlib``
and of writing PDF, PNG and SVG, and each file's size; then the time and size of a GIF of an animation.
``make print`` does this for every figure of the book (its own run prints the time per chapter).

Run with ``.venv/bin/python benchmarks/bench_print.py``; ``make bench`` runs it with the others.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.pop("LABSIM_BOOK", None)

from _bench import best, table  # noqa: E402


def figures():
    import labsim as ls
    import labsim.viz as viz

    s = ls.ShapeDtype((1024, 1024))
    prog = ls.compile(ls.trace(lambda x, y: ls.numpy.maximum(x @ y + 1.0, 0.0), s, s))
    lat = ls.simt.latency_kernel(2, 2, warps=4)
    run = ls.simt.run_ir(lat.ir, lat.inputs, "H100 SXM", sms=1, schedulers=1, policy="lrr",
                         timing=ls.simt.Timing(memory=30))
    out = {
        "roofline": viz.roofline("H100 SXM", [("matmul", 300, None), ("add", 0.1, None)]),
        "timeline": viz.timeline(ls.simulate(prog, "H100 SXM").trace),
        "scheduler heatmap": viz.gpu.schedule_frames(run, steps=6)[-1],
        "SM drawing": viz.gpu.sm_diagram("H100 SXM"),
    }
    if shutil.which("dot"):
        out["pass figure (Graphviz)"] = viz.pass_figure(prog, "fuse")
    return out, viz.animate(lambda: viz.gpu.schedule_frames(run, steps=12), alt="scheduler")


def main() -> None:
    from labsim.viz import printface as pf

    figs, anim = figures()
    tmp = Path(tempfile.mkdtemp())
    rows = []
    for name, fig in figs.items():
        t_conv, mfig = best(lambda: pf.to_matplotlib(fig))
        cells = [name, f"{t_conv * 1e3:,.0f}"]
        for suffix in (".pdf", ".png", ".svg"):
            path = tmp / f"f{suffix}"
            t, _ = best(lambda: pf.save_matplotlib(mfig, path))
            cells += [f"{t * 1e3:,.0f}", f"{path.stat().st_size / 1024:,.0f}"]
        rows.append(cells)
    table("Print face: one figure (best of 3; ms, KB)",
          ["figure", "convert ms", "PDF ms", "PDF KB", "PNG ms", "PNG KB", "SVG ms", "SVG KB"], rows)
    gif = tmp / "a.gif"
    t, _ = best(lambda: anim.save(gif), repeats=1)
    n = len(anim.frames_for(**anim.params))
    table("Print face: an animation as a GIF", ["animation", "steps", "s", "KB"],
          [["warp scheduler", str(n), f"{t:.2f}", f"{gif.stat().st_size / 1024:,.0f}"]])
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
