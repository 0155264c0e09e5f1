"""The results bundle: the published settings, computed on a CPU, stored in the repository.

The bundle (`bundle/` at the top of the checkout) is a results folder of the `paper` scale:
every item below is stored with the same keys as `nadcore run CHAPTER --scale paper -p
results_dir ../bundle` would give it (same presets, same `device` in the settings), so a GPU
run that points at the bundle adds the architectures a CPU cannot afford and recomputes nothing.
`compute(item)` fills one item (resumable: finished cells and NAD chunks are kept);
the `load_*` functions read what is stored and compute nothing (the book's pages use them).
NAD chunks (the networks' gradients, 0.5 MiB per 125 networks of D = 1,024) go to `scratch`, the
merged NADs to the bundle. The default scratch, `bundle/partial/`, is committed while an item
computes over several sessions, and its chunks removed once the item and its convergence are stored.
"""

import json
from pathlib import Path

import numpy as np
import torch

from nadcore import fourier, nads, presets, published, seeds, stacked, store, sweeps, versions
from nadcore.device import PRECISIONS
from nadcore.experiments import ch1_fourier, ch2_pooling, ch3_nads, ch4_cifar10, ch5_underspec, ch6_antialias, ch7_zoo

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "bundle"
SCRATCH = BUNDLE / "partial"   # chunks of the NAD items still computing (see above)
DEVICE = "cpu"   # the device of the stored items (in their keys) but those `item_device` names: a GPU's
SEED = 0
CPU_ARCHS = ("logreg", "lenet")   # Figs. 1-2 on this CPU; VGG-11, ResNet-18, DenseNet-121 need a GPU
NAD_ARCHS = ("logreg", "mlp", "lenet")
FIG3_GRID = {"name": "coarse", "step": 4}   # Fig. 3 on a stated subset: every 4th frequency, |k| <= 12
# VGG-11 on this CPU (issue 23), at the published recipe, about 15 minutes a cell: Fig. 1 on the same
# subset as Fig. 3 (25 cells of the Fig. 1 sweep) and Fig. 6 at a few indices, beside the published
# column (DEEP_FIG1's value) and curve (DEEP_FIG6's first: its NADs are ours of that network).
DEEP_FIG1 = {"fig1_vgg11": "vgg11"}
DEEP_FIG6 = {"fig6_vgg11": ("vgg11", (0, 16, 128, 512, 1000))}
# The network trained for a published column, and its max_lr: the authors' script trains `VGG11_bn`
# with LeNet's recipe (directional_bias.py swaps the network, keeps max_lr 0.5). Plain VGG-11 at the
# preset's 0.05 stays on the loss plateau (55 % train at (4, 0)). In eval mode at initialisation batch
# norm is the identity (up to its eps), so the NADs of VGG-11 are those of VGG-11 with batch norm.
DEEP_TRAIN = {"vgg11": ("vgg11_bn", 0.5)}
# ... at the noise level at which LeNet's Fig. 1 grid comes closest to the published one (the sigma
# study's best; a test holds them equal), not the caption's 3: at 3, VGG-11 with batch norm fits its
# training set at (4, 0) but tests at 58 % (published 98 %), at 1.5 it tests at 98.6 %.
DEEP_SIGMA = 1.5
# Fig. 1's subset on a CUDA GPU (issue 23): a cell costs 23-68 min of this 2-core CPU. float32 without
# TF32 (`device.exact_cuda`), one network at a time; the CPU's float32 cells of the training-precision
# check (`TRAIN_PRECISION`, on `DEVICE`) are some of the same cells on the CPU. Fig. 6: on the CPU.
# Which NADs predict what a network learns (issue 42)? Our secant NADs match the published ones, the
# exact-gradient NADs of Eq. 4 ("autograd") share almost nothing with them: each `DEEP_FIG6` item again
# along either, on a CUDA GPU, with seeds 0-2 (`ch1_fourier.replicate_settings`; secant seed 0 is the
# item itself on the GPU). `{name: (DEEP_FIG6 item, NAD method, replicate)}`, in the order a GPU trains them.
# LeNet's too, on this CPU, at the sigma study's best (`DEEP_SIGMA`) and at the caption's: `{name: (item,
# method, replicate, sigma)}` (sigma None: the item's own); LeNet's secant seed 0 at a sigma is the cells of
# its `fig6` (caption) or `fig6_sigma` (best) item.
FIG6_CAPTION = 3.0   # Fig. 6's caption (`presets` "nads" paper: the published settings; a test holds them equal)
FIG6_NADS = {**{f"{item}_{method}_seed{r}": (item, method, r, None) for item in DEEP_FIG6 for r in range(3)
                for method in ("autograd", "secant")},
             **{f"fig6_lenet_sigma{sigma:g}_{method}_seed{r}": ("fig6", method, r, sigma)
                for sigma in (DEEP_SIGMA, FIG6_CAPTION) for r in range(3) for method in ("autograd", "secant")}}
DEEP_DEVICE = {"fig1_vgg11": "cuda", "fig6_vgg11": DEVICE,
               **{name: "cuda" for name, (item, *_) in FIG6_NADS.items() if item in DEEP_FIG6}}


# ----------------------------------------------------------------------------- the machine

def machine_of(record, bundle_dir=BUNDLE):
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


# ----------------------------------------------------------------------------- Chapter 1

def fourier_item(name):
    """`(archs, grid, settings, pooling)` of the Chapter 1 item `name` ("fig1", "fig2", "fig3",
    "fig3_sigma": Fig. 3 at `DEEP_SIGMA`, the sigma study's best, or a deep network's Fig. 1 subset of
    `DEEP_FIG1`: Fig. 1's sweep and settings, the network and max_lr of `DEEP_TRAIN`, the noise
    `DEEP_SIGMA`, on its `DEEP_DEVICE`)."""
    p = presets.preset("fourier", "paper")
    settings = ch1_fourier.sweep_settings(p, SEED, DEVICE)
    if name == "fig1":
        return CPU_ARCHS, fourier.make_grid(p["grid"]), settings, True
    if name in DEEP_FIG1:
        arch, lr = DEEP_TRAIN[DEEP_FIG1[name]]
        deep = {**settings, "sigma": DEEP_SIGMA, "max_lr": {**settings["max_lr"], arch: lr},
                "device": DEEP_DEVICE[name]}
        return (arch,), fourier.make_grid(FIG3_GRID), deep, True
    if name == "fig2":
        q = p["fig2"]
        return CPU_ARCHS, fourier.make_grid(q["grid"]), {**settings, "n": q["n"], "sigma": q["sigma"],
                                                         "epochs": q["epochs"]}, True
    if name in ("fig3", "fig3_sigma"):
        sigma = DEEP_SIGMA if name == "fig3_sigma" else settings["sigma"]
        return ("lenet",), fourier.make_grid(FIG3_GRID), {**settings, "sigma": sigma}, False
    raise ValueError(f"name must be one of fig1, fig2, fig3, fig3_sigma, {', '.join(DEEP_FIG1)}; got {name!r}")


# Training in bfloat16 (issue 23): before any deep network's Fig. 1 or Fig. 6 cell is trained in
# bfloat16, three of VGG-11's Fig. 1 cells (as `DEEP_TRAIN` trains it) in each precision, two seeds each:
# the two whose published accuracy lies between chance and 100 % (60-65 %) and (4, 0), where the
# published one learns (98 %). Accepted where bfloat16 moves the test accuracy (same seed) no more than
# a second float32 seed does.
TRAIN_PRECISION = {"item": "fig1_vgg11", "cells": [(12, 0), (0, 12), (4, 0)], "seeds": 2}


def train_precision_settings(precision, r):
    """The settings of replicate `r` of the check's cells in `precision` on this CPU (`DEVICE`)."""
    settings = {**fourier_item(TRAIN_PRECISION["item"])[2], "device": DEVICE}
    return ch1_fourier.replicate_settings(versions.stamp(settings, "fourier_cell", precision), r)


