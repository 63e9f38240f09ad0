"""make crosscheck: labsim against XLA's cost_analysis, PyTorch's FlopCounterMode and SCALE-Sim.

1. Stored references (crosscheck/refs/, recorded from the real tools): every XLA function must match on
   FLOPs and transcendentals or carry an explanation in labsim.parity.XLA_EXPLAINED; every PyTorch
   configuration must match forward and forward+backward FLOPs exactly.
2. Live peers, where installed (make crosscheck installs JAX and PyTorch for the CPU): JAX recompiles each
   stored function and its cost_analysis is compared with the stored numbers and with labsim; PyTorch's
   FlopCounterMode is run on the recorded layers built in torch and compared with labsim.
3. SCALE-Sim 3.0.0 (systolic arrays): every stored layer (crosscheck/refs/scalesim.json) must agree with
   ls.systolic on cycles (SCALE-Sim = labsim - 1), utilisation, mapping efficiency, compute utilisation and
   SRAM accesses (os ofmap writes: SCALE-Sim adds folds·(R+C), see labsim/machines/systolic.py). Where
   .venv-peers exists (make crosscheck creates it), SCALE-Sim itself runs on fresh random configurations and
   on the side-by-side speed table (labsim's cycle-level simulation against SCALE-Sim, same configurations).
4. The importers (ls.from_torch, ls.from_jax) on the appendix's GPT-2-style block, against PyTorch.
5. The GPU calibration script (benchmarks/calibrate_gpu.py) runs its small CPU plan and writes a valid file.
Exit status 1 on any unexplained difference.
"""
from __future__ import annotations

import sys

from labsim import parity
from labsim.peers import scalesim
from labsim.support.tables import markdown_table

failures: list[str] = []
passed = 0


def check(ok: bool, what: str) -> None:
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)


def xla_stored() -> list:
    rows = parity.xla_rows()
    table = []
    for r in rows:
        explained = parity.XLA_EXPLAINED.get(r.name)
        table.append({"function": r.name, "FLOPs labsim": r.flops if r.flops is not None else "—",
                      "FLOPs XLA": r.xla_flops, "transc. labsim": r.transcendentals if r.transcendentals is not None else "—",
                      "transc. XLA": r.xla_transcendentals, "kernels labsim": r.kernels if r.kernels is not None else "—",
                      "kernels XLA": r.xla_kernels, "status": "match" if r.all_match else
                      ("explained: " + explained[0]) if explained else "UNEXPLAINED"})
        check(r.explained(), f"xla {r.name}: differs in {sorted(r.differs) or 'nothing'} but XLA_EXPLAINED says "
                             f"{explained[0] if explained else 'no difference'}")
    print("## labsim versus XLA (stored cost_analysis, CPU backend)\n")
    print(markdown_table(table))
    n_flops = sum(r.flops_match for r in rows)
    n_k = sum(r.kernels_match for r in rows)
    print(f"\nFLOPs and transcendentals equal for {n_flops} of {len(rows)} functions; kernel count equal for "
          f"{n_k} of {len(rows)}; fully equal (FLOPs, transcendentals, bytes, kernels): "
          f"{sum(r.all_match for r in rows)}.\n")
    return rows


def torch_stored() -> list:
    rows = parity.torch_rows()
    print("## labsim versus PyTorch FlopCounterMode (stored, meta device)\n")
    print(markdown_table([{"config": r.config, "component": r.component, "fwd labsim": r.forward,
                           "fwd torch": r.torch_forward, "fwd+bwd labsim": r.forward_backward,
                           "fwd+bwd torch": r.torch_forward_backward, "match": r.match} for r in rows]))
    for r in rows:
        check(r.match, f"torch {r.config}/{r.component}: labsim {r.forward}/{r.forward_backward} vs "
                       f"torch {r.torch_forward}/{r.torch_forward_backward}")
    print(f"\n{sum(r.match for r in rows)} of {len(rows)} configurations equal, forward and forward+backward.\n")
    return rows


def jax_live(rows) -> None:
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        print("JAX is not installed: live XLA check skipped (make crosscheck installs it).\n")
        return
    import numpy as np
    refs = parity.load("xla.json")
    print(f"## live JAX {jax.__version__} ({jax.default_backend()})\n")
    table = []
    by_name = {r.name: r for r in rows}
    for f in refs["functions"]:
        ns = {"jnp": jnp, "jax": jax, "lax": lax, "np": np, "F32": jnp.float32}
        exec(f["source"], ns)
        args = [jax.ShapeDtypeStruct(tuple(s), f["dtype"]) for s in f["arg_shapes"]]
        ca = jax.jit(ns[f["name"]]).lower(*args).compile().cost_analysis()
        ca = ca[0] if isinstance(ca, list) else ca
        live = int(ca.get("flops", 0))
        stored = int(f["cost_analysis"]["flops"])
        r = by_name[f["name"]]
        table.append({"function": f["name"], "FLOPs live XLA": live, "FLOPs stored": stored,
                      "FLOPs labsim": r.flops if r.flops is not None else "—"})
        check(live == stored or f["name"] == "fori_loop_accumulate",
              f"live XLA {f['name']}: {live} FLOPs, stored reference says {stored}")
    print(markdown_table(table))
    print()


