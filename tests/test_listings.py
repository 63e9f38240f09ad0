"""Kernel listings: the contraction's instruction path follows the chip's generation (issue 9, points 1, 11)."""
import pytest

import labsim as ls
import labsim.numpy as lnp
from labsim.compiler import codegen

S = ls.ShapeDtype


def _layer_kernel(n=4096, dtype="bfloat16"):
    g = ls.trace(lambda a, b, bias: ls.nn.relu(lnp.dot(a, b) + bias), S((n, n), dtype), S((n, n), dtype), S((n,), dtype))
    return ls.compile(g).kernels[0]


@pytest.mark.parametrize("chip, present, absent", [
    ("A100 80GB", ["mma.sync.aligned.m16n8k16", "HMMA.16816", "cp.async:"], ["wgmma", "HGMMA", "TMA", "tcgen05"]),
    ("H100 SXM", ["wgmma.mma_async", "HGMMA.64x128x16", "cp.async.bulk.tensor", "Tensor Memory Accelerator"],
     ["mma.sync.aligned", "HMMA.", "cp.async: each thread"]),
    ("H200", ["wgmma.mma_async", "HGMMA", "TMA"], ["HMMA."]),
    ("B200", ["tcgen05.mma", "Tensor Memory (TMEM)", "cp.async.bulk.tensor"], ["HMMA.", "wgmma"]),
    ("TPU v5e", ["MXU", "128×128 systolic array", "VMEM"], ["HMMA", "wgmma", "launch:"]),
    ("TPU v6e", ["256×256 systolic array"], ["HMMA"]),
    ("CPU", ["TDPBF16PS", "AMX"], ["HMMA", "wgmma"]),
])
def test_contraction_listing_names_the_chips_instruction_path(chip, present, absent):
    text = _layer_kernel().listing_for(chip)
    for s in present:
        assert s in text, (chip, s, text)
    for s in absent:
        assert s not in text, (chip, s, text)


def test_generic_listing_names_no_generation():
    k = _layer_kernel()
    text = k.listing
    assert text == codegen.tile_plan_text(k) == k.listing_for(None)
    for s in ("HMMA", "HGMMA", "wgmma", "mma.sync", "tcgen05", "cp.async"):
        assert s not in text


def test_every_preset_has_an_arch_with_a_matrix_path():
    for name, chip in ls.hardware.PRESETS.items():
        assert chip.arch, name
        assert codegen.matrix_path(chip).arch != "generic"


def test_tile_plan_instruction_counts_follow_the_instruction_shape():
    k = _layer_kernel()
    amp, hop = codegen.tile_plan(k, "A100 80GB"), codegen.tile_plan(k, "H100 SXM")
    assert amp.instruction_shape == (16, 8, 16) and amp.tile == (128, 128, 32)
    assert amp.instructions_per_block == (128 // 16) * (128 // 8) * (4096 // 16)
    assert hop.instruction_shape == (64, 128, 16) and hop.tile == (128, 128, 64)
    assert hop.instructions_per_block == 2 * 1 * (4096 // 16)
    assert hop.launch.threads_per_block == 384 and amp.launch.threads_per_block == 256
    assert hop.launch.blocks == amp.launch.blocks == k.launch.blocks == 32 * 32
    assert codegen.tile_plan(k, "TPU v5e").launch is None
    # 8-bit inputs: one instruction covers 32 bytes of K
    k8 = ls.compile(ls.trace(lambda a, b: a @ b, S((256, 256), "int8"), S((256, 256), "int8"))).kernels[0]
    assert codegen.tile_plan(k8, "H100 SXM").instruction_shape[2] == 32


def test_float32_products_are_not_shown_on_tensor_cores():
    k = _layer_kernel(n=256, dtype="float32")
    for chip in ("A100 80GB", "H100 SXM"):
        text = k.listing_for(chip)
        assert "FFMA" in text and "wgmma" not in text and "TMA" not in text
        assert not codegen.tile_plan(k, chip).tensor_path


def test_only_contractions_have_a_tile_plan():
    k = ls.compile(ls.trace(lambda x: x * 2.0, S((1024,)))).kernels[0]
    with pytest.raises(ValueError, match="only contractions"):
        codegen.tile_plan(k, "H100 SXM")


def test_loop_listings_say_they_are_pseudo_ptx():
    k = ls.compile(ls.trace(lambda x, y: x * y + 1.0, S((1024,), "bfloat16"), S((1024,), "bfloat16"))).kernels[0]
    assert "pseudo-PTX" in k.listing and "ld.global.bf16" in k.listing
    assert "as a GPU would run it" in k.listing_for("TPU v5e")
    assert "as a GPU would run it" not in k.listing_for("H100 SXM")


def test_transposed_epilogue_writes_the_transposed_tile():
    g = ls.trace(lambda x, w: lnp.einsum("bf,fd->db", x, w), S((8, 16)), S((16, 32)))
    text = ls.compile(g).kernels[0].listing
    store = [ln for ln in text.splitlines() if "← acc" in ln][0]
    assert store.lstrip().startswith("out[bn·") and "f32[32,8]" in store, store


def test_rhs_stored_n_by_k_is_read_as_stored():
    k = ls.compile(ls.trace(lambda x, w: x @ w.T, S((8, 16)), S((32, 16)))).kernels[0]
    line = [ln for ln in k.listing.splitlines() if "B_s ←" in ln][0]
    assert "B[bn·" in line and "N×K" in line, line
