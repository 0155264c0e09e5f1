"""Chapter 1 (paper Sec. 2, Figs. 1-3): networks trained on D(v) for Fourier directions v,
as a resumable, shardable sweep whose cells are batch-invariant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch

from nadcore import catalog, checks, data, fourier, models, presets, seeds, sweeps, train, versions
from nadcore.checks import InputError
from nadcore.device import resolve

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path


def cell_streams(seed: int, kx: int, ky: int, size: int = 32) -> seeds.Streams:
    """The seeds of one (kx, ky) cell (`seeds.streams` of the frequency modulo `size`): its data, its
    network's initialisation and its shuffling depend only on the sweep's `seed` and the cell, so
    resumed and sharded sweeps agree."""
    return seeds.streams(seed, kx % size, ky % size)


def train_directions(arch: str, cells: Sequence[tuple[int, int]], settings: dict[str, Any], pooling: bool | str = True,
                     stop_after: int | None = None) -> list[dict[str, np.ndarray]]:
    """Train one fresh `arch` network on D(v) for each Fourier direction v of `cells`.

    `settings` holds `n` (train size; the test set is drawn independently with the same size),
    `sigma`, `eps`, `kind`, `size`, `seed`, `device` and the recipe `epochs`, `max_lr`,
    `momentum`, `weight_decay`, `batch_size` (numbers, or dicts by architecture) and `normalize`
    (default False: raw inputs, as the authors). The
    networks train together with `nadcore.train.fit_many`. Returns one dict of arrays per cell:
    `train_acc`, `test_acc` (percent) and `loss_history` (the loss of every SGD step);
    `stop_after=k`: the first k steps only, not evaluated (`train.fit`), to replay a stored cell's start.
    """
    s, size = settings, settings.get("size", 32)
    recipe = train.Recipe.from_settings(s, arch)
    streams = [cell_streams(s["seed"], kx, ky, size) for kx, ky in cells]
    vs = fourier.Grid(tuple(range(-(size // 2), (size + 1) // 2)), size).directions(cells, s.get("kind", "sin"))
    datasets, nets = [], []
    for v, st in zip(vs, streams):
        datasets.append(tuple(data.directional_dataset(v, s["n"], s["sigma"], s["eps"], seed=seed, device=s["device"])
                              for seed in (st.train, st.test)))
        torch.manual_seed(st.init)
        nets.append(models.build(arch, pooling=pooling))
    out = train.fit_many(nets, datasets, recipe, device=s["device"], seeds=[st.shuffle for st in streams],
                         stop_after=stop_after)
    return [{k: np.asarray(getattr(r, k)) for k in ("train_acc", "test_acc", "loss_history")
             if getattr(r, k) is not None} for r in out]


def sweep_directions(archs: Sequence[str], grid: fourier.Grid, settings: dict[str, Any], results_dir: str | Path,
                     pooling: bool | str = True, name: str = "fourier", batch: int = 32, shard: int = 0,
                     num_shards: int = 1, progress: bool = True, only: Sequence[Sequence[int]] | None = None,
                     ) -> dict[str, dict[tuple[int, int], dict[str, np.ndarray]]]:
    """Figs. 1-3: train every architecture of `archs` on D(v) for each direction of `grid.half()`
    (or of its cells `only`, a list of (kx, ky)).

    A resumable, shardable `nadcore.sweeps.sweep` (one stored file per cell). `settings` as in
    `train_directions`. Returns `{arch: {(kx, ky): {"train_acc", "test_acc", "loss_history"}}}`
    for this shard's cells; `Grid.image` fills the other half of the grid by symmetry.
    """
    cells = sweep_cells(archs, grid, pooling, only)

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


def replicate_settings(settings: Mapping[str, Any], r: int) -> dict[str, Any]:
    """`settings` of replicate `r` of a sweep: its seed `seeds.replicate(settings["seed"], r)` (replicate
    0 is the sweep itself), so each seed's cells are cells of their own in the store."""
    return {**settings, "seed": seeds.replicate(settings["seed"], r)}


def sweep_seeds(archs: Sequence[str], grid: fourier.Grid, settings: dict[str, Any], results_dir: str | Path,
                num_seeds: int = 1, **kwargs: Any) -> list[dict[str, dict[tuple[int, int], dict[str, np.ndarray]]]]:
    """`sweep_directions` for `num_seeds` replicates (`replicate_settings`): a list of their tables,
    replicate 0 first. `kwargs` as for `sweep_directions`."""
    checks.integer("num_seeds", num_seeds, 1, catalog.MAX_SEEDS)
    return [sweep_directions(archs, grid, replicate_settings(settings, r), results_dir, **kwargs)
            for r in range(num_seeds)]


