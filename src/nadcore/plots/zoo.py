"""Figures and tables of Chapter 7: the NADs of the networks after 2020 beside the book's references.

`energy_maps` draws where the leading NADs' Fourier energy lies, with the harmonics of the 4-pixel
patch grid marked; `spectra` the eigenvalues of every estimate beside those of isotropic gradients;
`isotropy_table` the chapter's measures (`ch7_zoo.isotropy`). The NAD gallery, the convergence panels
and the overlap curves are Chapter 3's (`plots.nads`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from nadcore.experiments import ch7_zoo
from nadcore.fourier import fourier_energy
from nadcore.plots import page, style
from nadcore.plots.nads import (
    ENERGY,
    METHODS,
    convergence_panels,
    describe,
    label_panels,
    log_axis,
    overlaps,
    spectrum_curve,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd
    from matplotlib.figure import Figure

    from nadcore.nads.result import NADResult

ISOTROPIC = dict(color="k", ls=":", lw=1.5)


def label(arch: str) -> str:
    return style.LABELS.get(arch, arch)


def every(results: ch7_zoo.ZooResults) -> list[str]:
    """The architectures of `chapter_results` with stored NADs: references first, then the new ones."""
    return list(results.stored())


DESIGN = {   # what a reader of the architectures' papers recognises, from `models.config`
    "vit": lambda c: f"{c['timm_class']}: {c['patch_size']}x{c['patch_size']} patches, width {c['embed_dim']}, "
                     f"{c['depth']} blocks of {c['num_heads']} heads, class token",
    "mixer": lambda c: f"{c['timm_class']}: {c['patch_size']}x{c['patch_size']} patches, width {c['embed_dim']}, "
                       f"{c['num_blocks']} blocks",
    "convnext": lambda c: f"{c['timm_class']}-Atto: {c['patch_size']}x{c['patch_size']} stem, depths "
                          f"{', '.join(map(str, c['depths']))}, widths {', '.join(map(str, c['dims']))}, "
                          f"layer scale {c['ls_init_value']:g}",
    "resnet18_blur": lambda c: f"ResNet-18 (CIFAR stem), BlurPool-{c['blur']} in its strided blocks",
}


def design_table(archs: Iterable[str]) -> pd.DataFrame:
    """One row per architecture of `archs`: its design (`models.config`), parameters (one input
    channel, two classes) and what it has in place of pooling (`models.FIXED_POOLING`)."""
    from nadcore import models

    rows = [[label(a), DESIGN[a](models.config(a)), f"{sum(p.numel() for p in models.build(a).parameters()):,}",
             models.FIXED_POOLING[a]] for a in archs]
    return page.table(rows, ["network", "design", "parameters", "in place of pooling"], index="network")


def gallery_rows(results: ch7_zoo.ZooResults, skip: Iterable[str] = ()) -> dict[str, NADResult]:
    """`{row label: NADResult}` for `plots.nads.fig5`: each architecture's estimate, but those of `skip`."""
    return {describe(r, lines=True): r for a, r in results.stored().items() if a not in skip}


