"""The chapter "Where hardware is going": the new TPU presets, the scale-up domains (SYSTEMS), and the
claims the chapter makes, each checked against a closed form derived here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import labsim as ls
from labsim.hardware import PRESETS, SYSTEMS, System

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"
S = ls.ShapeDtype
FP8 = "float8_e4m3fn"


def gemm_cost(tokens, chip, dtype="bfloat16", d=4096):
    p = ls.compile(ls.trace(lambda x, w: x @ w, S((tokens, d), dtype), S((d, d), dtype)))
    return ls.estimate(p, chip).kernels[0]


def test_new_tpu_presets_match_their_sources():
    # Google Cloud's pages: v4 275 TFLOP/s, 1,200 GB/s, 32 GiB; v5p 459, 2,765 GB/s, 95 GB;
    # TPU7x 2,307 bf16 and 4,614 FP8 TFLOP/s, 192 GiB; How to Scale Your Model: TPU7x HBM 7.4e12 B/s.
    v4, v5p, v7 = PRESETS["TPU v4"], PRESETS["TPU v5p"], PRESETS["TPU7x"]
    assert (v4.peak_flops("bf16"), v4.hbm_bandwidth, v4.hbm_capacity) == (275e12, 1200e9, 32 * 2**30)
    assert (v5p.peak_flops("bf16"), v5p.hbm_bandwidth, v5p.hbm_capacity) == (459e12, 2765e9, 95 * 2**30)
    assert v7.peak_flops("bf16") == pytest.approx(2307e12) and v7.peak_flops(FP8) == pytest.approx(4614e12)
    assert v7.hbm_bandwidth == 7.4e12 and v7.hbm_capacity == 192 * 2**30
    # FP8 on TPU7x is exactly twice bf16 (4614 = 2 x 2307), so its FP8 ridge is twice its bf16 ridge
    assert v7.ridge_point(FP8) == pytest.approx(2 * v7.ridge_point("bf16"))


def test_systems_sizes_are_sourced_and_aggregates_are_size_times_chip():
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.M))
    expected = {"DGX B200": 8, "NVL72 rack": 72, "TPU v5e pod": 256, "TPU v6e pod": 256,
                "TPU v4 pod": 4096, "TPU v5p pod": 8960, "TPU7x pod": 9216}
    assert {k: s.size for k, s in SYSTEMS.items()} == expected
    for s in SYSTEMS.values():
        assert s.source.split(",")[0].strip() in keys, s.name
        c = PRESETS[s.chip]
        assert s.peak_flops("bfloat16") == pytest.approx(s.size * c.matrix_flops["bfloat16"])
        assert s.hbm_capacity == pytest.approx(s.size * c.hbm_capacity)
        assert s.hbm_bandwidth == pytest.approx(s.size * c.hbm_bandwidth)
    # a stand-in preset is said to be one
    assert "approximation" in SYSTEMS["NVL72 rack"].notes


def test_bad_systems_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="'H900' is not a preset"):
        System("mine", "H900", 8, "NVLink", "nvidia2024dgxb200")
    with pytest.raises(ValueError, match="size must be a positive int"):
        System("mine", "B200", 0, "NVLink", "nvidia2024dgxb200")


def test_the_opening_claim_compute_bound_on_a100_memory_bound_on_h100_and_b200():
    """256 x 4096 by 4096 x 4096 in bf16: FLOPs 2*256*4096^2, bytes 2*(2*256*4096 + 4096^2), so the
    intensity is 256*4096 / (2*256 + 4096) = 227.6 FLOP/byte: above the A100's ridge (312/2.039 = 153),
    below the H100's (989.4/3.35 = 295) and the B200's (2250/8 = 281)."""
    t, d = 256, 4096
    inten = t * d / (2 * t + d)
    for chip, bound in (("A100 80GB", "compute"), ("H100 SXM", "memory"), ("B200", "memory")):
        k = gemm_cost(t, chip)
        assert k.intensity == pytest.approx(inten)
        assert k.bound.value == bound, chip
        assert (inten > PRESETS[chip].ridge_point("bfloat16")) == (bound == "compute")


@pytest.mark.parametrize("chip", ["H100 SXM", "H200", "B200", "TPU7x"])
def test_fp8_halves_both_terms_and_keeps_the_bound(chip):
    """FP8: half the bytes (1 B vs 2 B per element) and, on these presets, twice the matrix rate, so
    both roofline terms halve and the binding limit stays."""
    bf, f8 = gemm_cost(256, chip), gemm_cost(256, chip, FP8)
    assert f8.bytes * 2 == bf.bytes and f8.flops == bf.flops
    ratio = PRESETS[chip].peak_flops(FP8) / PRESETS[chip].peak_flops("bfloat16")
    assert ratio == pytest.approx(2, rel=1e-3)
    assert f8.memory_time == pytest.approx(bf.memory_time / 2)
    assert f8.compute_time == pytest.approx(bf.compute_time / ratio)
    assert f8.bound == bf.bound


def test_nvlink_c2c_copy_of_weights_against_closed_form():
    """Pinned host -> device copy: ready at bytes / link bandwidth (latencies 0 in the presets) after
    the host's put call, which costs microseconds; C2C is 450/64 = 7.03 times faster than Gen5."""
    spec = S((ls.llm.param_count("LLaMA-3-8B"),), "bfloat16")
    for link in ("PCIe Gen5 x16", "NVLink-C2C"):
        m = ls.host.Machine("H100 SXM", host_link=link)
        t = m.put(spec).ready
        dma = spec.nbytes / ls.hardware.HOST_LINKS[link].bandwidth
        assert 0 <= t - dma < 1e-5, link
