"""What Chapter 1 (directional inductive bias in the Fourier basis) states: its verdicts on Figs. 1-3, the
noise-level study, VGG-11's seeds and the presets' numbers in its prose, from the bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, fourier, plan, presets, published, verdicts
from nadcore.experiments import ch1_fourier
from nadcore.pages import paper_cost, preset_numbers
from nadcore.plots import fourier as figs
from nadcore.plots import page
from nadcore.presets import preset
from nadcore.recipe import Recipe

STEM = "01_fourier"


@dataclass
class Findings:
    """Chapter 1's page: `glued` {name: value} and what its figures draw (the stored Fig. 1 grids `comparison`
    and their grid `pgrid`, the noise-level `study`, the Fig. 2 iterations `iters2` with their grid, settings
    and run length, the Fig. 3 grids without pooling `without3` {sigma: cells} with their grid, the sigma the
    Fig. 3 verdict is judged at `sigma3`, and the verdict `rows`)."""
    comparison: dict[str, published.Fig1Pair]
    pgrid: fourier.Grid
    study: dict[str, Any]
    iters2: dict[str, Any]
    pgrid2: fourier.Grid
    fig2: presets.Fig2
    limit2: int
    without3: dict[float, Any]
    pgrid3: fourier.Grid
    rows: dict[str, verdicts.Row]
    glued: dict[str, Any] = field(default_factory=dict)

    @property
    def sigma3(self) -> float:
        return self.rows["fig3"].values["sigma"]

    @property
    def gpu_only(self) -> list[str]:
        """The architectures whose Fig. 1 grid needs a GPU (published grid only), in the figures' order."""
        return sorted((a for a, c in self.comparison.items() if c.stats is None), key=list(figs.LABELS).index)

    def seed_mean_beside(self, which: str) -> tuple[Any, Any, fourier.Grid, str, float] | None:
        """`plots.fourier.seed_mean_comparison`'s arguments for LeNet at the noise-level study's `which` sigma
        ("caption" or "best"): its seeds' grids, the published grid, the grid, "lenet" and sigma; None where the
        study has no such sigma."""
        sigma = self.study[which]
        if sigma is None:
            return None
        return self.study["grids"][sigma], self.study["published"], self.pgrid, "lenet", sigma

    def fig3_beside(self, sigma: float) -> tuple[Any, dict, fourier.Grid, float, int]:
        """`plots.fourier.fig3_beside_pooling`'s arguments at `sigma`: LeNet without pooling, with (its seeds'
        mean), the grid, sigma and the seeds."""
        grids = self.study["grids"][sigma]
        return self.without3[sigma], fourier.seed_mean_grid(grids), self.pgrid3, sigma, len(grids)


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict and table Chapter 1's page states, from the bundle in `bundle_dir`."""
    comparison, pgrid = bundle.fig1_comparison(bundle_dir)
    study = bundle.sigma_study(bundle_dir)
    table2, pgrid2, _, _ = bundle.load_fourier("fig2", bundle_dir)
    fig2 = preset("fourier", "paper").fig2   # the stored settings, whatever the page's scale
    iters2 = ch1_fourier.iterations_to_loss(table2, fig2.threshold, fig2.window)
    limit2, without3 = ch1_fourier.run_iterations(table2), verdicts.fig3_without(bundle_dir)
    rows = _rows(comparison, study, iters2, limit2, fig2, without3, bundle_dir)
    f = Findings(comparison, pgrid, study, iters2, pgrid2, fig2, limit2, without3, bundle.fourier_item("fig3")[1],
                 rows)
    for part in (paper_cost(STEM), _presets(), _verdict_values(f, bundle_dir), _caption(f), _sigma_study(f),
                 _vgg11(f, bundle_dir), _fig2(f), _fig3(f)):
        f.glued.update(part)
    return f


def _stats(pair: published.Fig1Pair) -> published.GridComparison:
    """The comparison of a grid the bundle holds (at least 3 cells stored)."""
    if pair.stats is None:
        raise ValueError(f"{pair.stored} stored cells: too few to compare")
    return pair.stats


