"""Chapter 5: underspecified tasks of the follow-up paper, seen through the NADs.

A task `D1 (+) D2` stacks two datasets with the same labels along the channels: a network can
solve it with either block of channels. Which block it uses is read off three accuracies,
`channel_accuracies` (both blocks, only block 1 with block 2 zeroed, only block 2), and off the
tilt of its decision boundary on the plane spanned by `v1 (+) 0` and `0 (+) v2`
(`cross_section`). The grids of the paper run through `nadcore.sweeps`:

- `pair_grid`: Fig. 2, `D(v_i) (+) D(v_j)` with `v_i`, `v_j` NADs of the network, over index
  pairs `(i, j)`; every cell stores its three accuracies and its cross-section.
- `ood_grid`: Fig. 3, binary CIFAR-10 (classes 0-4 vs 5-9, or a stand-in: the digits or
  Fashion-MNIST) with an extra `D(v_k)` channel, over NAD indices `k`.

"Zeroed" means zero in the network's normalised input, i.e. the block is set to its training
mean (for `D(v)` channels, whose mean is 0, this is the raw zero of the paper).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch

from nadcore import checks, cifar, data, models, presets, store, sweeps, train, versions
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.experiments import ch3_nads
from nadcore.presets import check_dataset, preset
from nadcore.prose import and_list, name
from nadcore.seeds import derive, streams

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from numpy.typing import ArrayLike

    from nadcore.nads.result import NADResult

CHANNELS = ("both", "channel1", "channel2")
ARCHS = ("mlp", "lenet", "resnet18")


# --------------------------------------------------------------------------- data

def binarise(labels: torch.Tensor | ArrayLike) -> torch.Tensor:
    """The binary CIFAR-10 labels of App. A.2: class `c < 5` -> 0 (the paper's -1), else 1."""
    labels = torch.as_tensor(labels)
    if labels.dtype.is_floating_point or labels.numel() == 0 or labels.min() < 0 or labels.max() > 9:
        raise InputError("labels must be non-empty integer class labels in 0..9")
    return (labels >= 5).long()


def labelled_directional(v: torch.Tensor, y: torch.Tensor, sigma: float, eps: float,
                         seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """`D(v)` samples whose labels are exactly `y` (0/1): drawn with `data.directional_dataset`
    and picked class by class, so a `D(v)` channel can be stacked on any binary dataset."""
    y = torch.as_tensor(y)
    if y.dim() != 1 or not set(y.unique().tolist()) <= {0, 1}:
        raise InputError("y must be a 1-D tensor of binary labels (0 or 1)")
    counts = [int((y == k).sum()) for k in (0, 1)]
    xv, yv = data.directional_dataset(v, 2 * max(counts), sigma, eps, seed=seed)
    out = torch.empty((len(y),) + tuple(xv.shape[1:]), dtype=xv.dtype)
    for k in (0, 1):
        out[y == k] = xv[yv == k][:counts[k]]
    return out, y.clone()


def pair_dataset(v1: torch.Tensor, v2: torch.Tensor, n: int, sigma: float = 1.0, eps1: float = 1.0, eps2: float = 0.5,
                 seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """`D(v1) (+) D(v2)` with `n` samples: two channels, the same labels, independent noise."""
    first = data.directional_dataset(v1, n, sigma, eps1, seed=derive(seed, 1))
    return data.concat_channels(first, labelled_directional(v2, first[1], sigma, eps2, seed=derive(seed, 2)))


def cifar_with_channel(images: torch.Tensor, labels: torch.Tensor, v: torch.Tensor, sigma: float, eps: float = 1.0,
                       seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Binary CIFAR-10 (3 channels) with an extra `D(v)` channel: `(x, y)`, x of shape (N, 4, 32, 32)."""
    y = binarise(labels)
    return data.concat_channels((images, y), labelled_directional(v, y, sigma, eps, seed=seed))


# --------------------------------------------------------------------------- evaluation

def _check_split(split, channels):
    if not (checks.is_integer(split) and 0 < split < channels):
        raise InputError(f"split (the number of channels of block 1) must be an int in "
                         f"1..{channels - 1}; got {split!r}")


def ablate(x: torch.Tensor, split: int, keep: str) -> torch.Tensor:
    """`x` with one block of channels zeroed: `keep` is "both", "channel1" (channels `[:split]`
    kept) or "channel2" (channels `[split:]` kept)."""
    _check_split(split, x.shape[1])
    if keep not in CHANNELS:
        raise InputError(f"keep must be one of {', '.join(CHANNELS)}; got {keep!r}")
    x = x.clone()
    if keep == "channel1":
        x[:, split:] = 0
    elif keep == "channel2":
        x[:, :split] = 0
    return x


@torch.no_grad()
def channel_accuracies(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, split: int = 1,
                       mean: torch.Tensor | Sequence[float] | None = None,
                       std: torch.Tensor | Sequence[float] | None = None, device: str | torch.device = "auto",
                       batch_size: int = 1000) -> dict[str, float]:
    """Accuracy (percent) with both blocks, only block 1 and only block 2: a dict over `CHANNELS`.

    `x` is raw; with `mean`, `std` (from `train.fit`) it is normalised first and the ablated block
    is zeroed in the normalised input the network sees.
    """
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"x and y must hold the same positive number of samples; got {len(x)} and {len(y)}")
    xn = x if mean is None else cifar.normalise(x, mean, std)
    return {keep: 100.0 * (train.predict(model, ablate(xn, split, keep), device=device, batch_size=batch_size)
                           == y.cpu()).float().mean().item() for keep in CHANNELS}


def _as_block(v, name):
    v = torch.as_tensor(v, dtype=torch.float32)
    if v.dim() == 1:
        side = int(round(v.numel() ** 0.5))
        if side * side != v.numel():
            raise InputError(f"{name} must be an image (C, H, W), (H, W) or a flat square image; got {tuple(v.shape)}")
        v = v.view(side, side)
    if v.dim() == 2:
        v = v.unsqueeze(0)
    if v.dim() != 3 or not torch.isfinite(v).all() or v.norm() == 0:
        raise InputError(f"{name} must be a finite non-zero image (C, H, W), (H, W) or flat; got {tuple(v.shape)}")
    return v / v.norm()


@torch.no_grad()
def cross_section(model: torch.nn.Module, v1: torch.Tensor | np.ndarray, v2: torch.Tensor | np.ndarray,
                  extent: float = 2.0, resolution: int = 65, origin: torch.Tensor | np.ndarray | None = None,
                  mean: torch.Tensor | None = None, std: torch.Tensor | None = None,
                  device: str | torch.device = "auto") -> tuple[np.ndarray, np.ndarray]:
    """The decision boundary of `model` on the plane spanned by `v1 (+) 0` and `0 (+) v2`.

    Returns `(classes, coords)`: `classes[r, c]` is the predicted class at
    `origin + coords[c] * (v1 (+) 0) + coords[r] * (0 (+) v2)` (rows follow `v2`, columns `v1`,
    so `imshow(classes, origin="lower")` puts `v1` on the horizontal axis), and `coords` spans
    `[-extent, extent]` in `resolution` steps. `v1`, `v2` are unit-normalised; `origin` defaults
    to 0. Points are raw inputs (normalised with `mean`, `std` when given).
    """
    checks.integer("resolution", resolution, 2)
    checks.number("extent", extent, 0)
    b1, b2 = _as_block(v1, "v1"), _as_block(v2, "v2")
    if b1.shape[1:] != b2.shape[1:]:
        raise ValueError(f"v1 and v2 must have the same image size; got {tuple(b1.shape)} and {tuple(b2.shape)}")
    u1 = torch.cat([b1, torch.zeros_like(b2)])
    u2 = torch.cat([torch.zeros_like(b1), b2])
    checks.allocation("resolution", resolution, 4.0 * resolution ** 2 * u1.numel(), "the plane's float32 points")
    coords = torch.linspace(-extent, extent, resolution)
    b, a = torch.meshgrid(coords, coords, indexing="ij")
    points = a.reshape(-1, 1, 1, 1) * u1 + b.reshape(-1, 1, 1, 1) * u2
    if origin is not None:
        origin = torch.as_tensor(origin, dtype=torch.float32)
        if origin.shape != u1.shape:
            raise InputError(f"origin must have shape {tuple(u1.shape)}; got {tuple(origin.shape)}")
        points = points + origin
    classes = train.predict(model, points, mean, std, device)
    return classes.view(resolution, resolution).numpy().astype(np.int8), coords.numpy()


# --------------------------------------------------------------------------- grids (Figs. 2 and 3)



def nad_images(nads: NADResult | np.ndarray | torch.Tensor) -> torch.Tensor:
    """NADs (a `NADResult`, or rows / images as an array) as a float32 tensor (K, 1, 32, 32)."""
    rows = torch.as_tensor(np.asarray(getattr(nads, "nads", nads)), dtype=torch.float32)
    if rows.dim() < 2 or rows[0].numel() != models.SIZE * models.SIZE:
        raise InputError(f"nads must hold 32x32 directions (rows of 1024 or images); got shape {tuple(rows.shape)}")
    return rows.reshape(len(rows), 1, models.SIZE, models.SIZE)


def check_indices(indices: Sequence[int] | np.ndarray, count: int, name: str = "indices") -> list[int]:
    """`indices` as a list of ints, each a valid NAD index in `0..count - 1`."""
    out = [int(k) for k in indices] if isinstance(indices, (list, tuple, np.ndarray)) else None
    if not out or any(isinstance(k, bool) or k != float(k) for k in indices) or min(out) < 0 or max(out) >= count:
        raise InputError(f"{name} must be a non-empty list of NAD indices in 0..{count - 1}; got {indices!r}")
    return out


def chapter_settings(scale: str, seed: int = 0,
                     overrides: dict[str, Any] | None = None) -> presets.Underspecification:
    """Chapter 5's settings at `scale` for the run `seed`: the preset (changed by `overrides`,
    `presets.check_overrides`) with each replicate `r` of its Figs. 2 and 3 (its `seeds`) seeded by
    `derive(seed, r)`, so the runs of two seeds share nothing."""
    P = preset("underspecification", scale, overrides)
    return replace(P, pairs=replace(P.pairs, seeds=[derive(seed, r) for r in P.pairs.seeds]),
                   ood=replace(P.ood, seeds=[derive(seed, r) for r in P.ood.seeds]))


def nad_archs(P: presets.Underspecification) -> list[str]:
    """The networks whose NADs the chapter reads: those of Figs. 2 and 3 (`P.pairs.archs`, `P.ood.archs`), sorted."""
    return sorted(set(P.pairs.archs) | set(P.ood.archs))


def chapter_nads(P: presets.Underspecification, results_dir: str | Path, scale: str,
                 device: str | torch.device = "auto") -> dict[str, NADResult]:
    """The NADs of each network of Figs. 2 and 3 at `scale` (`ch3_nads.load_nads`, `P.nads`' method and size)."""
    return {a: ch3_nads.load_nads(a, results_dir, scale=scale, device=device, progress=False, method=P.nads.method,
                                  num_networks=P.nads.num_networks)
            for a in nad_archs(P)}


def _network(arch, in_channels, recipe, seed):
    """A fresh `arch` network initialised from `seed` (the recipe's `widths` resize the MLP)."""
    torch.manual_seed(seed)
    if arch == "mlp" and (widths := recipe.get("widths")):
        return models.MLP(in_channels=in_channels, widths=tuple(widths))
    return models.build(arch, in_channels=in_channels)


def _recipe(settings: presets.Pairs | presets.Ood, arch: str) -> dict[str, Any]:
    """`arch`'s recipe in `settings`, as the cells' settings store it (standardised inputs: see `_fit`)."""
    if arch not in settings.recipe:
        raise InputError(f"arch must be one of the architectures with a recipe in settings "
                         f"({', '.join(settings.recipe)}); got {arch!r}")
    recipe = {"normalize": True, **presets.as_dict(settings.recipe[arch])}   # see `_fit`
    train.Recipe.from_settings(recipe)               # checked before any work
    return recipe


def _fit(nets, datasets, seeds, recipe, device) -> list[train.Fit]:
    """`train.fit_many` with the recipe (`train.Recipe`; its other keys, e.g. the MLP's `widths`, shape
    the network); inputs standardised per channel unless the recipe says `normalize: False` (the
    follow-up does not say; the images channel needs it, and at the smoke scale's sigma = 0.1 LeNet
    learns nothing from raw inputs in 8 epochs). The recipe's `stack` networks train together (its
    absence: as many as fit)."""
    return train.fit_many(nets, datasets, train.Recipe.from_settings(recipe), seeds=seeds, device=device,
                          chunk=recipe.get("stack"))


def _run(name, cells, compute, settings, results_dir, batch, shard, num_shards, progress, only_stored=False,
         device=None):
    settings = versions.stamp(settings, "underspec_cell")
    if only_stored:                                           # read a results bundle: compute nothing
        try:
            return sweeps.collect(name, cells, settings, results_dir)
        except FileNotFoundError:
            return None
    sweeps.sweep(name, cells, compute, settings, results_dir, batch=batch, shard=shard,
                 num_shards=num_shards, progress=progress, device=device)
    if sweeps.missing(name, cells, settings, results_dir):
        return None                                           # other shards are still running
    return sweeps.collect(name, cells, settings, results_dir)


# Where Fig. 2's cross-sections lie: the plane of `v_i (+) 0` and `0 (+) v_j` through the first test sample (its
# noise off the plane, `section_origin`), so the boundary is drawn where the data lie (the origin is ~sigma sqrt(D)
# from every sample). Part of the cells' settings (`pair_sweep`): sections through the origin were other cells.
SECTION = "through test sample 0"


def section_origin(x: torch.Tensor, v1: torch.Tensor, v2: torch.Tensor) -> torch.Tensor:
    """The sample `x` (two blocks) less its components along `v1 (+) 0` and `0 (+) v2`: the origin of the plane
    through `x` whose coordinates are those along the two directions."""
    u = [torch.cat([_as_block(v1, "v1"), torch.zeros_like(_as_block(v2, "v2"))]),
         torch.cat([torch.zeros_like(_as_block(v1, "v1")), _as_block(v2, "v2")])]
    u = [e / e.norm() for e in u]
    return x - sum((x * e).sum() * e for e in u)


class PairCell(NamedTuple):
    """A cell of Fig. 2 (`pair_sweep`): the NAD indices `i` of v1 and `j` of v2, and the `seed`. `nadcore.sweeps`
    stores it as its dict (`_asdict`)."""
    i: int
    j: int
    seed: int


def pair_cells(arch: str, nads: NADResult | np.ndarray | torch.Tensor, settings: presets.Pairs,
               cells: Sequence[Mapping[str, Any]], device: str | torch.device = "cpu") -> list[dict[str, np.ndarray]]:
    """Train `arch` on the Fig. 2 cells `cells` (dicts of `PairCell`'s `i`, `j`, `seed`) as one stack and measure
    each: `[{"accuracy", "train_accuracy", "section"}]` (the arrays `pair_grid` stores)."""
    U = nad_images(nads)
    recipe = _recipe(settings, arch)
    common = dict(sigma=settings.sigma, eps1=settings.eps1, eps2=settings.eps2)
    typed = [PairCell(**c) for c in cells]
    nets, datasets, fit_seeds = [], [], []
    for c in typed:
        st = streams(c.seed, c.i, c.j)
        datasets.append(tuple(pair_dataset(U[c.i], U[c.j], n, seed=s, **common)
                              for n, s in ((settings.n_train, st.train), (settings.n_test, st.test))))
        nets.append(_network(arch, 2, recipe, st.init))
        fit_seeds.append(st.shuffle)
    fits = _fit(nets, datasets, fit_seeds, recipe, device)
    out = []
    for c, net, (_, test), fit in zip(typed, nets, datasets, fits):
        norm: dict[str, Any] = dict(mean=fit.mean, std=fit.std, device=device)
        acc = channel_accuracies(net, *test, split=1, **norm)
        section, _ = cross_section(net, U[c.i], U[c.j], settings.extent, settings.resolution,
                                   origin=section_origin(test[0][0], U[c.i], U[c.j]), **norm)
        out.append({"accuracy": np.array([acc[k] for k in CHANNELS]),
                    "train_accuracy": np.array(fit.train_acc), "section": section})
    return out


class Sweep(NamedTuple):
    """A sweep as `nadcore.sweeps` stores it: its `name`, its `cells` and the `settings` its keys hash."""
    name: str
    cells: list[dict[str, int]]
    settings: dict[str, Any]


def pair_sweep(arch: str, nads: NADResult | np.ndarray | torch.Tensor, settings: presets.Pairs) -> Sweep:
    """The `Sweep` of `pair_grid` (cells `PairCell`'s dicts, seed-major), to read or train one cell at a time."""
    U = nad_images(nads)
    idx = check_indices(settings.indices, len(U))
    shared: dict[str, Any] = {"arch": arch, "nads": store.fingerprint(U), "recipe": _recipe(settings, arch),
                              "section": SECTION,
                              **{k: getattr(settings, k) for k in ("n_train", "n_test", "sigma", "eps1", "eps2",
                                                                   "extent", "resolution")}}
    cells = [PairCell(i, j, int(s))._asdict() for s in settings.seeds for i in idx for j in idx]
    return Sweep(f"underspec_pairs_{arch}", cells, versions.stamp(shared, "underspec_cell"))


class PairGrid(NamedTuple):
    """Fig. 2 of one network (`pair_grid`): the NAD indices of v1 (`indices_1`) and of v2 (`indices_2`), the
    `seeds`, the test accuracies (%) `accuracy` (S, I, J, 3) over `CHANNELS`, the training accuracies
    `train_accuracy` (S, I, J), the `cross_section`s `sections` (S, I, J, R, R) through test sample 0 (`SECTION`)
    and their `coords`."""
    indices_1: np.ndarray
    indices_2: np.ndarray
    seeds: np.ndarray
    accuracy: np.ndarray
    train_accuracy: np.ndarray
    sections: np.ndarray
    coords: np.ndarray


def _stack(results, key, shape):
    """The stored arrays `key` of the cells `results` (`store.Result`s, in the sweep's order) as one array of
    `shape` (the sweep's axes) and the cells' own axes."""
    return np.stack([r[key] for r in results]).reshape(*shape, *results[0][key].shape)


def pair_grid(arch: str, nads: NADResult | np.ndarray | torch.Tensor, settings: presets.Pairs,
              results_dir: str | Path, *, device: str | torch.device = "auto", batch: int = 8, shard: int = 0,
              num_shards: int = 1, progress: bool = True, only_stored: bool = False) -> PairGrid | None:
    """Fig. 2: train `arch` on `D(v_i) (+) D(v_j)` for every NAD index pair of `settings["indices"]`
    and every seed of `settings["seeds"]`, through `nadcore.sweeps` (resumable, shardable).

    settings: `indices`, `seeds`, `n_train`, `n_test`, `sigma`, `eps1`, `eps2`, `extent`,
    `resolution` and `recipe[arch]` (`epochs`, `max_lr`, `momentum`, `weight_decay`,
    `batch_size`, `schedule`). Returns the `PairGrid`; None while other shards are missing (with `only_stored`,
    None unless every cell is stored: nothing is computed).
    """
    U = nad_images(nads)
    name, cells, shared = pair_sweep(arch, U, settings)
    typed = [PairCell(**c) for c in cells]
    idx, seeds = list(dict.fromkeys(c.i for c in typed)), list(dict.fromkeys(c.seed for c in typed))
    compute = lambda group: pair_cells(arch, U, settings, group, device)
    results = _run(name, cells, compute, shared, results_dir, batch, shard, num_shards, progress,
                   only_stored, resolve(device))
    if results is None:
        return None
    shape = (len(seeds), len(idx), len(idx))
    return PairGrid(np.array(idx), np.array(idx), np.array(seeds), _stack(results, "accuracy", shape),
                    _stack(results, "train_accuracy", shape), _stack(results, "section", shape),
                    np.linspace(-settings.extent, settings.extent, settings.resolution))


def load_images(dataset: str, data_root: str | Path, limit: int | None = None,
                ) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """Train and test `(x, y)` of `dataset` ("cifar10", or the stand-ins "digits" and "fashion"), 10-class
    labels; `limit` images per split (None: all)."""
    check_dataset(dataset)
    kw: dict[str, Any] = dict(limit=limit) if limit else {}
    return cifar.load(dataset, data_root, train=True, **kw), cifar.load(dataset, data_root, train=False, **kw)


class OodGrid(NamedTuple):
    """Fig. 3 of one network (`ood_grid`): the NAD `indices` k, the `seeds`, the noise `sigma` of the D(v_k)
    channel, the test accuracies (%) `accuracy` (S, K, 3) over `CHANNELS` (both; the images alone, D(v_k)
    zeroed; D(v_k) alone, the images zeroed) and the training accuracies `train_accuracy` (S, K)."""
    indices: np.ndarray
    seeds: np.ndarray
    sigma: float
    accuracy: np.ndarray
    train_accuracy: np.ndarray


class OodCell(NamedTuple):
    """A cell of Fig. 3 (`ood_grid`): the NAD index `k` and the `seed`, stored as its dict (`_asdict`)."""
    k: int
    seed: int


def ood_grid(arch: str, nads: NADResult | np.ndarray | torch.Tensor, settings: presets.Ood,
             results_dir: str | Path, data_root: str | Path = "../data", *, device: str | torch.device = "auto",
             batch: int = 8, shard: int = 0, num_shards: int = 1, progress: bool = True,
             only_stored: bool = False) -> OodGrid | None:
    """Fig. 3: train `arch` on binary images (+) `D(v_k)` for every NAD index `k` of
    `settings["indices"]` and every seed, through `nadcore.sweeps` (resumable, shardable).

    settings: `dataset` ("cifar10", "digits" or "fashion"; `data_root` holds CIFAR-10 and Fashion-MNIST's
    files, see `cifar.load`), `limit` (images per split, or None), `indices`,
    `seeds`, `eps`, `sigma` (a number or {arch: number}) and `recipe[arch]`. Returns the `OodGrid`; None while
    other shards are missing (with `only_stored`, unless every cell is stored).
    """
    check_dataset(settings.dataset)
    U = nad_images(nads)
    idx = check_indices(settings.indices, len(U))
    seeds = [int(s) for s in settings.seeds]
    recipe = _recipe(settings, arch)
    sigma = float(settings.sigma[arch] if isinstance(settings.sigma, dict) else settings.sigma)
    shared: dict[str, Any] = {"arch": arch, "nads": store.fingerprint(U), "recipe": recipe, "sigma": sigma,
              **{k: getattr(settings, k) for k in ("dataset", "limit", "eps")}}
    cells = [OodCell(k, s)._asdict() for s in seeds for k in idx]
    images = []

    def compute(group):
        if not images:
            images.extend(load_images(settings.dataset, data_root, settings.limit))
        (x_tr, y_tr), (x_te, y_te) = images
        nets, datasets, fit_seeds = [], [], []
        for c in (OodCell(**c) for c in group):
            st = streams(c.seed, c.k)
            v = U[c.k]
            datasets.append((cifar_with_channel(x_tr, y_tr, v, sigma, settings.eps, seed=st.train),
                             cifar_with_channel(x_te, y_te, v, sigma, settings.eps, seed=st.test)))
            nets.append(_network(arch, datasets[-1][0][0].shape[1], recipe, st.init))
            fit_seeds.append(st.shuffle)
        fits = _fit(nets, datasets, fit_seeds, recipe, device)
        split = images[0][0].shape[1]
        return [{"accuracy": np.array([a[k] for k in CHANNELS]), "train_accuracy": np.array(fit.train_acc)}
                for a, fit in ((channel_accuracies(net, *test, split=split, mean=fit.mean, std=fit.std,
                                                   device=device), fit)
                               for net, (_, test), fit in zip(nets, datasets, fits))]

    results = _run(f"underspec_ood_{arch}", cells, compute, shared, results_dir, batch, shard, num_shards, progress,
                   only_stored, resolve(device))
    if results is None:
        return None
    shape = (len(seeds), len(idx))
    return OodGrid(np.array(idx), np.array(seeds), sigma, _stack(results, "accuracy", shape),
                   _stack(results, "train_accuracy", shape))


CHOICES = ("linear", "images", "both", "neither")


def channel_choice(grid: OodGrid, threshold: float = 75.0) -> dict[int, str]:
    """What a network of Fig. 3 reads at each NAD index `k` of an `ood_grid` result: "linear" when the
    seed-mean test accuracy with the `D(v_k)` channel alone reaches `threshold` (%) and with the images
    alone does not, "images" for the converse, "both" or "neither"; a dict `{k: choice}`."""
    acc = np.asarray(grid.accuracy).mean(0)
    pick = {(False, True): "linear", (True, False): "images", (True, True): "both", (False, False): "neither"}
    return {int(k): pick[bool(a[1] >= threshold), bool(a[2] >= threshold)] for k, a in zip(grid.indices, acc)}


def switching(grid: PairGrid) -> list[tuple[int, int, float, float]]:
    """Per NAD index pair, the seed-mean accuracies with only channel 1 and only channel 2:
    rows `(i, j, channel1, channel2)` of a `pair_grid` result."""
    acc = np.asarray(grid.accuracy).mean(0)
    return [(int(i), int(j), float(acc[a, b, 1]), float(acc[a, b, 2]))
            for a, i in enumerate(grid.indices_1) for b, j in enumerate(grid.indices_2)]


# --------------------------------------------------------------------------- numbers and readings for the prose

NAN = float("nan")   # what the prose reads for a run not computed


def pair_numbers(grid: PairGrid, fitted: float = 90.0) -> dict[str, Any]:
    """Fig. 2 of one network by name, for the prose (a `pair_grid` result, indices `idx`, seed-mean
    accuracies unless said): `indices`, `seeds` (their number), `first`, `mid` and `last` (`idx[0]`,
    `idx[1]`, `idx[-1]`); with v1 on the first NAD and v2 further out, `first_ch1_min` (channel 1 alone, the
    lowest) and `first_ch2_max` (channel 2 alone, the highest); swapped, at (last, first), `swap_ch1` and
    `swap_ch2`; with both on the first NAD, `both_ch1` and `both_ch2`; with neither, `high_both_max` (both
    channels) and `high_train_min`, `high_train_max` (training accuracy); at (mid, first) the seeds that
    read channel 2 (more than `fitted` % with it alone), `mid_fitted`, and the lowest training accuracy of a
    seed there, `mid_failed_train`; `sd_max`, the largest standard deviation over the seeds of any accuracy
    (nan with one seed)."""
    per_seed = np.asarray(grid.accuracy, dtype=float)            # (S, I, J, channels): both, only 1, only 2
    train_acc = np.asarray(grid.train_accuracy, dtype=float)     # (S, I, J)
    idx = [int(k) for k in grid.indices_1]
    if len(idx) < 2:
        raise InputError(f"grid must hold at least two NAD indices; got {idx}")
    acc, high_train = per_seed.mean(0), train_acc.mean(0)[1:, 1:]
    return {"indices": idx, "seeds": len(per_seed), "first": idx[0], "mid": idx[1], "last": idx[-1],
            "first_ch1_min": float(acc[0, 1:, 1].min()), "first_ch2_max": float(acc[0, 1:, 2].max()),
            "swap_ch1": float(acc[-1, 0, 1]), "swap_ch2": float(acc[-1, 0, 2]),
            "both_ch1": float(acc[0, 0, 1]), "both_ch2": float(acc[0, 0, 2]),
            "high_both_max": float(acc[1:, 1:, 0].max()),
            "high_train_min": float(high_train.min()), "high_train_max": float(high_train.max()),
            "mid_fitted": int((per_seed[:, 1, 0, 2] > fitted).sum()),
            "mid_failed_train": float(train_acc[:, 1, 0].min()),
            "sd_max": float(per_seed.std(0, ddof=1).max()) if len(per_seed) > 1 else NAN}


def ood_extremes(grids: Mapping[str, OodGrid]) -> dict[str, float]:
    """Over the networks of `grids` (`{arch: ood_grid}`) and every NAD index: the lowest seed-mean accuracy
    with the images alone, `images_min`, and the highest with the linear channel alone, `dv_max`."""
    if not grids:
        raise InputError("grids must hold at least one network's ood_grid; got none")
    acc = [np.asarray(g.accuracy, dtype=float).mean(0) for g in grids.values()]
    return {"images_min": float(min(a[:, 1].min() for a in acc)), "dv_max": float(max(a[:, 2].max() for a in acc))}


def _count(used, ks):
    if not used:
        return "none"
    if len(used) == len(ks):
        return "every index"
    return f"one index only (*k* = {used[0]})" if len(used) == 1 else f"{len(used)} indices (*k* = {and_list(used)})"


def ood_reading(grids: Mapping[str, OodGrid], epochs: int | None = None, paper_epochs: int | None = None,
                threshold: float = 75.0, cnn: str = "lenet", isotropic: str = "mlp") -> dict[str, Any]:
    """Fig. 3 on a stand-in by name and in words, for the prose: `grids` (`{arch: ood_grid}`, each over the
    same NAD indices `ks`; empty: not computed, every number nan) read by `channel_choice` at `threshold`.
    Returns `used` (the indices at which `cnn` reads the linear channel) and `used_text` ("none" if none);
    `used_dv` and `used_images` (its accuracy with the channel alone and with the images alone at the first
    of them); `other_dv_max` (its best with the channel alone elsewhere); `images_min` and `images_max` (every
    network with the images alone, at the indices `cnn` does not read the channel); `iso_used`, `iso_dv_max`
    and `iso_train_min` (the `isotropic` network's indices, best accuracy with the channel alone and lowest
    training accuracy); `text`, two sentences on what `cnn` and `isotropic` read against the follow-up's
    claim (a CNN reads the channel on its first NADs only, the MLP at every k; `epochs` ours and
    `paper_epochs` the follow-up's, of the isotropic network), and `short`, a clause saying where each reads
    it. The index reads *k* (Markdown: glue them as `Markdown`, where $-math is not parsed)."""
    c, i = name(cnn), name(isotropic)
    if not grids:
        return {"used": [], "used_text": "none", "used_dv": NAN, "used_images": NAN, "other_dv_max": NAN,
                "images_min": NAN, "images_max": NAN, "iso_used": [], "iso_dv_max": NAN, "iso_train_min": NAN,
                "text": "Its runs are not stored.", "short": "its runs are not stored"}
    missing = [a for a in (cnn, isotropic) if a not in grids]
    if missing:
        raise InputError(f"grids must hold {cnn} and {isotropic}; missing {', '.join(missing)}")
    ks = [int(k) for k in grids[cnn].indices]
    acc = {a: np.asarray(g.accuracy, dtype=float).mean(0) for a, g in grids.items()}   # (K, channels)
    reads = lambda a: [k for k, what in channel_choice(grids[a], threshold).items()  # noqa: E731
                       if what in ("linear", "both")]
    used, iso_used = reads(cnn), reads(isotropic)
    other = [r for r, k in enumerate(ks) if k not in used]
    at = ks.index(used[0]) if used else None
    used_dv, used_images = (float(acc[cnn][at, 2]), float(acc[cnn][at, 1])) if at is not None else (NAN, NAN)
    other_dv_max = max((float(acc[cnn][r, 2]) for r in other), default=NAN)
    iso_dv_max = float(acc[isotropic][:, 2].max())
    iso_train_min = float(np.asarray(grids[isotropic].train_accuracy, dtype=float).min())
    if not used:
        cnn_text = (f"{c} never takes the linear channel (at most {other_dv_max:.1f} % with it alone): not the "
                    "follow-up's choice.")
    else:
        where = f" at *k* = {used[0]}" if len(used) > 1 else ""
        first = used == ks[:len(used)]
        choice = ("not the follow-up's choice" if not other or ks[-1] in used else
                  "the follow-up's choice" if first else "the follow-up's choice in part")
        elsewhere = f"at most {other_dv_max:.1f} % elsewhere" if other else ""
        said = f"{used_dv:.1f} % with it alone, {used_images:.1f} % with the images alone{where}"
        if ks[0] in used:     # one parenthesis
            said = f"({said}{'; ' + elsewhere if elsewhere else ''})"
        else:                 # "not even at the first index", then the rest
            said = f"({said}), not even at *k* = {ks[0]} ({elsewhere})"
        cnn_text = f"{c} takes the linear channel at *k* = {and_list(used)}{' only' if other else ''} {said}: {choice}."
    fits = (f"it fits its training set from them ({iso_train_min:.1f} % or more)"
            + (f" within {epochs} epochs" if epochs is not None else "")
            + (f", where the follow-up trains it for {paper_epochs} on CIFAR-10" if paper_epochs is not None else ""))
    head = f"The {i}, which the follow-up finds reading the linear channel at every *k*, "
    if not iso_used:
        iso_text = (f"{head}reads only the images (at most {iso_dv_max:.1f} % with the linear channel alone): "
                    f"{fits}.")
    elif len(iso_used) == len(ks):
        low = float(acc[isotropic][:, 2].min())
        iso_text = f"{head}reads it at every *k* here too (at least {low:.1f} % with it alone)."
    else:
        iso_text = (f"{head}reads it at *k* = {and_list(iso_used)} only (at most {iso_dv_max:.1f} % with it "
                    "alone).")
    return {"used": used, "used_text": ", ".join(map(str, used)) or "none", "used_dv": used_dv,
            "used_images": used_images, "other_dv_max": other_dv_max,
            "images_min": min((float(a[r, 1]) for a in acc.values() for r in other), default=NAN),
            "images_max": max((float(a[r, 1]) for a in acc.values() for r in other), default=NAN),
            "iso_used": iso_used, "iso_dv_max": iso_dv_max, "iso_train_min": iso_train_min,
            "text": f"{cnn_text} {iso_text}",
            "short": f"{c} takes the linear channel at {_count(used, ks)}, the {i} at {_count(iso_used, ks)}"}
