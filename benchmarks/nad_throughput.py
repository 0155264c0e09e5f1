"""NAD estimates: networks per second, GFLOP/s as a fraction of a peak measured in this run, and
the ratio of each estimator to the float32 secant (the reference), all in one process.

For every architecture: the float32 secant (reference), the bfloat16 secant (channels-last,
autocast) and the exact gradient, on the same networks. The secant's FLOPs are counted by
`torch.utils.flop_counter` on one network's 2D probes; the peaks are the best of a few large
matrix products in float32 and bfloat16, measured here. Then how much bfloat16 moves the
NADs: the cosine of each network's bfloat16 secant gradient with its float32 one, and, for
`--agreement-arch` at `--agreement-networks`, the overlap of the leading-k subspaces of the two
estimates from the same networks beside that of two disjoint float32 halves (the Monte-Carlo floor).

    .venv/bin/python benchmarks/nad_throughput.py --arch vgg11 resnet18 --networks 4
"""

import argparse
import time

import numpy as np
import torch
from timing import timed
from torch.utils.flop_counter import FlopCounterMode

from nadcore import nads


def peak_gflops(dtype, size=2048, repeats=5):
    """The best GFLOP/s of `size`-square matrix products in `dtype` on the CPU."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    a @ b
    best = min(_seconds(lambda: a @ b) for _ in range(repeats))
    return 2 * size ** 3 / best / 1e9


def _seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def secant_gflop(arch):
    """GFLOP of one network's secant: its forward pass on the 2D probes."""
    factory, _ = nads._factory(arch, (1, 32, 32))
    net = nads._network(factory, 0, 0, torch.device("cpu"))
    x0 = nads.eval_point_for(0, (1, 32, 32))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        net(nads.probes(x0, 100.0))
    return counter.get_total_flops() / 1e9


def gradient_cosines(arch, count):
    """Cosine of each of `count` networks' bfloat16 secant gradient with its float32 one."""
    factory, _ = nads._factory(arch, (1, 32, 32))
    x0 = nads.eval_point_for(0, (1, 32, 32))
    out = []
    for i in range(count):
        net = nads._network(factory, 0, i, torch.device("cpu"))
        layer = nads.first_linear_layer(net, x0)
        g32 = nads.secant_gradient(net, x0, 100.0, layer)
        g16 = nads.secant_gradient(net.to(memory_format=torch.channels_last), x0, 100.0, layer, "bfloat16")
        out.append(float(torch.nn.functional.cosine_similarity(g32, g16, dim=0)))
    return np.array(out)


def agreement(arch, n, ks):
    """Leading-k overlaps of bfloat16 vs float32 estimates on the same `n` networks, and of two
    disjoint float32 estimates of `n // 2` networks each (the Monte-Carlo floor)."""
    fp32 = nads.estimate(arch, n, progress=False)
    bf16 = nads.estimate(arch, n, precision="bfloat16", progress=False)
    half_a = nads.estimate(arch, n // 2, progress=False)
    half_b = nads.estimate(arch, n // 2, first=n // 2, progress=False)
    return nads.compare(fp32, bf16, ks), nads.compare(half_a, half_b, ks)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=["vgg11", "resnet18"])
    ap.add_argument("--networks", type=int, default=4, help="networks per timing (>= 2)")
    ap.add_argument("--repeats", type=int, default=1, help="best of this many timings")
    ap.add_argument("--agreement-arch", default="lenet")
    ap.add_argument("--agreement-networks", type=int, default=1000)
    args = ap.parse_args(argv)
    p32, p16 = peak_gflops(torch.float32), peak_gflops(torch.bfloat16)
    print(f"threads={torch.get_num_threads()} networks={args.networks}; measured peaks: float32 {p32:.0f} GFLOP/s, "
          f"bfloat16 {p16:.0f} GFLOP/s")
    for arch in args.arch:
        gflop = secant_gflop(arch)
        nads.estimate(arch, 2, progress=False)                                 # warm-up
        rows = {}
        for label, kw, peak in (("secant float32", {}, p32), ("secant bfloat16", {"precision": "bfloat16"}, p16),
                                ("autograd float32", {"method": "autograd"}, p32)):
            seconds, _ = timed(lambda a=arch, kw=kw: nads.estimate(a, args.networks, progress=False, **kw),
                               args.repeats)
            rows[label] = seconds / args.networks
            rate = gflop / rows[label] if label.startswith("secant") else None
            frac = f"{rate:6.0f} GFLOP/s = {rate / peak:4.0%} of the {peak:.0f} GFLOP/s peak" if rate else ""
            print(f"{arch:<11} {label:<17} {1 / rows[label]:7.3f} networks/s  ratio to secant float32 "
                  f"{rows['secant float32'] / rows[label]:5.2f}x  {frac}")
        cos = gradient_cosines(arch, min(args.networks, 4))
        print(f"{arch:<11} bfloat16 vs float32 secant gradient, cosine per network: min {cos.min():.4f}, "
              f"mean {cos.mean():.4f} ({gflop:.0f} GFLOP per network)")
    ks = [1, 4, 16, 64, 128, 256]
    ours, floor = agreement(args.agreement_arch, args.agreement_networks, ks)
    print(f"{args.agreement_arch}, {args.agreement_networks} networks: overlap of leading-k NADs, bfloat16 vs float32 "
          "(same networks) | two float32 halves (floor)")
    for k, a, b in zip(ks, ours, floor):
        print(f"  k = {k:<4} {a:.4f} | {b:.4f}")


if __name__ == "__main__":
    main()
