"""Figures and tables of the CIFAR-10 chapter: the poisoned-image gallery, Figs. 7 and 8, the
reviewers' test, and the paper's numbers (`nadcore.published`) beside ours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from nadcore import published
from nadcore.plots import page, style

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

LINES = {"remove": "-", "flip": "--", "shift": ":"}
CHANNELS = "RGB"


def _rgb(img):
    return np.clip(torch.as_tensor(img).permute(1, 2, 0).cpu().numpy(), 0, 1)


def _short(value):
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


def _label(arch):
    return style.LABELS.get(arch, arch)


def _two_lines(name, width=8):
    """A class name longer than `width` characters over two lines, broken after its first space or
    slash ("T-shirt/top", "Ankle boot"), so that ten columns of titles stay apart."""
    cut = min((name.find(c) for c in " /" if c in name), default=-1)
    if len(name) <= width or cut < 0:
        return name
    return f"{name[:cut + 1].rstrip()}\n{name[cut + 1:]}"


def poison_gallery(clean: torch.Tensor, poisoned: torch.Tensor, labels: torch.Tensor | Sequence[int],
                   class_names: Sequence[str] | None = None, title: str | None = None) -> Figure:
    """Clean images (top), poisoned ones (middle) and their difference `d` (bottom), one column per
    image, titled by its class (long names over two lines). A carrier changes one colour channel
    (`t % 3`, written under the poisoned image), so `d` is drawn as that channel's signed difference
    on one colour scale for the whole row (its colour bar), with `||d||_2` under it."""
    n = len(clean)
    fig, axes = style.figure(3, n, width=0.97, height=3.6, squeeze=False)
    diffs = [(poisoned[j] - clean[j]).float() for j in range(n)]
    top = max(float(d.abs().max()) for d in diffs) or 1.0
    for j, d in enumerate(diffs):
        t = int(labels[j])
        axes[0, j].imshow(_rgb(clean[j]))
        axes[1, j].imshow(_rgb(poisoned[j]))
        im = axes[2, j].imshow(d.sum(0).cpu().numpy(), cmap="RdBu_r", vmin=-top, vmax=top)
        axes[0, j].set_title(_two_lines(class_names[t]) if class_names else str(t))
        axes[1, j].set_xlabel(CHANNELS[t % 3], labelpad=1)
        axes[2, j].set_xlabel(_short(float(d.norm())), labelpad=1)
        for ax in axes[:, j]:
            ax.set_xticks([]), ax.set_yticks([])
    for ax, name in zip(axes[:, 0], ("clean", "poisoned", "$d$")):
        ax.set_ylabel(name)
    fig.colorbar(im, ax=axes[2, :], orientation="horizontal", shrink=0.4, aspect=30,
                 label="$d$ = poisoned − clean (the carrier's channel)")
    if title:
        fig.suptitle(title)
    return fig


def fig7(curve: Mapping[str, Any], arch: str = "", ax: Axes | None = None) -> Figure | SubFigure:
    """Fig. 7: clean test accuracy against the carrier's NAD index, the clean baseline dashed.

    `curve` is the dict of `nadcore.experiments.ch4_cifar10.poisoning_curve` (baseline at index -1). The share of
    test images that follow a wrong class's carrier is drawn on the same axes when it was measured.
    """
    if ax is None:
        _, ax = style.figure(width=0.85, height=3.2)
    idx = np.asarray(curve["index"])
    pois = idx >= 0
    colour = style.COLORS.get(arch, "C0")
    ax.plot(idx[pois], np.asarray(curve["test_acc"])[pois], "o-", color=colour, label="clean test accuracy")
    follow = np.asarray(curve["follow_rate"])[pois]
    if np.isfinite(follow).any():
        ax.plot(idx[pois], follow, "s:", color="C3", label="test images that follow\na wrong class's carrier")
    if (~pois).any():
        ax.axhline(np.asarray(curve["test_acc"])[~pois][0], ls="--", color="gray", label="trained without carrier")
    ax.set_xscale("symlog", linthresh=1, linscale=0.5)
    ax.set_xticks(idx[pois], [str(i) for i in idx[pois]])
    ax.minorticks_off()
    ax.set_xlim(-0.3, max(1.0, idx.max()) * 1.6)
    ax.set_xlabel("NAD index $i$ of the carrier (NADs $i$ and $i + 1$)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(-3, 103)
    if arch:
        ax.set_title(_label(arch))
    ax.legend(loc="center right")
    return ax.figure


def fig8(result: Mapping[str, Any], ax: Axes | None = None, fmt: str = "%.1f",
         fontsize: float = 9) -> Figure | SubFigure:
    """Fig. 8: test accuracy on the original and the NAD-flipped data, one pair of bars per network
    (named by `style.LABELS`, or as given), each bar's value printed on it with `fmt`."""
    if ax is None:
        _, ax = style.figure(width=0.3 + 0.2 * len(result["arch"]), height=3.0)
    pos = np.arange(len(result["arch"]))
    for shift, kind, colour in ((-0.2, "original", "C0"), (0.2, "flipped", "C1")):
        bars = ax.bar(pos + shift, result[kind], 0.4, label=kind, color=colour)
        ax.bar_label(bars, fmt=fmt, fontsize=fontsize)
    ax.set_xticks(pos, [_label(a) for a in result["arch"]])
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 118)
    ax.legend(loc="upper center", ncols=2)
    return ax.figure


