"""The run plan: every chapter at every scale resolves without computing, and counts what is stored."""

import numpy as np
import pytest

from nadcore import fourier, plan, presets
from nadcore.experiments import ch1_fourier


@pytest.mark.parametrize("chapter", plan.CHAPTERS)
@pytest.mark.parametrize("scale", presets.SCALES)
def test_every_chapter_and_scale_resolves(chapter, scale, tmp_path):
    p = plan.chapter_plan(chapter, scale, results_dir=tmp_path)
    assert p.items and all(it.count >= 1 for it in p.items)
    assert all(it.stored == 0 for it in p.items if not it.name.startswith("NADs"))  # NADs: committed artifacts
    text = p.summary()
    assert chapter in text and scale in text and "total still to compute" in text
    assert not any(tmp_path.iterdir()), "planning must not compute or store anything"


def test_paper_scale_chapters_ask_for_paper_nads(tmp_path):
    for chapter in ("04_cifar10", "05_underspecification"):
        nad_items = [it for it in plan.chapter_plan(chapter, "paper", results_dir=tmp_path).items
                     if it.name.startswith("NADs")]
        assert nad_items and all(it.count == 10000 and "secant" in it.what for it in nad_items), chapter


def test_plan_counts_stored_cells(tmp_path):
    p = presets.preset("fourier", "smoke")
    settings = ch1_fourier.sweep_settings(p, 0, "cpu")
    grid = fourier.make_grid(p["grid"])
    cells = grid.half()[:2]
    from nadcore import sweeps
    sweeps.sweep("fig1", ch1_fourier.sweep_cells(["logreg"], fourier.Grid(grid.freqs), True)[:2],
                 lambda group: [{"test_acc": np.float64(1.0)} for _ in group], settings, tmp_path / "fourier",
                 progress=False)
    item = next(it for it in plan.chapter_plan("01_fourier", "smoke", results_dir=tmp_path).items
                if it.name == "fig1 logreg")
    assert (item.stored, item.count) == (len(cells), len(grid.half()))
    assert item.cost_s == pytest.approx((item.count - item.stored) * item.seconds_each)


def test_bad_chapter_is_one_line():
    with pytest.raises(ValueError, match="chapter must be one of 01_fourier"):
        plan.chapter_plan("06_nothing", "smoke")


def test_plan_counts_every_seed_of_fig1(tmp_path):
    one = plan.chapter_plan("01_fourier", "smoke", results_dir=tmp_path)
    three = plan.chapter_plan("01_fourier", "smoke", results_dir=tmp_path, num_seeds=3)
    fig1 = [it for it in three.items if it.name.startswith("fig1 lenet")]
    assert [it.name for it in fig1] == ["fig1 lenet seed 1", "fig1 lenet seed 2", "fig1 lenet seed 3"]
    assert sum(it.cost_s for it in three.items) > sum(it.cost_s for it in one.items)
    with pytest.raises(ValueError, match="num_seeds must be an integer >= 1"):
        plan.chapter_plan("01_fourier", "smoke", num_seeds=0)
