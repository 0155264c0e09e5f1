"""Figures of NADs: for any estimate, `grid` (the first k NADs with their Fourier energy) and `spectrum`
(matplotlib's conventions: `fig=`/`ax=`, sizes in inches); and Chapter 3's: NADs in pixel and Fourier space
(Fig. 5), spectra, estimator comparison, convergence, and accuracy on D(u_i) against the NAD index
(Fig. 6). Published estimates are drawn black and dashed, ours in the architecture's colour, solid for
the secant, dotted for the exact gradient ("autograd")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D

from nadcore import checks, published
from nadcore.checks import InputError
from nadcore.experiments.ch3_nads import numerical_rank, rank_limit
from nadcore.fourier import fourier_energy
from nadcore.nads import NADResult
from nadcore.plots import style

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import ArrayLike

GREEN, BROWN = "#2e8b57", "#8b4513"
DASHES = {"secant": "-", "autograd": ":", "hessian": "-."}
METHODS = {"secant": "secant", "autograd": "exact gradient", "hessian": "Hessian"}
PUBLISHED: dict[str, Any] = dict(color="k", ls="--", lw=1.2)
ENERGY = mcolors.LogNorm(1e-4, 1)     # share of a NAD's energy per frequency, 1e-4 .. 1


def is_published(result: NADResult) -> bool:
    return result.settings.get("source") == "published"


def describe(result: NADResult, lines: bool = False) -> str:
    """'LeNet, ours, secant, N = 10,000' (or 'published'), one line or three (`lines`)."""
    s = result.settings
    parts = [style.LABELS.get(s["arch"], s["arch"]), "published" if is_published(result) else
             f"ours, {METHODS.get(s['method'], s['method'])}", f"N = {int(s['num_networks']):,}"]
    return "\n".join(parts) if lines else ", ".join(parts)


def curve_style(result: NADResult) -> dict[str, Any]:
    """Line style of an estimate: published black dashed, ours in its architecture's colour."""
    if is_published(result):
        return dict(PUBLISHED)
    s = result.settings
    return dict(color=style.COLORS.get(s["arch"]), ls=DASHES.get(s["method"], "-"), lw=2.4)


def beside_published(stored: Mapping[tuple[str, str], NADResult], archs: Iterable[str]) -> dict[str, NADResult]:
    """`{row label: NADResult}` for `fig5`/`spectra_by_arch`: per architecture of `archs`, our
    estimates of `stored` (`{(arch, method): NADResult}`, `bundle.stored_nads`), then the published one."""
    rows = {}
    for arch in archs:
        mine = [r for (a, _), r in stored.items() if a == arch]
        theirs = [published.nads(arch)] if arch in published.ARCHS else []
        rows.update({describe(r, lines=True): r for r in mine + theirs})
    return rows


def oriented(images: np.ndarray) -> np.ndarray:
    """Each image of `images` (n, H, W) scaled to max |pixel| = 1, its largest-magnitude pixel positive
    (a NAD is defined up to its sign)."""
    flat = images.reshape(len(images), -1)
    peak = flat[np.arange(len(flat)), np.abs(flat).argmax(1)]
    return images / peak[:, None, None]


