"""Parity with SCALE-Sim v3.0.0 (PyPI ``scalesim``), a cycle-accurate systolic-array simulator written in
Python (book/references.bib: ``samajdar2018scalesim``, ``samajdar2020scalesim``).

Reference data recorded from the real tool lives in ``crosscheck/refs/scalesim.json`` (its notes are
``shared/refs/scalesim_NOTES.md``). For every layer of every entry, :func:`rows` compares labsim's
closed form (``ls.systolic.stats``, which ``ls.systolic.simulate`` reproduces cycle by cycle) with what
SCALE-Sim reported: total cycles, overall utilisation, mapping efficiency, compute utilisation, and
SRAM reads of the ifmap (A) and filter (B) and writes of the ofmap (C).

Two numbers are compared through a stated conversion rather than directly (``ls.systolic``'s docstring
explains both):

* cycles: SCALE-Sim's "Total Cycles" is labsim's count minus :data:`SCALESIM_CYCLE_OFFSET` (1); its
  overall utilisation divides by that smaller number;
* output-stationary ofmap writes: SCALE-Sim adds ``rows + cols`` per fold that no value corresponds to;
  the comparison adds ``folds·(R + C)`` to labsim's real writes (:func:`ls.systolic.scalesim_ofmap_writes`)
  and records the term in :attr:`ScaleSimRow.ofmap_quirk`.

:func:`run_live` runs SCALE-Sim itself (in its own environment, ``.venv-peers``: it needs NumPy below
2.4) on any configuration, for ``make crosscheck`` and ``benchmarks/bench_systolic.py``.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..machines import systolic

ROOT = Path(__file__).resolve().parents[2]
REFS = ROOT / "crosscheck" / "refs"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
RUNNER = ROOT / "crosscheck" / "scalesim_run.py"

SCALESIM_CYCLE_OFFSET = systolic.SCALESIM_CYCLE_OFFSET

# compared quantity -> (SCALE-Sim's name in its reports, absolute tolerance). Percentages are compared
# to 1e-9 (SCALE-Sim prints Python floats; labsim computes the same quotient).
QUANTITIES = {
    "total_cycles": ("Total Cycles", 0),
    "overall_util_pct": ("Overall Util %", 1e-9),
    "mapping_eff_pct": ("Mapping Efficiency %", 1e-9),
    "compute_util_pct": ("Compute Util %", 1e-9),
    "ifmap_reads": ("SRAM IFMAP Reads", 0),
    "filter_reads": ("SRAM Filter Reads", 0),
    "ofmap_writes": ("SRAM OFMAP Writes", 0),
}


def load(name: str = "scalesim.json") -> dict:
    return json.loads((REFS / name).read_text())


def as_scalesim(s: systolic.Stats) -> dict:
    """labsim's numbers for one layer, stated in SCALE-Sim's units and conventions."""
    return {
        "total_cycles": s.scalesim_total_cycles,
        "overall_util_pct": 100 * s.scalesim_overall_util,
        "mapping_eff_pct": 100 * s.mapping_efficiency,
        "compute_util_pct": 100 * s.compute_utilization,
        "ifmap_reads": s.reads_a,
        "filter_reads": s.reads_b,
        "ofmap_writes": systolic.scalesim_ofmap_writes(s),
    }


def reported(layer: dict) -> dict:
    """SCALE-Sim's numbers for one layer of a stored entry (or of :func:`run_live`)."""
    return {"total_cycles": layer["total_cycles"], "overall_util_pct": layer["overall_util_pct"],
            "mapping_eff_pct": layer["mapping_eff_pct"], "compute_util_pct": layer["compute_util_pct"],
            "ifmap_reads": layer["sram"]["ifmap_reads"], "filter_reads": layer["sram"]["filter_reads"],
            "ofmap_writes": layer["sram"]["ofmap_writes"]}


@dataclass(frozen=True)
class ScaleSimRow:
    """One layer of one SCALE-Sim run against labsim."""

    entry: str
    layer: str
    dataflow: str
    rows: int
    cols: int
    M: int
    N: int
    K: int
    stats: systolic.Stats
    labsim: dict      # labsim's numbers in SCALE-Sim's conventions (as_scalesim)
    scalesim: dict    # what SCALE-Sim reported

    @property
    def differs(self) -> set[str]:
        return {q for q, (_, tol) in QUANTITIES.items() if abs(self.labsim[q] - self.scalesim[q]) > tol}

    @property
    def match(self) -> bool:
        return not self.differs

    @property
    def ofmap_quirk(self) -> int:
        """SCALE-Sim's ofmap writes minus labsim's real writes: folds·(R + C) for os, 0 otherwise."""
        return self.scalesim["ofmap_writes"] - self.stats.writes_c


