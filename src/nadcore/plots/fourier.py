"""Figures 1-3 of the NAD paper: per-direction grids in the fftshift layout, one panel per network."""

import matplotlib.pyplot as plt
import numpy as np

from nadcore.fourier import fourier_direction, is_self_conjugate

LABELS = {"logreg": "LogReg", "mlp": "MLP", "lenet": "LeNet", "vgg11": "VGG-11", "vgg11_bn": "VGG-11 (BN)",
          "resnet18": "ResNet-18", "densenet121": "DenseNet-121"}


def _panels(images, grid, title, cbar_label, vmin=None, vmax=None, cmap="viridis", norm=None):
    """One imshow panel per architecture, zero frequency at the centre, kx right and ky down."""
    names = list(images)
    fig, axes = plt.subplots(1, len(names), figsize=(2.6 * len(names) + 0.6, 2.9), squeeze=False, layout="constrained")
    f = np.asarray(grid.freqs)
    half = (f[1] - f[0]) / 2 if len(f) > 1 else 0.5
    extent = (f[0] - half, f[-1] + half, f[-1] + half, f[0] - half)
    for ax, name in zip(axes[0], names):
        im = ax.imshow(images[name], cmap=cmap, vmin=vmin, vmax=vmax, norm=norm, extent=extent, interpolation="nearest")
        ax.set_title(LABELS.get(name, name))
        ax.set_xlabel("$k_x$")
        ax.set_xticks([f[0], 0, f[-1]])
        ax.set_yticks([f[0], 0, f[-1]])
    axes[0][0].set_ylabel("$k_y$")
    fig.colorbar(im, ax=axes[0].tolist(), label=cbar_label, shrink=0.85)
    fig.suptitle(title)
    return fig


def fig1_accuracy(accuracies, grid, title="Test accuracy on D(v), v a 2-D DFT direction"):
    """Fig. 1: test accuracy (%) per Fourier direction; `accuracies` maps architecture -> {(kx, ky): acc}."""
    images = {name: grid.image(values) for name, values in accuracies.items()}
    return _panels(images, grid, title, "test accuracy (%)", vmin=50, vmax=100)


def fig2_iterations(iterations, grid, threshold, title=None):
    """Fig. 2: training iterations until the training loss falls below `threshold`, per direction.

    `iterations` maps architecture -> {(kx, ky): iterations}; log colour scale.
    """
    from matplotlib.colors import LogNorm

    images = {name: grid.image(values) for name, values in iterations.items()}
    finite = np.concatenate([img[np.isfinite(img)] for img in images.values()])
    norm = LogNorm(vmin=max(finite.min(), 1), vmax=max(finite.max(), 2))
    title = title or f"Iterations to reach a training loss below {threshold:g}"
    return _panels(images, grid, title, "iterations", cmap="magma", norm=norm)


def fig3_no_pooling(accuracies, grid, title="Test accuracy without pooling layers"):
    """Fig. 3: Fig. 1 for the same networks with every pooling layer removed."""
    return fig1_accuracy(accuracies, grid, title=title)


def directions_gallery(cells, size=32, kind="sin"):
    """The Fourier directions of `cells` as small images (sine, or cosine where the sine vanishes)."""
    fig, axes = plt.subplots(1, len(cells), figsize=(1.3 * len(cells), 1.6), squeeze=False, layout="constrained")
    for ax, (kx, ky) in zip(axes[0], cells):
        k = "cos" if is_self_conjugate(kx, ky, size) else kind
        ax.imshow(fourier_direction(kx, ky, size, k)[0].numpy(), cmap="RdBu_r")
        ax.set_title(f"({kx}, {ky})", fontsize=8)
        ax.axis("off")
    return fig


def compare_grids(ours, published, grid, arch, stats=None):
    """Ours, the published grid and their difference (ours - published), three panels on `grid`.

    `ours` and `published` are display images (`grid.image`); NaN cells are left blank. `stats`
    (e.g. Spearman's rho and the mean |difference|) is printed in the title."""
    f = np.asarray(grid.freqs)
    half = (f[1] - f[0]) / 2 if len(f) > 1 else 0.5
    extent = (f[0] - half, f[-1] + half, f[-1] + half, f[0] - half)
    fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.0), layout="constrained")
    diff = np.asarray(ours) - np.asarray(published)
    lim = max(5.0, float(np.nanmax(np.abs(diff)))) if np.isfinite(diff).any() else 5.0
    panels = ((ours, "ours", dict(cmap="viridis", vmin=50, vmax=100)),
              (published, "published", dict(cmap="viridis", vmin=50, vmax=100)),
              (diff, "ours - published", dict(cmap="RdBu_r", vmin=-lim, vmax=lim)))
    for ax, (img, label, kw) in zip(axes, panels):
        im = ax.imshow(img, extent=extent, interpolation="nearest", **kw)
        ax.set_title(label)
        ax.set_xlabel("$k_x$")
        ax.set_xticks([f[0], 0, f[-1]])
        ax.set_yticks([f[0], 0, f[-1]])
        fig.colorbar(im, ax=ax, shrink=0.8, label="points" if label.startswith("ours -") else "test accuracy (%)")
    axes[0].set_ylabel("$k_y$")
    fig.suptitle(f"{LABELS.get(arch, arch)}" + (f": {stats}" if stats else ""))
    return fig


def fig1_comparison(comparison, grid, arch):
    """`compare_grids` of one architecture of `bundle.fig1_comparison`, its rank correlation and mean
    |difference| in the title."""
    s = comparison["stats"]
    rho = "undefined (a constant grid)" if s["spearman"] != s["spearman"] else f"{s['spearman']:.2f}"
    return compare_grids(grid.image(comparison["ours"]), grid.image(comparison["published"]), grid, arch,
                         stats=f"Spearman {rho}, mean |ours - published| {s['mean_abs_difference']:.1f} points")
