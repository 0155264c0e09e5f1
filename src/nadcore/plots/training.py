"""Figures of Chapter 8: how a network's gradient covariance G_t moves while it trains (`ch8_training`).

Each draws what it is given, `{(network, task, replicate): arrays}` of `ch8_training.training_sweep` and
the preset's settings: `overlaps` (G_t's leading subspace against G_0's, with the sampling ceiling),
`task_direction` (the share of G_t along the task's direction, and the test accuracy), `prediction`
(the change against G_0 S G_0 and its baselines) and `leading` (G_t's leading eigenvector as an image).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from nadcore.experiments import ch8_training as c8
from nadcore.plots import style

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from matplotlib.figure import Figure

    from nadcore import presets

NETWORK_COLORS = {"lenet": style.COLORS["lenet"], "lenet_avg": "#2a6f97", "mlp": style.COLORS["mlp"]}


def _tasks(cells, settings: presets.Training):
    return [t for t in settings.tasks if any(k[1] == t for k in cells)]


def _networks(cells, settings: presets.Training):
    return [n for n in settings.networks if any(k[0] == n for k in cells)]


def _steps_axis(ax, steps, per_epoch):
    """x: SGD steps on a symmetric-log axis (0 shown), ticks at the checkpoints' epochs."""
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(0, steps[-1] * 1.3)
    ax.set_xticks([0, 1, per_epoch, steps[-1]])
    ax.set_xticklabels(["0", "1", "1 ep.", f"{steps[-1] // per_epoch} ep."])
    ax.minorticks_off()
    ax.set_xlabel("SGD step")


def _band(ax, x, runs, color, label=None, log=False, **kw):
    """The replicates' mean ± 2 standard errors (`log`: of log10, a geometric mean and its band)."""
    m, se = c8.mean_se(np.log10(runs) if log else runs)
    lo, hi = m - 2 * se, m + 2 * se
    if log:
        m, lo, hi = 10 ** m, 10 ** lo, 10 ** hi
    ax.plot(x, m, color=color, label=label, marker="o", ms=3, **kw)
    if len(runs) > 1:
        ax.fill_between(x, lo, hi, color=color, alpha=0.2, lw=0)


def _per_epoch(settings: presets.Training):
    return -(-settings.n_train // 128)


def overlaps(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], settings: presets.Training,
             k: int = c8.STAY_K) -> Figure:
    """Per task: the overlap of G_t's leading `k`-subspace with G_0's against the SGD step (mean ± 2 standard
    errors over replicates), each network's sampling ceiling dashed, chance (k / D) dotted."""
    tasks, nets, titles = _tasks(cells, settings), _networks(cells, settings), c8.task_names(settings)
    fig, axes = style.figure(1, len(tasks), height=2.6, sharey=True, squeeze=False)
    steps, j = np.asarray(settings.checkpoints), list(settings.ks).index(k)
    for ax, t in zip(axes[0], tasks):
        for n in nets:
            runs = c8.replicate_arrays(cells, n, t, "self_overlap")
            if len(runs):
                _band(ax, steps, runs[:, :, j], NETWORK_COLORS[n], c8.NETWORK_WORDS[n])
                ceiling = c8.replicate_arrays(cells, n, t, "half_overlap")[:, j].mean()
                ax.axhline(ceiling, color=NETWORK_COLORS[n], ls="--", lw=1)
        ax.axhline(k / 1024, color="k", ls=":", lw=1)
        _steps_axis(ax, steps, _per_epoch(settings))
        ax.set_title(titles[t])
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel(f"overlap with G₀ (k = {k})")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=len(nets), frameon=False)
    return fig


