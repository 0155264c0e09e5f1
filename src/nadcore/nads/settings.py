"""An estimate's settings as one object (`EstimateSettings`): checked once when made, passed down to
every chunk, and the settings records (whose hashes are the stored keys) of its chunks and result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from nadcore import catalog, checks, versions
from nadcore.checks import InputError, check_precision
from nadcore.seeds import check_seed

if TYPE_CHECKING:
    import torch

METHODS = catalog.NAD_METHODS
MAX_INPUT = catalog.MAX_INPUT   # entries of an input (the D x D covariance)
MAX_BATCH = catalog.MAX_BATCH   # networks evaluated at once (a batch is padded with copies to this size)


def default_batch(method: str, dev: torch.device) -> int:
    """Networks per batch of `method` on the `torch.device` `dev` when `batch_size` is None."""
    return {"secant": 16, "autograd": 256 if dev.type == "cuda" else 32, "hessian": 1}[method]


def check_input_shape(shape: Any) -> tuple[int, ...]:
    """`shape` as a tuple of ints, when it is a tuple or list of positive integers of at most `MAX_INPUT` entries
    in all (the D x D covariance); else a one-line `InputError` naming `input_shape`."""
    if not (isinstance(shape, (tuple, list)) and shape and all(checks.is_integer(s) and s >= 1 for s in shape)):
        raise InputError(f"input_shape must be a tuple of positive ints such as (1, 32, 32); got {shape!r}")
    if math.prod(int(s) for s in shape) > MAX_INPUT:
        raise InputError(f"input_shape must have at most {MAX_INPUT:,} entries in all (the D x D covariance); "
                         f"got {tuple(shape)!r}")
    return tuple(int(s) for s in shape)


@dataclass(frozen=True)
class EstimateSettings:
    """How an estimate computes: `method` ("secant", the published one; "autograd"; "hessian"),
    `step` (the secant's h; ignored by the others, recorded as None), `seed` (network i is
    initialised from `networks.network_seed(seed, i)`; the default x0 is drawn from it),
    `input_shape`, `pooling` (a registry network's: True, the published one, adds no key),
    `precision` and `compiled` (the secant's: bfloat16 autocast, `torch.compile`), `batch_size`
    (networks per batch, None: `default_batch`) and `eig_threads` (the threads of the eigen steps,
    whose bits depend on them: 1; None, the caller's threads, is how the estimates stored before the
    field were made, their records' `threads`); which networks an estimate averages, `num_networks` from
    `first` (its result's record; a chunk's does not depend on them, None: not an estimate's settings), and
    its evaluation point `eval_point` (None: drawn from `seed`; an array or tensor of `input_shape`, which
    equality does not compare: its hash is in the result's record). Checked when made (one-line errors naming
    the field), passed to `estimate` and down to its chunks."""

    method: str = "secant"
    step: float = 100.0
    seed: int = 0
    input_shape: tuple[int, ...] = (1, 32, 32)
    pooling: bool | str = True
    precision: str = "float32"
    compiled: bool = False
    batch_size: int | None = None
    eig_threads: int | None = 1
    num_networks: int | None = None
    first: int = 0
    eval_point: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        checks.integer("num_networks", self.num_networks, 2, catalog.MAX_NETWORKS, optional=True,
                       accepted=f"an integer in [2, {catalog.MAX_NETWORKS}] (the covariance is mean-centred; "
                                "catalog.MAX_NETWORKS bounds the chunk list)")
        checks.integer("first", self.first, 0, accepted="an integer >= 0 (the index of the first network)")
        checks.one_of("method", self.method, METHODS)
        step = self.step
        if not (checks.is_number(step) and _in_float32(step)):
            raise InputError(f"step must be a finite number > 0 in float32 (the secant step h; published: "
                             f"100); got {step!r}")
        shape = check_input_shape(self.input_shape)
        checks.integer("batch_size", self.batch_size, 1, MAX_BATCH, optional=True,
                       accepted=f"an integer in [1, {MAX_BATCH}] or None (automatic)")
        checks.integer("eig_threads", self.eig_threads, 1, 1024, optional=True,
                       accepted="an integer in [1, 1024] or None (the caller's threads)")
        object.__setattr__(self, "input_shape", shape)
        object.__setattr__(self, "seed", check_seed(self.seed))
        check_precision(self.precision)
        if self.precision != "float32" and self.method != "secant":
            raise ValueError(f"precision {self.precision!r} applies to method 'secant' only; got method "
                             f"{self.method!r}")
        if not isinstance(self.compiled, bool) or (self.compiled and self.method != "secant"):
            raise InputError(f"compiled must be True (method 'secant' only) or False; got "
                             f"{self.compiled!r} with method {self.method!r}")

    def batch(self, dev: torch.device) -> int:
        """Networks per batch on the `torch.device` `dev`."""
        return self.batch_size or default_batch(self.method, dev)

    def chunk_settings(self, name: str, eval_desc: str, dev: torch.device,
                       model: dict[str, Any] | None = None) -> dict[str, Any]:
        """What a stored chunk of networks depends on (its range is the sweep cell): `name` is the
        settings' `arch`, `eval_desc` names x0 (`eval_point_name`), `dev` the device;
        `model`: the description of a network that is not a registry name (absent for those)."""
        return self._record({"arch": name, **self._fields(eval_desc), "batch": int(self.batch(dev)),
                             "device": dev.type}, "nad_chunk", model)

    def result_settings(self, name: str, eval_desc: str | None = None,
                        model: dict[str, Any] | None = None) -> dict[str, Any]:
        """The settings record of an estimate of `num_networks` networks from `first` (`eval_desc`:
        None for the default x0 of `seed`; `model` as for `chunk_settings`)."""
        if self.num_networks is None:
            raise InputError("num_networks must be an integer >= 2 in an estimate's settings; got None")
        settings = self._record({"arch": name, "num_networks": int(self.num_networks),
                                 **self._fields(eval_desc or eval_point_name(self.seed))}, "nad_result", model)
        if self.first:
            settings["first"] = int(self.first)
        return with_eig_threads(settings, self.eig_threads)

    def _fields(self, eval_desc):
        """The fields a chunk's and a result's settings share (in their order)."""
        return {"method": self.method, "step": float(self.step) if self.method == "secant" else None,
                "input_shape": list(self.input_shape), "seed": int(self.seed), "eval_point": eval_desc}

    def _record(self, settings, computation, model):
        """`settings` with the pooling, the versions and precision of `computation`, `compiled` and the
        `model` description, each only where it differs from the defaults (so older keys hold)."""
        stamped = versions.stamp(with_pooling(settings, self.pooling), computation, self.precision)
        return _with_model(_with_compiled(stamped, self.compiled), model)


def eval_point_name(seed: int) -> str:
    """How the settings name the evaluation point of `networks.eval_point_for(seed, ...)` (a given point:
    its hash)."""
    return f"randn(seed={seed})"


def nad_settings(arch: str, num_networks: int, method: str = "secant", step: float = 100.0, seed: int = 0,
                 input_shape: tuple[int, ...] = (1, 32, 32), pooling: bool | str = True, precision: str = "float32",
                 compiled: bool = False, eig_threads: int | None = 1) -> dict[str, Any]:
    """The settings record `estimate` writes for a registry architecture with the default x0."""
    return EstimateSettings(method, step, seed, input_shape, pooling, precision, compiled, eig_threads=eig_threads,
                            num_networks=num_networks).result_settings(arch)


def _in_float32(x):
    """True when `x` is > 0 and finite in float32 (no overflow warning for 1e39)."""
    with np.errstate(over="ignore", under="ignore"):
        return bool(np.float32(x) > 0 and np.isfinite(np.float32(x)))


def with_pooling(settings: dict[str, Any], pooling: bool | str) -> dict[str, Any]:
    """Settings of a network built with `pooling`: the published pooling (True) adds no key."""
    return settings if pooling is True else {**settings, "pooling": pooling}


def with_eig_threads(settings: dict[str, Any], eig_threads: int | None) -> dict[str, Any]:
    """Settings of a computation whose eigen steps ran on `eig_threads` threads: None (the caller's,
    the estimates stored before the field) adds no key."""
    return settings if eig_threads is None else {**settings, "eig_threads": int(eig_threads)}


def _with_model(settings, model):
    """`settings` with the `model` description of a factory's network (its source, a digest of its
    structure and its parameter count), absent for registry names."""
    return settings if model is None else {**settings, "model": model}


def _with_compiled(settings, compiled):
    """`settings` with `compiled: True` for the compiled secant (absent otherwise: keys unchanged)."""
    return {**settings, "compiled": True} if compiled else settings