# The seed noise of a `DEEP_FIG1` item: the check's cells trained with `DEEP_SEEDS` seeds on its device
# (replicate 0 is the item's own cell), beside the same cells on this CPU (the check's float32 runs).
DEEP_SEEDS = 3


def load_deep_seeds(name, bundle_dir=BUNDLE):
    """`({(kx, ky): [test accuracy of each stored seed]}, records)` of the check's cells of `DEEP_FIG1` item `name`."""
    archs, grid, settings, pooling = fourier_item(name)
    out, records = {}, []
    for r in range(DEEP_SEEDS):
        table, recs = ch1_fourier.stored_directions(archs, grid, ch1_fourier.replicate_settings(settings, r),
                                                    Path(bundle_dir) / "fourier", pooling, _sweep_name(name),
                                                    only=TRAIN_PRECISION["cells"])
        for cell, acc in ch1_fourier.per_cell(table).get(archs[0], {}).items():
            out.setdefault(cell, []).append(acc)
        records += recs.get(archs[0], [])
    return out, records


def gpu_run(name, bundle_dir=BUNDLE):
    """The report of `tools/gpu_bundle.py --train` for `DEEP_FIG1` item `name` (`fourier/NAME_gpu.json`: the
    GPU's peaks, each cell's seconds and TFLOP/s, the bitwise repeats), or None."""
    path = Path(bundle_dir) / "fourier" / f"{name}_gpu.json"
    return json.loads(path.read_text()) if path.exists() else None


def load_train_precision(bundle_dir=BUNDLE):
    """`({(precision, replicate): {(kx, ky): test accuracy}}, records)` of the check's stored cells."""
    archs, grid, _, pooling = fourier_item(TRAIN_PRECISION["item"])
    out, records = {}, []
    for precision in PRECISIONS:
        for r in range(TRAIN_PRECISION["seeds"]):
            table, recs = ch1_fourier.stored_directions(archs, grid, train_precision_settings(precision, r),
                                                        Path(bundle_dir) / "fourier", pooling, "fig1",
                                                        only=TRAIN_PRECISION["cells"])
            out[(precision, r)] = ch1_fourier.per_cell(table).get(archs[0], {})
            records += recs.get(archs[0], [])
    return out, records


def train_precision_verdict(runs):
    """`{"bfloat16": mean |bfloat16 - float32| (same seed), "seeds": mean |float32 seed 0 - seed 1|,
    "accept": bool}` in points, over the check's cells; None until every run holds all of them."""
    cells = set.intersection(*(set(v) for v in runs.values()))
    if cells != set(TRAIN_PRECISION["cells"]):
        return None
    seeds = range(TRAIN_PRECISION["seeds"])
    bf16 = np.mean([abs(runs[("bfloat16", r)][c] - runs[("float32", r)][c]) for c in cells for r in seeds])
    spread = np.mean([abs(runs[("float32", r)][c] - runs[("float32", 0)][c]) for c in cells for r in seeds[1:]])
    return {"bfloat16": float(bf16), "seeds": float(spread), "accept": bool(bf16 <= spread), "cells": sorted(cells)}


def _sweep_name(name):
    """The sweep that stores the cells of Chapter 1 item `name` (`DEEP_FIG1`'s: Fig. 1's)."""
    return "fig1" if name in DEEP_FIG1 else "fig3" if name == "fig3_sigma" else name


def load_fourier(name, bundle_dir=BUNDLE):
    """The stored table `{arch: {(kx, ky): arrays}}`, the grid, the settings and the records of a
    Chapter 1 item; cells not yet computed are absent."""
    archs, grid, settings, pooling = fourier_item(name)
    table, records = ch1_fourier.stored_directions(archs, grid, settings, Path(bundle_dir) / "fourier", pooling,
                                                   _sweep_name(name))
    return table, grid, settings, records


def fourier_remaining(name, bundle_dir=BUNDLE):
    """`(stored, cells, seconds)` of the Chapter 1 item `name`: its cells stored in the bundle, all its
    cells, and the rough CPU time of the rest (`nadcore.plan`'s unit costs)."""
    from nadcore import plan

    archs, grid, settings, pooling = fourier_item(name)
    cells = ch1_fourier.sweep_cells(archs, grid, pooling)
    done = sum(len(v) for v in load_fourier(name, bundle_dir)[0].values())
    epochs = settings["epochs"]
    each = {a: plan.train_cost(DEVICE, a, 2 * settings["n"], epochs[a] if isinstance(epochs, dict) else epochs,
                               pooling) for a in archs}
    return done, len(cells), sum(each[c["arch"]] for c in cells) * (1 - done / len(cells))


# ----------------------------------------------------------------------------- Chapter 1: which sigma?

# Fig. 1 of LeNet at several noise levels: is the published grid Fig. 1's caption (sigma = 3) or
# another sigma? One seed at each sigma, then `seeds` at the caption's sigma and at the best one
# (the smallest mean |difference| from the published grid). Stored beside Fig. 1's cells (same
# sweep, settings differing in `sigma` and `seed`): sigma 3, seed 0 *is* Fig. 1.
SIGMA_STUDY = {"arch": "lenet", "sigmas": (1.0, 1.25, 1.5, 2.0, 2.5, 3.0), "seeds": 3, "caption": 3.0,
               "order": (2.0, 2.5, 1.5, 3.0, 1.25, 1.0)}   # first: the sigma the authors' code points to;
# 1.25 and 1.0 last, to bracket the best (issue 42: 1.5 was the lowest tried, and both measures still improved)


def sigma_settings(sigma, r):
    """The settings of replicate `r` (`ch1_fourier.replicate_settings`) of LeNet's Fig. 1 at `sigma`."""
    return ch1_fourier.replicate_settings({**fourier_item("fig1")[2], "sigma": float(sigma)}, r)


def load_sigma_study(bundle_dir=BUNDLE):
    """`({sigma: [grid, ...]}, records)`: each complete stored grid `{(kx, ky): test accuracy}` of the
    study, by sigma in replicate order (a replicate counts once its whole grid is stored)."""
    _, grid, _, pooling = fourier_item("fig1")
    grids, records = {}, []
    for sigma in SIGMA_STUDY["sigmas"]:
        for r in range(SIGMA_STUDY["seeds"]):
            table, recs = ch1_fourier.stored_directions([SIGMA_STUDY["arch"]], grid, sigma_settings(sigma, r),
                                                        Path(bundle_dir) / "fourier", pooling, "fig1")
            cells = ch1_fourier.per_cell(table).get(SIGMA_STUDY["arch"], {})
            if len(cells) < len(grid.half()):
                break
            grids.setdefault(sigma, []).append(cells)
            records += recs[SIGMA_STUDY["arch"]]
    return grids, records


def best_sigma(grids):
    """The sigma whose first grid is closest to the published one (mean |difference|), or None."""
    pub = published.fig1(SIGMA_STUDY["arch"])
    gaps = {s: published.compare_grids(g[0], pub)["mean_abs_difference"] for s, g in grids.items()}
    return min(gaps, key=gaps.get) if gaps else None


def sigma_study(bundle_dir=BUNDLE, boots=2000):
    """The study beside the published grid: `{sigma: published.compare_seeds(...)}` with `floor`
    (`published.seed_floor`) where a sigma has two seeds or more; also `best` and `caption` sigmas."""
    grids, records = load_sigma_study(bundle_dir)
    pub = published.fig1(SIGMA_STUDY["arch"])
    rows = {}
    for sigma, gs in grids.items():
        rows[sigma] = published.compare_seeds(gs, pub, boots=boots)
        rows[sigma]["floor"] = published.seed_floor(gs) if len(gs) > 1 else None
    return dict(rows=rows, best=best_sigma(grids), caption=SIGMA_STUDY["caption"], records=records,
                grids=grids, published=pub)


