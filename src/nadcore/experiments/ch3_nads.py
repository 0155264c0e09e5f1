"""Chapter 3 (paper Sec. 3, Figs. 5-6): the NADs the chapters use (`load_nads`: stored with the
same settings, else estimated) and Fig. 6, networks trained on D(u_i) for NAD indices i. The
estimators are `nadcore.nads`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch

from nadcore import models as registry
from nadcore import store, sweeps, versions
from nadcore.checks import InputError
from nadcore.data import directional_dataset
from nadcore.device import resolve
from nadcore.fourier import fourier_energy, low_band
from nadcore.nads import (
    EstimateSettings,
    NADResult,
    compare,
    compiled_secant_gradient,
    convergence,
    estimate,
    eval_point_for,
    first_linear_layer,
    load_or_estimate,
    network,
    one_output_factory,
    result_path,
    secant_gradient,
    subspace_overlaps,
    with_pooling,
)
from nadcore.presets import as_dict, preset
from nadcore.seeds import streams
from nadcore.train import Recipe, fit_many

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from numpy.typing import ArrayLike

    from nadcore import published as published_


def resolve_estimate(arch: str, scale: str = "smoke", method: str | None = None, num_networks: int | None = None,
                     seed: int = 0) -> EstimateSettings:
    """How `load_nads` estimates the NADs of `arch`: `method` and `num_networks` default to the `nads` preset of
    `scale` for `arch` (and so do the eigen steps' threads). Resolves presets only (the run plan uses it)."""
    if arch not in registry.names():
        raise InputError(f"arch must be one of {', '.join(registry.names())}; got {arch!r}")
    p = preset("nads", scale)
    method = method or p.methods.get(arch, "secant")
    n = int(num_networks or p.num_networks.get(arch, p.num_networks["default"]))
    return EstimateSettings(method, seed=seed, eig_threads=p.eig_threads, num_networks=n)


def resolve_request(arch: str, scale: str = "smoke", method: str | None = None, num_networks: int | None = None,
                    seed: int = 0) -> dict[str, Any]:
    """The settings record of the NADs `load_nads` will use (`resolve_estimate`'s, as the store keys them)."""
    return resolve_estimate(arch, scale, method, num_networks, seed).result_settings(arch)


def find_stored(arch: str, settings: dict[str, Any], results_dir: str | Path) -> Path | None:
    """The file in `results_dir/nads/` holding NADs made with exactly `settings` (seed, step,
    evaluation point, method, N, precision, version), or None: no other estimate stands in."""
    path = result_path(arch, settings, results_dir)
    return path if store.matches(path, settings) else None


def load_nads(arch: str, results_dir: str | Path = "../results", scale: str = "smoke", method: str | None = None,
              num_networks: int | None = None, seed: int = 0, device: str | torch.device = "auto",
              progress: bool = True) -> NADResult:
    """The NADs of a registry architecture for the chapters that use them (`resolve_request`
    gives their settings): stored in `results_dir/nads/` or committed (`find_stored`), else
    estimated (chunks stored in `results_dir/nad_chunks/`) and stored."""
    s = resolve_estimate(arch, scale, method, num_networks, seed)
    return load_or_estimate(arch, s, results_dir, device=device, progress=progress)


def accuracy_on_nads(arch: str, nads: NADResult | np.ndarray, indices: Iterable[int], n_train: int,
                     sigma: float = 3.0, eps: float = 1.0, epochs: int = 20, max_lr: float = 0.5, seed: int = 0,
                     device: str | torch.device = "auto", progress: bool = True, pooling: bool | str = True,
                     stack: int | None = None, linearised: bool = False, **recipe) -> np.ndarray:
    """Fig. 6: test accuracy (percent) of `arch` trained on D(u_i) for each NAD index i in `indices`.

    `nads` holds directions as rows (a `NADResult`'s `.nads`, or its `.images()`); the train and
    test sets have `n_train` samples each; the training recipe is `nadcore.train`'s (SGD, linear
    decay, clipping 0.5, batch 128; `recipe` overrides e.g. `momentum`, `batch_size`, `schedule`),
    one network per index (built with `pooling`, see `models.build`), trained together with `fit_many`,
    `stack` at a time (its `chunk`; None: as many as fit, `stacked.chunk_size`). `linearised`: each network is
    replaced by its linearisation at initialisation (`models.Linearised`, trained one at a time).
    """
    recipe = Recipe(epochs, max_lr, **recipe)
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    rows = rows.reshape(rows.shape[0], -1)
    indices = [int(i) for i in indices]
    if not indices or min(indices) < 0 or max(indices) >= rows.shape[0]:
        raise InputError(f"indices must be NAD indices in [0, {rows.shape[0] - 1}]; got {indices!r}")
    datasets, nets, fit_seeds = [], [], []
    for i in indices:                     # index i's data, network and shuffling depend on (seed, i) only
        v = torch.from_numpy(rows[i]).reshape(1, 32, 32)
        st = streams(seed, i)
        datasets.append(tuple(directional_dataset(v, n_train, sigma, eps, seed=s) for s in (st.train, st.test)))
        torch.manual_seed(st.init)
        net = registry.build(arch, in_channels=1, num_classes=2, pooling=pooling)
        nets.append(registry.Linearised(net) if linearised else net)
        fit_seeds.append(st.shuffle)
    out = fit_many(nets, datasets, recipe, device=device, seeds=fit_seeds, progress=progress, chunk=stack)
    return np.array([r.test_acc for r in out])


def fig6_settings(arch: str, nads: NADResult | np.ndarray, settings: Mapping[str, Any], device: str | torch.device,
                  pooling: bool | str = True) -> dict[str, Any]:
    """The settings `fig6_sweep` stores with each cell (see there)."""
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    kind = resolve(device).type if device == "auto" else torch.device(device).type   # a key: any device named here
    return versions.stamp(with_pooling({**settings, "arch": arch, "nads": store.fingerprint(rows),
                                         "device": kind}, pooling), "fig6_cell")


def fig6_sweep(arch: str, nads: NADResult | np.ndarray, indices: Iterable[int], settings: dict[str, Any],
               results_dir: str | Path, device: str | torch.device = "auto", batch: int = 32, shard: int = 0,
               num_shards: int = 1, progress: bool = True, only_stored: bool = False,
               pooling: bool | str = True) -> dict[int, float]:
    """Fig. 6 as a resumable, shardable sweep (`nadcore.sweeps`): one stored cell per NAD index.

    `settings` holds `n_train`, `sigma`, `eps`, `epochs`, `max_lr`, `seed` and optional recipe
    keys of `accuracy_on_nads`; the stored settings add the fingerprint of the NAD basis, the device
    type (and `pooling` unless it is the published True) and the `versions` stamp. Returns
    `{index: test accuracy}` for this shard's indices (with `only_stored`, for the indices already
    stored, computing nothing). The networks of `batch` indices train together (`stack` if the
    settings name one).
    """
    rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    batch = settings.get("stack") or batch      # the networks trained together: one stored batch
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


def secant_vs_autograd(archs: Iterable[str], results_dir: str | Path, scale: str, networks: int, ks: Sequence[int],
                       seed: int = 0, device: str | torch.device = "auto", progress: bool = True,
                       names: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """For each of `archs`: the subspace overlaps (`nads.compare`, for each k of `ks`) of the
    preset's secant NADs at `scale` and exact-gradient NADs from `networks` networks, keyed by a
    label naming both estimates and the architecture (as `names[arch]`, e.g. `plots.style.LABELS`;
    `load_nads` stores or reads both)."""
    curves = {}
    for arch in archs:
        sec = load_nads(arch, results_dir, scale, method="secant", seed=seed, device=device, progress=progress)
        aut = load_nads(arch, results_dir, scale, method="autograd", num_networks=networks, seed=seed,
                        device=device, progress=progress)
        label = (f"{(names or {}).get(arch, arch)}: secant (N={sec.num_networks}) vs autograd "
                 f"(N={aut.num_networks})")
        curves[label] = compare(sec, aut, ks)
    return curves


def rank_limit(result: NADResult) -> int:
    """The rank of the sample covariance behind `result`: at most N - 1 (mean-centred, N networks)
    and at most D; eigenvalues past it are rounding noise. The Hessian's (a sum of N Gram matrices, not
    mean-centred) may reach D."""
    D = int(np.prod(result.settings["input_shape"]))
    return D if result.settings.get("method") == "hessian" else min(result.num_networks - 1, D)


def numerical_rank(eigenvalues: ArrayLike, rtol: float = 1e-12) -> int:
    """How many of `eigenvalues` (decreasing) exceed `rtol` times the first: the rank of a covariance
    whose true rank is below `rank_limit` (e.g. a network that sees only part of its input)."""
    vals = np.asarray(eigenvalues, dtype=np.float64)
    return int((vals > rtol * vals[0]).sum())


def low_frequency_share(result: NADResult, count: int = 3, band: int = 4) -> np.ndarray:
    """Share of the Fourier energy (`fourier_energy`) of each of the first `count` NADs at the
    frequencies with max(|kx|, |ky|) <= `band` (zero frequency included): array (count,)."""
    energy = fourier_energy(result.images(count))
    size = energy.shape[-1]
    low = low_band(size, band)
    return energy[:, low].sum(-1) / energy.sum((-2, -1))


def fig6_rows(ours: Mapping[int, float], curve: published_.Fig6Curve) -> list[tuple[int, float, Any]]:
    """Fig. 6, ours beside the published curve, at our indices: rows `(index, ours, published)`;
    `published` is interpolated between the indices the authors trained (`curve["measured"]`),
    None past their last index."""
    m = curve.measured
    last = int(curve.index[m].max())
    pub = lambda i: float(np.interp(i, curve.index[m], curve.accuracy[m])) if i <= last else None
    return [(int(i), float(ours[i]), pub(i)) for i in sorted(ours)]


def first_at_chance(indices: Iterable[int], accuracy: Iterable[float | None], margin: float = 2.0) -> int | None:
    """The first of `indices` whose accuracy is within `margin` points of chance (50 %), or None."""
    return next((int(i) for i, a in zip(indices, accuracy) if a is not None and a <= 50 + margin), None)


def precision_cosines(arch: str, count: int, seed: int = 0,
                      device: str | torch.device = "cpu") -> dict[str, np.ndarray]:
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
        net = network(factory, seed, i, dev)
        layer = first_linear_layer(net, x0)
        g32 = secant_gradient(net, x0, 100.0, layer)
        g16 = secant_gradient(net.to(memory_format=torch.channels_last), x0, 100.0, layer, "bfloat16")  # ty: ignore[no-matching-overload]
        out["eager"].append(cos(g32, g16))
        out["compiled"].append(cos(g32, compiled_secant_gradient(net, x0, 100.0, "bfloat16")))
    return {k: np.array(v) for k, v in out.items()}


def precision_overlaps(arch: str, n: int, ks: Sequence[int], seed: int = 0, device: str | torch.device = "cpu",
                       results_dir: str | Path | None = None, progress: bool = False,
                       eig_threads: int | None = 1) -> dict[str, np.ndarray]:
    """Leading-k overlaps (`compare`, for each k of `ks`) of the compiled bfloat16 secant estimate of `n`
    networks with the float32 one of the same networks (`compiled`), beside two disjoint float32
    estimates of n/2 networks each (`floor`: the Monte-Carlo agreement bfloat16 has to stay above);
    `eig_threads` as `estimate`'s."""
    s = EstimateSettings(seed=seed, eig_threads=eig_threads, num_networks=n)
    run: dict[str, Any] = dict(device=device, results_dir=results_dir, progress=progress)
    fp32 = estimate(arch, s, **run)
    compiled = estimate(arch, replace(s, precision="bfloat16", compiled=True), **run)
    halves = [estimate(arch, replace(s, num_networks=n // 2, first=f), **run) for f in (0, n // 2)]
    return {"compiled": compare(fp32, compiled, ks), "floor": compare(*halves, ks)}



# ----------------------------------------------------------------------------- the chapter's readings
# Chapter 3's prose, from its results: the numbers it glues and the sentences whose wording depends on
# them. The thresholds come in as arguments (the results page's, `nadcore.verdicts`, pass them).

def complete_runs(runs: Iterable[Mapping[int, float]], indices: Iterable[int]) -> list[Mapping[int, float]]:
    """The runs of `runs` (`[{index: accuracy}, ...]`, one per seed) that hold every one of `indices`:
    a seed counts once all its cells are stored."""
    want = {int(i) for i in indices}
    return [r for r in runs if r and want <= {int(i) for i in r}]


def seed_spread(runs: Iterable[Mapping[int, float]]) -> dict[int, tuple[float, float]]:
    """`{index: (mean, standard deviation)}` over the seeds' `runs` (`[{index: accuracy}, ...]`) at the
    indices every run holds; the deviation with ddof 1, 0 for one run."""
    runs = list(runs)
    if not runs:
        raise InputError("runs must hold at least one run ({index: accuracy}); got none")
    common = sorted(set.intersection(*(set(r) for r in runs)))
    out = {}
    for i in common:
        a = np.array([r[i] for r in runs], dtype=np.float64)
        out[int(i)] = (float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0)
    return out


def curve_difference(ours: Mapping[int, float], curve: published_.Fig6Curve) -> dict[str, float]:
    """Our Fig. 6 accuracies `{index: accuracy}` against a published curve (`fig6_rows`, interpolated), at
    our indices within the published range: `{"mad": mean |difference|, "below": mean of published - ours}`
    in points (below > 0: ours lower)."""
    pairs = [(o, q) for _, o, q in fig6_rows(ours, curve) if q is not None]
    if not pairs:
        raise InputError("ours must hold an index within the published curve's range; got none")
    d = np.array([q - o for o, q in pairs])
    return {"mad": float(np.abs(d).mean()), "below": float(d.mean())}


@dataclass
class Fig6Comparison:
    """Fig. 6 of `arch` (`bundle.fig6_comparison`): `ours` `{index: accuracy}` on our NADs at the stored `settings`
    (Fig. 6's recipe, its `indices`), the `published` curve of `arch` and the `curves` of all four published
    networks; the sigma study's `best_sigma` (None until known) and `ours_best` at it; `deep` `{arch: {index:
    accuracy}}` of the deep networks on their own NADs; `seeds` and `seeds_best` the runs behind `ours` and
    `ours_best` (`with_seed_means`; 1: the one stored run)."""
    arch: str
    ours: dict[int, float]
    published: published_.Fig6Curve
    settings: dict[str, Any]
    indices: list[int]
    curves: dict[str, published_.Fig6Curve]
    best_sigma: float | None = None
    ours_best: dict[int, float] = field(default_factory=dict)
    deep: dict[str, dict[int, float]] = field(default_factory=dict)
    seeds: int = 1
    seeds_best: int = 1


def with_seed_means(f6: Fig6Comparison,
                    seeds: Mapping[float | None, Sequence[Mapping[int, float]]]) -> Fig6Comparison:
    """`f6` with LeNet's run at the published sigma (`ours`) and at the sigma study's best (`ours_best`) replaced
    by the mean over the seeds (`seed_spread`) where `seeds` (`{sigma: [{index: accuracy}, ...]}`, complete runs)
    holds them; `seeds` and `seeds_best` count the runs behind each (1: the one stored run; 0: none)."""
    mean = lambda runs, stored: {i: m for i, (m, _) in seed_spread(runs).items()} if runs else stored   # noqa: E731
    at, best = seeds.get(f6.settings["sigma"]) or [], seeds.get(f6.best_sigma) or []
    return replace(f6, ours=mean(at, f6.ours), ours_best=mean(best, f6.ours_best),
                   seeds=len(at) or int(bool(f6.ours)), seeds_best=len(best) or int(bool(f6.ours_best)))


def fig6_numbers(f6: Fig6Comparison, shown: Iterable[int] = (0, 32, 64, 128),
                 margin: float = 2.0) -> dict[str, float | None]:
    """Fig. 6 of LeNet by name, for the prose (`bundle.fig6_comparison`'s `f6`): `fig6_ours_{i}` and
    `fig6_published_{i}` (interpolated) at each of `shown`, `fig6_best_{i}` (at the sigma study's best,
    where stored), `fig6_chance_ours` and `fig6_chance_{arch}` of each published curve (`first_at_chance`
    within `margin`)."""
    ours, curve, best = f6.ours, f6.published, f6.ours_best
    pub = {i: q for i, _, q in fig6_rows(ours, curve)}
    out = {}
    for i in shown:
        out[f"fig6_ours_{i}"], out[f"fig6_published_{i}"] = float(ours[i]), pub[i]
        if i in best:
            out[f"fig6_best_{i}"] = float(best[i])
    idx = sorted(ours)
    out["fig6_chance_ours"] = first_at_chance(idx, [ours[i] for i in idx], margin)
    for arch, c in f6.curves.items():
        m = c.measured
        out[f"fig6_chance_{arch}"] = first_at_chance(c.index[m], c.accuracy[m], margin)
    return out


def fig6_lenet_reading(f6: Fig6Comparison, tolerance: float, at: int = 128, best_at: int = 32) -> str:
    """The sentence under Fig. 6 of LeNet (`bundle.fig6_comparison`'s `f6`): how our curve at the
    published sigma stands to the published one (follows it when their mean |difference| is at most
    `tolerance` points, else falls faster or stays above; the values at NAD `at`), and what the sigma
    study's best noise level does to the gap (matches, narrows without closing, or not; at `best_at`);
    the mean of `f6.seeds` seeds where `with_seed_means` made it."""
    ours, curve, best, bs = f6.ours, f6.published, f6.ours_best, f6.best_sigma
    pub = {i: q for i, _, q in fig6_rows(ours, curve)}
    d = curve_difference(ours, curve)
    sigma = f6.settings["sigma"]
    if d["mad"] <= tolerance:
        how = f"follows the published one (mean difference {d['mad']:.1f} points)"
    else:
        how = (f"{'falls faster than' if d['below'] > 0 else 'stays above'} the published one "
               f"({ours[at]:.1f} % at NAD {at} against {pub[at]:.1f} %)")
    n = f6.seeds
    mean = f", the mean of {n} seeds," if n > 1 else ""
    text = f"At the published settings (σ = {sigma:g}) our LeNet curve{mean} {how}"
    if best and bs is not None and best_at in best:
        b = curve_difference(best, curve)
        pb = {i: q for i, _, q in fig6_rows(best, curve)}[best_at]
        if b["mad"] <= tolerance:
            then = "it matches"
        elif b["mad"] < d["mad"]:
            then = "the gap narrows without closing"
        else:
            then = "the gap does not narrow"
        text += f"; at σ = {bs:g} {then} ({best[best_at]:.1f} % at NAD {best_at} against {pb:.1f} %)"
    return text + "."


def seeds_phrase(n: int) -> str:
    """"one seed", "2 seeds", ...: `n` seeds in words for the prose."""
    if int(n) < 1:
        raise InputError(f"n must be a positive number of seeds; got {n!r}")
    return "one seed" if int(n) == 1 else f"{int(n)} seeds"


def _accuracies(spread):
    return ", ".join(f"{m:.1f} ± {s:.1f} % at NAD {i}" for i, (m, s) in spread.items())


def deep_fig6_reading(network: str, runs: Sequence[Mapping[int, float]], curve: published_.Fig6Curve,
                      settings: Mapping[str, Any], caption_sigma: float, batch_norm: bool = True) -> str:
    """The paragraph on a deep network's Fig. 6 points along our secant NADs: `runs` the seeds' complete
    runs (`[{index: accuracy}, ...]`), `curve` the published one (`published.fig6`), `settings` their
    training settings (`max_lr`, `sigma`), `caption_sigma` the published noise level; the seeds' mean
    and deviation (`seed_spread`) at each index beside the published value, and the widest gap."""
    spread = seed_spread(runs)
    rows = fig6_rows({i: m for i, (m, _) in spread.items()}, curve)
    measured = set(int(i) for i in np.asarray(curve.index)[curve.measured])
    between = [i for i, _, q in rows if q is not None and i not in measured]
    widest, o, q = max((r for r in rows if r[2] is not None), key=lambda r: abs(r[1] - r[2]))
    trained = f"{network} with batch norm" if batch_norm else network
    text = (f"Our {network} points (open squares in its panel) train {trained} as Chapter 1 does (learning rate "
            f"{settings['max_lr']:g}, σ = {settings['sigma']:g} where the published Fig. 6 has "
            f"{caption_sigma:g}) on our secant NADs of {network}, the mean and standard deviation of "
            f"{seeds_phrase(len(runs))}")
    if batch_norm:
        text += (f"; in eval mode at initialisation batch norm is the identity, so {network} has the same NADs "
                 "with and without it")
    pub = "; ".join(f"{q:.1f} % at NAD {i}" for i, _, q in rows if q is not None)
    text += (f". They reach {_accuracies(spread)}; the published curve {pub}"
             + (f" (at NAD {', '.join(map(str, between))} interpolated between the indices the authors trained)"
                if between else "")
             + f". The widest gap is at NAD {widest}: {abs(o - q):.1f} points "
             + f"{'above' if o > q else 'below'} the published curve.")
    return text


def which_nads_predict(by_method: Mapping[str, Iterable[Mapping[int, float]]], learned: float = 90.0,
                       chance_margin: float = 2.0) -> tuple[str, ...]:
    """Which NAD estimate predicts what a network learns, from its runs along each (`{method: runs}`,
    methods "secant" and "autograd"): an estimate predicts when the network learns its first NAD
    (`learned` % or more) and is at chance (within `chance_margin` of 50 %) at its last index.
    Returns the methods that do, as a tuple in the order of `by_method`."""
    out = []
    for method, runs in by_method.items():
        spread = seed_spread(runs)
        first, last = min(spread), max(spread)
        if spread[first][0] >= learned and abs(spread[last][0] - 50.0) <= chance_margin:
            out.append(method)
    return tuple(out)


ESTIMATE_WORDS = {"secant": "secant", "autograd": "exact-gradient"}


def estimates_reading(panels: Mapping[str, Mapping[str, Sequence[Mapping[int, float]]]], learned: float = 90.0,
                      chance_margin: float = 2.0) -> str:
    """The answer to "which NADs predict learning?" over `panels` `{network: {method: runs}}` (the
    seeds' complete runs along the secant and the exact-gradient NADs): the estimate that predicts for
    every network (`which_nads_predict`), then each network's accuracy on its first NAD along either
    and its span along the exact-gradient ones, with its seeds."""
    if not panels:
        raise InputError("panels must hold at least one network ({network: {method: runs}}); got none")
    answers = {frozenset(which_nads_predict(by, learned, chance_margin)) for by in panels.values()}
    answer = next(iter(answers)) if len(answers) == 1 else None
    head = ("It depends on the network" if answer is None else "Neither estimate" if not answer
            else "Both estimates" if len(answer) > 1 else f"The {ESTIMATE_WORDS[next(iter(answer))]} NADs")
    parts = []
    for name, by in panels.items():
        sec, ex = seed_spread(by["secant"]), seed_spread(by["autograd"])
        lo, hi = min(m for m, _ in ex.values()), max(m for m, _ in ex.values())
        n_sec, n_ex = len(by["secant"]), len(by["autograd"])
        first = f"{sec[min(sec)][0]:.1f} % along its first secant NAD"
        rest = f"{lo:.1f}–{hi:.1f} % along its exact-gradient ones"
        parts.append(f"{name} ({seeds_phrase(n_sec)}) reaches {first} and {rest}" if n_sec == n_ex else
                     f"{name} reaches {first} ({seeds_phrase(n_sec)}) and {rest} ({seeds_phrase(n_ex)})")
    return f"{head}: " + "; ".join(parts) + "."


DIAL_KS = (1, 4, 16, 64)


def secant_dial_table(dial: Mapping[float, Mapping[str, Any]], references: Mapping[str, Any],
                      ks: Iterable[int] = DIAL_KS) -> dict[float, dict[str, dict[int, float]]]:
    """The secant step as a dial: for each step h of `dial` (`bundle.load_secant_dial`, `{h: {"nads",
    "conv", "fig6"}}`), the overlap (`nads.subspace_overlaps`) of its leading-k NADs with each reference
    of `references` (`{name: NADResult or NADs as rows}`, e.g. the exact-gradient and the published
    NADs) at each k of `ks`, its N vs 2N overlap ("N vs 2N") and its Fig. 6 accuracies ("fig6").
    Returns `{h: {name: {k: overlap}, "N vs 2N": {k: overlap}, "fig6": {index: accuracy}}}`."""
    if not dial:
        raise InputError("dial must hold at least one step ({h: {'nads', 'conv', 'fig6'}}); got none")
    missing = [h for h, v in dial.items() if v.get("nads") is None]
    if missing:
        raise ValueError(f"dial holds no NADs at step(s) {', '.join(f'{h:g}' for h in missing)}")
    ks = [int(k) for k in ks]
    fewest = min(len(getattr(u, "nads", u)) for u in (*(v["nads"] for v in dial.values()), *references.values()))
    if not ks or min(ks) < 1 or max(ks) > fewest:
        raise InputError(f"ks must be between 1 and {fewest} (the fewest NADs given); got {ks}")
    out = {}
    for h, v in dial.items():
        row = {name: dict(zip(ks, subspace_overlaps(v["nads"].nads, getattr(ref, "nads", ref), ks).tolist()))
               for name, ref in references.items()}
        row["N vs 2N"] = {k: float(v["conv"][k]) for k in ks if k in (v.get("conv") or {})}
        row["fig6"] = {int(i): float(a) for i, a in sorted(v.get("fig6", {}).items())}
        out[h] = row
    return out


def dial_switch(table: Mapping[float, Mapping[str, Mapping[int, float]]], before: str = "exact gradient",
                after: str = "published", k: int = 1) -> tuple[float, float] | None:
    """Where the dial (`secant_dial_table`) turns the leading-`k` NADs from the reference `before` into
    `after`: `(h, h')`, the last step closer to `before` and the first closer to `after` (overlap at `k`),
    or None if no step is closer to `after` than to `before` after one closer to `before`."""
    steps = sorted(table)
    closer = [table[h][after][k] > table[h][before][k] for h in steps]
    for (h0, c0), (h1, c1) in zip(zip(steps, closer), zip(steps[1:], closer[1:])):
        if not c0 and c1:
            return h0, h1
    return None


def dial_rows(table: Mapping[float, Mapping[str, Mapping[int, float]]], names: Iterable[str],
              ks: Sequence[int] = DIAL_KS) -> tuple[list[list[str]], list[str]]:
    """The dial's details table (`secant_dial_table`), one column per step h: a row per reference of `names`
    and per k of `ks` (the overlap), the N vs 2N overlap at each k, then Fig. 6's accuracy at each NAD index.
    Returns `(rows, columns)` for `plots.page.table` (index: "measure" and "at")."""
    steps = sorted(table)
    indices = sorted({i for row in table.values() for i in row["fig6"]})
    rows = [[f"overlap with {n}" if n != "N vs 2N" else n, f"k = {k}",
             *(f"{table[h][n][k]:.2f}" if k in table[h][n] else "–" for h in steps)]
            for n in (*names, "N vs 2N") for k in ks]
    rows += [["Fig. 6 (%)", f"NAD {i}", *(f"{table[h]['fig6'][i]:.1f}" if i in table[h]["fig6"] else "–"
                                           for h in steps)] for i in indices]
    return rows, ["measure", "at", *(f"h = {h:g}" for h in steps)]


def dial_numbers(table: Mapping[float, Mapping[str, Mapping[int, float]]], before: str = "exact gradient",
                 after: str = "published", ks: Sequence[int] = (1, 16), index: int = 0) -> dict[str, float]:
    """The numbers of the dial's reading (`secant_dial_table`): for each k of `ks`, the steps between which
    the leading-k NADs turn from `before` into `after` ("switch_{k}_from", "switch_{k}_to", `dial_switch`);
    up to the earliest of these ("before_to", every k still closer to `before`), the lowest overlap with
    `before` at k = ks[0] and the highest Fig. 6 accuracy at NAD `index` ("before_overlap",
    "before_accuracy"); from the latest on ("after_from"), the lowest overlap with `after` and the lowest
    accuracy ("after_overlap", "after_accuracy")."""
    out = {}
    for k in ks:
        switch = dial_switch(table, before, after, k)
        if switch is None:
            raise ValueError(f"the dial's leading {k} NADs never turn from {before!r} into {after!r}")
        out[f"switch_{k}_from"], out[f"switch_{k}_to"] = switch
    out["before_to"] = min(out[f"switch_{k}_from"] for k in ks)
    out["after_from"] = max(out[f"switch_{k}_to"] for k in ks)
    low, high = [h for h in table if h <= out["before_to"]], [h for h in table if h >= out["after_from"]]
    out["before_overlap"] = min(table[h][before][ks[0]] for h in low)
    out["before_accuracy"] = max(table[h]["fig6"][index] for h in low)
    out["after_overlap"] = min(table[h][after][ks[0]] for h in high)
    out["after_accuracy"] = min(table[h]["fig6"][index] for h in high)
    return out


def first_layer_flips(steps: Iterable[float], networks: int = 32, pixels: int = 64, arch: str = "lenet",
                      seed: int = 0, pooling: bool | str = True) -> dict[float, dict[str, float]]:
    """How far the secant's probes `x0 +- h e_i` take a network's first layer from x0, for each step h of
    `steps`: over networks 0 .. `networks` - 1 (`nads.network` with `seed`, at its default x0) and `pixels`
    pixels i drawn once from `seed`, the share of the first convolution's units that see pixel i whose ReLU
    changes sign at x0 + h e_i or x0 - h e_i (`relu`), and of the first pooling's windows holding such a unit
    whose maximum moves to another unit (`argmax`; NaN without a max pooling). A difference quotient is a
    gradient while these stay near 0. `arch` must open with a Conv2d and a ReLU. Returns `{h: {"relu": share,
    "argmax": share}}`."""
    import torch.nn.functional as F

    factory, _ = one_output_factory(arch, pooling=pooling)
    x0 = eval_point_for(seed, (1, 32, 32))
    layers = [m for m in network(factory, seed, 0, "cpu").modules() if not list(m.children())][:3]
    if not (isinstance(layers[0], torch.nn.Conv2d) and isinstance(layers[1], torch.nn.ReLU)):
        raise InputError(f"arch must open with a Conv2d and a ReLU (LeNet does); {arch!r} opens with "
                         f"{', '.join(type(m).__name__ for m in layers[:2])}")
    pool = layers[2].kernel_size if isinstance(layers[2], torch.nn.MaxPool2d) else None
    picked = torch.randperm(x0.numel(), generator=torch.Generator().manual_seed(seed))[:pixels]
    eye = torch.zeros(len(picked), x0.numel())
    eye[torch.arange(len(picked)), picked] = 1.0
    eye = eye.reshape(len(picked), *x0.shape)
    counts = {float(h): np.zeros(4) for h in steps}      # flipped, seen; moved maxima, windows seen
    for i in range(networks):
        conv = next(m for m in network(factory, seed, i, "cpu").modules() if isinstance(m, torch.nn.Conv2d))
        with torch.no_grad():
            base = conv(x0[None])
            at0 = F.max_pool2d(base.relu(), pool, return_indices=True)[1] if pool else base
            for h in counts:
                out = conv(torch.cat([x0 + h * eye, x0 - h * eye]))   # +h then -h for each pixel
                seen = (out != base).reshape(2, -1, *out.shape[1:]).any(0)    # the units that see pixel i
                flipped = ((out > 0) != (base > 0)).reshape(2, -1, *out.shape[1:]).any(0)   # on either side
                counts[h][:2] += (seen & flipped).sum().item(), seen.sum().item()
                if pool:
                    _, at = F.max_pool2d(out.relu(), pool, return_indices=True)
                    moved = torch.ne(at, at0).reshape(2, -1, *at.shape[1:]).any(0)
                    touched = F.max_pool2d(seen.float(), pool) > 0
                    counts[h][2:] += (moved & touched).sum().item(), touched.sum().item()
    return {h: {"relu": float(c[0] / c[1]), "argmax": float(c[2] / c[3]) if pool else float("nan")}
            for h, c in counts.items()}


class ChapterRun(NamedTuple):
    """The chapter at one scale (the page's "Run this chapter yourself"): the NADs of each `p.archs`
    (`load_nads`), the secant-vs-exact-gradient overlaps (`secant_vs_autograd`), the N vs 2N overlaps
    (`nads.convergence`) and Fig. 6's test accuracy at `p.fig6_indices` (%, in that order)."""
    nads: dict[str, NADResult]
    curves: dict[str, np.ndarray]
    convergence: dict[str, Any]
    fig6: list[float]


def chapter_results(scale: str, seed: int, results_dir: str | Path, device: str | torch.device = "auto",
                    progress: bool = False, names: Mapping[str, str] | None = None) -> ChapterRun:
    """Everything the chapter computes at `scale` (`presets.preset("nads", scale)`), stored under
    `results_dir/nads` (resumed); `names` label the overlap curves (`secant_vs_autograd`)."""
    p = preset("nads", scale)
    found = {a: load_nads(a, results_dir, scale, seed=seed, device=device, progress=progress) for a in p.archs}
    curves = secant_vs_autograd(p.compare_archs, results_dir, scale, p.compare_networks, p.compare_ks,
                                seed=seed, device=device, progress=progress, names=names)
    conv = convergence(p.conv_arch, EstimateSettings(method=p.conv_method, seed=seed), p.conv_sizes, p.conv_ks,
                       device=device, results_dir=results_dir, progress=progress)
    f6 = fig6_sweep(p.fig6_arch, found[p.fig6_arch], p.fig6_indices, {**as_dict(p.fig6), "seed": seed},
                    f"{results_dir}/nads", device=device, progress=progress)
    return ChapterRun(found, curves, conv, [f6[i] for i in p.fig6_indices])
