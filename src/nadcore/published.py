"""The authors' published numbers: Fig. 1 accuracies, Fig. 6 accuracies and the published NADs.

Data from LTS4/neural-anisotropy-directions (Ortiz-Jimenez, Modas, Moosavi-Dezfooli, Frossard;
Apache-2.0), stored in `artifacts/published/` (see its README.md). Architecture names are the
registry's: "logreg", "lenet", "resnet18", "densenet121", "vgg11".

Fig. 1 CSV cell (x, y) has row frequency 2 (x - 8) and column frequency 2 (y - 8), modulo 32:
in nadcore's convention `kx = 2 (y - 8)` and `ky = 2 (x - 8)`, wrapped into [-16, 15], so the
published grid is `fourier.paper_grid()`. The published rows are mirrored,
acc(x, y) = acc(16 - x, y): only rows 0..8 were computed.

The published "eigenvalues" (the NAD files and Fig. 6's `eig_*` columns) are singular values of
the gradient matrix: `spectrum` squares them into covariance eigenvalues, `singular_values`
keeps them as stored.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nadcore import fourier
from nadcore.checks import InputError
from nadcore.nads import NADResult

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

FOLDER = Path(__file__).resolve().parent / "artifacts" / "published"
ARCHS = ("logreg", "lenet", "resnet18", "densenet121", "vgg11")
COLUMNS = {"logreg": "lr", "lenet": "ln", "resnet18": "rn", "densenet121": "dn", "vgg11": "vgg"}
FIG6_ARCHS = ("lenet", "resnet18", "densenet121", "vgg11")
SIZE = 32


def _check(arch, allowed):
    if arch not in allowed:
        raise InputError(f"arch must be one of {', '.join(allowed)} (published data); got {arch!r}")


@cache
def read_table(name: str) -> dict[str, np.ndarray]:
    """A CSV of the folder as `{column: float array}` (cached; callers copy)."""
    with open(FOLDER / name, newline="") as f:
        rows = list(csv.DictReader(f))
    return {c: np.array([float(r[c]) for r in rows]) for c in rows[0]}


def cell_frequency(x: float, y: float) -> tuple[int, int]:
    """`(kx, ky)` of the published Fig. 1 CSV cell `(x, y)` (row frequency 2(x-8), column 2(y-8))."""
    wrap = lambda k: (k + SIZE // 2) % SIZE - SIZE // 2
    return wrap(2 * (int(y) - 8)), wrap(2 * (int(x) - 8))


def fig1_archs() -> tuple[str, ...]:
    """The architectures of the published Fig. 1 CSV."""
    return tuple(a for a in ARCHS if f"acc_{COLUMNS[a]}" in read_table("fig1_dft_accuracies.csv"))


def fig1(arch: str) -> dict[tuple[int, int], float]:
    """Published Fig. 1 test accuracies (%) as `{(kx, ky): accuracy}` on `fourier.paper_grid()`."""
    _check(arch, fig1_archs())
    t = read_table("fig1_dft_accuracies.csv")
    acc = {cell_frequency(x, y): float(a) for x, y, a in zip(t["x"], t["y"], t[f"acc_{COLUMNS[arch]}"])}
    return {c: acc[c] for c in fourier.paper_grid(SIZE).cells()}  # display order


def fig1_image(arch: str) -> np.ndarray:
    """The published Fig. 1 grid of `arch` as a 16x16 display image (`fourier.Grid.image`)."""
    return fourier.paper_grid(SIZE).image(fig1(arch))


def fig6_measured() -> np.ndarray:
    """Boolean mask of the Fig. 6 NAD indices the authors trained on: 0..10, then every 4th
    (10, 14, ..., 1022); the CSV fills the indices between by linear interpolation."""
    mask = np.zeros(1023, dtype=bool)
    mask[:11] = mask[10::4] = True
    return mask


class Fig6Curve(NamedTuple):
    """Published Fig. 6 of one network (`fig6`), arrays over the 1023 NAD indices: `index`, `accuracy` (test % on
    D(u_i)), `eigenvalue`, `singular_value` (the CSV's `eig_*` column, see `spectrum`) and `measured` (see
    `fig6_measured`)."""
    index: np.ndarray
    accuracy: np.ndarray
    eigenvalue: np.ndarray
    singular_value: np.ndarray
    measured: np.ndarray


def fig6(arch: str) -> Fig6Curve:
    """Published Fig. 6 (`Fig6Curve`). The CSV's `eig_*` columns are singular values (see `spectrum`):
    `singular_value` holds them, `eigenvalue` their squares over N - 1."""
    _check(arch, FIG6_ARCHS)
    t, c = read_table("fig6_nads_accuracies.csv"), COLUMNS[arch]
    raw = t[f"eig_{c}"].copy()
    return Fig6Curve(t["index"].astype(int), t[f"acc_{c}"].copy(), _eigenvalues(raw), raw, fig6_measured())


# The authors' NAD finder (`GradientCovarianceAnisotropyFinder.estimate_NADs`, nad_computation.py
# lines 44-47 of LTS4/neural-anisotropy-directions) fits scikit-learn's PCA to the N x D matrix of
# gradients and returns `pca.singular_values_`, saved as `*_eigenvals.npy` (lenet_nad.py, line 28).
# The covariance eigenvalues are `explained_variance_ = singular_values_**2 / (N - 1)`.
NUM_NETWORKS = 10000


def _eigenvalues(singular):
    return np.asarray(singular, dtype=np.float64) ** 2 / (NUM_NETWORKS - 1)


def singular_values(arch: str) -> np.ndarray:
    """The published "eigenvalues" of `arch` as stored (`*_eigenvals.npy`): scikit-learn's
    `pca.singular_values_` of the N = 10,000 gradients, the square roots of (N - 1) lambda_i."""
    _check(arch, ARCHS)
    with np.load(FOLDER / f"{arch}.npz", allow_pickle=False) as z:
        return z["eigenvalues"].astype(np.float64)


def spectrum(arch: str) -> np.ndarray:
    """The published covariance eigenvalues lambda_i of `arch`: `singular_values(arch)` squared over
    N - 1 (scikit-learn's `explained_variance_`), on the same footing as `nadcore.nads` (1023,)."""
    return _eigenvalues(singular_values(arch))


def nads(arch: str) -> NADResult:
    """The published NADs of `arch` as a `nadcore.nads.NADResult`: `eigenvalues` (1023,), decreasing,
    the covariance eigenvalues (`spectrum`; the stored singular values are `singular_values`), and
    `nads` (1023, 1024) float32 unit rows (stored in float16)."""
    _check(arch, ARCHS)
    with np.load(FOLDER / f"{arch}.npz", allow_pickle=False) as z:
        rows = z["nads"].astype(np.float32)
    settings = {"arch": arch, "source": "published", "input_shape": [1, 32, 32], "num_networks": NUM_NETWORKS,
                "method": "secant", "step": 100.0}
    record = {"origin": "LTS4/neural-anisotropy-directions", "licence": "Apache-2.0", "stored_dtype": "float16",
              "eigenvalues": "singular values squared over N - 1 (the files hold singular values)"}
    return NADResult(spectrum(arch), rows, settings, record)


# How close two spectra are in shape, whatever their scale and number of networks: each normalised to a unit sum
# over the first 1023 eigenvalues, averaged over index bands (`SPECTRUM_BANDS`), and compared as log10 ratios of the
# bands; `spectrum_distance` is their root mean square (0: the same shape; 0.1: bands 25 % apart on average). The
# bands weigh the head (one band per few NADs) and the tail (where the number of networks shows) alike.
SPECTRUM_BANDS = ((0, 1), (1, 3), (3, 8), (8, 32), (32, 128), (128, 512), (512, 896), (896, 1023))


def spectrum_bands(eigenvalues: ArrayLike, reference: ArrayLike) -> np.ndarray:
    """log10 of each `SPECTRUM_BANDS` band's mean normalised eigenvalue of `eigenvalues` over that of `reference`."""
    def shares(lam):
        lam = np.clip(np.asarray(lam, dtype=np.float64)[:1023], 0, None)
        if lam.size < 1023 or lam.sum() <= 0:
            raise InputError(f"eigenvalues must hold at least 1023 values, not all zero; got {lam.size}")
        p = lam / lam.sum()
        return np.array([p[a:b].mean() for a, b in SPECTRUM_BANDS])
    return np.log10(shares(eigenvalues) / shares(reference))


def spectrum_distance(eigenvalues: ArrayLike, reference: ArrayLike) -> float:
    """The root mean square of `spectrum_bands`: how far two spectra lie apart in shape."""
    return float(np.sqrt(np.mean(spectrum_bands(eigenvalues, reference) ** 2)))


def _lookup(values, cell):
    return values.get(cell, values.get(fourier.canonical(*cell, SIZE)))


class GridComparison(NamedTuple):
    """Two Fig. 1 grids on their common cells (`compare_grids`): the `cells` (sorted), the matched `ours` and
    `published` arrays, `difference` `{cell: ours - published}`, `spearman`, `pearson` and
    `mean_abs_difference`."""
    cells: list[tuple[int, int]]
    ours: np.ndarray
    published: np.ndarray
    difference: dict[tuple[int, int], float]
    spearman: float
    pearson: float
    mean_abs_difference: float


def compare_grids(ours: Mapping[tuple[int, int], float],
                  published: Mapping[tuple[int, int], float]) -> GridComparison:
    """Compare two `{(kx, ky): accuracy}` grids on their common cells (`GridComparison`).

    Either may hold only canonical cells (`fourier.canonical`): a cell missing from a grid is
    read from the representative of its pair {k, -k}.
    """
    from scipy import stats

    cells = sorted((c for c in set(ours) | set(published)
                    if _lookup(ours, c) is not None and _lookup(published, c) is not None),
                   key=lambda c: (c[1], c[0]))
    if not cells:
        raise ValueError("the two grids share no cell (not even through the pairs {k, -k})")
    a = np.array([_lookup(ours, c) for c in cells], dtype=float)
    b = np.array([_lookup(published, c) for c in cells], dtype=float)
    two = len(cells) >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0   # a constant grid has no ranks to correlate
    return GridComparison(cells, a, b, dict(zip(cells, a - b)),
                          float(stats.spearmanr(a, b)[0]) if two else np.nan,
                          float(stats.pearsonr(a, b)[0]) if two else np.nan, float(np.mean(np.abs(a - b))))


@dataclass
class Fig1Pair:
    """Fig. 1 of one architecture, ours beside the published grid (`bundle.fig1_comparison`): `ours` the stored
    cells (canonical ones), `published` the published grid, `stats` their `compare_grids` (None with fewer than 3
    stored cells), `stored` of the grid's `cells` directions, and the cells' store `records`."""
    ours: dict[tuple[int, int], float]
    published: dict[tuple[int, int], float]
    stats: GridComparison | None
    stored: int
    cells: int
    records: list = field(default_factory=list)


STATS = ("spearman", "pearson", "mean_abs_difference")


def _weighted_pearson(x, y, w):
    """Pearson's r of x and y (each (n,) or (B, n)) with each element repeated w times (w: (B, n))."""
    s = w.sum(axis=1, keepdims=True)
    dx = x - (w * x).sum(axis=1, keepdims=True) / s
    dy = y - (w * y).sum(axis=1, keepdims=True) / s
    return (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))