MARKERS = {"remove": "o", "flip": "s", "shift": "^"}


def reviewers_test(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """The reviewers' test: % of predictions changed (left) and the mean pixel norm of the edit
    `||x' - x||_2` (right) against the number `k` of first or last NADs edited, for each mode.

    Every series stays visible where two coincide (the shifts have the same norm on the first and the
    last NADs; the edits of the last NADs change about no prediction): each mode has its own marker,
    the first NADs' filled and small, drawn over the last NADs' open and large."""
    fig, (left, right) = style.figure(1, 2, width=0.98, height=3.2)
    for where, mode in sorted({(r["where"], r["mode"]) for r in rows}):
        sel = sorted((r for r in rows if r["where"] == where and r["mode"] == mode), key=lambda r: r["k"])
        ks = [r["k"] for r in sel]
        first = where == "first"
        colour = "C0" if first else "C3"
        kw = dict(color=colour, ls=LINES.get(mode, "-."), marker=MARKERS.get(mode, "D"),
                  markersize=5 if first else 9, markerfacecolor=colour if first else "none",
                  markeredgewidth=1.4, zorder=3 if first else 2, label=f"{mode}, {where} $k$ NADs")
        left.plot(ks, [r["changed"] for r in sel], **kw)
        right.plot(ks, [r["norm"] for r in sel], **kw)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("$k$ (NADs edited)")
    left.set_ylabel("predictions changed (%)")
    right.set_ylabel(r"mean $\|x' - x\|_2$")
    right.set_yscale("log")
    handles, names = left.get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=2)
    return fig


