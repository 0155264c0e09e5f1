"""Chapter 8: how a network's NADs move while it trains, the kernel's NADs, the linearised network, the conventions.

`trajectory` trains one network on one task and measures, before training and after each checkpoint
step t, its gradient covariance over the inputs,

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
  the gradients only rescaled). `g0_pred` and `g0_data`, the cosines of G_0 with G_0 S G_0 and with S, let a
  reader take the rescaling out (`partial_cosine`).

Tasks: D(u_i) (the NAD paper's Fig. 6 data, u_i the network's own i-th NAD, an early and a late index)
and a two-class split of Fashion-MNIST (`FASHION_SPLIT`: labels 0-4 against 5-9, standardised by the
training set's mean and deviation), whose direction u is the difference of the class means.

The chapter's other questions read results the bundle computes elsewhere: the kernel's NADs (`nads.estimate` with
`method="hessian"`, Eq. 5) and Fig. 6 along them, the linearised LeNet (`models.Linearised`) against the full one
(`linearised_gaps`, `linearised_verdict`), and the two conventions of "the" NADs, centred covariance and uncentred
second moment, on the same networks' gradients (`convention_moments`, `conventions`). The verdicts' thresholds are
the constants below `EARLY` (`thresholds` writes them out).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from torch import nn

from nadcore import checks, cifar, findings, models, nads, presets, prose, seeds, store, sweeps, train, versions
from nadcore.checks import InputError
from nadcore.data import directional_dataset
from nadcore.experiments import ch3_nads, ch6_antialias
from nadcore.nads import NADResult, eig_decreasing, subspace_overlaps

FASHION_SPLIT = 5      # Fashion-MNIST as two classes: labels below 5 (tops, trousers, dresses, coats) vs the rest
FASHION_PART = 10**6   # the seeds' part of the Fashion-MNIST task (a D(u_i) task's part is i, as in Fig. 6)
MEASURE_S = 0.7       # rough CPU seconds a checkpoint costs (gradients, one eigendecomposition of D = 1,024; the
                      # bundle's training records, one thread)
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
    if a.ndim != 2 or not len(a):
        raise InputError(f"a must be rows of vectors (M, D), at least one; got shape {a.shape}")
    return a.T @ a / len(a)


def _energy(g, u):
    """D u^T G u / tr G: G's share along u against an isotropic G's (NaN for a zero G)."""
    trace = float(np.trace(g))
    return len(u) * float(u @ g @ u) / trace if trace > 0 else float("nan")


def frobenius_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """<A, B>_F / (|A|_F |B|_F); NaN when either is zero."""
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(np.sum(a * b) / (na * nb)) if na > 0 and nb > 0 else float("nan")


def partial_cosine(c_ab: np.ndarray | float, c_ac: np.ndarray | float, c_bc: np.ndarray | float) -> np.ndarray:
    """The cosine of A and B once both lose their component along C, from the three cosines (the partial
    correlation's formula): how much of G_t - G_0 the prediction explains beyond a rescaling of G_0."""
    c_ab, c_ac, c_bc = (np.asarray(c, dtype=np.float64) for c in (c_ab, c_ac, c_bc))
    rest = (1 - c_ac ** 2) * (1 - c_bc ** 2)   # 0 where A or B is C itself: nothing is left beyond it (NaN)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rest > 0, (c_ab - c_ac * c_bc) / np.sqrt(np.where(rest > 0, rest, 1.0)), np.nan)


def eig_of(grads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (decreasing) and eigenvectors (rows) of G = E[a a^T] over the rows of `grads` (M, D):
    `nads.eig_decreasing` on one thread, the estimator's own (bitwise the same in every process)."""
    return eig_decreasing(second_moment(grads), threads=1)


def closest(vectors: np.ndarray, u: np.ndarray) -> tuple[int, float]:
    """The index of the row of `vectors` (unit eigenvectors, leading first) closest to the unit vector `u`,
    and its |cosine| with u."""
    if not np.linalg.norm(u) > 0:
        raise InputError("u must be a non-zero direction (finite)")
    cos = np.abs(vectors @ u)
    j = int(np.argmax(cos))
    return j, float(cos[j])


def measures(g0: np.ndarray, g: np.ndarray, s: np.ndarray, u: np.ndarray, basis: np.ndarray,
             ks: Sequence[int], eig0: tuple[np.ndarray, np.ndarray] | None = None,
             eig: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    """The module's measures of one checkpoint's G (`g`) against G_0 (`g0`), the inputs' second moment `s`, the
    task's unit direction `u` and the architecture's NADs `basis` (rows); `eig0`, `eig`: G_0's and G's eigenvalues
    and eigenvectors (`eig_decreasing`) if known."""
    eig0 = eig_decreasing(g0, threads=1) if eig0 is None else eig0
    w, v = eig0 if g is g0 else eig_decreasing(g, threads=1) if eig is None else eig
    v0 = eig0[1]
    dg = g - g0
    rank, cos = closest(v, u)
    return {"self_overlap": subspace_overlaps(v, v0, ks), "nad_overlap": subspace_overlaps(v, basis, ks),
            "u_rank": rank, "u_cos": cos, "u_energy": _energy(g, u),
            "cos_pred": frobenius_cosine(dg, g0 @ s @ g0), "cos_data": frobenius_cosine(dg, s),
            "cos_scale": frobenius_cosine(dg, g0), "eigenvalues": w[:max(ks)], "leading": v[0]}


def half_overlap(grads: np.ndarray, ks: Sequence[int]) -> np.ndarray:
    """The overlaps of the leading k-subspaces of G from the first and the second half of the rows of
    `grads`: the ceiling that sampling the inputs leaves to `self_overlap`."""
    half = len(grads) // 2
    return subspace_overlaps(eig_of(grads[:half])[1], eig_of(grads[half:])[1], ks)


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
    accuracy `acc` (percent) at each and `half_overlap`. The eigen steps run on one BLAS thread (the same
    numbers on any machine of one CPU model; two threads beside a busy core run them 25 times slower)."""
    recipe = train.as_recipe(recipe)
    if recipe.normalize:
        raise InputError("recipe.normalize must be False: the measures read G at the inputs the network sees "
                         "(standardise the data first, as fashion_task does)")
    if not isinstance(net, nn.Module):
        raise InputError(f"net must be an nn.Module with two logits; got {type(net).__name__}")
    if not (isinstance(checkpoints, (list, tuple)) and all(checks.is_integer(c) for c in checkpoints)):
        raise InputError(f"checkpoints must be a list of SGD steps (integers); got {checkpoints!r}")
    dim = int(np.prod(data[0][0].shape[1:]))
    u = np.asarray(u, dtype=np.float64).reshape(-1)
    if u.shape != (dim,) or not np.isfinite(u).all() or abs(np.linalg.norm(u) - 1) > 1e-3:
        raise InputError(f"u must be a unit vector of the inputs' {dim} entries (the task's direction); got shape "
                         f"{u.shape} and norm {np.linalg.norm(u):.3g}")
    with threadpool_limits(1, user_api="blas"):
        return _trajectory(net, data, u, basis, recipe, checkpoints, ks, grad_samples, seed)


def _trajectory(net, data, u, basis, recipe, checkpoints, ks, grad_samples, seed):
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
    eig0 = eig_of(grads0)
    rows: list[dict[str, Any]] = []

    def checkpoint(step: int) -> None:
        if step in checkpoints:
            grads = grads0 if step == 0 else margin_gradients(net, xg)
            g = g0 if step == 0 else second_moment(grads)
            rows.append({**measures(g0, g, s, u, basis, ks, eig0, eig_of(grads) if step else eig0),
                         "acc": train.accuracy(net, x_test, y_test)})

    checkpoint(0)
    train.fit(net, data, recipe, seed=seed, device="cpu", on_step=checkpoint)
    out = {k: np.stack([np.asarray(r[k], dtype=np.float64) for r in rows]) for k in rows[0]}
    out["leading"] = out["leading"].astype(np.float16)
    out["half_overlap"] = half_overlap(grads0, ks)
    out["g0_pred"] = np.asarray(frobenius_cosine(g0, g0 @ s @ g0), dtype=np.float64)   # 0-d: one per cell
    out["g0_data"] = np.asarray(frobenius_cosine(g0, s), dtype=np.float64)
    return out


def class_direction(x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """The unit difference of the two classes' mean inputs (class 1 minus class 0)."""
    if not (bool((y == 0).any()) and bool((y == 1).any())):
        raise InputError("y must hold both classes, 0 and 1 (their means' difference is the direction)")
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


def fashion_data(data_root: str | Path, n_train: int) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]:
    """`fashion_task` of Fashion-MNIST read from `data_root` (`cifar.load`, Debian's package copied there)."""
    return fashion_task(lambda train: cifar.load("fashion", data_root, train=train), n_train)


def cell(network: str, task: str, replicate: int, settings: presets.Training, seed: int, basis: np.ndarray,
         fashion: Callable[[], Any] | None = None) -> dict[str, np.ndarray]:
    """One stored cell: `network` (`NETWORKS`) trained on `task` ("early", "late": D(u_i) at the settings'
    `indices`, u_i the rows of `basis`, the network's NADs; "fashion": `fashion()`, see `fashion_task`),
    replicate `replicate` of the run `seed`, measured by `trajectory`."""
    arch, pooling = check_network(network)
    need = max(settings.indices.get(task, 0) + 1, max(settings.ks))
    if len(basis) < need:
        raise InputError(f"basis must hold the network's first {need} NADs (the task's index, the largest k); got "
                         f"{len(basis)} rows")
    run = seeds.replicate(seed, replicate)
    recipe = train.Recipe(settings.epochs, settings.max_lr)
    if task == "fashion":
        if fashion is None:
            raise InputError("fashion must give the Fashion-MNIST task (`fashion_task`) for task 'fashion'")
        data = fashion()
        u, st = class_direction(*data[0]), seeds.streams(run, FASHION_PART)
    elif task in ("early", "late"):
        index = settings.indices[task]
        u, st = np.asarray(basis[index], dtype=np.float64), seeds.streams(run, index)
        v = torch.from_numpy(np.asarray(basis[index], dtype=np.float32)).reshape(1, 32, 32)
        data = tuple(directional_dataset(v, settings.n_train, settings.sigma, settings.eps, seed=s)
                     for s in (st.train, st.test))
    else:
        raise InputError(f"task must be one of early, late, fashion; got {task!r}")
    torch.manual_seed(st.init)
    net = models.build(arch, in_channels=1, num_classes=2, pooling=pooling)
    return trajectory(net, data, u / np.linalg.norm(u), basis[:max(settings.ks)], recipe,
                      settings.checkpoints, settings.ks, settings.grad_samples, st.shuffle)


def sweep_settings(settings: presets.Training, seed: int, bases: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The settings each stored cell is keyed by: the preset's (`presets.Training`), the run's `seed`, the
    fingerprint of each network's NAD basis and the `versions` stamp (the CPU computes them)."""
    return versions.stamp({**presets.as_dict(settings), "seed": int(seed), "device": "cpu",
                           "nads": {n: store.fingerprint(np.asarray(bases[n], dtype=np.float32))
                                    for n in settings.networks}}, "training_cell")


def cells(settings: presets.Training) -> list[dict[str, Any]]:
    """The sweep's cells, replicate by replicate (a stopped run has every network and task of the first ones)."""
    return [{"network": n, "task": t, "replicate": r} for r in range(settings.replicates)
            for n in settings.networks for t in settings.tasks]


def training_sweep(settings: presets.Training, seed: int, bases: Mapping[str, np.ndarray],
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
        return [cell(c["network"], c["task"], c["replicate"], settings, seed, bases[c["network"]], fashion)
                for c in group]

    out = sweeps.sweep("training", todo, compute, shared, results_dir, progress=progress)
    return {tuple(c.values()): dict(r.arrays) for c, r in zip(todo, out)}


def nad_bases(networks: Sequence[str], scale: str, seed: int, results_dir: str | Path, device: str = "cpu",
              compute: bool = True, progress: bool = False) -> dict[str, np.ndarray] | None:
    """The NADs (rows) of each of `networks` at `scale`, as Chapters 3 and 6 store them in `results_dir`
    (LeNet and the MLP: Chapter 3's estimate; LeNet with average pooling: Chapter 6's), estimated and stored
    when missing if `compute`, else None while one is missing."""
    out = {}
    for name in networks:
        arch, pooling = check_network(name)
        if pooling is True:
            found = ch3_nads.find_stored(arch, ch3_nads.resolve_request(arch, scale, seed=seed), results_dir)
            res = NADResult.load(found) if found is not None else None
            if res is None and compute:
                res = ch3_nads.load_nads(arch, results_dir, scale, seed=seed, device=device, progress=progress)
        else:
            res = ch6_antialias.nad_estimate(str(pooling), presets.preset("antialias", scale).nads, seed,
                                             results_dir, device, compute=compute, progress=progress)
        if res is None:
            return None
        out[name] = res.nads
    return out


class ChapterRun(NamedTuple):
    """Chapter 8 at one scale: its `settings` (the preset), the training `cells` (`training_sweep`) and the
    networks' NADs `bases` (None while one is missing)."""
    settings: presets.Training
    cells: dict[Any, Any]
    bases: Any


def chapter_results(scale: str, seed: int, results_dir: str | Path, device: str = "cpu", progress: bool = False,
                    data_root: str | Path = "../data", compute: bool = True) -> ChapterRun:
    """Chapter 8 at `scale`: `settings` (the preset), `cells` (`training_sweep`, stored in `results_dir/nads`)
    and the networks' NADs `bases`; on the CPU (the sweep's device), `device` estimating the NADs only. With
    `compute=False`, what is stored (no cells while a basis is missing)."""
    settings = presets.preset("training", scale)
    device = checks.one_of("device", device, ("auto", "cpu", "cuda"), accepted="auto, cpu or cuda (the NADs')")
    bases = nad_bases(settings.networks, scale, seed, results_dir, device, compute, progress)
    if bases is None:
        return ChapterRun(settings, {}, None)

    def fashion():
        return fashion_data(data_root, settings.n_train)

    cells_ = training_sweep(settings, seed, bases, Path(results_dir) / "nads", fashion, progress, not compute)
    return ChapterRun(settings, cells_, bases)


# ----------------------------------------------------------------------------- readings and verdicts

EARLY = 16        # SGD steps: the G0 S G0 prediction is judged at the checkpoints from step 1 to this one
STAY = 0.5        # G_t keeps G_0's leading subspace when their overlap is at least this fraction of the ceiling
STAY_K = 16       # ... the leading subspace judged (`ks`)
Z = 2.0           # standard errors: the prediction beats a baseline when its cosine exceeds it by this many
LEADS = 0.5       # u leads G when G's leading eigenvector is the closest to u and holds this share of it (cos^2)
CHANCE, CHANCE_MARGIN = 50.0, 2.0   # %: two balanced classes; within the margin of it is chance
LEARNED = 90.0    # %: a network that reaches this test accuracy has learnt its task (as the results page)
ESTIMATES = {"secant": "secant NADs", "autograd": "exact-gradient NADs"}   # what the kernel's are compared with
TASKS = ("early", "late", "fashion")
NETWORK_WORDS = {"lenet": "LeNet", "lenet_avg": "LeNet with average pooling", "mlp": "MLP"}


def replicate_arrays(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], network: str, task: str,
                     key: str) -> np.ndarray:
    """`key` of every stored replicate of `network` on `task`, stacked (replicates first; empty if none)."""
    rows = [np.asarray(c[key], dtype=np.float64) for (n, t, _), c in sorted(cells.items()) if (n, t) == (network, task)]
    return np.stack(rows) if rows else np.empty((0,))


def led(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], network: str, task: str) -> np.ndarray:
    """Per replicate, whether the task's direction leads G at the end of training (`LEADS`)."""
    rank, cos = (replicate_arrays(cells, network, task, k)[:, -1] for k in ("u_rank", "u_cos"))
    return (rank == 0) & (cos ** 2 >= LEADS)


def mean_se(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the first axis and its standard error (0 for a single replicate)."""
    n = len(x)
    if not n:
        raise InputError("x must hold at least one replicate")
    return x.mean(0), (x.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(x[0]))


def nad_name(i: int) -> str:
    """The i-th NAD as the paper writes it: u₀, u₁₂₈."""
    checks.integer("i", i, 0, accepted="a NAD index >= 0")
    return "u" + str(int(i)).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def task_names(settings: presets.Training) -> dict[str, str]:
    """The tasks as a reader of the paper writes them: D(u₀), D(u₁₂₈) at the preset's indices, Fashion-MNIST."""
    return {t: f"D({nad_name(settings.indices[t])})" if t in settings.indices else "Fashion-MNIST"
            for t in settings.tasks}


def pairs(cells: Mapping[tuple[str, str, int], Any]) -> list[tuple[str, str]]:
    """The (network, task) pairs with a stored replicate, in `NETWORKS` then task order."""
    have = {(n, t) for n, t, _ in cells}
    return [(n, t) for n in NETWORKS for t in TASKS if (n, t) in have]


def stays(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], settings: presets.Training) \
        -> dict[tuple[str, str], tuple[float, float]]:
    """`{(network, task): (overlap, ceiling)}` at the end of training: the mean overlap of G's leading `STAY_K`
    subspace with G_0's, and the mean sampling ceiling (`half_overlap`)."""
    k = list(settings.ks).index(STAY_K)
    return {(n, t): (float(replicate_arrays(cells, n, t, "self_overlap")[:, -1, k].mean()),
                     float(replicate_arrays(cells, n, t, "half_overlap")[:, k].mean())) for n, t in pairs(cells)}


def beyond_rescaling(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]], network: str, task: str) \
        -> dict[str, np.ndarray]:
    """Per replicate and checkpoint (step 0 excluded), the cosines of G_t - G_0 with G_0 S G_0 (`pred`) and with
    S (`data`) once G_0's direction is taken out of both (`partial_cosine`), and with G_0 itself (`scale`)."""
    get = lambda k: replicate_arrays(cells, network, task, k)   # noqa: E731
    scale = get("cos_scale")[:, 1:]
    return {"pred": partial_cosine(get("cos_pred")[:, 1:], scale, get("g0_pred")[:, None]),
            "data": partial_cosine(get("cos_data")[:, 1:], scale, get("g0_data")[:, None]), "scale": scale}


