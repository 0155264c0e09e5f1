"""Figures of Chapter 3: NADs in pixel and Fourier space (Fig. 5), spectra, estimator comparison,
convergence, and accuracy on D(u_i) against the NAD index (Fig. 6)."""

import matplotlib.pyplot as plt
import numpy as np

from nadcore.fourier import fourier_energy

GREEN, BROWN = "#2e8b57", "#8b4513"


def fig5(results, show=3):
    """First `show` NADs of each architecture (`{name: NADResult}`): pixels, then Fourier energy."""
    fig, axes = plt.subplots(len(results), 2 * show, figsize=(2 * 2 * show * 0.9, 2 * len(results)), squeeze=False)
    for row, (name, res) in zip(axes, results.items()):
        images = res.images(show)
        energy = fourier_energy(images)
        for i in range(show):
            img = images[i].sum(0) if images[i].ndim == 3 else images[i]
            lim = np.abs(img).max()
            row[2 * i].imshow(img, cmap="RdBu_r", vmin=-lim, vmax=lim)
            row[2 * i + 1].imshow(energy[i], cmap="magma")
            row[2 * i].set_title(f"$u_{{{i + 1}}}$", fontsize=9)
            row[2 * i + 1].set_title(f"$|\\hat u_{{{i + 1}}}|^2$", fontsize=9)
        row[0].set_ylabel(name)
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("First NADs: pixel space and Fourier energy (zero frequency at the centre)", fontsize=10)
    fig.tight_layout()
    return fig


def spectra(results):
    """Normalised covariance eigenvalues lambda_i / lambda_1 against the NAD index, per architecture."""
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for name, res in results.items():
        vals = np.clip(res.eigenvalues, 0, None)
        ax.semilogy(np.arange(1, len(vals) + 1), vals / vals[0], label=f"{name} ({res.settings['method']}, "
                    f"N={res.settings['num_networks']})")
    ax.set_xlabel("NAD index i")
    ax.set_ylabel(r"$\lambda_i / \lambda_1$")
    ax.set_ylim(1e-6, 2)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def overlaps(curves, ks, dim=1024, title="Overlap of the leading-k NAD subspaces"):
    """Subspace overlap against k for each labelled curve (`{label: overlaps}`), with the chance level k/D."""
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for label, values in curves.items():
        ax.plot(ks, values, "o-", label=label)
    ax.plot(ks, np.asarray(ks) / dim, "k:", label="random subspaces (k/D)")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("k (leading NADs)")
    ax.set_ylabel("overlap (mean cos$^2$ of principal angles)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def convergence(conv):
    """Overlap between the leading-k NADs from N and from 2N networks, against N (one curve per k)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for j, k in enumerate(conv["ks"]):
        ax.plot(conv["sizes"], conv["overlap"][:, j], "o-", label=f"k = {k}")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("N (networks)")
    ax.set_ylabel("overlap of estimates at N and 2N")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def fig6(indices, accuracy, eigenvalues, name=""):
    """Fig. 6: test accuracy on D(u_i) (brown) and normalised eigenvalues (green) against the NAD index."""
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    vals = np.clip(np.asarray(eigenvalues), 0, None)
    ax.plot(np.arange(len(vals)), vals / vals[0], color=GREEN, label=r"$\lambda_i / \lambda_1$")
    ax.set_xlabel("NAD index i")
    ax.set_ylabel("normalised eigenvalue", color=GREEN)
    ax.set_ylim(0, 1.05)
    acc = ax.twinx()
    acc.plot(indices, accuracy, "o-", color=BROWN, label="test accuracy")
    acc.set_ylabel("test accuracy on D($u_i$) (%)", color=BROWN)
    acc.set_ylim(40, 102)
    ax.set_title(f"{name}: accuracy on D($u_i$) and eigenvalues", fontsize=10)
    fig.tight_layout()
    return fig


def fig6_compare(ours, published_curve, name="LeNet"):
    """Fig. 6 beside the published curve: our test accuracies on D(u_i) (`{index: accuracy}`,
    markers) over the published ones (line; only the measured indices, see
    `nadcore.published.fig6`)."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    m = published_curve["measured"]
    ax.plot(published_curve["index"][m], published_curve["accuracy"][m], "-", color=BROWN, alpha=0.6,
            label=f"published {name} (their NADs)")
    if ours:
        idx = sorted(ours)
        ax.plot(idx, [ours[i] for i in idx], "o", color="k", ms=4, label=f"ours {name} (our NADs)")
    ax.set_xlabel("NAD index i")
    ax.set_ylabel("test accuracy on D(u_i) (%)")
    ax.set_ylim(45, 102)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
