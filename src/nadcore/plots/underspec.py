"""Figures and tables of the underspecification chapter (follow-up paper, Figs. 2-3).

Each figure function takes the grids of `nadcore.experiments.ch5_underspec.pair_grid` (`PairGrid`) or
`ood_grid` (`OodGrid`), one per architecture, keyed by name, and returns a matplotlib `Figure`. Seeds are
averaged; the spread (standard deviation over seeds) is drawn where a figure has room for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from nadcore.checks import InputError
from nadcore.experiments.ch5_underspec import OodGrid, PairGrid, channel_choice
from nadcore.plots import page, style

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from matplotlib.figure import Figure

PAIR_TITLES = ("both channels", "only channel 1", "only channel 2")
OOD_LABELS = ("both parts", r"images only ($\mathcal{D}(v)$ zeroed)", r"$\mathcal{D}(v)$ only (images zeroed)")
ORDER = ("lenet", "resnet18", "mlp")   # the CNNs first, then the isotropic control
CLASS_COLORS = ("#4c72b0", "#c44e52")   # predicted class 0 and class 1
CLASS_LABELS = (r"class 0 (mean $+\epsilon u / 2$)", r"class 1 (mean $-\epsilon u / 2$)")   # u: each channel's NAD
STYLES = ({"ls": "-", "marker": "o"}, {"ls": "--", "marker": "s"}, {"ls": ":", "marker": "^"})


def _name(arch):
    return style.LABELS.get(arch, arch)


def _check(grids, name):
    """`grids` as a dict in the book's order of architectures (`ORDER`); ValueError if empty."""
    if not isinstance(grids, dict) or not grids:
        raise InputError(f"{name} must be a non-empty dict {{arch: grid result}}")
    return dict(sorted(grids.items(), key=lambda kv: ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER)))


def pair_maps(grids: dict[str, PairGrid]) -> Figure:
    """Fig. 2a: test accuracy over NAD index pairs `(i, j)`, with both channels, only channel 1
    and only channel 2; one row per architecture, seeds averaged (cell text: the mean accuracy, and
    with several seeds ± their standard deviation)."""
    grids = _check(grids, "grids")
    fig, axes = style.figure(len(grids), 3, width=0.98, height=2.1 * len(grids) + 0.3, squeeze=False)
    for row, (arch, grid) in zip(axes, grids.items()):
        acc = np.asarray(grid.accuracy).mean(0)              # (I, J, 3)
        spread = np.asarray(grid.accuracy).std(0, ddof=1) if len(grid.accuracy) > 1 else None
        i_idx, j_idx = np.asarray(grid.indices_1), np.asarray(grid.indices_2)
        small = len(i_idx) <= 6
        for c, ax in enumerate(row):
            im = ax.imshow(acc[..., c], vmin=50, vmax=100, cmap="viridis", origin="lower")
            if small:
                for r, q in np.ndindex(acc.shape[:2]):
                    value = float(acc[r, q, c])
                    text = f"{value:.0f}" if spread is None else f"{value:.0f}\n±{spread[r, q, c]:.0f}"
                    ax.text(q, r, text, ha="center", va="center", fontsize=None if spread is None else "small",
                            color="white" if value < 80 else "black")
            ax.set_xticks(range(len(j_idx)), j_idx)
            ax.set_yticks(range(len(i_idx)), i_idx)
            ax.set_xlabel("NAD index $j$ of $v_2$")
            ax.set_title(f"{_name(arch)}: {PAIR_TITLES[c]}")
        row[0].set_ylabel("NAD index $i$ of $v_1$")
    fig.colorbar(im, ax=axes, shrink=0.8, label="test accuracy (%)")
    return fig