def compare(M: int, N: int, K: int, rows: int, cols: int, dataflow: str, layer: dict, *, entry: str = "",
            name: str = "") -> ScaleSimRow:
    s = systolic.stats(M, N, K, rows=rows, cols=cols, dataflow=dataflow)
    return ScaleSimRow(entry=entry, layer=name, dataflow=s.dataflow.value, rows=rows, cols=cols, M=M, N=N, K=K,
                       stats=s, labsim=as_scalesim(s), scalesim=reported(layer))


def rows(refs: dict | None = None) -> list[ScaleSimRow]:
    """Every layer of every stored SCALE-Sim entry, against labsim."""
    refs = refs or load()
    out = []
    for e in refs["entries"]:
        if not e.get("ok", True):
            continue
        for layer in e["layers"]:
            M, N, K = layer["mnk"]
            out.append(compare(M, N, K, e["array_rows"], e["array_cols"], e["dataflow"], layer, entry=e["id"],
                               name=layer["layer_name"]))
    return out


def peers_available() -> bool:
    return PEERS_PYTHON.exists()


def run_live(configs: list[dict], *, python: str | os.PathLike | None = None, timeout: float = 3600) -> list[dict]:
    """Run SCALE-Sim 3.0.0 on ``configs`` (dicts with M, N, K, rows, cols, dataflow) in its own
    environment and return, per config, its wall time (``wall_s``, the ``run_scale`` call only) and
    one layer dict in the stored format (``total_cycles``, ..., ``sram``)."""
    python = Path(python or PEERS_PYTHON)
    if not python.exists():
        raise FileNotFoundError(f"SCALE-Sim's environment is missing ({python}); make crosscheck creates it")
    proc = subprocess.run([str(python), str(RUNNER)], input=json.dumps(configs), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"SCALE-Sim run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------------
# Side by side: labsim's cycle-level simulation against SCALE-Sim, same configurations, one run

SPEED_CONFIGS = [dict(M=256, N=256, K=256, rows=32, cols=32, dataflow=d) for d in ("ws", "os", "is")] + \
                [dict(M=512, N=512, K=512, rows=128, cols=128, dataflow=d) for d in ("ws", "os", "is")]


def _stored_wall(c: dict, refs: dict) -> float | None:
    for e in refs["entries"]:
        if (e["array_rows"], e["array_cols"], e["dataflow"]) == (c["rows"], c["cols"], c["dataflow"]) and \
                len(e["layers"]) == 1 and e["layers"][0]["mnk"] == [c["M"], c["N"], c["K"]]:
            return e["wall_s"]
    return None


def speed_rows(configs: list[dict] | None = None, *, live: bool | None = None, repeats: int = 3,
               dtype: str = "float32", seed: int = 0) -> list[dict]:
    """For each configuration: labsim's ``simulate`` wall time (best of ``repeats``, real values of
    ``dtype``, no trace), SCALE-Sim's wall time (its ``run_scale`` call, live in ``.venv-peers`` when
    installed, else the time stored with the reference if there is one), both cycle counts and the ratio.
    SCALE-Sim computes cycles and accesses only, no values; labsim computes both."""
    import time

    import numpy as np

    configs = configs or SPEED_CONFIGS
    live = peers_available() if live is None else live
    peer = run_live(configs) if live else [None] * len(configs)
    refs = load()
    rng = np.random.default_rng(seed)
    out = []
    for c, p in zip(configs, peer):
        A = rng.standard_normal((c["M"], c["K"])).astype(dtype)
        B = rng.standard_normal((c["K"], c["N"])).astype(dtype)
        best, res = float("inf"), None
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = systolic.simulate(A, B, rows=c["rows"], cols=c["cols"], dataflow=c["dataflow"], trace=False)
            best = min(best, time.perf_counter() - t0)
        ok = bool(np.allclose(res.output, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-3, atol=1e-2))
        if p is not None:
            s_wall, s_cycles, source = p["wall_s"], p["total_cycles"], "live"
        else:
            s_wall, s_cycles, source = _stored_wall(c, refs), None, "stored"
            for r in rows(refs):
                if (r.rows, r.cols, r.dataflow, r.M, r.N, r.K) == (c["rows"], c["cols"], c["dataflow"], c["M"], c["N"], c["K"]):
                    s_cycles = r.scalesim["total_cycles"]
        out.append({**c, "labsim_s": best, "labsim_cycles": res.cycles, "values_ok": ok,
                    "scalesim_s": s_wall, "scalesim_cycles": s_cycles, "source": source if s_wall else "—",
                    "ratio": (s_wall / best) if s_wall else None,
                    "cycles_equal": None if s_cycles is None else res.cycles - SCALESIM_CYCLE_OFFSET == s_cycles})
    return out