def prediction_margins(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]],
                       settings: presets.Training) -> dict[tuple[str, str], tuple[float, float, float, float]]:
    """`{(network, task): (pred, data, scale, z)}` over the checkpoints from step 1 to `EARLY` (`beyond_rescaling`):
    the mean cosines beyond the rescaling with G_0 S G_0 and with S, the mean cosine with G_0, and the smallest
    z-score (over those checkpoints) of the prediction's lead on S, replicate by replicate."""
    at = [i - 1 for i, s in enumerate(settings.checkpoints) if 0 < s <= EARLY]
    out = {}
    for n, t in pairs(cells):
        b = {k: v[:, at] for k, v in beyond_rescaling(cells, n, t).items()}
        m, se = mean_se(b["pred"] - b["data"])
        with np.errstate(divide="ignore", invalid="ignore"):   # no spread: the lead's sign decides
            z = np.where(se > 0, m / se, np.where(m > 0, np.inf, np.where(m < 0, -np.inf, 0.0)))
        out[(n, t)] = (float(b["pred"].mean()), float(b["data"].mean()), float(b["scale"].mean()), float(z.min()))
    return out


def _span(values):
    v = list(values)
    return f"{min(v):.2f} to {max(v):.2f}" if v else "none"


def training_verdicts(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]],
                      settings: presets.Training) -> list[findings.Verdict]:
    """The chapter's two questions on training, from the stored `cells` (none before one is stored)."""
    if not cells:
        return []
    st, pm = stays(cells, settings), prediction_margins(cells, settings)
    kept = {p: o >= STAY * c for p, (o, c) in st.items()}
    learnt = [p for p in st if replicate_arrays(cells, *p, "acc")[:, -1].mean() >= LEARNED]
    leads = sum(int(np.all(led(cells, *p))) for p in learnt)
    beats = {p: z >= Z and pred > 0 for p, (pred, _, _, z) in pm.items()}
    best = max(pm, key=lambda p: pm[p][0])
    name = lambda p: f"{NETWORK_WORDS[p[0]]} on {task_names(settings)[p[1]]}"   # noqa: E731
    return [
        findings.Verdict(
            "Do a network's leading gradient directions at initialisation survive its training?",
            "yes: the paper reads what a trained network learns off its NADs at initialisation",
            f"at the end, Gₜ's leading {STAY_K} keep {_span(o for o, _ in st.values())} of G₀'s (sampling "
            f"ceilings {_span(c for _, c in st.values())}); the task's direction leads Gₜ in every replicate in "
            f"{leads} of the {len(learnt)} cases where the network learns its task",
            findings.outcome(list(kept.values())),
            "" if all(kept.values()) else f"kept in {sum(kept.values())} of {len(kept)} networks and tasks"),
        findings.Verdict(
            "Early in training, does Gₜ − G₀ follow G₀ S G₀ (Movahedi et al., 2025)?",
            "yes: beyond a rescaling of G₀, closer to G₀ S G₀ than to the data's S",
            f"over steps 1 to {EARLY}, the change on D(uᵢ) is first a rescaling of G₀ (mean cosine "
            f"{_span(pm[p][2] for p in pm if p[1] != 'fashion')}); beyond "
            f"it, cosine with G₀ S G₀ {_span(p for p, *_ in pm.values())}, with S "
            f"{_span(d for _, d, *_ in pm.values())} (best: "
            f"{name(best)}, {pm[best][0]:.2f} against {pm[best][1]:.2f})", findings.outcome(list(beats.values())),
            "" if all(beats.values()) else f"ahead of S in {sum(beats.values())} of {len(beats)}"),
    ]


