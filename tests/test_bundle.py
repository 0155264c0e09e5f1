"""The results bundle: its loaders and comparisons, and proof that its numbers are what the code computes.

The recomputation tests take random stored items (drawn by the `rng` fixture: the same items on
every run, others with `NADBOOK_DRAW_SEED`) of the committed bundle (a Fig. 1 cell, a chunk
of a NAD estimate, a Fig. 6 index, a run of Chapter 4, a cell of the follow-up's Fig. 2 and of its
Fig. 3, a result of Chapter 2's paper preset; Chapter 4 and Fig. 3 on the digits or on
Fashion-MNIST) and require them to be bitwise equal to a fresh computation: tolerance zero, because every stored item is
batch-invariant (`tests/test_reproducible.py`) and the test runs with the record's thread count
on the CPU the bundle was computed on (`bundle.machine_of`).
On another CPU family the kernels round differently and SGD drifts; there the test only checks
the first steps (rtol 1e-3) and the final accuracy (within 10 points) of a cell.
Four kinds take a minute or more each here (a whole run, the precision check, VGG-11's kept chunk, a GPU
estimate's network: `conftest.MINUTE_LONG`): `make test` runs the one drawn, `make verify` every one.
"""

import dataclasses
import itertools
import re

import numpy as np
import pytest
import torch
from conftest import REPLAY_STEPS, ROOT, estimate_kw

from nadcore import bundle, cifar, cli, fourier, models, nads, paths, plan, presets, published, store, sweeps, train
from nadcore.experiments import ch1_fourier, ch3_nads, ch4_cifar10
from nadcore.experiments import ch2_pooling as pooling_chapter
from nadcore.experiments import ch5_underspec as underspec
from nadcore.experiments import ch6_antialias as antialias
from nadcore.plots import style


@pytest.fixture
def record_threads():
    before = torch.get_num_threads()
    yield lambda record: torch.set_num_threads(int(record.get("threads") or before))
    torch.set_num_threads(before)


def test_fig1_comparison_reads_stored_cells(tmp_path):
    archs, grid, settings, pooling = bundle.fourier_item("fig1")
    pub = published.fig1("lenet")
    cells = [c for c in ch1_fourier.sweep_cells(["lenet"], grid, pooling)][:5]
    sweeps.sweep("fig1", cells, lambda group: [{"test_acc": np.float64(pub[(c["kx"], c["ky"])] + 1.0)} for c in group],
                 settings, tmp_path / "fourier", progress=False)
    out, g = bundle.fig1_comparison(tmp_path)
    assert g.freqs == fourier.paper_grid().freqs
    lenet = out["lenet"]
    assert (lenet.stored, lenet.cells) == (5, 130)
    diff = lenet.stats.difference
    assert all(diff[(c["kx"], c["ky"])] == pytest.approx(1.0) for c in cells)   # one point above, cell by cell
    assert out["logreg"].stats is None and out["resnet18"].stored == 0
    assert bundle.provenance(lenet.records).startswith("5 stored item(s) computed on cpu")


def test_remaining_counts_stored_cells_and_costs_the_rest(tmp_path):
    empty = bundle.fourier_remaining("fig1", tmp_path)
    assert empty[:2] == (0, 260) and empty[2] > 0
    archs, grid, settings, pooling = bundle.fourier_item("fig1")
    cells = ch1_fourier.sweep_cells(["logreg"], grid, pooling)[:5]
    sweeps.sweep("fig1", cells, lambda group: [{"test_acc": np.float64(100.0)} for _ in group], settings,
                 tmp_path / "fourier", progress=False)
    done, total, left = bundle.fourier_remaining("fig1", tmp_path)
    assert (done, total) == (5, 260) and left == pytest.approx(empty[2] * 255 / 260)
    assert bundle.status("fig1", tmp_path).startswith("fig1 (logreg, lenet): 5 of 260 cells stored; ")
    assert bundle.pooling_remaining(tmp_path) > 0   # Chapter 2's paper preset: nothing stored there


def stored_fourier_cells():
    """`[(label, pooling, cell, arrays, record)]` of every stored Fig. 1 cell: Chapter 1's
    architectures, the sigma study's other noise levels and seeds, and Chapter 6's LeNet variants."""
    archs, grid, settings, pooling = bundle.fourier_item("fig1")
    table, _, _, records = bundle.load_fourier("fig1")
    out = [(a, pooling, c, v, rec) for a in table for (c, v), rec in zip(table[a].items(), records[a])]
    for sigma, r in bundle.sigma_runs(bundle.load_sigma_study()[0]):
        if (sigma, r) != (bundle.SIGMA_STUDY.caption, 0):   # that one is Fig. 1
            t, recs = ch1_fourier.stored_directions(["lenet"], grid, bundle.sigma_settings(sigma, r),
                                                    bundle.BUNDLE / "fourier", pooling, name="fig1")
            out += [(f"lenet/sigma={sigma:g}/seed {r}", pooling, c, arr, rec)
                    for (c, arr), rec in zip(t.get("lenet", {}).items(), recs.get("lenet", []))]
    aa_grid = fourier.make_grid(presets.preset("antialias", "paper").grid)
    for v in antialias.VARIANTS[1:]:
        t, recs = ch1_fourier.stored_directions(["lenet"], aa_grid, settings, bundle.BUNDLE / "fourier",
                                                antialias.pooling_arg(v), name="antialias")
        out += [(f"lenet/{v}", antialias.pooling_arg(v), c, arr, rec)
                for (c, arr), rec in zip(t.get("lenet", {}).items(), recs.get("lenet", []))]
    return settings, out


def precision_of(record):
    """The precision a stored cell was trained in: its settings' `precision` (float32 where none is named)."""
    settings = record["settings"]
    while "settings" in settings and "precision" not in settings:
        settings = settings["settings"]
    return settings.get("precision", "float32")


def assert_recomputed(fresh, stored, record, replay, label):
    """`fresh` arrays are the `stored` ones of a trained cell: bitwise on the CPU of its record, all of
    them or, replayed for `replay` steps, the first `replay` losses. On another CPU family the kernels
    round differently and SGD drifts: the first loss (the same network on the same data) agrees to
    the rounding of the cell's precision (a bfloat16 cell's kernels differ most between CPUs with and
    without bfloat16 instructions: 2.6e-4 between an AMD EPYC and an Intel Xeon), the first steps nearly
    (VGG-11 with batch norm at max_lr 0.5 drifts by 2 % within 20 steps, in float32 as in bfloat16),
    and a whole run's test accuracy within 10 points."""
    if bundle.machine_of(record) == store.machine():
        names = ["loss_history"] if replay is not None else list(stored)
        for name in names:
            want = stored[name][:replay] if name == "loss_history" and replay is not None else stored[name]
            np.testing.assert_array_equal(fresh[name], want, err_msg=f"{label} {name}")
        return
    if "loss_history" in stored:
        steps = min(20, len(fresh["loss_history"]))
        rounding = 2.0 ** -8 if precision_of(record) == "bfloat16" else 1e-5   # bfloat16's unit roundoff
        assert fresh["loss_history"][0] == pytest.approx(stored["loss_history"][0], rel=rounding), label
        np.testing.assert_allclose(fresh["loss_history"][:steps], stored["loss_history"][:steps], rtol=0.05,
                                   err_msg=label)
    if replay is None:
        assert abs(float(fresh["test_acc"]) - float(stored["test_acc"])) < 10, label


def recompute_fig1_cell(label, arch, pooling, cell, stored, record, replay):
    """Retrain a stored Fig. 1 cell with its record's settings (the first `replay` steps, or all) and check it."""
    print(f"recomputing Fig. 1 cell {label} {cell}" + ("" if replay is None else f", its first {replay} steps"))
    settings = record["settings"]["settings"]   # the cell's own: Fig. 1's, or the sigma study's sigma and seed
    fresh = ch1_fourier.train_directions(arch, [cell], settings, pooling, stop_after=replay)[0]
    assert_recomputed(fresh, stored, record, replay, f"{label} {cell}")


@pytest.mark.slow
def test_a_random_stored_fig1_cell_recomputes_bitwise(rng, record_threads, replay):
    settings, cells = stored_fourier_cells()
    if not cells:
        pytest.skip("the bundle holds no Fig. 1 cell yet")
    label, pooling, cell, stored, record = rng.choice(cells)
    record_threads(record)
    recompute_fig1_cell(label, "lenet" if label.startswith("lenet") else label, pooling, cell, stored, record, replay)


def test_the_start_of_a_random_stored_fig1_cell_replays_bitwise(rng, record_threads):
    """The fast tier's recomputation: a Fig. 1 cell of LogReg or LeNet, its first `REPLAY_STEPS` steps."""
    settings, cells = stored_fourier_cells()
    if not cells:
        pytest.skip("the bundle holds no Fig. 1 cell yet")
    label, pooling, cell, stored, record = rng.choice(cells)
    record_threads(record)
    arch = "lenet" if label.startswith("lenet") else label
    recompute_fig1_cell(label, arch, pooling, cell, stored, record, REPLAY_STEPS)


def recompute_fig6_index(rng, record_threads, tmp_path):
    """A LeNet Fig. 6 cell: at the published sigma or the sigma study's best, along its secant or its
    exact-gradient NADs, of any seed (`bundle.FIG6_NADS`; LeNet's secant seed 0 is `fig6` / `fig6_sigma`)."""
    names = [n for n, (item, *_) in bundle.FIG6_NADS.items() if item == "fig6" and bundle.load_fig6(name=n)]
    if not names:
        pytest.skip("the bundle holds no Fig. 6 cell yet")
    name = rng.choice(names)
    arch, _, settings = bundle.fig6_item(name=name)
    stored, records = bundle.load_fig6(name=name), bundle.fig6_records(name=name)
    index = rng.choice(sorted(stored))
    record_threads(records[index])
    print(f"recomputing {name} at NAD index {index}")
    kw = {k: v for k, v in settings.items() if k != "seed"}
    fresh = ch3_nads.accuracy_on_nads(arch, bundle.fig6_basis(name), [index],
                                      seed=settings["seed"], device="cpu", progress=False, **kw)[0]
    if bundle.machine_of(records[index]) == store.machine():
        assert fresh == stored[index]
    else:
        assert abs(fresh - stored[index]) < 10


