"""What Chapter 5 (a neural anisotropic view of underspecification) states: the pair maps of Figs. 1-2, the
out-of-distribution curves of Fig. 3 on the digits and Fashion-MNIST, and the verdicts, from the bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, presets, verdicts
from nadcore.experiments import ch5_underspec as underspec
from nadcore.pages import paper_cost, preset_numbers
from nadcore.plots import underspec as figures

STEM = "05_underspecification"


@dataclass
class Findings:
    """Chapter 5's page: `glued` {name: value} and what its figures draw, the stored grids by architecture
    (`pairs`, Figs. 1-2; `ood`, Fig. 3 on the digits; `fashion_ood`, on Fashion-MNIST; empty where not stored),
    and the verdict `rows`."""
    pairs: dict[str, Any]
    ood: dict[str, Any]
    fashion_ood: dict[str, Any]
    rows: dict[str, verdicts.Row] = field(default_factory=dict)
    glued: dict[str, Any] = field(default_factory=dict)

    @property
    def sections(self) -> list[tuple[int, int]]:
        """The cross-sections shown: the verdict's pairs of LeNet's lowest and highest index, and the middle one."""
        idx = [int(k) for k in self.pairs["lenet"].indices_1]
        lo, mid, hi = idx[0], idx[1], idx[-1]
        return [(lo, hi), (hi, lo), (lo, mid), (mid, lo)]


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict and table Chapter 5's page states, from the bundle in `bundle_dir`."""
    stored = {name: {a: g for a in bundle.UNDERSPEC_ARCHS
                     if (g := bundle.underspec(what, a, bundle_dir, progress=False, dataset=data)) is not None}
              for name, what, data in (("pairs", "pairs", "digits"), ("digits", "ood", "digits"),
                                       ("fashion", "ood", "fashion"))}
    f = Findings(stored["pairs"], stored["digits"], stored["fashion"])
    f.glued.update(preset_numbers("underspecification"))
    for part in (_verdicts(f, bundle_dir), _pairs(f), _ood(f), _fashion(f), paper_cost(STEM)):
        f.glued.update(part)
    return f


def _verdicts(f: Findings, bundle_dir):
    """The results page's rows of this chapter and the overview's numbers (none without the stored results)."""
    if not (f.pairs and f.ood and f.fashion_ood):
        return {}
    bp = bundle.pairs_item()
    f.rows = rows = dict(
        fig1=verdicts.u_fig1(f.pairs, bp),
        resnet=verdicts.u_fig2_resnet(underspec.chapter_settings("paper").pairs, bp,
                                      verdicts.pairs_gpu(bundle_dir)["resnet18"],
                                      verdicts.gpu_seconds(bundle_dir)["pairs"]),
        lenet=verdicts.u_cnn(f.pairs["lenet"], bp), mlp=verdicts.u_mlp(f.pairs["mlp"], bp),
        fig3=verdicts.u_fig3({"digits": f.ood, "Fashion-MNIST": f.fashion_ood}))
    out: dict[str, Any] = {"verdict": verdicts.chapter_table(rows.values()),
                           "verdict_note": Markdown(verdicts.thresholds("follow_up", "chance"))}
    out.update({f"v_{key}": Markdown(f"**{verdicts.SHORT[row.verdict]}**") for key, row in rows.items()})
    out["v_fig3_reason"] = Markdown(rows["fig3"].reason)
    out["v_lenet_reason"] = Markdown(rows["lenet"].reason)
    out["u_fig3_used"] = Markdown(rows["fig3"].ours.removeprefix("linear channel read: "))
    out.update({f"u_best_ch{c}": rows["fig1"].values[c] for c in (1, 2)})
    v = rows["lenet"].values
    out.update({f"u_lenet_{name}": x for name, x in zip(("a1", "a2", "b1", "b2", "t1", "t2"),
                                                           (*v["low_high"], *v["high_low"], *v["angles"]))})
    v = rows["mlp"].values
    out.update({f"u_mlp_ch{c}": Markdown("–".join(f"{x:.1f}" for x in v["ranges"][c])) for c in (1, 2)})
    out["u_mlp_angle"] = float(np.mean(v["angles"]))
    out["u_maxmargin_angle"] = float(np.degrees(np.arctan2(bp.eps2, bp.eps1)))
    return out


def _pairs(f: Findings):
    """LeNet's Fig. 2 by name, the MLP's spread, and the grid's settings."""
    if not f.pairs:
        return {}
    bp = bundle.pairs_item()
    numbers = underspec.pair_numbers(f.pairs["lenet"])
    out: dict[str, Any] = {"bp_indices": Markdown(", ".join(map(str, numbers.pop("indices"))))}
    out.update({f"bp_{k}": v for k, v in numbers.items()})
    out.update({"bp_mlp_sd_max": underspec.pair_numbers(f.pairs["mlp"])["sd_max"], "bp_n_train": bp.n_train,
                "bp_epochs": bp.recipe["lenet"].epochs})
    return out


