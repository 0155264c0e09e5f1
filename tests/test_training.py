"""Chapter 8's measures of a network's gradient covariance during training (`ch8_training`)."""

import dataclasses

import numpy as np
import pytest
import torch
from conftest import estimate_kw

from nadcore import data, findings, models, presets, train
from nadcore.checks import InputError
from nadcore.experiments import ch8_training as c8


def _unit(rng, d):
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


def test_a_linear_models_margin_gradient_is_its_weight_difference_at_every_input():
    torch.manual_seed(0)
    net = models.build("logreg", in_channels=1, num_classes=2)
    x = torch.randn(7, 1, 32, 32)
    w = next(m for m in net.modules() if isinstance(m, torch.nn.Linear)).weight.detach().double()
    g = c8.margin_gradients(net.train(), x, batch=3)
    assert np.allclose(g, np.tile((w[1] - w[0]).numpy(), (7, 1)), atol=1e-6)
    assert net.training   # the mode it found


def test_the_measures_of_rank_one_covariances_are_their_closed_forms():
    """G_0 = d d^T, G = e e^T (a linear model before and after training): overlaps (d.e)^2, u = e ranks
    first, and G_0 S G_0 = (d^T S d) G_0, so the prediction's cosine is the rescaling's."""
    rng = np.random.default_rng(0)
    dim = 64
    d, e = _unit(rng, dim), _unit(rng, dim)
    a = rng.standard_normal((dim, dim))
    s = a @ a.T / dim
    basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0].T
    m = c8.measures(np.outer(d, d), np.outer(e, e), s, e, basis, [1])
    assert m["self_overlap"][0] == pytest.approx((d @ e) ** 2, abs=1e-12)
    assert m["nad_overlap"][0] == pytest.approx((basis[0] @ e) ** 2, abs=1e-12)
    assert m["u_rank"] == 0 and m["u_cos"] == pytest.approx(1) and m["u_energy"] == pytest.approx(dim)
    assert m["cos_pred"] == pytest.approx(m["cos_scale"], abs=1e-12)
    dg = np.outer(e, e) - np.outer(d, d)
    assert m["cos_scale"] == pytest.approx(np.sum(dg * np.outer(d, d)) / np.linalg.norm(dg), abs=1e-12)
    iso = c8.measures(np.eye(dim), np.eye(dim) + np.outer(e, e), s, d, basis, [1])
    assert iso["cos_data"] == pytest.approx(c8.frobenius_cosine(np.outer(e, e), s))


def test_a_random_linear_models_expected_covariance_is_isotropic_as_monte_carlo_finds():
    """E over initialisations of G_0 = E[(w_1 - w_0)(w_1 - w_0)^T] = 2/(3D) I for torch's Linear default
    (weights uniform on +-1/sqrt(D)): 2,000 draws, every diagonal entry within 15 % and off-diagonal
    entries within 15 % of the diagonal's value."""
    dim, draws = 16, 2000
    g = np.zeros((dim, dim))
    for i in range(draws):
        torch.manual_seed(i)
        lin = torch.nn.Linear(dim, 2)
        g += c8.second_moment(c8.margin_gradients(torch.nn.Sequential(lin), torch.zeros(1, dim))) / draws
    expected = 2 / (3 * dim)
    assert np.allclose(np.diag(g), expected, rtol=0.15)
    assert np.max(np.abs(g - np.diag(np.diag(g)))) < 0.15 * expected


def test_half_overlap_of_repeated_gradients_is_one_and_the_checkpoints_are_checked():
    rng = np.random.default_rng(1)
    grads = rng.standard_normal((20, 32))
    assert np.allclose(c8.half_overlap(np.vstack([grads, grads]), [1, 4]), 1)
    recipe = train.Recipe(epochs=2, max_lr=0.1)   # 4 samples: one step an epoch
    for bad in ([1, 2], [0, 3], [0, 2, 1]):
        with pytest.raises(InputError, match="checkpoints must be"):
            c8.trajectory(torch.nn.Linear(4, 2), ((torch.randn(4, 4), torch.zeros(4).long()),) * 2, np.eye(4)[0],
                          np.eye(4), recipe, bad, [1], 4, 0)


