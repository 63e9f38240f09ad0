"""Hardware presets: every number is plausible, every number has a source, every source exists."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from labsim import hardware
from labsim.hardware import PRESETS, Chip, ChipKind, Link, ExecUnit

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"

REQUIRED_KEYS = {"A100 80GB", "H100 SXM", "H200", "B200", "TPU v5e", "TPU v6e", "CPU"}

# (low, high) bounds per field family; wide enough for a laptop CPU up to a next-generation GPU,
# narrow enough to catch a unit slip (GB/s typed as B/s, TB as GB, KiB as bytes).
RANGES = {
    "matrix_flops": (1e12, 1e17),
    "vector_flops": (1e11, 1e15),
    "hbm_bandwidth": (1e10, 1e13),
    "hbm_capacity": (1e9, 1e13),
    "host_link": (1e9, 1e12),
    "chip_link": (1e9, 1e13),
    "onchip": (1e3, 1e9),
    "compute_units": (1, 10_000),
    "launch_overhead": (1e-7, 1e-4),
    "launch_interval": (1e-7, 1e-4),
    "special_flops": (1e11, 1e14),
    "matrix_unit": (8, 1024),  # rows (= cols) of one systolic array
    "clock": (1e8, 1e10),
    "tensorcores": (1, 8),
    "sparsecores": (0, 16),
    "devices_per_chip": (1, 8),
}


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.M))


def numeric_fields(chip: Chip) -> dict[str, float]:
    """Every number the preset sets, by its dotted name. Defaults (0 latency, 1 unit) count as unset."""
    out: dict[str, float] = {}
    for table in ("matrix_flops", "vector_flops", "onchip"):
        for k, v in getattr(chip, table).items():
            out[f"{table}.{k}"] = v
    out["hbm_bandwidth"] = chip.hbm_bandwidth
    out["hbm_capacity"] = chip.hbm_capacity
    for name in ("host_link", "chip_link"):
        link = getattr(chip, name)
        if link is not None:
            out[name] = link.bandwidth
            if link.latency:
                out[f"{name}.latency"] = link.latency
    if chip.compute_units != 1:
        out["compute_units"] = chip.compute_units
    if chip.launch_overhead:
        out["launch_overhead"] = chip.launch_overhead
    if chip.launch_interval:
        out["launch_interval"] = chip.launch_interval
    if chip.special_flops:
        out["special_flops"] = chip.special_flops
    if chip.matrix_unit:
        out["matrix_unit"] = chip.matrix_unit[0]
    if chip.clock:
        out["clock"] = chip.clock
    if chip.kind is ChipKind.TPU:  # core counts are TPU facts: every TPU preset states them
        out["tensorcores"] = chip.tensorcores
        out["sparsecores"] = chip.sparsecores
    if chip.devices_per_chip != 1:
        out["devices_per_chip"] = chip.devices_per_chip
    return out


def resolves(chip: Chip, dotted: str) -> bool:
    head, _, tail = dotted.partition(".")
    if not hasattr(chip, head):
        return False
    value = getattr(chip, head)
    if not tail:
        return True
    if isinstance(value, Link):
        return hasattr(value, tail)
    return hasattr(value, "keys") and tail in value


chips = pytest.mark.parametrize("key", sorted(PRESETS))


def test_required_presets_exist():
    assert REQUIRED_KEYS <= set(PRESETS)


@chips
def test_preset_is_a_chip(key):
    chip = PRESETS[key]
    assert isinstance(chip, Chip)
    assert isinstance(chip.kind, ChipKind)
    assert isinstance(chip.host_link, Link)
    assert chip.name and chip.memory_name and chip.compute_unit_name


@chips
def test_numbers_are_positive_and_plausible(key):
    for field, value in numeric_fields(PRESETS[key]).items():
        family = field.split(".")[0]
        if field.endswith(".latency"):
            family = "launch_overhead"
        low, high = RANGES[family]
        assert isinstance(value, (int, float)) and math.isfinite(value), field
        assert low <= value <= high, f"{key}: {field} = {value:g} outside [{low:g}, {high:g}]"


@chips
def test_every_number_has_a_source(key):
    chip = PRESETS[key]
    missing = set(numeric_fields(chip)) - set(chip.sources)
    assert not missing, f"{key}: numbers without a source: {sorted(missing)}"


@chips
def test_every_source_names_a_real_field(key):
    chip = PRESETS[key]
    bogus = [s for s in chip.sources if not resolves(chip, s)]
    assert not bogus, f"{key}: sources for fields that do not exist: {bogus}"
    # and no source is left over for a number that is not set
    stale = set(chip.sources) - set(numeric_fields(chip))
    assert not stale, f"{key}: sources for numbers that are not set: {sorted(stale)}"


@chips
def test_every_cited_key_is_in_the_bibliography(key):
    keys = bib_keys()
    chip = PRESETS[key]
    cited = {s.split(",")[0].strip() for s in chip.sources.values()}
    for link in (chip.host_link, chip.chip_link):
        if link is not None and link.source:
            cited.add(link.source.split(",")[0].strip())
    assert cited - keys == set(), f"{key}: keys missing from references.bib: {sorted(cited - keys)}"


def test_bibliography_keys_are_unique():
    raw = re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.M)
    assert len(raw) == len(set(raw)), sorted(k for k in raw if raw.count(k) > 1)


@chips
def test_peak_and_ridge_match_closed_form(key):
    chip = PRESETS[key]
    bf16 = chip.matrix_flops["bfloat16"]
    assert chip.peak_flops("bfloat16") == bf16
    assert chip.peak_flops("bf16", ExecUnit.MATRIX) == bf16
    assert chip.ridge_point("bfloat16") == pytest.approx(bf16 / chip.hbm_bandwidth, rel=1e-12)


@chips
def test_matrix_unit_is_the_fast_path_for_bf16(key):
    chip = PRESETS[key]
    for dt, rate in chip.vector_flops.items():
        if dt in chip.matrix_flops:
            assert chip.matrix_flops[dt] >= rate, f"{key}: {dt} vector faster than matrix"


@pytest.mark.parametrize(
    "key, bf16, bw, cap",
    [
        ("H100 SXM", 989.4e12, 3.35e12, 81559 * 2**20),
        ("H200", 989.4e12, 4.8e12, 141 * 2**30),
        ("A100 80GB", 312e12, 2.039e12, 81920 * 2**20),
        ("TPU v5e", 197e12, 819e9, 16 * 2**30),
        ("TPU v6e", 918e12, 1640e9, 32 * 2**30),
    ],
)
def test_facts_md_values(key, bf16, bw, cap):
    chip = PRESETS[key]
    assert chip.matrix_flops["bfloat16"] == pytest.approx(bf16, rel=1e-9)
    assert chip.hbm_bandwidth == pytest.approx(bw, rel=1e-9)
    assert chip.hbm_capacity == pytest.approx(cap, rel=1e-9)


def test_h100_tensor_cores_dominate():
    h100 = PRESETS["H100 SXM"]
    assert h100.vector_flops["float32"] == pytest.approx(67e12, rel=0.01)
    assert h100.compute_units == 132
    assert h100.ridge_point("bfloat16") == pytest.approx(295.3, rel=1e-3)


def test_unknown_dtype_names_it():
    with pytest.raises((TypeError, ValueError), match="complex_banana"):
        PRESETS["H100 SXM"].peak_flops("complex_banana")


def test_unsupported_dtype_names_it_and_the_chip():
    # A100 has no fp8 tensor cores: the error names the dtype and the chip.
    with pytest.raises(ValueError, match=r"float8_e4m3fn") as info:
        PRESETS["A100 80GB"].peak_flops("float8_e4m3fn")
    assert "A100" in str(info.value)


def test_get_is_case_insensitive_and_passes_chips_through():
    assert hardware.get("h100 sxm") is PRESETS["H100 SXM"]
    assert hardware.get("TPU V5E") is PRESETS["TPU v5e"]
    chip = PRESETS["CPU"]
    assert hardware.get(chip) is chip


def test_get_unknown_lists_presets():
    with pytest.raises(KeyError) as info:
        hardware.get("H900")
    msg = str(info.value)
    assert "H900" in msg
    for key in REQUIRED_KEYS:
        assert key in msg


def test_a_reader_can_add_a_chip():
    mine = Chip(
        name="My accelerator",
        kind=ChipKind.GPU,
        matrix_flops={"bfloat16": 100e12},
        vector_flops={"float32": 10e12},
        hbm_bandwidth=1e12,
        hbm_capacity=24e9,
        host_link=Link("PCIe Gen4 x16", 32e9),
    )
    assert mine.ridge_point("bf16") == pytest.approx(100.0)
    with pytest.raises(ValueError):
        Link("broken", 0.0)


@pytest.mark.parametrize("key", ["A100 80GB", "H100 SXM", "H200", "B200"])
def test_nvidia_tf32_rate_is_half_the_bf16_rate(key):
    """Every NVIDIA datasheet from Ampere on prints TF32 at half the FP16/BF16 tensor rate."""
    chip = PRESETS[key]
    assert chip.matrix_flops["tf32"] == pytest.approx(chip.matrix_flops["bfloat16"] / 2, rel=2e-3)
    assert chip.matrix_flops["tf32"] > chip.vector_flops["float32"]
    assert chip.peak_flops("tf32", "matrix") == chip.matrix_flops["tf32"]


def test_sfu_rates():
    h100, a100 = PRESETS["H100 SXM"], PRESETS["A100 80GB"]
    assert h100.special_flops == 3.9e12  # FlashAttention-3's figure
    # A100: 16 SFU results per SM per clock against 64 fp32 FMAs (128 FLOPs), cc 8.0
    assert a100.special_flops == pytest.approx(a100.vector_flops["float32"] * 16 / 128)
    # the H100 figure agrees with the same per-SM rule (16 vs 128 FMAs = 256 FLOPs) within the clock range
    assert h100.special_flops == pytest.approx(h100.vector_flops["float32"] * 16 / 256, rel=0.08)
    for key in ("B200", "TPU v5e", "TPU v6e", "CPU"):
        assert PRESETS[key].special_flops == 0  # no sourced rate: falls back to the vector rate


@chips
def test_modelling_assumptions_are_labelled(key):
    """Numbers that are labsim assumptions (no source) are said to be so in the preset's notes."""
    chip = PRESETS[key]
    if chip.min_kernel_time or chip.call_overhead or chip.gemm_efficiency != 1:
        assert "assumption" in chip.notes, key


