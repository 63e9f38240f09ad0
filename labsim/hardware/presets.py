"""The hardware presets: every datasheet number labsim uses, each with its source.

This module holds data only. ``labsim.hardware.chip`` defines the ``Chip`` and ``Link`` types and
``labsim.hardware`` re-exports :data:`PRESETS`; chapters read numbers from there and never retype them.

Conventions (the "Hardware presets" page of the book explains them to readers):

* Units are SI and unprefixed: FLOP/s, bytes/s, bytes, seconds. ``T`` = 1e12, ``P`` = 1e15.
* FLOP rates are **dense** peaks. Vendors often quote rates "with sparsity" (2:4 structured
  sparsity), which are twice the dense rate; where a source gives only the sparse figure we halve it
  and say so beside the number.
* Memory capacities are the bytes the vendor's own tools report, with the unit named in the source.
  NVIDIA's "80GB" and "141GB" of HBM are binary: nvidia-smi shows an A100 80GB as 81,920 MiB
  (exactly 80 GiB, 85.9e9 bytes) and an H100 as 81,559 MiB (a little is reserved). Google's TPU
  pages print GiB (v4, v5p, TPU7x, and v6e in the TPU7x page's table). So ``hbm_capacity`` is stored
  in MiB or GiB (``_MiB``, ``_GiB``), never as decimal GB. Cache and scratchpad sizes ("40 MB L2",
  "228 KB shared memory", "128 MiB VMEM") are binary too (MiB = 2**20, KiB = 2**10), which is what
  the CUDA device properties report for them.
* ``Link.bandwidth`` is one direction. NVIDIA quotes NVLink and PCIe as the sum of both
  directions ("900 GB/s", "128 GB/s"); we halve those figures.
* Link latencies are 0: no primary source in ``book/references.bib`` gives them. A chapter that
  models latency must set it explicitly (``dataclasses.replace(link, latency=...)``) and cite it.
* ``sources`` maps a dotted field name to ``"bibkey"`` or ``"bibkey, where in it"``. A field that
  is absent (not in ``sources``, left at its default) was not confirmed from a primary source.
"""
from __future__ import annotations

from .chip import Chip, ChipKind, Link, SMLimits

_T = 1e12  # tera
_P = 1e15  # peta
_GB = 1e9  # decimal GB: bandwidths ("GB/s") only; memory capacities are binary (see above)
_KiB = 2**10
_MiB = 2**20
_GiB = 2**30

# --- NVIDIA ---------------------------------------------------------------------------------------

# The 3-5 us rule of thumb from enqueue to kernel start. It rests on one 2019 measurement on a V100
# (Volta), not on a Hopper or Blackwell figure: NVIDIA's CUDA Graphs post measured a 2.9 us kernel
# launched back to back at 3.8 us per kernel (9.6 us when synchronising after each); 4 us sits inside
# that range. It is a modelling choice, not a datasheet number, and it is a *latency* (enqueue to
# start): launches overlap with running kernels, so in a stream of kernels it is paid once, not per
# kernel (see labsim.machines.program_cost.ProgramCost).
_GPU_LAUNCH = 4e-6
_GPU_LAUNCH_SRC = "nvidia2019cudagraphs, per-kernel times for a 2.9 us kernel (V100, 2019)"

# Launch *throughput*, a separate number from the latency above: the least time between two launches
# one host thread can push through the driver. The same post measured back-to-back launches of the
# 2.9 us kernel at 3.8 us per kernel: the kernels were shorter than the launches, so the launch path,
# not the GPU, set the pace, one launch per 3.8 us (V100, 2019; again not a Hopper figure).
# labsim.machines.host charges it to the host thread for every kernel launch (one per graph replay).
_GPU_LAUNCH_INTERVAL = 3.8e-6
_GPU_LAUNCH_INTERVAL_SRC = "nvidia2019cudagraphs, 3.8 us per kernel with launches overlapped (V100, 2019)"

# The latency floor of one kernel: a labsim modelling assumption, not a datasheet number. However
# little a kernel does, its blocks must be dispatched to the SMs, its first loads wait one DRAM round
# trip (hundreds of ns), and the stream waits for the last block to drain. The figure it rests on is
# the CUDA Graphs post again: with the host's launch cost removed (a CUDA Graph), NVIDIA's short kernel
# still took 3.4 us per kernel on a V100. labsim takes a round 2 us, below that, for every GPU.
_GPU_MIN_KERNEL = 2e-6

