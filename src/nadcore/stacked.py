"""Networks of one architecture stacked along a leading axis and run as one network.

`Stack(networks)` is k networks of one architecture as one module: its parameters are theirs
stacked along a leading axis (`torch.func.stack_module_state`), `stack(x)` takes `x` of shape
(k, B, C, H, W), network j seeing `x[j]`, and returns the (k, B, classes) logits of every network on
its own batch; `train.fit` trains it as it trains one network. Underneath, `forward(model)` returns
`f(params, x)` with `params` the stacked parameters (name -> tensor of shape (k, ...)).
Feed-forward chains of Conv2d, Linear, ReLU, Flatten and the pooling layers MaxPool2d, AvgPool2d
and `models.BlurPool2d` (LogReg, MLP, LeNet and its pooling variants, or any `nn.Sequential` of
those) run as grouped convolutions in channels-last layout and batched matrix products (on a 2-core
CPU about 2x faster for LogReg and 3x for LeNet than `torch.func.vmap`'s batching of the same
layers); every other network without buffers or dropout goes through `vmap(functional_call)`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from nadcore import models
from nadcore.checks import InputError

# Largest tensor of a stacked training step, in bytes. CPU: glibc serves blocks up to 32 MiB from
# its heap and larger ones page-fault anew. Accelerators want large batches (not yet tuned).
BUDGET = {"cpu": 16 * 2 ** 20, "other": 512 * 2 ** 20}

# The batched matrix products get each network's batch as a multiple of COLUMNS columns (zero
# columns added, then dropped): with a batch of 67, network j's block starts 67 * j floats into the
# stack and the CPU's matrix kernels round it by its alignment, so a network's logits depended on
# its position in the stack (a digits tail batch moved Chapter 5's accuracies by a point).
COLUMNS = 16

POOLS = (nn.MaxPool2d, nn.AvgPool2d, models.BlurPool2d)     # per-channel: run on the grouped channels as they are
LEAVES = (nn.Conv2d, nn.Linear, nn.ReLU, nn.Flatten, nn.Identity, *POOLS)

CHAINS: dict[type, Callable] = {  # the forward of each architecture as the list of its leaf modules, in order
    models.LogReg: lambda m: [nn.Flatten(), m.fc],
    models.MLP: lambda m: list(m.net),
    models.LeNet: lambda m: [*m.features, nn.Flatten(), *m.classifier],
    nn.Sequential: list,
}


def chain(model: nn.Module) -> list[tuple[nn.Module, str]] | None:
    """The leaf modules of `model`'s forward as `[(module, parameter prefix)]`, or None when the
    model is not a chain that `forward` runs with grouped convolutions (then it uses vmap)."""
    leaves = CHAINS.get(type(model), lambda m: None)(model)
    if leaves is None or not all(isinstance(m, LEAVES) for m in leaves):
        return None
    flat = False
    for m in leaves:
        if isinstance(m, nn.Flatten) and not (m.start_dim == 1 and m.end_dim == -1):
            return None
        if isinstance(m, nn.Conv2d) and (flat or m.groups != 1 or m.padding_mode != "zeros"):
            return None
        flat = flat or isinstance(m, nn.Flatten)
    if not flat:
        return None
    names = {id(m): name for name, m in model.named_modules()}
    return [(m, names.get(id(m), "")) for m in leaves]


def forward(model: nn.Module) -> Callable[[dict[str, torch.Tensor], torch.Tensor], torch.Tensor]:
    """`f(params, x)` -> (k, B, classes) logits of k stacked copies of `model` (see the module)."""
    layers = chain(model)
    if layers is None:
        base = copy.deepcopy(model).to("meta")
        return vmap(lambda p, xb: functional_call(base, p, (xb,)))
    return lambda params, x: _run(layers, params, x)


class Stack(nn.Module):
    """k networks of one architecture without buffers or dropout (`train.vmappable`) as one module:
    `stack(x)` maps (k, B, ...) inputs to (k, B, classes) logits (see the module). Its parameters
    are copies of the networks' stacked along a leading axis, in the order of `named_parameters`
    (`params` names them); `write_back` copies them into the networks (`train.fit` does, after
    training)."""

    def __init__(self, networks: Iterable[nn.Module]) -> None:
        super().__init__()
        networks = list(networks)
        if not networks or not all(isinstance(m, nn.Module) for m in networks):
            raise InputError("networks must be a non-empty list of torch modules")
        first = [(n, tuple(p.shape)) for n, p in networks[0].named_parameters()]
        if any(type(m) is not type(networks[0]) or [(n, tuple(p.shape)) for n, p in m.named_parameters()] != first
               for m in networks):
            raise InputError("networks must share one architecture (type and parameter shapes)")
        if next(networks[0].buffers(), None) is not None:
            raise InputError("networks must have no buffers (BatchNorm statistics) to be stacked")
        params, _ = stack_module_state(networks)
        self.names = list(params)
        self.weights = nn.ParameterList([nn.Parameter(p) for p in params.values()])
        self.networks = networks                                  # a plain list: not submodules
        self._logits = forward(networks[0])

    def __len__(self):
        return len(self.networks)

    @property
    def params(self) -> dict[str, torch.Tensor]:
        """The stacked parameters by the networks' parameter names, each (k, ...)."""
        return dict(zip(self.names, self.weights))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._logits(self.params, x)

    @torch.no_grad()
    def write_back(self) -> None:
        """Copy network j's slice of the stacked parameters into `networks[j]`, for every j."""
        params = self.params
        for j, m in enumerate(self.networks):
            for name, p in m.named_parameters():
                p.copy_(params[name][j])


