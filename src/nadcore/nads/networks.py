"""The networks of an estimate: a model (registry name, "module:callable", "timm:NAME" or a factory)
as a factory of fresh one-output networks, checked before any is built; network `i` seeded by its
index; the shared evaluation point x0."""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from nadcore import checks, extras
from nadcore import models as registry
from nadcore.checks import InputError
from nadcore.nads.gradients import secant_gradient
from nadcore.nads.settings import eval_point_name
from nadcore.seeds import derive

if TYPE_CHECKING:
    from collections.abc import Sequence

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
            raise InputError(f"model must be one of {', '.join(registry.names())}, \"module:callable\", "
                             f"\"timm:NAME\" or a zero-argument factory; got {model!r}")
        channels = input_shape[0] if len(input_shape) == 3 else 1
        registry.check_pooling(model, pooling)
        return (lambda: registry.build(model, in_channels=channels, num_classes=1, pooling=pooling)), model
    if pooling is not True:
        raise ValueError("pooling applies to registry names only; build it into the factory instead")
    if isinstance(model, nn.Module) or not callable(model):
        raise InputError("model must be a registry name or a zero-argument factory returning a fresh "
                         f"nn.Module (e.g. `lambda: MyNet()`), not {type(model).__name__}")
    name = getattr(model, "default_name", getattr(model, "__qualname__", type(model).__name__))
    return model, (name if NAME.fullmatch(name) else None)


@dataclass(frozen=True)
class Factory:
    """A zero-argument factory of fresh networks (`build`) named by its `source` ("module:callable" or
    "timm:NAME", what the settings record) and `default_name` (what its results are stored under)."""
    build: Callable[[], object]   # an nn.Module: `network` checks it
    source: str
    default_name: str

    def __call__(self):
        return self.build()


def model_factory(spec: str, input_shape: Sequence[int] = (1, 32, 32)) -> Factory:
    """A zero-argument factory of fresh networks for `spec`, checked before any network is built:

    - `"module:callable"`: an importable class or factory (the current folder on `sys.path`, as
      `python` puts it there), called with no argument;
    - `"timm:NAME"`: any timm model, `timm.create_model(NAME, num_classes=1, in_chans=C,
      img_size=(H, W) where the model takes one)` for `input_shape = (C, H, W)`.

    Returns a `Factory`: its `source` is `spec`, its `default_name` the class's name, `module.function` for a
    factory function (`_stored_name`), or NAME.
    Raises a one-line ValueError naming `model` (or `input_shape`)."""
    m = SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if m is None:
        raise InputError(f"model must be \"module:callable\" or \"timm:NAME\" (or a registry name); "
                         f"got {spec!r}")
    module, attr = m.groups()
    if module == "timm":
        return _timm_factory(attr, input_shape)
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())   # as `python` does: the current folder's modules import
    try:
        obj = importlib.import_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as err:   # a module that does not import: ImportError or whatever it raised
        raise InputError(f"model must be an importable module:callable (module {module!r} does not import: "
                         f"{type(err).__name__}: {checks.first_line(err)}); got {spec!r}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"model must be an importable module:callable "
                             f"({getattr(obj, '__name__', module)!r} has no attribute {part!r}); got {spec!r}")
        obj = getattr(obj, part)
    if isinstance(obj, nn.Module) or not callable(obj):
        raise InputError(f"model must name a class or zero-argument factory returning a fresh nn.Module (not "
                         f"{type(obj).__name__}); got {spec!r}")

    return Factory(obj, spec, _stored_name(module, attr, obj))


def _stored_name(module, attr, obj):
    """What a "module:callable" model's results are stored under: a class's name (`StrideNet`), and for a factory
    function its module too (`mymodels.build`, not a bare `build` that another module's factory would share)."""
    last = attr.split(".")[-1]
    if isinstance(obj, type):
        return last
    name = f"{module.split('.')[-1]}.{last}"
    return name if NAME.fullmatch(name) else last


