"""The results bundle: the published settings, computed on a CPU, stored in the repository.

The bundle (`bundle/` at the top of the checkout) is a results folder of the `paper` scale:
every item below is stored with the same keys as `nadcore run CHAPTER --scale paper -p
results_dir ../bundle` would give it (same presets, same `device` in the settings), so a GPU
run that points at the bundle adds the architectures a CPU cannot afford and recomputes nothing.

Each item is a `BundleItem`, declared in its chapter's section below: what it computes with
(`settings`), how it is computed (`compute`, resumable: finished cells and NAD chunks are kept) and
read (`load`, computing nothing; the book's pages call the `load_*` functions), how much of it is
stored (`status`) and the device that computes it. `ITEMS` names them in the order `all` computes
them; `compute`, `load`, `status`, `complete` and `item_device` are the one dispatch over them, and
`nadcore bundle` (or `python -m nadcore.bundle`, `main`) the command line.

Where the bundle lives (`paths.locate`): `$NADBOOK_BUNDLE`, else the checkout's `bundle/`; installed from a
wheel (no checkout), the `bundle/` of the current folder or of its parent (a book folder).
NAD chunks (the networks' gradients, 0.5 MiB per 125 networks of D = 1,024) go to `scratch`, the
merged NADs to the bundle. The default scratch, `partial/` in the bundle, is committed while an item
computes over several sessions, and its chunks removed once the item and its convergence are stored.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from nadcore import chapters, checks, fourier, nads, paths, presets, published, seeds, stacked, store, sweeps, versions
from nadcore.checks import PRECISIONS, InputError
from nadcore.experiments import (
    ch1_fourier,
    ch2_pooling,
    ch3_nads,
    ch4_cifar10,
    ch5_underspec,
    ch6_antialias,
    ch7_zoo,
    ch8_training,
)
from nadcore.paths import BUNDLE, DATA  # where the bundle is (`paths.locate`) and the stand-ins' files
from nadcore.presets import DEEP_SIGMA, DEEP_TRAIN  # the policy: how the deep networks are trained (see there)

# ----------------------------------------------------------------------------- where it lives

SCRATCH = BUNDLE / "partial"   # chunks of the NAD items still computing (see above)
DEVICE = "cpu"   # the device of the stored items (in their keys) but those `item_device` names: a GPU's
SEED = 0
EIG_THREADS = None   # the bundle's estimates (all stored before `nads.EstimateSettings.eig_threads`) ran their
                     # eigen steps on the caller's threads (their records' `threads`): their keys name none


def _scratch(bundle_dir, scratch):
    """`scratch`, or the bundle's `partial/` folder."""
    return Path(bundle_dir) / "partial" if scratch is None else Path(scratch)


# ----------------------------------------------------------------------------- the items

@dataclasses.dataclass(frozen=True)
class Status:
    """How much of an item is stored: `head`, the start of its status line (what is stored, counted);
    `complete`; `seconds`, the rough CPU time of the rest (None: not estimated)."""
    head: str
    complete: bool
    seconds: float | None = None


def _this_cpu():
    return DEVICE


@dataclasses.dataclass(frozen=True)
class BundleItem:
    """One item of the bundle. `settings()`: what it computes with (the settings its stored keys hash);
    `compute(bundle_dir, scratch, progress)`: compute or finish it, resumably, and return what `load`
    reads; `load(bundle_dir)`: what is stored, computing nothing; `status(bundle_dir, scratch)`: a
    `Status`; `device()`: the device that computes (and computed) it, read when called; `also_reads(bundle_dir)`:
    what a page reads of it besides what its status reads (None: nothing), whose records provenance counts."""
    name: str
    settings: Callable[[], object]
    compute: Callable[[Path, Path, bool], object]
    load: Callable[[Path], object]
    status: Callable[[Path, Path], Status]
    device: Callable[[], str] = _this_cpu
    pages: tuple[str, ...] = ()   # the book's pages that show it (stems of `chapters.PAGES`), as `_declare` says
    also_reads: Callable[[str | Path], object] | None = None


REGISTRY: dict[str, BundleItem] = {}   # every item by name, as the chapters' sections declare them


def _declare(*items, page):
    """Register `items`, shown on `page` (a stem of `chapters.PAGES`, or a tuple of them)."""
    pages = (page,) if isinstance(page, str) else tuple(page)
    for p in pages:
        chapters.page(p)
    for item in items:
        if item.name in REGISTRY:
            raise ValueError(f"bundle item {item.name} is declared twice")
        REGISTRY[item.name] = dataclasses.replace(item, pages=pages)


def lookup(item: str) -> BundleItem:
    """The `BundleItem` named `item`."""
    if not isinstance(item, str) or item not in REGISTRY:
        raise InputError(f"item must be one of {', '.join(ITEMS)}; got {item!r}")
    return REGISTRY[item]


def _whole(name, stored):
    """The `status` of an item stored whole or not at all: `stored(bundle_dir)` says which."""
    def status(bundle_dir, scratch):
        done = bool(stored(bundle_dir))
        return Status(f"{name}: " + ("stored" if done else "not complete"), done)
    return status


class Missing(RuntimeError):
    """An item's prerequisite (another item) is not in the bundle: `main` says so in one line."""


def _check_device(item, device):
    """Raise a one-line error when `item` is computed on a CUDA GPU and this machine has none."""
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"item {item} is computed on a CUDA GPU (float32) and this machine has none: run "
                         f"`python -m nadcore.bundle {item}` on one (or `tools/gpu_bundle.py`)")


def deep_batch(arch: str, device: str) -> int:
    """Cells per group of a network trained on `device`: one on a GPU (each network alone, its RNG seeded
    just before), else what fits the CPU's cache."""
    return 1 if device == "cuda" else stacked.registry_chunk_size(arch, True, 128, device)


# ----------------------------------------------------------------------------- the machine

def machine_of(record: Mapping[str, Any], bundle_dir: str | Path = BUNDLE) -> str | None:
    """The CPU a stored item was computed on: its record's `machine`, else the bundle's
    `MACHINE.json` (written by `compute`; items stored before records named their machine)."""
    if record.get("machine"):
        return record["machine"]
    path = Path(bundle_dir) / "MACHINE.json"
    return json.loads(path.read_text())["machine"] if path.exists() else None


def _note_machine(bundle_dir):
    path = Path(bundle_dir) / "MACHINE.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"machine": store.machine(), "note": "the CPU of every item whose record "
                                    "names no machine"}, indent=1) + "\n")


def provenance(records: Iterable[Mapping[str, Any]]) -> str:
    """One line saying how stored items were made: device and threads, versions, count, time."""
    records = list(records)
    if not records:
        return "nothing stored yet"
    first = records[0]
    total = sum(r.get("duration_s") or 0.0 for r in records)
    devices = sorted({f"{r.get('device')} ({r.get('threads', '?')} threads)" for r in records})
    dates = sorted(r.get("created", "")[:10] for r in records)
    return (f"{len(records)} stored item(s) computed on {', '.join(devices)} with nadcore {first['nadcore_version']}, "
            f"torch {first['torch_version']}, seed {first.get('seed')}; {total / 60:.1f} min of compute; "
            f"{dates[0]}" + (f" to {dates[-1]}" if dates[-1] != dates[0] else ""))


# ----------------------------------------------------------------------------- Chapter 1

CPU_ARCHS = ("logreg", "lenet")   # Figs. 1-2 on this CPU; VGG-11, ResNet-18, DenseNet-121 need a GPU
FIG3_GRID = {"name": "coarse", "step": 4}   # Fig. 3 on a stated subset: every 4th frequency, |k| <= 12
# VGG-11 on this CPU (issue 23), at the published recipe, about 15 minutes a cell: Fig. 1 on the same
# subset as Fig. 3 (25 cells of the Fig. 1 sweep) and Fig. 6 at a few indices, beside the published
# column (DEEP_FIG1's value) and curve (DEEP_FIG6's first: its NADs are ours of that network), trained
# as `DEEP_TRAIN` says at `DEEP_SIGMA` (`presets`).
DEEP_FIG1 = {"fig1_vgg11": "vgg11", "fig1_resnet18": "resnet18", "fig1_densenet121": "densenet121"}
DEEP_FIG6 = {name: (arch, (0, 16, 128, 512, 1000)) for name, arch in
             (("fig6_vgg11", "vgg11"), ("fig6_resnet18", "resnet18"), ("fig6_densenet121", "densenet121"))}
GPU_ONLY = ("resnet18", "densenet121")   # issue 57: prepared for a GPU, secant NADs only (VGG-11: on the CPU too)
# Fig. 1's subset on a CUDA GPU (issue 23): a cell costs 23-68 min of this 2-core CPU. float32 without
# TF32 (`device.exact_cuda`), one network at a time; the CPU's float32 cells of the training-precision
# check (`TRAIN_PRECISION`, on `DEVICE`) are some of the same cells on the CPU. Fig. 6: on the CPU.
# Which NADs predict what a network learns (issue 42)? Our secant NADs match the published ones, the
# exact-gradient NADs of Sec. 3's definition ("autograd") share almost nothing with them: each `DEEP_FIG6` item again
# along either, on a CUDA GPU, with seeds 0-2 (`ch1_fourier.replicate_settings`; secant seed 0 is the
# item itself on the GPU). `{name: (DEEP_FIG6 item, NAD method, replicate)}`, in the order a GPU trains them.
# LeNet's too, on this CPU, at the sigma study's best (`DEEP_SIGMA`) and at the caption's: `{name: (item,
# method, replicate, sigma)}` (sigma None: the item's own); LeNet's secant seed 0 at a sigma is the cells of
# its `fig6` (caption) or `fig6_sigma` (best) item. Issue 57: LeNet along the authors' released NAD file too
# (method "published", `published.nads`): the published Fig. 6 curve's spectrum is not that file's.
FIG6_CAPTION = 3.0   # Fig. 6's caption (`presets` "nads" paper: the published settings; a test holds them equal)
FIG6_NADS = {**{f"{item}_{method}_seed{r}": (item, method, r, None) for item in DEEP_FIG6 for r in range(3)
                for method in (("secant",) if DEEP_FIG6[item][0] in GPU_ONLY else ("autograd", "secant"))},
             **{f"fig6_lenet_sigma{sigma:g}_{method}_seed{r}": ("fig6", method, r, sigma)
                for sigma in (DEEP_SIGMA, FIG6_CAPTION) for r in range(3) for method in ("autograd", "secant")},
             **{f"fig6_lenet_sigma{sigma:g}_published_seed{r}": ("fig6", "published", r, sigma)
                for sigma in (FIG6_CAPTION, DEEP_SIGMA) for r in range(3)},
             # issue 61: along the kernel's NADs (the mixed derivative's, Eq. 5's 500 networks), at the caption's
             # sigma and at the sigma study's best
             **{f"fig6_lenet_sigma{sigma:g}_hessian_seed{r}": ("fig6", "hessian", r, sigma)
                for sigma in (FIG6_CAPTION, DEEP_SIGMA) for r in range(3)}}
# issue 61: the linearised LeNet (`models.Linearised`, the kernel's model) trained along the kernel's and the secant's
# NADs at the caption's sigma, seeds 0-2, at `LINEARISED_INDICES`: each cell is the same data, initialisation and
# shuffling as the full LeNet's cell of its `FIG6_NADS` run. `{name: (method, replicate, sigma)}`, seed by seed;
# then along both at the sigma study's best, where LeNet learns more of the secant's NADs.
# (u8 has no full-network cell at these sigmas, whose Fig. 6 indices step by 32: the pages compare the others.)
LINEARISED_INDICES = [0, 8, 32, 64, 128, 512]
FIG6_LINEARISED = {**{f"fig6_lenet_sigma{FIG6_CAPTION:g}_{method}_linearised_seed{r}": (method, r, FIG6_CAPTION)
                      for r in range(3) for method in ("hessian", "secant")},
                   **{f"fig6_lenet_sigma{DEEP_SIGMA:g}_{method}_linearised_seed{r}": (method, r, DEEP_SIGMA)
                      for method in ("hessian", "secant") for r in range(3)}}
DEEP_DEVICE = {**{name: "cuda" for name in DEEP_FIG1}, "fig6_vgg11": DEVICE,
               **{name: "cuda" for name, (arch, _) in DEEP_FIG6.items() if arch in GPU_ONLY},
               **{name: "cuda" for name, (item, *_) in FIG6_NADS.items() if item in DEEP_FIG6}}


def _deep_device(name):
    """The device of item `name`: `DEEP_DEVICE`'s, else this CPU."""
    return DEEP_DEVICE.get(name, DEVICE)


