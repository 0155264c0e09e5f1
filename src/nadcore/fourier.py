"""2-D DFT directions and the grids of frequencies the sweeps run over; the 1-D directions of Sec. 2.

Convention: `kx` is the horizontal frequency (along image columns, the last axis) and `ky` the
vertical one (along rows), both in the fftshift range `-size // 2 <= k < size // 2`. The
display image of a grid puts zero frequency at the centre, `kx` to the right and `ky` down, as
`numpy.fft.fftshift` does. Since the sine of `-(kx, ky)` is minus the sine of `(kx, ky)`,
D(v) and D(-v) are the same task with the labels swapped: grids are symmetric under
`(kx, ky) -> (-kx, -ky)` and `canonical` picks one representative of each pair.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from nadcore import checks
from nadcore.checks import InputError
from nadcore.presets import GridSpec, as_dict

KINDS = ("sin", "cos")


def _check_frequency(name, k, size):
    lo, hi = -(size // 2), (size + 1) // 2 - 1
    checks.integer(name, k, lo, hi, accepted=f"an int in [{lo}, {hi}] (the fftshift range of a {size}x{size} image)")


def _check_size(size):
    checks.integer("size", size, 2, accepted="an int >= 2")
    checks.allocation("size", size, 16.0 * size * size, "its size x size spectrum")


def is_self_conjugate(kx: int, ky: int, size: int = 32) -> bool:
    """True where (kx, ky) equals (-kx, -ky) modulo `size`: there the sine direction is zero."""
    return (2 * kx) % size == 0 and (2 * ky) % size == 0


def fourier_direction(kx: int, ky: int, size: int = 32, kind: str = "sin") -> torch.Tensor:
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
        raise InputError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
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


def cells(grid: Grid | Iterable[Any] | None, size: int = 32) -> list[Any]:
    """The frequencies of `grid` as a list: a `Grid`'s cells (default `full_grid(size)`), or the ints l
    of 1-D signals of length `size` (0 <= l < size), or (kx, ky) pairs of ints in the fftshift range."""
    _check_size(size)
    grid = full_grid(size) if grid is None else grid
    if isinstance(grid, Grid):
        if grid.size != size:
            raise ValueError(f"grid.size must equal size={size}; got {grid.size}")
        return grid.cells()
    lo, hi = -(size // 2), (size + 1) // 2 - 1
    accepted = (f"grid must be a fourier.Grid, ints l in [0, {size}) or (kx, ky) pairs of ints in [{lo}, {hi}] (the "
                f"fftshift range of a {size}x{size} image)")
    try:
        out = [c if checks.is_integer(c) else tuple(c) for c in grid]
    except TypeError:   # a float, a bool or anything else that is neither an int nor a pair
        raise InputError(f"{accepted}; got {grid!r}") from None
    for c in out:
        if not isinstance(c, tuple):
            if not 0 <= c < size:
                raise ValueError(f"a 1-D frequency l must be an int in [0, {size}); got {c!r}")
        elif len(c) != 2 or not all(checks.is_integer(k) and lo <= k <= hi for k in c):
            raise InputError(f"{accepted}; got {c!r}")
    return out


def directions(grid: Grid | Iterable[Any] | None, size: int = 32, kind: str = "sin") -> torch.Tensor:
    """The unit Fourier directions at the frequencies of `grid` (`cells`), float64, all at once.

    (kx, ky) pairs: shape (N, size, size), the directions of `fourier_direction(kx, ky, size, kind)`,
    -sin(2 pi (kx n + ky m) / size) (or the cosine) over pixels (row m, column n), normalised; built
    from that formula rather than by `fourier_direction` (float32, and slow for 1024 cells).
    Ints l: shape (N, size), Sec. 2's v_l of 1-D signals, sin(2 pi l t / size) (or the cosine).
    Either way the cosine where the sine vanishes (`is_self_conjugate`), as `Grid.directions`.
    """
    if kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    cs = cells(grid, size)
    checks.allocation("grid", len(cs), 8.0 * len(cs) * size * size, "its float64 directions")
    if cs and not isinstance(cs[0], tuple):
        return torch.stack([_signal_direction(l, size, kind) for l in cs])
    k = torch.tensor(cs, dtype=torch.float64).reshape(-1, 2)
    t = torch.arange(size, dtype=torch.float64)
    phase = 2 * math.pi * (k[:, 0, None, None] * t[None, None, :] + k[:, 1, None, None] * t[None, :, None]) / size
    cosine = torch.tensor([kind == "cos" or is_self_conjugate(kx, ky, size) for kx, ky in cs])
    v = torch.where(cosine[:, None, None], torch.cos(phase), -torch.sin(phase))
    return v / v.flatten(1).norm(dim=1)[:, None, None]


def _signal_direction(l, size, kind):
    """Sec. 2's v_l in R^size: the sine (the cosine where it vanishes, or for kind "cos"), normalised."""
    t = torch.arange(size, dtype=torch.float64)
    cosine = kind == "cos" or is_self_conjugate(l, 0, size)
    v = (torch.cos if cosine else torch.sin)(2 * math.pi * l * t / size)
    return v / v.norm()


