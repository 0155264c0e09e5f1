"""Chapter 7: the NADs of architectures after 2020 and how isotropic they are.

The Vision Transformer, MLP-Mixer and ConvNeXt of `nadcore.zoo` and ResNet-18 with BlurPool go
through Chapter 3's estimate (`nads.estimate`) and N vs 2N convergence, beside the book's
references (the MLP, LeNet, VGG-11, ResNet-18). `isotropy` measures an estimate: the effective rank
of its spectrum, the share of the variance in its first k NADs, and where the leading NADs'
Fourier energy lies (`energy_share`): at the low frequencies (`fourier.low_band`) or on the
harmonics of a patch grid (`harmonics`: a pattern repeated every `period` pixels lives on period^2
frequencies only). `isotropic_reference` gives the same measures for gradients with an isotropic
covariance, from as many networks. Fig. 6 (`fig6`) trains each of `fig6_archs` on D(u_i) along its
own secant NADs, at a stated cheaper recipe with LeNet at the same recipe as the reference.
ConvNeXt's exact-gradient spectrum ends at rank 960: `null_directions` is its null space in closed form
(x0 on each 4x4 stem patch), `null_overlap` compares it with an estimate's, `null_ablation` finds the layers
behind it on single networks, and `null_fig6` trains ConvNeXt along it (Fig. 6, with same-patch controls).

The presets (`presets.preset("zoo", scale)`) name the architectures, the estimator, N and the
convergence sizes; at the published scale their files are the results bundle's (`bundle.ZOO_ARCHS`).
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch

from nadcore import checks, findings, nads, presets, seeds, stacked, store
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.experiments import ch3_nads
from nadcore.fourier import fourier_energy, low_band

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from numpy.typing import ArrayLike

    from nadcore.nads.result import NADResult

PERIODS = (4, 8)   # the 4x4 patches of the ViT, the Mixer and ConvNeXt's stem; ResNet-18's stride of 8
LOW_BAND = 4       # max(|kx|, |ky|) <= 4, as Chapter 3's low-frequency share


def effective_rank(eigenvalues: ArrayLike) -> float:
    """exp of the entropy of the normalised spectrum (Roy & Vetterli 2007): D for an isotropic
    covariance of D directions, k for k equal eigenvalues and zeros elsewhere."""
    p = np.clip(np.asarray(eigenvalues, dtype=np.float64), 0, None)
    p = p[p > 0] / p.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def anisotropy_table(stored: Mapping[tuple[str, str], nads.NADResult]) -> dict[str, dict[str, tuple[float, int]]]:
    """One anisotropy measure for every network the book holds NADs of (`bundle.stored_nads`, `{(arch, method):
    NADResult}`): `{arch: {method: (effective rank, networks)}}`, "secant" and "autograd" (the exact gradient) side
    by side, in the order of `stored`. The effective rank depends on the estimator and, for a flat spectrum, on the
    number of networks (at most N - 1): compare within one column."""
    out: dict[str, dict[str, tuple[float, int]]] = {}
    for (arch, method), r in stored.items():
        out.setdefault(arch, {})[method] = (effective_rank(r.eigenvalues), r.num_networks)
    return out


def top_share(eigenvalues: ArrayLike, k: int) -> float:
    """Share of the variance in the first `k` NADs: k / D for an isotropic covariance."""
    lam = np.clip(np.asarray(eigenvalues, dtype=np.float64), 0, None)
    return float(lam[:k].sum() / lam.sum())


def harmonics(period: int, size: int = 32) -> np.ndarray:
    """Mask (size, size), fftshifted as `fourier_energy`: the frequencies of a pattern repeated every
    `period` pixels along both axes, the multiples of size / period (period^2 frequencies)."""
    if period < 1 or size % period:
        raise InputError(f"period must divide the image size {size}; got {period!r}")
    on = (np.arange(size) - size // 2) % (size // period) == 0
    return np.outer(on, on)


def energy_share(images: ArrayLike, mask: np.ndarray) -> np.ndarray:
    """Share of the Fourier energy of each image of `images` ((n, C, H, W) or (n, H, W)) on `mask`:
    mask.mean() on average for images with isotropic (white) covariance."""
    e = fourier_energy(images)
    return e[:, mask].sum(-1) / e.sum((-2, -1))


class Isotropy(NamedTuple):
    """How isotropic a NAD estimate is (`isotropy`): its `effective_rank` (of D = 1,024), the share of the
    variance in its first k NADs (`top`), and the mean over those NADs of the share of their Fourier energy at
    the low frequencies (`low`, `fourier.low_band`) and on the harmonics of a 4- and an 8-pixel grid
    (`harmonic4`, `harmonic8`)."""
    effective_rank: float
    top: float
    low: float
    harmonic4: float
    harmonic8: float


def _measures(eigenvalues, images, k) -> Isotropy:
    size = images.shape[-1]
    share = lambda mask: float(energy_share(images, mask).mean())   # noqa: E731
    harmonic4, harmonic8 = (share(harmonics(p, size)) for p in PERIODS)
    return Isotropy(effective_rank(eigenvalues), top_share(eigenvalues, k), share(low_band(size, LOW_BAND)),
                    harmonic4, harmonic8)


def isotropy(result: nads.NADResult, k: int = 16) -> Isotropy:
    """How isotropic a NAD estimate (`NADResult`) is, over its first `k` NADs (`Isotropy`). Compare with
    `isotropic_reference`."""
    images = np.asarray(result.images(k), dtype=np.float64)
    return _measures(result.eigenvalues, images, k)


def isotropic_reference(num_networks: int, k: int = 16, input_shape: Sequence[int] = (1, 32, 32),
                        seed: int = 0) -> tuple[Isotropy, np.ndarray]:
    """`isotropy`'s measures for `num_networks` gradients with an isotropic (white) covariance, and
    the spectrum of their sample covariance: `(measures, eigenvalues)`. That spectrum is not flat
    (Marchenko-Pastur), so its effective rank is below D, and its leading eigenvectors are random."""
    D = int(np.prod(input_shape))
    G = np.random.default_rng(seed).standard_normal((num_networks, D))
    G -= G.mean(0)
    lam, vec = np.linalg.eigh(G.T @ G / max(num_networks - 1, 1))
    lam, vec = np.ascontiguousarray(lam[::-1]), np.ascontiguousarray(vec[:, ::-1])
    return _measures(lam, vec[:, :k].T.reshape(k, *input_shape), k), lam


def eval_point(result: nads.NADResult) -> np.ndarray:
    """The evaluation point x0 of a stored estimate (`nads.eval_point_for` of its settings' seed), as an
    array of its input shape."""
    s = result.settings
    if s.get("eval_point") != f"randn(seed={s['seed']})":
        raise InputError(f"eval_point must be the seed's randn(seed={s['seed']}) to be recovered; got "
                         f"{s.get('eval_point')!r}")
    return nads.eval_point_for(s["seed"], s["input_shape"]).numpy().astype(np.float64)


def patch_reading(result: nads.NADResult, patch: int = 4, count: int = 3) -> dict[str, Any]:
    """How an estimate sits on the `patch` x `patch` tiles of its evaluation point x0 (`eval_point`), the
    tiles a patchify stem reads. A LayerNorm right after a stem without bias (ConvNeXt's at
    initialisation) does not change when a tile of the input is scaled, so every gradient is orthogonal to
    x0 restricted to each tile, and it grows as 1 / |x0 on the tile|. Returns `rank` (`ch3_nads.numerical_rank`),
    `tiles` (their number), `null` (mean over the tiles of the share of x0 on a tile, normalised, past the
    rank: 1 when every gradient is orthogonal to each, 0 for a full spectrum), and for j < `count`:
    `peak{j}` (the largest share of u_j's energy on one tile), `tile{j}` (its (row, column)) and
    `norm{j}` (the norm of x0 on that tile over the median tile's)."""
    x0 = eval_point(result)
    P = null_directions(x0, patch)
    size = x0.shape[-1]
    g = size // patch
    tiled = lambda a: a.reshape(-1, g, patch, g, patch)       # (C, rows, patch, columns, patch)
    rank = ch3_nads.numerical_rank(result.eigenvalues)
    U = np.asarray(result.nads, dtype=np.float64)
    null = 1.0 - np.sum((P @ U[:rank].T) ** 2, axis=1)         # the share past the rank (U is orthonormal)
    norms = np.sqrt((tiled(x0) ** 2).sum((0, 2, 4)))
    out = {"rank": rank, "tiles": g * g, "null": float(np.clip(np.mean(null), 0, 1))}   # float16 NADs: +-1e-6
    for j, u in enumerate(result.images(count)):
        energy = (tiled(np.asarray(u, dtype=np.float64)) ** 2).sum((0, 2, 4))
        at = np.unravel_index(int(energy.argmax()), energy.shape)
        out.update({f"peak{j}": float(energy[at] / energy.sum()), f"tile{j}": tuple(int(i) for i in at),
                    f"norm{j}": float(norms[at] / np.median(norms))})
    return out


def null_directions(x0: ArrayLike, patch: int = 4) -> np.ndarray:
    """The closed form of ConvNeXt's null space at x0: x0 restricted to each `patch` x `patch` tile (the
    tiles its stem reads), normalised, as rows (tiles, D) in row-major tile order; orthonormal, disjoint
    supports. A patchify stem without bias followed by a LayerNorm makes every network constant along each."""
    x0 = np.asarray(x0, dtype=np.float64)
    size = x0.shape[-1]
    if x0.ndim not in (2, 3) or x0.shape[-2] != size:
        raise InputError(f"x0 must be a square image (H, W) or (C, H, W); got shape {x0.shape}")
    if not (checks.is_integer(patch) and patch >= 1 and size % patch == 0):
        raise InputError(f"patch must divide the image size {size}; got {patch!r}")
    g = size // patch
    masks = np.kron(np.eye(g * g).reshape(g * g, g, g), np.ones((patch, patch)))      # (tiles, size, size)
    P = (masks[:, None] * x0.reshape(-1, size, size)[None]).reshape(g * g, -1)
    norms = np.linalg.norm(P, axis=1, keepdims=True)
    if not np.all(norms > 0):
        raise InputError("x0 must be nonzero on every tile; got a tile of zeros")
    return P / norms


def null_overlap(result: nads.NADResult, patch: int = 4) -> dict[str, float]:
    """How much of an estimate's null space (its NADs past `ch3_nads.numerical_rank`) the closed form
    `null_directions` of its evaluation point spans. Returns `rank`, `null` (D - rank), `tiles`, and the
    squared cosines of the principal angles between the two subspaces: `overlap` (their mean over the
    tiles, `nads.subspace_overlap`'s measure: 1 when every tile's direction lies in the null space, about
    null / D for random directions) and `worst` (the smallest)."""
    P = null_directions(eval_point(result), patch)
    rank = ch3_nads.numerical_rank(result.eigenvalues)
    U = np.asarray(result.nads, dtype=np.float64)[rank:]
    out = {"rank": rank, "null": len(result.eigenvalues) - rank, "tiles": len(P)}
    if not len(U):
        return {**out, "overlap": 0.0, "worst": 0.0}
    Q = np.linalg.qr(U.T)[0]                 # stored NADs may be float16: orthonormalise the null block
    cos2 = np.clip(np.linalg.svd(P @ Q, compute_uv=False) ** 2, 0, 1)
    cos2 = np.concatenate([cos2, np.zeros(len(P) - len(cos2))])        # a null space smaller than the tiles
    return {**out, "overlap": float(cos2.mean()), "worst": float(cos2.min())}


def gradient_cosines(nets: Iterable[torch.nn.Module], x0: ArrayLike, patch: int = 4) -> np.ndarray:
    """|cos| between each network's input gradient at `x0` (`nads.autograd_one`, the exact-gradient estimate's
    pass for ConvNeXt on the CPU; one output each) and each tile's null direction (`null_directions`), the
    gradient restricted to that tile: (networks, tiles). About 1e-7 (float32 rounding) where the network is
    constant along the tile's x0."""
    x = torch.as_tensor(np.asarray(x0, dtype=np.float32))
    G = torch.stack([nads.autograd_one(net, x) for net in nets]).double().numpy()       # (networks, D)
    P = null_directions(x.numpy(), patch)
    on = P != 0                                                                       # each tile's support
    tile_norm = np.sqrt((G[:, None, :] ** 2 * on[None]).sum(-1))                      # |g on the tile|
    return np.abs(G @ P.T) / np.maximum(tile_norm, np.finfo(np.float64).tiny)


def _stem_bias(net, gen):
    net.stem[0].bias.copy_(0.02 * torch.randn(net.stem[0].bias.shape, generator=gen))


# ConvNeXt with one change each, to find the layer behind its null space (`null_ablation`): "bias", a stem
# bias drawn as its weights (std 0.02) in place of timm's zeros; "stem LN" and "stage LN" remove the stem's
# LayerNorm and the one before stage 1's 2x2 downsampling (stage 0's blocks between them are the identity
# to 1e-6 at initialisation: layer scale); "both LN" removes the two.
ABLATIONS = {
    "as built": lambda net, gen: None,
    "bias": _stem_bias,
    "stem LN": lambda net, gen: net.stem.__setitem__(1, torch.nn.Identity()),
    "stage LN": lambda net, gen: net.stages[1].downsample.__setitem__(0, torch.nn.Identity()),
    "both LN": lambda net, gen: (net.stem.__setitem__(1, torch.nn.Identity()),
                                 net.stages[1].downsample.__setitem__(0, torch.nn.Identity())),
}


def null_ablation(networks: int = 3, seed: int = 0, patch: int = 4,
                  variants: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """`{variant: (networks, tiles) gradient_cosines}` of ConvNeXt networks 0 .. `networks` - 1 (`nads.network`,
    the estimate's seeds) at their evaluation point, as built and changed as `ABLATIONS[variant]` says
    (default all; on the CPU). `patch` = 8 reads the 8x8 blocks of stage 1's downsampling instead."""
    names = list(ABLATIONS) if variants is None else list(variants)
    unknown = [v for v in names if v not in ABLATIONS]
    if unknown:
        raise InputError(f"variants must be among {', '.join(ABLATIONS)}; got {unknown[0]!r}")
    checks.integer("networks", networks, 1)
    x0 = nads.eval_point_for(seed, (1, 32, 32))
    factory = nads.one_output_factory("convnext")[0]
    base = [nads.network(factory, seed, i, torch.device("cpu")) for i in range(networks)]
    out = {}
    for name in names:
        gen = torch.Generator().manual_seed(int(seed))
        nets = [copy.deepcopy(n) for n in base]
        with torch.no_grad():
            for net in nets:
                ABLATIONS[name](net, gen)
        out[name] = gradient_cosines(nets, x0.numpy(), patch)
    return out


def null_tiles(x0: ArrayLike, patch: int = 4) -> list[tuple[int, ...]]:
    """Three tiles (row, column) of `x0` for Fig. 6 along the null directions: where x0 is weakest (ConvNeXt's
    u_1 sits there), the median and the strongest, by the norm of x0 on the tile."""
    x0 = np.asarray(x0, dtype=np.float64)
    g = x0.shape[-1] // patch
    norms = np.sqrt((x0.reshape(-1, g, patch, g, patch) ** 2).sum((0, 2, 4))).ravel()
    order = np.argsort(norms, kind="stable")
    return [tuple(int(i) for i in divmod(int(order[j]), g)) for j in (0, len(order) // 2, len(order) - 1)]


def null_basis(x0: ArrayLike, tiles: Iterable[Sequence[int]], patch: int = 4, seed: int = 0) -> np.ndarray:
    """Fig. 6's directions along ConvNeXt's null space, as rows (2 x len(tiles), D): for each tile (row,
    column) of `tiles`, its null direction (`null_directions`), then a control on the same tile: a unit
    direction orthogonal to x0 there (Gaussian, drawn from `seed`), which every network sees at x0."""
    P = null_directions(x0, patch)
    g = np.asarray(x0).shape[-1] // patch
    rng = np.random.default_rng(seed)
    rows = []
    for t in tiles:
        r, c = (int(i) for i in t)
        if not (0 <= r < g and 0 <= c < g):
            raise InputError(f"tiles must be (row, column) pairs in [0, {g}); got {tuple(t)!r}")
        u = P[r * g + c]
        v = rng.standard_normal(u.shape) * (u != 0)
        v -= (v @ u) * u
        rows += [u, v / np.linalg.norm(v)]
    return np.stack(rows)


NULL_FIG6_REPLICATES = 3   # seeds of Fig. 6 along the null directions (`null_fig6`)


class NullFig6(NamedTuple):
    """Fig. 6 along ConvNeXt's null directions (`null_fig6`): the `tiles` (row, column), the `seeds` of its
    replicates, and the test accuracies (%) along each tile's null direction (`null`) and its control (`control`),
    (replicates, tiles), NaN where not stored."""
    tiles: list[tuple[int, ...]]
    seeds: list[int]
    null: np.ndarray
    control: np.ndarray


class Cells(NamedTuple):
    """The stored cells of one kind of `NullFig6` (`stored_cells`): their `mean` and standard deviation `sd` (%; 0 for
    one cell) and their number, `cells`."""
    mean: float
    sd: float
    cells: int


def stored_cells(acc: ArrayLike) -> Cells:
    """The `Cells` of the accuracies `acc` that are stored (finite); mean NaN when none is."""
    done = np.asarray(acc, dtype=np.float64)
    done = done[np.isfinite(done)]
    if not done.size:
        return Cells(float("nan"), 0.0, 0)
    return Cells(float(done.mean()), float(done.std(ddof=1)) if done.size > 1 else 0.0, int(done.size))


def null_gap(along: NullFig6) -> float | None:
    """The largest |mean over seeds of null - control| on one tile, None before a tile holds both."""
    diff = np.asarray(along.null, dtype=np.float64) - np.asarray(along.control, dtype=np.float64)
    gaps = [abs(d[np.isfinite(d)].mean()) for d in diff.T if np.isfinite(d).any()]     # by tile
    return float(max(gaps)) if gaps else None


def null_fig6(result: nads.NADResult, cfg: presets.Zoo, results_dir: str | Path,
              replicates: int = NULL_FIG6_REPLICATES, seed: int = 0, tiles: Iterable[Sequence[int]] | None = None,
              device: str | torch.device = "cpu", compute: bool = True, progress: bool = False) -> NullFig6:
    """Fig. 6 along ConvNeXt's null directions (`NullFig6`): ConvNeXt trained on D(u) for u each tile's null
    direction and its control (`null_basis` of the evaluation point of `result`, the stored exact-gradient NADs;
    `tiles` default `null_tiles`) at `cfg`'s Fig. 6 recipe (`fig6_recipe`), with the seeds of `replicates` replicates
    of `seed` (`seeds.replicate`), stored cell by cell in `results_dir/nads/fig6_convnext/` (a stopped run
    resumes; with `compute=False` only what is stored)."""
    checks.integer("replicates", replicates, 1)
    x0 = eval_point(result)
    tiles = [tuple(int(i) for i in t) for t in (null_tiles(x0) if tiles is None else tiles)]
    rows = null_basis(x0, tiles).astype(np.float32)
    run_seeds = [seeds.replicate(seed, r) for r in range(replicates)]
    batch = stacked.registry_chunk_size("convnext", True, 128, resolve(device)) if compute else len(rows)
    acc = np.full((replicates, len(rows)), np.nan)
    for j, s in enumerate(run_seeds):
        found = ch3_nads.fig6_sweep("convnext", rows, range(len(rows)), fig6_recipe("convnext", cfg, s),
                                    Path(results_dir) / "nads", device=device, progress=progress,
                                    only_stored=not compute, batch=batch)
        for i, a in found.items():
            acc[j, i] = a
    return NullFig6(tiles, run_seeds, acc[:, 0::2], acc[:, 1::2])


def null_numbers(overlap: Mapping[str, float], ablation: Mapping[str, ArrayLike] | None = None,
                 fig6: NullFig6 | None = None) -> dict[str, float]:
    """The null-space numbers by name, unrounded, for the prose: `null_{key}` of `null_overlap`'s reading,
    `null_cos_{variant}` the largest |cosine| of `null_ablation`'s (variant with "_" for spaces), and from
    `null_fig6` (stored cells only) `null_fig6_{null,control}` (mean over tiles and seeds, %), `..._sd` (their
    standard deviation over the cells), `null_fig6_cells` (cells of each) and `null_fig6_gap` (the largest
    |mean over seeds of null - control| on one tile)."""
    out = {f"null_{k}": v for k, v in overlap.items()}
    for variant, cos in (ablation or {}).items():
        out[f"null_cos_{variant.replace(' ', '_')}"] = float(np.max(cos))
    if fig6 is None:
        return out
    for kind, acc in (("null", fig6.null), ("control", fig6.control)):
        if (c := stored_cells(acc)).cells:
            out.update({f"null_fig6_{kind}": c.mean, f"null_fig6_{kind}_sd": c.sd, f"null_fig6_{kind}_cells": c.cells})
    if (gap := null_gap(fig6)) is not None:
        out.update(null_fig6_gap=gap)
    return out


def estimate_settings(arch: str, cfg: presets.Zoo, seed: int, method: str | None = None) -> nads.EstimateSettings:
    """How the chapter estimates the NADs of `arch`: `cfg.method` from `cfg.num_networks` networks, or the secant
    from `cfg.secant_networks` in `cfg.secant_precision` (compiled if `cfg.secant_compiled`)."""
    if (method or cfg.method) == "secant" and cfg.method != "secant":
        return nads.EstimateSettings("secant", seed=seed, precision=cfg.secant_precision, compiled=cfg.secant_compiled,
                                     eig_threads=cfg.eig_threads, num_networks=cfg.secant_networks)
    return nads.EstimateSettings(cfg.method, seed=seed, eig_threads=cfg.eig_threads, num_networks=cfg.num_networks)


def nad_settings(arch: str, cfg: presets.Zoo, seed: int, method: str | None = None) -> dict[str, Any]:
    """The settings record of the stored NADs of `arch` (`estimate_settings`', as the store keys them)."""
    return estimate_settings(arch, cfg, seed, method).result_settings(arch)


def nad_estimate(arch: str, cfg: presets.Zoo, seed: int, results_dir: str | Path,
                 device: str | torch.device = "cpu", compute: bool = True, progress: bool = True,
                 scratch: str | Path | None = None, compact: bool = False,
                 method: str | None = None) -> nads.NADResult | None:
    """The NADs of `arch` (`estimate_settings`) stored in `results_dir/nads/` (float16 when `compact`),
    chunks in `scratch/nad_chunks/` (default `results_dir`); None if not stored and not `compute`.
    Always the stored copy, as readers see it."""
    return nads.load_or_estimate(arch, estimate_settings(arch, cfg, seed, method), results_dir, compute=compute,
                                 chunks_dir=scratch, compact=compact, device=device, progress=progress)


def secant_archs(cfg: presets.Zoo) -> list[str]:
    """The architectures whose secant the chapter estimates, Fig. 6's first (its reference leads), then
    the new ones without Fig. 6."""
    return list(dict.fromkeys(cfg.fig6_archs + cfg.archs)) if cfg.secant_networks else []


def fig6_recipe(arch: str, cfg: presets.Zoo, seed: int) -> dict[str, Any]:
    """The Fig. 6 settings of `arch` (`ch3_nads.fig6_sweep`): `cfg.fig6` with its learning rate for
    `arch` (by architecture, else "default") and `seed`."""
    if cfg.fig6 is None:
        raise InputError("cfg.fig6 must give Fig. 6's recipe; got None")
    lr = cfg.fig6.max_lr
    return {**presets.as_dict(cfg.fig6), "max_lr": float(lr.get(arch, lr["default"]) if isinstance(lr, dict) else lr),
            "seed": int(seed)}


def fig6(arch: str, basis: nads.NADResult | np.ndarray, cfg: presets.Zoo, seed: int, results_dir: str | Path,
         device: str | torch.device = "cpu", compute: bool = True, progress: bool = False) -> dict[int, float]:
    """`{index: test accuracy}` of `arch` trained on D(u_i) for `cfg.fig6_indices`, u_i the NADs of
    `basis`, stored in `results_dir/nads/` (with `compute=False` only those already stored)."""
    dev = resolve(device)
    return ch3_nads.fig6_sweep(arch, basis, cfg.fig6_indices, fig6_recipe(arch, cfg, seed),
                               Path(results_dir) / "nads", device=dev, progress=progress, only_stored=not compute,
                               batch=stacked.registry_chunk_size(arch, True, 128, dev))


def convergence_settings(arch: str, cfg: presets.Zoo, seed: int,
                         device: str | torch.device = "cpu") -> dict[str, Any]:
    """The settings of the N vs 2N convergence of `arch` (those of `bundle.convergence_item`)."""
    return nads.with_eig_threads({"arch": arch, "method": cfg.method, "sizes": list(cfg.conv_sizes),
                                  "ks": list(cfg.conv_ks), "seed": int(seed), "device": resolve(device).type},
                                 cfg.eig_threads)


def nad_convergence(arch: str, cfg: presets.Zoo, seed: int, results_dir: str | Path,
                    device: str | torch.device = "cpu", compute: bool = True, progress: bool = False,
                    scratch: str | Path | None = None) -> dict[str, np.ndarray] | None:
    """`nads.convergence` of `arch` stored in `results_dir/nads/` (None if not stored and not
    `compute`); with 3N <= the estimate's N its chunks (in `scratch`, default `results_dir`) are the
    estimate's, so after `nad_estimate` it costs a merge."""
    settings = convergence_settings(arch, cfg, seed, device)
    path = Path(results_dir) / "nads" / f"convergence_{store.key(settings)}.npz"
    if not compute:
        return store.load(path, settings).arrays if store.matches(path, settings) else None
    s = nads.EstimateSettings(method=cfg.method, seed=seed, eig_threads=cfg.eig_threads)
    return store.cached(path, settings, lambda: nads.convergence(
        arch, s, cfg.conv_sizes, cfg.conv_ks, device=device, results_dir=scratch or results_dir,
        progress=progress), device=device).arrays


@dataclass
class ZooResults:
    """Everything Chapter 7 shows (`chapter_results`): the new architectures `archs` and the `references`;
    `nads` {arch: NADResult | None} (both); `secant` {arch: NADResult | None} (`secant_archs`); `fig6`
    {arch: {index: accuracy}} (on the secant NADs, `fig6_archs`; empty where not stored); `convergence`
    {arch: arrays | None}; `isotropy` {arch: `isotropy` | None}; `isotropic` and `isotropic_spectrum`
    (`isotropic_reference` at the same N); the preset `settings`."""
    archs: list[str]
    references: list[str]
    settings: presets.Zoo
    nads: dict[str, NADResult | None] = field(default_factory=dict)
    secant: dict[str, NADResult | None] = field(default_factory=dict)
    fig6: dict[str, dict[int, float]] = field(default_factory=dict)
    convergence: dict[str, Any] = field(default_factory=dict)
    isotropy: dict[str, Isotropy | None] = field(default_factory=dict)
    isotropic: Any = None
    isotropic_spectrum: Any = None

    def stored(self) -> dict[str, NADResult]:
        """`{arch: NADResult}` of the architectures with stored NADs: references first, then the new ones."""
        return {a: r for a in self.references + self.archs if (r := self.nads.get(a)) is not None}


def chapter_results(scale: str, seed: int = 0, results_dir: str | Path = "../results",
                    device: str | torch.device = "cpu", compute: bool = True, progress: bool = True,
                    scratch: str | Path | None = None, compact: bool = False, secant: bool = True) -> ZooResults:
    """Everything the chapter shows at `scale` (`ZooResults`). With `compute=False` nothing is computed
    and what is missing is None (the results bundle's read-only path); `secant=False` leaves the secant
    estimates and Fig. 6 out of the computation (they are read when stored)."""
    cfg = presets.preset("zoo", scale)
    dev = resolve(device)
    results_dir = Path(results_dir)
    out = ZooResults(archs=list(cfg.archs), references=list(cfg.references), settings=cfg)
    for arch in out.references + out.archs:
        basis = nad_estimate(arch, cfg, seed, results_dir, dev, compute, progress, scratch, compact)
        out.nads[arch] = basis
        out.convergence[arch] = None if basis is None else nad_convergence(
            arch, cfg, seed, results_dir, dev, compute, scratch=scratch)
        out.isotropy[arch] = None if basis is None else isotropy(basis, cfg.top)
    for arch in secant_archs(cfg):   # each network's Fig. 6 right after its secant: a stopped run keeps both
        basis = out.secant[arch] = nad_estimate(arch, cfg, seed, results_dir, dev, compute and secant, progress,
                                                scratch, compact, method="secant")
        if arch in cfg.fig6_archs:
            out.fig6[arch] = {} if basis is None else fig6(arch, basis, cfg, seed, results_dir, dev,
                                                          compute and secant, progress)
    out.isotropic, out.isotropic_spectrum = isotropic_reference(cfg.num_networks, cfg.top, seed=seed)
    return out


def secant_agreement(results: ZooResults, ks: Iterable[int] | None = None) -> dict[str, np.ndarray]:
    """`{arch: overlaps}` of the secant and the exact-gradient NADs of each new architecture with both
    stored, at `ks` (default the convergence's)."""
    ks = list(ks or results.settings.conv_ks)
    stored = results.stored()
    return {a: nads.subspace_overlaps(s.nads, stored[a].nads, ks) for a, s in results.secant.items()
            if s is not None and a in stored}


def secant_isotropy(results: ZooResults) -> dict[str, Isotropy]:
    """`{arch: isotropy}` of each stored secant estimate, and `"isotropic"`: as many isotropic
    gradients as the secant's networks (a smaller sample has a lower effective rank)."""
    out = {a: isotropy(s, results.settings.top) for a, s in results.secant.items()
           if s is not None and a in results.archs}
    if out:
        n = next(s for s in results.secant.values() if s is not None).num_networks
        out["isotropic"] = isotropic_reference(n, results.settings.top)[0]
    return out


def _count(estimates):
    """The one number of networks of `estimates` (NADResults or None), else None."""
    counts = {r.num_networks for r in estimates if r is not None}
    return counts.pop() if len(counts) == 1 else None


def key_numbers(results: ZooResults) -> dict[str, float]:
    """The chapter's numbers by name, unrounded, for the prose (myst-nb `glue`): `{arch}_{measure}` of
    every `isotropy`, `isotropic_{measure}`, `{arch}_lam{top - 1}` and `{arch}_lam{top}` (lambda_i /
    lambda_0 at the edge of the first `top` NADs u_0 .. u_{top - 1}, indices from 0), `{arch}_rank` (the
    numerical rank of the estimate, `ch3_nads.numerical_rank`; `{arch}_null` the directions past it, D - rank;
    `{arch}_edge` lambda_{rank - 1} / lambda_0, the last eigenvalue inside the rank, and `{arch}_past`
    lambda_rank / lambda_0, the first past it, when the rank is below D; `isotropic_edge` lambda_{D - 1} /
    lambda_0 of as many isotropic gradients), `{arch}_networks` and
    `{arch}_secant_networks` (N of the stored estimates' settings; `networks` and `secant_networks`
    when all share one), `{arch}_conv{k}` (N vs 2N overlap of the leading k NADs at the largest N),
    `{arch}_secant{k}` (secant against exact gradient) and `{arch}_secant_{measure}` (`secant_isotropy`,
    `isotropic_secant_{measure}` its reference) and `{arch}_fig6_{index}` (Fig. 6's test accuracy, %)."""
    r = readings(results)
    out = {**{f"isotropic_{m}": v for m, v in r.isotropic._asdict().items()}, "isotropic_edge": r.isotropic_edge}
    k = results.settings.top
    for key, estimates in (("networks", results.nads), ("secant_networks", results.secant)):
        out.update({(f"{a}_{key}"): r.num_networks for a, r in estimates.items() if r is not None})
        if _count(estimates.values()) is not None:
            out[key] = _count(estimates.values())
    for arch, iso in results.isotropy.items():
        if iso is not None:      # lambda_{k-1} / lambda_0 and lambda_k / lambda_0: the edge of u_0 .. u_{k-1}
            out.update({f"{arch}_{m}": v for m, v in iso._asdict().items()})
            lam = np.asarray(results.stored()[arch].eigenvalues, dtype=np.float64)
            out.update({f"{arch}_lam{j}": float(lam[j] / lam[0]) for j in (k - 1, k)})
            out.update({f"{arch}_{m}": v for m, v in r.edges[arch]._asdict().items() if v is not None})
        conv = results.convergence.get(arch)
        if conv is not None:
            out.update({f"{arch}_conv{kk}": float(conv["overlap"][-1][j]) for j, kk in enumerate(conv["ks"])})
    ks = results.settings.conv_ks
    for arch, values in secant_agreement(results).items():
        out.update({f"{arch}_secant{k}": float(v) for k, v in zip(ks, values)})
    for arch, iso in secant_isotropy(results).items():
        out.update({f"{arch}_secant_{m}": v for m, v in iso._asdict().items()})
    for arch, acc in results.fig6.items():
        out.update({f"{arch}_fig6_{i}": float(a) for i, a in acc.items()})
    return out


class SpectrumEdge(NamedTuple):
    """Where a NAD spectrum ends (`spectrum_edge`): its numerical `rank` (`ch3_nads.numerical_rank`), the `null`
    directions past it (D - rank), λ_{rank-1} / λ_0, the last eigenvalue inside it (`edge`), and λ_rank / λ_0, the
    first past it (`past`; None at full rank)."""
    rank: int
    null: int
    edge: float
    past: float | None


def spectrum_edge(eigenvalues: ArrayLike) -> SpectrumEdge:
    """The `SpectrumEdge` of `eigenvalues` (in decreasing order)."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    rank = ch3_nads.numerical_rank(lam)
    return SpectrumEdge(rank, len(lam) - rank, float(lam[rank - 1] / lam[0]),
                        float(lam[rank] / lam[0]) if rank < len(lam) else None)


class Readings(NamedTuple):
    """What the predictions read (`readings`): the `Isotropy` (`iso`) and `SpectrumEdge` (`edges`) of each stored
    estimate by architecture, the isotropic reference's measures (`isotropic`) and λ_{D-1} / λ_0 of its spectrum
    (`isotropic_edge`)."""
    iso: dict[str, Isotropy]
    edges: dict[str, SpectrumEdge]
    isotropic: Isotropy
    isotropic_edge: float

    def keywords(self) -> dict[str, Any]:
        """The predictions' arguments: each architecture's `Isotropy` under its name, `isotropic`, `isotropic_edge`
        and `edges`."""
        return {**self.iso, "isotropic": self.isotropic, "isotropic_edge": self.isotropic_edge, "edges": self.edges}


def readings(results: ZooResults) -> Readings:
    """The `Readings` of `chapter_results`: every stored estimate's, and the isotropic reference's."""
    iso = {a: m for a, m in results.isotropy.items() if m is not None}
    stored, lam = results.stored(), np.asarray(results.isotropic_spectrum, dtype=np.float64)
    return Readings(iso, {a: spectrum_edge(stored[a].eigenvalues) for a in iso}, results.isotropic,
                    float(lam[-1] / lam[0]))


def _pct(x):
    return f"{100 * x:.1f}%"


def _vit_words(vit, isotropic, **_):
    return (f"{_pct(vit.top)} of the variance in 16 NADs, {_pct(vit.harmonic4)} of their energy on the patch "
            f"harmonics (isotropic: {_pct(isotropic.top)}, {_pct(isotropic.harmonic4)}, "
            f"rank {isotropic.effective_rank:.0f})")


def _mixer_words(mlp, mixer, vit, **_):
    return (f"patch harmonics: MLP {_pct(mlp.harmonic4)}, Mixer {_pct(mixer.harmonic4)}, ViT {_pct(vit.harmonic4)}; "
            f"effective rank: Mixer {mixer.effective_rank:.0f}, ViT {vit.effective_rank:.0f}")


def _convnext_words(convnext, resnet18, vit, isotropic, isotropic_edge, edges, **_):
    s = edges["convnext"]
    return (f"effective rank {convnext.effective_rank:.0f} (ResNet-18 {resnet18.effective_rank:.0f}, "
            f"ViT {vit.effective_rank:.0f}, isotropic {isotropic.effective_rank:.0f}); {_pct(convnext.harmonic4)} on "
            f"the patch harmonics; over its rank {s.rank:,} the spectrum falls to λ/λ₀ = {s.edge:.3f} (isotropic: "
            f"{isotropic_edge:.3f})"
            + (f", then to {s.past:.0e} on {s.null} directions (one per patch) that no ConvNeXt sees"
               if s.past is not None else ""))


def _blur_words(resnet18_blur, resnet18, **_):
    return f"low band: {_pct(resnet18_blur.low)} with BlurPool, {_pct(resnet18.low)} without"


# The chapter's predictions, written from the architectures' structure before the 10,000-network
# estimates were computed (see the chapter), each with the test that decides it and what the chapter measures,
# in words, both on the `Readings` (`Readings.keywords`: each architecture's `Isotropy` under its name):
# "close to isotropic" is an effective rank at least half that of as many isotropic gradients,
# "little energy on the harmonics" less than twice the isotropic share.
PREDICTIONS = {
    "vit": ("Is a transformer (ViT) isotropic?",
            "No: most of the variance in the first 16 NADs, most of their energy on the 16 harmonics of "
            "the 4-pixel patch grid",
            lambda vit, **_: vit.top > 0.5 and vit.harmonic4 > 0.5, _vit_words),
    "mixer": ("Does the MLP-Mixer behave like the MLP?",
              "No: more energy on the patch harmonics than the MLP, less than the ViT; a flatter spectrum "
              "(higher effective rank) than the ViT's",
              lambda mlp, mixer, vit, **_: mlp.harmonic4 < mixer.harmonic4 < vit.harmonic4
              and mixer.effective_rank > vit.effective_rank, _mixer_words),
    "convnext": ("Where does ConvNeXt sit between ResNet-18 and the ViT?",
                 "Nearer the ViT and the MLP: close to isotropic, little energy on the patch harmonics",
                 lambda convnext, isotropic, **_: convnext.effective_rank >= isotropic.effective_rank / 2
                 and convnext.harmonic4 < 2 * isotropic.harmonic4, _convnext_words),
    "resnet18_blur": ("Does BlurPool move ResNet-18's NADs to lower frequencies?",
                      "Yes: more of the first 16 NADs' energy in the low band than ResNet-18's",
                      lambda resnet18_blur, resnet18, **_: resnet18_blur.low > resnet18.low, _blur_words),
}


def _reads(*functions) -> set[str]:
    """What a prediction's `functions` read: their named parameters (architectures, the isotropic reference)."""
    return {name for f in functions for name in inspect.signature(f).parameters if name != "_"}


# Fig. 6 along ConvNeXt's null directions (`null_fig6`), predicted before training: "as well as" its controls
# means within NULL_GAP points on every patch (the largest gap of the seeds' means; 3 binomial standard errors
# of a 2,000-image test set at 90 %)
NULL_GAP = 2.0
NULL_PREDICTION = ("Does ConvNeXt learn along the directions that none of its networks sees at initialisation?",
                   "Yes, as well as along another direction of the same patch: only the stem's Gaussian weights "
                   "read the input, alike in every direction of a patch")


def _held(held: bool) -> str:
    return findings.HOLDS if held else findings.FAILS


def verdict(results: ZooResults, along: NullFig6 | None = None) -> dict[str, findings.Verdict]:
    """`{arch: findings.Verdict}` of every prediction whose architectures `results` holds, and `convnext_null`
    (`NULL_PREDICTION`) when `along` (`null_fig6`) holds Fig. 6 along ConvNeXt's null directions."""
    given = readings(results).keywords()
    out = {}
    for arch, (question, expected, check, words) in PREDICTIONS.items():
        if _reads(check, words) <= given.keys():       # else an architecture not stored yet
            out[arch] = findings.Verdict(question, expected, words(**given), _held(bool(check(**given))))
    if (row := null_verdict(along)) is not None:
        out["convnext_null"] = row
    return out


def null_verdict(along: NullFig6 | None) -> findings.Verdict | None:
    """`NULL_PREDICTION`'s row of `verdict` from Fig. 6 along the null directions (`null_fig6`), or None before a
    patch holds both its runs."""
    if along is None or (gap := null_gap(along)) is None:
        return None
    null, control = stored_cells(along.null), stored_cells(along.control)
    text = (f"{null.mean:.1f} ± {null.sd:.1f}% along x₀ on a patch, {control.mean:.1f} ± {control.sd:.1f}% along a "
            f"control of the same patch ({null.cells} runs each); largest gap on a patch {gap:.1f} points")
    return findings.Verdict(*NULL_PREDICTION, text, _held(gap <= NULL_GAP))


def missing(results: ZooResults) -> list[str]:
    """The architectures whose NADs `chapter_results` did not find."""
    return [a for a, r in results.nads.items() if r is None]