def _rows(comparison, study, iters2, limit2, fig2, without3, bundle_dir):
    """The chapter's rows of the results page: LogReg, LeNet, VGG-11, the GPU's networks, Figs. 2 and 3."""
    caption = bundle.SIGMA_STUDY.caption
    return {"logreg": verdicts.fig1_logreg(comparison, bundle.fourier_item("fig1")[2]),
            "lenet": verdicts.fig1_lenet(study["grids"], caption,
                                         published.AUTHORS_CODE_LENET[((0, 0), "cos")]),
            "vgg11": verdicts.fig1_deep(comparison, "vgg11", bundle.fourier_item("fig1_vgg11")[2], caption,
                                        bundle.DEEP_TRAIN["vgg11"][0]),
            "gpu": verdicts.deep_not_computed(comparison, bundle.fig6_comparison(bundle_dir).curves,
                                             gpu_seconds=verdicts.gpu_seconds(bundle_dir)["deep"]),
            "fig2": verdicts.fig2(iters2, limit2, comparison["lenet"].published, fig2),
            "fig3": verdicts.fig3(without3, study["grids"], caption, study["best"])}


def _presets():
    """The presets' numbers the prose quotes, and LeNet's learning rate, at the smoke and the published scale."""
    out = preset_numbers("fourier")
    out.update({f"{s}_max_lr_lenet": Recipe.from_settings(presets.as_dict(preset("fourier", s)), "lenet").max_lr
                for s in ("smoke", "paper")})
    return out


def _verdict_values(f: Findings, bundle_dir):
    """Each row's verdict word and the numbers behind it, and LeNet's band by band comparison."""
    out: dict[str, Any] = {}
    for key, row in f.rows.items():
        out[f"v_{key}"] = Markdown(row.verdict)
        out.update({f"{key}_{name}": x for name, x in row.values.items() if isinstance(x, (int, float, np.number))})
    caption, study, comparison = bundle.SIGMA_STUDY.caption, f.study, f.comparison
    hit, cells = f.rows["fig2"].values["lenet_reached"]
    bands, best = f.rows["lenet"].values["bands"], f.rows["lenet"].values["best_sigma"]
    out.update({"logreg_cells": len(comparison["logreg"].ours), "deep_sigma": bundle.DEEP_SIGMA,
                "fig2_lenet_hit": hit, "fig2_lenet_cells": cells, "fig2_lenet_missed": cells - hit,
                "lenet_learnt": bands[caption].learnt, "lenet_chance": bands[caption].chance,
                "lenet_below_caption": -bands[caption].bias, "lenet_level_best": abs(bands[best].bias),
                "lenet_mad_learnt_best": bands[best].mad_learnt,
                "lenet_mad_chance": max(bands[s].mad_chance for s in (caption, best)),   # the two sigmas the row states
                "lenet_spearman_best": published.compare_grids(fourier.seed_mean_grid(study["grids"][best]),
                                                               comparison["lenet"].published).spearman,
                "vgg11_level": abs(f.rows["vgg11"].values["bias"]),
                "verdict": Markdown(verdicts.table(list(f.rows.values()), "NAD"))})
    return out


def _caption(f: Findings):
    """LeNet at the caption's sigma beside the authors' own code, and the minutes the grids took."""
    comparison, study = f.comparison, f.study
    caption_grids = study["grids"][study["caption"]]  # Fig. 1.3's seeds
    authors = published.AUTHORS_CODE_LENET[((0, 0), "cos")]  # the authors' code, two seeds
    rows = [(str(cell), kind, f"{pub:.1f}", " / ".join(f"{r:.1f}" for r in runs),
             "–" if ours is None else f"{ours:.1f}")
            for cell, kind, pub, runs, ours in bundle.authors_code_rows(comparison)]
    minutes = sum(r.get("duration_s") or 0.0 for a in bundle.CPU_ARCHS for r in comparison[a].records)
    return {"fig1_minutes": minutes / 60, "caption_seeds": len(caption_grids),
            "lenet_zero": float(np.mean([g[(0, 0)] for g in caption_grids])),
            "authors_zero_low": float(min(authors)), "authors_zero_high": float(max(authors)),
            "published_zero": float(comparison["lenet"].published[(0, 0)]),
            "authors_zero_sigma2": float(published.AUTHORS_CODE_LENET_SIGMA2_ZERO),
            "authors_table": page.table(rows, [
                "frequency (kx, ky)", "pattern", "published (%)", "authors' code, 2 seeds (%)",
                "ours, seed 0 (%)"]).style.hide(axis="index")}