def _sigma_runs(grids):
    """The `(sigma, replicate)` runs of the study: one seed per sigma, then the extra seeds at the
    caption's sigma and at the best one (taken as 2.0, the authors' code's hint, until known)."""
    best = best_sigma(grids) if len(grids) == len(SIGMA_STUDY["sigmas"]) else None
    extra = sorted({SIGMA_STUDY["caption"], 2.0 if best is None else best})
    return ([(s, 0) for s in SIGMA_STUDY["order"]]
            + [(s, r) for s in extra for r in range(1, SIGMA_STUDY["seeds"])])


# ----------------------------------------------------------------------------- Chapter 3

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


def nad_item(arch, method="secant"):
    """The settings of the stored NADs of `arch`: the published scale (10,000 networks, float32), but
    the deep networks' secant at `SECANT_CPU` networks in `SECANT_CPU_PRECISION`, or at `SECANT_CUDA`
    networks in float32 (on `nad_device`)."""
    if method == "secant" and arch in SECANT_CPU:
        return nads.nad_settings(arch, SECANT_CPU[arch], method, seed=SEED, precision=SECANT_CPU_PRECISION,
                                 compiled=SECANT_CPU_COMPILED)
    if method == "secant" and arch in SECANT_CUDA:
        return nads.nad_settings(arch, SECANT_CUDA[arch], method, seed=SEED)
    n = presets.preset("nads", "paper")["num_networks"]["default"]
    return nads.nad_settings(arch, n, method, seed=SEED)


def nad_device(arch, method="secant"):
    """The device that computes (and computed) the stored NADs of `arch`: "cuda" for `SECANT_CUDA`, else `DEVICE`."""
    return "cuda" if method == "secant" and arch in SECANT_CUDA else DEVICE


def nad_chunk_item(arch, method="secant"):
    """The settings of the stored chunks of `nad_item(arch, method)` (on `nad_device`)."""
    s, dev = nad_item(arch, method), torch.device(nad_device(arch, method))
    desc = nads._eval_point(None, SEED, s["input_shape"])[1]
    return nads.chunk_settings(arch, method, s["step"] or 100.0, SEED, s["input_shape"], desc,
                               nads.default_batch(method, dev), dev, precision=s.get("precision", "float32"),
                               compiled=s.get("compiled", False))


def deep_batch(arch, device):
    """Cells per group of `DEEP_FIG1` and `DEEP_FIG6` on `device`: one on a GPU (each network alone, its
    RNG seeded just before), else what fits the CPU's cache."""
    return 1 if device == "cuda" else stacked.registry_chunk_size(arch, True, 128, device)


def _check_device(item, device):
    """Raise a one-line error when `item` is computed on a CUDA GPU and this machine has none."""
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"item {item} is computed on a CUDA GPU (float32) and this machine has none: run "
                         f"`python -m nadcore.bundle {item}` on one (or `tools/gpu_bundle.py`)")


def item_device(item):
    """The device that computes (and computed) bundle item `item`."""
    if item in DEEP_DEVICE:
        return DEEP_DEVICE[item]
    if item.startswith("nads_"):
        return nad_device(*_nad_item_parts(item))
    return DEVICE


def load_nad(arch, method="secant", bundle_dir=BUNDLE):
    """The stored `NADResult` of `arch`, or None if the bundle does not hold it yet."""
    settings = nad_item(arch, method)
    path = nads.result_path(arch, settings, bundle_dir)
    return nads.NADResult.load(path, settings) if store.matches(path, settings) else None


GPU_NAD_ARCHS = ("vgg11", "resnet18", "densenet121")   # the deep networks: secant at `SECANT_CPU` / `SECANT_CUDA`
ZOO_ARCHS = ("vit", "mixer", "convnext", "resnet18_blur")  # Chapter 7: after 2020, and ResNet-18 with BlurPool


def stored_nads(archs=NAD_ARCHS + GPU_NAD_ARCHS, bundle_dir=BUNDLE):
    """`{(arch, method): NADResult}` of every NAD estimate the bundle holds for `archs` (secant,
    then exact-gradient "autograd"), in the order of `archs`."""
    found = {(a, m): load_nad(a, m, bundle_dir) for a in archs for m in ("secant", "autograd")}
    return {key: r for key, r in found.items() if r is not None}


def secant_exact_overlaps(ks, archs=GPU_NAD_ARCHS, bundle_dir=BUNDLE):
    """`{arch: overlaps}` (`nads.subspace_overlaps` at each k of `ks`) of the secant and exact-gradient
    NADs of each architecture of `archs` whose two estimates the bundle holds."""
    stored = stored_nads(archs, bundle_dir)
    return {a: nads.subspace_overlaps(stored[(a, "secant")].nads, stored[(a, "autograd")].nads, ks) for a in archs
            if (a, "secant") in stored and (a, "autograd") in stored}


# N vs 2N for the exact-gradient estimates of 10,000 networks: 3N <= 10,000 in whole chunks, so the
# convergence reads the chunks of the 10,000-network estimate and trains nothing new
AUTOGRAD_CONV_ARCHS = ("lenet", *GPU_NAD_ARCHS)
AUTOGRAD_CONV_SIZES = [625, 1250, 2500, 3125]
# The deep networks' secant (`nad_item`'s networks): every N of SECANT_CONV_SIZES with 3N <= its
# networks, and the k below the smallest N (a k >= N compares arbitrary directions)
SECANT_CONV_ARCHS = GPU_NAD_ARCHS
SECANT_CONV_SIZES = (125, 250, 625, 1250, 2500, 3125)


def convergence_item(arch=None, method="autograd"):
    """The settings of a stored N vs 2N convergence: the published scale's (secant LeNet, up to
    N = 5,000) without `arch`, else `arch`'s with `method` (`AUTOGRAD_CONV_SIZES`; the secant at
    `SECANT_CONV_SIZES`, reading the chunks of `nad_item(arch)` on `nad_device(arch)`)."""
    p = presets.preset("nads", "paper")
    if arch is None:
        return {"arch": p["conv_arch"], "method": p["conv_method"], "sizes": p["conv_sizes"], "ks": p["conv_ks"],
                "seed": SEED, "device": DEVICE}
    out = {"arch": arch, "method": method, "sizes": AUTOGRAD_CONV_SIZES, "ks": p["conv_ks"], "seed": SEED,
           "device": nad_device(arch, method)}
    if method == "autograd":
        return out
    s = nad_item(arch, method)
    sizes = [n for n in SECANT_CONV_SIZES if 3 * n <= s["num_networks"]]
    return {**out, "sizes": sizes, "ks": [k for k in out["ks"] if k < sizes[0]],
            **{k: s[k] for k in ("precision", "compiled") if k in s}}


def convergence_path(bundle_dir=BUNDLE, arch=None, method="autograd"):
    return Path(bundle_dir) / "nads" / f"convergence_{store.key(convergence_item(arch, method))}.npz"


def load_convergence(arch=None, bundle_dir=BUNDLE, method="autograd"):
    """The stored convergence (`nads.convergence`'s arrays) of `convergence_item(arch, method)`, or None."""
    path, c = convergence_path(bundle_dir, arch, method), convergence_item(arch, method)
    return store.load(path, c).arrays if store.matches(path, c) else None


# What bfloat16 and torch.compile do to the secant (the bundle's deep networks): per-network cosines
# with float32 for a few networks of each, and LeNet's leading subspaces at 1,000 networks
PRECISION = {"archs": ["vgg11", "resnet18", "densenet121", "vit", "mixer", "convnext", "resnet18_blur"], "count": 8,
             "overlap_arch": "lenet", "overlap_networks": 1000, "ks": [1, 4, 16, 64, 128, 256]}


def precision_item():
    return versions.stamp({**PRECISION, "seed": SEED, "device": DEVICE}, "precision_check")