class Stored(NamedTuple):
    """What the bundle holds of a study: its numbers (`values`, as the loader says) and the `records` of the
    stored results behind them."""
    values: dict
    records: list


class FourierItem(NamedTuple):
    """A Chapter 1 item: the networks it trains (`archs`), its `grid` of directions, the `settings` that key
    its cells, and whether the networks pool (`pooling`)."""
    archs: tuple
    grid: fourier.Grid
    settings: dict
    pooling: bool


class StoredFourier(NamedTuple):
    """What the bundle holds of a Chapter 1 item (`load_fourier`): `table` `{arch: {(kx, ky): arrays}}` of
    its stored cells, its `grid`, `settings` and the stored cells' `records`."""
    table: dict
    grid: fourier.Grid
    settings: dict
    records: dict


def _fig1():
    """Fig. 1: LogReg and LeNet on every cell of the published grid, at the published settings."""
    p = presets.preset("fourier", "paper")
    return FourierItem(CPU_ARCHS, fourier.make_grid(p.grid), ch1_fourier.sweep_settings(p, SEED, DEVICE), True)


def _fig2():
    """Fig. 2: Fig. 1's networks on its grid, sample size, noise and epochs."""
    q = presets.preset("fourier", "paper").fig2
    archs, _, settings, pooling = _fig1()
    return FourierItem(archs, fourier.make_grid(q.grid), ch1_fourier.fig2_settings(settings, q), pooling)


def _fig3(sigma=None):
    """Fig. 3: LeNet without pooling on `FIG3_GRID`, at Fig. 1's settings (at noise `sigma` if given)."""
    settings = _fig1().settings
    return FourierItem(("lenet",), fourier.make_grid(FIG3_GRID),
                       {**settings, "sigma": settings["sigma"] if sigma is None else sigma}, False)


def _deep_fig1(name):
    """A `DEEP_FIG1` item: Fig. 1's settings, the network and max_lr of `DEEP_TRAIN`, the noise
    `DEEP_SIGMA`, on `FIG3_GRID`, on its `DEEP_DEVICE`."""
    arch, lr = DEEP_TRAIN[DEEP_FIG1[name]]
    settings = _fig1().settings
    return FourierItem((arch,), fourier.make_grid(FIG3_GRID), {**settings, "sigma": DEEP_SIGMA, "max_lr": {
        **settings["max_lr"], arch: lr}, "device": DEEP_DEVICE[name]}, True)


# The Chapter 1 items stored as sweeps of Fourier cells: `{item: (its settings, the sweep that stores
# its cells)}`; fig3_sigma is Fig. 3 at `DEEP_SIGMA`, a `DEEP_FIG1` item part of Fig. 1's sweep.
FOURIER_SWEEPS = {"fig1": (_fig1, "fig1"), "fig2": (_fig2, "fig2"), "fig3": (_fig3, "fig3"),
                  "fig3_sigma": (partial(_fig3, DEEP_SIGMA), "fig3"),
                  **{name: (partial(_deep_fig1, name), "fig1") for name in DEEP_FIG1}}


def _check_sweep(name):
    if name not in FOURIER_SWEEPS:
        raise InputError(f"name must be one of {', '.join(FOURIER_SWEEPS)}; got {name!r}")
    return FOURIER_SWEEPS[name]


def fourier_item(name: str) -> FourierItem:
    """The `FourierItem` `(archs, grid, settings, pooling)` of the Chapter 1 item `name` ("fig1", "fig2", "fig3",
    "fig3_sigma": Fig. 3 at `DEEP_SIGMA`, the sigma study's best, or a deep network's Fig. 1 subset of
    `DEEP_FIG1`: Fig. 1's sweep and settings, the network and max_lr of `DEEP_TRAIN`, the noise
    `DEEP_SIGMA`, on its `DEEP_DEVICE`)."""
    return _check_sweep(name)[0]()


def sweep_name(name: str) -> str:
    """The sweep that stores the cells of Chapter 1 item `name` (`DEEP_FIG1`'s: Fig. 1's)."""
    return _check_sweep(name)[1]


# Training in bfloat16 (issue 23): before any deep network's Fig. 1 or Fig. 6 cell is trained in
# bfloat16, three of VGG-11's Fig. 1 cells (as `DEEP_TRAIN` trains it) in each precision, two seeds each:
# the two whose published accuracy lies between chance and 100 % (60-65 %) and (4, 0), where the
# published one learns (98 %). Accepted where bfloat16 moves the test accuracy (same seed) no more than
# a second float32 seed does.
TRAIN_PRECISION = presets.TrainPrecision(item="fig1_vgg11", cells=[(12, 0), (0, 12), (4, 0)], seeds=2)


def train_precision_settings(precision: str, r: int) -> dict[str, Any]:
    """The settings of replicate `r` of the check's cells in `precision` on this CPU (`DEVICE`)."""
    settings = {**fourier_item(TRAIN_PRECISION.item)[2], "device": DEVICE}
    return ch1_fourier.replicate_settings(versions.stamp(settings, "fourier_cell", precision), r)


# The seed noise of a `DEEP_FIG1` item: the check's cells trained with `DEEP_SEEDS` seeds on its device
# (replicate 0 is the item's own cell), beside the same cells on this CPU (the check's float32 runs).
DEEP_SEEDS = 3


def load_deep_seeds(name: str, bundle_dir: str | Path = BUNDLE) -> Stored:
    """`Stored({(kx, ky): [test accuracy of each stored seed]}, records)` of the check's cells of `DEEP_FIG1`
    item `name`."""
    archs, grid, settings, pooling = fourier_item(name)
    out, records = {}, []
    for r in range(DEEP_SEEDS):
        table, recs = ch1_fourier.stored_directions(archs, grid, ch1_fourier.replicate_settings(settings, r),
                                                    Path(bundle_dir) / "fourier", pooling, sweep_name(name),
                                                    only=TRAIN_PRECISION.cells)
        for cell, acc in ch1_fourier.per_cell(table).get(archs[0], {}).items():
            out.setdefault(cell, []).append(acc)
        records += recs.get(archs[0], [])
    return Stored(out, records)


def gpu_run(name: str, bundle_dir: str | Path = BUNDLE) -> dict[str, Any] | None:
    """The report of `tools/gpu_bundle.py --train` for `DEEP_FIG1` item `name` (`fourier/NAME_gpu.json`: the
    GPU's peaks, each cell's seconds and TFLOP/s, the bitwise repeats), or None."""
    path = Path(bundle_dir) / "fourier" / f"{name}_gpu.json"
    return json.loads(path.read_text()) if path.exists() else None


def load_train_precision(bundle_dir: str | Path = BUNDLE) -> Stored:
    """`Stored({(precision, replicate): {(kx, ky): test accuracy}}, records)` of the check's stored cells."""
    archs, grid, _, pooling = fourier_item(TRAIN_PRECISION.item)
    out, records = {}, []
    for precision in PRECISIONS:
        for r in range(TRAIN_PRECISION.seeds):
            table, recs = ch1_fourier.stored_directions(archs, grid, train_precision_settings(precision, r),
                                                        Path(bundle_dir) / "fourier", pooling, "fig1",
                                                        only=TRAIN_PRECISION.cells)
            out[(precision, r)] = ch1_fourier.per_cell(table).get(archs[0], {})
            records += recs.get(archs[0], [])
    return Stored(out, records)


def train_precision_verdict(runs: Mapping[tuple[str, int], Mapping[tuple[int, int], float]]) -> dict[str, Any] | None:
    """`{"bfloat16": mean |bfloat16 - float32| (same seed), "seeds": mean |float32 seed 0 - seed 1|,
    "accept": bool}` in points, over the check's cells; None until every run holds all of them."""
    cells = set.intersection(*(set(v) for v in runs.values()))
    if cells != set(TRAIN_PRECISION.cells):
        return None
    seeds = range(TRAIN_PRECISION.seeds)
    bf16 = np.mean([abs(runs[("bfloat16", r)][c] - runs[("float32", r)][c]) for c in cells for r in seeds])
    spread = np.mean([abs(runs[("float32", r)][c] - runs[("float32", 0)][c]) for c in cells for r in seeds[1:]])
    return {"bfloat16": float(bf16), "seeds": float(spread), "accept": bool(bf16 <= spread), "cells": sorted(cells)}


def load_fourier(name: str, bundle_dir: str | Path = BUNDLE) -> StoredFourier:
    """The `StoredFourier` `(table, grid, settings, records)` of a Chapter 1 item: its stored table
    `{arch: {(kx, ky): arrays}}`, grid, settings and records; cells not yet computed are absent."""
    archs, grid, settings, pooling = fourier_item(name)
    table, records = ch1_fourier.stored_directions(archs, grid, settings, Path(bundle_dir) / "fourier", pooling,
                                                   sweep_name(name))
    return StoredFourier(table, grid, settings, records)


class Remaining(NamedTuple):
    """How much of a Chapter 1 item is stored (`fourier_remaining`)."""
    stored: int          # its cells stored in the bundle
    cells: int           # all its cells
    seconds: float | None   # the rough time of the rest on its device (`nadcore.plan`'s unit costs; None: unknown)


def fourier_remaining(name: str, bundle_dir: str | Path = BUNDLE) -> Remaining:
    """The `Remaining` cells of the Chapter 1 item `name`."""
    from nadcore import plan

    archs, grid, settings, pooling = fourier_item(name)
    cells = ch1_fourier.sweep_cells(archs, grid, pooling)
    done = sum(len(v) for v in load_fourier(name, bundle_dir)[0].values())
    epochs = settings["epochs"]
    each = [plan.train_cost(item_device(name), c["arch"], 2 * settings["n"],
                            epochs[c["arch"]] if isinstance(epochs, dict) else epochs, pooling) for c in cells]
    known = [x for x in each if x is not None]
    return Remaining(done, len(cells), sum(known) * (1 - done / len(cells)) if len(known) == len(each) else None)


def _sweep_status(name, bundle_dir, scratch):
    done, total, left = fourier_remaining(name, bundle_dir)
    return Status(f"{name} ({', '.join(fourier_item(name)[0])}): {done} of {total} cells stored", done == total, left)


def _sweep_compute(name, bundle_dir, scratch, progress):
    """A Chapter 1 sweep on this CPU: every 4th frequency first, so a stopped run leaves an even
    coverage; one stack at a time, stored as it ends."""
    archs, grid, settings, pooling = fourier_item(name)
    coarse = fourier.Grid(tuple(k for k in grid.freqs if k % 4 == 0 and abs(k) <= 12), grid.size)
    for arch in archs:
        batch = stacked.registry_chunk_size(arch, pooling, settings["batch_size"], DEVICE)
        for g in (coarse, grid):
            ch1_fourier.sweep_directions([arch], g, settings, bundle_dir / "fourier", pooling, name=sweep_name(name),
                                         batch=batch, progress=progress)
    return load_fourier(name, bundle_dir)


def _deep_sweep_compute(name, bundle_dir, scratch, progress):
    """A `DEEP_FIG1` item on its device: its cells, then the check's cells with more seeds."""
    device = DEEP_DEVICE[name]
    _check_device(name, device)
    archs, grid, settings, pooling = fourier_item(name)
    for r in range(DEEP_SEEDS):
        ch1_fourier.sweep_directions(archs, grid, ch1_fourier.replicate_settings(settings, r),
                                     bundle_dir / "fourier", pooling, name=sweep_name(name),
                                     batch=deep_batch(archs[0], device), progress=progress,
                                     only=None if r == 0 else TRAIN_PRECISION.cells)
    return load_fourier(name, bundle_dir)


def _train_precision_compute(bundle_dir, scratch, progress):
    archs, grid, _, pooling = fourier_item(TRAIN_PRECISION.item)
    for r in range(TRAIN_PRECISION.seeds):
        for precision in PRECISIONS:
            ch1_fourier.sweep_directions(archs, grid, train_precision_settings(precision, r),
                                         bundle_dir / "fourier", pooling, name="fig1", batch=1,
                                         progress=progress, only=TRAIN_PRECISION.cells)
    return load_train_precision(bundle_dir)


def _deep_extras(name, bundle_dir):
    """What Chapter 1 reads of a `DEEP_FIG1` item besides its grid: its cells' other seeds and the plain network."""
    return load_deep_seeds(name, bundle_dir), plain_deep(name, bundle_dir)


_declare(
    *(BundleItem(name, partial(fourier_item, name),
                 partial(_deep_sweep_compute if name in DEEP_FIG1 else _sweep_compute, name),
                 partial(load_fourier, name), partial(_sweep_status, name), partial(_deep_device, name),
                 also_reads=partial(_deep_extras, name) if name in DEEP_FIG1 else None)
      for name in FOURIER_SWEEPS), page="01_fourier")
