"""Networks per second of `nadcore.nads.estimate` against a straightforward baseline, in one run.

Baselines: one network at a time; the secant evaluates the 2D probes of a network in one batch,
autograd does one backward per network; both accumulate the same float64 covariance. The same
networks (seeds) are used, so the script also checks that the two covariances agree.

    .venv/bin/python benchmarks/nad_throughput.py --arch lenet resnet18 --networks 8 --device cpu
"""

import argparse

import numpy as np
import torch
from timing import timed

from nadcore import nads
from nadcore.device import resolve


def baseline(arch, num_networks, method, device, seed=0, step=100.0):
    """The straightforward estimator; returns the covariance (float64, CPU) after the same
    eigendecomposition `estimate` ends with."""
    dev = resolve(device)
    factory, _ = nads._factory(arch, (1, 32, 32))
    x0 = nads.eval_point_for(seed, (1, 32, 32)).to(dev)
    moments = nads.Moments(x0.numel(), dev)
    for i in range(num_networks):
        net = nads._network(factory, seed, i, dev)
        if method == "secant":
            with torch.no_grad():
                out = net(nads.probes(x0, step)).reshape(-1)
            g = (out[:1024] - out[1024:]) / (2 * step)
        else:
            x = x0[None].clone().requires_grad_(True)
            net(x).sum().backward()
            g = x.grad.reshape(-1)
        moments.add(g[None])
    cov = moments.covariance().cpu()
    nads.eig_decreasing(cov)
    return cov


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=["lenet", "resnet18"])
    ap.add_argument("--methods", nargs="+", default=["secant", "autograd"], choices=["secant", "autograd"])
    ap.add_argument("--networks", type=int, default=16, help="networks per timing (>= 2)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-size", type=int, default=None, help="networks per batch of estimate()")
    ap.add_argument("--repeats", type=int, default=2, help="best of this many timings")
    args = ap.parse_args(argv)
    print(f"device={resolve(args.device)} threads={torch.get_num_threads()} networks={args.networks}")
    for arch in args.arch:
        for method in args.methods:
            kw = dict(method=method, device=args.device, batch_size=args.batch_size, progress=False)
            nads.estimate(arch, 2, **kw)  # warm-up (imports, kernel selection)
            t_base, cov = timed(lambda a=arch, m=method: baseline(a, args.networks, m, args.device), args.repeats)
            t_ours, res = timed(lambda a=arch, kw=kw: nads.estimate(a, args.networks, **kw), args.repeats)
            ours = torch.from_numpy((res.nads.T.astype(np.float64) * res.eigenvalues) @ res.nads.astype(np.float64))
            err = float((ours - cov).norm() / cov.norm())
            print(f"{arch:<9} {method:<8} baseline {args.networks / t_base:8.2f} net/s   estimate "
                  f"{args.networks / t_ours:8.2f} net/s   ratio {t_base / t_ours:5.2f}x   "
                  f"rel. diff of covariances {err:.1e}")


if __name__ == "__main__":
    main()
