"""Fourier directions and grids: the closed form, the fftshift convention, symmetry, bad input."""

import dataclasses
import math

import numpy as np
import pytest
import torch

from nadcore import fourier, presets, seeds
from nadcore.experiments import ch1_fourier
from nadcore.fourier import Grid, coarse_grid, fourier_direction, full_grid, paper_grid


def closed_form(kx, ky, size, kind):
    m = torch.arange(size, dtype=torch.float64).view(-1, 1)
    n = torch.arange(size, dtype=torch.float64).view(1, -1)
    theta = 2 * math.pi * (kx * n + ky * m) / size
    v = -torch.sin(theta) if kind == "sin" else torch.cos(theta)
    return v / v.norm()


@pytest.mark.parametrize("kind", fourier.KINDS)
def test_every_frequency_matches_the_closed_form(kind):
    for kx, ky in full_grid(16).cells():
        if kind == "sin" and fourier.is_self_conjugate(kx, ky, 16):
            continue
        v = fourier_direction(kx, ky, size=16, kind=kind)
        assert v.shape == (1, 16, 16) and v.dtype == torch.float32
        torch.testing.assert_close(v[0].double(), closed_form(kx, ky, 16, kind), atol=1e-6, rtol=0)


def test_unit_norm_and_one_dft_coefficient_pair():
    v = fourier_direction(5, -3)
    assert abs(v.norm().item() - 1) < 1e-6
    spectrum = np.fft.fftshift(np.abs(np.fft.fft2(v[0].numpy())))
    peaks = sorted(zip(*np.nonzero(spectrum > 1e-3)))
    assert peaks == [(16 - 3, 16 + 5), (16 + 3, 16 - 5)]  # (row ky, column kx) and its conjugate


def test_opposite_frequency_is_the_negated_sine_and_the_same_cosine():
    torch.testing.assert_close(fourier_direction(-3, 2), -fourier_direction(3, -2))
    torch.testing.assert_close(fourier_direction(-3, 2, kind="cos"), fourier_direction(3, -2, kind="cos"))