def energy_maps(results: ch7_zoo.ZooResults, k: int | None = None, ncols: int = 4) -> Figure:
    """One panel per architecture: the mean over its first `k` NADs (default the preset's `top`) of
    the share of each NAD's energy per frequency (zero frequency at the centre, log colour scale);
    thin lines cross at the 16 harmonics of a 4-pixel grid (multiples of 8 cycles)."""
    k = k or results.settings.top
    stored = results.stored()
    archs = list(stored)
    nrows = -(-len(archs) // ncols)
    fig, axes = style.figure(nrows, ncols, width=0.97, height=1.8 * nrows + 0.75, squeeze=False)
    for ax, arch in zip(axes.flat, archs):
        e = fourier_energy(np.asarray(stored[arch].images(k), dtype=np.float64))
        e = (e / e.sum((-2, -1), keepdims=True)).mean(0)
        half = e.shape[-1] // 2
        im = ax.imshow(np.clip(e, ENERGY.vmin, None), cmap="magma", norm=ENERGY,
                       extent=(-half - 0.5, half - 0.5, half - 0.5, -half - 0.5))
        lines = np.flatnonzero(ch7_zoo.harmonics(4, 2 * half)[half]) - half   # -16, -8, 0, 8
        for x in lines:
            ax.axvline(x, color="c", lw=0.5, alpha=0.6)
            ax.axhline(x, color="c", lw=0.5, alpha=0.6)
        ax.set_xticks(lines)
        ax.set_yticks(lines)
        ax.set_title(label(arch))
    label_panels(axes, len(archs), "$k_x$", "$k_y$")
    fig.colorbar(im, ax=axes, location="bottom", shrink=0.6, aspect=30,
                 label=f"share of a NAD's energy (mean of the first {k})")
    return fig


def convergence(results: ch7_zoo.ZooResults) -> Figure:
    """Chapter 3's N vs 2N panels (`plots.nads.convergence_panels`) of the new architectures."""
    return convergence_panels({a: results.convergence[a] for a in results.archs
                               if results.convergence.get(a) is not None})


def secant_overlaps(results: ch7_zoo.ZooResults) -> Figure | None:
    """Overlap of the secant's and the exact gradient's leading k NADs (`ch7_zoo.secant_agreement`),
    one curve per new architecture, or None when no secant estimate is stored."""
    agree = ch7_zoo.secant_agreement(results)
    if not agree:
        return None
    return overlaps({label(a): v for a, v in agree.items()}, results.settings.conv_ks,
                    styles={label(a): dict(color=style.COLORS.get(a)) for a in agree}, width=0.65)


def fig6(results: ch7_zoo.ZooResults) -> Figure | None:
    """Fig. 6 of the chapter (`chapter_results`' `fig6`): test accuracy on D(u_i) against the NAD index i
    of each network's own secant NADs, the reference (LeNet) dashed; None when nothing is stored."""
    runs = {a: f for a, f in results.fig6.items() if f}
    if not runs:
        return None
    cfg = results.settings
    fig, ax = style.figure(width=0.8, height=2.8)
    where = {i: j for j, i in enumerate(cfg.fig6_indices)}   # the indices evenly spaced, in order
    for arch, acc in runs.items():
        idx = sorted(acc)
        ax.plot([where[i] for i in idx], [acc[i] for i in idx], marker="o", ms=4, color=style.COLORS.get(arch),
                ls="-" if arch in results.archs else "--", label=label(arch))
    ax.axhline(50, color="k", ls=":", lw=1, label="chance")
    ax.set_xticks(range(len(where)), [str(i) for i in where])
    ax.set_xlim(-0.3, len(where) - 0.7)
    ax.set_ylim(45, 102)
    ax.set_xlabel("NAD index $i$ (secant NADs)")
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=9, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)   # off every curve
    return fig


def _extent(size):
    half = size // 2
    return (-half - 0.5, half - 0.5, half - 0.5, -half - 0.5)


def spectra(results: ch7_zoo.ZooResults) -> Figure:
    """lambda_i / lambda_0 against i = 0, 1, ... of every estimate (up to its rank, see `plots.nads.spectra`),
    in the architectures' colours (the new ones solid, the references dashed), beside the sample
    covariance of as many isotropic gradients (black dotted); the legend to the right of the axes."""
    fig, ax = style.figure(width=0.97, height=2.9)
    lows = []
    for arch, basis in results.stored().items():
        ls = "-" if arch in results.archs else "--"
        lows.append(spectrum_curve(ax, basis, color=style.COLORS.get(arch), ls=ls, lw=2,
                              label=label(arch)).min())
    iso = np.asarray(results.isotropic_spectrum)
    ax.semilogy(np.arange(len(iso)), iso / iso[0], label="isotropic gradients", **ISOTROPIC)
    log_axis(ax, lows)
    ax.set_xlim(-10, len(iso) + 10)
    ax.set_xlabel("NAD index $i$")
    ax.set_ylabel(r"$\lambda_i / \lambda_0$")
    ax.legend(fontsize=9, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)   # off every curve
    return fig