def _weighted_ranks(a, w):
    """The ranks (ties averaged) of each element of a (n,) in the sample holding it w times, per row of w."""
    less, equal = (a[:, None] < a[None, :]).astype(float), (a[:, None] == a[None, :]).astype(float)
    return w @ less + (w @ equal + 1) / 2


def bootstrap_stats(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman, Pearson and mean |a - b| of two matched arrays (n,) with element i repeated w[:, i]
    times, for each row of w (B, n): the statistics of B bootstrap samples without building them."""
    w = np.asarray(w, dtype=float)
    return np.stack([_weighted_pearson(_weighted_ranks(a, w), _weighted_ranks(b, w), w),
                     _weighted_pearson(a, b, w),
                     (w * np.abs(a - b)).sum(axis=1) / w.sum(axis=1)], axis=1)


def compare_seeds(grids: Sequence[Mapping[tuple[int, int], float]], published: Mapping[tuple[int, int], float],
                  boots: int = 2000, level: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """Our grid from several seeds (`grids`: one `{(kx, ky): accuracy}` per seed) against `published`.

    The estimates compare the mean over seeds with `published` on the cells every grid holds
    (`compare_grids`); `intervals` holds each statistic's `level` percentile-bootstrap interval
    over `boots` resamplings of the canonical cells (a cell and its pair {k, -k} go together: we
    train one network for both). Each cell keeps its seeds' mean: the seeds' noise is independent
    from cell to cell, so resampling cells already carries it, while resampling seeds as well
    would add it twice and bias the correlations down (a test measures the coverage). Also
    `seeds`, `spread` (each cell's standard deviation over seeds, ddof 1; zeros for one seed) and
    `per_seed` (`compare_grids` of each seed's grid alone).
    """
    if not grids:
        raise InputError("grids must hold at least one seed's grid")
    cells = sorted(set.intersection(*(set(g) for g in grids)), key=lambda c: (c[1], c[0]))
    mean = {c: float(np.mean([g[c] for g in grids])) for c in cells}
    out: dict[str, Any] = compare_grids(mean, published)._asdict()
    groups = sorted({fourier.canonical(*c, SIZE) for c in out["cells"]}, key=lambda c: (c[1], c[0]))
    where = {g: i for i, g in enumerate(groups)}
    members = [[] for _ in groups]
    for row, c in enumerate(out["cells"]):
        members[where[fourier.canonical(*c, SIZE)]].append(row)
    A = np.array([[_lookup(g, c) for g in grids] for c in groups], dtype=float)   # canonical cells x seeds
    b = out["published"]
    rng = np.random.default_rng(seed)
    n, k = A.shape
    group = np.empty(len(b), dtype=int)                     # each cell's canonical cell
    for g, rows in enumerate(members):
        group[rows] = g
    a = A.mean(axis=1)[group]
    picks = rng.integers(0, n, (boots, n))                  # each resampling: n canonical cells, with repeats
    draws = np.concatenate([bootstrap_stats(a, b, np.stack([np.bincount(p, minlength=n) for p in chunk])[:, group])
                            for chunk in np.array_split(picks, max(1, boots // 250))])
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(draws, [tail, 100 - tail], axis=0)
    out.update(seeds=k, intervals={s: (float(lo[j]), float(hi[j])) for j, s in enumerate(STATS)},
               spread=dict(zip(groups, A.std(axis=1, ddof=1) if k > 1 else np.zeros(n))),
               per_seed=[compare_grids(g, published) for g in grids])
    return out


def seed_floor(grids: Sequence[Mapping[tuple[int, int], float]]) -> dict[str, Any]:
    """How well our own grids agree with each other: `compare_grids` of every pair of seeds'
    grids (`pairs`), and the mean of each statistic over the pairs. The published grid is one run:
    one seed of ours matches it at best about as well as it matches another seed of ours."""
    if len(grids) < 2:
        raise InputError(f"grids must hold at least two seeds' grids; got {len(grids)}")
    pairs = [compare_grids(grids[i], grids[j]) for i in range(len(grids)) for j in range(i + 1, len(grids))]
    return {"pairs": pairs, **{s: float(np.mean([getattr(p, s) for p in pairs])) for s in STATS}}


# LeNet on D(v) with the authors' own code (their data set, models and `train`; sigma 3, eps 1,
# 10,000 samples, 20 epochs, max_lr 0.5), two seeds each, measured on a 2-core CPU and reported
# in the README of the published data. `(kx, ky)` in nadcore's convention; "cos" marks the
# cosine pattern (the zero frequency has no sine).
AUTHORS_CODE_LENET = {
    ((0, 0), "cos"): (54.2, 55.7),
    ((2, 0), "sin"): (66.8, 65.7),
    ((2, 0), "cos"): (57.1, 57.5),
    ((0, 4), "sin"): (59.1, 55.8),
    ((0, 12), "sin"): (52.8, 49.9),
    ((0, 12), "cos"): (51.5, 51.7),
}
# The same code at sigma = 2 (one seed), zero frequency (cosine): also from that README.
AUTHORS_CODE_LENET_SIGMA2_ZERO = 73.2


# LeNet's Fig. 6 with the authors' own code (their `generate_synthetic_data`, `LeNet(num_channels=1,
# num_classes=2)` and `train`, patched only for today's numpy: `np.long` -> `np.int64`) along their released
# LeNet NAD file, at the caption's settings (sigma 3, eps 1, 10,000 samples, 20 epochs, max_lr 0.5), numpy and
# torch seeded with the seed: `{NAD index: (test accuracy %, ...) per seed 0, 1}`. Measured 2026-12-06 on a
# 2-core Intel Xeon, one thread, about 2 minutes a run (issue 57's oracle; their code is not in the project).
AUTHORS_CODE_FIG6_LENET = {0: (91.78,), 32: (59.50, 60.94), 128: (51.09,)}


# Figs. 7 and 8 (Sec. 4.2, CIFAR-10). The paper's text prints no number of either figure; these are
# read off the authors' images of the two figures on their project page (LTS4/neural-anisotropy-
# directions, docs/images/poison.png: Fig. 7, docs/images/nad_rotation.png: Fig. 8).
# Fig. 8: test accuracy (%) on CIFAR-10, original and NAD-flipped (the percentages printed on the bars).
FIG8 = {"lenet": (69.0, 48.0), "vgg11": (87.0, 53.0), "resnet18": (89.0, 58.0), "densenet121": (92.0, 56.0)}
# Fig. 7: clean test accuracy (%) of ResNet-18 trained on CIFAR-10 with a carrier (eps = 0.05) on
# NADs i and i + 1, carriers every 10th index (0, 10, ..., 1020). The centres of the markers, the
# axes calibrated on their tick marks (about +-0.5 point); markers that overlap a neighbour are left out.
FIG7_RESNET18 = {
    0: 17.6, 10: 36.6, 20: 44.5, 30: 36.9, 40: 46.6, 50: 42.0, 60: 33.3, 70: 65.7, 80: 48.7, 90: 68.2,
    100: 41.8, 110: 62.2, 120: 54.6, 130: 64.9, 140: 45.8, 170: 73.9, 180: 71.3, 190: 67.2, 220: 54.0,
    260: 71.8, 270: 59.0, 280: 55.9, 290: 72.8, 300: 77.7, 330: 64.1, 370: 76.7, 410: 72.5, 490: 76.0,
    570: 74.1, 660: 77.4, 720: 75.8, 780: 72.2, 790: 81.5, 800: 78.0, 810: 84.5, 820: 71.7, 920: 76.9,
    930: 85.7, 940: 82.8, 1020: 80.3,
}


def fig7() -> dict[str, np.ndarray]:
    """Published Fig. 7 (ResNet-18, CIFAR-10): `index` and `accuracy` arrays of the carriers read off
    the figure (`FIG7_RESNET18`)."""
    index = np.array(sorted(FIG7_RESNET18))
    return dict(index=index, accuracy=np.array([FIG7_RESNET18[i] for i in index]))


def fig8(arch: str) -> tuple[float, float]:
    """Published Fig. 8: `(original, flipped)` CIFAR-10 test accuracy (%) of `arch`."""
    _check(arch, tuple(FIG8))
    return FIG8[arch]
