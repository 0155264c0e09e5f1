"""The results store: arrays plus a JSON record, written atomically, reloaded only on a match.

A result is one `.npz` file holding the arrays and a `__record__` entry: the JSON of the
settings, the library version, the seed, the device and the duration. Files are read with
`allow_pickle=False`; network weights go to `.pt` files read with `weights_only=True`.
A truncated or foreign file raises `StoreError` naming the file, never a silent wrong result.
The record holds each array's shape, dtype and content hash (`content_hash`), checked on load,
so an array rebuilt with other values under its original record is refused too (files written
before the hash existed load without that check; `add_content_hash` gives them one).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import socket
import tempfile
import time
import zipfile
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch

from nadcore import __version__, checks, models, paths
from nadcore.checks import InputError

FORMAT = "nadcore-result/1"
RECORD_KEY = "__record__"


class StoreError(ValueError):
    """A stored result is unreadable, foreign, or was made with other settings."""


class OtherSettings(StoreError):
    """A stored result made with other settings than those asked (`cached` recomputes it)."""


@dataclass
class Result:
    """Arrays (numpy, by name) and the record they were saved with."""

    arrays: dict
    record: dict

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    @property
    def settings(self) -> dict[str, Any]:
        return self.record["settings"]


def canonical(settings: Any) -> Any:
    """Settings as plain JSON types (tuples become lists), so equal settings compare equal."""
    try:
        return json.loads(json.dumps(settings, sort_keys=True, default=_jsonable))
    except TypeError as err:
        raise InputError(f"settings must be JSON-serialisable: {err}") from None


def key(settings: dict, length: int = 12) -> str:
    """A short stable hash of `settings`, for file names."""
    text = json.dumps(canonical(settings), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def fingerprint(*arrays: np.ndarray | torch.Tensor) -> str:
    """A short hash of arrays' (or tensors') bytes: names a dataset or a NAD basis in a record."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(_numpy(a)).reshape(-1).view(np.uint8).data)   # its bytes, not a copy
    return h.hexdigest()[:16]


def content_hash(array: np.ndarray) -> str:
    """The sha256 (hex) of an array's dtype, shape and bytes: the `sha256` of its entry in a record."""
    a = np.ascontiguousarray(array)
    h = hashlib.sha256(json.dumps({"dtype": a.dtype.str, "shape": list(a.shape)}, sort_keys=True).encode())
    h.update(a.tobytes())
    return h.hexdigest()


def _array_meta(array):
    return {"shape": list(array.shape), "dtype": str(array.dtype), "sha256": content_hash(array)}


def _jsonable(obj):
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, (np.ndarray, torch.Tensor)):
        return obj.tolist()
    if isinstance(obj, (Path, torch.device)):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON-serialisable")


def _numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


# The store writes into no results bundle (`paths.bundle_of`: every symlink resolved, at every level) outside
# `writing_bundle()`, which `python -m nadcore.bundle` opens, or in a process whose environment has
# NADBOOK_WRITE_BUNDLE=1 (the command line's --force, for the kernel of a chapter run too).
_BUNDLE_WRITES = [False]


@contextlib.contextmanager
def writing_bundle() -> Generator[None]:
    """Within the block the store may write into a results bundle (`BUNDLE_MARKER`)."""
    before, _BUNDLE_WRITES[0] = _BUNDLE_WRITES[0], True
    try:
        yield
    finally:
        _BUNDLE_WRITES[0] = before


