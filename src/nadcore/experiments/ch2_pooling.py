"""Chapter 2 (paper Sec. 2.2, Theorem 1, Lemma 1, Fig. 4): the heavy results of the pooling
chapter, cached by `nadcore.store`. The theory itself is `nadcore.pooling`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nadcore import checks, pooling, presets, store
from nadcore.device import resolve
from nadcore.seeds import derive

if TYPE_CHECKING:
    import torch
    from numpy.typing import ArrayLike

PARTS = ("fig4b", "theorem1", "lemma1")


class Theorem1Check(NamedTuple):
    """Theorem 1 against simulations on 1-D signals (`pooling.theorem1_check`, as stored): at the frequencies `l`,
    the exact Bayes accuracy `theory`, the printed (2)'s `paper`, the pooled direction's `direction`, the
    `simulated` accuracy and its `stderr`."""
    l: np.ndarray
    theory: np.ndarray
    paper: np.ndarray
    direction: np.ndarray
    simulated: np.ndarray
    stderr: np.ndarray


class Lemma1Check(NamedTuple):
    """Lemma 1 against a Monte-Carlo average Hessian (`pooling.lemma1_check`, as stored): `theory` and
    `monte_carlo`, D x D."""
    theory: np.ndarray
    monte_carlo: np.ndarray


class PoolingResults(NamedTuple):
    """The pooling chapter's heavy results (`chapter_results`): Fig. 4b's training losses `fig4b` (directions x seeds
    x steps) and the `theorem1` and `lemma1` checks."""
    fig4b: np.ndarray
    theorem1: Theorem1Check
    lemma1: Lemma1Check


def part_result(cfg: presets.Pooling, part: str, seed: int = 0, results_dir: str | Path = "../results",
                device: str | torch.device = "cpu", progress: bool = True, compute: bool = True) -> store.Result:
    """One of the chapter's heavy results, `part` of `PARTS`, for the preset `cfg`, cached by `nadcore.store` (with
    `compute=False`, only read: a missing result raises `FileNotFoundError`). The Monte-Carlo checks run on the
    CPU."""
    checks.one_of("part", part, PARTS)
    if part == "fig4b":
        settings = {k: getattr(cfg, k) for k in ("D", "S", "eps", "train_ls", "train_seeds", "train_n", "train_steps",
                                                 "train_lr", "train_sigma", "init_std")} | {"seed": seed}
        on = resolve(device)
        fn = lambda: {"loss": pooling.loss_curves(   # noqa: E731
            cfg.train_ls, _prefilter(cfg), cfg.S, seeds=[derive(seed, s) for s in cfg.train_seeds],
            progress=progress, eps=cfg.eps, sigma=cfg.train_sigma, n=cfg.train_n, steps=cfg.train_steps,
            lr=cfg.train_lr, sigma_theta=cfg.init_std, sigma_phi=cfg.init_std, device=device)}
    elif part == "theorem1":
        settings = {k: getattr(cfg, k) for k in ("S", "eps", "sigma", "sim_D", "sim_ls", "sim_n_train", "sim_n_test")
                    } | {"seed": seed}
        on = "cpu"
        fn = lambda: pooling.theorem1_check(   # noqa: E731
            "average", cfg.sim_ls, cfg.S, cfg.eps, cfg.sigma, cfg.sim_n_train, cfg.sim_n_test, seed, size=cfg.sim_D,
            progress=progress)
    else:
        settings = {k: getattr(cfg, k) for k in ("S", "eps", "train_sigma", "hess_D", "hess_l", "hess_n")
                    } | {"seed": seed}
        on = "cpu"
        fn = lambda: pooling.lemma1_check(cfg.hess_D, cfg.S, cfg.hess_l, cfg.eps, cfg.train_sigma,  # noqa: E731
                                          cfg.hess_n, seed)
    path = Path(results_dir) / "pooling" / f"{part}_{store.key(settings)}.npz"
    return store.cached(path, settings, fn, device=on) if compute else store.load(path, settings)


def chapter_results(cfg: presets.Pooling, seed: int = 0, results_dir: str | Path = "../results",
                    device: str | torch.device = "cpu", progress: bool = True, compute: bool = True) -> PoolingResults:
    """The heavy results of the pooling chapter for the preset `cfg` (`PoolingResults`, each `part_result`)."""
    fig4b, thm1, lem1 = (part_result(cfg, part, seed, results_dir, device, progress, compute).arrays
                         for part in PARTS)
    return PoolingResults(fig4b["loss"], Theorem1Check(*(thm1[k] for k in Theorem1Check._fields)),
                          Lemma1Check(*(lem1[k] for k in Lemma1Check._fields)))


def _prefilter(cfg):
    """|m|, the average-pooling prefilter of the linear model of `cfg`."""
    return pooling.prefilter("average", cfg.D, cfg.S).abs()


def fig4b_zeta(cfg: presets.Pooling) -> torch.Tensor:
    """Fig. 4b: zeta(l) of the linear model of `cfg` at its frequencies `train_ls`."""
    return pooling.zeta(_prefilter(cfg), cfg.eps, cfg.train_sigma)[cfg.train_ls]


def plateau_exit(loss: ArrayLike) -> np.ndarray:
    """Fig. 4b: per direction, the first gradient step (1-based) at which the seed-mean loss is below the
    midpoint of its first and last values; `loss` is (directions, seeds, steps)."""
    mean = np.asarray(loss, dtype=float).mean(1)
    mid = (mean[:, :1] + mean[:, -1:]) / 2
    return (mean < mid).argmax(1) + 1
