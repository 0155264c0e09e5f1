"""What a chapter will compute at a scale, what is already stored, and what it will cost.

`chapter_plan(chapter, scale)` resolves every preset the chapter's notebook reads, through the
same library functions (sweep cells and settings, `ch3_nads.resolve_request`), without computing
anything, so a preset that does not resolve fails here in seconds. Costs are rough: unit
costs measured on the 2-core CPU this book is built on (none is known for other devices).

A result counts as stored only when its file is readable and its record holds the settings a run
would compute with (read from the record, never guessed from the file name). Where those settings
name data or NADs the plan does not load (Chapters 4 and 5 fingerprint them), a record counts when
it agrees on every other setting: that count is an upper bound, and the plan says so.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import torch

from nadcore import catalog, chapters, checks, fourier, nads, paths, presets, prose, store, sweeps, versions
from nadcore.catalog import NAD_S, NAD_S_BFLOAT16, NAD_S_COMPILED, TRAIN_GFLOP, TRAIN_S
from nadcore.checks import InputError
from nadcore.device import resolve
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

# The unit costs (TRAIN_S, NAD_S, NAD_S_BFLOAT16, NAD_S_COMPILED) live in `catalog`, which the CLI reads
# before torch loads. GPU costs come from the records of the items the bundle computed on a GPU (`gpu_rates`).
BUNDLE = paths.BUNDLE   # the results bundle ($NADBOOK_BUNDLE, else the checkout's)
SHOW_OTHERS = 3   # estimates under other settings listed per item
_GPU = {}   # the GPU rates `chapter_plan` plans with (set while it runs)


def nad_seconds(arch: str, method: str, precision: str = "float32", compiled: bool = False) -> float | None:
    """Rough CPU seconds per network of a NAD estimate (`NAD_S`, `NAD_S_BFLOAT16`, `NAD_S_COMPILED`;
    a compiled float32 secant: its eager cost, an upper bound), or None if unknown."""
    if precision == "bfloat16" and method == "secant":
        return (NAD_S_COMPILED if compiled else NAD_S_BFLOAT16).get(arch)
    return NAD_S.get((arch, method))


CHAPTERS = chapters.CHAPTERS   # the chapters planned, as the book declares them
PLANNERS: dict[str, Callable[..., list[Item]]] = {}   # each chapter's planner, as `planner` registers it


def planner(chapter: str) -> Callable[[Callable[..., list[Item]]], Callable[..., list[Item]]]:
    """Register the decorated function as the planner of `chapter` (a stem of `chapters.CHAPTERS`): it
    takes `(scale, seed, results_dir, device, **extra)` and returns the chapter's `Item`s."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")

    def register(f):
        PLANNERS[chapter] = f
        return f
    return register


@dataclass
class Item:
    """One thing a chapter computes: `count` units (cells, networks, runs), `stored` of them done;
    `stored_upper_bound`: `stored` counts records that agree on the settings the plan knows (the cost
    of the rest is then a lower bound); `cost_upper_bound`: `seconds_each` is an upper bound."""
    chapter: str
    name: str
    what: str
    count: int
    stored: int
    seconds_each: float | None = None
    stored_upper_bound: bool = False
    cost_upper_bound: bool = False
    in_bundle: int = 0                                # of `count`, what the results bundle holds
    others: list = field(default_factory=list)        # stored estimates of the same network, other settings

    @property
    def cost_s(self) -> float | None:
        return None if self.seconds_each is None else (self.count - self.stored) * self.seconds_each