_declare(
    BundleItem("train_precision",
               lambda: {(p, r): train_precision_settings(p, r) for p in PRECISIONS
                        for r in range(TRAIN_PRECISION.seeds)},
               _train_precision_compute, load_train_precision,
               _whole("train_precision", lambda d: train_precision_verdict(load_train_precision(d)[0]) is not None)),
    page=("01_fourier", "nads_in_practice"))


# ----------------------------------------------------------------------------- Chapter 1: which sigma?

# Fig. 1 of LeNet at several noise levels: is the published grid Fig. 1's caption (sigma = 3) or
# another sigma? One seed at each sigma, then `seeds` at the caption's sigma and at the best one
# (the smallest mean |difference| from the published grid). Stored beside Fig. 1's cells (same
# sweep, settings differing in `sigma` and `seed`): sigma 3, seed 0 *is* Fig. 1.
SIGMA_STUDY = presets.SigmaStudy(arch="lenet", sigmas=(1.0, 1.25, 1.5, 2.0, 2.5, 3.0), seeds=3, caption=3.0,
                                 order=(2.0, 2.5, 1.5, 3.0, 1.25, 1.0))
# `order`: first, the sigma the authors' code points to; 1.25 and 1.0 last, to bracket the best (issue 42: 1.5
# was the lowest tried, and both measures still improved)


def sigma_settings(sigma: float, r: int) -> dict[str, Any]:
    """The settings of replicate `r` (`ch1_fourier.replicate_settings`) of LeNet's Fig. 1 at `sigma`."""
    return ch1_fourier.replicate_settings({**fourier_item("fig1")[2], "sigma": float(sigma)}, r)


def load_sigma_study(bundle_dir: str | Path = BUNDLE) -> Stored:
    """`Stored({sigma: [grid, ...]}, records)`: each complete stored grid `{(kx, ky): test accuracy}` of the
    study, by sigma in replicate order (a replicate counts once its whole grid is stored)."""
    _, grid, _, pooling = fourier_item("fig1")
    grids, records = {}, []
    for sigma in SIGMA_STUDY.sigmas:
        for r in range(SIGMA_STUDY.seeds):
            table, recs = ch1_fourier.stored_directions([SIGMA_STUDY.arch], grid, sigma_settings(sigma, r),
                                                        Path(bundle_dir) / "fourier", pooling, "fig1")
            cells = ch1_fourier.per_cell(table).get(SIGMA_STUDY.arch, {})
            if len(cells) < len(grid.half()):
                break
            grids.setdefault(sigma, []).append(cells)
            records += recs[SIGMA_STUDY.arch]
    return Stored(grids, records)


def best_sigma(grids: Mapping[float, Sequence[Mapping[tuple[int, int], float]]]) -> float | None:
    """The sigma whose first grid is closest to the published one (mean |difference|), or None."""
    pub = published.fig1(SIGMA_STUDY.arch)
    gaps = {s: published.compare_grids(g[0], pub).mean_abs_difference for s, g in grids.items()}
    return min(gaps, key=lambda s: gaps[s]) if gaps else None


def known_best_sigma(grids: Mapping[float, Sequence[Mapping[tuple[int, int], float]]]) -> float | None:
    """`best_sigma` once the study holds a grid at every sigma, else None."""
    return best_sigma(grids) if len(grids) == len(SIGMA_STUDY.sigmas) else None


def sigma_study(bundle_dir: str | Path = BUNDLE, boots: int = 2000) -> dict[str, Any]:
    """The study beside the published grid: `{sigma: published.compare_seeds(...)}` with `floor`
    (`published.seed_floor`) where a sigma has two seeds or more; also `best` and `caption` sigmas."""
    grids, records = load_sigma_study(bundle_dir)
    pub = published.fig1(SIGMA_STUDY.arch)
    rows = {}
    for sigma, gs in grids.items():
        rows[sigma] = published.compare_seeds(gs, pub, boots=boots)
        rows[sigma]["floor"] = published.seed_floor(gs) if len(gs) > 1 else None
    return dict(rows=rows, best=best_sigma(grids), caption=SIGMA_STUDY.caption, records=records,
                grids=grids, published=pub)


def sigma_runs(grids: Mapping[float, Sequence[Mapping[tuple[int, int], float]]]) -> list[tuple[float, int]]:
    """The `(sigma, replicate)` runs of the study: one seed per sigma, then the extra seeds at the
    caption's sigma and at the best one (taken as 2.0, the authors' code's hint, until known)."""
    best = known_best_sigma(grids)
    extra = sorted({SIGMA_STUDY.caption, 2.0 if best is None else best})
    return ([(s, 0) for s in SIGMA_STUDY.order]
            + [(s, r) for s in extra for r in range(1, SIGMA_STUDY.seeds)])


def _sigma_left(grids, single=False):
    """Rough CPU seconds of the sigma study's grids still to compute (only the single-seed ones)."""
    from nadcore import plan

    settings = fourier_item("fig1")[2]
    runs = sigma_runs(grids)[:len(SIGMA_STUDY.sigmas)] if single else sigma_runs(grids)
    cells = len(fourier_item("fig1")[1].half())
    todo = sum(1 for s, r in runs if len(grids.get(s, [])) <= r)
    return todo * cells * plan.train_cost(DEVICE, SIGMA_STUDY.arch, 2 * settings["n"], settings["epochs"])


def _sigma_runs_compute(runs, bundle_dir, progress):
    _, grid, _, pooling = fourier_item("fig1")
    arch = SIGMA_STUDY.arch
    batch = stacked.registry_chunk_size(arch, pooling, fourier_item("fig1")[2]["batch_size"], DEVICE)
    for sigma, r in runs:
        ch1_fourier.sweep_directions([arch], grid, sigma_settings(sigma, r), Path(bundle_dir) / "fourier", pooling,
                                     name="fig1", batch=batch, progress=progress)


def _sigma_compute(bundle_dir, scratch, progress):
    """The single-seed grids (they name the best sigma), then the extra seeds."""
    _sigma_runs_compute(sigma_runs({})[:len(SIGMA_STUDY.sigmas)], bundle_dir, progress)
    _sigma_runs_compute(sigma_runs(load_sigma_study(bundle_dir)[0]), bundle_dir, progress)
    return sigma_study(bundle_dir)


def _sigma_status(bundle_dir, scratch):
    grids = load_sigma_study(bundle_dir)[0]
    done, total = sum(len(g) for g in grids.values()), len(sigma_runs(grids))
    sigmas = ", ".join(f"{x:g}" for x in SIGMA_STUDY.sigmas)
    return Status(f"sigma ({SIGMA_STUDY.arch}, sigma {sigmas}): {done} of {total} Fig. 1 grids stored",
                  done == total, _sigma_left(grids))


_declare(BundleItem("sigma", lambda: {(s, r): sigma_settings(s, r) for s in SIGMA_STUDY.sigmas
                                      for r in range(SIGMA_STUDY.seeds)},
                    _sigma_compute, sigma_study, _sigma_status), page="01_fourier")


# ----------------------------------------------------------------------------- Chapter 2

def load_pooling(bundle_dir: str | Path = BUNDLE) -> ch2_pooling.PoolingResults | None:
    """The pooling chapter's results at its paper preset (`ch2_pooling.chapter_results`), or None."""
    try:
        return ch2_pooling.chapter_results(presets.preset("pooling", "paper"), SEED, bundle_dir, DEVICE, compute=False)
    except (FileNotFoundError, store.StoreError):
        return None


def pooling_remaining(bundle_dir: str | Path = BUNDLE) -> float:
    """Rough CPU seconds of Chapter 2's paper preset still to compute in the bundle (0 once stored)."""
    from nadcore import plan

    if load_pooling(bundle_dir) is not None:
        return 0.0
    items = plan.chapter_plan("02_pooling", "paper", seed=SEED, results_dir=bundle_dir, device=DEVICE).items
    return sum(it.seconds_each * it.count for it in items)


_declare(BundleItem("pooling", lambda: presets.preset("pooling", "paper"),
                    lambda bundle_dir, scratch, progress: ch2_pooling.chapter_results(
                        presets.preset("pooling", "paper"), SEED, bundle_dir, DEVICE, progress),
                    load_pooling, _whole("pooling", lambda d: load_pooling(d) is not None)), page="02_pooling")


# ----------------------------------------------------------------------------- Chapter 3: the NADs

NAD_ARCHS = ("logreg", "mlp", "lenet")
# The secant NADs of the deep networks a CPU affords (2,048 forward passes a network): how many
# networks, in bfloat16 (channels-last, autocast). The `precision` item measures what that does:
# each network's gradient has a cosine >= 0.99 with its float32 one (VGG-11, ResNet-18: >= 0.999),
# except DenseNet-121's, down to 0.86, and 1,000 LeNets give leading subspaces that overlap the
# float32 ones by >= 0.999 (k = 1..256), far above two float32 halves. The published scale (10,000,
# float32) stays the chapters' own.
SECANT_CPU = {"vgg11": 10000, "vit": 1000, "mixer": 1000, "convnext": 1000, "resnet18_blur": 1000}
SECANT_CPU_PRECISION = "bfloat16"
SECANT_CPU_COMPILED = True   # through torch.compile: 1.1x (VGG-11) to 2.7x (DenseNet-121) faster (`plan`)
# ... and those computed in float32 on a CUDA GPU (one lent to a session for 15 minutes; `tools/gpu_bundle.py`):
# DenseNet-121's bfloat16 error is too large to take on trust, and both cost a 2-core CPU hours to days.
SECANT_CUDA = {"resnet18": 2000, "densenet121": 1000}
GPU_NAD_ARCHS = ("vgg11", "resnet18", "densenet121")   # the deep networks: secant at `SECANT_CPU` / `SECANT_CUDA`
ZOO_ARCHS = ("vit", "mixer", "convnext", "resnet18_blur")  # Chapter 7: after 2020, and ResNet-18 with BlurPool


def nad_name(arch: str, method: str = "secant") -> str:
    """The bundle item of the NADs of `arch` by `method`: nads_ARCH (the secant) or nads_ARCH_METHOD."""
    return f"nads_{arch}" if method == "secant" else f"nads_{arch}_{method}"


def estimate_settings(arch: str, method: str = "secant") -> nads.EstimateSettings:
    """How the stored NADs of `arch` are estimated: the published scale (10,000 networks, float32), but the deep
    networks' secant at `SECANT_CPU` networks in `SECANT_CPU_PRECISION`, or at `SECANT_CUDA` networks in float32
    (on `nad_device`)."""
    if method == "secant" and arch in SECANT_CPU:
        return nads.EstimateSettings(method, seed=SEED, precision=SECANT_CPU_PRECISION, compiled=SECANT_CPU_COMPILED,
                                     eig_threads=EIG_THREADS, num_networks=SECANT_CPU[arch])
    if method == "secant" and arch in SECANT_CUDA:
        n = SECANT_CUDA[arch]
    elif method == "hessian":   # the mixed derivative's (Eq. 5, the kernel's NADs): Eq. 5's networks, all rows
        n = EQ5.networks
    else:
        n = presets.preset("nads", "paper").num_networks["default"]
    return nads.EstimateSettings(method, seed=SEED, eig_threads=EIG_THREADS, num_networks=n)


def nad_networks(arch: str, method: str = "secant") -> int:
    """How many networks the stored NADs of `arch` average (`estimate_settings`'s)."""
    return int(estimate_settings(arch, method).num_networks or 0)


def nad_item(arch: str, method: str = "secant") -> dict[str, Any]:
    """The settings record of the stored NADs of `arch` (`estimate_settings`'s, as the store keys them)."""
    return estimate_settings(arch, method).result_settings(arch)


def nad_device(arch: str, method: str = "secant") -> str:
    """The device that computes (and computed) the stored NADs of `arch`: "cuda" for `SECANT_CUDA`, else `DEVICE`."""
    return "cuda" if method == "secant" and arch in SECANT_CUDA else DEVICE


def nad_chunk_item(arch: str, method: str = "secant") -> dict[str, Any]:
    """The settings of the stored chunks of `nad_item(arch, method)` (on `nad_device`)."""
    dev = torch.device(nad_device(arch, method))
    return estimate_settings(arch, method).chunk_settings(arch, nads.eval_point_name(SEED), dev)


def load_nad(arch: str, method: str = "secant", bundle_dir: str | Path = BUNDLE) -> nads.NADResult | None:
    """The stored `NADResult` of `arch`, or None if the bundle does not hold it yet."""
    settings = nad_item(arch, method)
    path = nads.result_path(arch, settings, bundle_dir)
    return nads.NADResult.load(path, settings) if store.matches(path, settings) else None


