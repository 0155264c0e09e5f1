"""CIFAR-10 chapter: the loader (fake files in CIFAR-10's own format), carriers, NAD flips, the
reviewers' test, the experiments (tiny) and the figures."""

import os
import pickle
import shutil

import matplotlib
import numpy as np
import pytest
import torch
from torch import nn

matplotlib.use("Agg")

from nadcore import cifar, published  # noqa: E402
from nadcore.experiments import ch4_cifar10
from nadcore.plots import cifar as plots  # noqa: E402

PER_BATCH = 60


def _orthonormal(k=1024, d=1024, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    return q.T[:k].to(dtype)


@pytest.fixture(scope="module")
def fake_cifar(tmp_path_factory):
    """A data_root holding random images in CIFAR-10's python format (5 train batches + test)."""
    root = tmp_path_factory.mktemp("data")
    folder = root / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(0)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        entry = {"batch_label": name, "data": rng.integers(0, 256, (PER_BATCH, 3072), dtype=np.uint8),
                 "labels": [int(t) for t in rng.integers(0, 10, PER_BATCH)]}
        (folder / name).write_bytes(pickle.dumps(entry))
        batches[name] = entry
    meta = {"label_names": list(cifar.CIFAR10_CLASSES), "num_cases_per_batch": PER_BATCH}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta))
    return root, batches


def test_cifar10_loads_through_torchvision(fake_cifar):
    root, batches = fake_cifar
    x, y = cifar.load("cifar10", root, train=True, verify=False)
    assert x.shape == (5 * PER_BATCH, 3, 32, 32) and x.dtype == torch.float32 and y.dtype == torch.int64
    assert 0 <= x.min() and x.max() <= 1
    raw = batches["data_batch_1"]["data"][7].reshape(3, 32, 32)  # rows are R, G, B planes
    np.testing.assert_allclose(x[7].numpy(), raw / 255.0, atol=1e-7)
    assert y[:PER_BATCH].tolist() == batches["data_batch_1"]["labels"]
    xt, yt = cifar.load("cifar10", root, train=False, verify=False, limit=10)
    assert xt.shape == (10, 3, 32, 32) and yt.tolist() == batches["test_batch"]["labels"][:10]


class _Payload:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def test_an_unverified_cifar_copy_is_read_as_arrays_and_runs_no_code(fake_cifar, tmp_path, monkeypatch):
    """Issue 58 item 5: `verify=False` (which the md5 error suggests) unpickled the batch files; now they are read
    by `cifar.ArraysOnly`, so a file that would run code is refused in one line and runs nothing."""
    root, _ = fake_cifar
    bad = tmp_path / "data"
    shutil.copytree(root, bad)
    (bad / "cifar-10-batches-py" / "test_batch").write_bytes(pickle.dumps({"data": _Payload(), "labels": [0]}))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"not a CIFAR-10 batch file \(UnpicklingError: a CIFAR-10 batch file holds "
                                         r"numpy arrays only; this one names (posix|os)\.system\)"):
        cifar.load("cifar10", bad, train=False, verify=False)
    assert not (tmp_path / "PWNED").exists()
    for payload in (b"cnumpy\ndtype\n(Vnonsense\ntR.", b"c_codecs\nencode\n(Vx\nVnosuchcodec\ntR."):   # fourth pass
        (bad / "cifar-10-batches-py" / "test_batch").write_bytes(payload)
        with pytest.raises(ValueError, match=r"^data_root .*: not a CIFAR-10 batch file \((TypeError|LookupError)"):
            cifar.load("cifar10", bad, train=False, verify=False)


def test_an_unverified_copy_must_hold_cifars_own_kinds(fake_cifar, tmp_path):
    """Second adversarial pass (issue 58): 10 images with 9 labels, labels 99 and -5, float data of 1e9 or NaN."""
    root, batches = fake_cifar
    bad_entries = [{**batches["test_batch"], "labels": batches["test_batch"]["labels"][:-1]},
                   {**batches["test_batch"], "labels": [99] + batches["test_batch"]["labels"][1:]},
                   {**batches["test_batch"], "data": batches["test_batch"]["data"].astype(np.float64) * 1e9}]
    for k, entry in enumerate(bad_entries):
        bad = tmp_path / f"data{k}"
        shutil.copytree(root, bad)
        (bad / "cifar-10-batches-py" / "test_batch").write_bytes(pickle.dumps(entry))
        with pytest.raises(ValueError, match="is no CIFAR-10 batch: it needs uint8 data rows of 3,072"):
            cifar.load("cifar10", bad, train=False, verify=False)


