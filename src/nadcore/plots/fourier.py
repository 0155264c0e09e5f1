"""Figures 1-3 of the NAD paper: per-direction grids in the fftshift layout, one panel per network.

Every figure is sized for the book's column (`nadcore.plots.style`): a grid panel is about a
third of the column wide, image grids share one colour scale per quantity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.patches import Patch
from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

from nadcore import checks, published
from nadcore.checks import InputError
from nadcore.fourier import canonical, fourier_direction, is_self_conjugate
from nadcore.plots import style

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from nadcore.fourier import Grid

LABELS = style.LABELS
NOT_REACHED = "0.55"   # the grey of Fig. 2's cells whose loss never fell below the threshold


def _extent(grid):
    f = np.asarray(grid.freqs)
    half = (f[1] - f[0]) / 2 if len(f) > 1 else 0.5
    return (f[0] - half, f[-1] + half, f[-1] + half, f[0] - half)


def _frequency_axes(ax, grid, ylabel=True):
    f = grid.freqs
    ax.set_xticks([f[0], 0, f[-1]])
    ax.set_yticks([f[0], 0, f[-1]])
    ax.set_xlabel("$k_x$")
    if ylabel:
        ax.set_ylabel("$k_y$")


def _panels(images, grid, cbar_label, title=None, **imshow):
    """One imshow panel per architecture (zero frequency at the centre, kx right, ky down), one colour scale."""
    names = list(images)
    if not names:
        raise InputError("accuracies must hold at least one architecture's grid ({name: {(kx, ky): value}})")
    fig, axes = style.figure(1, len(names), width=min(0.97, 0.3 * len(names) + 0.12), height=2.5, squeeze=False)
    for i, (ax, name) in enumerate(zip(axes[0], names)):
        im = ax.imshow(images[name], extent=_extent(grid), interpolation="nearest", **imshow)
        ax.set_title(LABELS.get(name, name))
        _frequency_axes(ax, grid, ylabel=i == 0)
    cbar = fig.colorbar(im, ax=axes[0].tolist(), label=cbar_label, shrink=0.9)
    if title:
        fig.suptitle(title)
    return fig, axes[0], cbar


def fig1_accuracy(accuracies: Mapping[str, Mapping[tuple[int, int], float]], grid: Grid,
                  title: str | None = None) -> Figure:
    """Fig. 1: test accuracy (%) per Fourier direction; `accuracies` maps architecture -> {(kx, ky): acc}."""
    images = {name: grid.image(values) for name, values in accuracies.items()}
    fig, *_ = _panels(images, grid, "test accuracy (%)", title, cmap="viridis", vmin=50, vmax=100)
    return fig


def _iteration_norm(images, limit):
    """The cells each run fitted within `limit` iterations (the others NaN) and one log colour scale for them."""
    reached = {n: np.where(img <= limit, img, np.nan) if limit else img for n, img in images.items()}
    finite = np.concatenate([img[np.isfinite(img)].ravel() for img in reached.values()])
    low = max(float(finite.min()), 1.0) if finite.size else 1.0
    norm = LogNorm(vmin=low, vmax=max(float(finite.max()) if finite.size else 2.0, 2 * low))
    return reached, norm


def _iteration_ticks(cbar):
    cbar.ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    cbar.ax.yaxis.set_major_formatter(StrMethodFormatter("{x:.0f}"))
    cbar.ax.yaxis.set_minor_formatter(NullFormatter())


def _grey_unreached(ax, img, grid, limit):
    ax.imshow(np.where(img > limit, 1.0, np.nan), extent=_extent(grid), cmap=ListedColormap([NOT_REACHED]),
              interpolation="nearest")


def fig2_iterations(iterations: Mapping[str, Mapping[tuple[int, int], int]], grid: Grid, threshold: float,
                    limit: int | None = None, title: str | None = None) -> Figure:
    """Fig. 2: SGD iterations until the training loss falls below `threshold`, per direction (log scale).

    `iterations` maps architecture -> {(kx, ky): iterations}. Cells above `limit` (the iterations of
    the run: the loss never fell below the threshold) are grey, with a legend entry.
    """
    images = {name: grid.image(values) for name, values in iterations.items()}
    reached, norm = _iteration_norm(images, limit)
    fig, axes, cbar = _panels(reached, grid, "iterations", title, cmap="magma", norm=norm)
    _iteration_ticks(cbar)
    if limit:
        for ax, img in zip(axes, images.values()):
            _grey_unreached(ax, img, grid, limit)
        fig.legend(handles=[Patch(color=NOT_REACHED, label=f"not below {threshold:g} in {limit} iterations")],
                   loc="outside lower center", frameon=False)
    return fig


def fig2_speed(iterations: Mapping[str, Mapping[tuple[int, int], int]], grid: Grid, threshold: float, limit: int,
               accuracy: Mapping[tuple[int, int], float], arch: str = "lenet", control: str = "logreg",
               accuracy_label: str = "Fig. 1 test accuracy (%)") -> Figure:
    """Fig. 2 for `arch` and what it shows. Left: its SGD iterations until the training loss falls below
    `threshold`, per direction (`fig2_iterations`' map; grey: not within the run's `limit` iterations).
    Right: the same iterations against the test accuracy of the same direction in Fig. 1 (`accuracy`,
    `{(kx, ky): %}`, e.g. the published grid): fitted directions as dots, the others as open triangles at
    the run's end; the `control` network's iterations (every direction, whatever its accuracy) as a band.

    `iterations`: `{architecture: {(kx, ky): iterations}}` (`ch1_fourier.iterations_to_loss`) holding
    `arch` and `control`."""
    for name in (arch, control):
        if name not in iterations:
            raise InputError(f"iterations must hold {name!r}; got {sorted(iterations)}")
    cells = sorted(iterations[arch])
    missing = [c for c in cells if c not in accuracy]
    if missing:
        raise InputError(f"accuracy must hold every direction of iterations[{arch!r}]; missing {missing[:3]}")
    img = grid.image(iterations[arch])
    reached, norm = _iteration_norm({arch: img}, limit)
    fig, (left, right) = style.figure(1, 2, width=0.97, height=2.6, layout="constrained",
                                      gridspec_kw={"width_ratios": (1, 1.25)})
    im = left.imshow(reached[arch], extent=_extent(grid), interpolation="nearest", cmap="magma", norm=norm)
    _grey_unreached(left, img, grid, limit)
    _frequency_axes(left, grid)
    left.set_title(f"{LABELS.get(arch, arch)}: iterations")
    _iteration_ticks(fig.colorbar(im, ax=left, shrink=0.9))
    its = np.array([iterations[arch][c] for c in cells], dtype=float)
    acc = np.array([accuracy[c] for c in cells], dtype=float)
    hit = its <= limit
    color = style.COLORS.get(arch, "k")
    right.plot(acc[hit], its[hit], "o", ms=4, color=color, label=f"{LABELS.get(arch, arch)}: fitted ({hit.sum()})")
    right.plot(acc[~hit], np.full((~hit).sum(), limit * 1.25), "^", ms=4, mfc="none", color=color,
               label=f"{LABELS.get(arch, arch)}: not within the run ({(~hit).sum()})")
    right.axhline(limit, color="0.6", ls=":", lw=1)
    right.annotate(f"end of the run ({limit})", (1.0, limit), xycoords=("axes fraction", "data"),
                   xytext=(0, -3), textcoords="offset points", ha="right", va="top", fontsize=9, color="0.4")
    ctrl = [v for v in iterations[control].values() if v <= limit]
    if ctrl:
        span = f"{min(ctrl)}" if min(ctrl) == max(ctrl) else f"{min(ctrl)}–{max(ctrl)}"
        right.axhspan(min(ctrl) / 1.08, max(ctrl) * 1.08, color=style.COLORS.get(control, "0.5"), alpha=0.35,
                      label=f"{LABELS.get(control, control)}: all {len(ctrl)} directions, {span}")
    right.set_yscale("log")
    low = min(float(its[hit].min()) if hit.any() else limit, min(ctrl, default=limit))
    right.set_ylim(low / 1.4, limit * 1.5)
    right.set_yticks([t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
                      if low / 1.4 <= t < limit])   # no tick above the run's end: the triangles are not counts
    right.yaxis.set_major_formatter(StrMethodFormatter("{x:.0f}"))
    right.yaxis.set_minor_formatter(NullFormatter())
    right.set(xlabel=accuracy_label, ylabel=f"iterations to loss < {threshold:g}",
              title="speed against accuracy")
    handles, labels = right.get_legend_handles_labels()
    handles.insert(0, Patch(color=NOT_REACHED))
    labels.insert(0, f"not below {threshold:g} in {limit} iterations")
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    return fig


def accuracy_range(images: Mapping[str, ArrayLike], step: float = 5.0) -> tuple[float, float]:
    """(low, high): the accuracies of `images` (NaN cells ignored) rounded out to multiples of `step`,
    at least `step` apart, within 0..100; (50, 100) when there are none."""
    checks.number("step", step, 0, accepted="a number > 0 (points)")
    values = np.concatenate([np.asarray(img, dtype=float).ravel() for img in images.values()]) if images \
        else np.array([])
    values = values[np.isfinite(values)]
    if not values.size:
        return 50.0, 100.0
    low = max(0.0, step * np.floor(values.min() / step))
    high = min(100.0, max(step * np.ceil(values.max() / step), low + step))
    if high - low < step:                                  # every cell at 100
        low = max(0.0, high - step)
    return float(low), float(high)


def fig3_no_pooling(accuracies: Mapping[str, Mapping[tuple[int, int], float]], grid: Grid,
                    title: str | None = None) -> Figure:
    """Fig. 3: Fig. 1 for the same networks with every pooling layer removed. Without pooling the
    accuracies sit in a narrow band, so the colour scale spans the data (`accuracy_range`), not Fig. 1's
    50-100; the colour bar says so."""
    images = {name: grid.image(values) for name, values in accuracies.items()}
    low, high = accuracy_range(images)
    label = f"test accuracy (%)\nscale {low:g}-{high:g}: the data's range"
    fig, *_ = _panels(images, grid, label, title, cmap="viridis", vmin=low, vmax=high)
    return fig


def fig3_beside_pooling(without: Mapping[tuple[int, int], float], with_pooling: Mapping[tuple[int, int], float],
                        grid: Grid, sigma: float | None = None, seeds: int | None = None,
                        arch: str = "lenet") -> Figure:
    """Fig. 3 beside what it is compared with: `arch` with pooling (`with_pooling`, `{(kx, ky): accuracy}` on
    any grid holding the directions of `without`, e.g. the mean of Fig. 1's seeds at the same noise; `seeds`
    of them, named in its title) and without pooling (`without`, `{(kx, ky): accuracy}`), on the directions of
    `without` alone, one colour scale spanning both (`accuracy_range`, as `fig3_no_pooling`). Each panel's
    title gives the mean and standard deviation over the directions; the figure's, `arch` and the noise `sigma`."""
    cells = sorted(without)
    missing = [c for c in cells if canonical(*c, grid.size) not in with_pooling and c not in with_pooling]
    if missing:
        raise InputError(f"with_pooling must hold every direction of without; missing {missing[:3]}")
    pooled = {c: with_pooling.get(c, with_pooling.get(canonical(*c, grid.size))) for c in cells}
    images = {"with pooling" + (f", {seeds} seeds" if seeds and seeds > 1 else ""): grid.image(pooled),
              "without pooling": grid.image(without)}
    low, high = accuracy_range(images)
    label = f"test accuracy (%)\nscale {low:g}-{high:g}: the data's range"
    title = LABELS.get(arch, arch) + ("" if sigma is None else f", σ = {sigma:g}")
    fig, axes, _ = _panels(images, grid, label, title, cmap="viridis", vmin=low, vmax=high)
    for ax, (head, values) in zip(axes, zip(images, (pooled, without))):
        a = np.array(list(values.values()), dtype=float)
        ax.set_title(f"{head}\n{a.mean():.1f} ± {a.std():.1f} %")
    return fig