def stored_nads(archs: Iterable[str] = NAD_ARCHS + GPU_NAD_ARCHS,
                bundle_dir: str | Path = BUNDLE) -> dict[tuple[str, str], nads.NADResult]:
    """`{(arch, method): NADResult}` of every NAD estimate the bundle holds for `archs` (secant,
    then exact-gradient "autograd"), in the order of `archs`."""
    found = {(a, m): load_nad(a, m, bundle_dir) for a in archs for m in ("secant", "autograd")}
    return {key: r for key, r in found.items() if r is not None}


def secant_exact_overlaps(ks: Sequence[int], archs: Iterable[str] = GPU_NAD_ARCHS,
                          bundle_dir: str | Path = BUNDLE) -> dict[str, np.ndarray]:
    """`{arch: overlaps}` (`nads.subspace_overlaps` at each k of `ks`) of the secant and exact-gradient
    NADs of each architecture of `archs` whose two estimates the bundle holds."""
    stored = stored_nads(archs, bundle_dir)
    return {a: nads.subspace_overlaps(stored[(a, "secant")].nads, stored[(a, "autograd")].nads, ks) for a in archs
            if (a, "secant") in stored and (a, "autograd") in stored}


def _chunks_of(scratch, method):
    """Where the chunks of an estimate by `method` go: `scratch`, the mixed derivative's in Eq. 5's `eq5/` (its
    chunks: the same networks, the same settings)."""
    return Path(scratch) / "eq5" if method == "hessian" else scratch


def _nad_compute(arch, method, bundle_dir, scratch, progress):
    stored = load_nad(arch, method, bundle_dir)
    if stored is not None:
        return stored
    device = nad_device(arch, method)
    _check_device(nad_name(arch, method), device)
    return nads.load_or_estimate(arch, estimate_settings(arch, method), bundle_dir,   # as later readers see it:
                                 chunks_dir=_chunks_of(scratch, method), compact=True,   # float16 NADs
                                 device=device, progress=progress)


def _nad_status(arch, method, bundle_dir, scratch):
    """Stored, or how many of its chunks `scratch` holds and the rough cost of the rest."""
    from nadcore import plan

    item, est = nad_name(arch, method), estimate_settings(arch, method)
    n = nad_networks(arch, method)
    if load_nad(arch, method, bundle_dir) is not None:
        return Status(f"{item}: stored ({n:,} networks)", True)
    cells = [{"start": a, "stop": b} for a, b in nads.chunk_ranges(0, n)]
    left = sweeps.missing("nad_chunks", cells, nad_chunk_item(arch, method), _chunks_of(scratch, method))
    each = plan.nad_cost(nad_device(arch, method), arch, method, est.precision, est.compiled)
    return Status(f"{item}: {len(cells) - len(left)} of {len(cells)} chunks of {nads.CHUNK} networks in "
                  f"{_chunks_of(scratch, method)}",
                  False, each * sum(c["stop"] - c["start"] for c in left) if each else None)


def _nads(*estimates):
    """The items of the NAD estimates `(arch, method)`."""
    return (BundleItem(nad_name(a, m), partial(nad_item, a, m), partial(_nad_compute, a, m), partial(load_nad, a, m),
                       partial(_nad_status, a, m), partial(nad_device, a, m)) for a, m in estimates)


_declare(*_nads(*((a, "secant") for a in NAD_ARCHS + GPU_NAD_ARCHS),
                *((a, "autograd") for a in ("lenet", *GPU_NAD_ARCHS))), page="03_nads")


# N vs 2N for the exact-gradient estimates of 10,000 networks: 3N <= 10,000 in whole chunks, so the
# convergence reads the chunks of the 10,000-network estimate and trains nothing new
AUTOGRAD_CONV_ARCHS = ("lenet", *GPU_NAD_ARCHS)
AUTOGRAD_CONV_SIZES = [625, 1250, 2500, 3125]
# The deep networks' secant (`nad_item`'s networks): every N of SECANT_CONV_SIZES with 3N <= its
# networks, and the k below the smallest N (a k >= N compares arbitrary directions)
SECANT_CONV_ARCHS = GPU_NAD_ARCHS
SECANT_CONV_SIZES = (125, 250, 625, 1250, 2500, 3125)


def convergence_item(arch: str | None = None, method: str = "autograd") -> dict[str, Any]:
    """The settings of a stored N vs 2N convergence: the published scale's (secant LeNet, up to
    N = 5,000) without `arch`, else `arch`'s with `method` (`AUTOGRAD_CONV_SIZES`; the secant at
    `SECANT_CONV_SIZES`, reading the chunks of `nad_item(arch)` on `nad_device(arch)`)."""
    p = presets.preset("nads", "paper")
    if arch is None:
        return nads.with_eig_threads({"arch": p.conv_arch, "method": p.conv_method, "sizes": p.conv_sizes,
                                      "ks": p.conv_ks, "seed": SEED, "device": DEVICE}, EIG_THREADS)
    out = nads.with_eig_threads({"arch": arch, "method": method, "sizes": AUTOGRAD_CONV_SIZES, "ks": p.conv_ks,
                                 "seed": SEED, "device": nad_device(arch, method)}, EIG_THREADS)
    if method == "autograd":
        return out
    s = nad_item(arch, method)
    sizes = [n for n in SECANT_CONV_SIZES if 3 * n <= nad_networks(arch, method)]
    return {**out, "sizes": sizes, "ks": [k for k in out["ks"] if k < sizes[0]],
            **{k: s[k] for k in ("precision", "compiled") if k in s}}


def convergence_path(bundle_dir: str | Path = BUNDLE, arch: str | None = None, method: str = "autograd") -> Path:
    return Path(bundle_dir) / "nads" / f"convergence_{store.key(convergence_item(arch, method))}.npz"


def load_convergence(arch: str | None = None, bundle_dir: str | Path = BUNDLE,
                     method: str = "autograd") -> dict[str, np.ndarray] | None:
    """The stored convergence (`nads.convergence`'s arrays) of `convergence_item(arch, method)`, or None."""
    path, c = convergence_path(bundle_dir, arch, method), convergence_item(arch, method)
    return store.load(path, c).arrays if store.matches(path, c) else None


def convergence_compute(arch: str | None, method: str, bundle_dir: str | Path = BUNDLE,
                        scratch: str | Path | None = None, progress: bool = True) -> store.Result:
    """Compute (or read) the stored convergence of `convergence_item(arch, method)`, on its device;
    `scratch` holds the chunks (default: the bundle's `partial/`)."""
    c, scratch = convergence_item(arch, method), _scratch(bundle_dir, scratch)
    if arch is not None:   # its chunks are the estimate's
        compute(nad_name(arch, method), bundle_dir, scratch, progress)
    s = nads.EstimateSettings(method=c["method"], seed=SEED, precision=c.get("precision", "float32"),
                              compiled=c.get("compiled", False), eig_threads=EIG_THREADS)
    return store.cached(convergence_path(bundle_dir, arch, method), c, lambda: nads.convergence(
        c["arch"], s, c["sizes"], c["ks"], device=c["device"], results_dir=scratch, progress=progress),
        device=c["device"])


def _convergence(name, archs, method):
    """The item `name`: the N vs 2N convergence of each of `archs` (None: the published scale's) by `method`."""
    def run(bundle_dir, scratch, progress):
        for arch in archs:
            convergence_compute(arch, method, bundle_dir, scratch, progress)
        return load(bundle_dir)

    def load(bundle_dir):
        return {arch: load_convergence(arch, bundle_dir, method) for arch in archs}

    return BundleItem(name, lambda: {arch: convergence_item(arch, method) for arch in archs}, run, load,
                      _whole(name, lambda d: None not in load(d).values()))


_declare(_convergence("convergence", (None,), "autograd"), page="03_nads")
_declare(_convergence("convergence_autograd", AUTOGRAD_CONV_ARCHS, "autograd"),
         _convergence("convergence_secant", SECANT_CONV_ARCHS, "secant"), page="nads_in_practice")


# What bfloat16 and torch.compile do to the secant (the bundle's deep networks): per-network cosines
# with float32 for a few networks of each, and LeNet's leading subspaces at 1,000 networks
PRECISION = presets.PrecisionCheck(
    archs=["vgg11", "resnet18", "densenet121", "vit", "mixer", "convnext", "resnet18_blur"], count=8,
    overlap_arch="lenet", overlap_networks=1000, ks=[1, 4, 16, 64, 128, 256])


def precision_item() -> dict[str, Any]:
    return versions.stamp({**presets.as_dict(PRECISION), "seed": SEED, "device": DEVICE}, "precision_check")


def precision_path(bundle_dir: str | Path = BUNDLE) -> Path:
    return Path(bundle_dir) / "nads" / f"precision_{store.key(precision_item())}.npz"


def load_precision(bundle_dir: str | Path = BUNDLE) -> dict[str, dict[str, np.ndarray]] | None:
    """`{arch: {"eager", "compiled"}}` (`ch3_nads.precision_cosines`) and `"overlaps"`
    (`ch3_nads.precision_overlaps` of `PRECISION.overlap_arch`), or None if not stored."""
    path = precision_path(bundle_dir)
    if not store.matches(path, precision_item()):
        return None
    a = store.load(path, precision_item()).arrays
    out = {arch: {m: a[f"{arch}_{m}"] for m in ("eager", "compiled")} for arch in PRECISION.archs}
    return {**out, "overlaps": {m: a[f"overlap_{m}"] for m in ("compiled", "floor")}}


def _precision_arrays(scratch, progress):
    out = {}
    for arch in PRECISION.archs:
        for m, v in ch3_nads.precision_cosines(arch, PRECISION.count, SEED, DEVICE).items():
            out[f"{arch}_{m}"] = v
        if progress:
            print(f"precision: {arch} done", flush=True)
    ov = ch3_nads.precision_overlaps(PRECISION.overlap_arch, PRECISION.overlap_networks, PRECISION.ks, SEED,
                                     DEVICE, results_dir=scratch, progress=progress, eig_threads=EIG_THREADS)
    return {**out, **{f"overlap_{m}": v for m, v in ov.items()}}


def _precision_compute(bundle_dir, scratch, progress):
    store.cached(precision_path(bundle_dir), precision_item(), lambda: _precision_arrays(scratch, progress),
                 device=DEVICE)
    return load_precision(bundle_dir)


_declare(BundleItem("precision", precision_item, _precision_compute, load_precision,
                    _whole("precision", lambda d: load_precision(d) is not None)), page="nads_in_practice")


# ----------------------------------------------------------------------------- Chapter 3: Fig. 6

class Fig6Item(NamedTuple):
    """A Fig. 6 item: the network trained (`arch`), the NAD `indices` it is trained along, the `settings`
    that key its cells."""
    arch: str
    indices: list
    settings: dict


def _lenet_fig6(sigma=None):
    """LeNet's Fig. 6 at the published settings (at noise `sigma` if given)."""
    p = presets.preset("nads", "paper")
    settings = {**presets.as_dict(p.fig6), "seed": SEED}
    return Fig6Item(p.fig6_arch, p.fig6_indices,
                    settings if sigma is None else {**settings, "sigma": float(sigma)})


def _deep_fig6(name, sigma=None):
    """A `DEEP_FIG6` item: the network and max_lr of `DEEP_TRAIN` at its indices and `DEEP_SIGMA`
    (`sigma` is not read)."""
    published_arch, indices = DEEP_FIG6[name]
    arch, lr = DEEP_TRAIN[published_arch]
    return Fig6Item(arch, list(indices), {**_lenet_fig6().settings, "sigma": DEEP_SIGMA, "max_lr": lr})


def _fig6_replicate(name, sigma=None):
    """A `FIG6_NADS` item: its item's at its sigma, with the seed of its replicate (`sigma` is not read). Along the
    released NAD file, whose 1,023 rows end at NAD 1022, the last index is 1022."""
    item, method, r, sigma = FIG6_NADS[name]
    arch, indices, settings = fig6_item(sigma, name=item)
    if method == "published":
        last = len(published.fig6_measured()) - 1
        indices = list(dict.fromkeys(min(i, last) for i in indices))
    return Fig6Item(arch, indices, ch1_fourier.replicate_settings(settings, r))


def _fig6_linearised(name, sigma=None):
    """A `FIG6_LINEARISED` item: the full LeNet's run of its method, seed and sigma, linearised, at
    `LINEARISED_INDICES` (`sigma` is not read)."""
    method, r, at = FIG6_LINEARISED[name]
    arch, _, settings = _fig6_replicate(f"fig6_lenet_sigma{at:g}_{method}_seed{r}")
    return Fig6Item(arch, list(LINEARISED_INDICES), {**settings, "linearised": True})