def fig5(results: Mapping[str, NADResult], show: int = 3, width: float = 0.97) -> Figure:
    """The first `show` NADs of each estimate (`{row label: NADResult}`), one row each: pixels
    (scaled to max |pixel| = 1, one colour scale) and Fourier energy (share per frequency, zero
    frequency at the centre, one log colour scale)."""
    rows, scale = len(results), width / 0.97          # panel size follows the width
    fig = style.figure(width=width, height=(0.9 * rows + 1.1) * scale)[0]
    fig.clf()
    left, right = fig.subfigures(1, 2, wspace=0.02, width_ratios=[1.4, 1])  # ty: ignore[not-iterable]
    pix = left.subplots(rows, show, squeeze=False)
    eng = right.subplots(rows, show, squeeze=False)
    for r, (label, res) in enumerate(results.items()):
        images = np.asarray(res.images(show), dtype=np.float64).sum(1)
        energy = fourier_energy(images)
        energy = energy / energy.sum((-2, -1), keepdims=True)
        for i, (img, e) in enumerate(zip(oriented(images), energy)):
            ip = pix[r, i].imshow(img, cmap="RdBu_r", vmin=-1, vmax=1)
            ie = eng[r, i].imshow(np.clip(e, ENERGY.vmin, None), cmap="magma", norm=ENERGY)
        pix[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=9)
    for i in range(show):
        pix[0, i].set_title(f"$u_{{{i}}}$")
        eng[0, i].set_title(f"$|\\hat u_{{{i}}}|^2$")
    for ax in (*pix.flat, *eng.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[:].set_visible(True)
    left.colorbar(ip, ax=pix, location="bottom", shrink=0.8, aspect=25, label="pixel / max |pixel|")
    right.colorbar(ie, ax=eng, location="bottom", shrink=0.9, aspect=25, label="share of the NAD's energy")
    return fig


def _check_result(result, name="result"):
    if not isinstance(result, NADResult):
        raise InputError(f"{name} must be a NADResult (what nads.estimate returns); got {type(result).__name__}")
    _check_spectrum(result.eigenvalues, f"{name}.eigenvalues")


def _check_spectrum(values, name="eigenvalues"):
    """A spectrum to draw as lambda_i / lambda_0: finite, its first value (the largest) above 0."""
    vals = np.asarray(values, dtype=np.float64).reshape(-1)
    if not len(vals) or not np.isfinite(vals).all() or vals[0] <= 0:
        raise InputError(f"{name} must be finite eigenvalues, the first (the largest) > 0; got "
                         f"{len(vals)} values starting {vals[:3].tolist()}")


def _check_inches(name, value):
    if not (checks.is_number(value) and 0 < value <= 100):
        raise InputError(f"{name} must be a size in inches in (0, 100]; got {value!r}")


def grid(result: NADResult, k: int = 16, *, fig: Figure | SubFigure | None = None, size: float = 6.0,
         energy: bool = True) -> Figure | SubFigure:
    """The first `k` NADs of `result` (a `NADResult`) on a square grid, each above its Fourier energy
    (`energy=True`; share per frequency, zero frequency at the centre): matplotlib's conventions, in
    `fig` (a `Figure` or `SubFigure`; default: a new figure `size` inches wide). One-channel NADs
    in a diverging map, scaled to max |pixel| = 1 and signed so their largest pixel is positive;
    several channels summed (the figure says so). Its title says what of the NADs is identifiable
    (`Trust.label`). Arguments are checked before anything is drawn. Returns the figure."""
    _check_result(result)
    checks.integer("k", k, 1, len(result), accepted=f"an integer in [1, {len(result)}] (the NADs of the result)")
    _check_inches("size", size)
    if fig is not None and not isinstance(fig, (Figure, SubFigure)):
        raise InputError(f"fig must be a matplotlib Figure or SubFigure (or None: a new one); got {type(fig).__name__}")
    images = oriented(np.asarray(result.images(k), dtype=np.float64).sum(1))
    per = 2 if energy else 1                              # a NAD, then its energy on its right
    ncols = int(np.ceil(np.sqrt(k / per)))                # NADs per row: a square figure
    nrows = int(np.ceil(k / ncols))
    if fig is None:
        style.use()
        fig = plt.figure(figsize=(size, size * nrows / (ncols * per) * 1.12), layout="constrained")
    axes = fig.subplots(nrows, ncols * per, squeeze=False)
    shares = fourier_energy(images)
    shares = shares / shares.sum((-2, -1), keepdims=True)
    for row, col in np.ndindex(axes.shape):
        ax = axes[row, col]
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[:].set_visible(True)
        j, part = row * ncols + col // per, col % per
        if j >= k:
            ax.set_visible(False)
        elif part == 0:
            ax.imshow(images[j], cmap="RdBu_r", vmin=-1, vmax=1)
            ax.set_title(f"$u_{{{j}}}$", fontsize=9)
        else:
            ax.imshow(np.clip(shares[j], ENERGY.vmin, None), cmap="magma", norm=ENERGY)
            ax.set_title(f"$|\\hat u_{{{j}}}|^2$", fontsize=9)
    channels = result.images(1).shape[1]
    said = [f"{channels} channels summed"] * (channels > 1) + [result.trust().label] * bool(result.trust().label)
    if said:
        fig.suptitle("; ".join(said), fontsize=9)
    return fig


def spectrum(result: NADResult, *, ax: Axes | None = None, label: str | None = None, **line_kwargs: Any) -> Axes:
    """lambda_i / lambda_0 of `result` (a `NADResult`) against the NAD index i (from 0), on a log scale,
    up to the estimate's rank (past it the eigenvalues are rounding noise; a bar marks the cut, named), on
    `ax` (default: a figure of its own, titled with the trust label); `line_kwargs` go to matplotlib's `plot`.
    Returns the axes."""
    _check_result(result)
    if ax is not None and not isinstance(ax, Axes):
        raise InputError(f"ax must be a matplotlib Axes (or None: a figure of its own); got {type(ax).__name__}")
    own = ax is None
    ax = ax if ax is not None else style.figure(width=0.6, height=2.6)[1]
    ratio = spectrum_curve(ax, result, label=label, **line_kwargs)
    if len(ratio) < len(result.eigenvalues):              # the bar at the cut, named
        ax.annotate(f"rank {len(ratio)}", (len(ratio) - 1, ratio[-1]), xytext=(-4, 6), textcoords="offset points",
                    ha="right", fontsize=8)
    ax.set_xlabel("NAD index $i$")
    ax.set_ylabel(r"$\lambda_i / \lambda_0$")
    if own and result.trust().label:                      # how far to trust it, as the grid says
        ax.set_title(result.trust().label, fontsize=9)
    return ax


def _top(res):
    """How many eigenvalues of `res` to draw: up to its rank limit (`ch3_nads.rank_limit`) and its
    numerical rank (`ch3_nads.numerical_rank`); past them they are rounding noise."""
    return min(len(res.eigenvalues), rank_limit(res), numerical_rank(res.eigenvalues))


def spectrum_curve(ax: Axes, res: NADResult, **kw: Any) -> np.ndarray:
    """lambda_i / lambda_0 against i = 0, 1, ... up to the rank of the estimate (`_top`), its end marked when cut."""
    vals = np.asarray(res.eigenvalues, dtype=np.float64)
    top = _top(res)
    ratio = vals[:top] / vals[0]
    line, = ax.semilogy(np.arange(top), ratio, **kw)
    if top < len(vals):                                   # the covariance of N networks ends at N - 1
        ax.plot(top - 1, ratio[-1], "|", color=line.get_color(), ms=10, mew=2)
    return ratio


def log_axis(ax: Axes, lows: Iterable[float]) -> None:
    """At least two decades below 1, decade labels only (no overlapping minor labels)."""
    ax.set_ylim(min(min(lows) / 2, 0.05), 2)
    ax.yaxis.set_minor_formatter(mticker.NullFormatter())


def _limit_note(res):
    top = _top(res)
    return f" (rank {top})" if top < len(res.eigenvalues) else ""


def spectra(results: Mapping[str, NADResult], styles: Mapping[str, Mapping[str, Any]] | None = None,
            width: float = 0.8, height: float = 3.2) -> Figure:
    """Normalised eigenvalues lambda_i / lambda_0 against the NAD index i (from 0), one curve per
    `{label: NADResult}` (`styles`: `{label: line kwargs}`), drawn up to the rank of the sample
    covariance, at most min(N - 1, D): past it the eigenvalues are rounding noise (a `|` marks the end)."""
    fig, ax = style.figure(width=width, height=height)
    lows = []
    for label, res in results.items():
        kw = (styles or {}).get(label, PUBLISHED if is_published(res) else {})
        lows.append(spectrum_curve(ax, res, label=label + _limit_note(res), **kw).min())
    log_axis(ax, lows)
    ax.set_xlabel("NAD index $i$")
    ax.set_ylabel(r"$\lambda_i / \lambda_0$")
    ax.legend(fontsize=9)
    return fig


def label_panels(axes: np.ndarray, used: int, xlabel: str, ylabel: str) -> None:
    """A grid of panels: the panels past the first `used` hidden, `xlabel` on the bottom row,
    `ylabel` on the left column."""
    for ax in axes.flat[used:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)


def spectra_by_arch(results: Mapping[str, NADResult], ncols: int = 3, width: float = 0.97) -> Figure:
    """One panel per architecture (`settings["arch"]`) of `{label: NADResult}`: our estimates and
    the published ones (eigenvalues: singular values squared, `published.spectrum`), up to the rank
    limit (see `spectra`); `width` a fraction of the column (the height follows)."""
    archs = list(dict.fromkeys(r.settings["arch"] for r in results.values()))
    nrows = -(-len(archs) // ncols)
    fig, axes = style.figure(nrows, ncols, width=width, height=(2.3 * nrows + 0.7) * width / 0.97, sharex=True,
                             squeeze=False)
    for ax, arch in zip(axes.flat, archs):
        lows = [spectrum_curve(ax, r, **curve_style(r)).min() for r in results.values() if r.settings["arch"] == arch]
        log_axis(ax, lows)
        ax.set_title(style.LABELS.get(arch, arch))
    label_panels(axes, len(archs), "NAD index $i$", r"$\lambda_i / \lambda_0$")
    methods = list(dict.fromkeys(r.settings["method"] for r in results.values() if not is_published(r)))
    handles = [Line2D([], [], color="0.3", ls=DASHES.get(m, "-"), lw=1.8, label=f"ours, {METHODS.get(m, m)}")
               for m in methods]
    if any(is_published(r) for r in results.values()):
        handles.append(Line2D([], [], **PUBLISHED, label="published (singular values squared)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=9)
    return fig


def overlaps(curves: Mapping[str, ArrayLike], ks: Sequence[int] | np.ndarray, dim: int = 1024,
             title: str | None = None, styles: Mapping[str, Mapping[str, Any]] | None = None,
             width: float = 0.8) -> Figure:
    """Subspace overlap against k for each labelled curve (`{label: overlaps}`, `styles`:
    `{label: line kwargs}`), with the chance level k/D; `width` a fraction of the column."""
    fig, ax = style.figure(width=width, height=(3.2 + 0.25 * ((len(curves) + 2) // 2)) * width / 0.8,
                           layout="constrained")
    for label, values in curves.items():
        ax.plot(ks, values, **{"marker": "o", "ms": 4, **(styles or {}).get(label, {})}, label=label)
    ax.plot(ks, np.asarray(ks) / dim, "k:", label="random subspaces ($k/D$)")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("$k$ (leading NADs)")
    ax.set_ylabel("overlap\n(mean cos$^2$ of principal angles)")
    if title:
        ax.set_title(title)
    fig.legend(loc="outside lower center", ncols=2, fontsize=9)   # below the axes: no curve hidden
    return fig


def overlaps_published(overlap: Mapping[tuple[str, str], ArrayLike], ks: Sequence[int] | np.ndarray, dim: int = 1024,
                       width: float = 0.8) -> Figure:
    """`overlaps` of our estimates with the published NADs, `{(arch, method): values}`
    (`bundle.nad_overlaps`), in the architectures' colours, dotted for the exact gradient."""
    curves, styles = {}, {}
    for (arch, method), values in overlap.items():
        label = f"{style.LABELS.get(arch, arch)}, ours ({METHODS.get(method, method)})"
        curves[label] = values
        styles[label] = dict(color=style.COLORS.get(arch), ls=DASHES.get(method, "-"))
    return overlaps(curves, ks, dim, styles=styles, width=width)


def eq5(stored: Mapping[str, Mapping[str, ArrayLike]], ks: Sequence[int] | np.ndarray, dim: int = 1024,
        width: float = 0.8) -> Figure:
    """`overlaps` for Eq. 5 (`bundle.load_eq5`): each network's mixed-derivative NADs against its exact-gradient
    NADs (solid) and against the secant's (dashed), and the same networks' own exact gradients against those
    (dotted: what the sample can show), in the networks' colours."""
    curves, styles = {}, {}
    for arch, x in stored.items():
        name = style.LABELS.get(arch, arch)
        for key, text, ls in (("autograd", "vs exact gradient", "-"), ("secant", "vs secant", "--"),
                              ("floor", "its networks' own gradients", ":")):
            label = f"{name}: mixed derivative {text}" if key != "floor" else f"{name}: {text}"
            curves[label], styles[label] = x[key], dict(color=style.COLORS.get(arch), ls=ls)
    return overlaps(curves, ks, dim, styles=styles, width=width)


def secant_vs_exact(pairs: Mapping[str, ArrayLike], ks: Sequence[int] | np.ndarray, dim: int = 1024) -> Figure:
    """`overlaps` of each architecture's secant and exact-gradient NADs (`{arch: values}`,
    `bundle.secant_exact_overlaps`), in the architectures' colours."""
    curves = {f"{style.LABELS.get(a, a)}: secant vs exact gradient": v for a, v in pairs.items()}
    styles = {label: dict(color=style.COLORS.get(a)) for label, a in zip(curves, pairs)}
    return overlaps(curves, ks, dim, styles=styles)


def convergence(conv: Mapping[str, Any], title: str | None = None) -> Figure:
    """Overlap between the leading-k NADs from N and from 2N networks, against N (one curve per k, at N > k:
    N networks span at most N - 1 directions)."""
    if not (isinstance(conv, Mapping) and {"ks", "sizes", "overlap"} <= set(conv)):
        raise InputError("conv must be what nads.convergence returns: a dict with sizes, ks and overlap")
    fig, ax = style.figure(width=0.8, height=3.2)
    for j, k in enumerate(conv["ks"]):
        ax.plot(*_above_k(conv, j, k), "o-", ms=4, label=f"$k$ = {k}")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("$N$ (networks)")
    ax.set_ylabel("overlap of estimates\nat $N$ and $2N$")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=9, ncols=2)
    return fig


def _above_k(conv, j, k):
    """The sizes N > k of a `convergence` and the overlaps of its j-th k there."""
    sizes = np.asarray(conv["sizes"])
    return sizes[sizes > k], np.asarray(conv["overlap"])[sizes > k, j]


def convergence_panels(convs: Mapping[str, Mapping[str, Any]], title: str | None = None) -> Figure:
    """`convergence` of several architectures (`{arch: conv}`), one panel each, shared axes (the N axis
    only where every panel has the same N)."""
    archs = list(convs)
    ncols = 2 if len(archs) > 1 else 1
    nrows = -(-len(archs) // ncols)
    same = len({tuple(np.asarray(c["sizes"]).tolist()) for c in convs.values()}) == 1   # else each its own N
    fig, axes = style.figure(nrows, ncols, width=0.97, height=2.3 * nrows + 0.6, sharex=same, sharey=True,
                             squeeze=False, layout="constrained")
    for ax, arch in zip(axes.flat, archs):
        conv = convs[arch]
        for j, k in enumerate(conv["ks"]):
            ax.plot(*_above_k(conv, j, k), "o-", ms=3.5, label=f"$k$ = {k}")
        ax.set_xscale("log", base=2)
        sizes = list(conv["sizes"])   # a label only where the next N is 1.5x away (2,500 and 3,125 would collide)
        ax.set_xticks(sizes, [f"{n:,}" if m is None or m >= 1.5 * n else "" for n, m in zip(sizes, sizes[1:] + [None])],
                      rotation=40, ha="right", rotation_mode="anchor")
        ax.xaxis.set_minor_locator(mticker.NullLocator())
        ax.set_ylim(0, 1.05)
        ax.set_title(style.LABELS.get(arch, arch))
    label_panels(axes, len(archs), "$N$ (networks)", "overlap, $N$ vs $2N$")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=9)
    if title:
        fig.suptitle(title)
    return fig


def fig6(indices: Sequence[int] | np.ndarray, accuracy: Sequence[float] | np.ndarray,
         eigenvalues: NADResult | ArrayLike, name: str = "") -> Figure:
    """Fig. 6: test accuracy on D(u_i) (brown) and normalised eigenvalues (green) against the NAD index.
    `eigenvalues`: an array, or the NADResult itself, whose curve then stops at the estimate's rank
    (`_top`, as `spectra` draws it; a `|` marks the end): past it the eigenvalues are rounding noise."""
    _check_spectrum(getattr(eigenvalues, "eigenvalues", eigenvalues))
    indices, accuracy = np.asarray(indices).reshape(-1), np.asarray(accuracy, dtype=np.float64).reshape(-1)
    if len(indices) != len(accuracy) or not len(indices):
        raise InputError(f"indices and accuracy must be of one length, one accuracy per NAD index; got {len(indices)} "
                         f"and {len(accuracy)}")
    fig, ax = style.figure(width=0.8, height=3.2)
    top = _top(eigenvalues) if isinstance(eigenvalues, NADResult) else None
    vals = np.clip(np.asarray(getattr(eigenvalues, "eigenvalues", eigenvalues), dtype=np.float64), 0, None)
    ratio = vals[:top] / vals[0]
    ax.plot(np.arange(len(ratio)), ratio, color=GREEN, label=r"$\lambda_i / \lambda_0$")
    if len(ratio) < len(vals):                            # the covariance of N networks ends at N - 1
        ax.plot(len(ratio) - 1, ratio[-1], "|", color=GREEN, ms=10, mew=2)
    ax.set_xlabel("NAD index $i$")
    ax.set_ylabel(r"$\lambda_i / \lambda_0$", color=GREEN)
    ax.set_ylim(0, 1.05)
    acc = ax.twinx()
    acc.spines["right"].set_visible(True)
    acc.plot(indices, accuracy, "o-", color=BROWN, label="test accuracy")
    acc.set_ylabel(r"test accuracy on $\mathcal{D}(u_i)$ (%)", color=BROWN)
    acc.set_ylim(40, 102)
    if name:
        ax.set_title(style.LABELS.get(name, name))
    return fig


MORE_MARKERS = ("^", "D", "v")   # fig6_compare's other runs of ours (open squares: fig6_estimates' exact gradient)


def _points(ax, acc, marker, **kw):
    """`{index: accuracy}` as points, or `{index: (mean, std)}` (seeds) as points with +-1 std bars."""
    if not acc:
        return
    idx = sorted(acc)
    vals = np.array([acc[i] for i in idx], dtype=float)
    if vals.ndim == 1:
        ax.plot(idx, vals, marker, ls="", **kw)
    else:
        ax.errorbar(idx, vals[:, 0], yerr=vals[:, 1], fmt=marker, capsize=2, elinewidth=0.8, **kw)


def fig6_compare(ours: Mapping[str, Mapping[int, float | tuple[float, float]]],
                 curves: Mapping[str, published.Fig6Curve],
                 more: Mapping[str, Mapping[str, Mapping[int, float | tuple[float, float]]]] | None = None,
                 label: str = "ours (our NADs)", width: float = 0.97) -> Figure:
    """Fig. 6 of each architecture of `curves` (`{arch: published.fig6(arch)}`), one panel each:
    the published accuracies on D(u_i) (line, only the indices the authors trained), ours where
    measured (`{arch: {index: accuracy}}`, or `{index: (mean, std)}` over seeds, drawn with +-1 std
    bars; black points, `label` in the legend) and the published
    lambda_i / lambda_0 (singular values squared; green, right axis). `more` adds other runs of ours,
    `{label: {arch: {index: accuracy}}}` (e.g. another noise level), as open markers filled white;
    `width` a fraction of the column (the height follows)."""
    archs = list(curves)
    ncols = 2 if len(archs) > 1 else 1
    nrows = -(-len(archs) // ncols)
    fig, axes = style.figure(nrows, ncols, width=width, height=(2.4 * nrows + 0.6) * width / 0.97, sharex=True,
                             sharey=True, squeeze=False)
    for j, (ax, arch) in enumerate(zip(axes.flat, archs)):
        c, m = curves[arch], curves[arch].measured
        eig = ax.twinx()
        eig.plot(c.index, c.eigenvalue / c.eigenvalue[0], color=GREEN, lw=1, zorder=1)
        eig.set_ylim(0, 1.05)
        eig.spines["right"].set_visible(True)
        if j % ncols == ncols - 1:
            eig.set_ylabel(r"$\lambda_i / \lambda_0$", color=GREEN)
        else:
            eig.set_yticklabels([])
        ax.set_zorder(eig.get_zorder() + 1)
        ax.patch.set_visible(False)
        ax.plot(c.index[m], c.accuracy[m], "-", color=BROWN, lw=1.5)
        _points(ax, ours.get(arch, {}), "o", color="k", ms=3.5, zorder=3)
        for (_, runs), marker in zip((more or {}).items(), MORE_MARKERS):
            _points(ax, runs.get(arch, {}), marker, mfc="white", color="k", ms=5, zorder=3)
        ax.set_title(style.LABELS.get(arch, arch))
        ax.set_ylim(45, 102)
    label_panels(axes, len(archs), "NAD index $i$", "test accuracy (%)")
    handles = [Line2D([], [], color=BROWN, lw=1.5, label="published (their NADs)"),
               Line2D([], [], color="k", marker="o", ls="", ms=3.5, label=label),
               Line2D([], [], color=GREEN, lw=1, label=r"published $\lambda_i / \lambda_0$")]
    handles[2:2] = [Line2D([], [], color="k", marker=m, mfc="white", ls="", ms=5, label=name)
                    for (name, _), m in zip((more or {}).items(), MORE_MARKERS)]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)), fontsize=9)
    return fig


ESTIMATE_MARKERS: dict[str, dict[str, Any]] = {"secant": dict(marker="o", mfc="k"),
                                               "autograd": dict(marker="s", mfc="white"),
                                               "hessian": dict(marker="^", mfc="0.6")}
ALONG = {"secant": "secant", "autograd": "exact-gradient", "hessian": "the kernel's"}


def fig6_estimates(panels: Mapping[str, tuple[str, Mapping[str, Mapping[int, tuple[float, float]]]]],
                   curves: Mapping[str, published.Fig6Curve], width: float = 0.97) -> Figure:
    """Fig. 6 along two NAD estimates: one panel per `{title: (arch, {method: {index: (mean, std)}})}`
    (`ch3_nads.seed_spread` of `verdicts.fig6_runs`; "secant", "autograd" (the exact gradient) or "hessian" (the
    kernel's, Eq. 5's mixed derivative); the legend names those drawn), the seeds' mean
    with +-1 std bars beside the published curve of `arch` (`curves`, `published.fig6`); `width` a
    fraction of the column (the height follows)."""
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    drawn = [m for m in ESTIMATE_MARKERS if any(by.get(m) for _, by in panels.values())]
    fig, axes = style.figure(nrows, ncols, width=width, height=(2.4 * nrows + 0.7) * width / 0.97, sharex=True,
                             sharey=True, squeeze=False)
    for ax, (title, (arch, by_method)) in zip(axes.flat, panels.items()):
        c, m = curves[arch], curves[arch].measured
        ax.plot(c.index[m], c.accuracy[m], "-", color=BROWN, lw=1.5)
        for method in drawn:
            kw = ESTIMATE_MARKERS[method]
            _points(ax, by_method.get(method, {}), kw["marker"], mfc=kw["mfc"], color="k", ms=4, zorder=3)
        ax.axhline(50, color="0.6", lw=0.8, ls=":")
        ax.set_title(title)
        ax.set_ylim(40, 102)
    label_panels(axes, len(panels), "NAD index $i$", "test accuracy (%)")
    handles = [Line2D([], [], color=BROWN, lw=1.5, label="published (their NADs)"),
               *(Line2D([], [], color="k", ls="", ms=4, label=f"ours, along {ALONG[k]} NADs", **ESTIMATE_MARKERS[k])
                 for k in drawn)]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)) if len(handles) != 4 else 2,
               fontsize=9)
    return fig


