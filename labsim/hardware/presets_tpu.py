"""The Google TPU presets (v4, v5e, v5p, v6e, TPU7x), each number with its source.

Split from ``labsim.hardware.presets`` (which re-exports them in :data:`~labsim.hardware.PRESETS`); the
conventions at the top of that module hold here too: SI units, dense rates, capacities in bytes as
the vendor states them (Google's pages print GiB), links one way.
"""
from __future__ import annotations

from .chip import Chip, ChipKind, Link

_T = 1e12  # tera
_GB = 1e9  # decimal GB: bandwidths ("GB/s") only
_MiB = 2**20
_GiB = 2**30

# --- Google TPU -----------------------------------------------------------------------------------

# The TPU vector unit (VPU): a labelled *derived* rate, not a datasheet figure. How to Scale Your Model
# (tpus.md, "VPU") describes it as an (8 sublanes x 128 lanes) SIMD unit whose every (lane, sublane)
# pair "on v5 contains 4 standard floating-point ALUs"; each executes most instructions in one cycle,
# "so e.g. in v5 you can add 4 pairs of f32 values together from VREGs in each cycle". VPU arithmetic
# is f32. So one TensorCore does 8 x 128 x 4 = 4,096 f32 operations per cycle, and a chip
#   rate = TensorCores x 4,096 x clock.
# TPU v5e: 1 TensorCore x 4,096 x 1.5 GHz (the MXU clock above) = 6.1e12 op/s, 1/32 of its 1.97e14
# bf16 MXU rate. TPU v5p: 2 x 4,096 x 1.75 GHz ("a clock speed of about 1.75GHz", the same book's pop
# quiz, whose answer is 1.4e13 FLOPs/s) = 1.43e13. v4, v6e and TPU7x: no sourced ALU count or clock,
# so no rate; the roofline then charges their vector work at the MXU rate, marked ``assumed``.
_VPU_OPS_PER_CYCLE = 8 * 128 * 4  # f32 operations per cycle per TensorCore on v5 (sublanes x lanes x ALUs)

_TPU_NOTES = (
    "Vector (VPU) rates are derived, where recorded (TPU v5e and v5p: TensorCores x 8 x 128 x 4 f32 "
    "ALUs x clock, from How to Scale Your Model); no other TPU has a sourced VPU rate. launch_overhead is left at 0: a TPU runs a whole compiled XLA program, its scalar unit "
    "sequences the ops inside it with no per-kernel launch from the host, and no public source "
    "gives a per-op figure (the host's per-program dispatch is a software cost, not modelled "
    "here). Link latencies unset (0)."
)