# Special-function units (SFUs: exp2, log2, sin, cos, reciprocal, rsqrt, tanh.approx) run at 16
# results per clock per SM on compute capability 8.0 and 9.0 (CUDA C++ Programming Guide,
# "Arithmetic Instructions" throughput table), against 64 (8.0) or 128 (9.0) fp32 FMA results, i.e.
# 128 or 256 fp32 FLOPs. So the SFU rate is the fp32 rate x 16/128 on A100 and x 16/256 on H100.
# For H100 FlashAttention-3 gives the figure directly: about 3.9 T special-function ops/s.
_SFU_PER_SM_CLK = 16

# Per-SM limits (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" and
# "Arithmetic Instructions"; allocation rules of NVIDIA's occupancy calculator, cuda_occupancy.h):
# 65,536 32-bit registers per SM and per block, at most 255 per thread, allocated per warp in units of
# 256 and split over 4 sub-partitions; 2,048 resident threads (64 warps) and 32 resident blocks per SM;
# 1 KB of shared memory reserved per block by the system; shared memory allocated in 128-byte units.
# Shared memory: 164 KB per SM and 163 KB per block on cc 8.0 (A100); 228 KB per SM and 227 KB per
# block on cc 9.0 (H100, H200) and cc 10.0 (B200). FP32 results per clock per SM: 64 on cc 8.0, 128 on
# 9.0; special functions 16 per clock per SM on both; 4 tensor cores per SM (one per sub-partition).
_SM_SOURCES = {
    "occupancy": "nvidia-cuda-guide, Technical Specifications per Compute Capability",
    "allocation": "nvidia-cuda-guide, Occupancy Calculator (register and shared-memory granularity)",
    "fp32_lanes": "nvidia-cuda-guide, Arithmetic Instructions throughput table",
    "sfu_lanes": "nvidia-cuda-guide, Arithmetic Instructions throughput table",
}
_SM_CC80 = SMLimits(
    compute_capability="8.0", max_threads_per_sm=2048, max_blocks_per_sm=32, registers_per_sm=65536,
    shared_per_sm=164 * _KiB, shared_per_block=163 * _KiB, fp32_lanes=64, sfu_lanes=16, tensor_cores=4,
    sources={**_SM_SOURCES, "shared_per_sm": "nvidia-ampere-tuning, Unified Shared Memory/L1/Texture Cache",
             "tensor_cores": "nvidia2020amperearch, A100 SM architecture (four Tensor Cores per SM)"},
)
_SM_CC90 = SMLimits(
    compute_capability="9.0", max_threads_per_sm=2048, max_blocks_per_sm=32, registers_per_sm=65536,
    shared_per_sm=228 * _KiB, shared_per_block=227 * _KiB, fp32_lanes=128, sfu_lanes=16, tensor_cores=4,
    sources={**_SM_SOURCES, "shared_per_sm": "nvidia-hopper-tuning, Unified Shared Memory/L1/Texture Cache",
             "tensor_cores": "nvidia2022hopperarch, H100 SM architecture (four Tensor Cores per SM)"},
)
# cc 10.0 (B200): the guide's per-capability table gives the same occupancy limits as cc 9.0. The
# FP32, SFU and tensor-core counts per SM are taken over from cc 9.0 (labsim assumption: no primary
# source in the bibliography gives them for Blackwell).
_SM_CC100 = SMLimits(
    compute_capability="10.0", max_threads_per_sm=2048, max_blocks_per_sm=32, registers_per_sm=65536,
    shared_per_sm=228 * _KiB, shared_per_block=227 * _KiB, fp32_lanes=128, sfu_lanes=16, tensor_cores=4,
    sources={"occupancy": _SM_SOURCES["occupancy"], "allocation": _SM_SOURCES["allocation"],
             "fp32_lanes": "labsim assumption: the cc 9.0 figure", "sfu_lanes": "labsim assumption: the cc 9.0 figure",
             "tensor_cores": "labsim assumption: the cc 9.0 figure"},
)

