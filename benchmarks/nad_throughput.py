"""NAD estimates: networks per second, GFLOP/s as a fraction of a peak measured in this run, and
the ratio of each estimator to the float32 secant (the reference), all in one process.

For every architecture: the float32 secant (reference), the bfloat16 secant (channels-last,
autocast), the same through `torch.compile` (`nads.compiled_secant_gradient`, the bundle's; its
one-off compilation is left out of the timing) and the exact gradient, on the same networks. The
secant's FLOPs are counted by `torch.utils.flop_counter` on one network's 2D probes; the peaks are
the best of a few large matrix products and of a few channels-last 3x3 convolutions (counted as
direct convolution, like the secant) in float32 and bfloat16, measured here. Then how much bfloat16
moves the NADs: the cosine of each network's bfloat16 secant gradient (eager and compiled) with its
float32 one, and, for `--agreement-arch` at `--agreement-networks`, the overlap of the leading-k
subspaces of the bfloat16 estimates (eager, compiled) and the float32 one from the same networks
beside that of two disjoint float32 halves (the Monte-Carlo floor; `--agreement-networks 0` skips
it). Any registry name goes (`nadcore.models.names()`, the architectures after 2020 included);
`--train` also times one SGD step on a batch of 128, the way `train.fit_many` trains the network
(stacked through `nadcore.stacked` when `train.vmappable`), in float32 and in bfloat16 (autocast,
`precision="bfloat16"` of `train.Recipe`), with their ratio and fractions of the peaks.
`--write-rates` writes the measured costs into nadcore's rates file (`catalog.RATES_FILE`), which
`nadcore plan` prices with.

    .venv/bin/python benchmarks/nad_throughput.py --arch vgg11 resnet18 --networks 4
    .venv/bin/python benchmarks/nad_throughput.py --arch vit mixer convnext resnet18_blur --networks 2 \
        --train --agreement-networks 0
"""

import argparse
import time

import numpy as np
import rates
import torch
import torch.nn.functional as F
from timing import timed
from torch.func import stack_module_state
from torch.utils.flop_counter import FlopCounterMode

from nadcore import models, nads, stacked, train
from nadcore.device import autocast
from nadcore.experiments import ch3_nads


def peak_gflops(dtype, size=2048, repeats=5):
    """The best GFLOP/s of `size`-square matrix products in `dtype` on the CPU."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    a @ b
    best = min(_seconds(lambda: a @ b) for _ in range(repeats))
    return 2 * size ** 3 / best / 1e9


def conv_peak_gflops(dtype, channels=(64, 128, 256), repeats=5):
    """The best GFLOP/s of channels-last 3x3 convolutions (64 images of 32x32, `channels` in and out) in
    `dtype`, counted as direct convolution, as the secant's FLOPs are (oneDNN may compute fewer, e.g.
    with Winograd, so this can exceed the matmul peak: it is the peak of the op the networks run)."""
    best = 0.0
    for c in channels:
        x = torch.randn(64, c, 32, 32, dtype=dtype).to(memory_format=torch.channels_last)
        w = torch.randn(c, c, 3, 3, dtype=dtype).to(memory_format=torch.channels_last)
        with torch.no_grad():
            F.conv2d(x, w, padding=1)
            seconds = min(_seconds(lambda x=x, w=w: F.conv2d(x, w, padding=1)) for _ in range(repeats))
        best = max(best, 2 * 64 * c * c * 9 * 32 * 32 / seconds / 1e9)
    return best


def _seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def secant_gflop(arch):
    """GFLOP of one network's secant: its forward pass on the 2D probes."""
    factory, _ = nads.one_output_factory(arch)
    torch.manual_seed(0)
    net = factory().eval()
    x0 = nads.eval_point_for(0, (1, 32, 32))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        net(nads.probes(x0, 100.0))
    return counter.get_total_flops() / 1e9


