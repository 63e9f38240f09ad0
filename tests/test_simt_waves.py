"""The SIMT machine's block placement (``labsim.machines.simt.waves``) against its closed forms."""
import math

import pytest

import labsim as ls
from labsim.machines.simt.waves import Waves, place_blocks, wave_counts


@pytest.mark.parametrize("blocks, sms, k", [(1000, 132, 4), (528, 132, 4), (1, 132, 4), (133, 132, 1), (7, 3, 2),
                                            (594, 132, 4)])
def test_place_blocks_closed_form(blocks, sms, k):
    w = place_blocks(blocks, sms, k)
    assert w.count == math.ceil(blocks / (sms * k))
    assert w.slots == sms * k
    assert sum(w.busy) == blocks
    assert all(b == sms * k for b in w.busy[:-1])
    assert w.last == blocks - (w.count - 1) * sms * k
    assert w.tail == (blocks % (sms * k) != 0)
    assert w.efficiency == pytest.approx(blocks / (math.ceil(blocks / (sms * k)) * sms * k))
    assert max(w.per_sm[-1]) - min(w.per_sm[-1]) <= 1 and max(w.per_sm[-1]) <= k
    assert [list(r) for r in w.per_sm] == wave_counts(blocks, sms, k)


def test_place_blocks_on_a_preset_uses_its_sms_and_the_occupancy():
    h100 = ls.hardware.get("H100 SXM")
    occ = ls.simt.occupancy(h100, threads_per_block=256, registers_per_thread=64)
    w = place_blocks(1000, "H100 SXM", occ.blocks_per_sm)
    assert isinstance(w, Waves) and w.sms == h100.compute_units
    assert w.count == math.ceil(1000 / (h100.compute_units * occ.blocks_per_sm))


@pytest.mark.parametrize("kw, name", [(dict(blocks=0), "blocks"), (dict(blocks_per_sm=0), "blocks_per_sm"),
                                      (dict(chip=0), "chip"), (dict(chip="TPU v5e"), "chip")])
def test_place_blocks_rejects_bad_input_by_name(kw, name):
    args = dict(blocks=10, chip=4, blocks_per_sm=2) | kw
    with pytest.raises(ValueError, match=name):
        place_blocks(**args)


def test_viz_reexports_the_machine_placement():
    from labsim.viz import gpu
    assert gpu.wave_counts is wave_counts


def test_waves_figure_draws_the_machine_placement():
    import matplotlib.pyplot as plt
    from labsim import viz

    placed = place_blocks(600, "H100 SXM", 4)
    fig = viz.gpu.waves_figure(placed)
    assert list(fig.data[0].x) == placed.busy
    assert list(fig.data[1].x) == [placed.slots - b for b in placed.busy]
    same = viz.gpu.waves_figure("H100 SXM", 600, 4)
    assert list(same.data[0].x) == list(fig.data[0].x)
    plt.close(viz.to_matplotlib(fig))
    with pytest.raises(ValueError, match="placement"):
        viz.gpu.waves_figure(placed, 10, 4)
    with pytest.raises(ValueError, match="blocks_per_sm"):
        viz.gpu.waves_figure("H100 SXM", 600)
