"""Seeds: every item of a run gets a seed from the run's seed and the parts that name the item.

A cell of a sweep, a network of a NAD estimate or a NAD index of Fig. 6 gets
`derive(seed, *parts)`, so its numbers depend on what it is, never on which other items
were computed beside it, in which order or in which shard. New code uses `derive`.

`grid_cell` is Chapter 1's older scheme for a Fourier cell, kept because the stored Figs. 1-3
cells (hours of CPU in the results bundle) were computed with it. Within one item, the data,
network and shuffling seeds are small offsets of the item's seed (e.g. `2 * cell + k`); they
too are part of what the stored numbers are.
"""

import numpy as np


def derive(seed, *parts, bits=31):
    """A `bits`-bit seed that depends only on `seed` and the integers `parts` (numpy's SeedSequence).
    `bits=32` keeps the whole word (the NAD estimate's networks, `nads.network_seed`)."""
    word = int(np.random.SeedSequence([int(seed), *(int(p) for p in parts)]).generate_state(1)[0])
    return word % 2 ** bits


def grid_cell(seed, kx, ky, size=32):
    """The seed of the Fourier cell `(kx, ky)` of a `size` x `size` grid in Chapter 1's sweeps: distinct
    for every cell of one run."""
    return int(seed) * size * size + (ky % size) * size + (kx % size)
