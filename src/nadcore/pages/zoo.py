"""What Chapter 7 (NADs of a model zoo) states: the key numbers of the zoo's NADs, Fig. 6's recipe and cost, one
anisotropy measure for every network in the book, ConvNeXt's null space, and the verdicts, from the bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nadcore import bundle, plan, presets, prose
from nadcore import zoo as architectures
from nadcore.experiments import ch7_zoo as zoo
from nadcore.fourier import fourier_energy
from nadcore.pages import paper_cost
from nadcore.plots import page
from nadcore.plots import zoo as figs

STEM = "07_zoo"
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass
class Findings:
    """Chapter 7's page: `glued` {name: value} and what its figures draw, the stored zoo `paper`
    (`bundle.load_zoo`), and the boxes of what the bundle does not hold yet, by section (`boxes`: "nads",
    "secant", "fig6")."""
    paper: zoo.ZooResults
    glued: dict[str, Any] = field(default_factory=dict)
    boxes: dict[str, list[Any]] = field(default_factory=dict)


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict and table Chapter 7's page states, from the bundle in `bundle_dir`."""
    f = Findings(bundle.load_zoo(bundle_dir))
    f.boxes = _boxes(f.paper, bundle_dir)
    f.glued.update(paper_cost(STEM))
    for part in (_key_numbers(f.paper), _costs(f.paper), _energies(f.paper), _anisotropy(bundle_dir)):
        f.glued.update(part)
    null, along = _null(f.paper, bundle_dir)
    f.glued.update({f"zoo_{key}": v for key, v in (null or {}).items()})
    f.glued.update(_null_words(null, along))
    f.glued["verdict"] = figs.verdict(f.paper, along)   # with Fig. 6 along the null space, once stored
    return f


def _boxes(paper, bundle_dir):
    """What the bundle does not hold yet, for each section of the page: the NADs, the secant's (with the hours it
    would take) and Fig. 6."""
    out: dict[str, list[Any]] = {"nads": [], "secant": [], "fig6": []}
    if gaps := zoo.missing(paper):
        out["nads"].append(page.not_computed(f"the NADs of {', '.join(gaps)} at the published scale",
                                             "python -m nadcore.bundle zoo"))
    if missing := [a for a, s in paper.secant.items() if s is None]:
        todo = plan.chapter_plan(STEM, "paper", results_dir=bundle_dir).items
        hours = sum(i.cost_s or 0 for i in todo if i.name.endswith("secant")) / 3600
        out["secant"].append(page.not_computed(f"the secant NADs of {', '.join(figs.label(a) for a in missing)}",
                                               "python -m nadcore.bundle zoo", f"{hours:.1f} hours"))
    if gaps := [a for a, acc in paper.fig6.items() if len(acc) < len(paper.settings.fig6_indices)]:
        out["fig6"].append(page.not_computed(f"Fig. 6 of {', '.join(figs.label(a) for a in gaps)}",
                                             "python -m nadcore.bundle zoo"))
    return out


def run_numbers(scale: str, results: zoo.ZooResults) -> dict[str, Any]:
    """What this page's own run states (`zoo_page_*`): its scale, networks, method, the architectures it computed
    and its N vs 2N convergence's N."""
    conv_n = results.settings.conv_sizes[-1]
    return {"zoo_page_scale": scale, "zoo_page_n": results.settings.num_networks,
            "zoo_page_method": results.settings.method,
            "zoo_page_archs": " and ".join(figs.label(a) for a in results.references + results.archs),
            "zoo_page_conv_n": conv_n, "zoo_page_conv_2n": 2 * conv_n}


def _power(x, up=False):
    """"10⁻³": the power of ten below `x` (above it with `up`), as text."""
    return "10" + str(int(np.ceil(np.log10(x)) if up else np.floor(np.log10(x)))).translate(SUPERSCRIPT)


def _key_numbers(paper):
    """The zoo's key numbers (`ch7_zoo.key_numbers`), ConvNeXt's eigenvalues past its rank as a power of ten."""
    numbers = zoo.key_numbers(paper)
    out: dict[str, Any] = {f"zoo_{key}": value for key, value in numbers.items()}
    if "convnext_past" in numbers:
        out["zoo_convnext_past_power"] = _power(numbers["convnext_past"])
    return out


def _costs(paper):
    """Fig. 6's published recipe and ours, and what a cell and an estimate cost on a CPU."""
    f6, cfg = presets.preset("nads", "paper").fig6, paper.settings   # the published recipe
    out: dict[str, Any] = {f"zoo_pub_fig6_{key}": getattr(f6, key) for key in ("n_train", "epochs", "sigma")}
    cell_h = [plan.train_cost("cpu", a, 2 * f6.n_train, f6.epochs) / 3600 for a in paper.archs]
    out["zoo_fig6_hours"] = f"{min(cell_h):.1f} to {max(cell_h):.1f} hours"
    out["zoo_fig6_lenet"] = plan.duration(plan.train_cost("cpu", "lenet", 2 * f6.n_train, f6.epochs))
    for method in ("secant", "autograd"):
        each = [s for a in paper.archs if (s := plan.NAD_S[(a, method)]) is not None]
        out[f"zoo_{method}_s"] = f"{min(each):.2g} to {max(each):.2g}"
    each = [s for a in paper.archs
            if (s := plan.nad_seconds(a, "secant", cfg.secant_precision, cfg.secant_compiled)) is not None]
    out["zoo_compiled_s"] = f"{min(each):.2g} to {max(each):.2g}"
    out["zoo_secant_passes"] = 2 * paper.nads["vit"].nads.shape[1]
    out.update({f"zoo_fig6_{key}": getattr(cfg.fig6, key) for key in ("n_train", "epochs", "sigma")})
    return out


