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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


def _measures(eigenvalues, images, k):
    size = images.shape[-1]
    out = {"effective_rank": effective_rank(eigenvalues), "top": top_share(eigenvalues, k),
           "low": float(energy_share(images, low_band(size, LOW_BAND)).mean())}
    out.update({f"harmonic{p}": float(energy_share(images, harmonics(p, size)).mean()) for p in PERIODS})
    return out


def isotropy(result: nads.NADResult, k: int = 16) -> dict[str, float]:
    """How isotropic a NAD estimate (`NADResult`) is: its `effective_rank` (of D = 1,024), the share
    of the variance in its first `k` NADs (`top`), and the mean over its first `k` NADs of the share of
    their Fourier energy at the low frequencies (`low`, `fourier.low_band`) and on the harmonics of a 4- and
    an 8-pixel grid (`harmonic4`, `harmonic8`). Compare with `isotropic_reference`."""
    images = np.asarray(result.images(k), dtype=np.float64)
    return _measures(result.eigenvalues, images, k)


def isotropic_reference(num_networks: int, k: int = 16, input_shape: Sequence[int] = (1, 32, 32),
                        seed: int = 0) -> tuple[dict[str, float], np.ndarray]:
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


def null_fig6(result: nads.NADResult, cfg: presets.Zoo, results_dir: str | Path,
              replicates: int = NULL_FIG6_REPLICATES, seed: int = 0, tiles: Iterable[Sequence[int]] | None = None,
              device: str | torch.device = "cpu", compute: bool = True, progress: bool = False) -> dict[str, Any]:
    """Fig. 6 along ConvNeXt's null directions: ConvNeXt trained on D(u) for u each tile's null direction and
    its control (`null_basis` of the evaluation point of `result`, the stored exact-gradient NADs; `tiles`
    default `null_tiles`) at `cfg`'s Fig. 6 recipe (`fig6_recipe`), with the seeds of `replicates` replicates
    of `seed` (`seeds.replicate`), stored cell by cell in `results_dir/nads/fig6_convnext/` (a stopped run
    resumes; with `compute=False` only what is stored). Returns `tiles`, `seeds`, and `null` and `control`:
    (replicates, tiles) test accuracies (%), NaN where not stored."""
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
    return {"tiles": tiles, "seeds": run_seeds, "null": acc[:, 0::2], "control": acc[:, 1::2]}


