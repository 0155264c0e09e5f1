import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nadcore import device, presets
from nadcore.device import resolve


def test_auto_and_cpu_resolve():
    assert resolve("cpu") == torch.device("cpu")
    assert resolve("auto").type in ("cpu", "cuda", "mps")


@pytest.mark.parametrize("bad", ["gpu", "tpu", 3, ""])
def test_bad_device_names_the_accepted_values(bad):
    with pytest.raises(ValueError, match="auto"):
        resolve(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_unavailable_cuda_is_refused():
    with pytest.raises(ValueError, match="not available"):
        resolve("cuda")


def test_float32_on_cuda_is_float32_and_records_name_the_gpu(monkeypatch):
    """What `resolve` sets when it hands out a CUDA device (set here without one), and what a record says."""
    from nadcore import device, store

    flags = {"matmul": torch.backends.cuda.matmul.allow_tf32, "conv": torch.backends.cudnn.allow_tf32,
             "det": torch.backends.cudnn.deterministic, "bench": torch.backends.cudnn.benchmark}
    try:
        device.exact_cuda()
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = flags["matmul"], flags["conv"]
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = flags["det"], flags["bench"]
    store.machine.cache_clear()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)   # a stand-in record, made without a GPU
    assert store.machine("cuda") is None
    store.machine.cache_clear()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda dev=None: "NVIDIA H200")
    assert store.machine("cuda").startswith("NVIDIA H200 (CUDA ") and store.machine("cpu") == store.machine()
    assert store.make_record({"seed": 0}, device="cuda")["machine"].startswith("NVIDIA H200")
    store.machine.cache_clear()


def test_every_chapter_has_every_scale():
    for chapter, scales in presets.PRESETS.items():
        assert set(scales) == set(presets.SCALES), chapter


def test_preset_is_a_copy_and_bad_names_are_refused():
    a = presets.preset("fourier", "smoke")
    a.archs.append("tampered")
    assert "tampered" not in presets.preset("fourier", "smoke").archs
    with pytest.raises(ValueError, match="smoke, medium, paper"):
        presets.preset("fourier", "huge")
    with pytest.raises(ValueError, match="chapter must be one of"):
        presets.preset("nope", "smoke")


SNAPSHOT = Path(__file__).with_name("presets_snapshot.json")


def test_presets_are_the_settings_the_stored_results_were_computed_with():
    """Store keys hash these dicts: a preset that changes orphans stored results, so a change must be
    deliberate (update the snapshot and recompute or migrate what it keys)."""
    snapshot = json.loads(SNAPSHOT.read_text())
    now = json.loads(json.dumps({c: {s: presets.as_dict(presets.preset(c, s)) for s in presets.SCALES}
                                 for c in presets.PRESETS}))
    assert now == snapshot
    lr = presets.preset("fourier", "paper").max_lr
    assert isinstance(lr, dict) and type(lr["lenet"]) is float


def test_typed_presets_are_frozen_and_optional_fields_stay_out():
    p = presets.preset("cifar10", "paper")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.eps = 1.0   # type: ignore[misc]
    assert p.recipe.schedule is None and "schedule" not in presets.as_dict(p)["recipe"]
    assert presets.as_dict(p)["nad_networks"] is None        # a None that is a value stays
    assert presets.preset("underspecification", "smoke").ood.recipe["mlp"].widths == [200, 50]


def test_overrides_change_named_fields_of_a_preset_and_nothing_else():
    smoke = presets.preset("fourier", "smoke")
    changed = presets.preset("fourier", "smoke", {"fourier": {"n": 200, "sigma": 1, "grid": {"step": 8}},
                                                  "nads": {"show": 1}})
    assert changed == dataclasses.replace(smoke, n=200, sigma=1.0, grid=dataclasses.replace(smoke.grid, step=8))
    assert type(changed.sigma) is float and presets.preset("fourier", "smoke") == smoke
    assert presets.preset("fourier", "smoke", {}) == smoke == presets.preset("fourier", "smoke", {"nads": {"show": 1}})
    recipe = presets.preset("underspecification", "smoke", {"underspecification": {
        "pairs": {"recipe": {"mlp": {"epochs": 1}}}, "ood": {"limit": 200}}})
    assert recipe.pairs.recipe["mlp"].epochs == 1 and recipe.ood.limit == 200   # a None replaced
    lenet = presets.preset("underspecification", "smoke").pairs.recipe["lenet"]
    assert recipe.pairs.recipe["lenet"] == lenet                                  # the others stay