def test_directions_of_a_half_grid_are_orthonormal():
    v = full_grid(8).directions().flatten(1).double()
    assert v.shape == (8 * 8 // 2 + 2, 64)  # one per conjugate pair, plus the 4 self-conjugate cells
    torch.testing.assert_close(v @ v.T, torch.eye(len(v), dtype=torch.float64), atol=1e-6, rtol=0)


def test_grids():
    assert paper_grid().freqs == tuple(range(-16, 16, 2)) and paper_grid().shape == (16, 16)
    assert len(paper_grid().half()) == (256 - 4) // 2 + 4           # 4 self-conjugate cells
    assert full_grid().shape == (32, 32) and full_grid().freqs[0] == -16
    assert coarse_grid(8).freqs == (-8, 0, 8)
    assert (coarse_grid(4, limit=9).freqs == (-8, -4, 0, 4, 8)
            == fourier.make_grid({"name": "coarse", "step": 4, "limit": 8}).freqs)
    assert coarse_grid(5).freqs == (-15, -10, -5, 0, 5, 10, 15)
    assert paper_grid().freqs.index(0) == 8  # zero frequency at the centre, as fftshift puts it


def test_paper_grid_is_every_second_frequency_with_cosines_at_self_conjugate_cells():
    grid = paper_grid()
    assert grid.freqs[0] == -16 and grid.freqs[-1] == 14 and set(np.diff(grid.freqs)) == {2}
    assert fourier.make_grid({"name": "paper"}) == grid
    assert fourier.make_grid({"name": "low"}).freqs == tuple(range(-8, 8))
    half = grid.half()
    selfconj = [(0, 0), (-16, 0), (0, -16), (-16, -16)]
    assert len(half) == 130 and set(selfconj) <= set(half)
    assert [c for c in half if fourier.is_self_conjugate(*c)] == sorted(selfconj, key=lambda c: (c[1], c[0]))
    v = grid.directions(selfconj)
    for d, (kx, ky) in zip(v, selfconj):
        torch.testing.assert_close(d, fourier_direction(kx, ky, kind="cos"))
    torch.testing.assert_close(v[0], torch.full((1, 32, 32), 1 / 32.0))  # zero frequency: constant
    torch.testing.assert_close(v[1][0, 0, :4], torch.tensor([1, -1, 1, -1]) / 32.0)  # kx = -16: column checkerboard
    covered = {c for kx, ky in half for c in ((kx, ky), (-kx if kx != -16 else kx, -ky if ky != -16 else ky))}
    assert covered == set(grid.cells())


def test_half_covers_the_grid_by_symmetry():
    grid = coarse_grid(4)
    half = grid.half()
    assert len(half) == (7 * 7 + 1) // 2
    covered = {c for kx, ky in half for c in ((kx, ky), (-kx, -ky))}
    assert set(grid.cells()) <= covered


def test_image_places_values_in_fftshift_order_and_fills_by_symmetry():
    grid = Grid((-1, 0, 1), size=8)
    img = grid.image({(1, 0): 5.0, (0, 1): 7.0})
    assert img[1, 2] == 5.0 and img[1, 0] == 5.0  # (kx=1, ky=0) and its mirror (-1, 0)
    assert img[2, 1] == 7.0 and img[0, 1] == 7.0  # (kx=0, ky=1): row ky=1 lies below the centre
    assert np.isnan(img[1, 1])


def test_image_of_the_spectrum_of_a_direction_peaks_at_its_cell():
    spectrum = fourier.fourier_energy(fourier_direction(3, -5)[None])[0]
    assert np.unravel_index(spectrum.argmax(), spectrum.shape) in {(16 - 5, 16 + 3), (16 + 5, 16 - 3)}


@pytest.mark.parametrize("kwargs, param", [
    ({"kx": 16}, "kx must be an int in \\[-16, 15\\]"),
    ({"ky": -17}, "ky must be an int"),
    ({"kx": 1.5}, "kx must be an int"),
    ({"kind": "tan"}, "kind must be one of sin, cos"),
    ({"size": 1}, "size must be"),
    ({"kx": 0, "ky": 0}, "sine direction vanishes"),
    ({"kx": -16, "ky": 0}, "sine direction vanishes"),
])
def test_bad_input_is_named(kwargs, param):
    args = {"kx": 1, "ky": 1} | kwargs
    with pytest.raises(ValueError, match=param):
        fourier_direction(**args)


def test_bad_grids_are_named():
    with pytest.raises(ValueError, match="step must be"):
        coarse_grid(16)
    with pytest.raises(ValueError, match="limit must be"):
        coarse_grid(4, limit=2)
    with pytest.raises(ValueError, match="grid name must be one of coarse, paper, low, full"):
        fourier.make_grid({"name": "fine"})
    with pytest.raises(ValueError, match="strictly increasing"):
        Grid((1, 0))
    with pytest.raises(ValueError, match="freqs must be an int"):
        Grid((0, 20))


def tiny_settings(**kw):
    p = dataclasses.replace(presets.preset("fourier", "smoke"), n=64, sigma=0.5, eps=40.0, kind="sin", epochs=2,
                            max_lr=0.5, momentum=0.0, weight_decay=0.0, batch_size=16)
    return ch1_fourier.sweep_settings(p, seed=0, device="cpu", **kw)


def test_sweep_directions_trains_every_cell_resumes_and_feeds_the_figures(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from nadcore.plots import fourier as figs

    grid = coarse_grid(8)
    table = ch1_fourier.sweep_directions(["logreg"], grid, tiny_settings(), tmp_path, name="t", progress=False)
    assert set(table["logreg"]) == set(grid.half())
    acc = ch1_fourier.per_cell(table)
    assert all(50 <= a <= 100 for a in acc["logreg"].values())  # eps = 80 sigma: easy
    assert sum(a > 90 for a in acc["logreg"].values()) >= 4
    files = sorted((tmp_path / "t").glob("*.npz"))
    stamps = [f.stat().st_mtime_ns for f in files]
    again = ch1_fourier.sweep_directions(["logreg"], grid, tiny_settings(), tmp_path, name="t", progress=False)
    assert [f.stat().st_mtime_ns for f in files] == stamps  # resumed: nothing recomputed
    assert ch1_fourier.per_cell(again) == acc
    iters = ch1_fourier.iterations_to_loss(table, threshold=10.0)
    assert all(v == 1 for v in iters["logreg"].values())
    for fig, values in ((figs.fig1_accuracy(acc, grid), acc), (figs.fig2_iterations(iters, grid, 10.0), iters),
                        (figs.fig3_no_pooling(acc, grid), acc)):
        np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), grid.image(values["logreg"]))
    cells = coarse_grid(4, limit=8).half()[:10]            # the page's gallery: 2 rows of 5, one colour scale
    gallery = figs.directions_gallery(cells)
    panels = [ax for ax in gallery.axes if ax.images]
    assert len(panels) == 10 and len({round(ax.get_position().y0, 6) for ax in panels}) == 2
    for ax, (kx, ky) in zip(panels, cells):
        kind = "cos" if fourier.is_self_conjugate(kx, ky) else "sin"
        np.testing.assert_array_equal(ax.images[0].get_array(), fourier.fourier_direction(kx, ky, 32, kind)[0].numpy())
        assert ax.get_title() == f"({kx}, {ky})"
    assert any(ax.get_ylabel() == "pixel value" for ax in gallery.axes)   # the colour scale
    img = grid.image(acc["logreg"])
    assert np.isfinite(img).all() and img[1, 1] == acc["logreg"][(0, 0)]