def task_direction(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]],
                   settings: presets.Training) -> Figure:
    """Per task: G_t's share along the task's direction u, D u^T G_t u / tr G_t (1: isotropic, D: all of it; the
    geometric mean over replicates, ± 2 standard errors of its log), and the test accuracy (mean ± 2 standard
    errors), against the SGD step."""
    tasks, nets, titles = _tasks(cells, settings), _networks(cells, settings), c8.task_names(settings)
    fig, axes = style.figure(2, len(tasks), height=4.4, sharex=True, sharey="row", squeeze=False)
    steps = np.asarray(settings.checkpoints)
    for col, t in enumerate(tasks):
        top, bottom = axes[0][col], axes[1][col]
        for n in nets:
            energy = c8.replicate_arrays(cells, n, t, "u_energy")
            if len(energy):
                _band(top, steps, energy, NETWORK_COLORS[n], c8.NETWORK_WORDS[n], log=True)
                _band(bottom, steps, c8.replicate_arrays(cells, n, t, "acc"), NETWORK_COLORS[n])
        top.set_yscale("log")
        top.axhline(1, color="k", ls=":", lw=1)
        bottom.axhline(50, color="k", ls=":", lw=1)
        bottom.set_ylim(45, 100)
        top.set_title(titles[t])
        _steps_axis(bottom, steps, _per_epoch(settings))
    axes[0][0].set_ylabel("G's share along u\n(× isotropic)")
    axes[1][0].set_ylabel("test accuracy (%)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=len(nets), frameon=False)
    return fig


PREDICTION_LINES = (("scale", "with G₀ (a rescaling)", "k", "-"), ("pred", "with G₀ S G₀, beyond it", "#c44e52", "-"),
                    ("data", "with S, beyond it", "#4c72b0", "--"))


def prediction(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], settings: presets.Training,
               networks: Sequence[str] | None = None) -> Figure:
    """Rows: networks; columns: tasks. The cosine of G_t - G_0 with G_0 (the change as a rescaling), and, once
    G_0's direction is out of both, with G_0 S G_0 (the prediction) and with the data's S (the baseline),
    against the SGD step (mean ± 2 standard errors over replicates; `ch8_training.beyond_rescaling`)."""
    tasks, titles = _tasks(cells, settings), c8.task_names(settings)
    nets = [n for n in (networks or _networks(cells, settings)) if any(k[0] == n for k in cells)]
    fig, axes = style.figure(len(nets), len(tasks), height=1.9 * len(nets) + 0.6, sharex=True, sharey=True,
                             squeeze=False)
    steps = np.asarray(settings.checkpoints)[1:]
    for row, n in enumerate(nets):
        for col, t in enumerate(tasks):
            ax = axes[row][col]
            if any(k[:2] == (n, t) for k in cells):
                b = c8.beyond_rescaling(cells, n, t)
                for key, label, color, ls in PREDICTION_LINES:
                    _band(ax, steps, b[key], color, label if (row, col) == (0, 0) else None, ls=ls)
            ax.axhline(0, color="k", lw=0.5)
            ax.axvspan(0.5, c8.EARLY * 1.15, color="0.9", lw=0, zorder=0)
            ax.set_ylim(-1.05, 1.05)
            if row == 0:
                ax.set_title(titles[t])
            if col == 0:
                ax.set_ylabel(f"{c8.NETWORK_WORDS[n]}\ncosine")
            if row == len(nets) - 1:
                _steps_axis(ax, np.asarray(settings.checkpoints), _per_epoch(settings))
            else:
                ax.set_xlabel("")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False)
    return fig


def leading(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], settings: presets.Training,
            network: str = "lenet", replicate: int = 0, steps: Sequence[int] | None = None) -> Figure:
    """Rows: tasks; columns: checkpoints. The leading eigenvector of one network's G_t (replicate `replicate`),
    signed so that its largest entry is positive, on one symmetric colour scale per image."""
    tasks, titles = [t for t in _tasks(cells, settings) if (network, t, replicate) in cells], c8.task_names(settings)
    all_steps = list(settings.checkpoints)
    steps = list(steps or all_steps)
    fig, axes = style.figure(len(tasks), len(steps), height=style.WIDTH / len(steps) * len(tasks) + 0.35,
                             squeeze=False)
    per_epoch = _per_epoch(settings)
    for row, t in enumerate(tasks):
        vecs = np.asarray(cells[(network, t, replicate)]["leading"], dtype=np.float64)
        for col, s in enumerate(steps):
            ax, v = axes[row][col], vecs[all_steps.index(s)].reshape(32, 32)
            v = v * np.sign(v.flat[np.argmax(np.abs(v))])
            lim = np.abs(v).max()
            ax.imshow(v, cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.spines[:].set_visible(False)
            if row == 0:
                ax.set_title("step 0" if s == 0 else f"{s // per_epoch} ep." if s % per_epoch == 0 else f"step {s}")
            if col == 0:
                ax.set_ylabel(titles[t].replace("Fashion-MNIST", "Fashion-\nMNIST"))
    return fig


def linearised(gaps: Mapping[Any, Mapping[int, tuple]]) -> Figure:
    """Per comparison (`ch8_training.linearised_gaps`: a NAD estimate, at a sigma): LeNet's Fig. 6 accuracy at each
    index, the full network beside its linearisation at initialisation (same data, initialisation and shuffling;
    mean ± 1 std over seeds)."""
    fig, axes = style.figure(1, len(gaps), width=0.95, height=2.6, sharey=True, squeeze=False)
    for ax, (method, by) in zip(axes[0], gaps.items()):
        idx = list(by)
        x = np.arange(len(idx))
        full, lin, _, full_sd, lin_sd = (np.array(v) for v in zip(*by.values()))
        ax.errorbar(x - 0.1, full, full_sd, fmt="o", color="k", ms=5, capsize=2, label="LeNet")
        ax.errorbar(x + 0.1, lin, lin_sd, fmt="D", color="#c44e52", mfc="white", ms=5, capsize=2,
                    label="LeNet, linearised")
        ax.axhline(50, color="0.6", lw=0.8, ls=":")
        ax.set_xticks(x, [c8.nad_name(i) for i in idx])
        ax.set_xlabel("trained on D(uᵢ)")
        ax.set_title(c8.along(method)[len("along "):].replace(" at σ", "\nat σ"))
        ax.set_ylim(40, 102)
    axes[0][0].set_ylabel("test accuracy (%)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=2, frameon=False)
    return fig