def recompute_ood_cell(rng, record_threads, tmp_path):
    """A cell of the follow-up's Fig. 3 on the digits or on Fashion-MNIST (the dataset drawn first, so
    both are covered; a Fashion-MNIST cell trains a whole stack: ~3-4 min of a 2-core CPU)."""
    stored = {}
    for path in sorted(bundle.BUNDLE.glob("underspec_ood_*/*.npz")):
        stored.setdefault(store.load(path).record["settings"]["settings"]["dataset"], []).append(path)
    if not fashion_files_here():
        stored.pop("fashion", None)   # its cells need the images (Debian's dataset-fashion-mnist)
    if not stored:
        pytest.skip("the bundle holds no cell of the follow-up's Fig. 3 yet (or no Fashion-MNIST here)")
    dataset = rng.choice(sorted(stored))
    picked = store.load(rng.choice(stored[dataset]))
    record, stored_arrays = picked.record, picked.arrays
    arch, cell = record["settings"]["settings"]["arch"], record["settings"]["cell"]
    record_threads(record)
    print(f"recomputing the follow-up's Fig. 3 cell {cell} of {arch} on {dataset}")
    settings = dataclasses.replace(bundle.ood_item(dataset), indices=[cell["k"]], seeds=[cell["seed"]])
    fresh = underspec.ood_grid(arch, bundle.load_nad(arch), settings, tmp_path, bundle.DATA, device="cpu",
                               progress=False)
    if bundle.machine_of(record) == store.machine():
        np.testing.assert_array_equal(fresh.accuracy[0, 0], stored_arrays["accuracy"])
        np.testing.assert_array_equal(fresh.train_accuracy[0, 0], stored_arrays["train_accuracy"])
    else:
        assert np.abs(fresh.accuracy[0, 0] - stored_arrays["accuracy"]).max() < 10


def recompute_pair_cell(rng, record_threads, tmp_path):
    """A cell of the follow-up's Fig. 2 (LeNet or the MLP, one NAD index pair and seed: up to ~2 min)."""
    paths = sorted(bundle.BUNDLE.glob("underspec_pairs_*/*.npz"))
    if not paths:
        pytest.skip("the bundle holds no cell of the follow-up's Fig. 2 yet")
    picked = store.load(rng.choice(paths))
    record, stored_arrays = picked.record, picked.arrays
    arch, cell = record["settings"]["settings"]["arch"], record["settings"]["cell"]
    record_threads(record)
    print(f"recomputing the follow-up's Fig. 2 cell {cell} of {arch}")
    fresh = underspec.pair_cells(arch, bundle.load_nad(arch), bundle.pairs_item(), [cell], "cpu")[0]
    if bundle.machine_of(record) == store.machine():
        for name, value in stored_arrays.items():
            np.testing.assert_array_equal(fresh[name], value, err_msg=f"{arch} {cell} {name}")
    else:
        assert np.abs(fresh["accuracy"] - stored_arrays["accuracy"]).max() < 10


@pytest.mark.slow
def test_a_random_stored_pooling_result_recomputes_bitwise(rng, record_threads, tmp_path):
    """One of Chapter 2's paper-preset results (Fig. 4b's runs, Theorem 1's or Lemma 1's check: < 1 min)."""
    stored = bundle.load_pooling()
    if stored is None:
        pytest.skip("the bundle holds no result of Chapter 2's paper preset yet")
    part, cfg = rng.choice(pooling_chapter.PARTS), presets.preset("pooling", "paper")
    kept = pooling_chapter.part_result(cfg, part, bundle.SEED, bundle.BUNDLE, compute=False)
    record = kept.record
    record_threads(record)
    print(f"recomputing Chapter 2's {part} at the paper preset")
    fresh = pooling_chapter.part_result(cfg, part, bundle.SEED, tmp_path, "cpu", progress=False).arrays
    for name, value in kept.arrays.items():
        if bundle.machine_of(record) == store.machine():
            np.testing.assert_array_equal(fresh[name], value, err_msg=f"{part} {name}")
        else:
            np.testing.assert_allclose(fresh[name], value, rtol=1e-3, atol=1e-3, err_msg=f"{part} {name}")


def fashion_files_here():
    """True when Fashion-MNIST can be read here (Debian's package, or its files in `bundle.DATA`)."""
    try:
        cifar.load("fashion", bundle.DATA, train=False, limit=1)
    except ValueError:
        return False
    return True


def chapter4_runs():
    """`{dataset: (settings, train, test, [paths])}` of Chapter 4's stored runs (`bundle.cifar_item`)
    whose data can be read here, told apart by the fingerprint of the data in their record."""
    out = {}
    records = {path: store.load(path).record["settings"] for path in sorted((bundle.BUNDLE / "cifar10").glob("*.npz"))}
    for dataset in bundle.STAND_INS:
        if dataset == "fashion" and not fashion_files_here():
            continue
        p = bundle.cifar_item(dataset)
        train, test = (cifar.load(p.dataset, bundle.DATA, train=t, seed=bundle.SEED) for t in (True, False))
        data = store.fingerprint(*train, *test)
        paths = [path for path, s in records.items() if s["data"] == data]
        if paths:
            out[dataset] = (p, train, test, paths)
    return out


def recompute_chapter4_run(rng, record_threads, tmp_path):
    """A run of Chapter 4's Fig. 7 or Fig. 8 on the digits or on Fashion-MNIST (the dataset drawn first;
    a Fashion-MNIST LeNet run: ~150 s of a 2-core CPU)."""
    runs = chapter4_runs()
    if not runs:
        pytest.skip("the bundle holds no run of Chapter 4 yet")
    dataset = rng.choice(sorted(runs))
    p, train, test, paths = runs[dataset]
    path = rng.choice(paths)
    picked = store.load(path)
    s, record = picked.record["settings"], picked.record
    record_threads(record)
    print(f"recomputing Chapter 4's run {path.name} on {dataset}")
    u = cifar.as_nads(bundle.load_nad(s["arch"]).nads, train[0])
    assert store.fingerprint(u) == s["nads"] and s["recipe"] == presets.as_dict(p.recipe)
    if path.name.startswith("poison-"):
        index = None if s["index"] == -1 else s["index"]
        fresh = ch4_cifar10.poisoning_run(s["arch"], train, test, u, index, s["eps"], s["mean"], s["std"],
                                          s["recipe"], device="cpu", seed=s["seed"])
    else:
        fresh = ch4_cifar10.flip_run(s["arch"], train, test, u, s["kind"], s["recipe"], device="cpu", seed=s["seed"])
    if bundle.machine_of(record) == store.machine():
        for name, value in picked.arrays.items():
            np.testing.assert_array_equal(fresh[name], value, err_msg=f"{path.name} {name}")
    else:
        assert abs(float(fresh["test_acc"]) - float(picked.arrays["test_acc"])) < 10


# Trained cells that store no loss history are retrained to the end: a few minutes each on a 2-core CPU
WHOLE_RUNS = {"fig6": recompute_fig6_index, "ood": recompute_ood_cell, "pairs": recompute_pair_cell,
              "chapter4": recompute_chapter4_run}


@pytest.mark.slow
def test_a_random_stored_whole_run_recomputes_bitwise(rng, record_threads, tmp_path, minute_long):
    """One kind of `WHOLE_RUNS` drawn, then one of its stored cells retrained (`make verify` also
    retrains a cell of every kind)."""
    minute_long("whole_run")
    kind = rng.choice(sorted(WHOLE_RUNS))
    print(f"drawn: {kind}")
    WHOLE_RUNS[kind](rng, record_threads, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(WHOLE_RUNS))
def test_a_random_stored_run_of_each_kind_recomputes_bitwise(kind, rng, record_threads, tmp_path, replay):
    if replay is not None:
        pytest.skip("every kind of whole run is retrained by `make verify` (--full-replay)")
    WHOLE_RUNS[kind](rng, record_threads, tmp_path)


def test_fashion_items_are_their_own_settings_and_read_none_while_missing(tmp_path, monkeypatch):
    assert bundle.cifar_item() == presets.preset("cifar10", "smoke")       # the digits item, as before
    fashion = bundle.cifar_item("fashion")
    assert fashion.dataset == "fashion" and fashion.arch == "lenet" and fashion != bundle.cifar_item()
    ood = bundle.ood_item("fashion")
    digits = bundle.ood_item()
    assert (ood.dataset, digits.dataset, digits.limit) == ("fashion", "digits", None)
    assert ood.seeds == digits.seeds and set(ood.indices) <= set(digits.indices)
    for bad in (lambda: bundle.cifar_item("cifar10"), lambda: bundle.ood_item("mnist")):
        with pytest.raises(ValueError, match="^dataset must be one of digits, fashion; got"):
            bad()
    assert bundle.cifar(tmp_path, dataset="fashion") is None                # no NADs, no runs
    assert bundle.underspec("ood", "lenet", tmp_path, dataset="fashion") is None
    for item in ("cifar_fashion", "underspec_ood_fashion"):
        assert bundle.status(item, tmp_path) == (f"{item}: not complete; `python -m nadcore.bundle {item} "
                                                 f"--bundle-dir {tmp_path}` computes the rest")
    monkeypatch.setattr(cifar, "FASHION_DEBIAN", tmp_path / "no-package")
    if bundle.load_nad("lenet") is not None and bundle.load_nad("logreg") is not None:
        assert bundle.cifar(dataset="fashion", data_root=tmp_path / "empty") is None   # no images: None
        with pytest.raises(ValueError, match="apt-get install dataset-fashion-mnist"):
            bundle.cifar(dataset="fashion", data_root=tmp_path / "empty", compute=True)


