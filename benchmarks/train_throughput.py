"""Batched training (`nadcore.train.fit_many`) against training the same networks one after another.

Both train the same freshly initialised networks on the same D(v) datasets (one Fourier
direction per network), same epochs, same seeds, in this one process, and print networks/s of
each and their ratio, plus the largest difference in test accuracy between the two (the same
recipe: float rounding only). The two alternate `--repeats` times and the best run of each
counts, so a slow spell of a shared machine does not decide the ratio. The defaults are the
smoke scale of Chapter 1 (3,000 samples, 4 epochs).

    .venv/bin/python benchmarks/train_throughput.py --arch lenet --networks 16
    .venv/bin/python benchmarks/train_throughput.py --arch logreg --networks 32
"""

import argparse
import copy

import torch
from timing import timed

from nadcore import data, fourier, models, train
from nadcore.device import resolve


def datasets(networks, n, device):
    """One D(v) train/test pair per network, v the sine (or cosine, at self-conjugate frequencies)
    direction (kx, ky) of a walk on the grid."""
    out = []
    for i in range(networks):
        kx, ky = i % 16 - 8, (3 * i) % 16 - 8
        v = fourier.fourier_direction(kx, ky, kind="cos" if fourier.is_self_conjugate(kx, ky) else "sin")
        out.append((data.directional_dataset(v, n, 3.0, 1.0, seed=2 * i, device=device),
                    data.directional_dataset(v, n, 3.0, 1.0, seed=2 * i + 1, device=device)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="lenet", choices=models.names())
    parser.add_argument("--networks", type=int, default=16)
    parser.add_argument("--n", type=int, default=3000, help="training samples per network (even)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--max-lr", type=float, default=0.5)
    parser.add_argument("--chunk", type=int, default=None, help="networks stacked at a time (default: automatic)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each; the best counts")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = resolve(args.device)
    sets = datasets(args.networks, args.n, device)
    torch.manual_seed(0)
    nets = [models.build(args.arch) for _ in range(args.networks)]
    recipe, on = train.Recipe(epochs=args.epochs, max_lr=args.max_lr), dict(device=device)

    warm = [copy.deepcopy(nets[0]) for _ in range(2)]  # first-call costs (imports, kernel selection)
    small = [((x[:256], y[:256]), t) for (x, y), t in sets[:2]]
    train.fit(warm[0], small[0], recipe, **on)
    train.fit_many(warm, small, recipe, **on)

    def one_by_one():  # fresh copies each run: both train the same initial networks in place
        return [train.fit(copy.deepcopy(m), d, recipe, seed=i, **on) for i, (m, d) in enumerate(zip(nets, sets))]

    def batched():
        return train.fit_many([copy.deepcopy(m) for m in nets], sets, recipe, seeds=range(len(nets)), chunk=args.chunk,
                              **on)

    t_seq, t_bat = float("inf"), float("inf")
    for _ in range(args.repeats):  # alternate, so slow spells of a shared machine hit both
        t, ref = timed(one_by_one)
        t_seq = min(t_seq, t)
        t, out = timed(batched)
        t_bat = min(t_bat, t)

    diff = max(abs(a.test_acc - b.test_acc) for a, b in zip(ref, out))
    print(f"{args.arch} on {device} ({torch.get_num_threads()} threads): {args.networks} networks, "
          f"n={args.n}, {args.epochs} epoch(s), {ref[0].iterations} iterations each, best of {args.repeats}")
    print(f"  one after another: {args.networks / t_seq:8.3f} networks/s ({t_seq:.1f} s)")
    print(f"  batched          : {args.networks / t_bat:8.3f} networks/s ({t_bat:.1f} s)")
    print(f"  ratio            : {t_seq / t_bat:8.2f}x   (max |test acc difference| {diff:.2f} points)")


if __name__ == "__main__":
    main()