def precision_path(bundle_dir=BUNDLE):
    return Path(bundle_dir) / "nads" / f"precision_{store.key(precision_item())}.npz"


def load_precision(bundle_dir=BUNDLE):
    """`{arch: {"eager", "compiled"}}` (`ch3_nads.precision_cosines`) and `"overlaps"`
    (`ch3_nads.precision_overlaps` of `PRECISION["overlap_arch"]`), or None if not stored."""
    path = precision_path(bundle_dir)
    if not store.matches(path, precision_item()):
        return None
    a = store.load(path, precision_item()).arrays
    out = {arch: {m: a[f"{arch}_{m}"] for m in ("eager", "compiled")} for arch in PRECISION["archs"]}
    return {**out, "overlaps": {m: a[f"overlap_{m}"] for m in ("compiled", "floor")}}


def _precision_compute(progress):
    out = {}
    for arch in PRECISION["archs"]:
        for m, v in ch3_nads.precision_cosines(arch, PRECISION["count"], SEED, DEVICE).items():
            out[f"{arch}_{m}"] = v
        if progress:
            print(f"precision: {arch} done", flush=True)
    ov = ch3_nads.precision_overlaps(PRECISION["overlap_arch"], PRECISION["overlap_networks"], PRECISION["ks"], SEED,
                                     DEVICE, results_dir=SCRATCH, progress=progress)
    return {**out, **{f"overlap_{m}": v for m, v in ov.items()}}


# Which step makes the secant NADs the published ones (issue 42)? LeNet's secant NADs at each step h of
# the dial from `networks` networks, their N vs 2N overlap (N = `conv`, from the same chunks), stored with
# the leading `rows` NADs (what the overlaps at `ks` and Fig. 6 read); Fig. 6 at `fig6_indices` along each
# at `DEEP_SIGMA` (where LeNet learns its first NADs).
SECANT_DIAL = {"arch": "lenet", "steps": (0.01, 1.0, 10.0, 100.0, 1000.0), "networks": 3000, "conv": 1000,
               "ks": (1, 4, 16, 64), "rows": 128, "fig6_indices": (0, 16, 64)}


def dial_settings(step):
    """The stored settings of the secant dial's NADs at step `step` (`SECANT_DIAL`)."""
    d = SECANT_DIAL
    return {**nads.nad_settings(d["arch"], d["networks"], "secant", step=step, seed=SEED), "rows": d["rows"]}


def _dial_conv_path(step, bundle_dir):
    settings = {**dial_settings(step), "conv": SECANT_DIAL["conv"], "ks": list(SECANT_DIAL["ks"])}
    return Path(bundle_dir) / "nads" / f"dial_conv_{store.key(settings)}.npz", settings


def load_secant_dial(bundle_dir=BUNDLE):
    """`{step: {"nads": NADResult | None, "conv": {k: N vs 2N overlap} | None, "fig6": {index: accuracy}}}`
    of `SECANT_DIAL`, what is stored (nothing computed)."""
    d, out = SECANT_DIAL, {}
    for h in d["steps"]:
        path = nads.result_path(d["arch"], dial_settings(h), bundle_dir)
        res = nads.NADResult.load(path, dial_settings(h)) if store.matches(path, dial_settings(h)) else None
        cpath, csettings = _dial_conv_path(h, bundle_dir)
        conv = (dict(zip(d["ks"], store.load(cpath, csettings)["overlap"][0].tolist()))
                if store.matches(cpath, csettings) else None)
        fig6 = {} if res is None else ch3_nads.fig6_sweep(d["arch"], res, d["fig6_indices"], fig6_item(DEEP_SIGMA)[2],
                                                          Path(bundle_dir) / "nads", device=DEVICE, only_stored=True)
        out[h] = {"nads": res, "conv": conv, "fig6": fig6}
    return out


def _dial_compute(bundle_dir, scratch, progress):
    """Compute (or finish) `SECANT_DIAL`, one step at a time: NADs, their N vs 2N overlap, Fig. 6."""
    d = SECANT_DIAL
    for h in d["steps"]:
        path = nads.result_path(d["arch"], dial_settings(h), bundle_dir)
        if not store.matches(path, dial_settings(h)):
            res = nads.estimate(d["arch"], d["networks"], step=h, seed=SEED, device=DEVICE, results_dir=scratch,
                                progress=progress)
            nads.NADResult(res.eigenvalues, res.nads[:d["rows"]], dial_settings(h), res.record, res.chunks).save(
                path, compact=True)
        cpath, csettings = _dial_conv_path(h, bundle_dir)
        store.cached(cpath, csettings, lambda h=h: nads.convergence(d["arch"], [d["conv"]], ks=d["ks"], step=h,
                                                                    seed=SEED, device=DEVICE, results_dir=scratch,
                                                                    progress=progress), device=DEVICE)
        ch3_nads.fig6_sweep(d["arch"], nads.NADResult.load(path, dial_settings(h)), d["fig6_indices"],
                            fig6_item(DEEP_SIGMA)[2], bundle_dir / "nads", device=DEVICE,
                            batch=deep_batch(d["arch"], DEVICE), progress=progress)
    return load_secant_dial(bundle_dir)


def fig6_item(sigma=None, name="fig6"):
    """`(arch, indices, settings)` of Fig. 6 at the published settings, on our NADs (at noise `sigma`
    instead of the published one if given: the sigma study's best). `name` "fig6" is LeNet's; a
    `DEEP_FIG6` name is the network and max_lr of `DEEP_TRAIN` at its indices and `DEEP_SIGMA`, on
    `nads_of(arch)`; a `FIG6_NADS` name is its item's at its sigma, with the seed of its replicate."""
    if name in FIG6_NADS:
        item, _, r, sigma = FIG6_NADS[name]
        arch, indices, settings = fig6_item(sigma, name=item)
        return arch, indices, ch1_fourier.replicate_settings(settings, r)
    p = presets.preset("nads", "paper")
    settings = {**p["fig6"], "seed": SEED}
    if name in DEEP_FIG6:
        published_arch, indices = DEEP_FIG6[name]
        arch, lr = DEEP_TRAIN[published_arch]
        return arch, list(indices), {**settings, "sigma": DEEP_SIGMA, "max_lr": lr}
    if name != "fig6":
        raise ValueError(f"name must be one of fig6, {', '.join([*DEEP_FIG6, *FIG6_NADS])}; got {name!r}")
    return p["fig6_arch"], p["fig6_indices"], settings if sigma is None else {**settings, "sigma": float(sigma)}


def nads_of(arch):
    """The network whose NADs a trained `arch` is tested on: VGG-11's for VGG-11 with batch norm
    (`DEEP_TRAIN`), else its own."""
    return {trained: published for published, (trained, _) in DEEP_TRAIN.items()}.get(arch, arch)


def fig6_method(name):
    """The NAD estimate ("secant" or "autograd") that the Fig. 6 item `name` trains along."""
    return FIG6_NADS[name][1] if name in FIG6_NADS else "secant"


def load_fig6(bundle_dir=BUNDLE, sigma=None, name="fig6"):
    """`{index: test accuracy}` of the stored Fig. 6 cells of `name` (`fig6_item`) on our NADs
    (`fig6_method`'s), possibly partial."""
    arch, indices, settings = fig6_item(sigma, name)
    basis = load_nad(nads_of(arch), fig6_method(name), bundle_dir)
    if basis is None:
        return {}
    return ch3_nads.fig6_sweep(arch, basis, indices, settings, Path(bundle_dir) / "nads", device=item_device(name),
                               only_stored=True)


def fig6_runs(item, method, sigma=None):
    """The `FIG6_NADS` names of `item`'s runs along the NADs of `method` at `sigma`, in seed order."""
    return [name for name, (i, m, _, s) in FIG6_NADS.items() if (i, m, s) == (item, method, sigma)]


