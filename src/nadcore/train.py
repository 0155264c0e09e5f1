"""The SGD recipe of the linearly separable experiments, for one network or many at once.

A `Recipe` (`nadcore.recipe`, torch-free) is the one description of a recipe (presets' `Sgd`
entries are read as one): by default the authors', two logits and cross-entropy, SGD whose
learning rate decays linearly from `max_lr` to 0 and is updated every batch, gradient-norm
clipping at 0.5, batches of 128, raw inputs (the authors' `TransformLayer(0, 1)` is the identity;
`normalize=True` standardises each channel with the training set's statistics instead).
`fit(model, data, recipe, seed=..., device=...)` is the one training loop: `model` is a network
or a `stacked.Stack` of many independent small networks run as one module (grouped convolutions
and batched matrix products, or `vmap`), the same recipe per network: its own data, its own
shuffling, its own clipping. `fit_many` groups networks into stacks (or trains them one by one
when they cannot be stacked) and calls `fit`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from nadcore import checks, stacked
from nadcore.checks import InputError
from nadcore.device import autocast, resolve
from nadcore.recipe import SCHEDULES, Recipe
from nadcore.seeds import check_seed

MAX_ITERATIONS = 10**8   # SGD steps of one run (800 MB of learning rates)
MAX_CHUNK = 4096   # networks per stack a caller may ask for (chunk=None picks what fits the device)


# --------------------------------------------------------------------------- schedule, checks

def lr_schedule(max_lr: float, iterations: int, schedule: str = "linear") -> np.ndarray:
    """The learning rate of each of the `iterations` SGD steps, as a float64 numpy array.

    With training time `t` measured in iterations, step `k` (1-based) uses the rate at `t = k`:
    `"linear"` decays from `max_lr` at `t = 0` to 0 at the last step (the NAD paper's recipe);
    `"triangular"` rises linearly from 0 to `max_lr` at half the run and falls back to 0 (the
    follow-up paper's cyclic schedule, one cycle over the run).
    """
    if schedule not in SCHEDULES:
        raise InputError(f"schedule must be one of {', '.join(map(repr, SCHEDULES))}; got {schedule!r}")
    checks.number("max_lr", max_lr, 0)
    checks.integer("iterations", iterations, 1, MAX_ITERATIONS,
                   accepted=f"an integer in [1, {MAX_ITERATIONS:,}] (the schedule holds one float64 a step)")
    t = np.arange(1, iterations + 1, dtype=np.float64)
    if schedule == "linear":
        return np.interp(t, [0, iterations], [max_lr, 0.0])
    return np.interp(t, [0, iterations / 2, iterations], [0.0, max_lr, 0.0])


def _check_pair(pair, name):
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise InputError(f"{name} must be an (x, y) pair of tensors; got {type(pair).__name__}")
    x, y = pair
    if not (torch.is_tensor(x) and torch.is_tensor(y)):
        raise InputError(f"{name} must be an (x, y) pair of tensors")
    if x.dim() < 2 or y.dim() != 1 or len(x) != len(y) or len(x) == 0:
        raise ValueError(f"{name}: x must be (n, ...) and y (n,) with n > 0; got {tuple(x.shape)} and {tuple(y.shape)}")
    if y.dtype.is_floating_point or y.dtype == torch.bool:
        raise ValueError(f"{name}: y must hold integer class labels; got dtype {y.dtype}")
    if x.dtype.is_floating_point and not torch.isfinite(x).all():
        raise ValueError(f"{name}: x must hold finite numbers; got NaN or inf entries")


# --------------------------------------------------------------------------- normalisation, evaluation

def standardize(x: torch.Tensor,
                out: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`x` of shape (n, C, ...) normalised per channel to mean 0 / std 1 with its own statistics,
    and the `(mean, std)` used, each shaped (C, 1, ...). Two passes over `x` and one new tensor
    (none when writing into `out`): about 2.5x faster on a CPU than `torch.std_mean`."""
    dims = (0,) + tuple(range(2, x.dim()))
    mean = x.mean(dims, keepdim=True)
    out = torch.sub(x, mean, out=out)
    count = x.numel() // x.shape[1]
    std = torch.linalg.vector_norm(out, dim=dims, keepdim=True).div_(math.sqrt(max(count - 1, 1))).clamp_min_(1e-12)
    return out.div_(std), mean[0], std[0]


def _check_stop_after(stop_after):
    checks.integer("stop_after", stop_after, 1, optional=True, accepted="None or a positive int")


def _batches(n, batch_size):
    return [(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]


@overload
def predict(model: stacked.Stack, x: torch.Tensor | Sequence[torch.Tensor], mean: Sequence[torch.Tensor] | None = None,
            std: Sequence[torch.Tensor] | None = None, device: str | torch.device = "auto",
            batch_size: int = 1000) -> torch.Tensor: ...


@overload
def predict(model: nn.Module, x: torch.Tensor, mean: torch.Tensor | None = None, std: torch.Tensor | None = None,
            device: str | torch.device = "auto", batch_size: int = 1000) -> torch.Tensor: ...


@torch.no_grad()
def predict(model: nn.Module | stacked.Stack, x: Any, mean: Any = None, std: Any = None,
            device: str | torch.device = "auto", batch_size: int = 1000) -> torch.Tensor:
    """Predicted classes of `model` on `x`: the one evaluation loop of the library.

    `model` is a network (put in eval mode, restored after; `x` of shape (n, ...); returns (n,) on
    the CPU) or a `stacked.Stack` of k networks (`x` holds each network's own inputs, (k, n, ...) or
    a list of k tensors; returns (k, n) on the stack's device; a batch holds about `batch_size`
    images over all k networks). A network trained with `normalize=True` expects normalised
    inputs: pass the `mean` and `std` that `fit` returned (one per network for a stack) and each
    batch is normalised with them first."""
    checks.integer("batch_size", batch_size, 1, accepted="an integer >= 1 (inputs per forward pass)")
    if (mean is None) != (std is None):
        raise ValueError("mean and std go together (as `fit` returns them): pass both or neither; got "
                         f"{'mean' if std is None else 'std'} only")
    if isinstance(model, stacked.Stack):
        k, n, dev = len(x), len(x[0]), next(model.parameters()).device
        forward = model
        take = lambda a, b: x[:, a:b] if torch.is_tensor(x) else torch.stack([xj[a:b] for xj in x]).to(dev)
        if mean is not None and std is not None:
            shape = (k,) + (1,) * (x[0].dim() - len(mean[0].shape)) + tuple(mean[0].shape)   # (k, 1, C, 1, ...)
            mean, std = torch.stack(list(mean)).reshape(shape), torch.stack(list(std)).reshape(shape)
        batches = _batches(n, max(1, batch_size // k))
    else:
        dev, was_training = resolve(device), model.training
        forward = model.to(dev).eval()
        take = lambda a, b: x[a:b].to(dev)
        batches = _batches(len(x), batch_size)
    out = []
    for a, b in batches:
        xb = take(a, b)
        if mean is not None and std is not None:
            xb = (xb - mean.to(xb)) / std.to(xb)
        out.append(forward(xb).argmax(-1))
    if isinstance(model, stacked.Stack):
        return torch.cat(out, 1)
    model.train(was_training)
    return torch.cat(out).cpu()


@overload
def accuracy(model: stacked.Stack, x: torch.Tensor | Sequence[torch.Tensor], y: torch.Tensor | Sequence[torch.Tensor],
             device: str | torch.device = "auto", batch_size: int = 1000,
             mean: Sequence[torch.Tensor] | None = None, std: Sequence[torch.Tensor] | None = None) -> list[float]: ...


@overload
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: str | torch.device = "auto",
             batch_size: int = 1000, mean: torch.Tensor | None = None, std: torch.Tensor | None = None) -> float: ...


def accuracy(model: nn.Module | stacked.Stack, x: Any, y: Any, device: str | torch.device = "auto",
             batch_size: int = 1000, mean: Any = None, std: Any = None) -> float | list[float]:
    """Accuracy of `model` on `(x, y)` in percent (`predict`, with the same `mean` and `std`); for a
    `stacked.Stack`, the list of each network's accuracy on its own `(x[j], y[j])`."""
    checks.integer("batch_size", batch_size, 1, accepted="an integer >= 1 (inputs per forward pass)")
    if isinstance(model, stacked.Stack):
        y = y if torch.is_tensor(y) else torch.stack(list(y))
        pred = predict(model, x, mean, std, device, batch_size)
        return (100.0 * (pred == y.to(pred.device)).sum(1) / len(x[0])).tolist()
    _check_pair((x, y), "(x, y)")
    correct = (predict(model, x, mean, std, device, batch_size) == y.cpu()).sum().item()
    return 100.0 * correct / len(x)


def iterations_to_loss(loss_history: Sequence[float] | np.ndarray, threshold: float, window: int = 1) -> int:
    """First iteration (1-based) at which the running mean of the last `window` batch losses is
    below `threshold` (Fig. 2 of the NAD paper); `len(loss_history) + 1` if it never is."""
    checks.number("threshold", threshold, 0)
    checks.integer("window", window, 1)
    loss = np.asarray(loss_history, dtype=np.float64)
    if len(loss) < window:
        return len(loss) + 1
    running = np.convolve(loss, np.ones(window) / window, mode="valid")
    below = np.flatnonzero(running < threshold)
    return int(below[0] + window) if len(below) else len(loss) + 1


# --------------------------------------------------------------------------- the training loop

def as_recipe(recipe: Recipe | dict) -> Recipe:
    """`recipe` as a `Recipe`: a `Recipe` as it is, a dict of its fields checked (`Recipe.from_settings`,
    strict: no other keys)."""
    if isinstance(recipe, Recipe):
        return recipe
    if isinstance(recipe, dict):
        return Recipe.from_settings(recipe, strict=True)
    raise InputError(f"recipe must be a train.Recipe or a dict of its fields; got {type(recipe).__name__}")


@overload
def fit(model: stacked.Stack, data: Iterable[Sequence[Sequence[torch.Tensor]]], recipe: Recipe | dict, *,
        seed: int | list[int] = 0, device: str | torch.device = "auto", progress: bool = False,
        stop_after: int | None = None) -> list[Fit]: ...


@overload
def fit(model: nn.Module, data: Sequence[Sequence[torch.Tensor]], recipe: Recipe | dict, *, seed: int = 0,
        device: str | torch.device = "auto", progress: bool = False,
        stop_after: int | None = None, on_step: Callable[[int], None] | None = None) -> Fit: ...


def fit(model: nn.Module | stacked.Stack, data: Any, recipe: Recipe | dict, *, seed: int | list[int] = 0,
        device: str | torch.device = "auto", progress: bool = False,
        stop_after: int | None = None,
        on_step: Callable[[int], None] | None = None) -> Fit | list[Fit]:
    """Train `model` (already initialised, in place) on `data = ((x_train, y_train), (x_test, y_test))`
    with `recipe` (a `Recipe`, or a dict of its fields): the one SGD loop of the library.

    `model` is a network, or a `stacked.Stack` of k networks of one architecture trained as one:
    then `data` holds each network's own pair of sets (a list of k), `seed` is one seed per network
    (or one for all), and each network gets the recipe on its own: its own input statistics, its
    own shuffling, its own gradient clipping (the networks are independent; the weights are
    written back into them). `seed` drives the shuffling only (a fresh `torch.Generator` on the CPU,
    one permutation per epoch; the last batch of an epoch may be smaller). The training runs on
    `device` (`precision="bfloat16"`: under bfloat16 autocast; one network with convolutions in
    channels-last memory, see `Recipe`).
    Returns a `Fit` (a list of k for a stack).
    `stop_after=k` trains the first k steps of that run only (same schedule; a replay of a stored
    run's start): `loss_history` then holds k losses, and the accuracies are None (not evaluated).
    `on_step(k)` (one network only) is called after each SGD step k = 1, 2, ... with the network as trained
    so far (a checkpoint; what it does leaves the run's numbers unchanged if it restores the mode it found).
    """
    recipe = as_recipe(recipe)
    _check_stop_after(stop_after)
    if isinstance(seed, (list, tuple)) and not seed:
        raise InputError("seed must be an int, or one int per network of a stack; got an empty list")
    for s in (seed if isinstance(seed, (list, tuple)) else [seed]):
        check_seed(s)
    if on_step is not None and (isinstance(model, stacked.Stack) or not callable(on_step)):
        raise InputError("on_step must be a callable taking the step, for one network (not a stack)")
    if isinstance(model, stacked.Stack):
        data = list(data)
        seeds = [seed] * len(model) if isinstance(seed, (int, np.integer)) else list(seed)
        if len(data) != len(model) or len(seeds) != len(model):
            raise ValueError(f"data and seed must give one pair of sets and one seed per network of the stack "
                             f"({len(model)}); got {len(data)} and {len(seeds)}")
        for j, d in enumerate(data):
            _check_data(d, f"data[{j}] ")
        return _train(model, data, recipe, seeds, device, progress, stop_after)
    _check_data(data)
    _check_logits(model, data[0])
    return _train(model, data, recipe, seed, device, progress, stop_after, on_step)


class TwoLogits(nn.Module):
    """A one-output network `net` as a two-class classifier: logits (0, f(x)), so that cross-entropy is
    the logistic loss of f (class 1 where f > 0)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.net(x).reshape(len(x), 1)
        return torch.cat([torch.zeros_like(z), z], 1)


def _check_logits(model, train_set):
    """A one-line InputError unless `model` gives a logit per class of the training labels (one sample, eval mode,
    no gradient; skipped for a model whose lazy modules are not built yet: its first step builds them)."""
    params = list(model.parameters())
    if any(nn.parameter.is_lazy(p) for p in params):
        return
    x, y = train_set
    dev = params[0].device if params else torch.device("cpu")
    was = model.training
    try:
        with torch.no_grad():
            out = model.eval()(x[:1].to(dev))
    except (RuntimeError, ValueError, TypeError, IndexError) as err:   # the data are not what the model takes
        if checks.out_of_memory(err):
            raise
        raise InputError(f"data must be inputs the model takes: a batch of shape {tuple(x[:1].shape)} failed in its "
                         f"forward pass ({type(err).__name__}: {checks.first_line(err)})") from None
    finally:
        model.train(was)
    classes = int(y.max()) + 1
    if not isinstance(out, torch.Tensor) or out.dim() != 2 or out.shape[1] < classes:
        raise InputError(f"model must give one logit per class ({classes}: labels 0..{classes - 1}); got output "
                         f"shape {tuple(getattr(out, 'shape', ()))} (a one-output network: train.TwoLogits(net))")


def _check_data(data, where=""):
    if not (isinstance(data, (tuple, list)) and len(data) == 2):
        raise ValueError(f"{where or 'data '}must be ((x_train, y_train), (x_test, y_test))")
    _check_pair(data[0], f"{where}train")
    _check_pair(data[1], f"{where}test")


def _train(model, data, recipe, seed, device, progress, stop_after, on_step=None):
    """`fit` on checked arguments."""
    dev = resolve(device)
    run = (_Stacked if isinstance(model, stacked.Stack) else _Single)(model, data, seed, dev, recipe)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=recipe.max_lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay)
    batches = _batches(run.n, recipe.batch_size)
    lrs = lr_schedule(recipe.max_lr, recipe.epochs * len(batches), recipe.schedule)
    losses = torch.empty(len(lrs), *run.width, device=dev)
    step, stop = 0, len(lrs) if stop_after is None else min(stop_after, len(lrs))
    for _ in tqdm(range(recipe.epochs), desc="fit", disable=not progress, leave=False):
        order = run.shuffle()
        for a, b in batches[:stop - step]:
            loss = run.loss(order, a, b)                          # () or (k,): each network's mean loss
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()                                 # the networks of a stack are independent
            if recipe.clip is not None:
                run.clip(params, recipe.clip)
            opt.param_groups[0]["lr"] = float(lrs[step])
            opt.step()
            losses[step] = loss.detach()
            step += 1
            if on_step is not None:
                on_step(step)
    return run.results(losses[:step].cpu().numpy(), step, lrs, evaluate=stop_after is None)


@dataclass
class Fit:
    """One network's training (`fit`): `train_acc` and `test_acc` (percent, after training, eval mode; None for
    a replay, `stop_after`), `loss_history` (the batch loss of every iteration, numpy float32), `iterations`,
    `lr` (the rate of every iteration) and the `mean`, `std` used to normalise the inputs."""
    train_acc: float | None
    test_acc: float | None
    loss_history: np.ndarray
    iterations: int
    lr: Any
    mean: torch.Tensor
    std: torch.Tensor


def _result(train_acc, test_acc, losses, step, lrs, mean, std):
    return Fit(train_acc, test_acc, losses, step, lrs, mean.cpu(), std.cpu())


class _Single:
    """One network's side of `fit`: its data on the device (normalised), its batches, its clipping."""

    def __init__(self, model, data, seed, dev, recipe):
        (train, self.test), self.model, self.dev, self.recipe = data, model, dev, recipe
        x, self.y = train[0].to(dev), train[1].to(dev)
        if recipe.normalize:
            x, self.mean, self.std = standardize(x)
        else:
            self.mean, self.std = torch.zeros((), device=dev), torch.ones((), device=dev)
        self.x, self.n, self.width = x, len(x), ()
        model.to(dev).train()
        if recipe.precision != "float32" and any(p.dim() == 4 for p in model.parameters()):
            model.to(memory_format=torch.channels_last)
        self.gen = torch.Generator().manual_seed(int(seed))

    def shuffle(self):
        return torch.randperm(self.n, generator=self.gen).to(self.dev)

    def loss(self, perm, a, b):
        idx = perm[a:b]
        with autocast(self.dev, self.recipe.precision):
            return F.cross_entropy(self.model(self.x[idx]), self.y[idx])

    @staticmethod
    def clip(params, max_norm):
        nn.utils.clip_grad_norm_(params, max_norm)

    def results(self, losses, step, lrs, evaluate):
        train_acc = test_acc = None                              # a replay (`stop_after`) is not evaluated
        if evaluate:
            with autocast(self.dev, self.recipe.precision):
                train_acc = accuracy(self.model, self.x, self.y, self.dev)
                test_acc = accuracy(self.model, *self.test, self.dev, mean=self.mean, std=self.std)
        return _result(train_acc, test_acc, losses, step, lrs, self.mean, self.std)


class _Stacked:
    """A stack's side of `fit`: each network's data normalised on its own, each network's batch drawn
    from its own permutation, each network's gradient clipped on its own."""

    def __init__(self, stack, data, seeds, dev, recipe):
        self.stack, self.data, self.dev, self.recipe = stack, data, dev, recipe
        k = len(stack)
        x0 = data[0][0][0]
        x = torch.empty((k, *x0.shape), dtype=x0.dtype, device=dev)                  # (k, n, C, ...)
        self.y = torch.stack([d[0][1] for d in data]).to(dev)                        # (k, n)
        self.mean, self.std = [], []
        for j, ((xj, _), _) in enumerate(data):                   # normalised per network, as one network
            if recipe.normalize:
                _, m, s = standardize(xj.to(dev), out=x[j])
            else:
                m, s = torch.zeros((), device=dev), torch.ones((), device=dev)
                x[j].copy_(xj)
            self.mean.append(m)
            self.std.append(s)
        for m in stack.networks:
            m.to(dev).train()
        stack.to(dev).train()
        self.x, self.n, self.width = x, x.shape[1], (k,)
        self.gens = [torch.Generator().manual_seed(s) for s in seeds]
        # network j's sample i at row j * n + i (2-D rows: index_select copies them ~4x faster than
        # (n, C, H, W) slices)
        self.flat_x, self.flat_y = x.view(k * self.n, -1), self.y.flatten()
        self.offsets = torch.arange(k, device=dev)[:, None] * self.n

    def shuffle(self):
        return torch.stack([torch.randperm(self.n, generator=g) for g in self.gens]).to(self.dev) + self.offsets

    def loss(self, perm, a, b):
        k, rows = len(self.stack), perm[:, a:b].flatten()
        xb = self.flat_x.index_select(0, rows).view(k, b - a, *self.x.shape[2:])
        yb = self.flat_y.index_select(0, rows).view(k, b - a)
        with autocast(self.dev, self.recipe.precision):
            out = self.stack(xb)
        return F.cross_entropy(out.float().flatten(0, 1), yb.flatten(), reduction="none").view(k, -1).mean(1)

    @staticmethod
    def clip(params, max_norm):
        clip_per_network(params, max_norm)

    def results(self, losses, step, lrs, evaluate):
        k = len(self.stack)
        with torch.no_grad():
            self.stack.write_back()
            train_acc = test_acc = [None] * k                    # a replay (`stop_after`) is not evaluated
            # about 1024 images per call: large activations cost page faults on a CPU
            with autocast(self.dev, self.recipe.precision):
                if evaluate:
                    train_acc = accuracy(self.stack, self.x, self.y, batch_size=1024)
                    x_test, y_test = zip(*(d[1] for d in self.data))
                    test_acc = accuracy(self.stack, x_test, y_test, batch_size=1024, mean=self.mean, std=self.std)
        return [_result(train_acc[j], test_acc[j], losses[:, j].copy(), step, lrs, self.mean[j], self.std[j])
                for j in range(k)]


# --------------------------------------------------------------------------- many networks

def vmappable(model: nn.Module) -> bool:
    """True when `model` has no buffers (BatchNorm statistics) and no dropout, so `fit_many` can
    train copies of it stacked (`nadcore.stacked.Stack`)."""
    has_dropout = any(isinstance(m, nn.modules.dropout._DropoutNd) for m in model.modules())
    return not has_dropout and next(model.buffers(), None) is None


def _signature(model):
    return type(model).__name__, tuple((n, tuple(p.shape)) for n, p in model.named_parameters())


def fit_many(models: Iterable[nn.Module], datasets: Iterable[Sequence[Sequence[torch.Tensor]]], recipe: Recipe | dict,
             *, seed: int = 0, seeds: Iterable[int] | None = None, device: str | torch.device = "auto",
             chunk: int | None = None, pad: bool = True, progress: bool = False,
             stop_after: int | None = None) -> list[Fit]:
    """Train network `i` on `datasets[i] = ((x_tr, y_tr), (x_te, y_te))` with `recipe`, all at once.

    Numerically the recipe of `fit` per network (up to float rounding of the batched kernels):
    its own input statistics, its own shuffling from `seeds[i]`, its own gradient clipping.
    `seeds=None` gives every network `seed`, so a network's numbers do not depend on which
    other networks share its batch. Networks of one architecture without buffers or dropout
    (`vmappable`) are trained `chunk` at a time as one `stacked.Stack` (`chunk=None` picks
    `stacked.chunk_size`); the others (BatchNorm, dropout) one after another. Models are trained
    in place.

    Batch invariance: the kernels of a stack of k networks round differently for different k
    (measured: LeNet loss histories differ by 6e-8 between stacks of 3 and 6, enough for a
    20-epoch run to end 0.8 points apart). With `pad=True` every stack holds exactly `chunk`
    networks, the last one filled with copies of its last network (trained, then dropped), so
    a network's numbers are bitwise the same alone, in any batch, at any position of a stack
    (same device and thread count). `pad=False` skips the copies (faster for a lone network).
    `stop_after` as in `fit`. Returns the list of `Fit`s, in the order of `models`.
    """
    recipe = as_recipe(recipe)
    models, datasets = list(models), list(datasets)
    if len(models) != len(datasets):
        raise ValueError(f"models and datasets must have the same length; got {len(models)} and {len(datasets)}")
    seeds = [seed] * len(models) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(models):
        raise InputError(f"seeds must hold one seed per model ({len(models)}); got {len(seeds)}")
    checks.integer("chunk", chunk, 1, MAX_CHUNK, optional=True,
                   accepted=f"an integer in [1, {MAX_CHUNK}] or None (automatic)")
    _check_stop_after(stop_after)
    for i, data in enumerate(datasets):
        _check_data(data, f"datasets[{i}] ")
    groups = {}
    for i, (model, data) in enumerate(zip(models, datasets)):
        if vmappable(model):
            shapes = tuple(tuple(t.shape) for pair in data for t in pair)
            groups.setdefault((_signature(model), shapes), []).append(i)
        else:
            groups.setdefault(("fit", i), []).append(i)
    results: list[Any] = [None] * len(models)
    bar = tqdm(total=len(models), desc="fit_many", disable=not progress)
    for gkey, members in groups.items():
        x0 = datasets[members[0]][0][0]
        size = 1 if gkey[0] == "fit" else chunk or stacked.chunk_size(
            models[members[0]], x0.shape[1:], min(recipe.batch_size, len(x0)), resolve(device))
        for c in range(0, len(members), size):
            part = members[c:c + size]
            if gkey[0] == "fit":
                out = [_train(models[i], datasets[i], recipe, seeds[i], device, False, stop_after) for i in part]
            else:
                filler = [part[-1]] * (size - len(part) if pad else 0)
                nets = [models[i] for i in part] + [copy.deepcopy(models[i]) for i in filler]
                out = _train(stacked.Stack(nets), [datasets[i] for i in part + filler], recipe,
                             [seeds[i] for i in part + filler], device, False, stop_after)[:len(part)]
            for i, r in zip(part, out):
                results[i] = r
            bar.update(len(part))
    bar.close()
    return results


@torch.no_grad()
def clip_per_network(params: Iterable[torch.Tensor], max_norm: float) -> None:
    """`clip_grad_norm_` applied to each network of a stack: every grad has shape (k, ...).

    Each network's norm is its own reductions (over copies, so memory alignment is the same):
    one reduction over the k rows rounds rows differently by their index (threads and vector
    lanes), and a network's training would depend on its position in the stack."""
    grads = [p.grad for p in params if p.grad is not None]
    sq = torch.stack([torch.stack([g[j].pow(2).sum() for g in grads]).sum() for j in range(len(grads[0]))])
    coef = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))
