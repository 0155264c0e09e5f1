"""The authors' published data: decoding of the Fig. 1 grid, known values, the stored NADs."""

from pathlib import Path

import numpy as np
import pytest

from nadcore import fourier, published
from nadcore.nads import subspace_overlap, subspace_overlaps

ORIGINALS = Path(__file__).resolve().parents[1].parent / "shared" / "published"
NAD_FILES = {"logreg": "LogReg", "lenet": "LeNet", "resnet18": "ResNet18", "densenet121": "DenseNet121",
             "vgg11": "VGG11"}


def wrap(k):
    return (k + 16) % 32 - 16


# ----------------------------------------------------------------------------- Fig. 1

def test_fig1_cells_are_the_paper_grid():
    grid = fourier.paper_grid()
    assert published.fig1_archs() == published.ARCHS
    for arch in published.ARCHS:
        acc = published.fig1(arch)
        assert list(acc) == grid.cells() and len(acc) == 256
        assert set(acc) == {published.cell_frequency(x, y) for x in range(16) for y in range(16)}
        assert all(0 <= a <= 100 for a in acc.values())


@pytest.mark.parametrize("cell, value", [
    ((0, 0), 72.5),    # zero frequency, CSV (8, 8)
    ((2, 0), 81.2),    # column frequency 2, row 0, CSV (8, 9); its transpose (0, 2) is 80.4
    ((0, 4), 78.8),    # row frequency 4, CSV (10, 8)
    ((0, 12), 74.8),   # row frequency 12
    ((6, 0), 74.4),    # column frequency 6; its transpose (0, 6) is 67.4
    ((8, 0), 50.1),
    ((0, 10), 58.8),
])
def test_fig1_known_lenet_values(cell, value):
    assert abs(published.fig1("lenet")[cell] - value) < 0.1


def test_fig1_rows_are_mirrored():
    for arch in published.ARCHS:
        acc = published.fig1(arch)
        assert all(acc[(kx, ky)] == acc[(kx, wrap(-ky))] for kx, ky in acc)  # acc(x, y) = acc(16 - x, y)
    lenet = published.fig1("lenet")
    assert any(lenet[(kx, ky)] != lenet[(wrap(-kx), ky)] for kx, ky in lenet)  # columns are not


def test_fig1_image_is_the_csv_in_display_orientation():
    t = published.read_table("fig1_dft_accuracies.csv")
    for arch in published.ARCHS:
        csv = np.zeros((16, 16))
        csv[t["x"].astype(int), t["y"].astype(int)] = t[f"acc_{published.COLUMNS[arch]}"]
        img = published.fig1_image(arch)
        assert img.shape == (16, 16) and np.array_equal(img, csv)  # row x is ky = 2 (x - 8), column y is kx
    assert published.fig1_image("lenet")[8, 8] == published.fig1("lenet")[(0, 0)]


def picture(path):
    """A published direction picture (217 x 217 RGBA, colormap BrBG) as 32 x 32 values in [-1, 1]."""
    import matplotlib
    from PIL import Image

    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=float)
    centres = ((np.arange(32) + 0.5) * rgb.shape[0] / 32).astype(int)
    pixels = rgb[centres][:, centres]
    lut = matplotlib.colormaps["BrBG"](np.linspace(0, 1, 256))[:, :3] * 255
    dist = ((pixels[:, :, None] - lut) ** 2).sum(-1)
    assert np.sqrt(dist.min(-1)).max() < 3  # the colours are BrBG's
    return dist.argmin(-1) / 255 * 2 - 1


def peaks(image):
    spectrum = np.fft.fftshift(np.abs(np.fft.fft2(image)))
    return {(int(r) - 16, int(c) - 16) for r, c in zip(*np.nonzero(spectrum > 0.5 * spectrum.max()))}


def pictures():
    found = {p.name: p for p in published.FOLDER.glob("fourier_*.png")}
    found.update({p.name: p for p in (ORIGINALS / "data" / "fig1_direction_images").glob("fourier_*.png")})
    return [found[n] for n in sorted(found)]


