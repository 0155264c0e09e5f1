"""Real images and NADs (paper Sec. 4.2): CIFAR-10, CPU stand-ins, carriers and NAD flips.

Images live in pixel space: float tensors in [0, 1] of shape (N, 3, 32, 32), labels int64.
The order of operations is the authors': poison (or flip) in pixel space first, then apply
the mean/std normalisation (`normalise`), then train (`experiments.ch4_cifar10.prepare`).

- `load(name, data_root, train, ...)`: "cifar10" through `torchvision.datasets.CIFAR10`, or
  "digits", scikit-learn's bundled 8x8 digits resized to 32x32 and copied to 3 channels (a
  small real dataset with 10 classes for CPU runs), or "fashion", Fashion-MNIST read offline
  from Debian's `dataset-fashion-mnist` through `torchvision.datasets.FashionMNIST` (70,000
  clothing images, 10 classes: a harder stand-in), zero-padded to 32x32 and copied to 3 channels.
- `poison(x, y, nads, index, eps)`: the carrier of Fig. 7; `nad_flip(x, nads)`: Fig. 8's
  rotation `x' = U flip(U^T x)`; `edit_nads`: the reviewers' ask.

The experiments of Chapter 4 are `nadcore.experiments.ch4_cifar10`.
"""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from nadcore import checks
from nadcore.checks import InputError

if TYPE_CHECKING:
    from torchvision.datasets import CIFAR10

    from nadcore.nads import NADResult

SIZE = 32
CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
# the labels 0..9 of Fashion-MNIST's README (github.com/zalandoresearch/fashion-mnist)
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot")
FASHION_DEBIAN = Path("/usr/share/datasets/fashion-mnist")  # Debian's dataset-fashion-mnist (the .gz files)
CLASSES = {"cifar10": CIFAR10_CLASSES, "digits": tuple(str(d) for d in range(10)), "fashion": FASHION_CLASSES}
DATASETS = tuple(CLASSES)
EDIT_MODES = ("remove", "flip", "shift")
MAX_CLASSES = 12  # the carrier rule has 2 NADs x 3 channels x 2 signs


def cifar10_reader(verify: bool = True) -> type[CIFAR10]:
    """torchvision's CIFAR-10 reader; with `verify=False`, one that checks the batch files exist
    instead of their md5, and reads them with `ArraysOnly`, never `pickle.load`.

    CIFAR-10's files are pickles: torchvision unpickles them once their md5 says they are the published
    ones. Files in its on-disk format (`cifar-10-batches-py/data_batch_1..5`, `test_batch`, `batches.meta`)
    that are not (a test fixture, a re-packed copy) load with `verify=False` through an unpickler that
    builds numpy arrays, lists and dicts only, so a file that would run code is refused. The archive a
    download fetches is still checked against its md5. (torchvision is imported here, not at the top: the
    synthetic chapters and `import nadcore.bundle` do without it.)
    """
    from torchvision.datasets import CIFAR10

    if verify:
        return CIFAR10

    class CIFAR10Files(CIFAR10):
        train_list = [[name, None] for name, _ in CIFAR10.train_list]
        test_list = [[name, None] for name, _ in CIFAR10.test_list]
        meta = {**CIFAR10.meta, "md5": None}

        def __init__(self, root, train=True, download=False):   # torchvision's, its pickle.load made safe
            self.root, self.train, self.transform, self.target_transform = root, train, None, None
            if download:
                self.download()
            folder = Path(root) / str(self.base_folder)
            entries = [read_batch(folder / str(name)) for name, _ in (self.train_list if train else self.test_list)]
            for e, (name, _) in zip(entries, self.train_list if train else self.test_list):
                _check_batch(e, folder / str(name))
            self.data = np.vstack([e["data"] for e in entries]).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
            self.targets = [int(t) for e in entries for t in e["labels"]]
            self.classes = read_batch(folder / str(self.meta["filename"]))[str(self.meta["key"])]

    return CIFAR10Files


class ArraysOnly(pickle.Unpickler):
    """An unpickler of CIFAR-10's batch files that builds numpy arrays (and plain dicts, lists, bytes, numbers)
    only: any other class or function a file names is refused, so an unverified file runs no code."""

    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a CIFAR-10 batch file holds numpy arrays only; this one names {module}.{name}")


def _check_batch(entry, path):
    """A ValueError unless a batch holds CIFAR-10's own kinds: `data` uint8 rows of 3,072 and as many integer
    `labels` in 0..9 (an unverified copy could hold floats, NaN, or labels that do not match its images)."""
    data, labels = entry.get("data"), entry.get("labels")
    ok = (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2 and data.shape[1] == 3072
          and isinstance(labels, (list, np.ndarray)) and len(labels) == len(data)
          and all(isinstance(t, (int, np.integer)) and 0 <= t < 10 for t in labels))
    if not ok:
        raise ValueError(f"{path} is no CIFAR-10 batch: it needs uint8 data rows of 3,072 and as many labels in 0..9")


