"""Can a model learn a direction? The NAD paper's Fig. 1 test for any model: fresh networks trained on
D(v) for Fourier directions v (`sweep`), and `recipe_check`, which tells a model that cannot learn a
direction from a recipe that does not train the model at all.

A model is what `nads.estimate` takes (a registry name, "module:callable", "timm:NAME" or a
zero-argument factory), with one output f(x) trained as a two-class classifier with logits (0, f(x))
(the logistic loss), or with two logits. The same factory gives a model's NADs and its Fig. 1.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from nadcore import catalog, checks, data, fourier, nads, prose, seeds, train
from nadcore.checks import InputError
from nadcore.nads.settings import check_input_shape

CHANCE = 50.0            # percent, two balanced classes
EASY_ACCURACY = 90.0     # `recipe_check`: an easy task counts as learned from this test accuracy (percent)
LOSS_FALLS = 0.5 * math.log(2)   # ... and its loss as fallen below half of chance's loss (ln 2) in its last epoch


TwoLogits = train.TwoLogits   # a one-output network as a two-class classifier (kept here for older imports)


def _classifier_factory(model, input_shape):
    """A zero-argument factory of fresh two-logit classifiers for `model` (checked once, here)."""
    factory, _ = nads.one_output_factory(model, input_shape)
    with torch.random.fork_rng(devices=[]):
        out = nads.forward_checked(factory(), torch.zeros(input_shape))
    if out.numel() not in (1, 2):
        raise InputError(f"model must have one output (or two logits); got output shape {tuple(out.shape)}")
    return (lambda: TwoLogits(factory())) if out.numel() == 1 else factory


def _check_shape(input_shape):
    shape = tuple(input_shape) if isinstance(input_shape, (tuple, list)) else None
    if shape is None or len(shape) != 3 or not all(isinstance(s, int) and s > 0 for s in shape) \
            or shape[1] != shape[2]:
        raise InputError(f"input_shape must be (C, H, W) with H == W (Fourier directions are square); "
                         f"got {input_shape!r}")
    return shape


def _direction(kx, ky, shape, kind):
    """The unit Fourier direction (kx, ky) for inputs of `shape` (C, H, W): the same image on each channel."""
    v = fourier.fourier_direction(kx, ky, shape[1], kind)
    return v.expand(shape[0], -1, -1) / math.sqrt(shape[0])


def cost_line(factory: Callable[[], nn.Module], networks: int, n: int, recipe: train.Recipe,
              input_shape: Sequence[int]) -> str:
    """One line: what training `networks` fresh networks on `n` samples for `recipe.epochs` will cost on this
    machine, from one SGD step of one network on a batch of `recipe.batch_size` timed here (a second step: the
    first pays the warm-up), times the steps, a fifth more for evaluation."""
    net = factory()
    opt = torch.optim.SGD(net.parameters(), lr=0.0)
    x = torch.zeros(recipe.batch_size, *input_shape)
    y = torch.zeros(recipe.batch_size, dtype=torch.long)
    each = 0.0
    for _ in range(2):
        start = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        each = time.perf_counter() - start
    steps = networks * recipe.epochs * math.ceil(n / recipe.batch_size)
    return (f"training {networks} network{'s' * (networks > 1)} ({n:,} samples, {recipe.epochs} epochs): "
            f"~{prose.duration(1.2 * each * steps)} on this machine ({each * 1e3:.3g} ms an SGD step, timed here)")


def _train(factory, tasks, recipe, n, sigma, eps, device, progress=False) -> list[train.Fit]:
    """Train a fresh network per task `(v, streams)` on D(v) (`n` train and `n` test samples): `fit` dicts; with
    `progress`, its cost first (`cost_line`)."""
    if progress:
        with torch.random.fork_rng(devices=[]):
            print(cost_line(factory, len(tasks), n, recipe, tuple(tasks[0][0].shape)), file=sys.stderr)
    datasets, nets = [], []
    for v, st in tasks:
        datasets.append(tuple(data.directional_dataset(v, n, sigma, eps, seed=s) for s in (st.train, st.test)))
    for _, st in tasks:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(st.init)
            nets.append(factory())
    # Stacked as they come, unpadded (`fit_many`'s pad=False): a sweep of a few cells trains only its own
    # networks; a call reproduces itself bitwise, and a cell may round apart in a sweep of other cells.
    return train.fit_many(nets, datasets, recipe, device=device, seeds=[st.shuffle for _, st in tasks], pad=False)


@dataclass(frozen=True)
class Sweep:
    """What `sweep` returns: per seed (rows) and cell (columns), the test and train accuracies (percent)
    and the loss of every SGD step."""
    cells: tuple
    test_acc: np.ndarray
    train_acc: np.ndarray
    loss_history: np.ndarray

    def mean(self) -> dict[Any, float]:
        """`{cell: mean test accuracy over seeds}` (a cell: `(kx, ky)` of `sweep`, a NAD index of `fig6`)."""
        return {c: float(a) for c, a in zip(self.cells, self.test_acc.mean(0))}

    def summary(self) -> str:
        """One line per cell: its test accuracy (mean +- standard deviation over seeds; one seed: no spread)."""
        seeds = len(self.test_acc)
        spread = self.test_acc.std(0, ddof=1) if seeds > 1 else np.zeros(len(self.cells))
        name = lambda c: f"NAD {c}" if isinstance(c, int) else f"({c[0]:+d}, {c[1]:+d})"   # noqa: E731
        return "\n".join(f"{name(c)}: {m:5.1f}" + (f" +- {s:.1f}" if seeds > 1 else "") + " % test accuracy"
                         + (f" ({seeds} seeds)" if seeds > 1 else " (1 seed)")
                         for c, m, s in zip(self.cells, self.test_acc.mean(0), spread))


def sweep(model: str | Callable[[], nn.Module], cells: Iterable[Sequence[int]], recipe: train.Recipe | dict[str, Any],
          *, n: int = 10_000, sigma: float = 3.0, eps: float = 1.0, kind: str = "sin", num_seeds: int = 1,
          seed: int = 0, input_shape: Sequence[int] = (1, 32, 32), device: str | torch.device = "auto",
          progress: bool = True) -> Sweep:
    """Fig. 1 for `model`: a fresh network trained with `recipe` (a `train.Recipe` or a dict of its
    fields) on D(v) for the Fourier direction v of each cell `(kx, ky)`, `num_seeds` times (with `progress`, its
    cost on this machine first, `cost_line`).

    The defaults are the paper's (n = 10,000 train and as many test samples, sigma = 3, eps = 1, sine
    directions). Each cell's data, initialisation and shuffling come from `seeds.streams` of the seed
    of its replicate (`seeds.replicate(seed, r)`) and its frequency, as in Chapter 1's sweeps. A
    direction stays at chance (50 %) when the model cannot learn it at this noise, or when the
    recipe does not train the model: `recipe_check` tells the two apart. Returns a `Sweep`.
    """
    shape = _check_shape(input_shape)
    recipe = train.as_recipe(recipe)
    checks.integer("num_seeds", num_seeds, 1, catalog.MAX_SEEDS)
    given = list(cells) if isinstance(cells, Iterable) and not isinstance(cells, (str, bytes)) else []
    if not given or not all(isinstance(c, (tuple, list)) and len(c) == 2 and all(checks.is_integer(k) for k in c)
                            for c in given):
        raise InputError(f"cells must hold frequencies (kx, ky), pairs of integers, at least one; got {cells!r:.80}")
    cells = tuple((int(kx), int(ky)) for kx, ky in given)
    vs = [_direction(kx, ky, shape, kind) for kx, ky in cells]      # checks the frequencies and kind
    factory = _classifier_factory(model, shape)
    tasks = [(v, seeds.streams(seeds.replicate(seed, r), kx % shape[1], ky % shape[1]))
             for r in range(num_seeds) for v, (kx, ky) in zip(vs, cells)]
    out = _train(factory, tasks, recipe, n, sigma, eps, device, progress)
    grid = lambda key: np.array([getattr(r, key) for r in out], dtype=np.float64).reshape(num_seeds, len(cells))
    losses = np.stack([r.loss_history for r in out]).reshape(num_seeds, len(cells), -1)
    return Sweep(cells, grid("test_acc"), grid("train_acc"), losses)


def fig6(model: str | Callable[[], nn.Module], nads: Any, indices: Iterable[int],
         recipe: train.Recipe | dict[str, Any], *, n: int = 10_000, sigma: float = 3.0, eps: float = 1.0,
         num_seeds: int = 1, seed: int = 0, input_shape: Sequence[int] = (1, 32, 32),
         device: str | torch.device = "auto", progress: bool = True) -> Sweep:
    """Fig. 6 for `model` (whatever `nads.estimate` takes, trained as a classifier: one output as two logits,
    `train.TwoLogits`, or two outputs as they are; an index past the estimate's rank is warned of):
    a fresh network trained with `recipe` on D(u_i) for each NAD index i of `indices`, `num_seeds` times; `nads`
    is a `NADResult` (its rows, by decreasing eigenvalue) or an array of NADs as rows. The defaults are the
    paper's (n = 10,000 train and as many test samples, sigma = 3, eps = 1). Each cell's data, initialisation
    and shuffling come from `seeds.streams` of its replicate's seed and its index; with `progress`, its cost on
    this machine first (`cost_line`). Returns a `Sweep`."""
    shape = check_input_shape(input_shape)
    try:
        rows = np.asarray(getattr(nads, "nads", nads), dtype=np.float32)
    except (TypeError, ValueError):
        rows = np.zeros((0, 0), dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] != math.prod(shape):
        raise InputError(f"nads must be a NADResult or NADs as rows of {math.prod(shape)} entries (input_shape "
                         f"{shape}); got shape {rows.shape}")
    recipe = train.as_recipe(recipe)
    checks.integer("num_seeds", num_seeds, 1, catalog.MAX_SEEDS)
    if not isinstance(indices, (list, tuple, range, np.ndarray)):
        raise InputError(f"indices must be a list of NAD indices in [0, {len(rows) - 1}]; got {indices!r}")
    cells = tuple(checks.integer("indices", i, 0, len(rows) - 1, accepted=f"NAD indices in [0, {len(rows) - 1}]")
                  for i in indices)
    if not cells:
        raise InputError("indices must hold at least one NAD index")
    zero = [i for i in cells if not np.isfinite(rows[i]).all() or not np.any(rows[i])]
    if zero:
        raise InputError(f"nads must hold finite, non-zero NADs at the indices trained; row {zero[0]} is "
                         f"{'zero' if np.isfinite(rows[zero[0]]).all() else 'not finite'}")
    settings = getattr(nads, "settings", None)
    networks = settings.get("num_networks") if isinstance(settings, dict) and settings.get("method") != "hessian" \
        else None   # the Hessian's sum of Gram matrices is not mean-centred: its rank may reach D
    past = [i for i in cells if isinstance(networks, int) and i >= networks - 1]
    if past and isinstance(networks, int):   # the mean-centred covariance of N networks has rank N - 1 at most
        warnings.warn(f"NAD indices {', '.join(map(str, past))} are past the estimate's rank ({networks - 1} of "
                      f"{networks} networks): their directions are any within the null space, not NADs",
                      stacklevel=2)
    factory = _classifier_factory(model, shape)
    tasks = [(torch.from_numpy(rows[i] / np.linalg.norm(rows[i])).reshape(shape), seeds.streams(
        seeds.replicate(seed, r), i)) for r in range(num_seeds) for i in cells]
    out = _train(factory, tasks, recipe, n, sigma, eps, device, progress)
    grid = lambda key: np.array([getattr(r, key) for r in out], dtype=np.float64).reshape(num_seeds, len(cells))  # noqa: E731
    losses = np.stack([r.loss_history for r in out]).reshape(num_seeds, len(cells), -1)
    return Sweep(cells, grid("test_acc"), grid("train_acc"), losses)


@dataclass(frozen=True)
class RecipeCheck:
    """What `recipe_check` found on an easy task: the mean training loss of the first and the last
    epoch, the test accuracy (percent), and the verdict in one line (`str(check)`)."""
    loss_first: float
    loss_last: float
    test_acc: float
    trains: bool
    verdict: str

    def __str__(self):
        return self.verdict


def recipe_check(model: str | Callable[[], nn.Module], recipe: train.Recipe | dict[str, Any], *,
                 direction: Sequence[int] = (0, 0), kind: str = "cos", n: int = 2_000, sigma: float = 3.0,
                 eps: float | None = None, seed: int = 0, input_shape: Sequence[int] = (1, 32, 32),
                 device: str | torch.device = "auto", progress: bool = True) -> RecipeCheck:
    """Does `recipe` train `model` at all? One fresh network trained on an easy task: D(v) at the
    sweep's noise `sigma` with the classes as far apart as the noise is large (`eps` = sigma sqrt(D)
    by default, D = C H W), along `direction` (default: the constant image, cos(0, 0), which every
    image model of the book sees; a model blind to it needs another `direction`, a (kx, ky) it sees).

    Says, in `verdict`: the recipe diverges (a loss that is not finite: lower `max_lr`); or the loss
    does not fall (last epoch's mean above `LOSS_FALLS`, half of chance's ln 2: raise `max_lr` or `epochs`);
    or the model fits its training set without learning the task (below `EASY_ACCURACY` %); or the
    recipe trains the model, so that a direction of `sweep` that stays at chance is the model's bias.
    With `progress`, its cost on this machine first (`cost_line`). Returns a `RecipeCheck`.
    """
    shape = _check_shape(input_shape)
    recipe = train.as_recipe(recipe)
    if not (isinstance(direction, (list, tuple)) and len(direction) == 2 and all(map(checks.is_integer, direction))):
        raise InputError(f"direction must be a (kx, ky) pair of integers (a Fourier direction); got {direction!r}")
    kx, ky = (int(k) for k in direction)
    v = _direction(kx, ky, shape, kind)
    eps = sigma * math.sqrt(math.prod(shape)) if eps is None else eps
    factory = _classifier_factory(model, shape)
    (out,) = _train(factory, [(v, seeds.streams(seed, kx % shape[1], ky % shape[1]))], recipe, n, sigma, eps, device,
                    progress)
    loss = np.asarray(out.loss_history, dtype=np.float64)
    per_epoch = len(loss) // recipe.epochs
    first, last = float(loss[:per_epoch].mean()), float(loss[-per_epoch:].mean())
    acc = float("nan") if out.test_acc is None else float(out.test_acc)   # None only for a replay
    task = f"an easy task (D(v) along ({kx}, {ky}) {kind}, sigma {sigma:g}, eps {eps:.3g})"
    numbers = f"loss {first:.3f} -> {last:.3f}, test accuracy {acc:.1f} %"
    if not np.isfinite(loss).all():
        verdict, trains = f"the recipe diverges on {task} (a loss that is not finite): lower max_lr", False
    elif last > LOSS_FALLS:
        verdict, trains = (f"the loss does not fall on {task} ({numbers}): the recipe does not train this "
                           "model; raise max_lr or epochs"), False
    elif acc < EASY_ACCURACY:
        verdict, trains = (f"the model fits {task} without learning it ({numbers}): more samples (n) or "
                           "another recipe"), False
    else:
        verdict, trains = (f"the recipe trains this model ({task}: {numbers}): a direction that stays at "
                           "chance in a sweep is the model's bias, not the recipe's"), True
    return RecipeCheck(first, last, acc, trains, verdict)