def _timm_factory(name, input_shape):
    spec = f"timm:{name}"
    try:
        timm = extras.require("timm", "zoo", "a timm:NAME model")
    except extras.MissingExtra as err:
        raise InputError(f"model must be a model of an installed timm ({err}); got {spec!r}") from None
    if not timm.is_model(name):
        import difflib

        close = difflib.get_close_matches(name, timm.list_models(), n=3)
        raise InputError(f"model must be a timm model name (timm {timm.__version__} has no {name!r}"
                         + (f"; close: {', '.join(close)}" if close else "") + f"); got {spec!r}")
    if len(input_shape) != 3:
        raise InputError(f"input_shape must be (C, H, W) for a timm model; got {tuple(input_shape)!r}")
    C, H, W = input_shape
    kwargs = {"num_classes": 1, "in_chans": C}
    sized = {**kwargs, "img_size": H if H == W else (H, W)}
    with torch.random.fork_rng(devices=[]), torch.device("meta"):   # which arguments it takes: no weights made
        try:
            timm.create_model(name, **sized)
            kwargs = sized
        except TypeError as err:
            if "img_size" not in str(err):
                raise InputError(f"model must be a timm model buildable with num_classes=1, in_chans={C} "
                                 f"({type(err).__name__}: {checks.first_line(err)}); got {spec!r}") from None
        except Exception:   # noqa: BLE001 - a model that cannot be built on the meta device: try it for real
            kwargs = sized

    return Factory(partial(timm.create_model, name, **kwargs), spec, name)


def one_output_factory(model: str | Callable[[], nn.Module], input_shape: Sequence[int] = (1, 32, 32),
                       pooling: bool | str = True,
                       x0: torch.Tensor | None = None) -> tuple[Callable[[], nn.Module], str | None]:
    """`(factory, name)` for `model` as `estimate` takes it (a registry name, "module:callable",
    "timm:NAME" or a zero-argument factory): the factory builds a fresh network with one output,
    lazy modules materialised by one forward pass at `x0` (default: zeros); `name` is None for a
    factory without a usable name (a lambda). Checked before any network is built (one-line
    ValueErrors naming `model`)."""
    input_shape = tuple(int(s) for s in input_shape)
    factory, name = _factory(model, input_shape, pooling)
    return _materialising(factory, torch.zeros(input_shape) if x0 is None else x0), name


def model_source(model: str | Callable[[], object]) -> str:
    """What the settings of a model that is not a registry name record as its source: the
    "module:callable" or "timm:NAME" text, a factory's `source`, or its module and qualified name."""
    if isinstance(model, str):
        return model
    return getattr(model, "source", None) or (
        f"{getattr(model, '__module__', '?')}:{getattr(model, '__qualname__', type(model).__name__)}")


def _is_lazy(net):
    return any(nn.parameter.is_lazy(p) for p in net.parameters()) or any(
        nn.parameter.is_lazy(b) for b in net.buffers())


def forward_checked(net: nn.Module, x0: torch.Tensor, copies: int = 1, points: torch.Tensor | None = None
                    ) -> torch.Tensor:
    """`net` on a batch of `copies` of `x0`, or on the batch `points` of inputs of its shape (no gradient, eval mode,
    mode restored); a shape mismatch is a one-line ValueError naming `input_shape` and the shape tried, any other
    failure one naming `model`."""
    was = net.training
    net.eval()
    given = x0[None].expand(copies, *x0.shape) if points is None else points
    batch = given.clone()
    try:
        with torch.no_grad():
            out = net(batch)
        if not torch.equal(batch, given):
            raise InputError("model must leave its input as it is (an in-place operation on x, such as x.relu_() "
                             "or x.mul_(2), would change the secant's probes and the evaluation point)")
        return out
    except InputError:
        raise
    except (RuntimeError, ValueError, TypeError, IndexError, AssertionError) as err:
        if checks.out_of_memory(err):
            raise
        if isinstance(err, RecursionError):
            raise InputError("model must run its forward pass without recursing past Python's limit (a forward that "
                             "calls itself)") from None
        raise InputError(f"input_shape must be the model's input shape (C, H, W): a batch of shape "
                         f"{tuple(batch.shape)} (input_shape {tuple(x0.shape)}) failed in its forward pass "
                         f"({type(err).__name__}: {checks.first_line(err)})") from None
    except KeyboardInterrupt:
        raise
    except BaseException as err:   # the model's own bug (KeyError, ZeroDivisionError, sys.exit, its own kinds)
        if checks.out_of_memory(err):
            raise
        raise InputError(f"model must run its forward pass on a batch of shape {tuple(batch.shape)}; it raised "
                         f"{type(err).__name__}: {checks.first_line(err)}") from None
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