def check_writable(path: str | Path) -> None:
    """Raise `InputError` when `path` lies in a results bundle (`paths.bundle_of`) outside `writing_bundle()`."""
    bundle = paths.bundle_of(path)
    if bundle is not None and not (_BUNDLE_WRITES[0] or os.environ.get("NADBOOK_WRITE_BUNDLE") == "1"):
        raise InputError(f"path {path} lies in the results bundle {bundle} (through its real path), which only "
                         "`python -m nadcore.bundle` writes: write elsewhere")


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], object]) -> Path:
    """Call `write(file_object)` on a temporary file beside `path`, then rename it into place; never into a
    results bundle outside `writing_bundle()` (`check_writable`).

    Temporary files are named `.NAME.PID.HOST.XXXX.tmp`; those that a killed writer of this host
    left behind (its process is gone) are removed first. Other hosts' files are left alone:
    shards on a shared file system may still be writing them."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"path must name a file, not a folder; got {str(path)!r}")
    check_writable(path)
    # The folder as the kernel reads it, every symlink resolved before a `..` (a temporary file of a path whose `..`
    # follows a symlink would otherwise go where the text collapsed, maybe into a bundle); the name as it is
    path = Path(os.path.realpath(path.parent)) / path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.{HOST}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# this host as the names of temporary files carry it (`.NAME.PID.HOST.XXXX.tmp`)
HOST = socket.gethostname().replace(".", "-") or "host"


def remove_stale_temporaries(folder: str | Path) -> None:
    """Delete the `.*.tmp` files in `folder` whose writer (a process of this host) no longer runs."""
    for tmp in Path(folder).glob(".*.tmp"):
        parts = tmp.name.rsplit(".", 4)                # ['.NAME', PID, HOST, XXXX, 'tmp']
        if len(parts) == 5 and parts[1].isdigit() and parts[2] == HOST and not _alive(int(parts[1])):
            tmp.unlink(missing_ok=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@functools.lru_cache(maxsize=1)
def machine(device: str | torch.device | None = None) -> str | None:
    """The CPU this process runs on: its model name and widest vector extension (bitwise
    equality of float results needs the same kernels, hence the same CPU family and threads);
    for a CUDA `device`, the GPU's name and CUDA version (None where no GPU is, as for a test's stand-in)."""
    import platform

    if device is not None and torch.device(device).type == "cuda":
        if not torch.cuda.is_available():
            return None
        return f"{torch.cuda.get_device_name(torch.device(device))} (CUDA {torch.version.cuda})"
    model, flags = platform.processor() or platform.machine(), ""
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        model = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name")), model)
        flags = next((l for l in info.splitlines() if l.startswith("flags")), "")
    except OSError:
        pass
    isa = next((x for x in ("avx512f", "avx2", "neon") if f" {x}" in flags), "")
    return f"{model} ({isa})" if isa else model


@functools.lru_cache(maxsize=1)
def commit() -> str | None:
    """The git commit of the checkout `nadcore` runs from (with `+dirty` when files differ), or None
    outside a git checkout (an installed wheel)."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        run = lambda *args: subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                                           timeout=10, check=True).stdout.strip()
        head = run("rev-parse", "HEAD")
        dirty = run("status", "--porcelain", "--untracked-files=no", "--", "src")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def _seed(settings):
    """The run's seed: `settings["seed"]`, or that of nested settings (a sweep's cell record)."""
    if not isinstance(settings, dict):
        return None
    if "seed" in settings:
        return settings["seed"]
    return next((s for s in map(_seed, settings.values()) if s is not None), None)


