"""The SGD recipe of the linearly separable experiments, for one network or many at once.

`fit` trains one network with the published recipe (REPRODUCTION.md): two logits and
cross-entropy, SGD whose learning rate decays linearly from `max_lr` to 0 and is updated every
batch, gradient-norm clipping at 0.5, batches of 128, inputs normalised to mean 0 / std 1 per
channel with the statistics of the training set. `fit_many` trains many independent small
networks at once with `torch.func` (`stack_module_state`, `functional_call`, `vmap`), the same
recipe per network: its own data, its own shuffling, its own clipping.
"""

import copy
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap
from tqdm import tqdm

from nadcore.device import resolve

SCHEDULES = ("linear", "triangular")


# --------------------------------------------------------------------------- schedule, checks

def lr_schedule(max_lr, iterations, schedule="linear"):
    """The learning rate of each of the `iterations` SGD steps, as a float64 numpy array.

    With training time `t` measured in iterations, step `k` (1-based) uses the rate at `t = k`:
    `"linear"` decays from `max_lr` at `t = 0` to 0 at the last step (the NAD paper's recipe);
    `"triangular"` rises linearly from 0 to `max_lr` at half the run and falls back to 0 (the
    follow-up paper's cyclic schedule, one cycle over the run).
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(map(repr, SCHEDULES))}; got {schedule!r}")
    t = np.arange(1, iterations + 1, dtype=np.float64)
    if schedule == "linear":
        return np.interp(t, [0, iterations], [max_lr, 0.0])
    return np.interp(t, [0, iterations / 2, iterations], [0.0, max_lr, 0.0])


def _check_pair(pair, name):
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise ValueError(f"{name} must be an (x, y) pair of tensors; got {type(pair).__name__}")
    x, y = pair
    if not (torch.is_tensor(x) and torch.is_tensor(y)):
        raise ValueError(f"{name} must be an (x, y) pair of tensors")
    if x.dim() < 2 or y.dim() != 1 or len(x) != len(y) or len(x) == 0:
        raise ValueError(f"{name}: x must be (n, ...) and y (n,) with n > 0; got {tuple(x.shape)} and {tuple(y.shape)}")
    if y.dtype.is_floating_point or y.dtype == torch.bool:
        raise ValueError(f"{name}: y must hold integer class labels; got dtype {y.dtype}")


def _check_recipe(epochs, max_lr, momentum, weight_decay, batch_size, clip, schedule):
    if not (isinstance(epochs, (int, np.integer)) and epochs >= 1):
        raise ValueError(f"epochs must be an integer >= 1; got {epochs!r}")
    if not (isinstance(batch_size, (int, np.integer)) and batch_size >= 1):
        raise ValueError(f"batch_size must be an integer >= 1; got {batch_size!r}")
    for name, value in (("max_lr", max_lr), ("momentum", momentum), ("weight_decay", weight_decay)):
        if not (isinstance(value, (int, float, np.number)) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    if max_lr <= 0:
        raise ValueError(f"max_lr must be > 0; got {max_lr!r}")
    if clip is not None and not (isinstance(clip, (int, float, np.number)) and clip > 0):
        raise ValueError(f"clip must be a number > 0 or None (no clipping); got {clip!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(map(repr, SCHEDULES))}; got {schedule!r}")


# --------------------------------------------------------------------------- normalisation, evaluation

def normalization(x):
    """Per-channel `(mean, std)` of a batch `x` of shape (n, C, ...), shaped to broadcast over it."""
    shape = (x.shape[1],) + (1,) * (x.dim() - 2)
    std, mean = torch.std_mean(x.transpose(0, 1).reshape(x.shape[1], -1), dim=1)  # fast contiguous reduction
    return mean.reshape(shape), std.clamp_min(1e-12).reshape(shape)


def _batches(n, batch_size):
    return [(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]


@torch.no_grad()
def accuracy(model, x, y, device="auto", batch_size=1000, mean=None, std=None):
    """Accuracy of `model` on `(x, y)` in percent, in eval mode.

    A model trained by `fit` with `normalize=True` expects normalised inputs: pass the `mean` and
    `std` that `fit` returned and `x` is normalised with them first.
    """
    _check_pair((x, y), "(x, y)")
    dev = resolve(device)
    was_training = model.training
    model.eval()
    correct = 0
    for a, b in _batches(len(x), batch_size):
        xb = x[a:b].to(dev)
        if mean is not None:
            xb = (xb - mean.to(dev)) / std.to(dev)
        correct += (model(xb).argmax(1) == y[a:b].to(dev)).sum().item()
    model.train(was_training)
    return 100.0 * correct / len(x)


def iterations_to_loss(loss_history, threshold, window=1):
    """First iteration (1-based) at which the running mean of the last `window` batch losses is
    below `threshold` (Fig. 2 of the NAD paper); `len(loss_history) + 1` if it never is."""
    if threshold <= 0 or window < 1:
        raise ValueError(f"threshold must be > 0 and window >= 1; got {threshold!r}, {window!r}")
    loss = np.asarray(loss_history, dtype=np.float64)
    if len(loss) < window:
        return len(loss) + 1
    running = np.convolve(loss, np.ones(window) / window, mode="valid")
    below = np.flatnonzero(running < threshold)
    return int(below[0] + window) if len(below) else len(loss) + 1


# --------------------------------------------------------------------------- one network

def fit(model, train, test, epochs, max_lr, momentum=0.0, weight_decay=0.0, batch_size=128,
        device="auto", seed=0, clip=0.5, normalize=True, schedule="linear", progress=False):
    """Train `model` (already initialised) on `train = (x, y)` with the published SGD recipe.

    `seed` drives the shuffling only (a fresh `torch.Generator` on the CPU, one permutation per
    epoch; the last batch of an epoch may be smaller). The model is trained in place on `device`.
    Returns a dict: `train_acc`, `test_acc` (percent, after training, eval mode),
    `loss_history` (the batch loss of every iteration, numpy float32), `iterations`, `lr`
    (the rate of every iteration) and the `mean`, `std` used to normalise the inputs.
    """
    _check_recipe(epochs, max_lr, momentum, weight_decay, batch_size, clip, schedule)
    _check_pair(train, "train")
    _check_pair(test, "test")
    dev = resolve(device)
    x, y = train[0].to(dev), train[1].to(dev)
    mean, std = normalization(x) if normalize else (torch.zeros((), device=dev), torch.ones((), device=dev))
    x = (x - mean) / std
    model.to(dev).train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=max_lr, momentum=momentum, weight_decay=weight_decay)
    batches = _batches(len(x), batch_size)
    lrs = lr_schedule(max_lr, epochs * len(batches), schedule)
    losses = torch.empty(len(lrs), device=dev)
    gen = torch.Generator().manual_seed(int(seed))
    step = 0
    for _ in tqdm(range(epochs), desc="fit", disable=not progress, leave=False):
        perm = torch.randperm(len(x), generator=gen).to(dev)
        for a, b in batches:
            idx = perm[a:b]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if clip is not None:
                nn.utils.clip_grad_norm_(params, clip)
            opt.param_groups[0]["lr"] = float(lrs[step])
            opt.step()
            losses[step] = loss.detach()
            step += 1
    return {
        "train_acc": accuracy(model, x, y, dev),
        "test_acc": accuracy(model, test[0], test[1], dev, mean=mean, std=std),
        "loss_history": losses.cpu().numpy(),
        "iterations": step,
        "lr": lrs,
        "mean": mean.cpu(),
        "std": std.cpu(),
    }


# --------------------------------------------------------------------------- many networks

def vmappable(model):
    """True when `model` has no buffers (BatchNorm statistics) and no dropout, so `fit_many` can
    train copies of it with `vmap`."""
    has_dropout = any(isinstance(m, nn.modules.dropout._DropoutNd) for m in model.modules())
    return not has_dropout and next(model.buffers(), None) is None


def _signature(model):
    return type(model).__name__, tuple((n, tuple(p.shape)) for n, p in model.named_parameters())


def fit_many(models, datasets, epochs, max_lr, momentum=0.0, weight_decay=0.0, batch_size=128,
             device="auto", seed=0, seeds=None, clip=0.5, normalize=True, schedule="linear",
             chunk=64, progress=False):
    """Train network `i` on `datasets[i] = ((x_tr, y_tr), (x_te, y_te))`, all at once.

    Numerically the recipe of `fit` per network (up to float rounding of the batched kernels):
    its own input statistics, its own shuffling from `seeds[i]`, its own gradient clipping.
    `seeds=None` gives every network `seed`, so a network's numbers do not depend on which
    other networks share its batch. Networks of one architecture without buffers or dropout
    (`vmappable`) are stacked and trained `chunk` at a time with `torch.func.vmap`; the others
    (BatchNorm, dropout) fall back to `fit`, one after another. Models are trained in place.
    Returns the list of `fit` dicts, in the order of `models`.
    """
    models, datasets = list(models), list(datasets)
    if len(models) != len(datasets):
        raise ValueError(f"models and datasets must have the same length; got {len(models)} and {len(datasets)}")
    seeds = [seed] * len(models) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(models):
        raise ValueError(f"seeds must hold one seed per model ({len(models)}); got {len(seeds)}")
    if not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
        raise ValueError(f"chunk must be an integer >= 1; got {chunk!r}")
    _check_recipe(epochs, max_lr, momentum, weight_decay, batch_size, clip, schedule)
    for i, data in enumerate(datasets):
        if not (isinstance(data, (tuple, list)) and len(data) == 2):
            raise ValueError(f"datasets[{i}] must be ((x_train, y_train), (x_test, y_test))")
        _check_pair(data[0], f"datasets[{i}] train")
        _check_pair(data[1], f"datasets[{i}] test")
    recipe = dict(epochs=epochs, max_lr=max_lr, momentum=momentum, weight_decay=weight_decay,
                  batch_size=batch_size, device=device, clip=clip, normalize=normalize, schedule=schedule)
    groups = {}
    for i, (model, data) in enumerate(zip(models, datasets)):
        if vmappable(model):
            shapes = tuple(tuple(t.shape) for pair in data for t in pair)
            groups.setdefault((_signature(model), shapes), []).append(i)
        else:
            groups.setdefault(("fit", i), []).append(i)
    results = [None] * len(models)
    bar = tqdm(total=len(models), desc="fit_many", disable=not progress)
    for gkey, members in groups.items():
        for c in range(0, len(members), chunk):
            part = members[c:c + chunk]
            if gkey[0] == "fit":
                out = [fit(models[i], *datasets[i], seed=seeds[i], **recipe) for i in part]
            else:
                out = _fit_stacked([models[i] for i in part], [datasets[i] for i in part],
                                   [seeds[i] for i in part], **recipe)
            for i, r in zip(part, out):
                results[i] = r
            bar.update(len(part))
    bar.close()
    return results


def _fit_stacked(models, datasets, seeds, epochs, max_lr, momentum, weight_decay, batch_size,
                 device, clip, normalize, schedule):
    """`fit` for networks of one vmappable architecture, stacked along a leading network axis."""
    dev = resolve(device)
    k = len(models)
    x = torch.stack([d[0][0] for d in datasets]).to(dev)          # (k, n, C, ...)
    y = torch.stack([d[0][1] for d in datasets]).to(dev)          # (k, n)
    if normalize:                                                 # per network, as in `fit`
        mean, std = map(torch.stack, zip(*(normalization(xi) for xi in x)))   # (k, C, 1, ...)
    else:
        mean = torch.zeros((k,) + (1,) * (x.dim() - 2), device=dev)
        std = torch.ones_like(mean)
    x = x.sub(mean.unsqueeze(1)).div_(std.unsqueeze(1))
    for m in models:
        m.to(dev).train()
    params, _ = stack_module_state(models)                        # leaves, (k, ...) each
    base = copy.deepcopy(models[0]).to("meta")

    def loss_fn(p, xb, yb):
        return F.cross_entropy(functional_call(base, p, (xb,)), yb)

    batched_loss = vmap(loss_fn)
    plist = list(params.values())
    opt = torch.optim.SGD(plist, lr=max_lr, momentum=momentum, weight_decay=weight_decay)
    n = x.shape[1]
    batches = _batches(n, batch_size)
    lrs = lr_schedule(max_lr, epochs * len(batches), schedule)
    losses = torch.empty(len(lrs), k, device=dev)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    rows = torch.arange(k, device=dev)[:, None]
    step = 0
    for _ in range(epochs):
        perm = torch.stack([torch.randperm(n, generator=g) for g in gens]).to(dev)
        for a, b in batches:
            idx = perm[:, a:b]
            loss = batched_loss(params, x[rows, idx], y[rows, idx])   # (k,)
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()                                     # networks are independent
            if clip is not None:
                _clip_per_network(plist, clip)
            opt.param_groups[0]["lr"] = float(lrs[step])
            opt.step()
            losses[step] = loss.detach()
            step += 1
    with torch.no_grad():
        for j, m in enumerate(models):                                # write the weights back
            for name, p in m.named_parameters():
                p.copy_(params[name][j])
        logits = vmap(lambda p, xb: functional_call(base, p, (xb,)))
        x_te = torch.stack([d[1][0] for d in datasets]).to(dev)
        x_te = x_te.sub(mean.unsqueeze(1)).div_(std.unsqueeze(1))
        y_te = torch.stack([d[1][1] for d in datasets]).to(dev)
        train_acc, test_acc = (_stacked_accuracy(logits, params, xs, ys) for xs, ys in ((x, y), (x_te, y_te)))
    losses = losses.cpu().numpy()
    return [{
        "train_acc": train_acc[j],
        "test_acc": test_acc[j],
        "loss_history": losses[:, j].copy(),
        "iterations": step,
        "lr": lrs,
        "mean": mean[j].cpu(),
        "std": std[j].cpu(),
    } for j, (m, d) in enumerate(zip(models, datasets))]


def _stacked_accuracy(logits, params, x, y, batch_size=1000):
    """Accuracy (percent) of each stacked network on its own `(x[j], y[j])`, eval mode."""
    correct = sum((logits(params, x[:, a:b]).argmax(-1) == y[:, a:b]).sum(1) for a, b in _batches(x.shape[1], batch_size))
    return (100.0 * correct / x.shape[1]).tolist()


@torch.no_grad()
def _clip_per_network(params, max_norm):
    """`clip_grad_norm_` applied to each network of a stack: every grad has shape (k, ...)."""
    grads = [p.grad for p in params if p.grad is not None]
    sq = torch.stack([g.reshape(g.shape[0], -1).pow(2).sum(1) for g in grads]).sum(0)
    coef = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))