def precision(check: Mapping[str, Any], ks: Sequence[int] | np.ndarray, arch: str = "lenet",
              dim: int = 1024) -> Figure:
    """What the bundle's secant arithmetic does (`bundle.load_precision`). Left: per network, 1 - the
    cosine of its bfloat16 secant gradient (eager and through `torch.compile`) with its float32 one.
    Right: leading-k overlap of the compiled bfloat16 and the float32 estimates of the same networks
    of `arch` (solid), beside two float32 estimates of disjoint halves (dashed: the Monte-Carlo
    agreement), and chance."""
    archs = [a for a in check if a != "overlaps"]
    fig, (left, right) = style.figure(1, 2, width=0.97, height=3.8, layout="constrained",
                                      gridspec_kw={"width_ratios": [1.5, 1]})
    kinds: dict[str, dict[str, Any]] = {"eager": dict(marker="o"), "compiled": dict(marker="s", mfc="none")}
    for j, (method, kw) in enumerate(kinds.items()):
        for i, a in enumerate(archs):
            gap = np.clip(1 - np.asarray(check[a][method], float), 1e-7, None)
            left.plot(np.full(len(gap), i + (j - 0.5) * 0.3), gap, ls="", ms=4, color=style.COLORS.get(a, "0.3"), **kw)
    left.set_yscale("log")
    left.set_xticks(range(len(archs)), [style.LABELS.get(a, a) for a in archs], rotation=40, ha="right",
                    rotation_mode="anchor")
    left.set_ylabel("1 − cosine with float32")
    left.set_title("each network's gradient")
    handles = [Line2D([], [], color="0.3", ls="", ms=4, **kw, label=f"bfloat16, {m}") for m, kw in kinds.items()]
    color, ov = style.COLORS.get(arch, "0.3"), check["overlaps"]
    right.plot(ks, ov["compiled"], "o-", ms=4, color=color)
    right.plot(ks, ov["floor"], "s--", ms=4, color=color, mfc="none")
    handles.append(Line2D([], [], color=color, marker="o", ms=4, label=style.LABELS.get(arch, arch)))
    right.plot(ks, np.asarray(ks) / dim, "k:")
    right.set_xscale("log", base=2)
    right.set_ylim(0, 1.05)
    right.set_xlabel("$k$ (leading NADs)")
    right.set_ylabel("overlap")
    right.set_title("leading NADs: bfloat16 vs float32")
    handles += [Line2D([], [], color="0.4", marker="s", mfc="none", ms=4, ls="--", label="two float32 halves"),
                Line2D([], [], color="k", ls=":", label="chance ($k/D$)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=9)
    return fig


DIAL_REFERENCES = {"exact gradient": dict(color=GREEN), "published": dict(color="k")}
DIAL_KS = {1: dict(marker="o", ls="-"), 16: dict(marker="s", ls="--", mfc="white")}


def secant_dial(table: Mapping[float, Mapping[str, Mapping[int, float]]],
                references: Mapping[str, Mapping[str, Any]] = DIAL_REFERENCES,
                ks: Mapping[int, Mapping[str, Any]] = DIAL_KS, width: float = 0.97) -> Figure:
    """The secant step as a dial (`ch3_nads.secant_dial_table`). Left: the overlap of the leading-k NADs at
    each step h with each reference of `references` (`{name: line kwargs}`; k and its style from `ks`).
    Right: Fig. 6's test accuracy along the NADs of each step, one line per NAD index, chance dotted.
    Both against h on a log axis; `width` a fraction of the column."""
    steps = sorted(table)
    fig, (left, right) = style.figure(1, 2, width=width, height=3.4 * width / 0.97, layout="constrained")
    for name, kw in references.items():
        for k, k_kw in ks.items():
            left.plot(steps, [table[h][name][k] for h in steps], ms=5, **{**k_kw, **kw},
                      label=f"{name}, $k$ = {k}")
    indices = sorted({i for h in steps for i in table[h]["fig6"]})
    for j, i in enumerate(indices):
        at = [h for h in steps if i in table[h]["fig6"]]
        right.plot(at, [table[h]["fig6"][i] for h in at], "o-", ms=5, color=str(0.6 * j / max(1, len(indices) - 1)),
                   label=f"NAD {i}")
    right.axhline(50, color="0.6", lw=0.8, ls=":")
    left.set_ylim(0, 1.05)
    left.set_ylabel("overlap with the\nreference NADs")
    left.set_title("which NADs the secant finds")
    right.set_ylim(40, 102)
    right.set_ylabel("test accuracy (%)")
    right.set_title("Fig. 6 along them")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(steps, [f"{h:g}" for h in steps])
        ax.minorticks_off()
        ax.set_xlabel("secant step $h$")
    handles = [*left.get_legend_handles_labels()[0], *right.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8)
    return fig