def _sigma_study(f: Findings):
    """The noise-level study: its sigmas, intervals and table."""
    study = f.study
    out: dict[str, Any] = {"sigma_list": Markdown(", ".join(f"{s:g}" for s in sorted(study["rows"])[:-1])
                                                  + f" and {max(study['rows']):g}")}
    for name, sigma in (("best", study["best"]), ("caption", study["caption"])):
        r = study["rows"][sigma]
        for stat in ("spearman", "mean_abs_difference"):
            out[f"sigma_{name}_{stat}_lo"], out[f"sigma_{name}_{stat}_hi"] = r["intervals"][stat]
        out[f"sigma_{name}_floor"] = r["floor"]["spearman"] if r["floor"] else float("nan")
        out[f"sigma_{name}_mean"] = float(r["ours"].mean())
    out["sigma_published_mean"] = f.rows["lenet"].values["mean_published"]   # on our grid's cells, as each row

    def ci(row, stat, fmt):  # an estimate and its interval, as text
        lo, hi = row["intervals"][stat]
        return f"{row[stat]:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"

    rows = [(f"{sigma:g}" + (" (caption)" if sigma == study["caption"] else ""), r["seeds"], f"{r['ours'].mean():.1f}",
             ci(r, "spearman", ".2f"), ci(r, "pearson", ".2f"), ci(r, "mean_abs_difference", ".1f"),
             "–" if r["floor"] is None else f"{r['floor']['spearman']:.2f}")
            for sigma, r in sorted(study["rows"].items())]
    rows.append(("published", "–", f"{out['sigma_published_mean']:.1f}", "–", "–", "–", "–"))
    out["sigma_table"] = page.table(rows, ["σ", "seeds", "mean accuracy (%)", "Spearman", "Pearson",
                                           "mean |difference|", "seed vs seed"]).style.hide(axis="index")
    return out


def _vgg11(f: Findings, bundle_dir):
    """VGG-11: its recipe, the plain network's plateau, the CPU's and the GPU's times, its seeds' table and the
    bfloat16 training check."""
    vgg, name = f.comparison["vgg11"], "fig1_vgg11"
    learnt = [c for c, v in vgg.ours.items() if v > 90 and vgg.published[c] > 90]
    plain = bundle.plain_deep(name, bundle_dir)[0].get("vgg11", {})  # without batch norm
    check, check_records = bundle.load_train_precision(bundle_dir)
    cpu_min = [r["duration_s"] / 60 for r in check_records
               if r["settings"]["settings"].get("precision", "float32") == "float32"]
    cpu_min += [r["duration_s"] / 60 for n in bundle.DEEP_FIG6 for r in bundle.fig6_records(bundle_dir, n).values()]
    gpu_left = verdicts.gpu_seconds(bundle_dir)["deep"]
    out = {"vgg_lr": bundle.DEEP_TRAIN["vgg11"][1], "vgg_limit": max(bundle.fourier_item(name)[1].freqs),
           "vgg_spearman": _stats(vgg).spearman, "vgg_learnt": Markdown(", ".join(map(str, learnt))),
           "vgg_plain_lr": bundle.fourier_item(name)[2]["max_lr"]["vgg11"], "vgg_plain_cells": len(plain),
           "vgg_plain_low": min(float(v["train_acc"]) for v in plain.values()),
           "vgg_plain_high": max(float(v["train_acc"]) for v in plain.values()),
           "vgg_cpu_low": min(cpu_min), "vgg_cpu_high": max(cpu_min),
           "vgg_gpu_s": float(np.mean([r["duration_s"] for r in vgg.records])),
           "vgg_gpu": Markdown(" and ".join(sorted({bundle.machine_of(r, bundle_dir) or "unknown"
                                                    for r in vgg.records}))),
           "deep_seeds": bundle.DEEP_SEEDS,
           "gpu_plan": Markdown("for a GPU" if gpu_left is None else f"about {plan.duration(gpu_left)} of one GPU"),
           "seed_table": _seed_table(vgg, bundle.load_deep_seeds(name, bundle_dir)[0], check)}
    verdict = bundle.train_precision_verdict(check)   # None until both precisions hold both seeds of every cell
    out["train_bfloat16"] = Markdown("" if verdict is None else (
        f"Trained in bfloat16 on the same CPU (autocast), the same cells and seeds move by "
        f"{verdict['bfloat16']:.1f} points on average from their float32 runs, where a second float32 seed moves "
        f"them by {verdict['seeds']:.1f}: " + (
            "training in bfloat16 changes these cells less than drawing another seed does."
            if verdict["accept"] else
            "training in bfloat16 changes these cells more than drawing another seed does.")))
    return out