def seed_mean(tables: Iterable[Mapping[str, Mapping[tuple[int, int], Mapping[str, Any]]]], key: str = "test_acc",
              ) -> tuple[dict[str, dict[tuple[int, int], float]], dict[str, dict[tuple[int, int], float]]]:
    """`({arch: {(kx, ky): mean}}, {arch: {(kx, ky): spread}})` of one stored scalar over the tables of
    `sweep_seeds` (the spread is the standard deviation over seeds, ddof 1; 0 for one seed)."""
    values = [per_cell(t, key) for t in tables]
    mean, spread = {}, {}
    for arch, cells in values[0].items():
        stack = {c: [v[arch][c] for v in values if c in v.get(arch, {})] for c in cells}
        mean[arch] = {c: float(np.mean(x)) for c, x in stack.items()}
        spread[arch] = {c: float(np.std(x, ddof=1)) if len(x) > 1 else 0.0 for c, x in stack.items()}
    return mean, spread


def sweep_cells(archs: Iterable[str], grid: fourier.Grid, pooling: bool | str = True,
                only: Sequence[Sequence[int]] | None = None) -> list[dict[str, Any]]:
    """The cells of a Figs. 1-3 sweep: one per architecture and canonical frequency of `grid` (those
    of `only`, a list of canonical (kx, ky) of the grid, if given)."""
    half = grid.half()
    if only is not None and (bad := [c for c in map(tuple, only) if c not in half]):
        raise InputError(f"only must hold canonical cells of the grid (Grid.half()); got {bad}")
    keep = half if only is None else [c for c in half if c in set(map(tuple, only))]
    return [{"arch": a, "pooling": pooling, "kx": kx, "ky": ky} for a in archs for kx, ky in keep]


def stored_directions(archs: Iterable[str], grid: fourier.Grid, settings: dict[str, Any], results_dir: str | Path,
                      pooling: bool | str = True, name: str = "fourier", only: Sequence[Sequence[int]] | None = None,
                      ) -> tuple[dict[str, dict[tuple[int, int], dict[str, np.ndarray]]],
                                 dict[str, list[dict[str, Any]]]]:
    """The table of `sweep_directions` for the cells already stored (a results bundle); computes
    nothing. Returns `{arch: {(kx, ky): arrays}}` and the records `{arch: [record, ...]}`."""
    cells = sweep_cells(archs, grid, pooling, only)
    found = sweeps.stored(name, cells, settings, results_dir)
    table, records = {}, {}
    for i, r in found.items():
        c = cells[i]
        table.setdefault(c["arch"], {})[(c["kx"], c["ky"])] = dict(r.arrays)
        records.setdefault(c["arch"], []).append(r.record)
    return table, records


def sweep_settings(preset: presets.Fourier, seed: int, device: str | torch.device,
                   **overrides: Any) -> dict[str, Any]:
    """The settings `sweep_directions` stores with each cell, from a `presets.preset("fourier", ...)`."""
    keys = ("n", "sigma", "eps", "kind", "epochs", "max_lr", "momentum", "weight_decay", "batch_size")
    return versions.stamp({**{k: getattr(preset, k) for k in keys}, "normalize": False, "size": 32,
                           "seed": int(seed), "device": str(device), **overrides}, "fourier_cell")


def fig2_settings(settings: Mapping[str, Any], fig2: presets.Fig2) -> dict[str, Any]:
    """Fig. 2's cell settings: Fig. 1's `settings` (`sweep_settings`) at `fig2`'s sample size, noise and epochs."""
    return {**settings, "n": fig2.n, "sigma": fig2.sigma, "epochs": fig2.epochs}


def per_cell(table: Mapping[str, Mapping[tuple[int, int], Mapping[str, Any]]],
             key: str = "test_acc") -> dict[str, dict[tuple[int, int], float]]:
    """`{arch: {(kx, ky): value}}` of one stored scalar (e.g. `test_acc`) of a `sweep_directions` table."""
    return {a: {c: float(r[key]) for c, r in cells.items()} for a, cells in table.items()}


def iterations_to_loss(table: Mapping[str, Mapping[tuple[int, int], Mapping[str, Any]]], threshold: float,
                       window: int = 1) -> dict[str, dict[tuple[int, int], int]]:
    """Fig. 2: `{arch: {(kx, ky): iterations}}` until the training loss falls below `threshold`."""
    return {a: {c: train.iterations_to_loss(r["loss_history"], threshold, window) for c, r in cells.items()}
            for a, cells in table.items()}