_A100 = Chip(
    name="NVIDIA A100 SXM4 80GB",
    kind=ChipKind.GPU,
    arch="Ampere",
    sm=_SM_CC80,
    matrix_flops={
        "bfloat16": 312 * _T,  # FLOP/s, datasheet "BF16 Tensor Core 312 TFLOPS" (624 with sparsity)
        "float16": 312 * _T,  # FLOP/s, datasheet "FP16 Tensor Core 312 TFLOPS" (624 with sparsity)
        "int8": 624 * _T,  # OP/s, datasheet "INT8 Tensor Core 624 TOPS" (1248 with sparsity)
        "float64": 19.5 * _T,  # FLOP/s, datasheet "FP64 Tensor Core 19.5 TFLOPS"
        "tf32": 156 * _T,  # FLOP/s, datasheet "TF32 Tensor Core 156 TFLOPS" (312 with sparsity)
    },
    vector_flops={
        "float32": 19.5 * _T,  # FLOP/s, datasheet "FP32 19.5 TFLOPS" (CUDA cores)
        "float64": 9.7 * _T,  # FLOP/s, datasheet "FP64 9.7 TFLOPS"
    },
    hbm_bandwidth=2039 * _GB,  # B/s, datasheet "GPU Memory Bandwidth 2,039 GB/s" (SXM 80GB)
    hbm_capacity=81920 * _MiB,  # bytes, nvidia-smi "81920MiB" = 80 GiB (datasheet "80GB HBM2e", binary GB)
    host_link=Link(
        "PCIe Gen4 x16",
        32 * _GB,  # B/s per direction: datasheet "PCIe Gen4: 64 GB/s" counts both directions
        source="nvidia2021a100datasheet",
    ),
    chip_link=Link(
        "NVLink 3 (12 links)",
        300 * _GB,  # B/s per direction: datasheet "NVLink: 600 GB/s" counts both directions
        source="nvidia2021a100datasheet",
    ),
    onchip={
        "L2": 40 * _MiB,  # bytes, "40 MB Level 2 (L2) cache" (binary MB)
        "shared memory per SM": 164 * _KiB,  # bytes, largest carve-out "164 KB per SM"
        "register file per SM": 256 * _KiB,  # bytes, 65,536 32-bit registers per SM (cc 8.0)
    },
    compute_units=108,  # SMs in the A100 product ("108 SMs"; the full GA100 die has 128)
    compute_unit_name="SM",
    launch_overhead=_GPU_LAUNCH,
    launch_interval=_GPU_LAUNCH_INTERVAL,
    # ops/s, derived: 19.5 TFLOP/s fp32 x 16 SFU results / 128 fp32 FLOPs per SM per clock (cc 8.0) = 2.44 T
    special_flops=19.5 * _T * _SFU_PER_SM_CLK / 128,
    min_kernel_time=_GPU_MIN_KERNEL,
    memory_name="HBM2e",
    sources={
        "matrix_flops.bfloat16": "nvidia2021a100datasheet, BF16 Tensor Core",
        "matrix_flops.float16": "nvidia2021a100datasheet, FP16 Tensor Core",
        "matrix_flops.int8": "nvidia2021a100datasheet, INT8 Tensor Core",
        "matrix_flops.float64": "nvidia2021a100datasheet, FP64 Tensor Core",
        "matrix_flops.tf32": "nvidia2021a100datasheet, TF32 Tensor Core (312 with sparsity, halved)",
        "special_flops": "nvidia-cuda-guide, Arithmetic Instructions throughput (16 per SM per clock, cc 8.0); "
                         "derived with nvidia2021a100datasheet, FP32",
        "vector_flops.float32": "nvidia2021a100datasheet, FP32",
        "vector_flops.float64": "nvidia2021a100datasheet, FP64",
        "hbm_bandwidth": "nvidia2021a100datasheet, A100 80GB SXM column",
        "hbm_capacity": "modal2025nvidiasmi, nvidia-smi memory.total 81920 MiB (A100 80GB); "
                        "nvidia2021a100datasheet, A100 80GB SXM column",
        "host_link": "nvidia2021a100datasheet, Interconnect",
        "chip_link": "nvidia2021a100datasheet, Interconnect",
        "onchip.L2": "nvidia2020amperearch, 40 GB HBM2 and 40 MB L2 cache",
        "onchip.shared memory per SM": "nvidia-ampere-tuning, Unified Shared Memory/L1/Texture Cache",
        "onchip.register file per SM": "nvidia-cuda-guide, Technical Specifications per Compute Capability",
        "compute_units": "nvidia2020amperearch, A100 GPU hardware architecture",
        "launch_overhead": _GPU_LAUNCH_SRC,
        "launch_interval": _GPU_LAUNCH_INTERVAL_SRC,
    },
    notes="Dense rates; the datasheet's larger figures assume 2:4 sparsity. 'tf32' is the tensor "
    "cores' rate for float32 products at JAX's default precision. The SFU rate is derived from the "
    "per-SM throughput table. min_kernel_time is a labsim assumption. Link latencies unset (0).",
)

