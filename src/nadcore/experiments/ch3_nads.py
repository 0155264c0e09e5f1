"""Chapter 3 (paper Sec. 3, Figs. 5-6): the NADs the chapters use (`load_nads`: stored with the
same settings, else estimated) and Fig. 6, networks trained on D(u_i) for NAD indices i. The
estimators are `nadcore.nads`."""

import numpy as np
import torch

from nadcore import models as registry
from nadcore import store, sweeps, versions
from nadcore.data import directional_dataset
from nadcore.device import resolve
from nadcore.fourier import fourier_energy, low_band
from nadcore.nads import (
    NADResult,
    _network,
    _with_pooling,
    compare,
    compiled_secant_gradient,
    estimate,
    eval_point_for,
    first_linear_layer,
    nad_settings,
    result_path,
    secant_gradient,
)
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
    """The file in `results_dir/nads/` holding NADs made with exactly `settings` (seed, step,
    evaluation point, method, N, precision, version), or None: no other estimate stands in."""
    path = result_path(arch, settings, results_dir)
    return path if store.matches(path, settings) else None


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
    out = fit_many(nets, datasets, recipe, device=device, seeds=fit_seeds, progress=progress)
    return np.array([r["test_acc"] for r in out])


def fig6_settings(arch, nads, settings, device, pooling=True):
    """The settings `fig6_sweep` stores with each cell (see there)."""
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    kind = resolve(device).type if device == "auto" else torch.device(device).type   # a key: any device named here
    return versions.stamp(_with_pooling({**settings, "arch": arch, "nads": store.fingerprint(rows),
                                         "device": kind}, pooling), "fig6_cell")


def fig6_sweep(arch, nads, indices, settings, results_dir, device="auto", batch=32, shard=0, num_shards=1,
               progress=True, only_stored=False, pooling=True):
    """Fig. 6 as a resumable, shardable sweep (`nadcore.sweeps`): one stored cell per NAD index.

    `settings` holds `n_train`, `sigma`, `eps`, `epochs`, `max_lr`, `seed` and optional recipe
    keys of `accuracy_on_nads`; the stored settings add the fingerprint of the NAD basis, the device
    type (and `pooling` unless it is the published True) and the `versions` stamp. Returns
    `{index: test accuracy}` for this shard's indices (with `only_stored`, for the indices already
    stored, computing nothing).
    """
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    dev = device if only_stored else resolve(device)   # stored cells: only their key, no device needed
    shared = fig6_settings(arch, rows, settings, dev, pooling)
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


def secant_vs_autograd(archs, results_dir, scale, networks, ks, seed=0, device="auto", progress=True, names=None):
    """For each of `archs`: the subspace overlaps (`nads.compare`, for each k of `ks`) of the
    preset's secant NADs at `scale` and exact-gradient NADs from `networks` networks, keyed by a
    label naming both estimates and the architecture (as `names[arch]`, e.g. `plots.style.LABELS`;
    `load_nads` stores or reads both)."""
    curves = {}
    for arch in archs:
        sec = load_nads(arch, results_dir, scale, method="secant", seed=seed, device=device, progress=progress)
        aut = load_nads(arch, results_dir, scale, method="autograd", num_networks=networks, seed=seed,
                        device=device, progress=progress)
        label = (f"{(names or {}).get(arch, arch)}: secant (N={sec.settings['num_networks']}) vs autograd "
                 f"(N={aut.settings['num_networks']})")
        curves[label] = compare(sec, aut, ks)
    return curves


def rank_limit(result):
    """The rank of the sample covariance behind `result`: at most N - 1 (mean-centred, N networks)
    and at most D; eigenvalues past it are rounding noise."""
    return min(int(result.settings["num_networks"]) - 1, int(np.prod(result.settings["input_shape"])))


def numerical_rank(eigenvalues, rtol=1e-12):
    """How many of `eigenvalues` (decreasing) exceed `rtol` times the first: the rank of a covariance
    whose true rank is below `rank_limit` (e.g. a network that sees only part of its input)."""
    vals = np.asarray(eigenvalues, dtype=np.float64)
    return int((vals > rtol * vals[0]).sum())


def low_frequency_share(result, count=3, band=4):
    """Share of the Fourier energy (`fourier_energy`) of each of the first `count` NADs at the
    frequencies with max(|kx|, |ky|) <= `band` (zero frequency included): array (count,)."""
    energy = fourier_energy(result.images(count))
    size = energy.shape[-1]
    low = low_band(size, band)
    return energy[:, low].sum(-1) / energy.sum((-2, -1))


def fig6_rows(ours, curve):
    """Fig. 6, ours beside the published curve, at our indices: rows `(index, ours, published)`;
    `published` is interpolated between the indices the authors trained (`curve["measured"]`),
    None past their last index."""
    m = curve["measured"]
    last = int(curve["index"][m].max())
    pub = lambda i: float(np.interp(i, curve["index"][m], curve["accuracy"][m])) if i <= last else None
    return [(int(i), float(ours[i]), pub(i)) for i in sorted(ours)]


def first_at_chance(indices, accuracy, margin=2.0):
    """The first of `indices` whose accuracy is within `margin` points of chance (50 %), or None."""
    return next((int(i) for i, a in zip(indices, accuracy) if a is not None and a <= 50 + margin), None)


def precision_cosines(arch, count, seed=0, device="cpu"):
    """What the bundle's secant precision does to each network's gradient: for networks `0 .. count - 1`
    of `arch` (those of every estimate with `seed`), the cosine of the bfloat16 secant gradient, eager
    (`nadcore.nads.secant_gradient`) and compiled (`compiled_secant_gradient`), with the float32 one.
    Returns `{"eager": (count,), "compiled": (count,)}`."""
    dev = resolve(device)
    factory = lambda: registry.build(arch, num_classes=1)
    x0 = eval_point_for(seed, (1, 32, 32)).to(dev)
    cos = lambda a, b: float(torch.nn.functional.cosine_similarity(a, b, dim=0))
    out = {"eager": [], "compiled": []}
    for i in range(count):
        net = _network(factory, seed, i, dev)
        layer = first_linear_layer(net, x0)
        g32 = secant_gradient(net, x0, 100.0, layer)
        g16 = secant_gradient(net.to(memory_format=torch.channels_last), x0, 100.0, layer, "bfloat16")
        out["eager"].append(cos(g32, g16))
        out["compiled"].append(cos(g32, compiled_secant_gradient(net, x0, 100.0, "bfloat16")))
    return {k: np.array(v) for k, v in out.items()}


def precision_overlaps(arch, n, ks, seed=0, device="cpu", results_dir=None, progress=False):
    """Leading-k overlaps (`compare`, for each k of `ks`) of the compiled bfloat16 secant estimate of `n`
    networks with the float32 one of the same networks (`compiled`), beside two disjoint float32
    estimates of n/2 networks each (`floor`: the Monte-Carlo agreement bfloat16 has to stay above)."""
    kw = dict(device=device, seed=seed, results_dir=results_dir, progress=progress)
    fp32 = estimate(arch, n, **kw)
    compiled = estimate(arch, n, precision="bfloat16", compiled=True, **kw)
    halves = [estimate(arch, n // 2, first=f, **kw) for f in (0, n // 2)]
    return {"compiled": compare(fp32, compiled, ks), "floor": compare(*halves, ks)}