def test_cifar10_md5_check_and_missing_data(fake_cifar, tmp_path):
    root, _ = fake_cifar
    with pytest.raises(ValueError, match="data_root.*verify=False"):
        cifar.load("cifar10", root, train=True, verify=True)  # not the published files
    with pytest.raises(ValueError, match="data_root.*download=True"):
        cifar.load("cifar10", tmp_path / "nothing", train=True, download=False)
    with pytest.raises(ValueError, match="name must be one of cifar10, digits"):
        cifar.load("mnist", root)


def test_digits_stand_in():
    x, y = cifar.load("digits", train=True, seed=0)
    xt, yt = cifar.load("digits", train=False, seed=0)
    assert x.shape[1:] == (3, 32, 32) and len(x) + len(xt) == 1797
    assert 0 <= x.min() and x.max() <= 1 and torch.equal(x[:, 0], x[:, 2])
    assert y.dtype == torch.int64 and torch.bincount(yt).min() >= 40  # stratified
    x2, _ = cifar.load("digits", train=True, seed=0)
    x3, _ = cifar.load("digits", train=True, seed=1)
    assert torch.equal(x, x2) and not torch.equal(x, x3)
    with pytest.raises(ValueError, match="test_fraction"):
        cifar.load("digits", test_fraction=1.5)


def test_poison_follows_the_carrier_rule():
    u = _orthonormal()
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(40, 3, 32, 32, generator=g), torch.arange(40) % 10
    index, eps = 5, 0.05
    xp = cifar.poison(x, y, u, index, eps)
    for n in range(len(x)):
        t = int(y[n])
        nad, channel, sign = (index, index + 1)[t // 6], t % 3, 2 * (t % 2) - 1
        assert cifar.carrier(t, index) == (nad, channel, sign)
        coef = xp[n, channel].flatten() @ u[nad]
        assert coef.item() == pytest.approx(sign * eps, abs=1e-5)
        delta = (xp[n] - x[n]).flatten(1)
        others = [c for c in range(3) if c != channel]
        assert delta[others].abs().max() == 0  # other channels untouched
        assert torch.allclose(delta[channel], delta[channel] @ u[nad] * u[nad], atol=1e-6)  # only along v
    # the carriers of the 10 classes are distinct
    assert len({cifar.carrier(t, index) for t in range(10)}) == 10


def test_poison_bad_input():
    u = _orthonormal(k=16)
    x, y = torch.rand(4, 3, 32, 32), torch.tensor([0, 1, 2, 3])
    for bad in (-1, 15, 2.0):
        with pytest.raises(ValueError, match=r"index must be an int in 0\.\.14"):
            cifar.poison(x, y, u, bad)
    with pytest.raises(ValueError, match="nads must be rows of dimension H\\*W = 1024"):
        cifar.poison(x, y, torch.randn(16, 256), 0)
    with pytest.raises(ValueError, match="y must hold one label in 0..11"):
        cifar.poison(x, torch.tensor([0, 1, 2, 12]), u, 0)
    with pytest.raises(ValueError, match="3 colour channels"):
        cifar.poison(x[:, :1], y, u, 0)


@pytest.mark.parametrize("k", [1024, 100])
def test_nad_flip_is_a_rotation(k):
    u = _orthonormal(k=k, dtype=torch.float64)
    x = torch.randn(6, 3, 32, 32, dtype=torch.float64)
    xf = cifar.nad_flip(x, u)
    a, b = x.flatten(1), xf.flatten(1)
    torch.testing.assert_close(b.norm(dim=1), a.norm(dim=1))
    torch.testing.assert_close(b @ b.T, a @ a.T)
    coef = x.flatten(2) @ u.T
    torch.testing.assert_close(xf.flatten(2) @ u.T, coef.flip(-1))  # coefficients reversed
    torch.testing.assert_close(cifar.nad_flip(xf, u), x)  # an involution
    with pytest.raises(ValueError, match="orthonormal"):
        cifar.nad_flip(x, 2 * u)


def test_edit_nads_modes():
    u = _orthonormal(k=32)
    x = torch.rand(5, 3, 32, 32)
    removed = cifar.edit_nads(x, u, [0, 3], "remove")
    assert (removed.flatten(2) @ u[[0, 3]].T).abs().max() < 1e-5
    flipped = cifar.edit_nads(x, u, [0, 3], "flip")
    torch.testing.assert_close(flipped.flatten(2) @ u[[0, 3]].T, -(x.flatten(2) @ u[[0, 3]].T), atol=1e-5, rtol=1e-4)
    shifted = cifar.edit_nads(x, u, [30, 31], "shift", size=0.7)
    torch.testing.assert_close((shifted - x).flatten(1).norm(dim=1), torch.full((5,), 0.7), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="mode must be one of remove, flip, shift"):
        cifar.edit_nads(x, u, [0], "blur")
    with pytest.raises(ValueError, match="indices must be NAD indices in 0..31"):
        cifar.edit_nads(x, u, [32], "remove")


class _ReadsNAD(nn.Module):
    """A classifier whose logits depend only on the red channel's coefficient on one direction."""

    def __init__(self, v):
        super().__init__()
        self.v = v

    def forward(self, x):
        c = x[:, 0].flatten(1) @ self.v
        return torch.stack([c, -c], 1)


def test_reviewers_test_sees_what_a_network_reads():
    u = _orthonormal(k=64)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(50, 3, 32, 32, generator=g)
    y = torch.zeros(50, dtype=torch.int64)
    model = _ReadsNAD(u[0])
    rows = ch4_cifar10.reviewers_test(model, x, y, u, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), ks=(1, 4), size=50.0,
                                      device="cpu")
    assert len(rows) == 2 * 2 * 3
    get = {(r["k"], r["where"], r["mode"]): r for r in rows}
    assert get[(1, "first", "flip")]["changed"] == 100.0  # the sign of the read coefficient flips
    assert all(get[(k, "last", m)]["changed"] == 0.0 for k in (1, 4) for m in cifar.EDIT_MODES)
    assert get[(4, "first", "shift")]["norm"] == pytest.approx(50.0, rel=1e-4)
    with pytest.raises(ValueError, match="ks must hold ints in 1..32"):
        ch4_cifar10.reviewers_test(model, x, y, u, (0,) * 3, (1,) * 3, ks=(33,))