def test_on_step_sees_each_step_and_a_checkpoint_leaves_the_run_as_it_was():
    v = torch.zeros(1, 8, 8)
    v[0, 0, 0] = 1
    d = (data.directional_dataset(v, 64, 1.0, 1.0, seed=1), data.directional_dataset(v, 64, 1.0, 1.0, seed=2))
    recipe = train.Recipe(epochs=3, max_lr=0.1, batch_size=16)
    runs, seen = [], []
    for measure in (False, True):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))

        def hook(step, net=net, measure=measure):
            seen.append(step)
            if measure:                       # what `trajectory` does at a checkpoint
                c8.margin_gradients(net, d[1][0][:8])
                train.accuracy(net, *d[1])

        runs.append(train.fit(net, d, recipe, on_step=hook))
    assert seen == 2 * list(range(1, 13))
    assert np.array_equal(runs[0].loss_history, runs[1].loss_history)
    seen.clear()
    train.fit(net, d, recipe, on_step=seen.append, stop_after=6)
    assert seen == list(range(1, 7))
    with pytest.raises(InputError, match="on_step must be a callable"):
        train.fit(net, d, recipe, on_step=3)


@pytest.mark.slow
def test_a_smoke_cell_gives_each_measure_at_each_checkpoint():
    settings = dataclasses.replace(presets.preset("training", "smoke"), n_train=200, grad_samples=64,
                                   checkpoints=[0, 1, 2, 4])   # two steps an epoch
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((1024, 16)))[0].T
    out = c8.cell("mlp", "early", 0, settings, 0, basis)
    t, k = len(settings.checkpoints), len(settings.ks)
    assert out["self_overlap"].shape == (t, k) and np.allclose(out["self_overlap"][0], 1)
    assert out["acc"].shape == (t,) and np.isnan(out["cos_pred"][0]) and out["leading"].dtype == np.float16
    assert out["half_overlap"].shape == (k,)
    with pytest.raises(InputError, match="network must be one of"):
        c8.cell("vgg", "early", 0, settings, 0, basis)
    with pytest.raises(InputError, match="task must be one of"):
        c8.cell("mlp", "middle", 0, settings, 0, basis)


def test_the_fashion_task_is_two_standardised_classes_and_its_direction_a_unit_vector():
    x = torch.rand(40, 3, 32, 32)
    y = torch.arange(40) % 10
    (xa, ya), (xb, yb) = c8.fashion_task(lambda train: (x, y), 30)
    assert xa.shape == (30, 1, 32, 32) and float(xa.mean()) == pytest.approx(0, abs=1e-5)
    assert set(ya.tolist()) == {0, 1} and int((ya == 1).sum()) == 15
    assert np.linalg.norm(c8.class_direction(xa, ya)) == pytest.approx(1)


def test_the_partial_cosine_is_the_cosine_of_the_residuals():
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((6, 6)) for _ in range(3))
    cos = c8.frobenius_cosine
    unit = c / np.linalg.norm(c)
    ra, rb = a - np.sum(a * unit) * unit, b - np.sum(b * unit) * unit
    assert c8.partial_cosine(cos(a, b), cos(a, c), cos(b, c)) == pytest.approx(cos(ra, rb), abs=1e-12)


def test_eig_of_is_the_eigen_decomposition_of_the_second_moment():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((15, 12))
    w, v = c8.eig_of(a)
    g = c8.second_moment(a)
    assert v.shape == (12, 12) and np.all(np.diff(w) <= 0)
    assert np.allclose(v @ g @ v.T, np.diag(w)) and np.allclose(v @ v.T, np.eye(12))


def _fake_cells(stay, lead, reps=3, steps=(0, 1, 4, 16, 79)):
    """Cells of two networks on one task: G keeps `stay` of G_0's leading 16 (ceiling 0.5) and the prediction leads
    S by `lead` beyond the rescaling, with a little spread between replicates."""
    t, out = len(steps), {}
    for n in ("lenet", "mlp"):
        for r in range(reps):
            jitter = 0.01 * r
            out[(n, "early", r)] = {
                "self_overlap": np.tile(np.r_[1, np.full(t - 1, stay)][:, None], (1, 4)),
                "half_overlap": np.full(4, 0.5), "acc": np.r_[50.0, np.full(t - 1, 95.0)],
                "u_rank": np.zeros(t), "u_cos": np.full(t, 0.9), "u_energy": np.ones(t),
                "cos_scale": np.r_[np.nan, np.zeros(t - 1)], "g0_pred": np.float64(0), "g0_data": np.float64(0),
                "cos_pred": np.r_[np.nan, np.full(t - 1, 0.3 + lead + jitter)],
                "cos_data": np.r_[np.nan, np.full(t - 1, 0.3 + jitter)]}
    return out