def torch_live() -> None:
    try:
        import torch
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        print("PyTorch is not installed: live FlopCounterMode check skipped (make crosscheck installs it).\n")
        return
    import torch.nn as tnn
    import torch.nn.functional as F

    refs = parity.load("torch_flops.json")
    configs = {c["name"]: c for c in refs["configs"]}

    class MLP(tnn.Module):
        def __init__(self, d, f, bias, swiglu):
            super().__init__()
            self.swiglu = swiglu
            self.up = tnn.Linear(d, f, bias=bias)
            self.gate = tnn.Linear(d, f, bias=bias) if swiglu else None
            self.down = tnn.Linear(f, d, bias=bias)

        def forward(self, x):
            h = F.silu(self.gate(x)) * self.up(x) if self.swiglu else F.gelu(self.up(x))
            return self.down(h)

    class Attn(tnn.Module):
        def __init__(self, c):
            super().__init__()
            d, h, kv = c["d_model"], c["n_heads"], c["n_kv_heads"]
            self.h, self.kv, self.hd = h, kv, d // h
            self.q = tnn.Linear(d, d, bias=c["bias"])
            self.k = tnn.Linear(d, kv * self.hd, bias=c["bias"])
            self.v = tnn.Linear(d, kv * self.hd, bias=c["bias"])
            self.o = tnn.Linear(d, d, bias=c["bias"])

        def forward(self, x):
            B, S, D = x.shape
            q = self.q(x).view(B, S, self.h, self.hd).transpose(1, 2)
            k = self.k(x).view(B, S, self.kv, self.hd).transpose(1, 2).repeat_interleave(self.h // self.kv, 1)
            v = self.v(x).view(B, S, self.kv, self.hd).transpose(1, 2).repeat_interleave(self.h // self.kv, 1)
            s = (q @ k.transpose(-1, -2)) / self.hd ** 0.5
            s = s.masked_fill(~torch.ones(S, S, dtype=torch.bool, device=x.device).tril(), float("-inf"))
            return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(B, S, D))

    print(f"## live PyTorch {torch.__version__} FlopCounterMode (meta device)\n")
    table = []
    for case in refs["cases"]:
        c = configs[case["config"]]
        comp = case["component"]
        if comp not in ("linear", "mlp_gelu", "mlp_swiglu", "attention_explicit"):
            continue
        with torch.device("meta"):
            m = {"linear": lambda: tnn.Linear(c["d_model"], c["d_ff"], bias=c["bias"]),
                 "mlp_gelu": lambda: MLP(c["d_model"], c["d_ff"], c["bias"], False),
                 "mlp_swiglu": lambda: MLP(c["d_model"], c["d_ff"], c["bias"], True),
                 "attention_explicit": lambda: Attn(c)}[comp]()
            x = torch.empty(*case["input_shape"], requires_grad=True)
        with FlopCounterMode(display=False) as fc:
            y = m(x)
        fwd = fc.get_total_flops()
        with FlopCounterMode(display=False) as fc:
            m(x).sum().backward()
        both = fc.get_total_flops()
        f, specs = parity.torch_layer(case, c)
        r = parity.counting.backprop_cost(f, *specs)
        table.append({"config": case["config"], "component": comp, "fwd torch live": fwd, "fwd labsim": r["forward"],
                      "fwd+bwd torch live": both, "fwd+bwd labsim": r["forward+backward"]})
        check(fwd == r["forward"] and both == r["forward+backward"],
              f"live torch {case['config']}/{comp}: torch {fwd}/{both} vs labsim {r['forward']}/{r['forward+backward']}")
    print(markdown_table(table))
    print()


def scalesim_stored() -> None:
    rows = scalesim.rows()
    print("## labsim versus SCALE-Sim 3.0.0 (stored runs, crosscheck/refs/scalesim.json)\n")
    groups: dict = {}
    for r in rows:
        g = groups.setdefault((r.rows, r.cols, r.dataflow), {"layers": 0, "equal": 0, "quirk": 0})
        g["layers"] += 1
        g["equal"] += r.match
        g["quirk"] += r.ofmap_quirk
        check(r.match, f"scalesim {r.entry}/{r.layer}: differs in {sorted(r.differs)}: "
                       f"labsim {[r.labsim[q] for q in sorted(r.differs)]} vs SCALE-Sim {[r.scalesim[q] for q in sorted(r.differs)]}")
        check(r.ofmap_quirk == (r.stats.folds * (r.rows + r.cols) if r.dataflow == "os" else 0),
              f"scalesim {r.entry}/{r.layer}: ofmap writes differ by {r.ofmap_quirk}, not the stated os term")
    print(markdown_table([{"array": f"{a}×{b}", "dataflow": d, "layers": g["layers"], "all 7 numbers agree": g["equal"],
                           "os ofmap term folds·(R+C), summed": g["quirk"]} for (a, b, d), g in sorted(groups.items())]))
    print(f"\n{sum(r.match for r in rows)} of {len(rows)} layers agree on total cycles (SCALE-Sim = labsim − 1), "
          f"overall and compute utilisation, mapping efficiency, and SRAM ifmap/filter reads and ofmap writes "
          f"(os: SCALE-Sim's extra folds·(R+C) added to labsim's real writes).\n")


def scalesim_live(n: int = 12, seed: int | None = None) -> None:
    if not scalesim.peers_available():
        print("SCALE-Sim's environment (.venv-peers) is missing: live SCALE-Sim checks skipped "
              "(make crosscheck creates it).\n")
        return
    import numpy as np
    rng = np.random.default_rng(seed)
    configs = [dict(M=int(rng.integers(1, 48)), N=int(rng.integers(1, 48)), K=int(rng.integers(1, 48)),
                    rows=int(rng.integers(1, 17)), cols=int(rng.integers(1, 17)), dataflow=("ws", "os", "is")[i % 3])
               for i in range(n)]
    print(f"## live SCALE-Sim 3.0.0 on {n} fresh random configurations\n")
    table = []
    for o in scalesim.run_live(configs):
        r = scalesim.compare(o["M"], o["N"], o["K"], o["rows"], o["cols"], o["dataflow"], o)
        A = rng.integers(-3, 4, (r.M, r.K)).astype(float)
        B = rng.integers(-3, 4, (r.K, r.N)).astype(float)
        sim = scalesim.systolic.simulate(A, B, rows=r.rows, cols=r.cols, dataflow=r.dataflow, trace=False)
        sim_ok = bool((sim.output == A @ B).all()) and sim.cycles - 1 == o["total_cycles"]
        table.append({"array": f"{r.rows}×{r.cols}", "dataflow": r.dataflow, "M·N·K": f"{r.M}·{r.N}·{r.K}",
                      "cycles labsim": sim.cycles, "Total Cycles SCALE-Sim": o["total_cycles"],
                      "all numbers agree": r.match, "simulated = A@B": sim_ok})
        check(r.match and sim_ok, f"live scalesim {o}: differs in {sorted(r.differs)}, simulation ok {sim_ok}")
    print(markdown_table(table))
    print()


def scalesim_speed() -> None:
    live = scalesim.peers_available()
    print("## labsim's cycle-level simulation against SCALE-Sim, same configurations, one run\n")
    table = []
    for r in scalesim.speed_rows(live=live):
        table.append({"array": f"{r['rows']}×{r['cols']}", "dataflow": r["dataflow"],
                      "M·N·K": f"{r['M']}·{r['N']}·{r['K']}", "labsim s": f"{r['labsim_s']:.3f}",
                      "SCALE-Sim s": f"{r['scalesim_s']:.3f} ({r['source']})" if r["scalesim_s"] else "not run",
                      "ratio": f"{r['ratio']:.1f}×" if r["ratio"] else "—", "cycles labsim": r["labsim_cycles"],
                      "Total Cycles SCALE-Sim": r["scalesim_cycles"] if r["scalesim_cycles"] is not None else "—",
                      "equal up to −1": r["cycles_equal"]})
        check(r["values_ok"], f"speed table {r}: labsim's product differs from NumPy")
        if r["cycles_equal"] is not None:
            check(r["cycles_equal"], f"speed table {r}: cycles differ beyond the stated offset")
    print(markdown_table(table))
    print("\nlabsim computes the product's values as well (float32, checked against NumPy); SCALE-Sim computes "
          "cycles and accesses only. Timing is informative; only the counts are checked.\n")


def importers_live() -> None:
    """ls.from_torch and ls.from_jax on the GPT-2-style block of book/bring_your_own.md: the imported graphs
    compute what PyTorch and JAX compute, and what the page's labsim.numpy twin computes; their compiled
    kernels and FLOPs are printed side by side."""
    import numpy as np

    import labsim as ls
    from labsim.importers import examples

    try:
        import jax  # noqa: F401
        import torch
    except ImportError as e:
        check(False, f"importers: {e} (make crosscheck installs JAX and PyTorch)")
        return
    print("## Importers: the GPT-2-style block of 'Bring your own model'\n")
    params = examples.random_params()
    x = np.random.default_rng(1).standard_normal((examples.BATCH, examples.SEQ, examples.D_MODEL)).astype(np.float32)
    block = examples.gpt2_block_torch(params)
    want = block(torch.from_numpy(x)).detach().numpy()
    graphs = {
        "labsim.numpy": (ls.trace(examples.gpt2_block_lnp, {k: ls.ShapeDtype(v.shape) for k, v in params.items()},
                                  ls.ShapeDtype(x.shape)), (params, x)),
        "ls.from_torch": (ls.from_torch(block, torch.from_numpy(x)), ls.torch_arguments(block, torch.from_numpy(x))),
        "ls.from_jax": (ls.from_jax(examples.gpt2_block_jax, params, x), (params, x)),
    }
    rows = []
    for name, (g, args) in graphs.items():
        got = np.asarray(ls.evaluate(g, *args))
        err = float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))
        prog = ls.compile(g)
        cost = ls.estimate(prog, "H100 SXM")
        rows.append({"graph": name, "nodes": len(g.nodes), "kernels": len(prog.kernels), "FLOPs": cost.flops,
                     "bytes (H100)": cost.bytes, "max rel. error vs PyTorch": err})
        check(err < 1e-5, f"importers: {name} differs from PyTorch by {err:.2e} (relative)")
    jax_err = float(np.max(np.abs(np.asarray(examples.gpt2_block_jax(params, x)) - want)))
    check(jax_err < 1e-4, f"importers: the JAX and PyTorch blocks disagree by {jax_err:.2e}")
    print(markdown_table(rows))
    print()
    importers_corpus_live()