def cross_sections(grids: dict[str, PairGrid], pairs: Sequence[tuple[int, int]]) -> Figure:
    """Fig. 2b: the predicted class on the plane spanned by `u_i (+) 0` (horizontal) and `0 (+) u_j`
    (vertical) for the NAD index pairs `pairs` (i, j), one row per architecture (first seed); a legend
    names the two classes."""
    grids = _check(grids, "grids")
    fig, axes = style.figure(len(grids), len(pairs), width=0.98, height=1.9 * len(grids) + 0.5, squeeze=False,
                             sharex=True, sharey=True)
    for row, (arch, grid) in zip(axes, grids.items()):
        i_idx, j_idx = list(np.asarray(grid.indices_1)), list(np.asarray(grid.indices_2))
        c = np.asarray(grid.coords)
        for ax, (i, j) in zip(row, pairs):
            if i not in i_idx or j not in j_idx:
                raise InputError(f"pairs must be taken from the grid's indices {i_idx} x {j_idx}; got {(i, j)}")
            section = np.asarray(grid.sections)[0, i_idx.index(i), j_idx.index(j)]
            ax.imshow(section, origin="lower", extent=(c[0], c[-1], c[0], c[-1]), cmap=ListedColormap(CLASS_COLORS),
                      vmin=0, vmax=1)
            ax.set_title(f"{_name(arch)} ({i}, {j})")
            ticks = [c[0] / 2, 0, c[-1] / 2]   # inside the panel: labels of neighbours stay apart
            ax.set_xticks(ticks), ax.set_yticks(ticks)
        row[0].set_ylabel(r"$0 \oplus u_j$")
    for ax in axes[-1]:
        ax.set_xlabel(r"$u_i \oplus 0$")
    fig.legend([Patch(color=col) for col in CLASS_COLORS], CLASS_LABELS, loc="outside lower center", ncols=2)
    return fig


def ood_curves(grids: dict[str, OodGrid]) -> Figure:
    """Fig. 3: accuracy on the image+`D(v)` task with both parts, images only and `D(v)` only,
    against the NAD index of `v` (a symlog axis: the first NADs apart); one panel per architecture,
    mean and spread over seeds."""
    grids = _check(grids, "grids")
    fig, axes = style.figure(1, len(grids), width=0.98, height=3.4, squeeze=False, sharey=True)
    for ax, (arch, grid) in zip(axes[0], grids.items()):
        acc = np.asarray(grid.accuracy)                      # (S, K, 3)
        k = np.asarray(grid.indices)
        mean, spread = acc.mean(0), acc.std(0)
        for c, (label, kw) in enumerate(zip(OOD_LABELS, STYLES)):
            ax.plot(k, mean[:, c], ms=4, label=label, **kw)
            ax.fill_between(k, mean[:, c] - spread[:, c], mean[:, c] + spread[:, c], alpha=0.25)
        ax.axhline(50, color="grey", lw=0.8, ls=":")
        ax.set_xscale("symlog", linthresh=1, linscale=0.5)   # the first NADs apart; plain labels, one "0"
        ticks = [t for t in (0, 1, 10, 100, 1000, 10000) if t <= max(k.max(), 1)]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlim(-0.3, max(1, k.max()) * 1.3)
        ax.set_xlabel("NAD index $k$ of $v$")
        seeds = acc.shape[0]
        ax.set_title(f"{_name(arch)} ($\\sigma$ = {grid.sigma:g}, {seeds} seed{'s' if seeds > 1 else ''})")
    axes[0, 0].set_ylabel("test accuracy (%)")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=2)
    return fig


def ood_table(grids: dict[str, OodGrid]) -> pd.DataFrame:
    """Fig. 3's numbers: per NAD index `k` (rows), the seed-mean test accuracy (%) of each
    architecture with the images only and with the linear channel only (columns)."""
    grids = _check(grids, "grids")
    ks = sorted({int(k) for g in grids.values() for k in g.indices})
    columns, values = ["NAD index k"], []
    for arch, grid in grids.items():
        acc = dict(zip((int(k) for k in grid.indices), np.asarray(grid.accuracy).mean(0)))
        columns += [f"{_name(arch)}: images only (%)", f"{_name(arch)}: linear channel only (%)"]
        values.append([(round(float(acc[k][1]), 1), round(float(acc[k][2]), 1)) if k in acc else (np.nan, np.nan)
                       for k in ks])
    rows = [(k, *(v for column in values for v in column[r])) for r, k in enumerate(ks)]
    return page.table(rows, columns, index="NAD index k")


READS = {"linear": "the linear channel", "images": "the images", "both": "both parts", "neither": "neither part"}


def reading(grid: OodGrid, threshold: float = 75.0) -> str:
    """What a network of Fig. 3 reads, in words: "the images at every k" or "the linear channel at
    k = 0, 5; the images at k = 25, 100" (`ch5_underspec.channel_choice` at `threshold` %)."""
    groups = {}
    for k, choice in channel_choice(grid, threshold).items():
        groups.setdefault(choice, []).append(str(k))
    if len(groups) == 1:
        return f"{READS[next(iter(groups))]} at every k"
    return "; ".join(f"{READS[c]} at k = {', '.join(ks)}" for c, ks in groups.items())


