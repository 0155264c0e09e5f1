"""Figures of Chapter 6: Fig. 1 of every LeNet pooling variant, Theorem 1 beside the measured
grids of the linear ones, and the variants' NAD spectra, first NADs, convergence and Fig. 6.

Every figure is sized for the page's column (`style.figure`); a variant has one colour, line
style and marker (`STYLE`) on every figure, so that curves lying on top of each other stay
distinguishable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.ticker import FixedLocator, NullLocator
from matplotlib.transforms import offset_copy

from nadcore.experiments import ch6_antialias
from nadcore.fourier import fourier_energy
from nadcore.plots import page, style
from nadcore.plots.nads import ENERGY, oriented

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from pandas.io.formats.style import Styler

    from nadcore.fourier import Grid
    from nadcore.nads.result import NADResult

LABELS = {"max": "max pool (published)", "avg": "average pool", "blur3": "BlurPool, 3 taps",
          "blur5": "BlurPool, 5 taps", "maxblur3": "MaxBlurPool, 3 taps", "maxblur5": "MaxBlurPool, 5 taps",
          "strided": "stride-2 convs", "none": "no downsampling"}
SHORT = {"max": "max pool", "avg": "avg pool", "blur3": "BlurPool-3", "blur5": "BlurPool-5",
         "maxblur3": "MaxBlurPool-3", "maxblur5": "MaxBlurPool-5", "strided": "stride 2", "none": "none"}
# colour, line style and marker of each variant; the dashed and dotted curves (hollow markers) are
# drawn above the solid ones, so that a solid curve under another one shows through its gaps
STYLE = {"max": dict(color=style.COLORS["lenet"], ls="-", marker="o", zorder=2, ms=7),
         "avg": dict(color="#dd8452", ls="-", marker="s", zorder=2, ms=7),
         "blur3": dict(color="#4c72b0", ls="--", marker="^", zorder=3, mfc="none"),
         "blur5": dict(color="#8172b3", ls="--", marker="v", zorder=3, mfc="none"),
         "maxblur3": dict(color="#c44e52", ls="-.", marker="D", zorder=3, mfc="none"),
         "maxblur5": dict(color="#da8bc3", ls="-.", marker="P", zorder=3, mfc="none"),
         "strided": dict(color="#937860", ls=":", marker="X", zorder=3, mfc="none"),
         "none": dict(color="0.3", ls=":", marker="*", zorder=3, mfc="none")}
ACC = dict(cmap="viridis", vmin=50, vmax=100)


def _heat(ax, image, grid, title=None):
    """A Fourier grid of accuracies (grey where NaN), ticks at the ends and the centre."""
    ext = (grid.freqs[0] - 0.5, grid.freqs[-1] + 0.5, grid.freqs[-1] + 0.5, grid.freqs[0] - 0.5)
    im = ax.imshow(image, extent=ext, **ACC)
    ax.set_facecolor("0.85")
    ticks = sorted({grid.freqs[0], 0, grid.freqs[-1]})
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    if title:
        ax.set_title(title)
    return im


def _outer_labels(axes):
    """Tick labels and axis labels on the left column and the bottom row of `axes` only."""
    for ax in axes[:-1].flat:
        ax.tick_params(labelbottom=False)
    for ax in axes[:, 1:].flat:
        ax.tick_params(labelleft=False)
    for ax in axes[-1]:
        ax.set_xlabel("$k_x$")
    for ax in axes[:, 0]:
        ax.set_ylabel((ax.get_ylabel() + "\n" if ax.get_ylabel() else "") + "$k_y$")


def _shape(n):
    rows = -(-n // 4)
    return rows, -(-n // rows)


PANEL = 1.05   # inches of a Fourier grid's panel at the figures' default widths: about 105 px on the page


def fig1_variants(fig1: Mapping[str, Mapping[tuple[int, int], float]], grid: Grid,
                  variants: Iterable[str] | None = None, width: float = 0.97) -> Figure:
    """One Fig. 1 panel per variant (`{variant: {cell: test accuracy}}`, `SHORT` names and the
    grid's mean in the titles), four to a row, one colour scale 50-100%; grey where a variant has no
    stored cell. `width`: a fraction of the column (the panels and the height follow)."""
    variants = [v for v in (variants or fig1) if v in fig1]
    rows, cols = _shape(max(1, len(variants)))
    panel = PANEL * width / 0.97
    fig, axes = style.figure(rows, cols, width=width, height=(panel + 0.5) * rows + 0.3, squeeze=False)
    im = None
    for ax, v in zip(axes.flat, variants):
        acc = fig1[v]
        mean = np.mean(list(acc.values())) if acc else float("nan")
        im = _heat(ax, grid.image(acc), grid, f"{SHORT.get(v, v)}\nmean {mean:.1f}%")
    _outer_labels(axes)
    for ax in list(axes.flat)[len(variants):]:
        ax.axis("off")
    if im is not None:
        fig.colorbar(im, ax=axes, shrink=0.8, label="test accuracy (%)")
    return fig


def theory_beside(measured: Mapping[str, Mapping[tuple[int, int], float]],
                  theory: Mapping[int, Mapping[str, Mapping[tuple[int, int], float]]],
                  agreement: Mapping[int, Mapping[str, float]], grid: Grid, width: float = 0.8) -> Figure:
    """For each linear variant (a row): Theorem 1's Bayes accuracy after its first pooling, after
    both poolings (`theory[1]`, `theory[2]`), and the measured Fig. 1 grid, with Spearman's rank
    correlation of each prediction with the measurement in the titles; one colour scale. `width`: a
    fraction of the column (the panels and the height follow)."""
    variants = list(theory[1])
    panel = PANEL * width / 0.8
    fig, axes = style.figure(len(variants), 3, width=width, height=(panel + 0.35) * len(variants) + 0.6,
                             squeeze=False)
    for r, (row, v) in enumerate(zip(axes, variants)):
        for ax, stages, what in ((row[0], 1, "first pooling\n($S$=2)"), (row[1], 2, "both poolings\n($S$=4)")):
            rho = agreement[stages].get(v, float("nan"))
            head = f"{what}\n" if r == 0 else ""
            im = _heat(ax, grid.image(theory[stages][v]), grid, f"{head}$\\rho$ = {rho:.2f}")
        _heat(row[2], grid.image(measured.get(v, {})), grid, "measured" if r == 0 else None)
        row[0].set_ylabel(SHORT.get(v, v))
    _outer_labels(axes)
    fig.colorbar(im, ax=axes, shrink=0.6, label="accuracy (%)")
    return fig


def _rank(res):
    """The normalised spectrum of a NAD estimate up to the numerical rank of its covariance (at most
    N - 1 for N networks): the round-off past it (below 1e-12 of the first eigenvalue) is dropped."""
    vals = np.asarray(res.eigenvalues, dtype=float) / res.eigenvalues[0]
    return vals[:np.count_nonzero(vals > 1e-12)]


def spectra(results: Mapping[str, NADResult | None], ax: Axes | None = None) -> Figure | None:
    """The NADs' normalised covariance eigenvalues lambda_i / lambda_0 against the NAD index, per
    variant (`{variant: NADResult | None}`), up to the covariance's rank (the number of networks);
    on `ax` if given (no legend then: the caller's)."""
    fig, ax = style.figure(width=0.85, height=3.9) if ax is None else (None, ax)
    for v, res in _stored(results).items():
        vals = _rank(res)
        kw = {k: x for k, x in STYLE.get(v, {}).items() if k in ("color", "ls", "zorder")}
        ax.semilogy(np.arange(len(vals)), vals, label=SHORT.get(v, v), lw=1.4, **kw)
    ax.set_xlabel("NAD index $i$")
    ax.set_ylabel(r"$\lambda_i / \lambda_0$")
    if fig is not None:
        _legend(fig)
    return fig


def spectra_and_fig6(results: Mapping[str, NADResult | None], fig6: Mapping[str, Mapping[int, float]],
                     width: float = 0.97) -> Figure:
    """`spectra` (left) and `fig6_variants` (right) side by side, one legend of the variants below."""
    fig, (left, right) = style.figure(1, 2, width=width, height=3.4 * width / 0.97)
    spectra(results, ax=left)
    fig6_variants(fig6, ax=right)
    right.tick_params(axis="x", labelrotation=45)   # 512 and 1023 sit close on the symlog axis
    _legend(fig)
    return fig


def _legend(fig):
    """One legend of the variants below the axes, where it hides no curve (none without curves): each
    label once, from whichever panel draws it."""
    found = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            found.setdefault(label, handle)
    if found:
        fig.legend(list(found.values()), list(found), loc="outside lower center", ncol=4)


def _stored(results):
    return {v: r for v, r in results.items() if r is not None}


def first_nads(results: Mapping[str, NADResult | None], show: int = 3) -> Figure:
    """The first `show` NADs of each variant (a row; `{variant: NADResult | None}`), scaled as
    Chapters 3 and 7 draw NADs (`plots.nads.fig5`): pixels over max |pixel| (`oriented`, one diverging
    scale from -1 to 1) and the share of each NAD's energy per Fourier frequency (zero frequency at
    the centre, one log scale, `ENERGY`)."""
    results = _stored(results)
    variants = list(results)
    if not variants:                                  # a shard's run: the collector estimates the NADs
        fig, ax = style.figure(width=0.85, height=1.0)
        ax.axis("off")
        ax.text(0.5, 0.5, "No NADs stored yet", ha="center", va="center")
        return fig
    images = {v: oriented(np.asarray(results[v].images(show), dtype=np.float64).sum(1)) for v in variants}
    energy = {v: fourier_energy(images[v]) for v in variants}
    energy = {v: np.clip(e / e.sum((-2, -1), keepdims=True), ENERGY.vmin, None) for v, e in energy.items()}
    fig, axes = style.figure(len(variants), 2 * show, width=0.98, height=1.02 * len(variants) + 0.9, squeeze=False)
    for row, v in zip(axes, variants):
        for i in range(show):
            pix = row[i].imshow(images[v][i], cmap="RdBu_r", vmin=-1, vmax=1)
            eng = row[show + i].imshow(energy[v][i], cmap="magma", norm=ENERGY)
        row[0].set_ylabel(SHORT.get(v, v).replace("MaxBlurPool", "MaxBlur-\nPool"))
    for i in range(show):
        axes[0, i].set_title(f"$u_{{{i}}}$")
        axes[0, show + i].set_title(f"$|\\hat u_{{{i}}}|^2$")
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[:].set_visible(True)
    fig.colorbar(pix, ax=axes[:, :show], location="bottom", shrink=0.8, label="pixel / max |pixel|")
    fig.colorbar(eng, ax=axes[:, show:], location="bottom", shrink=0.8, label="share of the NAD's energy")
    return fig


def _ticks_at(ax, values):
    """x ticks exactly at `values`, labelled with them, no minor ticks (log and symlog axes)."""
    ax.xaxis.set_major_locator(FixedLocator(values))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(v) for v in values])


