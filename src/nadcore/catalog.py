"""What `nadcore` computes, named and priced without importing torch.

The command line checks a command's values against these before torch loads (`nadcore nads`:
seconds to import torch, a minute on a loaded machine), so a mistake costs a second. The library
reads the same names (`models.names()` is `ARCHS`, in its order; `nads.METHODS`, `nads.MAX_BATCH`;
`plan`'s costs); tests/test_cli.py holds them equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

# models.REGISTRY's keys, in its order
ARCHS = ("logreg", "mlp", "lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121", "vit", "mixer", "convnext",
         "resnet18_blur")
NAD_METHODS = ("secant", "autograd", "hessian")
MAX_BATCH = 1024   # networks evaluated at once (a batch is padded with copies to this size)
# The most networks of one NAD estimate: its chunk list (~1 KB a chunk of 125 networks) stays under
# ~100 MB; the paper's estimates use 10,000.
MAX_NETWORKS = 10 ** 7
# The largest input of a NAD estimate: D = C x H x W entries, whose D x D float64 covariance (and eigenvectors)
# stay at 2 GiB each; the paper's is 1,024 (1 x 32 x 32), a 3 x 64 x 64 input 12,288.
MAX_INPUT = 16_384
MAX_SEEDS = 1000   # seeds per cell of a sweep (`num_seeds`; the paper's: 1)
# `nadcore nads` without --yes: at most this many networks for an (architecture, method) whose cost
# is not measured (twice the paper's 10,000)
UNPRICED_NETWORKS = 20_000

# `plan`'s unit costs: seconds on the 2-core CPU of the book's builds, each with its date and how it was
# measured, in artifacts/rates.json (`benchmarks/nad_throughput.py --write-rates` rewrites what it measures).
# Training: `plan.train_cost` is TRAIN_S x samples x epochs x 2; NADs: seconds per network.
RATES_FILE = Path(__file__).resolve().parent / "artifacts" / "rates.json"


class Rates(NamedTuple):
    """The measured rates of the rates file: seconds per training sample and epoch, per network of a NAD estimate."""
    train_s: dict[str, float]                    # {arch: s}
    nad_s: dict[tuple[str, ...], float]          # {(arch, method): s}
    nad_s_bfloat16: dict[str, float]             # {arch: s}, the secant in bfloat16
    nad_s_compiled: dict[str, float]             # {arch: s}, the secant through torch.compile
    train_gflop: dict[str, tuple[float, float]]  # {arch: (GFLOP of a sample's SGD step, of an evaluated image)}


def load_rates(path: str | Path | None = None) -> Rates:
    """The `Rates` of the rates file (default `RATES_FILE`)."""
    tables = json.loads(Path(path or RATES_FILE).read_text())
    seconds = lambda name: {k: float(v["s"]) for k, v in tables[name].items()}
    nad = {tuple(k.split("/")): v for k, v in seconds("nad_s").items()}
    flops = {k: (float(v["step"]), float(v["image"])) for k, v in tables.get("train_gflop", {}).items()}
    return Rates(seconds("train_s"), nad, seconds("nad_s_bfloat16"), seconds("nad_s_compiled"), flops)


TRAIN_S, NAD_S, NAD_S_BFLOAT16, NAD_S_COMPILED, TRAIN_GFLOP = load_rates()