_H100_SXM = Chip(
    name="NVIDIA H100 SXM5 80GB",
    kind=ChipKind.GPU,
    arch="Hopper",
    sm=_SM_CC90,
    matrix_flops={
        "bfloat16": 989.4 * _T,  # FLOP/s, "Peak BF16 Tensor TFLOPS 989.4" (1978.9 with sparsity)
        "float16": 989.4 * _T,  # FLOP/s, "Peak FP16 Tensor TFLOPS 989.4" (1978.9 with sparsity)
        "float8_e4m3fn": 1978.9 * _T,  # FLOP/s, "Peak FP8 Tensor TFLOPS 1978.9" (3957.8 sparse)
        "int8": 1978.9 * _T,  # OP/s, "Peak INT8 Tensor TOPS 1978.9" (3957.8 sparse)
        "float64": 66.9 * _T,  # FLOP/s, "Peak FP64 Tensor TFLOPS 66.9"
        "tf32": 494.7 * _T,  # FLOP/s, "Peak TF32 Tensor TFLOPS 494.7" (989.4 with sparsity)
    },
    vector_flops={
        "float32": 66.9 * _T,  # FLOP/s, "Peak FP32 TFLOPS (non-Tensor) 66.9" (datasheet: 67)
        "float64": 33.5 * _T,  # FLOP/s, "Peak FP64 TFLOPS (non-Tensor) 33.5" (datasheet: 34)
    },
    hbm_bandwidth=3.35e12,  # B/s, datasheet "GPU Memory Bandwidth 3.35TB/s" (H100 SXM)
    hbm_capacity=81559 * _MiB,  # bytes, nvidia-smi "81559MiB" (datasheet "GPU Memory 80GB", binary GB)
    host_link=Link(
        "PCIe Gen5 x16",
        64 * _GB,  # B/s per direction: datasheet "PCIe Gen5: 128GB/s" counts both directions
        source="nvidia2022h100datasheet",
    ),
    chip_link=Link(
        "NVLink 4 (18 links)",
        450 * _GB,  # B/s per direction: datasheet "NVLink: 900GB/s" counts both directions
        source="nvidia2022h100datasheet",
    ),
    onchip={
        "L2": 50 * _MiB,  # bytes, "A 50 MB L2 cache in H100" (binary MB)
        "shared memory per SM": 228 * _KiB,  # bytes, largest carve-out, cc 9.0 (227 KB per block)
        "register file per SM": 256 * _KiB,  # bytes, 65,536 32-bit registers per SM (cc 9.0)
    },
    compute_units=132,  # SMs in H100 SXM5 (the full GH100 die has 144)
    compute_unit_name="SM",
    launch_overhead=_GPU_LAUNCH,
    launch_interval=_GPU_LAUNCH_INTERVAL,
    special_flops=3.9 * _T,  # ops/s, FlashAttention-3: "3.9 TFLOPS of special functions" on H100 SXM5
    min_kernel_time=_GPU_MIN_KERNEL,
    memory_name="HBM3",
    sources={
        "matrix_flops.bfloat16": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "matrix_flops.float16": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "matrix_flops.float8_e4m3fn": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "matrix_flops.int8": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "matrix_flops.float64": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "matrix_flops.tf32": "nvidia2022hopperarch, H100 SXM5 specifications table (Peak TF32 Tensor)",
        "special_flops": "shah2024flashattention3, Introduction (exponential throughput on H100 SXM5)",
        "vector_flops.float32": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "vector_flops.float64": "nvidia2022hopperarch, H100 SXM5 specifications table",
        "hbm_bandwidth": "nvidia2022h100datasheet, H100 SXM column",
        "hbm_capacity": "modal2025nvidiasmi, nvidia-smi memory.total 81559 MiB (H100); "
                        "nvidia2022h100datasheet, H100 SXM column",
        "host_link": "nvidia2022h100datasheet, Interconnect",
        "chip_link": "nvidia2022h100datasheet, Interconnect",
        "onchip.L2": "nvidia2022hopperarch, H100 memory and cache",
        "onchip.shared memory per SM": "nvidia-hopper-tuning, Unified Shared Memory/L1/Texture Cache",
        "onchip.register file per SM": "nvidia-cuda-guide, Technical Specifications per Compute Capability",
        "compute_units": "nvidia2022hopperarch, H100 SXM5 has 132 SMs",
        "launch_overhead": _GPU_LAUNCH_SRC,
        "launch_interval": _GPU_LAUNCH_INTERVAL_SRC,
    },
    notes="Dense rates from NVIDIA's Hopper architecture specifications (boost clock); the datasheet "
    "rounds them (67 TFLOP/s FP32, 1,979 TFLOP/s BF16 with sparsity). 'tf32' is the tensor cores' "
    "rate for float32 products at JAX's default precision. min_kernel_time is a labsim assumption. "
    "Link latencies unset (0).",
)

