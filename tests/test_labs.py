"""ls.labs: the checker accepts a correct kernel and rejects a wrong one and a slow one, with the reason.

The kernels here are the labs' solutions and starters (chapters 7, 8 and 10) and a kernel with wrong
values per task. Every verdict is checked against what the machine and NumPy say, not a stored number.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import labsim as ls

tl = ls.blocks


@tl.jit
def scale_ok(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m), mask=m)


@tl.jit
def scale_strided(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) + tl.arange(0, BLOCK) * tl.num_programs(0)
    m = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m), mask=m)


@tl.jit
def scale_wrong(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, 3.0 * tl.load(x_ptr + offs, mask=m), mask=m)


@tl.jit
def relu_ok(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)


@tl.jit
def relu_wrong(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # forgets the max: a copy
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


@tl.jit
def relu_unmasked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # reads past the end in the last program
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@tl.jit
def mm_rows(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):  # lanes along a row of c: coalesced
    i = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = cols * 0.0
    for k in range(K):
        acc = acc + tl.load(a_ptr + (cols * 0 + i * K + k)) * tl.load(b_ptr + (k * N + cols))
    tl.store(c_ptr + (i * N + cols), acc)


@tl.jit
def mm_columns(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):  # lanes down a column of c: strided
    j = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    acc = rows * 0.0
    for k in range(K):
        acc = acc + tl.load(a_ptr + (rows * K + k)) * tl.load(b_ptr + (rows * 0 + k * N + j))
    tl.store(c_ptr + (rows * N + j), acc)


@tl.jit
def mm_transposed(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):  # computes a @ b.T: wrong
    i = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = cols * 0.0
    for k in range(K):
        acc = acc + tl.load(a_ptr + (cols * 0 + i * K + k)) * tl.load(b_ptr + (cols * K + k))
    tl.store(c_ptr + (i * N + cols), acc)


CASES = {  # task: (correct, wrong values, slow, constants of the slow one, what the slow one misses)
    "scale": (scale_ok, scale_wrong, scale_strided, 256, "sectors"),
    "relu": (relu_ok, relu_wrong, relu_ok, 1024, "lanes"),
    "matmul": (mm_rows, mm_transposed, mm_columns, 32, "sectors"),
}
GOOD_BLOCK = {"scale": 256, "relu": 128, "matmul": 32}


def test_every_task_has_cases():
    assert set(CASES) == set(ls.labs.TASKS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_accepts_a_correct_kernel(name):
    good = CASES[name][0]
    v = ls.labs.check(good, name, chip="H100 SXM", BLOCK=GOOD_BLOCK[name])
    assert v.passed and v.verdict == "pass" and v.reason == ""
    assert v.correct and v.max_error <= 1e-4
    t = ls.labs.task(name)
    assert v.min_sectors == t.min_sectors and v.sectors >= v.min_sectors  # no kernel beats the minimum
    assert 0 < v.lane_use <= 1 and v.cycles > 0
    assert "pass" in str(v) and "pass" in v._repr_html_()


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejects_wrong_values(name):
    wrong = CASES[name][1]
    v = ls.labs.check(wrong, name, BLOCK=GOOD_BLOCK[name])
    assert not v.passed and not v.correct
    assert v.verdict.startswith("fail: wrong values")
    # the worst error is the machine's output against NumPy's
    t = ls.labs.task(name)
    a = t.arrays()
    ref = t.reference(*[a[k] for k in t.inputs])
    assert v.max_error > 1e-3 * float(np.max(np.abs(ref)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejects_a_slow_kernel_with_the_reason(name):
    _, _, slow, block, misses = CASES[name]
    v = ls.labs.check(slow, name, BLOCK=block)
    assert v.correct, "the slow kernel computes the right values"
    assert not v.passed
    tg = ls.labs.task(name).target
    if misses == "sectors":
        assert v.sectors > tg.max_sector_ratio * v.min_sectors
        assert "sectors" in v.reason and "the minimum" in v.reason
    else:
        assert v.lane_use < tg.min_lane_use and "lanes" in v.reason
    assert "wrong values" not in v.reason


def test_strided_scale_moves_a_sector_per_lane():
    """Closed form: lanes P elements apart each touch their own sector (a load and a store per element)."""
    n = ls.labs.task("scale").inputs["x"][0]
    assert ls.labs.check(scale_strided, "scale", BLOCK=256).sectors == 2 * n


def test_relu_lane_use_is_elements_over_lanes_built():
    n = ls.labs.task("relu").inputs["x"][0]
    for block in (128, 1024):
        built = ls.blocks.cdiv(n, block) * block
        assert ls.labs.check(relu_ok, "relu", BLOCK=block).lane_use == pytest.approx(n / built)


def test_issue_lanes_follow_the_block_size():
    """A block of 16 elements is a CTA of 16 threads: half of each warp-instruction's lanes are idle."""
    full = ls.labs.check(relu_ok, "relu", BLOCK=128)
    half = ls.labs.check(relu_ok, "relu", BLOCK=16)
    assert full.issue_lane_use == pytest.approx(1.0)
    assert half.issue_lane_use == pytest.approx(0.5)


def test_slow_relu_takes_more_cycles_than_the_target():
    v = ls.labs.check(relu_ok, "relu", BLOCK=1024)
    assert v.cycles > v.target.max_latencies * v.latency and "cycles" in v.reason


