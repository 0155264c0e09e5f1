"""Chapter 8: how a network's NADs move while it trains (issue 61's first question).

`trajectory` trains one network on one task and measures, before training and after each checkpoint
epoch t, its gradient covariance over the inputs,

    G_t = E_x[grad_x m(x) grad_x m(x)^T],    m = z_1 - z_0 (the two-class logit margin),

estimated from `grad_samples` test inputs (the same inputs at every checkpoint; the checkpoints are SGD
steps, from the first few, where the prediction below is made, to the end of training). At t = 0 the margin's
gradient is, up to a factor, that of a one-output network of the same architecture, so the top
eigenvectors of G_0 averaged over initialisations are the architecture's NADs; `measures` compares
each G_t with the same network's G_0 and with the architecture's stored NADs:

- `self_overlap[t, k]`: the overlap of the leading k-subspaces of G_t and G_0 (`nads.subspace_overlaps`);
  `half_overlap[k]`, the same between two halves of the inputs at t = 0, is its sampling ceiling;
- `nad_overlap[t, k]`: the leading k-subspace of G_t against the architecture's first k NADs;
- `u_rank[t]`: where the task's direction u ranks in G_t: the index of the eigenvector closest to u
  (largest |v_j . u|; 0: the leading one), `u_cos[t]` that |v_j . u|, `u_energy[t]` = D u^T G_t u / tr G_t
  (1 for an isotropic G_t);
- the prediction of Movahedi, Orvieto and Moosavi-Dezfooli (ICLR 2025), G_t - G_0 close to G_0 S G_0
  (S = E[x x^T], the training inputs' uncentred second moment): `cos_pred[t]`, the Frobenius cosine of
  G_t - G_0 with G_0 S G_0, beside two baselines: S alone (`cos_data`) and G_0 itself (`cos_scale`:
  the gradients only growing).

Tasks: D(u_i) (the NAD paper's Fig. 6 data, u_i the network's own i-th NAD, an early and a late index)
and a two-class split of Fashion-MNIST (`FASHION_SPLIT`: labels 0-4 against 5-9, standardised by the
training set's mean and deviation), whose direction u is the difference of the class means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from nadcore import checks, models, seeds, store, sweeps, train, versions
from nadcore.checks import InputError
from nadcore.data import directional_dataset
from nadcore.nads import subspace_overlaps

FASHION_SPLIT = 5      # Fashion-MNIST as two classes: labels below 5 (tops, trousers, dresses, coats) vs the rest
FASHION_PART = 10**6   # the seeds' part of the Fashion-MNIST task (a D(u_i) task's part is i, as in Fig. 6)
NETWORKS = {"lenet": ("lenet", True), "lenet_avg": ("lenet", "avg"), "mlp": ("mlp", True)}   # name: (arch, pooling)


def check_network(name: str) -> tuple[str, bool | str]:
    """The (registry architecture, pooling) of network `name` of `NETWORKS`."""
    if name not in NETWORKS:
        raise InputError(f"network must be one of {', '.join(NETWORKS)}; got {name!r}")
    return NETWORKS[name]


def margin_gradients(net: nn.Module, x: torch.Tensor, batch: int = 256) -> np.ndarray:
    """(M, D) float64: the gradient of the logit margin z_1 - z_0 at each of the M inputs `x`, in eval
    mode (the network's mode restored)."""
    was = net.training
    net.eval()
    dev = next(net.parameters()).device
    out = []
    try:
        for a in range(0, len(x), batch):
            xb = x[a:a + batch].to(dev).detach().requires_grad_(True)
            z = net(xb)
            (g,) = torch.autograd.grad((z[:, 1] - z[:, 0]).sum(), xb)
            out.append(g.reshape(len(xb), -1).double().cpu())
    finally:
        net.train(was)
    return torch.cat(out).numpy()


def second_moment(a: np.ndarray) -> np.ndarray:
    """E[a a^T] over the rows of `a`: (D, D) float64."""
    a = np.asarray(a, dtype=np.float64)
    return a.T @ a / len(a)


def frobenius_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """<A, B>_F / (|A|_F |B|_F); NaN when either is zero."""
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(np.sum(a * b) / (na * nb)) if na > 0 and nb > 0 else float("nan")


def eig_desc(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors as rows of the symmetric matrix `g`."""
    w, v = np.linalg.eigh(g)
    return w[::-1], v[:, ::-1].T


def closest(vectors: np.ndarray, u: np.ndarray) -> tuple[int, float]:
    """The index of the row of `vectors` (unit eigenvectors, leading first) closest to the unit vector `u`,
    and its |cosine| with u."""
    cos = np.abs(vectors @ u)
    j = int(np.argmax(cos))
    return j, float(cos[j])


def measures(g0: np.ndarray, g: np.ndarray, s: np.ndarray, u: np.ndarray, basis: np.ndarray,
             ks: Sequence[int], eig0: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    """The module's measures of one checkpoint's G (`g`) against G_0 (`g0`, its `eig_desc` if `eig0` is given),
    the inputs' second moment `s`, the task's unit direction `u` and the architecture's NADs `basis` (rows)."""
    eig0 = eig_desc(g0) if eig0 is None else eig0
    w, v = eig0 if g is g0 else eig_desc(g)
    v0 = eig0[1]
    dg = g - g0
    rank, cos = closest(v, u)
    return {"self_overlap": subspace_overlaps(v, v0, ks), "nad_overlap": subspace_overlaps(v, basis, ks),
            "u_rank": rank, "u_cos": cos, "u_energy": len(u) * float(u @ g @ u) / float(np.trace(g)),
            "cos_pred": frobenius_cosine(dg, g0 @ s @ g0), "cos_data": frobenius_cosine(dg, s),
            "cos_scale": frobenius_cosine(dg, g0), "eigenvalues": w[:max(ks)], "leading": v[0]}


def half_overlap(grads: np.ndarray, ks: Sequence[int]) -> np.ndarray:
    """The overlaps of the leading k-subspaces of G from the first and the second half of the rows of
    `grads`: the ceiling that sampling the inputs leaves to `self_overlap`."""
    half = len(grads) // 2
    return subspace_overlaps(eig_desc(second_moment(grads[:half]))[1], eig_desc(second_moment(grads[half:]))[1], ks)


def spread(x: torch.Tensor, y: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`m` of the samples `x` evenly spread over the set (both classes of an ordered D(v) set)."""
    checks.integer("grad_samples", m, 2, len(x), accepted=f"an integer in [2, {len(x)}] (the test samples)")
    idx = torch.linspace(0, len(x) - 1, m).round().long()
    return x[idx], y[idx]


def trajectory(net: nn.Module, data: Sequence[Sequence[torch.Tensor]], u: np.ndarray, basis: np.ndarray,
               recipe: train.Recipe, checkpoints: Sequence[int], ks: Sequence[int], grad_samples: int,
               seed: int) -> dict[str, np.ndarray]:
    """Train `net` (initialised) on `data` with `recipe` (shuffled by `seed`) and return the `measures`
    after each SGD step of `checkpoints` (0 first: before training) stacked over checkpoints, with the test
    accuracy `acc` (percent) at each and `half_overlap`."""
    steps = recipe.epochs * -(-len(data[0][0]) // recipe.batch_size)
    checkpoints = [int(c) for c in checkpoints]
    if not checkpoints or checkpoints[0] != 0 or checkpoints != sorted(set(checkpoints)) or checkpoints[-1] > steps:
        raise InputError(f"checkpoints must be increasing SGD steps from 0 to at most {steps} (the recipe's); "
                         f"got {checkpoints!r}")
    (x_train, _), (x_test, y_test) = data
    xg, _ = spread(x_test, y_test, grad_samples)
    s = second_moment(x_train.reshape(len(x_train), -1).numpy())
    u = np.asarray(u, dtype=np.float64).reshape(-1)
    basis = np.asarray(basis, dtype=np.float64).reshape(len(basis), -1)
    grads0 = margin_gradients(net, xg)
    g0 = second_moment(grads0)
    eig0 = eig_desc(g0)
    rows: list[dict[str, Any]] = []

    def checkpoint(step: int) -> None:
        if step in checkpoints:
            g = g0 if step == 0 else second_moment(margin_gradients(net, xg))
            rows.append({**measures(g0, g, s, u, basis, ks, eig0), "acc": train.accuracy(net, x_test, y_test)})

    checkpoint(0)
    train.fit(net, data, recipe, seed=seed, device="cpu", on_step=checkpoint)
    out = {k: np.stack([np.asarray(r[k], dtype=np.float64) for r in rows]) for k in rows[0]}
    out["leading"] = out["leading"].astype(np.float16)
    out["half_overlap"] = half_overlap(grads0, ks)
    return out


def class_direction(x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """The unit difference of the two classes' mean inputs (class 1 minus class 0)."""
    d = (x[y == 1].mean(0) - x[y == 0].mean(0)).reshape(-1).double().numpy()
    return d / np.linalg.norm(d)


def fashion_task(load: Callable[[bool], tuple[torch.Tensor, torch.Tensor]], n_train: int) \
        -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """Fashion-MNIST as two classes (`FASHION_SPLIT`), one channel, standardised with the training
    set's mean and deviation: the first `n_train` training and test images of `load(train)` (`cifar.load`'s
    3-channel (N, 3, 32, 32) images and labels 0-9)."""
    (xa, ya), (xb, yb) = load(True), load(False)
    xa, ya, xb, yb = xa[:n_train, :1], ya[:n_train], xb[:n_train, :1], yb[:n_train]
    mean, std = xa.mean(), xa.std()
    return ((xa - mean) / std, (ya >= FASHION_SPLIT).long()), ((xb - mean) / std, (yb >= FASHION_SPLIT).long())


def cell(network: str, task: str, replicate: int, settings: Mapping[str, Any], basis: np.ndarray,
         fashion: Callable[[], Any] | None = None) -> dict[str, np.ndarray]:
    """One stored cell: `network` (`NETWORKS`) trained on `task` ("early", "late": D(u_i) at the settings'
    `indices`, u_i the rows of `basis`, the network's NADs; "fashion": `fashion()`, see `fashion_task`),
    replicate `replicate` of the run `settings["seed"]`, measured by `trajectory`."""
    arch, pooling = check_network(network)
    run = seeds.replicate(settings["seed"], replicate)
    recipe = train.Recipe(settings["epochs"], settings["max_lr"])
    if task == "fashion":
        if fashion is None:
            raise InputError("fashion must give the Fashion-MNIST task (`fashion_task`) for task 'fashion'")
        data = fashion()
        u, st = class_direction(*data[0]), seeds.streams(run, FASHION_PART)
    elif task in ("early", "late"):
        index = settings["indices"][task]
        u, st = np.asarray(basis[index], dtype=np.float64), seeds.streams(run, index)
        v = torch.from_numpy(np.asarray(basis[index], dtype=np.float32)).reshape(1, 32, 32)
        data = tuple(directional_dataset(v, settings["n_train"], settings["sigma"], settings["eps"], seed=s)
                     for s in (st.train, st.test))
    else:
        raise InputError(f"task must be one of early, late, fashion; got {task!r}")
    torch.manual_seed(st.init)
    net = models.build(arch, in_channels=1, num_classes=2, pooling=pooling)
    return trajectory(net, data, u / np.linalg.norm(u), basis[:max(settings["ks"])], recipe,
                      settings["checkpoints"], settings["ks"], settings["grad_samples"], st.shuffle)


def sweep_settings(settings: Mapping[str, Any], seed: int, bases: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The settings each stored cell is keyed by: the preset's (`presets.Training`), the run's `seed`, the
    fingerprint of each network's NAD basis and the `versions` stamp (the CPU computes them)."""
    return versions.stamp({**settings, "seed": int(seed), "device": "cpu",
                           "nads": {n: store.fingerprint(np.asarray(bases[n], dtype=np.float32))
                                    for n in settings["networks"]}}, "training_cell")


def cells(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sweep's cells, replicate by replicate (a stopped run has every network and task of the first ones)."""
    return [{"network": n, "task": t, "replicate": r} for r in range(settings["replicates"])
            for n in settings["networks"] for t in settings["tasks"]]


def training_sweep(settings: Mapping[str, Any], seed: int, bases: Mapping[str, np.ndarray],
                   results_dir: str | Path, fashion: Callable[[], Any] | None = None, progress: bool = True,
                   only_stored: bool = False) -> dict[tuple[str, str, int], dict[str, np.ndarray]]:
    """Every `cell` of the preset `settings` (`presets.Training`), stored one by one under `results_dir`
    (`nadcore.sweeps`, resumable), on the CPU with one thread per network as the bundle's; `bases[network]`
    holds that network's NADs (rows). Returns `{(network, task, replicate): arrays}` (with `only_stored`,
    the stored cells only, computing nothing)."""
    shared, todo = sweep_settings(settings, seed, bases), cells(settings)
    if only_stored:
        found = sweeps.stored("training", todo, shared, results_dir)
        return {tuple(todo[i].values()): dict(r.arrays) for i, r in found.items()}

    def compute(group):
        return [cell(c["network"], c["task"], c["replicate"], shared, bases[c["network"]], fashion) for c in group]

    out = sweeps.sweep("training", todo, compute, shared, results_dir, progress=progress)
    return {tuple(c.values()): dict(r.arrays) for c, r in zip(todo, out)}