def importers_corpus_live() -> None:
    """The importers' corpus (crosscheck/importers_corpus.py, also tests/test_importers_corpus.py): each JAX
    function and PyTorch module imported, its values and FLOPs set against its framework's."""
    import importers_corpus as corpus  # beside this script

    print("## Importers corpus: values and FLOPs against JAX (XLA cost_analysis) and PyTorch (FlopCounterMode)\n")
    table = []
    for framework, cases, check_case in (("JAX", corpus.jax_corpus(), corpus.check_jax),
                                         ("PyTorch", corpus.torch_corpus(), corpus.check_torch)):
        for name, (fn, args) in cases.items():
            try:
                r = check_case(name, fn, args)
            except Exception as e:  # a refusal or a crash is a failure of this case, reported with its message
                table.append({"framework": framework, "name": name, "values equal": False, "max rel. error": "—",
                              "FLOPs labsim": "—", "FLOPs peer": "—", "status": f"ERROR: {str(e)[:120]}"})
                check(False, f"importers corpus {framework} {name}: {e}")
                continue
            table.append(r.row())
            check(r.ok, f"importers corpus {framework} {name}: {r.status} (error {r.max_rel_error:.2e}, "
                        f"FLOPs {r.flops_labsim} vs {r.flops_peer})")
    print(markdown_table(table))
    n_eq = sum(1 for r in table if r["values equal"] is True)
    n_fl = sum(1 for r in table if r["status"] == "match")
    print(f"\nValues equal for {n_eq} of {len(table)} cases; FLOPs equal for {n_fl}, the others explained in "
          "crosscheck/importers_corpus.py (FLOPS_EXPLAINED).\n")


