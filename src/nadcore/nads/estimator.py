"""`estimate`: the NADs of a model from N fresh networks, chunk by chunk, stored and resumed; and
`convergence`, the agreement of estimates from N and 2N networks."""

from __future__ import annotations

import contextlib
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from nadcore import catalog, checks, prose, store, sweeps
from nadcore import models as registry
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.nads import chunks
from nadcore.nads.networks import NAME, describe, model_source, one_output_factory, resolve_eval_point
from nadcore.nads.result import NADResult, NADTrustWarning, eig_decreasing, result_path, subspace_overlap
from nadcore.nads.settings import EstimateSettings


class Cost:
    """An estimate's progress and cost (`estimate`): with `progress` True, a bar per network with its ETA and, once
    the second network (or batch, where they run together) is timed (the first pays the warm-up), one line on
    stderr with the time the rest will take on this machine (a second or more) and the covariance's memory;
    "cost": that line without the bar; False: neither. Past `max_hours` (None: no bound) of that time, an
    `InputError` before the bulk runs. Called with the networks as they end."""

    def __init__(self, name: str, method: str, total: int, done: int, D: int, max_hours: float | None,
                 progress: bool | str) -> None:
        self.name, self.total, self.D, self.max_hours, self.progress = name, total, D, max_hours, bool(progress)
        self.bar = tqdm(total=total, initial=done, unit="network", desc=f"NADs {name} ({method})",
                        disable=progress is not True)
        self.start, self.timed, self.n = time.perf_counter(), 0, done   # `n`: networks done (a disabled bar keeps none)

    def __call__(self, count: int) -> None:
        self.timed += 1
        self.n += count
        self.bar.update(count)
        if self.timed == 1:      # the first batch pays the warm-up: the second is timed
            self.start = time.perf_counter()
        if self.timed != 2:
            return
        each = (time.perf_counter() - self.start) / count
        left = each * (self.total - self.n)
        if self.max_hours is not None and left > self.max_hours * 3600:
            raise InputError(f"num_networks must keep the estimate within {self.max_hours:g} h here: {self.total:,} "
                             f"networks of {self.name} take ~{prose.duration(left)} more ({each:.3g} s a network "
                             "measured on this machine); fewer networks, or no bound (the CLI: --yes)")
        if self.progress and left >= 1:   # a rest under a second goes unsaid
            self.bar.write(f"{self.name}: ~{prose.duration(left)} for the {self.total - self.n:,} networks left "
                           f"({each:.3g} s a network, measured on this machine); the {self.D:,} x {self.D:,} "
                           f"covariance takes {16 * self.D ** 2 / 2 ** 20:,.0f} MB", file=sys.stderr)

    def __enter__(self) -> Cost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()


SPOT_TOL = 1e-4   # a reused chunk's spot-checked gradient must match its stored row within this, relative to the row


def spot_check(factory: Callable[[], nn.Module], s: EstimateSettings, x0: torch.Tensor, held: list[dict[str, int]],
               settings: dict[str, Any], results_dir: Path) -> None:
    """Recompute the first and the last network of each stored chunk of `held` and compare them with their stored
    rows (within `SPOT_TOL`): a model whose key did not change, but whose numbers did (a configuration file read at
    import that changes some networks only, an environment variable), is refused in one line before its stale
    chunks are reused (the fifth adversarial pass of issue 58). The Hessian's chunks hold sums: not checked."""
    for cell in held:
        path = sweeps.cell_path("nad_chunks", cell, settings, results_dir)
        arrays = store.load(path, sweeps.cell_settings(cell, settings)).arrays
        chunks.check_chunk(path, arrays, cell["stop"] - cell["start"], x0.numel())
        stored = arrays.get("gradients")
        if stored is None:
            continue
        for i in sorted({cell["start"], cell["stop"] - 1}):
            g = chunks.chunk_arrays(factory, s, x0, i, i + 1)["gradients"][0]
            ref = stored[i - cell["start"]].astype(np.float64)
            if not np.allclose(g, ref, rtol=SPOT_TOL, atol=SPOT_TOL * float(np.abs(ref).max())):
                raise InputError(f"model must compute the numbers of its stored chunks to reuse them: network {i} "
                                 f"now gives another gradient than {path} holds (a configuration or environment "
                                 "the key does not see changed): delete those chunks, or pass another name")