def fig6_by_method(item="fig6_vgg11", bundle_dir=BUNDLE, sigma=None):
    """`{method: {index: (mean, std)}}` over the seeds of `item`'s runs (`fig6_runs`) at `sigma` along
    its secant and its exact-gradient NADs, at the indices every seed holds (std with ddof 1); a run
    counts once all its indices are stored, a method without such runs is left out."""
    out = {}
    for method in ("secant", "autograd"):
        runs = [load_fig6(bundle_dir, name=name) for name in fig6_runs(item, method, sigma)]
        runs = [r for r in runs if r and len(r) == len(fig6_item(name=item)[1])]
        if runs:
            common = sorted(set.intersection(*(set(r) for r in runs)))
            out[method] = {k: (float(np.mean([r[k] for r in runs])),
                               float(np.std([r[k] for r in runs], ddof=1)) if len(runs) > 1 else 0.0)
                           for k in common}
    return out


def fig6_records(bundle_dir=BUNDLE, name="fig6"):
    """`{index: record}` of the stored Fig. 6 cells of `name` (those `load_fig6` reads)."""
    arch, indices, settings = fig6_item(name=name)
    basis = load_nad(nads_of(arch), fig6_method(name), bundle_dir)
    if basis is None:
        return {}
    found = sweeps.stored(f"fig6_{arch}", [{"index": i} for i in indices],
                          ch3_nads.fig6_settings(arch, basis, settings, item_device(name)), Path(bundle_dir) / "nads")
    return {indices[i]: result.record for i, result in found.items()}


def provenance(records):
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


# ----------------------------------------------------------------------------- Chapter 2

def load_pooling(bundle_dir=BUNDLE):
    """The pooling chapter's results at its paper preset (`ch2_pooling.chapter_results`), or None."""
    try:
        return ch2_pooling.chapter_results(presets.preset("pooling", "paper"), SEED, bundle_dir, DEVICE, compute=False)
    except (FileNotFoundError, store.StoreError):
        return None


def pooling_remaining(bundle_dir=BUNDLE):
    """Rough CPU seconds of Chapter 2's paper preset still to compute in the bundle (0 once stored)."""
    from nadcore import plan

    if load_pooling(bundle_dir) is not None:
        return 0.0
    items = plan.chapter_plan("02_pooling", "paper", seed=SEED, results_dir=bundle_dir, device=DEVICE).items
    return sum(it.seconds_each * it.count for it in items)


# ----------------------------------------------------------------------------- Chapter 4

DATA = ROOT / "data"               # data_root of the stand-ins read from files (Fashion-MNIST, `make fashion`)
STAND_INS = ("digits", "fashion")  # the datasets of Chapters 4-5 in the bundle (no CIFAR-10 here)


def _check_stand_in(dataset):
    if dataset not in STAND_INS:
        raise ValueError(f"dataset must be one of {', '.join(STAND_INS)}; got {dataset!r}")
    return dataset


def cifar_item(dataset="digits"):
    """The settings of Chapter 4's bundle item on `dataset`: the smoke preset on the digits, its
    Fashion-MNIST version (`presets.fashion`) on "fashion"."""
    if _check_stand_in(dataset) == "fashion":
        return presets.fashion("cifar10")
    return presets.preset("cifar10", "smoke")


def cifar(bundle_dir=BUNDLE, compute=False, progress=True, dataset="digits", data_root=DATA):
    """Chapter 4 on a stand-in (no CIFAR-10 here), `dataset` "digits" or "fashion" (`cifar_item`), with
    our 10,000-network secant NADs: `{"curve": Fig. 7, "flip": Fig. 8}`, or None while missing (runs,
    NADs, or Fashion-MNIST's files in `data_root`, whose fingerprint keys the runs)."""
    from nadcore import cifar as c

    p = cifar_item(dataset)
    bases = {a: load_nad(a, bundle_dir=bundle_dir) for a in dict.fromkeys([p["arch"], *p["flip_archs"]])}
    if any(b is None for b in bases.values()):
        return None
    try:
        train = c.load(p["dataset"], data_root, train=True, seed=SEED)
        test = c.load(p["dataset"], data_root, train=False, seed=SEED)
    except ValueError:
        if compute:
            raise                      # its message says how to install the data
        return None
    mean, std = c.stats(p["dataset"], train[0])
    run = dict(device=DEVICE, seed=SEED, results_dir=bundle_dir, progress=progress, only_stored=not compute)
    try:
        curve = ch4_cifar10.poisoning_curve(p["arch"], train, test, bases[p["arch"]].nads, p["indices"], p["eps"],
                                            mean, std, p["recipe"], **run)
        flip = ch4_cifar10.flip_experiment(p["flip_archs"], train, test, {a: bases[a].nads for a in p["flip_archs"]},
                                           p["recipe"], **run)
    except (FileNotFoundError, store.StoreError):
        return None
    return {"curve": curve, "flip": flip}


# ----------------------------------------------------------------------------- Chapter 5

UNDERSPEC_ARCHS = ("lenet", "mlp")
PAIR_INDICES = [0, 100, 1000]   # Fig. 2 of the follow-up on a 3 x 3 grid of NAD indices, 3 seeds


def underspec_item(figure, dataset="digits"):
    """The settings of the follow-up's Fig. 2 ("pairs": paper preset, `PAIR_INDICES`, its 3 seeds, which
    the paper averages) or Fig. 3 ("ood": paper preset on the digits stand-in, its first seed, or
    `presets.fashion("ood")` with `dataset="fashion"`) in the bundle, for the run `SEED`."""
    P = ch5_underspec.chapter_settings("paper", SEED)
    if figure == "pairs":
        return {**P["pairs"], "indices": PAIR_INDICES,
                "selected": [[i, j] for i in PAIR_INDICES for j in PAIR_INDICES if i != j][:4]}
    if figure == "ood":
        if _check_stand_in(dataset) == "fashion":
            f = presets.fashion("ood")
            return {**f, "seeds": [seeds.derive(SEED, r) for r in f["seeds"]]}
        return {**P["ood"], "dataset": "digits", "limit": None, "seeds": P["ood"]["seeds"][:1]}
    raise ValueError(f"figure must be 'pairs' or 'ood'; got {figure!r}")


def underspec_cost(figure, dataset="digits"):
    """Rough time (text) of the bundle's Fig. 2 ("pairs") or Fig. 3 ("ood", on `dataset`) for
    `UNDERSPEC_ARCHS` on a 2-core CPU (`plan.train_cost`)."""
    from nadcore import plan

    s = underspec_item(figure, dataset)
    cells = len(s["seeds"]) * len(s["indices"]) ** (2 if figure == "pairs" else 1)
    samples = 2 * s["n_train"] if figure == "pairs" else (s["limit"] or 1797)
    return plan.duration(sum(cells * plan.train_cost(DEVICE, a, samples, s["recipe"][a]["epochs"])
                              for a in UNDERSPEC_ARCHS))


def underspec(figure, arch, bundle_dir=BUNDLE, compute=False, progress=True, dataset="digits", data_root=DATA):
    """The stored grid of the follow-up's Fig. 2 or 3 (Fig. 3 on `dataset`, "digits" or "fashion") for
    `arch` (our 10,000-network secant NADs); None while cells are missing, unless `compute`."""
    basis = load_nad(arch, bundle_dir=bundle_dir)
    if basis is None:
        return None
    run = dict(device=DEVICE, progress=progress, only_stored=not compute)
    if figure == "pairs":
        return ch5_underspec.pair_grid(arch, basis, underspec_item("pairs"), bundle_dir, **run)
    return ch5_underspec.ood_grid(arch, basis, underspec_item("ood", dataset), bundle_dir, data_root, **run)


# Chapter 6 again at the sigma study's best (`DEEP_SIGMA`): at the caption's 3 our max-pooling LeNet is
# near chance on most of the grid, too weak a signal to tell the prefilters apart. Same NADs.
ANTIALIAS_SIGMA = {"fourier": {"sigma": DEEP_SIGMA}, "nads": {"fig6": {"sigma": DEEP_SIGMA}}}