# The Fig. 6 items stored as cells of NAD indices: `{item: its (arch, indices, settings) at a sigma}`.
FIG6_ITEMS = {"fig6": _lenet_fig6, **{name: partial(_deep_fig6, name) for name in DEEP_FIG6},
              **{name: partial(_fig6_replicate, name) for name in FIG6_NADS},
              **{name: partial(_fig6_linearised, name) for name in FIG6_LINEARISED}}


def fig6_item(sigma: float | None = None, name: str = "fig6") -> Fig6Item:
    """The `Fig6Item` `(arch, indices, settings)` of Fig. 6 at the published settings, on our NADs (at noise `sigma`
    instead of the published one if given: the sigma study's best). `name` "fig6" is LeNet's; a
    `DEEP_FIG6` name is the network and max_lr of `DEEP_TRAIN` at its indices and `DEEP_SIGMA`, on
    `nads_of(arch)`; a `FIG6_NADS` name is its item's at its sigma, with the seed of its replicate."""
    if name not in FIG6_ITEMS:
        raise InputError(f"name must be one of {', '.join(FIG6_ITEMS)}; got {name!r}")
    return FIG6_ITEMS[name](sigma)


def nads_of(arch: str) -> str:
    """The network whose NADs a trained `arch` is tested on: VGG-11's for VGG-11 with batch norm
    (`DEEP_TRAIN`), else its own."""
    return {trained: published for published, (trained, _) in DEEP_TRAIN.items()}.get(arch, arch)


def fig6_method(name: str) -> str:
    """The NADs that the Fig. 6 item `name` trains along: our "secant" or exact-gradient ("autograd") estimate,
    or the authors' released file ("published")."""
    if name in FIG6_LINEARISED:
        return FIG6_LINEARISED[name][0]
    return FIG6_NADS[name][1] if name in FIG6_NADS else "secant"


def fig6_basis(name: str, bundle_dir: str | Path = BUNDLE) -> nads.NADResult | None:
    """The NADs the Fig. 6 item `name` trains along (`fig6_method`), or None if the bundle does not hold them yet."""
    arch, method = nads_of(fig6_item(name=name).arch), fig6_method(name)
    return published.nads(arch) if method == "published" else load_nad(arch, method, bundle_dir)


def load_fig6(bundle_dir: str | Path = BUNDLE, sigma: float | None = None, name: str = "fig6") -> dict[int, float]:
    """`{index: test accuracy}` of the stored Fig. 6 cells of `name` (`fig6_item`) on our NADs
    (`fig6_method`'s), possibly partial."""
    arch, indices, settings = fig6_item(sigma, name)
    basis = fig6_basis(name, bundle_dir)
    if basis is None:
        return {}
    return ch3_nads.fig6_sweep(arch, basis, indices, settings, Path(bundle_dir) / "nads", device=item_device(name),
                               only_stored=True)


def fig6_runs(item: str, method: str, sigma: float | None = None) -> list[str]:
    """The `FIG6_NADS` names of `item`'s runs along the NADs of `method` at `sigma`, in seed order."""
    return [name for name, (i, m, _, s) in FIG6_NADS.items() if (i, m, s) == (item, method, sigma)]


def fig6_records(bundle_dir: str | Path = BUNDLE, name: str = "fig6") -> dict[int, dict[str, Any]]:
    """`{index: record}` of the stored Fig. 6 cells of `name` (those `load_fig6` reads)."""
    arch, indices, settings = fig6_item(name=name)
    basis = fig6_basis(name, bundle_dir)
    if basis is None:
        return {}
    found = sweeps.stored(f"fig6_{arch}", [{"index": i} for i in indices],
                          ch3_nads.fig6_settings(arch, basis, settings, item_device(name)), Path(bundle_dir) / "nads")
    return {indices[i]: result.record for i, result in found.items()}


def _fig6_cost(arch, settings, cells, device=DEVICE):
    from nadcore import plan

    variant = "linearised" if settings.get("linearised") else None
    each = plan.train_cost(device, arch, 2 * settings["n_train"], settings["epochs"], variant=variant)
    return None if each is None else cells * each


def _fig6_status(name, bundle_dir, scratch):
    arch, indices, settings = fig6_item(name=name)
    done, total = len(load_fig6(bundle_dir, name=name)), len(indices)
    return Status(f"{name} ({arch}): {done} of {total} NAD indices stored", done == total,
                  _fig6_cost(arch, settings, total - done, item_device(name)))


def _fig6_compute(name, bundle_dir, scratch, progress, sigma=None):
    """The Fig. 6 item `name` (at noise `sigma`, `fig6_item`) on its device, after the NADs it trains along."""
    device = item_device(name)
    _check_device(name, device)
    arch, indices, settings = fig6_item(sigma, name)
    if fig6_method(name) != "published":   # the NADs it trains along first
        compute(nad_name(nads_of(arch), fig6_method(name)), bundle_dir, scratch, progress)
    basis = fig6_basis(name, bundle_dir)
    if basis is None:
        raise Missing(f"{name}: the NADs it trains along are not in {bundle_dir} after computing them")
    return ch3_nads.fig6_sweep(arch, basis, indices, settings, bundle_dir / "nads", device=device,
                               batch=deep_batch(arch, device), progress=progress)


def _fig6_sigma_compute(bundle_dir, scratch, progress):
    """Fig. 6 at the sigma study's best: the study's single-seed grids first (they name it)."""
    _sigma_runs_compute(sigma_runs({})[:len(SIGMA_STUDY.sigmas)], bundle_dir, progress)
    return _fig6_compute("fig6", bundle_dir, scratch, progress, sigma=best_sigma(load_sigma_study(bundle_dir)[0]))


def _fig6_sigma_load(bundle_dir):
    sigma = known_best_sigma(load_sigma_study(bundle_dir)[0])
    return load_fig6(bundle_dir, sigma) if sigma is not None else {}


def _fig6_sigma_status(bundle_dir, scratch):
    grids = load_sigma_study(bundle_dir)[0]
    sigma = known_best_sigma(grids)
    arch, indices, settings = fig6_item(sigma if sigma is not None else 2.0)
    done, total = (len(load_fig6(bundle_dir, sigma)) if sigma is not None else 0), len(indices)
    best = "not known yet" if sigma is None else f"{sigma:g}"
    return Status(f"fig6_sigma ({arch}, the best sigma: {best}): {done} of {total} NAD indices stored", done == total,
                  _fig6_cost(arch, settings, total - done) + _sigma_left(grids, single=True))


def _fig6_items(names):
    return (BundleItem(name, partial(fig6_item, name=name), partial(_fig6_compute, name), partial(load_fig6, name=name),
                       partial(_fig6_status, name), partial(_deep_device, name)) for name in names)


_KERNEL = [n for n, (_, m, *_) in FIG6_NADS.items() if m == "hessian"]   # Chapter 8's: along the kernel's NADs
_declare(*_fig6_items(["fig6"]), page=("03_nads", "06_antialias"))
_declare(*_fig6_items(n for n in FIG6_ITEMS if n != "fig6" and n not in _KERNEL and n not in FIG6_LINEARISED),
         BundleItem("fig6_sigma", lambda: {s: fig6_item(s) for s in SIGMA_STUDY.sigmas}, _fig6_sigma_compute,
                    _fig6_sigma_load, _fig6_sigma_status), page="03_nads")
_declare(*_fig6_items(n for n in FIG6_ITEMS if n in _KERNEL or n in FIG6_LINEARISED), page="08_training")


# Which step makes the secant NADs the published ones (issue 42)? LeNet's secant NADs at each step h of
# the dial from `networks` networks, their N vs 2N overlap (N = `conv`, from the same chunks), stored with
# the leading `rows` NADs (what the overlaps at `ks` and Fig. 6 read); Fig. 6 at `fig6_indices` along each
# at `DEEP_SIGMA` (where LeNet learns its first NADs).
SECANT_DIAL = presets.SecantDial(arch="lenet", steps=(0.01, 1.0, 10.0, 100.0, 1000.0), networks=3000, conv=1000,
                                 ks=(1, 4, 16, 64), rows=128, fig6_indices=(0, 16, 64))


def dial_settings(step: float) -> dict[str, Any]:
    """The stored settings of the secant dial's NADs at step `step` (`SECANT_DIAL`)."""
    d = SECANT_DIAL
    return {**nads.nad_settings(d.arch, d.networks, "secant", step=step, seed=SEED, eig_threads=EIG_THREADS),
            "rows": d.rows}


def _dial_conv_path(step, bundle_dir):
    settings = {**dial_settings(step), "conv": SECANT_DIAL.conv, "ks": list(SECANT_DIAL.ks)}
    return Path(bundle_dir) / "nads" / f"dial_conv_{store.key(settings)}.npz", settings


def load_secant_dial(bundle_dir: str | Path = BUNDLE) -> dict[float, dict[str, Any]]:
    """`{step: {"nads": NADResult | None, "conv": {k: N vs 2N overlap} | None, "fig6": {index: accuracy}}}`
    of `SECANT_DIAL`, what is stored (nothing computed)."""
    d, out = SECANT_DIAL, {}
    for h in d.steps:
        path = nads.result_path(d.arch, dial_settings(h), bundle_dir)
        res = nads.NADResult.load(path, dial_settings(h)) if store.matches(path, dial_settings(h)) else None
        cpath, csettings = _dial_conv_path(h, bundle_dir)
        conv = (dict(zip(d.ks, store.load(cpath, csettings)["overlap"][0].tolist()))
                if store.matches(cpath, csettings) else None)
        fig6 = {} if res is None else ch3_nads.fig6_sweep(d.arch, res, d.fig6_indices, fig6_item(DEEP_SIGMA)[2],
                                                          Path(bundle_dir) / "nads", device=DEVICE, only_stored=True)
        out[h] = {"nads": res, "conv": conv, "fig6": fig6}
    return out


def fig6_spectra(bundle_dir: str | Path = BUNDLE) -> dict[str, tuple[int, np.ndarray]]:
    """Which estimate gave the published LeNet Fig. 6 curve (its `eig_ln` column is not the released file's,
    issue 57)? `{label: (networks, eigenvalues)}` of every LeNet spectrum at hand: the released file, our secant
    and exact-gradient estimates, and the secant dial's steps (`SECANT_DIAL`), stored or not yet (left out)."""
    n = published.NUM_NETWORKS
    out = {f"released file (secant, h = 100, {n:,} networks)": (n, published.spectrum("lenet"))}
    for label, method in (("ours, secant, h = 100", "secant"), ("ours, exact gradient", "autograd")):
        r = load_nad("lenet", method, bundle_dir)
        if r is not None:
            n = r.num_networks
            out[f"{label}, {n:,} networks"] = (n, r.eigenvalues)
    n = SECANT_DIAL.networks
    for h, v in load_secant_dial(bundle_dir).items():
        if v["nads"] is not None:
            out[f"ours, secant, h = {h:g}, {n:,} networks"] = (n, v["nads"].eigenvalues)
    return out


DIAL_REFERENCES = ("exact gradient", "published", "secant, h = 100")   # what `secant_dial` compares each step with


def secant_dial(bundle_dir: str | Path = BUNDLE) -> dict[str, Any]:
    """The secant dial as the pages read it: `"table"`, `ch3_nads.secant_dial_table` of `load_secant_dial`
    against the `DIAL_REFERENCES`, LeNet's stored exact-gradient NADs, the published NADs and its stored
    secant NADs; `"flips"`, why it turns (`ch3_nads.first_layer_flips` at the dial's steps). Reads the
    stored dial; computes the first-layer switches (2 s)."""
    refs = dict(zip(DIAL_REFERENCES, (load_nad("lenet", "autograd", bundle_dir), published.nads("lenet"),
                                      load_nad("lenet", "secant", bundle_dir))))
    return {"table": ch3_nads.secant_dial_table(load_secant_dial(bundle_dir), refs),
            "flips": ch3_nads.first_layer_flips(SECANT_DIAL.steps)}