@dataclass
class Plan:
    chapter: str
    scale: str
    device: str
    items: list = field(default_factory=list)
    rates: str = ""            # where the unit costs come from
    bundle: str | None = None  # the results bundle the stored counts were also read from

    @property
    def total_s(self) -> float:
        """The estimated seconds of what is still to compute, over the items whose cost is known."""
        return float(sum(it.cost_s for it in self.items if it.cost_s is not None))

    def summary(self) -> str:
        """A table: item, what, stored / total, estimated cost of the rest on this device."""
        lines = [f"plan of {self.chapter} at scale {self.scale!r} on {self.device}"
                 + (f" ({self.rates})" if self.rates else "") + ":"]
        for it in self.items:
            cost = "cost unknown on this device" if it.cost_s is None else f"~{duration(it.cost_s)}"
            if it.cost_s is not None and it.cost_s > 0 and (it.stored_upper_bound or it.cost_upper_bound):
                cost += " (lower bound)" if it.stored_upper_bound else " (upper bound)"
            stored = "stored (upper bound)" if it.stored_upper_bound else "stored"
            lines.append(f"  {it.name:<22} {it.stored:>6}/{it.count:<6} {stored:<20}  {cost:<26} {it.what}")
            if it.in_bundle > it.stored:
                lines.append(f"  {'':<22} {it.in_bundle:>6}/{it.count:<6} in the bundle")
            lines += [f"  {'':<22} also stored: {other}" for other in it.others[:SHOW_OTHERS]]
            if len(it.others) > SHOW_OTHERS:
                lines.append(f"  {'':<22} and {len(it.others) - SHOW_OTHERS} more estimates of it under other "
                             f"settings (plan.other_estimates)")
        unknown = sum(it.cost_s is None and it.stored < it.count for it in self.items)
        bounds = [what for what, flag in (("stored counts are upper bounds", "stored_upper_bound"),
                                          ("unit costs are upper bounds", "cost_upper_bound"))
                  if any(getattr(it, flag) for it in self.items)]
        lines.append(f"  total still to compute: ~{duration(self.total_s)}"
                     + (f" (+ {unknown} items without a cost estimate)" if unknown else "")
                     + (f"; {' and '.join(bounds)} where marked" if bounds else ""))
        held = sum(it.in_bundle > it.stored for it in self.items)
        if held and self.bundle:
            lines.append(f"  the results bundle ({self.bundle}) holds {held} of the items still to compute: "
                         f"-p results_dir {self.bundle} reads them")
        return "\n".join(lines)


duration = prose.duration   # a time as a reader says it


def _cpu(dev):
    return torch.device(dev).type == "cpu"


def plan_device(device: str | torch.device) -> torch.device:
    """The `torch.device` a plan prices: `device` resolved where it is present, and "cuda" / "cuda:N"
    also on a machine without a GPU (a plan computes nothing: it is made before renting one)."""
    try:
        return resolve(device)
    except ValueError:
        if isinstance(device, str) and device.split(":")[0] in ("cuda", "mps"):
            try:
                return torch.device(device)
            except RuntimeError:
                pass
        raise


@overload
def train_cost(dev: Literal["cpu"], arch: str, samples: float, epochs: float, pooling: bool = True,
               variant: str | None = None) -> float: ...


@overload
def train_cost(dev: str | torch.device, arch: str, samples: float, epochs: float,
               pooling: bool = True, variant: str | None = None) -> float | None: ...


def train_cost(dev: str | torch.device, arch: str, samples: Any, epochs: Any, pooling: bool = True,
               variant: str | None = None) -> float | None:
    """Rough seconds to train one `arch` on `samples` for `epochs` on `dev` (on a GPU: the bundle's GPU
    records, `gpu_rates`; None where none is known). `variant` "alone" (one network, not stacked) or
    "linearised" (`models.Linearised`): its own CPU rate where the rates file has one."""
    key = arch if pooling else f"{arch}/nopool"
    if variant is not None and _cpu(dev) and f"{arch}/{variant}" in TRAIN_S:
        key = f"{arch}/{variant}"
    if not _cpu(dev):
        if torch.device(dev).type != "cuda":
            return None
        rate = _GPU.get("train", {}).get(key)
        if rate is None and pooling and arch in TRAIN_GFLOP and _GPU.get("tflops"):
            step, image = TRAIN_GFLOP[arch]     # `samples` is twice the training set: train, then test
            return (samples / 2 * epochs * step + samples * image) / (_GPU["tflops"] * 1e3)
        return None if rate is None else rate * samples * epochs * 2
    return TRAIN_S.get(key, TRAIN_S.get(arch)) * samples * epochs * 2  # x2: evaluation etc.


