"""labsim beside a real GPU: the measurement plan, labsim's prediction for each measurement, and the check
of a measurement file.

``benchmarks/calibrate_gpu.py`` runs :data:`PLAN` on an NVIDIA GPU with PyTorch (and CuPy for the empty
kernel) and writes ``book/data/gpu_calibration.json``; the accuracy appendix reads that file with
:func:`load` and prints :func:`rows`: each measurement beside what labsim predicts for the same
experiment on the matching preset. The plan lives here, once, so the script and the predictions cannot
ask different questions.

The five groups, and what labsim runs to predict each (all on :func:`preset_for` of the measured device):

``launch``
    ``n`` kernels launched back to back, timed on the host from the first launch to the end of a final
    synchronisation, divided by ``n``. ``via="cuda"``: an empty kernel through the driver (CuPy's
    ``RawKernel``; no framework in the way). ``via="torch"``: a one-element in-place add, so each launch
    also pays PyTorch's eager dispatch. ``how`` is "async" (synchronise once at the end), "sync"
    (synchronise after each kernel) or "graph" (capture the ``n`` launches as a CUDA Graph once, then time
    one replay). labsim: :func:`labsim.machines.host.kernel_loop` with kernels of the chip's latency floor
    (``min_kernel_time``), ``eager`` for ``via="torch"``. Unit: seconds per kernel.
``copy``
    ``bytes`` moved host → device ("h2d") or device → host ("d2h") from pinned or pageable host memory,
    or device → device ("d2d"), timed from enqueue to the end of a synchronisation. labsim:
    :class:`labsim.machines.host.Machine` ``put`` / ``get`` with ``pinned``; for "d2d" the roofline
    time of one elementwise kernel that reads and writes ``bytes``. Unit: bytes per second, counted as
    ``bytes`` for h2d/d2h and ``2 × bytes`` (read and write) for d2d.
``matmul``
    an ``n × n × n`` product in ``dtype`` (float32 with TF32 tensor cores allowed, as JAX's default
    precision), ``reps`` back to back between CUDA events. labsim: the roofline time of the one
    contraction kernel of ``lnp.dot`` on the preset, launch costs left out. Unit: FLOP/s (``2n³ / t``).
``chain``
    ``ops`` elementwise multiplications of a float32 vector of ``n`` elements, called ``reps`` times,
    eagerly (one kernel per op) or compiled (``torch.compile``: one fused kernel), timed on the host to a
    final synchronisation. labsim: ``Machine.call(..., mode="eager" | "jit")`` on the same traced chain.
    Unit: seconds per call.

A prediction is what labsim computes, not a fitted number: the appendix shows the ratio so a reader
sees where labsim's assumptions (``EAGER_OP_TIME``, ``min_kernel_time``, the 2019 launch figures, a GEMM
at the tensor cores' peak) hold and where they do not.
"""
from __future__ import annotations
from ..support.errors import ArgumentError, ArgumentTypeError

import json
import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from ..core.avals import ShapeDtype
from ..compiler.pipeline import compile as _compile
from ..core.trace import trace
from ..hardware import Chip, get
from ..machines import host
from ..machines.roofline import kernel_cost

SCHEMA = 1
GROUPS = ("launch", "copy", "matmul", "chain")
UNITS = {"launch": "s", "copy": "B/s", "matmul": "FLOP/s", "chain": "s"}
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "book" / "data" / "gpu_calibration.json"

_MiB = 2**20