RECIPE = {"epochs": 1, "max_lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 32}


def test_cifar10_end_to_end(fake_cifar, tmp_path):
    """Fake CIFAR-10 files -> load -> poison -> normalise -> a one-epoch LeNet, cached and resumed."""
    root, _ = fake_cifar
    train = cifar.load("cifar10", root, train=True, verify=False, limit=96)
    test = cifar.load("cifar10", root, train=False, verify=False, limit=40)
    mean, std = cifar.stats("cifar10", train[0])
    u = _orthonormal()
    inputs = ch4_cifar10.prepare(train[0], mean, std, u, train[1], index=0, eps=0.05)
    expected = cifar.normalise(cifar.poison(train[0], train[1], u, 0, 0.05), mean, std)
    torch.testing.assert_close(inputs, expected)  # poison first, then normalise
    curve = ch4_cifar10.poisoning_curve("lenet", train, test, u, [0, 1022], 0.05, mean, std, RECIPE,
                                  device="cpu", results_dir=tmp_path, progress=False)
    assert curve["index"].tolist() == [-1, 0, 1022]
    assert np.isnan(curve["follow_rate"][0]) and np.all((curve["test_acc"] >= 0) & (curve["test_acc"] <= 100))
    assert len(list((tmp_path / "cifar10").glob("poison-lenet-*.npz"))) == 3
    again = ch4_cifar10.poisoning_curve("lenet", train, test, u, [0, 1022], 0.05, mean, std, RECIPE,
                                  device="cpu", results_dir=tmp_path, progress=False)
    np.testing.assert_array_equal(again["test_acc"], curve["test_acc"])
    flip = ch4_cifar10.flip_experiment(["logreg"], train, test, {"logreg": u}, RECIPE, device="cpu", progress=False)
    assert flip["arch"] == ["logreg"] and flip["original"].shape == flip["flipped"].shape == (1,)
    one = ch4_cifar10.flip_run("logreg", train, test, u, "flipped", RECIPE, device="cpu")   # one run of Fig. 8
    assert one["test_acc"] == flip["flipped"][0] and one["train_acc"] == flip["train_flipped"][0]
    with pytest.raises(ValueError, match="kind must be 'original' or 'flipped'"):
        ch4_cifar10.flip_run("logreg", train, test, u, "upside-down", RECIPE)
    with pytest.raises(ValueError, match="indices must lie in 0..1022"):
        ch4_cifar10.poisoning_curve("lenet", train, test, u, [1023], 0.05, mean, std, RECIPE, progress=False)
    with pytest.raises(ValueError, match="recipe must give max_lr"):
        ch4_cifar10.poisoning_curve("lenet", train, test, u, [0], 0.05, mean, std, {"epochs": 1}, progress=False)
    with pytest.raises(ValueError, match="missing momentum, weight_decay, batch_size"):
        ch4_cifar10.poisoning_curve("lenet", train, test, u, [0], 0.05, mean, std, {"epochs": 1, "max_lr": 0.1},
                                    progress=False)
    with pytest.raises(ValueError, match="inputs are normalised by `prepare`"):
        ch4_cifar10.poisoning_curve("lenet", train, test, u, [0], 0.05, mean, std, {**RECIPE, "normalize": True},
                                    progress=False)
    with pytest.raises(ValueError, match="missing \\['lenet'\\]"):
        ch4_cifar10.flip_experiment(["lenet"], train, test, {"logreg": u}, RECIPE, progress=False)


def test_clean_model_is_cached(tmp_path):
    x, y = cifar.load("digits", train=True, limit=64)
    xt, yt = cifar.load("digits", train=False, limit=32)
    mean, std = cifar.stats("digits", x)
    model, acc = ch4_cifar10.clean_model("logreg", (x, y), (xt, yt), mean, std, RECIPE, device="cpu",
                                       results_dir=tmp_path)
    again, acc2 = ch4_cifar10.clean_model("logreg", (x, y), (xt, yt), mean, std, RECIPE, device="cpu",
                                        results_dir=tmp_path)
    assert acc2 == pytest.approx(acc)
    for p, q in zip(model.parameters(), again.parameters()):
        assert torch.equal(p.detach().cpu(), q.detach().cpu())


def test_figures():
    u = _orthonormal(k=64)
    x, y = torch.rand(10, 3, 32, 32), torch.arange(10)
    fig = plots.poison_gallery(x, cifar.poison(x, y, u, 0, 0.05), y, cifar.classes("digits"), title="NADs 0 and 1")
    assert fig.axes[0].get_title() == "0" and len(fig.axes) == 31          # 30 panels and the colour bar
    assert [fig.axes[10 + j].get_xlabel() for j in range(3)] == ["R", "G", "B"]   # the carrier's channel
    assert fig.axes[-1].get_xlabel().startswith("$d$")
    fig = plots.poison_gallery(x, x, y, cifar.FASHION_CLASSES)          # Fashion-MNIST's long names: two lines
    assert [fig.axes[j].get_title() for j in (0, 1, 9)] == ["T-shirt/\ntop", "Trouser", "Ankle\nboot"]
    curve = {"index": np.array([-1, 0, 8, 1022]), "train_acc": np.array([99.0, 100, 99, 99]),
             "test_acc": np.array([90.0, 40, 88, 89]), "follow_rate": np.array([np.nan, 60, 1, 0])}
    ax = plots.fig7(curve, "lenet").axes[0]
    assert len(ax.lines) == 3 and ax.get_xlabel().startswith("NAD index")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "8", "1022"]
    ax = plots.fig8({"arch": ["lenet", "logreg"], "original": np.array([95.0, 96]),
                     "flipped": np.array([80.0, 96])}).axes[0]
    assert len(ax.patches) == 4 and [t.get_text() for t in ax.get_xticklabels()] == ["LeNet", "LogReg"]
    rows = [{"k": k, "where": w, "mode": m, "changed": 1.0, "norm": 1.0}
            for k in (1, 2) for w in ("first", "last") for m in ("remove", "shift")]
    left, right = plots.reviewers_test(rows).axes
    assert len(left.lines) == 4 and "changed" in left.get_ylabel()
    assert "x' - x" in right.get_ylabel() and "accuracy" not in right.get_ylabel()   # the edit's size
    # series that coincide (every row is 1.0 here) stay visible: each (mode, where) has its own marker
    # or fill, and the first NADs' small filled markers are drawn over the last NADs' large open ones
    looks = {(ln.get_marker(), ln.get_markerfacecolor() == "none", ln.get_markersize()) for ln in left.lines}
    assert len(looks) == 4
    first = [ln for ln in left.lines if "first" in ln.get_label()]
    last = [ln for ln in left.lines if "last" in ln.get_label()]
    assert min(ln.get_zorder() for ln in first) > max(ln.get_zorder() for ln in last)
    assert max(ln.get_markersize() for ln in first) < min(ln.get_markersize() for ln in last)
    # the published Figs. 7 and 8 beside ours, on the same axes
    fashion = {**curve, "test_acc": np.array([85.0, 45, 80, 86])}
    left, right = plots.fig7_beside_published({"digits": curve, "Fashion-MNIST": fashion}).axes
    assert left.get_title() == "published (ResNet-18, CIFAR-10)" and right.get_title() == "ours (LeNet, stand-ins)"
    assert left.get_xlabel() == right.get_xlabel() == "NAD index $i$ of the carrier"
    assert left.get_xscale() == right.get_xscale() == "symlog" and left.get_ylim() == right.get_ylim()
    np.testing.assert_array_equal(left.lines[0].get_xdata(), published.fig7()["index"])    # every published carrier
    assert [ln.get_label() for ln in right.lines if not ln.get_label().startswith("_")][:2] == [
        "digits: accuracy", "digits: follow a wrong carrier"]
    flips = {"digits": {"arch": ["lenet", "logreg"], "original": np.array([95.0, 96]), "flipped": np.array([80.0, 96])}}
    left, right = plots.fig8_beside_published(flips).axes
    assert left.get_title() == "published (four CNNs, CIFAR-10)"
    assert right.get_title() == "ours (LeNet, LogReg; stand-ins)"
    assert [t.get_text() for t in left.get_xticklabels()] == ["LeNet", "VGG-11", "ResNet-18", "DenseNet-\n121"]
    assert [b.get_height() for b in left.patches[:4]] == [o for o, _ in published.FIG8.values()]
    assert [t.get_text() for t in right.get_xticklabels()] == ["LeNet", "LogReg"] and len(right.patches) == 4
    assert "digits" in [t.get_text() for t in right.texts] and left.get_ylim() == right.get_ylim()
    for ax in (left, right):                                        # the accuracy axis stops at 100 %
        assert max(ax.get_yticks()) == 100 and ax.spines["left"].get_bounds() == (0, 100)