def calibration_smoke() -> None:
    """The GPU calibration script (benchmarks/calibrate_gpu.py) on its small CPU plan: PyTorch is here, a GPU
    is not, so this checks the script's plumbing and its file format, not the numbers (the accuracy appendix
    shows those once a session with a GPU has run it)."""
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    from labsim.peers import calibration

    print("## GPU calibration script, CPU smoke run\n")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "smoke.json"
        r = subprocess.run([sys.executable, "benchmarks/calibrate_gpu.py", "--smoke", "--out", str(out)],
                           capture_output=True, text=True, timeout=600)
        print(r.stdout)
        ok = r.returncode == 0 and out.exists()
        if ok:
            try:
                data = calibration.validate(json.loads(out.read_text()), smoke=True)
                ok = all(m["value"] is not None for m in data["measurements"])
            except ValueError as e:
                print("invalid file:", e)
                ok = False
        check(ok, f"calibrate_gpu.py --smoke: exit {r.returncode}, {r.stderr[-800:]}")
    print()


if __name__ == "__main__":
    rows = xla_stored()
    torch_stored()
    jax_live(rows)
    torch_live()
    scalesim_stored()
    scalesim_live()
    scalesim_speed()
    importers_live()
    calibration_smoke()
    for f in failures:
        print("FAILED:", f)
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
