"""NAD estimators against theory (Eq. 4-5, isotropic LogReg), against each other, and on bad input."""

import subprocess
import sys
import threading
from functools import partial

import matplotlib
import numpy as np
import pytest
import torch
from conftest import estimate_kw
from torch import nn

from nadcore import bundle, fourier, models, nads, published, store
from nadcore.device import autocast
from nadcore.experiments import ch3_nads
from nadcore.nads import chunks, gradients, networks
from nadcore.plots import nads as plots
from nadcore.plots import style
from nadcore.pooling import LinearPooling

matplotlib.use("Agg")

M_PRE = 0.5 ** (torch.arange(16.0) / 2)  # m^2 halves from one entry to the next: well-separated NADs


def small_cnn(pool=True, act=nn.ReLU):
    """A LeNet-like network on 1x8x8 inputs, cheap enough for many estimates."""
    layers = [nn.Conv2d(1, 3, 3), act(), *([nn.MaxPool2d(2)] if pool else []), nn.Flatten()]
    return nn.Sequential(*layers, nn.Linear(3 * (9 if pool else 36), 1))


def linear_cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Conv2d(4, 2, 3, stride=2), nn.Flatten(), nn.Linear(18, 1))


def canonical_order(result):
    """Index of the canonical basis vector each NAD is closest to, and how close (|cos|)."""
    return np.abs(result.nads).argmax(1), np.abs(result.nads).max(1)


# ----------------------------------------------------------------------------- theory

@pytest.mark.parametrize("method", [pytest.param("autograd", marks=pytest.mark.slow), "secant",
                                    pytest.param("hessian", marks=pytest.mark.slow)])   # 4 s each: make test
def test_linear_pooling_nads_are_the_canonical_basis_ordered_by_m2(method):
    """Eq. 4 (gradient covariance) and Eq. 5 (mixed derivative): both diag(m^2) up to a factor."""
    res = estimate_kw(lambda: LinearPooling(M_PRE, 4), 800, method=method, input_shape=(16,),
                         batch_size=400, progress=False)
    order, cos = canonical_order(res)
    assert list(order[:8]) == list(range(8))          # sorted by decreasing m^2 (well-separated entries)
    assert cos[:8].min() > 0.9
    expected = (M_PRE ** 2 / (M_PRE ** 2).sum()).numpy()
    np.testing.assert_allclose(res.eigenvalues[:6] / res.eigenvalues.sum(), expected[:6], rtol=0.3)


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_logreg_gradient_covariance_is_isotropic():
    """LogReg's gradient is its weight, uniform in +-1/sqrt(D): covariance I/(3D); the sample
    eigenvalues must lie in the Marchenko-Pastur bulk (1 +- sqrt(D/N))^2 / (3D)."""
    N, D = 2048, 1024
    res = estimate_kw("logreg", N, progress=False)
    c, g = 1 / (3 * D), D / (N - 1)
    assert res.eigenvalues.mean() == pytest.approx(c, rel=0.02)
    assert res.eigenvalues.max() < 1.15 * c * (1 + g ** 0.5) ** 2
    assert res.eigenvalues.min() > 0.7 * c * (1 - g ** 0.5) ** 2


def test_a_linear_model_whose_input_reaches_two_branches_has_the_secant_of_its_exact_gradient():
    """Issue 58: `o(cat[a(x), b(x)])` is linear, so its secant is its gradient, the second branch included."""
    kw = dict(input_shape=(1, 8, 8), progress=False)
    linear = lambda: TwoBranch(act=nn.Identity)
    sec = estimate_kw(linear, 40, method="secant", **kw)
    auto = estimate_kw(linear, 40, method="autograd", **kw)
    np.testing.assert_allclose(sec.eigenvalues[:10], auto.eigenvalues[:10], rtol=1e-4)
    assert nads.subspace_overlap(sec.nads, auto.nads, 10) > 0.9999


class NanToNumBranch(nn.Module):
    """Linear: a layer of x, and a branch reading x once NaN are cleaned, centred: constant stand-ins never see it."""

    def __init__(self):
        super().__init__()
        self.lin, self.w = nn.Linear(16, 1), nn.Parameter(torch.randn(16))

    def forward(self, x):
        f = x.flatten(1)
        y = torch.nan_to_num(f)
        return self.lin(f) + ((y - y.mean(1, keepdim=True)) * self.w).sum(1, keepdim=True)


class ArgmaxBranch(nn.Module):
    """A convolution's maps, and one of them picked at the input's argmax: the input reaches the output twice."""

    def __init__(self):
        super().__init__()
        self.c, self.fc = nn.Conv2d(1, 2, 3, padding=1), nn.Linear(50, 1)

    def forward(self, x):
        y = torch.relu(self.c(x)).flatten(1)
        return self.fc(y) + y.gather(1, x.flatten(1).argmax(1, keepdim=True))


class Recurses(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 1)

    def forward(self, x):
        return self(x)


class BatchMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 1)

    def forward(self, x):
        f = x.flatten(1)
        return self.lin(f) + self.lin(f - f.mean(0, keepdim=True))


class Gated(nn.Module):
    """ArgmaxBranch's second branch, switched on by a weight: off in network 0 (seed 0), on in others."""

    def __init__(self):
        super().__init__()
        self.c, self.fc, self.g = nn.Conv2d(1, 2, 3, padding=1), nn.Linear(32, 1), nn.Parameter(torch.randn(1))

    def forward(self, x):
        y = torch.relu(self.c(x)).flatten(1)
        return self.fc(y) + (self.g > 0).float() * y.gather(1, x.flatten(1).argmax(1, keepdim=True))


def test_the_shortcut_is_checked_against_the_plain_probes(monkeypatch):
    """Third adversarial pass of issue 58: branches that constant stand-ins cannot see (NaN cleaned then centred, the
    input's argmax) gave a wrong secant silently; each chunk's first network now checks the shortcut against the plain
    probes. A model that mixes the inputs of a batch is refused (its probes would see each other)."""
    kw = dict(input_shape=(1, 4, 4), progress=False)
    sec, auto = (estimate_kw(NanToNumBranch, 40, method=m, **kw) for m in ("secant", "autograd"))
    np.testing.assert_allclose(sec.eigenvalues[:5], auto.eigenvalues[:5], rtol=1e-4)
    torch.manual_seed(0)
    net, x0 = ArgmaxBranch().eval(), torch.randn(1, 5, 5)
    assert gradients.first_linear_layer(net, x0) is None and gradients.checked_first_layer(net, x0, 100.0) is None
    gated = estimate_kw(Gated, 40, **kw)       # the re-probe: a branch network 0's weights turn off, others on
    monkeypatch.setattr(chunks, "checked_first_layer", lambda *a, **k: None)   # the plain probes
    np.testing.assert_allclose(gated.eigenvalues[:5], estimate_kw(Gated, 40, **kw).eigenvalues[:5], rtol=1e-5)
    lenet = models.build("lenet", num_classes=1).eval()
    assert gradients.checked_first_layer(lenet, torch.randn(1, 32, 32), 100.0) == "features.0"
    with pytest.raises(ValueError, match="^model must compute each input of a batch on its own"):
        estimate_kw(BatchMix, 4, **kw)
    with pytest.raises(ValueError, match="^model must run its forward pass without recursing"):
        estimate_kw(Recurses, 4, **kw)
    dilated = lambda: nn.Sequential(nn.Conv2d(1, 1, (2, 3), dilation=(1, 2), padding=(0, 2), padding_mode="circular"),
                                    nn.Flatten(), nn.LazyLinear(1))   # reaches 5 entries of 4: it crashed the shortcut
    sec, auto = (estimate_kw(dilated, 20, method=m, **kw) for m in ("secant", "autograd"))
    np.testing.assert_allclose(sec.eigenvalues[:3], auto.eigenvalues[:3], rtol=1e-4)


class _WeightGated(nn.Module):
    """A second reader of the input (entry 5 past 60, which only the secant's probe e_5 reaches) that a weight switches
    on in some networks only: no sample of probes on the chunk's first network sees it (the fourth adversarial pass)."""

    def __init__(self):
        super().__init__()
        self.fc, self.g = nn.Linear(64, 1), nn.Parameter(torch.randn(()))

    def forward(self, x):
        f = x.flatten(1)
        return self.fc(f) + 1000.0 * (f[:, 5:6] > 60).float() * (self.g > 0).float()


class _LastDim(nn.Module):
    """A Linear first layer on inputs of shape (1, 64): its outputs have the shape (N, 1, 1), the fast path's too."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc(x)[:, 0, 0]


def test_the_shortcut_is_taken_only_where_the_models_graph_shows_one_reader_of_the_input():
    """Fourth adversarial pass of issue 58: the shortcut is taken only where `torch.fx` traces the model and its input
    reaches nothing but the first layer (reshapes and shape reads aside), whatever the weights; the registry's
    networks keep it. A Linear first layer's outputs keep the shape the layer gives its input."""
    factory, _ = nads.one_output_factory(_WeightGated, (1, 8, 8))
    seed = next(s for s in range(100) if nads.network(factory, s, 0, "cpu").g <= 0
                and sum(bool(nads.network(factory, s, i, "cpu").g > 0) for i in range(8)) >= 2)
    x0 = nads.eval_point_for(seed, (1, 8, 8))
    assert gradients.first_linear_layer(nads.network(factory, seed, 0, "cpu"), x0) is None
    est = estimate_kw(_WeightGated, 8, input_shape=(1, 8, 8), seed=seed, progress=False, device="cpu")
    plain = torch.stack([gradients.secant_gradient(nads.network(factory, seed, i, "cpu"), x0, 100.0, None)
                         for i in range(8)]).double()
    np.testing.assert_allclose(est.eigenvalues[:3], torch.linalg.eigvalsh(torch.cov(plain.T)).flip(0)[:3].numpy(),
                               rtol=1e-4)
    for arch in ("lenet", "resnet18", "vit"):
        net, x = models.build(arch, num_classes=1).eval(), torch.randn(1, 32, 32)
        assert gradients.first_linear_layer(net, x) is not None, arch
    kw = dict(input_shape=(1, 64), progress=False, device="cpu")
    sec, auto = (estimate_kw(_LastDim, 8, method=m, **kw) for m in ("secant", "autograd"))
    np.testing.assert_allclose(sec.eigenvalues[:3], auto.eigenvalues[:3], rtol=1e-4)


def test_a_large_input_runs_its_probes_in_blocks(monkeypatch):
    """Third adversarial pass of issue 58: a 1 x 128 x 128 model (within the input bound) took 22 GB for its probes
    at once and was killed; past `PROBES_AT_ONCE` the probes run a block at a time, and give the same secant."""
    torch.manual_seed(0)
    net, x0 = small_cnn().eval(), torch.randn(1, 8, 8)
    whole = gradients.secant_gradient(net, x0, 100.0, None)
    assert torch.equal(torch.cat([gradients._probe_rows(x0, 100.0, a, min(a + 7, 128)) for a in range(0, 128, 7)]),
                       gradients.probes(x0, 100.0))
    monkeypatch.setattr(gradients, "PROBES_AT_ONCE", 0)
    monkeypatch.setattr(gradients, "PROBE_BLOCK", 4 * 64 * 10)       # ten probes a block
    torch.testing.assert_close(gradients.secant_gradient(net, x0, 100.0, "auto"), whole, rtol=1e-5, atol=1e-7)


def test_secant_equals_autograd_without_relu_or_pooling():
    kw = dict(input_shape=(1, 8, 8), progress=False)
    sec = estimate_kw(linear_cnn, 40, method="secant", **kw)
    auto = estimate_kw(linear_cnn, 40, method="autograd", **kw)
    np.testing.assert_allclose(sec.eigenvalues[:10], auto.eigenvalues[:10], rtol=1e-4)
    assert nads.subspace_overlap(sec.nads, auto.nads, 10) > 0.9999
    smooth = lambda: small_cnn(pool=False, act=nn.Tanh)
    sec = estimate_kw(smooth, 30, method="secant", step=1e-2, **kw)
    auto = estimate_kw(smooth, 30, method="autograd", **kw)
    assert nads.subspace_overlap(sec.nads, auto.nads, 5) > 0.999