def test_first_of_each_class_and_the_reviewers_table():
    y = torch.tensor([3, 1, 0, 1, 2, 0, 3])
    assert cifar.first_of_each_class(y, 4).tolist() == [2, 1, 4, 0]
    with pytest.raises(ValueError, match="missing \\[4\\]"):
        cifar.first_of_each_class(y, 5)
    rows = [{"k": 2, "where": w, "mode": m, "changed": c, "accuracy": 80.0, "norm": n, "relative": 0.25}
            for w, c, n in (("first", 12.345, 1.5), ("last", 0.04, 0.0123)) for m in ("remove", "shift")]
    table = plots.reviewers_table(rows)
    assert list(table.index) == [(2, "remove"), (2, "shift")]
    assert table.loc[(2, "remove")].tolist() == [12.3, 0.0, 1.5, 0.012]


# ----------------------------------------------------------------------------- the paper's numbers

def test_published_figs_7_and_8():
    fig7 = published.fig7()
    assert fig7["index"][0] == 0 and fig7["index"][-1] == 1020 and (np.diff(fig7["index"]) % 10 == 0).all()
    assert ((fig7["accuracy"] > 0) & (fig7["accuracy"] < 100)).all()
    assert fig7["accuracy"][0] == fig7["accuracy"].min() < 20      # a carrier on NAD 0: the lowest accuracy
    assert fig7["accuracy"][fig7["index"] >= 400].min() > 70       # late carriers are ignored
    assert published.fig8("lenet") == (69.0, 48.0) and published.fig8("resnet18") == (89.0, 58.0)
    assert all(o > f for o, f in published.FIG8.values())         # every CNN loses accuracy when flipped
    with pytest.raises(ValueError, match="arch must be one of"):
        published.fig8("logreg")