def load_antialias(bundle_dir=BUNDLE, best_sigma=False):
    """Chapter 6 at the published settings (`ch6_antialias.chapter_results`, computing nothing), or at
    the sigma study's best with `best_sigma` (`ANTIALIAS_SIGMA`): the max-pooling Fig. 1 cells are
    Fig. 1's own; pieces not stored yet are None or empty."""
    return ch6_antialias.chapter_results("paper", SEED, bundle_dir, DEVICE, compute=False,
                                         overrides=ANTIALIAS_SIGMA if best_sigma else None)


def antialias_gaps(bundle_dir=BUNDLE):
    """What Chapter 6's bundle item lacks: `(names of the missing parts, rough cost on a 2-core
    CPU)`, or None when it is complete (`python -m nadcore.bundle antialias` computes it)."""
    from nadcore import plan

    items = plan.chapter_plan("06_antialias", "paper", seed=SEED, results_dir=bundle_dir, device=DEVICE).items
    todo = [it for it in items if it.stored < it.count]
    if not todo:
        return None
    return ", ".join(it.name for it in todo), plan.duration(sum(it.cost_s or 0 for it in todo))


# ----------------------------------------------------------------------------- beside the published numbers

def plain_deep(name, bundle_dir=BUNDLE):
    """`(table, records)` of the stored cells of the `DEEP_FIG1` item `name` trained as the published
    network itself (plain VGG-11) at Fig. 1's settings: why `DEEP_TRAIN` trains another."""
    _, grid, _, pooling = fourier_item(name)
    return ch1_fourier.stored_directions((DEEP_FIG1[name],), grid, fourier_item("fig1")[2],
                                         Path(bundle_dir) / "fourier", pooling, "fig1")


def fig1_comparison(bundle_dir=BUNDLE):
    """Fig. 1, ours beside the published grid, for every architecture of the published CSV:
    `{arch: {"ours", "published", "stats", "stored", "cells", "records"}}` and the grid.
    `ours` holds the stored cells (canonical ones), `stats` is `published.compare_grids` (None
    with fewer than 3 stored cells)."""
    table, grid, _, records = load_fourier("fig1", bundle_dir)
    for name, arch in DEEP_FIG1.items():   # under the published column's name
        trained = DEEP_TRAIN[arch][0]
        deep, _, _, deep_records = load_fourier(name, bundle_dir)
        table, records = {**table, arch: deep.get(trained, {})}, {**records, arch: deep_records.get(trained, [])}
    ours = ch1_fourier.per_cell(table, "test_acc")
    out = {}
    for arch in published.fig1_archs():
        mine, pub = ours.get(arch, {}), published.fig1(arch)
        out[arch] = dict(ours=mine, published=pub, stats=published.compare_grids(mine, pub) if len(mine) >= 3 else None,
                         stored=len(mine), cells=len(grid.half()), records=records.get(arch, []))
    return out, grid


def authors_code_rows(comparison):
    """Rows `(cell, pattern, published, authors' code (two seeds), ours or None)` for the LeNet cells
    measured with the authors' code (`published.AUTHORS_CODE_LENET`); `comparison` is
    `fig1_comparison()[0]`. Ours are sines (cosines at self-conjugate cells), as the grid."""
    lenet = comparison["lenet"]
    rows = []
    for (cell, kind), runs in published.AUTHORS_CODE_LENET.items():
        ours_kind = "cos" if fourier.is_self_conjugate(*cell) else "sin"
        mine = lenet["ours"].get(fourier.canonical(*cell)) if kind == ours_kind else None
        rows.append((cell, kind, lenet["published"][cell], runs, mine))
    return rows


def nad_overlaps(ks, bundle_dir=BUNDLE):
    """Subspace overlap (`nads.subspace_overlaps`) of our stored NADs with the published ones, for
    each k of `ks`: `{(arch, method): array}` for every estimate of `stored_nads` whose architecture
    the authors published."""
    return {(a, m): nads.subspace_overlaps(r.nads, published.nads(a).nads, ks)
            for (a, m), r in stored_nads(bundle_dir=bundle_dir).items() if a in published.ARCHS}


def fig6_comparison(bundle_dir=BUNDLE):
    """Our stored Fig. 6 cells (`load_fig6`, `{index: accuracy}` on our LeNet NADs) and the published
    curves (`published.fig6`): `published` of our architecture, `curves` of all four; `best_sigma`
    (the sigma study's, None until known) and `ours_best`, our cells at that noise level; `deep`,
    `{arch: {index: accuracy}}` of the deep networks' items (`DEEP_FIG6`) on their own NADs."""
    arch, indices, settings = fig6_item()
    grids = load_sigma_study(bundle_dir)[0]
    best = best_sigma(grids) if len(grids) == len(SIGMA_STUDY["sigmas"]) else None
    return dict(arch=arch, ours=load_fig6(bundle_dir), published=published.fig6(arch), settings=settings,
                indices=indices, curves={a: published.fig6(a) for a in published.FIG6_ARCHS}, best_sigma=best,
                ours_best=load_fig6(bundle_dir, best) if best is not None else {},
                deep={arch: load_fig6(bundle_dir, name=name) for name, (arch, _) in DEEP_FIG6.items()})


def status(item, bundle_dir=BUNDLE):
    """One line: how much of a bundle item is stored, and the command (and rough CPU cost) for the rest."""
    from nadcore import plan

    if item in ("fig1", "fig2", "fig3", "fig3_sigma", *DEEP_FIG1):
        done, total, left = fourier_remaining(item, bundle_dir)
        cells = range(total)
        head = f"{item} ({', '.join(fourier_item(item)[0])}): {done} of {total} cells stored"
    elif item in ("fig6", *DEEP_FIG6, *FIG6_NADS):
        arch, indices, settings = fig6_item(name=item)
        done, total = len(load_fig6(bundle_dir, name=item)), len(indices)
        left = (total - done) * plan.train_cost(DEVICE, arch, 2 * settings["n_train"], settings["epochs"])
        head = f"{item} ({arch}): {done} of {total} NAD indices stored"
    elif item == "fig6_sigma":
        grids = load_sigma_study(bundle_dir)[0]
        sigma = best_sigma(grids) if len(grids) == len(SIGMA_STUDY["sigmas"]) else None
        arch, indices, settings = fig6_item(sigma if sigma is not None else 2.0)
        done, total = (len(load_fig6(bundle_dir, sigma)) if sigma is not None else 0), len(indices)
        each = plan.train_cost(DEVICE, arch, 2 * settings["n_train"], settings["epochs"])
        left = (total - done) * each + _sigma_left(grids, single=True)
        head = (f"fig6_sigma ({arch}, the best sigma: {'not known yet' if sigma is None else f'{sigma:g}'}): "
                f"{done} of {total} NAD indices stored")
    elif item == "sigma":
        grids = load_sigma_study(bundle_dir)[0]
        runs = _sigma_runs(grids)
        done, total = sum(len(g) for g in grids.values()), len(runs)
        cells = range(total)
        left = _sigma_left(grids)
        head = f"sigma ({SIGMA_STUDY['arch']}, sigma {', '.join(f'{x:g}' for x in SIGMA_STUDY['sigmas'])}): " \
               f"{done} of {total} Fig. 1 grids stored"
    elif item.startswith("nads_"):
        return _nad_status(item, bundle_dir)
    elif item in ITEMS:
        return f"{item}: " + ("stored" if _complete(item, bundle_dir) else
                              f"not complete; `python -m nadcore.bundle {item}` computes the rest")
    else:
        raise ValueError(f"item must be one of {', '.join(ITEMS)}; got {item!r}")
    if done == (len(cells) if item not in ("fig6", "fig6_sigma", *DEEP_FIG6, *FIG6_NADS) else total):
        return head
    cost = "float32, on a CUDA GPU" if item_device(item) == "cuda" else f"~{plan.duration(left)} on a 2-core CPU"
    return f"{head}; `python -m nadcore.bundle {item}` computes the rest ({cost})"