@contextlib.contextmanager
def _model_errors(registered: bool, results_dir: str | Path | None):
    """A model's own failure while its networks' gradients are computed, as one line naming `model` (its cause
    chained); memory that runs out names `batch_size`. The registry's networks' failures are bugs of ours and stay
    as they are; the library's own refusals, a full disk and Ctrl-C too."""
    kept = "" if results_dir is None else f"; finished chunks are kept in {Path(results_dir) / 'nad_chunks'}"
    try:
        yield
    except (InputError, store.StoreError, OSError, KeyboardInterrupt):
        raise
    except BaseException as err:   # a model of yours raising anything: KeyError, SystemExit, its own kinds
        if checks.out_of_memory(err):
            raise InputError(f"batch_size must fit this machine's memory: the estimate ran out of it "
                             f"({checks.first_line(err, 120)}); a smaller batch_size (networks per batch), or a "
                             f"smaller model or input_shape{kept}") from err
        if registered:
            raise
        raise InputError(f"model failed while its networks' gradients were computed ({type(err).__name__}: "
                         f"{checks.first_line(err)}){kept}") from err


Model = str | Callable[[], nn.Module]


@overload   # one process: a result
def estimate(model: Model, settings: EstimateSettings, *, device: str | torch.device = ..., results_dir: str | Path |
             None = ..., shard: None = ..., progress: bool | str = ..., name: str | None = ...,
             max_hours: float | None = ...) -> NADResult: ...
@overload   # one of n processes: None until every chunk is stored
def estimate(model: Model, settings: EstimateSettings, *, device: str | torch.device = ..., results_dir: str | Path |
             None = ..., shard: tuple[int, int] | None = ..., progress: bool | str = ..., name: str | None = ...,
             max_hours: float | None = ...) -> NADResult | None: ...