def run_iterations(table: Mapping[str, Mapping[tuple[int, int], Mapping[str, Any]]]) -> int:
    """The SGD iterations of the runs of a `sweep_directions` table (its longest loss history)."""
    return max(len(r["loss_history"]) for cells in table.values() for r in cells.values())


def reached(iterations: Mapping[str, Mapping[tuple[int, int], int]], limit: int) -> dict[str, tuple[int, int]]:
    """`{arch: (cells whose loss fell below the threshold within `limit` iterations, cells)}` of Fig. 2."""
    return {a: (sum(v <= limit for v in cells.values()), len(cells)) for a, cells in iterations.items()}


def speed_and_accuracy(iterations: Mapping[tuple[int, int], int], limit: int,
                       accuracy: Mapping[tuple[int, int], float]) -> dict[str, float]:
    """Fig. 2 beside Fig. 1 for one network: `{"spearman", "reached", "missed"}`, the Spearman
    correlation over the directions of `iterations` ({cell: SGD iterations to the threshold}) between
    the fitting speed (minus the iterations; a run that never got there counts as `limit + 1`) and
    the test accuracy `accuracy` ({cell: %}), and the mean accuracy of the directions fitted within
    `limit` iterations and of the others (nan where there are none)."""
    cells = sorted(iterations)
    missing = [c for c in cells if c not in accuracy]
    if missing:
        raise InputError(f"accuracy must hold every direction of iterations; missing {missing[:3]}")
    from scipy import stats  # here, not at import: scipy.stats takes seconds to import
    its = np.array([min(iterations[c], limit + 1) for c in cells])
    acc = np.array([accuracy[c] for c in cells], dtype=float)
    mean = lambda a: float(a.mean()) if a.size else float("nan")   # noqa: E731
    return {"spearman": float(stats.spearmanr(-its, acc)[0]), "reached": mean(acc[its <= limit]),
            "missed": mean(acc[its > limit])}


class ChapterRun(NamedTuple):
    """Figs. 1-3 computed at one scale (the page's "Run this chapter yourself"): each figure's grid and
    `{arch: {(kx, ky): value}}` tables: Fig. 1's test and train accuracy (%, the seeds' mean), Fig. 2's SGD
    iterations until the loss falls below `threshold` within `limit` iterations, Fig. 3's test accuracy
    without pooling."""
    grid1: fourier.Grid
    fig1: dict[str, dict[tuple[int, int], float]]
    train1: dict[str, dict[tuple[int, int], float]]
    grid2: fourier.Grid
    iterations: dict[str, dict[tuple[int, int], int]]
    threshold: float
    limit: int
    grid3: fourier.Grid
    fig3: dict[str, dict[tuple[int, int], float]]


def chapter_results(preset: presets.Fourier, seed: int, device: str | torch.device, results_dir: str | Path,
                    num_seeds: int = 1, shard: int = 0, num_shards: int = 1, progress: bool = False) -> ChapterRun:
    """Figs. 1-3 of `preset` (`presets.preset("fourier", scale, overrides)`), each cell stored under
    `results_dir/fourier` (resumed, or only shard `shard` of `num_shards`); Fig. 1 over `num_seeds` seeds."""
    from pathlib import Path

    dev, results = resolve(device), Path(results_dir) / "fourier"
    q, r = preset.fig2, preset.fig3
    grids = [fourier.make_grid(g) for g in (preset.grid, q.grid, r.grid)]
    settings = sweep_settings(preset, seed, dev)

    runs = sweep_seeds(preset.archs, grids[0], settings, results, num_seeds, name="fig1", shard=shard,
                       num_shards=num_shards, progress=progress)

    def sweep(archs, grid, settings, name, pooling=True):
        return sweep_directions(archs, grid, settings, results, pooling, name, shard=shard, num_shards=num_shards,
                                progress=progress)

    fig2 = sweep(q.archs, grids[1], fig2_settings(settings, q), "fig2")
    fig3 = sweep(r.archs, grids[2], settings, "fig3", pooling=False)
    return ChapterRun(grids[0], seed_mean(runs)[0], seed_mean(runs, "train_acc")[0], grids[1],
                      iterations_to_loss(fig2, q.threshold, q.window), q.threshold, run_iterations(fig2),
                      grids[2], per_cell(fig3, "test_acc"))