class Doubled(nn.Module):
    """Scales its input before the first layer: the linear shortcut must not be taken."""

    def __init__(self):
        super().__init__()
        self.net = small_cnn()

    def forward(self, x):
        return self.net(2 * x)


class TwoBranch(nn.Module):
    """Two convolutions that both read the input, concatenated (an Inception-like stem): issue 58."""

    def __init__(self, act=nn.ReLU):
        super().__init__()
        self.a, self.b = nn.Conv2d(1, 3, 3, padding=1), nn.Conv2d(1, 2, 5, padding=2)
        self.head = nn.Sequential(act(), nn.Flatten(), nn.LazyLinear(1))

    def forward(self, x):
        return self.head(torch.cat([self.a(x), self.b(x)], 1))


class InputSkip(nn.Module):
    """A convolutional path plus a skip from the input itself to the output."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))
        self.skip = nn.Parameter(torch.randn(1, 1, 8, 8))

    def forward(self, x):
        return self.body(x) + (x * self.skip).sum((1, 2, 3))[:, None]


class _StdConv(nn.Conv2d):
    """A weight-standardised convolution (timm's StdConv2d): a Conv2d subclass whose forward is not conv(x, weight)."""

    def forward(self, x):
        w = self.weight - self.weight.mean((1, 2, 3), keepdim=True)
        return self._conv_forward(x, w / (self.weight.std((1, 2, 3), keepdim=True) + 1e-5), self.bias)


class _ReadsAgain(nn.Module):
    """A conv path, and the input read again by an op that maps NaN to a number (`how`): `(x > 0)` or `nan_to_num`."""

    def __init__(self, how):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))
        self.g, self.how = nn.Linear(64, 1), how

    def forward(self, x):
        again = (x > 0).float() if self.how == "mask" else torch.nan_to_num(x)
        return self.body(x) + self.g(again.flatten(1))


def _hooked():
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))
    net[0].register_forward_hook(lambda mod, args, out: out * 3 + 1)
    return net


class _Reshaped(nn.Module):
    """The input reshaped to another image before its first convolution."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)

    def forward(self, x):
        return torch.relu(self.conv(x.reshape(len(x), 1, 4, 16))).mean((1, 2, 3))[:, None]


class _RangeGate(nn.Module):
    """The re-probe of issue 58: a read of the input constant over NaN, 1 and -1 but not at the probes' scale."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))

    def forward(self, x):
        y = self.body(x)
        return torch.where((x.abs() > 10).flatten(1).any(1, keepdim=True), torch.tanh(y), y)


SECOND_PASS = [lambda: nn.Sequential(_StdConv(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1)), _RangeGate,
               partial(_ReadsAgain, "mask"), partial(_ReadsAgain, "nan"), _hooked, _Reshaped,
               lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect"), nn.ReLU(), nn.Flatten(),
                                     nn.LazyLinear(1)),
               lambda: nn.Sequential(nn.Conv2d(1, 4, 9, padding=4, padding_mode="circular"), nn.ReLU(), nn.Flatten(),
                                     nn.LazyLinear(1))]


@pytest.mark.parametrize("factory", SECOND_PASS)
def test_the_shortcut_is_taken_only_where_the_first_layer_is_plainly_the_inputs_only_reader(factory):
    """The second adversarial pass of issue 58: a Conv2d subclass (timm's StdConv2d: cosine 0.096), a hooked first
    layer, an input read again through `(x > 0)` or `nan_to_num` (which NaN does not reach), an input reshaped before
    the convolution, reflect padding and a circular kernel larger than the image (IndexError): each now runs the plain
    probes, and gives their secant."""
    torch.manual_seed(0)
    x0 = nads.eval_point_for(0, (1, 8, 8))
    net = factory().eval()
    net(x0[None])
    fast, plain = nads.secant_gradient(net, x0, 100.0, "auto"), nads.secant_gradient(net, x0, 100.0, None)
    torch.testing.assert_close(fast, plain, rtol=1e-4, atol=1e-5 * plain.abs().max().item())


class _InPlace(nn.Module):
    """A model that works on its input in place (`x.relu_()`)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(64, 1)

    def forward(self, x):
        return self.lin(x.relu_().flatten(1))


def test_a_model_that_changes_its_input_in_place_is_refused():
    """Second adversarial pass: `x.relu_()` in forward changed the probes and the caller's evaluation point."""
    point = nads.eval_point_for(0, (1, 8, 8))
    kept = point.clone()
    with pytest.raises(ValueError, match="^model must leave its input as it is"):
        estimate_kw(_InPlace, 4, input_shape=(1, 8, 8), eval_point=point, progress=False)
    assert torch.equal(point, kept)


@pytest.mark.parametrize("factory", [lambda: models.build("lenet", num_classes=1),
                                     lambda: models.build("mlp", num_classes=1),
                                     lambda: nn.Sequential(nn.Conv2d(1, 5, 3, stride=2, padding=2,
                                                                     padding_mode="circular"),
                                                           nn.ReLU(), nn.Flatten(), nn.LazyLinear(1)),
                                     Doubled, TwoBranch, InputSkip])
def test_linear_first_layer_shortcut_matches_plain_probes(factory):
    """The first layer by linearity gives the plain probes' secant, also where the input reaches the output by
    another way than that layer (a second branch, a skip: then the probes run in full)."""
    torch.manual_seed(0)
    shape = (1, 32, 32) if factory not in (Doubled, TwoBranch, InputSkip) else (1, 8, 8)
    x0 = nads.eval_point_for(0, shape)
    net = factory().eval()
    net(x0[None])  # materialise lazy layers
    fast, plain = nads.secant_gradient(net, x0, 100.0, "auto"), nads.secant_gradient(net, x0, 100.0, None)
    torch.testing.assert_close(fast, plain, rtol=1e-4, atol=1e-5 * plain.abs().max().item())
    assert (nads.first_linear_layer(net, x0) is None) == (factory in (Doubled, TwoBranch, InputSkip))   # plain probes


@pytest.mark.parametrize("method", ["secant", "autograd"])
def test_estimate_does_not_depend_on_batch_size(method):
    kw = dict(method=method, input_shape=(1, 8, 8), progress=False, seed=3)
    one = estimate_kw(small_cnn, 11, batch_size=11, **kw)
    many = estimate_kw(small_cnn, 11, batch_size=4, **kw)
    np.testing.assert_allclose(one.eigenvalues, many.eigenvalues, rtol=1e-9, atol=1e-12 * one.eigenvalues[0])
    np.testing.assert_allclose(np.abs((one.nads[:5] * many.nads[:5]).sum(1)), 1, atol=1e-6)
    assert one.settings == many.settings


def test_result_is_ordered_orthonormal_and_round_trips(tmp_path):
    res = estimate_kw(small_cnn, 6, input_shape=(1, 8, 8), progress=False)
    assert np.all(np.diff(res.eigenvalues) <= 1e-12)
    np.testing.assert_allclose(res.nads @ res.nads.T, np.eye(64), atol=1e-5)
    assert res.images(2).shape == (2, 1, 8, 8)
    path = res.save(tmp_path / "r.npz")
    back = nads.NADResult.load(path, res.settings)
    np.testing.assert_array_equal(back.nads, res.nads)
    assert back.settings["method"] == "secant" and back.settings["step"] == 100.0
    with pytest.raises(store.StoreError):
        nads.NADResult.load(path, {**res.settings, "num_networks": 7})


# ----------------------------------------------------------------------------- bad input

def same_network_factory():
    net = small_cnn()
    return lambda: net


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_networks=1), "num_networks"),
    (dict(step=0.0), "step"),
    (dict(step=-1.0), "step"),
    (dict(method="jacobian"), "method"),
    (dict(eval_point=torch.zeros(1, 7, 8)), "eval_point"),
    (dict(model="alexnet"), "model must be one of"),
    (dict(model=small_cnn()), "factory"),
    (dict(model=lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 2))), "ONE output"),
    (dict(model=same_network_factory()), "same network"),
    (dict(batch_size=0), "batch_size"),
    (dict(eig_threads=0), "eig_threads"),
])
def test_bad_input_raises_a_clear_error(kwargs, match):
    args = dict(model=small_cnn, num_networks=4, input_shape=(1, 8, 8), progress=False)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        estimate_kw(args.pop("model"), args.pop("num_networks"), **args)


# ----------------------------------------------------------------------------- analysis and figures

def test_subspace_overlaps_match_the_principal_angles_at_every_k():
    """One QR per basis for every k agrees with the definition (SVD per k) and with SciPy's principal angles."""
    import scipy.linalg

    rng = np.random.default_rng(0)
    U, V = rng.standard_normal((40, 64)), rng.standard_normal((40, 64))
    V[:10] += 3 * U[:10]                                    # related leading subspaces
    ks = [1, 3, 10, 40]
    fast = nads.subspace_overlaps(U, V, ks)
    for k, o in zip(ks, fast):
        assert abs(o - nads.subspace_overlap(U, V, k)) < 1e-12
        assert abs(o - np.mean(np.cos(scipy.linalg.subspace_angles(U[:k].T, V[:k].T)) ** 2)) < 1e-12
    assert 0 < fast[0] < 1 and fast[2] > 0.5


def test_subspace_overlap_and_convergence():
    eye = np.eye(8)
    assert nads.subspace_overlap(eye, eye[[1, 0, 2]], 2) == pytest.approx(1.0)
    assert nads.subspace_overlap(eye, eye[4:], 2) == pytest.approx(0.0)
    conv = nads.convergence(small_cnn, nads.EstimateSettings(method="autograd", input_shape=(1, 8, 8)), [4, 8], (1, 4),
                            progress=False)
    assert conv["overlap"].shape == (2, 2) and np.all((conv["overlap"] >= 0) & (conv["overlap"] <= 1 + 1e-9))
    assert plots.convergence(conv).axes


def test_fourier_energy_of_a_fourier_direction():
    k = np.zeros((32, 32))
    k[3, 5] = 1
    v = np.fft.ifft2(1j * k).real
    v /= np.linalg.norm(v)
    energy = fourier.fourier_energy(v[None, None])[0]
    assert energy.sum() == pytest.approx(1.0)
    assert np.sort(energy.ravel())[-2:].sum() == pytest.approx(1.0)


def test_load_nads_estimates_once_then_loads(tmp_path):
    first = ch3_nads.load_nads("logreg", tmp_path, num_networks=5, progress=False)
    stored = list((tmp_path / "nads").glob("logreg_*.npz"))
    assert len(stored) == 1
    again = ch3_nads.load_nads("logreg", tmp_path, num_networks=5, progress=False)
    np.testing.assert_array_equal(first.nads, again.nads)
    with pytest.raises(ValueError, match="arch"):
        ch3_nads.load_nads("alexnet", tmp_path)


def test_secant_vs_autograd_labels_both_estimates(tmp_path):
    curves = ch3_nads.secant_vs_autograd(["logreg"], tmp_path, "smoke", 20, [1, 1024], progress=False)
    (label, overlap), = curves.items()
    secant = ch3_nads.load_nads("logreg", tmp_path, "smoke", progress=False).settings["num_networks"]
    assert label == f"logreg: secant (N={secant}) vs autograd (N=20)"
    assert overlap.shape == (2,) and 0 <= overlap[0] <= 1 and overlap[1] == pytest.approx(1.0)  # k = D: all of R^D
    named = ch3_nads.secant_vs_autograd(["logreg"], tmp_path, "smoke", 20, [1], progress=False,
                                        names={"logreg": "LogReg"})
    assert list(named) == [f"LogReg: secant (N={secant}) vs autograd (N=20)"]


def test_stored_nads_are_found_by_their_full_settings_only(tmp_path):
    """No stand-in: NADs of another seed, N or method are not returned for a request."""
    made = ch3_nads.load_nads("logreg", tmp_path, "smoke", num_networks=6, progress=False)
    assert ch3_nads.find_stored("logreg", made.settings, tmp_path) is not None
    for other in (dict(seed=7), dict(num_networks=5), dict(method="autograd")):
        request = nads.nad_settings("logreg", **{"num_networks": 6, **other})
        assert ch3_nads.find_stored("logreg", request, tmp_path) is None, other
    seven = ch3_nads.load_nads("logreg", tmp_path, "smoke", num_networks=6, seed=7, progress=False)
    assert seven.settings["seed"] == 7 and not np.array_equal(seven.eigenvalues, made.eigenvalues)


