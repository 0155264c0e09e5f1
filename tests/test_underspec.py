"""Chapter 5 (follow-up paper): D1 (+) D2, channel ablations, cross-sections, the grids."""

import matplotlib

matplotlib.use("Agg")

import dataclasses  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from nadcore import presets, train  # noqa: E402
from nadcore.experiments import ch5_underspec as underspec  # noqa: E402
from nadcore.plots import underspec as plots  # noqa: E402


def basis(k=4, seed=0):
    """`k` orthonormal 32x32 directions, standing in for NADs."""
    q, _ = torch.linalg.qr(torch.randn(1024, k, generator=torch.Generator().manual_seed(seed)))
    return q.T.contiguous().view(k, 1, 32, 32)


class Linear2(nn.Module):
    """logit_0 = a <x_1, v1> + b <x_2, v2> = -logit_1: class 0 where that is > 0 (ties give 0)."""

    def __init__(self, v1, v2, a, b):
        super().__init__()
        self.w = torch.cat([a * v1, b * v2]).flatten()

    def forward(self, x):
        f = x.flatten(1) @ self.w
        return torch.stack([f, -f], 1)


def tiny_pairs(**extra):
    recipe = presets.Sgd(epochs=1, max_lr=0.05, momentum=0.9, weight_decay=0.0, batch_size=32, schedule="triangular")
    return presets.Pairs(**{"archs": ["mlp"], "indices": [0, 2], "seeds": [0], "n_train": 64, "n_test": 64,
                            "sigma": 1.0, "eps1": 1.0, "eps2": 0.5, "extent": 2.0, "resolution": 5, "selected": [],
                            "recipe": {"mlp": recipe}, **extra})


# --------------------------------------------------------------------------- data

def test_binarise_splits_classes_0_4_from_5_9():
    assert underspec.binarise(torch.arange(10)).tolist() == [0] * 5 + [1] * 5
    with pytest.raises(ValueError, match="labels"):
        underspec.binarise(torch.tensor([0, 10]))


def test_pair_dataset_stacks_two_directional_channels_with_shared_labels():
    U = basis()
    x, y = underspec.pair_dataset(U[0], U[1], 40, sigma=1.0, eps1=1.0, eps2=0.5, seed=3)
    assert x.shape == (40, 2, 32, 32) and y.tolist() == [0] * 20 + [1] * 20
    sign = 1.0 - 2.0 * y.float()
    torch.testing.assert_close((x[:, 0] * U[0, 0]).sum((1, 2)), sign * 0.5, atol=1e-4, rtol=0)
    torch.testing.assert_close((x[:, 1] * U[1, 0]).sum((1, 2)), sign * 0.25, atol=1e-4, rtol=0)


def test_cifar_with_channel_appends_a_directional_channel_matching_unbalanced_labels():
    images = torch.rand(7, 3, 32, 32)
    labels = torch.tensor([0, 9, 3, 7, 5, 1, 2])          # binary: 0 1 0 1 1 0 0 (4 vs 3)
    v = basis(1)[0]
    x, y = underspec.cifar_with_channel(images, labels, v, sigma=1.0, eps=1.0, seed=1)
    assert x.shape == (7, 4, 32, 32) and y.tolist() == [0, 1, 0, 1, 1, 0, 0]
    torch.testing.assert_close(x[:, :3], images)
    torch.testing.assert_close((x[:, 3] * v[0]).sum((1, 2)), 0.5 * (1.0 - 2.0 * y.float()), atol=1e-4, rtol=0)


def test_datasets_with_different_sizes_or_labels_are_refused():
    v = basis(1)[0]
    with pytest.raises(ValueError, match="y must be a 1-D tensor of binary labels"):
        underspec.labelled_directional(v, torch.tensor([0, 1, 2]), 1.0, 1.0)
    with pytest.raises(ValueError, match="same number"):
        underspec.cifar_with_channel(torch.rand(5, 3, 32, 32), torch.arange(4), v, 1.0)
    x, y = underspec.pair_dataset(v, basis(2)[1], 8)
    with pytest.raises(ValueError, match="same label"):
        underspec.data.concat_channels((x, y), (x, 1 - y))