def null_numbers(overlap: Mapping[str, float], ablation: Mapping[str, ArrayLike] | None = None,
                 fig6: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The null-space numbers by name, unrounded, for the prose: `null_{key}` of `null_overlap`'s reading,
    `null_cos_{variant}` the largest |cosine| of `null_ablation`'s (variant with "_" for spaces), and from
    `null_fig6` (stored cells only) `null_fig6_{null,control}` (mean over tiles and seeds, %), `..._sd` (their
    standard deviation over the cells), `null_fig6_cells` (cells of each) and `null_fig6_gap` (the largest
    |mean over seeds of null - control| on one tile)."""
    out = {f"null_{k}": v for k, v in overlap.items()}
    for variant, cos in (ablation or {}).items():
        out[f"null_cos_{variant.replace(' ', '_')}"] = float(np.max(cos))
    if fig6 is not None:
        for kind in ("null", "control"):
            acc = np.asarray(fig6[kind], dtype=np.float64)
            done = acc[np.isfinite(acc)]
            if done.size:
                out[f"null_fig6_{kind}"] = float(done.mean())
                out[f"null_fig6_{kind}_sd"] = float(done.std(ddof=1)) if done.size > 1 else 0.0
                out[f"null_fig6_{kind}_cells"] = int(done.size)
        diff = np.asarray(fig6["null"], dtype=np.float64) - np.asarray(fig6["control"], dtype=np.float64)
        gaps = [abs(d[np.isfinite(d)].mean()) for d in diff.T if np.isfinite(d).any()]     # by tile
        if gaps:
            out["null_fig6_gap"] = float(max(gaps))
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
    f6, lr = presets.as_dict(cfg.fig6), cfg.fig6.max_lr
    f6["max_lr"] = float(lr.get(arch, lr["default"]) if isinstance(lr, dict) else lr)
    return {**f6, "seed": int(seed)}


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
    isotropy: dict[str, Any] = field(default_factory=dict)
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


def secant_isotropy(results: ZooResults) -> dict[str, dict[str, float]]:
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
    out = {f"isotropic_{m}": v for m, v in results.isotropic.items()}
    iso = np.asarray(results.isotropic_spectrum, dtype=np.float64)
    out["isotropic_edge"] = float(iso[-1] / iso[0])
    k = results.settings.top
    for key, estimates in (("networks", results.nads), ("secant_networks", results.secant)):
        out.update({(f"{a}_{key}"): r.num_networks for a, r in estimates.items() if r is not None})
        if _count(estimates.values()) is not None:
            out[key] = _count(estimates.values())
    for arch, iso in results.isotropy.items():
        out.update({f"{arch}_{m}": v for m, v in (iso or {}).items()})
        if iso is not None:      # lambda_{k-1} / lambda_0 and lambda_k / lambda_0: the edge of u_0 .. u_{k-1}
            lam = np.asarray(results.stored()[arch].eigenvalues, dtype=np.float64)
            out.update({f"{arch}_lam{j}": float(lam[j] / lam[0]) for j in (k - 1, k)})
            rank = out[f"{arch}_rank"] = ch3_nads.numerical_rank(lam)
            out[f"{arch}_null"] = len(lam) - rank
            out[f"{arch}_edge"] = float(lam[rank - 1] / lam[0])
            if rank < len(lam):
                out[f"{arch}_past"] = float(lam[rank] / lam[0])
        conv = results.convergence.get(arch)
        if conv is not None:
            out.update({f"{arch}_conv{kk}": float(conv["overlap"][-1][j]) for j, kk in enumerate(conv["ks"])})
    ks = results.settings.conv_ks
    for arch, values in secant_agreement(results).items():
        out.update({f"{arch}_secant{k}": float(v) for k, v in zip(ks, values)})
    for arch, iso in secant_isotropy(results).items():
        out.update({f"{arch}_secant_{m}": v for m, v in iso.items()})
    for arch, acc in results.fig6.items():
        out.update({f"{arch}_fig6_{i}": float(a) for i, a in acc.items()})
    return out


# The chapter's predictions, written from the architectures' structure before the 10,000-network
# estimates were computed (see the chapter), each with the test that decides it on `key_numbers`:
# "close to isotropic" is an effective rank at least half that of as many isotropic gradients,
# "little energy on the harmonics" less than twice the isotropic share.
PREDICTIONS = {
    "vit": ("Is a transformer (ViT) isotropic?",
            "No: most of the variance in the first 16 NADs, most of their energy on the 16 harmonics of "
            "the 4-pixel patch grid",
            lambda n: n["vit_top"] > 0.5 and n["vit_harmonic4"] > 0.5),
    "mixer": ("Does the MLP-Mixer behave like the MLP?",
              "No: more energy on the patch harmonics than the MLP, less than the ViT; a flatter spectrum "
              "(higher effective rank) than the ViT's",
              lambda n: n["mlp_harmonic4"] < n["mixer_harmonic4"] < n["vit_harmonic4"]
              and n["mixer_effective_rank"] > n["vit_effective_rank"]),
    "convnext": ("Where does ConvNeXt sit between ResNet-18 and the ViT?",
                 "Nearer the ViT and the MLP: close to isotropic, little energy on the patch harmonics",
                 lambda n: n["convnext_effective_rank"] >= n["isotropic_effective_rank"] / 2
                 and n["convnext_harmonic4"] < 2 * n["isotropic_harmonic4"]),
    "resnet18_blur": ("Does BlurPool move ResNet-18's NADs to lower frequencies?",
                      "Yes: more of the first 16 NADs' energy in the low band than ResNet-18's",
                      lambda n: n["resnet18_blur_low"] > n["resnet18_low"]),
}


def measured(numbers: Mapping[str, float], arch: str) -> str:
    """What the chapter measures for the prediction about `arch`, in words with the numbers."""
    n, pct = numbers, lambda x: f"{100 * x:.1f}%"
    iso = (f"isotropic: {pct(n['isotropic_top'])}, {pct(n['isotropic_harmonic4'])}, "
           f"rank {n['isotropic_effective_rank']:.0f}")
    return {
        "vit": f"{pct(n['vit_top'])} of the variance in 16 NADs, {pct(n['vit_harmonic4'])} of their energy on "
               f"the patch harmonics ({iso})",
        "mixer": f"patch harmonics: MLP {pct(n['mlp_harmonic4'])}, Mixer {pct(n['mixer_harmonic4'])}, ViT "
                 f"{pct(n['vit_harmonic4'])}; effective rank: Mixer {n['mixer_effective_rank']:.0f}, ViT "
                 f"{n['vit_effective_rank']:.0f}",
        "convnext": f"effective rank {n['convnext_effective_rank']:.0f} (ResNet-18 {n['resnet18_effective_rank']:.0f}, "
                    f"ViT {n['vit_effective_rank']:.0f}, isotropic {n['isotropic_effective_rank']:.0f}); "
                    f"{pct(n['convnext_harmonic4'])} on the patch harmonics; over its rank {n['convnext_rank']:,} the "
                    f"spectrum falls to λ/λ₀ = {n['convnext_edge']:.3f} (isotropic: {n['isotropic_edge']:.3f})"
                    + (f", then to {n['convnext_past']:.0e} on {n['convnext_null']} directions (one per patch) that no "
                       "ConvNeXt sees"
                       if n["convnext_null"] else ""),
        "resnet18_blur": f"low band: {pct(n['resnet18_blur_low'])} with BlurPool, {pct(n['resnet18_low'])} without",
    }[arch]


# Fig. 6 along ConvNeXt's null directions (`null_fig6`), predicted before training: "as well as" its controls
# means within NULL_GAP points on every patch (the largest gap of the seeds' means; 3 binomial standard errors
# of a 2,000-image test set at 90 %)
NULL_GAP = 2.0
NULL_PREDICTION = ("Does ConvNeXt learn along the directions that none of its networks sees at initialisation?",
                   "Yes, as well as along another direction of the same patch: only the stem's Gaussian weights "
                   "read the input, alike in every direction of a patch")


def _held(held: bool) -> str:
    return findings.HOLDS if held else findings.FAILS


def verdict(results: ZooResults, null: Mapping[str, float] | None = None) -> dict[str, findings.Verdict]:
    """`{arch: findings.Verdict}` of every prediction whose numbers
    `results` holds, and `convnext_null` (`NULL_PREDICTION`) when `null` (`null_numbers`) holds Fig. 6
    along ConvNeXt's null directions."""
    n = key_numbers(results)
    out = {}
    for arch, (question, expected, check) in PREDICTIONS.items():
        try:
            out[arch] = findings.Verdict(question, expected, measured(n, arch), _held(bool(check(n))))
        except KeyError:       # an architecture not stored yet
            continue
    if null is not None and (row := null_verdict(null)) is not None:
        out["convnext_null"] = row
    return out


def null_verdict(null: Mapping[str, float]) -> findings.Verdict | None:
    """`NULL_PREDICTION`'s row of `verdict` from `null_numbers`,
    or None before Fig. 6 along the null directions is stored."""
    if "null_fig6_gap" not in null:
        return None
    u = null
    text = (f"{u['null_fig6_null']:.1f} ± {u['null_fig6_null_sd']:.1f}% along x₀ on a patch, "
            f"{u['null_fig6_control']:.1f} ± {u['null_fig6_control_sd']:.1f}% along a control of the same "
            f"patch ({u['null_fig6_null_cells']} runs each); largest gap on a patch {u['null_fig6_gap']:.1f} points")
    return findings.Verdict(*NULL_PREDICTION, text, _held(u["null_fig6_gap"] <= NULL_GAP))


def missing(results: ZooResults) -> list[str]:
    """The architectures whose NADs `chapter_results` did not find."""
    return [a for a, r in results.nads.items() if r is None]