_TPU_V5E = Chip(
    name="Google Cloud TPU v5e",
    kind=ChipKind.TPU,
    arch="TPU v5e",
    matrix_flops={
        "bfloat16": 197 * _T,  # FLOP/s, "Peak compute per chip (bf16) 197 TFLOPs"
        "int8": 393 * _T,  # OP/s, "Peak compute per chip (Int8) 393 TOPs"
    },
    # f32 op/s, derived (see _VPU_OPS_PER_CYCLE): 1 TensorCore x 4,096 ALUs x 1.5 GHz = 6.1e12
    vector_flops={"float32": 1 * _VPU_OPS_PER_CYCLE * 1.5e9},
    hbm_bandwidth=819 * _GB,  # B/s, "HBM2 capacity and bandwidth 16 GB, 819 GBps"
    hbm_capacity=16 * _GiB,  # bytes, "16 GB" on Google's page; JAX's tpu_info gives 17.2e9 bytes = 16 GiB
    host_link=Link(
        "PCIe",
        1.6e10,  # B/s, "PCIe bandwidth is typically around 1.6e10 bytes / second per TPU"
        source="austin2025scaling",
    ),
    chip_link=Link(
        "ICI (one of 4 links)",
        4.5e10,  # B/s, one-way per link, "TPU v5e 4.5e10" (ICI table)
        source="austin2025scaling",
    ),
    onchip={
        "VMEM": 128 * _MiB,  # bytes, "128 MiB on TPU v5e"
    },
    compute_units=4,  # MXUs (128x128 systolic arrays) in the chip's one TensorCore
    compute_unit_name="MXU",
    matrix_unit=(128, 128),  # "128 x 128 (TPU versions prior to v6e) multiply-accumulators"
    # Hz, "about 5e13 bf16 FLOPs/s per MXU at 1.5GHz on TPU v5e"; check: 4 MXUs x 128 x 128 MACs x
    # 2 FLOP x 1.5e9 = 1.97e14, the datasheet's 197 TFLOP/s
    clock=1.5e9,
    memory_name="HBM2",
    tensorcores=1,  # "Each v5e chip contains one TensorCore"
    sparsecores=0,  # Google lists SparseCores for v4, v5p, v6e and TPU7x, not v5e
    sources={
        "matrix_flops.bfloat16": "google-tpu-v5e, System architecture",
        "matrix_flops.int8": "google-tpu-v6e, System architecture (v5e column)",
        "hbm_bandwidth": "google-tpu-v5e, System architecture",
        "hbm_capacity": "jax-tpu-info, hbm_capacity_bytes 17.2e9 (16 GiB) for TPU v5e; "
                        "google-tpu-v5e, System architecture (16 GB)",
        "host_link": "austin2025scaling, How to Think About TPUs, TPU Specs",
        "chip_link": "austin2025scaling, How to Think About TPUs, TPU Specs (ICI table)",
        "onchip.VMEM": "austin2025scaling, How to Think About TPUs, What Is a TPU?",
        "compute_units": "google-tpu-v5e, System architecture (four MXUs per TensorCore)",
        "matrix_unit": "google-tpu-arch, TPU architecture (MXU: 128 x 128 before v6e)",
        "clock": "austin2025scaling, How to Think About TPUs, What Is a TPU? (MXU at 1.5 GHz on v5e)",
        "tensorcores": "google-tpu-v5e, System architecture (each v5e chip contains one TensorCore)",
        "vector_flops.float32": "austin2025scaling, How to Think About TPUs, VPU (8 x 128 x 4 f32 ALUs per "
                                "TensorCore on v5); derived: x 1 TensorCore x 1.5 GHz MXU clock",
        "sparsecores": "google-tpu-arch, SparseCore (four on v5p and TPU7x, two on v6e; v5e not listed)",
    },
    notes=_TPU_NOTES,
)

_TPU_V6E = Chip(
    name="Google Cloud TPU v6e (Trillium)",
    kind=ChipKind.TPU,
    arch="TPU v6e",
    matrix_flops={
        "bfloat16": 918 * _T,  # FLOP/s, "Peak compute per chip (bf16) 918 TFLOPs"
        "int8": 1836 * _T,  # OP/s, "Peak compute per chip (Int8) 1836 TOPs"
    },
    vector_flops={},
    hbm_bandwidth=1640 * _GB,  # B/s, "HBM bandwidth per chip 1640 GBps"
    hbm_capacity=32 * _GiB,  # bytes, "HBM capacity per chip (GiB) 32" (v6e column of the TPU7x page)
    host_link=Link(
        "PCIe",
        3.2e10,  # B/s, "(3.2e10 for TPU v6e)" beside the PCIe bandwidth per TPU
        source="austin2025scaling",
    ),
    chip_link=Link(
        "ICI (one of 4 links)",
        9e10,  # B/s, one-way per link, "TPU v6e 9e10" (ICI table)
        source="austin2025scaling",
    ),
    onchip={},  # VMEM size for v6e: no primary source found, left out
    compute_unit_name="MXU",  # count left out: Google's page has said both 2 and 4 MXUs
    matrix_unit=(256, 256),  # "256 x 256 (TPU v6e) ... multiply-accumulators in a systolic array"
    memory_name="HBM",
    tensorcores=1,  # "Each v6e chip contains one TensorCore"
    sparsecores=2,  # "v6e has two SparseCores per chip"
    sources={
        "matrix_flops.bfloat16": "google-tpu-v6e, System architecture",
        "matrix_flops.int8": "google-tpu-v6e, System architecture",
        "hbm_bandwidth": "google-tpu-v6e, System architecture",
        "hbm_capacity": "google-tpu7x, System architecture (v6e column, HBM capacity per chip, 32 GiB)",
        "host_link": "austin2025scaling, How to Think About TPUs, TPU Specs",
        "chip_link": "austin2025scaling, How to Think About TPUs, TPU Specs (ICI table)",
        "matrix_unit": "google-tpu-arch, TPU architecture (MXU: 256 x 256 on v6e)",
        "tensorcores": "google-tpu-v6e, System architecture (each v6e chip contains one TensorCore)",
        "sparsecores": "google-tpu-arch, SparseCore (v6e has two SparseCores per chip)",
    },
    notes=_TPU_NOTES + " The MXU count (256x256 arrays) and the VMEM size are left out: versions "
    "of Google's v6e page disagree on the MXU count, and no primary source gives VMEM.",
)