def estimate(model: Model, settings: EstimateSettings, *, device: str | torch.device = "auto",
             results_dir: str | Path | None = None, shard: tuple[int, int] | None = None, progress: bool | str = True,
             name: str | None = None, max_hours: float | None = None) -> NADResult | None:
    """Estimate the NADs of `model` from networks `first .. first + num_networks - 1` of `settings` (an
    `EstimateSettings`: the method, its step and precision, the seed, the input shape, x0, ...).

    model: a registry name (built with one output and the settings' `pooling`, see `models.build`),
    `"module:callable"` or `"timm:NAME"` (`networks.model_factory`), or a zero-argument factory
    returning a fresh, randomly initialised `nn.Module` with one output (lazy modules are
    materialised by one forward pass at x0 as each network is built). Network `i` is initialised
    from `network_seed(seed, i)`. Before any chunk, network `first` is built and run once: a model
    that does not take `input_shape` or has more than one output is refused in one line.
    `name`: what a result of a factory is stored under (its settings' `arch`; default: the
    factory's qualified name, or NAME of "timm:NAME"); the settings of a model that is not a
    registry name also hold its description (`model`: source, a digest of its structure,
    parameter count). Networks go in chunks (`chunk_ranges`), `batch_size` at a time;
    with `results_dir` (a registry name, or any model with a name) each chunk is stored in
    `results_dir/nad_chunks/` as it finishes, so an interrupted estimate resumes and estimates
    that share networks (N vs 2N) share chunks. Every result carries its split-half overlaps
    (`NADResult.trust`), and a warning says when its leading NAD is not above chance. With `progress`, a bar
    per network and, once the first batch is timed, the time the rest will take and the covariance's memory
    ("cost": that line only; False: neither); `max_hours` (None: no bound) refuses in one line an estimate that
    would take longer, before the bulk runs. Returns a `NADResult`.

    Across machines: with `shard` = (i, n) and a `results_dir` the n processes share, a call computes only the
    chunks `i::n` and returns the merged result once every chunk is stored, else None (any later call merges
    them; the result is bitwise that of one process).
    """
    if not isinstance(settings, EstimateSettings):
        raise InputError(f"settings must be an nads.EstimateSettings such as EstimateSettings(num_networks=1000); "
                         f"got {type(settings).__name__}")
    s, first = settings, settings.first
    num_networks = checks.integer("num_networks", s.num_networks, 2, catalog.MAX_NETWORKS,
                                  accepted=f"an integer in [2, {catalog.MAX_NETWORKS}] in the settings (the "
                                           "covariance is mean-centred; catalog.MAX_NETWORKS bounds the chunk list)")
    if not (shard is None or isinstance(shard, tuple) and len(shard) == 2):
        raise InputError(f"shard must be None (every chunk here) or a pair (i, n): the chunks i::n of n processes; "
                         f"got {shard!r}")
    index, num_shards = shard or (0, 1)
    if not (progress is True or progress is False or progress == "cost"):
        raise InputError(f"progress must be True, False or \"cost\" (the cost line without the bar); got {progress!r}")
    registered = isinstance(model, str) and model in registry.names()
    if name is not None and (not isinstance(name, str) or not NAME.fullmatch(name)):
        raise InputError(f"name must be a file-name-safe string of at most 100 characters such as \"mynet\" (letters, "
                         f"digits, _ . + -); got {name!r}")
    if registered and name not in (None, model):
        raise ValueError(f"name applies to factories, \"module:callable\" and \"timm:NAME\"; a registry "
                         f"architecture is stored under its own name ({model!r}); got {name!r}")
    x0_cpu, eval_desc = resolve_eval_point(s.eval_point, s.seed, s.input_shape)
    factory, default = one_output_factory(model, s.input_shape, s.pooling, x0=x0_cpu)
    name = name or default
    checks.integer("num_shards", num_shards, 1, accepted="an integer >= 1 (the processes that share the chunks)")
    checks.integer("shard", index, 0, num_shards - 1, accepted=f"an integer in [0, {num_shards}) (num_shards)")
    if results_dir is not None and (not str(results_dir).strip() or Path(results_dir).exists()
                                    and not Path(results_dir).is_dir()):
        raise InputError(f"results_dir must be a folder (it need not exist yet); got {str(results_dir)!r}")
    if max_hours is not None and not (isinstance(max_hours, (int, float)) and max_hours > 0):
        raise InputError(f"max_hours must be a number > 0 (or None: no bound); got {max_hours!r}")
    if num_shards != 1 and results_dir is None:
        raise ValueError("num_shards > 1 needs a results_dir that the shards share (they store chunks there)")
    if results_dir is not None and name is None:
        raise ValueError("results_dir stores chunks and the result under a name: pass name=\"mynet\" with a "
                         "factory (or results_dir=None)")
    dev = resolve(device)
    with _model_errors(registered, None):   # its behaviour digest runs network `first`'s secant
        model_desc = describe(factory, s.seed, int(first), x0_cpu, None if registered else model_source(model),
                              origin=model, step=float(s.step))
    name = name or "factory"
    x0 = x0_cpu.to(dev)
    start = time.perf_counter()
    ranges = chunks.chunk_ranges(int(first), int(first) + int(num_networks))
    cells = [{"start": a, "stop": b} for a, b in ranges]
    mine = cells[index::num_shards]
    todo, gone = mine, cells   # this shard's chunks to compute, and all the chunks not stored
    ledger, halves = chunks.Ledger(), chunks.Halves(s.method)
    if results_dir is not None:
        chunked = s.chunk_settings(name, eval_desc, dev, model_desc)
        todo = sweeps.missing("nad_chunks", mine, chunked, Path(results_dir))
        gone = sweeps.missing("nad_chunks", cells, chunked, Path(results_dir))
        held = len(cells) - len(gone)
        if held:   # one line, with or without the bars
            print(f"{name}: {'reusing all' if held == len(cells) else f'resuming from {held} of'} {len(cells)} stored "
                  f"chunks of {chunks.CHUNK} networks in {Path(results_dir) / 'nad_chunks'}", file=sys.stderr)
    cost = Cost(name, s.method, sum(c["stop"] - c["start"] for c in mine),
                sum(c["stop"] - c["start"] for c in mine if c not in todo), x0.numel(), max_hours, progress)
    compute = lambda cells: [chunks.chunk_arrays(factory, s, x0, c["start"], c["stop"], cost, verify=not registered)
                             for c in cells]
    with cost, _model_errors(registered, results_dir):   # a bar per network; the cost line once a batch is timed
        if results_dir is not None and not registered:   # your model's reused chunks, spot-checked first
            spot_check(factory, s, x0, [c for c in cells if c not in gone], chunked, Path(results_dir))
        if results_dir is None:
            ledger.machines = [store.machine(dev)] * len(cells)
            parts = (halves.moments(compute([c])[0], c["start"]) for c in cells)
        else:
            paths = sweeps.sweep("nad_chunks", cells, compute, chunked, Path(results_dir), progress=False,
                                 load=False, shard=index, num_shards=num_shards)
            if num_shards != 1:
                if sweeps.missing("nad_chunks", cells, chunked, Path(results_dir)):
                    return None
                paths = [sweeps.cell_path("nad_chunks", c, chunked, Path(results_dir)) for c in cells]
            parts = ledger.read(paths, cells, chunked, halves)
        covariance = chunks.merge(ledger.fingerprinted(parts), s.method)   # one chunk at a time
    vals, rows = eig_decreasing(covariance, s.eig_threads)
    record = s.result_settings(name, eval_desc, model_desc)
    duration = sum(ledger.durations) if results_dir is not None else time.perf_counter() - start   # resumed or not
    result = NADResult(vals, rows.astype(np.float32), record, chunks=ledger.arrays(ranges),
                       split_half=halves.overlaps(threads=s.eig_threads))
    result.record = {"device": str(dev), "duration_s": round(duration, 3)}
    trust = result.trust()
    if trust.available and not trust.leading_above_chance:
        warnings.warn(f"the leading NADs of {name} from {num_networks} networks are not above chance: "
                      f"{trust.summary()}", NADTrustWarning, stacklevel=2)
    return result


