"""Resumable, shardable grids of runs (Chapter 1: architecture x direction; Chapter 5: NAD pairs).

A sweep is a list of `cells` (JSON-able dicts, e.g. `{"arch": "lenet", "kx": 3, "ky": 0}`) and
the `settings` they share (including the seed). Each finished cell is written at once through
`nadcore.store` to `results_dir/name/<store.key({"cell": cell, "settings": settings})>.npz`,
whose record holds the cell and the settings. Re-running skips the cells already stored with
the same settings (resume after an interruption); changed settings give new files, so those
cells are recomputed. `shard=i, num_shards=n` takes `cells[i::n]`; `collect` merges the shards.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from tqdm import tqdm

from nadcore import checks, store
from nadcore.checks import InputError

if TYPE_CHECKING:
    import torch


def cell_settings(cell: dict, settings: dict) -> dict:
    return {"cell": cell, "settings": settings}


def cell_path(name: str, cell: dict, settings: dict, results_dir: str | Path) -> Path:
    """The file that holds `cell` of sweep `name` computed with `settings`."""
    return Path(results_dir) / name / f"{store.key(cell_settings(cell, settings))}.npz"


def _check(name, cells, settings):
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise InputError(f"name must be a non-empty string without path separators; got {name!r}")
    if not isinstance(settings, dict):
        raise InputError(f"settings must be a dict (shared by all cells, seed included); got {type(settings).__name__}")
    store.canonical(settings)
    if not isinstance(cells, (list, tuple)) or not all(isinstance(c, dict) for c in cells):
        raise InputError("cells must be a list of dicts")
    seen = {}
    for i, cell in enumerate(cells):
        text = json.dumps(store.canonical(cell), sort_keys=True)
        if text in seen:
            raise InputError(f"cells must be distinct: cells[{seen[text]}] and cells[{i}] are both {cell}")
        seen[text] = i


@overload
def sweep(name: str, cells: Sequence[dict], compute: Callable[[list[dict]], Sequence[dict]], settings: dict,
          results_dir: str | Path, batch: int = 1, shard: int = 0, num_shards: int = 1, progress: bool = True,
          load: Literal[True] = True, device: str | torch.device | None = None) -> list[store.Result]: ...


@overload
def sweep(name: str, cells: Sequence[dict], compute: Callable[[list[dict]], Sequence[dict]], settings: dict,
          results_dir: str | Path, batch: int = 1, shard: int = 0, num_shards: int = 1, progress: bool = True, *,
          load: Literal[False], device: str | torch.device | None = None) -> list[Path]: ...


@overload
def sweep(name: str, cells: Sequence[dict], compute: Callable[[list[dict]], Sequence[dict]], settings: dict,
          results_dir: str | Path, batch: int = 1, shard: int = 0, num_shards: int = 1, progress: bool = True,
          load: bool = True, device: str | torch.device | None = None) -> list[store.Result] | list[Path]: ...


def sweep(name: str, cells: Sequence[dict], compute: Callable[[list[dict]], Sequence[dict]], settings: dict,
          results_dir: str | Path, batch: int = 1, shard: int = 0, num_shards: int = 1, progress: bool = True,
          load: bool = True, device: str | torch.device | None = None) -> list[store.Result] | list[Path]:
    """Compute and store every cell of this shard that is not stored yet; return their results.

    `compute(list_of_cells)` returns one dict of arrays per cell, in order; it is called with up
    to `batch` cells at a time, so a batched trainer (`nadcore.train.fit_many`) can fit them
    together. For a resumed or sharded run to give the same numbers as one uninterrupted run,
    a cell's numbers must depend only on the cell and `settings` (seed included), not on the
    other cells of its batch. Returns the `store.Result` of each of `cells[shard::num_shards]`
    (`load=False`: their paths, for a caller that reads them one at a time). Records name `device`
    (default: the settings' `device`).
    """
    _check(name, cells, settings)
    checks.integer("num_shards", num_shards, 1)
    checks.integer("shard", shard, 0, num_shards - 1, accepted=f"an integer in [0, {num_shards})")
    checks.integer("batch", batch, 1)
    if not callable(compute):
        raise InputError("compute must be a callable taking a list of cells")
    mine = list(cells)[shard::num_shards]
    paths = [cell_path(name, c, settings, results_dir) for c in mine]
    todo = [i for i, (c, p) in enumerate(zip(mine, paths)) if not store.matches(p, cell_settings(c, settings))]
    bar = tqdm(total=len(mine), initial=len(mine) - len(todo), desc=name, disable=not progress)
    for start in range(0, len(todo), batch):
        group = todo[start:start + batch]
        t0 = time.perf_counter()
        outputs = compute([mine[i] for i in group])
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(group):
            got = len(outputs) if isinstance(outputs, (list, tuple)) else type(outputs).__name__
            raise InputError(f"compute must return one dict of arrays per cell ({len(group)}); got {got}")
        duration = (time.perf_counter() - t0) / len(group)
        for i, arrays in zip(group, outputs):
            store.save(paths[i], arrays, cell_settings(mine[i], settings),
                       device=device if device is not None else settings.get("device"), duration=duration)
        bar.update(len(group))
    bar.close()
    if not load:
        return paths
    return [store.load(p, cell_settings(c, settings)) for c, p in zip(mine, paths)]


def missing(name: str, cells: list[dict], settings: dict, results_dir: str | Path) -> list[dict]:
    """The cells not yet stored with `settings` (all shards together)."""
    _check(name, cells, settings)
    return [c for c in cells
            if not store.matches(cell_path(name, c, settings, results_dir), cell_settings(c, settings))]


def collect(name: str, cells: list[dict], settings: dict, results_dir: str | Path) -> list[store.Result]:
    """The `store.Result` of every cell (whichever shard computed it), in the order of `cells`.

    Raises `FileNotFoundError` listing the cells that are missing.
    """
    absent = missing(name, cells, settings, results_dir)
    if absent:
        shown = ", ".join(json.dumps(c, sort_keys=True) for c in absent[:10])
        more = f" and {len(absent) - 10} more" if len(absent) > 10 else ""
        raise FileNotFoundError(
            f"sweep {name!r}: {len(absent)} of {len(cells)} cells are not stored in "
            f"{Path(results_dir) / name} with these settings: {shown}{more}; run sweep() for every shard first")
    return [store.load(cell_path(name, c, settings, results_dir), cell_settings(c, settings)) for c in cells]


def stored(name: str, cells: list[dict], settings: dict, results_dir: str | Path) -> dict[int, store.Result]:
    """`{i: store.Result}` of the cells (by position in `cells`) already stored with `settings`;
    computes nothing (the book reads a results bundle this way)."""
    _check(name, cells, settings)
    out = {}
    for i, c in enumerate(cells):
        try:
            out[i] = store.load(cell_path(name, c, settings, results_dir), cell_settings(c, settings))
        except (FileNotFoundError, store.StoreError):
            pass
    return out