def _table(grids):
    """Fig. 3's table of `grids` as Markdown."""
    table = figures.ood_table(grids).reset_index()
    return Markdown(table.to_markdown(index=False, floatfmt=(".0f",) + (".1f",) * 4))


def _ood(f: Findings):
    """Fig. 3 on the digits: its extremes and table."""
    if not f.ood:
        return {}
    out: dict[str, Any] = {f"b_ood_{k}": v for k, v in underspec.ood_extremes(f.ood).items()}
    out["b_ood_table"] = _table(f.ood)
    return out


def _fashion(f: Findings):
    """Fig. 3 on Fashion-MNIST: what LeNet and the MLP read, the images alone, its settings and table."""
    fo = bundle.ood_item("fashion")
    paper_mlp_epochs = underspec.chapter_settings("paper").ood.recipe["mlp"].epochs
    reading = underspec.ood_reading(f.fashion_ood, fo.recipe["mlp"].epochs, paper_mlp_epochs)  # nan: not stored
    out: dict[str, Any] = {f"fo_{k}": reading[k] for k in ("images_min", "images_max")}
    out.update({"fo_reading": Markdown(reading["text"]), "fo_short": Markdown(reading["short"]),
                "fo_limit": fo.limit, "fo_epochs": fo.recipe["lenet"].epochs, "fo_count": len(fo.indices)})
    if f.fashion_ood:
        out["fo_table"] = _table(f.fashion_ood)
    return out


def smoke_claims(pairs: dict[str, Any], ood: dict[str, Any], P: presets.Underspecification) -> str:
    """What "Run this chapter yourself" claims of the page's own run (grids `pairs` and `ood` at the chapter's
    settings `P`), printed for the notebook test: they hold on any CPU (the percentages move by a point or two
    between CPUs)."""
    return _smoke_run(pairs, ood, P)[0]


def run_numbers(pairs: dict[str, Any], ood: dict[str, Any], P: presets.Underspecification) -> dict[str, Any]:
    """The numbers the prose of "Run this chapter yourself" glues about the page's own run."""
    return _smoke_run(pairs, ood, P)[1]


def _smoke_run(pairs, ood, P):
    sw = {a: {(i, j): (c1, c2) for i, j, c1, c2 in underspec.switching(g)} for a, g in pairs.items()}
    lenet = sw["lenet"]
    angle = {a: [verdicts.boundary_angle(g.sections[0, i, j], g.coords)
                 for i, j in ((0, 1), (1, 0), (0, 0), (1, 1))] for a, g in pairs.items()}
    acc = [g.accuracy.mean(0) for g in ood.values()]
    lenet_angles, mlp_angles = ([x for x in angle[a] if x is not None] for a in ("lenet", "mlp"))   # None: no boundary
    claims = "\n".join((
        f"LeNet, (0, 1000): channel 1 alone > 90 %, channel 2 alone < 60 %: "
        f"{lenet[0, 1000][0] > 90 and lenet[0, 1000][1] < 60}",
        f"LeNet, (1000, 0): leans on channel 2: {lenet[1000, 0][1] > lenet[1000, 0][0]}",
        f"LeNet, (0, 0): mostly channel 1: {lenet[0, 0][0] > lenet[0, 0][1]}",
        f"MLP: either channel alone > 90 % at every pair: {min(min(v) for v in sw['mlp'].values()) > 90}",
        f"LeNet's boundary: vertical at (0, 1000), past 45° at (1000, 0): "
        f"{len(lenet_angles) == 4 and lenet_angles[0] < 15 and lenet_angles[1] > 45}",
        f"MLP: the same tilt at every pair (within 10°): "
        f"{len(mlp_angles) == 4 and max(mlp_angles) - min(mlp_angles) < 10}",
        f"Fig. 3: images alone > 90 % at every k: {min(a[:, 1].min() for a in acc) > 90}",
        f"Fig. 3: D(v) alone < 65 % at every k: {max(a[:, 2].max() for a in acc) < 65}"))
    glued: dict[str, Any] = {}
    for (i, j), (c1, c2) in lenet.items():
        glued[f"lenet_{i}_{j}_ch1"], glued[f"lenet_{i}_{j}_ch2"] = c1, c2
    glued["mlp_min_single"] = min(min(v) for v in sw["mlp"].values())
    glued.update({f"ood_{k}": v for k, v in underspec.ood_extremes(ood).items()})
    glued["smoke_lenet_pairs_epochs"] = P.pairs.recipe["lenet"].epochs
    return claims, glued