def _dial_compute(bundle_dir, scratch, progress):
    """Compute (or finish) `SECANT_DIAL`, one step at a time: NADs, their N vs 2N overlap, Fig. 6."""
    d = SECANT_DIAL
    for h in d.steps:
        path = nads.result_path(d.arch, dial_settings(h), bundle_dir)
        if not store.matches(path, dial_settings(h)):
            s = nads.EstimateSettings(step=h, seed=SEED, eig_threads=EIG_THREADS, num_networks=d.networks)
            res = nads.estimate(d.arch, s, device=DEVICE, results_dir=scratch, progress=progress)
            nads.NADResult(res.eigenvalues, res.nads[:d.rows], dial_settings(h), res.record, res.chunks).save(
                path, compact=True)
        cpath, csettings = _dial_conv_path(h, bundle_dir)
        dial = nads.EstimateSettings(step=h, seed=SEED, eig_threads=EIG_THREADS)
        store.cached(cpath, csettings, lambda dial=dial: nads.convergence(d.arch, dial, [d.conv], d.ks, device=DEVICE,
                                                                          results_dir=scratch, progress=progress),
                     device=DEVICE)
        ch3_nads.fig6_sweep(d.arch, nads.NADResult.load(path, dial_settings(h)), d.fig6_indices,
                            fig6_item(DEEP_SIGMA)[2], bundle_dir / "nads", device=DEVICE,
                            batch=deep_batch(d.arch, DEVICE), progress=progress)
    return load_secant_dial(bundle_dir)


def _dial_stored(bundle_dir):
    whole = len(SECANT_DIAL.fig6_indices)
    return all(v["nads"] is not None and v["conv"] is not None and len(v["fig6"]) == whole
               for v in load_secant_dial(bundle_dir).values())


_declare(BundleItem("secant_dial", lambda: {h: dial_settings(h) for h in SECANT_DIAL.steps}, _dial_compute,
                    load_secant_dial, _whole("secant_dial", _dial_stored)), page="03_nads")


# Sec. 3 after Eq. 5: the gradient covariance's eigenvectors and the expected right singular vectors of the mixed
# derivative grad^2_{theta, x} f are "surprisingly very similar for most networks" (issue 57). The latter from
# `networks` networks of each of `archs` (method "hessian": E[H^T H]), its leading `rows` stored, beside the
# stored secant and exact-gradient NADs of 10,000 networks at `ks`; the exact gradient of the same networks
# against that of 10,000 is the overlap `networks` networks can show at best. A deep network's H (9-11 million
# parameters x 1,024) is more than `mixed_gram` holds: not here.
EQ5 = presets.Eq5(archs=("logreg", "lenet"), networks=500, ks=(1, 4, 16, 64), rows=64)


def eq5_settings(arch: str) -> dict[str, Any]:
    """The stored settings of the Eq. 5 NADs of `arch` (`EQ5`): the mixed derivative's, from `EQ5.networks`."""
    return {**nads.nad_settings(arch, EQ5.networks, "hessian", seed=SEED, eig_threads=EIG_THREADS),
            "rows": EQ5.rows}


def load_eq5(bundle_dir: str | Path = BUNDLE) -> dict[str, dict[str, Any]]:
    """`{arch: {"secant", "autograd", "floor": overlaps at EQ5.ks, "flat": lambda_min / lambda_0}}` of the stored
    Eq. 5 NADs (`EQ5`) with the stored secant and exact-gradient NADs of `arch`, the floor (the exact gradient of the
    same networks against that of 10,000: what `EQ5.networks` networks can show; recomputed, seconds) and how
    flat the mixed derivative's spectrum is. An architecture not stored yet is left out; nothing is trained."""
    out = {}
    for arch in EQ5.archs:
        settings = eq5_settings(arch)
        path = nads.result_path(arch, settings, bundle_dir)
        secant = load_nad(arch, "secant", bundle_dir)
        exact = load_nad(arch, "autograd", bundle_dir) or (secant if arch == "logreg" else None)  # linear: exact
        if not store.matches(path, settings) or secant is None or exact is None:
            continue
        hess = nads.NADResult.load(path, settings)
        with warnings.catch_warnings():   # the floor's own trust line: what the row reports, not a warning
            warnings.simplefilter("ignore", nads.NADTrustWarning)
            s = nads.EstimateSettings("autograd", seed=SEED, eig_threads=EIG_THREADS, num_networks=EQ5.networks)
            same = nads.estimate(arch, s, device="cpu", progress=False)
        overlaps: dict[str, Any] = {
            name: nads.subspace_overlaps(hess.nads if name != "floor" else same.nads, ref.nads, EQ5.ks)
            for name, ref in (("secant", secant), ("autograd", exact), ("floor", exact))}
        out[arch] = {**overlaps, "flat": float(np.clip(hess.eigenvalues, 0, None)[-1] / hess.eigenvalues[0])}
    return out


def _eq5_compute(bundle_dir, scratch, progress):
    """The Eq. 5 NADs of each of `EQ5.archs`; their chunks (a 1,024 x 1,024 sum each, 8 MB) go to `scratch`'s
    `eq5/`, which git ignores: resumable on this machine, never committed."""
    for arch in EQ5.archs:
        settings = eq5_settings(arch)
        path = nads.result_path(arch, settings, Path(bundle_dir))
        if not store.matches(path, settings):
            s = nads.EstimateSettings("hessian", seed=SEED, eig_threads=EIG_THREADS, num_networks=EQ5.networks)
            res = nads.estimate(arch, s, device=DEVICE, results_dir=Path(scratch) / "eq5", progress=progress)
            nads.NADResult(res.eigenvalues, res.nads[:EQ5.rows], settings, res.record, res.chunks).save(
                path, compact=True)
    return load_eq5(bundle_dir)


_declare(BundleItem("eq5", lambda: {a: eq5_settings(a) for a in EQ5.archs}, _eq5_compute, load_eq5,
                    _whole("eq5", lambda d: len(load_eq5(d)) == len(EQ5.archs))), page="03_nads")
_declare(*_nads(("lenet", "hessian")), page="08_training")   # the kernel's NADs with all their rows: Eq. 5's chunks


# ----------------------------------------------------------------------------- Chapter 4

STAND_INS = ("digits", "fashion")  # the datasets of Chapters 4-5 in the bundle (no CIFAR-10 here)


def _check_stand_in(dataset):
    if dataset not in STAND_INS:
        raise InputError(f"dataset must be one of {', '.join(STAND_INS)}; got {dataset!r}")
    return dataset


def cifar_item(dataset: str = "digits") -> presets.Cifar10:
    """The settings of Chapter 4's bundle item on `dataset`: the smoke preset on the digits, its
    Fashion-MNIST version (`presets.fashion`) on "fashion"."""
    if _check_stand_in(dataset) == "fashion":
        return presets.fashion("cifar10")
    return presets.preset("cifar10", "smoke")


def cifar(bundle_dir: str | Path = BUNDLE, compute: bool = False, progress: bool = True, dataset: str = "digits",
          data_root: str | Path = DATA) -> dict[str, Any] | None:
    """Chapter 4 on a stand-in (no CIFAR-10 here), `dataset` "digits" or "fashion" (`cifar_item`), with
    our 10,000-network secant NADs: `{"curve": Fig. 7, "flip": Fig. 8}`, or None while missing (runs,
    NADs, or Fashion-MNIST's files in `data_root`, whose fingerprint keys the runs)."""
    from nadcore import cifar as c

    p = cifar_item(dataset)
    bases = {a: load_nad(a, bundle_dir=bundle_dir) for a in ch4_cifar10.nad_archs(p)}
    U = {a: b.nads for a, b in bases.items() if b is not None}
    if len(U) < len(bases):
        return None
    try:
        train = c.load(p.dataset, data_root, train=True, seed=SEED)
        test = c.load(p.dataset, data_root, train=False, seed=SEED)
    except ValueError:
        if compute:
            raise                      # its message says how to install the data
        return None
    mean, std = c.stats(p.dataset, train[0])
    run: dict[str, Any] = dict(device=DEVICE, seed=SEED, results_dir=bundle_dir, progress=progress,
                               only_stored=not compute)
    try:
        curve = ch4_cifar10.poisoning_curve(p.arch, train, test, U[p.arch], p.indices, p.eps,
                                            mean, std, p.recipe, **run)
        flip = ch4_cifar10.flip_experiment(p.flip_archs, train, test, {a: U[a] for a in p.flip_archs},
                                           p.recipe, **run)
    except (FileNotFoundError, store.StoreError):
        return None
    return {"curve": curve, "flip": flip}


def _cifar(name, dataset):
    """The item `name`: Chapter 4 on `dataset` (`cifar`)."""
    return BundleItem(name, partial(cifar_item, dataset),
                      lambda bundle_dir, scratch, progress: cifar(bundle_dir, compute=True, progress=progress,
                                                                  dataset=dataset),
                      partial(cifar, progress=False, dataset=dataset),
                      _whole(name, lambda d: cifar(d, progress=False, dataset=dataset) is not None))


_declare(_cifar("cifar", "digits"), _cifar("cifar_fashion", "fashion"), page="04_cifar10")


# ----------------------------------------------------------------------------- Chapter 5

UNDERSPEC_ARCHS = ("lenet", "mlp")
PAIR_INDICES = [0, 100, 1000]   # Fig. 2 of the follow-up on a 3 x 3 grid of NAD indices, 3 seeds


def pairs_item() -> presets.Pairs:
    """The settings of the follow-up's Fig. 2 in the bundle: the paper preset on `PAIR_INDICES` with its 3
    seeds (which the paper averages), for the run `SEED`."""
    P = ch5_underspec.chapter_settings("paper", SEED)
    return dataclasses.replace(P.pairs, indices=PAIR_INDICES,
                               selected=[[i, j] for i in PAIR_INDICES for j in PAIR_INDICES if i != j][:4])


def ood_item(dataset: str = "digits") -> presets.Ood:
    """The settings of the follow-up's Fig. 3 in the bundle, for the run `SEED`: the paper preset on the
    digits stand-in with its first seed, or `presets.fashion("ood")` with `dataset="fashion"`."""
    if _check_stand_in(dataset) == "fashion":
        f = presets.fashion("ood")
        return dataclasses.replace(f, seeds=[seeds.derive(SEED, r) for r in f.seeds])
    ood = ch5_underspec.chapter_settings("paper", SEED).ood
    return dataclasses.replace(ood, dataset="digits", limit=None, seeds=ood.seeds[:1])


def underspec_cost(figure: str, dataset: str = "digits", archs: Sequence[str] = UNDERSPEC_ARCHS,
                   device: str = DEVICE) -> float | None:
    """Rough seconds of the bundle's Fig. 2 ("pairs") or Fig. 3 ("ood", on `dataset`) for `archs` on
    `device` (`plan.train_cost`; on a GPU inside `plan.gpu_costs`), None where unknown."""
    from nadcore import plan

    if figure not in ("pairs", "ood"):
        raise InputError(f"figure must be 'pairs' or 'ood'; got {figure!r}")
    s = pairs_item() if figure == "pairs" else ood_item(dataset)
    cells = len(s.seeds) * len(s.indices) ** (2 if figure == "pairs" else 1)
    samples = 2 * s.n_train if isinstance(s, presets.Pairs) else (s.limit or 1797)
    each = [plan.train_cost(device, a, samples, s.recipe[a].epochs) for a in archs]
    known = [x for x in each if x is not None]
    return cells * sum(known) if len(known) == len(each) else None


def underspec(figure: str, arch: str, bundle_dir: str | Path = BUNDLE, compute: bool = False, progress: bool = True,
              dataset: str = "digits", data_root: str | Path = DATA,
              device: str = DEVICE) -> ch5_underspec.PairGrid | ch5_underspec.OodGrid | None:
    """The stored grid of the follow-up's Fig. 2 or 3 (Fig. 3 on `dataset`, "digits" or "fashion") for
    `arch` (our secant NADs of `nad_name(arch)`), trained on `device`; None while cells are missing, unless
    `compute`."""
    basis = load_nad(arch, bundle_dir=bundle_dir)
    if basis is None:
        return None
    run: dict[str, Any] = dict(device=device if compute else DEVICE, progress=progress, only_stored=not compute)
    if figure == "pairs":
        return ch5_underspec.pair_grid(arch, basis, pairs_item(), bundle_dir,
                                       batch=deep_batch(arch, device) if device == "cuda" else 8, **run)
    return ch5_underspec.ood_grid(arch, basis, ood_item(dataset), bundle_dir, data_root, **run)


def _underspec(name, figure, dataset="digits", archs=UNDERSPEC_ARCHS, device=DEVICE):
    """The item `name`: the follow-up's `figure` ("pairs" or "ood", on `dataset`) for `archs` on `device`."""
    def run(bundle_dir, scratch, progress):
        _check_device(name, device)
        for arch in archs:
            compute(nad_name(arch), bundle_dir, scratch, progress)
            underspec(figure, arch, bundle_dir, compute=True, progress=progress, dataset=dataset, device=device)
        return load(bundle_dir)

    def load(bundle_dir):
        return {arch: underspec(figure, arch, bundle_dir, progress=False, dataset=dataset, device=device)
                for arch in archs}

    def status(bundle_dir, scratch):
        done = None not in load(bundle_dir).values()
        return Status(f"{name}: " + ("stored" if done else "not complete"), done,   # priced on a GPU only
                      None if done or device != "cuda" else underspec_cost(figure, dataset, archs, device))

    return BundleItem(name, pairs_item if figure == "pairs" else partial(ood_item, dataset), run, load, status,
                      (lambda: "cuda") if device == "cuda" else _this_cpu)


