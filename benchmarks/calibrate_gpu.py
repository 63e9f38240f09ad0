"""Measure a real NVIDIA GPU on the experiments labsim predicts, for the accuracy appendix.

    python3 benchmarks/calibrate_gpu.py                 # on a machine with an NVIDIA GPU, PyTorch and CuPy
    python3 benchmarks/calibrate_gpu.py --smoke --out /tmp/smoke.json   # CPU: checks the plumbing only

The experiments are ``labsim.peers.calibration.PLAN`` (the module's docstring says what each one times
and how labsim predicts it): launch latency and throughput of empty kernels with and without CUDA Graph
replay, host↔device copies from pinned and pageable memory, device-to-device copies, matrix products
for several sizes and dtypes, and chains of elementwise ops run eagerly and compiled. It writes
``book/data/gpu_calibration.json`` (checked by ``calibration.validate`` before it is written); the book
then shows each measurement beside labsim's prediction. Every experiment is repeated (``--repeats``,
after a warm-up) and its median kept with all samples. An experiment that fails is recorded with its
error, and the others go on; the whole run stops starting new experiments after ``--budget`` seconds
(default 420, to fit one 10-minute device call). Needs only PyTorch (CuPy for the driver-level empty
kernel; without it those rows record the error); imports nothing of labsim but the plan.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from labsim.peers import calibration as cal  # noqa: E402

EMPTY_KERNEL = r'extern "C" __global__ void labsim_empty() {}'


class Bench:
    def __init__(self, torch, device: str, repeats: int):
        self.torch = torch
        self.cuda = device == "cuda"
        self.dev = torch.device(device)
        self.repeats = repeats
        self.method: str | None = None  # how the last experiment was run, where there is a choice

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def wall(self, fn, per: float) -> list[float]:
        """Host time of ``fn()`` to a final synchronisation, divided by ``per``: one warm-up, then repeats."""
        fn()
        self.sync()
        out = []
        for _ in range(self.repeats):
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.sync()
            out.append((time.perf_counter() - t0) / per)
        return out

    def device_time(self, fn, per: float) -> list[float]:
        """Device time of ``fn()`` between CUDA events (host time on the CPU), divided by ``per``."""
        if not self.cuda:
            return self.wall(fn, per)
        torch = self.torch
        fn()
        self.sync()
        out = []
        for _ in range(self.repeats):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) * 1e-3 / per)
        return out

    # --- the four groups -------------------------------------------------------------------------
    def launch(self, c) -> list[float]:
        n, how = c["n"], c["how"]
        if c["via"] == "cuda":
            return self._launch_driver(n, how)
        torch = self.torch
        x = torch.zeros(1, device=self.dev)
        if how == "async":
            def run():
                for _ in range(n):
                    x.add_(1)
            return self.wall(run, n)
        if how == "sync":
            def run():
                for _ in range(n):
                    x.add_(1)
                    self.sync()
            return self.wall(run, n)
        if not self.cuda:
            raise RuntimeError("graph replay needs CUDA")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                x.add_(1)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                x.add_(1)
        return self.wall(g.replay, n)

    def _launch_driver(self, n: int, how: str) -> list[float]:
        if not self.cuda:
            raise RuntimeError("the driver-level empty kernel needs CUDA")
        try:
            samples = self._launch_cupy(n, how)
            self.method = "CuPy RawKernel, an empty kernel"
            return samples
        except Exception as e:  # noqa: BLE001 — CuPy missing or its graph API changed: the nearest torch kernel
            first = f"{type(e).__name__}: {e}"[:200]
        torch = self.torch
        self.method = f"torch.cuda._sleep(0) (CuPy failed: {first})"
        if how == "graph":
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                torch.cuda._sleep(0)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(n):
                    torch.cuda._sleep(0)
            return self.wall(g.replay, n)

        def run():
            for _ in range(n):
                torch.cuda._sleep(0)
                if how == "sync":
                    self.sync()
        return self.wall(run, n)

    def _launch_cupy(self, n: int, how: str) -> list[float]:
        import cupy as cp

        k = cp.RawKernel(EMPTY_KERNEL, "labsim_empty")
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            k((1,), (1,), ())
            stream.synchronize()
            if how == "graph":
                stream.begin_capture()
                for _ in range(n):
                    k((1,), (1,), ())
                graph = stream.end_capture()
                graph.launch()
                stream.synchronize()

            def run():
                if how == "graph":
                    graph.launch()
                else:
                    for _ in range(n):
                        k((1,), (1,), ())
                        if how == "sync":
                            stream.synchronize()
                stream.synchronize()

            out = []
            run()
            for _ in range(self.repeats):
                t0 = time.perf_counter()
                run()
                out.append((time.perf_counter() - t0) / n)
        return out

    def copy(self, c) -> list[float]:
        torch, nb = self.torch, c["bytes"]
        if not self.cuda:
            raise RuntimeError("host-device copies need CUDA")
        u8 = torch.uint8
        if c["direction"] == "d2d":
            a = torch.ones(nb, dtype=u8, device=self.dev)
            b = torch.empty_like(a)
            return [2 * nb / t for t in self.device_time(lambda: b.copy_(a), 1)]
        gpu = torch.ones(nb, dtype=u8, device=self.dev)
        # pageable buffers are written once so that every page is mapped before the clock starts
        host = torch.empty(nb, dtype=u8, pin_memory=True) if c["pinned"] else torch.ones(nb, dtype=u8)
        host.fill_(1)
        if c["direction"] == "h2d":
            return [nb / t for t in self.wall(lambda: gpu.copy_(host, non_blocking=c["pinned"]), 1)]
        return [nb / t for t in self.wall(lambda: host.copy_(gpu, non_blocking=c["pinned"]), 1)]

    def matmul(self, c) -> list[float]:
        torch, n, reps = self.torch, c["n"], c["reps"]
        dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}[c["dtype"]]
        if self.cuda:
            # float32 products on the tensor cores (TF32), as under JAX's default precision and in labsim
            torch.backends.cuda.matmul.allow_tf32 = True
        a = torch.randn(n, n, device=self.dev, dtype=dtype)
        b = torch.randn(n, n, device=self.dev, dtype=dtype)
        out = torch.empty(n, n, device=self.dev, dtype=dtype)

        def run():
            for _ in range(reps):
                torch.mm(a, b, out=out)
        for _ in range(2):
            run()
        return [2 * n**3 / t for t in self.device_time(run, reps)]

    def chain(self, c) -> list[float]:
        torch, ops, reps = self.torch, c["ops"], c["reps"]

        def chain(x):
            for _ in range(ops):
                x = x * 1.0001
            return x

        fn = chain
        if c["mode"] == "compiled":
            fn = torch.compile(chain, dynamic=False, fullgraph=True)
        x = torch.ones(c["n"], device=self.dev)
        for _ in range(3):  # compile and warm
            fn(x)

        def run():
            for _ in range(reps):
                fn(x)
        return self.wall(run, reps)


def _smi() -> dict:
    fields = "name,driver_version,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.memory,power.limit"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": f"nvidia-smi: {e}"}
    if not out:
        return {"error": "nvidia-smi printed nothing"}
    return dict(zip(fields.split(","), (v.strip() for v in out[0].split(","))))


def describe(torch, cuda: bool) -> tuple[dict, dict]:
    device: dict = {"name": "CPU (smoke run, not a calibration)", "host": platform.processor() or platform.machine(),
                    "host_cpus": os.cpu_count()}
    software = {"python": platform.python_version(), "torch": torch.__version__}
    if cuda:
        p = torch.cuda.get_device_properties(0)
        device.update(name=torch.cuda.get_device_name(0), capability=f"{p.major}.{p.minor}",
                      multiprocessors=p.multi_processor_count, memory_bytes=p.total_memory, nvidia_smi=_smi())
        software["cuda"] = torch.version.cuda
        try:
            import cupy
            software["cupy"] = cupy.__version__
        except ImportError as e:
            software["cupy"] = f"not available: {e}"
        try:
            import triton
            software["triton"] = triton.__version__
        except ImportError:
            pass
    return device, software


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None, help=f"where to write (default {cal.DEFAULT_PATH})")
    ap.add_argument("--smoke", action="store_true", help="run the small CPU plan (checks the script, measures nothing)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--budget", type=float, default=420.0, help="seconds after which no new experiment starts")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("calibrate_gpu: needs PyTorch (import torch failed)", file=sys.stderr)
        return 2
    cuda = not args.smoke
    if cuda and not torch.cuda.is_available():
        print("calibrate_gpu: no CUDA device; run it on a machine with an NVIDIA GPU (or --smoke on a CPU)",
              file=sys.stderr)
        return 2
    out_path = args.out or (ROOT / "_build" / "calibration-smoke.json" if args.smoke else cal.DEFAULT_PATH)
    if cuda:
        try:  # six compiled chains with different lengths: room for their recompilations
            torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
        except AttributeError:
            pass
    bench = Bench(torch, "cuda" if cuda else "cpu", args.repeats)
    device, software = describe(torch, cuda)
    print(f"calibrate_gpu: {device['name']}, torch {software['torch']}", flush=True)
    start = time.perf_counter()
    measurements = []
    for c in (cal.SMOKE_PLAN if args.smoke else cal.PLAN):
        k, unit = cal.key(c), cal.UNITS[c["group"]]
        rec = {"config": dict(c), "unit": unit, "value": None}
        t0 = time.perf_counter()
        if t0 - start > args.budget:
            rec["error"] = f"not run: the {args.budget:.0f} s budget was spent"
        else:
            try:
                bench.method = None
                samples = getattr(bench, c["group"])(c)
                if bench.method:
                    rec["method"] = bench.method
                rec["value"] = statistics.median(samples)
                rec["samples"] = samples
            except Exception as e:  # noqa: BLE001 — record it and go on with the next experiment
                rec["error"] = f"{type(e).__name__}: {e}"[:400]
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        measurements.append(rec)
        shown = f"{rec['value']:.4g} {unit}" if rec["value"] is not None else rec["error"]
        print(f"  {k:45} {shown}  ({rec['seconds']:.1f} s)", flush=True)
    data = {"schema": cal.SCHEMA, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": device, "software": software, "repeats": args.repeats,
            "seconds": round(time.perf_counter() - start, 1), "measurements": measurements}
    cal.validate(data, smoke=args.smoke)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(data, indent=1) + "\n")
    failed = sum(m["value"] is None for m in measurements)
    print(f"calibrate_gpu: wrote {out_path} ({len(measurements)} experiments, {failed} without a value, "
          f"{data['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