def train_gflop(arch: str, batch_size: int = 128) -> tuple[float, float]:
    """GFLOP of one training sample's share of an SGD step of `arch` (forward and backward on a batch of
    `batch_size` 1 x 32 x 32 images, two logits) and of one evaluated image, by `torch.utils.flop_counter`
    on the CPU (the counts `catalog.TRAIN_GFLOP` holds)."""
    from torch.utils.flop_counter import FlopCounterMode

    from nadcore import models

    torch.manual_seed(0)
    net, x = models.build(arch), torch.randn(batch_size, 1, 32, 32)
    with FlopCounterMode(display=False) as step:
        torch.nn.functional.cross_entropy(net(x), torch.zeros(batch_size, dtype=torch.long)).backward()
    with FlopCounterMode(display=False) as image, torch.no_grad():
        net.eval()(x[:1])
    return step.get_total_flops() / 1e9 / batch_size, image.get_total_flops() / 1e9


def nad_cost(dev: str | torch.device, arch: str, method: str, precision: str = "float32",
             compiled: bool = False) -> float | None:
    """Rough seconds per network of a NAD estimate on `dev`: `nad_seconds` on the CPU, the bundle's GPU
    records on a GPU (`gpu_rates`), else None."""
    if _cpu(dev):
        return nad_seconds(arch, method, precision, compiled)
    if torch.device(dev).type != "cuda":
        return None
    return _GPU.get("nads", {}).get((arch, method, precision, bool(compiled)))


def _record(path):
    """The record of a stored result, read without its arrays (None: not a readable result, or its record holds
    no settings)."""
    try:
        record = store.read_record(path)
    except (OSError, ValueError):   # no readable result (StoreError is a ValueError): nothing stored there
        return None
    return record if isinstance(record, dict) and isinstance(record.get("settings"), dict) else None


@functools.lru_cache(maxsize=4)
def gpu_rates(bundle_dir: str | Path = BUNDLE) -> dict[str, Any]:
    """Unit costs on a GPU from the records of the items the bundle at `bundle_dir` computed on one
    (their `duration_s`; medians): `nads` {(arch, method, precision, compiled): seconds per network}
    from its NAD estimates, `train` {arch: seconds per sample and epoch, as `train_cost` counts them}
    from its Fig. 1 and Fig. 6 cells, `tflops` the median TFLOP/s its GPU reports measured training cells
    (what prices a network trained on no GPU yet, by its FLOPs: `train_cost`), and `gpus`, the machines they
    name."""
    nad, train, gpus = {}, {}, set()
    bundle_dir = Path(bundle_dir)
    for path in sorted(bundle_dir.glob("nads/*.npz")):
        r = _record(path)
        if not r or r.get("device") != "cuda" or not r.get("duration_s"):
            continue
        s = r["settings"]
        if "num_networks" in s and "method" in s:
            key = (s["arch"], s["method"], s.get("precision", "float32"), bool(s.get("compiled", False)))
            nad.setdefault(key, []).append(r["duration_s"] / s["num_networks"])
            gpus.add(r.get("machine") or "a GPU")
    for path in sorted(bundle_dir.glob("fourier/fig1/*.npz")) + sorted(bundle_dir.glob("nads/fig6_*/*.npz")):
        r = _record(path)
        if not r or r.get("device") != "cuda" or not r.get("duration_s"):
            continue
        s, cell = r["settings"].get("settings", {}), r["settings"].get("cell", {})
        arch, n = cell.get("arch", s.get("arch")), s.get("n", s.get("n_train"))
        if arch and n and s.get("epochs") and cell.get("pooling", True):
            train.setdefault(arch, []).append(r["duration_s"] / (2 * n * s["epochs"] * 2))
            gpus.add(r.get("machine") or "a GPU")
    achieved = []
    for path in sorted(bundle_dir.glob("fourier/*_gpu.json")):   # `tools/gpu_bundle.py --train`'s reports
        report = json.loads(path.read_text())
        achieved += [c["tflops"] for c in report.get("cells", []) if c.get("tflops")]
        gpus.add(report.get("gpu") or "a GPU")
    median = lambda d: {k: float(np.median(v)) for k, v in d.items()}
    return {"nads": median(nad), "train": median(train), "gpus": sorted(gpus),
            "tflops": float(np.median(achieved)) if achieved else None}


