"""Neural anisotropy directions (Sec. 3): the eigenvectors of the input-gradient covariance.

The NADs of an architecture are the eigenvectors, ordered by decreasing eigenvalue, of
`E_theta[grad_x f(x0) grad_x f(x0)^T]` over random initialisations theta (Eq. 4, 6), estimated by
Monte Carlo over `num_networks` fresh networks at one shared evaluation point `x0 ~ N(0, I)`.
Three estimators of a network's gradient:

- `"secant"` (the published one, the default): central differences with a large step h along
  every pixel basis vector, `g_i = (f(x0 + h e_i) - f(x0 - h e_i)) / (2h)`, 2D probes per network;
- `"autograd"`: the exact input gradient at x0;
- `"hessian"`: not a gradient: the expected Gram matrix `E[H^T H]` of the mixed derivative
  `H = grad^2_{theta, x} f(x0)`, whose eigenvectors are the expected right singular vectors (Eq. 5).

Networks are seeded by index and processed in chunks (`chunk_ranges`) whose float64 moments
are merged in order, so an estimate is bitwise the same however it is batched, stored,
interrupted and resumed (same device and thread count), and memory does not grow with N.
"""

import copy
import hashlib
import importlib
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, jacrev, stack_module_state, vmap
from tqdm import tqdm

from nadcore import catalog, extras, store, sweeps, versions
from nadcore import models as registry
from nadcore.device import autocast, check_precision, resolve
from nadcore.seeds import check_seed, derive

METHODS = catalog.NAD_METHODS
HESSIAN_MAX_ENTRIES = 2e8
MAX_BATCH = catalog.MAX_BATCH   # networks evaluated at once (a batch is padded with copies to this size)
VMAP_MAX_PARAMS = 1_000_000   # on the CPU, larger networks' exact gradients go one at a time
RESHAPES = (nn.Flatten, nn.Unflatten, nn.Identity)  # D x (number of parameters) of one mixed-derivative matrix


# ----------------------------------------------------------------------------- the result

@dataclass
class NADResult:
    """`eigenvalues` (decreasing) and `nads` (one unit-norm direction per row, same order)."""

    eigenvalues: np.ndarray
    nads: np.ndarray
    settings: dict
    record: dict = field(default_factory=dict)
    chunks: dict = field(default_factory=dict)   # `ranges` (C, 2), `digests`, `traces`, `machines` (C,)
    split_half: dict | None = None   # `ks`, `overlap`, `networks` (two halves): computed by `estimate`

    def __len__(self):
        return len(self.eigenvalues)

    def images(self, k=None):
        """The first `k` NADs (all by default) reshaped to the input shape."""
        shape = tuple(self.settings["input_shape"])
        return self.nads[:k].reshape(-1, *shape)

    def save(self, path, duration=None, device=None, compact=False):
        """Write `eigenvalues` and `nads` (float16 when `compact`: overlaps change by < 1e-3), the
        chunk digests and the settings record to `path` (.npz, `nadcore.store`); `duration` and
        `device` default to those of the `estimate` that made the result."""
        arrays = {"eigenvalues": self.eigenvalues, "nads": self.nads.astype(np.float16 if compact else np.float32)}
        arrays.update({f"chunk_{k}": v for k, v in self.chunks.items()})
        if self.split_half is not None:
            arrays.update({f"split_half_{k}": np.asarray(v) for k, v in self.split_half.items()})
        duration = self.record.get("duration_s") if duration is None else duration
        device = self.record.get("device") if device is None else device
        self.record = store.save(path, arrays, self.settings, duration=duration, device=device).record
        return Path(path)

    @classmethod
    def load(cls, path, settings=None):
        """Read a result written by `save`; with `settings`, raise `StoreError` unless they match."""
        res = store.load(path, settings)
        for name in ("eigenvalues", "nads"):
            if name not in res.arrays:
                raise store.StoreError(f"{path} holds no {name!r} array: it is not a NAD result")
        chunks = {k[len("chunk_"):]: v for k, v in res.arrays.items() if k.startswith("chunk_")}
        half = {k[len("split_half_"):]: v for k, v in res.arrays.items() if k.startswith("split_half_")} or None
        return cls(res["eigenvalues"], res["nads"].astype(np.float32), res.settings, res.record, chunks, half)

    def trust(self):
        """How far to trust the leading NADs: a `Trust` of the split-half subspace overlaps at
        k = 1, 4, 16 (the NADs of the even- and of the odd-numbered networks of this estimate,
        computed by `estimate` from the chunks it merged: no extra networks) beside chance, k / D.
        Results stored before these overlaps were kept say "not available"."""
        D = int(self.nads.shape[1])
        if self.split_half is None:
            return Trust(D, None, None, None)
        h = self.split_half
        return Trust(D, np.asarray(h["ks"]), np.asarray(h["overlap"], dtype=np.float64), np.asarray(h["networks"]))


TRUST_KS = (1, 4, 16)
TRUST_SIGMAS = 5   # "above chance": at least twice chance (k / D) and this many standard deviations above it
TRUST_WEAK = 0.5   # above chance but below this overlap: the halves agree weakly


