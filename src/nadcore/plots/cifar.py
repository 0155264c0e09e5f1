"""Figures of the CIFAR-10 chapter: the poisoned-image gallery, Figs. 7 and 8, the reviewers' test."""

import matplotlib.pyplot as plt
import numpy as np
import torch

LINES = {"remove": "-", "flip": "--", "shift": ":"}


def _rgb(img):
    return np.clip(torch.as_tensor(img).permute(1, 2, 0).cpu().numpy(), 0, 1)


def poison_gallery(clean, poisoned, labels, class_names=None, eps=None):
    """Clean images (top), poisoned ones (middle), and their difference (bottom, own colour scale).

    The difference row maps 0 to grey and +-max|difference| to the ends of each channel, so the
    carrier's pattern and colour channel are visible; its pixel norm is written under it.
    """
    n = len(clean)
    fig, axes = plt.subplots(3, n, figsize=(1.6 * n, 5.2), squeeze=False)
    for j in range(n):
        diff = (poisoned[j] - clean[j]).float()
        scale = diff.abs().max().clamp_min(1e-12)
        t = int(labels[j])
        for row, (img, name) in enumerate(((clean[j], "clean"), (poisoned[j], "poisoned"),
                                           (0.5 + 0.5 * diff / scale, "difference"))):
            ax = axes[row, j]
            ax.imshow(_rgb(img), interpolation="nearest")
            ax.set_xticks([]), ax.set_yticks([])
            if j == 0:
                ax.set_ylabel(name)
        axes[0, j].set_title(class_names[t] if class_names else str(t), fontsize=9)
        axes[2, j].set_xlabel(f"|d|={diff.norm():.3f}\nmax {scale:.3f}", fontsize=8)
    title = "Clean vs poisoned images" + (f" ($\\epsilon$ = {eps})" if eps is not None else "")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def fig7(curve, arch="", ax=None):
    """Fig. 7: clean test accuracy against the carrier's NAD index, the clean baseline dashed.

    `curve` is the dict of `nadcore.experiments.ch4_cifar10.poisoning_curve` (baseline at index -1). The share of
    test images that follow a wrong class's carrier is drawn on the same axes.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    idx = np.asarray(curve["index"])
    pois = idx >= 0
    ax.plot(idx[pois], np.asarray(curve["test_acc"])[pois], "o-", label="test accuracy (clean test set)")
    ax.plot(idx[pois], np.asarray(curve["follow_rate"])[pois], "s:", color="C3",
            label="test images that follow a wrong carrier")
    if (~pois).any():
        ax.axhline(np.asarray(curve["test_acc"])[~pois][0], ls="--", color="gray", label="trained without carrier")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(-0.3, max(1.0, idx.max()) * 1.5)
    ax.set_xlabel("NAD index $i$ of the carrier (NADs $i$, $i+1$; symlog scale)")
    ax.set_ylabel("%")
    ax.set_ylim(-3, 103)
    ax.set_title(f"Fig. 7: poisoned training{f' ({arch})' if arch else ''}")
    ax.legend(fontsize=8, loc="center right")
    ax.figure.tight_layout()
    return ax.figure


def fig8(result, ax=None):
    """Fig. 8: test accuracy on the original and the NAD-flipped data, one pair of bars per network."""
    if ax is None:
        _, ax = plt.subplots(figsize=(1.8 + 1.4 * len(result["arch"]), 3.6))
    pos = np.arange(len(result["arch"]))
    for shift, kind, colour in ((-0.2, "original", "C0"), (0.2, "flipped", "C1")):
        bars = ax.bar(pos + shift, result[kind], 0.4, label=kind, color=colour)
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
    ax.set_xticks(pos, result["arch"])
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Fig. 8: original vs NAD-flipped data")
    ax.legend(fontsize=8, loc="lower right")
    ax.figure.tight_layout()
    return ax.figure


def reviewers_test(rows):
    """The reviewers' test: % of predictions changed (left) and pixel size of the edit (right)
    against the number `k` of first or last NADs edited, for each mode."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    groups = sorted({(r["where"], r["mode"]) for r in rows})
    for where, mode in groups:
        sel = sorted((r for r in rows if r["where"] == where and r["mode"] == mode), key=lambda r: r["k"])
        ks = [r["k"] for r in sel]
        style = dict(color="C0" if where == "first" else "C3", ls=LINES.get(mode, "-."), marker="o")
        label = f"{mode} {where} k NADs"
        left.plot(ks, [r["changed"] for r in sel], label=label, **style)
        right.plot(ks, [r["norm"] for r in sel], label=label, **style)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k (number of NADs edited)")
    left.set_ylabel("predictions changed (%)")
    right.set_ylabel(r"mean $\|x' - x\|_2$ (pixels in [0, 1])")
    right.set_yscale("log")
    left.legend(fontsize=8)
    fig.suptitle("Reviewers' test: editing a trained network's test points on its first vs last NADs")
    fig.tight_layout()
    return fig
