"""labsim/README.md's "One function, all the way down" runs as printed, and its claims hold: the roofline
and the SIMT machine read one launch, the SIMT and TPU runs equal ``ls.evaluate`` (element-wise exactly,
the contraction within float32 accumulation), and every trace is an ``ls.Trace`` that viz.timeline draws."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "labsim" / "README.md"


def test_the_readme_journey_runs_and_holds():
    pytest.importorskip("plotly")
    code = re.search(r"## One function, all the way down.*?```python\n(.*?)```", README.read_text(encoding="utf-8"),
                     re.S).group(1)
    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(code, str(README), "exec"), ns)
    ls = ns["ls"]
    assert ns["cost"].launch is ns["ir"].launch
    assert ".entry" in out.getvalue()
    ref = np.asarray(ns["ref"])
    assert np.allclose(ns["gpu"].outputs, ref, rtol=1e-5, atol=1e-4)
    assert np.allclose(ns["tpu"].outputs, ref, rtol=2e-2, atol=2e-2)  # bf16 MXU passes at default precision
    assert ns["tpu"].time == ls.tpu.estimate(ns["prog"], "TPU v5e").time
    for run in ("gpu", "tpu", "host"):
        assert isinstance(ns[run].trace, ls.Trace) and ns[run].trace.events