def reviewers_table(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The rows of `ch4_cifar10.reviewers_test` as a table: per `k` and edit, the % of predictions
    changed and the mean pixel norm ||x' - x||_2 of the edit, on the first and on the last NADs."""
    cell = {(r["k"], r["mode"], r["where"]): r for r in rows}
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    digits = {"changed": 1, "norm": 3}
    value = lambda k, m, w, key: round(cell[k, m, w][key], digits[key]) if (k, m, w) in cell else np.nan
    out = [(k, m, *(value(k, m, w, key) for key in ("changed", "norm") for w in ("first", "last")))
           for k in sorted({r["k"] for r in rows}) for m in modes]
    return page.table(out, ("k", "edit", "changed (%), first NADs", "changed (%), last NADs",
                            "‖x′ − x‖, first NADs", "‖x′ − x‖, last NADs"), index=["k", "edit"])


# Fig. 7's carrier indices in bands: the paper's carriers sit every 10th index (0, 10, ..., 1020),
# ours at 0, 1, 2, 4, 8, 32, 128, 512, 1022; the two share NAD 0 alone, so the table compares bands.
BANDS = ((0, 0), (1, 9), (10, 99), (100, 499), (500, 1023))
PUBLISHED = "published: ResNet-18, CIFAR-10"


def _band(acc, lo, hi, empty):
    """The accuracies of `acc` (`{index: %}`) at the carriers in `lo..hi`, as a table cell."""
    ids = [i for i in sorted(acc) if lo <= i <= hi]
    if not ids:
        return empty
    vals = [acc[i] for i in ids]
    if len(ids) <= 4:
        return ", ".join(f"{v:.1f}" for v in vals) + f" (i = {', '.join(map(str, ids))})"
    return (f"{min(vals):.1f}–{max(vals):.1f}, mean {np.mean(vals):.1f} "
            f"({len(ids)} carriers, i = {ids[0]}–{ids[-1]})")


def curve_table(curves: Mapping[str, Mapping[str, Any]], bands: Iterable[tuple[int, int]] = BANDS) -> pd.DataFrame:
    """Fig. 7's numbers by bands of carrier index (`bands`, inclusive `(lo, hi)` pairs): clean test
    accuracy (%), the paper's ResNet-18 on CIFAR-10 (`ch4_cifar10.published_curve`; its clean network
    from Fig. 8) beside our `curves` (`{column: poisoning_curve dict}`). A cell lists the accuracies of
    a curve's carriers in the band (their range and mean past four) with their indices, or says that the
    curve has no carrier there."""
    from nadcore.experiments.ch4_cifar10 import published_curve

    columns = {PUBLISHED: published_curve(), **curves}
    accs = {c: dict(zip(np.asarray(v["index"]).tolist(), np.asarray(v["test_acc"], dtype=float).tolist()))
            for c, v in columns.items()}
    empty = {c: "no carrier here (every 10th index)" if c == PUBLISHED else "no carrier here" for c in columns}
    rows = [("none (clean)", *(f"{a[-1]:.0f} (Fig. 8)" if c == PUBLISHED else f"{a[-1]:.1f}"
                              for c, a in accs.items()))]
    rows += [(str(lo) if lo == hi else f"{lo}–{hi}",
              *(_band({i: v for i, v in a.items() if i >= 0}, lo, hi, empty[c]) for c, a in accs.items()))
             for lo, hi in bands]
    return page.table(rows, ("carrier at NADs", *columns), index="carrier at NADs")


def _fig7_axes(ax, top_index):
    ax.set_xscale("symlog", linthresh=1, linscale=0.5)
    ticks = [t for t in (0, 1, 10, 100, 1000) if t <= top_index]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlim(-0.3, top_index * 1.6)
    ax.set_xlabel("NAD index $i$ of the carrier")
    ax.set_ylim(-3, 103)


def fig7_beside_published(curves: Mapping[str, Mapping[str, Any]], arch: str = "lenet") -> Figure:
    """Fig. 7, the published one beside ours, on the same axes (clean test accuracy against the NAD index
    of the carrier, a symmetric log scale): left, the paper's ResNet-18 on CIFAR-10
    (`ch4_cifar10.published_curve`, its clean network from Fig. 8, dashed); right, our `arch` on each
    stand-in of `curves` (`{dataset name: poisoning_curve dict}`), its clean network dashed and the share
    of test images that follow another class's carrier dotted."""
    from nadcore.experiments.ch4_cifar10 import published_curve

    paper = published_curve()
    top = max(int(np.max(c["index"])) for c in [paper, *curves.values()])
    fig, (left, right) = style.figure(1, 2, width=0.98, height=2.7, sharey=True)
    pois = paper["index"] >= 0
    left.plot(paper["index"][pois], paper["test_acc"][pois], "o", color=style.COLORS["resnet18"], markersize=4,
              label="clean test accuracy")
    left.axhline(paper["test_acc"][~pois][0], ls="--", color="gray", label="trained without carrier (Fig. 8)")
    left.set_title("published (ResNet-18, CIFAR-10)")
    left.set_ylabel("accuracy (%)")
    left.legend(loc="lower right")
    for (name, curve), colour, marker in zip(curves.items(), ("C0", "C1", "C2", "C4"), "osD^"):
        idx = np.asarray(curve["index"])
        on = idx >= 0
        acc = np.asarray(curve["test_acc"], dtype=float)
        right.plot(idx[on], acc[on], marker=marker, ls="-", color=colour, markersize=5, label=f"{name}: accuracy")
        follow = np.asarray(curve.get("follow_rate", np.full(len(idx), np.nan)), dtype=float)[on]
        if np.isfinite(follow).any():
            right.plot(idx[on], follow, marker=marker, ls=":", color=colour, markersize=5, markerfacecolor="none",
                       label=f"{name}: follow a wrong carrier")
        if (~on).any():
            right.axhline(acc[~on][0], ls="--", color=colour, lw=1, alpha=0.8)
    right.plot([], [], ls="--", color="gray", lw=1, label="trained without carrier")
    right.set_title(f"ours ({_label(arch)}, stand-ins)")
    right.legend(loc="center right", bbox_to_anchor=(1, 0.45), fontsize=7.5, handlelength=1.8)
    for ax in (left, right):
        _fig7_axes(ax, top)
    return fig


def fig8_beside_published(flips: Mapping[str, Mapping[str, Any]]) -> Figure:
    """Fig. 8, the published one beside ours: test accuracy (%) on the original and on the NAD-flipped
    data, one pair of bars per network; left, the paper's four CNNs on CIFAR-10 (`published.FIG8`);
    right, ours on each stand-in of `flips` (`{dataset name: flip_experiment result}`), the bars named
    by network and dataset. Both panels share the accuracy axis."""
    paper = {"arch": list(published.FIG8), "original": [o for o, _ in published.FIG8.values()],
             "flipped": [f for _, f in published.FIG8.values()]}
    names = [(d, _label(a), o, f) for d, r in flips.items() for a, o, f in zip(r["arch"], r["original"], r["flipped"])]
    ours = {"arch": [a for _, a, _, _ in names], "original": [o for _, _, o, _ in names],
            "flipped": [f for _, _, _, f in names]}
    fig, (left, right) = style.figure(1, 2, width=0.98, height=2.8, sharey=True)
    fig8(paper, ax=left, fmt="%.0f", fontsize=8)
    fig8(ours, ax=right, fontsize=7.5)
    for ax in (left, right):                   # long names over two lines ("DenseNet-\n121")
        ax.set_xticks(ax.get_xticks(), [t.get_text().replace("-", "-\n", 1) if len(t.get_text()) > 9 else t.get_text()
                                        for t in ax.get_xticklabels()], fontsize=8)
    for d in flips:                            # the dataset under its networks' bars
        at = [j for j, n in enumerate(names) if n[0] == d]
        right.annotate(d, (np.mean(at), 0), xycoords=("data", "axes fraction"), xytext=(0, -24),
                       textcoords="offset points", ha="center", va="top", fontsize=9)
        if at[0] > 0:
            right.axvline(at[0] - 0.5, color="0.8", lw=0.8)
    left.set_title("published (four CNNs, CIFAR-10)")
    right.set_title("ours (LeNet, LogReg; stand-ins)")
    right.set_ylabel("")
    right.get_legend().remove()
    left.set_ylim(0, 118)                      # room above 100 for the printed values and the legend ...
    for ax in (left, right):                   # ... but the accuracy axis itself stops at 100 %
        ax.set_yticks(range(0, 101, 20))
        ax.spines["left"].set_bounds(0, 100)
    return fig


