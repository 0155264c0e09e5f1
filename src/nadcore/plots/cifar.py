"""Figures and tables of the CIFAR-10 chapter: the poisoned-image gallery, Figs. 7 and 8, the
reviewers' test, and the paper's numbers (`nadcore.published`) beside ours."""

import numpy as np
import torch

from nadcore import published
from nadcore.plots import page, style

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


def poison_gallery(clean, poisoned, labels, class_names=None, title=None):
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


def fig7(curve, arch="", ax=None):
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


def fig8(result, ax=None):
    """Fig. 8: test accuracy on the original and the NAD-flipped data, one pair of bars per network."""
    if ax is None:
        _, ax = style.figure(width=0.3 + 0.2 * len(result["arch"]), height=3.0)
    pos = np.arange(len(result["arch"]))
    for shift, kind, colour in ((-0.2, "original", "C0"), (0.2, "flipped", "C1")):
        bars = ax.bar(pos + shift, result[kind], 0.4, label=kind, color=colour)
        ax.bar_label(bars, fmt="%.1f", fontsize=9)
    ax.set_xticks(pos, [_label(a) for a in result["arch"]])
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 118)
    ax.legend(loc="upper center", ncols=2)
    return ax.figure


def reviewers_test(rows):
    """The reviewers' test: % of predictions changed (left) and the mean pixel norm of the edit
    `||x' - x||_2` (right) against the number `k` of first or last NADs edited, for each mode."""
    fig, (left, right) = style.figure(1, 2, width=0.98, height=3.2)
    for where, mode in sorted({(r["where"], r["mode"]) for r in rows}):
        sel = sorted((r for r in rows if r["where"] == where and r["mode"] == mode), key=lambda r: r["k"])
        ks = [r["k"] for r in sel]
        kw = dict(color="C0" if where == "first" else "C3", ls=LINES.get(mode, "-."), marker="o",
                  label=f"{mode}, {where} $k$ NADs")
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


def reviewers_table(rows):
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


def _published_fig7(index):
    """The published Fig. 7 value at `index` as text (its carriers are every 10th index up to 1020,
    which stands for the indices past it), or a dash."""
    fig = published.FIG7_RESNET18
    if index in fig:
        return f"{fig[index]:.1f}"
    return f"{fig[max(fig)]:.1f} (i = {max(fig)})" if index > max(fig) else "–"


def curve_table(curves, clean_paper=None):
    """Fig. 7's numbers: clean test accuracy (%) per carrier index, the paper's ResNet-18 on CIFAR-10
    (`published.FIG7_RESNET18`; the clean row from Fig. 8) beside our `curves` (`{column: curve}`),
    one row per carrier index of any curve ("–" where a curve has none)."""
    clean_paper = published.fig8("resnet18")[0] if clean_paper is None else clean_paper
    accs = [dict(zip(np.asarray(c["index"]).tolist(), np.asarray(c["test_acc"]).tolist())) for c in curves.values()]
    rows = []
    for i in sorted({i for acc in accs for i in acc}):
        ours = [f"{acc[i]:.1f}" if i in acc else "–" for acc in accs]
        paper = f"{clean_paper:.0f} (Fig. 8)" if i < 0 else _published_fig7(int(i))
        rows.append(("none" if i < 0 else str(int(i)), paper, *ours))
    return page.table(rows, ("carrier at NAD", "paper: ResNet-18, CIFAR-10", *curves), index="carrier at NAD")


def flip_table(flips):
    """Fig. 8's numbers: test accuracy (%) original → NAD-flipped, the paper's (CIFAR-10,
    `published.FIG8`) beside our `flips` (`{column: flip_experiment result}`), one row per network."""
    ours = [{a: (o, f) for a, o, f in zip(r["arch"], r["original"], r["flipped"])} for r in flips.values()]
    archs = list(dict.fromkeys([a for o in ours for a in o] + list(published.FIG8)))
    rows = [(_label(a), "{:.0f} → {:.0f}".format(*published.FIG8[a]) if a in published.FIG8 else "–",
             *("{:.1f} → {:.1f}".format(*o[a]) if a in o else "–" for o in ours)) for a in archs]
    return page.table(rows, ("network", "paper: CIFAR-10", *flips), index="network")


def verdict(runs, arch):
    """The chapter's "paper vs this book" table: Fig. 7's first and last carriers and Fig. 8's flip,
    the paper's numbers (CIFAR-10) beside ours. `runs` maps the name of each dataset we ran (as the
    page writes it, e.g. "digits", "Fashion-MNIST") to `(curve, flip, scale)` (`curve` of `arch`,
    measured at `scale`); every cell of ours names the dataset of each number."""
    paper = published.fig7()
    first, last, flips, scales = [], [], [], []
    for name, (curve, flip, scale) in runs.items():
        acc = dict(zip(np.asarray(curve["index"]).tolist(), np.asarray(curve["test_acc"]).tolist()))
        i0, i1 = min(i for i in acc if i >= 0), max(acc)
        first.append(f"{_label(arch)}, {name}: {acc[i0]:.1f} % at NAD {i0} (clean: {acc[-1]:.1f} %)")
        last.append(f"{name}: {acc[i1]:.1f} % at NAD {i1}")
        flips.append(f"{name}: " + ", ".join(f"{_label(a)} {o:.1f} → {f:.1f} %"
                                             for a, o, f in zip(flip["arch"], flip["original"], flip["flipped"])))
        scales.append(f"{name}: {scale}" if len(runs) > 1 else scale)
    scale = "; ".join(scales)
    return page.verdict({
        "A carrier on the first NADs hijacks training (Fig. 7)": (
            f"ResNet-18, CIFAR-10: {paper['accuracy'][0]:.0f} % with the carrier at NAD {paper['index'][0]} "
            f"(clean: {published.fig8('resnet18')[0]:.0f} %)", "; ".join(first), scale),
        "A carrier on the last NADs is ignored (Fig. 7)": (
            f"{paper['accuracy'][-1]:.0f} % at NAD {paper['index'][-1]}", "; ".join(last), scale),
        "Flipping the data in the NAD basis costs accuracy (Fig. 8)": (
            ", ".join(f"{_label(a)} {o:.0f} → {f:.0f} %" for a, (o, f) in published.FIG8.items()), "; ".join(flips),
            scale),
    })
