"""Chapter 3 (paper Sec. 3, Figs. 5-6): the NADs the chapters use (`load_nads`, stored or
committed, else estimated) and Fig. 6, networks trained on D(u_i) for NAD indices i. The
estimators are `nadcore.nads`."""

import numpy as np
import torch

from nadcore import models as registry
from nadcore import store, sweeps
from nadcore.data import directional_dataset
from nadcore.device import resolve
from nadcore.nads import NADResult, _with_pooling, artifact_path, compare, estimate, nad_settings, result_path
from nadcore.presets import preset
from nadcore.seeds import streams
from nadcore.train import Recipe, fit_many


def resolve_request(arch, scale="smoke", method=None, num_networks=None, seed=0):
    """The settings of the NADs `load_nads` will use: `method` and `num_networks` default to the
    `nads` preset of `scale` for `arch`. Resolves presets only (the run plan uses it)."""
    if arch not in registry.names():
        raise ValueError(f"arch must be one of {', '.join(registry.names())}; got {arch!r}")
    p = preset("nads", scale)
    method = method or p["methods"].get(arch, "secant")
    n = int(num_networks or p["num_networks"].get(arch, p["num_networks"]["default"]))
    return nad_settings(arch, n, method, seed=seed)


def find_stored(arch, settings, results_dir):
    """The file holding NADs made with `settings`: in `results_dir/nads/`, else the committed
    artifact if made with the same method and at least as many networks; None if neither."""
    path = result_path(arch, settings, results_dir)
    if store.matches(path, settings):
        return path
    art = artifact_path(arch)
    if art.exists():
        made = store.load(art).settings
        if made["method"] == settings["method"] and made["num_networks"] >= settings["num_networks"]:
            return art
    return None


def load_nads(arch, results_dir="../results", scale="smoke", method=None, num_networks=None, seed=0,
              device="auto", progress=True):
    """The NADs of a registry architecture for the chapters that use them (`resolve_request`
    gives their settings): stored in `results_dir/nads/` or committed (`find_stored`), else
    estimated (chunks stored in `results_dir/nad_chunks/`) and stored."""
    settings = resolve_request(arch, scale, method, num_networks, seed)
    found = find_stored(arch, settings, results_dir)
    if found is not None:
        return NADResult.load(found)
    result = estimate(arch, settings["num_networks"], method=settings["method"], device=device, seed=seed,
                      results_dir=results_dir, progress=progress)
    result.save(result_path(arch, settings, results_dir))
    return result


def accuracy_on_nads(arch, nads, indices, n_train, sigma=3.0, eps=1.0, epochs=20, max_lr=0.5, seed=0,
                     device="auto", progress=True, pooling=True, **recipe):
    """Fig. 6: test accuracy (percent) of `arch` trained on D(u_i) for each NAD index i in `indices`.

    `nads` holds directions as rows (a `NADResult`'s `.nads`, or its `.images()`); the train and
    test sets have `n_train` samples each; the training recipe is `nadcore.train`'s (SGD, linear
    decay, clipping 0.5, batch 128; `recipe` overrides e.g. `momentum`, `batch_size`, `schedule`),
    one network per index (built with `pooling`, see `models.build`), trained together with `fit_many`.
    """
    recipe = Recipe(epochs, max_lr, **recipe)
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    rows = rows.reshape(rows.shape[0], -1)
    indices = [int(i) for i in indices]
    if not indices or min(indices) < 0 or max(indices) >= rows.shape[0]:
        raise ValueError(f"indices must be NAD indices in [0, {rows.shape[0] - 1}]; got {indices!r}")
    datasets, nets, fit_seeds = [], [], []
    for i in indices:                     # index i's data, network and shuffling depend on (seed, i) only
        v = torch.from_numpy(rows[i]).reshape(1, 32, 32)
        st = streams(seed, i)
        datasets.append(tuple(directional_dataset(v, n_train, sigma, eps, seed=s) for s in (st.train, st.test)))
        torch.manual_seed(st.init)
        nets.append(registry.build(arch, in_channels=1, num_classes=2, pooling=pooling))
        fit_seeds.append(st.shuffle)
    out = fit_many(nets, datasets, **recipe.kwargs(), device=device, seeds=fit_seeds, progress=progress)
    return np.array([r["test_acc"] for r in out])


def fig6_sweep(arch, nads, indices, settings, results_dir, device="auto", batch=32, shard=0, num_shards=1,
               progress=True, only_stored=False, pooling=True):
    """Fig. 6 as a resumable, shardable sweep (`nadcore.sweeps`): one stored cell per NAD index.

    `settings` holds `n_train`, `sigma`, `eps`, `epochs`, `max_lr`, `seed` and optional recipe
    keys of `accuracy_on_nads`; the stored settings add the fingerprint of the NAD basis and the
    device type (and `pooling` unless it is the published True). Returns `{index: test accuracy}`
    for this shard's indices (with `only_stored`, for the indices already stored, computing nothing).
    """
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    dev = resolve(device)
    shared = _with_pooling({**settings, "arch": arch, "nads": store.fingerprint(rows), "device": dev.type}, pooling)
    cells = [{"index": int(i)} for i in indices]
    kw = {k: v for k, v in settings.items() if k != "seed"}

    def compute(group):
        acc = accuracy_on_nads(arch, rows, [c["index"] for c in group], seed=settings["seed"], device=dev,
                               progress=False, pooling=pooling, **kw)
        return [{"test_acc": np.float64(a)} for a in acc]

    mine = cells[shard::num_shards]
    if only_stored:
        found = sweeps.stored(f"fig6_{arch}", mine, shared, results_dir)
        return {mine[i]["index"]: float(r["test_acc"]) for i, r in found.items()}
    results = sweeps.sweep(f"fig6_{arch}", cells, compute, shared, results_dir, batch=batch, shard=shard,
                           num_shards=num_shards, progress=progress)
    return {c["index"]: float(r["test_acc"]) for c, r in zip(mine, results)}


def secant_vs_autograd(archs, results_dir, scale, networks, ks, seed=0, device="auto", progress=True):
    """For each of `archs`: the subspace overlaps (`nads.compare`, for each k of `ks`) of the
    preset's secant NADs at `scale` and exact-gradient NADs from `networks` networks, keyed by a
    label naming both estimates (`load_nads` stores or reads both)."""
    curves = {}
    for arch in archs:
        sec = load_nads(arch, results_dir, scale, method="secant", seed=seed, device=device, progress=progress)
        aut = load_nads(arch, results_dir, scale, method="autograd", num_networks=networks, seed=seed,
                        device=device, progress=progress)
        label = f"{arch}: secant (N={sec.settings['num_networks']}) vs autograd (N={aut.settings['num_networks']})"
        curves[label] = compare(sec, aut, ks)
    return curves