@pytest.mark.parametrize("path", pictures(), ids=lambda p: p.stem)
def test_published_pictures_decode_to_their_cells(path):
    x, y = map(int, path.stem.split("_")[1:])
    kx, ky = published.cell_frequency(x, y)
    assert (ky, kx) == (wrap(2 * (x - 8)), wrap(2 * (y - 8)))  # (row, column) frequency
    v = picture(path)
    ours = fourier.fourier_direction(kx, ky, kind="cos")[0].numpy()
    assert peaks(v) == peaks(ours)  # the |DFT| peaks (row ky, column kx) and their conjugates
    if (kx, ky) != (0, 0):
        assert np.corrcoef(v.ravel(), ours.ravel())[0, 1] > 0.99  # the pictures show cosines


def test_the_orientation_is_checked_by_a_picture_off_the_axes():
    v = picture(published.FOLDER / "fourier_9_10.png")  # row frequency 2, column frequency 4
    assert published.cell_frequency(9, 10) == (4, 2)
    assert peaks(v) == {(2, 4), (-2, -4)} != peaks(fourier.fourier_direction(2, 4, kind="cos")[0].numpy())


# ----------------------------------------------------------------------------- Fig. 6

def test_fig6():
    for arch in published.FIG6_ARCHS:
        f = published.fig6(arch)
        assert f._fields == ("index", "accuracy", "eigenvalue", "singular_value", "measured")
        assert np.array_equal(f.index, np.arange(1023)) and f.accuracy.shape == f.eigenvalue.shape == (1023,)
        assert f.measured.sum() == 264 and f.measured[[0, 10, 14, 1022]].all() and not f.measured[11]
        m = f.measured
        np.testing.assert_allclose(np.interp(f.index, f.index[m], f.accuracy[m]), f.accuracy, atol=1e-9)
        assert np.all(np.diff(f.eigenvalue) <= 0)
        np.testing.assert_allclose(f.eigenvalue, f.singular_value ** 2 / 9999)
    assert published.fig6("lenet").accuracy[0] == 100.0 and published.fig6("resnet18").accuracy[0] == 97.88
    with pytest.raises(ValueError, match="arch must be one of lenet, resnet18"):
        published.fig6("logreg")


def test_fig6_eigenvalues_are_those_of_the_nads_except_lenet():
    for arch in ("resnet18", "densenet121", "vgg11"):
        np.testing.assert_allclose(published.fig6(arch).eigenvalue, published.nads(arch).eigenvalues, rtol=1e-6)
    assert not np.allclose(published.fig6("lenet").eigenvalue, published.nads("lenet").eigenvalues, rtol=0.1)


# ----------------------------------------------------------------------------- spectra

def test_sklearn_singular_values_are_square_roots_of_the_covariance_eigenvalues():
    """Why `published.spectrum` squares: the authors' finder returns PCA's `singular_values_`."""
    from sklearn.decomposition import PCA

    from nadcore.nads import eig_decreasing

    g = np.random.default_rng(0).normal(size=(300, 12)) * np.linspace(3, 0.1, 12)
    pca = PCA(n_components=12).fit(g)
    eigenvalues, _ = eig_decreasing(np.cov(g, rowvar=False))
    np.testing.assert_allclose(pca.singular_values_ ** 2 / (len(g) - 1), eigenvalues, rtol=1e-10)
    assert not np.allclose(pca.singular_values_ / pca.singular_values_[0], eigenvalues / eigenvalues[0], rtol=0.1)


@pytest.mark.parametrize("arch", published.ARCHS)
def test_spectrum_squares_the_stored_singular_values(arch):
    s, lam = published.singular_values(arch), published.spectrum(arch)
    np.testing.assert_allclose(lam, s ** 2 / (published.NUM_NETWORKS - 1))
    np.testing.assert_array_equal(published.nads(arch).eigenvalues, lam)
    assert lam.shape == (1023,) and np.all(np.diff(lam) <= 0)