# --------------------------------------------------------------------------- evaluation

@pytest.mark.parametrize("a, b, expected", [(1.0, 0.0, (100.0, 100.0, 50.0)), (0.0, 1.0, (100.0, 50.0, 100.0))])
def test_channel_accuracies_of_a_model_reading_one_channel(a, b, expected):
    U = basis()
    x, y = underspec.pair_dataset(U[0], U[1], 200, sigma=0.5, seed=2)
    acc = underspec.channel_accuracies(Linear2(U[0], U[1], a, b), x, y, split=1, device="cpu")
    # the read channel separates perfectly; the zeroed one leaves f = 0 -> class 0 on half the data
    assert tuple(acc[k] for k in underspec.CHANNELS) == expected


def test_channel_accuracies_zero_the_normalised_input():
    U = basis()
    x, y = underspec.pair_dataset(U[0], U[1], 100, seed=4)
    mean, std = torch.full((2, 1, 1), 5.0), torch.full((2, 1, 1), 2.0)
    raw = x * std + mean                                   # normalising gives back x
    model = Linear2(U[0], U[1], 1.0, 0.0)
    assert underspec.channel_accuracies(model, raw, y, mean=mean, std=std, device="cpu") == \
        underspec.channel_accuracies(model, x, y, device="cpu")


def test_cross_section_of_a_linear_model_is_its_half_plane():
    U = basis()
    a, b = 1.0, -2.0
    classes, coords = underspec.cross_section(Linear2(U[0], U[1], a, b), U[0], U[1], extent=1.5,
                                              resolution=31, device="cpu")
    assert classes.shape == (31, 31) and coords.shape == (31,)
    np.testing.assert_allclose(coords[[0, -1]], [-1.5, 1.5])
    c1, c2 = np.meshgrid(coords, coords)                   # columns follow v1, rows v2
    f = a * c1 + b * c2
    clear = np.abs(f) > 1e-4                               # leave float ties on the boundary out
    np.testing.assert_array_equal(classes[clear], (f[clear] < 0).astype(np.int8))
    assert 0.3 < classes.mean() < 0.7                      # the boundary crosses the window
    with pytest.raises(ValueError, match=r"^resolution must keep the plane's float32 points under 8 GiB"):
        underspec.cross_section(Linear2(U[0], U[1], a, b), U[0], U[1], resolution=10 ** 5, device="cpu")


def test_cross_section_follows_the_normalisation_and_origin():
    U = basis()
    model = Linear2(U[0], U[1], 1.0, 0.0)
    shift = 0.5 * torch.cat([U[0], torch.zeros_like(U[0])])
    shifted, coords = underspec.cross_section(model, U[0], U[1], extent=1.0, resolution=21, origin=shift, device="cpu")
    assert (shifted[:, coords < -0.5 - 1e-6] == 1).all() and (shifted[:, coords > -0.5 + 1e-6] == 0).all()
    mean = torch.cat([0.25 * U[0], torch.zeros_like(U[1])])    # an input mean of 0.25 along v1
    normed, _ = underspec.cross_section(model, U[0], U[1], extent=1.0, resolution=21, mean=mean,
                                        std=torch.ones(2, 1, 1), device="cpu")
    assert (normed[:, coords < 0.25 - 1e-6] == 1).all() and (normed[:, coords > 0.25 + 1e-6] == 0).all()


def test_the_sections_plane_passes_through_a_test_sample():
    """`section_origin`: the sample off the plane of `v_i (+) 0`, `0 (+) v_j`; the sample is that origin plus its
    coordinates along the two directions, so Fig. 2's sections are drawn where the data lie."""
    U = basis()
    x = torch.randn(2, 32, 32, generator=torch.Generator().manual_seed(0))
    origin = underspec.section_origin(x, U[0], 3.0 * U[1])            # any scale of a direction
    u1, u2 = torch.cat([U[0], torch.zeros_like(U[0])]), torch.cat([torch.zeros_like(U[1]), U[1]])
    assert abs(float((origin * u1).sum())) < 1e-5 and abs(float((origin * u2).sum())) < 1e-5
    a, b = float((x * u1).sum()), float((x * u2).sum())
    assert torch.allclose(origin + a * u1 + b * u2, x, atol=1e-5)
    settings = presets.Pairs(archs=["lenet"], indices=[0, 1], seeds=[0], n_train=8, n_test=8, sigma=1.0, eps1=1.0,
                             eps2=0.5, extent=2.0, resolution=5, selected=[],
                             recipe={"lenet": presets.Sgd(epochs=1, max_lr=0.1)})
    assert underspec.pair_sweep("lenet", U, settings).settings["section"] == underspec.SECTION   # in the cells' key