def read_batch(path: str | Path) -> dict[str, Any]:
    """One CIFAR-10 batch file (a Python 2 pickle) through `ArraysOnly`, its keys as text."""
    with open(path, "rb") as f:
        entry = ArraysOnly(f, encoding="latin1").load()
    if not isinstance(entry, dict):
        raise pickle.UnpicklingError(f"a CIFAR-10 batch file holds a dict; {path} holds {type(entry).__name__}")
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in entry.items()}


def classes(name: str) -> tuple[str, ...]:
    """The class names of dataset `name`."""
    _check_name(name)
    return CLASSES[name]


def _check_name(name):
    if name not in DATASETS:
        raise InputError(f"name must be one of {', '.join(DATASETS)}; got {name!r}")


def load(name: str, data_root: str | Path = "../data", train: bool = True, download: bool = False, *, seed: int = 0,
         verify: bool = True, limit: int | None = None,
         test_fraction: float = 0.25) -> tuple[torch.Tensor, torch.Tensor]:
    """`(x, y)`: images in [0, 1] of shape (N, 3, 32, 32) (float32) and int64 labels.

    name: "cifar10" (read from `data_root`, downloaded there when `download=True`; `verify`
    checks the md5 of every file, `verify=False` only that the files exist, see `cifar10_reader`)
    or "digits" (no files; `seed` and `test_fraction` fix the stratified train/test split)
    or "fashion" (60,000 train or 10,000 test images, see `load_fashion`).
    limit: keep the first `limit` images.
    """
    _check_name(name)
    checks.integer("limit", limit, 1, optional=True, accepted="None or a positive int")
    if name == "cifar10":
        x, y = load_cifar10(data_root, train, download, verify=verify)
    elif name == "fashion":
        x, y = load_fashion(data_root, train, download, limit=limit)
    else:
        x, y = load_digits(train, seed=seed, test_fraction=test_fraction)
    return (x, y) if limit is None else (x[:limit], y[:limit])