def test_tables_put_the_papers_numbers_beside_ours():
    curve = {"index": np.array([-1, 0, 4, 1022]), "test_acc": np.array([96.2, 46.2, 94.9, 95.6])}
    table = plots.curve_table({"ours": curve})
    assert list(table.index) == ["none (clean)", "0", "1–9", "10–99", "100–499", "500–1023"]
    paper = table[plots.PUBLISHED].tolist()
    assert paper[:3] == ["89 (Fig. 8)", "17.6 (i = 0)", "no carrier here (every 10th index)"]
    assert paper[3] == "33.3–68.2, mean 46.9 (9 carriers, i = 10–90)"      # the published carriers 10..90
    assert table["ours"].tolist() == ["96.2", "46.2 (i = 0)", "94.9 (i = 4)", "no carrier here", "no carrier here",
                                      "95.6 (i = 1022)"]
    assert "–" not in table.to_numpy().ravel().tolist()                    # no dashes: every cell says something


def test_the_tables_name_the_dataset_of_every_number():
    digits = {"index": np.array([-1, 0, 1, 1022]), "test_acc": np.array([97.0, 15.0, 96.0, 97.5])}
    fashion = {"index": np.array([-1, 0, 2, 1022]), "test_acc": np.array([88.0, 40.0, 87.0, 88.5])}
    table = plots.curve_table({"digits": digits, "Fashion-MNIST": fashion})
    assert table.loc["1–9"].tolist()[1:] == ["96.0 (i = 1)", "87.0 (i = 2)"]    # every curve's carriers


