"""Figures of the underspecification chapter (follow-up paper, Figs. 2-3).

Each function takes the dicts returned by `nadcore.experiments.ch5_underspec.pair_grid` / `ood_grid` (one per
architecture, keyed by name) and returns a matplotlib `Figure`. Seeds are averaged; the spread
(standard deviation over seeds) is drawn where a figure has room for it.
"""

import matplotlib.pyplot as plt
import numpy as np

PAIR_TITLES = ("both channels", "only channel 1 ($v_1$)", "only channel 2 ($v_2$)")
OOD_LABELS = ("both (test)", "images only ($D(v)$ zeroed)", "$D(v)$ only (images zeroed)")
NAMES = {"mlp": "MLP", "lenet": "LeNet", "resnet18": "ResNet-18"}


def _check(grids, name):
    if not isinstance(grids, dict) or not grids:
        raise ValueError(f"{name} must be a non-empty dict {{arch: grid result}}")


def pair_maps(grids):
    """Fig. 2a: test accuracy over NAD index pairs `(i, j)`, with both channels, only channel 1
    and only channel 2; one row per architecture, seeds averaged (cell text: mean accuracy)."""
    _check(grids, "grids")
    fig, axes = plt.subplots(len(grids), 3, figsize=(10, 3.2 * len(grids)), squeeze=False,
                             constrained_layout=True)
    for row, (arch, grid) in zip(axes, grids.items()):
        acc = np.asarray(grid["accuracy"]).mean(0)              # (I, J, 3)
        i_idx, j_idx = np.asarray(grid["indices_1"]), np.asarray(grid["indices_2"])
        for c, ax in enumerate(row):
            im = ax.imshow(acc[..., c], vmin=50, vmax=100, cmap="viridis", origin="lower")
            for (r, q), value in np.ndenumerate(acc[..., c]):
                ax.text(q, r, f"{value:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if value < 80 else "black")
            ax.set_xticks(range(len(j_idx)), j_idx, fontsize=7)
            ax.set_yticks(range(len(i_idx)), i_idx, fontsize=7)
            ax.set_xlabel("NAD index of $v_2$ (channel 2)")
            ax.set_ylabel(f"{NAMES.get(arch, arch)}\nNAD index of $v_1$")
            ax.set_title(PAIR_TITLES[c], fontsize=9)
    fig.colorbar(im, ax=axes, shrink=0.8, label="test accuracy (%)")
    return fig


def cross_sections(grids, pairs):
    """Fig. 2b: the predicted class on the plane spanned by `v1 (+) 0` (horizontal) and `0 (+) v2`
    (vertical) for the NAD index pairs `pairs`, one row per architecture (first seed)."""
    _check(grids, "grids")
    fig, axes = plt.subplots(len(grids), len(pairs), figsize=(1.9 * len(pairs) + 0.6, 2.1 * len(grids)),
                             squeeze=False, constrained_layout=True)
    for row, (arch, grid) in zip(axes, grids.items()):
        i_idx, j_idx = list(np.asarray(grid["indices_1"])), list(np.asarray(grid["indices_2"]))
        c = np.asarray(grid["coords"])
        for ax, (i, j) in zip(row, pairs):
            if i not in i_idx or j not in j_idx:
                raise ValueError(f"pairs must be taken from the grid's indices {i_idx} x {j_idx}; got {(i, j)}")
            section = np.asarray(grid["sections"])[0, i_idx.index(i), j_idx.index(j)]
            ax.imshow(section, origin="lower", extent=(c[0], c[-1], c[0], c[-1]), cmap="coolwarm",
                      vmin=0, vmax=1, interpolation="nearest")
            ax.set_title(f"{NAMES.get(arch, arch)} ({i}, {j})", fontsize=8)
            ax.set_xlabel(r"$v_1 \oplus 0$", fontsize=8)
            ax.set_ylabel(r"$0 \oplus v_2$", fontsize=8)
            ax.tick_params(labelsize=6)
    return fig


def ood_curves(grids):
    """Fig. 3: accuracy on the image+`D(v)` task with both parts, images only and `D(v)` only,
    against the NAD index of `v`; one panel per architecture, mean and spread over seeds."""
    _check(grids, "grids")
    fig, axes = plt.subplots(1, len(grids), figsize=(3.6 * len(grids), 3.0), squeeze=False,
                             constrained_layout=True, sharey=True)
    for ax, (arch, grid) in zip(axes[0], grids.items()):
        acc = np.asarray(grid["accuracy"])                      # (S, K, 3)
        k = np.asarray(grid["indices"])
        mean, spread = acc.mean(0), acc.std(0)
        for c, label in enumerate(OOD_LABELS):
            ax.plot(k, mean[:, c], marker="o", ms=3, label=label)
            ax.fill_between(k, mean[:, c] - spread[:, c], mean[:, c] + spread[:, c], alpha=0.25)
        ax.axhline(50, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("NAD index of $v$")
        ax.set_title(f"{NAMES.get(arch, arch)} ($\\sigma$ = {grid['sigma']:g}, {acc.shape[0]} seed(s))", fontsize=9)
    axes[0, 0].set_ylabel("test accuracy (%)")
    axes[0, 0].legend(fontsize=7)
    return fig