def load_cifar10(data_root: str | Path = "../data", train: bool = True, download: bool = False,
                 verify: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """CIFAR-10's train (or test) split from `data_root` as `(x, y)`, see `load`."""
    root = Path(data_root)
    reader = cifar10_reader(verify)
    folder = root / reader.base_folder
    files = [n for n, _ in reader.train_list + reader.test_list] + [reader.meta["filename"]]
    missing = [n for n in files if not (folder / n).is_file()]
    if missing and not download:
        raise ValueError(
            f"data_root {str(data_root)!r} holds no CIFAR-10 ({folder} lacks {', '.join(missing)}). "
            f"Pass download=True to fetch it there (170 MB), or extract cifar-10-python.tar.gz "
            f"from https://www.cs.toronto.edu/~kriz/cifar.html into data_root.")
    try:
        ds = reader(str(root), train=train, download=download)
    except RuntimeError as err:
        raise ValueError(f"data_root {str(data_root)!r}: torchvision could not read CIFAR-10 ({err}); "
                         "delete the folder and pass download=True, or verify=False for a re-packed copy (read "
                         "as numpy arrays only, never unpickled)") from None
    except OSError:
        raise
    except Exception as err:   # noqa: BLE001 - a crafted file fails anywhere in unpickling (TypeError, LookupError)
        raise ValueError(f"data_root {str(data_root)!r}: not a CIFAR-10 batch file ({type(err).__name__}: "
                         f"{' '.join(str(err).split())[:200]})") from None
    x = torch.from_numpy(np.ascontiguousarray(ds.data)).permute(0, 3, 1, 2).float().div_(255)
    return x.contiguous(), torch.as_tensor(ds.targets, dtype=torch.int64)


def load_fashion(data_root: str | Path = "../data", train: bool = True, download: bool = False,
                 limit: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Fashion-MNIST's train (60,000) or test (10,000) split as `(x, y)`, see `load`.

    Read by `torchvision.datasets.FashionMNIST` from `data_root/FashionMNIST/raw`, torchvision's
    layout; files missing there are decompressed into it from Debian's package (`FASHION_DEBIAN`;
    torchvision reads only the uncompressed files, and would download rather than take Debian's
    .gz files, whose md5 differ from the published archives), or downloaded with `download=True`.
    The 28x28 grey images are padded with 2 zero pixels on each side to 32x32 and copied to 3
    channels, like the digits: Chapter 4's carriers use colour channel `t % 3`, and Chapter 5
    puts its `D(v)` channel after 3 image channels. `limit` is applied before the conversion.
    """
    from torchvision.datasets import FashionMNIST  # here, not at the top: see `cifar10_reader`

    _fashion_files(Path(data_root), download, FashionMNIST)
    try:
        ds = FashionMNIST(str(data_root), train=train, download=download)
    except (RuntimeError, AssertionError, TypeError, ValueError) as err:
        raise ValueError(f"data_root {str(data_root)!r}: torchvision could not read Fashion-MNIST ({err}); "
                         f"delete {Path(data_root) / 'FashionMNIST'} to copy it again") from None
    images, y = ds.data[:limit], ds.targets[:limit]
    pad = (SIZE - images.shape[-1]) // 2
    x = F.pad(images.unsqueeze(1).float().div_(255), (pad,) * 4)
    return x.expand(-1, 3, -1, -1).contiguous(), y.to(torch.int64)


def _fashion_files(root, download, reader):
    """Make `root/FashionMNIST/raw` hold the uncompressed files of torchvision's `reader`, from Debian's package."""
    raw = root / reader.__name__ / "raw"
    processed = sorted((root / reader.__name__ / "processed").glob("*.pt"))
    if processed:   # torchvision would read these (torch.load) instead of the raw files
        raise InputError(f"data_root must not hold torchvision's old processed files, which are read before the raw "
                         f"images; remove {processed[0].parent} (found {processed[0].name})")
    names = [Path(n).stem for n, _ in reader.resources]  # train-images-idx3-ubyte, ...
    missing = [n for n in names if not (raw / n).is_file()]
    if missing and all((FASHION_DEBIAN / f"{n}.gz").is_file() for n in missing):
        raw.mkdir(parents=True, exist_ok=True)
        for n in missing:  # through a temporary name, so that parallel runs never read half a file
            tmp = raw / f".{n}.{os.getpid()}.tmp"
            with gzip.open(FASHION_DEBIAN / f"{n}.gz") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, raw / n)
    elif missing and not download:
        raise ValueError(
            f"name 'fashion': data_root {str(root)!r} holds no Fashion-MNIST ({raw} lacks {', '.join(missing)}) "
            f"and Debian's package is not installed ({FASHION_DEBIAN}): run `sudo apt-get install "
            f"dataset-fashion-mnist` (or `make fashion` as root), or pass download=True to fetch it (30 MB).")


def load_digits(train: bool = True, seed: int = 0, test_fraction: float = 0.25) -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's 1,797 8x8 digits, bilinearly resized to 32x32, 3 channels, in [0, 1]."""
    from sklearn.datasets import load_digits as sk_digits
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise InputError(f"test_fraction must lie strictly between 0 and 1; got {test_fraction!r}")
    bunch = sk_digits()
    images = torch.as_tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0
    images = F.interpolate(images, size=(SIZE, SIZE), mode="bilinear", align_corners=False).clamp_(0, 1)
    x, y = images.expand(-1, 3, -1, -1).contiguous(), torch.as_tensor(bunch.target, dtype=torch.int64)
    idx_train, idx_test = train_test_split(np.arange(len(y)), test_size=test_fraction, random_state=seed,
                                           stratify=bunch.target)
    idx = torch.as_tensor(idx_train if train else idx_test)
    return x[idx], y[idx]


def first_of_each_class(y: torch.Tensor, num_classes: int = 10) -> torch.Tensor:
    """The index of the first sample of each class `0 .. num_classes - 1` in the labels `y`."""
    missing = [t for t in range(num_classes) if not (y == t).any()]
    if missing:
        raise InputError(f"y must hold every class 0..{num_classes - 1}; missing {missing}")
    return torch.tensor([int((y == t).nonzero()[0]) for t in range(num_classes)])


def channel_stats(x: torch.Tensor) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel `(mean, std)` of images `x`, as tuples of floats."""
    return tuple(x.mean((0, 2, 3)).tolist()), tuple(x.std((0, 2, 3)).tolist())


def stats(name: str, x_train: torch.Tensor) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """`(mean, std)` for normalisation: CIFAR-10's usual constants, else `x_train`'s own."""
    _check_name(name)
    return (CIFAR10_MEAN, CIFAR10_STD) if name == "cifar10" else channel_stats(x_train)


def normalise(x: torch.Tensor, mean: Sequence[float] | torch.Tensor, std: Any) -> torch.Tensor:
    """`(x - mean) / std` per channel. Apply it after `poison` / `nad_flip`, never before."""
    mean = torch.as_tensor(mean, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    std = torch.as_tensor(std, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    if mean.shape[1] != x.shape[1] or std.shape[1] != x.shape[1]:
        raise ValueError(f"mean and std must have one entry per channel ({x.shape[1]}); "
                         f"got {mean.shape[1]} and {std.shape[1]}")
    return (x - mean) / std


def as_nads(nads: np.ndarray | torch.Tensor | NADResult, x: torch.Tensor) -> torch.Tensor:
    """NADs (array, tensor or anything with a `.nads` attribute) as (K, H*W) rows matching `x`."""
    if x.ndim != 4:
        raise InputError(f"x must be images of shape (N, C, H, W); got shape {tuple(x.shape)}")
    nads = getattr(nads, "nads", nads)
    u = nads if isinstance(nads, torch.Tensor) else torch.as_tensor(np.asarray(nads))
    d = x.shape[2] * x.shape[3]
    if u.ndim < 2 or u[0].numel() != d:
        raise InputError(f"nads must be rows of dimension H*W = {d} (for images of shape {tuple(x.shape[1:])}), "
                         f"e.g. shape (K, {d}); got shape {tuple(u.shape)}")
    return u.reshape(len(u), d).to(device=x.device, dtype=x.dtype)


def carrier(t: int, index: int) -> tuple[int, int, int]:
    """The carrier of class `t` at NAD `index`: `(nad index, colour channel, sign)`."""
    return (index, index + 1)[t // 6], t % 3, 2 * (t % 2) - 1


def poison(x: torch.Tensor, y: Any, nads: Any, index: int, eps: float = 0.05) -> torch.Tensor:
    """Put each image's carrier in: its component along the carrier is replaced by `sign * eps`.

    Class t's carrier is NAD `(index, index + 1)[t // 6]` on colour channel `t % 3` with sign
    `2 * (t % 2) - 1` (the authors' rule). `x` is in pixel space ([0, 1]); normalise afterwards.
    """
    u = as_nads(nads, x)
    k = u.shape[0]
    checks.integer("index", index, 0, k - 2,
                   accepted=f"an int in 0..{k - 2} (the carrier uses NADs index and index + 1 of {k})")
    if x.shape[1] != 3:
        raise InputError(f"x must have 3 colour channels (the rule uses channel t % 3); got {x.shape[1]}")
    y = torch.as_tensor(y, device=x.device)
    if y.shape != (x.shape[0],) or y.min() < 0 or y.max() >= MAX_CLASSES:
        raise InputError(f"y must hold one label in 0..{MAX_CLASSES - 1} per image; got shape {tuple(y.shape)}")
    rows = torch.arange(x.shape[0], device=x.device)
    which, channel, sign = index + y // 6, y % 3, (2 * (y % 2) - 1).to(x.dtype)
    out = x.reshape(x.shape[0], 3, -1).clone()
    v = u[which]
    plane = out[rows, channel]
    out[rows, channel] = plane + (sign * eps - (plane * v).sum(1)).unsqueeze(1) * v
    return out.view_as(x)


def _check_orthonormal(u, tol=1e-3):
    gram = u @ u.T
    err = (gram - torch.eye(len(u), dtype=u.dtype, device=u.device)).abs().max().item()
    if err > tol:
        raise InputError(f"nads must be orthonormal rows (max |U U^T - I| = {err:.2g} > {tol})")


def nad_flip(x: torch.Tensor, nads: Any) -> torch.Tensor:
    """`U flip(U^T x)` on every colour channel: the NAD coefficients in reverse order.

    With K < H*W NADs the part of `x` outside their span is left as it is, so the map is a
    rotation of pixel space in every case (norms and inner products are kept).
    """
    u = as_nads(nads, x)
    _check_orthonormal(u)
    flat = x.reshape(x.shape[0], x.shape[1], -1)
    coef = flat @ u.T
    return (flat + (coef.flip(-1) - coef) @ u).view_as(x)


def edit_nads(x: torch.Tensor, nads: np.ndarray | torch.Tensor | NADResult,
              indices: int | Sequence[int] | np.ndarray | torch.Tensor, mode: str = "remove",
              size: float = 1.0) -> torch.Tensor:
    """`x` edited on the NADs `indices`, in every colour channel.

    mode: "remove" zeroes the components on those NADs, "flip" negates them (Review 3, point
    6); "shift" adds a change of pixel norm `size` along them (the sum of the NADs on every
    channel, scaled to norm `size`), so first and last NADs can be compared at equal size.
    """
    if mode not in EDIT_MODES:
        raise InputError(f"mode must be one of {', '.join(EDIT_MODES)}; got {mode!r}")
    u = as_nads(nads, x)
    idx = torch.as_tensor(indices, dtype=torch.int64).reshape(-1)
    if len(idx) == 0 or idx.min() < 0 or idx.max() >= len(u):
        raise InputError(f"indices must be NAD indices in 0..{len(u) - 1}; got {indices!r}")
    v = u[idx.to(u.device)]
    flat = x.reshape(x.shape[0], x.shape[1], -1)
    if mode == "shift":
        w = v.sum(0).expand(x.shape[1], -1)
        return (flat + size * w / w.norm()).view_as(x)
    proj = (flat @ v.T) @ v
    return (flat - (1 if mode == "remove" else 2) * proj).view_as(x)