def _seed_table(vgg: published.Fig1Pair, seeds, check):
    """VGG-11's cells trained with several seeds on the GPU and in float32 on a 2-core CPU."""
    rows = []
    for cell in sorted(seeds, key=lambda x: -vgg.published[x]):
        acc = seeds[cell]
        cpu = [check[("float32", r)][cell] for r in range(bundle.TRAIN_PRECISION.seeds)
               if cell in check[("float32", r)]]
        rows.append((str(cell), f"{vgg.published[cell]:.1f}", f"{np.mean(acc):.1f} ± {np.std(acc, ddof=1):.1f}",
                     " / ".join(f"{x:.1f}" for x in acc), " / ".join(f"{x:.1f}" for x in cpu) or "–"))
    return page.table(rows, ["cell (kx, ky)", "published (%)", "ours on the GPU, mean ± sd (%)",
                             "ours on the GPU, each seed (%)", "ours on a 2-core CPU (%)"]).style.hide(axis="index")


def _fig2(f: Findings):
    """Fig. 2: the iterations each model needs, and LeNet's speed against its accuracy."""
    out: dict[str, Any] = {"fig2_limit": f.limit2, "fig2_logreg_cells": len(f.iters2["logreg"])}
    for arch in ("logreg", "lenet"):
        got = [v for v in f.iters2[arch].values() if v <= f.limit2]
        out[f"fig2_{arch}_low"], out[f"fig2_{arch}_high"] = min(got), max(got)
    for name, grid in (("pub", f.comparison["lenet"].published), ("ours", f.comparison["lenet"].ours)):
        speed = ch1_fourier.speed_and_accuracy(f.iters2["lenet"], f.limit2, grid)
        out.update({f"fig2_{name}_{key}": x for key, x in speed.items()})
    return out


def _fig3(f: Findings):
    """Fig. 3: LeNet without pooling against with, at the sigma of the verdict."""
    free, pooled = f.without3[f.sigma3], fourier.seed_mean_grid(f.study["grids"][f.sigma3])
    out = {}
    for name, v in (("without", list(free.values())), ("with", [pooled[fourier.canonical(*c)] for c in free])):
        out[f"fig3_{name}_low"], out[f"fig3_{name}_high"] = float(min(v)), float(max(v))
    return out


def summary(f: Findings) -> str:
    """One line per stored Fig. 1 grid: cells, mean accuracies, Spearman and mean |difference| (the check the
    notebook prints)."""
    lines = []
    for arch, c in f.comparison.items():
        if c.stats is not None:
            s = c.stats
            lines.append(f"{arch}: {c.stored}/{c.cells} cells, ours {s.ours.mean():.1f}% "
                         f"vs published {s.published.mean():.1f}%, Spearman {s.spearman:.2f}, "
                         f"mean |difference| {s.mean_abs_difference:.1f} points")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the page's own run
# What "Run this chapter yourself" says of the run at the page's scale: its claims, printed for the notebook test
# (they hold on any CPU; the percentages move by a point or two between CPUs), and the numbers its prose glues.

def smoke_claims(run: ch1_fourier.ChapterRun) -> str:
    """The claims the text makes about `run` (`ch1_fourier.chapter_results` at the page's scale), one per line."""
    return "\n".join(part[0] for part in _run_parts(run))