def canonical(kx: int, ky: int, size: int = 32) -> tuple[int, int]:
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
            raise InputError(f"freqs must be strictly increasing; got {self.freqs}")

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.freqs), len(self.freqs))

    def cells(self) -> list[tuple[int, int]]:
        """All (kx, ky) of the grid in display order (row by row: ky, then kx)."""
        return [(kx, ky) for ky in self.freqs for kx in self.freqs]

    def half(self) -> list[tuple[int, int]]:
        """One (kx, ky) per pair {(kx, ky), (-kx, -ky)} present: enough to fill the grid by symmetry."""
        return sorted({canonical(kx, ky, self.size) for kx, ky in self.cells()}, key=lambda k: (k[1], k[0]))

    def image(self, values: Mapping[tuple[int, int], float | None]) -> np.ndarray:
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

    def directions(self, cells: Iterable[tuple[int, int]] | None = None, kind: str = "sin") -> torch.Tensor:
        """Stacked unit directions (N, 1, size, size) for `cells` (default: `half()`).

        At self-conjugate frequencies (zero frequency, the Nyquist corners) the sine vanishes,
        so those cells use the cosine pattern, the only real direction there.
        """
        cells = self.half() if cells is None else cells
        return torch.stack([
            fourier_direction(kx, ky, self.size, "cos" if is_self_conjugate(kx, ky, self.size) else kind)
            for kx, ky in cells
        ])


def coarse_grid(step: int = 8, limit: int | None = None, size: int = 32) -> Grid:
    """A cheap grid for CPU runs: every `step`-th frequency up to `limit`, symmetric around zero."""
    _check_size(size)
    checks.integer("step", step, 1, size // 2 - 1, accepted=f"an int in [1, {size // 2 - 1}]")
    top = size // 2 - 1 if limit is None else limit
    if not (checks.is_integer(top) and step <= top <= size // 2 - 1):
        raise InputError(f"limit must be an int in [step, {size // 2 - 1}] or None; got {limit!r}")
    top = top // step * step
    return Grid(tuple(range(-top, top + 1, step)), size)


def paper_grid(size: int = 32) -> Grid:
    """The published Fig. 1 grid: every second frequency of the whole spectrum, -16, -14, ..., 14
    on each axis (16x16 for 32x32 images), zero frequency at the centre."""
    return Grid(tuple(range(-(size // 2), size // 2, 2)), size)


def low_grid(size: int = 32) -> Grid:
    """The 16x16 lowest frequencies -8..7 (what an earlier reading took the published grid for)."""
    return Grid(tuple(range(-8, 8)), size)


def full_grid(size: int = 32) -> Grid:
    """The full spectrum: all size x size frequencies of the fftshift range."""
    return Grid(tuple(range(-(size // 2), (size + 1) // 2)), size)


GRIDS = {"coarse": coarse_grid, "paper": paper_grid, "low": low_grid, "full": full_grid}


def make_grid(spec: GridSpec | Mapping[str, Any]) -> Grid:
    """A grid from a preset's `GridSpec` or its dict: `{"name": "coarse", "step": 4, "limit": 8}`,
    `{"name": "paper"}`, ..."""
    if isinstance(spec, GridSpec):
        spec = as_dict(spec)
    if not isinstance(spec, Mapping):
        raise InputError(f"spec must be a GridSpec or a dict such as {{'name': 'coarse', 'step': 4}}; got {spec!r}")
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in GRIDS:
        raise ValueError(f"grid name must be one of {', '.join(GRIDS)}; got {name!r}")
    import inspect

    taken = set(inspect.signature(GRIDS[name]).parameters)
    if set(spec) - taken:
        raise InputError(f"spec must give the {name} grid only {', '.join(sorted(taken)) or 'nothing more'}; got "
                         f"{', '.join(sorted(set(spec) - taken))}")
    return GRIDS[name](**spec)


def seed_mean_grid(grids: Sequence[Mapping[tuple[int, int], float]]) -> dict[tuple[int, int], float]:
    """`{cell: mean accuracy}` over the seeds' grids `[{cell: accuracy}, ...]` (the first grid's cells)."""
    return {c: float(np.mean([g[c] for g in grids])) for c in grids[0]}


def fourier_energy(nads_images: ArrayLike) -> np.ndarray:
    """|2-D DFT|^2 (unitary) of each image of `nads_images` (n, C, H, W), (n, H, W) or one (H, W), fftshifted (zero
    frequency at the centre), summed over channels: where a NAD or a direction lives."""
    x = torch.as_tensor(np.asarray(nads_images), dtype=torch.float64)
    if x.dim() not in (2, 3, 4) or x.numel() == 0:
        raise InputError(f"nads_images must be images (n, C, H, W), (n, H, W) or one (H, W); got shape "
                         f"{tuple(x.shape)}")
    energy = torch.fft.fftshift(torch.fft.fft2(x, norm="ortho").abs() ** 2, dim=(-2, -1))
    return energy.sum(-3).numpy() if energy.dim() == 4 else energy.numpy()


def low_band(size: int = 32, band: int = 4) -> np.ndarray:
    """Mask (size, size), fftshifted as `fourier_energy`: the frequencies with max(|kx|, |ky|) <= `band`."""
    checks.integer("size", size, 1, 4096)
    checks.integer("band", band, 0, accepted="an integer >= 0 (the largest |frequency| on either axis)")
    k = np.abs(np.arange(size) - size // 2)        # |frequency| along each fftshifted axis
    return np.maximum.outer(k, k) <= band