@pytest.mark.slow
def test_a_random_stored_nad_chunk_recomputes_bitwise(rng, record_threads):
    """Any stored estimate whose chunk of 125 networks recomputes in about two minutes or less on
    this CPU (`plan.NAD_S`): every exact-gradient one, the secant of the small networks."""
    from nadcore import plan

    archs = bundle.NAD_ARCHS + bundle.GPU_NAD_ARCHS + bundle.ZOO_ARCHS
    stored = [(a, m, r) for a in archs for m in ("secant", "autograd") if (r := bundle.load_nad(a, m)) is not None
              and (plan.nad_seconds(a, m, r.settings.get("precision", "float32"), r.settings.get("compiled", False))
                   or 1e9) * nads.CHUNK < 150]
    if not stored:
        pytest.skip("the bundle holds no NADs yet")
    arch, method, result = rng.choice(stored)
    j = rng.randrange(len(result.chunks["ranges"]))
    (a, b), digest = result.chunks["ranges"][j], result.chunks["digests"][j]
    record_threads(result.record)
    print(f"recomputing chunk [{a}, {b}) of the {method} NADs of {arch}")
    s = result.settings
    x0 = nads.eval_point_for(s["seed"], tuple(s["input_shape"]))
    factory = lambda: models.build(arch, num_classes=1)
    estimator = nads.EstimateSettings(method, s["step"] or 100.0, s["seed"], s["input_shape"],
                                      precision=s.get("precision", "float32"),
                                      compiled=s.get("compiled", False))   # the default batch on a CPU
    chunk = nads.chunk_moments(factory, estimator, x0, int(a), int(b))
    machines = result.chunks.get("machines")   # a resumed estimate's chunks may come from several CPUs
    if (bundle.machine_of(result.record) if machines is None else str(machines[j])) == store.machine():
        assert store.fingerprint(chunk["mean"], chunk["m2"]) == digest
    elif "traces" in result.chunks:   # another CPU family: the chunk's total variance, to its arithmetic
        rtol = 2e-2 if s.get("precision", "float32") != "float32" else 1e-3
        np.testing.assert_allclose(np.trace(chunk["m2"]), result.chunks["traces"][j], rtol=rtol)
    else:   # another CPU, an estimate stored before the traces: the chunk's share of the total variance
        # is its share of the networks (within 10 % for every stored estimate, 4 chunks each, measured)
        share = np.trace(chunk["m2"]) / (s["num_networks"] - 1) / result.eigenvalues.sum()
        assert chunk["count"] == b - a and abs(share * s["num_networks"] / (b - a) - 1) < 0.25


def test_committed_lenet_nads_agree_with_the_published_ones():
    overlaps = bundle.nad_overlaps([1, 4, 16, 64])
    if ("lenet", "secant") not in overlaps:
        pytest.skip("the bundle holds no LeNet NADs yet")
    assert overlaps[("lenet", "secant")][0] > 0.9      # measured 0.99: same leading NAD (random: 1/1023)
    assert overlaps[("lenet", "secant")][-1] > 0.5     # measured 0.90 at k = 64 (random: 0.06)
    assert overlaps[("logreg", "secant")][-1] < 0.2    # LogReg is isotropic: its NADs are arbitrary
    assert all(a in published.ARCHS for a, _ in overlaps)  # no MLP: the authors published none


def test_stored_nads_name_architecture_and_method():
    stored = bundle.stored_nads()
    for (arch, method), res in stored.items():
        assert res.settings["arch"] == arch and res.settings["method"] == method
        assert res.settings == bundle.nad_item(arch, method) | {"eval_point": res.settings["eval_point"]}
        assert res.settings["num_networks"] == 10000 or (method == "secant" and arch in bundle.GPU_NAD_ARCHS)
    assert set(stored) >= {("lenet", "secant")} or not stored


def test_published_spectrum_squared_matches_ours():
    """The published files hold singular values: squared (`published.spectrum`) they decay as ours."""
    ours = bundle.load_nad("lenet")
    if ours is None:
        pytest.skip("the bundle holds no LeNet NADs yet")
    lam, s = published.spectrum("lenet"), published.singular_values("lenet")
    for i in (99, 299):           # lambda_100 / lambda_1 and lambda_300 / lambda_1: 0.077 vs 0.074, 0.027 vs 0.026
        assert lam[i] / lam[0] == pytest.approx(ours.eigenvalues[i] / ours.eigenvalues[0], rel=0.1)
        assert s[i] / s[0] > 2 * ours.eigenvalues[i] / ours.eigenvalues[0]   # unsquared: not comparable
    assert lam.sum() == pytest.approx(ours.eigenvalues[:1023].sum(), rel=0.05)  # even the scale: s^2 / (N - 1)


def test_fig6_comparison_shapes():
    out = bundle.fig6_comparison()
    assert out.arch == "lenet" and len(out.published.accuracy) == 1023
    assert set(out.ours) <= set(out.indices)
    assert list(out.curves) == list(published.FIG6_ARCHS)


def test_comparison_figures_plot_the_difference():
    import matplotlib
    matplotlib.use("Agg")
    from nadcore.plots import fourier as figs
    from nadcore.plots import nads as nad_plots

    grid = fourier.paper_grid()
    pub = published.fig1_image("lenet")
    ours = pub - 3.0
    fig = figs.compare_grids(ours, pub, grid, "lenet", stats="test")
    panels = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    assert len(panels) == 3
    np.testing.assert_allclose(panels[2], ours - pub)              # the third panel is ours - published
    stored = {c: a - 2.0 for c, a in published.fig1("lenet").items()}
    pair = published.Fig1Pair(stored, published.fig1("lenet"), published.compare_grids(stored, published.fig1("lenet")),
                              len(stored), len(stored))
    fig = figs.fig1_comparison(pair, grid, "lenet")
    assert "Spearman 1.00, mean |ours - published| 2.0 points" in fig._suptitle.get_text()
    np.testing.assert_allclose(fig.axes[2].images[0].get_array().compressed(), -2.0)
    curves = {a: published.fig6(a) for a in published.FIG6_ARCHS}
    fig = nad_plots.fig6_compare({"lenet": {0: 99.0, 512: 55.0}}, curves)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["LeNet", "ResNet-18", "DenseNet-121", "VGG-11"]
    line, points = panels[0].lines
    assert list(points.get_xdata()) == [0, 512] and list(points.get_ydata()) == [99.0, 55.0]
    assert len(line.get_xdata()) == curves["lenet"].measured.sum()   # only the indices the authors trained
    assert len(panels[1].lines) == 1                                     # no Fig. 6 of ours for ResNet-18
    fig = nad_plots.fig6_compare({"lenet": {0: 99.0}}, curves, more={"ours at σ = 2": {"lenet": {0: 100.0, 32: 90.0}}},
                                 label="ours at σ = 3")
    extra = [ax for ax in fig.axes if ax.get_title() == "LeNet"][0].lines[2]
    assert list(extra.get_ydata()) == [100.0, 90.0] and extra.get_marker() == "^"   # open squares: exact gradient
    assert {"ours at σ = 2", "ours at σ = 3"} <= {t.get_text() for t in fig.legends[0].get_texts()}
    panels = {"LeNet, σ = 1.5": ("lenet", {"secant": {0: (99.0, 0.5), 32: (80.0, 2.0)}, "autograd": {0: (60.0, 1.0)}}),
              "VGG-11": ("vgg11", {"secant": {0: (100.0, 0.0)}})}
    fig = nad_plots.fig6_estimates(panels, curves)      # along both NAD estimates, seeds' mean +- std
    lenet = [ax for ax in fig.axes if ax.get_title() == "LeNet, σ = 1.5"][0]
    bars = [c for c in lenet.containers if c.has_yerr]
    assert len(bars) == 2 and list(bars[0].lines[0].get_ydata()) == [99.0, 80.0]
    assert bars[1].lines[0].get_markerfacecolor() == "white" and len(fig.legends[0].get_texts()) == 3
    sigma_fig = figs.sigma_study(bundle.sigma_study(boots=50))           # whatever the bundle holds so far
    assert sigma_fig.axes[0].get_ylabel() == "Spearman with published"


# ----------------------------------------------------------------------------- the command

def test_the_bundle_command_explains_itself_and_computes_nothing_unasked(monkeypatch, capsys):
    monkeypatch.setattr(bundle, "compute", lambda item, **kw: pytest.fail(f"computed {item}"))
    monkeypatch.setattr(bundle, "status", lambda item, bundle_dir=bundle.BUNDLE: f"{item}: stub")
    assert bundle.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m nadcore.bundle") and "nads_vgg11_autograd" in out
    assert bundle.main([]) == 0                              # help and status, nothing computed
    assert "fig2: stub" in capsys.readouterr().out
    assert bundle.main(["fig9"]) == 2
    assert "item must be one of all, status" in capsys.readouterr().err


def test_every_item_is_declared_once_with_its_device_and_a_clear_error_otherwise(tmp_path):
    """The registry holds exactly `ITEMS`; one dispatch (`lookup`) serves `compute`, `status`,
    `complete`, `load` and `item_device`, and names the accepted items on a bad one."""
    assert set(bundle.REGISTRY) == set(bundle.ITEMS) and len(bundle.ITEMS) == len(set(bundle.ITEMS))
    assert all(bundle.REGISTRY[name].name == name for name in bundle.ITEMS)
    assert bundle.REGISTRY["fig6"].pages == ("03_nads", "06_antialias")   # each item names the pages that show it
    assert bundle.REGISTRY["nads_lenet_hessian"].pages == ("08_training",)
    devices = {name: bundle.item_device(name) for name in bundle.ITEMS}
    assert set(devices.values()) == {"cpu", "cuda"}
    assert devices["fig1_vgg11"] == devices["nads_resnet18"] == "cuda" and devices["nads_resnet18_autograd"] == "cpu"
    assert {bundle.nad_name(a, m) for a in bundle.ZOO_ARCHS for m in ("secant", "autograd")} <= set(bundle.ITEMS)
    assert bundle.nad_name("resnet18_blur") == "nads_resnet18_blur" and bundle.nad_name("lenet", "autograd") == \
        "nads_lenet_autograd"
    for call in (bundle.status, bundle.complete, bundle.item_device, bundle.compute, bundle.load):
        with pytest.raises(ValueError, match=r"^item must be one of fig1, fig2, fig3, .*; got 'fig9'$"):
            call("fig9", *([tmp_path] if call is not bundle.item_device else []))
    assert not (tmp_path / "MACHINE.json").exists()             # refused before any write
    assert not bundle.complete("fig1", tmp_path) and not bundle.complete("pooling", tmp_path)
    assert bundle.load("fig2", tmp_path)[0] == {}               # what is stored: nothing there
    assert bundle.REGISTRY["convergence_zoo"].settings() == {a: bundle.convergence_item(a) for a in bundle.ZOO_ARCHS}
    assert bundle.sweep_name("fig1_vgg11") == "fig1" and bundle.sweep_name("fig2") == "fig2"
    with pytest.raises(ValueError, match=r"^name must be one of fig1, fig2, fig3, fig3_sigma, fig1_vgg11, "
                                         r"fig1_resnet18, fig1_densenet121; got 'fig6'$"):
        bundle.fourier_item("fig6")