@pytest.mark.parametrize("overrides, message", [
    ({"fourier": {"samples": 5}}, "overrides must name fields that fourier has (archs, grid, n,"),
    ({"fourier": {"grid": {"size": 5}}}, "overrides must name fields that fourier.grid has (name, step, limit)"),
    ({"fourier": {"n": 2.5}}, "overrides must give fourier.n a value of the type of 3000; got 2.5"),
    ({"fourier": {"archs": "lenet"}}, "overrides must give fourier.archs a value of the type of ['logreg', 'lenet']"),
    ({"fourier": {"grid": "paper"}}, "overrides must give fourier.grid a value of the type of {'name': 'coarse'"),
    ({"chapter1": {"n": 5}}, "overrides must be a dict {chapter: {field: value}} of the chapters fourier,"),
    ([1], "overrides must be a dict"),
    ({"underspecification": {"ood": {"dataset": "mnist"}}}, "dataset must be one of cifar10, digits, fashion"),
    # issue 58 item 9: values are checked, not only their types
    ({"fourier": {"n": -5}}, "overrides must give fourier.n a finite number >= 1 (as 3000); got -5"),
    ({"fourier": {"sigma": float("nan")}}, "overrides must give fourier.sigma a finite number >= 0 (as 0.75); got nan"),
    ({"fourier": {"archs": ["nosuch"]}}, "overrides must give fourier.archs architectures of the registry (logreg,"),
    ({"underspecification": {"pairs": {"indices": [0, 1000, -7]}}},                 # past the old list's length too
     "overrides must give underspecification.pairs.indices a finite number >= 0 (as 0); got -7"),
    # the re-probe: values only the chapter's code read started a kernel
    ({"underspecification": {"pairs": {"indices": [0, 99999]}}},
     "overrides must give underspecification.pairs.indices NAD"),
    ({"fourier": {"n": 3}}, "overrides must give fourier.n an even number of samples"),
    ({"fourier": {"kind": "tan"}}, 'overrides must give fourier.kind "sin" or "cos"'),
    # session 36: sigma 1e308 passed plan and overflowed in the kernel
    ({"fourier": {"sigma": 1e308}}, "overrides must give fourier.sigma a number within float32's range (1.18e-38 "
                                    "to 3.4e+38, or 0"),
    # the fourth adversarial pass: a number float32 rounds to 0, sizes refused only inside the kernel
    ({"fourier": {"sigma": 1e-300}}, "overrides must give fourier.sigma a number within float32's range"),
    ({"underspecification": {"ood": {"recipe": {"mlp": {"widths": [100000, 100000]}}}}},
     "overrides must give underspecification.ood.recipe.mlp.widths layers of at most 8,192 units"),
    ({"underspecification": {"pairs": {"selected": [[5000, 0]]}}},
     "overrides must give underspecification.pairs.selected pairs of NAD indices in [0, 1023]"),
    ({"antialias": {"nads": {"conv_sizes": [1]}}}, "overrides must give antialias.nads.conv_sizes numbers of networks"),
    ({"antialias": {"nads": {"conv_ks": [100000]}}}, "overrides must give antialias.nads.conv_ks subspace dimensions"),
    ({"underspecification": {"pairs": {"resolution": 100001}}},
     "overrides must give underspecification.pairs.resolution at most 401 points a side (published: 101)"),
    ({"fourier": {"epochs": 10 ** 9}}, "overrides must give fourier.epochs at most 100,000 epochs"),
    ({"fourier": {"n": 10 ** 22}}, "overrides must give fourier.n at most 2,000,000 samples"),
    ({"fourier": {"sigma": "abc"}}, "overrides must give fourier.sigma a value of the type of 0.75; got 'abc'"),
])
def test_bad_overrides_name_what_is_accepted(overrides, message):
    with pytest.raises(ValueError) as err:
        presets.check_overrides(overrides, "smoke")
    assert str(err.value).startswith(message)


def test_scalars_flatten_a_preset_for_prose():
    s = presets.scalars("fourier", "smoke")
    p = presets.preset("fourier", "smoke")
    assert (s["n"], s["sigma"], s["grid_step"], s["fig2_threshold"]) == (p.n, p.sigma, 4, p.fig2.threshold)
    assert s["archs_count"] == len(p.archs) and "max_lr" in s                        # a scalar max_lr stays
    assert "max_lr" not in presets.scalars("fourier", "paper")                          # by architecture: left out
    u = presets.scalars("underspecification", "paper")
    assert u["pairs_indices_count"] == 11 and not any(k.startswith("pairs_recipe") for k in u)
    assert presets.scalars("cifar10", "paper")["recipe_epochs"] == 50