@overload
def load_or_estimate(arch: str, settings: EstimateSettings, results_dir: str | Path, *, compute: Literal[True] = ...,
                     chunks_dir: str | Path | None = ..., compact: bool = ..., device: str | torch.device = ...,
                     progress: bool | str = ...) -> NADResult: ...
@overload
def load_or_estimate(arch: str, settings: EstimateSettings, results_dir: str | Path, *, compute: bool,
                     chunks_dir: str | Path | None = ..., compact: bool = ..., device: str | torch.device = ...,
                     progress: bool | str = ...) -> NADResult | None: ...
def load_or_estimate(arch: str, settings: EstimateSettings, results_dir: str | Path, *, compute: bool = True,
                     chunks_dir: str | Path | None = None, compact: bool = False, device: str | torch.device = "auto",
                     progress: bool | str = True) -> NADResult | None:
    """The NADs of registry architecture `arch` with `settings`, stored in `results_dir/nads/` (`result_path`):
    read back when stored; else, with `compute`, estimated (chunks in `chunks_dir/nad_chunks/`, default
    `results_dir`), stored (float16 NADs when `compact`) and read back, as later readers see them; else None.
    The one "stored, else computed" path of the chapters and the bundle."""
    record = settings.result_settings(arch)
    path = result_path(arch, record, results_dir)
    if not store.matches(path, record):
        if not compute:
            return None
        estimate(arch, settings, device=device, results_dir=chunks_dir or results_dir,
                 progress=progress).save(path, compact=compact)
    return NADResult.load(path, record)


def convergence(model: str | Callable[[], nn.Module], settings: EstimateSettings, sizes: Sequence[int],
                ks: Sequence[int] = (1, 4, 16, 64), *, device: str | torch.device = "auto",
                results_dir: str | Path | None = None, progress: bool | str = True) -> dict:
    """Overlap of the leading-k NAD subspaces estimated with N and with 2N networks, for N in `sizes`, each
    estimate made with `settings` (its `num_networks` and `first` set here).

    The two estimates use disjoint networks of the same run (indices `0 .. N - 1` and
    `N .. 3N - 1`, the same x0), so the overlap measures Monte-Carlo agreement; with
    `results_dir` they share stored chunks with each other and with the main estimate made with the same
    settings (see `estimate`). Returns a dict: `sizes`, `ks`, `overlap` (len(sizes), len(ks)).
    """
    if not isinstance(settings, EstimateSettings):
        raise InputError(f"settings must be a nads.EstimateSettings; got {type(settings).__name__}")
    if not (isinstance(sizes, (list, tuple)) and sizes and all(checks.is_integer(n) and n >= 2 for n in sizes)):
        raise InputError(f"sizes must be a non-empty list of integers >= 2; got {sizes!r}")
    sizes = [int(n) for n in sizes]
    dim = math.prod(settings.input_shape)
    if not (isinstance(ks, (list, tuple)) and ks and all(checks.is_integer(k) and k >= 1 for k in ks)) or (
            dim is not None and max(ks) > dim):
        raise InputError(f"ks must be a non-empty list of integers in [1, D = {dim}] (the input's entries); "
                         f"got {ks!r}")
    s, run = settings, dict[str, Any](device=device, results_dir=results_dir, progress=progress)
    overlap = np.zeros((len(sizes), len(ks)))
    for r, n in enumerate(sizes):
        small = estimate(model, replace(s, num_networks=n), **run)
        large = estimate(model, replace(s, num_networks=2 * n, first=n), **run)
        overlap[r] = [subspace_overlap(small.nads, large.nads, k) for k in ks]
    return {"sizes": np.array(sizes), "ks": np.array(ks), "overlap": overlap}