def test_the_bundle_lives_where_the_environment_says_else_in_the_checkout(tmp_path, monkeypatch):
    """`NADBOOK_BUNDLE` first, then the checkout's bundle/; installed from a wheel (no checkout), the
    bundle/ of the current folder or of its parent (a book folder), else ./bundle."""
    checkout = paths.checkout()
    assert checkout is not None and paths.locate({}) == checkout / "bundle"
    assert paths.locate({"NADBOOK_BUNDLE": str(tmp_path / "b")}) == tmp_path / "b"
    assert bundle.BUNDLE == cli.BUNDLE == plan.BUNDLE == paths.BUNDLE   # one answer, wherever it is asked
    monkeypatch.setattr(paths, "checkout", lambda: None)
    (tmp_path / "book").mkdir()
    assert paths.locate({}, cwd=tmp_path / "book") == tmp_path / "book" / "bundle"   # none found: here
    (tmp_path / "bundle").mkdir()
    assert paths.locate({}, cwd=tmp_path / "book") == tmp_path / "bundle"            # the parent's
    assert paths.locate({}, cwd=tmp_path) == tmp_path / "bundle"
    assert presets.DEEP_SIGMA == bundle.DEEP_SIGMA and presets.DEEP_TRAIN is bundle.DEEP_TRAIN   # the policy