def test_accuracy_on_nads_and_figures():
    res = estimate_kw(small_cnn, 4, input_shape=(1, 8, 8), progress=False)
    basis = estimate_kw("logreg", 3, progress=False)
    acc = ch3_nads.accuracy_on_nads("logreg", basis, [0, 5], n_train=64, epochs=1, progress=False)
    assert acc.shape == (2,) and np.all((acc >= 0) & (acc <= 100))
    easy = ch3_nads.accuracy_on_nads("logreg", basis, [0, 1023], n_train=256, sigma=0.05, epochs=3, progress=False)
    assert np.all(easy > 90), easy   # LogReg is isotropic: with little noise it learns any NAD
    with pytest.raises(ValueError, match="indices"):
        ch3_nads.accuracy_on_nads("logreg", basis, [1024], n_train=64, epochs=1)
    results = {"small": res}
    fig = plots.fig5(results, show=2)
    first = res.images(1)[0, 0]
    shown = fig.subfigs[0].axes[0].images[0].get_array()
    np.testing.assert_allclose(np.abs(shown), np.abs(first) / np.abs(first).max(), rtol=1e-6)   # max |pixel| = 1
    assert len([a for a in fig.subfigs[0].axes if a.images]) == 2 and len(fig.subfigs[1].axes) == 3  # + colorbar
    line, end = plots.spectra(results).axes[0].lines                # the curve, and its end at the rank limit
    np.testing.assert_allclose(line.get_ydata(), res.eigenvalues[:3] / res.eigenvalues[0])   # rank <= N - 1 = 3
    ours, chance = plots.overlaps({"a": [1.0, 0.5]}, [1, 4], dim=64).axes[0].lines
    assert list(ours.get_ydata()) == [1.0, 0.5] and list(chance.get_ydata()) == [1 / 64, 4 / 64]
    eig_ax, acc_ax = plots.fig6([0, 5], acc, basis.eigenvalues, "logreg").axes
    assert list(acc_ax.lines[0].get_xdata()) == [0, 5] and list(acc_ax.lines[0].get_ydata()) == list(acc)
    curve, end = plots.fig6([0, 1], acc, res, "small").axes[0].lines   # a NADResult: lambda stops at its rank
    np.testing.assert_allclose(curve.get_ydata(), res.eigenvalues[:3] / res.eigenvalues[0])   # rank <= N - 1 = 3
    assert list(end.get_xdata()) == [2]
    assert len(plots.fig6([0, 1], acc, res.eigenvalues).axes[0].lines[0].get_xdata()) == len(res.eigenvalues)
    conv = {"sizes": np.array([4, 8]), "ks": np.array([1, 4]), "overlap": np.array([[0.5, 0.6], [0.9, 0.8]])}
    assert len(plots.convergence(conv).axes[0].lines) == 2


# ----------------------------------------------------------------------------- Chapter 3's comparisons

def fake(arch, n, method="secant", source=None, dim=64):
    """A NADResult of `arch` from `n` networks on 1x8x8 inputs with eigenvalues 0.8^i."""
    settings = {"arch": arch, "num_networks": n, "method": method, "input_shape": [1, 8, 8]}
    if source:
        settings["source"] = source
    return nads.NADResult(0.8 ** np.arange(dim), np.eye(dim, dtype=np.float32), settings)


def test_rank_limit_is_n_minus_one_or_d():
    assert ch3_nads.rank_limit(fake("logreg", 10)) == 9
    assert ch3_nads.rank_limit(fake("logreg", 10000)) == 64


def test_spectra_stop_at_the_rank_limit_and_say_so():
    few, many = fake("logreg", 10), fake("lenet", 1000)
    ax = plots.spectra({"few": few, "many": many}).axes[0]
    curves = [ln for ln in ax.lines if ln.get_linestyle() != "None"]
    assert [len(ln.get_xdata()) for ln in curves] == [9, 64]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["few (rank 9)", "many"]
    end, = [ln for ln in ax.lines if ln.get_marker() == "|"]       # the truncated curve's end is marked
    assert list(end.get_xdata()) == [8]                              # its 9th eigenvalue, lambda_8 (from 0)
    flat = fake("logreg", 1000)
    flat.eigenvalues[40:] = np.r_[0.0, -1e-18 * np.ones(23)]       # a true rank of 40 (e.g. a strided network)
    assert ch3_nads.numerical_rank(flat.eigenvalues) == 40
    line = plots.spectra({"flat": flat}).axes[0].lines[0]
    assert len(line.get_xdata()) == 40 and np.all(line.get_ydata() > 0)


def test_spectra_by_arch_put_ours_and_the_published_in_one_panel_per_architecture():
    results = {"a": fake("lenet", 1000), "b": fake("lenet", 1000, "autograd"),
               "c": fake("lenet", 1000, source="published"), "d": fake("vgg11", 1000, source="published")}
    fig = plots.spectra_by_arch(results)
    lenet, vgg = [ax for ax in fig.axes if ax.get_visible()]
    assert lenet.get_title() == "LeNet" and vgg.get_title() == "VGG-11"
    assert [ln.get_linestyle() for ln in lenet.lines] == ["-", ":", "--"] and len(vgg.lines) == 1
    assert lenet.lines[2].get_color() == "k" and lenet.lines[0].get_color() == style.COLORS["lenet"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["ours, secant", "ours, exact gradient", "published (singular values squared)"]


def test_fig5_rows_are_labelled_and_nads_keep_their_sign_convention():
    res = fake("lenet", 1000)
    res.nads[1] *= -1                                     # a NAD is defined up to its sign
    fig = plots.fig5({plots.describe(res, lines=True): res}, show=2)
    pix = [a for a in fig.subfigs[0].axes if a.images]
    assert pix[0].get_ylabel() == "LeNet\nours, secant\nN = 1,000"
    assert all(a.images[0].get_array().max() == 1 for a in pix)
    labels = [a.get_xlabel() for a in fig.axes if not a.images and a.collections]
    assert sorted(labels) == ["pixel / max |pixel|", "share of the NAD's energy"]
    assert plots.describe(fake("vgg11", 10000, source="published")) == "VGG-11, published, N = 10,000"


def test_overlaps_published_label_architecture_and_method():
    fig = plots.overlaps_published({("lenet", "secant"): [0.9, 0.8], ("lenet", "autograd"): [0.1, 0.2]}, [1, 4])
    ax = fig.axes[0]
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == ["LeNet, ours (secant)",   # below the axes
                                                                       "LeNet, ours (exact gradient)"]
    assert [ln.get_linestyle() for ln in ax.lines] == ["-", ":", ":"]      # the last is chance, k/D


def test_low_frequency_share_of_fourier_directions():
    low = fourier.fourier_direction(2, 0)[0].numpy().ravel()
    high = fourier.fourier_direction(0, 12)[0].numpy().ravel()
    rows = np.stack([low / np.linalg.norm(low), high / np.linalg.norm(high)])
    res = nads.NADResult(np.array([2.0, 1.0]), rows, {"input_shape": [1, 32, 32], "num_networks": 10})
    np.testing.assert_allclose(ch3_nads.low_frequency_share(res, count=2, band=4), [1, 0], atol=1e-9)


def test_fig6_rows_interpolate_the_published_curve_and_find_chance():
    index = np.arange(1023)
    measured = np.zeros(1023, bool)
    measured[[0, 10, 1022]] = True
    curve = published.Fig6Curve(index, np.interp(index, [0, 10, 1022], [100, 90, 50]), np.ones(1023), np.ones(1023),
                                measured)
    rows = ch3_nads.fig6_rows({0: 95.0, 5: 60.0, 1023: 50.0}, curve)
    assert rows == [(0, 95.0, 100.0), (5, 60.0, 95.0), (1023, 50.0, None)]
    assert ch3_nads.first_at_chance([0, 5, 1023], [95.0, 51.0, 50.0]) == 5
    assert ch3_nads.first_at_chance([0, 5, 1023], [95.0, 60.0, None]) is None


def test_beside_published_puts_ours_before_theirs_per_architecture():
    stored = {("lenet", "secant"): fake("lenet", 10000), ("mlp", "secant"): fake("mlp", 10000),
              ("lenet", "autograd"): fake("lenet", 10000, "autograd")}
    rows = plots.beside_published(stored, ("mlp", "lenet", "vgg11"))
    assert list(rows) == ["MLP\nours, secant\nN = 10,000", "LeNet\nours, secant\nN = 10,000",
                          "LeNet\nours, exact gradient\nN = 10,000", "LeNet\npublished\nN = 10,000",
                          "VGG-11\npublished\nN = 10,000"]    # no published MLP; VGG-11 published alone
    assert rows["VGG-11\npublished\nN = 10,000"].settings["source"] == "published"


@pytest.mark.slow
@pytest.mark.skipif(not nads.has_compiler(), reason="the compiled secant needs a C++ compiler (apt-get install g++)")
def test_compiled_secant_is_the_secant_through_torch_compile():
    """One compilation per architecture serves every network (their weights are copied in); the
    gradients are the eager secant's up to kernel rounding, repeat bitwise, and the estimate says so."""
    x0 = nads.eval_point_for(0, (1, 32, 32))
    nets = [nads.network(lambda: models.build("lenet", num_classes=1), 0, i, torch.device("cpu")) for i in range(3)]
    eager = [nads.secant_gradient(n, x0, 100.0, None) for n in nets]
    compiled = [nads.compiled_secant_gradient(n, x0, 100.0) for n in nets]
    for e, c in zip(eager, compiled):
        assert torch.nn.functional.cosine_similarity(e, c, dim=0) > 0.9999
    assert torch.equal(nads.compiled_secant_gradient(nets[0], x0, 100.0), compiled[0])
    assert not torch.allclose(compiled[0], compiled[1])        # each network its own weights, not the first's
    r = estimate_kw("lenet", 4, seed=0, device="cpu", compiled=True, batch_size=2, progress=False)
    assert r.settings == {**nads.nad_settings("lenet", 4), "compiled": True}
    assert "compiled" not in nads.nad_settings("lenet", 4)     # the eager secant's keys are unchanged
    with pytest.raises(ValueError, match="^compiled must be True \\(method 'secant' only\\) or False; got True"):
        estimate_kw("lenet", 4, method="autograd", compiled=True, progress=False)


# ----------------------------------------------------------------------------- your own model (issue 40)

class LazyCNN(nn.Sequential):
    """A network whose last layer is lazy: its input size is known after one forward pass."""

    def __init__(self):
        super().__init__(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))


def rgb_cnn():
    return nn.Sequential(nn.Conv2d(3, 2, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 1))


def test_a_named_factory_is_stored_with_its_description_and_resumes(tmp_path):
    """Item 1: results_dir was refused for factories; with a name the result is stored and resumable."""
    kw = dict(input_shape=(1, 8, 8), progress=False, results_dir=tmp_path, method="autograd")
    with pytest.raises(ValueError, match='results_dir stores chunks and the result under a name: pass name='):
        estimate_kw(lambda: small_cnn(), 130, **kw)
    with pytest.raises(ValueError, match="name must be a file-name-safe string"):
        estimate_kw(small_cnn, 130, name="my net", **kw)
    with pytest.raises(ValueError, match="a registry architecture is stored under its own name"):
        estimate_kw("lenet", 130, name="mine", **kw)
    first = estimate_kw(small_cnn, 130, name="mynet", **kw)
    assert first.settings["arch"] == "mynet"
    model = first.settings["model"]
    assert model["source"] == "test_nads:small_cnn" and model["parameters"] == 3 * 9 + 3 + 27 + 1
    chunks = sorted((tmp_path / "nad_chunks").glob("*.npz"))
    assert len(chunks) == 2 and all(store.load(c).record["settings"]["settings"]["model"] == model for c in chunks)
    path = nads.result_path("mynet", first.settings, tmp_path)
    first.save(path)
    assert path.name.startswith("mynet_")
    chunks[1].unlink()                                           # a killed run: one chunk lost
    kept = chunks[0].stat().st_mtime_ns
    again = estimate_kw(small_cnn, 130, name="mynet", **kw)
    assert chunks[0].stat().st_mtime_ns == kept and chunks[1].exists()
    np.testing.assert_array_equal(again.eigenvalues, first.eigenvalues)
    assert again.settings == first.settings and store.key(again.settings) == store.key(first.settings)
    # another network under the same name shares no chunk: its description differs
    other = estimate_kw(linear_cnn, 130, name="mynet", **kw)
    assert other.settings["model"]["structure"] != model["structure"]
    assert len(list((tmp_path / "nad_chunks").glob("*.npz"))) == 4


