"""The SGD recipe of the linearly separable experiments (`Recipe`), torch-free: presets and the command line
check a recipe before torch loads; `train.fit` runs it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from nadcore import checks
from nadcore.checks import InputError, check_precision

SCHEDULES = ("linear", "triangular")
MAX_EPOCHS = 100_000   # a recipe's epochs (the book's longest: 200)


def check_recipe(epochs, max_lr, momentum, weight_decay, batch_size, clip, schedule, precision="float32"):
    checks.integer("epochs", epochs, 1, MAX_EPOCHS)
    checks.integer("batch_size", batch_size, 1)
    for name, value in (("max_lr", max_lr), ("momentum", momentum), ("weight_decay", weight_decay)):
        checks.number(name, value, 0, inclusive=True)
    if max_lr <= 0:
        raise InputError(f"max_lr must be > 0; got {max_lr!r}")
    if clip is not None:
        checks.number("clip", clip, 0, accepted="a number > 0 or None (no clipping)")
    checks.one_of("schedule", schedule, SCHEDULES)
    check_precision(precision)


@dataclass(frozen=True)
class Recipe:
    """The SGD recipe of `fit` and `fit_many`, checked once when made. Defaults are the NAD paper's:
    learning rate decaying linearly from `max_lr` to 0, gradient-norm clipping at 0.5 (`clip=None`:
    none), batches of 128, raw inputs (`normalize=True` standardises each channel with the
    training set's statistics). `schedule="triangular"` is the follow-up paper's cycle.
    `precision="bfloat16"` trains and evaluates under bfloat16 autocast (the weights and the SGD
    update stay float32; a network with convolutions in channels-last memory)."""
    epochs: int
    max_lr: float
    momentum: float = 0.0
    weight_decay: float = 0.0
    batch_size: int = 128
    clip: float | None = 0.5
    schedule: str = "linear"
    normalize: bool = False
    precision: str = "float32"

    def __post_init__(self):
        if not isinstance(self.normalize, bool):
            raise InputError(f"normalize must be True or False; got {self.normalize!r}")
        check_recipe(self.epochs, self.max_lr, self.momentum, self.weight_decay, self.batch_size, self.clip,
                      self.schedule, self.precision)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], arch: str | None = None, strict: bool = False) -> Recipe:
        """The recipe held by `settings` (a preset or the settings of a sweep): its keys that name
        a field, a value given as `{arch: value}` read for `arch`. `strict`: no other keys allowed."""
        names = [f.name for f in fields(cls)]
        if strict and (unknown := sorted(set(settings) - set(names))):
            raise ValueError(f"recipe keys must be among {', '.join(names)}; got unknown {', '.join(unknown)}")
        if missing := [k for k in ("epochs", "max_lr") if k not in settings]:
            raise InputError(f"recipe must give {' and '.join(missing)}; got keys {', '.join(map(str, settings))}")
        kw = {}
        for k in names:
            if k in settings:
                value = settings[k]
                if isinstance(value, dict):
                    if arch not in value:
                        raise ValueError(f"recipe {k} is given by architecture ({', '.join(value)}); "
                                         f"got arch {arch!r}")
                    value = value[arch]
                kw[k] = value
        return cls(**kw)