def _sigma_left(grids, single=False):
    """Rough CPU seconds of the sigma study's grids still to compute (only the single-seed ones)."""
    from nadcore import plan

    settings = fourier_item("fig1")[2]
    runs = _sigma_runs(grids)[:len(SIGMA_STUDY["sigmas"])] if single else _sigma_runs(grids)
    cells = len(fourier_item("fig1")[1].half())
    todo = sum(1 for s, r in runs if len(grids.get(s, [])) <= r)
    return todo * cells * plan.train_cost(DEVICE, SIGMA_STUDY["arch"], 2 * settings["n"], settings["epochs"])


def _nad_item_parts(item):
    """`nads_ARCH` or `nads_ARCH_METHOD` -> (ARCH, METHOD): ARCH may hold "_" (resnet18_blur)."""
    arch, _, method = item[len("nads_"):].rpartition("_")
    return (arch, method) if method in nads.METHODS else (item[len("nads_"):], "secant")


def _nad_status(item, bundle_dir, scratch=SCRATCH):
    """A NAD item: stored, or how many of its chunks `scratch` holds and the rough cost of the rest."""
    from nadcore import plan

    arch, method = _nad_item_parts(item)
    settings = nad_item(arch, method)
    n = settings["num_networks"]
    if load_nad(arch, method, bundle_dir) is not None:
        return f"{item}: stored ({n:,} networks)"
    cells = [{"start": a, "stop": b} for a, b in nads.chunk_ranges(0, n)]
    dev = torch.device(nad_device(arch, method))
    left = sweeps.missing("nad_chunks", cells, nad_chunk_item(arch, method), scratch)
    each = plan.nad_seconds(arch, method, settings.get("precision", "float32"), settings.get("compiled", False))
    cost = f" (~{plan.duration(each * sum(c['stop'] - c['start'] for c in left))} on a 2-core CPU)" if each else ""
    if dev.type == "cuda":
        cost = " (float32, on a CUDA GPU)"
    return (f"{item}: {len(cells) - len(left)} of {len(cells)} chunks of {nads.CHUNK} networks in {scratch}; "
            f"`python -m nadcore.bundle {item}` computes the rest{cost}")


def _complete(item, bundle_dir):
    """True when a bundle item without cell counts (convergence, Chapters 2, 4, 5, 6, 7) is fully stored."""
    if item == "convergence":
        return store.matches(convergence_path(bundle_dir), convergence_item())
    if item in ("convergence_autograd", "convergence_zoo", "convergence_secant"):
        method = "secant" if item == "convergence_secant" else "autograd"
        return all(load_convergence(a, bundle_dir, method) is not None for a in _convergence_archs(item))
    if item in ("underspec_ood", "underspec_pairs", "underspec_ood_fashion"):
        figure, dataset = item.split("_")[1], ("fashion" if item.endswith("_fashion") else "digits")
        return all(underspec(figure, a, bundle_dir, progress=False, dataset=dataset) is not None
                   for a in UNDERSPEC_ARCHS)
    if item in ("cifar", "cifar_fashion"):
        return cifar(bundle_dir, progress=False, dataset="fashion" if item == "cifar_fashion" else "digits") is not None
    if item == "antialias":
        return antialias_gaps(bundle_dir) is None
    if item == "secant_dial":
        whole = len(SECANT_DIAL["fig6_indices"])
        return all(v["nads"] is not None and v["conv"] is not None and len(v["fig6"]) == whole
                   for v in load_secant_dial(bundle_dir).values())
    if item == "antialias_sigma":
        r = load_antialias(bundle_dir, best_sigma=True)
        return (all(len(r["fig1"][v]) == len(r["grid"].half()) for v in r["variants"])
                and all(len(r["fig6"][v]) == len(r["settings"]["indices"]) for v in r["variants"]))
    if item == "precision":
        return load_precision(bundle_dir) is not None
    if item == "train_precision":
        return train_precision_verdict(load_train_precision(bundle_dir)[0]) is not None
    if item == "zoo":
        zoo = load_zoo(bundle_dir)
        return (not ch7_zoo.missing(zoo) and None not in zoo["secant"].values()
                and all(len(f) == len(zoo["settings"]["fig6_indices"]) for f in zoo["fig6"].values()))
    return load_pooling(bundle_dir) is not None


# ----------------------------------------------------------------------------- compute