# The follow-up's Fig. 2 for ResNet-18 (issue 57): the same 3 x 3 grid of NAD pairs and 3 seeds, the follow-up's
# ResNet-18 recipe, along our 2,000-network secant NADs of ResNet-18, on a CUDA GPU (`tools/gpu_bundle.py`).
UNDERSPEC_GPU = {"underspec_pairs_resnet18": ("pairs", ("resnet18",))}
_declare(_underspec("underspec_ood", "ood"), _underspec("underspec_pairs", "pairs"),
         _underspec("underspec_ood_fashion", "ood", "fashion"),
         *(_underspec(name, figure, archs=archs, device="cuda") for name, (figure, archs) in UNDERSPEC_GPU.items()),
         page="05_underspecification")


# ----------------------------------------------------------------------------- Chapter 6

# Chapter 6 again at the sigma study's best (`DEEP_SIGMA`): at the caption's 3 our max-pooling LeNet is
# near chance on most of the grid, too weak a signal to tell the prefilters apart. Same NADs.
ANTIALIAS_SIGMA = {"fourier": {"sigma": DEEP_SIGMA}, "nads": {"fig6": {"sigma": DEEP_SIGMA}}}


def load_antialias(bundle_dir: str | Path = BUNDLE, best_sigma: bool = False) -> ch6_antialias.AntialiasResults:
    """Chapter 6 at the published settings (`ch6_antialias.chapter_results`, computing nothing), or at
    the sigma study's best with `best_sigma` (`ANTIALIAS_SIGMA`): the max-pooling Fig. 1 cells are
    Fig. 1's own; pieces not stored yet are None or empty."""
    return ch6_antialias.chapter_results("paper", SEED, bundle_dir, DEVICE, compute=False,
                                         overrides=ANTIALIAS_SIGMA if best_sigma else None)


def antialias_gaps(bundle_dir: str | Path = BUNDLE) -> tuple[str, str] | None:
    """What Chapter 6's bundle item lacks: `(names of the missing parts, rough cost on a 2-core
    CPU)`, or None when it is complete (`python -m nadcore.bundle antialias` computes it)."""
    from nadcore import plan

    items = plan.chapter_plan("06_antialias", "paper", seed=SEED, results_dir=bundle_dir, device=DEVICE).items
    todo = [it for it in items if it.stored < it.count]
    if not todo:
        return None
    return ", ".join(it.name for it in todo), plan.duration(sum(it.cost_s or 0 for it in todo))


def _antialias_compute(bundle_dir, scratch, progress, best_sigma=False):
    """Each part for every variant before the next part; at the best sigma, the NADs are the `antialias` item's."""
    for part in ("fig1", "fig6") if best_sigma else ("fig1", "nads", "fig6"):
        ch6_antialias.chapter_results("paper", SEED, bundle_dir, DEVICE, progress=progress, parts=(part,),
                                      scratch=scratch, compact=True, overrides=ANTIALIAS_SIGMA if best_sigma else None)
    return load_antialias(bundle_dir, best_sigma)


def _antialias_sigma_stored(bundle_dir):
    r = load_antialias(bundle_dir, best_sigma=True)
    return (all(len(r.fig1[v]) == len(r.grid.half()) for v in r.variants)
            and all(len(r.fig6[v]) == len(r.settings.indices) for v in r.variants))


# Chapter 6's Fig. 1 again with two more seeds (replicates 1 and 2; replicate 0 is `antialias_sigma`'s, or
# `antialias`'s at the caption's sigma): is the order of the variants within the low band, and a 5-tap filter's
# lead at the caption's sigma, more than one seed's draw?
ANTIALIAS_SEEDS = (1, 2)


def load_antialias_seeds(bundle_dir: str | Path = BUNDLE,
                         best_sigma: bool = True) -> dict[str, list[dict[tuple[int, int], float]]]:
    """`{variant: [{cell: accuracy} of each of `ANTIALIAS_SEEDS`]}` as stored (`ch6_antialias.fig1_seeds`), where
    LeNet learns (`best_sigma`) or at the caption's sigma."""
    return ch6_antialias.fig1_seeds("paper", SEED, ANTIALIAS_SEEDS, bundle_dir, DEVICE, compute=False,
                                    overrides=ANTIALIAS_SIGMA if best_sigma else None)


def _antialias_seeds_compute(bundle_dir, scratch, progress, best_sigma=True):
    ch6_antialias.fig1_seeds("paper", SEED, ANTIALIAS_SEEDS, bundle_dir, DEVICE, progress=progress,
                             overrides=ANTIALIAS_SIGMA if best_sigma else None)
    return load_antialias_seeds(bundle_dir, best_sigma)


def _antialias_seeds_status(bundle_dir, scratch, best_sigma=True):
    grids = load_antialias_seeds(bundle_dir, best_sigma)
    cells = len(fourier.make_grid(presets.preset("antialias", "paper").grid).half())
    done = sum(len(g) for gs in grids.values() for g in gs)
    total = cells * len(grids) * len(ANTIALIAS_SEEDS)
    name = "antialias_sigma_seeds" if best_sigma else "antialias_seeds"
    return Status(f"{name}: {done:,} of {total:,} Fig. 1 cells stored", done == total)


def _antialias_settings(**extra):
    """The settings of an antialias item: the paper preset's, with `extra`."""
    return {**presets.as_dict(presets.preset("antialias", "paper")), **extra}


_declare(BundleItem("antialias", lambda: presets.preset("antialias", "paper"), _antialias_compute, load_antialias,
                    _whole("antialias", lambda d: antialias_gaps(d) is None),
                    also_reads=load_antialias),   # its N vs 2N convergence, which the status does not read
         BundleItem("antialias_sigma", lambda: _antialias_settings(overrides=ANTIALIAS_SIGMA),
                    partial(_antialias_compute, best_sigma=True), partial(load_antialias, best_sigma=True),
                    _whole("antialias_sigma", _antialias_sigma_stored)),
         BundleItem("antialias_sigma_seeds",
                    lambda: _antialias_settings(overrides=ANTIALIAS_SIGMA, replicates=list(ANTIALIAS_SEEDS)),
                    _antialias_seeds_compute, load_antialias_seeds, _antialias_seeds_status),
         BundleItem("antialias_seeds",
                    lambda: _antialias_settings(replicates=list(ANTIALIAS_SEEDS)),
                    partial(_antialias_seeds_compute, best_sigma=False),
                    partial(load_antialias_seeds, best_sigma=False),
                    partial(_antialias_seeds_status, best_sigma=False)), page="06_antialias")


# ----------------------------------------------------------------------------- Chapter 7

def load_zoo(bundle_dir: str | Path = BUNDLE, compute: bool = False, progress: bool = False,
             scratch: str | Path | None = None) -> ch7_zoo.ZooResults:
    """Chapter 7 at the published scale (`ch7_zoo.chapter_results("paper")`): what the bundle holds,
    or, with `compute`, everything (the exact-gradient NADs first, then the secant); `scratch` holds
    the chunks (default: the bundle's `partial/`)."""
    run = lambda secant: ch7_zoo.chapter_results("paper", SEED, bundle_dir, DEVICE, compute=compute, progress=progress,
                                                 scratch=_scratch(bundle_dir, scratch), compact=True, secant=secant)
    if compute:
        run(False)
    return run(True)


def _zoo_stored(bundle_dir):
    zoo = load_zoo(bundle_dir)
    return (not ch7_zoo.missing(zoo) and None not in zoo.secant.values()
            and all(len(f) == len(zoo.settings.fig6_indices) for f in zoo.fig6.values()))


def load_zoo_null(bundle_dir: str | Path = BUNDLE, compute: bool = False,
                  progress: bool = False) -> ch7_zoo.NullFig6 | None:
    """Fig. 6 along ConvNeXt's null directions and their controls (`ch7_zoo.null_fig6`, its
    `NULL_FIG6_REPLICATES` seeds) at Chapter 7's Fig. 6 recipe, on the stored exact-gradient NADs: what the
    bundle holds (NaN where not stored; None without those NADs), or, with `compute`, every cell (~12
    CPU-minutes each)."""
    convnext = load_nad("convnext", "autograd", bundle_dir)
    if convnext is None:
        if compute:
            raise ValueError("bundle_dir holds no exact-gradient NADs of ConvNeXt: compute the item "
                             "nads_convnext_autograd first")
        return None
    return ch7_zoo.null_fig6(convnext, presets.preset("zoo", "paper"), bundle_dir, seed=SEED, device=DEVICE,
                             compute=compute, progress=progress)


def _zoo_null_stored(bundle_dir):
    r = load_zoo_null(bundle_dir)
    return r is not None and bool(np.isfinite(r.null).all() and np.isfinite(r.control).all())


_declare(*_nads(*((a, "autograd") for a in ZOO_ARCHS), *((a, "secant") for a in ZOO_ARCHS)),
         _convergence("convergence_zoo", ZOO_ARCHS, "autograd"),
         BundleItem("zoo", lambda: presets.preset("zoo", "paper"),
                    lambda bundle_dir, scratch, progress: load_zoo(bundle_dir, compute=True, progress=progress,
                                                                   scratch=scratch),
                    load_zoo, _whole("zoo", _zoo_stored)),
         BundleItem("zoo_null", lambda: {"zoo": presets.preset("zoo", "paper"),
                                         "replicates": ch7_zoo.NULL_FIG6_REPLICATES},
                    lambda bundle_dir, scratch, progress: load_zoo_null(bundle_dir, compute=True, progress=progress),
                    load_zoo_null, _whole("zoo_null", _zoo_null_stored)), page="07_zoo")


# ----------------------------------------------------------------------------- beside the published numbers

def plain_deep(name: str, bundle_dir: str | Path = BUNDLE) -> tuple[dict, dict]:
    """`(table, records)` of the stored cells of the `DEEP_FIG1` item `name` trained as the published
    network itself (plain VGG-11) at Fig. 1's settings: why `DEEP_TRAIN` trains another."""
    _, grid, _, pooling = fourier_item(name)
    return ch1_fourier.stored_directions((DEEP_FIG1[name],), grid, fourier_item("fig1")[2],
                                         Path(bundle_dir) / "fourier", pooling, "fig1")


def fig1_comparison(bundle_dir: str | Path = BUNDLE) -> tuple[dict[str, published.Fig1Pair], fourier.Grid]:
    """Fig. 1, ours beside the published grid, for every architecture of the published CSV: `{arch:
    published.Fig1Pair}` and the grid."""
    table, grid, _, records = load_fourier("fig1", bundle_dir)
    for name, arch in DEEP_FIG1.items():   # under the published column's name
        trained = DEEP_TRAIN[arch][0]
        deep, _, _, deep_records = load_fourier(name, bundle_dir)
        table, records = {**table, arch: deep.get(trained, {})}, {**records, arch: deep_records.get(trained, [])}
    ours = ch1_fourier.per_cell(table, "test_acc")
    out = {}
    for arch in published.fig1_archs():
        mine, pub = ours.get(arch, {}), published.fig1(arch)
        out[arch] = published.Fig1Pair(mine, pub, published.compare_grids(mine, pub) if len(mine) >= 3 else None,
                                       len(mine), len(grid.half()), records.get(arch, []))
    return out, grid


def authors_code_rows(
    comparison: Mapping[str, published.Fig1Pair],
) -> list[tuple[tuple[int, int], str, float, tuple[float, float], float | None]]:
    """Rows `(cell, pattern, published, authors' code (two seeds), ours or None)` for the LeNet cells
    measured with the authors' code (`published.AUTHORS_CODE_LENET`); `comparison` is
    `fig1_comparison()[0]`. Ours are sines (cosines at self-conjugate cells), as the grid."""
    lenet = comparison["lenet"]
    rows = []
    for (cell, kind), runs in published.AUTHORS_CODE_LENET.items():
        ours_kind = "cos" if fourier.is_self_conjugate(*cell) else "sin"
        mine = lenet.ours.get(fourier.canonical(*cell)) if kind == ours_kind else None
        rows.append((cell, kind, lenet.published[cell], runs, mine))
    return rows


