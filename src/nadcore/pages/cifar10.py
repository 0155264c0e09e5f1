"""What Chapter 4 (NADs on CIFAR-10's stand-ins) states: Figs. 7-8 on the digits and Fashion-MNIST from the
bundle beside the published ones, the reviewers' test, and what the page's own run shows, by one policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, cifar, presets, verdicts
from nadcore.checks import InputError
from nadcore.experiments import ch4_cifar10
from nadcore.pages import paper_cost, preset_numbers
from nadcore.plots import cifar as plots
from nadcore.plots import page

STEM = "04_cifar10"


@dataclass
class Findings:
    """Chapter 4's page from the bundle: Figs. 7-8 on the digits `stored` and on Fashion-MNIST `fashion` (None
    where not stored), Fashion-MNIST's settings `fp`, the stored runs by dataset `runs`, the "not computed here"
    boxes `boxes`, and `glued` {name: value}."""
    stored: dict[str, Any] | None
    fashion: dict[str, Any] | None
    fp: presets.Cifar10
    runs: dict[str, Any] = field(default_factory=dict)
    boxes: list[Any] = field(default_factory=list)
    glued: dict[str, Any] = field(default_factory=dict)


def findings(bundle_dir: str = "../bundle", data_root: str = "../data") -> Findings:
    """Every number Chapter 4's page states from the bundle in `bundle_dir` (Fashion-MNIST's sizes read from
    `data_root`); the page's own run adds `run_numbers`."""
    fp = bundle.cifar_item("fashion")
    f = Findings(bundle.cifar(bundle_dir, progress=False),
                 bundle.cifar(bundle_dir, progress=False, dataset="fashion", data_root=data_root), fp)
    if f.stored is None:
        f.boxes.append(page.not_computed("Figs. 7-8 on the digits with the 10,000-network NADs",
                                         "python -m nadcore.bundle cifar", "a few minutes"))
    if f.fashion is None:
        f.boxes.append(page.not_computed("Figs. 7-8 on Fashion-MNIST with the 10,000-network NADs",
                                         "make fashion && python -m nadcore.bundle cifar_fashion", "40 minutes"))
    f.runs = {n: r for n, r in (("digits", f.stored), ("Fashion-MNIST", f.fashion)) if r is not None}
    g = f.glued
    g.update(paper_cost(STEM))
    g.update(preset_numbers("cifar10"))
    g.update({"f_epochs": fp.recipe.epochs, "f_count": len(fp.indices)})
    numbers = ch4_cifar10.curve_numbers((f.fashion or {}).get("curve"), fp.indices)   # nan while not computed
    numbers.update(ch4_cifar10.flip_numbers((f.fashion or {}).get("flip"), fp.flip_archs))
    g.update({f"f_{k}": v for k, v in numbers.items()})
    sizes = ([len(cifar.load("fashion", data_root, train=t)[1]) for t in (True, False)] if f.fashion is not None
             else [float("nan")] * 2)
    g["f_train_n"], g["f_test_n"] = sizes
    return f


def fig7(f: Findings, arch: str) -> Any:
    """Fig. 7 of each stored run (`f.runs`) beside the published one (ours: `arch`), or None before any is stored."""
    return plots.fig7_beside_published({n: r["curve"] for n, r in f.runs.items()}, arch) if f.runs else None


def curve_table(f: Findings, arch: str) -> Any:
    """Fig. 7's numbers of each stored run beside the published ones, or None before any is stored."""
    label = plots.style.LABELS[arch]
    return plots.curve_table({f"ours: {label}, {n}": r["curve"] for n, r in f.runs.items()}) if f.runs else None


def fig8(f: Findings) -> Any:
    """Fig. 8 of each stored run beside the published one, or None before any is stored."""
    return plots.fig8_beside_published({n: r["flip"] for n, r in f.runs.items()}) if f.runs else None


def carrier_gallery(x: Any, y: Any, U: Any, i: int, eps: float, names: Any) -> Any:
    """The images `x` (labels `y`, class `names`) with the carrier of size `eps` on NADs `i` and `i + 1` of `U`."""
    return plots.poison_gallery(x, cifar.poison(x, y, U, i, eps), y, names, title=f"Carrier on NADs {i} and {i + 1}")


def fashion_gallery(fp: presets.Cifar10, bundle_dir: str, data_root: str) -> Any:
    """`carrier_gallery` on Fashion-MNIST's first test image of each class, along NADs 0 and 1 of the bundle's
    `fp.arch` estimate."""
    x, y = cifar.load("fashion", data_root, train=False)
    pick = cifar.first_of_each_class(y)
    nads = bundle.load_nad(fp.arch, bundle_dir=bundle_dir)
    if nads is None:
        raise InputError(f"bundle_dir must hold the NADs of {fp.arch}; {bundle_dir} does not")
    return carrier_gallery(x[pick], y[pick], nads.nads, 0, fp.eps, cifar.classes("fashion"))


