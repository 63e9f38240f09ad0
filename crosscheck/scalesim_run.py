"""Run SCALE-Sim 3.0.0 on GEMM configurations; used by labsim.peers.scalesim.run_live.

Runs inside SCALE-Sim's own environment (.venv-peers: scalesim==3.0.0 with numpy<2.4), never imports
labsim. Reads a JSON list of {M, N, K, rows, cols, dataflow} on stdin and prints, as the last line of
stdout, a JSON list with one result per configuration: wall_s (the run_scale call only, SCALE-Sim's
Python API with save_disk_space=True, as the stored references were made) and the layer's report
numbers in the format of crosscheck/refs/scalesim.json.

The .cfg follows shared/refs/scalesim_NOTES.md: CALC bandwidth mode, 64 kB SRAMs, with the [layout] and
[sparsity] sections 3.0.0 requires and no [network_presets].
"""
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

CFG = """[general]
run_name = {name}

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: 64
FilterSramSzkB: 64
OfmapSramSzkB: 64
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Bandwidth: 10
Dataflow: {dataflow}
ReadRequestBuffer: 512
WriteRequestBuffer: 512

[layout]
IfmapCustomLayout: False
FilterCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 1
IfmapSRAMBankPort: 2
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 1
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: CALC
UseRamulatorTrace: False
"""


def run_one(c: dict, tmp: Path) -> dict:
    from scalesim.scale_sim import scalesim

    name = f"live_{c['rows']}x{c['cols']}_{c['dataflow']}_{c['M']}_{c['N']}_{c['K']}"
    d = tmp / name
    d.mkdir()
    (d / "run.cfg").write_text(CFG.format(name=name, **c))
    (d / "topo.csv").write_text(f"Layer, M, N, K,\ngemm, {c['M']}, {c['N']}, {c['K']},\n")
    (d / "layout.csv").write_text("Layer name, unused (custom layouts disabled),\n")
    with contextlib.redirect_stdout(io.StringIO()):
        sim = scalesim(save_disk_space=True, verbose=False, config=str(d / "run.cfg"),
                       topology=str(d / "topo.csv"), layout=str(d / "layout.csv"), input_type_gemm=True)
        t0 = time.perf_counter()
        sim.run_scale(top_path=str(d / "out"))
        wall = time.perf_counter() - t0
    layer = sim.runner.single_layer_sim_object_list[0]
    overall, total, stall, util, mapping, compute = layer.get_compute_report_items()
    det = layer.get_detail_report_items()
    return {**c, "wall_s": wall, "total_cycles": int(total), "stall_cycles": int(stall),
            "overall_util_pct": float(util), "mapping_eff_pct": float(mapping), "compute_util_pct": float(compute),
            "sram": {"ifmap_reads": int(det[2]), "filter_reads": int(det[5]), "ofmap_writes": int(det[8])}}


def main() -> None:
    import numpy
    import scalesim  # noqa: F401

    configs = json.loads(sys.stdin.read())
    with tempfile.TemporaryDirectory() as tmp:
        out = [run_one(c, Path(tmp)) for c in configs]
    for r in out:
        r["numpy"] = numpy.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
