"""Chapter 2 (paper Sec. 2.2, Theorem 1, Lemma 1, Fig. 4): the heavy results of the pooling
chapter, cached by `nadcore.store`. The theory itself is `nadcore.pooling`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nadcore import pooling, presets, store
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.seeds import derive

if TYPE_CHECKING:
    from collections.abc import Collection

    import torch
    from numpy.typing import ArrayLike

PARTS = ("fig4b", "theorem1", "lemma1")


def chapter_results(cfg: presets.Pooling, seed: int = 0, results_dir: str | Path = "../results",
                    device: str | torch.device = "cpu", progress: bool = True, compute: bool = True,
                    parts: Collection[str] = PARTS) -> dict[str, dict[str, np.ndarray]]:
    """The heavy results `parts` (of `PARTS`) of the pooling chapter for the preset `cfg`, cached by
    `nadcore.store` (with `compute=False`, only read: a missing result raises `FileNotFoundError`)."""
    if not set(parts) <= set(PARTS):
        raise InputError(f"parts must be a subset of {PARTS}; got {parts!r}")

    root = Path(results_dir) / "pooling"

    def cached(part, settings, fn, on="cpu"):   # the Monte-Carlo checks run on the CPU
        if part not in parts:
            return None
        path = root / f"{part}_{store.key(settings)}.npz"
        return store.cached(path, settings, fn, device=on) if compute else store.load(path, settings)

    train = {k: getattr(cfg, k) for k in ("D", "S", "eps", "train_ls", "train_seeds", "train_n", "train_steps",
                                 "train_lr", "train_sigma", "init_std")} | {"seed": seed}
    fig4b = cached("fig4b", train, lambda: {"loss": pooling.loss_curves(
        cfg.train_ls, _prefilter(cfg), cfg.S, seeds=[derive(seed, s) for s in cfg.train_seeds],
        progress=progress, eps=cfg.eps, sigma=cfg.train_sigma, n=cfg.train_n, steps=cfg.train_steps,
        lr=cfg.train_lr, sigma_theta=cfg.init_std, sigma_phi=cfg.init_std, device=device)}, resolve(device))
    sim = {k: getattr(cfg, k) for k in ("S", "eps", "sigma", "sim_D", "sim_ls", "sim_n_train", "sim_n_test")
           } | {"seed": seed}
    thm1 = cached("theorem1", sim, lambda: pooling.theorem1_check(
        "average", cfg.sim_ls, cfg.S, cfg.eps, cfg.sigma, cfg.sim_n_train, cfg.sim_n_test,
        seed, size=cfg.sim_D, progress=progress))
    hess = {k: getattr(cfg, k) for k in ("S", "eps", "train_sigma", "hess_D", "hess_l", "hess_n")} | {"seed": seed}
    lem1 = cached("lemma1", hess, lambda: pooling.lemma1_check(
        cfg.hess_D, cfg.S, cfg.hess_l, cfg.eps, cfg.train_sigma, cfg.hess_n, seed))
    return {name: r.arrays for name, r in zip(PARTS, (fig4b, thm1, lem1)) if r is not None}


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
