"""A stored number is the number of the code as it is: results of another version are recomputed."""

import dataclasses

import numpy as np
import pytest
from conftest import estimate_kw

from nadcore import fourier, nads, presets, store, versions
from nadcore.experiments import ch1_fourier


def test_stamp_adds_version_and_precision_only_when_they_differ_from_the_first(monkeypatch):
    assert versions.stamp({"a": 1}, "nad_result") == {"a": 1}          # stored keys of version 1 unchanged
    assert versions.stamp({"a": 1}, "fourier_cell") == {"a": 1, "version": versions.VERSIONS["fourier_cell"]}
    assert versions.stamp({"a": 1}, "nad_result", "bfloat16") == {"a": 1, "precision": "bfloat16"}
    monkeypatch.setitem(versions.VERSIONS, "nad_chunk", 3)
    assert versions.stamp({"a": 1}, "nad_chunk") == {"a": 1, "version": 3}
    with pytest.raises(ValueError, match="^computation must be one of"):
        versions.stamp({}, "fig99")
    with pytest.raises(ValueError, match="^precision must be one of"):
        versions.stamp({}, "nad_chunk", "float8")


def test_an_old_checkouts_results_folder_is_recomputed_not_reused(tmp_path, monkeypatch):
    """The stale-results scenario: a results folder filled by code whose computation has since moved
    (here: its version bumped) is recomputed, never read back as current."""
    p = dataclasses.replace(presets.preset("fourier", "smoke"), n=200, epochs=1)
    grid = fourier.Grid((0, 4), 32)
    old = ch1_fourier.sweep_directions(["logreg"], grid, ch1_fourier.sweep_settings(p, 0, "cpu"), tmp_path,
                                       progress=False)
    files = set((tmp_path / "fourier").glob("*.npz"))
    now = versions.VERSIONS["fourier_cell"]
    monkeypatch.setitem(versions.VERSIONS, "fourier_cell", now + 1)   # the computation changed
    settings = ch1_fourier.sweep_settings(p, 0, "cpu")
    new = ch1_fourier.sweep_directions(["logreg"], grid, settings, tmp_path, progress=False)
    added = set((tmp_path / "fourier").glob("*.npz")) - files
    assert len(added) == len(files) == len(grid.half())               # every cell computed again
    assert all(store.load(f).settings["settings"]["version"] == now + 1 for f in added)
    assert old.keys() == new.keys()


def test_nad_chunks_of_another_version_are_recomputed(tmp_path, monkeypatch):
    first = estimate_kw("logreg", 4, results_dir=tmp_path, progress=False)
    monkeypatch.setitem(versions.VERSIONS, "nad_chunk", versions.VERSIONS["nad_chunk"] + 1)
    monkeypatch.setitem(versions.VERSIONS, "nad_result", 2)
    again = estimate_kw("logreg", 4, results_dir=tmp_path, progress=False)
    assert len(list((tmp_path / "nad_chunks").glob("*.npz"))) == 2
    assert again.settings["version"] == 2 and "version" not in first.settings
    np.testing.assert_array_equal(first.eigenvalues, again.eigenvalues)   # same code here, so same numbers


def test_a_chunk_stores_its_gradients_and_merges_bitwise_as_its_moments(tmp_path):
    """A stored chunk holds the networks' float32 gradients (1/16 of the moments' size for D = 1,024):
    the estimate read from stored chunks is bitwise the one computed without storing them."""
    stored = estimate_kw("lenet", 6, results_dir=tmp_path, progress=False)
    (path,) = (tmp_path / "nad_chunks").glob("*.npz")
    arrays = store.load(path).arrays
    assert set(arrays) == {"gradients"} and arrays["gradients"].shape == (6, 1024)
    assert arrays["gradients"].dtype == np.float32
    assert store.load(path).settings["settings"]["version"] == versions.VERSIONS["nad_chunk"]
    np.testing.assert_array_equal(stored.eigenvalues, estimate_kw("lenet", 6, progress=False).eigenvalues)
    assert stored.chunks["machines"].tolist() == [store.machine()]       # the CPU of each chunk


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_bfloat16_secant_is_its_own_stored_item_and_stays_close_to_float32(tmp_path):
    fp32 = estimate_kw("lenet", 6, results_dir=tmp_path, progress=False)
    bf16 = estimate_kw("lenet", 6, precision="bfloat16", results_dir=tmp_path, progress=False)
    assert bf16.settings["precision"] == "bfloat16" and "precision" not in fp32.settings
    assert len(list((tmp_path / "nad_chunks").glob("*.npz"))) == 2       # two keys, two chunks
    assert nads.compare(fp32, bf16, [1])[0] > 0.95                       # the leading NAD barely moves
    with pytest.raises(ValueError, match="^precision 'bfloat16' applies to method 'secant' only"):
        estimate_kw("lenet", 2, method="autograd", precision="bfloat16", progress=False)
    with pytest.raises(ValueError, match="^precision must be one of"):
        estimate_kw("lenet", 2, precision="float16", progress=False)


def test_bfloat16_secant_gradients_point_where_float32_ones_do():
    import torch

    factory, _ = nads.one_output_factory("lenet")
    x0 = nads.eval_point_for(0, (1, 32, 32))
    net = nads.network(factory, 0, 0, torch.device("cpu"))
    g32 = nads.secant_gradient(net, x0, 100.0)
    g16 = nads.secant_gradient(net.to(memory_format=torch.channels_last), x0, 100.0, precision="bfloat16")
    assert g16.dtype == torch.float32 and torch.nn.functional.cosine_similarity(g32, g16, dim=0) > 0.99


def test_the_plan_of_another_seed_finds_no_stored_nads(tmp_path):
    from nadcore import plan

    items = [it for it in plan.chapter_plan("03_nads", "smoke", seed=7, results_dir=tmp_path).items
             if it.name.startswith("NADs")]
    assert items and all(it.stored == 0 for it in items)
