"""The results bundle's CUDA items, computed on a GPU within a time limit, and a check of the CUDA path.

    python tools/gpu_bundle.py --seconds 420 --out OUT

1. The GPU's float32 and bfloat16 peaks (large matrix products, measured here; float32 without TF32).
2. The CUDA path against the CPU: network 0's float32 secant gradient of each architecture on the
   GPU, twice (bitwise the same?), and on this machine's CPU (cosine, largest relative difference);
   the exact gradients of networks 0-3 on both (lowest cosine).
3. The chunks of the estimates of `bundle.SECANT_CUDA` (float32 secant), 125 networks at a time in
   `MILESTONES` order until the time is up: seconds a network, GFLOP/s, fraction of the float32
   peak and ratio to the CPU's float32 secant of step 2.
4. For each architecture the largest of `SIZES` whose chunks are all stored: its estimate and its N vs
   2N convergence, stored as `python -m nadcore.bundle nads_ARCH convergence_secant` stores them with
   `SECANT_CUDA[ARCH]` set to that size.
OUT receives `bundle.tar` (the new files of `bundle/nads/` and each estimate's first chunk, to check it
on a CPU) and `report.json`. A GPU without a time limit runs `python -m nadcore.bundle` instead.

    python tools/gpu_bundle.py --seconds 420 --out OUT --bundle bundle --train fig1_vgg11 fig6_vgg11

instead trains the cells of the named `DEEP_FIG1` / `DEEP_FIG6` / `FIG6_NADS` / `UNDERSPEC_GPU` items into the
bundle (each network alone, the training-precision check's cells first), in the order named, after step 1, until
the time is up: the seconds and TFLOP/s of each, and the first one trained once more (bitwise the same?). A run
resumes where the last stopped, so an item larger than one lease takes several; `python -m nadcore.bundle status
ITEM` prices what is left from the bundle's GPU records (by FLOPs for a network no GPU has trained yet).
Issue 57 prepared, in this order (prices on the H200 of VGG-11's cells, ~10 TFLOP/s):

    --train fig6_resnet18_secant_seed0 fig6_resnet18_secant_seed1 fig6_resnet18_secant_seed2    # ~15 min
    --train fig1_resnet18                                                                           # ~27 min
    --train fig6_densenet121_secant_seed0 fig6_densenet121_secant_seed1 fig6_densenet121_secant_seed2  # ~27 min
    --train fig1_densenet121                                                                        # ~44 min
    --train underspec_pairs_resnet18                                                                # ~44 min
OUT's `bundle.tar` holds the files it stored. Fig. 6 needs VGG-11's NADs in the bundle (carried: the
secant, or the exact-gradient ones for a `FIG6_NADS` item along them).
"""

import argparse
import json
import tarfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from nadcore import bundle, catalog, device, models, nads, plan, store, sweeps
from nadcore.experiments import ch1_fourier, ch3_nads, ch5_underspec

MILESTONES = [("densenet121", 500), ("resnet18", 2000), ("densenet121", 1000), ("densenet121", 2000),
              ("resnet18", 5000), ("densenet121", 5000), ("resnet18", 10000)]
SIZES = (500, 1000, 2000, 5000, 10000)
CHECK_ARCHS = ("lenet", "vgg11", "resnet18", "densenet121")
DEVICE = "cuda"


def peak_tflops(dtype, size=8192, repeats=5):
    """The best TFLOP/s of `size`-square matrix products in `dtype` on the GPU."""
    a, b = (torch.randn(size, size, device=DEVICE, dtype=dtype) for _ in range(2))
    best = min(_seconds(lambda: a @ b) for _ in range(repeats + 1))
    return 2 * size ** 3 / best / 1e12