COLUMNS = {"effective_rank": "effective rank", "top": "variance in first {k} (%)", "low": "low band (%)",
           "harmonic4": "4-px grid (%)", "harmonic8": "8-px grid (%)", "conv": "N vs 2N, k={k}"}


def isotropy_table(results: ch7_zoo.ZooResults) -> pd.DataFrame:
    """One row per architecture (and the isotropic reference): `ch7_zoo.isotropy`'s measures in %
    (the effective rank of 1,024) and the N vs 2N overlap of the first k NADs at the largest N; the
    header of the row labels names the estimate and its N (the stored settings')."""
    k = results.settings.top
    rows = []
    stored = [r.settings for r in results.stored().values()]
    methods, counts = {s["method"] for s in stored}, {int(s["num_networks"]) for s in stored}
    name = "network"
    if len(methods) == 1 and len(counts) == 1:
        method, n = methods.pop(), counts.pop()
        name = f"network ({METHODS.get(method, method)}, N = {n:,})"
    for arch in every(results):
        iso, conv = results.isotropy[arch], results.convergence.get(arch)
        if iso is None:
            continue
        ks = [] if conv is None else list(conv["ks"])
        overlap = float(conv["overlap"][-1][ks.index(k)]) if conv is not None and k in ks else np.nan
        rows.append([label(arch), *_cells(iso), f"{overlap:.2f}"])
    rows.append(["isotropic gradients", *_cells(results.isotropic), ""])
    return page.table(rows, [name, *(c.format(k=k) for c in COLUMNS.values())], index=name)


def secant_table(results: ch7_zoo.ZooResults) -> pd.DataFrame | None:
    """The measures of `isotropy_table` for each new architecture's exact-gradient and secant NADs,
    row under row, and the isotropic reference at the secant's number of networks; None when no
    secant estimate is stored."""
    secant = ch7_zoo.secant_isotropy(results)
    if not secant:
        return None
    k, rows = results.settings.top, []
    agree = ch7_zoo.secant_agreement(results, [k])
    for arch in results.archs:
        if arch in secant and (exact := results.isotropy[arch]) is not None:
            for name, r, iso in (("exact gradient", results.nads[arch], exact),
                                 ("secant", results.secant[arch], secant[arch])):
                rows.append([f"{label(arch)}, {name} ({_networks(r)})", *_cells(iso), f"{float(agree[arch][0]):.2f}"])
    n = next(s for s in results.secant.values() if s is not None).num_networks
    rows.append([f"isotropic gradients ({n:,})", *_cells(secant["isotropic"]), ""])
    columns = [c.format(k=k) for c in list(COLUMNS.values())[:-1]] + [f"secant vs exact, k={k}"]
    return page.table(rows, ["estimate", *columns], index="estimate")


def _networks(result):
    return f"{result.num_networks:,}" + (", bfloat16" if result.precision != "float32" else "")


def _cells(iso: ch7_zoo.Isotropy) -> list[float]:
    return [round(iso.effective_rank), *(round(100 * x, 1) for x in (iso.top, iso.low, iso.harmonic4, iso.harmonic8))]


def verdict(results: ch7_zoo.ZooResults, along: ch7_zoo.NullFig6 | None = None) -> pd.DataFrame:
    """The chapter's opening table: each question, what we expected, what we measure, and whether
    it came out as expected (`ch7_zoo.verdict`; `along`: Fig. 6 along ConvNeXt's null directions)."""
    rows = [[v.question, v.expected, v.measured, v.outcome] for v in ch7_zoo.verdict(results, along).values()]
    columns = ["Question", "We expected", "We measure (exact gradient)", "Verdict"]
    return page.table(rows, columns, index="Question")

