"""One way to derive seeds: a seed from a run's seed and the parts that name one item of it.

A cell of a sweep, a network of a NAD estimate or a NAD index of Fig. 6 gets
`derive(seed, *parts)`, so its numbers depend on what it is, never on which other items
were computed beside it, in which order or in which shard.
"""

import numpy as np


def derive(seed, *parts):
    """A 31-bit seed that depends only on `seed` and the integers `parts` (numpy's SeedSequence)."""
    return int(np.random.SeedSequence([int(seed), *(int(p) for p in parts)]).generate_state(1)[0] % 2 ** 31)