@contextlib.contextmanager
def gpu_costs(bundle_dir: str | Path = BUNDLE):
    """Price CUDA work (`train_cost`, `nad_cost`) with the GPU rates of the bundle at `bundle_dir` while inside."""
    _GPU.update(gpu_rates(bundle_dir))
    try:
        yield _GPU
    finally:
        _GPU.clear()


def chapter_plan(chapter: str, scale: str, *, seed: int = 0, results_dir: str | Path = "results",
                 device: str | torch.device = "cpu", num_seeds: int = 1, overrides: dict | None = None,
                 bundle_dir: str | Path | None = None) -> Plan:
    """The `Plan` of `chapter` (a notebook stem such as "01_fourier") at `scale`; `num_seeds` is
    Chapter 1's seeds per cell of Fig. 1 (`ch1_fourier.sweep_seeds`), `overrides` the changes to
    the presets of a chapter that declares them (`presets.check_overrides`).

    `device` "cuda" is planned on any machine (`plan_device`), with GPU costs from the GPU records
    of the bundle (`gpu_rates`). With `bundle_dir` (a results bundle), each item also says how much
    of it the bundle holds, and NAD items list the estimates of the same network stored there or in
    `results_dir` under other settings."""
    presets.check_scale(scale)
    if chapter not in CHAPTERS:
        raise InputError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    checks.integer("num_seeds", num_seeds, 1, catalog.MAX_SEEDS)
    dev = plan_device(device)
    plan = Plan(chapter, scale, str(dev))
    extra: dict[str, Any] = {"num_seeds": num_seeds} if chapter == "01_fourier" else {}
    if overrides:
        extra["overrides"] = overrides
    if dev.type == "cuda":
        _GPU.update(gpu_rates(Path(bundle_dir) if bundle_dir is not None else BUNDLE))
        plan.rates = ("GPU rates from the bundle's GPU records: " + ", ".join(_GPU["gpus"]) if _GPU["gpus"]
                      else "no GPU records in the bundle: GPU costs unknown")
    else:
        plan.rates = "CPU rates measured on the 2-core CPU the book is built on" if dev.type == "cpu" else ""
    folders = [Path(results_dir)] + ([Path(bundle_dir)] if bundle_dir is not None else [])
    _OTHERS["folders"] = folders
    try:
        plan.items = PLANNERS[chapter](scale, int(seed), Path(results_dir), dev, **extra)
        if bundle_dir is not None and Path(bundle_dir).is_dir() and Path(bundle_dir).resolve() != \
                Path(results_dir).resolve():
            plan.bundle = str(bundle_dir)
            _OTHERS["folders"] = []
            held = PLANNERS[chapter](scale, int(seed), Path(bundle_dir), dev, **extra)
            for it, b in zip(plan.items, held):
                it.in_bundle = b.stored
    finally:
        _GPU.clear()
        _OTHERS.clear()
    return plan


_OTHERS = {}   # the folders whose other NAD estimates `_nad_item` lists (set while `chapter_plan` runs)


def other_estimates(arch: str, request: dict[str, Any], folders: Iterable[str | Path]) -> list[str]:
    """Descriptions of the NAD estimates of `arch` stored in `folders` (`nads/ARCH_*.npz`) under settings
    other than `request`: the settings that differ, and where."""
    wanted = store.canonical(request)
    out = []
    for folder in folders:
        for path in sorted(Path(folder).glob(f"nads/{arch}_*.npz")):
            r = _record(path)
            s = (r or {}).get("settings", {})
            if s.get("arch") != arch or "num_networks" not in s or s == wanted:
                continue
            diff = [f"{k} {s.get(k, 'float32' if k == 'precision' else None)!r}"
                    for k in sorted(set(s) | set(wanted)) if s.get(k) != wanted.get(k) and k != "version"]
            out.append(f"{', '.join(diff) or 'another version'} ({path})")
    return out


# ----------------------------------------------------------------------------- per chapter