def test_host_links_are_sourced_and_plausible():
    """Every host link preset has a bandwidth in the host-link range and a source in references.bib;
    PCIe doubles per generation (8, 16, 32, 64 GT/s per lane)."""
    from labsim.hardware import HOST_LINKS, get_link

    keys = bib_keys()
    low, high = RANGES["host_link"]
    for name, link in HOST_LINKS.items():
        assert low <= link.bandwidth <= high, name
        assert link.source.split(",")[0].strip() in keys, name
    gens = [HOST_LINKS[f"PCIe Gen{g} x16"].bandwidth for g in (3, 4, 5, 6)]
    assert [b / a for a, b in zip(gens, gens[1:])] == [2.0, 2.0, 2.0]
    assert get_link("nvlink-c2c") is HOST_LINKS["NVLink-C2C"]
    with pytest.raises(ValueError, match="unknown host link"):
        get_link("PCIe Gen9")


# TensorCores and SparseCores per TPU chip, and devices per chip as JAX lists them (Google's Cloud TPU
# pages for v4, v5e, v5p, v6e and TPU7x; the SparseCore section of the TPU architecture page; Jouppi
# et al. 2023 for v4's SparseCores).
TPU_CORES = {
    "TPU v4": (2, 4, 1),
    "TPU v5e": (1, 0, 1),
    "TPU v5p": (2, 4, 1),
    "TPU v6e": (1, 2, 1),
    "TPU7x": (2, 4, 2),
}