def test_evaluation_bad_input():
    U = basis()
    x, y = underspec.pair_dataset(U[0], U[1], 8)
    model = Linear2(U[0], U[1], 1.0, 0.0)
    with pytest.raises(ValueError, match="split"):
        underspec.channel_accuracies(model, x, y, split=2)
    with pytest.raises(ValueError, match="keep"):
        underspec.ablate(x, 1, "channel3")
    with pytest.raises(ValueError, match="same positive number"):
        underspec.channel_accuracies(model, x, y[:4])
    with pytest.raises(ValueError, match="resolution"):
        underspec.cross_section(model, U[0], U[1], resolution=1)
    with pytest.raises(ValueError, match="v2"):
        underspec.cross_section(model, U[0], torch.zeros(32, 32))


# --------------------------------------------------------------------------- grids

@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_pair_grid_resumes_and_shards_to_the_same_numbers(tmp_path, monkeypatch):
    U, s = basis(), tiny_pairs()
    computed = []
    fit_many = train.fit_many   # every cell's networks are trained by it
    monkeypatch.setattr(train, "fit_many", lambda nets, *a, **k: computed.append(len(nets)) or fit_many(nets, *a, **k))
    kw = dict(device="cpu", batch=1, progress=False)
    assert underspec.pair_grid("mlp", U, s, tmp_path / "a", shard=0, num_shards=2, **kw) is None
    assert sum(computed) == 2                              # half of the 2 x 2 cells
    resumed = underspec.pair_grid("mlp", U, s, tmp_path / "a", **kw)
    assert sum(computed) == 4                              # only the missing half was trained
    again = underspec.pair_grid("mlp", U, s, tmp_path / "a", **kw)
    assert sum(computed) == 4                              # everything came from the store
    fresh = underspec.pair_grid("mlp", U, s, tmp_path / "b", **kw)
    for key in ("accuracy", "train_accuracy", "sections"):
        np.testing.assert_array_equal(getattr(resumed, key), getattr(fresh, key))
        np.testing.assert_array_equal(getattr(again, key), getattr(fresh, key))
    assert fresh.accuracy.shape == (1, 2, 2, 3) and fresh.sections.shape == (1, 2, 2, 5, 5)
    assert ((fresh.accuracy >= 0) & (fresh.accuracy <= 100)).all()
    rows = underspec.switching(fresh)
    assert [r[:2] for r in rows] == [(0, 0), (0, 2), (2, 0), (2, 2)]
    assert rows[1][2:] == tuple(fresh.accuracy[0, 0, 1, 1:])
    grids = {"lenet": fresh, "mlp": fresh}
    figs = [plots.pair_maps(grids), plots.cross_sections(grids, [(0, 0), (0, 2), (2, 0), (2, 2)])]
    assert [len(f.axes) for f in figs] == [7, 8]           # 2 x 3 maps + colour bar; 2 x 4 sections
    assert figs[0].axes[0].get_title() == "LeNet: both channels"
    two = fresh._replace(accuracy=np.concatenate([fresh.accuracy, fresh.accuracy + 2]))   # two seeds
    texts = [t.get_text() for t in plots.pair_maps({"mlp": two}).axes[0].texts]
    assert texts[0] == f"{fresh.accuracy[0, 0, 0, 0] + 1:.0f}\n±1"   # the seeds' mean ± their std
    cell = underspec.pair_cells("mlp", U, s, [{"i": 2, "j": 0, "seed": s.seeds[0]}], "cpu")[0]
    np.testing.assert_array_equal(cell["accuracy"], fresh.accuracy[0, 1, 0])   # one cell alone, bitwise
    (legend,) = figs[1].legends                            # the colours of the two classes are named
    assert [t.get_text() for t in legend.get_texts()] == list(plots.CLASS_LABELS)
    with pytest.raises(ValueError, match="pairs"):
        plots.cross_sections({"mlp": fresh}, [(1, 1)])


