"""The run plan: every chapter at every scale resolves without computing, and counts what is stored."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import estimate_kw

from nadcore import catalog, chapters, fourier, plan, presets
from nadcore.experiments import ch1_fourier


@pytest.mark.parametrize("chapter", plan.CHAPTERS)
@pytest.mark.parametrize("scale", presets.SCALES)
def test_every_chapter_and_scale_resolves(chapter, scale, tmp_path):
    p = plan.chapter_plan(chapter, scale, results_dir=tmp_path)
    assert p.items and all(it.count >= 1 for it in p.items)
    assert all(it.stored == 0 for it in p.items if not it.name.startswith("NADs"))  # NADs: committed artifacts
    text = p.summary()
    assert chapter in text and scale in text and "total still to compute" in text
    assert not any(tmp_path.iterdir()), "planning must not compute or store anything"


def test_each_chapter_is_declared_once_and_registers_its_planner():
    """`chapters.PAGES` declares the pages; `plan.planner` registers one planner per planned chapter, and
    `presets.check_overrides` takes the presets a chapter declares it reads, and refuses the others."""
    assert set(plan.PLANNERS) == set(chapters.CHAPTERS) == {p.stem for p in chapters.PAGES if p.planned}
    assert len({p.stem for p in chapters.PAGES}) == len(chapters.PAGES) and chapters.page("07_zoo").title == "Chapter 7"
    with pytest.raises(ValueError, match="^chapter must be one of 01_fourier"):
        plan.planner("nads_in_practice")
    with pytest.raises(ValueError, match="^page must be one of"):
        chapters.page("09_nosuch")
    presets.check_overrides({"nads": {"num_networks": {"lenet": 250}}}, "smoke", "06_antialias")
    with pytest.raises(ValueError, match=r"^overrides must change the presets 02_pooling reads \(none\)"):
        presets.check_overrides({"fourier": {"n": 500}}, "smoke", "02_pooling")
    with pytest.raises(ValueError, match=r"reads \(none\)"):
        presets.check_overrides({"fourier": {"n": 500}}, "smoke", "my_own_notebook")


def test_paper_scale_chapters_ask_for_paper_nads(tmp_path):
    for chapter in ("04_cifar10", "05_underspecification"):
        nad_items = [it for it in plan.chapter_plan(chapter, "paper", results_dir=tmp_path).items
                     if it.name.startswith("NADs")]
        assert nad_items and all(it.count == 10000 and "secant" in it.what for it in nad_items), chapter


def test_plan_counts_stored_cells(tmp_path):
    p = presets.preset("fourier", "smoke")
    settings = ch1_fourier.sweep_settings(p, 0, "cpu")
    grid = fourier.make_grid(p.grid)
    cells = grid.half()[:2]
    from nadcore import sweeps
    sweeps.sweep("fig1", ch1_fourier.sweep_cells(["logreg"], fourier.Grid(grid.freqs), True)[:2],
                 lambda group: [{"test_acc": np.float64(1.0)} for _ in group], settings, tmp_path / "fourier",
                 progress=False)
    item = next(it for it in plan.chapter_plan("01_fourier", "smoke", results_dir=tmp_path).items
                if it.name == "fig1 logreg")
    assert (item.stored, item.count) == (len(cells), len(grid.half()))
    assert item.cost_s == pytest.approx((item.count - item.stored) * item.seconds_each)


def test_bad_chapter_is_one_line():
    with pytest.raises(ValueError, match="chapter must be one of 01_fourier"):
        plan.chapter_plan("06_nothing", "smoke")


def test_plan_counts_every_seed_of_fig1(tmp_path):
    one = plan.chapter_plan("01_fourier", "smoke", results_dir=tmp_path)
    three = plan.chapter_plan("01_fourier", "smoke", results_dir=tmp_path, num_seeds=3)
    fig1 = [it for it in three.items if it.name.startswith("fig1 lenet")]
    assert [it.name for it in fig1] == ["fig1 lenet seed 1", "fig1 lenet seed 2", "fig1 lenet seed 3"]
    assert sum(it.cost_s for it in three.items) > sum(it.cost_s for it in one.items)
    with pytest.raises(ValueError, match=r"num_seeds must be an integer in \[1, 1000\]"):
        plan.chapter_plan("01_fourier", "smoke", num_seeds=0)


def _item(chapter, name, results, scale="smoke", seed=0):
    return next(it for it in plan.chapter_plan(chapter, scale, seed=seed, results_dir=results).items
                if it.name == name)


def test_plan_counts_pooling_results_only_when_their_records_match(tmp_path, monkeypatch):
    """Chapter 2 stores its results through `ch2_pooling.chapter_results` (the heavy computations are
    replaced here by instant ones: the files, names and records are the chapter's own). A plan counts
    them only for the scale and seed they were made with, and never a corrupted file (issue 41 item 2)."""
    from nadcore import pooling
    from nadcore.experiments import ch2_pooling

    monkeypatch.setattr(pooling, "loss_curves", lambda *a, **k: np.zeros((4, 3, 5)))
    monkeypatch.setattr(pooling, "theorem1_check",
                        lambda *a, **k: {f: np.zeros(3) for f in ch2_pooling.Theorem1Check._fields})
    monkeypatch.setattr(pooling, "lemma1_check",
                        lambda *a, **k: {f: np.zeros((2, 2)) for f in ch2_pooling.Lemma1Check._fields})
    ch2_pooling.chapter_results(presets.preset("pooling", "smoke"), seed=0, results_dir=tmp_path, progress=False)
    stored = lambda **kw: [(it.stored, it.count) for it in plan.chapter_plan("02_pooling", results_dir=tmp_path,
                                                                               **kw).items]
    assert stored(scale="smoke", seed=0) == [(1, 1), (2, 2)]
    assert stored(scale="smoke", seed=7) == [(0, 1), (0, 2)]        # a run with seed 7 recomputes everything
    assert stored(scale="paper", seed=0) == [(0, 1), (0, 2)]
    fig4b = next((tmp_path / "pooling").glob("fig4b_*.npz"))
    fig4b.write_bytes(fig4b.read_bytes()[:200])                       # cut: unreadable
    assert stored(scale="smoke", seed=0) == [(0, 1), (2, 2)]
    assert "upper bound" not in plan.chapter_plan("02_pooling", "smoke", results_dir=tmp_path).summary()


def test_plan_counts_underspec_cells_by_their_records_as_an_upper_bound(tmp_path, monkeypatch):
    """Chapter 5's cells are stored by `pair_grid` (training replaced by an instant stand-in): a plan
    counts the cells whose records agree with the run's settings, not the files in the folder, and
    says the count is an upper bound (the records also fingerprint the NADs, which a plan does not load)."""
    from nadcore.experiments import ch5_underspec as underspec

    def cells(arch, nads, settings, group, device="cpu"):
        r = settings.resolution
        return [{"accuracy": np.zeros(3), "train_accuracy": np.zeros(()), "section": np.zeros((r, r))}
                for _ in group]

    monkeypatch.setattr(underspec, "pair_cells", cells)
    P = underspec.chapter_settings("smoke", 0)
    nads = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    assert underspec.pair_grid("lenet", nads, P.pairs, tmp_path, device="cpu", progress=False) is not None
    folder = tmp_path / "underspec_pairs_lenet"
    files = sorted(folder.glob("*.npz"))
    item = _item("05_underspecification", "fig2 lenet", tmp_path)
    assert (item.stored, item.count) == (len(files), len(files)) and item.stored_upper_bound
    assert "stored (upper bound)" in plan.chapter_plan("05_underspecification", "smoke", results_dir=tmp_path).summary()
    assert _item("05_underspecification", "fig2 lenet", tmp_path, seed=7).stored == 0
    assert _item("05_underspecification", "fig2 mlp", tmp_path).stored == 0   # another arch's folder is empty
    files[0].write_bytes(b"not a zip")
    (folder / "copy.npz").write_bytes(files[1].read_bytes())                  # a second file of one cell
    assert _item("05_underspecification", "fig2 lenet", tmp_path).stored == len(files) - 1


def test_plan_counts_chapter4_runs_by_their_records(tmp_path, monkeypatch):
    """Chapter 4's runs (`poisoning_curve`, training replaced by an instant stand-in) count for their
    architecture, seed and recipe only, as an upper bound."""
    import torch

    from nadcore.experiments import ch4_cifar10

    monkeypatch.setattr(ch4_cifar10, "poisoning_run", lambda *a, **k: {
        "train_acc": np.float64(1), "test_acc": np.float64(1), "follow_rate": np.float64(0)})
    p = presets.preset("cifar10", "smoke")
    x = torch.zeros(4, 3, 32, 32)
    y = torch.arange(4)
    nads = torch.eye(1024)
    ch4_cifar10.poisoning_curve(p.arch, (x, y), (x, y), nads, p.indices[:3], p.eps, [0.0] * 3, [1.0] * 3,
                                p.recipe, device="cpu", seed=0, results_dir=tmp_path, progress=False)
    item = _item("04_cifar10", f"fig7 {p.arch}", tmp_path)
    assert (item.stored, item.count, item.stored_upper_bound) == (4, len(p.indices) + 1, True)
    assert _item("04_cifar10", f"fig7 {p.arch}", tmp_path, seed=7).stored == 0
    assert _item("04_cifar10", f"fig7 {p.arch}", tmp_path, scale="medium").stored == 0


# ----------------------------------------------------------------------------- issue 40 item 6

BUNDLE = plan.BUNDLE


@pytest.fixture
def no_gpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_a_gpu_plan_is_made_without_a_gpu_from_the_bundles_gpu_records(tmp_path, no_gpu):
    """`--device cuda` was refused on a machine without a GPU, where a user plans before renting one."""
    from nadcore import store

    rates = plan.gpu_rates(BUNDLE)
    records = [store.load(p).record for p in sorted(BUNDLE.glob("nads/densenet121_*.npz"))]
    gpu, = [r for r in records if r["device"] == "cuda" and r["settings"]["method"] == "secant"]
    each = gpu["duration_s"] / gpu["settings"]["num_networks"]
    assert rates["nads"][("densenet121", "secant", "float32", False)] == pytest.approx(each)
    assert "vgg11_bn" in rates["train"] and gpu["machine"] in rates["gpus"]
    p = plan.chapter_plan("03_nads", "paper", device="cuda", results_dir=tmp_path, bundle_dir=BUNDLE)
    assert p.device == "cuda" and p.rates.startswith("GPU rates from the bundle's GPU records: ")
    dense, = [it for it in p.items if it.name == "NADs densenet121"]
    assert dense.cost_s == pytest.approx(10000 * each)
    lenet = [it for it in p.items if it.name == "NADs lenet"][0]
    assert lenet.cost_s is None and lenet.in_bundle == lenet.count == 10000  # no GPU record of LeNet's NADs
    text = p.summary()
    assert "10000/10000  in the bundle" in text and f"-p results_dir {BUNDLE} reads them" in text
    assert not any(tmp_path.iterdir())
    with pytest.raises(ValueError, match="device"):
        plan.chapter_plan("03_nads", "paper", device="gpu", results_dir=tmp_path)


def test_a_plan_lists_estimates_of_the_same_network_under_other_settings(tmp_path):
    from nadcore import nads

    res = estimate_kw("logreg", 3, method="autograd", progress=False)
    res.save(nads.result_path("logreg", res.settings, tmp_path))
    p = plan.chapter_plan("03_nads", "paper", results_dir=tmp_path, bundle_dir=BUNDLE)
    item, = [it for it in p.items if it.name == "NADs logreg"]
    other = "eig_threads 1, method 'autograd', num_networks 3, step None"   # what differs (paper: eig_threads None)
    assert item.stored == 0 and any(other in o for o in item.others)
    assert f"also stored: {other} ({tmp_path}" in p.summary()


def test_cli_plans_for_a_gpu_from_the_checkout(no_gpu, capsys):
    """`nadcore plan 03_nads --scale paper --device cuda`, the README's example, run from the checkout:
    the bundle beside the book is found and its GPU records price the items."""
    from conftest import ROOT

    from nadcore import cli

    assert cli.main(["plan", "03_nads", "--scale", "paper", "--device", "cuda", "--book-dir", str(ROOT / "book")]) == 0
    out = capsys.readouterr().out
    assert "on cuda (GPU rates from the bundle's GPU records: NVIDIA" in out and "in the bundle" in out


def test_the_rates_plan_prices_with_are_dated_and_sourced_and_benchmarks_rewrite_them(tmp_path, monkeypatch):
    import json
    import sys

    from nadcore import catalog, plan

    tables = json.loads(catalog.RATES_FILE.read_text())
    for name in ("train_s", "nad_s", "nad_s_bfloat16", "nad_s_compiled"):
        for key, entry in tables[name].items():
            assert entry["s"] > 0 and entry["measured"][:2] == "20" and entry["source"], (name, key)
    assert plan.NAD_S[("lenet", "secant")] == tables["nad_s"]["lenet/secant"]["s"]
    assert set(catalog.NAD_S_COMPILED) <= set(catalog.ARCHS) and set(catalog.NAD_S_BFLOAT16) <= set(catalog.ARCHS)
    copy = tmp_path / "rates.json"
    copy.write_text(catalog.RATES_FILE.read_text())
    monkeypatch.setattr(catalog, "RATES_FILE", copy)
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "benchmarks"))
    sys.modules.pop("rates", None)
    import rates

    rates.write({("nad_s", "lenet/secant"): 0.0123456}, "a test")
    entry = json.loads(copy.read_text())["nad_s"]["lenet/secant"]
    assert entry["s"] == 0.0123 and "a test" in entry["source"]
    assert catalog.load_rates(copy).nad_s[("lenet", "secant")] == 0.0123
    with pytest.raises(ValueError, match="table must be one of"):
        rates.write({("nad_seconds", "lenet/secant"): 1.0}, "a test")


def test_a_network_no_gpu_has_trained_is_priced_by_its_flops(tmp_path):
    """`catalog.TRAIN_GFLOP` is what `plan.train_gflop` counts now (LeNet and ResNet-18 recounted); a GPU cell of a
    network without GPU records costs its FLOPs at the TFLOP/s the bundle's GPU reports measured (`gpu_costs`)."""
    for arch in ("lenet", "resnet18"):
        assert plan.train_gflop(arch) == pytest.approx(catalog.TRAIN_GFLOP[arch], rel=1e-5)
    report = {"gpu": "a GPU", "cells": [{"tflops": 8.0}, {"tflops": 10.0}, {"tflops": 12.0}]}
    (tmp_path / "fourier").mkdir()
    (tmp_path / "fourier" / "fig1_x_gpu.json").write_text(json.dumps(report))
    assert plan.train_cost("cuda", "resnet18", 20000, 20) is None               # outside: no GPU rates
    with plan.gpu_costs(tmp_path) as rates:
        assert rates["tflops"] == 10.0 and rates["gpus"] == ["a GPU"]
        step, image = catalog.TRAIN_GFLOP["resnet18"]
        seconds = (10000 * 20 * step + 20000 * image) / 1e4
        assert plan.train_cost("cuda", "resnet18", 20000, 20) == pytest.approx(seconds)
        assert plan.train_cost("cuda", "resnet18", 20000, 20, pooling=False) is None   # no count without pooling
    assert not plan._GPU


def test_plan_reads_past_a_truncated_file_and_a_foreign_record(tmp_path):
    """Issue 58 item 8: a truncated `.npz` in results_dir/nads (`zipfile.BadZipFile`) and a record whose settings are
    a string (`AttributeError`) crashed `plan`; both are not results, so the plan counts them as nothing stored."""
    nads_dir = tmp_path / "nads"
    nads_dir.mkdir()
    stored = next((Path(plan.BUNDLE) / "nads").glob("lenet_*.npz"))
    (nads_dir / "lenet_cut.npz").write_bytes(stored.read_bytes()[:300])
    np.savez(nads_dir / "lenet_text.npz", __record__=np.frombuffer(json.dumps({"settings": "abc"}).encode(), np.uint8))
    p = plan.chapter_plan("03_nads", "smoke", results_dir=tmp_path)
    assert p.items and all(it.stored == 0 for it in p.items if it.name.startswith("NADs"))
    assert plan.other_estimates("lenet", {"arch": "lenet"}, [tmp_path]) == []
