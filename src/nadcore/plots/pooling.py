"""Figures of the pooling chapter: Fig. 4a, Fig. 4b and the theory-vs-simulation check."""

import matplotlib.pyplot as plt
import numpy as np

from nadcore import pooling


def _axes(ax, ncols=1, size=(5.5, 3.4)):
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(1, ncols, figsize=(size[0] * ncols, size[1]), constrained_layout=True)
    return fig, ax


def fig4a_bayes_accuracy(D=128, S=4, eps=1.0, sigma=1.0, kinds=("average",), ax=None):
    """Fig. 4a: best achievable accuracy after pooling on D(v_l) for every l (Theorem 1)."""
    fig, ax = _axes(ax)
    ls = np.arange(D)
    for kind in kinds:
        m_hat = pooling.prefilter(kind, D, S)
        line, = ax.plot(ls, pooling.bayes_accuracy(m_hat, S, eps, sigma).numpy(), label=f"{kind} (classes eps apart)")
        ax.plot(ls, pooling.bayes_accuracy(m_hat, S, eps, sigma, "paper").numpy(), "--", color=line.get_color(),
                alpha=0.6, label=f"{kind} (formula as printed)")
    ax.set(xlabel="frequency index l", ylabel="Bayes accuracy", ylim=(0.45, 1.02), xlim=(0, D - 1),
           title=f"Optimal accuracy after pooling\n(S={S}, D={D}, eps={eps:g}, sigma={sigma:g})")
    ax.legend(fontsize=8)
    return fig


def fig4b_training_loss(loss, ls, zeta=None, ax=None):
    """Fig. 4b: training loss of the linear model of pooling (mean over seeds) for every l."""
    fig, ax = _axes(ax)
    loss = np.asarray(loss)
    steps = np.arange(1, loss.shape[-1] + 1)
    for i, l in enumerate(ls):
        label = f"l={l}" if zeta is None else f"l={l}, zeta={float(zeta[i]):.2f}"
        ax.plot(steps, loss[i].mean(0), label=label)
    ax.set(xscale="log", xlabel="gradient step", ylabel="training loss (y - f(x))^2",
           title="Linear model of pooling: quadratic loss")
    ax.legend(fontsize=8)
    return fig


def theory_vs_simulation(theorem1, lemma1):
    """Left: Theorem 1 (closed forms) against avg_pool1d simulations; right: Lemma 1's diagonal."""
    fig, (a, b) = _axes(None, ncols=2)
    ls = np.asarray(theorem1["l"])
    a.plot(ls, theorem1["theory"], "-", label="Theorem 1, classes eps apart")
    a.plot(ls, theorem1["paper"], "--", label="Theorem 1 as printed")
    a.errorbar(ls, theorem1["simulated"], yerr=2 * np.asarray(theorem1["stderr"]), fmt="o", ms=4,
               label="avg_pool1d + LDA (2 s.e.)")
    a.set(xlabel="frequency index l", ylabel="accuracy", title="Theorem 1 vs simulation")
    a.legend(fontsize=8)
    D = np.asarray(lemma1["theory"]).shape[0]
    b.plot(np.arange(D), np.diag(lemma1["theory"]), "-", label="Lemma 1")
    b.plot(np.arange(D), np.diag(lemma1["monte_carlo"]), "o", ms=4, label="Monte Carlo (autograd)")
    b.set(xlabel="phi index i", ylabel="E d^2 J / d phi_i^2", title="Lemma 1 vs Monte Carlo")
    b.legend(fontsize=8)
    return fig