def describe(factory: Callable[[], object], seed: int, index: int, x0: torch.Tensor,
             source: str | None, origin: object = None, step: float = 100.0) -> dict[str, Any] | None:
    """Build network `index` (seeded as in the estimate) and check it before any chunk: it is an
    `nn.Module`, takes `x0` (a shape mismatch names `input_shape`), and has one output. Returns
    the model's description for the settings of a model that is not a registry name (`source`,
    `model_source`; None for a registry name, whose settings hold its name only); `origin`, the model as the caller
    gave it, adds its factory's module to the code digest (`code_digest`); `step`: the secant's h, whose probes
    the behaviour digest covers (`behaviour`)."""
    net = network(factory, seed, index, torch.device("cpu"))
    out = forward_checked(net, x0)
    _one_output(out)
    if not torch.isfinite(out).all():
        raise InputError(f"model must give finite outputs and gradients at the evaluation point: network {index}'s "
                         f"output there is {out.item()}")
    if next(net.parameters(), None) is None:
        raise InputError("model must have parameters: its networks would all be one fixed function, with no "
                         "random initialisation to average over")
    pair = forward_checked(net, x0, copies=2)
    if not isinstance(pair, torch.Tensor) or pair.numel() != 2:
        raise InputError(f"model must map a batch of B inputs to B outputs; a batch of 2 gave "
                         f"{tuple(pair.shape) if isinstance(pair, torch.Tensor) else type(pair).__name__}")
    points = probe_points(x0)
    at = forward_checked(net, x0, points=points)
    alone = torch.cat([forward_checked(net, x0, points=points[i:i + 1]).reshape(-1) for i in range(len(points))])
    if not torch.allclose(at.reshape(-1).double(), alone.double(), rtol=1e-4, atol=1e-6 * float(alone.abs().max())):
        raise InputError("model must compute each input of a batch on its own, the same every time: inputs gave "
                         "other outputs in a batch than alone (a mean over the batch or batch norm in training mode "
                         "mixes the secant's probes; a state the forward pass changes moves them)")
    if source is None:
        return None
    desc = {"source": source, "structure": hashlib.sha256(repr(net).encode()).hexdigest()[:12],
            "parameters": int(sum(p.numel() for p in net.parameters())),
            "behaviour": behaviour(net, out, at, secant_gradient(net, x0, step, None)),
            "code": code_digest(net, origin)}
    if source.startswith("timm:"):
        import timm

        desc["timm"] = timm.__version__
    return desc


def code_digest(net: nn.Module, factory: object = None) -> str | None:
    """A digest of the code that makes `net`: the source of the modules that define its classes, their bases and
    `factory` (torch's aside), and of the modules of the same project that these reach (`project_modules`: a helper
    imported from a sibling file), so that an edit anywhere in that code, a constant or a helper included, changes
    it; where Python has no source (a class defined in a notebook cell or a `-c` string), its methods' bytecode and
    constants."""
    import inspect

    classes = {base for m in net.modules() for base in type(m).__mro__}
    made_by = getattr(factory, "build", factory)   # a "module:callable" Factory: the callable it imported
    module = (made_by.split(":")[0] if isinstance(made_by, str) and ":" in made_by
              else getattr(made_by, "__module__", None))
    owners = [*(c.__module__ for c in classes), module if module in sys.modules else None]
    names = project_modules({n for n in owners if n and n.split(".")[0] not in ("torch", "functools")})
    h = hashlib.sha256()
    for name in names:
        try:
            h.update(inspect.getsource(sys.modules[name]).encode())
        except (OSError, TypeError, KeyError):   # no source: the bytecode of what it defines for this model
            for c in sorted((c for c in classes if c.__module__ == name), key=lambda c: c.__qualname__):
                for attr in sorted(vars(c)):
                    code = getattr(vars(c)[attr], "__code__", None)
                    if code is not None:
                        h.update(code.co_code + repr(code.co_consts).encode())
    return h.hexdigest()[:12]


def _file_of(name):
    """The source file of loaded module `name`, read from its own namespace (some modules, torch.ops and
    torch.classes, answer any attribute), None if it has no absolute one."""
    try:
        file = vars(sys.modules[name]).get("__file__")
    except (KeyError, TypeError):
        return None
    return Path(file).resolve() if isinstance(file, str) and Path(file).is_absolute() else None