def _plan(smoke: bool = False) -> tuple[dict, ...]:
    """The experiments, in the order the script runs them. ``smoke``: a few small ones for a CPU run that
    checks the script's plumbing (its numbers are not a calibration)."""
    if smoke:
        return (
            {"group": "launch", "via": "torch", "how": "async", "n": 200},
            {"group": "launch", "via": "torch", "how": "sync", "n": 50},
            {"group": "matmul", "n": 256, "dtype": "float32", "reps": 3},
            {"group": "chain", "n": 2**10, "ops": 4, "mode": "eager", "reps": 20},
        )
    plan: list[dict] = []
    for via in ("cuda", "torch"):
        for how, n in (("async", 2000), ("sync", 200), ("graph", 2000)):
            plan.append({"group": "launch", "via": via, "how": how, "n": n})
    for direction in ("h2d", "d2h"):
        for pinned in (True, False):
            for nbytes in (_MiB, 64 * _MiB, 1024 * _MiB):
                plan.append({"group": "copy", "direction": direction, "pinned": pinned, "bytes": nbytes})
    for nbytes in (64 * _MiB, 1024 * _MiB):
        plan.append({"group": "copy", "direction": "d2d", "pinned": True, "bytes": nbytes})
    for dtype in ("bfloat16", "float16", "float32"):
        for n in (1024, 2048, 4096, 8192):
            plan.append({"group": "matmul", "n": n, "dtype": dtype, "reps": 20})
    for n in (2**10, 2**24):
        for ops in (1, 4, 16):
            for mode in ("eager", "compiled"):
                plan.append({"group": "chain", "n": n, "ops": ops, "mode": mode, "reps": 50})
    return tuple(plan)


# what each group's configuration holds, in the order key() names them
_CONFIG_KEYS = {
    "launch": {"how": ("async", "sync", "graph"), "via": ("cuda", "torch"), "n": int},
    "copy": {"direction": ("h2d", "d2h", "d2d"), "pinned": bool, "bytes": int},
    "matmul": {"dtype": ("bfloat16", "float16", "float32"), "n": int, "reps": int},
    "chain": {"mode": ("eager", "compiled"), "ops": int, "n": int, "reps": int},
}

PLAN = _plan()
SMOKE_PLAN = _plan(smoke=True)


def key(config: Mapping) -> str:
    """One line naming an experiment, e.g. ``copy h2d pinned 1 MiB``; unique within a plan. The
    words come in a fixed order per group, whatever the order of the mapping's keys."""
    g = config.get("group", "?")
    parts = [g]
    for k in _CONFIG_KEYS.get(g, sorted(set(config) - {"group"})):
        v = config.get(k)
        if k == "reps":
            continue
        if k == "pinned":
            if config.get("direction") != "d2d":
                parts.append("pinned" if v else "pageable")
        elif k in ("via", "how", "direction", "dtype", "mode"):
            parts.append(str(v))
        elif k == "bytes":
            parts.append(_size(v))
        else:
            parts.append(f"{k}={v:,}")
    return " ".join(parts)


def _size(nbytes: int) -> str:
    for unit, b in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= b and nbytes % b == 0:
            return f"{nbytes // b} {unit}"
    return f"{nbytes} B"


# --- which preset ----------------------------------------------------------------------------------
_NAMES = (("H200", "H200"), ("H100", "H100 SXM"), ("B200", "B200"), ("A100", "A100"))


def preset_for(device_name: str) -> str:
    """labsim's preset for a device name as CUDA reports it ("NVIDIA H200" → "H200")."""
    if not isinstance(device_name, str):
        raise ArgumentTypeError(f"preset_for: expected a device name string, got {type(device_name).__name__}")
    for needle, preset in _NAMES:
        if needle.lower() in device_name.lower():
            return preset
    raise ArgumentError(f"preset_for: no labsim preset for device {device_name!r}; labsim has presets for "
                     f"{', '.join(n for n, _ in _NAMES)} GPUs")


# --- labsim's predictions --------------------------------------------------------------------------
def _chain_graph(n: int, ops: int):
    from ..frontend import numpy as lnp  # noqa: F401  (the chain uses only operators)

    def chain(x):
        for _ in range(ops):
            x = x * 1.0001
        return x

    return trace(chain, ShapeDtype((n,), "float32"))