def kernel_verdict(overlaps: Mapping[str, np.ndarray], ks: Sequence[int], kernel: Sequence[Mapping[int, float]],
                   secant: Sequence[Mapping[int, float]]) -> findings.Verdict | None:
    """The kernel's NADs (the mixed derivative's, `method="hessian"`) against what LeNet learns: `overlaps`
    `{"secant": ..., "exact gradient": ...}` of the kernel's leading k-subspaces (`ks`) with those NADs',
    `kernel` and `secant` Fig. 6 runs (`{index: accuracy}` a seed). Holds when LeNet learns the kernel's first
    NAD (`LEARNED`) as it learns the secant's. None before both are stored."""
    if not kernel or not secant:
        return None
    first = min(kernel[0])
    k_acc, s_acc = (mean_se(np.array([r[first] for r in runs]))[0] for runs in (kernel, secant))
    at16 = list(ks).index(STAY_K)
    return findings.Verdict(
        "Do the kernel's NADs (the follow-up of 2021: the mixed derivative ∂_θ∇ₓf) tell what LeNet learns?",
        "yes, like the secant's: LeNet learns along its first NADs",
        f"along the kernel's first NAD {k_acc:.1f} % (secant's: {s_acc:.1f} %, {len(kernel)} seeds); the kernel's "
        f"leading {STAY_K} share {', '.join(f'{v[at16]:.2f} with the {k}' for k, v in overlaps.items())}",
        findings.HOLDS if k_acc >= LEARNED else findings.FAILS,
        "" if k_acc >= LEARNED else "LeNet stays near chance along them")