_H200 = Chip(
    name="NVIDIA H200 SXM 141GB",
    kind=ChipKind.GPU,
    arch="Hopper",
    sm=_SM_CC90,
    # The H200 is the H100's GH100 chip with HBM3e; its datasheet lists the same compute figures as
    # the H100 SXM datasheet, quoted with sparsity (BF16 1,979, FP8 3,958 TFLOPS). We halve them to
    # the dense rate and use the Hopper specification table's unrounded values, as for H100 SXM.
    matrix_flops={
        "bfloat16": 989.4 * _T,  # FLOP/s, datasheet "BF16 Tensor Core 1,979 TFLOPS" with sparsity / 2
        "float16": 989.4 * _T,  # FLOP/s, datasheet "FP16 Tensor Core 1,979 TFLOPS" with sparsity / 2
        "float8_e4m3fn": 1978.9 * _T,  # FLOP/s, datasheet "FP8 Tensor Core 3,958 TFLOPS" sparse / 2
        "int8": 1978.9 * _T,  # OP/s, datasheet "INT8 Tensor Core 3,958 TOPS" sparse / 2
        "float64": 67 * _T,  # FLOP/s, datasheet "FP64 Tensor Core 67 TFLOPS"
        "tf32": 494.7 * _T,  # FLOP/s, datasheet "TF32 Tensor Core 989 TFLOPS" with sparsity / 2
    },
    vector_flops={
        "float32": 67 * _T,  # FLOP/s, datasheet "FP32 67 TFLOPS"
        "float64": 34 * _T,  # FLOP/s, datasheet "FP64 34 TFLOPS"
    },
    hbm_bandwidth=4.8e12,  # B/s, datasheet "GPU Memory Bandwidth 4.8TB/s"
    # bytes: the datasheet's "141GB" read as NVIDIA's binary GB (141 GiB). nvidia-smi's total for the
    # H200 is not in a source in references.bib; for A100 and H100 it is within 0.5 % of the binary figure.
    hbm_capacity=141 * _GiB,
    host_link=Link(
        "PCIe Gen5 x16",
        64 * _GB,  # B/s per direction: datasheet "PCIe Gen5: 128GB/s" counts both directions
        source="nvidia2024h200",
    ),
    chip_link=Link(
        "NVLink 4 (18 links)",
        450 * _GB,  # B/s per direction: datasheet "NVLink: 900GB/s" counts both directions
        source="nvidia2024h200",
    ),
    onchip={
        # L2 is left out: no primary source states it for H200 (it is presumably H100's 50 MB).
        "shared memory per SM": 228 * _KiB,  # bytes, cc 9.0 limit, as for H100
        "register file per SM": 256 * _KiB,  # bytes, 65,536 32-bit registers per SM (cc 9.0)
    },
    compute_units=132,  # SMs: the H100 SXM5 configuration (the H200 datasheet gives no count)
    compute_unit_name="SM",
    launch_overhead=_GPU_LAUNCH,
    launch_interval=_GPU_LAUNCH_INTERVAL,
    special_flops=3.9 * _T,  # ops/s, the H100 SXM5 figure of FlashAttention-3 (same GH100 SMs and clock)
    min_kernel_time=_GPU_MIN_KERNEL,
    memory_name="HBM3e",
    sources={
        "matrix_flops.bfloat16": "nvidia2024h200, BF16 Tensor Core (with sparsity, halved)",
        "matrix_flops.float16": "nvidia2024h200, FP16 Tensor Core (with sparsity, halved)",
        "matrix_flops.float8_e4m3fn": "nvidia2024h200, FP8 Tensor Core (with sparsity, halved)",
        "matrix_flops.int8": "nvidia2024h200, INT8 Tensor Core (with sparsity, halved)",
        "matrix_flops.float64": "nvidia2024h200, FP64 Tensor Core",
        "matrix_flops.tf32": "nvidia2024h200, TF32 Tensor Core (with sparsity, halved)",
        "special_flops": "shah2024flashattention3, Introduction (H100 SXM5; the H200 has the same GH100 SMs)",
        "vector_flops.float32": "nvidia2024h200, FP32",
        "vector_flops.float64": "nvidia2024h200, FP64",
        "hbm_bandwidth": "nvidia2024h200, H200 SXM column",
        "hbm_capacity": "nvidia2024h200, H200 SXM column, 141 GB read as GiB (NVIDIA's binary GB, "
                        "as modal2025nvidiasmi shows for A100 and H100)",
        "host_link": "nvidia2024h200, Interconnect",
        "chip_link": "nvidia2024h200, Interconnect",
        "onchip.shared memory per SM": "nvidia-hopper-tuning, Unified Shared Memory/L1/Texture Cache",
        "onchip.register file per SM": "nvidia-cuda-guide, Technical Specifications per Compute Capability",
        "compute_units": "nvidia2022hopperarch, H100 SXM5 has 132 SMs (same GH100 configuration)",
        "launch_overhead": _GPU_LAUNCH_SRC,
        "launch_interval": _GPU_LAUNCH_INTERVAL_SRC,
    },
    notes="Same GH100 compute as H100 SXM, with 141 GiB of HBM3e at 4.8 TB/s. L2 size not recorded "
    "(no primary source for H200). SM count and SFU rate taken from the H100 SXM5 configuration. "
    "min_kernel_time is a labsim assumption. Link latencies unset (0).",
)