# ----------------------------------------------------------------------------- readings of Fig. 7

def test_carrier_reading_finds_where_the_hijack_reaches():
    curve = {"index": np.array([-1, 0, 2, 8, 32, 1022]), "test_acc": np.array([88.0, 41.4, 71.5, 85.4, 88.1, 87.0])}
    r = ch4_cifar10.carrier_reading(curve)                           # 2 points under clean: below 86.0
    assert r.clean == 88.0 and r.indices == [0, 2, 8, 32, 1022]
    assert r.hijacked == [0, 2, 8] and r.ignored == [32, 1022] and r.reach == 8 and r.prefix
    assert r.hijacked_range == (41.4, 85.4) and r.ignored_range == (87.0, 88.1)
    assert r.first == (0, 41.4) and r.last == (1022, 87.0)
    r = ch4_cifar10.carrier_reading(curve, margin=0.5)               # now NAD 1022 (1 point under) counts
    assert r.hijacked == [0, 2, 8, 1022] and not r.prefix and r.reach == 1022
    clean = ch4_cifar10.carrier_reading({"index": [-1, 5], "test_acc": [90.0, 89.0]})
    assert clean.hijacked == [] and clean.reach is None and clean.hijacked_range is None and clean.prefix
    with pytest.raises(ValueError, match="clean network"):
        ch4_cifar10.carrier_reading({"index": [0, 5], "test_acc": [40.0, 89.0]})
    with pytest.raises(ValueError, match="margin must be"):
        ch4_cifar10.carrier_reading(curve, margin=-1)


def test_the_published_fig7_as_a_curve():
    paper = ch4_cifar10.published_curve()
    assert paper["index"][0] == -1 and paper["test_acc"][0] == published.fig8("resnet18")[0]   # clean: Fig. 8's
    np.testing.assert_array_equal(paper["index"][1:], published.fig7()["index"])
    r = ch4_cifar10.carrier_reading(paper)
    assert r.first == (0, 17.6) and r.last == (1020, 80.3)
    assert r.ignored == [] and r.reach == 1020       # every published carrier costs more than 2 points


def test_fig7_verdict_says_where_the_stand_ins_follow_the_paper():
    paper = ch4_cifar10.carrier_reading(ch4_cifar10.published_curve())
    digits = ch4_cifar10.carrier_reading({"index": [-1, 0, 1, 1022], "test_acc": [96.2, 46.2, 95.6, 95.6]})
    fashion = ch4_cifar10.carrier_reading({"index": [-1, 0, 2, 8, 32], "test_acc": [88.0, 41.4, 71.5, 85.4, 88.1]})
    v = ch4_cifar10.fig7_verdict({"the digits": digits, "Fashion-MNIST": fashion}, paper)
    assert v["first"] and not v["reach"]                   # NAD 0 as in the paper; not the paper's reach
    assert v["text"] == ("a carrier on NAD 0 hijacks training in the paper and on the digits and Fashion-MNIST; "
                         "its reach is not reproduced: in the paper every carrier up to NAD 1020, "
                         "here on the digits NAD 0 only, on Fashion-MNIST NADs 0–8")
    wide = ch4_cifar10.carrier_reading({"index": [-1, 0, 512, 1022], "test_acc": [90.0, 20.0, 60.0, 80.0]})
    assert ch4_cifar10.fig7_verdict({"x": wide}, paper)["reach"]
    none = ch4_cifar10.carrier_reading({"index": [-1, 0], "test_acc": [90.0, 89.0]})
    v = ch4_cifar10.fig7_verdict({"x": none}, paper)
    assert not v["first"] and v["text"].startswith("a carrier on NAD 0 does not hijack")
    with pytest.raises(ValueError, match="ours must hold"):
        ch4_cifar10.fig7_verdict({}, paper)