# Minor page faults of filling a fresh 64 MiB tensor after a 96 MiB one was filled and freed, outside
# `kept_memory` and inside two nested blocks, measured in a fresh interpreter: glibc's thresholds are
# process state that the tests run before in the same worker move (its dynamic mmap threshold, a block
# left open), so the same process would measure what ran before, not `kept_memory` (issue 62).
_FAULTS = """
import json, resource, torch
from nadcore import device

def fill_after_free():
    torch.empty(96 << 18).fill_(1.0)   # float32: 96 << 18 elements, freed at once
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.empty(64 << 18).fill_(1.0)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

outside = fill_after_free()
with device.kept_memory():
    with device.kept_memory():
        inside = fill_after_free()
print(json.dumps({"outside": outside, "inside": inside}))
"""


def _faults_outside_and_inside():
    """`(outside, inside)`: the page faults of `_FAULTS`'s fill, run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMP_NUM_THREADS": "1"}, check=True).stdout
    faults = json.loads(out.splitlines()[-1])
    return faults["outside"], faults["inside"]


def _huge_pages_always():
    try:
        return "[always]" in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False


@pytest.mark.skipif(device._glibc() is None, reason="kept_memory changes glibc's malloc only")
@pytest.mark.skipif(_huge_pages_always(), reason="transparent huge pages always on: few faults either way")
def test_kept_memory_reuses_freed_memory_and_gives_it_back(monkeypatch):
    """Issue 43: within `kept_memory` memory freed stays with the process and serves a later allocation that
    fits in it without being faulted in anew (outside, glibc maps and unmaps a large tensor each time); blocks
    nest, and the outermost one restores glibc's thresholds and trims. (The same size again need not fit:
    glibc serves an aligned allocation from a slightly larger block. A forward pass's many sizes settle after
    its first networks: `benchmarks/nad_peers.py` counts the secant's faults.)"""
    outside, inside = _faults_outside_and_inside()
    assert outside > 64 * 256 * 0.9          # 4 KiB pages: every page of the fill faulted
    assert inside < outside / 10
    calls = []
    libc = type("Libc", (), {"mallopt": lambda *a: calls.append(a[1:]) or 1,
                             "malloc_trim": lambda *a: calls.append(("trim",)) or 1})()
    monkeypatch.setattr(device, "_glibc", lambda: libc)
    with device.kept_memory():
        with device.kept_memory():
            pass
        assert calls == [(device._M_MMAP_MAX, 0), (device._M_TRIM_THRESHOLD, 2 ** 31 - 1)]
    assert calls[2:] == [*device._AFTER.items(), ("trim",)]


def test_overrides_of_a_preset_the_chapter_does_not_read_are_refused():
    """Issue 58 item 9: Chapter 1 silently ignored `{nads: ...}`; each chapter names the presets it reads."""
    presets.check_overrides({"fourier": {"n": 500}}, "smoke", "01_fourier")
    with pytest.raises(ValueError, match=r"^overrides must change the presets 01_fourier reads \(fourier\); got nads"):
        presets.check_overrides({"nads": {"fig6_arch": "lenet"}}, "smoke", "01_fourier")
    presets.check_overrides({"fourier": {"n": 500}, "nads": {"fig6_arch": "lenet"}}, "smoke", "06_antialias")


def test_an_override_of_zero_is_taken_where_zero_means_something():
    """A momentum, a noise level or a weight decay may be set to 0; a count (samples, epochs) may not."""
    presets.check_overrides({"fourier": {"sigma": 0.0}}, "smoke")
    presets.check_overrides({"underspecification": {"pairs": {"recipe": {"lenet": {"momentum": 0.0}}}}}, "smoke")
    with pytest.raises(ValueError, match=r"^overrides must give fourier.n a finite number >= 1"):
        presets.check_overrides({"fourier": {"n": 0}}, "smoke")


def test_a_float_yaml_leaves_as_a_string_is_read_as_a_float():
    """YAML 1.1 (papermill's -p reads it) reads `1e-3` as a string: it was refused as a wrong type where a user
    means 0.001."""
    p = presets.preset("fourier", "smoke", {"fourier": {"sigma": "1e-3", "eps": "2E+0"}})
    assert p.sigma == 0.001 and p.eps == 2.0
    assert presets.preset("fourier", "smoke", {"fourier": {"sigma": ".5"}}).sigma == 0.5