def test_published_lenet_spectrum_squared_decays_as_measured():
    lam, s = published.spectrum("lenet"), published.singular_values("lenet")
    assert lam[99] / lam[0] == pytest.approx(0.077, abs=0.001)    # lambda_100 / lambda_1; ours (bundle): 0.074
    assert lam[299] / lam[0] == pytest.approx(0.027, abs=0.001)   # lambda_300 / lambda_1; ours (bundle): 0.026
    assert s[99] / s[0] == pytest.approx(0.278, abs=0.001)        # the stored values, unsquared


# ----------------------------------------------------------------------------- NADs

@pytest.mark.parametrize("arch", published.ARCHS)
def test_nads_are_orthonormal_with_decreasing_eigenvalues(arch):
    res = published.nads(arch)
    assert res.nads.shape == (1023, 1024) and res.nads.dtype == np.float32 and res.eigenvalues.shape == (1023,)
    assert np.all(np.diff(res.eigenvalues) <= 0) and res.eigenvalues[-1] > 0
    U = res.nads.astype(np.float64)
    assert np.abs(np.linalg.norm(U, axis=1) - 1).max() < 1e-3  # float16 rounding
    assert np.abs(U @ U.T - np.eye(1023)).max() < 1e-3
    assert res.images(4).shape == (4, 1, 32, 32) and res.settings["source"] == "published"


@pytest.mark.skipif(not (ORIGINALS / "nads").is_dir(), reason="the authors' float32 NADs are not at hand")
@pytest.mark.parametrize("arch", published.ARCHS)
def test_float16_nads_keep_the_subspaces_of_the_float32_originals(arch):
    original = np.load(ORIGINALS / "nads" / f"{NAD_FILES[arch]}_NADs.npy")
    eig = np.load(ORIGINALS / "nads" / f"{NAD_FILES[arch]}_eigenvals.npy")
    res = published.nads(arch)
    assert np.array_equal(published.singular_values(arch), eig.astype(np.float64))
    o = subspace_overlaps(original, res.nads, range(1, len(original) + 1))
    for k in (1, 7, 100):
        assert abs(o[k - 1] - subspace_overlap(original, res.nads, k)) < 1e-9
    assert o.shape == (1023,) and np.abs(1 - o).max() < 1e-3  # measured: < 1e-7 for every k = 1..1023


# ----------------------------------------------------------------------------- compare_grids

def test_compare_grids():
    pub = published.fig1("lenet")
    same = published.compare_grids(pub, pub)
    assert same.spearman == pytest.approx(1) and same.pearson == pytest.approx(1)
    assert same.mean_abs_difference == 0 and len(same.cells) == 256
    neg = published.compare_grids({c: -a for c, a in pub.items()}, pub)
    assert neg.spearman == pytest.approx(-1)
    assert neg.difference[(0, 0)] == pytest.approx(-2 * pub[(0, 0)])


def test_compare_grids_reads_canonical_cells_for_their_pairs():
    grid = fourier.paper_grid()
    pub = published.fig1("densenet121")
    ours = {c: pub[c] for c in grid.half()}
    out = published.compare_grids(ours, pub)
    assert len(out.cells) == 256 and len(ours) == 130
    assert all(out.difference[c] == 0 for c in grid.half())
    assert out.mean_abs_difference > 0  # the published grid is not symmetric under k -> -k
    coarse = {c: 60.0 + c[0] for c in fourier.coarse_grid(4).half()}
    assert len(published.compare_grids(coarse, pub).cells) == 49  # frequencies -12..12 step 4, all even
    with pytest.raises(ValueError, match="share no cell"):
        published.compare_grids({(1, 1): 50.0}, pub)


def test_bad_arch_is_named():
    with pytest.raises(ValueError, match="arch must be one of logreg, lenet"):
        published.fig1("vgg11_bn")
    with pytest.raises(ValueError, match="arch must be one of"):
        published.nads("mlp")


# ----------------------------------------------------------------------------- several seeds

