"""What Chapter 3 (neural anisotropy directions) states: the NADs and spectra beside the published ones, their
overlaps, Fig. 6 for every network and estimate, the secant step as a dial, Eq. 5, and the verdicts, from the
bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, presets, published, store, verdicts
from nadcore.experiments import ch3_nads
from nadcore.pages import paper_cost, preset_numbers
from nadcore.plots import nads as plots
from nadcore.plots import page

STEM = "03_nads"
KS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]   # the overlaps' subspace sizes (the figure's x axis)


@dataclass
class Findings:
    """Chapter 3's page: `glued` {name: value} and what its figures draw: every estimate the bundle holds
    `stored` {(arch, method): NADResult}, each seed's Fig. 6 run along either estimate `fig6_nads`, the overlaps
    with the published NADs `overlap` at `KS`, LeNet's Fig. 6 `f6` with the other curves `fig6_more`, the Fig. 6
    panels of either estimate `panels` {title: (arch, {method: spread})}, and the verdict `rows`."""
    stored: dict[tuple[str, str], Any]
    fig6_nads: dict[str, Any]
    overlap: dict[tuple[str, str], Any]
    f6: ch3_nads.Fig6Comparison | None = None
    fig6_more: dict[str, Any] = field(default_factory=dict)
    panels: dict[str, Any] = field(default_factory=dict)
    rows: dict[str, verdicts.Row] = field(default_factory=dict)
    glued: dict[str, Any] = field(default_factory=dict)

    @property
    def secant(self) -> dict[tuple[str, str], Any]:
        """The secant estimates (Fig. 5's)."""
        return {k: r for k, r in self.stored.items() if k[1] == "secant"}


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict, table and dropdown figure Chapter 3's page states, from the bundle in `bundle_dir`."""
    stored = bundle.stored_nads(bundle_dir=bundle_dir)
    fig6_nads = {name: bundle.load_fig6(bundle_dir, name=name) for name in bundle.FIG6_NADS}
    f = Findings(stored, fig6_nads, bundle.nad_overlaps(KS, bundle_dir=bundle_dir))
    f.glued.update(paper_cost(STEM))
    f.glued.update(preset_numbers("nads"))
    for part in (_low_frequency(f), _spectra(f), _overlaps(f, bundle_dir), _fig6(f, bundle_dir), _estimates(f)):
        f.glued.update(part)
    dial = bundle.secant_dial(bundle_dir)
    eq5 = bundle.load_eq5(bundle_dir)
    f.glued.update(_dial(dial))
    f.glued.update(_eq5(eq5))
    f.glued.update(_verdicts(f, dial, eq5, bundle_dir))
    return f


def _ratio(lam, i):
    """lambda_i / lambda_0, i counted from 0 (the book's convention)."""
    return float(lam[i] / lam[0])


def _low_frequency(f: Findings):
    """The share of each NAD's energy at low frequencies, ours and the published."""
    low = {(a, m): ch3_nads.low_frequency_share(r) for (a, m), r in f.stored.items()}
    low.update({(a, "published"): ch3_nads.low_frequency_share(published.nads(a)) for a in published.ARCHS})
    out: dict[str, Any] = {f"low_{a}_{m}_{i + 1}": float(v) for (a, m), shares in low.items()
                           for i, v in enumerate(shares)}
    out["low_chance"] = 81 / 1024
    out.update({f"secant_n_{a}": bundle.nad_networks(a) for a in bundle.GPU_NAD_ARCHS})
    return out


def _spectra(f: Findings):
    """The spectra's ratios at 100, 300 and the last index, the trace, and the Marchenko-Pastur edge."""
    spectra = {(a, m): r.eigenvalues for (a, m), r in f.stored.items()}
    spectra.update({(a, "published"): published.spectrum(a) for a in published.ARCHS})
    out: dict[str, Any] = {}
    for (a, m), lam in spectra.items():
        out.update({f"spec_{a}_{m}_{i}": _ratio(lam, i) for i in (100, 300)})
        out[f"spec_{a}_{m}_last"] = _ratio(lam, len(lam) - 1)
    out["sv_lenet_100"] = _ratio(published.singular_values("lenet"), 100)
    trace, mine = published.spectrum("lenet").sum(), f.stored[("lenet", "secant")].eigenvalues.sum()
    out["trace_difference"] = float(abs(trace - mine) / mine)
    gamma = 1024 / (bundle.nad_networks("logreg") - 1)
    out["mp_edge"] = ((1 - gamma ** 0.5) / (1 + gamma ** 0.5)) ** 2
    out["densenet121_missing_rank"] = 1024 - (bundle.nad_networks("densenet121") - 1)
    return out


def _overlaps(f: Findings, bundle_dir):
    """The overlaps with the published NADs, ResNet-18's second eigenvalue and the convergence at the paper's N."""
    out: dict[str, Any] = {f"overlap_{a}_{m}_{k}": float(v) for (a, m), values in f.overlap.items()
                           for k, v in zip(KS, values)}
    out["lambda2_resnet18"] = _ratio(f.stored[("resnet18", "secant")].eigenvalues, 1)
    conv = store.load(bundle.convergence_path(bundle_dir), bundle.convergence_item()).arrays
    out["conv_16"] = float(conv["overlap"][-1][list(conv["ks"]).index(16)])
    out["conv_n"], out["conv_2n"] = int(conv["sizes"][-1]), 2 * int(conv["sizes"][-1])
    return out


def _fig6(f: Findings, bundle_dir):
    """Fig. 6: LeNet's seeds at the caption's and the closest sigma, the deep networks', the released NADs'; its
    table and readings."""
    f6 = bundle.fig6_comparison(bundle_dir)
    deep_runs = {arch: verdicts.fig6_runs(f.fig6_nads, item, "secant") for item, (arch, _) in bundle.DEEP_FIG6.items()}
    f6 = ch3_nads.with_seed_means(f6, {s: verdicts.fig6_runs(f.fig6_nads, "fig6", "secant", s)
                                       for s in (f6.settings["sigma"], f6.best_sigma)})
    closest = {f6.arch: f6.ours_best, **{a: ch3_nads.seed_spread(r) for a, r in deep_runs.items() if r}}
    more = {f"ours, σ = {bundle.DEEP_SIGMA:g}": closest} if any(closest.values()) else {}
    released = verdicts.fig6_runs(f.fig6_nads, "fig6", "published", f6.settings["sigma"])
    if released:   # the published curve's own NADs were not released
        more[f"along the released NADs, σ = {f6.settings['sigma']:g}"] = {f6.arch: ch3_nads.seed_spread(released)}
    f.f6, f.fig6_more = f6, more
    best = f6.best_sigma
    best_rows = dict((i, o) for i, o, _ in ch3_nads.fig6_rows(f6.ours_best, f6.published))
    shown = [r for r in ch3_nads.fig6_rows(f6.ours, f6.published) if r[0] in (0, 32, 64, 128, 256, 512, 992)]
    out: dict[str, Any] = {"fig6_table": page.table(
        [(i, f"{o:.1f}", f"{best_rows[i]:.1f}" if i in best_rows else "–", f"{q:.1f}") for i, o, q in shown],
        ["NAD index", f"ours, σ = {f6.settings['sigma']:g} (%)",
         f"ours, σ = {best:g} (%)" if best else "ours, closest σ (%)", "published (%)"], index="NAD index")}
    out.update(ch3_nads.fig6_numbers(f6, margin=verdicts.CHANCE_MARGIN))
    out["fig6_seeds"] = f6.seeds
    out["fig6_lenet_reading"] = Markdown(ch3_nads.fig6_lenet_reading(f6, verdicts.CURVE_MAD))
    deep_reading = [ch3_nads.deep_fig6_reading(plots.style.LABELS[arch], deep_runs[arch], f6.curves[arch],
                                               bundle.fig6_item(name=item)[2], f6.settings["sigma"],
                                               batch_norm=bundle.DEEP_TRAIN[arch][0].endswith("_bn"))
                    for item, (arch, _) in bundle.DEEP_FIG6.items() if deep_runs[arch]]
    out["fig6_deep_reading"] = Markdown("\n\n".join(deep_reading))
    return out


def _estimates(f: Findings):
    """Fig. 6 along the secant's and the exact gradient's NADs: LeNet where both are stored, VGG-11."""
    networks = {}   # {panel: (arch, {method: the complete seeds' runs})}
    for s in (bundle.DEEP_SIGMA, bundle.FIG6_CAPTION):
        by = {m: verdicts.fig6_runs(f.fig6_nads, "fig6", m, s) for m in ("secant", "autograd")}
        if all(by.values()):
            networks[f"LeNet, σ = {s:g}"] = ("lenet", by)
    vgg_sigma = bundle.fig6_item(name="fig6_vgg11")[2]["sigma"]
    vgg_title = f"VGG-11, σ = {vgg_sigma:g}"
    networks[vgg_title] = ("vgg11", {m: verdicts.fig6_runs(f.fig6_nads, "fig6_vgg11", m)
                                     for m in ("secant", "autograd")})
    f.panels = {t: (a, {m: ch3_nads.seed_spread(r) for m, r in by.items() if r}) for t, (a, by) in networks.items()}
    out: dict[str, Any] = {"vgg_nads_sigma": f"{vgg_sigma:g}"}
    lenet = networks[f"LeNet, σ = {bundle.DEEP_SIGMA:g}"][1]   # LeNet at the closest sigma
    out.update({f"lenet_{m}_0": ch3_nads.seed_spread(runs)[0][0] for m, runs in lenet.items()})
    vgg = {m: ch3_nads.seed_spread(runs) for m, runs in networks[vgg_title][1].items()}
    out["vgg_secant_0"] = vgg["secant"][0][0]   # the introduction reads these
    out["vgg_exact_min"] = min(m for m, _ in vgg["autograd"].values())
    out["vgg_exact_max"] = max(m for m, _ in vgg["autograd"].values())
    named = {"VGG-11 with batch norm": networks[vgg_title][1]}
    named.update({t.replace(", σ", " at σ"): by for t, (a, by) in networks.items() if a == "lenet"})   # both panels
    out["estimates_reading"] = Markdown(ch3_nads.estimates_reading(named, verdicts.LEARNED, verdicts.CHANCE_MARGIN))
    return out


def _dial(dial):
    """The secant step as a dial: LeNet's secant NADs at each step h against the exact-gradient, published and
    h = 100 ones, and why (the first layer's switches); its table and its figure (shown in a dropdown)."""
    out: dict[str, Any] = {f"dial_{name}": value for name, value in ch3_nads.dial_numbers(dial["table"]).items()}
    idx = bundle.SECANT_DIAL.fig6_indices
    out.update({"dial_networks": bundle.SECANT_DIAL.networks, "dial_sigma": f"{bundle.DEEP_SIGMA:g}",
                "dial_indices": ", ".join(map(str, idx[:-1])) + f" and {idx[-1]}",
                "dial_conv_n": bundle.SECANT_DIAL.conv})
    out.update({f"dial_{kind}_{h:g}".replace(".", "_"): 100 * value for h, share in dial["flips"].items()
                for kind, value in share.items()})
    rows, columns = ch3_nads.dial_rows(dial["table"], list(bundle.DIAL_REFERENCES))
    out["dial_table"] = page.table(rows, columns, index=["measure", "at"])
    out["dial_figure"] = plots.secant_dial(dial["table"], width=0.8)
    return out


def _eq5(eq5):
    """Eq. 5: the mixed derivative's expected right singular vectors beside the gradient covariance's
    eigenvectors, and its figure (shown in a dropdown)."""
    ks = list(bundle.EQ5.ks)
    out: dict[str, Any] = {"eq5_networks": bundle.EQ5.networks}
    out.update({f"eq5_{arch}_{key}_16": float(x[key][ks.index(16)]) for arch, x in eq5.items()
                for key in ("autograd", "secant", "floor")})
    out["eq5_figure"] = plots.eq5(eq5, ks, width=0.8)
    return out


def _verdicts(f: Findings, dial, eq5, bundle_dir):
    """The results page's verdicts of this page's claims and their table; which NADs predict learning (beyond
    the paper); Fig. 6 LeNet along the released NAD file, and what the published curve's spectrum is closest to."""
    ov = {key: np.array([values[KS.index(k)] for k in verdicts.OVERLAP_KS]) for key, values in f.overlap.items()}
    f.rows = claims = verdicts.nads_rows(verdicts.Stored(stored=f.stored, overlaps=ov, fig6=f.f6, fig6_nads=f.fig6_nads,
                                                         eq5=eq5, spectra=bundle.fig6_spectra(bundle_dir)))
    out: dict[str, Any] = {f"v_{key}": row.verdict for key, row in claims.items()}
    out["v_exact"] = verdicts.exact_question(verdicts.Stored(stored=f.stored, overlaps=ov, fig6_nads=f.fig6_nads,
                                                             dial=dial)).outcome
    released = verdicts.fig6_runs(f.fig6_nads, "fig6", "published", bundle.FIG6_CAPTION)
    out["fig6_released_32"] = ch3_nads.seed_spread(released)[32][0] if released else float("nan")
    out["fig6_released_seeds"] = Markdown(ch3_nads.seeds_phrase(max(len(released), 1)))
    out["fig6_authors_32"] = published.AUTHORS_CODE_FIG6_LENET[32][0]
    trace = claims["fig6_lenet"].values["trace"]
    out["fig6_trace_closest"] = min(trace, key=trace.get)
    out["fig6_vgg11_level"] = abs(claims["fig6_vgg11"].values["bias"])
    out["fig6_vgg11_seeds"] = Markdown(ch3_nads.seeds_phrase(claims["fig6_vgg11"].values["seeds"]))
    out["verdict"] = verdicts.chapter_table(claims.values())
    out["verdict_note"] = Markdown(verdicts.overlap_chance(verdicts.OVERLAP_KS) + " "
                                   + verdicts.thresholds("nads", "curves", "chance"))
    return out


def fig6_beside(f: Findings) -> Any:
    """Fig. 6 beside the published curves: our LeNet at the caption's sigma, the other curves at the closest one."""
    f6 = f.f6
    assert f6 is not None, "findings always reads Fig. 6's comparison"
    return plots.fig6_compare({f6.arch: f6.ours}, f6.curves, more=f.fig6_more or None,
                              label=f"ours, σ = {f6.settings['sigma']:g}", width=0.66)


def run_numbers(run: ch3_nads.ChapterRun) -> dict[str, Any]:
    """What the page's own run (`ch3_nads.chapter_results`) adds to its text: each estimate's networks, numerical
    rank (`ch3_nads.rank_limit`), its last eigenvalue there and the largest past it (over lambda_0), and the N vs
    2N overlaps: the largest N and the best overlap there at k < N."""
    results, conv = run.nads, run.convergence
    out: dict[str, Any] = {}
    for a, r in results.items():
        lim, vals = ch3_nads.rank_limit(r), r.eigenvalues / r.eigenvalues[0]
        out.update({f"smoke_n_{a}": r.num_networks, f"smoke_rank_{a}": lim,
                    f"smoke_last_{a}": float(vals[lim - 1])})
        if lim < len(vals):
            out[f"smoke_tail_{a}"] = float(np.abs(vals[lim:]).max())
    largest, ks = int(conv["sizes"][-1]), np.asarray(conv["ks"])
    out["smoke_conv_largest_n"] = f"{largest:,}"
    out["smoke_conv_top_overlap"] = f"{float(np.max(np.asarray(conv['overlap'])[-1][ks < largest])):.2f}"
    return out


def smoke_claims(p: presets.Nads, run: ch3_nads.ChapterRun) -> str:
    """The text's claims about the page's own run `run` at the preset `p`, not its numbers (those move between
    CPUs), as nbval compares them: Fig. 6, the secant-vs-autograd overlaps, the convergence."""
    accuracy, curves, conv = run.fig6, run.curves, run.convergence
    acc = dict(zip(p.fig6_indices, map(float, accuracy)))
    first, last = p.fig6_indices[0], p.fig6_indices[-1]
    lines = [f"{p.fig6_arch}: above 90 % on D(u_{first}), within 5 points of chance on D(u_{last}): "
             f"{acc[first] > 90 and abs(acc[last] - 50) < 5}"]
    lines += [f"{label} overlap below 0.5 at every k: {max(map(float, values)) < 0.5}"
              for label, values in curves.items()]
    lines.append(f"convergence overlap below 0.5 at the largest N: {float(max(conv['overlap'][-1])) < 0.5}")
    return "\n".join(lines)