def test_the_chapters_verdicts_follow_their_thresholds():

    settings = dataclasses.replace(presets.preset("training", "smoke"), ks=[1, 4, 16, 64],
                                   checkpoints=[0, 1, 4, 16, 79], tasks=["early"], indices={"early": 0})
    kept, moved = (c8.training_verdicts(_fake_cells(stay, 0.2), settings) for stay in (0.3, 0.1))
    assert kept[0].outcome == findings.HOLDS and moved[0].outcome == findings.FAILS   # 0.3 >= 0.5 x 0.5; 0.1 is not
    assert "in every replicate in 2 of the 2 cases" in kept[0].measured and kept[1].outcome == findings.HOLDS
    assert c8.training_verdicts(_fake_cells(0.3, 0.0), settings)[1].outcome == findings.FAILS   # no lead on S
    mixed = _fake_cells(0.3, 0.2)
    for r in range(3):
        mixed[("mlp", "early", r)]["self_overlap"][1:] = 0.1
    assert c8.training_verdicts(mixed, settings)[0].outcome == findings.IN_PART
    assert c8.training_verdicts({}, settings) == []
    runs = [{0: 95.0, 32: 60.0}] * 3
    assert c8.kernel_verdict({"secant NADs": np.ones(4)}, [1, 4, 16, 64], runs, runs).outcome == findings.HOLDS
    chance = [{0: 50.5, 32: 50.0}] * 3
    assert c8.kernel_verdict({"secant NADs": np.ones(4)}, [1, 4, 16, 64], chance, runs).outcome == findings.FAILS
    assert c8.kernel_verdict({}, [1, 4, 16, 64], [], runs) is None


def test_the_linearised_network_starts_as_the_network_and_is_linear_in_its_weights():
    torch.manual_seed(0)
    net = models.build("lenet", in_channels=1, num_classes=2)
    before = [p.detach().clone() for p in net.parameters()]
    lin = models.Linearised(net)
    x = torch.randn(3, 1, 32, 32)
    assert torch.equal(lin(x), net(x)) and not train.vmappable(lin)
    assert sum(p.numel() for p in lin.parameters()) == sum(p.numel() for p in net.parameters())
    with torch.no_grad():
        step = [1e-2 * torch.randn_like(p) for p in lin.theta]
        outs = [lin(x)]
        for _ in range(2):
            for p, d in zip(lin.theta, step):
                p.add_(d)
            outs.append(lin(x))
    assert torch.allclose(outs[2] - outs[0], 2 * (outs[1] - outs[0]), atol=1e-6)   # linear in theta
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))        # net untouched


def test_a_linear_models_linearisation_trains_as_the_model_does():
    v = torch.zeros(1, 32, 32)
    v[0, 3, 5] = 1
    d = (data.directional_dataset(v, 64, 1.0, 1.0, seed=1), data.directional_dataset(v, 64, 1.0, 1.0, seed=2))
    runs = []
    for linearise in (False, True):
        torch.manual_seed(0)
        net = models.build("logreg", in_channels=1, num_classes=2)
        model = models.Linearised(net) if linearise else net
        runs.append(train.fit(model, d, train.Recipe(epochs=2, max_lr=0.1, batch_size=16)))
    assert np.allclose(runs[0].loss_history, runs[1].loss_history, atol=1e-6)


def test_fig6_trains_the_linearised_network_alone_when_asked():
    from nadcore.experiments import ch3_nads

    basis = np.eye(1024, dtype=np.float32)[:4]
    kw = dict(n_train=64, sigma=1.0, eps=1.0, epochs=1, max_lr=0.1, progress=False, device="cpu")
    full, lin = (ch3_nads.accuracy_on_nads("logreg", basis, [0, 3], linearised=flag, **kw) for flag in (False, True))
    assert lin.shape == (2,) and np.allclose(full, lin, atol=2.0)   # a linear model is its own linearisation