def gradient_cosines(arch, count):
    """Cosine of each of `count` networks' bfloat16 secant gradient, eager and compiled, with its
    float32 one (`ch3_nads.precision_cosines`): an array (count, 2)."""
    cos = ch3_nads.precision_cosines(arch, count)
    return np.stack([cos["eager"], cos["compiled"]], axis=1)


def train_step(arch, batch=128, repeats=1, precision="float32"):
    """Seconds and FLOPs of one SGD step (forward, cross-entropy, backward, update) of a 2-class `arch`
    on `batch` inputs, as `train.fit_many` takes it: stacked (one network) when vmappable, else
    plain; `precision="bfloat16"` under autocast (and channels-last when not stacked), as `train.fit`."""
    torch.manual_seed(0)
    net = models.build(arch).train()
    x, y = torch.randn(batch, 1, 32, 32), torch.randint(0, 2, (batch,))
    dev = torch.device("cpu")
    if train.vmappable(net):
        params, _ = stack_module_state([net])
        params = {k: v.requires_grad_(True) for k, v in params.items()}
        f = stacked.forward(net)
        logits = lambda: f(params, x[None])[0]
        opt = torch.optim.SGD(params.values(), lr=1e-3)
    else:
        if precision != "float32":
            net = net.to(memory_format=torch.channels_last)
        logits = lambda: net(x)
        opt = torch.optim.SGD(net.parameters(), lr=1e-3)

    def step():
        with autocast(dev, precision):
            out = logits()
        opt.zero_grad()
        F.cross_entropy(out.float(), y).backward()
        opt.step()

    step()                                                                     # warm-up
    with FlopCounterMode(display=False) as counter:
        step()
    return timed(step, repeats)[0], counter.get_total_flops()


