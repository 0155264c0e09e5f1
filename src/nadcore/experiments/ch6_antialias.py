"""Chapter 6: is it the aliasing? LeNet's directional bias under anti-aliased pooling.

Every LeNet variant of `VARIANTS` (`models.lenet_pool`: the published max pooling, average
pooling, Zhang (2019)'s BlurPool and MaxBlurPool with binomial filters of 3 and 5 taps, stride-2
convolutions, no pooling) goes through Chapter 1's Fig. 1 sweep (`ch1_fourier.sweep_directions`)
and Chapter 3's NAD estimate, N vs 2N convergence and Fig. 6 (`nads`, `ch3_nads`). `theory` gives Theorem
1's prediction for the linear prefilters (`PREFILTER`) on the same Fourier grid
(`pooling.bayes_accuracy`), and `agreement` its rank correlation with a measured grid.

The presets of the chapter (`presets.preset("antialias", scale)`) name the variants, the grid,
the NAD settings and the Fig. 6 indices; the training recipes are those of Chapter 1 (Fig. 1)
and Chapter 3 (Fig. 6) at the same scale, so the max-pooling cells are Chapter 1's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nadcore import findings, fourier, nads, pooling, presets, stacked, store
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.experiments import ch1_fourier, ch3_nads
from nadcore.prose import span

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    import torch

VARIANTS = ("max", "avg", "blur3", "blur5", "maxblur3", "maxblur5", "strided", "none")
PREFILTER = {"avg": "average", "blur3": "binomial3", "blur5": "binomial5"}  # variants with a linear pooling
BLURRED = ("avg", "blur3", "blur5", "maxblur3", "maxblur5")  # a linear prefilter (after the max, for MaxBlurPool)
ARCH = "lenet"


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    return variant


def pooling_arg(variant: str) -> bool | str:
    """The `pooling` argument of `models.build` for `variant` (True and False for the published
    max pooling and for none, so that their stored keys are those of Chapters 1 and 3)."""
    check_variant(variant)
    return {"max": True, "none": False}.get(variant, variant)


def fig1_settings(scale: str, seed: int, device: str | torch.device,
                  overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Chapter 1's Fig. 1 settings at `scale` (`ch1_fourier.sweep_settings`; `overrides` as in
    `presets.check_overrides`)."""
    return ch1_fourier.sweep_settings(presets.preset("fourier", scale, overrides), seed, device)