_B200 = Chip(
    name="NVIDIA B200 (HGX/DGX B200, 1000 W)",
    kind=ChipKind.GPU,
    arch="Blackwell",
    sm=_SM_CC100,
    # NVIDIA quotes B200 compute per 8-GPU HGX/DGX system and with sparsity. Per GPU and dense:
    # divide by 8, then by 2.
    matrix_flops={
        "bfloat16": 2.25 * _P,  # FLOP/s, HGX B200 "FP16/BF16 Tensor Core 36 PFLOPS" (8 GPUs, sparse) / 16
        "float16": 2.25 * _P,  # FLOP/s, as bfloat16
        "float8_e4m3fn": 4.5 * _P,  # FLOP/s, DGX B200 "72 PFLOPS FP8 training" (8 GPUs, sparse) / 16
        "int8": 4.5 * _P,  # OP/s, HGX B200 "INT8 Tensor Core 72 POPS" (8 GPUs, sparse) / 16
        "tf32": 1.125 * _P,  # FLOP/s, HGX B200 "TF32 Tensor Core 18 PFLOPS" (8 GPUs, sparse) / 16
    },
    vector_flops={
        "float32": 75 * _T,  # FLOP/s, HGX B200 "FP32 600 TFLOPS" (8 GPUs) / 8
    },
    hbm_bandwidth=8e12,  # B/s, DGX B200 "64 TB/s HBM3e bandwidth" (8 GPUs) / 8
    # bytes, cudaGetDeviceProperties totalGlobalMem "178.35 GB" (binary GB, printed to 0.01 GiB) on a
    # B200 (pytorch/ao PR #4002); DGX B200 quotes "1,440 GB total GPU memory", 180 GiB per GPU.
    hbm_capacity=round(178.35 * _GiB),
    host_link=Link(
        "PCIe Gen5 x16",
        64 * _GB,  # B/s per direction, the same Gen5 x16 link as H100 (MLPerf system description)
        source="mlcommons2026nebiusb200",
    ),
    chip_link=Link(
        "NVLink 5 (18 links)",
        900 * _GB,  # B/s per direction: DGX B200 "14.4 TB/s aggregate NVLink" / 8 GPUs / 2 directions
        source="nvidia2024dgxb200",
    ),
    onchip={
        "L2": round(126.5 * _MiB),  # bytes, cudaGetDeviceProperties "L2 Cache Size: 126.50 MB" (binary MB)
        "shared memory per SM": 228 * _KiB,  # bytes, cc 10.0 limit (as cc 9.0)
        "register file per SM": 256 * _KiB,  # bytes, 65,536 32-bit registers per SM (cc 10.0)
    },
    compute_units=148,  # SMs, cudaGetDeviceProperties "Number of SMs: 148" (pytorch/ao PR #4002)
    compute_unit_name="SM",
    launch_overhead=_GPU_LAUNCH,
    launch_interval=_GPU_LAUNCH_INTERVAL,
    # special_flops left out: without a sourced SM count and clock the per-SM SFU throughput gives no
    # rate; transcendentals fall back to the fp32 vector rate (see labsim.machines.roofline).
    min_kernel_time=_GPU_MIN_KERNEL,
    memory_name="HBM3e",
    sources={
        "matrix_flops.bfloat16": "nvidia2024hgx, HGX B200 FP16/BF16 Tensor Core (8 GPUs, with sparsity)",
        "matrix_flops.float16": "nvidia2024hgx, HGX B200 FP16/BF16 Tensor Core (8 GPUs, with sparsity)",
        "matrix_flops.float8_e4m3fn": "nvidia2024dgxb200, FP8 training performance (8 GPUs, with sparsity)",
        "matrix_flops.int8": "nvidia2024hgx, HGX B200 INT8 Tensor Core (8 GPUs, with sparsity)",
        "matrix_flops.tf32": "nvidia2024hgx, HGX B200 TF32 Tensor Core (8 GPUs, with sparsity)",
        "vector_flops.float32": "nvidia2024hgx, HGX B200 FP32 (8 GPUs)",
        "hbm_bandwidth": "nvidia2024dgxb200, HBM3e bandwidth (8 GPUs)",
        "hbm_capacity": "pytorchao2026b200, cudaGetDeviceProperties Total Global Memory 178.35 GiB; "
                        "nvidia2024dgxb200, total GPU memory (8 GPUs)",
        "compute_units": "pytorchao2026b200, cudaGetDeviceProperties Number of SMs 148",
        "onchip.L2": "pytorchao2026b200, cudaGetDeviceProperties L2 Cache Size 126.50 MB (binary MB)",
        "host_link": "mlcommons2026nebiusb200, accelerator_host_interconnect",
        "chip_link": "nvidia2024dgxb200, NVLink bandwidth (aggregate over 8 GPUs)",
        "onchip.shared memory per SM": "nvidia-cuda-guide, Technical Specifications per Compute Capability",
        "onchip.register file per SM": "nvidia-cuda-guide, Technical Specifications per Compute Capability",
        "launch_overhead": _GPU_LAUNCH_SRC,
        "launch_interval": _GPU_LAUNCH_INTERVAL_SRC,
    },
    notes="Per-GPU dense rates derived from NVIDIA's 8-GPU system figures, which are quoted with "
    "sparsity (divide by 8, then by 2). Capacity, SM count and L2 size are what "
    "cudaGetDeviceProperties reports on a DGX/HGX B200 (pytorch/ao PR #4002; some B200 products "
    "quote 192 GB). No SFU rate (no sourced clock): "
    "transcendentals are charged at the fp32 rate. min_kernel_time is a labsim assumption. "
    "Link latencies unset (0).",
)

