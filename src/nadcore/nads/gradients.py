"""One network's input gradient at x0, three ways: the published secant (central differences with a
large step along every pixel, its first layer by linearity), optionally through `torch.compile`;
the exact gradient by autograd (vmapped over networks); and the mixed derivative's Gram matrix."""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections import OrderedDict
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.func import functional_call, grad, jacrev, stack_module_state, vmap

from nadcore.checks import InputError
from nadcore.device import autocast

if TYPE_CHECKING:
    from collections.abc import Sequence

HESSIAN_MAX_ENTRIES = 2e8
VMAP_MAX_PARAMS = 1_000_000   # on the CPU, larger networks' exact gradients go one at a time
RESHAPES = (nn.Flatten, nn.Unflatten, nn.Identity)

# ----------------------------------------------------------------------------- secant

def probes(x0: torch.Tensor, step: float) -> torch.Tensor:
    """The 2D secant probes `x0 + h e_i` then `x0 - h e_i` (i over the D input entries)."""
    return _probe_rows(x0, step, 0, 2 * x0.numel())


def secant_gradient(net: nn.Module, x0: torch.Tensor, step: float, first_layer: str | None = "auto",
                    precision: str = "float32", pool_first: bool = True, fuse_pool: bool = True,
                    verify: bool = False) -> torch.Tensor:
    """The published central-difference gradient of `net` at `x0`, shape (D,) float32.

    `precision="bfloat16"` runs the network after its first layer in bfloat16 (autocast, with
    `net` in channels-last memory): about twice as fast on CPUs with AVX-512 BF16 and GPUs;
    `benchmarks/nad_throughput.py` measures how much it moves the NADs. float32 is the reference.

    `first_layer` names the network's first layer when it is a `Linear` or `Conv2d` fed the
    input itself ("auto": look for it, None: do not use it). That layer is then evaluated by
    linearity, `layer(x0 +- h e_i) = layer(x0) +- h layer_nobias(e_i)`, where `layer_nobias(e_i)`
    is a few kernel entries placed where e_i reaches the output, instead of 2D convolutions;
    the rest of the network runs unchanged on the 2D probes. `pool_first` (`pool_before_relu`) and `fuse_pool`
    (`_pooled_probe_outputs`) are two more shortcuts, each bitwise the numbers without it (off: to compare).
    The shortcuts swap modules of a copy of `net` (`own_copy`), never of the caller's network. `verify`: a
    `first_layer` given by name is checked on this network's own graph too (`_graph_reads_once`), as "auto" always
    is: a model may gate a second reader of its input on its weights, network by network.
    """
    D = x0.numel()
    x0 = x0.clone()   # a model that works on its input in place changes this copy, never the caller's point
    with torch.no_grad(), autocast(x0.device, precision):
        if 8 * D * D > PROBES_AT_ONCE:   # the 2D probes would not fit at once: the plain probes, a block at a time
            rows = max(1, PROBE_BLOCK // (4 * D))
            out = torch.cat([net(_probe_rows(x0, step, a, min(a + rows, 2 * D))).reshape(-1).float()
                             for a in range(0, 2 * D, rows)])
            return (out[:D] - out[D:]) / (2 * step)
        mine = own_copy(net)
        if mine is None:   # a model that cannot be copied: the plain probes
            first_layer, pool_first, mine = None, False, net
        elif first_layer == "auto":
            first_layer = _first_linear_layer(mine, x0)
        elif first_layer is not None and verify and not _graph_reads_once(mine, first_layer):
            first_layer = None
        with pool_before_relu(mine, x0, pool_first) as at_x0:
            out = None if first_layer is None else _injected_forward(mine, first_layer, x0, step, at_x0, fuse_pool)
            if out is not None and not _rows_agree(net, x0, step, out, precision):
                out = None   # this network reads its input another way too (a branch its weights turn on)
            if out is None:
                out = net(probes(x0, step))
    out = out.reshape(2 * D).float()
    return (out[:D] - out[D:]) / (2 * step)


def _rows_agree(net, x0, step, out, precision):
    """Whether the shortcut's outputs `out` at six of the 2D probes (the first, middle and last of each sign) are
    the network's own there (within rounding: 1e-4 of the outputs' scale in float32, 5e-2 in bfloat16): checked on every
    network, so that a branch that reads the input only in some networks (gated by a weight) is seen (the
    fourth adversarial probe of issue 58); six plain forward passes against 2D."""
    D = x0.numel()
    rows = sorted({0, D // 2, D - 1, D, D + D // 2, 2 * D - 1})
    plain = torch.cat([net(_probe_rows(x0, step, r, r + 1)).reshape(-1) for r in rows]).float()
    tol = 5e-2 if precision != "float32" else FAST_PATH_TOL   # bfloat16: a few of its 2^-8 roundings
    return _same_outputs(out.reshape(2 * D)[rows], plain, tol, max(float(plain.abs().max()),
                                                                   float(out.float().abs().max())))


def _same_outputs(fast: torch.Tensor, plain: torch.Tensor, tol: float, scale: float) -> bool:
    """Whether the shortcut's outputs `fast` are finite and the plain probes' `plain` within `tol` of `scale`."""
    fast = fast.reshape(-1).float()
    return bool(torch.isfinite(fast).all()) and float((fast - plain.reshape(-1).float()).abs().max()) <= tol * scale


# Inputs of more than about 5,800 entries (8 D^2 bytes of probes past this) run the plain probes in blocks of
# `PROBE_BLOCK` bytes: a 1 x 128 x 128 model took 22 GB at once (the third adversarial pass of issue 58). The
# registry's inputs (D <= 3,072) run all their probes at once, as before.
PROBES_AT_ONCE = 256 * 2 ** 20
PROBE_BLOCK = 16 * 2 ** 20


def _probe_rows(x0: torch.Tensor, step: float, a: int, b: int) -> torch.Tensor:
    """Rows `a .. b - 1` of `probes(x0, step)` (x0 + h e_i for i < D, then x0 - h e_i), built alone."""
    D = x0.numel()
    i = torch.arange(a, b, device=x0.device)
    rows = x0.reshape(1, D).repeat(b - a, 1)
    rows[torch.arange(b - a, device=x0.device), i % D] += torch.where(i < D, step, -step).to(x0.dtype)
    return rows.reshape(b - a, *x0.shape)


FEW_CHANNELS = 16   # below this many channels, a 2x2 max pooling runs as strided maxima (`_StridedMax`)


class _StandIn(nn.Module):
    """A module that stands in for another (`stands_for`) while the secant runs: an attribute it lacks is that
    module's (a model reading `self.fc.in_features` or a pooling's `kernel_size` reads them through it)."""

    def stands_for(self, module: nn.Module) -> None:
        self.__dict__["_inner"] = module   # not a submodule: its parameters stay the layer's own

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            inner = self.__dict__.get("_inner")
            if inner is None:
                raise
            return getattr(inner, name)


class _StridedMax(_StandIn):
    """`pool` (an `nn.MaxPool2d`) on maps of fewer than `FEW_CHANNELS` channels, when it is a plain 2x2 stride-2
    pooling, as the maximum of the four strided quarters of the maps: the same values (a maximum is exact), about
    twice as fast there on a CPU as ATen's channels-last pooling, which vectorises over the channels (LeNet's
    first pooling: 6 channels). Otherwise `pool` itself."""

    def __init__(self, pool):
        super().__init__()
        self.pool = pool
        self.stands_for(pool)
        k, st, pad, dil = (pool.kernel_size, pool.stride, pool.padding, pool.dilation)
        self.plain = (k in (2, (2, 2)) and st in (2, (2, 2)) and pad in (0, (0, 0)) and dil in (1, (1, 1))
                      and not pool.ceil_mode and not pool.return_indices)

    def pools(self, channels):
        """True when maps of `channels` channels go through the strided maxima."""
        return self.plain and channels < FEW_CHANNELS

    def forward(self, x):
        if not (x.dim() == 4 and self.pools(x.shape[1])):
            return self.pool(x)
        x = x[:, :, : x.shape[2] // 2 * 2, : x.shape[3] // 2 * 2]
        return _quarter_max(x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2], x[:, :, 1::2, 0::2], x[:, :, 1::2, 1::2])


def _quarter_max(a, b, c, d):
    """The maximum of a 2x2 window's four values, in the one order every path here takes."""
    return torch.maximum(torch.maximum(a, b), torch.maximum(c, d))


def own_copy(net: nn.Module) -> nn.Module | None:
    """A copy of `net`'s modules that shares its parameters and buffers (no tensor of theirs is copied), for the
    secant's shortcuts to swap modules of: the caller's network is never changed, even for a moment. None for
    a model that cannot be copied (it then runs the plain probes)."""
    shared = {id(t): t for t in (*net.parameters(), *net.buffers())}
    try:
        mine = copy.deepcopy(net, shared)
    except Exception:   # noqa: BLE001 - any model's attribute may refuse a copy; the plain probes need none
        return None
    theirs = {id(m) for m in net.modules()}
    return None if any(id(m) in theirs for m in mine.modules()) else mine   # a module that copies as itself


@contextlib.contextmanager
def pool_before_relu(net: nn.Module, x0: torch.Tensor, on: bool = True):
    """Within the block, every `nn.ReLU` that an `nn.MaxPool2d` directly follows in an `nn.Sequential` of `net`
    runs after it instead: max pooling and ReLU commute exactly (relu(max(a, b)) = max(relu(a), relu(b)), both
    pick one of the values), so the outputs are bitwise the same and the ReLU reads a quarter of the elements
    (2x2 pooling); that pooling runs as `_StridedMax`. Only where `net(x0)` is bitwise the same both ways (a model
    that reads a Sequential's layers one by one is left alone); the modules are put back on exit. Yields
    `net(x0)` where it swapped (None otherwise, and with `on` False)."""
    pairs = [] if not on else [
        (seq, a, b, seq._modules[a], seq._modules[b]) for seq in net.modules() if type(seq) is nn.Sequential
        for a, b in zip(list(seq._modules), list(seq._modules)[1:])
        if type(seq._modules[a]) is nn.ReLU and type(seq._modules[b]) is nn.MaxPool2d]

    def swap(on):
        for seq, a, b, relu, pool in pairs:
            seq._modules[a], seq._modules[b] = (_StridedMax(pool), relu) if on else (relu, pool)

    before = net(x0[None]) if pairs else None
    if pairs:
        swap(True)
        if not _same_output(net, x0, before):
            swap(False)
            pairs, before = [], None
    try:
        yield before
    finally:
        swap(False)


COMPILED_KEPT = 4   # compiled copies kept (per architecture, device, precision and thread count), least recent out
SUPPORTS_KEPT = 32   # convolution geometries whose supports are kept (`_conv_support`, `_pooled_support`)
_COMPILED, _SUPPORTS, _POOLED = OrderedDict(), OrderedDict(), OrderedDict()


def _kept(cache: OrderedDict, key, make, limit: int):
    """`cache[key]`, made by `make()` when absent; past `limit` entries the least recently used one is dropped."""
    if key not in cache:
        cache[key] = make()
        while len(cache) > limit:
            cache.popitem(last=False)
    cache.move_to_end(key)
    return cache[key]


def compiled_secant_gradient(net: nn.Module, x0: torch.Tensor, step: float, precision: str = "float32") -> torch.Tensor:
    """`secant_gradient` of `net` through `torch.compile` (inductor, whole graph): the networks of one
    architecture share one compiled copy, into which each one's weights are copied, so only the first
    pays the compilation (seconds). The probes go through every layer, the first one included. The
    kernels differ from eager PyTorch's, so its numbers are not `secant_gradient`'s (cosine >= 0.99
    per network, `benchmarks/nad_throughput.py`): the estimate's settings say `compiled`. Measured on
    a 2-core CPU in bfloat16: 1.1x (VGG-11) to 2.7x (DenseNet-121) faster than eager."""
    loose = next((f"{n}.{k}" if n else k for n, m in net.named_modules() for k, v in vars(m).items()
                  if isinstance(v, torch.Tensor)), None)
    if loose is not None:   # the compiled copy would keep network 0's: only parameters and buffers are copied in
        raise InputError(f"model must hold its tensors as parameters or buffers for compiled=True (register_buffer); "
                         f"{loose!r} is a plain attribute, which the compiled copy would keep from the first network")
    if x0.device.type == "cpu" and not has_compiler():
        raise RuntimeError("the compiled secant needs a C++ compiler on the CPU (torch.compile writes C++ "
                           "kernels): apt-get install g++, or compiled=False")

    def compile_copy():
        base = copy.deepcopy(net)
        if precision != "float32":
            base = base.to(memory_format=torch.channels_last)  # ty: ignore[no-matching-overload]
        return base, torch.compile(base, fullgraph=True, dynamic=False)

    key = (repr(net), tuple(x0.shape), str(x0.device), precision, torch.get_num_threads())
    base, forward = _kept(_COMPILED, key, compile_copy, COMPILED_KEPT)
    D = x0.numel()
    with torch.no_grad():
        for mine, theirs in ((base.parameters(), net.parameters()), (base.buffers(), net.buffers())):
            for a, b in zip(mine, theirs, strict=True):
                a.copy_(b)
        with autocast(x0.device, precision), torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
            out = forward(probes(x0, step))
    out = out.reshape(2 * D).float()
    return (out[:D] - out[D:]) / (2 * step)


def has_compiler() -> bool:
    """True when a C++ compiler is on the PATH (`torch.compile` on the CPU needs one)."""
    import shutil

    return any(shutil.which(c) for c in ("g++", "c++"))


def _is_linear_first(layer, x0):
    """True for a plain `nn.Linear` or `nn.Conv2d` (their own classes: a subclass may compute otherwise, as timm's
    weight-standardised `StdConv2d` does) without hooks, whose every input entry meets a kernel entry at most once
    per output position (zero padding; circular with a kernel, dilated, no larger than the image), so that the layer is
    linear in its input as `_linear_probe_outputs` computes it."""
    if layer._forward_hooks or layer._forward_pre_hooks or nn.modules.module._global_forward_hooks \
            or nn.modules.module._global_forward_pre_hooks:
        return False
    if type(layer) is nn.Linear:
        return True
    if type(layer) is not nn.Conv2d or layer.groups != 1 or x0.dim() != 3:
        return False
    span = [d * (k - 1) + 1 for k, d in zip(layer.kernel_size, layer.dilation)]   # the kernel's reach, dilated
    fits = all(r <= s for r, s in zip(span, x0.shape[1:]))
    return layer.padding_mode == "zeros" or (layer.padding_mode == "circular" and fits)


def _is_input(inp, x, rows):
    """True when `inp` is `x` itself (`rows` copies of one point, stride 0) reshaped, not permuted."""
    return (isinstance(inp, torch.Tensor) and inp.data_ptr() == x.data_ptr() and inp.shape[0] == rows
            and (rows == 1 or inp.stride(0) == 0) and inp[0].is_contiguous() and inp[0].numel() == x[0].numel())


def first_linear_layer(net: nn.Module, x0: torch.Tensor) -> str | None:
    """The name of the first layer of `net` if it is a `Linear` or `Conv2d` applied to the input
    itself (reshapes such as `Flatten` aside), else None. Looked for on a copy (`own_copy`): `net` is not
    changed, hooks included."""
    mine = own_copy(net)
    return None if mine is None else _first_linear_layer(mine, x0)


def _first_linear_layer(net, x0):
    """`first_linear_layer` on `net` itself (hooks and stand-ins come and go on its modules)."""
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
    if not (_is_linear_first(layer, x0) and _is_input(inp, x0[None], 1)):
        return None
    if layer is net:
        return ""
    name = names[layer]
    return name if _graph_reads_once(net, name) and _sole_reader(net, name, x0) else None


_SHAPE_READS = {"shape", "ndim", "dtype", "device"}   # attributes of the input that carry no value of it
_SHAPE_METHODS = {"size", "dim"}
_RESHAPE_METHODS = {"flatten", "reshape", "view", "contiguous"}


def _graph_reads_once(net, name):
    """True when `torch.fx` traces `net` and its input's values reach only the module `name` (through reshapes;
    reads of its shape aside), whatever the weights: the secant's shortcut is then exact (the fourth adversarial
    pass of issue 58 switched a second reader of the input on by a weight of some networks only). False where the
    input reaches anything else, or where the model does not trace (Python control flow on values): the plain
    probes."""
    import torch.fx

    if any(m._forward_hooks or m._forward_pre_hooks for m in net.modules()):   # a hook may read what fx does not see
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = torch.fx.symbolic_trace(net).graph
    except Exception:   # noqa: BLE001 - any model may refuse a symbolic trace; the plain probes need none
        return False
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    todo, seen = inputs[:1], set()
    while todo:
        for user in todo.pop().users:
            op, target = user.op, user.target
            if op == "call_module" and target == name or op == "call_method" and target in _SHAPE_METHODS or (
                    op == "call_function" and target is getattr and user.args[1] in _SHAPE_READS):
                continue
            if not (op == "call_method" and target in _RESHAPE_METHODS
                    or op == "call_function" and target in (torch.flatten, torch.reshape)
                    or op == "call_module" and isinstance(net.get_submodule(target), RESHAPES)):
                return False
            if user not in seen:
                seen.add(user)
                todo.append(user)
    return bool(inputs)


FAST_PATH_TOL = 1e-4   # the first layer by linearity must give the plain probes' outputs within this, relative to them


def checked_first_layer(net: nn.Module, x0: torch.Tensor, step: float) -> str | None:
    """`first_linear_layer`, where the shortcut's outputs at all 2D probes are the network's own (the plain probes,
    within `FAST_PATH_TOL` of their scale), else None: a model whose input reaches the output another way than the
    checks of `_sole_reader` see (a branch reading the input's argmax, or its values once NaN are cleaned) runs
    the plain probes (the third adversarial pass of issue 58). One plain secant: a chunk's first network pays it;
    every network then checks six probes (`_rows_agree`)."""
    mine = own_copy(net)
    layer = None if mine is None else _first_linear_layer(mine, x0)
    if mine is None or layer is None:
        return None
    x0 = x0.clone()
    with torch.no_grad():
        with pool_before_relu(mine, x0) as at_x0:
            fast = _injected_forward(mine, layer, x0, step, at_x0)
        plain = net(probes(x0, step)).reshape(-1).float()
    same = fast is not None and _same_outputs(fast, plain, FAST_PATH_TOL, float(plain.abs().max()))
    return layer if same else None


class _Feeds(_StandIn):
    """Stands in for `layer` while `_sole_reader` runs: fed the stand-in `X`, it returns `layer` of the real
    inputs `real`; fed anything else, it is `layer`."""

    def __init__(self, layer, X, real):
        super().__init__()
        self.layer, self.X, self.real, self.fired = layer, X, real, False
        self.stands_for(layer)

    def forward(self, inp):
        if inp.data_ptr() != self.X.data_ptr():
            return self.layer(inp)
        self.fired = True
        return self.layer(self.real.reshape(inp.shape))   # as the model reshaped its input (a Flatten)


# The stand-ins' fills: NaN, small values of either sign, and values at and past the secant's probes (h = 100) of
# either sign, so that a read of the input that is constant over a range of values (a mask |x| > 50) is seen too.
SOLE_READER_FILLS = (float("nan"), 1.0, -1.0, 100.0, -100.0, 1e4, -1e4)


def _sole_reader(net, name, x0):
    """True when the layer `name` is the only part of `net` that reads its input's values, as the secant's
    shortcut assumes (`_injected_forward`): `net` on two probes' stand-ins filled with `SOLE_READER_FILLS`, the layer
    handed the real probes, gives the same outputs each time (bitwise), and no NaN. A second branch, a skip from the
    input, a mask `(x > 0)` or `nan_to_num(x)` of it each read the fill (the second adversarial pass of issue 58)."""
    layer, D = net.get_submodule(name), x0.numel()
    real = probes(x0, 1.0)[[0, D]]
    outs = []
    for fill in SOLE_READER_FILLS:
        X = torch.full_like(x0[None], fill).expand(2, *x0.shape)
        feeds = _Feeds(layer, X, real)
        net.set_submodule(name, feeds)
        try:
            with torch.no_grad():
                outs.append(net(X))
        except Exception:   # noqa: BLE001 - a model that reads the stand-in's attributes or checks its input
            return False
        finally:
            net.set_submodule(name, layer)
        if not feeds.fired:
            return False
    return not torch.isnan(outs[0]).any() and all(torch.equal(outs[0], o) for o in outs[1:])


class _Injected(_StandIn):
    """Stands in for `layer` (and the `_StridedMax` `pool` after it, if any) while `net` runs on the probes:
    fed the probes' stand-in `X`, it returns the layer's outputs by linearity (`_linear_probe_outputs`,
    pooled: `_pooled_probe_outputs`), computed in float32; a convolution's maps are handed on in autocast's
    dtype, as the convolution would return them (ResNet-18 in bfloat16: its first BatchNorm on half the
    bytes, 1.2x the secant). Fed anything else, it is `layer` (then `pool`)."""

    def __init__(self, layer, X, x0, step, pool=None):
        super().__init__()
        self.layer, self.X, self.x0, self.step, self.pool, self.fired = layer, X, x0, step, pool, False
        self.stands_for(layer)

    def forward(self, inp):
        conv_shape = isinstance(self.layer, nn.Conv2d) and tuple(inp.shape[1:]) != tuple(self.x0.shape)
        if conv_shape or not _is_input(inp, self.X, len(self.X)):   # (the input reshaped: another geometry)
            out = self.layer(inp)
            return out if self.pool is None else self.pool(out)
        self.fired = True
        if self.pool is None:
            out = _linear_probe_outputs(self.layer, self.x0, self.step)
            if isinstance(self.layer, nn.Linear):   # the shape the layer gives its input: (2D, ..., out)
                out = out.reshape(*inp.shape[:-1], out.shape[-1])
        else:
            out = _pooled_probe_outputs(self.layer, self.x0, self.step)
        dev = out.device.type   # maps, as autocast's convolution returns them (a Linear's few outputs stay float32)
        if isinstance(self.layer, nn.Conv2d) and torch.is_autocast_enabled(dev):
            return out.to(torch.get_autocast_dtype(dev))
        return out


def _injected_forward(net, name, x0, step, at_x0=None, fuse_pool=True):
    """`net` on the 2D probes with the outputs of its layer `name` computed by linearity; None if that
    layer turns out not to be fed the input, or the input reaches the output another way too (then the caller
    runs the plain probes). `at_x0`: `net(x0)` from `pool_before_relu` where it swapped (a pooling it put there
    is then fused with the layer, `_pooled_probe_outputs`, unless `fuse_pool` is False)."""
    layer = net.get_submodule(name)
    if not _is_linear_first(layer, x0):
        return None
    if name == "":   # the network is that layer
        return _linear_probe_outputs(layer, x0, step)
    D = x0.numel()
    # A stand-in of the probes, no memory, never read by the layer it feeds: NaN, so a model that reads its input
    # anywhere else (a second branch, a skip from the input) gives NaN, and the caller runs the plain probes.
    X = torch.full_like(x0[None], float("nan")).expand(2 * D, *x0.shape)
    seq, key, pool = _pool_after(net, name, layer, at_x0 if fuse_pool else None)
    injected = _Injected(layer, X, x0, step, pool)
    net.set_submodule(name, injected)
    if pool is not None:
        seq._modules[key] = nn.Identity()
    try:
        if pool is not None and not _same_output(net, x0, at_x0):   # a model that reads the layer's own output
            injected.pool, seq._modules[key] = None, pool
        out = net(X)
    except Exception:   # noqa: BLE001 - a model that checks its input's values or reads its layers' attributes
        out = None
    finally:
        net.set_submodule(name, layer)
        if pool is not None:
            seq._modules[key] = pool
    return out if out is not None and injected.fired and not torch.isnan(out).any() else None


def _pooled_support(conv, x0):
    """For `_pooled_probe_outputs` (kept per geometry, as `_conv_support`): which (i, p) of the support
    the 2x2 pooling reads, the (probe i, window) pairs they fall in as flat rows i * Q + window, each
    pair's four corners (flat positions, `_quarter_max`'s order) and the (pair, corner) row of each."""
    return _kept(_POOLED, _support_key(conv, x0), lambda: _pooled_windows(conv, x0), SUPPORTS_KEPT)


def _pooled_windows(conv, x0):
    lin, _, (H, W) = _conv_support(conv, x0)
    P, (H2, W2) = H * W, (H // 2, W // 2)
    Q = H2 * W2
    i, y, x = lin // P, lin % P // W, lin % P % W
    read = (y < 2 * H2) & (x < 2 * W2)
    i, y, x = i[read], y[read], x[read]
    windows, slot = torch.unique(i * Q + y // 2 * W2 + x // 2, return_inverse=True)
    wy, wx = windows % Q // W2, windows % Q % W2
    corners = torch.stack([(2 * wy + dy) * W + 2 * wx + dx for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1))], 1)
    return read, windows, corners.reshape(-1), slot * 4 + y % 2 * 2 + x % 2


def _pool_after(net, name, layer, at_x0):
    """`(sequential, key, pool)` when the `_StridedMax` `pool` (put there by `pool_before_relu`, which gave
    `at_x0`) follows the convolution `name` in an `nn.Sequential` and is a plain 2x2 pooling of its maps (any
    number of channels: LeNet's 6, VGG-11's 64), else `(None, None, None)`."""
    parent, _, leaf = name.rpartition(".")
    seq = net.get_submodule(parent)
    keys = list(seq._modules) if type(seq) is nn.Sequential else []
    key = keys[keys.index(leaf) + 1] if leaf in keys[:-1] else None
    pool = None if key is None else seq._modules[key]
    if (at_x0 is not None and isinstance(layer, nn.Conv2d) and isinstance(pool, _StridedMax)
            and pool.plain):
        return seq, key, pool
    return None, None, None


def _same_output(net, x0, before):
    """True when `net(x0)` is bitwise `before` (False where it fails: a model that reads its Sequential's layers
    by position, or their attributes)."""
    try:
        return torch.equal(net(x0[None]), before)
    except Exception:   # noqa: BLE001
        return False


def _linear_probe_outputs(layer, x0, step):
    """`layer(x0 + h e_i)` then `layer(x0 - h e_i)` for all i, by linearity."""
    w, D = layer.weight, x0.numel()
    if isinstance(layer, nn.Linear):
        base = layer(x0.reshape(1, -1))
        return torch.cat([base + step * w.T, base - step * w.T])
    base, taps, lin, out_hw = _conv_taps(layer, x0)
    P, C = base.shape
    out = base.expand(2 * D, P, C).contiguous().view(2 * D * P, C)
    out.index_add_(0, lin, taps, alpha=step)
    out.index_add_(0, lin + D * P, taps, alpha=-step)
    return out.view(2 * D, *out_hw, C).permute(0, 3, 1, 2)               # channels-last memory layout


def _conv_taps(conv, x0):
    """`(base, taps, lin, out_hw)`: `conv(x0)` as (P, C) rows (P = output positions), the kernel entry
    (nnz, C) where each basis vector e_i reaches each position p, and those (i, p) as flat indices i * P + p."""
    w = conv.weight
    lin, k, out_hw = _conv_support(conv, x0)
    C, P = w.shape[0], out_hw[0] * out_hw[1]
    taps = w.reshape(C, -1)[:, k].T
    base = torch.zeros(P, C, dtype=w.dtype, device=w.device)
    base.index_add_(0, lin % P, taps * x0.reshape(-1)[lin // P, None])   # conv(x0) without bias
    if conv.bias is not None:
        base += conv.bias
    return base, taps, lin, out_hw


def _pooled_probe_outputs(conv, x0, step):
    """`_StridedMax` of `_linear_probe_outputs(conv, x0, step)` without the 2D full maps: x0's pooled map
    copied for every probe, and the windows that e_i reaches recomputed for probe i from the same sums
    (`index_add_` of the same rows) and maxima (`_quarter_max`): bitwise the same values, a quarter of
    the memory (LeNet: 9.6 of 38 MB; VGG-11: 134 of 537 MB, and no pooling pass over the full maps)."""
    base, taps, _, (H, W) = _conv_taps(conv, x0)
    D, C, (H2, W2) = x0.numel(), base.shape[1], (H // 2, W // 2)
    Q = H2 * W2
    grid = base.view(H, W, C)[: 2 * H2, : 2 * W2]
    pooled = _quarter_max(grid[0::2, 0::2], grid[0::2, 1::2], grid[1::2, 0::2], grid[1::2, 1::2])
    out = pooled.reshape(1, Q, C).expand(2 * D, Q, C).contiguous().view(2 * D * Q, C)
    read, windows, corners, slot = _pooled_support(conv, x0)
    taps = taps[read]
    for half, alpha in ((0, step), (1, -step)):
        vals = base[corners]                              # (4 n, C): x0's values at the windows' corners
        vals.index_add_(0, slot, taps, alpha=alpha)
        v = vals.view(-1, 4, C)
        out[half * D * Q + windows] = _quarter_max(v[:, 0], v[:, 1], v[:, 2], v[:, 3])
    return out.view(2 * D, H2, W2, C).permute(0, 3, 1, 2)  # channels-last memory layout


def _support_key(conv, x0):
    """What `_conv_support` depends on: the input's shape and device, the convolution's geometry."""
    return (tuple(x0.shape), conv.kernel_size, conv.stride, conv.padding, conv.dilation, conv.padding_mode,
            str(x0.device))


def _conv_support(conv, x0):
    """Where each basis vector e_i reaches the output of `conv`: flat (i, p) indices, kernel entries."""
    return _kept(_SUPPORTS, _support_key(conv, x0), lambda: _support(conv, x0), SUPPORTS_KEPT)


def _support(conv, x0):
    D = x0.numel()
    K = conv.in_channels * conv.kernel_size[0] * conv.kernel_size[1]
    eye = torch.eye(D, dtype=torch.float64, device=x0.device).reshape(D, *x0.shape)
    kernel = torch.arange(1, K + 1, dtype=torch.float64, device=x0.device).reshape(
        1, conv.in_channels, *conv.kernel_size)
    hit = conv._conv_forward(eye, kernel, None)                      # k + 1 where e_i meets kernel entry k at p
    out_hw = tuple(hit.shape[-2:])
    hit = hit.round().long().reshape(D, -1)
    rows, pos = hit.nonzero(as_tuple=True)
    return rows * hit.shape[1] + pos, hit[rows, pos] - 1, out_hw


# ----------------------------------------------------------------------------- autograd and hessian

def autograd_gradients(nets: Sequence[nn.Module], x0: torch.Tensor) -> torch.Tensor:
    """Exact input gradients of `nets` at `x0`, shape (len(nets), D): vmapped over the networks.

    On the CPU, networks with buffers (BatchNorm) or more than `VMAP_MAX_PARAMS` parameters go
    one at a time: there vmap over their convolutions is slower than plain backward passes
    (VGG-11: 0.24 s against 0.015 s per network; `benchmarks/nad_throughput.py`)."""
    if one_at_a_time(nets[0], x0):
        return torch.stack([autograd_one(net, x0) for net in nets])
    try:
        params, buffers = stack_module_state(nets)

        def f(p, b, x):   # network 0 runs each network's stacked parameters in place of its own
            return functional_call(nets[0], (p, b), (x[None],)).reshape(())

        return vmap(grad(f, argnums=2), in_dims=(0, 0, None))(params, buffers, x0).reshape(len(nets), -1)
    except (RuntimeError, NotImplementedError, ValueError):  # an op without a batching rule: one at a time
        return torch.stack([autograd_one(net, x0) for net in nets])


def one_at_a_time(net: nn.Module, x0: torch.Tensor) -> bool:
    """True where `autograd_gradients` runs networks like `net` one at a time (a CPU, and buffers or more
    than `VMAP_MAX_PARAMS` parameters): each gradient is then its network's alone, whatever the batch."""
    return x0.device.type == "cpu" and (next(net.buffers(), None) is not None
                                        or sum(p.numel() for p in net.parameters()) > VMAP_MAX_PARAMS)


def autograd_one(net: nn.Module, x0: torch.Tensor) -> torch.Tensor:
    x = x0[None].clone().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(net(x).sum(), x)
    return g.reshape(-1)


def mixed_gram(net: nn.Module, x0: torch.Tensor) -> torch.Tensor:
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