def fig6_settings(scale: str, seed: int, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Chapter 3's Fig. 6 settings at `scale`."""
    return {**presets.as_dict(presets.preset("nads", scale, overrides).fig6), "seed": int(seed)}


def sweep_name(variant: str) -> str:
    """The sweep that stores the Fig. 1 cells of `variant`: the published LeNet's are Chapter 1's."""
    return "fig1" if check_variant(variant) == "max" else "antialias"


def fig1(variant: str, grid: fourier.Grid, settings: dict[str, Any], results_dir: str | Path, compute: bool = True,
         progress: bool = True, shard: int = 0, num_shards: int = 1) -> dict[tuple[int, int], float]:
    """Fig. 1 of the LeNet `variant` on `grid`: `{(kx, ky): test accuracy}` (canonical cells of
    this shard; with `compute=False` every cell already stored). Stored in `results_dir/<sweep_name>/`."""
    p = pooling_arg(variant)
    name = sweep_name(variant)
    if not compute:
        table, _ = ch1_fourier.stored_directions([ARCH], grid, settings, results_dir, p, name=name)
    else:
        batch = stacked.registry_chunk_size(ARCH, p, settings["batch_size"], resolve(settings["device"]))
        table = ch1_fourier.sweep_directions([ARCH], grid, settings, results_dir, p, name=name, batch=batch,
                                             shard=shard, num_shards=num_shards, progress=progress)
    return ch1_fourier.per_cell(table, "test_acc").get(ARCH, {})


def fig1_seeds(scale: str, seed: int, replicates: Iterable[int], results_dir: str | Path = "../results",
               device: str | torch.device = "cpu", compute: bool = True, progress: bool = True,
               overrides: dict[str, Any] | None = None) -> dict[str, list[dict[tuple[int, int], float]]]:
    """Fig. 1 of every variant again at `replicates` of `seed` (`ch1_fourier.replicate_settings`;
    replicate 0 is `chapter_results`' own grid): `{variant: [{cell: accuracy} per replicate]}`, with
    `compute=False` each replicate's stored cells only. Stored in `results_dir/fourier/` as `fig1`."""
    cfg = presets.preset("antialias", scale, overrides)
    grid, dev = fourier.make_grid(cfg.grid), resolve(device)
    settings = fig1_settings(scale, seed, dev, overrides)
    out: dict[str, list[dict[tuple[int, int], float]]] = {v: [] for v in cfg.variants}
    for r in replicates:   # one whole replicate before the next
        for v in out:
            out[v].append(fig1(v, grid, ch1_fourier.replicate_settings(settings, int(r)),
                               Path(results_dir) / "fourier", compute, progress))
    return out


def nad_settings(variant: str, cfg: presets.AntialiasNads, seed: int) -> dict[str, Any]:
    """The settings of the stored NADs of `variant` (`nads.nad_settings` with its pooling)."""
    return nads.nad_settings(ARCH, cfg.num_networks, cfg.method, seed=seed, pooling=pooling_arg(variant),
                             eig_threads=cfg.eig_threads)


def nad_estimate(variant: str, cfg: presets.AntialiasNads, seed: int, results_dir: str | Path,
                 device: str | torch.device = "cpu", compute: bool = True, progress: bool = True,
                 scratch: str | Path | None = None, compact: bool = False) -> nads.NADResult | None:
    """The NADs of the LeNet `variant` (`cfg`: `method`, `num_networks`) stored in
    `results_dir/nads/` (float16 when `compact`), chunks in `scratch/nad_chunks/` (default
    `results_dir`); None if not stored and not `compute`. Always the stored copy, as readers see it."""
    s = nads.EstimateSettings(cfg.method, seed=seed, pooling=pooling_arg(variant), eig_threads=cfg.eig_threads,
                              num_networks=cfg.num_networks)
    return nads.load_or_estimate(ARCH, s, results_dir, compute=compute, chunks_dir=scratch, compact=compact,
                                 device=device, progress=progress)


def nad_convergence(variant: str, cfg: presets.AntialiasNads, seed: int, results_dir: str | Path,
                    device: str | torch.device = "cpu", compute: bool = True, progress: bool = False,
                    scratch: str | Path | None = None) -> dict[str, np.ndarray] | None:
    """`nads.convergence` of `variant` for `cfg.conv_sizes`, stored in `results_dir/nads/`
    (None if not stored and not `compute`). When 3N is at most the estimate's N and N a multiple
    of `nads.CHUNK`, its chunks (in `scratch`, default `results_dir`) are the estimate's: after
    `nad_estimate`, this costs a merge."""
    settings = {**nad_settings(variant, cfg, seed), "sizes": list(cfg.conv_sizes), "ks": list(cfg.conv_ks)}
    path = Path(results_dir) / "nads" / f"convergence_{ARCH}_{store.key(settings)}.npz"
    if not compute:
        return store.load(path, settings).arrays if store.matches(path, settings) else None
    s = nads.EstimateSettings(method=cfg.method, seed=seed, pooling=pooling_arg(variant), eig_threads=cfg.eig_threads)
    return store.cached(path, settings, lambda: nads.convergence(
        ARCH, s, cfg.conv_sizes, cfg.conv_ks, device=device, results_dir=scratch or results_dir,
        progress=progress), device=device).arrays


def fig6(variant: str, basis: nads.NADResult | np.ndarray, indices: Iterable[int], settings: dict[str, Any],
         results_dir: Path, device: str | torch.device = "cpu", compute: bool = True,
         progress: bool = True) -> dict[int, float]:
    """Fig. 6 of `variant` on its own NADs `basis`: `{index: test accuracy}` (`ch3_nads.fig6_sweep`)."""
    p = pooling_arg(variant)
    batch = stacked.registry_chunk_size(ARCH, p, settings.get("batch_size", 128), resolve(device))
    return ch3_nads.fig6_sweep(ARCH, basis, indices, settings, results_dir / "nads", device=device, batch=batch,
                               progress=progress, only_stored=not compute, pooling=p)


def theory(variant: str, grid: fourier.Grid, eps: float, sigma: float,
           stages: int = 1) -> dict[tuple[int, int], float]:
    """Theorem 1 for the linear prefilter of `variant` (`PREFILTER`, or the blur of a MaxBlurPool):
    `{(kx, ky): Bayes accuracy (percent)}` of D(v) after that pooling (`pooling.bayes_accuracy`,
    circular padding) on `grid`'s canonical cells. `stages=1`: LeNet's first pooling alone (stride
    2); `stages=2`: both poolings in a row as one of stride 4 (`pooling.CASCADES`). Either way
    the convolutions and ReLUs around the poolings are left out: a prediction of what the
    pooling lets through, not of what SGD finds."""
    kind = PREFILTER.get(variant[3:] if variant.startswith("maxblur") else variant)
    if kind is None:
        raise InputError(f"variant must be one of {', '.join(PREFILTER)}, maxblur3, maxblur5 (a linear prefilter); "
                         f"got {variant!r}")
    if stages not in (1, 2):
        raise InputError(f"stages must be 1 (first pooling) or 2 (both poolings); got {stages!r}")
    S, cells = 2 * stages, grid.half()
    m_hat = pooling.prefilter(kind if stages == 1 else f"{kind}_x2", grid.size, S, dims=2)
    return {c: 100.0 * float(a) for c, a in zip(cells, pooling.bayes_accuracy(m_hat, S, eps, sigma, cells=cells))}


def agreement(predicted: Mapping[tuple[int, int], float], measured: Mapping[tuple[int, int], float]) -> float:
    """Spearman's rank correlation of two `{cell: value}` maps over their common cells (NaN below 3)."""
    cells = sorted(set(predicted) & set(measured))
    if len(cells) < 3:
        return float("nan")
    a, b = [predicted[c] for c in cells], [measured[c] for c in cells]
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    from scipy import stats  # here, not at import: scipy.stats takes seconds to import
    return float(stats.spearmanr(a, b)[0])


class Spread(NamedTuple):
    """How directional a Fig. 1 grid is (`spread`): its accuracies' min, max, mean and standard deviation over its
    `cells`."""
    min: float
    max: float
    mean: float
    std: float
    cells: int


def spread(acc: Mapping[tuple[int, int], float]) -> Spread:
    """How directional a Fig. 1 grid is (`Spread`); NaNs for an empty grid."""
    v = np.array(list(acc.values()), dtype=float)
    if v.size == 0:
        return Spread(np.nan, np.nan, np.nan, np.nan, 0)
    return Spread(float(v.min()), float(v.max()), float(v.mean()), float(v.std()), int(v.size))


BANDS = {"low": r"$\max(|k_x|, |k_y|) \le 4$",
         "eight": r"$|k_x| = 8$ or $|k_y| = 8$ (the Nyquist frequency of stride 4)", "high": "the other cells"}


def band(cell: tuple[int, int]) -> str:
    """Which of `BANDS` a (kx, ky) cell is in: LeNet's two stride-2 poolings subsample by 4, so
    on 32x32 images frequency 8 is the Nyquist frequency of the pooled maps."""
    kx, ky = (abs(int(k)) for k in cell)
    if max(kx, ky) <= 4:
        return "low"
    return "eight" if 8 in (kx, ky) else "high"


def band_means(acc: Mapping[tuple[int, int], float]) -> dict[str, float]:
    """`{band: mean accuracy}` of a `{cell: accuracy}` map over the cells of each of `BANDS`."""
    out = {}
    for name in BANDS:
        values = [a for c, a in acc.items() if band(c) == name]
        out[name] = float(np.mean(values)) if values else float("nan")
    return out


@dataclass
class AntialiasRun:
    """The settings behind `AntialiasResults`: Fig. 1's and Fig. 6's stored settings (`fig1_settings`,
    `fig6_settings`), the NADs' preset `nads`, Fig. 6's `indices` and the NADs `show`n a variant."""
    fig1: dict[str, Any]
    fig6: dict[str, Any]
    nads: presets.AntialiasNads
    indices: list[int]
    show: int


@dataclass
class AntialiasResults:
    """Everything Chapter 6 shows (`chapter_results`): the `grid` and the `variants`; `fig1` {variant: {cell:
    acc}}; `theory` {stages: {variant: {cell: acc}}} of the linear variants (`theory`); `agreement` {stages:
    {variant: Spearman rho}} (MaxBlurPool against its blur's map too); `nads` {variant: NADResult | None};
    `convergence` {variant: arrays | None}; `fig6` {variant: {index: acc}}; the `settings` (`AntialiasRun`); how many
    `seeds` each Fig. 1 cell is the mean of (`with_seeds`)."""
    grid: fourier.Grid
    variants: list[str]
    settings: AntialiasRun
    fig1: dict[str, Any] = field(default_factory=dict)
    theory: dict[int, dict[str, Any]] = field(default_factory=dict)
    agreement: dict[int, dict[str, float]] = field(default_factory=dict)
    nads: dict[str, Any] = field(default_factory=dict)
    convergence: dict[str, Any] = field(default_factory=dict)
    fig6: dict[str, dict[int, float]] = field(default_factory=dict)
    seeds: int = 1


def chapter_results(scale: str, seed: int = 0, results_dir: str | Path = "../results",
                    device: str | torch.device = "cpu", compute: bool = True, progress: bool = True,
                    variants: Iterable[str] | None = None, parts: Collection[str] = ("fig1", "nads", "fig6"),
                    scratch: str | Path | None = None, compact: bool = False, shard: int = 0, num_shards: int = 1,
                    overrides: dict[str, Any] | None = None) -> AntialiasResults:
    """Everything the chapter shows at `scale` (`AntialiasResults`): per variant its Fig. 1 grid, NADs,
    convergence and Fig. 6, and the theory maps of the linear ones. With `compute=False` nothing is computed
    and missing pieces are None or empty (the results bundle's read-only path). `parts` picks what to
    compute, each part for every variant before the next; `scratch` holds NAD chunks (default
    `results_dir`), `compact` stores float16 NADs. With `num_shards` > 1 this run computes its
    share of the Fig. 1 cells only; a run with `num_shards=1` then collects them and computes
    the NADs and Fig. 6. `overrides` changes the presets it reads, "antialias", "fourier" (Fig. 1)
    and "nads" (Fig. 6) (`presets.check_overrides`)."""
    cfg = presets.preset("antialias", scale, overrides)
    dev = resolve(device)
    results_dir = Path(results_dir)
    variants = list(cfg.variants if variants is None else variants)
    for v in variants:
        check_variant(v)
    grid = fourier.make_grid(cfg.grid)
    s1, s6 = fig1_settings(scale, seed, dev, overrides), fig6_settings(scale, seed, overrides)
    out = AntialiasResults(grid, variants, AntialiasRun(s1, s6, cfg.nads, cfg.fig6_indices, cfg.show))
    for v in variants:
        out.fig1[v] = fig1(v, grid, s1, results_dir / "fourier", compute and "fig1" in parts, progress, shard,
                           num_shards)
        _beside_theory(out, v)
    compute = compute and num_shards == 1
    for v in variants:
        work = compute and "nads" in parts
        out.nads[v] = nad_estimate(v, cfg.nads, seed, results_dir, dev, work, progress, scratch, compact)
        out.convergence[v] = None if out.nads[v] is None else nad_convergence(
            v, cfg.nads, seed, results_dir, dev, work, scratch=scratch)
    for v in variants:
        basis = out.nads[v]
        out.fig6[v] = {} if basis is None else fig6(v, basis, cfg.fig6_indices, s6, results_dir, dev,
                                                    compute and "fig6" in parts, progress)
    return out


def _beside_theory(results: AntialiasResults, variant: str) -> None:
    """Theorem 1's maps of a blurred `variant` (first pooling, both) into `results.theory` (the linear ones) and their
    agreement with its Fig. 1 grid into `results.agreement`."""
    s1 = results.settings.fig1
    for stages in (1, 2) if variant in BLURRED else ():
        t = theory(variant, results.grid, s1["eps"], s1["sigma"], stages)
        if variant in PREFILTER:
            results.theory.setdefault(stages, {})[variant] = t
        results.agreement.setdefault(stages, {})[variant] = agreement(t, results.fig1[variant])


def with_seeds(results: AntialiasResults, more: Mapping[str, Sequence[Mapping]]) -> AntialiasResults:
    """`results` with each variant's Fig. 1 cell the mean over its seed (`results.fig1`, seed 0) and the seeds of
    `more` ({variant: [grid per seed]}, `fig1_seeds`) whose grids are whole for every variant; Theorem 1's agreement
    recomputed on that mean, `seeds` their count. The NADs and Fig. 6 stay seed 0's. The predictions' Fig. 1
    verdicts are judged on it: the cells' seed means are the bootstrap's samples (`band_gap`)."""
    whole = _whole_seeds(results.fig1, more, len(results.grid.half()))
    if whole < 2:
        return results
    fig1 = {v: fourier.seed_mean_grid([results.fig1[v], *more[v][:whole - 1]]) for v in results.variants}
    out = replace(results, fig1=fig1, theory={}, agreement={}, seeds=whole)
    for v in results.variants:
        _beside_theory(out, v)
    return out


BOOTS, LEVEL = 2000, 0.95   # the band gaps' percentile-bootstrap intervals: resamplings, coverage


def band_gap(acc: Mapping[tuple[int, int], float], boots: int = BOOTS, level: float = LEVEL,
             seed: int = 0) -> tuple[float, float, float]:
    """How far the low band of a `{cell: accuracy}` map beats its other cells (off the k = 8 lines): the
    mean over `BANDS` "low" minus the mean over "high", with its `level` percentile-bootstrap interval
    over `boots` resamplings of each band's cells (a cell is one network, or its seeds' mean, `with_seeds`: the
    cells are the samples).
    Returns `(gap, lower, upper)` in points; NaNs when a band has no cell."""
    low, high = (np.array([a for c, a in acc.items() if band(c) == b], dtype=float) for b in ("low", "high"))
    if not low.size or not high.size:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = (low[rng.integers(0, low.size, (boots, low.size))].mean(axis=1)
             - high[rng.integers(0, high.size, (boots, high.size))].mean(axis=1))
    tail = 50 * (1 - level)
    lower, upper = np.percentile(draws, [tail, 100 - tail])
    return float(low.mean() - high.mean()), float(lower), float(upper)


def summary(results: AntialiasResults) -> list[dict[str, Any]]:
    """One row per variant of `chapter_results`: its Fig. 1 spread, the Spearman rho with Theorem 1
    for the first pooling (rho1) and both (rho2) (blurred variants), lambda_1 / lambda_0 (`lam2`, of the first two) and
    lambda_64 / lambda_0 of its NADs (indices from 0), the N vs 2N
    overlap of the leading 16 NADs at the largest N, Fig. 6 at the first and last index, and the
    mean accuracy in each of `BANDS` (`band_low`, `band_eight`, `band_high`)."""
    rows = []
    for v in results.variants:
        s, basis = spread(results.fig1[v]), results.nads[v]
        conv, f6 = results.convergence[v], results.fig6[v]
        lam = None if basis is None else np.clip(basis.eigenvalues, 0, None) / basis.eigenvalues[0]
        ks = [] if conv is None else list(conv["ks"])
        rows.append(dict(variant=v, cells=s.cells, mean=s.mean, std=s.std, min=s.min, max=s.max,
                         rho1=results.agreement.get(1, {}).get(v, np.nan),
                         rho2=results.agreement.get(2, {}).get(v, np.nan),
                         lam2=np.nan if lam is None else float(lam[1]), lam64=np.nan if lam is None else float(lam[64]),
                         overlap16=float(conv["overlap"][-1][ks.index(16)]) if 16 in ks else np.nan,
                         fig6_first=f6[min(f6)] if f6 else np.nan, fig6_last=f6[max(f6)] if f6 else np.nan,
                         **{f"band_{k}": m for k, m in band_means(results.fig1[v]).items()}))
    return rows


class SeedStudy(NamedTuple):
    """`seed_study`: how many whole `seeds`, each variant's `low` band mean and `gap` (lead) per seed, the prefiltered
    variants' `order` per seed and Kendall's `tau` between every two seeds."""
    seeds: int
    low: dict[str, list[float]]
    gap: dict[str, list[float]]
    order: list[list[str]]
    tau: list[float]


def seed_study(first: Mapping[str, Mapping[tuple[int, int], float]], more: Mapping[str, Sequence[Mapping]],
               cells: int) -> SeedStudy:
    """Is the order of the variants within the low band more than one seed's draw? Each variant's low band
    mean (`band_means`) and lead over its other cells (`band_gap`) at every seed whose grids are whole for every
    variant (`cells` directions each): seed 0 is `first` ({variant: {cell: accuracy}}), then `more`
    ({variant: [grid per seed]}, `fig1_seeds`). Returns `seeds` (how many), `low` and `gap` ({variant: [value
    per seed]}), `order` (the prefiltered variants, `BLURRED`, by decreasing low band, per seed) and `tau`
    (Kendall's tau of the seeds' orders, each pair of seeds; NaN below two seeds)."""
    grids = {v: [first[v], *more.get(v, [])] for v in first}
    whole = _whole_seeds(first, more, cells)
    low = {v: [band_means(g)["low"] for g in gs[:whole]] for v, gs in grids.items()}
    gap = {v: [band_gap(g)[0] for g in gs[:whole]] for v, gs in grids.items()}
    blurred = [v for v in BLURRED if v in low]
    order = [sorted(blurred, key=lambda v, i=i: -low[v][i]) for i in range(whole)]
    tau = [_kendall([low[v][i] for v in blurred], [low[v][j] for v in blurred])
           for i in range(whole) for j in range(i + 1, whole)]
    return SeedStudy(whole, low, gap, order, tau)


def seed_reading(study: SeedStudy, cells: int) -> str:
    """`seed_study` in a sentence: whether the prefiltered variants keep one order within the low band at every
    seed, and how far a variant's low band moves between seeds."""
    n = study.seeds
    if n < 2:
        return (f"Still one seed per cell on {cells} directions: the order of the variants within the band is not "
                "tested across seeds.")
    order = " > ".join(NAMES[v] for v in study.order[0])
    moves = max(max(x) - min(x) for v, x in study.low.items() if v in BLURRED)
    head = f"Over {n} seeds of every cell ({cells} directions each), "
    if all(o == study.order[0] for o in study.order):
        return (head + f"the variants with a prefilter keep one order within the band at every seed ({order}; "
                f"Kendall's τ = 1 between every two seeds), though a variant's low band moves by up to {moves:.1f} "
                "points from one seed to another.")
    return (head + f"the order of the variants with a prefilter within the band changes between seeds (Kendall's "
            f"τ {span(study.tau, '.2f')}; seed 0: {order}): a variant's low band moves by up to {moves:.1f} points "
            "from one seed to another.")


def seed_takeaway(study: SeedStudy) -> str:
    """`seed_study` in a clause for the takeaways: whether the prefiltered variants keep their order in the band."""
    n = study.seeds
    if n < 2:
        return "still one seed per cell: the order of the variants within the band is not tested across seeds."
    if all(o == study.order[0] for o in study.order):
        return f"{n} seeds keep the prefiltered variants' order in the band."
    return f"{n} seeds change the prefiltered variants' order in the band."


def _whole_seeds(first, more, cells):
    """How many leading seeds (seed 0 `first[v]`, then `more[v]`) hold all `cells` directions for every variant."""
    return min((sum(1 for _ in _prefix([g, *more.get(v, [])], cells)) for v, g in first.items()), default=0)


def _prefix(grids, cells):
    """The leading grids of `grids` that hold all `cells` directions (the later seeds may be partly stored)."""
    for g in grids:
        if len(g) < cells:
            return
        yield g


def _kendall(a, b):
    """Kendall's tau of two orderings of the same items (NaN below two)."""
    if len(a) < 2:
        return float("nan")
    from scipy import stats  # here, not at import: scipy.stats takes seconds to import
    return float(stats.kendalltau(a, b)[0])


POOLED = ("max", "avg", "blur3", "blur5", "maxblur3", "maxblur5")  # a pooling layer (no stride-2 convs, not none)


def key_numbers(results: AntialiasResults) -> dict[str, float]:
    """The chapter's numbers by name, unrounded, for the prose (myst-nb `glue`): `{variant}_{column}`
    of every `summary` row, `{variant}_fig6_best` (the best Fig. 6 accuracy), and
    `{variant}_theory2_{band}`, Theorem 1's mean over each of `BANDS` for both poolings, and
    `{variant}_gap`, `_gap_lower`, `_gap_upper` (`band_gap`: the low band's lead and its interval)."""
    out = {}
    for r in summary(results):
        v = r["variant"]
        out.update({f"{v}_{k}": float(x) for k, x in r.items() if k != "variant"})
        f6 = results.fig6[v]
        out[f"{v}_fig6_best"] = float(max(f6.values())) if f6 else float("nan")
        out.update(zip((f"{v}_gap", f"{v}_gap_lower", f"{v}_gap_upper"), band_gap(results.fig1[v])))
    for v, t in results.theory.get(2, {}).items():
        out.update({f"{v}_theory2_{name}": m for name, m in band_means(t).items()})
    return out


def missing(results: AntialiasResults) -> dict[str, list[str]]:
    """`{part: [variants]}` of the parts (fig1, nads, fig6) of `chapter_results` not stored for a variant."""
    parts = {"fig1": results.fig1, "nads": results.nads, "fig6": results.fig6}
    gaps = {part: [v for v in results.variants if not found[v]] for part, found in parts.items()}
    return {part: vs for part, vs in gaps.items() if vs}


def setting_numbers(results: AntialiasResults) -> dict[str, Any]:
    """The settings of `chapter_results` by name, for the prose: Fig. 1's `n`, `sigma`, `epochs`,
    the grid (`side`, `freqs`, `cells`), the number of `variants`, the NADs' `nad_networks` and
    `nad_method`, the number of Fig. 6 indices (`fig6_count`) and the last one (`last_index`)."""
    s1, grid, cfg = results.settings.fig1, results.grid, results.settings.nads
    return {"n": s1["n"], "sigma": s1["sigma"], "epochs": s1["epochs"], "side": len(grid.freqs),
            "freqs": ", ".join(map(str, grid.freqs)), "cells": len(grid.half()), "variants": len(results.variants),
            "nad_networks": cfg.num_networks, "nad_method": cfg.method,
            "fig6_count": len(results.settings.indices), "last_index": results.settings.indices[-1]}


# ----------------------------------------------------------------------------- the paper's predictions, judged

NAMES = {"max": "max pooling", "avg": "average pooling", "blur3": "BlurPool-3", "blur5": "BlurPool-5",
         "maxblur3": "MaxBlurPool-3", "maxblur5": "MaxBlurPool-5", "strided": "stride 2", "none": "no downsampling"}
BAND_GAP = 2.0        # points: a grid keeps a bias when its low band beats its other cells by more than this (the
#                       whole interval of `band_gap`), is flat when its band means lie within this of each other;
#                       Theorem 1 predicts a level within it
CHANCE, CHANCE_MARGIN = 50.0, 2.0   # %: two balanced classes; an accuracy within the margin is chance
RHO_MIN = 0.5         # Spearman's rho of Theorem 1 (both poolings) with average pooling's grid that orders it


def prefilter_energy(variant: str) -> float:
    """The share of a flat spectrum that `variant`'s linear prefilter (`PREFILTER`, one pooling) lets through:
    the mean of |m_hat|^2 / |m_hat(0)|^2 over the 32 x 32 frequencies (`pooling.prefilter`). The linear
    model of pooling (Sec. 2.2, Eq. 4) has NAD eigenvalues proportional to |m_hat|^2: the less a prefilter
    lets through, the steeper its spectrum."""
    if variant not in PREFILTER:
        raise InputError(f"variant must be one of {', '.join(PREFILTER)} (a linear prefilter); got {variant!r}")
    m = pooling.prefilter(PREFILTER[variant], 32, 2, dims=2).abs() ** 2
    return float(m.mean() / m[0, 0])


def lead_reading(blur: findings.Verdict, intervals: bool = True) -> str:
    """Which prefilters' leads on the low band the verdict `blur` (`predictions`' "blur_keeps_bias") leaves
    unresolved, as a clause: "every prefilter's lead is resolved", or which are not (with their `intervals`)."""
    open_, lower, upper = (blur.values.get(k, {}) for k in ("open", "lower", "upper"))
    if not open_:
        return "every prefilter's lead is resolved"
    within = ", ".join(f"{NAMES[v] + ' ' if len(open_) > 1 else ''}{lower[v]:.1f} to {upper[v]:.1f}"
                       for v in open_)
    names = " and ".join(NAMES[v] for v in open_)
    whose = f"{names}'s lead is" if len(open_) == 1 else f"the leads of {names} are"
    if not intervals:
        return f"{whose} not resolved"
    return f"{whose} not resolved ({LEVEL * 100:g} % interval{'s' * (len(open_) > 1)} {within} points)"


def thresholds() -> str:
    """The thresholds of `predictions` in words, for the page."""
    return (f"A grid keeps a bias when its mean on the low band max(|kx|, |ky|) ≤ 4 beats its other cells (off "
            f"the k = 8 lines) by more than {BAND_GAP:g} points over the whole {LEVEL * 100:g} % interval of that lead "
            f"(a percentile bootstrap over {BOOTS:,} resamplings of each band's cells, each cell its seeds' mean), "
            f"lacks one when the interval lies below {BAND_GAP:g} points, and is not resolved when it straddles them; "
            f"a grid is flat when its band means lie within {BAND_GAP:g} points of each other. An accuracy within "
            f"{CHANCE_MARGIN:g} points of {CHANCE:g} % is chance. Theorem 1 orders the directions when Spearman's ρ "
            f"with average pooling's grid is at least {RHO_MIN:g}, and predicts the level when its low-band mean "
            f"is within {BAND_GAP:g} points of the network's. The prefilter orders the NADs when λ₆₄/λ₀ falls as "
            "the prefilter's energy (the mean of |m̂|²/|m̂(0)|² over the frequencies) does.")


class _Judged(NamedTuple):
    """What `predictions` measured of one prediction, its outcome, why and the numbers behind it."""
    measured: str
    outcome: str
    reason: str
    values: dict


def predictions(results: AntialiasResults) -> dict[str, findings.Verdict]:
    """What the paper's explanation of the bias predicts for the variants of `chapter_results` (at the
    published settings), judged on what they measure: `{name: findings.Verdict}` (the claim as its question, the
    paper's statement as expected; `reason` says why, unless it plainly holds; what is missing, when not computed)
    by the thresholds of `thresholds`. The four predictions:

    - `blur_keeps_bias`: Theorem 1 with a blur as prefilter passes the low band only, so a blur narrows the
      bias but does not remove it: every variant with a linear prefilter (`BLURRED`) keeps a bias, its
      `band_gap` interval above `BAND_GAP` (`FAILS` when one lies below, `UNRESOLVED` when one straddles it).
    - `nyquist`: Theorem 1 over both poolings leaves nothing at k = 8 (every variant with a pooling layer,
      `POOLED`, at chance there) and orders average pooling's directions (`RHO_MIN`). Not LeNet's levels: the
      theorem bounds a classifier of the pooled input, and LeNet's convolutions come before its pooling.
    - `no_downsampling`: the paper's Fig. 3, without pooling the accuracies are equalised: `none` flat.
    - `prefilter_orders`: the linear model (Eq. 4), the less a prefilter lets through (`prefilter_energy`),
      the steeper the spectrum: λ₆₄/λ₀ of the `PREFILTER` variants in that order.
    """
    n, present = key_numbers(results), set(results.variants)
    sigma = results.settings.fig1["sigma"]
    seeds = "1 seed" if results.seeds == 1 else f"{results.seeds} seeds (each cell's mean)"
    recipe = f"published recipe at σ = {sigma:g}, {len(results.grid.half())} directions, {seeds}"
    published = presets.preset("nads", "paper").num_networks["default"]
    networks = f"{results.settings.nads.num_networks:,} networks per variant (paper: {published:,})"
    nan = float("nan")

    def blur_keeps_bias():
        gaps = {v: n[f"{v}_gap"] for v in BLURRED}
        lower, upper = ({v: n[f"{v}_gap_{end}"] for v in BLURRED} for end in ("lower", "upper"))
        flat = [NAMES[v] for v in BLURRED if upper[v] <= BAND_GAP]
        open_ = [v for v in BLURRED if lower[v] <= BAND_GAP < upper[v]]
        verdict, reason = ((findings.FAILS, f"flat: {', '.join(flat)}") if flat else
                           (findings.UNRESOLVED,
                            f"the interval of {', '.join(NAMES[v] for v in open_)} reaches below {BAND_GAP:g} points")
                           if open_ else (findings.HOLDS, ""))
        worst = min(BLURRED, key=lambda v: lower[v])
        return _Judged(measured=f"the variants with a prefilter lead on |k| ≤ 4 by {span(gaps.values())} points over "
                             f"their other cells (least: {NAMES[worst]}, {gaps[worst]:.1f}, {LEVEL * 100:g} % "
                             f"interval {lower[worst]:.1f} to {upper[worst]:.1f}; BlurPool-3: "
                             f"{n['blur3_band_low']:.1f} % and {n['blur3_band_high']:.1f} %)",
                    outcome=verdict, reason=reason,
                    values={"gaps": gaps, "lower": lower, "upper": upper, "open": open_})

    def nyquist():
        eight = {v: n[f"{v}_band_eight"] for v in POOLED if v in present}
        above = [v for v, a in eight.items() if abs(a - CHANCE) > CHANCE_MARGIN]
        rho, level = n["avg_rho2"], n["avg_band_low"] - n["avg_theory2_low"]   # level: said, not judged
        # Theorem 1 bounds a classifier of the pooled input alone: LeNet's convolutions come before its pooling, so
        # the theorem predicts where information is lost and the order of the directions, not LeNet's levels
        ours = (f"{span(eight.values())} % on the k = 8 lines with every pooling layer; average pooling ordered as "
                f"predicted (ρ = {rho:.2f}); on |k| ≤ 4 LeNet reaches {n['avg_band_low']:.1f} %, a classifier of the "
                f"pooled input alone {n['avg_theory2_low']:.1f} % (the theorem does not bound LeNet, whose "
                "convolutions come before its pooling)")
        if above or rho < RHO_MIN:
            verdict = findings.FAILS
            reason = "; ".join(([f"above chance at k = 8: {', '.join(NAMES[v] for v in above)}"] if above else [])
                               + ([f"average pooling's ρ = {rho:.2f}"] if rho < RHO_MIN else []))
        else:
            verdict, reason = findings.HOLDS, ""
        return _Judged(measured=ours, outcome=verdict, reason=reason,
                    values={"eight": eight, "rho": rho, "level": level})

    def no_downsampling():
        bands = {b: n[f"none_band_{b}"] for b in BANDS}
        spread_ = max(bands.values()) - min(bands.values())
        return _Judged(measured=f"{bands['low']:.1f} % on |k| ≤ 4, {bands['eight']:.1f} % at k = 8, "
                             f"{bands['high']:.1f} % elsewhere: {'flat' if spread_ <= BAND_GAP else 'not flat'}",
                    outcome=findings.HOLDS if spread_ <= BAND_GAP else findings.FAILS,
                    reason="" if spread_ <= BAND_GAP else f"its bands differ by {spread_:.1f} points",
                    values={"bands": bands, "spread": spread_})

    def prefilter_orders():
        energy = {v: prefilter_energy(v) for v in PREFILTER}
        order = sorted(PREFILTER, key=lambda v: -energy[v])
        lam = [n[f"{v}_lam64"] for v in order]
        ok = all(a > b for a, b in zip(lam, lam[1:]))
        return _Judged(measured=f"λ₆₄/λ₀ = {', '.join(f'{x:.2g}' for x in lam)} "
                             f"({', '.join(NAMES[v] for v in order)}) as the prefilter's energy falls "
                             f"({', '.join(f'{energy[v]:.2g}' for v in order)})",
                    outcome=findings.HOLDS if ok else findings.FAILS,
                    reason="" if ok else "λ₆₄/λ₀ out of the prefilters' order",
                    values={"energy": energy, "lam64": dict(zip(order, lam))})

    table = (
        ("blur_keeps_bias", "Theorem 1: a blur keeps a bias, in the low band",
         "not tested; with a blur, both poolings pass only |k| ≤ 4 (BlurPool-3: "
         f"{n.get('blur3_theory2_low', nan):.1f} % there, {n.get('blur3_theory2_high', nan):.1f} % elsewhere)",
         recipe, {v: ("band_low", "band_high", "gap_lower") for v in BLURRED}, blur_keeps_bias),
        ("nyquist", "Theorem 1: the poolings decide where information is lost",
         "both poolings: chance at k = 8 (the pooled maps' Nyquist frequency), the order of the other directions",
         recipe,
         {"avg": ("band_eight", "rho2", "band_low", "theory2_low"),
          **{v: ("band_eight",) for v in POOLED if v in present and v != "avg"}}, nyquist),
        ("no_downsampling", "Fig. 3: removing the downsampling removes the bias",
         "without pooling, the accuracies are equalised", recipe,
         {"none": tuple(f"band_{b}" for b in BANDS)}, no_downsampling),
        ("prefilter_orders", "Eq. 4: the prefilter orders the NADs",
         "in the linear model of pooling (Sec. 2.2), the NAD eigenvalues follow the prefilter's |m̂|²", networks,
         {v: ("lam64",) for v in PREFILTER}, prefilter_orders))
    out = {}
    for name, claim, paper, scale, needs, judged in table:
        lacking = [v for v, keys in needs.items()
                   if v not in present or not all(np.isfinite(n.get(f"{v}_{k}", nan)) for k in keys)]
        needed = "needs the stored results of " + ", ".join(NAMES[v] for v in lacking)
        j = _Judged("–", findings.MISSING, needed, {}) if lacking else judged()
        out[name] = findings.Verdict(claim, paper, j.measured, j.outcome, j.reason, scale, values=j.values)
    return out