def thresholds() -> str:
    """The thresholds of the chapter's verdicts in words."""
    return (f"A network keeps its initial gradient directions when G's leading {STAY_K}-subspace at the end of "
            f"training shares at least {STAY:g} × the sampling ceiling (two halves of the inputs at initialisation) "
            f"of G₀'s, mean over replicates. G₀ S G₀ predicts the change when, at every checkpoint from step 1 to "
            f"{EARLY}, its Frobenius cosine with Gₜ − G₀, both without their component along G₀ (a rescaling), is "
            f"positive and exceeds that of the data's S by at least {Z:g} standard errors over replicates. The "
            f"kernel's NADs tell what LeNet learns when it reaches {LEARNED:g} % along the first. The task's "
            f"direction u leads G when G's leading eigenvector is the closest to u, with a squared cosine of at least "
            f"{LEADS:g}. The linearised network learns what LeNet learns when their seeds' mean accuracies differ "
            f"by at most {GAP:g} points at each index where either is above chance by more than {CHANCE_MARGIN:g} "
            "points. Each verdict: holds for every network and task (or index), in "
            "part for some, not for none.")


def key_numbers(cells: Mapping[tuple[str, str, int], Mapping[str, np.ndarray]],
                settings: presets.Training) -> dict[str, float]:
    """The numbers Chapter 8's text quotes, from the stored `cells` (means over replicates; `_lo`/`_hi`: the
    range over networks and tasks, to two decimals; `rescale_*` over the D(u_i) tasks); empty before a cell is
    stored."""
    if not cells:
        return {}
    st, pm = stays(cells, settings), prediction_margins(cells, settings)
    end = lambda n, t, k: float(replicate_arrays(cells, n, t, k)[:, -1].mean())   # noqa: E731
    out: dict[str, float] = {"replicates": min(sum(k[:2] == p for k in cells) for p in pairs(cells))}
    synthetic = [p for p in pm if p[1] != "fashion"]
    for name, values in (("stay", [o for o, _ in st.values()]), ("ceiling", [c for _, c in st.values()]),
                         ("rescale", [pm[p][2] for p in synthetic]), ("pred", [p for p, *_ in pm.values()]),
                         ("data", [d for _, d, *_ in pm.values()])):
        if values:   # rounded as the text prints them (no -0.00)
            out[f"{name}_lo"], out[f"{name}_hi"] = round(min(values), 2) + 0.0, round(max(values), 2) + 0.0
    for n, t in pairs(cells):
        out[f"{n}_{t}_acc"], out[f"{n}_{t}_share"] = end(n, t, "acc"), end(n, t, "u_energy")
        out[f"{n}_{t}_stay"] = st[(n, t)][0]
        out[f"{n}_{t}_led"] = float(np.mean(led(cells, n, t)))
    return out