def test_fig2_counts_and_greys_the_cells_that_never_reach_the_threshold():
    import matplotlib

    matplotlib.use("Agg")
    from nadcore.plots import fourier as figs

    grid = coarse_grid(8)
    loss = {(0, 0): [1.0, 0.2, 0.1], (8, 0): [1.0, 0.9, 0.8]}
    table = {"lenet": {c: {"loss_history": np.array(loss.get(c, [1.0, 0.5, 0.4]))} for c in grid.half()}}
    iters = ch1_fourier.iterations_to_loss(table, threshold=0.3)
    limit = ch1_fourier.run_iterations(table)
    assert limit == 3 and iters["lenet"][(0, 0)] == 2 and iters["lenet"][(8, 0)] == 4   # 4: never, 3 + 1
    assert ch1_fourier.reached(iters, limit) == {"lenet": (1, len(grid.half()))}
    fig = figs.fig2_iterations(iters, grid, 0.3, limit=limit)
    shown, grey = fig.axes[0].images
    assert np.isfinite(shown.get_array().filled(np.nan)).sum() == 1       # only (0, 0) on the colour scale
    assert np.isfinite(grey.get_array().filled(np.nan)).sum() == grid.shape[0] ** 2 - 1
    assert fig.legends[0].get_texts()[0].get_text() == "not below 0.3 in 3 iterations"


def test_fig2_speed_draws_the_map_beside_speed_against_accuracy_with_the_control_as_a_band():
    import matplotlib

    matplotlib.use("Agg")
    from nadcore.plots import fourier as figs
    from nadcore.plots import style

    grid = coarse_grid(8)
    cells = grid.half()
    accuracy = {c: 50.0 + 5 * i for i, c in enumerate(cells)}
    lenet = {c: (40 if i % 2 else 500) for i, c in enumerate(cells)}          # 500 > limit: never
    iters = {"lenet": lenet, "logreg": {c: 10 + i % 3 for i, c in enumerate(cells)}}
    fig = figs.fig2_speed(iters, grid, 0.05, 100, accuracy)
    left, right = [ax for ax in fig.axes if ax.get_title()]
    shown, grey = left.images
    img = grid.image(lenet)
    np.testing.assert_array_equal(shown.get_array().filled(np.nan), np.where(img <= 100, img, np.nan))
    np.testing.assert_array_equal(np.isfinite(grey.get_array().filled(np.nan)), img > 100)   # grey: never
    dots, triangles = right.lines[0], right.lines[1]
    fitted = [c for c in sorted(cells) if lenet[c] <= 100]
    assert list(dots.get_xdata()) == [accuracy[c] for c in fitted] and set(dots.get_ydata()) == {40.0}
    assert len(triangles.get_xdata()) == len(cells) - len(fitted) and triangles.get_markerfacecolor() == "none"
    assert all(y > 100 for y in triangles.get_ydata())                      # above the run's end
    assert all(t < 100 for t in right.get_yticks())                         # no count ticked past the end
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[0] == "not below 0.05 in 100 iterations"
    assert f"LeNet: not within the run ({len(cells) - len(fitted)})" in labels
    assert f"LogReg: all {len(cells)} directions, 10–12" in labels
    style.check_readable(fig)
    with pytest.raises(ValueError, match="accuracy must hold every direction"):
        figs.fig2_speed(iters, grid, 0.05, 100, {cells[0]: 60.0})
    with pytest.raises(ValueError, match="iterations must hold 'logreg'"):
        figs.fig2_speed({"lenet": lenet}, grid, 0.05, 100, accuracy)