def test_a_kernel_that_breaks_a_rule_fails_with_the_rule():
    v = ls.labs.check(relu_unmasked, "relu", BLOCK=128)
    assert not v.passed and "past the end" in v.reason


def test_bad_input_names_the_argument():
    with pytest.raises(ls.ArgumentTypeError, match="kernel"):
        ls.labs.check(lambda x: x, "scale", BLOCK=256)
    with pytest.raises(ls.ArgumentError, match="task='transpose'"):
        ls.labs.check(scale_ok, "transpose", BLOCK=256)
    with pytest.raises(ls.ArgumentError, match="chip='TPU v5e'"):
        ls.labs.check(scale_ok, "scale", chip="TPU v5e", BLOCK=256)
    with pytest.raises(ls.ArgumentError, match="chip='Z80'"):
        ls.labs.check(scale_ok, "scale", chip="Z80", BLOCK=256)
    with pytest.raises(ls.ArgumentError, match="BLOCK=0"):
        ls.labs.check(scale_ok, "scale", BLOCK=0)


def test_progression_climbs_and_stays_under_peak():
    naive = ls.labs.check(mm_columns, "matmul", BLOCK=32)
    coal = ls.labs.check(mm_rows, "matmul", BLOCK=32)
    steps = ls.labs.progression(4096, 4096, 4096, "H100 SXM", naive_sectors=naive.sectors,
                                coalesced_sectors=coal.sectors)
    fr = [s.fraction for s in steps]
    assert len(steps) == 5 and fr == sorted(fr) and all(0 < f <= 1 for f in fr)
    chip = ls.hardware.get("H100 SXM")
    # the CUDA-core steps cannot pass the float32 rate; tensor cores can
    assert all(s.achieved <= chip.peak_flops("float32") * (1 + 1e-9) for s in steps[:4])
    assert steps[4].achieved > chip.peak_flops("float32")
    # step 1 is HBM-bound at 32 bytes per sector over the measured sectors per multiply-add
    s1 = steps[0]
    assert s1.bound == "HBM"
    assert s1.hbm_bytes == pytest.approx(naive.sectors / 32**3 * 32 * 4096**3)
    with pytest.raises(ls.ArgumentError, match="progression: m must be at least 1"):
        ls.labs.progression(0, 4096, 4096, naive_sectors=1, coalesced_sectors=1)
    with pytest.raises(ls.ArgumentError, match="naive_sectors"):
        ls.labs.progression(64, 64, 64, naive_sectors=-1, coalesced_sectors=1)
    with pytest.raises(ls.LabsimError, match="TPU v5e"):
        ls.labs.progression(64, 64, 64, "TPU v5e", naive_sectors=1, coalesced_sectors=1)


def test_a_task_object_is_accepted():
    t = ls.labs.task("scale")
    assert ls.labs.task(t) is t and ls.labs.check(scale_ok, t, BLOCK=256).passed


# ---- the chapters' own labs: the starter they print fails, their solution passes, and the student
# edition keeps the starter but cuts the solution ------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import labsim_student  # noqa: E402

CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
CHAPTER_LABS = {  # chapter: (task, the starter's definition, the solution's check call)
    "07_gpu": ("scale", "def scale_starter", "lab_solution = ls.labs.check("),
    "08_warps": ("relu", "def relu_kernel", "lab_solution = ls.labs.check("),
}


def _lab_cells(text: str) -> list[str]:
    return [c for c in CELL.findall(text) if "lab_starter =" in c or "lab_solution =" in c]


@pytest.mark.parametrize("stem", sorted(CHAPTER_LABS))
def test_the_chapters_lab_fails_its_starter_and_passes_its_solution(stem):
    task, starter, solution = CHAPTER_LABS[stem]
    text = (ROOT / "chapters" / f"{stem}.md").read_text(encoding="utf-8")
    cells = _lab_cells(text)
    assert len(cells) == 2 and starter in cells[0] and solution in cells[1]
    ns = {"ls": ls, "tl": ls.blocks, "np": np}
    for c in cells:
        exec(compile(c, f"{stem}.md", "exec"), ns)
    first, second = ns["lab_starter"], ns["lab_solution"]
    assert first.task == second.task == task
    assert first.correct and not first.passed and first.reason  # right values, misses the target
    assert second.passed and second.correct
    # the verdict is labsim's: NumPy error, sectors against the minimum, lanes, cycles
    rows = {r["measure"]: r for r in second.rows()}
    assert {"correct against NumPy", "32-byte sectors moved", "lanes used", "cycles", "verdict"} <= set(rows)
    assert second.sectors >= second.min_sectors == ls.labs.task(task).min_sectors


@pytest.mark.parametrize("stem", sorted(CHAPTER_LABS))
def test_the_student_edition_keeps_the_starter_and_cuts_the_solution(stem):
    _, starter, solution = CHAPTER_LABS[stem]
    text = (ROOT / "chapters" / f"{stem}.md").read_text(encoding="utf-8")
    out = labsim_student.strip_solutions(text)
    assert starter in out and "lab_starter = ls.labs.check(" in out
    assert solution in text and solution not in out
    assert re.search(r"\{exercise\} Lab: ", out)  # numbered per chapter by the book, as exercises are