def kernel_numbers(overlaps: Mapping[str, np.ndarray], ks: Sequence[int],
                   runs: Mapping[str, Sequence[Mapping[int, float]]]) -> dict[str, float]:
    """The kernel section's numbers: the overlaps (`{"secant NADs": ..., ...}` at `ks`) at k = 1 and 16, and the
    seeds' mean Fig. 6 accuracy at the first NAD along each estimate of `runs` (`{method: runs}`)."""
    out = {}
    for name, values in overlaps.items():
        key = "secant" if name.startswith("secant") else "exact"
        for k in (1, STAY_K):
            out[f"kernel_{key}_{k}"] = float(values[list(ks).index(k)])
    for method, r in runs.items():
        if r:
            out[f"fig6_{method}_0"] = float(np.mean([x[min(x)] for x in r]))
    return out


GAP = 5.0   # points: the linearised network predicts the full one at an index when their seeds' means differ by at most


ESTIMATE_WORDS = {"hessian": "the kernel's", "secant": "the secant's"}


def along(key: str | tuple[str, float]) -> str:
    """How the page names a comparison of `linearised_gaps`: its NAD method, or (method, sigma)."""
    method, sigma = key if isinstance(key, tuple) else (key, None)
    return f"along {ESTIMATE_WORDS.get(method, method)} NADs" + ("" if sigma is None else f" at σ = {sigma:g}")