def test_seed_mean_comparison_draws_the_seeds_mean_and_names_its_seeds():
    import matplotlib

    matplotlib.use("Agg")
    from nadcore import published
    from nadcore.plots import fourier as figs

    pub = published.fig1("lenet")
    grids = [{c: a - 1.0 for c, a in pub.items()}, {c: a - 3.0 for c, a in pub.items()}]
    fig = figs.seed_mean_comparison(grids, pub, paper_grid(), "lenet", sigma=3.0)
    title = fig._suptitle.get_text()
    assert title == "LeNet: σ = 3, mean of 2 seeds: Spearman 1.00, mean |ours - published| 2.0 points"
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), paper_grid().image(pub) - 2.0)
    assert published.compare_seeds(grids, pub, boots=10)["mean_abs_difference"] == pytest.approx(2.0)
    one = figs.seed_mean_comparison(grids[:1], pub, paper_grid(), "lenet")
    assert one._suptitle.get_text().startswith("LeNet: one seed: Spearman 1.00")
    with pytest.raises(ValueError, match="grids must hold at least one"):
        figs.seed_mean_comparison([], pub, paper_grid(), "lenet")


def test_fig2_speed_against_fig1_accuracy_ranks_unreached_directions_last():
    iters = {(0, 0): 10, (2, 0): 30, (4, 0): 101, (6, 0): 500}   # limit 100: two never reached
    fast = ch1_fourier.speed_and_accuracy(iters, 100, {(0, 0): 90.0, (2, 0): 70.0, (4, 0): 60.0, (6, 0): 50.0})
    assert fast == {"spearman": pytest.approx(0.9486833), "reached": 80.0, "missed": 55.0}   # tied last: 0.95
    slow = ch1_fourier.speed_and_accuracy(iters, 100, {(0, 0): 50.0, (2, 0): 60.0, (4, 0): 80.0, (6, 0): 70.0})
    assert slow["spearman"] < 0 and slow["reached"] == 55.0
    with pytest.raises(ValueError, match="accuracy must hold every direction"):
        ch1_fourier.speed_and_accuracy(iters, 100, {(0, 0): 1.0})


def test_seeds_per_cell_are_cells_of_their_own_and_their_mean_is_shown(tmp_path):
    grid = coarse_grid(8)
    runs = ch1_fourier.sweep_seeds(["logreg"], grid, tiny_settings(eps=0.5), tmp_path, num_seeds=3, name="t",
                                   progress=False)
    assert len(runs) == 3 and len(list((tmp_path / "t").glob("*.npz"))) == 3 * len(grid.half())
    first = ch1_fourier.sweep_directions(["logreg"], grid, tiny_settings(eps=0.5), tmp_path, name="t", progress=False)
    assert ch1_fourier.per_cell(first) == ch1_fourier.per_cell(runs[0])    # replicate 0 is the sweep itself
    second = ch1_fourier.replicate_settings(tiny_settings(eps=0.5), 1)
    assert second["seed"] == seeds.replicate(0, 1)
    assert ch1_fourier.replicate_settings(tiny_settings(eps=0.5), 0) == tiny_settings(eps=0.5)
    mean, spread = ch1_fourier.seed_mean(runs)
    each = [ch1_fourier.per_cell(t)["logreg"] for t in runs]
    for c in grid.half():
        values = [e[c] for e in each]
        assert mean["logreg"][c] == pytest.approx(np.mean(values))
        assert spread["logreg"][c] == pytest.approx(np.std(values, ddof=1))
    assert any(s > 0 for s in spread["logreg"].values())                  # the seeds differ
    assert ch1_fourier.seed_mean(runs[:1])[1]["logreg"][(0, 0)] == 0.0
    with pytest.raises(ValueError, match=r"num_seeds must be an integer in \[1, 1000\]; got 0"):
        ch1_fourier.sweep_seeds(["logreg"], grid, tiny_settings(eps=0.5), tmp_path, num_seeds=0)