def _is_library(file: Path) -> bool:
    """An installed package's or the standard library's file (not the user's own code)."""
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    return bool({"site-packages", "dist-packages"} & set(file.parts)) or file.is_relative_to(stdlib)


def _import_root(name):
    """The folder `name` was imported from (the one holding its top-level package or module)."""
    file = _file_of(name.split(".")[0])
    return None if file is None else file.parent.parent if file.name == "__init__.py" else file.parent


def project_modules(names: Iterable[str]) -> list[str]:
    """`names` (loaded modules) and every loaded module of the same project: whose file lies below the folder one of
    them was imported from (a helper in a sibling file, a parent package or a sibling folder, or imported inside
    `forward` once it has run), and every module these import (`_imports`) wherever it lies (a folder put on
    `sys.path`), installed packages, the standard library and nadcore aside, and the script that runs
    (`__main__`) unless it is one of `names` (it defines the model): a driver script beside the model, and an edit
    to it, leave the model's key as the command line's. Sorted."""
    names = [n for n in names if n in sys.modules]
    roots = {r for r in map(_import_root, names) if r is not None and not _is_library(r)}
    out = set(names)
    script = sys.modules.get("__main__")   # also under multiprocessing's alias, __mp_main__
    for name in list(sys.modules):   # the script that runs only where it defines the model
        file = _file_of(name)
        if sys.modules.get(name) is not script and file is not None and not _is_library(file) and any(
                file.is_relative_to(r) for r in roots):
            out.add(name)
    todo = list(out)
    while todo:   # nadcore aside: what of it moves the numbers is in the settings' versions
        for name in _imports(todo.pop()):
            file = _file_of(name)
            if name not in out and name.split(".")[0] != "nadcore" and sys.modules.get(name) is not script \
                    and file is not None and not _is_library(file):
                out.add(name)
                todo.append(name)
    return sorted(out)


def _imports(name):
    """The loaded modules that the source of module `name` imports (`import a.b`, `from a import b`, relative or
    not), read from its syntax tree; none where it has no source."""
    import ast
    import inspect

    try:
        tree = ast.parse(inspect.getsource(sys.modules[name]))
    except (OSError, TypeError, KeyError, SyntaxError, ValueError):
        return set()
    package = name if hasattr(sys.modules[name], "__path__") else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found |= {base, *(f"{base}.{a.name}" for a in node.names)}
    return {n for n in found if n in sys.modules}


def probe_points(x0: torch.Tensor) -> torch.Tensor:
    """Twelve inputs around `x0` at which a model's outputs describe what it computes: x0 +- 1 and +- 100 along two
    fixed random unit directions, and the secant's own probes x0 +- 100 e_i at the first and the last entry (a
    clamp at 50 bites there, not along a spread-out direction)."""
    d = torch.randn((2, *x0.shape), generator=torch.Generator().manual_seed(0)).to(x0.dtype)
    d = d / d.flatten(1).norm(dim=1).reshape(-1, *[1] * x0.dim())
    e = torch.zeros((2, x0.numel()), dtype=x0.dtype)
    e[0, 0] = e[1, -1] = 1.0
    e = e.reshape(2, *x0.shape)
    return torch.cat([x0 + s * d for s in (1.0, -1.0, 100.0, -100.0)] + [x0 + s * e for s in (100.0, -100.0)])


def behaviour(net: nn.Module, out: torch.Tensor, at: torch.Tensor, secant: torch.Tensor) -> str:
    """A digest of what a model computes: its parameters and buffers (its initialisation, bitwise), its outputs
    at x0 (`out`) and at the `probe_points` (`at`) to 4 significant digits, and its secant at x0 (`secant`: the
    outputs at every probe x0 +- h e_i, as their differences) to 1e-4 of its largest entry (its forward;
    rounded, so that another CPU's last bits do not change it). An edited `__init__` or `forward`, a constant or
    configuration it reads from anywhere that changes its outputs there (a clamp that bites at any of the secant's
    probes), or another version of the library that builds it, gives another digest, so the results of the model
    before the edit are not read back as its own (issue 58)."""
    h = hashlib.sha256()
    for name, t in [*net.named_parameters(), *net.named_buffers()]:
        h.update(name.encode())
        t = t.detach().cpu()
        h.update((t.float() if t.dtype == torch.bfloat16 else t).contiguous().numpy().tobytes())   # numpy has no bf16
    for o in (out, at):
        h.update(" ".join(f"{v:.4e}" for v in o.detach().double().flatten().tolist()).encode())
    g = secant.detach().double().flatten()
    scale = float(g.abs().max()) or 1.0
    h.update(f"{scale:.4e}".encode() + (g / scale).mul(1e4).round().to(torch.int64).numpy().tobytes())
    return h.hexdigest()[:12]


