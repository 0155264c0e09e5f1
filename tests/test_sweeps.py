"""The sweep runner: resume after an interruption, shards that merge, settings-keyed cells."""

import numpy as np
import pytest

from nadcore import sweeps

CELLS = [{"arch": arch, "k": k} for arch in ("logreg", "lenet") for k in range(4)]
SETTINGS = {"seed": 3, "sigma": 0.5}


class Compute:
    """A seeded per-cell computation that counts the cells it is asked for and can fail."""

    def __init__(self, fail_after=None):
        self.calls, self.fail_after = [], fail_after

    def __call__(self, cells):
        out = []
        for cell in cells:
            if self.fail_after is not None and len(self.calls) == self.fail_after:
                raise KeyboardInterrupt("interrupted")
            self.calls.append(cell)
            rng = np.random.default_rng([SETTINGS["seed"], cell["k"], len(cell["arch"])])
            out.append({"acc": rng.normal(size=3), "k": np.array(cell["k"])})
        return out


def numbers(results):
    return np.stack([r["acc"] for r in results])


def test_resumed_sweep_equals_uninterrupted_and_skips_finished(tmp_path):
    full = sweeps.sweep("grid", CELLS, Compute(), SETTINGS, tmp_path / "a", batch=3, progress=False)
    first = Compute(fail_after=5)
    with pytest.raises(KeyboardInterrupt):
        sweeps.sweep("grid", CELLS, first, SETTINGS, tmp_path / "b", batch=1, progress=False)
    assert len(list((tmp_path / "b" / "grid").glob("*.npz"))) == 5
    second = Compute()
    resumed = sweeps.sweep("grid", CELLS, second, SETTINGS, tmp_path / "b", batch=2, progress=False)
    assert second.calls == CELLS[5:]                      # no finished cell recomputed
    np.testing.assert_array_equal(numbers(resumed), numbers(full))
    again = Compute()
    sweeps.sweep("grid", CELLS, again, SETTINGS, tmp_path / "b", progress=False)
    assert again.calls == []
    assert [r.settings["cell"] for r in resumed] == CELLS


def test_shards_merge_to_the_full_result(tmp_path):
    full = sweeps.sweep("grid", CELLS, Compute(), SETTINGS, tmp_path / "full", progress=False)
    parts = [sweeps.sweep("grid", CELLS, Compute(), SETTINGS, tmp_path / "sh", shard=i, num_shards=3, progress=False)
             for i in range(3)]
    assert sorted(len(p) for p in parts) == [2, 3, 3]
    assert [r.settings["cell"] for r in parts[1]] == CELLS[1::3]
    merged = sweeps.collect("grid", CELLS, SETTINGS, tmp_path / "sh")
    np.testing.assert_array_equal(numbers(merged), numbers(full))


def test_collect_lists_missing_cells(tmp_path):
    sweeps.sweep("grid", CELLS, Compute(), SETTINGS, tmp_path, shard=0, num_shards=2, progress=False)
    assert sweeps.missing("grid", CELLS, SETTINGS, tmp_path) == CELLS[1::2]
    with pytest.raises(FileNotFoundError, match=r"4 of 8 cells.*\"k\": 1"):
        sweeps.collect("grid", CELLS, SETTINGS, tmp_path)


def test_other_settings_are_recomputed(tmp_path):
    sweeps.sweep("grid", CELLS, Compute(), SETTINGS, tmp_path, progress=False)
    other = Compute()
    results = sweeps.sweep("grid", CELLS[:2], other, {**SETTINGS, "sigma": 3.0}, tmp_path, progress=False)
    assert other.calls == CELLS[:2]
    assert all(r.settings["settings"]["sigma"] == 3.0 for r in results)


@pytest.mark.parametrize("kwargs, match", [
    ({"shard": 2, "num_shards": 2}, "shard"),
    ({"shard": -1}, "shard"),
    ({"num_shards": 0}, "num_shards"),
    ({"batch": 0}, "batch"),
    ({"cells": CELLS + [dict(CELLS[0])]}, "distinct"),
    ({"name": "a/b"}, "name"),
    ({"settings": [1]}, "settings"),
])
def test_bad_input(tmp_path, kwargs, match):
    args = {"name": "grid", "cells": CELLS, "compute": Compute(), "settings": SETTINGS,
            "results_dir": tmp_path, "progress": False, **kwargs}
    with pytest.raises(ValueError, match=match):
        sweeps.sweep(**args)


def test_compute_must_return_one_result_per_cell(tmp_path):
    with pytest.raises(ValueError, match="one dict of arrays per cell"):
        sweeps.sweep("grid", CELLS, lambda cells: [], SETTINGS, tmp_path, progress=False)