@planner("01_fourier")
def _fourier(scale, seed, results, dev, num_seeds=1, overrides=None):
    p = presets.preset("fourier", scale, overrides)
    settings = ch1_fourier.sweep_settings(p, seed, dev)
    fig2 = ch1_fourier.fig2_settings(settings, p.fig2)
    jobs = [("fig1", p.archs, p.grid, ch1_fourier.replicate_settings(settings, r), True, r)
            for r in range(num_seeds)]
    jobs += [("fig2", p.fig2.archs, p.fig2.grid, fig2, True, 0),
             ("fig3", p.fig3.archs, p.fig3.grid, settings, False, 0)]
    items = []
    for name, archs, grid_spec, s, pooling, r in jobs:
        grid = fourier.make_grid(grid_spec)
        for arch in archs:
            cells = ch1_fourier.sweep_cells([arch], grid, pooling)
            todo = sweeps.missing(name, cells, s, results / "fourier")
            epochs = s["epochs"][arch] if isinstance(s["epochs"], dict) else s["epochs"]
            seed_label = f" seed {r + 1}" if name == "fig1" and num_seeds > 1 else ""
            items.append(Item("01_fourier", f"{name} {arch}{seed_label}",
                              f"D(v) cells, n={s['n']} sigma={s['sigma']} "
                              f"epochs={epochs} grid {len(grid.freqs)}x{len(grid.freqs)}",
                              len(cells), len(cells) - len(todo), train_cost(dev, arch, 2 * s["n"], epochs, pooling)))
    return items


@planner("02_pooling")
def _pooling(scale, seed, results, dev):
    cfg = presets.preset("pooling", scale)
    found = lambda *parts: sum(_pooling_stored(cfg, seed, results, part) for part in parts)
    # CPU costs measured at the paper preset (2 cores): 2.8e-4 s per linear-model step, Theorem 1's
    # simulation 24 s for 60 l x 200,000 test samples of D = 128 (Lemma 1's Hessians: seconds)
    return [Item("02_pooling", "fig4b", f"linear model of pooling, {len(cfg.train_ls)} l x "
                 f"{len(cfg.train_seeds)} seeds x {cfg.train_steps} steps", 1, found("fig4b"), 3e-4
                 * cfg.train_steps * len(cfg.train_ls) * len(cfg.train_seeds) if _cpu(dev) else None),
            Item("02_pooling", "theorem1 / lemma1", f"Monte Carlo: {len(cfg.sim_ls)} l x "
                 f"{cfg.sim_n_train + cfg.sim_n_test} samples; Hessians of {cfg.hess_n} samples",
                 2, found("theorem1", "lemma1"),
                 2e-8 * len(cfg.sim_ls) * cfg.sim_n_test * cfg.sim_D if _cpu(dev) else None)]


def _pooling_stored(cfg, seed, results, part):
    """Whether the chapter would read `part` of its results from `results` (its record holds the
    settings of `cfg` and `seed`), through the chapter's own reader, which computes nothing."""
    try:
        ch2_pooling.part_result(cfg, part, seed, results, compute=False)
    except (FileNotFoundError, store.StoreError):
        return False
    return True


def _nad_item(chapter, arch, est, results, dev):
    """The item of the NADs of `arch` a chapter estimates as `est` (`ch3_nads.resolve_estimate`)."""
    request, n, method = est.result_settings(arch), est.num_networks, est.method
    stored = ch3_nads.find_stored(arch, request, results) is not None
    cost = nad_cost(dev, arch, method)
    others = [] if stored else other_estimates(arch, request, _OTHERS.get("folders", []))
    return Item(chapter, f"NADs {arch}", f"{method}, {n} networks", n, n if stored else 0, cost, others=others)