def eval_point_for(seed: int, input_shape: Sequence[int]) -> torch.Tensor:
    """The shared evaluation point x0 ~ N(0, I) of `seed` (drawn on the CPU: the same on every device)."""
    return torch.randn(tuple(input_shape), generator=torch.Generator().manual_seed(int(seed)))


def resolve_eval_point(eval_point: torch.Tensor | np.ndarray | None, seed: int,
                       input_shape: Sequence[int]) -> tuple[torch.Tensor, str]:
    """`(x0, name)`: the point `eval_point` (None: `eval_point_for(seed, ...)`), float32 on the CPU and
    checked against `input_shape`, and how the settings name it (`eval_point_name`, or a hash of a given one)."""
    if eval_point is None:
        return eval_point_for(seed, input_shape), eval_point_name(seed)
    x0 = torch.as_tensor(np.asarray(eval_point) if not isinstance(eval_point, torch.Tensor) else eval_point)
    x0 = x0.detach().to(torch.float32).cpu()
    if not torch.isfinite(x0).all():
        raise InputError("eval_point must hold finite numbers; got NaN or inf entries")
    if x0.dim() == len(input_shape) + 1 and x0.shape[0] == 1:
        x0 = x0[0]
    if tuple(x0.shape) != tuple(input_shape):
        raise InputError(f"eval_point must have shape {tuple(input_shape)} (input_shape) or "
                         f"(1, *input_shape); got {tuple(x0.shape)}")
    return x0, "given:" + hashlib.sha256(x0.numpy().tobytes()).hexdigest()[:12]


def network_seed(seed: int, index: int) -> int:
    """The seed of network `index` of a run: independent of how networks are batched."""
    return derive(seed, index, bits=32)


def network(factory: Callable[[], object], seed: int, index: int, dev: torch.device | str) -> nn.Module:
    """Network `index`, initialised from its own seed on the CPU (the same network on every device),
    moved to `dev`, in eval mode. Seeds the CPU generator alone: `torch.manual_seed` also queues a
    seed for every accelerator not yet initialised, with a formatted stack each (LeNet: 0.9 of 2.5 ms)."""
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(network_seed(seed, index))
        try:
            if torch.get_default_device().type == "cpu":
                net = factory()
            else:
                with torch.device("cpu"):
                    net = factory()
        except (InputError, KeyboardInterrupt):
            raise
        except BaseException as err:   # a factory that needs arguments, or fails (SystemExit, its own kinds)
            raise InputError(f"model must be a class or factory that builds a network with no arguments; calling "
                             f"it raised {type(err).__name__}: {checks.first_line(err)}") from None
    if not isinstance(net, nn.Module):
        raise ValueError(f"model factory must return an nn.Module; got {type(net).__name__}")
    if any(t.is_meta for t in (*net.parameters(), *net.buffers())):
        raise InputError("model must build its parameters and buffers on a real device (a CPU or a GPU); it built "
                         "them on 'meta', which holds no values")
    first = next(net.parameters(), None)
    if first is None or first.device != torch.device(dev):   # (`to` walks every module, even where all is)
        net = net.to(dev)
    return net.eval().requires_grad_(False)


def check_one_output(net: nn.Module, x0: torch.Tensor) -> None:
    """A one-line ValueError unless `net` has one output at `x0`."""
    with torch.no_grad():
        _one_output(net(x0[None]))


def _one_output(out):
    if not isinstance(out, torch.Tensor):
        raise InputError(f"model must return one tensor (one output per input); got a {type(out).__name__}")
    if not out.dtype.is_floating_point:   # integers round the secant away; complex parts would be dropped
        raise InputError(f"model must return a real floating-point output; got {out.dtype}")
    if out.numel() != 1:
        raise InputError(f"model must have ONE output (build it with num_classes=1); got output shape "
                         f"{tuple(out.shape)}")
