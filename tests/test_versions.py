"""A stored number is the number of the code as it is: results of another version are recomputed."""

import numpy as np
import pytest

from nadcore import fourier, nads, presets, store, versions
from nadcore.experiments import ch1_fourier


def test_stamp_adds_version_and_precision_only_when_they_differ_from_the_first(monkeypatch):
    assert versions.stamp({"a": 1}, "fourier_cell") == {"a": 1}       # stored keys of version 1 unchanged
    assert versions.stamp({"a": 1}, "nad_chunk", "bfloat16") == {"a": 1, "precision": "bfloat16"}
    monkeypatch.setitem(versions.VERSIONS, "nad_chunk", 3)
    assert versions.stamp({"a": 1}, "nad_chunk") == {"a": 1, "version": 3}
    with pytest.raises(ValueError, match="^computation must be one of"):
        versions.stamp({}, "fig99")
    with pytest.raises(ValueError, match="^precision must be one of"):
        versions.stamp({}, "nad_chunk", "float8")


def test_an_old_checkouts_results_folder_is_recomputed_not_reused(tmp_path, monkeypatch):
    """The stale-results scenario: a results folder filled by code whose computation has since moved
    (here: its version bumped) is recomputed, never read back as current."""
    p = {**presets.preset("fourier", "smoke"), "n": 200, "epochs": 1}
    grid = fourier.Grid((0, 4), 32)
    old = ch1_fourier.sweep_directions(["logreg"], grid, ch1_fourier.sweep_settings(p, 0, "cpu"), tmp_path,
                                       progress=False)
    files = set((tmp_path / "fourier").glob("*.npz"))
    monkeypatch.setitem(versions.VERSIONS, "fourier_cell", 2)         # the computation changed
    settings = ch1_fourier.sweep_settings(p, 0, "cpu")
    new = ch1_fourier.sweep_directions(["logreg"], grid, settings, tmp_path, progress=False)
    added = set((tmp_path / "fourier").glob("*.npz")) - files
    assert len(added) == len(files) == len(grid.half())               # every cell computed again
    assert all(store.load(f).settings["settings"]["version"] == 2 for f in added)
    assert old.keys() == new.keys()


def test_nad_chunks_of_another_version_are_recomputed(tmp_path, monkeypatch):
    first = nads.estimate("logreg", 4, results_dir=tmp_path, progress=False)
    monkeypatch.setitem(versions.VERSIONS, "nad_chunk", 2)
    monkeypatch.setitem(versions.VERSIONS, "nad_result", 2)
    again = nads.estimate("logreg", 4, results_dir=tmp_path, progress=False)
    assert len(list((tmp_path / "nad_chunks").glob("*.npz"))) == 2
    assert again.settings["version"] == 2 and "version" not in first.settings
    np.testing.assert_array_equal(first.eigenvalues, again.eigenvalues)   # same code here, so same numbers