class Edited(nn.Module):
    """`small_cnn`'s layers with an edited initialisation or forward: the same repr and parameter count."""

    def __init__(self, zero_half=False, doubled=False):
        super().__init__()
        self.net, self.doubled = small_cnn(), doubled
        if zero_half:
            with torch.no_grad():
                self.net[0].weight[: self.net[0].weight.shape[0] // 2] = 0

    def forward(self, x):
        return self.net(2 * x if self.doubled else x)

    def extra_repr(self):
        return ""


def test_an_edited_model_does_not_read_back_the_results_of_the_model_before_the_edit(tmp_path, capsys):
    """Issue 58: an edit to `__init__` or `forward` under the same source name, repr and parameter count changes
    the model's `behaviour`, so its chunks and result are its own."""
    kw = dict(input_shape=(1, 8, 8), progress=False, results_dir=tmp_path, method="autograd", name="mynet")
    digests = set()
    for edit in ({}, {"zero_half": True}, {"doubled": True}):
        torch.manual_seed(0)
        res = estimate_kw(partial(Edited, **edit), 6, **kw)
        digests.add((res.settings["model"]["structure"], res.settings["model"]["behaviour"]))
    assert len({s for s, _ in digests}) == 1 and len(digests) == 3
    assert len(list((tmp_path / "nad_chunks").glob("*.npz"))) == 3
    assert res.settings["model"]["code"] == networks.code_digest(Edited())     # its classes' source
    torch.manual_seed(0)
    estimate_kw(partial(Edited, doubled=True), 6, **{**kw, "progress": True})   # a rerun says it reused them
    assert f"mynet: reusing all 1 stored chunks of 125 networks in {tmp_path / 'nad_chunks'}" in capsys.readouterr().err


CLAMP = {"limit": 20.0}   # a configuration the model below reads (a file, an environment variable, a module elsewhere)


class Clamped(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(1, 4, 3, padding=1), nn.Linear(64, 1)

    def forward(self, x):
        return self.fc(self.conv(x).clamp(-CLAMP["limit"], CLAMP["limit"]).flatten(1))


class ClampedInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(1, 4, 3, padding=1), nn.Linear(256, 1)

    def forward(self, x):
        return self.fc(self.conv(x.clamp(-CLAMP["limit"], CLAMP["limit"])).flatten(1))


def test_a_configuration_that_changes_the_model_at_the_probes_changes_its_key(tmp_path, monkeypatch):
    """Third adversarial pass of issue 58: a clamp read from a file outside the model's folder bites only at the
    secant's probes (x0 +- 100 e_i), so the model's output at x0 kept its key and the old NADs were read back. Its
    `behaviour` now holds its outputs at x0 +- 1 and +- 100 along two directions too."""
    kw = dict(input_shape=(1, 4, 4), progress=False, results_dir=tmp_path, name="clamped")
    keys = []
    for limit in (20.0, 2000.0, 20.0):
        monkeypatch.setitem(CLAMP, "limit", limit)
        keys.append(store.key(estimate_kw(Clamped, 4, **kw).settings))
    assert keys[0] != keys[1] and keys[0] == keys[2]
    keys = []                  # the re-probe: the input clamped at 80, then 50; only the secant's probes reach it
    for limit in (80.0, 50.0):
        monkeypatch.setitem(CLAMP, "limit", limit)
        keys.append(store.key(estimate_kw(ClampedInput, 4, **{**kw, "input_shape": (1, 8, 8)}).settings))
    assert keys[0] != keys[1]
    keys = []                  # the fourth pass: one entry clamped (entry 5), which only its own probe reaches
    for limit in (1000.0, 50.0):
        monkeypatch.setitem(CLAMP, "limit", limit)
        keys.append(store.key(estimate_kw(OneEntryClamped, 4, **{**kw, "input_shape": (1, 8, 8)}).settings))
    assert keys[0] != keys[1]


class OneEntryClamped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)

    def forward(self, x):
        f = x.flatten(1)
        return self.fc(torch.cat([f[:, :5], f[:, 5:6].clamp(max=CLAMP["limit"]), f[:, 6:]], 1))


def test_registry_settings_and_keys_are_unchanged():
    """Item 1 adds `model` to a factory's settings only: a registry estimate's key is the one stored."""
    res = estimate_kw("logreg", 3, method="autograd", progress=False)
    assert "model" not in res.settings and store.key(res.settings) == store.key(nads.nad_settings("logreg", 3,
                                                                                                    "autograd"))


def test_the_eigen_steps_run_on_their_own_threads_and_name_them_in_the_key():
    """Issue 43 item 3: the eigen steps on `eig_threads` (1 by default: its bits do not depend on the
    caller's threads, its time not on the machine's load), the caller's threads restored; None, the
    caller's, is how the bundle's estimates were made, and their keys name no `eig_threads`."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((40, 256))
    cov = np.cov(g, rowvar=False)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        alone = nads.eig_decreasing(cov)
    finally:
        torch.set_num_threads(before)
    torch.set_num_threads(2)
    try:
        pinned = nads.eig_decreasing(cov, threads=1)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    for a, b in zip(alone, pinned):
        np.testing.assert_array_equal(a, b)
    new, old = (estimate_kw("logreg", 6, progress=False, eig_threads=t) for t in (1, None))
    assert new.settings == {**old.settings, "eig_threads": 1} and "eig_threads" not in old.settings
    assert new.settings == nads.nad_settings("logreg", 6)
    assert "eig_threads" not in bundle.nad_item("lenet") and "eig_threads" not in bundle.dial_settings(100.0)
    assert store.matches(nads.result_path("lenet", bundle.nad_item("lenet"), bundle.BUNDLE), bundle.nad_item("lenet"))


def test_network_i_is_the_factory_after_torch_manual_seed_of_its_seed_and_leaves_the_rng_alone():
    """`nads.network` seeds the CPU generator alone (issue 43: `torch.manual_seed` also queues a seed per
    accelerator): the parameters are bitwise those of the plain recipe, and the caller's RNG state is kept."""
    factory = nads.one_output_factory("lenet")[0]
    torch.manual_seed(123)
    state = torch.get_rng_state()
    net = nads.network(factory, 0, 7, "cpu")
    assert torch.equal(torch.get_rng_state(), state) and not net.training
    assert not any(p.requires_grad for p in net.parameters())
    torch.manual_seed(nads.network_seed(0, 7))
    plain = factory()
    for (name, a), b in zip(net.state_dict().items(), plain.state_dict().values()):
        assert torch.equal(a, b), name


def test_networks_run_one_at_a_time_are_not_padded_to_the_batch_and_are_built_as_used(monkeypatch):
    """The exact gradient pads a batch for vmap's batch invariance only: networks with buffers run one at a
    time on the CPU (`one_at_a_time`), so a chunk of 3 computes 3 gradients, not a batch of 32. Networks that
    run one at a time (these, and the secant's) are built as they are used: a batch never holds them all
    (issue 43: VGG-11's 16 or 32 networks of 39 MB each were faulted into memory anew every batch)."""
    import weakref

    from nadcore.nads import chunks, gradients

    alive, most = weakref.WeakSet(), []

    def bn_cnn():
        net = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(108, 1))
        alive.add(net)
        most.append(len(alive))
        return net

    x0 = nads.eval_point_for(0, (1, 8, 8))
    assert gradients.one_at_a_time(bn_cnn(), x0) and not gradients.one_at_a_time(small_cnn(), x0)
    calls = []
    one = chunks.autograd_one
    monkeypatch.setattr(chunks, "autograd_one", lambda net, x: calls.append(1) or one(net, x))
    s = nads.EstimateSettings("autograd", input_shape=(1, 8, 8))
    most.clear()
    G = chunks.chunk_arrays(bn_cnn, s, x0, 0, 3)["gradients"]
    assert s.batch(torch.device("cpu")) == 32 and len(calls) == 3 and G.shape == (3, 64)
    for method in ("autograd", "secant"):
        most.clear()
        chunks.chunk_arrays(bn_cnn, nads.EstimateSettings(method, input_shape=(1, 8, 8)), x0, 0, 12)
        assert len(most) == 12 and max(most) <= 3   # the batch's first, the one in use and the next


def test_lazy_modules_are_materialised_by_one_forward_pass():
    """Item 7: nn.LazyLinear failed with torch's "uninitialized parameter"."""
    kw = dict(input_shape=(1, 8, 8), progress=False, method="autograd")
    res = estimate_kw(LazyCNN, 6, **kw)
    assert res.settings["model"]["parameters"] == 3 * 9 + 3 + 3 * 36 + 1
    np.testing.assert_array_equal(estimate_kw(LazyCNN, 6, **kw).eigenvalues, res.eigenvalues)  # seeded
    a, b = (nads.network(nads.one_output_factory(LazyCNN, (1, 8, 8))[0], 0, i, torch.device("cpu"))
            for i in (0, 1))
    assert not torch.equal(a[3].weight, b[3].weight)            # each network its own lazy weights


@pytest.mark.parametrize("model, shape", [(rgb_cnn, (1, 32, 32)), (LazyCNN, (3, 8, 8))])
def test_a_shape_mismatch_names_input_shape_and_the_shape_tried(model, shape):
    """Item 7: a 3-channel model with the default input shape gave torch's convolution error."""
    with pytest.raises(ValueError) as err:
        estimate_kw(model, 4, input_shape=shape, progress=False)
    text = str(err.value)
    assert text.startswith("input_shape must be") and f"{(1, *shape)}" in text and len(text.splitlines()) == 1


@pytest.mark.parametrize("spec, why", [
    ("no_such_module_xyz:Net", "module 'no_such_module_xyz' does not import: ModuleNotFoundError"),
    ("test_nads:NoSuchNet", "'test_nads' has no attribute 'NoSuchNet'"),
    ("test_nads:M_PRE", "model must name a class or zero-argument factory"),
    ("timm:convnext_atoo", "timm model name (timm"),
    ("convnext", 'model must be "module:callable" or "timm:NAME"'),
])
def test_model_specs_that_cannot_work_are_refused_before_a_network_is_built(spec, why):
    with pytest.raises(ValueError, match="^model must") as err:
        nads.model_factory(spec, (1, 8, 8))
    assert why in str(err.value) and len(str(err.value).splitlines()) == 1


def test_module_callable_and_timm_specs_build_one_output_networks():
    """Item 1: `module:callable` imports as python does; `timm:NAME` is built for the input shape."""
    factory = nads.model_factory("test_nads:LazyCNN", (1, 8, 8))
    assert factory.source == "test_nads:LazyCNN" and factory.default_name == "LazyCNN"
    res = estimate_kw("test_nads:LazyCNN", 4, input_shape=(1, 8, 8), method="autograd", progress=False)
    assert res.settings["arch"] == "LazyCNN" and res.settings["model"]["source"] == "test_nads:LazyCNN"
    pytest.importorskip("timm")
    vit = nads.model_factory("timm:vit_tiny_patch16_224", (3, 32, 32))()       # takes img_size: 4 patches
    assert vit(torch.zeros(2, 3, 32, 32)).shape == (2, 1)
    # a model without img_size (timm's small test ConvNeXt), one channel: 1,024 NADs, not 3,072 (a minute loaded)
    res = estimate_kw("timm:test_convnext", 3, input_shape=(1, 32, 32), method="autograd", progress=False)
    assert res.settings["arch"] == "test_convnext" and res.nads.shape == (1024, 1024)


# ----------------------------------------------------------------------------- how far to trust it (issue 40 item 2)

