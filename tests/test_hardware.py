"""Hardware presets: every number is plausible, every number has a source, every source exists."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from labsim import hardware
from labsim.hardware import PRESETS, Chip, ChipKind, Link, Unit

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
    assert chip.peak_flops("bf16", Unit.MATRIX) == bf16
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
        ("H100 SXM", 989.4e12, 3.35e12, 80e9),
        ("H200", 989.4e12, 4.8e12, 141e9),
        ("A100 80GB", 312e12, 2.039e12, 80e9),
        ("TPU v5e", 197e12, 819e9, 16e9),
        ("TPU v6e", 918e12, 1640e9, 32e9),
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
