"""The synthetic distributions of the papers: D(v) and the channel concatenation D(v1) (+) D(v2).

A sample of D(v) is `x = s * (eps / 2) * v + P_perp(sigma * n)` with `s = +1` for label 0 and
`-1` for label 1, `n ~ N(0, I)` and `P_perp` the projection onto the orthogonal complement of
`v` (the authors' implementation; the paper writes `eps * y * v`, classes `2 eps` apart).
"""

from __future__ import annotations

import torch

from nadcore import checks
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.seeds import check_seed

FLOAT32_TINY = float(torch.finfo(torch.float32).tiny)   # below it a noise level or a margin vanishes in float32
UNIT_TOL = 1e-3  # NADs stored in float16 (the results bundle) have norms up to ~3e-4 from 1
FLOAT32_MAX = float(torch.finfo(torch.float32).max)   # the samples are float32


def _check_direction(v):
    try:
        v = torch.as_tensor(v)
    except (TypeError, RuntimeError, ValueError):
        raise InputError(f"v must be a float tensor of shape (C, H, W) or (H, W); got {type(v).__name__} "
                         f"{v!r:.60}") from None
    if v.dim() not in (2, 3) or not v.dtype.is_floating_point or v.numel() == 0:
        raise InputError(f"v must be a float tensor of shape (C, H, W) or (H, W); "
                         f"got shape {tuple(v.shape)} and dtype {v.dtype}")
    if not torch.isfinite(v).all():
        raise InputError("v must hold finite numbers; got NaN or inf entries")
    norm = v.double().norm().item()
    if abs(norm - 1.0) > UNIT_TOL:
        raise InputError(f"v must have unit norm (within {UNIT_TOL}); got norm {norm:.6g}")
    return v if v.dim() == 3 else v.unsqueeze(0)


def _check_positive_even(name, n):
    if not (checks.is_integer(n) and n >= 2 and n % 2 == 0):
        raise InputError(f"{name} must be a positive even int (half the samples per class); got {n!r}")
    return int(n)


def directional_dataset(v: torch.Tensor, n: int, sigma: float, eps: float, seed: int = 0,
                        device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """`n` samples of D(v) as `(x, y)`: x of shape (n, C, H, W) float32, y int64 (labels 0 then 1).

    Drawn in one vectorised call on the CPU from a generator seeded with `seed` (the same samples
    on every device), then moved to `device`; the first half has label 0 (`+eps/2` along v), the
    second label 1 (`-eps/2`). Numbers may be Python's or numpy's; `sigma` and `eps` must keep the
    float32 samples finite (a ValueError naming the one that overflows).
    """
    v = _check_direction(v)
    n = _check_positive_even("n", n)
    checks.allocation("n", n, 4.0 * n * v.numel(), "the float32 samples")
    for name, value, low in (("sigma", sigma, "> 0"), ("eps", eps, ">= 0")):
        checks.number(name, value, 0, inclusive=low == ">= 0")
        if value > FLOAT32_MAX:
            raise InputError(f"{name} must be a finite number {low} in float32 (at most {FLOAT32_MAX:.4g}); "
                             f"got {value!r}")
        if value != 0 and abs(value) < FLOAT32_TINY:   # it would be 0 in the float32 samples
            raise InputError(f"{name} must be {'0 or ' if low == '>= 0' else ''}at least {FLOAT32_TINY:.4g} "
                             f"(float32's smallest normal number); got {value!r}")
    sigma, eps = float(sigma), float(eps)
    dev = resolve(device)
    gen = torch.Generator().manual_seed(check_seed(seed))
    v = v.to("cpu", torch.float32)
    flat = v.reshape(-1)
    noise = sigma * torch.randn((n, flat.numel()), generator=gen)
    noise -= torch.outer(noise @ flat, flat)  # P_perp
    if not torch.isfinite(noise).all():
        raise InputError(f"sigma must be a number > 0 whose noise fits float32 (sigma * N(0, 1) overflows past "
                         f"{FLOAT32_MAX:.4g}); got {sigma!r}")
    y = torch.arange(n) >= n // 2
    s = 1.0 - 2.0 * y.to(torch.float32)
    x = torch.addr(noise, s, flat, alpha=eps / 2)
    if not torch.isfinite(x).all():
        raise InputError(f"eps must be a number >= 0 whose samples fit float32 (eps / 2 * v plus the noise "
                         f"overflows past {FLOAT32_MAX:.4g}); got {eps!r}")
    return x.reshape(n, *v.shape).to(dev), y.long().to(dev)


def concat_channels(first: tuple[torch.Tensor, torch.Tensor],
                    second: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """D1 (+) D2: stack the channels of two datasets `(x, y)` that share the same labels."""
    for name, pair in (("first", first), ("second", second)):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)
                and pair[0].dim() == 4):
            raise InputError(f"{name} must be a dataset (x, y): images x (n, C, H, W) and labels y, as tensors")
    (x1, y1), (x2, y2) = first, second
    if x1.shape[0] != x2.shape[0] or x1.shape[2:] != x2.shape[2:]:
        raise ValueError(f"the two datasets must have the same number and size of images; "
                         f"got {tuple(x1.shape)} and {tuple(x2.shape)}")
    if not torch.equal(y1, y2.to(y1.device)):
        raise ValueError("the two datasets must have the same label vector y (same n and label order)")
    return torch.cat([x1, x2.to(x1.device)], dim=1), y1