def test_split_half_overlaps_are_those_of_the_even_and_odd_networks():
    """The stored overlaps are the subspace overlaps of the NADs of networks 0, 2, 4, ... and 1, 3, 5, ..."""
    kw = dict(input_shape=(1, 8, 8), progress=False, method="autograd", seed=1)
    res = estimate_kw(small_cnn, 140, **kw)                    # two chunks: 125 + 15, split within each
    estimator = nads.EstimateSettings("autograd", seed=1, input_shape=(1, 8, 8), batch_size=32)
    G = nads.chunk_arrays(small_cnn, estimator, nads.eval_point_for(1, (1, 8, 8)), 0, 140)["gradients"]
    halves = [nads.eig_decreasing(np.cov(G[h::2].astype(np.float64), rowvar=False))[1] for h in (0, 1)]
    trust = res.trust()
    assert list(trust.ks) == [1, 4, 16] and list(trust.networks) == [70, 70]
    np.testing.assert_allclose(trust.overlap, nads.subspace_overlaps(*halves, [1, 4, 16]), atol=1e-6)
    np.testing.assert_allclose(trust.chance, [1 / 64, 4 / 64, 16 / 64])


def test_an_isotropic_model_warns_that_its_nads_are_not_above_chance():
    """A linear model's gradient is its weight, drawn isotropically: its NADs are noise at any N."""
    with pytest.warns(nads.NADTrustWarning, match="not above chance"):
        res = estimate_kw(lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 1)), 200, method="autograd",
                            input_shape=(1, 8, 8), progress=False)
    trust = res.trust()
    assert trust.available and not trust.above.any() and "NOT above chance" in trust.summary()
    assert trust.margin(1) == pytest.approx(5 * np.sqrt(2) / 64)


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_lenet_at_40_networks_is_above_chance_and_says_how_weakly():
    """The published (secant) estimate of LeNet: above chance at 40 networks, weakly (measured: 0.033,
    0.034, 0.066 at k = 1, 4, 16; its exact-gradient NADs are at chance there: 0.000, 0.005, 0.027)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", nads.NADTrustWarning)
        res = estimate_kw("lenet", 40, progress=False, device="cpu")
    trust = res.trust()
    assert trust.above.all() and np.all(trust.overlap >= 2 * trust.chance)
    assert "above chance at every k (weakly" in trust.summary()


def test_trust_round_trips_and_old_results_say_not_available(tmp_path):
    res = estimate_kw(small_cnn, 12, input_shape=(1, 8, 8), progress=False, method="autograd")
    back = nads.NADResult.load(res.save(tmp_path / "r.npz"))
    np.testing.assert_array_equal(back.trust().overlap, res.trust().overlap)
    assert list(res.trust().ks) == [1, 4]                        # halves of 6: rank 5, so no k = 16
    old = nads.NADResult(res.eigenvalues, res.nads, res.settings)  # stored before issue 40
    assert not old.trust().available and "not available" in old.trust().summary()


# ----------------------------------------------------------------------------- Chapter 3's readings

def toy_curve():
    """A published Fig. 6 curve measured at 0, 10 and 1022: 100 % down to 90 % at 10, then to 50 %."""
    index = np.arange(1023)
    measured = np.zeros(1023, bool)
    measured[[0, 10, 1022]] = True
    return published.Fig6Curve(index, np.interp(index, [0, 10, 1022], [100, 90, 50]), np.ones(1023), np.ones(1023),
                               measured)


def test_complete_runs_and_seed_spread_count_a_seed_once_every_index_is_stored():
    runs = [{0: 99.0, 16: 90.0}, {0: 97.0, 16: 92.0}, {0: 98.0}, {}]
    assert ch3_nads.complete_runs(runs, [0, 16]) == runs[:2]
    assert ch3_nads.complete_runs(runs, [0]) == runs[:3]
    spread = ch3_nads.seed_spread(runs[:2])
    assert spread[0] == pytest.approx((98.0, np.sqrt(2.0))) and spread[16] == pytest.approx((91.0, np.sqrt(2.0)))
    assert ch3_nads.seed_spread(runs[:3]) == {0: pytest.approx((98.0, 1.0))}      # the indices all runs hold
    assert ch3_nads.seed_spread([{5: 60.0}]) == {5: (60.0, 0.0)}                  # one seed: no spread
    with pytest.raises(ValueError, match="runs must hold"):
        ch3_nads.seed_spread([])


def test_curve_difference_is_signed_and_skips_indices_past_the_published_curve():
    d = ch3_nads.curve_difference({0: 90.0, 10: 100.0, 2000: 0.0}, toy_curve())
    assert d == {"mad": pytest.approx(10.0), "below": pytest.approx(0.0)}
    assert ch3_nads.curve_difference({0: 95.0, 10: 85.0}, toy_curve())["below"] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="ours must hold"):
        ch3_nads.curve_difference({2000: 50.0}, toy_curve())


def lenet_f6(ours, best, best_sigma=1.5):
    return ch3_nads.Fig6Comparison("lenet", ours, toy_curve(), {"sigma": 3.0}, [], {"lenet": toy_curve()},
                                   best_sigma, best)


def test_fig6_numbers_and_reading_say_how_our_curve_stands_to_the_published_one():
    pub = {i: float(toy_curve().accuracy[i]) for i in (0, 5, 10, 500, 1022)}
    shifted = lambda d: {i: a - d for i, a in pub.items()}   # noqa: E731
    f6 = lenet_f6(shifted(20.0), shifted(8.0))
    got = ch3_nads.fig6_numbers(f6, shown=(0, 10))
    assert got["fig6_ours_10"] == 70.0 and got["fig6_published_10"] == 90.0 and got["fig6_best_10"] == 82.0
    assert got["fig6_chance_lenet"] == 1022 and got["fig6_chance_ours"] == 500    # 70.6 - 20 is chance
    text = ch3_nads.fig6_lenet_reading(f6, tolerance=5.0, at=500, best_at=10)
    assert "falls faster than the published one (50.6 % at NAD 500 against 70.6 %)" in text
    assert "the gap narrows without closing (82.0 % at NAD 10 against 90.0 %" in text
    assert "it matches" in ch3_nads.fig6_lenet_reading(lenet_f6(shifted(20.0), shifted(5.0)), 5.0, 500, 10)
    assert "does not narrow" in ch3_nads.fig6_lenet_reading(lenet_f6(shifted(8.0), shifted(9.0)), 5.0, 500, 10)
    above = ch3_nads.fig6_lenet_reading(lenet_f6(shifted(-6.0), {}, None), 5.0, 500, 10)
    assert "stays above" in above and ";" not in above                 # no sigma study: no second clause
    assert "follows the published one" in ch3_nads.fig6_lenet_reading(lenet_f6(shifted(5.0), {}), 5.0, 500, 10)


def test_the_seeds_mean_replaces_lenets_one_run_where_seeds_are_stored():
    f6 = lenet_f6({0: 90.0, 5: 70.0}, {0: 99.0, 5: 80.0}, best_sigma=1.5)
    got = ch3_nads.with_seed_means(f6, {3.0: [{0: 90.0, 5: 70.0}, {0: 92.0, 5: 76.0}], 1.5: []})
    assert got.ours == {0: 91.0, 5: 73.0} and got.seeds == 2
    assert got.ours_best == {0: 99.0, 5: 80.0} and got.seeds_best == 1      # no seeds: its one run
    assert f6.ours == {0: 90.0, 5: 70.0}                                          # the input is left as it was
    assert ch3_nads.fig6_numbers(got, shown=(5,))["fig6_ours_5"] == 73.0
    assert "our LeNet curve, the mean of 2 seeds, falls faster" in ch3_nads.fig6_lenet_reading(got, 5.0, 5, 5)


def test_deep_fig6_reading_gives_the_seeds_spread_and_the_widest_gap():
    runs = [{0: 100.0, 5: 90.0, 10: 80.0}, {0: 100.0, 5: 92.0, 10: 82.0}]
    text = ch3_nads.deep_fig6_reading("VGG-11", runs, toy_curve(), {"max_lr": 0.5, "sigma": 1.5}, 3.0)
    assert "the mean and standard deviation of 2 seeds" in text and "batch norm is the identity" in text
    assert "100.0 ± 0.0 % at NAD 0, 91.0 ± 1.4 % at NAD 5, 81.0 ± 1.4 % at NAD 10" in text
    assert "(at NAD 5 interpolated" in text                               # 0 and 10 were measured
    assert text.endswith("The widest gap is at NAD 10: 9.0 points below the published curve.")
    plain = ch3_nads.deep_fig6_reading("LeNet", runs[:1], toy_curve(), {"max_lr": 0.5, "sigma": 3.0}, 3.0,
                                       batch_norm=False)
    assert "one seed" in plain and "batch norm" not in plain


def test_which_nads_predict_and_the_reading_follow_the_runs():
    learnt, flat = [{0: 99.0, 512: 50.5}], [{0: 51.0, 512: 50.0}]
    assert ch3_nads.which_nads_predict({"secant": learnt, "autograd": flat}) == ("secant",)
    assert ch3_nads.which_nads_predict({"secant": flat, "autograd": learnt}) == ("autograd",)
    assert ch3_nads.which_nads_predict({"secant": [{0: 89.9, 512: 50.0}], "autograd": flat}) == ()
    assert ch3_nads.which_nads_predict({"secant": [{0: 99.0, 512: 52.1}], "autograd": flat}) == ()
    text = ch3_nads.estimates_reading({"VGG-11": {"secant": learnt * 3, "autograd": flat * 3},
                                       "LeNet": {"secant": learnt * 2, "autograd": flat}})
    assert text == ("The secant NADs: VGG-11 (3 seeds) reaches 99.0 % along its first secant NAD and 50.0–51.0 % "
                    "along its exact-gradient ones; LeNet reaches 99.0 % along its first secant NAD (2 seeds) and "
                    "50.0–51.0 % along its exact-gradient ones (one seed).")
    mixed = ch3_nads.estimates_reading({"A": {"secant": learnt, "autograd": flat},
                                        "B": {"secant": flat, "autograd": learnt}})
    assert mixed.startswith("It depends on the network: ")
    assert ch3_nads.estimates_reading({"A": {"secant": flat, "autograd": flat}}).startswith("Neither estimate: ")
    assert ch3_nads.estimates_reading({"A": {"secant": learnt, "autograd": learnt}}).startswith("Both estimates: ")
    assert ch3_nads.seeds_phrase(1) == "one seed" and ch3_nads.seeds_phrase(3) == "3 seeds"
    with pytest.raises(ValueError, match="n must be"):
        ch3_nads.seeds_phrase(0)


def toy_dial():
    """A dial on D = 8: the exact-gradient NADs e_0..e_3, the published e_4..e_7; the step h = 1 finds the
    first, h = 100 the second, h = 10 the first NAD of one and the next three of the other."""
    eye = np.eye(8)
    exact, pub = eye[:4], eye[4:]
    found = {1.0: exact, 10.0: np.vstack([eye[0], eye[5:8]]), 100.0: pub}
    dial = {h: {"nads": nads.NADResult(np.ones(4), u, {}), "conv": {1: 0.5, 4: 0.25}, "fig6": {0: acc, 2: 50.0}}
            for (h, u), acc in zip(found.items(), (51.0, 52.0, 98.0))}
    return dial, {"exact gradient": nads.NADResult(np.ones(4), exact, {}), "published": pub}


def test_secant_dial_table_reads_each_step_against_each_reference():
    dial, refs = toy_dial()
    table = ch3_nads.secant_dial_table(dial, refs, ks=(1, 4))
    assert table[1.0]["exact gradient"] == pytest.approx({1: 1.0, 4: 1.0})
    assert table[100.0]["exact gradient"] == pytest.approx({1: 0.0, 4: 0.0})
    assert table[10.0]["exact gradient"] == pytest.approx({1: 1.0, 4: 0.25})     # its first NAD only
    assert table[10.0]["published"] == pytest.approx({1: 0.0, 4: 0.75})
    assert table[100.0]["N vs 2N"] == {1: 0.5, 4: 0.25} and table[100.0]["fig6"] == {0: 98.0, 2: 50.0}
    assert ch3_nads.dial_switch(table, k=1) == (10.0, 100.0)     # the first NAD switches last
    assert ch3_nads.dial_switch(table, k=4) == (1.0, 10.0)
    assert ch3_nads.dial_switch(table, before="published", after="exact gradient") is None
    assert ch3_nads.dial_numbers(table, ks=(1, 4)) == {
        "switch_1_from": 10.0, "switch_1_to": 100.0, "switch_4_from": 1.0, "switch_4_to": 10.0, "before_to": 1.0,
        "after_from": 100.0, "before_overlap": pytest.approx(1.0), "before_accuracy": 51.0,
        "after_overlap": pytest.approx(1.0), "after_accuracy": 98.0}
    with pytest.raises(ValueError, match="never turn"):
        ch3_nads.dial_numbers(table, before="published", after="exact gradient", ks=(1,))
    rows, columns = ch3_nads.dial_rows(table, ["exact gradient", "published"], ks=(1, 4))
    assert columns == ["measure", "at", "h = 1", "h = 10", "h = 100"]
    assert rows[1] == ["overlap with exact gradient", "k = 4", "1.00", "0.25", "0.00"]
    assert rows[4] == ["N vs 2N", "k = 1", "0.50", "0.50", "0.50"]
    assert rows[6:] == [["Fig. 6 (%)", "NAD 0", "51.0", "52.0", "98.0"],
                        ["Fig. 6 (%)", "NAD 2", "50.0", "50.0", "50.0"]]
    with pytest.raises(ValueError, match="dial must hold"):
        ch3_nads.secant_dial_table({}, refs)
    with pytest.raises(ValueError, match="no NADs at step"):
        ch3_nads.secant_dial_table({1.0: {"nads": None}}, refs)
    with pytest.raises(ValueError, match="ks must be"):
        ch3_nads.secant_dial_table(dial, refs, ks=(1, 16))                  # 4 NADs per step


def test_secant_dial_figure_draws_the_overlaps_and_fig6_against_h():
    dial, refs = toy_dial()
    table = ch3_nads.secant_dial_table(dial, refs, ks=(1, 4))
    left, right = plots.secant_dial(table, ks={1: {}, 4: {"ls": "--"}}).axes
    assert left.get_xscale() == right.get_xscale() == "log"
    assert len(left.lines) == 4                                            # 2 references x 2 ks
    assert list(left.lines[1].get_ydata()) == pytest.approx([1.0, 0.25, 0.0])   # exact gradient, k = 4
    fig6 = [line for line in right.lines if len(line.get_xdata()) == 3]
    assert [list(line.get_ydata()) for line in fig6] == [[51.0, 52.0, 98.0], [50.0, 50.0, 50.0]]


def test_first_layer_flips_count_the_relus_and_maxima_the_secant_moves():
    from nadcore.experiments import ch3_nads

    got = ch3_nads.first_layer_flips((1e-4, 10.0, 1e6), networks=2, pixels=8)
    assert got[1e-4]["relu"] < 0.01 and got[1e6]["relu"] > 0.99          # a tiny step moves none, a huge one all
    assert got[1e-4]["relu"] < got[10.0]["relu"] < got[1e6]["relu"]
    assert got[1e-4]["argmax"] < got[10.0]["argmax"] < got[1e6]["argmax"]
    # against the network's own first ReLU on the probes of 8 pixels, by a forward hook (network 0, h = 10)
    factory, _ = nads.one_output_factory("lenet")
    net, x0 = nads.network(factory, 0, 0, "cpu"), nads.eval_point_for(0, (1, 32, 32))
    picked = torch.randperm(1024, generator=torch.Generator().manual_seed(0))[:8]
    seen = []
    hook = net.features[1].register_forward_hook(lambda m, i, o: seen.append((i[0], o)))
    probes = [x0.flatten().clone() for _ in range(16)]
    for j, i in enumerate(picked):
        probes[j][i] += 10.0
        probes[8 + j][i] -= 10.0
    with torch.no_grad():
        net(x0[None])
        net(torch.stack(probes).reshape(16, 1, 32, 32))
    hook.remove()
    (pre0, _), (pre, _) = seen
    moved = (pre != pre0).reshape(2, 8, -1).any(0)
    flipped = ((pre > 0) != (pre0 > 0)).reshape(2, 8, -1).any(0)
    one = ch3_nads.first_layer_flips((10.0,), networks=1, pixels=8)[10.0]["relu"]
    assert one == pytest.approx((moved & flipped).sum().item() / moved.sum().item())
    with pytest.raises(ValueError, match="arch must open with a Conv2d and a ReLU"):
        ch3_nads.first_layer_flips((1.0,), networks=1, arch="mlp")


class _ReadsTheReLU(nn.Module):
    """Reads its Sequential's layers one by one and uses the ReLU's output twice: no swap may apply."""

    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2))

    def forward(self, x):
        r = self.seq[1](self.seq[0](x))
        return (self.seq[2](r).flatten(1).sum(1) + r.flatten(1).mean(1))[:, None]


@pytest.mark.parametrize("arch, pooling, precision", [("lenet", True, "float32"), ("lenet", True, "bfloat16"),
                                                      ("lenet", "avg", "float32")])
def test_pooling_before_the_relu_keeps_the_secant_bitwise(arch, pooling, precision):
    from nadcore.nads import gradients

    factory, _ = nads.one_output_factory(arch, pooling=pooling)
    x0 = nads.eval_point_for(0, (1, 32, 32))
    net = nads.network(factory, 0, 3, "cpu")
    order = [type(m).__name__ for m in net.modules()]
    fast = gradients.secant_gradient(net, x0, 100.0, precision=precision)
    assert [type(m).__name__ for m in net.modules()] == order                  # the modules are put back
    assert torch.equal(fast, gradients.secant_gradient(net, x0, 100.0, precision=precision, pool_first=False))


def test_pooling_before_the_relu_leaves_a_model_that_reads_the_relu_alone():
    from nadcore.nads import gradients

    torch.manual_seed(0)
    net, x0 = _ReadsTheReLU().eval(), torch.randn(1, 8, 8)
    with torch.no_grad(), gradients.pool_before_relu(net, x0):
        assert [type(m).__name__ for m in net.seq] == ["Conv2d", "ReLU", "MaxPool2d"]   # not swapped
    lenet = nads.network(nads.one_output_factory("lenet")[0], 0, 0, "cpu")
    with torch.no_grad(), gradients.pool_before_relu(lenet, nads.eval_point_for(0, (1, 32, 32))):
        assert [type(m).__name__ for m in lenet.features][1:3] == ["_StridedMax", "ReLU"]   # swapped within ...
    assert [type(m).__name__ for m in lenet.features][1:3] == ["ReLU", "MaxPool2d"]      # ... and put back
    slow = gradients.secant_gradient(net, x0, 100.0, pool_first=False)
    assert torch.equal(slow, gradients.secant_gradient(net, x0, 100.0))


class _ReadsTheConv(nn.Module):
    """Reads its first convolution's maps besides the Sequential that pools them (odd maps: 7 x 7)."""

    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 1))

    def forward(self, x):
        return self.seq(x) + self.seq[0](x).mean((1, 2, 3))[:, None]


