"""One place that turns the `device` parameter of every chapter into a `torch.device`, the
`precision` parameter (training, secant NADs) into an autocast context, and the CPU's allocator
into one that keeps large tensors' memory for the next network (`kept_memory`)."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading

import torch

from nadcore.checks import InputError, check_precision

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



def autocast(dev: torch.device, precision: str = "float32") -> contextlib.AbstractContextManager:
    """bfloat16 autocast on `dev` (a `torch.device`) for `precision="bfloat16"`, nothing for float32."""
    check_precision(precision)
    if precision == "float32":
        return contextlib.nullcontext()
    return torch.autocast(dev.type, dtype=torch.bfloat16)


# glibc's mallopt parameters and the values `kept_memory` leaves behind: the steady state of glibc's own
# dynamic policy once a tensor of 32 MiB or more has been freed (the mmap threshold at its 32 MiB ceiling,
# trimming above twice that), mmap allowed again
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4
_AFTER = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 64 << 20, _M_MMAP_MAX: 65536}
_KEPT_LOCK = threading.Lock()
_KEPT = [0]   # how many `kept_memory` blocks are open


@functools.cache
def _glibc():
    """The C library when it is glibc (its `mallopt` and `malloc_trim`), else None (macOS, musl)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if all(hasattr(libc, f) for f in ("gnu_get_libc_version", "mallopt", "malloc_trim")) else None


@contextlib.contextmanager
def kept_memory():
    """Within the block, freed CPU memory stays with the process for the next allocations: glibc serves
    no allocation by mmap and does not trim its heap, so the large tensors that every network's forward
    pass allocates anew (VGG-11's secant: maps of 134 MB) reuse their predecessors' memory instead of
    being faulted in page by page each time: a quarter to a third of that secant's time on a 2-core CPU
    (`benchmarks/nad_peers.py` counts the faults), its peak memory 10-30 % higher. A freed block serves
    any later allocation it holds; the same size alone need not fit (glibc's aligned allocations take a
    little more), so a forward pass settles after its first one or two networks. On leaving the
    outermost block the heap is trimmed (the memory goes back) and glibc keeps fixed thresholds
    (`_AFTER`: where its dynamic ones end up in a process that frees large tensors). Nothing changes
    what is computed; a no-op without glibc."""
    libc = _glibc()
    with _KEPT_LOCK:
        _KEPT[0] += 1
        if libc is not None and _KEPT[0] == 1:
            libc.mallopt(_M_MMAP_MAX, 0)
            libc.mallopt(_M_TRIM_THRESHOLD, 2 ** 31 - 1)
    try:
        yield
    finally:
        with _KEPT_LOCK:
            _KEPT[0] -= 1
            if libc is not None and _KEPT[0] == 0:
                for param, value in _AFTER.items():
                    libc.mallopt(param, value)
                libc.malloc_trim(0)
