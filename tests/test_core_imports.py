"""Core labsim never imports a plotting or widget library: only ``labsim.viz`` may (tinygrad's rule).

Each check runs in a fresh interpreter, so modules imported by other tests cannot hide a violation.
"""
from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import labsim

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("plotly", "ipywidgets", "graphviz", "matplotlib", "IPython", "bokeh", "altair")
CORE = sorted(m.name for m in pkgutil.walk_packages(labsim.__path__, "labsim.") if not m.name.startswith("labsim.viz"))

PROBE = """
import json, sys
{body}
bad = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
print(json.dumps(bad))
"""


def loaded_after(body: str) -> list[str]:
    code = PROBE.format(body=body, forbidden=FORBIDDEN)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("LABSIM_BOOK", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_core_modules_are_found():
    for name in ("labsim.core.ir", "labsim.frontend.numpy", "labsim.frontend.nn", "labsim.core.trace",
                 "labsim.compiler.program", "labsim.machines.roofline", "labsim.machines.runtime",
                 "labsim.frontend.autodiff", "labsim.hardware", "labsim.machines.events", "labsim.compiler.fusion"):
        assert name in CORE


def test_import_labsim_and_every_core_module():
    body = "import labsim, labsim.numpy, labsim.nn\n" + "\n".join(f"import {m}" for m in CORE)
    assert loaded_after(body) == []


def test_running_the_core_pipeline_imports_no_viz_library():
    body = """
import numpy as np
import labsim as ls, labsim.numpy as lnp, labsim.nn as lnn
f = lambda x, w: lnn.softmax(lnp.tanh(x @ w))
g = ls.trace(f, ls.ShapeDtype((8, 4)), ls.ShapeDtype((4, 3)))
str(g); repr(g)
ls.evaluate(g, np.ones((8, 4), np.float32), np.ones((4, 3), np.float32))
p = ls.compile(g); p._repr_html_(); [k.listing for k in p.kernels]
ls.estimate(p, "H100 SXM").table(); r = ls.simulate(p, "H100 SXM"); r.trace.to_chrome_json()
ls.grad(lambda x, w: lnp.sum(f(x, w)))(np.ones((8, 4), np.float32), np.ones((4, 3), np.float32))
"""
    assert loaded_after(body) == []


def test_the_check_can_fail():
    """labsim.viz is allowed to import plotly, and the probe sees it when it does."""
    pytest.importorskip("plotly")
    bad = loaded_after("import labsim.viz as lv\nlv.bar_compare(['a'], [1.0])")
    assert "plotly" in bad


BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):  # as if plotly, ipywidgets and graphviz were not installed
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {forbidden!r}:
            raise ImportError(f"{{name}} is not installed")
        return None
sys.meta_path.insert(0, Block())
"""


def test_labsim_works_without_the_plotting_libraries():
    """``pip install labsim`` brings NumPy only: the simulator must import and run without the viz extra."""
    body = BLOCK.format(forbidden=FORBIDDEN) + """
import numpy as np
import labsim as ls, labsim.numpy as lnp
g = ls.trace(lambda x, y: lnp.maximum(x @ y, 0.0), ls.ShapeDtype((8, 4)), ls.ShapeDtype((4, 3)))
out = ls.evaluate(g, np.ones((8, 4), np.float32), np.ones((4, 3), np.float32))
assert out.shape == (8, 3) and float(out[0, 0]) == 4.0
p = ls.compile(g); ls.simulate(p, "H100 SXM"); p._repr_html_()
try:
    import plotly
except ImportError:
    pass
else:
    raise AssertionError("the block did not hold")
"""
    assert loaded_after(body) == []


def test_the_package_metadata_keeps_plotting_in_an_extra():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["dependencies"] == ["numpy>=1.24"]
    extra = " ".join(meta["optional-dependencies"]["viz"])
    assert all(lib in extra for lib in ("plotly", "ipywidgets", "graphviz"))