def run_numbers(run: ch1_fourier.ChapterRun) -> dict[str, Any]:
    """The numbers the text glues about `run`, by name."""
    return {k: v for part in _run_parts(run) for k, v in part[1].items()}


def _run_parts(run):
    return _fig1_run(run.fig1, run.train1), _fig2_run(run.iterations, run.limit), _fig3_run(run.fig3, run.fig1)


def _fig1_run(acc1: dict[str, dict], train1: dict[str, dict]) -> tuple[str, dict[str, Any]]:
    """`(claims, glued)` of the run's Fig. 1: test accuracy `acc1` and train accuracy `train1` by architecture."""
    from scipy.stats import spearmanr

    lenet, lenet_train = acc1["lenet"], train1["lenet"]
    best = max(lenet, key=lambda c: lenet[c])
    cells = sorted(lenet)
    rho = spearmanr([lenet[c] for c in cells], [lenet_train[c] for c in cells])[0]
    claims = "\n".join((
        f"LogReg: test accuracy above 90 % on every direction: {min(acc1['logreg'].values()) > 90}",
        f"LeNet: at chance (< 55 %) on some directions, above it on others: "
        f"{min(lenet.values()) < 55 < max(lenet.values())}",
        f"LeNet: its best direction is a low frequency (|kx|, |ky| <= 4): {max(map(abs, best)) <= 4}",
        f"LeNet: underfits (train accuracy below 80 % everywhere): {max(lenet_train.values()) < 80}",
        f"LeNet: train and test accuracy rank the directions alike (Spearman > 0.3): {rho > 0.3}"))
    glued: dict[str, Any] = {}
    for arch, accs in acc1.items():
        for what, values in (("test", accs), ("train", train1[arch])):
            glued[f"smoke_{arch}_{what}_low"] = float(min(values.values()))
            glued[f"smoke_{arch}_{what}_high"] = float(max(values.values()))
        glued[f"smoke_{arch}_cells"] = len(accs)
    glued["smoke_lenet_train_test_rho"] = float(spearmanr([lenet[c] for c in lenet],
                                                          [lenet_train[c] for c in lenet]).statistic)
    return claims, glued


def _fig2_run(iters: dict[str, dict], limit: int) -> tuple[str, dict[str, Any]]:
    """`(claims, glued)` of the run's Fig. 2: the iterations `iters` each direction took, within `limit`."""
    reached = ch1_fourier.reached(iters, limit)
    claims = (f"LogReg reaches the threshold on every direction: {reached['logreg'][0] == reached['logreg'][1]}\n"
              f"LeNet reaches it on some directions, not all: {0 < reached['lenet'][0] < reached['lenet'][1]}")
    glued: dict[str, Any] = {"smoke_fig2_iterations": limit}
    for arch, (hit, total) in reached.items():
        got = [v for v in iters[arch].values() if v <= limit]
        glued.update({f"smoke_fig2_{arch}_reached": hit, f"smoke_fig2_{arch}_missed": total - hit,
                      f"smoke_fig2_{arch}_cells": total, f"smoke_fig2_{arch}_low": min(got, default=0),
                      f"smoke_fig2_{arch}_high": max(got, default=0)})
    return claims, glued


def _fig3_run(acc3: dict[str, dict], acc1: dict[str, dict]) -> tuple[str, dict[str, Any]]:
    """`(claims, glued)` of the run's Fig. 3: accuracy without pooling `acc3` against with `acc1`."""
    claims = "\n".join(f"{arch} without pooling beats pooling on every direction: "
                       f"{all(cells[c] > acc1[arch][c] for c in cells)}" for arch, cells in acc3.items())
    free = acc3.get("lenet", {})
    pooled = [acc1["lenet"][c] for c in free if c in acc1.get("lenet", {})]
    return claims, {"smoke_fig3_cells": len(free), "smoke_fig3_low": float(min(free.values())),
                    "smoke_fig3_high": float(max(free.values())), "smoke_fig3_pooled_low": float(min(pooled)),
                    "smoke_fig3_pooled_high": float(max(pooled))}