@planner("03_nads")
def _nads(scale, seed, results, dev):
    p = presets.preset("nads", scale)
    items = [_nad_item("03_nads", a, ch3_nads.resolve_estimate(a, scale, seed=seed), results, dev) for a in p.archs]
    for arch in p.compare_archs:
        req = ch3_nads.resolve_estimate(arch, scale, method="autograd", num_networks=p.compare_networks, seed=seed)
        items.append(_nad_item("03_nads", arch, req, results, dev))
    arch, method = p.conv_arch, p.conv_method
    ranges = sorted({r for n in p.conv_sizes for r in nads.chunk_ranges(0, n) + nads.chunk_ranges(n, 3 * n)})
    cells = [{"start": a, "stop": b} for a, b in ranges]
    chunk = nads.EstimateSettings(method, seed=seed).chunk_settings(arch, nads.eval_point_name(seed), dev)
    todo = sweeps.missing("nad_chunks", cells, chunk, results)
    cost = nad_cost(dev, arch, method)
    items.append(Item("03_nads", f"convergence {arch}", f"{method}, N vs 2N for N in {p.conv_sizes}: chunks of "
                      f"{nads.CHUNK} networks", len(cells), len(cells) - len(todo), cost and cost * nads.CHUNK))
    f6, arch = p.fig6, p.fig6_arch
    found = ch3_nads.find_stored(arch, ch3_nads.resolve_request(arch, scale, seed=seed), results)
    done = 0 if found is None else len(ch3_nads.fig6_sweep(arch, nads.NADResult.load(found), p.fig6_indices,
                                                         {**presets.as_dict(f6), "seed": seed}, results / "nads", dev,
                                                         only_stored=True))
    items.append(Item("03_nads", f"fig6 {arch}", f"D(u_i) for {len(p.fig6_indices)} NAD indices, "
                      f"n={f6.n_train} sigma={f6.sigma}", len(p.fig6_indices), done,
                      train_cost(dev, arch, 2 * f6.n_train, f6.epochs)))
    return items


@planner("04_cifar10")
def _cifar(scale, seed, results, dev):
    p = presets.preset("cifar10", scale)
    items = [_nad_item("04_cifar10", a, ch3_nads.resolve_estimate(a, scale, num_networks=p.nad_networks, seed=seed),
                       results, dev) for a in ch4_cifar10.nad_archs(p)]
    samples = 1797 if p.dataset == "digits" else 60000
    r = p.recipe
    recipe = {k: getattr(r, k) for k in ch4_cifar10.RECIPE_KEYS}
    # the runs' settings also fingerprint the data and the NADs, which a plan does not load: upper bounds
    stamp = lambda settings: versions.stamp(settings, "cifar_run")
    runs = [stamp({"arch": p.arch, "eps": p.eps, "recipe": recipe, "seed": seed, "index": i})
            for i in [-1, *p.indices]]
    items.append(Item("04_cifar10", f"fig7 {p.arch}", f"{p.dataset}: {len(p.indices) + 1} trainings, "
                      f"{r.epochs} epochs", len(runs),
                      _records_agreeing(results / "cifar10", f"poison-{p.arch}-*.npz", runs),
                      train_cost(dev, p.arch, samples, r.epochs), stored_upper_bound=True))
    for arch in p.flip_archs:
        runs = [stamp({"arch": arch, "kind": kind, "recipe": recipe, "seed": seed}) for kind in ("original", "flipped")]
        found = sum(_records_agreeing(results / "cifar10", f"flip-{arch}-{kind}-*.npz", [run])
                    for kind, run in zip(("original", "flipped"), runs))
        items.append(Item("04_cifar10", f"fig8 {arch}", f"{p.dataset}: plain and flipped, {r.epochs} epochs",
                          2, found, train_cost(dev, arch, samples, r.epochs), stored_upper_bound=True))
    return items