def _seconds(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def secant_gflop(arch):
    """FLOPs of one network's secant (its 2D probes), counted by `torch.utils.flop_counter`."""
    net = nads.network(lambda: models.build(arch, num_classes=1), 0, 0, torch.device("cpu"))
    x0 = nads.eval_point_for(bundle.SEED, (1, 32, 32))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        net(nads.probes(x0, 100.0))
    return counter.get_total_flops() / 1e9


def check(arch, gpu, cpu):
    """Network 0's float32 secant gradient on `gpu` (twice, after a warm-up) and on `cpu`: agreement and seconds."""
    x0 = nads.eval_point_for(bundle.SEED, (1, 32, 32))
    out = {}
    for dev, calls in ((gpu, 3), (cpu, 1)):
        net = nads.network(lambda: models.build(arch, num_classes=1), bundle.SEED, 0, dev)
        grads = []
        for _ in range(calls):
            start = time.perf_counter()
            grads.append(nads.secant_gradient(net, x0.to(dev), 100.0).cpu())
            seconds = time.perf_counter() - start
        out["gpu" if dev is gpu else "cpu"] = {"gradient": grads[-1].double(), "seconds": seconds,
                         "bitwise_repeat": bool(torch.equal(grads[-2], grads[-1])) if calls > 1 else None}
    a, b = out["gpu"]["gradient"], out["cpu"]["gradient"]
    nets = {dev: [nads.network(lambda: models.build(arch, num_classes=1), bundle.SEED, i, dev) for i in range(4)]
            for dev in (gpu, cpu)}
    exact = [nads.autograd_gradients(nets[dev], x0.to(dev)).cpu().double() for dev in (gpu, cpu)]
    return {"cosine": float(a @ b / a.norm() / b.norm()), "max_rel_diff": float((a - b).abs().max() / b.abs().max()),
            "exact_cosine_min": float(torch.nn.functional.cosine_similarity(*exact).min()),
            "bitwise_repeat_gpu": out["gpu"]["bitwise_repeat"], "gpu_s": out["gpu"]["seconds"],
            "cpu_s": out["cpu"]["seconds"], "cpu_threads": torch.get_num_threads()}


def train_units(item, bundle_dir):
    """`[(label, train and store one cell, train it once more, its training samples' SGD passes, images it
    classifies)]` of a `DEEP_FIG1`, `DEEP_FIG6`, `FIG6_NADS` or `UNDERSPEC_GPU` item (`test_acc`, and Fig. 1's
    `loss_history`; the follow-up's Fig. 2: `accuracy`), the check's cells first; nothing for Fig. 6 or the
    follow-up while `bundle_dir` lacks their NADs."""
    if item in bundle.UNDERSPEC_GPU:
        return underspec_units(item, bundle_dir)
    if item in bundle.DEEP_FIG1:
        archs, grid, settings, pooling = bundle.fourier_item(item)
        first = [c for c in bundle.TRAIN_PRECISION.cells if c in grid.half()]
        steps = settings["epochs"] * settings["n"]
        return [(f"{item} {cell}",
                 lambda cell=cell: ch1_fourier.sweep_directions(
                     archs, grid, settings, bundle_dir / "fourier", pooling, name="fig1", batch=1, progress=False,
                     only=[cell])[archs[0]][cell],
                 lambda cell=cell: ch1_fourier.train_directions(archs[0], [cell], settings, pooling)[0],
                 steps, 2 * settings["n"])
                for cell in first + [c for c in grid.half() if c not in first]]
    arch, indices, settings = bundle.fig6_item(name=item)
    basis = bundle.load_nad(bundle.nads_of(arch), bundle.fig6_method(item), bundle_dir)
    if basis is None:
        return []
    kw = {k: v for k, v in settings.items() if k != "seed"}
    steps = settings["epochs"] * settings["n_train"]
    return [(f"{item} {i}",
             lambda i=i: {"test_acc": ch3_nads.fig6_sweep(arch, basis, [i], settings, bundle_dir / "nads",
                                                          device=DEVICE, batch=1, progress=False)[i]},
             lambda i=i: {"test_acc": ch3_nads.accuracy_on_nads(arch, basis, [i], seed=settings["seed"], device=DEVICE,
                                                                progress=False, **kw)[0]},
             steps, 2 * settings["n_train"])
            for i in indices]


def underspec_units(item, bundle_dir):
    """`train_units` of an `UNDERSPEC_GPU` item: each cell of its grid (a pair of NAD indices and a seed) alone, its
    `test_acc` the test accuracy on the pair's images (`ch5_underspec.CHANNELS`' first)."""
    figure, (arch,) = bundle.UNDERSPEC_GPU[item]
    basis = bundle.load_nad(arch, bundle_dir=bundle_dir)
    if basis is None:
        return []
    settings = bundle.pairs_item()
    sweep = ch5_underspec.pair_sweep(arch, basis, settings)

    def run(k):
        ch5_underspec.pair_grid(arch, basis, settings, bundle_dir, device=DEVICE, batch=1, shard=k,
                                num_shards=len(sweep.cells), progress=False)
        cell = sweeps.stored(sweep.name, sweep.cells[k:k + 1], sweep.settings, bundle_dir)[0].arrays
        return {"test_acc": cell["accuracy"][0], "accuracy": cell["accuracy"]}

    def again(k):
        cell = ch5_underspec.pair_cells(arch, basis, settings, sweep.cells[k:k + 1], DEVICE)[0]
        return {"test_acc": cell["accuracy"][0], "accuracy": cell["accuracy"]}

    passes = settings.recipe[arch].epochs * settings.n_train
    replicate = {seed: r for r, seed in enumerate(settings.seeds)}
    return [(f"{item} ({c['i']}, {c['j']}) seed {replicate[c['seed']]}", partial(run, k), partial(again, k), passes,
             2 * settings.n_test) for k, c in enumerate(sweep.cells)]


def train(items, bundle_dir, left, report, reserve=30.0):
    """Train the cells of `items` while `left()` exceeds the last cell's time and `reserve`; the first once more."""
    report["train"], last = [], 0.0
    for item in items:
        arch = (bundle.fourier_item(item)[0][0] if item in bundle.DEEP_FIG1 else
                bundle.UNDERSPEC_GPU[item][1][0] if item in bundle.UNDERSPEC_GPU else bundle.fig6_item(name=item)[0])
        step, image = catalog.TRAIN_GFLOP.get(arch) or plan.train_gflop(arch)
        for label, run, again, passes, images in train_units(item, bundle_dir):
            if left() < reserve + 1.2 * last:
                break
            t = time.perf_counter()
            out = run()
            last = time.perf_counter() - t
            tflops = (passes * step + images * image) / last / 1e3
            row = {"cell": label, "test_acc": float(out["test_acc"]), "seconds": last, "tflops": tflops}
            row["of_float32_peak"] = row["tflops"] / report["peak_tflops"]["float32"]
            if not report["train"] and left() > reserve + 2.5 * last:
                repeat = again()
                row["again"] = float(repeat["test_acc"])
                row["bitwise_repeat"] = all(np.array_equal(out[k], repeat[k]) for k in out)
            report["train"].append(row)
            print(row, f"{left():.0f} s left", flush=True)


def stored(arch, n, scratch):
    cells = [{"start": a, "stop": b} for a, b in nads.chunk_ranges(0, n)]
    return not sweeps.missing("nad_chunks", cells, bundle.nad_chunk_item(arch), scratch)


def main(argv=None):
    with store.writing_bundle():   # the bundle it fills may be a checkout's committed one
        _main(argv)


def _main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, required=True, help="time for everything before packing")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--bundle", type=Path, default=Path("gpu_bundle"), help="bundle folder to fill (new)")
    parser.add_argument("--train", nargs="+", choices=[*bundle.DEEP_FIG1, *bundle.DEEP_FIG6, *bundle.UNDERSPEC_GPU,
                                                   *(n for n in bundle.FIG6_NADS if bundle.item_device(n) == "cuda")],
                        help="train these items' cells instead of the NAD chunks")
    args = parser.parse_args(argv)
    if DEVICE == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpu_bundle: error: no CUDA GPU here (this runner computes the bundle's CUDA items)")
    start = time.perf_counter()
    left = lambda: args.seconds - (time.perf_counter() - start)
    gpu, cpu = device.resolve(DEVICE), torch.device("cpu")
    scratch = args.bundle / "partial"
    report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
              "tf32_conv": torch.backends.cudnn.allow_tf32, "tf32_matmul": torch.backends.cuda.matmul.allow_tf32}
    report["peak_tflops"] = {"float32": peak_tflops(torch.float32), "bfloat16": peak_tflops(torch.bfloat16)}
    print(json.dumps(report), flush=True)
    if args.train:
        before = {p: p.stat().st_mtime for p in args.bundle.rglob("*.npz")}
        train(args.train, args.bundle, left, report)
        pack(args.out, args.bundle, [p for p in args.bundle.rglob("*.npz") if before.get(p) != p.stat().st_mtime],
             report)
        return
    report["gflop"] = {a: secant_gflop(a) for a in CHECK_ARCHS}
    report["check"] = {}
    for arch in CHECK_ARCHS:
        report["check"][arch] = check(arch, gpu, cpu)
        print(arch, report["check"][arch], flush=True)
    report["chunks"] = []
    reserve = 60.0
    for arch, upto in MILESTONES:
        for a, b in nads.chunk_ranges(0, upto):
            if left() < reserve:
                break
            t = time.perf_counter()
            nads.estimate(arch, nads.EstimateSettings(seed=bundle.SEED, num_networks=b - a, first=a), device=DEVICE,
                          results_dir=scratch, progress=False)
            s = (time.perf_counter() - t) / (b - a)
            tflops = report["gflop"][arch] / s / 1e3
            report["chunks"].append({"arch": arch, "start": a, "seconds_per_network": s, "tflops": tflops,
                                     "of_float32_peak": tflops / report["peak_tflops"]["float32"],
                                     "ratio_to_cpu": report["check"][arch]["cpu_s"] / s})
            print(report["chunks"][-1], f"{left():.0f} s left", flush=True)
    report["stored"] = {}
    for arch in bundle.SECANT_CUDA:
        done = [n for n in SIZES if stored(arch, n, scratch)]
        if not done:
            continue
        bundle.SECANT_CUDA[arch] = done[-1]
        bundle.compute(f"nads_{arch}", args.bundle, scratch, progress=False)
        conv = bundle.convergence_compute(arch, "secant", args.bundle, scratch, progress=False)
        report["stored"][arch] = {"networks": done[-1], "sizes": conv.arrays["sizes"].tolist(),
                                  "convergence": conv.arrays["overlap"].tolist()}
        print(arch, report["stored"][arch], flush=True)
    first = {"start": 0, "stop": nads.CHUNK}
    kept = [sweeps.cell_path("nad_chunks", first, bundle.nad_chunk_item(arch), scratch) for arch in report["stored"]]
    pack(args.out, args.bundle, sorted((args.bundle / "nads").glob("*.npz")) + kept, report)
    print(f"packed in {args.seconds - left():.0f} s", flush=True)


def pack(out, bundle_dir, paths, report):
    """`out/bundle.tar` of `paths` (relative to `bundle_dir`) and `out/report.json`."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "bundle.tar", "w") as tar:
        for path in sorted(paths):
            tar.add(path, arcname=str(path.relative_to(bundle_dir)))
    (out / "report.json").write_text(json.dumps(report, indent=1, default=float))


if __name__ == "__main__":
    main()
