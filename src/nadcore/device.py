"""One place that turns the `device` parameter of every chapter into a `torch.device`, and the
`precision` parameter (training, secant NADs) into an autocast context."""

from __future__ import annotations

import contextlib

import torch

from nadcore.checks import InputError, one_of

ACCEPTED = '"auto", "cpu", "cuda", "cuda:N" or "mps"'


class DeviceUnavailable(InputError):
    """A `device` this machine does not have: `missing` says what it lacks ("no CUDA GPU", "no MPS")."""

    def __init__(self, device: str | torch.device, missing: str) -> None:
        super().__init__(f"device {device!r} is not available here ({missing}); use \"cpu\" or \"auto\"")
        self.missing = missing


def resolve(device: str | torch.device = "auto") -> torch.device:
    """Return the torch device for `device`; "auto" picks CUDA, then MPS, then the CPU (on CUDA,
    with `exact_cuda`'s settings)."""
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise InputError(f"device must be {ACCEPTED}, got {device!r}")
    if device == "auto":
        if torch.cuda.is_available():
            exact_cuda()
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise InputError(f"device must be {ACCEPTED}, got {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise DeviceUnavailable(device, "no CUDA GPU")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise DeviceUnavailable(device, "no MPS")
    if dev.type not in ("cpu", "cuda", "mps"):
        raise InputError(f"device must be {ACCEPTED}, got {device!r}")
    if dev.type == "cuda":
        exact_cuda()
    return dev


def exact_cuda() -> None:
    """float32 on CUDA as on the CPU: no TensorFloat-32 in convolutions (cuDNN's default) or matrix
    products, and cuDNN's deterministic algorithms (the same numbers on the same GPU). Every stored
    float32 result says float32; `precision="bfloat16"` is the library's one lower precision."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


PRECISIONS = ("float32", "bfloat16")


def check_precision(precision: str) -> None:
    """Raise a one-line ValueError unless `precision` is one of `PRECISIONS`."""
    one_of("precision", precision, PRECISIONS, accepted=f"one of {', '.join(PRECISIONS)}")


def autocast(dev: torch.device, precision: str = "float32") -> contextlib.AbstractContextManager:
    """bfloat16 autocast on `dev` (a `torch.device`) for `precision="bfloat16"`, nothing for float32."""
    check_precision(precision)
    if precision == "float32":
        return contextlib.nullcontext()
    return torch.autocast(dev.type, dtype=torch.bfloat16)