@planner("05_underspecification")
def _underspec(scale, seed, results, dev, overrides=None):
    P = ch5_underspec.chapter_settings(scale, seed, overrides)
    archs = ch5_underspec.nad_archs(P)
    request = presets.as_dict(P.nads)
    items = [_nad_item("05_underspecification", a, ch3_nads.resolve_estimate(a, scale, seed=seed, **request),
                       results, dev) for a in archs]
    pairs, ood = P.pairs, P.ood
    # the cells' settings also fingerprint the NADs, which a plan does not load: upper bounds
    cell = lambda c, shared: {"cell": c, "settings": versions.stamp(shared, "underspec_cell")}
    for arch in pairs.archs:
        shared = {"arch": arch, "recipe": presets.as_dict(pairs.recipe[arch]),
                  **{k: getattr(pairs, k) for k in ("n_train", "n_test", "sigma", "eps1", "eps2", "extent",
                                                    "resolution")}}
        cells = [cell({"i": i, "j": j, "seed": s}, shared)
                 for s in pairs.seeds for i in pairs.indices for j in pairs.indices]
        items.append(Item("05_underspecification", f"fig2 {arch}", f"D(v_i)+D(v_j) pairs, n={pairs.n_train}, "
                          f"{pairs.recipe[arch].epochs} epochs", len(cells),
                          _records_agreeing(results / f"underspec_pairs_{arch}", "*.npz", cells),
                          train_cost(dev, arch, 2 * pairs.n_train, pairs.recipe[arch].epochs),
                          stored_upper_bound=True))
    samples = 1797 if ood.dataset == "digits" else (ood.limit or 60000)
    for arch in ood.archs:
        sigma = ood.sigma[arch] if isinstance(ood.sigma, dict) else ood.sigma
        shared = {"arch": arch, "recipe": presets.as_dict(ood.recipe[arch]), "sigma": float(sigma),
                  **{k: getattr(ood, k) for k in ("dataset", "limit", "eps")}}
        cells = [cell({"k": k, "seed": s}, shared) for s in ood.seeds for k in ood.indices]
        items.append(Item("05_underspecification", f"fig3 {arch}", f"{ood.dataset} + D(v_k), "
                          f"{ood.recipe[arch].epochs} epochs", len(cells),
                          _records_agreeing(results / f"underspec_ood_{arch}", "*.npz", cells),
                          train_cost(dev, arch, samples, ood.recipe[arch].epochs), stored_upper_bound=True))
    return items


@planner("06_antialias")
def _antialias(scale, seed, results, dev, overrides=None):
    cfg = presets.preset("antialias", scale, overrides)
    grid = fourier.make_grid(cfg.grid)
    s1 = ch6_antialias.fig1_settings(scale, seed, dev, overrides)
    s6 = ch6_antialias.fig6_settings(scale, seed, overrides)
    n, method = cfg.nads.num_networks, cfg.nads.method
    items = []
    for v in cfg.variants:
        cells = ch1_fourier.sweep_cells([ch6_antialias.ARCH], grid, ch6_antialias.pooling_arg(v))
        todo = sweeps.missing(ch6_antialias.sweep_name(v), cells, s1, results / "fourier")
        # unit costs are those of max-pooling LeNet (and of LeNet without pooling): the others are rough guesses
        cost = train_cost(dev, "lenet", 2 * s1["n"], s1["epochs"], v != "none")
        items.append(Item("06_antialias", f"fig1 {v}", f"D(v) cells, n={s1['n']} sigma={s1['sigma']} grid "
                          f"{len(grid.freqs)}x{len(grid.freqs)}", len(cells), len(cells) - len(todo), cost))
        basis = ch6_antialias.nad_estimate(v, cfg.nads, seed, results, dev, compute=False)
        stored = basis is not None
        done = 0 if basis is None else len(ch6_antialias.fig6(v, basis, cfg.fig6_indices, s6, results, dev,
                                                          compute=False))
        items.append(Item("06_antialias", f"NADs {v}", f"{method}, {n} networks; N vs 2N for N in "
                          f"{cfg.nads.conv_sizes}", n, n if stored else 0, nad_cost(dev, "lenet", method)))
        items.append(Item("06_antialias", f"fig6 {v}", f"D(u_i) for {len(cfg.fig6_indices)} NAD indices, "
                          f"n={s6['n_train']}", len(cfg.fig6_indices), done,
                          train_cost(dev, "lenet", 2 * s6["n_train"], s6["epochs"], v != "none")))
    return items