def distances(x: Any, y: Any, U: Any, p: presets.Cifar10) -> dict[str, float]:
    """How far the carrier moves the images `x` (labels `y`) along the NADs `U` at the first and the last of the
    preset `p`'s indices."""
    first, last = p.indices[0], p.indices[-1]
    d = {i: (cifar.poison(x, y, U, i, p.eps) - x).flatten(1).norm(dim=1) for i in (first, last)}
    return {"d_first_median": float(d[first].median()), "d_first_max": float(d[first].max()),
            "d_last_max": float(d[last].max()), "d_last_min": float(d[last].min())}


def review_numbers(clean_acc: float, rows: list[dict[str, Any]], p: presets.Cifar10) -> dict[str, Any]:
    """The reviewers' test: the clean model's accuracy and how many predictions a shift along the first and the
    last NADs changes."""
    shift = {w: [r["changed"] for r in rows if r["mode"] == "shift" and r["where"] == w] for w in ("first", "last")}
    return {"clean_acc": float(clean_acc), "shift_first_max": max(shift["first"]),
            "shift_last_max": max(shift["last"]), "review_size": p.review_size}


def run_numbers(f: Findings, p: presets.Cifar10, nads: Any, curve: Any, flip: Any, data: ch4_cifar10.ChapterData,
                seed: int) -> dict[str, Any]:
    """What the page's own run (at preset `p`, with `nads`, Fig. 7's `curve`, Fig. 8's `flip`, on `data`, with
    `seed`) adds: its numbers (page_), the digits' (b_: the stored run, else this one), the paper's,
    the readings of which carriers hijack training and where the flip points, and the verdict rows."""
    sizes = len(data.train[1]), len(data.test[1])
    ev = np.asarray(nads.eigenvalues)
    rank = int((ev > ev[0] * 1e-8).sum())   # the covariance of N networks has rank < N
    out: dict[str, Any] = {"page_nad_networks": nads.num_networks, "page_nad_rank": rank}
    numbers = ch4_cifar10.curve_numbers(curve, p.indices)
    out.update({f"page_{k}": numbers[k] for k in ("clean", "first", "first_follow")})
    out["page_later_min"] = numbers["rest_min"]   # every carrier past the first
    out["page_null"] = Markdown(ch4_cifar10.past_rank(p.indices, rank))
    best = f.stored if f.stored is not None else {"curve": curve, "flip": flip}   # the stored results
    stand_ins = {"the digits": best, **({"Fashion-MNIST": f.fashion} if f.fashion is not None else {})}
    b = ch4_cifar10.curve_numbers(best["curve"], p.indices, test_n=sizes[1])
    b.update(ch4_cifar10.flip_numbers(best["flip"], ("lenet", "logreg")), train_n=sizes[0], test_n=sizes[1])
    out.update({f"b_{k}": v for k, v in b.items()})
    out.update({f"page_{k}": v for k, v in ch4_cifar10.flip_numbers(flip, ("lenet",)).items()})
    out.update({f"paper_{k}": v for k, v in ch4_cifar10.paper_numbers().items()})
    out.update(_readings(best, stand_ins, p, seed))
    epochs = {"the digits": (bundle.cifar_item() if f.stored is not None else p).recipe.epochs,
              "Fashion-MNIST": f.fp.recipe.epochs}
    rows = verdicts.stand_in_rows({n: (r["curve"], r["flip"], epochs[n]) for n, r in stand_ins.items()},
                                  digits="the digits")
    out["verdict"] = verdicts.chapter_table(rows)
    out["verdict_note"] = Markdown(verdicts.stand_in_thresholds())
    return out


def _readings(best, stand_ins, p: presets.Cifar10, seed):
    """Which carriers hijack training (`carrier_reading`, `fig7_verdict`), where the flip points, and the runs."""
    margin = ch4_cifar10.HIJACK_MARGIN
    readings = {n: ch4_cifar10.carrier_reading(r["curve"], margin) for n, r in stand_ins.items()}
    paper = ch4_cifar10.carrier_reading(ch4_cifar10.published_curve(), margin)
    flip = ch4_cifar10.flip_reading({n: r["flip"] for n, r in stand_ins.items()}, size=verdicts.FLIP_DROP)
    return {"margin": margin, "fig7_text": Markdown(ch4_cifar10.fig7_verdict(readings, paper)["text"]),
            "flip_text": Markdown(flip["text"]), "flip_direction": Markdown(flip["direction"]),
            "seeds_md": Markdown(ch4_cifar10.runs_phrase(best["curve"], seed, "training seed")),
            "runs_md": Markdown(ch4_cifar10.runs_phrase(best["curve"], seed)),
            "our_indices": Markdown(", ".join(map(str, p.indices)))}


def smoke_claims(curve: Any, p: presets.Cifar10) -> str:
    """What the page's own Fig. 7 run (`curve`, at the preset `p`) shows, as nbval compares it: the clean test
    accuracy without carrier and with the carrier on the first and the last NAD index, rounded to the nearest 20
    points (the finding, not the noise)."""
    numbers = ch4_cifar10.curve_numbers(curve, p.indices)
    return "\n".join(f"{name}: ~{20 * round(numbers[key] / 20)}"
                     for name, key in (("no carrier", "clean"), (f"carrier at NAD {p.indices[0]}", "first"),
                                       (f"carrier at NAD {p.indices[-1]}", "last")))
