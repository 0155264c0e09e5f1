"""What Chapter 6 (anti-aliased pooling through the lens of Theorem 1) states: LeNet's pooling variants on the
Fourier grid at the caption's sigma and where LeNet learns, Theorem 1 in 2-D beside them, the variants' NADs and
Fig. 6, and the verdicts on the predictions, from the bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, presets, verdicts
from nadcore.experiments import ch6_antialias as antialias
from nadcore.pages import paper_cost
from nadcore.plots import page

STEM = "06_antialias"


@dataclass
class Findings:
    """Chapter 6's page: `glued` {name: value} and what its figures and tables draw, the stored results at the
    caption's sigma `paper` and where LeNet learns `learns` (`bundle.load_antialias`), each Fig. 1 cell the mean
    over its seeds stored whole (`ch6_antialias.with_seeds`: what the predictions judge; the NADs and Fig. 6 are
    seed 0's), and the box of what the bundle does not hold yet `boxes`."""
    paper: antialias.AntialiasResults
    learns: antialias.AntialiasResults
    boxes: list[Any] = field(default_factory=list)
    glued: dict[str, Any] = field(default_factory=dict)


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict and table Chapter 6's page states, from the bundle in `bundle_dir`."""
    seed0 = {"aa": bundle.load_antialias(bundle_dir), "aa15": bundle.load_antialias(bundle_dir, best_sigma=True)}
    more = {"aa": bundle.load_antialias_seeds(bundle_dir, best_sigma=False),
            "aa15": bundle.load_antialias_seeds(bundle_dir)}
    judged = {p: antialias.with_seeds(seed0[p], more[p]) for p in seed0}
    f = Findings(judged["aa"], judged["aa15"])
    gaps = bundle.antialias_gaps(bundle_dir)
    if gaps:
        f.boxes.append(page.not_computed(f"Chapter 6 at the published settings ({gaps[0]})",
                                         "python -m nadcore.bundle antialias", gaps[1]))
    verdicts_ = {p: antialias.predictions(r) for p, r in judged.items()}
    numbers = {p: antialias.key_numbers(r) for p, r in judged.items()}
    for part in (_numbers(f, numbers), _context(verdicts_, bundle_dir), _readings(f, numbers, verdicts_),
                 paper_cost(STEM), _seeds(seed0, more)):
        f.glued.update(part)
    return f


def _seeds(seed0, more):
    """At each sigma, each variant's low band and lead at every seed stored whole (`ch6_antialias.seed_study` of
    seed 0's results `seed0` and the further seeds `more`, by prefix): their count, one table and a sentence per
    sigma."""
    cells, out, rows = len(seed0["aa15"].grid.half()), {}, []

    def each(values):
        return " / ".join(f"{x:.1f}" for x in values)

    for prefix in ("aa15", "aa"):
        results = seed0[prefix]
        study = antialias.seed_study(results.fig1, more[prefix], cells)
        rows += [(f"{results.settings.fig1['sigma']:g}", antialias.NAMES[v], each(study.low[v]),
                  f"{np.mean(study.low[v]):.1f} ± {np.std(study.low[v], ddof=1):.1f}"
                  if study.seeds > 1 else "–", each(study.gap[v])) for v in results.variants]
        out.update({f"{prefix}_seeds": study.seeds,
                    f"{prefix}_seed_reading": Markdown(antialias.seed_reading(study, cells)),
                    f"{prefix}_seed_takeaway": Markdown(antialias.seed_takeaway(study))})
    table = page.table(rows, ["σ", "variant", "|k| ≤ 4, each seed (%)", "mean ± sd (%)", "lead, each seed (points)"])
    out["aa_seed_table"] = table.style.hide(axis="index")
    return out


def _numbers(f: Findings, numbers):
    """Each run's settings and key numbers (`numbers`, `ch6_antialias.key_numbers` by prefix), and Fig. 6 at every
    index by variant (aa_: the caption's sigma; aa15_: where LeNet learns)."""
    out: dict[str, Any] = {}
    for prefix, results in (("aa", f.paper), ("aa15", f.learns)):
        out.update({f"{prefix}_paper_{k}": v for k, v in antialias.setting_numbers(results).items()})
        out.update({f"{prefix}_{k}": v for k, v in numbers[prefix].items()})
        out.update({f"{prefix}_{v}_fig6_{i}": results.fig6[v].get(i, float("nan"))
                    for v in results.variants for i in results.settings.indices})
    return out


def _context(verdicts_, bundle_dir):
    """Chapter 3's LeNet beside these, the paper's N, and the verdicts on the predictions at both sigmas (Fig. 1
    judged on the seeds' mean: `verdicts_`, `ch6_antialias.predictions` by prefix)."""
    return {"aa_ch3_fig6_first": bundle.load_fig6(bundle_dir).get(0, float("nan")),
            "aa_ch3_networks": bundle.nad_networks("lenet"),
            "aa_nads_published": presets.preset("nads", "paper").num_networks["default"],
            "verdict": verdicts.prediction_table(verdicts_["aa"]),
            "verdict_learns": verdicts.prediction_table(verdicts_["aa15"]),
            "verdict_note": Markdown(antialias.thresholds()), "aa_band_gap": antialias.BAND_GAP}


def _readings(f: Findings, numbers, verdicts_):
    """The numbers the readings quote: the k = 8 lines with pooling (`numbers`), the blurs' low-band lead where LeNet
    learns (and the least resolved; the blur verdicts of `verdicts_`), which leads each sigma resolves, the binomial
    blurs' high band, Fig. 6's first NAD and past 128."""
    nan = float("nan")
    n3, n15 = numbers["aa"], numbers["aa15"]
    blur = {p: v["blur_keeps_bias"] for p, v in verdicts_.items()}
    lead = blur["aa15"].values
    pooled = [v for v in antialias.POOLED if v in f.paper.variants]
    eight = [n[f"{v}_band_eight"] for n in (n3, n15) for v in pooled]
    gaps = lead["gaps"]
    least = min(antialias.BLURRED, key=lambda v: lead["lower"][v])  # the least resolved lead
    binomial = [n15[f"{v}_band_high"] for v in ("blur3", "blur5", "maxblur3", "maxblur5")]
    first = [f.learns.fig6[v].get(0, nan) for v in pooled]
    past = [a for v in pooled for i, a in f.learns.fig6[v].items() if i > 128]
    out: dict[str, Any] = {"aa_eight_min": min(eight), "aa_eight_max": max(eight),
                           "aa15_gap_min": min(gaps.values()), "aa15_gap_max": max(gaps.values()),
                           "aa15_least": antialias.NAMES[least], "aa15_judged_seeds": f.learns.seeds,
                           "aa_judged_seeds": f.paper.seeds,
                           **{f"{p}_lead_reading": Markdown(antialias.lead_reading(b)) for p, b in blur.items()},
                           "aa_lead_short": Markdown(antialias.lead_reading(blur["aa"], intervals=False)),
                           "aa15_least_gap": gaps[least], "aa15_least_gap_lower": lead["lower"][least],
                           "aa15_least_gap_upper": lead["upper"][least]}
    out.update({"aa15_binomial_high_min": min(binomial), "aa15_binomial_high_max": max(binomial),
                "aa15_first_min": min(first), "aa15_first_max": max(first),
                "aa15_past128_min": min(past, default=nan), "aa15_past128_max": max(past, default=nan)})
    return out


def run_numbers(results: antialias.AntialiasResults) -> dict[str, Any]:
    """What this page's own run states (`aa_page_*`): its scale's settings (`ch6_antialias.setting_numbers`)."""
    return {f"aa_page_{key}": value for key, value in antialias.setting_numbers(results).items()}


def smoke_claims(results: antialias.AntialiasResults) -> str:
    """What the page's own run shows, as nbval compares it (one line each): the variants it trained, the linear
    ones at chance on the k = 8 lines and above it in the low band, learning their first NAD, and every variant at
    chance on its last. A shard holds part of the grid: its collector checks."""
    n, nan = antialias.key_numbers(results), float("nan")
    linear = [v for v in ("avg", "blur3") if v in results.variants]  # a run may pick its variants
    return "\n".join(str(x) for x in (
        results.variants == ["max", "avg", "blur3"],
        all(n.get(f"{v}_band_eight", nan) < 55 < n.get(f"{v}_band_low", nan) for v in linear),
        all(n.get(f"{v}_fig6_first", nan) > 90 for v in linear),
        all(n.get(f"{v}_fig6_last", nan) < 55 for v in results.variants)))