@planner("07_zoo")
def _zoo(scale, seed, results, dev):
    cfg = presets.preset("zoo", scale)
    items = []
    for arch in cfg.references + cfg.archs:
        n, method = cfg.num_networks, cfg.method
        stored = ch7_zoo.nad_estimate(arch, cfg, seed, results, dev, compute=False) is not None
        items.append(Item("07_zoo", f"NADs {arch}", f"{method}, {n} networks; N vs 2N for N in {cfg.conv_sizes}",
                          n, n if stored else 0, nad_cost(dev, arch, method)))
    for arch in ch7_zoo.secant_archs(cfg):
        n = cfg.secant_networks
        basis = ch7_zoo.nad_estimate(arch, cfg, seed, results, dev, compute=False, method="secant")
        items.append(Item("07_zoo", f"NADs {arch} secant", f"secant, {n} networks, {cfg.secant_precision}",
                          n, n if basis is not None else 0,
                          nad_cost(dev, arch, "secant", cfg.secant_precision, cfg.secant_compiled),
                          cost_upper_bound=_cpu(dev) and bool(cfg.secant_compiled)
                          and cfg.secant_precision != "bfloat16"))
        if arch in cfg.fig6_archs and (f6 := cfg.fig6) is not None:
            count = len(cfg.fig6_indices)
            try:
                done = 0 if basis is None else len(ch7_zoo.fig6(arch, basis, cfg, seed, results, dev, compute=False))
                unseen = ""
            except ValueError:   # its reader resolves the device: a GPU's cells are not counted off a GPU
                done, unseen = 0, " (a GPU's stored cells are counted on a GPU only)"
            items.append(Item("07_zoo", f"fig6 {arch}", f"D(u_i) for {count} NAD indices, n={f6.n_train} "
                              f"sigma={f6.sigma}{unseen}", count, done,
                              train_cost(dev, arch, 2 * f6.n_train, f6.epochs)))
    return items


@planner("08_training")
def _training(scale, seed, results, dev):
    cfg = presets.preset("training", scale)
    items, bases = [], {}
    for name in cfg.networks:   # the NADs each network trains along, Chapter 3's or Chapter 6's estimate
        arch, pooling = ch8_training.check_network(name)
        bases[name] = ch8_training.nad_bases([name], scale, seed, results, compute=False)
        est = (ch3_nads.resolve_estimate(arch, scale, seed=seed) if pooling is True
               else presets.preset("antialias", scale).nads)
        n, method = int(est.num_networks or 0), est.method
        items.append(Item("08_training", f"NADs {name}", f"{method}, {n} networks", n,
                          0 if bases[name] is None else n, nad_cost(dev, arch, method)))
    cells = {} if None in bases.values() else ch8_training.training_sweep(
        cfg, seed, {name: b[name] for name, b in bases.items()}, Path(results) / "nads", only_stored=True)
    for name in cfg.networks:
        arch, pooling = ch8_training.check_network(name)
        count, done = len(cfg.tasks) * cfg.replicates, sum(k[0] == name for k in cells)
        each = (train_cost("cpu", arch, 2 * cfg.n_train, cfg.epochs, pooling is not False, "alone")
                + ch8_training.MEASURE_S * len(cfg.checkpoints))
        items.append(Item("08_training", f"training {name}", f"{prose.count(len(cfg.tasks), 'task')} x "
                          f"{prose.count(cfg.replicates, 'replicate')}, n={cfg.n_train}, G at "
                          f"{len(cfg.checkpoints)} steps (on the CPU)", count, done, each))
    return items


def _agrees(stored, wanted):
    """True when `stored` has every key of `wanted` with the same value (dicts compared key by key, so
    `stored` may hold more: the fingerprints a plan does not compute, a recipe's defaults)."""
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and all(k in stored and _agrees(stored[k], v) for k, v in wanted.items())
    return stored == wanted


def _records_agreeing(folder, pattern, wanted):
    """How many of the settings `wanted` (partial: what a plan knows) some readable result in `folder`
    (files matching `pattern`) was made with: an upper bound on the results a run will reuse, never
    counting a corrupted file, one made with other settings, or one result twice."""
    wanted = [store.canonical(w) for w in wanted]
    hit = [False] * len(wanted)
    for path in sorted(Path(folder).glob(pattern)) if Path(folder).is_dir() else []:
        try:
            settings = store.load(path).record["settings"]
        except (OSError, store.StoreError):
            continue
        for i, w in enumerate(wanted):
            hit[i] = hit[i] or _agrees(settings, w)
    return sum(hit)


def check_all() -> list[Plan]:
    """Resolve every chapter at every scale (a smoke test of the presets); returns the plans."""
    return [chapter_plan(c, s, results_dir=Path(store.__file__).parent / "no-results") for c in CHAPTERS
            for s in presets.SCALES]
