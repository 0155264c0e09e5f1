"""Versions of the computations whose numbers are stored: bump one when a change moves its numbers.

A stored item is found by its settings (`nadcore.store`). The settings say what was asked; the
version says which code answered: every settings builder passes its settings through `stamp`,
which adds `version` (when above 1) and `precision` (when not float32). So an item computed by
older code, or at another precision, has another key and is recomputed, never read back as
current. Items stored before versions existed are version 1 and float32 (their keys unchanged).
A change that moves the numbers of a stored key without a bump fails the bundle's random
bitwise recomputation (`tests/test_bundle.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nadcore.checks import InputError, check_precision

# v2 (all networks trained stacked by `train.fit_many`): batches of a size that is not a multiple
# of 16 are padded for the stack's matrix products (`stacked.COLUMNS`); batches of a multiple of
# 16 compute what v1 did, and the bundle's records whose batches all are were migrated unchanged.
VERSIONS = {
    "fourier_cell": 2,   # a trained cell of a Fourier sweep (Chapter 1, Chapter 6's Fig. 1): ch1_fourier
    "fig6_cell": 2,      # a network trained on D(u_i) for Fig. 6 (Chapters 3 and 6): ch3_nads.fig6_sweep
    "nad_chunk": 2,      # a chunk of networks' gradients: nads.chunk_arrays (v1 stored their moments,
                         # 16x larger; the merged estimates are bitwise those of v1 on the same CPU)
    "nad_result": 1,     # a merged NAD estimate: nads.estimate
    "cifar_run": 1,      # a trained network of Chapter 4 (poisoning, flip, clean): ch4_cifar10
    "underspec_cell": 2,  # a cell of the follow-up's Figs. 2-3: ch5_underspec
    "training_cell": 2,  # a network's G_t at checkpoints of its training (Chapter 8): ch8_training.cell
                         # (v2: eigenvectors by nads.eig_decreasing, the estimator's, where v1 had numpy's eigh)
    "conventions": 2,    # the centred and uncentred NADs of LeNet's estimate compared (Chapter 8): ch8_training
                         # (v2: as training_cell's)
    "precision_check": 2,  # the bfloat16 secant against float32: ch3_nads.precision_cosines, precision_overlaps
                           # (v2: the eager secant's injected first layer handed on in bfloat16, `gradients._Injected`)
}


def stamp(settings: Mapping[str, Any], computation: str, precision: str = "float32") -> dict[str, Any]:
    """`settings` with the `version` of `computation` (when above 1) and the `precision` (when not float32)."""
    if computation not in VERSIONS:
        raise InputError(f"computation must be one of {', '.join(VERSIONS)}; got {computation!r}")
    check_precision(precision)
    out = dict(settings)
    if VERSIONS[computation] != 1:
        out["version"] = VERSIONS[computation]
    if precision != "float32":
        out["precision"] = precision
    return out