def linearised_gaps(full: Mapping[Any, Sequence[Mapping[int, float]]],
                    linearised: Mapping[Any, Sequence[Mapping[int, float]]]) -> dict[Any, dict[int, tuple]]:
    """`{key: {index: (full mean, linearised mean, gap, full std, linearised std)}}` over the seeds, at the
    indices where both have every seed stored: `full` and `linearised` hold Fig. 6 runs (`{index: accuracy}` a
    seed) by NAD method (or `(method, sigma)`, `along`), seed by seed (the gap is the mean of the paired
    differences; means and deviations are `ch3_nads.seed_spread`'s, as every Fig. 6 of the book)."""
    out = {}
    for method, lin_runs in linearised.items():
        runs = [(f, g) for f, g in zip(full.get(method, []), lin_runs) if f and g]
        if not runs:
            continue
        shared = sorted(set.intersection(*(set(f) & set(g) for f, g in runs)))
        f_spread, g_spread = (ch3_nads.seed_spread([{i: r[i] for i in shared} for r in side]) for side in zip(*runs))
        out[method] = {i: (*[float(x) for x in (f_spread[i][0], g_spread[i][0])],
                           float(np.mean([g[i] - f[i] for f, g in runs])),
                           *[float(x) for x in (f_spread[i][1], g_spread[i][1])]) for i in shared}
    return out