def convergence(conv: Mapping[str, Mapping[str, np.ndarray] | None]) -> Figure:
    """Overlap of the leading-k NAD subspaces from N and from 2N networks, at the largest N, per variant
    (the chance level of random subspaces, k/D, a thick grey line)."""
    stored = {v: c for v, c in conv.items() if c is not None}
    fig, ax = style.figure(width=0.85, height=3.9)
    ks = np.asarray(next(iter(stored.values()))["ks"]) if stored else np.array([1])
    for v, c in stored.items():
        ax.plot(ks, c["overlap"][-1], label=f"{SHORT.get(v, v)}", **{"ms": 5, **STYLE.get(v, {})})
    ax.plot(ks, ks / 1024, color="0.6", lw=3, alpha=0.6, zorder=1, label="random ($k/D$)")
    ax.set_xscale("log", base=2)
    _ticks_at(ax, ks)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("$k$ (leading NADs)")
    ax.set_ylabel("overlap, $N$ vs $2N$")
    _legend(fig)
    return fig


SAME_POINTS = 1.0     # accuracy points: curves closer than this at every index would hide each other
SIDE_STEP = 5.0       # typographic points between the copies of a curve drawn side by side


def _side_by_side(curves):
    """`{variant: display offset in points}` of `curves` (`{variant: (indices, accuracies)}`): 0 for a
    curve, and +5, -5, +10, ... for each later one on the same indices within `SAME_POINTS` of it."""
    shifts, drawn = {}, []
    for v, (idx, vals) in curves.items():
        same = [w for w, (i, a) in drawn if i == idx and np.allclose(a, vals, atol=SAME_POINTS)]
        shifts[v] = SIDE_STEP * ((len(same) + 1) // 2) * (1 if len(same) % 2 else -1)
        drawn.append((v, (idx, vals)))
    return shifts


def fig6_variants(fig6: Mapping[str, Mapping[int, float]], ax: Axes | None = None) -> Figure | None:
    """Test accuracy on D(u_i) against the NAD index i, one curve per variant (its own NADs), on a
    symmetric-log axis ticked at the measured indices; on `ax` if given (no legend then). Curves that
    coincide (within `SAME_POINTS` at every index) are drawn `SIDE_STEP` points apart, side by side,
    so that each shows."""
    fig, ax = style.figure(width=0.85, height=3.9) if ax is None else (None, ax)
    indices = sorted({i for acc in fig6.values() for i in acc})
    curves = {v: (sorted(acc), np.array([acc[i] for i in sorted(acc)], dtype=float)) for v, acc in fig6.items() if acc}
    shifts = _side_by_side(curves)
    for v, (idx, vals) in curves.items():
        line, = ax.plot(idx, vals, label=SHORT.get(v, v), **{"ms": 5, **STYLE.get(v, {})})  # ty: ignore[invalid-argument-type]
        if shifts[v]:                          # moved after plotting: the axis limits follow the data
            line.set_transform(offset_copy(ax.transData, fig=ax.figure, x=shifts[v], units="points"))  # ty: ignore[invalid-argument-type]
    ax.set_xscale("symlog", linthresh=8)
    _ticks_at(ax, indices)
    ax.set_ylim(45, 102)
    ax.set_xlabel("NAD index $i$")
    ax.set_ylabel(r"accuracy on $\mathcal{D}(u_i)$ (%)")
    if fig is not None:
        _legend(fig)
    return fig


def _fmt(x, digits=1):
    return "–" if x is None or np.isnan(x) else f"{x:.{digits}f}"


def summary_table(results: ch6_antialias.AntialiasResults) -> pd.DataFrame:
    """`ch6_antialias.summary` of `results` as a table that fits the page: one row per variant
    (`SHORT` names); Fig. 1's mean, std and band means (`ch6_antialias.BANDS`), Spearman's rho of
    Theorem 1 for both poolings, lambda_64 / lambda_0, the N vs 2N overlap of the leading 16
    NADs, and Fig. 6 at the first and last NAD index."""
    first, last = results.settings.indices[0], results.settings.indices[-1]
    columns = ("variant", "mean", "std", "|k|≤4", "k=8", "other", "ρ₂", "λ₆₄/λ₀", "overlap",
               f"NAD {first}", f"NAD {last}")
    rows = [(SHORT.get(r["variant"], r["variant"]), _fmt(r["mean"]), _fmt(r["std"]), _fmt(r["band_low"]),
             _fmt(r["band_eight"]), _fmt(r["band_high"]), _fmt(r["rho2"], 2), _fmt(r["lam64"], 3),
             _fmt(r["overlap16"], 2), _fmt(r["fig6_first"]), _fmt(r["fig6_last"]))
            for r in ch6_antialias.summary(results)]
    return page.table(rows, columns, index="variant")


def summary_view(results: ch6_antialias.AntialiasResults) -> Styler:
    """`summary_table` as the page shows it: spaced, without the columns empty for every variant."""
    table = summary_table(results)
    table = table.loc[:, (table != "–").any()].rename(columns={"|k|≤4": "|k| ≤ 4", "k=8": "k = 8"})
    table.index.name = None
    return table.style.set_table_styles([{
        "selector": "th, td",
        "props": "padding: 0.1em 0.4em; white-space: nowrap; text-align: right; font-size: 0.85em"}])