# Three more TPU generations, for the chapter "Where hardware is going": v4 and v5p (shipped, Google
# Cloud's pages) and TPU7x "Ironwood" (shipped on Google Cloud as TPU7x; announced in April 2025).
# Google's pages give peak rates, HBM and pod sizes; How to Scale Your Model's "TPU specs" tables
# give the HBM bandwidth of TPU7x, the ICI bandwidth per link and the typical PCIe bandwidth per TPU
# (1.6e10 B/s for every generation but v6e). MXU counts, VMEM sizes and clocks are left out.
_TPU_V4 = Chip(
    name="Google Cloud TPU v4",
    kind=ChipKind.TPU,
    arch="TPU v4",
    matrix_flops={
        "bfloat16": 275 * _T,  # FLOP/s, "Peak compute per chip 275 teraflops (bf16 or int8)"
        "int8": 275 * _T,  # OP/s, same row: v4 has no faster int8 path
    },
    vector_flops={},
    hbm_bandwidth=1200 * _GB,  # B/s, "HBM2 capacity and bandwidth 32 GiB, 1200 GBps"
    hbm_capacity=32 * _GiB,  # bytes, "32 GiB" (binary, as printed)
    host_link=Link("PCIe", 1.6e10, source="austin2025scaling"),  # B/s, "typically around 1.6e10 ... per TPU"
    chip_link=Link("ICI (one of 6 links)", 4.5e10, source="austin2025scaling"),  # B/s one-way, "TPU v4p 4.5e10"
    compute_unit_name="MXU",
    memory_name="HBM2",
    tensorcores=2,  # "Each TPU v4 chip contains two TensorCores" (one megacore device to JAX)
    sparsecores=4,  # four SparseCores per chip, 16 tiles each (Jouppi et al. 2023)
    sources={
        "matrix_flops.bfloat16": "google-tpu-v4, System architecture (Peak compute per chip)",
        "matrix_flops.int8": "google-tpu-v4, System architecture (Peak compute per chip, bf16 or int8)",
        "hbm_bandwidth": "google-tpu-v4, System architecture (HBM2 capacity and bandwidth)",
        "hbm_capacity": "google-tpu-v4, System architecture (HBM2 capacity and bandwidth, 32 GiB)",
        "host_link": "austin2025scaling, How to Think About TPUs, TPU specs (PCIe per TPU)",
        "chip_link": "austin2025scaling, How to Think About TPUs, TPU specs (ICI table, TPU v4p)",
        "tensorcores": "google-tpu-v4, System architecture (each TPU v4 chip contains two TensorCores)",
        "sparsecores": "jouppi2023tpuv4, SparseCore (four SparseCores per TPU v4 chip)",
    },
    notes=_TPU_NOTES + " Pod size 4,096 chips (labsim.hardware.SYSTEMS).",
)