def linearised_verdict(gaps: Mapping[Any, Mapping[int, tuple]], seeds: int) -> findings.Verdict | None:
    """Whether the linearised LeNet learns what the full one does along the same NADs (`linearised_gaps`), judged where
    either learns (a seeds' mean above chance by more than `CHANCE_MARGIN`; where both are at chance they agree
    trivially): holds when the means differ by at most `GAP` points at every such index, in part at some, not at
    none; not resolved when neither learns anywhere. None before anything is stored."""
    if not gaps:
        return None
    judged = [(m, i) for m, by in gaps.items() for i, (f, g, *_) in by.items() if max(f, g) > CHANCE + CHANCE_MARGIN]
    held = [p for p in judged if abs(gaps[p[0]][p[1]][2]) <= GAP]
    each = lambda by: ", ".join(f"{nad_name(i)}: {f:.1f} / {g:.1f} %" for i, (f, g, *_) in by.items())  # noqa: E731
    text = "; ".join(f"{along(m)}, {each(by)}" for m, by in gaps.items())
    outcome = findings.UNRESOLVED if not judged else findings.outcome([p in held for p in judged])
    reason = ("neither learns at any index" if not judged else "" if len(held) == len(judged)
              else f"within {GAP:g} points at {len(held)} of the {len(judged)} indices where either learns")
    return findings.Verdict(
        "Does the linearised network (the kernel's model) learn what LeNet learns along the same NADs?",
        "yes: the follow-up of 2021 reads the network's learning off its linearisation",
        f"full / linearised, {seeds} seeds: {text}", outcome, reason)


def linearised_reading(gaps: Mapping[Any, Mapping[int, tuple]]) -> str:
    """Chapter 8's sentence on the linearised LeNet (`linearised_gaps`): its accuracy at the first stored index of
    each estimate beside the network's, and where the two differ most."""
    if not gaps:
        return "Not stored yet."
    first = prose.and_list([f"{by[min(by)][1]:.1f} % {_at(m, min(by))} (LeNet: {by[min(by)][0]:.1f} %)"
                            for m, by in gaps.items()])
    m, i = max(((m, i) for m, by in gaps.items() for i in by), key=lambda p: abs(gaps[p[0]][p[1]][2]))
    return f"The linearised LeNet reaches {first}. The two differ most {_at(m, i)}, by {gaps[m][i][2]:+.1f} points."


