"""Figures of Chapter 6: Fig. 1 of every LeNet pooling variant, Theorem 1 beside the measured
grids of the linear ones, and the variants' NAD spectra, convergence and Fig. 6."""

import matplotlib.pyplot as plt
import numpy as np

from nadcore.plots.nads import overlaps

LABELS = {"max": "max pool (published)", "avg": "average pool", "blur3": "BlurPool, 3 taps",
          "blur5": "BlurPool, 5 taps", "maxblur3": "MaxBlurPool, 3 taps", "maxblur5": "MaxBlurPool, 5 taps",
          "strided": "stride-2 convs", "none": "no pooling"}


def _heat(ax, image, grid, title, vmin=50, vmax=100, cmap="viridis"):
    ext = (grid.freqs[0] - 0.5, grid.freqs[-1] + 0.5, grid.freqs[-1] + 0.5, grid.freqs[0] - 0.5)
    im = ax.imshow(image, cmap=cmap, vmin=vmin, vmax=vmax, extent=ext)
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("$k_x$", fontsize=8)
    ax.set_ylabel("$k_y$", fontsize=8)
    ax.tick_params(labelsize=7)
    return im


def fig1_variants(fig1, grid, variants=None):
    """One Fig. 1 panel per variant (`{variant: {cell: test accuracy}}`), one colour scale 50-100%;
    grey where a variant has no stored cell."""
    variants = [v for v in (variants or fig1) if v in fig1]
    cols = min(4, max(1, len(variants)))
    rows = -(-len(variants) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.5 * rows), squeeze=False)
    im = None
    for ax, v in zip(axes.flat, variants):
        acc = fig1[v]
        im = _heat(ax, grid.image(acc), grid, f"{LABELS.get(v, v)}\n{len(acc)} cells, mean "
                   f"{np.mean(list(acc.values())) if acc else float('nan'):.1f}%")
        ax.set_facecolor("0.85")
    for ax in list(axes.flat)[len(variants):]:
        ax.axis("off")
    fig.tight_layout()
    if im is not None:
        fig.colorbar(im, ax=axes, shrink=0.8, label="test accuracy (%)")
    return fig


def theory_beside(measured, theory, agreement, grid):
    """For each linear variant: Theorem 1's Bayes accuracy after its first pooling, after both
    poolings (`theory[1]`, `theory[2]`), and the measured Fig. 1 grid, with Spearman's rank
    correlation of each prediction with the measurement in the titles."""
    variants = list(theory[1])
    fig, axes = plt.subplots(len(variants), 3, figsize=(8.4, 2.6 * len(variants)), squeeze=False)
    for row, v in zip(axes, variants):
        for ax, stages, what in ((row[0], 1, "first pooling"), (row[1], 2, "both poolings")):
            t = theory[stages][v]
            rho = agreement[stages].get(v, float("nan"))
            im = _heat(ax, grid.image(t), grid, f"Theorem 1, {what}\n{LABELS.get(v, v)}, $\\rho$ = {rho:.2f}",
                       vmin=50, vmax=100, cmap="magma")
        fig.colorbar(im, ax=row[:2], shrink=0.8, label="Bayes accuracy (%)")
        im = _heat(row[2], grid.image(measured.get(v, {})), grid, f"measured, {len(measured.get(v, {}))} cells")
        row[2].set_facecolor("0.85")
        fig.colorbar(im, ax=row[2], shrink=0.8, label="test accuracy (%)")
    return fig


def convergence(conv):
    """Overlap of the leading-k NAD subspaces from N and from 2N networks, at the largest N, per variant
    (`plots.nads.overlaps`)."""
    stored = {v: c for v, c in conv.items() if c is not None}
    curves = {f"{LABELS.get(v, v)} (N={int(c['sizes'][-1])})": c["overlap"][-1] for v, c in stored.items()}
    ks = next(iter(stored.values()))["ks"] if stored else []
    return overlaps(curves, ks, title="N vs 2N networks, at the largest N")


def fig6_variants(fig6):
    """Test accuracy on D(u_i) against the NAD index i, one curve per variant (its own NADs)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for v, acc in fig6.items():
        if acc:
            idx = sorted(acc)
            ax.plot(idx, [acc[i] for i in idx], "o-", label=LABELS.get(v, v))
    ax.set_xscale("symlog", linthresh=8)
    ax.set_ylim(45, 102)
    ax.set_xlabel("NAD index i")
    ax.set_ylabel("test accuracy on D($u_i$) (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