@pytest.mark.parametrize("model, fused", [("lenet", True), ("lenet bfloat16", True), ("odd", True),
                                          ("many channels", True), ("many channels bfloat16", True),
                                          ("reads the conv", False)])
def test_the_first_pooling_fused_with_the_injection_keeps_the_secant_bitwise(monkeypatch, model, fused):
    """Issue 43: the first convolution's probe outputs pooled without their full maps
    (`_pooled_probe_outputs`, whatever the channels), bitwise the secant without it (and without the ReLU
    swap); a model that reads the convolution's own maps is detected at x0 and runs unfused."""
    from nadcore.nads import gradients

    torch.manual_seed(0)
    precision = "bfloat16" if model.endswith("bfloat16") else "float32"
    if model.startswith("lenet"):
        net, x0 = nads.network(nads.one_output_factory("lenet")[0], 0, 5, "cpu"), nads.eval_point_for(0, (1, 32, 32))
    elif model.startswith("many channels"):   # VGG-11's first layer: 64 channels (ATen's pooling), padding 1
        net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                            nn.Conv2d(32, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2), nn.Flatten(),
                            nn.Linear(32, 1)).eval()
        x0 = torch.randn(1, 9, 9)
    elif model == "odd":
        net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 1)).eval()
        x0 = torch.randn(1, 9, 9)
    else:
        net, x0 = _ReadsTheConv().eval(), torch.randn(1, 9, 9)
    calls = []
    pooled = gradients._pooled_probe_outputs
    monkeypatch.setattr(gradients, "_pooled_probe_outputs", lambda *a: calls.append(1) or pooled(*a))
    fast = gradients.secant_gradient(net, x0, 100.0, precision=precision)
    assert bool(calls) == fused
    assert torch.equal(fast, gradients.secant_gradient(net, x0, 100.0, precision=precision, fuse_pool=False))
    assert torch.equal(fast, gradients.secant_gradient(net, x0, 100.0, precision=precision, fuse_pool=False,
                                                       pool_first=False))
    plain = net(nads.probes(x0, 100.0)).reshape(-1)
    D = x0.numel()
    if precision == "float32":
        torch.testing.assert_close(fast, (plain[:D] - plain[D:]) / 200.0, rtol=1e-4, atol=1e-6)


class _Locked(nn.Module):
    """A model holding what `copy.deepcopy` refuses (a lock): its secant runs the plain probes."""

    def __init__(self):
        super().__init__()
        self.lock, self.seq = threading.Lock(), nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2),
                                                              nn.Flatten(), nn.Linear(18, 1))

    def forward(self, x):
        return self.seq(x)


def test_the_shortcuts_swap_modules_of_a_copy_never_of_the_callers_network():
    """Issue 59: the secant's shortcuts (the injected first layer, the pooling before the ReLU, its fusion) swap
    modules of `own_copy(net)`, which shares the network's parameters and buffers; the caller's modules are never
    written, even for a moment. A model that cannot be copied runs the plain probes. The kept supports are
    bounded."""
    from nadcore.nads import gradients

    writes = []

    class Watched(dict):
        def __setitem__(self, key, value):
            writes.append(id(self))
            super().__setitem__(key, value)

    net, x0 = nads.network(nads.one_output_factory("lenet")[0], 0, 5, "cpu"), nads.eval_point_for(0, (1, 32, 32))
    before = gradients.secant_gradient(net, x0, 100.0)
    mine = {id(m): m for m in net.modules()}
    for m in mine.values():
        m._modules = Watched(m._modules)
    theirs = {id(m._modules) for m in mine.values()}
    assert torch.equal(gradients.secant_gradient(net, x0, 100.0), before)
    assert writes and not theirs & set(writes)    # the swaps happened, on the copy's modules only
    copied = gradients.own_copy(net)
    assert copied is not net and all(a is b for a, b in zip(copied.parameters(), net.parameters(), strict=True))
    torch.manual_seed(0)
    locked, x = _Locked().eval(), torch.randn(1, 8, 8)
    assert gradients.own_copy(locked) is None
    plain = locked(nads.probes(x, 100.0)).reshape(-1).detach()
    torch.testing.assert_close(gradients.secant_gradient(locked, x, 100.0), (plain[:64] - plain[64:]) / 200.0)
    for size in range(4, 6 + gradients.SUPPORTS_KEPT):   # one geometry per input size
        gradients._conv_support(nn.Conv2d(1, 2, 3), torch.zeros(1, size, size))
    assert len(gradients._SUPPORTS) == gradients.SUPPORTS_KEPT


def test_the_injected_maps_are_handed_on_in_autocast_dtype_as_the_convolution_would():
    """Issue 43: in bfloat16 the injected first convolution's maps reach the next layer in bfloat16, as the
    convolution under autocast returns them (ResNet-18: its first BatchNorm on half the bytes); computed in
    float32 first, so they are the float32 injection rounded once. A first Linear's outputs stay float32 (a
    LogReg's are its output), and float32 is untouched."""
    from nadcore.nads import gradients

    torch.manual_seed(0)
    x0 = torch.randn(1, 8, 8)
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(144, 1)).eval()
    seen = {}
    net[1].register_forward_hook(lambda m, inp, out: seen.update({len(inp[0]): inp[0].clone()}))
    for precision in ("float32", "bfloat16"):   # the injection itself (a hook keeps `secant_gradient` off it)
        with torch.no_grad(), autocast(x0.device, precision):
            gradients._injected_forward(net, "0", x0, 100.0)
        maps = seen.pop(2 * x0.numel())
        assert maps.dtype == (torch.bfloat16 if precision == "bfloat16" else torch.float32)
        exact = gradients._linear_probe_outputs(net[0], x0, 100.0)
        assert torch.equal(maps, exact.to(maps.dtype))
    logreg = nn.Sequential(nn.Flatten(), nn.Linear(64, 1)).eval()
    plain = logreg(nads.probes(x0, 100.0)).reshape(-1)
    D = x0.numel()
    torch.testing.assert_close(gradients.secant_gradient(logreg, x0, 100.0, precision="bfloat16"),
                               (plain[:D] - plain[D:]) / 200.0, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 6, 28, 28), (3, 6, 9, 7), (2, 16, 10, 10)])