def make_record(settings: dict[str, Any], *, device: str | torch.device | None = None, duration: float | None = None,
                arrays: Mapping[str, np.ndarray | torch.Tensor] | None = None,
                seed: int | None = None) -> dict[str, Any]:
    """The JSON record of a result: its settings, and at the top level the seed, the library and
    torch versions, `versions` (those of the libraries that decide its numbers: `library_versions`),
    the git commit of the code, the device, its thread count and the machine (bitwise results need
    all three), the duration in seconds and the time it was made. Only `settings` make its key."""
    settings = canonical(settings)
    record = {
        "format": FORMAT,
        "settings": settings,
        "nadcore_version": __version__,
        "torch_version": torch.__version__.split("+")[0],
        "versions": library_versions(settings),
        "commit": commit(),
        "seed": _seed(settings) if seed is None else int(seed),
        "device": None if device is None else str(device),
        "threads": torch.get_num_threads(),
        "machine": machine(device),
        "duration_s": None if duration is None else round(float(duration), 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if arrays is not None:
        record["arrays"] = {k: _array_meta(_numpy(v)) for k, v in arrays.items()}
    return record


def library_versions(settings: Any) -> dict[str, str]:
    """`{library: version}` of the libraries whose code decides the numbers of a result with `settings`:
    torch always; those of every registry architecture the settings name under `arch` or `archs`, at
    any depth (`models.libraries`: timm for the networks of `nadcore.zoo`); and for a model given by
    its `source` (`nads.estimate`'s "timm:NAME" or "module:callable"), timm or the installed
    distribution of the module's top-level package (none for a module of one's own)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"torch": torch.__version__.split("+")[0]}
    archs, packages = _named(settings)
    libs = {lib for arch in archs for lib in models.libraries(arch)} | (packages - {"torch", "nadcore"})
    for lib in sorted(libs):
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            pass
    return out


def _named(value):
    """The registry architectures (under `arch`, `archs`) and the packages of model sources (a `source`
    "package.module:callable" under `model`) that `value` (settings: dicts and lists) names."""
    archs, packages = set(), set()
    if isinstance(value, dict):
        for k, v in value.items():
            named = [v] if k == "arch" else v if k == "archs" and isinstance(v, list) else []
            archs |= {a for a in named if isinstance(a, str) and a in models.REGISTRY}
            if k == "model" and isinstance(v, dict) and isinstance(v.get("source"), str) and ":" in v["source"]:
                packages.add(v["source"].split(":", 1)[0].split(".", 1)[0])
            a, p = _named(v)
            archs, packages = archs | a, packages | p
    elif isinstance(value, list):
        for v in value:
            a, p = _named(v)
            archs, packages = archs | a, packages | p
    return archs, packages


ARRAY_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,199}")   # an array's name: a zip entry, a file name


def save(path: str | Path, arrays: dict, settings: dict, *, device: str | torch.device | None = None,
         duration: float | None = None) -> Result:
    """Write `arrays` (a dict of arrays or tensors) and their record to `path` atomically."""
    arrays = {str(k): _numpy(v) for k, v in arrays.items()}
    bad = [k for k in arrays if k.startswith("__") or not ARRAY_NAME.fullmatch(k) or arrays[k].dtype == object]
    if bad:
        raise InputError(f"arrays must have names of letters, digits and _ . + - (not starting with '__') and no "
                         f"object dtype; got {bad[0]!r}")
    record = make_record(settings, device=device, duration=duration, arrays=arrays)
    _write(path, arrays, record)
    return Result(arrays, record)


def _write(path, arrays, record):
    """`arrays` and their JSON `record` in one .npz at `path`, atomically."""
    blob = np.frombuffer(json.dumps(record, sort_keys=True).encode(), dtype=np.uint8)
    atomic_write(path, lambda f: np.savez(f, **arrays, **{RECORD_KEY: blob}))


def amend_record(path: str | Path, note: str, **fields: Any) -> dict[str, Any]:
    """Add `fields` missing from the record of the result at `path` (arrays and settings untouched),
    with `note` saying where they come from; returns the new record."""
    res = load(path)
    if "settings" in fields or any(res.record.get(k) is not None for k in fields):
        raise ValueError(f"amend_record only fills missing fields other than settings; {path} has {sorted(fields)}")
    record = {**res.record, **fields, "amended": note}
    _write(path, res.arrays, record)
    return record


def add_content_hash(path: str | Path,
                     note: str = "content hashes of the arrays added to the record (arrays and settings "
                     "unchanged)") -> dict[str, Any] | None:
    """Give the record of the result at `path` the content hash of each of its arrays, for a file
    written before `save` stored them: arrays, settings and every other field stay as they are, and
    `note` is kept under "hashed". Returns the new record, or None when every array has its hash already
    (nothing is rewritten). The rewritten file is read back, so its arrays are checked against the hashes."""
    res = load(path)
    metas = res.record["arrays"]
    if set(metas) == set(res.arrays) and all("sha256" in m for m in metas.values()):
        return None
    record = {**res.record, "arrays": {k: {**metas.get(k, {}), **_array_meta(a)} for k, a in res.arrays.items()},
              "hashed": note}
    _write(path, res.arrays, record)
    again = load(path)
    if again.record != record:
        raise StoreError(f"{path}: the rewritten record differs from the one written")
    return record


def migrate(path: str | Path, new_path: str | Path, settings: dict[str, Any], note: str) -> dict[str, Any]:
    """Move the result at `path` to `new_path` under new `settings` (arrays untouched), with `note`
    saying why its numbers are those of the new settings; for a change of key that provably does
    not move the numbers (`nadcore.versions`). Returns the new record."""
    if os.path.realpath(path) == os.path.realpath(new_path):
        raise InputError(f"new_path must differ from path (the file would be written, then deleted); got {new_path}")
    if os.path.lexists(new_path):
        raise InputError(f"new_path must be where no file is yet (migrate replaces nothing); got {new_path}")
    check_writable(path)   # it deletes `path`: never a bundle's file outside `writing_bundle()`
    try:
        check_writable(new_path)
    except InputError as err:
        raise InputError("new_path" + str(err)[len("path"):]) from None
    res = load(path)
    record = {**res.record, "settings": canonical(settings), "migrated": note}
    _write(new_path, res.arrays, record)
    Path(path).unlink()
    return record


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = sorted(k for k in set(keys) if keys.count(k) > 1)
        raise ValueError(f"a key given twice in one object of the record: {twice}")
    return dict(pairs)


def _check_members(path):
    """A StoreError unless the `.npz` at `path` holds each name once, as `.npy` entries whose headers declare no
    more bytes than the entry holds (a header may claim 80 GB: numpy would allocate them)."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        if len(set(names)) != len(names):
            raise StoreError(f"{path} holds an entry twice ({sorted({n for n in names if names.count(n) > 1})}): two "
                             "readers could see other values; delete it to recompute")
        for info in zf.infolist():
            with zf.open(info) as f:
                version = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(f)
            if dtype.hasobject or np.prod(shape, dtype=np.float64) * dtype.itemsize > info.file_size:
                raise StoreError(f"{path}: entry {info.filename} declares {shape} {dtype} in {info.file_size} bytes; "
                                 "delete it to recompute")


def _read(path, arrays=True):
    """`(record, arrays)` of the `.npz` at `path` (arrays only if `arrays`), or a StoreError naming the file."""
    path = Path(path)
    if not path.is_file():   # a FIFO or a device would block or never end
        raise FileNotFoundError(f"no stored result at {path}")
    try:
        _check_members(path)
        with np.load(path, allow_pickle=False) as data:
            if RECORD_KEY not in data.files:
                raise StoreError(f"{path} is not a nadcore result (it has no {RECORD_KEY} entry)")
            blob = data[RECORD_KEY]
            if not isinstance(blob, np.ndarray) or blob.dtype != np.uint8:
                raise StoreError(f"{path}: its {RECORD_KEY} entry is not the record's bytes")
            record = json.loads(blob.tobytes().decode(), object_pairs_hook=_unique_keys)
            if not isinstance(record, dict) or not isinstance(record.get("settings", {}), dict):
                raise StoreError(f"{path} has a malformed record (a JSON object whose settings are one); delete it to "
                                 "recompute")
            out = {k: data[k] for k in data.files if k != RECORD_KEY} if arrays else {}
    except StoreError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, UnicodeDecodeError, AttributeError,
            TypeError, RecursionError, MemoryError) as err:
        raise StoreError(f"{path} is unreadable or truncated ({type(err).__name__}: {checks.first_line(err)}); "
                         "delete it to recompute") from None
    return record, out


def read_record(path: str | Path) -> dict[str, Any]:
    """The record of the result at `path`, its arrays unread (a StoreError where the file is no readable result)."""
    return _read(path, arrays=False)[0]


def load(path: str | Path, settings: dict | None = None) -> Result:
    """Read the result at `path`; with `settings`, raise StoreError unless they match the record."""
    path = Path(path)
    record, arrays = _read(path)
    _check_record(path, record, arrays)
    _check_settings(path, record, settings)
    for seen in _WATCHERS:
        seen[path.resolve()] = record
    return Result(arrays, record)


_WATCHERS: list[dict] = []   # the dicts of the `watched` blocks open now


@contextlib.contextmanager
def watched() -> Generator[dict[Path, dict[str, Any]]]:
    """Inside the block, note every result `load` reads (and so `matches` and `cached`, which call it):
    yields a dict `{resolved path: record}`, filled as they are read."""
    seen: dict = {}
    _WATCHERS.append(seen)
    try:
        yield seen
    finally:
        _WATCHERS.remove(seen)


def _check_settings(path, record, settings):
    """Raise StoreError unless `settings` (None: any) are the ones `record` was made with."""
    if settings is not None and record["settings"] != canonical(settings):
        raise OtherSettings(f"{path} was made with other settings: stored {record['settings']}, "
                         f"asked {canonical(settings)}")


def _check_record(path, record, arrays):
    """Raise StoreError unless `record` has the shape `make_record` gives (a dict of the format, with
    settings and an `arrays` dict of `{name: {"shape": [...], "dtype": "...", "sha256": "..."}}`, the hash
    optional for files written before it existed) and `arrays` match it, values included where hashed."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise StoreError(f"{path} is not a nadcore result "
                         f"(format {record.get('format') if isinstance(record, dict) else None!r}, "
                         f"expected {FORMAT!r})")
    metas = record.get("arrays")
    if "settings" not in record or not isinstance(metas, dict) or not all(
            isinstance(m, dict) and isinstance(m.get("shape"), list) and isinstance(m.get("dtype"), str)
            and isinstance(m.get("sha256", ""), str) for m in metas.values()):
        raise StoreError(f"{path} has a malformed record (it needs settings and arrays as "
                         '{name: {"shape": [...], "dtype": "...", "sha256": "..."}}); delete it to recompute')
    if set(arrays) != set(metas):   # an array the record does not list is unchecked; a record listing none, too
        extra, missing = sorted(set(arrays) - set(metas)), sorted(set(metas) - set(arrays))
        raise StoreError(f"{path}: its arrays differ from those its record lists (not listed: {extra or 'none'}; "
                         f"missing: {missing or 'none'}); delete the file to recompute")
    for name, meta in metas.items():
        arr = arrays.get(name)
        if arr is None or list(arr.shape) != meta["shape"] or str(arr.dtype) != meta["dtype"]:
            raise StoreError(f"{path}: array {name!r} is missing or differs from its record; "
                             "delete the file to recompute")
        if "sha256" in meta and content_hash(arr) != meta["sha256"]:
            raise StoreError(f"{path}: array {name!r} does not match the content hash in its record "
                             "(its values were changed after it was written); delete it to recompute")


def matches(path: str | Path, settings: dict) -> bool:
    """True when `path` holds a readable result made with `settings`."""
    try:
        load(path, settings)
    except (FileNotFoundError, StoreError):
        return False
    return True


def cached(path: str | Path, settings: dict, compute: Callable[[], dict], *, device: str | torch.device | None = None,
           force: bool = False) -> Result:
    """Load the result at `path` if it was made with `settings`, else run `compute()` and save it.

    `compute()` returns a dict of arrays. A file made with other settings is recomputed and
    replaced; an unreadable one is reported, never silently used.
    """
    path = Path(path)
    if not force and path.exists():
        try:
            return load(path, settings)
        except OtherSettings:
            pass
    start = time.perf_counter()
    arrays = compute()
    return save(path, arrays, settings, device=device, duration=time.perf_counter() - start)


def save_weights(path: str | Path, state_dict: Mapping[str, torch.Tensor], settings: dict[str, Any], *,
                 device: str | torch.device | None = None, duration: float | None = None) -> dict[str, Any]:
    """Write a module's `state_dict` and its record (each tensor's sha256 in it) to a `.pt` file atomically."""
    state = {k: v.detach().cpu() for k, v in state_dict.items()}
    record = make_record(settings, device=device, duration=duration, arrays=_hashable(state))
    payload = {"state_dict": state, "record": json.dumps(record, sort_keys=True)}
    atomic_write(path, lambda f: torch.save(payload, f))
    return record


def load_weights(path: str | Path,
                 settings: dict[str, Any] | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read `(state_dict, record)` from a `.pt` file written by `save_weights`, with weights_only."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no stored weights at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
        record = json.loads(payload["record"])
        state = payload["state_dict"]
    except Exception as err:  # torch raises many types for a truncated or foreign file
        raise StoreError(f"{path} is not readable nadcore weights ({type(err).__name__}: {err})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT or "settings" not in record:
        raise StoreError(f"{path} is not a nadcore weights file (its record is malformed)")
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise StoreError(f"{path} is not a nadcore weights file (its state_dict is not a dict of tensors)")
    metas = record.get("arrays")   # weights saved before their hashes were recorded have none
    if metas is not None:
        if not isinstance(metas, dict) or set(metas) != set(state) or not all(
                isinstance(m, dict) and isinstance(state[k], torch.Tensor) for k, m in metas.items()):
            raise StoreError(f"{path} holds other tensors than its record lists; delete it to recompute")
        bad = [k for k, a in _hashable(state).items() if content_hash(a) != metas[k].get("sha256")]
        if bad:
            raise StoreError(f"{path} is corrupted: tensor {bad[0]!r} does not match its recorded hash; delete it to "
                             "recompute")
    _check_settings(path, record, settings)
    return state, record


def _hashable(state: Mapping[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """A state dict's tensors as numpy arrays to hash (bfloat16, which numpy lacks, as float32)."""
    return {k: _numpy(v.float() if v.dtype == torch.bfloat16 else v) for k, v in state.items()}