_TPU_V5P = Chip(
    name="Google Cloud TPU v5p",
    kind=ChipKind.TPU,
    arch="TPU v5p",
    matrix_flops={
        "bfloat16": 459 * _T,  # FLOP/s, "Peak compute per chip (BF16) 459 TFLOPs"
    },
    # f32 op/s, derived (see _VPU_OPS_PER_CYCLE): 2 TensorCores x 4,096 ALUs x 1.75 GHz = 1.43e13
    vector_flops={"float32": 2 * _VPU_OPS_PER_CYCLE * 1.75e9},
    hbm_bandwidth=2765 * _GB,  # B/s, "HBM2e capacity and bandwidth 95 GB, 2765 GBps"
    hbm_capacity=95 * _GiB,  # bytes, "HBM capacity per chip (GiB) 95" (usable; the chip has 96)
    host_link=Link("PCIe", 1.6e10, source="austin2025scaling"),  # B/s, "typically around 1.6e10 ... per TPU"
    chip_link=Link("ICI (one of 6 links)", 9e10, source="austin2025scaling"),  # B/s one-way, "TPU v5p 9.0e10"
    compute_unit_name="MXU",
    memory_name="HBM2e",
    tensorcores=2,  # "Number of TensorCores per chip 2" (one megacore device to JAX)
    sparsecores=4,  # "Number of SparseCores per chip 4"
    sources={
        "matrix_flops.bfloat16": "google-tpu-v5p, System architecture (Peak compute per chip, BF16)",
        "hbm_bandwidth": "google-tpu-v5p, System architecture (HBM2e capacity and bandwidth)",
        "hbm_capacity": "google-tpu-v5p, System architecture (HBM capacity per chip, 95 GiB)",
        "host_link": "austin2025scaling, How to Think About TPUs, TPU specs (PCIe per TPU)",
        "chip_link": "austin2025scaling, How to Think About TPUs, TPU specs (ICI table, TPU v5p)",
        "tensorcores": "google-tpu-v5p, System architecture (Number of TensorCores per chip)",
        "vector_flops.float32": "austin2025scaling, How to Think About TPUs, VPU (8 x 128 x 4 f32 ALUs per "
                                "TensorCore on v5; v5p clock about 1.75 GHz, pop quiz 1.4e13); derived",
        "sparsecores": "google-tpu-v5p, System architecture (Number of SparseCores per chip)",
    },
    notes=_TPU_NOTES + " Pod size 8,960 chips (labsim.hardware.SYSTEMS).",
)

_TPU7X = Chip(
    name="Google Cloud TPU7x (Ironwood)",
    kind=ChipKind.TPU,
    arch="TPU7x",
    matrix_flops={
        "bfloat16": 2307 * _T,  # FLOP/s, "Peak compute per chip (BF16) (TFLOPs) 2307"
        "float8_e4m3fn": 4614 * _T,  # FLOP/s, "Peak compute per chip (FP8) (TFLOPs) 4614"
    },
    vector_flops={},
    hbm_bandwidth=7.4e12,  # B/s, How to Scale Your Model's TPU specs table, "TPU7x ... 7.4e12"
    hbm_capacity=192 * _GiB,  # bytes, "HBM capacity per chip (GiB) 192"
    host_link=Link("PCIe", 1.6e10, source="austin2025scaling"),  # B/s, "typically around 1.6e10 ... per TPU"
    chip_link=Link("ICI (one link)", 9e10, source="austin2025scaling"),  # B/s one-way, "TPU7x 9.0e10"
    compute_unit_name="MXU",
    memory_name="HBM",
    tensorcores=2,  # "Each TPU7x chip contains two TensorCores and four SparseCores"
    sparsecores=4,
    devices_per_chip=2,  # dual-chiplet: "access two TPU devices instead of a single logical core"
    sources={
        "matrix_flops.bfloat16": "google-tpu7x, System architecture (Peak compute per chip, BF16)",
        "matrix_flops.float8_e4m3fn": "google-tpu7x, System architecture (Peak compute per chip, FP8)",
        "hbm_bandwidth": "austin2025scaling, How to Think About TPUs, TPU specs (HBM BW/chip, TPU7x)",
        "hbm_capacity": "google-tpu7x, System architecture (HBM capacity per chip, 192 GiB)",
        "host_link": "austin2025scaling, How to Think About TPUs, TPU specs (PCIe per TPU)",
        "chip_link": "austin2025scaling, How to Think About TPUs, TPU specs (ICI table, TPU7x)",
        "tensorcores": "google-tpu7x, System architecture (two TensorCores and four SparseCores per chip)",
        "sparsecores": "google-tpu7x, System architecture (two TensorCores and four SparseCores per chip)",
        "devices_per_chip": "google-tpu7x, Dual-chiplet architecture (two TPU devices per chip)",
    },
    notes=_TPU_NOTES + " The seventh TPU generation, announced by Google in April 2025 as Ironwood and "
    "offered on Google Cloud as TPU7x. Pod size 9,216 chips (labsim.hardware.SYSTEMS). The HBM "
    "bandwidth is How to Scale Your Model's figure (Google's launch material rounds it differently).",
)

__all__ = ["_TPU_V4", "_TPU_V5E", "_TPU_V5P", "_TPU_V6E", "_TPU7X"]