# --- Google TPU: labsim.hardware.presets_tpu ------------------------------------------------------

from .presets_tpu import _TPU7X, _TPU_V4, _TPU_V5E, _TPU_V5P, _TPU_V6E  # noqa: E402

# --- Reference CPU --------------------------------------------------------------------------------

# Intel publishes cores, clocks and memory channels, not FLOP/s. The rates below are derived:
# 56 cores x 2.0 GHz base clock x FLOP per cycle per core, where a Sapphire Rapids core issues two
# 512-bit FMAs per cycle (2 x 16 fp32 lanes x 2 FLOP = 64 fp32 FLOP, 32 fp64 FLOP) and its AMX tile
# unit does 1,024 bf16 FLOP (512 multiply-adds) or 2,048 int8 OP per cycle. Sustained all-core
# AVX-512/AMX clocks differ from the base clock, so treat these as round peaks.
_XEON_CORES = 56
_XEON_HZ = 2.0e9

# Two labsim modelling assumptions make the CPU realistic rather than a peak (no primary source gives
# either for this part; both are labelled so in the preset's notes):
# * a library GEMM (oneDNN/MKL on AMX) sustains half of the derived AMX peak: the peak above assumes
#   the base clock on all 56 cores with the tile unit busy every cycle, while real GEMMs also load and
#   store tiles, synchronise threads and run at the lower AMX/AVX-512 all-core clocks;
# * each kernel call costs 5 us of host software: the framework's per-operation dispatch (the same
#   order as the GPU's launch overhead above) and waking the 56-thread pool and joining it again.
_CPU_GEMM_EFFICIENCY = 0.5
_CPU_CALL = 5e-6