def test_strided_maxima_are_the_max_pooling(shape):
    from nadcore.nads import gradients

    torch.manual_seed(0)
    x = torch.randn(*shape).to(memory_format=torch.channels_last)
    for pool in (nn.MaxPool2d(2), nn.MaxPool2d(3), nn.MaxPool2d(2, ceil_mode=True)):
        assert torch.equal(gradients._StridedMax(pool)(x), pool(x))
    assert gradients._StridedMax(nn.MaxPool2d(2)).plain and not gradients._StridedMax(nn.MaxPool2d(3)).plain


class _Door(nn.Module):
    """A model whose forward does `how` (issue 58 item 10: each ended in a traceback, or exited silently)."""

    def __init__(self, how="ok"):
        super().__init__()
        self.lin, self.how = nn.Linear(64, 1), how

    def forward(self, x):
        y = self.lin(x.flatten(1))
        return {"tuple": lambda: (y,), "dict": lambda: {"y": y}, "float": lambda: 1.0, "batch": lambda: y[:1],
                "key": lambda: {}["boom"], "zero": lambda: 1 / 0, "exit": lambda: sys.exit(3), "ok": lambda: y}[
            self.how]()


def _needs_an_argument(width):
    return _Door()


class _Constant(nn.Module):
    def forward(self, x):
        return x.flatten(1)[:, :1]


@pytest.mark.parametrize("model, message", [
    (partial(_Door, "tuple"), "model must return one tensor (one output per input); got a tuple"),
    (partial(_Door, "dict"), "model must return one tensor (one output per input); got a dict"),
    (partial(_Door, "float"), "model must return one tensor (one output per input); got a float"),
    (partial(_Door, "batch"), "model must map a batch of B inputs to B outputs; a batch of 2 gave (1, 1)"),
    (partial(_Door, "key"), "model must run its forward pass on a batch of shape (1, 1, 8, 8); it raised KeyError"),
    (partial(_Door, "zero"), "model must run its forward pass on a batch of shape (1, 1, 8, 8); it raised Zero"),
    (partial(_Door, "exit"), "model must run its forward pass on a batch of shape (1, 1, 8, 8); it raised SystemExit"),
    (_needs_an_argument, "model must be a class or factory that builds a network with no arguments; calling it "
                         "raised TypeError"),
    (_Constant, "model must have parameters"),
])
def test_a_broken_model_gets_one_line_naming_what_is_wrong(model, message):
    """Issue 58 item 10: what a user's model can get wrong, each told in one line before any chunk."""
    with pytest.raises(ValueError) as err:
        estimate_kw(model, 4, input_shape=(1, 8, 8), progress=False)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_nan_and_out_of_range_values_are_refused_at_the_library_doors():
    """Issue 58 item 12: a NaN spectrum gave gamma 0 and a Bayes accuracy of 0.5 (read as a real chance level),
    `subspace_overlap` took k = -1 (1.0) and k = 0 (nan), a zero direction gave nan, `train.fit` seed -1."""
    from nadcore import pooling, train

    for call, message in [
        (lambda: pooling.snr_gamma([1, float("nan"), 1, 1], 2), "m_hat must hold finite spectral values"),
        (lambda: pooling.prefilter(np.full(8, np.nan), 8, 2), "prefilter must hold finite spectral values"),
        (lambda: nads.subspace_overlap(np.eye(4), np.eye(4), -1), r"k must be an integer in \[1, 4\]"),
        (lambda: nads.subspace_overlap(np.eye(4), np.eye(4), 0), r"k must be an integer in \[1, 4\]"),
        (lambda: nads.subspace_overlaps(np.eye(4), np.eye(4), [1, 5]), r"ks must be integers in \[1, 4\]"),
        (lambda: pooling.direction_bayes_accuracy(torch.zeros(1, 8), "average", 2, 1.0, 1.0),
         "directions must be finite and non-zero"),
        (lambda: train.fit(nn.Linear(2, 2), ((torch.zeros(4, 2), torch.zeros(4, dtype=torch.long)),) * 2,
                           {"epochs": 1, "max_lr": 0.1}, seed=-1), r"seed must be an integer in \[0, 2\^63\)"),
    ]:
        with pytest.raises(ValueError, match="^" + message):
            call()


class _Block(nn.Module):
    """A linear model of 64 inputs that reads one fixed 8-dimensional subspace, with random weights inside it: its
    gradient covariance has 8 near-equal eigenvalues, then nothing (issue 60: a near-degenerate leading block)."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(123)
        self.register_buffer("P", torch.linalg.qr(torch.randn(64, 8, generator=g))[0].T.contiguous())
        self.w = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return (x.flatten(1) @ self.P.T @ self.w)[:, None]


@pytest.mark.filterwarnings("ignore::nadcore.nads.NADTrustWarning")
def test_the_trust_verdict_names_what_is_identifiable():
    """Issue 60 item 4: per k, above chance or not; a near-degenerate leading block named as an identified subspace
    whose single NADs are not; a flat spectrum named as no preferred direction, not as too few networks."""
    block = estimate_kw(_Block, 300, input_shape=(1, 8, 8), method="autograd", progress=False).trust()
    assert block.block == 8 and not block.isotropic
    line = block.summary()
    assert "k=1 NOT above chance" in line and "the leading 8-dimensional subspace is identified" in line
    assert "single NADs inside it are not" in line and "use more networks" not in line
    flat = estimate_kw("logreg", 1100, method="autograd", progress=False).trust()
    assert flat.block is None and flat.isotropic
    assert "no preferred direction detected" in flat.summary() and "use more networks" not in flat.summary()


def test_a_factory_function_is_stored_under_its_module_and_name(tmp_path):
    """Issue 60 item 5: `--model mymodels:build` was stored as `build`, a name any module's factory shares."""
    assert nads.model_factory("test_nads:small_cnn", (1, 8, 8)).default_name == "test_nads.small_cnn"
    assert nads.model_factory("test_nads:LazyCNN", (1, 8, 8)).default_name == "LazyCNN"


def test_the_grid_says_when_it_sums_channels_and_what_is_identifiable():
    """Issue 60 item 5: a 3-channel NAD's grid summed its channels silently, and a noise estimate looked like any."""
    import matplotlib.pyplot as plt

    res = estimate_kw(lambda: nn.Sequential(nn.Conv2d(3, 2, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1)), 8,
                        input_shape=(3, 8, 8), method="autograd", progress=False)
    fig = plots.grid(res, 4)
    assert fig.get_suptitle().startswith("3 channels summed; ") and res.trust().label in fig.get_suptitle()
    plt.close(fig)


def test_degenerate_bases_and_directions_are_refused_not_read_as_numbers():
    """Second adversarial pass (issue 58): zero bases gave an overlap of 1.0, NaN an SVD error, a 1-D basis or
    mismatched D numpy's error, `ks=[]` max()'s; a direction scaled by 1e200 a Bayes accuracy of 0.5 (its norm
    overflowed) and no direction a RuntimeError."""
    from nadcore import pooling

    eye = np.eye(4)
    for U, V, message in ((np.zeros((4, 4)), np.zeros((4, 4)), "U must have linearly independent rows"),
                          (eye, np.full((4, 4), np.nan), "U and V must be finite"),
                          (eye[0], eye, "U and V must be rows of directions of one dimension"),
                          (eye, np.eye(5), "U and V must be rows of directions of one dimension")):
        with pytest.raises(ValueError, match="^" + message):
            nads.subspace_overlap(U, V, 2)
    with pytest.raises(ValueError, match="^ks must hold one or more"):
        nads.subspace_overlaps(eye, eye, [])
    v = torch.ones(1, 8, dtype=torch.float64)
    one = pooling.direction_bayes_accuracy(v, "average", 2, 1.0, 1.0)
    assert torch.equal(pooling.direction_bayes_accuracy(v * 1e200, "average", 2, 1.0, 1.0), one)
    with pytest.raises(ValueError, match="^directions must hold one or more"):
        pooling.direction_bayes_accuracy(torch.zeros(0, 8), "average", 2, 1.0, 1.0)


def test_an_integer_or_complex_output_is_refused():
    """Second adversarial pass (issue 58): integer outputs gave NADs of rounded values, complex ones a warning."""
    for dtype in (torch.int64, torch.complex64):
        class Cast(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(64, 1)

            def forward(self, x, dtype=dtype):
                return self.lin(x.flatten(1)).to(dtype)

        with pytest.raises(ValueError, match="^model must return a real floating-point output"):
            estimate_kw(Cast, 4, input_shape=(1, 8, 8), progress=False)


def test_an_edit_beside_the_class_changes_the_models_key(tmp_path, monkeypatch):
    """Second adversarial pass (issue 58): an edited constant that `forward` reads, in the model's module, and an
    edited base class kept the key (the rerun reused stale chunks): the code digest covers their modules."""
    import importlib
    import sys as system

    monkeypatch.syspath_prepend(str(tmp_path))
    digests = []
    for cap in (1.0, 0.5):
        (tmp_path / "capped.py").write_text(
            f"import torch\nfrom torch import nn\n\nCAP = {cap}\n\n\ndef act(x):\n    return x.clamp(max=CAP)\n\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.lin = nn.Linear(64, 1)\n\n    def forward(self, x):\n"
            "        return act(self.lin(x.flatten(1)))\n")
        system.modules.pop("capped", None)
        importlib.invalidate_caches()
        digests.append(networks.code_digest(importlib.import_module("capped").Net()))
    assert None not in digests and digests[0] != digests[1]


def test_the_secant_leaves_the_callers_point_as_it_is_and_a_notebook_class_has_a_code_digest():
    """The re-probe of issue 58: `secant_gradient` zeroed the caller's x0 for a model working in place; a class
    without source (a notebook cell, `-c`) had no code digest, so an edited forward reused stale chunks."""
    x0 = nads.eval_point_for(0, (1, 8, 8))
    kept = x0.clone()
    nads.secant_gradient(_InPlace().eval(), x0, 100.0)
    assert torch.equal(x0, kept)
    digests = []
    for body in ("return self.lin(x.flatten(1))", "return 2 * self.lin(x.flatten(1))"):
        space = {"nn": nn}
        exec(f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             f"        self.lin = nn.Linear(64, 1)\n\n    def forward(self, x):\n        {body}\n", space)
        digests.append(networks.code_digest(space["Net"]()))
    assert None not in digests and digests[0] != digests[1]


def test_an_edit_to_a_helper_in_a_sibling_module_changes_the_models_key(tmp_path, monkeypatch):
    """Issue 58's leftover: a helper imported from another module of the user's project was not in the code digest;
    the project's own modules are (`networks.project_modules`), the libraries they use are not."""
    import importlib
    import sys as system

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "mynet.py").write_text(
        "import numpy\nimport torch\nfrom torch import nn\n\nfrom helpers import act\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lin = nn.Linear(64, 1)\n\n    def forward(self, x):\n"
        "        return act(self.lin(x.flatten(1)))\n")
    digests = []
    for cap in (1.0, 0.5):
        (tmp_path / "helpers.py").write_text(f"def act(x):\n    return x.clamp(max={cap})\n")
        for name in ("mynet", "helpers"):
            system.modules.pop(name, None)
        importlib.invalidate_caches()
        mod = importlib.import_module("mynet")
        digests.append(networks.code_digest(mod.Net()))
        assert networks.project_modules(["mynet"]) == ["helpers", "mynet"]   # not numpy, not torch
    assert None not in digests and digests[0] != digests[1]