def test_the_command_shows_the_status_of_named_items_in_another_bundle(tmp_path, capsys):
    assert bundle.main(["status", "fig1", f"--bundle-dir={tmp_path}"]) == 2    # no marker: no bundle
    assert capsys.readouterr().err == ("python -m nadcore.bundle: error: --bundle-dir must be a results bundle (a "
                                       f"folder holding .nadbook-bundle); got {str(tmp_path)!r}\n")
    (tmp_path / paths.BUNDLE_MARKER).touch()
    assert bundle.main(["status", "fig1", "pooling", f"--bundle-dir={tmp_path}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [bundle.status("fig1", tmp_path), "pooling: not complete; `python -m nadcore.bundle pooling "
                     f"--bundle-dir {tmp_path}` computes the rest"]   # the re-probe: the hint names the folder
    assert lines[0].startswith("fig1 (logreg, lenet): 0 of 260 cells stored; ")
    (tmp_path / "file").write_text("")
    assert bundle.main(["status", "--bundle-dir", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err.startswith("python -m nadcore.bundle: error: --bundle-dir must be a results bundle")
    assert bundle.main(["fig1", "--bundle-dir", str(tmp_path / "file")]) == 2      # a file: not to compute into
    assert "a new or empty folder; got" in capsys.readouterr().err
    assert bundle.main(["status", "fig9"]) == 2
    err = capsys.readouterr().err        # after `status`, an item's name: not `all` or `status` again
    assert "got 'fig9'" in err and "item must be one of fig1, " in err


@pytest.mark.slow
def test_status_covers_every_item():
    lines = {item: bundle.status(item) for item in bundle.ITEMS}
    assert all(line.startswith(item) for item, line in lines.items())
    assert lines["nads_lenet"] == "nads_lenet: stored (10,000 networks)"
    for item, line in lines.items():
        assert "stored" in line or f"python -m nadcore.bundle {item}" in line


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_every_bundle_record_names_its_device_and_machine():
    missing = [str(p) for p in sorted(bundle.BUNDLE.rglob("*.npz"))
               if not (store.load(p).record.get("device") and store.load(p).record.get("machine"))]
    assert missing == []


# ----------------------------------------------------------------------------- the sigma study

def fake_sigma_grid(bundle_dir, sigma, r, offset, cells=None):
    """Store LeNet's Fig. 1 grid at `sigma`, replicate `r`: the published values plus `offset` points."""
    _, grid, _, pooling = bundle.fourier_item("fig1")
    pub = published.fig1("lenet")
    chosen = ch1_fourier.sweep_cells(["lenet"], grid, pooling)[:cells]
    sweeps.sweep("fig1", chosen, lambda group: [{"test_acc": np.float64(pub[(c["kx"], c["ky"])] + offset)}
                                                for c in group],
                 bundle.sigma_settings(sigma, r), bundle_dir / "fourier", progress=False)


def test_the_sigma_study_shares_fig1s_cells_at_the_captions_sigma():
    assert bundle.sigma_settings(bundle.SIGMA_STUDY.caption, 0) == bundle.fourier_item("fig1")[2]
    other = bundle.sigma_settings(2.0, 1)
    assert other["sigma"] == 2.0 and other["seed"] == bundle.seeds.replicate(bundle.SEED, 1) != bundle.SEED


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_the_sigma_study_reads_complete_grids_and_names_the_best_sigma(tmp_path):
    sigmas = bundle.SIGMA_STUDY.sigmas
    assert bundle.sigma_runs({})[:len(sigmas)] == [(s, 0) for s in bundle.SIGMA_STUDY.order]
    assert sorted(bundle.SIGMA_STUDY.order) == sorted(sigmas)
    offsets = {1.0: 14.0, 1.25: 11.0, 1.5: 9.0, 2.0: 4.0, 2.5: -1.0, 3.0: -6.0}    # 2.5: the closest
    for sigma in sigmas[:-1]:
        fake_sigma_grid(tmp_path, sigma, 0, offsets[sigma])
    fake_sigma_grid(tmp_path, 3.0, 0, offsets[3.0], cells=100)     # not complete: not counted
    grids, records = bundle.load_sigma_study(tmp_path)
    assert sorted(grids) == [1.0, 1.25, 1.5, 2.0, 2.5] and len(records) == 5 * 130
    assert bundle.best_sigma(grids) == 2.5
    assert bundle.status("sigma", tmp_path).startswith(
        "sigma (lenet, sigma 1, 1.25, 1.5, 2, 2.5, 3): 5 of 10 Fig. 1 grids")
    assert "best sigma: not known yet" in bundle.status("fig6_sigma", tmp_path)
    fake_sigma_grid(tmp_path, 3.0, 0, offsets[3.0])
    for r in (1, 2):
        fake_sigma_grid(tmp_path, 2.5, r, offsets[2.5] + r)
    grids, _ = bundle.load_sigma_study(tmp_path)
    assert bundle.sigma_runs(grids)[len(sigmas):] == [(2.5, 1), (2.5, 2), (3.0, 1), (3.0, 2)]
    study = bundle.sigma_study(tmp_path, boots=100)
    assert study["best"] == 2.5 and study["caption"] == 3.0
    row, pub = study["rows"][2.5], published.fig1("lenet")
    itself = published.compare_grids({c: pub[c] for c in grids[2.5][0]}, pub)   # seeds -1, 0, +1: the mean is that
    assert row["seeds"] == 3 and row["mean_abs_difference"] == pytest.approx(itself.mean_abs_difference)
    assert row["floor"]["spearman"] == pytest.approx(1) and study["rows"][3.0]["floor"] is None
    lo, hi = row["intervals"]["spearman"]
    assert row["spearman"] == pytest.approx(itself.spearman) and lo < row["spearman"] < hi
    assert "best sigma: 2.5): 0 of 33 NAD indices" in bundle.status("fig6_sigma", tmp_path)


def test_autograd_convergence_reads_the_estimates_own_chunks():
    """N vs 2N of the exact-gradient estimates uses networks 0 .. 3N - 1 in whole chunks of the
    10,000-network estimate, so it trains no network of its own."""
    n = bundle.nad_item("vgg11", "autograd")["num_networks"]
    assert all(size % nads.CHUNK == 0 and 3 * size <= n for size in bundle.AUTOGRAD_CONV_SIZES)
    assert bundle.convergence_item()["arch"] == "lenet" and bundle.convergence_item()["method"] == "secant"
    assert store.matches(bundle.convergence_path(), bundle.convergence_item())   # the published one: key unchanged
    assert bundle.convergence_item("resnet18")["method"] == "autograd"
    assert bundle.convergence_path(arch="resnet18") != bundle.convergence_path(arch="vgg11")
    assert bundle.load_convergence("lenet", "/nonexistent") is None


def test_the_deep_networks_secant_is_bfloat16_on_the_cpu_and_float32_on_a_gpu():
    for arch, n in bundle.SECANT_CPU.items():
        s = bundle.nad_item(arch)
        assert (s["num_networks"], s["precision"], s["method"], s["compiled"]) == (n, "bfloat16", "secant", True)
        assert "precision" not in bundle.nad_item(arch, "autograd") and bundle.nad_device(arch) == "cpu"
    for arch, n in bundle.SECANT_CUDA.items():
        s = bundle.nad_item(arch)
        assert s["num_networks"] == n and "precision" not in s and "compiled" not in s
        assert bundle.nad_device(arch) == "cuda" and bundle.nad_device(arch, "autograd") == "cpu"
        assert bundle.convergence_item(arch, "secant")["device"] == "cuda"
    assert not set(bundle.SECANT_CPU) & set(bundle.SECANT_CUDA)
    assert "precision" not in bundle.nad_item("lenet") and bundle.nad_item("lenet")["num_networks"] == 10000


def test_a_gpu_item_says_where_it_is_computed_and_never_computes_on_the_cpu(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(bundle, "SECANT_CUDA", {"lenet": 250})
    assert bundle.status("nads_lenet", tmp_path).endswith("computes the rest (float32, on a CUDA GPU)")  # no records
    with pytest.raises(ValueError, match=r"^item nads_lenet is computed on a CUDA GPU \(float32\) and this machine "
                                         r"has none: run `python -m nadcore.bundle nads_lenet` on one"):
        bundle.compute("nads_lenet", tmp_path, tmp_path / "scratch", progress=False)
    assert not (tmp_path / "scratch").exists()


@pytest.mark.slow
def test_a_random_network_of_vgg11s_kept_chunk_recomputes_bitwise(rng, record_threads, minute_long):
    """VGG-11's secant (bfloat16, compiled) takes about 3 minutes a chunk here, beyond the chunk test's
    budget, so its estimate keeps its last chunk: one random network's gradient, recomputed, is the
    chunk's bit for bit on the estimate's CPU (else to bfloat16's rounding), and the chunk's total
    variance is the estimate's record of it."""
    minute_long("vgg11_chunk")
    result = bundle.load_nad("vgg11")
    if result is None:
        pytest.skip("the bundle holds no VGG-11 secant NADs yet")
    s, chunk = result.settings, bundle.nad_chunk_item("vgg11")
    (a, b), trace = result.chunks["ranges"][-1], result.chunks["traces"][-1]
    kept = store.load(sweeps.cell_path("nad_chunks", {"start": int(a), "stop": int(b)}, chunk, bundle.SCRATCH),
                      sweeps.cell_settings({"start": int(a), "stop": int(b)}, chunk))
    assert np.trace(nads.moments(kept.arrays)["m2"]) == pytest.approx(trace, rel=1e-9)
    record_threads(result.record)
    i = rng.randrange(len(kept.arrays["gradients"]))
    print(f"recomputing network {a + i} of the secant NADs of vgg11")
    x0 = nads.eval_point_for(s["seed"], tuple(s["input_shape"]))
    estimator = nads.EstimateSettings("secant", s["step"], s["seed"], precision=s["precision"], compiled=s["compiled"],
                                      batch_size=1)
    fresh = nads.chunk_arrays(lambda: models.build("vgg11", num_classes=1), estimator, x0, int(a) + i,
                              int(a) + i + 1)["gradients"][0]
    stored = kept.arrays["gradients"][i]
    if str(result.chunks["machines"][-1]) == store.machine():
        np.testing.assert_array_equal(fresh, stored)
    else:
        assert fresh @ stored / np.linalg.norm(fresh) / np.linalg.norm(stored) > 0.99


@pytest.mark.slow
def test_a_random_network_of_a_stored_gpu_estimate_recomputes_on_the_cpu(rng, record_threads, replay, minute_long):
    """The first chunk of each GPU estimate is kept (`tools/gpu_bundle.py`): one random network's
    float32 secant gradient, recomputed here, against the GPU's (the same network: initialised on the
    CPU); and the chunk's total variance against the estimate's record of it. Not bitwise: another
    device's kernels (measured on the GPU's host: cosine 1 - 1e-10, largest difference 9e-6 of the
    largest entry). `make test` draws an architecture whose network takes seconds (ResNet-18's: about
    10 s); `make verify` any (DenseNet-121's: over a minute)."""
    from nadcore import plan

    minute_long("gpu_estimate")
    bound = None if replay is None else 20
    stored = [(a, r) for a in bundle.SECANT_CUDA if (r := bundle.load_nad(a)) is not None
              and (bound is None or plan.NAD_S[(a, "secant")] < bound)]
    if not stored:
        pytest.skip("the bundle holds no GPU estimate yet" + ("" if bound is None else " of a network under "
                                                               f"{bound} s (`make verify` draws every one)"))
    arch, result = rng.choice(stored)
    s = result.settings
    chunk = bundle.nad_chunk_item(arch)
    (a, b), trace = result.chunks["ranges"][0], result.chunks["traces"][0]
    kept = store.load(sweeps.cell_path("nad_chunks", {"start": int(a), "stop": int(b)}, chunk, bundle.SCRATCH),
                      sweeps.cell_settings({"start": int(a), "stop": int(b)}, chunk))
    assert kept.record["device"] == "cuda" and kept.record["machine"] == str(result.chunks["machines"][0])
    G = kept.arrays["gradients"]
    assert np.trace(nads.moments(kept.arrays)["m2"]) == pytest.approx(trace, rel=1e-9)
    i = rng.randrange(len(G))
    print(f"recomputing network {a + i} of the GPU's secant NADs of {arch} on the CPU")
    x0 = nads.eval_point_for(s["seed"], tuple(s["input_shape"]))
    net = nads.network(lambda: models.build(arch, num_classes=1), s["seed"], int(a) + i, torch.device("cpu"))
    fresh = nads.secant_gradient(net, x0, s["step"]).numpy().astype(np.float64)
    gpu = G[i].astype(np.float64)
    assert fresh @ gpu / np.linalg.norm(fresh) / np.linalg.norm(gpu) > 1 - 1e-8
    assert np.abs(fresh - gpu).max() < 1e-4 * np.abs(gpu).max()


def test_convergence_panels_draw_one_panel_per_architecture():
    from nadcore.plots import nads as nad_plots

    conv = {"sizes": np.array([625, 1250]), "ks": np.array([1, 16]), "overlap": np.array([[0.5, 0.2], [0.7, 0.4]])}
    fig = nad_plots.convergence_panels({"lenet": conv, "vgg11": conv, "resnet18": conv})
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == ["LeNet", "VGG-11", "ResNet-18"]
    assert [t.get_text() for t in shown[2].get_xticklabels()] == ["625", "1,250"]
    assert list(shown[0].lines[1].get_ydata()) == [0.2, 0.4]   # k = 16 against N
    other = {**conv, "sizes": np.array([125, 250]), "overlap": conv["overlap"]}
    fig = nad_plots.convergence_panels({"resnet18": {**conv, "sizes": np.array([125, 250, 625]),
                                                     "overlap": np.ones((3, 2))}, "densenet121": other})
    assert [[t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes[:2]] == [["125", "250", "625"],
                                                                                    ["125", "250"]]
    close = {**conv, "sizes": np.array([1250, 2500, 3125]), "overlap": np.ones((3, 2))}
    ticks = nad_plots.convergence_panels({"vgg11": close}).axes[0].get_xticklabels()
    assert [t.get_text() for t in ticks] == ["1,250", "", "3,125"]   # labels that would collide: one of them
    few = {"sizes": np.array([8, 16, 32]), "ks": np.array([1, 16]), "overlap": np.ones((3, 2))}
    line = nad_plots.convergence_panels({"lenet": few}).axes[0].lines[1]
    assert list(line.get_xdata()) == [32]     # k = 16: only at N > k (N networks span N - 1 directions)
    assert list(nad_plots.convergence(few).axes[0].lines[1].get_xdata()) == [32]


def test_secant_vs_exact_overlaps_pair_the_estimates_of_each_architecture():
    from nadcore.plots import nads as nad_plots

    secant, exact = bundle.load_nad("lenet"), bundle.load_nad("lenet", "autograd")
    if secant is None or exact is None:
        pytest.skip("the bundle holds no LeNet NADs yet")
    pairs = bundle.secant_exact_overlaps([1, 16], archs=("lenet", "vit"))
    np.testing.assert_allclose(pairs["lenet"], nads.compare(secant, exact, [1, 16]), rtol=0, atol=1e-12)
    assert set(pairs) <= {"lenet", "vit"}
    fig = nad_plots.secant_vs_exact(pairs, [1, 16])
    line = fig.axes[0].lines[0]
    assert line.get_label() == "LeNet: secant vs exact gradient" and line.get_color() == style.COLORS["lenet"]


def test_precision_figure_draws_each_networks_cosine_gap():
    from nadcore.plots import nads as nad_plots

    check = {"vgg11": {"eager": np.array([0.999, 0.9999]), "compiled": np.array([0.99])},
             "vit": {"eager": np.array([0.9]), "compiled": np.array([0.995, 0.9995])},
             "overlaps": {"compiled": np.array([1.0, 0.99]), "floor": np.array([0.2, 0.5])}}
    fig = nad_plots.precision(check, [1, 4])
    left, right = fig.axes
    gaps = [np.round(line.get_ydata(), 6).tolist() for line in left.lines]
    assert gaps == [[0.001, 0.0001], [0.1], [0.01], [0.005, 0.0005]]  # eager then compiled, per network
    assert [t.get_text() for t in left.get_xticklabels()] == ["VGG-11", "ViT"]
    assert list(right.lines[0].get_ydata()) == [1.0, 0.99] and list(right.lines[1].get_ydata()) == [0.2, 0.5]
    style.check_readable(fig)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "LeNet" in legend and "ResNet-18 (BlurPool)" not in legend


# ----------------------------------------------------------------------------- VGG-11 on this CPU (issue 23)

def test_vgg11_fig1_subset_is_part_of_fig1(tmp_path, monkeypatch):
    """The VGG-11 Fig. 1 item is 25 canonical cells of every 4th frequency, stored in the Fig. 1 sweep
    with Fig. 1's settings but the network and max_lr of the authors' script (VGG-11 with batch norm,
    0.5), the sigma study's noise level and its device (a GPU): `fig1_comparison` shows them beside the
    published grid, `load_deep_seeds` the check's cells with more seeds."""
    archs, grid, settings, pooling = bundle.fourier_item("fig1_vgg11")
    fig1 = bundle.fourier_item("fig1")[2]
    assert archs == ("vgg11_bn",) and len(grid.half()) == 25
    assert settings == {**fig1, "sigma": bundle.DEEP_SIGMA, "max_lr": {**fig1["max_lr"], "vgg11_bn": 0.5},
                        "device": "cuda"}
    assert set(grid.half()) <= set(bundle.fourier_item("fig1")[1].half())
    assert settings["epochs"] == 20 and fig1["max_lr"]["vgg11"] == 0.05
    pub = published.fig1("vgg11")
    cells = ch1_fourier.sweep_cells(archs, grid, pooling)[:4]
    sweeps.sweep("fig1", cells, lambda group: [{"test_acc": np.float64(pub[(c["kx"], c["ky"])] - 2.0)} for c in group],
                 settings, tmp_path / "fourier", progress=False)
    plain = ch1_fourier.sweep_cells(("vgg11",), grid, pooling)[:2]     # plain VGG-11 at Fig. 1's own settings
    sweeps.sweep("fig1", plain, lambda group: [{"test_acc": np.float64(50.0)} for c in group], fig1,
                 tmp_path / "fourier", progress=False)
    assert list(bundle.plain_deep("fig1_vgg11", tmp_path)[0]["vgg11"]) == [(c["kx"], c["ky"]) for c in plain]
    out, _ = bundle.fig1_comparison(tmp_path)
    assert out["vgg11"].stored == 4 and out["lenet"].stored == 0
    diff = out["vgg11"].stats.difference
    assert all(diff[(c["kx"], c["ky"])] == pytest.approx(-2.0) for c in cells)
    assert bundle.status("fig1_vgg11", tmp_path).startswith("fig1_vgg11 (vgg11_bn): 4 of 25 cells stored; ")
    assert bundle.fourier_remaining("fig1", tmp_path)[0] == 0    # Fig. 1's own item: LogReg and LeNet
    check = ch1_fourier.sweep_cells(archs, grid, pooling, only=bundle.TRAIN_PRECISION.cells)
    for r in range(1, bundle.DEEP_SEEDS):
        sweeps.sweep("fig1", check[:2], lambda group, r=r: [{"test_acc": np.float64(60.0 + r)} for _ in group],
                     ch1_fourier.replicate_settings(settings, r), tmp_path / "fourier", progress=False)
    seeds, records = bundle.load_deep_seeds("fig1_vgg11", tmp_path)
    first = (check[0]["kx"], check[0]["ky"])
    assert seeds[first][1:] == [61.0, 62.0] and len(seeds[first]) == bundle.DEEP_SEEDS   # seed 0: the item's cell
    assert len(records) == sum(map(len, seeds.values()))
    assert bundle.gpu_run("fig1_vgg11", tmp_path) is None       # no GPU report stored there
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)   # a CPU machine refuses it before any work
    with pytest.raises(ValueError, match="^item fig1_vgg11 is computed on a CUDA GPU"):
        bundle.compute("fig1_vgg11", tmp_path)


def test_the_deep_networks_rows_are_prepared_for_a_gpu(tmp_path, monkeypatch):
    """Issue 57: ResNet-18's and DenseNet-121's Fig. 1 (VGG-11's 25 directions) and Fig. 6 (5 indices, 3 seeds of
    our secant NADs) and the follow-up's Fig. 2 for ResNet-18 (3 x 3 pairs, 3 seeds) are items of a CUDA GPU: the
    authors' recipe (batch norm already in the networks, max_lr 0.5) at `DEEP_SIGMA`, priced from the bundle's
    GPU records, refused on a CPU in one line, and trainable cell by cell by `tools/gpu_bundle.py --train`."""
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    import gpu_bundle

    for arch in bundle.GPU_ONLY:
        assert any(isinstance(m, torch.nn.BatchNorm2d) for m in models.build(arch).modules())
        archs, grid, settings, _ = bundle.fourier_item(f"fig1_{arch}")
        assert archs == (arch,) and len(grid.half()) == 25 and settings["max_lr"][arch] == 0.5
        assert settings["sigma"] == bundle.DEEP_SIGMA and bundle.item_device(f"fig1_{arch}") == "cuda"
        runs = bundle.fig6_runs(f"fig6_{arch}", "secant")
        assert len(runs) == 3 and not bundle.fig6_runs(f"fig6_{arch}", "autograd")
        assert bundle.fig6_item(name=runs[0]) == bundle.fig6_item(name=f"fig6_{arch}")   # seed 0: the item itself
        assert bundle.fig6_item(name=runs[0])[1] == [0, 16, 128, 512, 1000]
        assert len(gpu_bundle.train_units(f"fig1_{arch}", tmp_path)) == 25
        assert gpu_bundle.train_units(runs[1], tmp_path) == []                   # no NADs in that bundle
        line = bundle.status(runs[1])                                            # the committed bundle's records
        assert re.search(r"0 of 5 NAD indices stored; .*on a CUDA GPU: ~\d+ min as the bundle's GPU records", line)
    line = bundle.status("underspec_pairs_resnet18")
    assert re.search(r"^underspec_pairs_resnet18: not complete; .*: ~\d+ min", line)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="^item underspec_pairs_resnet18 is computed on a CUDA GPU"):
        bundle.compute("underspec_pairs_resnet18", tmp_path)
    # the follow-up's cells, one at a time, stored under the keys the page reads (training faked)
    monkeypatch.setattr(gpu_bundle, "DEVICE", "cpu")
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((1024, 1024)))[0].T.astype(np.float32)
    monkeypatch.setattr(bundle, "load_nad", lambda arch, *a, **k: basis)
    fake = lambda arch, U, settings, group, device: [{"accuracy": np.array([60.0 + c["i"] / 100, 50.0, 50.0]),
                                                      "train_accuracy": np.float64(99.0),
                                                      "section": np.zeros((settings.resolution,) * 2)}
                                                     for c in group]
    monkeypatch.setattr(underspec, "pair_cells", fake)
    units = gpu_bundle.train_units("underspec_pairs_resnet18", tmp_path)
    assert len(units) == 27 and units[5][0] == "underspec_pairs_resnet18 (100, 1000) seed 0"
    assert units[5][1]()["test_acc"] == units[5][2]()["test_acc"] == 61.0
    assert bundle.underspec("pairs", "resnet18", tmp_path) is None                 # 1 of 27 cells
    for unit in units:
        unit[1]()
    grid = bundle.load("underspec_pairs_resnet18", tmp_path)["resnet18"]
    assert grid.accuracy.shape == (3, 3, 3, 3) and grid.accuracy[0, 1, 2, 0] == 61.0


def test_training_precision_check_compares_bfloat16_with_a_second_float32_seed(tmp_path):
    """The check's cells are Fig. 1 cells of VGG-11's subset: seed 0 in float32 is Fig. 1's own cell,
    bfloat16 another key; the verdict accepts bfloat16 only if it moves the accuracy no more than a seed."""
    archs, grid, settings, pooling = bundle.fourier_item("fig1_vgg11")
    assert set(bundle.TRAIN_PRECISION.cells) <= set(grid.half())
    assert settings["device"] == bundle.DEEP_DEVICE["fig1_vgg11"] == "cuda"  # the subset: on a GPU; the check: here
    assert bundle.train_precision_settings("float32", 0) == {**settings, "device": bundle.DEVICE}
    bf16 = bundle.train_precision_settings("bfloat16", 0)
    assert bf16 == {**settings, "device": "cpu", "precision": "bfloat16"} and store.key(bf16) != store.key(settings)
    assert train.Recipe.from_settings(bf16, "vgg11").precision == "bfloat16"
    cells = ch1_fourier.sweep_cells(archs, grid, pooling, only=bundle.TRAIN_PRECISION.cells)
    assert [(c["kx"], c["ky"]) for c in cells] == sorted(bundle.TRAIN_PRECISION.cells, key=lambda c: (c[1], c[0]))
    with pytest.raises(ValueError, match="only must hold canonical cells"):
        ch1_fourier.sweep_cells(archs, grid, pooling, only=[(1, 1)])
    fake = {("float32", 0): 60.0, ("float32", 1): 64.0, ("bfloat16", 0): 61.0, ("bfloat16", 1): 62.0}
    for (precision, r), acc in fake.items():
        sweeps.sweep("fig1", cells[:1], lambda group, acc=acc: [{"test_acc": np.float64(acc)} for _ in group],
                     bundle.train_precision_settings(precision, r), tmp_path / "fourier", progress=False)
    runs, records = bundle.load_train_precision(tmp_path)
    assert runs[("bfloat16", 1)] == {(cells[0]["kx"], cells[0]["ky"]): 62.0} and len(records) == 4
    assert not bundle.complete("train_precision", tmp_path)   # one of the cells
    assert bundle.train_precision_verdict(runs) is None        # no verdict on part of the cells
    full = {k: {(c["kx"], c["ky"]): acc + i for i, c in enumerate(cells)} for k, acc in fake.items()}
    verdict = bundle.train_precision_verdict(full)
    assert verdict["bfloat16"] == pytest.approx(1.5) and verdict["seeds"] == pytest.approx(4.0) and verdict["accept"]
    assert verdict["cells"] == sorted(bundle.TRAIN_PRECISION.cells)


def test_the_deep_networks_noise_level_is_the_sigma_studys_best():
    """VGG-11's Fig. 1 subset and Fig. 6 train at the noise level at which LeNet's grid comes closest
    to the published one, as stored by the sigma study."""
    grids = bundle.load_sigma_study()[0]
    if len(grids) < len(bundle.SIGMA_STUDY.sigmas):
        pytest.skip("the bundle holds no complete sigma study yet")
    assert bundle.DEEP_SIGMA == bundle.best_sigma(grids) != bundle.SIGMA_STUDY.caption


def test_vgg11_with_batch_norm_has_vgg11s_nads():
    """In eval mode at initialisation batch norm is the identity up to its eps: from the same seed,
    VGG-11 with batch norm computes VGG-11's function and input gradient, so its NADs are VGG-11's
    (`bundle.nads_of`, for the network the bundle trains in VGG-11's place)."""
    x = torch.randn(3, 1, 32, 32, generator=torch.Generator().manual_seed(0))
    for seed in (0, 1):
        out = {}
        for arch in ("vgg11", "vgg11_bn"):
            torch.manual_seed(seed)
            net, xs = models.build(arch, num_classes=1).eval(), x.clone().requires_grad_(True)
            y = net(xs)
            out[arch] = (y.detach(), torch.autograd.grad(y.sum(), xs)[0])
        for a, b in zip(out["vgg11"], out["vgg11_bn"]):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-4 * a.abs().max().item())
    assert bundle.nads_of("vgg11_bn") == "vgg11" and bundle.nads_of("lenet") == "lenet"


def test_vgg11_fig6_uses_its_fig1_recipe_on_its_secant_nads(tmp_path):
    arch, indices, settings = bundle.fig6_item(name="fig6_vgg11")
    lenet = bundle.fig6_item()[2]
    assert arch == "vgg11_bn" and bundle.nads_of(arch) == "vgg11" and indices == [0, 16, 128, 512, 1000]
    assert settings == {**lenet, "sigma": bundle.DEEP_SIGMA, "max_lr": 0.5}   # its Fig. 1 recipe
    assert bundle.load_fig6(tmp_path, name="fig6_vgg11") == {}      # no NADs there: nothing
    assert bundle.fig6_records(tmp_path, name="fig6_vgg11") == {}
    stored = bundle.load_fig6(name="fig6_vgg11")                  # the committed bundle's cells, with their records
    assert set(bundle.fig6_records(name="fig6_vgg11")) == set(stored)
    assert bundle.fig6_comparison(tmp_path).deep == {"vgg11": {}, "resnet18": {}, "densenet121": {}}
    assert bundle.status("fig6_vgg11", tmp_path).startswith("fig6_vgg11 (vgg11_bn): 0 of 5 NAD indices stored; ")
    with pytest.raises(ValueError, match="^name must be one of fig6, fig6_vgg11, fig6_resnet18, .*'fig7'"):
        bundle.fig6_item(name="fig7")


def test_vgg11_fig6_along_its_exact_gradient_nads_and_more_seeds_is_a_gpu_item(tmp_path, monkeypatch):
    """Issue 42: Fig. 6 of VGG-11 again along its exact-gradient NADs and its secant ones, seeds 0-2, on
    a CUDA GPU: the item's recipe with the replicate's seed, cells of their own, refused on a CPU."""
    arch, indices, settings = bundle.fig6_item(name="fig6_vgg11")
    assert list(bundle.FIG6_NADS)[:2] == ["fig6_vgg11_autograd_seed0", "fig6_vgg11_secant_seed0"]   # the GPU's order
    keys = {store.key(ch3_nads.fig6_settings(arch, bundle.load_nad("vgg11"), settings, "cpu"))}
    gpu = {name: v for name, v in bundle.FIG6_NADS.items() if v[0] == "fig6_vgg11"}
    assert len(gpu) == 6 and all(v[3] is None for v in gpu.values())
    for name, (item, method, r, _) in gpu.items():
        a, i, s = bundle.fig6_item(name=name)
        assert (item, a, i) == ("fig6_vgg11", arch, indices) and bundle.fig6_method(name) == method
        assert s == {**settings, "seed": bundle.seeds.replicate(bundle.SEED, r)}
        assert bundle.item_device(name) == "cuda" and name in bundle.ITEMS
        keys.add(store.key(ch3_nads.fig6_settings(a, bundle.load_nad("vgg11", method), s, "cuda")))
        assert bundle.load_fig6(tmp_path, name=name) == {} and bundle.fig6_records(tmp_path, name=name) == {}
        assert bundle.status(name, tmp_path).endswith("computes the rest (float32, on a CUDA GPU)")
        assert set(bundle.fig6_records(name=name)) == set(bundle.load_fig6(name=name))   # the committed cells
    assert len(keys) == 1 + len(gpu)      # no cell of one is a cell of another
    assert bundle.fig6_method("fig6_vgg11") == "secant"
    assert list(bundle.fig6_comparison(tmp_path).deep) == ["vgg11", *bundle.GPU_ONLY]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"^item fig6_vgg11_autograd_seed0 is computed on a CUDA GPU \(float32\)"):
        bundle.compute("fig6_vgg11_autograd_seed0", tmp_path, tmp_path / "scratch", progress=False)


def test_lenet_fig6_along_three_bases_at_two_sigmas_is_a_cpu_item(tmp_path):
    """Issues 42, 57 and 61: LeNet's Fig. 6 along its exact-gradient and its secant NADs and along the authors'
    released NAD file, seeds 0-2, at the sigma study's best and at the caption's sigma, and along the kernel's
    NADs (the mixed derivative's) at both, on this CPU; secant seed 0 is the `fig6_sigma` / `fig6` item;
    the released file needs no bundle (`fig6_basis`)."""
    assert bundle.FIG6_CAPTION == presets.preset("nads", "paper").fig6.sigma
    lenet = {name: v for name, v in bundle.FIG6_NADS.items() if v[0] == "fig6"}
    assert len(lenet) == 24 and {v[3] for v in lenet.values()} == {bundle.DEEP_SIGMA, bundle.FIG6_CAPTION}
    assert {v[1] for v in lenet.values()} == {"secant", "autograd", "published", "hessian"}
    assert {v[3] for v in lenet.values() if v[1] == "hessian"} == {bundle.FIG6_CAPTION, bundle.DEEP_SIGMA}
    keys = set()
    for name, (_, method, r, sigma) in lenet.items():
        arch, indices, s = bundle.fig6_item(name=name)
        base = bundle.fig6_item(sigma)[2]
        published_last = [*bundle.fig6_item()[1][:-1], 1022]       # the released file's 1,023 rows end at NAD 1022
        assert (arch, indices) == (bundle.fig6_item()[0], published_last if method == "published" else
                                   bundle.fig6_item()[1])
        assert s == {**base, "seed": bundle.seeds.replicate(bundle.SEED, r)}
        assert bundle.item_device(name) == "cpu" and name in bundle.ITEMS and bundle.fig6_method(name) == method
        assert bundle.fig6_runs("fig6", method, sigma)[r] == name
        basis = bundle.fig6_basis(name)
        assert basis is not None and (method != "published" or basis.settings["source"] == "published")
        keys.add(store.key(ch3_nads.fig6_settings(arch, basis, s, "cpu")))
        if (method, r) == ("secant", 0):
            assert bundle.load_fig6(name=name) == bundle.load_fig6(sigma=sigma)
        assert (bundle.fig6_basis(name, tmp_path) is None) == (method != "published")
        assert bundle.load_fig6(tmp_path, name=name) == {}
    assert len(keys) == 24


def test_eq5_item_is_keyed_by_its_settings_and_reads_nothing_unstored(tmp_path):
    """Issue 57: the mixed derivative's NADs (method "hessian") of LogReg and LeNet from EQ5's networks, a CPU item
    read by Chapter 3 and the results page; an empty bundle holds none; its chunks stay out of git."""
    assert bundle.EQ5.archs == ("logreg", "lenet") and "eq5" in bundle.ITEMS and bundle.item_device("eq5") == "cpu"
    s = bundle.eq5_settings("lenet")
    assert (s["method"], s["num_networks"], s["rows"]) == ("hessian", bundle.EQ5.networks, bundle.EQ5.rows)
    assert store.key(s) != store.key(bundle.eq5_settings("logreg"))
    assert bundle.load_eq5(tmp_path) == {}
    assert "bundle/partial/eq5/" in (ROOT / ".gitignore").read_text().splitlines()
    for arch, x in bundle.load_eq5().items():       # what is stored: overlaps at EQ5's ks, a flat spectrum for LogReg
        assert all(len(x[key]) == len(bundle.EQ5.ks) for key in ("secant", "autograd", "floor"))
        assert (x["flat"] > 0.99) == (arch == "logreg")


def test_secant_convergence_reads_the_estimates_chunks(tmp_path):
    c = bundle.convergence_item("vgg11", "secant")
    assert (c["method"], c["precision"], c["compiled"]) == ("secant", "bfloat16", True)
    for arch in bundle.SECANT_CONV_ARCHS:      # N and 2N disjoint networks of the estimate, in whole chunks
        c = bundle.convergence_item(arch, "secant")
        assert c["sizes"] and 3 * max(c["sizes"]) <= bundle.nad_item(arch)["num_networks"]
        assert all(n % nads.CHUNK == 0 for n in c["sizes"]) and max(c["ks"]) < min(c["sizes"])
    assert bundle.convergence_item("densenet121", "secant")["sizes"] == [125, 250]  # 1,000 networks
    assert "precision" not in bundle.convergence_item("densenet121", "secant")       # float32, on a GPU
    assert bundle.convergence_path(arch="vgg11", method="secant") != bundle.convergence_path(arch="vgg11")
    assert bundle.load_convergence("vgg11", tmp_path, "secant") is None
    assert not bundle.complete("convergence_secant", tmp_path)


def stored_cells(table, records):
    """`[("fig1", arch, cell, arrays, the cell's record)]` of a `stored_directions` table."""
    return [("fig1", a, c, v, rec) for a in table for (c, v), rec in zip(table[a].items(), records[a])]


@pytest.mark.slow
def test_a_random_stored_vgg11_cell_recomputes_bitwise(rng, record_threads, replay):
    """A VGG-11 Fig. 1 cell (of its subset or of the training-precision check, float32 or bfloat16),
    replayed for its first steps; with --full-replay also a Fig. 6 index (which stores no loss
    history), and the cell retrained to the end (10-70 minutes of a 2-core CPU)."""
    cells = []
    for name in bundle.DEEP_FIG1:
        table, _, _, records = bundle.load_fourier(name)
        cells += stored_cells(table, records) + stored_cells(*bundle.plain_deep(name))
    archs, grid, _, pooling = bundle.fourier_item(bundle.TRAIN_PRECISION.item)
    for precision, r in itertools.product(("float32", "bfloat16"), range(bundle.TRAIN_PRECISION.seeds)):
        table, records = ch1_fourier.stored_directions(archs, grid, bundle.train_precision_settings(precision, r),
                                                       bundle.BUNDLE / "fourier", pooling, "fig1",
                                                       only=bundle.TRAIN_PRECISION.cells)
        cells += stored_cells(table, records)
    if replay is None:
        for name in (*bundle.DEEP_FIG6, *(n for n, (item, *_) in bundle.FIG6_NADS.items() if item in bundle.DEEP_FIG6)):
            arch, records = bundle.fig6_item(name=name)[0], bundle.fig6_records(name=name)
            cells += [(name, arch, index, {"test_acc": acc}, records[index])
                      for index, acc in bundle.load_fig6(name=name).items()]
    if not torch.cuda.is_available():   # a GPU's cells recompute on a GPU (their check on a CPU: the page's)
        cells = [c for c in cells if c[4]["device"] != "cuda"]
    if not cells:
        pytest.skip("the bundle holds no VGG-11 cell of this machine's device type yet")
    kind, arch, cell, stored, record = rng.choice(cells)
    record_threads(record)
    if kind == "fig1":
        recompute_fig1_cell(kind, arch, True, cell, stored, record, replay)
        return
    print(f"recomputing {kind} of {arch} at {cell}")
    _, _, settings = bundle.fig6_item(name=kind)
    kw = {k: v for k, v in settings.items() if k != "seed"}
    basis = bundle.load_nad(bundle.nads_of(arch), bundle.fig6_method(kind))
    fresh = ch3_nads.accuracy_on_nads(arch, basis, [cell], seed=settings["seed"], device=record["device"],
                                      progress=False, **kw)[0]
    assert_recomputed({"test_acc": fresh}, stored, record, None, f"{kind} {cell}")


@pytest.mark.slow
@pytest.mark.skipif(not nads.has_compiler(), reason="the compiled secant needs a C++ compiler (apt-get install g++)")
def test_precision_check_measures_bfloat16_against_float32(tmp_path):
    cos = ch3_nads.precision_cosines("lenet", 2)
    assert set(cos) == {"eager", "compiled"} and all(v.shape == (2,) and (v > 0.999).all() for v in cos.values())
    ov = ch3_nads.precision_overlaps("lenet", 20, [1, 4], results_dir=tmp_path)
    assert set(ov) == {"compiled", "floor"} and ov["compiled"].shape == (2,)
    assert ov["compiled"][0] > ov["floor"][0]          # same networks agree beyond two independent samples
    assert bundle.load_precision(tmp_path) is None and not bundle.complete("precision", tmp_path)
    assert bundle.status("precision", tmp_path).startswith("precision: not complete")


@pytest.mark.slow
@pytest.mark.skipif(not nads.has_compiler(), reason="the compiled secant needs a C++ compiler (apt-get install g++)")
def test_the_stored_precision_check_recomputes_bitwise(rng, record_threads, replay, minute_long):
    """One random architecture's cosines of the stored precision check: bitwise on the record's
    machine. `make test` recomputes its first network (each network is drawn from the seed and its
    index) of an architecture whose float32 secant takes seconds; `make verify` all its networks, of
    any architecture whose networks take under 150 s together (bfloat16 without AVX-512 and
    torch.compile add minutes: ResNet-18's eight networks ran over 10 min on an AVX2 CPU)."""
    from nadcore import plan

    minute_long("precision_check")
    stored = bundle.load_precision()
    if stored is None:
        pytest.skip("the bundle holds no precision check yet")
    record = store.load(bundle.precision_path()).record
    record_threads(record)
    count = bundle.PRECISION.count if replay is None else 1
    bound = 150 if replay is None else 20
    cheap = [a for a in bundle.PRECISION.archs if plan.NAD_S[(a, "secant")] * bundle.PRECISION.count < bound]
    arch = rng.choice(cheap)
    print(f"recomputing the precision check of {arch}, {count} network(s)")
    fresh = ch3_nads.precision_cosines(arch, count, bundle.SEED, "cpu")
    for m in ("eager", "compiled"):
        want = stored[arch][m][:count]
        if bundle.machine_of(record) == store.machine():
            np.testing.assert_array_equal(fresh[m], want)
        else:  # another CPU's bfloat16 kernels round differently: compare the error 1 - cosine
            # (measured, AMD EPYC record on an Intel Xeon, six architectures: within 14 %)
            np.testing.assert_allclose(1 - fresh[m], 1 - want, rtol=0.3)


def test_fig6_seeds_of_each_estimator_through_the_one_reader(tmp_path):
    """VGG-11's Fig. 6 seeds along each estimate, read as the book reads them (`verdicts.fig6_runs`, then
    `ch3_nads.seed_spread`): the mean and spread of the complete stored runs."""
    from nadcore import verdicts

    empty = {name: bundle.load_fig6(tmp_path, name=name) for name in bundle.FIG6_NADS}
    assert verdicts.fig6_runs(empty, "fig6_vgg11", "secant") == []
    stored = {name: bundle.load_fig6(name=name) for name in bundle.FIG6_NADS}
    runs = {m: verdicts.fig6_runs(stored, "fig6_vgg11", m) for m in ("secant", "autograd")}
    if not all(runs.values()):
        pytest.skip("the bundle holds no Fig. 6 run along both estimators' NADs yet")
    both = {m: ch3_nads.seed_spread(r) for m, r in runs.items()}
    for method, cells in both.items():
        whole = [r for r in (stored[f"fig6_vgg11_{method}_seed{i}"] for i in range(3))
                 if len(r) == len(bundle.fig6_item(name="fig6_vgg11")[1])]
        for index, (mean, std) in cells.items():
            values = [r[index] for r in whole]
            assert mean == pytest.approx(np.mean(values))
            assert std == pytest.approx(np.std(values, ddof=1) if len(values) > 1 else 0.0)
    secant, exact = both["secant"], both["autograd"]
    assert secant[0][0] > 99 and max(m for m, _ in exact.values()) < 53   # the first NAD learnt only along the secant's


def test_fig3_and_chapter6_again_at_the_sigma_studys_best(tmp_path):
    """Review of issue 38: at the caption's sigma our LeNet is near chance on most of Fig. 1, too weak to
    compare Fig. 3 or the prefilters; both again at `DEEP_SIGMA`, as items of their own (same sweeps,
    settings differing in sigma only; Chapter 6's NADs are its `antialias` item's)."""
    archs, grid, s3, pooling = bundle.fourier_item("fig3")
    a, g, s, p = bundle.fourier_item("fig3_sigma")
    assert (a, g.freqs, p) == (archs, grid.freqs, pooling) and s == {**s3, "sigma": bundle.DEEP_SIGMA}
    assert bundle.sweep_name("fig3_sigma") == "fig3" and {"fig3_sigma", "antialias_sigma"} <= set(bundle.ITEMS)
    assert bundle.status("fig3_sigma", tmp_path).startswith("fig3_sigma (lenet): 0 of 25 cells stored; ")
    best, caption = bundle.load_antialias(best_sigma=True), bundle.load_antialias()
    assert best.settings.fig1["sigma"] == best.settings.fig6["sigma"] == bundle.DEEP_SIGMA
    assert caption.settings.fig1["sigma"] == caption.settings.fig6["sigma"] == bundle.FIG6_CAPTION
    study = bundle.load_sigma_study()[0][bundle.DEEP_SIGMA][0]                          # Fig. 1's cells at 1.5
    assert best.fig1["max"] and all(study[c] == acc for c, acc in best.fig1["max"].items())
    assert all(best.nads[v] is caption.nads[v] or best.nads[v].settings == caption.nads[v].settings
               for v in best.variants)
    assert not bundle.complete("antialias_sigma", tmp_path)


@pytest.mark.slow   # 40-100 s of a 2-core CPU: two estimates, their convergence and Fig. 6
def test_the_secant_dial_stores_nads_overlaps_and_fig6_per_step(tmp_path, monkeypatch):
    """Issue 42 item 2: LeNet's secant NADs at each step h of the dial, their N vs 2N overlap from the
    same chunks, the leading rows stored, Fig. 6 along each; resumable and read back as computed."""
    assert bundle.SECANT_DIAL.steps[3] == 100.0 and bundle.SECANT_DIAL.rows > max(bundle.SECANT_DIAL.ks)
    monkeypatch.setattr(bundle, "SECANT_DIAL", dataclasses.replace(bundle.SECANT_DIAL, steps=(1.0, 100.0), networks=6,
                                                                   conv=2, ks=(1, 2), rows=4, fig6_indices=(0,)))
    real = bundle.fig6_item
    tiny = {"n_train": 64, "sigma": 1.5, "eps": 1.0, "epochs": 1, "max_lr": 0.5, "seed": 0}
    monkeypatch.setattr(bundle, "fig6_item", lambda sigma=None, name="fig6": (*real(sigma, name)[:2], tiny))
    assert not bundle.complete("secant_dial", tmp_path)
    got = bundle.compute("secant_dial", tmp_path, tmp_path / "scratch", progress=False)
    again = bundle.load_secant_dial(tmp_path)
    assert bundle.complete("secant_dial", tmp_path) and all(
        (got[h]["conv"], got[h]["fig6"]) == (again[h]["conv"], again[h]["fig6"])
        and np.array_equal(got[h]["nads"].nads, again[h]["nads"].nads) for h in got)
    a, b = got[1.0], got[100.0]
    assert a["nads"].nads.shape == (4, 1024) and len(a["nads"].eigenvalues) == 1024
    assert a["nads"].settings["step"] == 1.0 and not np.array_equal(a["nads"].nads, b["nads"].nads)
    assert set(a["conv"]) == {1, 2} and all(0 <= v <= 1 for v in a["conv"].values()) and set(a["fig6"]) == {0}
    full = estimate_kw("lenet", 6, step=1.0, seed=0, device="cpu", results_dir=tmp_path / "scratch", progress=False)
    np.testing.assert_allclose(a["nads"].nads, full.nads[:4], atol=2e-3)   # float16 rows of the same estimate


def test_the_kernels_nads_are_eq5s_estimate_with_all_their_rows():
    """Issue 61: the mixed derivative's NADs of LeNet (the kernel's) are Eq. 5's estimate itself, its 500 networks,
    with every row (Fig. 6 trains along indices up to 1,022): its first rows are Eq. 5's, bitwise."""
    full = bundle.load_nad("lenet", "hessian")
    settings = bundle.eq5_settings("lenet")
    eq5 = nads.NADResult.load(nads.result_path("lenet", settings, bundle.BUNDLE), settings)
    assert full.settings["num_networks"] == bundle.EQ5.networks and full.nads.shape == (1024, 1024)
    np.testing.assert_array_equal(full.nads[: bundle.EQ5.rows], eq5.nads)
    np.testing.assert_array_equal(full.eigenvalues, eq5.eigenvalues)
    assert bundle.fig6_basis("fig6_lenet_sigma3_hessian_seed0") is not None