def _grouped(x):
    """(k, B, C, H, W) -> (B, k*C, H, W) in channels-last memory, network-major channels."""
    k, B, C, H, W = x.shape
    return x.permute(1, 3, 4, 0, 2).contiguous().view(B, H, W, k * C).permute(0, 3, 1, 2)


class _AddBias(torch.autograd.Function):
    """`h + b` for a (B, k*C, H, W) tensor and the biases `b` (k, C) of k stacked networks. Its
    backward sums each network's bias gradient separately: one reduction over all k*C channels
    splits the channels between threads and vector lanes by their index, so a network's bias
    gradient would round differently depending on its position in the stack."""

    @staticmethod
    def forward(h, b):
        return h + b.reshape(1, -1, 1, 1)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1].shape[0]

    @staticmethod
    def backward(ctx, *grads):
        (grad,) = grads
        rows = grad.transpose(0, 1).reshape(ctx.k, grad.shape[1] // ctx.k, -1)
        return grad, torch.stack([r.sum(1) for r in rows])


def _run(layers, p, x):
    k, B = x.shape[:2]
    h, i = x, 0
    while i < len(layers):
        m, name = layers[i]
        if isinstance(m, nn.Conv2d):
            h = h if h.dim() == 4 else _grouped(h)
            w, b = p[name + ".weight"].flatten(0, 1), p.get(name + ".bias")
            nxt = [type(layer) for layer, _ in layers[i + 1:i + 3]]
            if b is not None and nxt == [nn.ReLU, nn.MaxPool2d]:
                # max-pooling commutes with the per-channel bias and the ReLU (both monotone):
                # pool first, then add the bias and rectify a quarter of the values.
                pool = layers[i + 2][0]
                h = F.conv2d(h, w, None, m.stride, m.padding, m.dilation, groups=k)
                h = F.max_pool2d(h, pool.kernel_size, pool.stride, pool.padding, pool.dilation, pool.ceil_mode)
                h = _AddBias.apply(h, b).relu()
                i += 3
                continue
            h = F.conv2d(h, w, b.flatten() if b is not None else None, m.stride, m.padding, m.dilation, groups=k)
        elif isinstance(m, POOLS):
            h = m(h if h.dim() == 4 else _grouped(h))
        elif isinstance(m, nn.ReLU):
            h = h.relu()
        elif isinstance(m, nn.Flatten):                           # features as columns: (k, F, B)
            h = h.reshape(B, k, -1).permute(1, 2, 0) if h.dim() == 4 else h.flatten(2).transpose(1, 2)
            if B % COLUMNS:                                       # see COLUMNS
                h = F.pad(h, (0, -B % COLUMNS))
        elif isinstance(m, nn.Linear):                            # W h: its weight gradient reads h row-wise
            w, b = p[name + ".weight"], p.get(name + ".bias")
            h = torch.bmm(w, h) if b is None else torch.baddbmm(b.unsqueeze(2), w, h)
        i += 1
    return h[:, :, :B].transpose(1, 2)                            # chain() ends every chain flat


def chunk_size(model: nn.Module, sample_shape: Sequence[int], batch_size: int, device: str | torch.device = "cpu",
               budget: int | None = None) -> int:
    """How many copies of `model` to stack so that no tensor of a training step on batches of
    `batch_size` inputs of `sample_shape` exceeds `budget` bytes (default `BUDGET` for the type of
    `device`; sizes measured on the meta device). On a CPU, larger steps allocate fresh memory
    and pay its page faults, and the batch falls out of the cache: this picks 6 LeNets or 32
    LogRegs, close to the fastest measured on a 2-core machine."""
    budget = budget or BUDGET.get(torch.device(device).type, BUDGET["other"])
    sizes = [batch_size * torch.Size(sample_shape).numel() * 4]
    meta = copy.deepcopy(model).to("meta")
    for m in meta.modules():
        m.register_forward_hook(lambda m, i, out: sizes.append(out.numel() * out.element_size()))
    with torch.no_grad():
        meta(torch.empty((batch_size, *sample_shape), device="meta"))
    return max(1, budget // max(sizes))


def registry_chunk_size(arch: str, pooling: bool | str = True, batch_size: int = 128,
                        device: str | torch.device = "cpu", input_shape: Sequence[int] = (1, 32, 32)) -> int:
    """`chunk_size` of the registry network `arch` built with `pooling` (`models.build`): how many
    `train.fit_many` stacks, so the cells of one stored batch of a sweep."""
    return _registry_chunk_size(arch, pooling, batch_size, torch.device(device).type, tuple(input_shape))


@functools.cache
def _registry_chunk_size(arch, pooling, batch_size, device_type, input_shape):
    with torch.device("meta"):   # its shapes alone: no weights drawn, no draw from the global RNG
        model = models.build(arch, pooling=pooling)
    return chunk_size(model, input_shape, batch_size, device_type)