def test_fig3_colour_scale_spans_the_data_not_fig1s():
    """Without pooling the accuracies sit in a narrow band (about 50-58 %): the colour scale is the
    data's range rounded out to 5 points, and the colour bar says so; Fig. 1 keeps 50-100."""
    from nadcore.plots import fourier as figs
    grid = coarse_grid(4, limit=8)
    acc = {"lenet_nopool": {c: 50.4 + 7.3 * (j % 3) / 2 for j, c in enumerate(grid.half())}}
    assert figs.accuracy_range({"a": grid.image(acc["lenet_nopool"])}) == (50.0, 60.0)
    fig = figs.fig3_no_pooling(acc, grid)
    assert fig.axes[0].images[0].get_clim() == (50.0, 60.0)
    assert "the data's range" in fig.axes[-1].get_ylabel() and "50-60" in fig.axes[-1].get_ylabel()
    assert figs.fig1_accuracy(acc, grid).axes[0].images[0].get_clim() == (50, 100)
    assert figs.accuracy_range({"a": np.array([[100.0, np.nan]])}) == (95.0, 100.0)
    assert figs.accuracy_range({"a": np.array([[0.0, 3.0]])}) == (0.0, 5.0)
    assert figs.accuracy_range({"a": np.array([[np.nan]])}) == (50.0, 100.0)


def test_fig3_beside_pooling_shows_both_on_the_directions_of_fig3():
    """Fig. 3 beside LeNet with pooling: the pooled grid (finer, e.g. Fig. 1's) is read at Fig. 3's
    directions only, both maps share one colour scale spanning both, and each title gives its mean and
    standard deviation over those directions."""
    from nadcore.plots import fourier as figs
    grid, fine = coarse_grid(4, limit=8), coarse_grid(2, limit=8)
    without = {c: 95.0 + (j % 3) for j, c in enumerate(grid.half())}
    pooled = {c: 50.0 + 3 * abs(c[0]) for c in fine.half()}     # every second frequency: more cells than Fig. 3's
    fig = figs.fig3_beside_pooling(without, pooled, grid, sigma=1.5, seeds=3)
    left, right = (ax for ax in fig.axes if ax.images)
    on_fig3 = {c: pooled[c] for c in without}
    np.testing.assert_array_equal(left.images[0].get_array(), grid.image(on_fig3))
    np.testing.assert_array_equal(right.images[0].get_array(), grid.image(without))
    assert left.images[0].get_clim() == right.images[0].get_clim() == (50.0, 100.0)
    a = np.array(list(on_fig3.values()))
    assert left.get_title() == f"with pooling, 3 seeds\n{a.mean():.1f} ± {a.std():.1f} %"
    assert right.get_title().startswith("without pooling\n") and fig._suptitle.get_text() == "LeNet, σ = 1.5"
    with pytest.raises(ValueError, match="with_pooling must hold every direction of without"):
        figs.fig3_beside_pooling(without, {(0, 0): 50.0}, grid)


def test_a_grid_of_the_wrong_kind_is_one_line_naming_what_is_accepted():
    """The re-probe of issue 58: `make_grid` with an unknown key or a non-dict, and 1-D frequencies given as a float
    or a bool, raised TypeErrors."""
    for call, message in ((lambda: fourier.make_grid({"name": "coarse", "bogus": 1}), "spec must give the coarse grid"),
                          (lambda: fourier.make_grid(5), "spec must be a GridSpec or a dict"),
                          (lambda: fourier.directions([2.5], 8), "grid must be a fourier.Grid, ints l in"),
                          (lambda: fourier.directions([True], 8), "grid must be a fourier.Grid, ints l in")):
        with pytest.raises(ValueError, match="^" + message):
            call()