def test_tpu_core_counts_are_the_sourced_ones():
    tpus = {k for k, c in PRESETS.items() if c.kind is ChipKind.TPU}
    assert tpus == set(TPU_CORES), "every TPU preset needs a row in TPU_CORES"
    for key, (tc, sc, dev) in TPU_CORES.items():
        chip = PRESETS[key]
        assert (chip.tensorcores, chip.sparsecores, chip.devices_per_chip) == (tc, sc, dev), key
        assert "tensorcores" in chip.sources and "sparsecores" in chip.sources, key


def test_gpus_and_cpus_keep_the_tpu_core_defaults():
    for key, chip in PRESETS.items():
        if chip.kind is not ChipKind.TPU:
            assert (chip.tensorcores, chip.sparsecores, chip.devices_per_chip) == (1, 0, 1), key


@pytest.mark.parametrize("attr, bad", [("tensorcores", 0), ("sparsecores", -1), ("devices_per_chip", 0),
                                       ("tensorcores", 1.5)])
def test_bad_core_counts_are_refused_by_name(attr, bad):
    import dataclasses

    with pytest.raises(ValueError, match=attr):
        dataclasses.replace(PRESETS["TPU v5e"], **{attr: bad})


# HBM capacity in bytes as the vendor's tools report it (nvidia-smi / cudaGetDeviceProperties for
# NVIDIA, Google's GiB figures and JAX's tpu_info for TPUs), never a binary "GB" read as 1e9 bytes.
# (expected bytes, the unit the source states, a key the source must cite)
CAPACITY = {
    "A100 80GB": (81920 * 2**20, "MiB", "modal2025nvidiasmi"),  # nvidia-smi 81920MiB
    "H100 SXM": (81559 * 2**20, "MiB", "modal2025nvidiasmi"),  # nvidia-smi 81559MiB
    "H200": (141 * 2**30, "GiB", "nvidia2024h200"),  # datasheet 141GB, NVIDIA's binary GB
    "B200": (round(178.35 * 2**30), "GiB", "pytorchao2026b200"),  # cudaGetDeviceProperties 178.35
    "TPU v4": (32 * 2**30, "GiB", "google-tpu-v4"),
    "TPU v5e": (16 * 2**30, "GiB", "jax-tpu-info"),
    "TPU v5p": (95 * 2**30, "GiB", "google-tpu-v5p"),
    "TPU v6e": (32 * 2**30, "GiB", "google-tpu7x"),
    "TPU7x": (192 * 2**30, "GiB", "google-tpu7x"),
    "CPU": (4 * 2**40, "TiB", "intel-ark-8480plus"),
}