@lru_cache(maxsize=None)
def _predict(chip_name: str, config_items: tuple) -> float:
    c = dict(config_items)
    chip = get(chip_name)
    g = c["group"]
    if g == "launch":
        n = c["n"]
        m = host.kernel_loop(n, chip.min_kernel_time, chip=chip, how=c["how"], eager=c["via"] == "torch")
        return m.now / n
    if g == "copy":
        nb = c["bytes"]
        if c["direction"] == "d2d":
            k = _compile(_chain_graph(nb // 4, 1), passes=[]).kernels[0]
            return 2 * nb / kernel_cost(k, chip).time
        m = host.Machine(chip)
        aval = ShapeDtype((nb,), "uint8")
        if c["direction"] == "h2d":
            m.put(aval, pinned=c["pinned"])
            m.synchronize()
            return nb / m.now
        a = m.resident(aval)
        t0 = m.now
        m.get(a, pinned=c["pinned"])
        return nb / (m.now - t0)
    if g == "matmul":
        from ..frontend import numpy as lnp

        n, spec = c["n"], ShapeDtype((c["n"], c["n"]), c["dtype"])
        prog = _compile(trace(lambda a, b: lnp.dot(a, b), spec, spec))
        t = sum(kernel_cost(k, chip).time for k in prog.kernels)
        return 2 * n**3 / t
    if g == "chain":
        reps = c.get("reps", 50)
        gr = _chain_graph(c["n"], c["ops"])
        m = host.Machine(chip)
        x = m.resident(ShapeDtype((c["n"],), "float32"))
        for _ in range(reps):
            m.call(gr, x, mode="eager" if c["mode"] == "eager" else "jit")
        m.synchronize()
        return m.now / reps
    raise ArgumentError(f"predict: unknown group {g!r}; groups are {', '.join(GROUPS)}")


def predict(config: Mapping, chip: Chip | str = "H200") -> float:
    """labsim's prediction for one experiment of :data:`PLAN` on ``chip``, in the group's unit
    (:data:`UNITS`)."""
    _check_config(config, "predict")
    name = chip.name if isinstance(chip, Chip) else chip
    get(chip)  # a clear error for an unknown preset
    return _predict(name, tuple(sorted(config.items())))


# --- the measurement file --------------------------------------------------------------------------
def _check_config(config, where: str) -> None:
    if not isinstance(config, Mapping):
        raise ArgumentTypeError(f"{where}: a configuration is a mapping, got {type(config).__name__}")
    g = config.get("group")
    if g not in _CONFIG_KEYS:
        raise ArgumentError(f"{where}: unknown group {g!r}; groups are {', '.join(GROUPS)}")
    want = _CONFIG_KEYS[g]
    missing = sorted(set(want) - set(config))
    extra = sorted(set(config) - set(want) - {"group"})
    if missing or extra:
        raise ArgumentError(f"{where}: a {g} configuration has keys {sorted(want)}; "
                         f"missing {missing}, unexpected {extra}")
    for k, allowed in want.items():
        v = config[k]
        if allowed is int:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError(f"{where}: {g} {k} must be a positive integer, got {v!r}")
        elif allowed is bool:
            if not isinstance(v, bool):
                raise ArgumentError(f"{where}: {g} {k} must be true or false, got {v!r}")
        elif v not in allowed:
            raise ArgumentError(f"{where}: {g} {k} must be one of {', '.join(allowed)}, got {v!r}")


def validate(data: Any, *, smoke: bool = False) -> dict:
    """Check a measurement file's contents; return it. Errors name the field and what is wrong.

    A measurement either has a positive finite ``value`` (the median of its ``samples``) in its group's
    unit, or ``value`` null and an ``error`` saying why it could not be taken. Every experiment of the
    plan appears exactly once."""
    if not isinstance(data, Mapping):
        raise ArgumentTypeError(f"calibration data: expected a JSON object, got {type(data).__name__}")
    for k in ("schema", "device", "software", "date", "measurements"):
        if k not in data:
            raise ArgumentError(f"calibration data: missing {k!r}")
    if data["schema"] != SCHEMA:
        raise ArgumentError(f"calibration data: schema {data['schema']!r}, this labsim reads schema {SCHEMA}")
    if not isinstance(data["device"], Mapping) or not isinstance(data["device"].get("name"), str):
        raise ArgumentError("calibration data: 'device' must be an object with a 'name' string")
    ms = data["measurements"]
    if not isinstance(ms, list):
        raise ArgumentError(f"calibration data: 'measurements' must be a list, got {type(ms).__name__}")
    seen: dict[str, int] = {}
    for i, m in enumerate(ms):
        where = f"calibration data: measurements[{i}]"
        if not isinstance(m, Mapping) or "config" not in m:
            raise ArgumentError(f"{where}: expected an object with 'config', 'value' and 'unit'")
        _check_config(m["config"], where)
        k = key(m["config"])
        if k in seen:
            raise ArgumentError(f"{where}: {k!r} measured twice (also measurements[{seen[k]}])")
        seen[k] = i
        unit = UNITS[m["config"]["group"]]
        if m.get("unit") != unit:
            raise ArgumentError(f"{where} ({k}): unit must be {unit!r}, got {m.get('unit')!r}")
        v = m.get("value")
        if v is None:
            if not isinstance(m.get("error"), str) or not m["error"]:
                raise ArgumentError(f"{where} ({k}): no value, so it needs an 'error' saying why")
        elif isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v <= 0:
            raise ArgumentError(f"{where} ({k}): value must be a positive finite number, got {v!r}")
    planned = {key(c) for c in (SMOKE_PLAN if smoke else PLAN)}
    missing = sorted(planned - set(seen))
    unplanned = sorted(set(seen) - planned)
    if missing or unplanned:
        raise ArgumentError(f"calibration data: does not match the plan; missing {missing[:4]}"
                         f"{' …' if len(missing) > 4 else ''}, not planned {unplanned[:4]}")
    return dict(data)


def load(path: str | Path | None = None) -> dict | None:
    """The measurement file (default ``book/data/gpu_calibration.json``), checked; None if there is none."""
    p = Path(path) if path is not None else DEFAULT_PATH
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ArgumentError(f"calibration data {p}: not valid JSON ({e})") from None
    return validate(data)


@dataclass(frozen=True)
class Row:
    """One experiment: what was measured, what labsim predicts, and measured ÷ labsim."""

    group: str
    experiment: str
    unit: str
    labsim: float
    measured: float | None
    error: str | None = None

    @property
    def ratio(self) -> float | None:
        return None if self.measured is None else self.measured / self.labsim

    @property
    def labsim_optimistic(self) -> bool | None:
        """True if the GPU did worse than labsim predicts (a longer time, a lower rate)."""
        r = self.ratio
        if r is None:
            return None
        return r > 1 if self.unit == "s" else r < 1


def fmt(value: float | None, unit: str) -> str:
    """A value in its group's unit, readably: µs for times, GB/s for copies, TFLOP/s for products."""
    if value is None:
        return "—"
    if unit == "s":
        return f"{value * 1e6:.3g} µs"
    if unit == "B/s":
        return f"{value / 1e9:,.3g} GB/s" if value < 1e12 else f"{value / 1e12:.3g} TB/s"
    if unit == "FLOP/s":
        return f"{value / 1e12:,.0f} TFLOP/s" if value >= 1e12 else f"{value / 1e9:.3g} GFLOP/s"
    raise ArgumentError(f"fmt: unknown unit {unit!r}; units are {', '.join(sorted(set(UNITS.values())))}")


def table(rows_: list[Row]) -> list[dict]:
    """The rows as a table's records (for ``ls.Table``): experiment, labsim and, once anything was
    measured, the measurement and measured ÷ labsim (an unmeasured row says why)."""
    any_measured = any(r.measured is not None or r.error for r in rows_)
    out = []
    for r in rows_:
        rec = {"experiment": f"{r.group}: {r.experiment}", "labsim": fmt(r.labsim, r.unit)}
        if any_measured:
            rec["measured"] = fmt(r.measured, r.unit) if r.measured is not None else f"not measured ({r.error})"
            rec["measured ÷ labsim"] = "—" if r.ratio is None else f"{r.ratio:.2f}"
        out.append(rec)
    return out


def rows(data: Mapping | None = None, chip: Chip | str | None = None) -> list[Row]:
    """Every experiment of the plan with labsim's prediction, beside its measurement when ``data`` has
    one. ``chip``: default the preset of the measured device (H200 without data)."""
    if data is not None:
        data = validate(data)
        chip = chip or preset_for(data["device"]["name"])
        measured = {key(m["config"]): m for m in data["measurements"]}
    else:
        chip = chip or "H200"
        measured = {}
    out = []
    for c in PLAN:
        k = key(c)
        m = measured.get(k, {})
        out.append(Row(c["group"], k.split(" ", 1)[1], UNITS[c["group"]], predict(c, chip), m.get("value"),
                       m.get("error")))
    return out


__all__ = ["DEFAULT_PATH", "GROUPS", "PLAN", "Row", "SCHEMA", "SMOKE_PLAN", "UNITS", "fmt", "key", "load",
           "predict", "preset_for", "rows", "table", "validate"]