def synthetic_seeds(rng, k, noise, published_noise):
    """A canonical-cell truth x, `k` seeds' grids x + noise and a published grid x + published_noise
    (each of the 256 cells its own draw, as the published grid is not symmetric under k -> -k)."""
    grid = fourier.paper_grid()
    x = {c: rng.normal() for c in grid.half()}
    ours = [{c: v + noise * rng.normal() for c, v in x.items()} for _ in range(k)]
    pub = {c: x[fourier.canonical(*c)] + published_noise * rng.normal() for c in published.fig1("lenet")}
    return ours, pub


def test_bootstrap_statistics_from_weights_equal_those_of_the_repeated_samples():
    """`_stats` weighs each element by its count in a resampling: the statistics of the sample built
    with repeats (ties among repeats and among values ranked by SciPy), to rounding."""
    from scipy import stats

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 6, 40) / 5, rng.normal(size=40)        # a has many ties
    w = rng.integers(0, 3, (5, 40))
    fast = published.bootstrap_stats(a, b, w)
    for row, counts in zip(fast, w):
        x, y = np.repeat(a, counts), np.repeat(b, counts)
        spearman = np.corrcoef(stats.rankdata(x), stats.rankdata(y))[0, 1]
        np.testing.assert_allclose(row, [spearman, np.corrcoef(x, y)[0, 1], np.mean(np.abs(x - y))], rtol=1e-12)


def test_compare_seeds_of_identical_grids():
    pub = published.fig1("lenet")
    half = {c: pub[c] for c in fourier.paper_grid().half()}
    out = published.compare_seeds([half, half], half, boots=200)
    assert out["seeds"] == 2 and out["spearman"] == pytest.approx(1)
    assert out["intervals"]["spearman"] == pytest.approx((1, 1)) and out["intervals"]["mean_abs_difference"] == (0, 0)
    assert set(out["spread"].values()) == {0.0} and len(out["per_seed"]) == 2
    with pytest.raises(ValueError, match="grids must hold at least one"):
        published.compare_seeds([], pub)


@pytest.mark.slow
def test_compare_seeds_intervals_cover_the_population_values():
    """Monte Carlo: with noise s per seed and t on the published grid, the mean of k seeds correlates
    with the published grid at 1 / sqrt((1 + s^2/k)(1 + t^2)) and differs from it by
    sqrt(2/pi) sqrt(s^2/k + t^2) on average; the 95% intervals must cover both in >= 88% of 120
    draws, and be narrow enough to say
    something (mean width of the Pearson interval < 0.2)."""
    rng = np.random.default_rng(1)
    k, s, t = 3, 1.0, 0.5
    pearson = 1 / np.sqrt((1 + s ** 2 / k) * (1 + t ** 2))
    mad = np.sqrt(2 / np.pi) * np.sqrt(s ** 2 / k + t ** 2)
    hits, widths = np.zeros(2), []
    for trial in range(120):
        ours, pub = synthetic_seeds(rng, k, s, t)
        out = published.compare_seeds(ours, pub, boots=300, seed=trial)
        (plo, phi), (mlo, mhi) = out["intervals"]["pearson"], out["intervals"]["mean_abs_difference"]
        hits += [plo <= pearson <= phi, mlo <= mad <= mhi]
        widths.append(phi - plo)
    assert (hits / 120 >= 0.88).all(), hits / 120
    assert np.mean(widths) < 0.2


def test_seed_floor_is_the_agreement_of_our_own_seeds():
    rng = np.random.default_rng(0)
    ours, _ = synthetic_seeds(rng, 3, 0.5, 0.0)
    floor = published.seed_floor(ours)
    assert len(floor["pairs"]) == 3
    assert floor["pearson"] == pytest.approx(1 / (1 + 0.5 ** 2), abs=0.08)   # two draws of x + noise
    assert floor["spearman"] == pytest.approx(np.mean([p.spearman for p in floor["pairs"]]))
    with pytest.raises(ValueError, match="at least two seeds' grids; got 1"):
        published.seed_floor(ours[:1])
