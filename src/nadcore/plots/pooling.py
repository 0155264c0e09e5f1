"""Figures of the pooling chapter: Fig. 4a, Fig. 4b and the theory-vs-simulation check.

Sized for the book's column (`nadcore.plots.style`); math in the labels is matplotlib mathtext.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.lines import Line2D

from nadcore import pooling
from nadcore.plots import style

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import torch
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from nadcore.experiments import ch2_pooling

EXACT = r"exact, $\Phi(\epsilon\,\gamma(\ell)\,/\,(2\sigma\sqrt{S}))$"
PRINTED = r"as printed, $1 - Q(\sqrt{2}\,\epsilon\,\gamma(\ell)\,/\,(2\sigma))$"


def _axes(ax, ncols=1, width=0.8, height=3.0):
    if ax is not None:
        return ax.figure, ax
    return style.figure(1, ncols, width=width, height=height)


def fig4a_bayes_accuracy(D: int = 128, S: int = 4, eps: float = 1.0, sigma: float = 1.0,
                         kinds: Iterable[str] = ("average",), ax: Axes | None = None) -> Figure:
    """Fig. 4a: best achievable accuracy after pooling on D(v_l) for every l (Theorem 1), with the
    exact constant (solid) and the one printed in the paper (dashed)."""
    fig, ax = _axes(ax, height=3.3)
    ls = np.arange(D)
    handles = []
    for kind in kinds:
        m_hat = pooling.prefilter(kind, D, S)
        line, = ax.plot(ls, pooling.bayes_accuracy(m_hat, S, eps, sigma).numpy(), label=f"{kind} prefilter")
        ax.plot(ls, pooling.bayes_accuracy(m_hat, S, eps, sigma, "paper").numpy(), "--", color=line.get_color(),
                alpha=0.7)
        handles.append(line)
    handles += [Line2D([], [], color="0.3", ls="-", label=EXACT), Line2D([], [], color="0.3", ls="--", label=PRINTED)]
    ax.set(xlabel=r"frequency index $\ell$", ylabel="Bayes accuracy", ylim=(0.45, 1.02), xlim=(0, D - 1),
           title=rf"$S = {S}$, $D = {D}$, $\epsilon = {eps:g}$, $\sigma = {sigma:g}$")
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    return fig


def fig4b_training_loss(loss: ArrayLike, ls: Iterable[int],
                        zeta: Sequence[float] | np.ndarray | torch.Tensor | None = None,
                        ax: Axes | None = None) -> Figure:
    """Fig. 4b: training loss of the linear model of pooling (mean over seeds) for every l."""
    fig, ax = _axes(ax)
    loss = np.asarray(loss)
    steps = np.arange(1, loss.shape[-1] + 1)
    styles = ("-", "--", "-.", ":")
    for i, l in enumerate(ls):
        label = rf"$\ell = {l}$" + ("" if zeta is None else rf", $\zeta = {float(zeta[i]):.2f}$")
        ax.plot(steps, loss[i].mean(0), styles[i % len(styles)], label=label)
    ax.set(xscale="log", xlabel="gradient step", ylabel=r"training loss $(y - f(x))^2$")
    ax.legend(title=r"direction $\ell$ and its $\zeta(\ell)$")
    return fig


def theory_vs_simulation(theorem1: ch2_pooling.Theorem1Check, lemma1: ch2_pooling.Lemma1Check) -> Figure:
    """Left: Theorem 1 (closed forms) against avg_pool1d simulations; right: Lemma 1's diagonal.

    The closed forms are lines drawn over the simulations, which are hollow markers: where they agree,
    both stay visible."""
    fig, (a, b) = style.figure(1, 2, width=0.97, height=3.6)
    ls = np.asarray(theorem1.l)
    sim = "C2"
    a.errorbar(ls, theorem1.simulated, yerr=2 * np.asarray(theorem1.stderr), fmt="o", ms=5, mfc="none",
               mew=1.0, color=sim, ecolor=sim, elinewidth=0.8, zorder=2, label="avg_pool1d + LDA (±2 s.e.)")
    a.plot(ls, theorem1.theory, "-", color="C0", lw=1.5, zorder=3, label="Theorem 1, exact")
    a.plot(ls, theorem1.paper, "--", color="C1", lw=1.5, zorder=3, label="Theorem 1, as printed")
    a.set(xlabel=r"frequency index $\ell$", ylabel="accuracy", title="Theorem 1 vs simulation")
    a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    D = np.asarray(lemma1.theory).shape[0]
    b.plot(np.arange(D), np.diag(lemma1.monte_carlo), "o", ms=5, mfc="none", mew=1.0, color="C1", zorder=2,
           label="Monte Carlo (autograd)")
    b.plot(np.arange(D), np.diag(lemma1.theory), "-", color="C0", lw=1.5, zorder=3, label="Lemma 1")
    b.set(xlabel=r"index $i$ of $\phi$", ylabel=r"$\mathbb{E}\,\partial^2 J / \partial \phi_i^2$",
          title="Lemma 1 vs Monte Carlo")
    b.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    return fig