@dataclass
class Trust:
    """Split-half subspace overlaps of a NAD estimate (`NADResult.trust`).

    `overlap[j]` is the overlap (`subspace_overlap`) of the leading `ks[j]` NADs of two disjoint
    halves of the estimate's networks (even and odd indices; `networks`: their sizes); `chance` is
    k / D, the mean overlap of random subspaces. The overlap at k is *above chance* when it exceeds
    chance by `margin(k)` = max(k / D, TRUST_SIGMAS sqrt(2) / D): it is at least twice chance and
    five standard deviations of the overlap of random subspaces above it (their standard deviation
    is about sqrt(2) / D for k << D, measured 0.92-1.03 sqrt(2) / D at D = 64 and 1,024, k = 1, 4,
    16). Above chance but under TRUST_WEAK (0.5) the halves agree weakly: more networks would move
    the NADs. The full estimate (both halves) is closer to the exact NADs than either half."""

    D: int
    ks: np.ndarray | None
    overlap: np.ndarray | None
    networks: np.ndarray | None

    @property
    def available(self):
        return self.overlap is not None

    @property
    def chance(self):
        return None if self.ks is None else self.ks / self.D

    def margin(self, k):
        return max(k / self.D, TRUST_SIGMAS * np.sqrt(2) / self.D)

    @property
    def above(self):
        """Per k, whether the split-half overlap is above chance (by `margin`)."""
        if not self.available:
            return None
        return np.array([o >= k / self.D + self.margin(k) for k, o in zip(self.ks, self.overlap)])

    @property
    def leading_above_chance(self):
        """True when the leading NAD (the smallest k) is above chance; None when not available."""
        return None if not self.available else bool(self.above[0])

    def summary(self):
        """One line: the overlaps beside chance, and a verdict."""
        if not self.available:
            return "split-half overlap: not available (a result stored before it was kept)"
        cells = ", ".join(f"k={k}: {o:.3f} (chance {k / self.D:.3f})" for k, o in zip(self.ks, self.overlap))
        n = "/".join(str(int(x)) for x in self.networks)
        above = self.above
        weak = [int(k) for k, o in zip(self.ks, self.overlap) if o < TRUST_WEAK]
        verdict = (("above chance at every k" + (f" (weakly at k={', '.join(map(str, weak))}: overlap < "
                                                 f"{TRUST_WEAK}, more networks would move them)" if weak else ""))
                   if above.all() else
                   "NOT above chance at any k: sampling noise, use more networks" if not above.any() else
                   f"above chance up to k={int(self.ks[np.flatnonzero(~above)[0] - 1])} only"
                   if above[0] else "the leading NAD is NOT above chance: use more networks")
        return f"split-half overlap ({n} networks): {cells}; {verdict}"


# ----------------------------------------------------------------------------- checks

def _check_inputs(num_networks, method, step, input_shape, batch_size):
    if (isinstance(num_networks, bool) or not isinstance(num_networks, (int, np.integer))
            or not 2 <= num_networks <= catalog.MAX_NETWORKS):
        raise ValueError(f"num_networks must be an integer in [2, {catalog.MAX_NETWORKS}] (the covariance is "
                         f"mean-centred; catalog.MAX_NETWORKS bounds the chunk list); got {num_networks!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    if not (isinstance(step, (int, float, np.number)) and not isinstance(step, bool) and np.isfinite(step)
            and _in_float32(step)):
        raise ValueError(f"step must be a finite number > 0 in float32 (the secant step h; published: 100); "
                         f"got {step!r}")
    if not (isinstance(input_shape, (tuple, list)) and input_shape
            and all(isinstance(s, (int, np.integer)) and s >= 1 for s in input_shape)):
        raise ValueError(f"input_shape must be a tuple of positive ints such as (1, 32, 32); got {input_shape!r}")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                   or not 1 <= batch_size <= MAX_BATCH):
        raise ValueError(f"batch_size must be an integer in [1, {MAX_BATCH}] or None (automatic); got {batch_size!r}")


def _in_float32(x):
    """True when `x` is > 0 and finite in float32 (no overflow warning for 1e39)."""
    with np.errstate(over="ignore", under="ignore"):
        return bool(np.float32(x) > 0 and np.isfinite(np.float32(x)))


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")   # a result's name: a file name everywhere
SPEC = re.compile(r"([A-Za-z_][\w.]*):([A-Za-z_][\w.-]*)")  # module:callable, timm:NAME


def _factory(model, input_shape, pooling=True):
    """A zero-argument callable returning a fresh network with one output, and its name (None for
    a factory without a usable name: a lambda)."""
    if isinstance(model, str) and ":" in model:
        factory = model_factory(model, input_shape)
        return factory, factory.default_name
    if isinstance(model, str):
        if model not in registry.names():
            raise ValueError(f"model must be one of {', '.join(registry.names())}, \"module:callable\", "
                             f"\"timm:NAME\" or a zero-argument factory; got {model!r}")
        channels = input_shape[0] if len(input_shape) == 3 else 1
        registry.check_pooling(model, pooling)
        return (lambda: registry.build(model, in_channels=channels, num_classes=1, pooling=pooling)), model
    if pooling is not True:
        raise ValueError("pooling applies to registry names only; build it into the factory instead")
    if isinstance(model, nn.Module) or not callable(model):
        raise ValueError("model must be a registry name or a zero-argument factory returning a fresh nn.Module "
                         f"(e.g. `lambda: MyNet()`), not {type(model).__name__}")
    name = getattr(model, "default_name", getattr(model, "__qualname__", type(model).__name__))
    return model, (name if NAME.fullmatch(name) else None)