def test_every_preset_has_a_capacity_row():
    assert set(CAPACITY) == set(PRESETS), "a new preset needs its capacity in bytes in CAPACITY"


@chips
def test_capacity_is_in_bytes_as_the_vendor_tools_report_it(key):
    chip = PRESETS[key]
    expected, unit, bibkey = CAPACITY[key]
    assert chip.hbm_capacity == expected, f"{key}: {chip.hbm_capacity:,} bytes, expected {expected:,}"
    src = chip.sources["hbm_capacity"]
    assert unit in src, f"{key}: the capacity's source must name its unit ({unit}): {src!r}"
    assert bibkey in src, f"{key}: the capacity's source must cite {bibkey}: {src!r}"
    # a binary capacity is never a whole number of decimal GB (the slip this test guards against)
    assert chip.hbm_capacity % 10**9 != 0, f"{key}: {chip.hbm_capacity:,} looks like decimal GB"


def test_h200_holds_llama3_70b_bf16_weights_with_little_to_spare():
    from labsim.models import llm

    w = llm.weight_bytes("LLaMA-3-70B")
    spare = PRESETS["H200"].hbm_capacity - w
    assert 0 < spare < 0.1 * w
    assert PRESETS["H100 SXM"].hbm_capacity < w


def test_tpu_vpu_rate_is_derived_from_cores_alus_and_clock():
    # How to Scale Your Model: (8 sublanes x 128 lanes) x 4 f32 ALUs per TensorCore on v5, one op per cycle
    v5e, v5p = PRESETS["TPU v5e"], PRESETS["TPU v5p"]
    assert v5e.vector_flops["float32"] == v5e.tensorcores * 8 * 128 * 4 * v5e.clock
    assert v5p.vector_flops["float32"] == pytest.approx(1.4e13, rel=0.03)  # the book's pop-quiz answer
    for chip in (v5e, v5p):
        assert "derived" in chip.sources["vector_flops.float32"]
        assert 30 < chip.matrix_flops["bfloat16"] / chip.vector_flops["float32"] < 34  # about 1/32


def test_tpu_elementwise_runs_on_the_vpu_not_the_mxu():
    import labsim as ls
    import labsim.numpy as lnp

    spec = ls.ShapeDtype((1 << 16,), "float32")
    prog = ls.compile(ls.trace(lambda x: lnp.exp(x) * 2.0 + x, spec))
    for key in ("TPU v5e", "TPU v5p"):
        chip = PRESETS[key]
        for kc in ls.estimate(prog, key).kernels:
            assert kc.unit is ExecUnit.VECTOR and not kc.assumed
            assert kc.peak_flops == chip.vector_flops["float32"]
            assert kc.special_rate == chip.vector_flops["float32"]  # one VPU op per transcendental
    for key in ("TPU v6e", "TPU7x"):  # no VPU rate: the MXU rate, flagged
        assert all(kc.assumed and kc.unit is ExecUnit.MATRIX for kc in ls.estimate(prog, key).kernels)