def compute(item, bundle_dir=BUNDLE, scratch=SCRATCH, progress=True):
    """Compute (or finish) one bundle item: fig1, fig2, fig3, nads_ARCH, nads_lenet_autograd,
    convergence, fig6, underspec_ood, underspec_pairs, cifar, antialias, pooling, and Chapters 4-5 on
    Fashion-MNIST (cifar_fashion, underspec_ood_fashion: Debian's dataset-fashion-mnist, `make
    fashion`). Stored as it goes; a finished item computes nothing."""
    bundle_dir = Path(bundle_dir)
    _note_machine(bundle_dir)
    if item == "train_precision":
        archs, grid, _, pooling = fourier_item(TRAIN_PRECISION["item"])
        for r in range(TRAIN_PRECISION["seeds"]):
            for precision in PRECISIONS:
                ch1_fourier.sweep_directions(archs, grid, train_precision_settings(precision, r),
                                             bundle_dir / "fourier", pooling, name="fig1", batch=1,
                                             progress=progress, only=TRAIN_PRECISION["cells"])
        return load_train_precision(bundle_dir)
    if item in DEEP_FIG1:
        _check_device(item, DEEP_DEVICE[item])
        archs, grid, settings, pooling = fourier_item(item)
        for r in range(DEEP_SEEDS):   # the item, then the check's cells with more seeds
            ch1_fourier.sweep_directions(archs, grid, ch1_fourier.replicate_settings(settings, r),
                                         bundle_dir / "fourier", pooling, name=_sweep_name(item),
                                         batch=deep_batch(archs[0], DEEP_DEVICE[item]), progress=progress,
                                         only=None if r == 0 else TRAIN_PRECISION["cells"])
        return load_fourier(item, bundle_dir)
    if item in ("fig1", "fig2", "fig3", "fig3_sigma"):
        archs, grid, settings, pooling = fourier_item(item)
        coarse = fourier.Grid(tuple(k for k in grid.freqs if k % 4 == 0 and abs(k) <= 12), grid.size)
        for arch in archs:   # every 4th frequency first, so a stopped run leaves an even coverage
            # one stack at a time: stored as it ends
            batch = stacked.registry_chunk_size(arch, pooling, settings["batch_size"], DEVICE)
            for g in (coarse, grid):
                ch1_fourier.sweep_directions([arch], g, settings, bundle_dir / "fourier", pooling,
                                             name=_sweep_name(item), batch=batch, progress=progress)
        return load_fourier(item, bundle_dir)
    if item.startswith("nads_"):
        arch, method = _nad_item_parts(item)
        stored = load_nad(arch, method, bundle_dir)
        if stored is not None:
            return stored
        settings, device = nad_item(arch, method), nad_device(arch, method)
        _check_device(item, device)
        result = nads.estimate(arch, settings["num_networks"], method=method, seed=SEED, device=device,
                               precision=settings.get("precision", "float32"),
                               compiled=settings.get("compiled", False), results_dir=scratch, progress=progress)
        result.save(nads.result_path(arch, settings, bundle_dir), compact=True)
        return load_nad(arch, method, bundle_dir)    # what later readers see (float16 NADs, other fingerprint)
    if item in ("convergence", "convergence_autograd", "convergence_zoo", "convergence_secant"):
        method = "secant" if item == "convergence_secant" else "autograd"
        for arch in _convergence_archs(item):
            convergence_compute(arch, method, bundle_dir, scratch, progress)
        return None
    if item == "precision":
        store.cached(precision_path(bundle_dir), precision_item(), lambda: _precision_compute(progress), device=DEVICE)
        return load_precision(bundle_dir)
    if item == "sigma":
        _sigma_runs_compute(_sigma_runs({})[:len(SIGMA_STUDY["sigmas"])], bundle_dir, progress)
        _sigma_runs_compute(_sigma_runs(load_sigma_study(bundle_dir)[0]), bundle_dir, progress)
        return sigma_study(bundle_dir)
    if item in DEEP_FIG6 or item in FIG6_NADS:
        device = item_device(item)
        _check_device(item, device)
        arch, indices, settings = fig6_item(name=item)
        basis = compute(f"nads_{nads_of(arch)}" + ("_autograd" if fig6_method(item) == "autograd" else ""),
                        bundle_dir, scratch, progress)
        return ch3_nads.fig6_sweep(arch, basis, indices, settings, bundle_dir / "nads", device=device,
                                   batch=deep_batch(arch, device), progress=progress)
    if item in ("fig6", "fig6_sigma"):
        sigma = None
        if item == "fig6_sigma":   # the single-seed grids first: they name the best sigma
            _sigma_runs_compute(_sigma_runs({})[:len(SIGMA_STUDY["sigmas"])], bundle_dir, progress)
            sigma = best_sigma(load_sigma_study(bundle_dir)[0])
        arch, indices, settings = fig6_item(sigma)
        basis = compute(f"nads_{arch}", bundle_dir, scratch, progress)
        return ch3_nads.fig6_sweep(arch, basis, indices, settings, bundle_dir / "nads", device=DEVICE,
                                   batch=stacked.registry_chunk_size(arch, True, 128, DEVICE),
                                   progress=progress)
    if item in ("underspec_pairs", "underspec_ood", "underspec_ood_fashion"):
        for arch in UNDERSPEC_ARCHS:
            compute(f"nads_{arch}", bundle_dir, scratch, progress)
            underspec(item.split("_")[1], arch, bundle_dir, compute=True, progress=progress,
                      dataset="fashion" if item.endswith("_fashion") else "digits")
        return None
    if item in ("cifar", "cifar_fashion"):
        return cifar(bundle_dir, compute=True, progress=progress,
                     dataset="fashion" if item == "cifar_fashion" else "digits")
    if item == "antialias":
        for part in ("fig1", "nads", "fig6"):   # each part for every variant before the next part
            ch6_antialias.chapter_results("paper", SEED, bundle_dir, DEVICE, progress=progress, parts=(part,),
                                          scratch=scratch, compact=True)
        return load_antialias(bundle_dir)
    if item == "secant_dial":
        return _dial_compute(bundle_dir, scratch, progress)
    if item == "antialias_sigma":   # the NADs are the `antialias` item's
        for part in ("fig1", "fig6"):
            ch6_antialias.chapter_results("paper", SEED, bundle_dir, DEVICE, progress=progress, parts=(part,),
                                          scratch=scratch, compact=True, overrides=ANTIALIAS_SIGMA)
        return load_antialias(bundle_dir, best_sigma=True)
    if item == "zoo":
        return load_zoo(bundle_dir, compute=True, progress=progress, scratch=scratch)
    if item == "pooling":
        return ch2_pooling.chapter_results(presets.preset("pooling", "paper"), SEED, bundle_dir, DEVICE, progress)
    raise ValueError(f"item must be one of {', '.join(ITEMS)}; got {item!r}")


def load_zoo(bundle_dir=BUNDLE, compute=False, progress=False, scratch=SCRATCH):
    """Chapter 7 at the published scale (`ch7_zoo.chapter_results("paper")`): what the bundle holds,
    or, with `compute`, everything (the exact-gradient NADs first, then the secant)."""
    run = lambda secant: ch7_zoo.chapter_results("paper", SEED, bundle_dir, DEVICE, compute=compute, progress=progress,
                                                 scratch=scratch, compact=True, secant=secant)
    if compute:
        run(False)
    return run(True)


def convergence_compute(arch, method, bundle_dir=BUNDLE, scratch=SCRATCH, progress=True):
    """Compute (or read) the stored convergence of `convergence_item(arch, method)`, on its device."""
    c = convergence_item(arch, method)
    if arch is not None:   # its chunks are the estimate's
        compute(f"nads_{arch}" + ("_autograd" if method == "autograd" else ""), bundle_dir, scratch, progress)
    return store.cached(convergence_path(bundle_dir, arch, method), c, lambda: nads.convergence(
        c["arch"], c["sizes"], c["ks"], method=c["method"], seed=SEED, device=c["device"], results_dir=scratch,
        progress=progress, precision=c.get("precision", "float32"), compiled=c.get("compiled", False)),
        device=c["device"])


def _convergence_archs(item):
    return {"convergence": (None,), "convergence_autograd": AUTOGRAD_CONV_ARCHS, "convergence_zoo": ZOO_ARCHS,
            "convergence_secant": SECANT_CONV_ARCHS}[item]


def _sigma_runs_compute(runs, bundle_dir, progress):
    _, grid, _, pooling = fourier_item("fig1")
    arch = SIGMA_STUDY["arch"]
    batch = stacked.registry_chunk_size(arch, pooling, fourier_item("fig1")[2]["batch_size"], DEVICE)
    for sigma, r in runs:
        ch1_fourier.sweep_directions([arch], grid, sigma_settings(sigma, r), Path(bundle_dir) / "fourier", pooling,
                                     name="fig1", batch=batch, progress=progress)


ITEMS = ("fig1", "nads_lenet", "nads_logreg", "nads_mlp", "fig6", "nads_lenet_autograd", "convergence",
         "underspec_ood", "cifar", "antialias", "pooling", "underspec_pairs", "fig6_sigma", "sigma", "fig2", "fig3",
         "nads_vgg11_autograd", "nads_resnet18_autograd", "nads_densenet121_autograd", "convergence_autograd",
         "precision", "train_precision", "nads_vgg11", "convergence_secant", *DEEP_FIG6,
         *DEEP_FIG1, *FIG6_NADS, "nads_resnet18",
         "nads_densenet121",
         "cifar_fashion", "underspec_ood_fashion",
         *(f"nads_{a}_autograd" for a in ZOO_ARCHS), "convergence_zoo", *(f"nads_{a}" for a in ZOO_ARCHS), "zoo",
         "fig3_sigma", "antialias_sigma", "secant_dial")


USAGE = f"""usage: python -m nadcore.bundle [status | all | ITEM ...]

The results bundle (bundle/): the published settings computed on a CPU, committed with the book.
  status      what every item holds (stored, partial with counts, missing) and the rough cost of the rest
  all         compute (or finish) every item, in order: hours to days on a 2-core CPU, resumable
  ITEM ...    compute (or finish) these items; finished cells and chunks are kept
With no argument: this help and the status. Items: {", ".join(ITEMS)}."""


def main(argv=None):
    """`python -m nadcore.bundle [status | all | ITEM ...]` (see `USAGE`); bad items exit 2 before any work."""
    import sys

    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help", "status"):
        if not args or args[0] != "status":
            print(USAGE)
        if not args or args[0] == "status":
            for item in ITEMS:
                print(status(item), flush=True)
        return 0
    items = list(ITEMS) if args == ["all"] else args
    bad = [item for item in items if item not in ITEMS]
    if bad:
        print(f"nadcore.bundle: error: item must be one of all, status, {', '.join(ITEMS)}; got {bad[0]!r}",
              file=sys.stderr)
        return 2
    try:
        for item in items:
            print(f"bundle: {item}", flush=True)
            compute(item)
    except KeyboardInterrupt:
        print("nadcore.bundle: interrupted; finished cells and chunks are kept", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