@pytest.mark.parametrize("layout", ["parent package", "sibling folder", "inside forward", "a folder on sys.path"])
def test_a_helper_anywhere_in_the_project_is_in_the_models_key(tmp_path, monkeypatch, layout):
    """The adversarial pass of session 35: a helper in a parent package, in a sibling folder, or imported inside
    `forward` kept the key (a rerun reused stale chunks); every loaded module below the model's import root counts."""
    import importlib
    import sys as system

    monkeypatch.syspath_prepend(str(tmp_path))
    body = "        return squash(self.lin(x.flatten(1)))\n"
    if layout == "parent package":
        where, spec, imp = "pkg/helper.py", "pkg.sub.model", "from pkg.helper import squash\n"
        for d in ("pkg", "pkg/sub"):
            (tmp_path / d).mkdir(exist_ok=True)
            (tmp_path / d / "__init__.py").write_text("")
    elif layout == "sibling folder":
        where, spec, imp = "utils/helper.py", "models.net", "from utils.helper import squash\n"
        for d in ("utils", "models"):
            (tmp_path / d).mkdir(exist_ok=True)
            (tmp_path / d / "__init__.py").write_text("")
    elif layout == "a folder on sys.path":   # the fourth pass: ../helpers put on sys.path by the model's module
        where, spec = "helpers/pathhelper.py", "pathnet"
        (tmp_path / "helpers").mkdir(exist_ok=True)
        imp = f"import sys\nsys.path.insert(0, {str(tmp_path / 'helpers')!r})\nfrom pathhelper import squash\n"
        monkeypatch.syspath_prepend(str(tmp_path / "models2"))
        (tmp_path / "models2").mkdir(exist_ok=True)
        spec_file = tmp_path / "models2" / "pathnet.py"
    else:
        where, spec, imp = "lazyhelper.py", "lazynet", ""
        body = "        from lazyhelper import squash\n\n" + body
    path = spec_file if layout == "a folder on sys.path" else tmp_path / (spec.replace(".", "/") + ".py")
    path.write_text(f"import torch\nfrom torch import nn\n{imp}\n\nclass Net(nn.Module):\n"
                    "    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(64, 1)\n\n"
                    f"    def forward(self, x):\n{body}")
    digests = []
    for limit in (5, 50):
        (tmp_path / where).write_text(f"LIMIT = {limit}\n\n\ndef squash(x):\n    return x.clamp(-LIMIT, LIMIT)\n")
        for name in [n for n in system.modules if n.split(".")[0] in ("pkg", "utils", "models", "lazyhelper",
                                                                      "lazynet", "pathnet", "pathhelper")]:
            system.modules.pop(name)
        importlib.invalidate_caches()
        net = importlib.import_module(spec).Net()
        net(torch.zeros(1, 1, 8, 8))   # `describe` runs the network at x0 before the digest
        digests.append(networks.code_digest(net))
    assert None not in digests and digests[0] != digests[1]


class _NaNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(64, 1)

    def forward(self, x):
        return self.lin(x.flatten(1)) * float("nan")


@pytest.mark.parametrize("method", ["secant", "autograd"])
def test_a_model_that_outputs_nan_is_told_so(method):
    """Issue 58's leftover: a model whose output is NaN was told to check the secant's step (autograd has none)."""
    with pytest.raises(ValueError) as err:
        estimate_kw(_NaNNet, 4, input_shape=(1, 8, 8), method=method, progress=False)
    assert str(err.value) == ("model must give finite outputs and gradients at the evaluation point: network 0's "
                              "output there is nan")


class LooseMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.mask = nn.Linear(16, 1), (torch.rand(16) > 0.5).float()   # a plain attribute, not a buffer

    def forward(self, x):
        return self.fc(x.flatten(1) * self.mask)


def test_the_compiled_secant_refuses_tensors_it_would_not_copy():
    """The re-probe of issue 58: torch.compile's copy kept network 0's plain tensor attribute for every network
    (top eigenvalue 0.055 against eager 0.076, silently); only parameters and buffers are copied in."""
    with pytest.raises(ValueError, match="^model must hold its tensors as parameters or buffers for compiled=True"):
        gradients.compiled_secant_gradient(LooseMask(), torch.randn(1, 4, 4), 100.0)


class HalfParams(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 8), nn.Linear(8, 1)
        self.to(torch.bfloat16)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x.flatten(1).to(torch.bfloat16)))).float()


def test_a_model_with_bfloat16_weights_is_described_and_estimated():
    """The re-probe of issue 58: its digest called numpy on bfloat16 weights ('unsupported ScalarType')."""
    res = estimate_kw(HalfParams, 4, input_shape=(1, 4, 4), progress=False, method="autograd")
    assert len(res.settings["model"]["behaviour"]) == 12 and np.isfinite(res.eigenvalues).all()


def test_a_driver_script_beside_the_model_is_not_in_its_key(tmp_path):
    """Issue 60's newcomer: running.md's Python code, run as a script beside the model, keyed the model by the script
    too, so it never reused the command line's estimate (and an edit to the script recomputed it)."""
    (tmp_path / "mynet.py").write_text("from torch import nn\n\n\ndef build():\n    return nn.Linear(16, 1)\n")
    code = ("import torch, mynet\nfrom nadcore.nads import networks\nnet = mynet.build()\nnet(torch.zeros(1, 16))\n"
            "print(networks.code_digest(net, mynet.build))\n")
    (tmp_path / "driver.py").write_text(code)
    run = lambda *argv: subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True, text=True,
                                       check=True).stdout.strip()
    script, inline = run("driver.py"), run("-c", code)
    (tmp_path / "driver.py").write_text(code + "# an edit to the driver\n")
    assert script == inline == run("driver.py") and len(script) == 12


class _PyGate(nn.Module):
    """A second reader of the input gated in Python on a weight: fx traces each network's own branch."""

    def __init__(self):
        super().__init__()
        self.fc, self.g = nn.Linear(64, 1), nn.Parameter(torch.randn(()))

    def forward(self, x):
        f = x.flatten(1)
        out = self.fc(f)
        return out + 1000.0 * (f[:, 5:6] > 60).float() if self._parameters["g"] > 0 else out


class _RootHook(nn.Module):
    """A forward hook on the model itself reads the input (fx traces `forward` alone)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)
        self.register_forward_hook(lambda m, i, o: o + 50.0 * (i[0].flatten(1)[:, 5:6] > 50).float())

    def forward(self, x):
        return self.fc(x.flatten(1)) + 1e6


class _ReadsItsLayers(nn.Module):
    """Reads its layers' attributes and its Sequential by position (the stand-ins answer them)."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(18, 1)

    def forward(self, x):
        assert isinstance(self.f[2], nn.MaxPool2d) and self.f[0].in_channels == 1
        return self.fc(self.f(x).view(-1, self.fc.in_features))


class _SharedBody(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.out = nn.Linear(64, 8), nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.fc(x).relu())

    def __deepcopy__(self, memo):   # copies as itself: the copy would share it with the caller's network
        return self


GAIN = {"gain": 1.0}


class _Configured(nn.Module):
    """A configuration (a module's dict) that reaches network 7 alone: its key cannot see it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)
        self.big = float(torch.rand(())) > 0.9

    def forward(self, x):
        return self.fc(x.flatten(1)) * (GAIN["gain"] if self.big else 1.0)


def test_the_fifth_pass_secant_and_key(tmp_path, monkeypatch):
    """The fifth adversarial pass of issue 58: a second reader gated in Python, or read by a hook, gave a wrong
    secant; models reading their layers' attributes failed under the stand-ins; a module that copies as itself let
    the shortcuts swap the caller's modules; a configuration that changes network 7 alone reused stale chunks."""
    kw = dict(input_shape=(1, 8, 8), progress=False, device="cpu")
    for model, seed in ((_PyGate, 1), (_RootHook, 0)):
        factory, _ = nads.one_output_factory(model, (1, 8, 8))
        x0 = nads.eval_point_for(seed, (1, 8, 8))
        plain = torch.stack([gradients.secant_gradient(nads.network(factory, seed, i, "cpu"), x0, 100.0, None)
                             for i in range(8)]).double()
        est = estimate_kw(model, 8, seed=seed, **kw)
        np.testing.assert_allclose(est.eigenvalues[:2], torch.linalg.eigvalsh(torch.cov(plain.T)).flip(0)[:2].numpy(),
                                   rtol=1e-4)
    sec, auto = (estimate_kw(_ReadsItsLayers, 6, method=m, **kw) for m in ("secant", "autograd"))
    assert sec.eigenvalues[0] > 0 and auto.eigenvalues[0] > 0
    net = nn.Sequential(nn.Flatten(), _SharedBody()).eval()
    assert gradients.own_copy(net) is None
    x0 = torch.randn(1, 8, 8)
    plain = net(nads.probes(x0, 100.0)).reshape(-1).detach()
    torch.testing.assert_close(gradients.secant_gradient(net, x0, 100.0), (plain[:64] - plain[64:]) / 200.0)
    store_kw = dict(kw, results_dir=tmp_path, name="configured")
    configured, _ = nads.one_output_factory(_Configured, (1, 8, 8))
    big = lambda s: [bool(nads.network(configured, s, i, "cpu").big) for i in range(1, 8)]   # noqa: E731
    seed = next(s for s in range(200) if big(s) == [False] * 6 + [True])   # network 7 alone, of networks 1-7
    first = estimate_kw(_Configured, 8, seed=seed, **store_kw)
    monkeypatch.setitem(GAIN, "gain", 50.0)
    with pytest.raises(ValueError, match=r"^model must compute the numbers of its stored chunks to reuse them: "
                                         r"network 7 now gives another gradient"):
        estimate_kw(_Configured, 8, seed=seed, **store_kw)
    monkeypatch.setitem(GAIN, "gain", 1.0)
    np.testing.assert_array_equal(estimate_kw(_Configured, 8, seed=seed, **store_kw).nads, first.nads)


def test_estimate_takes_its_settings_as_one_checked_object(tmp_path):
    """`estimate(model, settings, *, device, results_dir, shard, progress, name, max_hours)`: what decides the
    numbers is one `EstimateSettings`, checked when made; the rest is how a run goes (issue 59: 19 parameters
    were 8 at most)."""
    import inspect

    assert len(inspect.signature(nads.estimate).parameters) <= 8
    s = nads.EstimateSettings("autograd", num_networks=6, input_shape=(1, 8, 8), batch_size=4)
    res = nads.estimate(small_cnn, s, progress=False, device="cpu")
    again = estimate_kw(small_cnn, 6, method="autograd", input_shape=(1, 8, 8), batch_size=4, progress=False)
    np.testing.assert_array_equal(res.nads, again.nads)
    assert res.settings["num_networks"] == 6 and res.settings["method"] == "autograd"
    for bad, word in ((lambda: nads.estimate(small_cnn, 6), "settings"),
                      (lambda: nads.estimate(small_cnn, nads.EstimateSettings(input_shape=(1, 8, 8))), "num_networks"),
                      (lambda: nads.estimate(small_cnn, s, shard=2), "shard"),
                      (lambda: nads.estimate(small_cnn, s, shard=(2, 2), results_dir=tmp_path), "shard"),
                      (lambda: nads.EstimateSettings(num_networks=1), "num_networks"),
                      (lambda: nads.EstimateSettings(num_networks=4, first=-1), "first")):
        with pytest.raises(ValueError, match=word):
            bad()


def test_load_or_estimate_stores_an_estimate_once_then_reads_it(tmp_path):
    s = nads.EstimateSettings(num_networks=4, input_shape=(1, 32, 32), eig_threads=1)
    assert nads.load_or_estimate("logreg", s, tmp_path, compute=False) is None   # nothing stored, nothing run
    with pytest.warns(nads.NADTrustWarning):   # 4 networks: noise, as the warning says
        first = nads.load_or_estimate("logreg", s, tmp_path, compact=True, progress=False, device="cpu")
    stored = nads.load_or_estimate("logreg", s, tmp_path, compute=False)
    assert stored is not None and first.settings == stored.settings == s.result_settings("logreg")
    np.testing.assert_array_equal(first.nads, stored.nads)   # what later readers see: float16 NADs, read back
    assert stored.nads.dtype == np.float32 and (tmp_path / "nad_chunks").is_dir()
