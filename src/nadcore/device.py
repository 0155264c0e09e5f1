"""One place that turns the `device` parameter of every chapter into a `torch.device`, and the
`precision` parameter (training, secant NADs) into an autocast context."""

import contextlib

import torch

ACCEPTED = '"auto", "cpu", "cuda", "cuda:N" or "mps"'


def resolve(device="auto") -> torch.device:
    """Return the torch device for `device`; "auto" picks CUDA, then MPS, then the CPU."""
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise ValueError(f"device must be {ACCEPTED}, got {device!r}")
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ValueError(f"device must be {ACCEPTED}, got {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} is not available here (no CUDA GPU); use \"cpu\" or \"auto\"")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"device {device!r} is not available here (no MPS); use \"cpu\" or \"auto\"")
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be {ACCEPTED}, got {device!r}")
    return dev


PRECISIONS = ("float32", "bfloat16")


def check_precision(precision):
    """Raise a one-line ValueError unless `precision` is one of `PRECISIONS`."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")


def autocast(dev, precision="float32"):
    """bfloat16 autocast on `dev` (a `torch.device`) for `precision="bfloat16"`, nothing for float32."""
    check_precision(precision)
    if precision == "float32":
        return contextlib.nullcontext()
    return torch.autocast(dev.type, dtype=torch.bfloat16)
