"""The cost of batch-invariant stacks: `fit_many` with every stack padded to its chunk size
(`pad=True`, the default since stored cells must not depend on their batch) against unpadded
stacks (`pad=False`, the trainer before), same networks and data, in this one process.

Two cases: a sweep-sized batch (`--networks`, e.g. the 32 cells `ch1_fourier.sweep_directions`
hands over at a time: 6 LeNets per stack, the last padded from 2 to 6), and one cell
recomputed alone (padded from 1 to a full stack). Runs alternate; the best of `--repeats` counts.

    .venv/bin/python benchmarks/batch_invariance.py --arch lenet --networks 32
"""

import argparse
import copy

import torch
from timing import timed
from train_throughput import datasets

from nadcore import models, stacked, train
from nadcore.device import resolve


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="lenet", choices=models.names())
    parser.add_argument("--networks", type=int, default=32)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    device = resolve(args.device)
    sets = datasets(args.networks, args.n, device)
    torch.manual_seed(0)
    nets = [models.build(args.arch) for _ in range(args.networks)]
    recipe = train.Recipe(epochs=args.epochs, max_lr=0.5)
    chunk = stacked.chunk_size(nets[0], (1, 32, 32), 128, device)
    print(f"{args.arch} on {device} ({torch.get_num_threads()} threads): stacks of {chunk}, n={args.n}, "
          f"{args.epochs} epoch(s), best of {args.repeats}")
    for label, count in ((f"{args.networks} networks", args.networks), ("1 network alone", 1)):
        def run(pad, count=count):
            return train.fit_many([copy.deepcopy(m) for m in nets[:count]], sets[:count], recipe,
                                  device=device, seeds=range(count), pad=pad)
        best = {True: float("inf"), False: float("inf")}
        for _ in range(args.repeats):
            for pad in (False, True):
                best[pad] = min(best[pad], timed(lambda run=run, pad=pad: run(pad))[0])
        print(f"  {label:<16}: unpadded {best[False]:6.1f} s, padded {best[True]:6.1f} s, "
              f"cost {best[True] / best[False]:5.2f}x")


if __name__ == "__main__":
    main()