def agreement(arch, n, ks):
    """Leading-k overlaps of the bfloat16 estimates (eager, compiled) with the float32 one on the same
    `n` networks, and of two disjoint float32 estimates of `n // 2` networks each (the Monte-Carlo floor)."""
    S = nads.EstimateSettings
    fp32 = nads.estimate(arch, S(num_networks=n), progress=False)
    bf16 = nads.estimate(arch, S(precision="bfloat16", num_networks=n), progress=False)
    compiled = nads.estimate(arch, S(precision="bfloat16", compiled=True, num_networks=n), progress=False)
    half_a = nads.estimate(arch, S(num_networks=n // 2), progress=False)
    half_b = nads.estimate(arch, S(num_networks=n // 2, first=n // 2), progress=False)
    return nads.compare(fp32, bf16, ks), nads.compare(fp32, compiled, ks), nads.compare(half_a, half_b, ks)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=["vgg11", "resnet18"])
    ap.add_argument("--networks", type=int, default=4, help="networks per timing (>= 2)")
    ap.add_argument("--repeats", type=int, default=1, help="best of this many timings")
    ap.add_argument("--cosine-networks", type=int, default=4, help="networks of the bfloat16 vs float32 cosines")
    ap.add_argument("--agreement-arch", default="lenet")
    ap.add_argument("--agreement-networks", type=int, default=1000, help="0: no agreement run")
    ap.add_argument("--train", action="store_true", help="also time one training step on a batch of 128")
    ap.add_argument("--write-rates", action="store_true",
                    help="write the measured costs into nadcore's rates file (what `nadcore plan` prices with)")
    args = ap.parse_args(argv)
    mm = {t: peak_gflops(t) for t in (torch.float32, torch.bfloat16)}
    conv = {t: conv_peak_gflops(t) for t in (torch.float32, torch.bfloat16)}
    p32, p16 = (max(mm[t], conv[t]) for t in (torch.float32, torch.bfloat16))   # the fractions' peaks
    print(f"threads={torch.get_num_threads()} networks={args.networks}; measured peaks (GFLOP/s): matmul float32 "
          f"{mm[torch.float32]:.0f}, bfloat16 {mm[torch.bfloat16]:.0f}; 3x3 conv (direct-convolution FLOPs) float32 "
          f"{conv[torch.float32]:.0f}, bfloat16 {conv[torch.bfloat16]:.0f}")
    measured = {}
    for arch in args.arch:
        gflop = secant_gflop(arch)
        S = nads.EstimateSettings
        nads.estimate(arch, S("autograd", num_networks=2), progress=False)              # warm-up (imports, kernels)
        nads.estimate(arch, S(precision="bfloat16", compiled=True, num_networks=2), progress=False)   # compiles
        rows = {}
        for label, kw, peak in (("secant float32", {}, p32), ("secant bfloat16", {"precision": "bfloat16"}, p16),
                                ("secant bf16 compiled", {"precision": "bfloat16", "compiled": True}, p16),
                                ("autograd float32", {"method": "autograd"}, p32)):
            # batch_size = networks: a batch is padded with copies up to its size (16 x the work for 2 of 32)
            s = S(batch_size=args.networks, num_networks=args.networks, **kw)
            seconds, _ = timed(lambda a=arch, s=s: nads.estimate(a, s, progress=False), args.repeats)
            rows[label] = seconds / args.networks
            rate = gflop / rows[label] if label.startswith("secant") else None
            frac = f"{rate:6.0f} GFLOP/s = {rate / peak:4.0%} of the {peak:.0f} GFLOP/s peak" if rate else ""
            print(f"{arch:<11} {label:<20} {1 / rows[label]:7.3f} networks/s ({rows[label]:.3g} s each)  ratio to "
                  f"secant float32 {rows['secant float32'] / rows[label]:5.2f}x  {frac}", flush=True)
        measured |= {("nad_s", f"{arch}/secant"): rows["secant float32"], ("nad_s", f"{arch}/autograd"):
                     rows["autograd float32"], ("nad_s_bfloat16", arch): rows["secant bfloat16"],
                     ("nad_s_compiled", arch): rows["secant bf16 compiled"]}
        cos = gradient_cosines(arch, args.cosine_networks)
        print(f"{arch:<11} bfloat16 vs float32 secant gradient, cosine per network: eager min {cos[:, 0].min():.4f}, "
              f"mean {cos[:, 0].mean():.4f}; compiled min {cos[:, 1].min():.4f}, mean {cos[:, 1].mean():.4f} "
              f"({gflop:.0f} GFLOP per network)", flush=True)
        if args.train:
            (t32, flops), (t16, _) = (train_step(arch, repeats=args.repeats, precision=p)
                                      for p in ("float32", "bfloat16"))
            print(f"{arch:<11} training step, batch 128: float32 {t32:.3f} s ({t32 / 128:.2e} s per sample, "
                  f"{flops / t32 / 1e9:.0f} GFLOP/s = {flops / t32 / 1e9 / p32:.0%} of peak); bfloat16 {t16:.3f} s "
                  f"({flops / t16 / 1e9:.0f} GFLOP/s = {flops / t16 / 1e9 / p16:.0%} of peak); ratio {t32 / t16:.2f}x",
                  flush=True)
            if arch not in ("logreg", "mlp", "lenet"):   # theirs come from whole sweeps (rates.json's sources)
                measured[("train_s", arch)] = 0.3 * t32 / 128   # per sample and epoch: a fifth more for evaluation
    if args.write_rates:
        rates.write(measured, f"benchmarks/nad_throughput.py, {args.networks} networks, "
                              f"{torch.get_num_threads()} threads")
    if args.agreement_networks < 2:
        return
    ks = [1, 4, 16, 64, 128, 256]
    eager, compiled, floor = agreement(args.agreement_arch, args.agreement_networks, ks)
    print(f"{args.agreement_arch}, {args.agreement_networks} networks: overlap of leading-k NADs with the float32 "
          "estimate (same networks), bfloat16 eager | bfloat16 compiled | two float32 halves (floor)")
    for k, a, c, b in zip(ks, eager, compiled, floor):
        print(f"  k = {k:<4} {a:.4f} | {c:.4f} | {b:.4f}")


if __name__ == "__main__":
    main()