def _at(key, index):
    """`along(key)` with the NAD's name in place of "NADs": "along the secant's u₀ at σ = 1.5"."""
    return along(key).replace("NADs", nad_name(index))


# ----------------------------------------------------------------------------- which convention

CONVENTION_KS = (1, 4, 16, 64)


def convention_moments(arch: str, num_networks: int, seed: int, scratch: str | Path,
                       progress: bool = False) -> dict[str, Any]:
    """`count`, `mean` and centred `m2` (float64) of the secant gradients (h = 100) of `arch`'s networks 0 .. N - 1 at
    the shared x0, exactly as `nads.estimate` computes them (its chunks; stored in `scratch` as a sweep, resumable)."""
    s = nads.EstimateSettings("secant", 100.0, seed, (1, 32, 32), True, "float32", False, None, None)
    x0 = nads.eval_point_for(seed, s.input_shape)
    factory, _ = nads.one_output_factory(arch, s.input_shape, s.pooling, x0=x0)
    cells = [{"start": a, "stop": b} for a, b in nads.chunk_ranges(0, num_networks)]
    settings = {"arch": arch, "method": "secant", "step": 100.0, "seed": int(seed), "device": "cpu"}

    def compute(group):
        return [nads.chunk_arrays(factory, s, x0, c["start"], c["stop"]) for c in group]

    paths = sweeps.sweep("convention_chunks", cells, compute, settings, Path(scratch), load=False, progress=progress)
    return nads.merged_moments((nads.moments(store.load(p).arrays) for p in paths), "secant")


def conventions(moments: Mapping[str, Any], stored: np.ndarray, ks: Sequence[int] = CONVENTION_KS,
                rows: int = 64) -> dict[str, np.ndarray]:
    """The NADs in the two conventions from the gradients' `moments` (`convention_moments`): the centred covariance
    m2 / (n - 1) (the authors' code's PCA, and this book's estimates) and the uncentred second moment
    E[g g^T] = m2 / n + mu mu^T (the paper's Sec. 3; the right singular vectors of the gradient matrix, the `nads`
    package's, are its eigenvectors). Returns their overlaps at `ks`, the centred basis's with the `stored`
    estimate's (the same networks: 1 up to the eigen steps' rounding), the mean gradient's share of E[g g^T]'s
    trace, its |cosine| with the leading uncentred NAD, and the first `rows` uncentred NADs (float16)."""
    n, mean, m2 = int(moments["count"]), np.asarray(moments["mean"]), np.asarray(moments["m2"])
    _, centred = eig_decreasing(m2 / (n - 1), threads=1)
    _, uncentred = eig_decreasing(m2 / n + np.outer(mean, mean), threads=1)
    second = float(np.trace(m2) / n + mean @ mean)
    return {"overlap": subspace_overlaps(uncentred, centred, ks),
            "stored_overlap": subspace_overlaps(centred, np.asarray(stored, dtype=np.float64), ks),
            "mean_share": np.asarray(float(mean @ mean) / second),
            "mean_cos": np.asarray(abs(float(uncentred[0] @ mean)) / max(float(np.linalg.norm(mean)), 1e-300)),
            "uncentred": uncentred[:rows].astype(np.float16), "ks": np.asarray(ks)}


SAME_BASIS = 0.99   # two conventions give the same NADs when their leading subspaces overlap at least this much


def conventions_reading(conv: Mapping[str, np.ndarray] | None, networks: int) -> str:
    """Chapter 8's sentence on the conventions (`conventions`, stored for `networks` networks)."""
    if conv is None:
        return "Not stored yet."
    ks, ov = [int(k) for k in conv["ks"]], np.asarray(conv["overlap"])
    shares = ", ".join(f"1 − {prose.number(1 - o)} at k = {k}" if o > 0.99 else f"{o:.3f} at k = {k}"
                       for k, o in zip(ks, ov))
    verdict = ("The convention does not change the NADs: no Fig. 6 panel would differ." if ov.min() >= SAME_BASIS
               else "The conventions differ: Fig. 6 along each is needed.")
    return (f"On the {networks:,} networks of Chapter 3's LeNet estimate, the mean gradient holds "
            f"{prose.number(float(conv['mean_share']))} of the second moment's trace (sampling alone leaves about "
            f"1/N = {prose.number(1 / networks)}), and the centred and uncentred NADs share {shares}. {verdict}")