def _energies(paper):
    """The blurred ResNet-18's first two NADs at the zero frequency and its second eigenvalue; ConvNeXt's NADs on
    the 4x4 patches of x0."""
    out: dict[str, Any] = {}
    for method, r in (("secant", paper.secant["resnet18_blur"]), ("exact", paper.nads["resnet18_blur"])):
        if r is not None:    # the share of each of its first two NADs' energy at the zero frequency
            energy = fourier_energy(np.asarray(r.nads[:2], dtype=np.float64).reshape(2, 32, 32))
            out.update({f"zoo_blur_{method}_dc{j}": float(e[16, 16] / e.sum()) for j, e in enumerate(energy)})
            lam = np.asarray(r.eigenvalues, dtype=np.float64)
            out[f"zoo_blur_{method}_lam1"] = float(lam[1] / lam[0])
    for method, r in (("exact", paper.nads["convnext"]), ("secant", paper.secant["convnext"])):
        if r is not None:    # tile{j}: the patch's (row, column), not glued
            out.update({f"zoo_convnext_{method}_{key}": value for key, value in zoo.patch_reading(r).items()
                        if not isinstance(value, tuple)})
    return out


def _anisotropy(bundle_dir):
    """One anisotropy measure for every network in the book: the effective rank, secant and exact gradient side
    by side, and which is lowest."""
    every = zoo.anisotropy_table(bundle.stored_nads(bundle.NAD_ARCHS + bundle.GPU_NAD_ARCHS + bundle.ZOO_ARCHS,
                                                    bundle_dir=bundle_dir))

    def cell(x):
        return "–" if x is None else f"{x[0]:.1f} ({x[1]:,})"

    table = page.table([(prose.name(a), cell(m.get("secant")), cell(m.get("autograd"))) for a, m in every.items()],
                       ["network", "effective rank, secant (networks)", "effective rank, exact gradient (networks)"])
    exact = {a: m["autograd"][0] for a, m in every.items() if "autograd" in m}
    secant = {a: m["secant"][0] for a, m in every.items() if "secant" in m}
    low = sorted((a for a in secant if secant[a] < secant.get("vit", 0)), key=lambda a: secant[a])
    return {"zoo_anisotropy_table": table.style.hide(axis="index"),
            "zoo_most_anisotropic_exact": prose.name(min(exact, key=lambda a: exact[a])),
            "zoo_secant_below_vit": prose.and_list(f"{prose.name(a)} ({secant[a]:.1f})" for a in low),
            "zoo_vit_secant_rank": secant.get("vit", float("nan"))}


def _null(paper, bundle_dir):
    """ConvNeXt's null space (`ch7_zoo.null_numbers`): x0 on each stem patch, the layers behind it, Fig. 6 along
    it, and the stored Fig. 6 along it; None, None where ConvNeXt's NADs are not stored."""
    convnext = paper.nads["convnext"]
    if convnext is None:
        return None, None
    along = bundle.load_zoo_null(bundle_dir)
    ablation = zoo.null_ablation(networks=2, variants=["as built", "bias", "stem LN", "both LN"])
    return zoo.null_numbers(zoo.null_overlap(convnext), ablation, along), along


def _null_words(null, along):
    """The null space's numbers as the prose words them (powers of ten, seeds, what Fig. 6 `along` it can show)."""
    if null is None:
        return {}
    seeds = int(np.isfinite(along.null).all(axis=1).sum())   # seeds with every tile trained
    out: dict[str, Any] = {"zoo_null_chance": null["null_null"] / (null["null_rank"] + null["null_null"]),
                           "zoo_null_miss_power": _power(1 - null["null_worst"], up=True)}
    out.update({f"zoo_null_cos_{v}_power": _power(null[f"null_cos_{v}"], up=True) for v in ("as_built", "stem_LN")})
    out["zoo_null_layer_scale_power"] = _power(architectures.config("convnext")["ls_init_value"], up=True)
    out["zoo_null_fig6_tiles"] = len(along.tiles)
    out["zoo_null_fig6_seeds_words"] = "one seed" if seeds == 1 else f"{seeds} seeds"
    if "null_fig6_gap" in null:   # what the comparison can show
        ceiling = min(null["null_fig6_null"], null["null_fig6_control"]) >= 99.5
        out["zoo_null_fig6_reach"] = ("both at the ceiling, which hides any difference in speed" if ceiling
                                      else f"within {null['null_fig6_gap']:.1f} points on every patch")
    return out