def test_the_linearised_verdict_compares_seed_means_index_by_index():

    full = {"secant": [{0: 92.0, 8: 60.0}, {0: 94.0, 8: 62.0}], "hessian": [{0: 50.0}, {0: 51.0}]}
    lin = {"secant": [{0: 91.0, 8: 50.0}, {0: 93.0, 8: 50.0}], "hessian": [{0: 50.5}, {0: 50.5}]}
    gaps = c8.linearised_gaps(full, lin)
    assert gaps["secant"][8] == pytest.approx((61.0, 50.0, -11.0, 2 ** 0.5, 0.0))   # deviations with ddof 1
    assert gaps["hessian"][0][:3] == (50.5, 50.5, 0.0)
    v = c8.linearised_verdict(gaps, 2)     # judged where either learns: u0 and u8 of the secant's, not the kernel's
    assert v.outcome == findings.IN_PART and "1 of the 2" in v.reason and "u₈: 61.0 / 50.0 %" in v.measured
    assert c8.linearised_verdict({"hessian": gaps["hessian"]}, 2).outcome == findings.UNRESOLVED
    assert c8.linearised_verdict({"secant": {0: gaps["secant"][0]}}, 2).outcome == findings.HOLDS
    assert c8.linearised_verdict({}, 2) is None
    assert c8.linearised_gaps(full, {"secant": [{}, {}]}) == {}


def test_the_two_conventions_differ_by_the_mean_gradient_alone():
    """Centred covariance against the uncentred second moment, from the same moments: a mean gradient along e_0
    makes e_0 the uncentred leading NAD; without a mean the two bases are one (closed forms)."""
    rng = np.random.default_rng(5)
    dim, n = 16, 400
    g = rng.standard_normal((n, dim)) * np.linspace(2, 1, dim)   # centred covariance led by axis 0 ... then 1
    g -= g.mean(0)
    shifted = g + 3.0 * np.eye(dim)[5]                           # a large mean along axis 5
    for grads, mean_led in ((g, False), (shifted, True)):
        mean = grads.mean(0)
        moments = {"count": n, "mean": mean, "m2": (grads - mean).T @ (grads - mean)}
        out = c8.conventions(moments, np.eye(dim), ks=[1, 4], rows=4)
        share = mean @ mean / (mean @ mean + np.trace(moments["m2"]) / n)
        assert out["mean_share"] == pytest.approx(share, abs=1e-12)
        if mean_led:
            assert out["mean_cos"] > 0.99 and out["overlap"][0] < 0.1
        else:
            assert np.allclose(out["overlap"], 1) and out["mean_share"] < 1e-20
    svd = np.linalg.svd(shifted, full_matrices=False)[2][0]      # the nads package's: the uncentred NADs
    assert abs(float(svd @ out["uncentred"][0].astype(np.float64))) > 0.999


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::nadcore.nads.result.NADTrustWarning")   # 16 networks: the machinery only
def test_the_convention_moments_are_the_estimates_own(tmp_path):

    moments = c8.convention_moments("lenet", 16, 0, tmp_path)
    est = estimate_kw("lenet", 16, seed=0, device="cpu", progress=False)
    assert np.allclose(c8.conventions(moments, est.nads, ks=[1, 4])["stored_overlap"], 1, atol=1e-6)


def test_the_chapters_sentences_follow_the_numbers():
    same = {"ks": np.array([1, 16]), "overlap": np.array([0.9999, 0.995]), "mean_share": np.asarray(1e-4)}
    text = c8.conventions_reading(same, 10000)
    assert "10,000 networks" in text and "holds 0.0001 of" in text and "does not change" in text
    assert "1 − 0.0001 at k = 1, 1 − 0.005 at k = 16" in text
    assert "differ" in c8.conventions_reading({**same, "overlap": np.array([0.5, 0.9])}, 10000)
    assert c8.conventions_reading(None, 10) == "Not stored yet."
    gaps = {"hessian": {0: (50.2, 51.0, 0.8, 0.1, 0.2)}, "secant": {0: (92.3, 60.0, -32.3, 0.2, 1.0)}}
    text = c8.linearised_reading(gaps)
    assert "51.0 % along the kernel's u₀ (LeNet: 50.2 %)" in text and "the secant's u₀, by -32.3 points" in text
    text = c8.linearised_reading({**gaps, ("secant", 1.5): {32: (80.7, 54.8, -25.9, 1.0, 1.0)}})
    assert text.endswith("and 54.8 % along the secant's u₃₂ at σ = 1.5 (LeNet: 80.7 %). The two differ most "
                         "along the secant's u₀, by -32.3 points.")
    assert c8.along(("hessian", 3.0)) == "along the kernel's NADs at σ = 3" and c8.along("secant").endswith("NADs")


