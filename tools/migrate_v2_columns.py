"""Migrate the bundle to `versions` v2 of the stacked training kinds (run once, 2026-11-24).

v2 pads a batch whose size is not a multiple of `stacked.COLUMNS` before the stack's matrix
products; a batch of a multiple of 16 runs exactly the v1 code. A stored cell whose every batch is
such a multiple therefore holds the v2 numbers already: it is moved to its v2 key
(`store.migrate`). Its batches: the training batches of `batch_size` and the last one of
`n % batch_size`, and `train.fit_many`'s accuracy passes over `n` training and `n` test samples
in batches of 1024. Chapter 5's cells (images of a dataset) are removed, for `nadcore.bundle` to
recompute. `tests/test_bundle.py` recomputes a random sample of the migrated cells bitwise.

    .venv/bin/python tools/migrate_v2_columns.py [bundle]
"""

import sys
from pathlib import Path

from nadcore import store, sweeps, versions
from nadcore.stacked import COLUMNS
from nadcore.train import Recipe

SWEEPS = {"fourier/fig1": "fourier_cell", "fourier/antialias": "fourier_cell", "nads/fig6_lenet": "fig6_cell",
          "underspec_ood_lenet": "underspec_cell", "underspec_ood_mlp": "underspec_cell"}
EVAL_BATCH = 1024


def aligned(cell, inner):
    """True when every batch of the cell's training and accuracy passes is a multiple of COLUMNS."""
    if "dataset" in inner:                                   # sizes of a dataset's images: not in the settings
        return False
    n = inner.get("n", inner.get("n_train"))
    size = Recipe.from_settings(inner, cell.get("arch", inner.get("arch"))).batch_size
    return all(b % COLUMNS == 0 for b in (size, n % size, n % EVAL_BATCH))


def migrate(bundle):
    moved = removed = 0
    for folder, kind in SWEEPS.items():
        for path in sorted((Path(bundle) / folder).glob("*.npz")):
            stored = store.load(path).settings
            cell, inner = stored["cell"], stored["settings"]
            if inner.get("version", 1) >= versions.VERSIONS[kind]:
                continue
            if not aligned(cell, inner):
                path.unlink()
                removed += 1
                continue
            new = versions.stamp(inner, kind)
            store.migrate(path, sweeps.cell_path(path.parent.name, cell, new, path.parent.parent),
                          sweeps.cell_settings(cell, new),
                          f"v1 -> v2 by tools/migrate_v2_columns.py: every batch a multiple of {COLUMNS}")
            moved += 1
    print(f"migrated {moved} cells to v2; removed {removed} for nadcore.bundle to recompute")


if __name__ == "__main__":
    with store.writing_bundle():   # it rewrites a committed bundle's records
        migrate(sys.argv[1] if len(sys.argv) > 1 else "bundle")