def model_factory(spec, input_shape=(1, 32, 32)):
    """A zero-argument factory of fresh networks for `spec`, checked before any network is built:

    - `"module:callable"`: an importable class or factory (the current folder on `sys.path`, as
      `python` puts it there), called with no argument;
    - `"timm:NAME"`: any timm model, `timm.create_model(NAME, num_classes=1, in_chans=C,
      img_size=(H, W) where the model takes one)` for `input_shape = (C, H, W)`.

    The factory's `source` is `spec`, its `default_name` the callable's qualified name or NAME.
    Raises a one-line ValueError naming `model` (or `input_shape`)."""
    m = SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if m is None:
        raise ValueError(f"model must be \"module:callable\" or \"timm:NAME\" (or a registry name); got {spec!r}")
    module, attr = m.groups()
    if module == "timm":
        return _timm_factory(attr, input_shape)
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())   # as `python` does: the current folder's modules import
    try:
        obj = importlib.import_module(module)
    except Exception as err:   # a module that does not import: ImportError or whatever it raised
        raise ValueError(f"model must be an importable module:callable (module {module!r} does not import: "
                         f"{type(err).__name__}: {_first_line(err)}); got {spec!r}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"model must be an importable module:callable ({getattr(obj, '__name__', module)!r} "
                             f"has no attribute {part!r}); got {spec!r}")
        obj = getattr(obj, part)
    if isinstance(obj, nn.Module) or not callable(obj):
        raise ValueError(f"model must name a class or zero-argument factory returning a fresh nn.Module (not "
                         f"{type(obj).__name__}); got {spec!r}")

    def factory():
        return obj()

    factory.source, factory.default_name = spec, attr.split(".")[-1] if NAME.fullmatch(attr) is None else attr
    factory.__qualname__ = attr
    return factory


def _timm_factory(name, input_shape):
    spec = f"timm:{name}"
    try:
        timm = extras.require("timm", "zoo", "a timm:NAME model")
    except extras.MissingExtra as err:
        raise ValueError(f"model must be a model of an installed timm ({err}); got {spec!r}") from None
    if not timm.is_model(name):
        import difflib

        close = difflib.get_close_matches(name, timm.list_models(), n=3)
        raise ValueError(f"model must be a timm model name (timm {timm.__version__} has no {name!r}"
                         + (f"; close: {', '.join(close)}" if close else "") + f"); got {spec!r}")
    if len(input_shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W) for a timm model; got {tuple(input_shape)!r}")
    C, H, W = input_shape
    kwargs = {"num_classes": 1, "in_chans": C}
    sized = {**kwargs, "img_size": H if H == W else (H, W)}
    with torch.random.fork_rng(devices=[]), torch.device("meta"):   # which arguments it takes: no weights made
        try:
            timm.create_model(name, **sized)
            kwargs = sized
        except TypeError as err:
            if "img_size" not in str(err):
                raise ValueError(f"model must be a timm model buildable with num_classes=1, in_chans={C} "
                                 f"({type(err).__name__}: {_first_line(err)}); got {spec!r}") from None
        except Exception:   # noqa: BLE001 - a model that cannot be built on the meta device: try it for real
            kwargs = sized

    def factory():
        return timm.create_model(name, **kwargs)

    factory.source, factory.default_name = spec, name
    factory.__qualname__ = f"timm.create_model({name!r})"
    return factory


def _first_line(err):
    return (str(err).strip().splitlines() or [""])[0]


def one_output_factory(model, input_shape=(1, 32, 32), pooling=True):
    """`(factory, name)` for `model` as `estimate` takes it (a registry name, "module:callable",
    "timm:NAME" or a zero-argument factory): the factory builds a fresh network with one output,
    lazy modules materialised by one forward pass; `name` is None for a factory without a usable
    name (a lambda). Checked before any network is built (one-line ValueErrors naming `model`)."""
    input_shape = tuple(int(s) for s in input_shape)
    factory, name = _factory(model, input_shape, pooling)
    return _materialising(factory, torch.zeros(input_shape)), name


def _is_lazy(net):
    return any(nn.parameter.is_lazy(p) for p in net.parameters()) or any(
        nn.parameter.is_lazy(b) for b in net.buffers())


def forward_checked(net, x0):
    """`net(x0[None])` (no gradient, eval mode, mode restored); a shape mismatch is a one-line
    ValueError naming `input_shape` and the shape tried."""
    was = net.training
    net.eval()
    try:
        with torch.no_grad():
            return net(x0[None])
    except (RuntimeError, ValueError, TypeError, IndexError, AssertionError) as err:
        raise ValueError(f"input_shape must be the model's input shape (C, H, W): a batch of shape "
                         f"{(1, *x0.shape)} (input_shape {tuple(x0.shape)}) failed in its forward pass "
                         f"({type(err).__name__}: {_first_line(err)})") from None
    finally:
        net.train(was)


def _materialising(factory, x0):
    """`factory` whose networks with lazy modules (`nn.LazyLinear`, ...) are materialised by one
    forward pass at `x0` (CPU) as they are built, in the caller's seeded random state."""
    def build():
        net = factory()
        if isinstance(net, nn.Module) and _is_lazy(net):
            forward_checked(net, x0)
        return net

    return build


def _describe(factory, seed, index, x0, source):
    """Build network `index` (seeded as in the estimate) and check it before any chunk: it is an
    `nn.Module`, takes `x0` (a shape mismatch names `input_shape`), and has one output. Returns
    the model's description for the settings of a non-registry model (None for a registry name)."""
    net = network(factory, seed, index, torch.device("cpu"))
    out = forward_checked(net, x0)
    if out.numel() != 1:
        raise ValueError(f"model must have ONE output (build it with num_classes=1); got output shape "
                         f"{tuple(out.shape)}")
    if source is None:
        return None
    return {"source": source, "structure": hashlib.sha256(repr(net).encode()).hexdigest()[:12],
            "parameters": int(sum(p.numel() for p in net.parameters()))}


def eval_point_for(seed, input_shape):
    """The shared evaluation point x0 ~ N(0, I) of `seed` (drawn on the CPU: the same on every device)."""
    return torch.randn(tuple(input_shape), generator=torch.Generator().manual_seed(int(seed)))


def eval_point_name(seed):
    """How the settings name the evaluation point of `eval_point_for(seed, ...)` (a given point: its hash)."""
    return f"randn(seed={seed})"


def _eval_point(eval_point, seed, input_shape):
    if eval_point is None:
        return eval_point_for(seed, input_shape), eval_point_name(seed)
    x0 = torch.as_tensor(np.asarray(eval_point) if not isinstance(eval_point, torch.Tensor) else eval_point)
    x0 = x0.detach().to(torch.float32).cpu()
    if not torch.isfinite(x0).all():
        raise ValueError("eval_point must hold finite numbers; got NaN or inf entries")
    if x0.dim() == len(input_shape) + 1 and x0.shape[0] == 1:
        x0 = x0[0]
    if tuple(x0.shape) != tuple(input_shape):
        raise ValueError(f"eval_point must have shape {tuple(input_shape)} (input_shape) or (1, *input_shape); "
                         f"got {tuple(x0.shape)}")
    return x0, "given:" + hashlib.sha256(x0.numpy().tobytes()).hexdigest()[:12]


def network_seed(seed, index):
    """The seed of network `index` of a run: independent of how networks are batched."""
    return derive(seed, index, bits=32)


def network(factory, seed, index, dev):
    """Network `index`, initialised from its own seed on the CPU (the same network on every device),
    moved to `dev`, in eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(network_seed(seed, index))
        with torch.device("cpu"):
            net = factory()
    if not isinstance(net, nn.Module):
        raise ValueError(f"model factory must return an nn.Module; got {type(net).__name__}")
    return net.to(dev).eval().requires_grad_(False)


def _check_output(net, x0):
    with torch.no_grad():
        out = net(x0[None])
    if out.numel() != 1:
        raise ValueError(f"model must have ONE output (build it with num_classes=1); "
                         f"got output shape {tuple(out.shape)}")


# ----------------------------------------------------------------------------- secant

def probes(x0, step):
    """The 2D secant probes `x0 + h e_i` then `x0 - h e_i` (i over the D input entries)."""
    D = x0.numel()
    eye = torch.eye(D, dtype=x0.dtype, device=x0.device).reshape(D, *x0.shape)
    return torch.cat([x0 + step * eye, x0 - step * eye])


def secant_gradient(net, x0, step, first_layer="auto", precision="float32"):
    """The published central-difference gradient of `net` at `x0`, shape (D,) float32.

    `precision="bfloat16"` runs the network after its first layer in bfloat16 (autocast, with
    `net` in channels-last memory): about twice as fast on CPUs with AVX-512 BF16 and GPUs;
    `benchmarks/nad_throughput.py` measures how much it moves the NADs. float32 is the reference.

    `first_layer` names the network's first layer when it is a `Linear` or `Conv2d` fed the
    input itself ("auto": look for it, None: do not use it). That layer is then evaluated by
    linearity, `layer(x0 +- h e_i) = layer(x0) +- h layer_nobias(e_i)`, where `layer_nobias(e_i)`
    is a few kernel entries placed where e_i reaches the output, instead of 2D convolutions;
    the rest of the network runs unchanged on the 2D probes.
    """
    D = x0.numel()
    with torch.no_grad(), autocast(x0.device, precision):
        if first_layer == "auto":
            first_layer = first_linear_layer(net, x0)
        out = None if first_layer is None else _injected_forward(net, net.get_submodule(first_layer), x0, step)
        if out is None:
            out = net(probes(x0, step))
    out = out.reshape(2 * D).float()
    return (out[:D] - out[D:]) / (2 * step)


_COMPILED = {}   # one compiled copy per architecture, device, precision and thread count


def compiled_secant_gradient(net, x0, step, precision="float32"):
    """`secant_gradient` of `net` through `torch.compile` (inductor, whole graph): the networks of one
    architecture share one compiled copy, into which each one's weights are copied, so only the first
    pays the compilation (seconds). The probes go through every layer, the first one included. The
    kernels differ from eager PyTorch's, so its numbers are not `secant_gradient`'s (cosine >= 0.99
    per network, `benchmarks/nad_throughput.py`): the estimate's settings say `compiled`. Measured on
    a 2-core CPU in bfloat16: 1.1x (VGG-11) to 2.7x (DenseNet-121) faster than eager."""
    key = (repr(net), tuple(x0.shape), str(x0.device), precision, torch.get_num_threads())
    if key not in _COMPILED:
        if x0.device.type == "cpu" and not has_compiler():
            raise RuntimeError("the compiled secant needs a C++ compiler on the CPU (torch.compile writes C++ "
                               "kernels): apt-get install g++, or compiled=False")
        base = copy.deepcopy(net)
        if precision != "float32":
            base = base.to(memory_format=torch.channels_last)
        _COMPILED[key] = (base, torch.compile(base, fullgraph=True, dynamic=False))
    base, forward = _COMPILED[key]
    D = x0.numel()
    with torch.no_grad():
        for mine, theirs in ((base.parameters(), net.parameters()), (base.buffers(), net.buffers())):
            for a, b in zip(mine, theirs, strict=True):
                a.copy_(b)
        with autocast(x0.device, precision), torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
            out = forward(probes(x0, step))
    out = out.reshape(2 * D).float()
    return (out[:D] - out[D:]) / (2 * step)


def has_compiler():
    """True when a C++ compiler is on the PATH (`torch.compile` on the CPU needs one)."""
    import shutil

    return any(shutil.which(c) for c in ("g++", "c++"))


def _is_linear_first(layer, x0):
    return isinstance(layer, nn.Linear) or (isinstance(layer, nn.Conv2d) and layer.groups == 1 and x0.dim() == 3)


def _is_input(inp, x, rows):
    """True when `inp` is `x` itself (`rows` copies of one point, stride 0) reshaped, not permuted."""
    return (isinstance(inp, torch.Tensor) and inp.data_ptr() == x.data_ptr() and inp.shape[0] == rows
            and (rows == 1 or inp.stride(0) == 0) and inp[0].is_contiguous() and inp[0].numel() == x[0].numel())


def first_linear_layer(net, x0):
    """The name of the first layer of `net` if it is a `Linear` or `Conv2d` applied to the input
    itself (reshapes such as `Flatten` aside), else None."""
    seen = []
    names = {m: n for n, m in net.named_modules()}
    hooks = [m.register_forward_pre_hook(lambda mod, args: seen.append((mod, args[0] if args else None)))
             for m in net.modules() if next(m.children(), None) is None and not isinstance(m, RESHAPES)]
    try:
        with torch.no_grad():
            net(x0[None])
    finally:
        for h in hooks:
            h.remove()
    if not seen:
        return None
    layer, inp = seen[0]
    return names[layer] if _is_linear_first(layer, x0) and _is_input(inp, x0[None], 1) else None


def _injected_forward(net, layer, x0, step):
    """`net` on the 2D probes with `layer`'s outputs computed by linearity; None if `layer` turns
    out not to be fed the input (then the caller runs the plain probes)."""
    if not _is_linear_first(layer, x0):
        return None
    D = x0.numel()
    X = x0[None].expand(2 * D, *x0.shape)   # a stand-in of the probes, no memory: never read
    fired = []

    def forward(inp):
        if not _is_input(inp, X, 2 * D):
            return type(layer).forward(layer, inp)
        fired.append(True)
        return _linear_probe_outputs(layer, x0, step)

    layer.forward = forward
    try:
        out = net(X)
    finally:
        del layer.forward  # back to the class's method
    return out if fired else None


def _linear_probe_outputs(layer, x0, step):
    """`layer(x0 + h e_i)` then `layer(x0 - h e_i)` for all i, by linearity."""
    w, D = layer.weight, x0.numel()
    if isinstance(layer, nn.Linear):
        base = layer(x0.reshape(1, -1))
        return torch.cat([base + step * w.T, base - step * w.T])
    lin, k, out_hw = _conv_support(layer, x0)
    C, P = w.shape[0], out_hw[0] * out_hw[1]
    taps = w.reshape(C, -1)[:, k].T                                      # (nnz, C): kernel entry per (i, p)
    base = torch.zeros(P, C, dtype=w.dtype, device=w.device)
    base.index_add_(0, lin % P, taps * x0.reshape(-1)[lin // P, None])   # layer(x0) without bias
    if layer.bias is not None:
        base += layer.bias
    out = base.expand(2 * D, P, C).contiguous().view(2 * D * P, C)
    out.index_add_(0, lin, taps, alpha=step)
    out.index_add_(0, lin + D * P, taps, alpha=-step)
    return out.view(2 * D, *out_hw, C).permute(0, 3, 1, 2)               # channels-last memory layout


_SUPPORTS = {}


def _conv_support(conv, x0):
    """Where each basis vector e_i reaches the output of `conv`: flat (i, p) indices, kernel entries."""
    key = (tuple(x0.shape), conv.kernel_size, conv.stride, conv.padding, conv.dilation, conv.padding_mode,
           str(x0.device))
    if key not in _SUPPORTS:
        D = x0.numel()
        K = conv.in_channels * conv.kernel_size[0] * conv.kernel_size[1]
        eye = torch.eye(D, dtype=torch.float64, device=x0.device).reshape(D, *x0.shape)
        kernel = torch.arange(1, K + 1, dtype=torch.float64, device=x0.device).reshape(
            1, conv.in_channels, *conv.kernel_size)
        hit = conv._conv_forward(eye, kernel, None)                      # k + 1 where e_i meets kernel entry k at p
        out_hw = tuple(hit.shape[-2:])
        hit = hit.round().long().reshape(D, -1)
        rows, pos = hit.nonzero(as_tuple=True)
        _SUPPORTS[key] = (rows * hit.shape[1] + pos, hit[rows, pos] - 1, out_hw)
    return _SUPPORTS[key]


# ----------------------------------------------------------------------------- autograd and hessian

def _stacked(nets):
    params, buffers = stack_module_state(nets)
    skeleton = copy.deepcopy(nets[0]).to("meta")
    return skeleton, params, buffers


def autograd_gradients(nets, x0):
    """Exact input gradients of `nets` at `x0`, shape (len(nets), D): vmapped over the networks.

    On the CPU, networks with buffers (BatchNorm) or more than `VMAP_MAX_PARAMS` parameters go
    one at a time: there vmap over their convolutions is slower than plain backward passes
    (VGG-11: 0.24 s against 0.015 s per network; `benchmarks/nad_throughput.py`)."""
    if x0.device.type == "cpu" and (next(nets[0].buffers(), None) is not None
                                    or sum(p.numel() for p in nets[0].parameters()) > VMAP_MAX_PARAMS):
        return torch.stack([autograd_one(net, x0) for net in nets])
    try:
        skeleton, params, buffers = _stacked(nets)

        def f(p, b, x):
            return functional_call(skeleton, (p, b), (x[None],)).reshape(())

        return vmap(grad(f, argnums=2), in_dims=(0, 0, None))(params, buffers, x0).reshape(len(nets), -1)
    except (RuntimeError, NotImplementedError, ValueError):  # an op without a batching rule: one at a time
        return torch.stack([autograd_one(net, x0) for net in nets])


def autograd_one(net, x0):
    x = x0[None].clone().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(net(x).sum(), x)
    return g.reshape(-1)


def mixed_gram(net, x0):
    """`H^T H` for the mixed derivative `H = grad^2_{theta, x} f(x0)` of one network, (D, D) float64."""
    params = {k: v.detach() for k, v in net.named_parameters()}
    buffers = dict(net.named_buffers())
    D = x0.numel()
    if D * sum(p.numel() for p in params.values()) > HESSIAN_MAX_ENTRIES:
        raise ValueError("method 'hessian' materialises a D x (number of parameters) matrix per network: too large "
                         "for this model; use method='autograd' or 'secant'")

    def input_grad(p):
        f = lambda x: functional_call(net, (p, buffers), (x[None],)).reshape(())
        return grad(f)(x0).reshape(-1)

    with torch.enable_grad():
        jac = jacrev(input_grad, chunk_size=256)(params)                  # name -> (D, *param shape)
    gram = torch.zeros(D, D, dtype=torch.float64, device=x0.device)
    for j in jac.values():
        j = j.reshape(D, -1).double()
        gram += j @ j.T
    return gram


# ----------------------------------------------------------------------------- chunks of networks

CHUNK = 125  # networks per chunk: an estimate is cut at multiples of CHUNK (stored one file each)


def chunk_ranges(start, stop, size=CHUNK):
    """The `[a, b)` network ranges covering `[start, stop)`, cut at the multiples of `size`."""
    cuts = [start, *range((start // size + 1) * size, stop, size), stop]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


def chunk_arrays(factory, method, step, x0, seed, start, stop, batch, precision="float32", compiled=False):
    """What a stored chunk of networks `start .. stop - 1` holds: their `gradients` (count, D), in the
    estimator's dtype (float32), or, for `"hessian"`, `count` and the sum `m2` (D, D) of their
    mixed-derivative Gram matrices. A chunk's numbers depend only on its range and settings:
    networks are seeded by index and every batch has `batch` networks (the last one padded with
    copies, then dropped), so the kernels always see the same shapes. `precision` and `compiled`
    (`compiled_secant_gradient`) apply to the secant (`secant_gradient`)."""
    dev = x0.device
    rows, grams = [], None
    for a in range(start, stop, batch):
        nets = [network(factory, seed, i, dev) for i in range(a, min(a + batch, stop))]
        if a == start:
            _check_output(nets[0], x0)
            layer = first_linear_layer(nets[0], x0) if method == "secant" else None
        if method == "hessian":
            gram = sum(mixed_gram(net, x0) for net in nets)
            grams = gram if grams is None else grams + gram
            G = torch.stack([autograd_one(net, x0) for net in nets])  # only to detect repeated networks
        elif method == "autograd":
            pad = [copy.deepcopy(nets[-1]) for _ in range(batch - len(nets))]
            G = autograd_gradients(nets + pad, x0)[:len(nets)]
        elif compiled:
            G = torch.stack([compiled_secant_gradient(net, x0, float(step), precision) for net in nets])
        else:
            if precision != "float32":
                nets = [net.to(memory_format=torch.channels_last) for net in nets]
            G = torch.stack([secant_gradient(net, x0, float(step), layer, precision) for net in nets])
        rows.append(G)
    G = torch.cat(rows)
    if not torch.isfinite(G).all():
        raise ValueError(f"the gradients of networks {start}..{stop - 1} are not finite (NaN or inf): check step "
                         f"({step!r}) and the evaluation point")
    _check_distinct(G, start, method, step, x0)
    if method == "hessian":
        return {"count": np.int64(len(G)), "m2": grams.cpu().numpy()}
    return {"gradients": G.cpu().numpy()}


def moments(chunk):
    """`count`, `mean` (D,) and `m2` (D, D), float64 numpy, of a chunk (`chunk_arrays`): the mean and
    the centred sum of outer products of its gradients (computed on the CPU, in float64), or, for a
    `"hessian"` chunk, zero and the sum of its Gram matrices."""
    if "m2" in chunk:
        return {"count": np.int64(chunk["count"]), "mean": np.zeros(len(chunk["m2"])), "m2": chunk["m2"]}
    G = torch.from_numpy(np.asarray(chunk["gradients"])).to(torch.float64)
    mean = G.mean(0)
    C = G - mean
    return {"count": np.int64(len(G)), "mean": mean.numpy(), "m2": (C.T @ C).numpy()}


def chunk_moments(factory, method, step, x0, seed, start, stop, batch, precision="float32", compiled=False):
    """`moments` of the chunk of networks `start .. stop - 1` (`chunk_arrays`)."""
    return moments(chunk_arrays(factory, method, step, x0, seed, start, stop, batch, precision, compiled))


def merge(chunks, method):
    """The covariance (or, for `"hessian"`, the mean Gram matrix) of the networks of all `chunks`,
    merged in order (Chan et al.'s pairwise update, float64: `_merged_moments`)."""
    merged = _merged_moments(chunks, method)
    n, m2 = int(merged["count"]), merged["m2"]
    return m2 / n if method == "hessian" else m2 / (n - 1)


def eig_decreasing(matrix):
    """Eigenvalues (decreasing) and eigenvectors as rows of a symmetric matrix; each row's
    largest-magnitude entry is made positive so results are reproducible."""
    matrix = torch.as_tensor(matrix, dtype=torch.float64).cpu()
    vals, vecs = torch.linalg.eigh((matrix + matrix.T) / 2)
    vals, rows = vals.flip(0), vecs.flip(1).T
    pivot = rows.gather(1, rows.abs().argmax(1, keepdim=True))
    rows = rows * torch.where(pivot < 0, -1.0, 1.0).to(rows.dtype)
    return vals.numpy(), rows.numpy()


# ----------------------------------------------------------------------------- estimate

def default_batch(method, dev):
    return {"secant": 16, "autograd": 256 if dev.type == "cuda" else 32, "hessian": 1}[method]


def _with_pooling(settings, pooling):
    """Settings of a network built with `pooling`: the published pooling (True) adds no key."""
    return settings if pooling is True else {**settings, "pooling": pooling}


def chunk_settings(name, method, step, seed, input_shape, eval_desc, batch, dev, pooling=True, precision="float32",
                   compiled=False, model=None):
    """What a stored chunk of networks depends on (its range is the sweep cell); `model`: the
    description of a network that is not a registry name (absent for those: keys unchanged)."""
    return _with_model(_with_compiled(versions.stamp(_with_pooling(
        {"arch": name, "method": method, "step": float(step) if method == "secant" else None,
         "input_shape": list(input_shape), "seed": int(seed), "eval_point": eval_desc, "batch": int(batch),
         "device": dev.type}, pooling), "nad_chunk", precision), compiled), model)


def _with_model(settings, model):
    """`settings` with the `model` description of a factory's network (its source, a digest of its
    structure and its parameter count), absent for registry names."""
    return settings if model is None else {**settings, "model": model}


def _with_compiled(settings, compiled):
    """`settings` with `compiled: True` for the compiled secant (absent otherwise: keys unchanged)."""
    return {**settings, "compiled": True} if compiled else settings


def estimate(model, num_networks, method="secant", step=100.0, eval_point=None, input_shape=(1, 32, 32),
             device="auto", seed=0, batch_size=None, first=0, results_dir=None, progress=True, pooling=True,
             precision="float32", shard=0, num_shards=1, compiled=False, name=None):
    """Estimate the NADs of `model` from networks `first .. first + num_networks - 1`.

    model: a registry name (built with one output and `pooling`, see `models.build`),
    `"module:callable"` or `"timm:NAME"` (`model_factory`), or a zero-argument factory returning
    a fresh, randomly initialised `nn.Module` with one output (lazy modules are materialised by
    one forward pass at x0 as each network is built). Network `i` is initialised from
    `network_seed(seed, i)`. Before any chunk, network `first` is built and run once: a model
    that does not take `input_shape` or has more than one output is refused in one line.
    `name`: what a result of a factory is stored under (its settings' `arch`; default: the
    factory's qualified name, or NAME of "timm:NAME"); the settings of a model that is not a
    registry name also hold its description (`model`: source, a digest of its structure,
    parameter count). Networks go in chunks (`chunk_ranges`), `batch_size` at a time;
    with `results_dir` (a registry name, or any model with a name) each chunk is stored in
    `results_dir/nad_chunks/` as it finishes, so an interrupted estimate resumes and estimates
    that share networks (N vs 2N) share chunks. Every result carries its split-half overlaps
    (`NADResult.trust`), and a warning says when its leading NAD is not above chance. `step` is the
    secant's h (ignored otherwise); `precision` ("float32" or "bfloat16", secant only) is stored in
    the settings, and so is `compiled` (secant only: through
    `torch.compile`, `compiled_secant_gradient`). Returns a `NADResult`.

    Across machines: with `num_shards` > 1 and a `results_dir` they share, a call computes only
    the chunks `shard::num_shards` and returns the merged result once every chunk is stored, else
    None (any later call merges them; the result is bitwise that of one process).
    """
    _check_inputs(num_networks, method, step, input_shape, batch_size)
    input_shape = tuple(int(s) for s in input_shape)
    seed = check_seed(seed)
    check_precision(precision)
    if precision != "float32" and method != "secant":
        raise ValueError(f"precision {precision!r} applies to method 'secant' only; got method {method!r}")
    if not isinstance(compiled, bool) or (compiled and method != "secant"):
        raise ValueError(f"compiled must be True (method 'secant' only) or False; got {compiled!r} with method "
                         f"{method!r}")
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or first < 0:
        raise ValueError(f"first must be an integer >= 0 (the index of the first network); got {first!r}")
    registered = isinstance(model, str) and model in registry.names()
    if name is not None and (not isinstance(name, str) or not NAME.fullmatch(name)):
        raise ValueError(f"name must be a file-name-safe string such as \"mynet\" (letters, digits, _ . + -); "
                         f"got {name!r}")
    if registered and name not in (None, model):
        raise ValueError(f"name applies to factories, \"module:callable\" and \"timm:NAME\"; a registry "
                         f"architecture is stored under its own name ({model!r}); got {name!r}")
    factory, default = _factory(model, input_shape, pooling)
    name = name or default
    if num_shards != 1 and results_dir is None:
        raise ValueError("num_shards > 1 needs a results_dir that the shards share (they store chunks there)")
    if results_dir is not None and name is None:
        raise ValueError("results_dir stores chunks and the result under a name: pass name=\"mynet\" with a "
                         "factory (or results_dir=None)")
    dev = resolve(device)
    x0_cpu, eval_desc = _eval_point(eval_point, seed, input_shape)
    factory = _materialising(factory, x0_cpu)
    source = None if registered else model if isinstance(model, str) else getattr(model, "source", None) or (
        f"{getattr(model, '__module__', '?')}:{getattr(model, '__qualname__', type(model).__name__)}")
    model_desc = _describe(factory, seed, int(first), x0_cpu, source)   # before any chunk: shape, one output
    name = name or "factory"
    x0 = x0_cpu.to(dev)
    batch = batch_size or default_batch(method, dev)
    start = time.perf_counter()
    ranges = chunk_ranges(int(first), int(first) + int(num_networks))
    compute = lambda cells: [chunk_arrays(factory, method, step, x0, seed, c["start"], c["stop"], batch, precision,
                                          compiled) for c in cells]
    cells = [{"start": a, "stop": b} for a, b in ranges]
    durations, digests, traces, machines = [], [], [], []
    halves = _Halves(method)
    if results_dir is None:
        machines = [store.machine(dev)] * len(cells)
        chunks = (halves.moments(compute([c])[0], c["start"])
                  for c in tqdm(cells, desc=f"NADs {name} ({method})", disable=not progress))
    else:
        settings = chunk_settings(name, method, step, seed, input_shape, eval_desc, batch, dev, pooling, precision,
                                  compiled, model_desc)
        paths = sweeps.sweep("nad_chunks", cells, compute, settings, Path(results_dir), progress=progress, load=False,
                             shard=shard, num_shards=num_shards)
        if num_shards != 1:
            if sweeps.missing("nad_chunks", cells, settings, Path(results_dir)):
                return None
            paths = [sweeps.cell_path("nad_chunks", c, settings, Path(results_dir)) for c in cells]
        chunks = read_chunks(paths, cells, settings, durations, machines, halves)
    covariance = merge(_fingerprinted(chunks, digests, traces), method)   # one chunk in memory at a time
    vals, rows = eig_decreasing(covariance)
    settings = _with_model({**nad_settings(name, num_networks, method, step, seed, input_shape, pooling, precision,
                                           compiled), "eval_point": eval_desc}, model_desc)
    if first:
        settings["first"] = int(first)
    duration = sum(durations) if results_dir is not None else time.perf_counter() - start  # compute, resumed or not
    chunks = {"ranges": np.array(ranges), "digests": np.array(digests), "traces": np.array(traces),
              "machines": np.array(machines)}   # a resumed run's chunks may come from several CPUs
    result = NADResult(vals, rows.astype(np.float32), settings, chunks=chunks, split_half=halves.overlaps())
    result.record = {"device": str(dev), "duration_s": round(duration, 3)}
    trust = result.trust()
    if trust.available and not trust.leading_above_chance:
        warnings.warn(f"the leading NADs of {name} from {num_networks} networks are not above chance: "
                      f"{trust.summary()}", NADTrustWarning, stacklevel=2)
    return result


class NADTrustWarning(UserWarning):
    """An estimate whose leading NADs are not above chance (`Trust`): too few networks."""


class _Halves:
    """The moments of the two halves of an estimate's networks (even and odd indices; for the mixed
    Hessian, whose chunks keep only sums, alternate chunks), merged as the chunks pass."""

    def __init__(self, method):
        self.method, self.parts, self.index = method, ([], []), 0

    def moments(self, chunk, start):
        """`moments(chunk)`, the chunk's halves kept aside (merged into one running sum each)."""
        if "m2" in chunk:
            self._add(self.index % 2, moments(chunk))
        else:
            G = np.asarray(chunk["gradients"])
            for half in (0, 1):
                rows = G[(half - start) % 2::2]
                if len(rows):
                    self._add(half, moments({"gradients": rows}))
        self.index += 1
        return moments(chunk)

    def _add(self, half, m):
        part = self.parts[half]
        part.append(m)
        if len(part) > 1:   # one running sum in memory per half
            part[:] = [_merged_moments(part, self.method)]

    def overlaps(self, ks=TRUST_KS):
        """`{"ks", "overlap", "networks"}` of the two halves' leading NADs at the `ks` under both
        halves' rank and D, or None when a half is missing or too small (a mixed Hessian of one
        chunk, fewer than 4 networks)."""
        if not all(self.parts):
            return None
        counts = [int(p[0]["count"]) for p in self.parts]
        if min(counts) < 2:
            return None
        covs = [merge(p, self.method) for p in self.parts]
        D = len(covs[0])
        ks = [k for k in ks if k < D and k < min(counts)]   # within both halves' rank (n - 1 for a covariance)
        if not ks:
            return None
        tops = [_leading(c, max(ks)) for c in covs]
        return {"ks": np.array(ks), "overlap": subspace_overlaps(tops[0], tops[1], ks), "networks": np.array(counts)}


def _merged_moments(parts, method):
    """The `moments` of `parts` merged in order (Chan et al.'s pairwise update, float64), as one part
    (`merge` divides its `m2`)."""
    n, mean, m2 = 0, 0.0, 0.0
    for c in parts:
        nb = int(c["count"])
        delta = c["mean"] - mean
        total = n + nb
        mean = mean + delta * (nb / total)
        m2 = m2 + c["m2"] + (0.0 if method == "hessian" else np.outer(delta, delta) * (n * nb / total))
        n = total
    return {"count": np.int64(n), "mean": np.asarray(mean, dtype=np.float64) * np.ones(len(m2)), "m2": m2}


def _leading(matrix, k):
    """The leading `k` eigenvectors (rows, decreasing eigenvalue) of a symmetric matrix, by the estimate's
    own `eig_decreasing` (bitwise the same in every process: scipy's partial eigh was not, between a
    sharded and a one-process run)."""
    return eig_decreasing(matrix)[1][:k]


def read_chunks(paths, cells, settings, durations, machines, halves):
    """The stored chunks' moments, read one at a time (their compute time appended to `durations`,
    the CPU or GPU that computed them to `machines`; their halves kept by `halves`)."""
    for path, cell in zip(paths, cells):
        r = store.load(path, sweeps.cell_settings(cell, settings))
        durations.append(r.record["duration_s"] or 0.0)
        machines.append(r.record.get("machine") or "unknown")
        yield halves.moments(r.arrays, cell["start"])


def _fingerprinted(chunks, digests, traces):
    """`chunks` unchanged, each one's fingerprint appended to `digests` and the trace of its `m2` to
    `traces` as it passes (a chunk recomputed on another CPU is compared by its trace)."""
    for c in chunks:
        digests.append(store.fingerprint(c["mean"], c["m2"]))
        traces.append(float(np.trace(c["m2"])))
        yield c


def _check_distinct(G, start, method, step, x0):
    """A ValueError when two consecutive networks of the chunk starting at `start` have identical
    gradients: all zero (a secant step too small for float32, or an evaluation point that saturates
    the networks), or the same network built twice by the factory."""
    same = (G[1:] == G[:-1]).all(1) if G.shape[0] > 1 else G.new_zeros(0, dtype=torch.bool)
    if not same.any():
        return
    i = int(same.nonzero()[0])
    if not G[i].any():
        zero = ~G.any(1)
        which = (f"networks {start}..{start + len(G) - 1} are all zero" if zero.all() else
                 f"{int(zero.sum())} networks of {start}..{start + len(G) - 1} are all zero "
                 f"({start + i} and {start + i + 1} among them)")
        change = (f"step (got {step!r}; published: 100: the secant's differences vanish in float32) or "
                  if method == "secant" else "")
        raise ValueError(f"the gradients of {which}: change {change}eval_point (its largest |value| is "
                         f"{float(x0.abs().max()):.3g}: the networks may be saturated there)")
    raise ValueError("model factory returned the same network twice (two consecutive networks have identical "
                     "gradients): it must build a fresh, randomly initialised module on every call")


# ----------------------------------------------------------------------------- subspaces and convergence

def subspace_overlap(U, V, k):
    """Mean squared cosine of the principal angles between the spans of the first `k` rows of U
    and of V: 1 for the same subspace, about k / D for random ones."""
    U, V = np.asarray(U, dtype=np.float64)[:k], np.asarray(V, dtype=np.float64)[:k]
    cos = np.linalg.svd(np.linalg.qr(U.T)[0].T @ np.linalg.qr(V.T)[0], compute_uv=False)
    return float(np.mean(np.clip(cos, 0, 1) ** 2))


def subspace_overlaps(U, V, ks):
    """`subspace_overlap(U, V, k)` for each k of `ks` (equal to within 1e-12) from one QR of each
    basis: Gram-Schmidt bases are nested, and the squared cosines of the principal angles sum to the
    squared Frobenius norm of `Qu_k^T Qv_k`. For reading; `compare` computes the stored overlaps."""
    ks = [int(k) for k in ks]
    top = max(ks)
    qu, qv = (np.linalg.qr(np.asarray(W, dtype=np.float64)[:top].T)[0] for W in (U, V))
    block = (qu.T @ qv) ** 2
    return np.array([block[:k, :k].sum() / k for k in ks])


def convergence(model, sizes, ks=(1, 4, 16, 64), method="secant", step=100.0, input_shape=(1, 32, 32),
                device="auto", seed=0, batch_size=None, results_dir=None, progress=True, pooling=True,
                precision="float32", compiled=False):
    """Overlap of the leading-k NAD subspaces estimated with N and with 2N networks, for N in `sizes`.

    The two estimates use disjoint networks of the same run (indices `0 .. N - 1` and
    `N .. 3N - 1`, the same x0), so the overlap measures Monte-Carlo agreement; with
    `results_dir` they share stored chunks with each other and with the main estimate (of the same
    `precision` and `compiled`, see `estimate`).
    Returns a dict: `sizes`, `ks`, `overlap` (len(sizes), len(ks)).
    """
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) < 2:
        raise ValueError(f"sizes must be a non-empty list of integers >= 2; got {sizes!r}")
    common = dict(method=method, step=step, input_shape=input_shape, device=device, seed=seed,
                  batch_size=batch_size, results_dir=results_dir, progress=progress, pooling=pooling,
                  precision=precision, compiled=compiled)
    overlap = np.zeros((len(sizes), len(ks)))
    for r, n in enumerate(sizes):
        small = estimate(model, n, **common)
        large = estimate(model, 2 * n, first=n, **common)
        overlap[r] = [subspace_overlap(small.nads, large.nads, k) for k in ks]
    return {"sizes": np.array(sizes), "ks": np.array(ks), "overlap": overlap}

# ----------------------------------------------------------------------------- where a full estimate is stored

def nad_settings(arch, num_networks, method="secant", step=100.0, seed=0, input_shape=(1, 32, 32), pooling=True,
                 precision="float32", compiled=False):
    """The settings record `estimate` writes for a registry architecture with the default x0."""
    return _with_compiled(versions.stamp(_with_pooling(
        {"arch": arch, "num_networks": int(num_networks), "method": method,
         "step": float(step) if method == "secant" else None, "input_shape": list(input_shape), "seed": int(seed),
         "eval_point": f"randn(seed={seed})"}, pooling), "nad_result", precision), compiled)


def result_path(arch, settings, results_dir):
    """Where a full estimate of `arch` made with `settings` is kept inside `results_dir` (by
    `experiments.ch3_nads.load_nads`, the CLI and the bundle)."""
    return Path(results_dir) / "nads" / f"{arch}_{store.key(settings)}.npz"


def compare(a, b, ks):
    """Subspace overlaps (see `subspace_overlap`) of two NAD bases for each k in `ks`."""
    return np.array([subspace_overlap(a.nads, b.nads, k) for k in ks])