def test_the_kernels_gram_of_linear_models_is_its_closed_form():
    """The mixed derivative H = d_theta grad_x f: for f = w.x + b, H^T H = I; for f = a^T W x, H^T H = W^T W + |a|^2 I;
    its eigenvectors are H's right singular vectors (the follow-up's kernel NADs of one network)."""
    from nadcore.nads import mixed_gram

    dim, hidden = 6, 3
    x0 = torch.randn(dim)
    torch.manual_seed(0)
    assert torch.allclose(mixed_gram(torch.nn.Linear(dim, 1), x0), torch.eye(dim, dtype=torch.float64), atol=1e-6)
    net = torch.nn.Sequential(torch.nn.Linear(dim, hidden, bias=False), torch.nn.Linear(hidden, 1, bias=False))
    w, a = net[0].weight.detach().double(), net[1].weight.detach().double().reshape(-1)
    expected = w.T @ w + (a @ a) * torch.eye(dim, dtype=torch.float64)
    gram = mixed_gram(net, x0)
    assert torch.allclose(gram, expected, atol=1e-6)
    h = torch.cat([torch.kron(a[:, None], torch.eye(dim, dtype=torch.float64)), w], 0)   # rows: d/dW_ij, d/da_i
    assert torch.allclose(h.T @ h, expected, atol=1e-12)
    right = torch.linalg.svd(h)[2]
    lead = torch.linalg.eigh(gram)[1][:, -1]
    assert abs(float(right[0] @ lead)) == pytest.approx(1, abs=1e-6)


def test_bad_input_to_the_chapters_functions_is_one_line():
    with pytest.raises(InputError, match="net must be a network"):
        models.Linearised("abc")
    with pytest.raises(InputError, match="trainable parameters"):
        models.Linearised(torch.nn.ReLU())
    with pytest.raises(InputError, match="no batch norm"):
        models.Linearised(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)))
    half = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    half[0].requires_grad_(False)
    lin = models.Linearised(half.eval())
    assert sum(p.requires_grad for p in lin.parameters()) == 2 and not lin.training
    data_ = ((torch.randn(8, 1, 2, 2), torch.arange(8) % 2),) * 2
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 2))
    with pytest.raises(InputError, match="normalize must be False"):
        c8.trajectory(net, data_, np.eye(4)[0], np.eye(4), train.Recipe(1, 0.1, normalize=True), [0], [1], 4, 0)
    with pytest.raises(InputError, match="u must be a unit vector"):
        c8.trajectory(net, data_, np.ones(4), np.eye(4), train.Recipe(1, 0.1), [0], [1], 4, 0)
    with pytest.raises(InputError, match="checkpoints must be a list of SGD steps"):
        c8.trajectory(net, data_, np.eye(4)[0], np.eye(4), train.Recipe(1, 0.1), [0, 1.7], [1], 4, 0)
    with pytest.raises(InputError, match="basis must hold"):
        c8.cell("mlp", "early", 0, presets.preset("training", "smoke"), 0, np.eye(1024)[:10])
    with pytest.raises(InputError, match="device must be"):
        c8.chapter_results("smoke", 0, "/nonexistent", device="tpu", compute=False)
    assert np.isnan(c8.measures(np.eye(4), np.zeros((4, 4)), np.eye(4), np.eye(4)[0], np.eye(4), [1])["u_energy"])


def test_the_helpers_refuse_what_has_no_answer():
    """The third adversarial pass of issue 58: these returned (0, 0.0), -inf, 1.0, 'u-₁', NaN or an IndexError."""
    for call, message in ((lambda: c8.closest(np.eye(3), np.zeros(3)), "u must be a non-zero direction"),
                          (lambda: c8.second_moment(np.ones(3)), "a must be rows of vectors"),
                          (lambda: c8.nad_name(-1), "i must be a NAD index >= 0"),
                          (lambda: c8.class_direction(torch.ones(4, 2), torch.zeros(4)), "y must hold both classes"),
                          (lambda: c8.mean_se(np.zeros((0, 3))), "x must hold at least one replicate")):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)
    assert np.isnan(c8.partial_cosine(0.5, 1.0, 1.0))      # A is C: nothing beyond the rescaling
