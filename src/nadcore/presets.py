"""Scale presets of every chapter, in one place.

`smoke` runs on a laptop CPU in minutes, `paper` uses the published settings, `medium` sits
between the two. Notebooks call `preset(chapter, scale)` and never hard-code these numbers.
"""

import copy

SCALES = ("smoke", "medium", "paper")

PRESETS = {
    "fourier": {
        "smoke": {},
        "medium": {},
        "paper": {},
    },
    "pooling": {
        "smoke": {},
        "medium": {},
        "paper": {},
    },
    "nads": {
        "smoke": {},
        "medium": {},
        "paper": {},
    },
    "cifar10": {
        "smoke": {},
        "medium": {},
        "paper": {},
    },
    "underspecification": {
        "smoke": {},
        "medium": {},
        "paper": {},
    },
}


def check_scale(scale):
    """Raise a ValueError naming the accepted scales unless `scale` is one of them."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}; got {scale!r}")
    return scale


def preset(chapter, scale):
    """A fresh copy of the settings of `chapter` at `scale`."""
    if chapter not in PRESETS:
        raise ValueError(f"chapter must be one of {', '.join(PRESETS)}; got {chapter!r}")
    check_scale(scale)
    return copy.deepcopy(PRESETS[chapter][scale])
