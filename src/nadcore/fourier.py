"""2-D DFT directions and the grids of frequencies the sweeps run over.

Convention: `kx` is the horizontal frequency (along image columns, the last axis) and `ky` the
vertical one (along rows), both in the fftshift range `-size // 2 <= k < size // 2`. The
display image of a grid puts zero frequency at the centre, `kx` to the right and `ky` down, as
`numpy.fft.fftshift` does. Since the sine of `-(kx, ky)` is minus the sine of `(kx, ky)`,
D(v) and D(-v) are the same task with the labels swapped: grids are symmetric under
`(kx, ky) -> (-kx, -ky)` and `canonical` picks one representative of each pair.
"""

from dataclasses import dataclass

import numpy as np
import torch

KINDS = ("sin", "cos")


def _check_frequency(name, k, size):
    lo, hi = -(size // 2), (size + 1) // 2 - 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not lo <= k <= hi:
        raise ValueError(f"{name} must be an int in [{lo}, {hi}] (the fftshift range of a {size}x{size} image); "
                         f"got {k!r}")


def _check_size(size):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
        raise ValueError(f"size must be an int >= 2; got {size!r}")


def is_self_conjugate(kx, ky, size=32):
    """True where (kx, ky) equals (-kx, -ky) modulo `size`: there the sine direction is zero."""
    return (2 * kx) % size == 0 and (2 * ky) % size == 0


def fourier_direction(kx, ky, size=32, kind="sin"):
    """The unit-norm 2-D DFT direction at frequency (kx, ky), shape (1, size, size), float32.

    As in the authors' code: take the rfft2 of a zero image, set the imaginary ("sin") or real
    ("cos") part of one coefficient to 1, irfft2 and normalise. A negative `kx` sets the
    conjugate coefficient at (-kx, -ky), so the result is always `-sin(2 pi (kx n + ky m) / size)`
    (or `cos(...)`) over pixels (row m, column n), normalised.
    """
    _check_size(size)
    _check_frequency("kx", kx, size)
    _check_frequency("ky", ky, size)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if kind == "sin" and is_self_conjugate(kx, ky, size):
        raise ValueError(f"the sine direction vanishes at (kx, ky) = ({kx}, {ky}) (a self-conjugate frequency); "
                         "use kind='cos'")
    sign = 1.0
    if kx < 0:  # Hermitian symmetry: X[ky, kx] = conj(X[-ky, -kx]), which rfft2 stores
        kx, ky, sign = -kx, -ky, -1.0
    # Built on the CPU in float64: the inverse of a non-Hermitian kx = 0 column is only well
    # defined with pocketfft's convention (the imaginary part of that bin is dropped).
    spectrum = torch.fft.rfft2(torch.zeros(size, size, dtype=torch.float64))
    spectrum[ky % size, kx] = complex(0.0, sign) if kind == "sin" else 1.0
    v = torch.fft.irfft2(spectrum, s=(size, size))
    return (v / v.norm()).to(torch.float32).unsqueeze(0)


def canonical(kx, ky, size=32):
    """The representative of {(kx, ky), (-kx, -ky)} (mod size, in the fftshift range) that `Grid.half` keeps."""
    half = size // 2
    wrap = lambda k: (k + half) % size - half
    other = (wrap(-kx), wrap(-ky))
    return max((kx, ky), other, key=lambda k: (k[1], k[0]))


@dataclass(frozen=True)
class Grid:
    """A square grid of frequencies: `freqs` along each axis, ascending (fftshift order)."""

    freqs: tuple
    size: int = 32

    def __post_init__(self):
        _check_size(self.size)
        for k in self.freqs:
            _check_frequency("freqs", k, self.size)
        if list(self.freqs) != sorted(set(self.freqs)):
            raise ValueError(f"freqs must be strictly increasing; got {self.freqs}")

    @property
    def shape(self):
        return (len(self.freqs), len(self.freqs))

    def cells(self):
        """All (kx, ky) of the grid in display order (row by row: ky, then kx)."""
        return [(kx, ky) for ky in self.freqs for kx in self.freqs]

    def half(self):
        """One (kx, ky) per pair {(kx, ky), (-kx, -ky)} present: enough to fill the grid by symmetry."""
        return sorted({canonical(kx, ky, self.size) for kx, ky in self.cells()}, key=lambda k: (k[1], k[0]))

    def image(self, values):
        """Place per-cell values (a dict {(kx, ky): value}, filled by symmetry) on the display image.

        Row i is `ky = freqs[i]` and column j is `kx = freqs[j]`; cells without a value are NaN.
        """
        img = np.full(self.shape, np.nan)
        for i, ky in enumerate(self.freqs):
            for j, kx in enumerate(self.freqs):
                value = values.get((kx, ky), values.get(canonical(kx, ky, self.size)))
                if value is not None:
                    img[i, j] = value
        return img

    def directions(self, cells=None, kind="sin"):
        """Stacked unit directions (N, 1, size, size) for `cells` (default: `half()`).

        At self-conjugate frequencies (zero frequency, the Nyquist corners) the sine vanishes,
        so those cells use the cosine pattern, the only real direction there.
        """
        cells = self.half() if cells is None else cells
        return torch.stack([
            fourier_direction(kx, ky, self.size, "cos" if is_self_conjugate(kx, ky, self.size) else kind)
            for kx, ky in cells
        ])


def coarse_grid(step=8, limit=None, size=32):
    """A cheap grid for CPU runs: every `step`-th frequency up to `limit`, symmetric around zero."""
    _check_size(size)
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 1 <= step < size // 2:
        raise ValueError(f"step must be an int in [1, {size // 2 - 1}]; got {step!r}")
    top = size // 2 - 1 if limit is None else limit
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not step <= top <= size // 2 - 1:
        raise ValueError(f"limit must be an int in [step, {size // 2 - 1}] or None; got {limit!r}")
    top = top // step * step
    return Grid(tuple(range(-top, top + 1, step)), size)


def paper_grid(size=32):
    """The published Fig. 1 grid: every second frequency of the whole spectrum, -16, -14, ..., 14
    on each axis (16x16 for 32x32 images), zero frequency at the centre."""
    return Grid(tuple(range(-(size // 2), size // 2, 2)), size)


def low_grid(size=32):
    """The 16x16 lowest frequencies -8..7 (what an earlier reading took the published grid for)."""
    return Grid(tuple(range(-8, 8)), size)


def full_grid(size=32):
    """The full spectrum: all size x size frequencies of the fftshift range."""
    return Grid(tuple(range(-(size // 2), (size + 1) // 2)), size)


GRIDS = {"coarse": coarse_grid, "paper": paper_grid, "low": low_grid, "full": full_grid}


def make_grid(spec):
    """A grid from a preset entry: `{"name": "coarse", "step": 4, "limit": 8}`, `{"name": "paper"}`, ..."""
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in GRIDS:
        raise ValueError(f"grid name must be one of {', '.join(GRIDS)}; got {name!r}")
    return GRIDS[name](**spec)


def spectrum_image(v):
    """|DFT| of an image (or of each channel summed), fftshifted, for showing where a direction lives."""
    v = torch.as_tensor(v, dtype=torch.float32)
    mag = torch.fft.fft2(v).abs()
    if mag.dim() == 3:
        mag = mag.pow(2).sum(0).sqrt()
    return torch.fft.fftshift(mag).numpy()


# --------------------------------------------------------------------------- the Figs. 1-3 experiment

def cell_seed(seed, kx, ky, size=32):
    """The seed of one (kx, ky) cell: its data, its network's initialisation and its shuffling
    depend only on the sweep's `seed` and the cell, so resumed and sharded sweeps agree."""
    return int(seed) * size * size + (ky % size) * size + (kx % size)


def train_directions(arch, cells, settings, pooling=True):
    """Train one fresh `arch` network on D(v) for each Fourier direction v of `cells`.

    `settings` holds `n` (train size; the test set is drawn independently with the same size),
    `sigma`, `eps`, `kind`, `size`, `seed`, `device` and the recipe `epochs`, `max_lr`,
    `momentum`, `weight_decay`, `batch_size` (numbers, or dicts by architecture) and `normalize`
    (default False: raw inputs, as the authors). The
    networks train together with `nadcore.train.fit_many`. Returns one dict of arrays per cell:
    `train_acc`, `test_acc` (percent) and `loss_history` (the loss of every SGD step).
    """
    from nadcore import data, models, train

    s, size = settings, settings.get("size", 32)
    pick = lambda key: s[key][arch] if isinstance(s[key], dict) else s[key]
    seeds = [cell_seed(s["seed"], kx, ky, size) for kx, ky in cells]
    vs = Grid(tuple(range(-(size // 2), (size + 1) // 2)), size).directions(cells, s.get("kind", "sin"))
    datasets, nets = [], []
    for v, cs in zip(vs, seeds):
        datasets.append(tuple(data.directional_dataset(v, s["n"], s["sigma"], s["eps"], seed=2 * cs + k,
                                                       device=s["device"]) for k in (0, 1)))
        torch.manual_seed(cs)
        nets.append(models.build(arch, pooling=pooling))
    out = train.fit_many(nets, datasets, epochs=pick("epochs"), max_lr=pick("max_lr"), momentum=pick("momentum"),
                         weight_decay=pick("weight_decay"), batch_size=s["batch_size"], device=s["device"], seeds=seeds,
                         normalize=s.get("normalize", False))
    return [{k: np.asarray(r[k]) for k in ("train_acc", "test_acc", "loss_history")} for r in out]


def sweep_directions(archs, grid, settings, results_dir, pooling=True, name="fourier", batch=32,
                     shard=0, num_shards=1, progress=True):
    """Figs. 1-3: train every architecture of `archs` on D(v) for each direction of `grid.half()`.

    A resumable, shardable `nadcore.sweeps.sweep` (one stored file per cell). `settings` as in
    `train_directions`. Returns `{arch: {(kx, ky): {"train_acc", "test_acc", "loss_history"}}}`
    for this shard's cells; `Grid.image` fills the other half of the grid by symmetry.
    """
    from nadcore import sweeps

    cells = sweep_cells(archs, grid, pooling)

    def compute(group):
        out = [None] * len(group)
        for arch in dict.fromkeys(c["arch"] for c in group):
            idx = [i for i, c in enumerate(group) if c["arch"] == arch]
            for i, r in zip(idx, train_directions(arch, [(group[i]["kx"], group[i]["ky"]) for i in idx],
                                                  settings, pooling)):
                out[i] = r
        return out

    results = sweeps.sweep(name, cells, compute, settings, results_dir, batch=batch, shard=shard,
                           num_shards=num_shards, progress=progress)
    table = {a: {} for a in archs}
    for c, r in zip(cells[shard::num_shards], results):
        table[c["arch"]][(c["kx"], c["ky"])] = dict(r.arrays)
    return table


def sweep_cells(archs, grid, pooling=True):
    """The cells of a Figs. 1-3 sweep: one per architecture and canonical frequency of `grid`."""
    return [{"arch": a, "pooling": pooling, "kx": kx, "ky": ky} for a in archs for kx, ky in grid.half()]


def stored_directions(archs, grid, settings, results_dir, pooling=True, name="fourier"):
    """The table of `sweep_directions` for the cells already stored (a results bundle); computes
    nothing. Returns `{arch: {(kx, ky): arrays}}` and the records `{arch: [record, ...]}`."""
    from nadcore import sweeps

    cells = sweep_cells(archs, grid, pooling)
    found = sweeps.stored(name, cells, settings, results_dir)
    table, records = {}, {}
    for i, r in found.items():
        c = cells[i]
        table.setdefault(c["arch"], {})[(c["kx"], c["ky"])] = dict(r.arrays)
        records.setdefault(c["arch"], []).append(r.record)
    return table, records


def sweep_settings(preset, seed, device, **overrides):
    """The settings `sweep_directions` stores with each cell, from a `presets.preset("fourier", ...)`."""
    keys = ("n", "sigma", "eps", "kind", "epochs", "max_lr", "momentum", "weight_decay", "batch_size")
    return {**{k: preset[k] for k in keys}, "normalize": preset.get("normalize", False), "size": 32,
            "seed": int(seed), "device": str(device), **overrides}


def per_cell(table, key="test_acc"):
    """`{arch: {(kx, ky): value}}` of one stored scalar (e.g. `test_acc`) of a `sweep_directions` table."""
    return {a: {c: float(r[key]) for c, r in cells.items()} for a, cells in table.items()}


def iterations_to_loss(table, threshold, window=1):
    """Fig. 2: `{arch: {(kx, ky): iterations}}` until the training loss falls below `threshold`."""
    from nadcore.train import iterations_to_loss as first_below

    return {a: {c: first_below(r["loss_history"], threshold, window) for c, r in cells.items()}
            for a, cells in table.items()}
