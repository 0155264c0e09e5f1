"""Seeds: every item of a run gets its seeds from the run's seed and the parts that name the item.

A cell of a sweep, a network of a NAD estimate or a NAD index of Fig. 6 gets
`derive(seed, *parts)`, so its numbers depend on what it is, never on which other items
were computed beside it, in which order or in which shard. An item that trains a network
draws four independent streams, `streams(seed, *parts)`: its training data, its test data,
its network's initialisation and its shuffling, each `derive(seed, *parts, role)`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nadcore import checks
from nadcore.checks import InputError

TRAIN, TEST, INIT, SHUFFLE = range(4)   # the role (last part) of each stream of `streams`
MAX_SEED = 2 ** 63 - 1                  # torch.manual_seed and the int64 kernels take no larger seed


def check_seed(seed: object, name: str = "seed") -> int:
    """`seed` as an int; a ValueError naming `name` unless it is an integer in [0, 2^63)."""
    return checks.integer(name, seed, 0, MAX_SEED, accepted="an integer in [0, 2^63)")


def derive(seed: int, *parts: int, bits: int = 31) -> int:
    """A `bits`-bit seed that depends only on `seed` and the integers `parts` (numpy's SeedSequence).
    `bits=32` keeps the whole word (the NAD estimate's networks, `nads.network_seed`)."""
    check_seed(seed)
    word = int(np.random.SeedSequence([int(seed), *(int(p) for p in parts)]).generate_state(1)[0])
    return word % 2 ** bits


class Streams(NamedTuple):
    """The seeds of one trained item: `train` and `test` data, network `init`, `shuffle` order."""

    train: int
    test: int
    init: int
    shuffle: int


def streams(seed: int, *parts: int) -> Streams:
    """The four seeds of the item `parts` of the run `seed`: `derive(seed, *parts, role)` for the
    roles TRAIN, TEST, INIT, SHUFFLE."""
    return Streams(*(derive(seed, *parts, role) for role in (TRAIN, TEST, INIT, SHUFFLE)))


REPLICATE = 7919   # the part that marks a replicate's seed (any fixed integer no other caller uses first)


def replicate(seed: int, r: int) -> int:
    """The seed of replicate `r` of a run with seed `seed`: `seed` itself for r = 0 (so a run's first
    replicate is the run as stored before replicates existed), else `derive(seed, REPLICATE, r)`."""
    check_seed(seed)
    if not (checks.is_integer(r) and r >= 0):
        raise InputError(f"r (the replicate) must be an integer >= 0; got {r!r}")
    return int(seed) if r == 0 else derive(seed, REPLICATE, int(r))