def test_ood_grid_on_the_digits_stand_in(tmp_path):
    recipe = presets.Sgd(epochs=1, max_lr=0.05, momentum=0.9, weight_decay=1e-5, batch_size=64,
                         schedule="triangular", widths=[20, 10])
    s = presets.Ood(archs=["mlp"], dataset="digits", limit=128, indices=[0, 3], seeds=[0], eps=1.0,
                    sigma={"mlp": 3.0}, recipe={"mlp": recipe})
    out = underspec.ood_grid("mlp", basis(), s, tmp_path, device="cpu", batch=2, progress=False)
    assert out.accuracy.shape == (1, 2, 3) and out.sigma == 3.0
    assert ((out.accuracy >= 0) & (out.accuracy <= 100)).all()
    fig = plots.ood_curves({"lenet": out, "mlp": out})
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 4    # 3 curves + the chance line
    assert len({line.get_linestyle() for line in fig.axes[0].lines[:3]}) == 3   # curves that coincide stay visible
    assert fig.axes[0].get_xscale() == "symlog" and [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["0", "1"]
    table = plots.ood_table({"mlp": out, "lenet": out})
    assert list(table.index) == [0, 3] and list(table.columns)[0] == "LeNet: images only (%)"   # CNNs first
    assert table.loc[3].tolist()[:2] == [round(float(a), 1) for a in out.accuracy[0, 1, 1:]]


def test_bundle_cost_of_the_follow_up_figures():
    from nadcore import bundle

    assert bundle.underspec_cost("pairs") > 60 and bundle.underspec_cost("ood") > 0
    with pytest.raises(ValueError, match="figure must be"):
        bundle.underspec_cost("fig9")


def test_grids_bad_input(tmp_path):
    U = basis()
    with pytest.raises(ValueError, match=r"indices must be a non-empty list of NAD indices in 0\.\.3"):
        underspec.pair_grid("mlp", U, tiny_pairs(indices=[0, 4]), tmp_path, progress=False)
    with pytest.raises(ValueError, match="indices"):
        underspec.pair_grid("mlp", U, tiny_pairs(indices=[-1]), tmp_path, progress=False)
    with pytest.raises(ValueError, match="arch must be one of"):
        underspec.pair_grid("lenet", U, tiny_pairs(), tmp_path, progress=False)
    with pytest.raises(ValueError, match="nads"):
        underspec.pair_grid("mlp", torch.randn(3, 100), tiny_pairs(), tmp_path, progress=False)
    with pytest.raises(ValueError, match="grids"):
        plots.ood_curves({})


def test_chapter_settings_derive_every_seed_and_leave_the_presets_alone():
    from nadcore import presets, seeds
    base = presets.preset("underspecification", "paper")
    run0, run5 = underspec.chapter_settings("paper", 0), underspec.chapter_settings("paper", 5)
    for figure in ("pairs", "ood"):
        ours, published = getattr(run0, figure), getattr(base, figure)
        assert getattr(run5, figure).seeds == [seeds.derive(5, r) for r in published.seeds]
        assert not set(ours.seeds) & set(getattr(run5, figure).seeds)   # `seed + r` would share two
        assert dataclasses.replace(ours, seeds=published.seeds) == published
    assert base == presets.preset("underspecification", "paper")


def test_channel_choice_reads_which_part_each_network_uses():
    acc = np.array([[[99.0, 52.0, 98.0], [97.0, 90.0, 80.0], [95.0, 94.0, 50.0], [60.0, 55.0, 51.0]]])
    grid = underspec.OodGrid(np.array([0, 5, 100, 1000]), np.array([0]), 1.0, acc, np.full((1, 4), 99.0))
    assert underspec.channel_choice(grid) == {0: "linear", 5: "both", 100: "images", 1000: "neither"}
    assert underspec.channel_choice(grid, threshold=85.0)[5] == "images"
    assert set(underspec.channel_choice(grid).values()) <= set(underspec.CHOICES)