def nad_overlaps(ks: Sequence[int], bundle_dir: str | Path = BUNDLE) -> dict[tuple[str, str], np.ndarray]:
    """Subspace overlap (`nads.subspace_overlaps`) of our stored NADs with the published ones, for
    each k of `ks`: `{(arch, method): array}` for every estimate of `stored_nads` whose architecture
    the authors published."""
    return {(a, m): nads.subspace_overlaps(r.nads, published.nads(a).nads, ks)
            for (a, m), r in stored_nads(bundle_dir=bundle_dir).items() if a in published.ARCHS}


def fig6_comparison(bundle_dir: str | Path = BUNDLE) -> ch3_nads.Fig6Comparison:
    """Our stored Fig. 6 cells (`load_fig6`, `{index: accuracy}` on our LeNet NADs) beside the published curves
    (`published.fig6`), at the sigma study's best too (`ch3_nads.Fig6Comparison`); `deep` holds the deep
    networks' items (`DEEP_FIG6`) on their own NADs."""
    arch, indices, settings = fig6_item()
    best = known_best_sigma(load_sigma_study(bundle_dir)[0])
    return ch3_nads.Fig6Comparison(
        arch=arch, ours=load_fig6(bundle_dir), published=published.fig6(arch), settings=settings, indices=indices,
        curves={a: published.fig6(a) for a in published.FIG6_ARCHS}, best_sigma=best,
        ours_best=load_fig6(bundle_dir, best) if best is not None else {},
        deep={arch: load_fig6(bundle_dir, name=name) for name, (arch, _) in DEEP_FIG6.items()})


# ----------------------------------------------------------------------------- Chapter 8: NADs during training

def training_bases(bundle_dir: str | Path = BUNDLE) -> dict[str, np.ndarray] | None:
    """The NADs (rows) of each of Chapter 8's networks (`ch8_training.nad_bases`), None while one is not stored."""
    return ch8_training.nad_bases(presets.preset("training", "paper").networks, "paper", SEED, bundle_dir,
                                  compute=False)


def load_training(bundle_dir: str | Path = BUNDLE) -> dict[tuple[str, str, int], dict[str, np.ndarray]]:
    """Chapter 8's stored networks, `{(network, task, replicate): arrays}` (`ch8_training.chapter_results` at the
    published scale, computing nothing)."""
    return ch8_training.chapter_results("paper", SEED, bundle_dir, DEVICE, compute=False).cells


def _training_compute(bundle_dir, scratch, progress):
    """Chapter 8's networks as `nadcore run 08_training --scale paper` computes them, once their NADs are stored."""
    if training_bases(bundle_dir) is None:
        raise Missing("training: the NADs its networks train along are not stored (nads_lenet, nads_mlp, antialias)")
    return ch8_training.chapter_results("paper", SEED, bundle_dir, DEVICE, progress=progress, data_root=DATA).cells


def _training_status(bundle_dir, scratch):
    settings = presets.preset("training", "paper")
    done, total = len(load_training(bundle_dir)), len(ch8_training.cells(settings))
    return Status(f"training ({', '.join(settings.networks)}): {done} of {total} trained networks stored",
                  done == total)


_declare(BundleItem("training", lambda: presets.preset("training", "paper"), _training_compute, load_training,
                    _training_status), page="08_training")


CONVENTION_ARCH = "lenet"   # which convention of "the" NADs (issue 61): LeNet's stored secant estimate's networks


def conventions_settings() -> dict[str, Any]:
    """The settings of the stored comparison of conventions: the estimate's networks, seed and ks."""
    return versions.stamp({"arch": CONVENTION_ARCH, "method": "secant", "step": 100.0,
                           "num_networks": nad_networks(CONVENTION_ARCH), "seed": SEED,
                           "ks": list(ch8_training.CONVENTION_KS), "device": DEVICE}, "conventions")


def _conventions_path(bundle_dir):
    return Path(bundle_dir) / "nads" / f"conventions_{store.key(conventions_settings())}.npz"


def load_conventions(bundle_dir: str | Path = BUNDLE) -> dict[str, np.ndarray] | None:
    """The stored comparison of the centred and uncentred NADs (`ch8_training.conventions`), None if not stored."""
    path, settings = _conventions_path(bundle_dir), conventions_settings()
    return dict(store.load(path, settings).arrays) if store.matches(path, settings) else None


def _conventions_compute(bundle_dir, scratch, progress):
    """The gradients of the stored LeNet estimate's networks again (chunks in `scratch`, which git ignores), their
    two conventions compared, stored in the bundle."""
    settings = conventions_settings()
    stored = load_nad(CONVENTION_ARCH, bundle_dir=bundle_dir)
    if stored is None:
        raise Missing(f"conventions: the stored NADs of {CONVENTION_ARCH} (nads_{CONVENTION_ARCH}) come first")
    if load_conventions(bundle_dir) is None:
        start = time.perf_counter()
        moments = ch8_training.convention_moments(CONVENTION_ARCH, settings["num_networks"], SEED,
                                                  Path(scratch) / "conventions", progress)
        store.save(_conventions_path(bundle_dir), ch8_training.conventions(moments, stored.nads), settings,
                   device=DEVICE, duration=time.perf_counter() - start)
    return load_conventions(bundle_dir)


_declare(BundleItem("conventions", conventions_settings, _conventions_compute, load_conventions,
                    _whole("conventions", load_conventions)), page="08_training")


# ----------------------------------------------------------------------------- the one dispatch

ITEMS = tuple(REGISTRY)   # every item, in the order `all` computes them: as declared, chapter by chapter (an
                         # item's inputs are declared before it)


def item_device(item: str) -> str:
    """The device that computes (and computed) bundle item `item`."""
    return lookup(item).device()


def compute(item: str, bundle_dir: str | Path = BUNDLE, scratch: str | Path | None = None,
            progress: bool = True) -> Any:
    """Compute (or finish) one bundle item of `ITEMS` (Chapters 4-5 on Fashion-MNIST, cifar_fashion and
    underspec_ood_fashion, read Debian's dataset-fashion-mnist, `make fashion`), stored as it goes;
    returns what `load` reads. A finished item computes nothing; NAD chunks go to `scratch` (default:
    the bundle's `partial/`)."""
    entry = lookup(item)
    bundle_dir = Path(bundle_dir)
    _note_machine(bundle_dir)
    with store.writing_bundle():
        return entry.compute(bundle_dir, _scratch(bundle_dir, scratch), progress)


def load(item: str, bundle_dir: str | Path = BUNDLE) -> Any:
    """What the bundle holds of `item` (its `BundleItem.load`), computing nothing."""
    return lookup(item).load(Path(bundle_dir))


def complete(item: str, bundle_dir: str | Path = BUNDLE) -> bool:
    """True when bundle item `item` is fully stored in `bundle_dir`."""
    return lookup(item).status(Path(bundle_dir), _scratch(bundle_dir, None)).complete


def status(item: str, bundle_dir: str | Path = BUNDLE, scratch: str | Path | None = None) -> str:
    """One line: how much of a bundle item is stored, and the command (and rough CPU cost) for the rest."""
    from nadcore import plan

    if item_device(item) != "cuda":
        s = lookup(item).status(Path(bundle_dir), _scratch(bundle_dir, scratch))
        cost = None if s.seconds is None else f"~{plan.duration(s.seconds)} on a 2-core CPU"
    else:
        with plan.gpu_costs(bundle_dir):
            s = lookup(item).status(Path(bundle_dir), _scratch(bundle_dir, scratch))
        cost = "float32, on a CUDA GPU" + ("" if s.seconds is None else
                                           f": ~{plan.duration(s.seconds)} as the bundle's GPU records price it")
    if s.complete:
        return s.head
    elsewhere = Path(bundle_dir).resolve() != Path(BUNDLE).resolve()
    where = f" --bundle-dir {shlex.quote(str(bundle_dir))}" if elsewhere else ""
    return f"{s.head}; `python -m nadcore.bundle {item}{where}` computes the rest" + (f" ({cost})" if cost else "")


def gpu_items(arch: str) -> list[str]:
    """The items a GPU computes for `arch` of `GPU_ONLY`: its Fig. 1 subset, Fig. 6 seeds, the follow-up's Fig. 2."""
    return [*(n for n, a in DEEP_FIG1.items() if a == arch),
            *(n for n, (item, *_) in FIG6_NADS.items() if DEEP_FIG6.get(item, ("",))[0] == arch),
            *(n for n, (_, archs) in UNDERSPEC_GPU.items() if arch in archs)]


def gpu_seconds(items: Iterable[str], bundle_dir: str | Path = BUNDLE) -> float | None:
    """Rough GPU seconds of what `items` lack, priced by the bundle's GPU records (`plan.gpu_costs`), or None."""
    from nadcore import plan

    with plan.gpu_costs(bundle_dir):
        left = [lookup(i).status(Path(bundle_dir), _scratch(bundle_dir, None)).seconds for i in items]
    known = [x for x in left if x is not None]
    return float(sum(known)) if len(known) == len(left) else None


# ----------------------------------------------------------------------------- the command

HELP = """The results bundle: the published settings computed on a CPU, committed with the book.
  status [ITEM ...]  what the items hold (stored, partial with counts, missing) and the rough cost of the rest
  all                compute (or finish) every item, in order: hours to days on a 2-core CPU, resumable
  ITEM ...           compute (or finish) these items; finished cells and chunks are kept
With no argument: this help and the status. The bundle is --bundle-dir, else $NADBOOK_BUNDLE, else the
checkout's bundle/ (here: {bundle})."""


def parser(prog: str = "python -m nadcore.bundle") -> argparse.ArgumentParser:
    """The command's arguments: `status [ITEM ...]`, `all` or `ITEM ...`, and `--bundle-dir`."""
    p = argparse.ArgumentParser(prog=prog, description=HELP.format(bundle=BUNDLE), epilog=f"Items: {', '.join(ITEMS)}.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("items", nargs="*", metavar="status | all | ITEM", help="what to show or compute")
    p.add_argument("--bundle-dir", default=str(BUNDLE), metavar="DIR", help="the bundle folder")
    return p


def _bundle_dir_refusal(bundle_dir: Path, create: bool) -> str | None:
    """What `bundle_dir` must be, when it is not that: a results bundle (a folder holding `paths.BUNDLE_MARKER`);
    to compute into, also a new or empty folder, which becomes one."""
    marked = (bundle_dir / paths.BUNDLE_MARKER).is_file()
    fresh = not bundle_dir.exists() or (bundle_dir.is_dir() and not any(bundle_dir.iterdir()))
    what = f"a results bundle (a folder holding {paths.BUNDLE_MARKER})"
    what += ", or a new or empty folder" if create else ""
    if marked or not (create and fresh):
        return None if marked else what
    bundle_dir.mkdir(parents=True, exist_ok=True)
    (bundle_dir / paths.BUNDLE_MARKER).touch()
    return None


def main(argv: Sequence[str] | None = None, prog: str = "python -m nadcore.bundle") -> int | str | None:
    """`python -m nadcore.bundle [status [ITEM ...] | all | ITEM ...] [--bundle-dir DIR]` (`nadcore bundle`
    is the same command, `prog` its name); bad items exit 2 before any work."""
    p = parser(prog)
    try:
        args = p.parse_args(argv)
    except SystemExit as err:   # --help (0) or a bad option (2, said on stderr)
        return err.code
    items, bundle_dir = args.items, Path(args.bundle_dir)
    if not args.bundle_dir.strip():   # Path('') would be the current folder
        print(f"{prog}: error: --bundle-dir must be a folder; got {args.bundle_dir!r}", file=sys.stderr)
        return 2
    show = not items or items[0] == "status"      # else compute
    if show:
        items = items[1:] or list(ITEMS)
    if items == ["all"]:
        items = list(ITEMS)
    bad = [item for item in items if item not in REGISTRY]
    if bad:
        first = "" if show and args.items else "all, status, "   # after `status`: an item's name only
        print(f"{prog}: error: item must be one of {first}{', '.join(ITEMS)}; got {bad[0]!r}", file=sys.stderr)
        return 2
    refusal = _bundle_dir_refusal(bundle_dir, create=not show)
    if refusal:
        print(f"{prog}: error: --bundle-dir must be {refusal}; got {args.bundle_dir!r}", file=sys.stderr)
        return 2
    if not args.items:
        print(p.format_help())
    try:
        for item in items:
            if show:
                print(status(item, bundle_dir=bundle_dir), flush=True)
            else:
                print(f"bundle: {item}", flush=True)
                compute(item, bundle_dir=bundle_dir)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; finished cells and chunks are kept", file=sys.stderr)
        return 130
    except (Missing, InputError) as err:
        print(f"{prog}: error: {checks.first_line(err)}", file=sys.stderr)
        return 2 if isinstance(err, InputError) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