def directions_gallery(cells: Sequence[tuple[int, int]], size: int = 32, kind: str = "sin", ncols: int = 5) -> Figure:
    """The Fourier directions of `cells` as images, `ncols` per row (sine, or cosine where the sine
    vanishes), the frequency (kx, ky) above each, one colour scale."""
    nrows = -(-len(cells) // ncols)
    images = [fourier_direction(kx, ky, size, "cos" if is_self_conjugate(kx, ky, size) else kind)[0].numpy()
              for kx, ky in cells]
    lim = max(float(np.abs(img).max()) for img in images)
    fig, axes = style.figure(nrows, ncols, width=0.97, height=1.5 * nrows, squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (kx, ky), img in zip(axes.flat, cells, images):
        im = ax.imshow(img, cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_title(f"({kx}, {ky})")
    fig.colorbar(im, ax=axes.ravel().tolist(), label="pixel value", shrink=0.8)
    return fig


def compare_grids(ours: ArrayLike, published: ArrayLike, grid: Grid, arch: str, stats: str | None = None) -> Figure:
    """Ours, the published grid and their difference (ours - published), three panels on `grid`.

    `ours` and `published` are display images (`grid.image`); NaN cells are left blank. `stats`
    (e.g. Spearman's rho and the mean |difference|) is printed in the title."""
    fig, axes = style.figure(1, 3, width=1.0, height=3.0, layout="compressed")
    diff = np.asarray(ours) - np.asarray(published)
    lim = max(5.0, float(np.nanmax(np.abs(diff)))) if np.isfinite(diff).any() else 5.0
    panels = ((ours, "ours", dict(cmap="viridis", vmin=50, vmax=100)),
              (published, "published", dict(cmap="viridis", vmin=50, vmax=100)),
              (diff, "difference", dict(cmap="RdBu_r", vmin=-lim, vmax=lim)))
    ims = []
    for i, (ax, (img, label, kw)) in enumerate(zip(axes, panels)):
        ims.append(ax.imshow(img, extent=_extent(grid), interpolation="nearest", **kw))
        ax.set_title(label)
        _frequency_axes(ax, grid, ylabel=i == 0)
    fig.colorbar(ims[0], ax=axes[:2].tolist(), label="test accuracy (%)", location="bottom", shrink=0.6)
    fig.colorbar(ims[2], ax=axes[2], label="ours - published (points)", location="bottom")
    fig.suptitle(f"{LABELS.get(arch, arch)}" + (f": {stats}" if stats else ""))
    return fig


def fig1_comparison(comparison: published.Fig1Pair, grid: Grid, arch: str) -> Figure:
    """`compare_grids` of one architecture of `bundle.fig1_comparison`, its rank correlation and mean
    |difference| in the title."""
    s = comparison.stats
    if s is None:
        raise InputError(f"comparison holds {comparison.stored} stored cells of {arch}: at least 3 are compared")
    rho = "undefined (a constant grid)" if s.spearman != s.spearman else f"{s.spearman:.2f}"
    return compare_grids(grid.image(comparison.ours), grid.image(comparison.published), grid, arch,
                         stats=f"Spearman {rho}, mean |ours - published| {s.mean_abs_difference:.1f} points")


def seed_mean_comparison(grids: Sequence[Mapping[tuple[int, int], float]],
                         published_grid: Mapping[tuple[int, int], float], grid: Grid, arch: str,
                         sigma: float | None = None) -> Figure:
    """`compare_grids` of the mean over seeds (`grids`: one `{(kx, ky): accuracy}` per seed, on the cells
    every seed holds) against `published_grid` (`{(kx, ky): accuracy}`), with the noise level `sigma`,
    the number of seeds, Spearman's rho and the mean |difference| of that mean in the title: the numbers
    `published.compare_seeds` gives for the same grids."""
    if not grids:
        raise InputError("grids must hold at least one seed's grid")
    cells = set.intersection(*(set(g) for g in grids))
    mean = {c: float(np.mean([g[c] for g in grids])) for c in cells}
    s = published.compare_grids(mean, published_grid)
    averaged = "one seed" if len(grids) == 1 else f"mean of {len(grids)} seeds"
    head = (f"σ = {sigma:g}, " if sigma is not None else "") + averaged
    return compare_grids(grid.image(mean), grid.image(published_grid), grid, arch,
                         stats=f"{head}: Spearman {s.spearman:.2f}, mean |ours - published| "
                               f"{s.mean_abs_difference:.1f} points")


def sigma_study(study: Mapping[str, Any]) -> Figure:
    """Which noise level sigma reproduces the published LeNet grid (`bundle.sigma_study`): per sigma,
    the Spearman correlation (left) and the mean |difference| (right) of our grid (the mean of its
    seeds) with the published one, with their bootstrap intervals; open markers: how well two of our
    own seeds agree with each other (the noise floor), where a sigma has two or more."""
    rows = study["rows"]
    sigmas = sorted(rows)
    fig, axes = style.figure(1, 2, width=0.97, height=2.8, layout="constrained")
    color = style.COLORS["lenet"]
    for ax, stat, label in ((axes[0], "spearman", "Spearman with published"),
                            (axes[1], "mean_abs_difference", "mean |ours - published| (points)")):
        est = np.array([rows[s][stat] for s in sigmas])
        lo, hi = np.array([rows[s]["intervals"][stat] for s in sigmas]).T
        ax.errorbar(sigmas, est, yerr=[est - lo, hi - est], fmt="o-", color=color, capsize=3,
                    label="ours vs published (95% CI)")
        floor = [(s, rows[s]["floor"][stat]) for s in sigmas if rows[s]["floor"] is not None]
        if floor:
            ax.plot(*zip(*floor), "o", mfc="none", color="k", label="our seeds vs each other")
        ax.axvline(study["caption"], color="0.6", ls=":", lw=1, label=r"the caption's $\sigma$")
        ax.set_xlabel(r"noise $\sigma$ of $\mathcal{D}(v)$")
        ax.set_ylabel(label)
        ax.set_xticks(sigmas)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    return fig