_CPU = Chip(
    name="Intel Xeon Platinum 8480+ (Sapphire Rapids, one socket)",
    kind=ChipKind.CPU,
    arch="Sapphire Rapids",
    matrix_flops={
        "bfloat16": _XEON_CORES * _XEON_HZ * 1024,  # FLOP/s, AMX: ~115 TFLOP/s (derived)
        "int8": _XEON_CORES * _XEON_HZ * 2048,  # OP/s, AMX: ~229 TOP/s (derived)
    },
    vector_flops={
        "float32": _XEON_CORES * _XEON_HZ * 64,  # FLOP/s, AVX-512 FMA: ~7.2 TFLOP/s (derived)
        "float64": _XEON_CORES * _XEON_HZ * 32,  # FLOP/s, AVX-512 FMA: ~3.6 TFLOP/s (derived)
    },
    hbm_bandwidth=8 * 4800e6 * 8,  # B/s: 8 channels x DDR5-4800 (4.8e9 transfers/s) x 8 B = 307.2 GB/s
    hbm_capacity=4 * 2**40,  # bytes, ARK "Max Memory Size 4 TB": binary, as DRAM sizes are (4 TiB)
    host_link=Link(
        "PCIe 5.0 x16 (to one accelerator)",
        64 * _GB,  # B/s per direction, one x16 slot of the 80 PCIe 5.0 lanes (32 GT/s x 16 / 8)
        source="intel-ark-8480plus",
    ),
    chip_link=None,  # UPI between sockets: not modelled
    onchip={
        "L3": 105 * _MiB,  # bytes, ARK "Cache 105 MB" (shared last-level cache)
    },
    compute_units=56,  # cores, ARK "Total Cores 56"
    compute_unit_name="core",
    call_overhead=_CPU_CALL,  # s per kernel call: labsim assumption (dispatch + thread pool), see above
    gemm_efficiency=_CPU_GEMM_EFFICIENCY,  # labsim assumption, see above
    memory_name="DDR5",
    sources={
        "matrix_flops.bfloat16": "intel-optimization-manual, AMX throughput; derived with intel-ark-8480plus",
        "matrix_flops.int8": "intel-optimization-manual, AMX throughput; derived with intel-ark-8480plus",
        "vector_flops.float32": "intel-optimization-manual, AVX-512 FMA throughput; derived with intel-ark-8480plus",
        "vector_flops.float64": "intel-optimization-manual, AVX-512 FMA throughput; derived with intel-ark-8480plus",
        "hbm_bandwidth": "intel-ark-8480plus, Memory Specifications (8 channels, DDR5-4800); derived",
        "hbm_capacity": "intel-ark-8480plus, Max Memory Size (4 TB, read as TiB like every DRAM size)",
        "host_link": "intel-ark-8480plus, PCI Express Revision 5.0, 80 lanes",
        "onchip.L3": "intel-ark-8480plus, Cache",
        "compute_units": "intel-ark-8480plus, Total Cores",
    },
    notes="A reference server CPU: one socket of a dual-socket Sapphire Rapids server. FLOP rates "
    "are derived (cores x base clock x FLOP per cycle), not published by Intel. 'hbm_*' here "
    "is the socket's DDR5 memory. launch_overhead is 0: a CPU kernel is a function call on the "
    "same core, with no device queue. Two labsim assumptions (not published figures) keep the CPU "
    "from being charged its peak: a GEMM sustains half the derived AMX peak (gemm_efficiency 0.5), "
    "and each kernel call costs 5 us of dispatch and thread-pool start (call_overhead). "
    "Link latencies unset (0).",
)

PRESETS: dict[str, Chip] = {
    "A100 80GB": _A100,
    "H100 SXM": _H100_SXM,
    "H200": _H200,
    "B200": _B200,
    "TPU v5e": _TPU_V5E,
    "TPU v6e": _TPU_V6E,
    "CPU": _CPU,
    "TPU v4": _TPU_V4,
    "TPU v5p": _TPU_V5P,
    "TPU7x": _TPU7X,
}

# --- Host links ------------------------------------------------------------------------------------
# The link between host memory and one device, for the host/device chapter's "which link" control
# (labsim.machines.host.Machine(host_link=...)). Per direction, as everywhere in this file. PCI-SIG
# quotes an x16 link's bandwidth with both directions added: 32, 64, 128 and 256 GB/s for
# generations 3.0 to 6.0 (the data rate doubles each generation: 8, 16, 32, 64 GT/s per lane); we
# halve them. NVIDIA's GH200 joins its Grace CPU and Hopper GPU with NVLink-C2C at 900 GB/s, both
# directions added: 450 GB/s each way. Latencies are left at 0, as above.
HOST_LINKS: dict[str, Link] = {
    "PCIe Gen3 x16": Link("PCIe Gen3 x16", 16 * _GB, source="pcisig2022pcie6, x16 bandwidth by generation"),
    "PCIe Gen4 x16": Link("PCIe Gen4 x16", 32 * _GB, source="pcisig2022pcie6, x16 bandwidth by generation"),
    "PCIe Gen5 x16": Link("PCIe Gen5 x16", 64 * _GB, source="pcisig2022pcie6, x16 bandwidth by generation"),
    "PCIe Gen6 x16": Link("PCIe Gen6 x16", 128 * _GB, source="pcisig2022pcie6, x16 bandwidth by generation"),
    "NVLink-C2C": Link("NVLink-C2C", 450 * _GB, source="nvidia2023gracehopper, NVLink-C2C 900 GB/s"),
}

__all__ = ["HOST_LINKS", "PRESETS"]
