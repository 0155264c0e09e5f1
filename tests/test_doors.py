"""Bad values at the library's doors: one-line ValueErrors naming the parameter, before any work."""

import math

import numpy as np
import pytest
import torch
from conftest import estimate_kw

from nadcore import data, fourier, nads, pooling, seeds, store, train
from nadcore.models import build

V = fourier.fourier_direction(1, 2)


@pytest.mark.parametrize("bad", ["abc", None, object()])
def test_a_direction_that_is_no_tensor_is_refused_in_one_line(bad):
    """Issue 58's leftover: directional_dataset("abc") said `new(): invalid data type 'str'`."""
    with pytest.raises(ValueError, match=r"^v must be a float tensor of shape \(C, H, W\) or \(H, W\); got "):
        data.directional_dataset(bad, 10, sigma=1.0, eps=1.0)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_directions_with_nan_or_inf_are_refused(bad):
    v = V.clone()
    v[0, 0, 0] = bad
    with pytest.raises(ValueError, match="^v must hold finite numbers"):
        data.directional_dataset(v, 10, sigma=1.0, eps=1.0)


@pytest.mark.parametrize("name, kwargs", [("sigma", {"sigma": math.inf}), ("sigma", {"sigma": math.nan}),
                                          ("eps", {"eps": math.inf}), ("eps", {"eps": math.nan}),
                                          ("sigma", {"sigma": True})])
def test_sigma_and_eps_must_be_finite(name, kwargs):
    args = {"sigma": 1.0, "eps": 1.0, **kwargs}
    with pytest.raises(ValueError, match=f"^{name} must be a finite number"):
        data.directional_dataset(V, 10, **args)


@pytest.mark.parametrize("seed", [1.7, -1, 2 ** 63, 99999999999999999999999, "3", True])
def test_seeds_must_be_integers_that_the_kernels_take(seed):
    with pytest.raises(ValueError, match="^seed must be an integer in \\[0, 2\\^63\\)"):
        data.directional_dataset(V, 10, sigma=1.0, eps=1.0, seed=seed)
    with pytest.raises(ValueError, match="^seed must be an integer"):
        seeds.derive(seed, 1)
    with pytest.raises(ValueError, match="^seed must be an integer"):
        estimate_kw("logreg", 2, seed=seed, progress=False)
    assert seeds.check_seed(2 ** 63 - 1) == 2 ** 63 - 1 and seeds.check_seed(np.int64(3)) == 3


def test_nad_estimates_refuse_non_finite_points_tiny_steps_and_fractional_shapes():
    x0 = torch.zeros(1, 32, 32)
    x0[0, 3, 3] = float("nan")
    with pytest.raises(ValueError, match="^eval_point must hold finite numbers"):
        estimate_kw("logreg", 2, eval_point=x0, progress=False)
    with pytest.raises(ValueError, match="^step must be a finite number > 0 in float32"):
        estimate_kw("logreg", 2, step=1e-300, progress=False)
    with pytest.raises(ValueError, match="^input_shape must be a tuple of positive ints"):
        estimate_kw("logreg", 2, input_shape=(1, 32.0, 1.5), progress=False)


def test_non_finite_gradients_stop_the_chunk_that_makes_them():
    class Blows(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(16))

        def forward(self, x):
            return (x.flatten(1) @ self.w).exp().exp()[:, None]   # overflows to inf at the probes

    with pytest.raises(ValueError, match="^model must give finite outputs and gradients at the evaluation point"):
        estimate_kw(Blows, 4, input_shape=(16,), progress=False)


def test_unbounded_batches_and_stacks_are_refused_before_work():
    with pytest.raises(ValueError, match=f"^batch_size must be an integer in \\[1, {nads.MAX_BATCH}\\]"):
        estimate_kw("logreg", 2, method="autograd", batch_size=10 ** 9, progress=False)
    xy = (torch.randn(4, 1, 32, 32), torch.tensor([0, 1, 0, 1]))
    with pytest.raises(ValueError, match=f"^chunk must be an integer in \\[1, {train.MAX_CHUNK}\\]"):
        train.fit_many([build("logreg")], [(xy, xy)], train.Recipe(1, 0.1), chunk=10 ** 6)


def test_training_inputs_must_be_finite():
    x = torch.randn(4, 1, 32, 32)
    x[1, 0, 0, 0] = float("nan")
    y = torch.tensor([0, 1, 0, 1])
    with pytest.raises(ValueError, match="^train: x must hold finite numbers"):
        train.fit(build("logreg"), ((x, y), (x.nan_to_num(), y)), train.Recipe(1, 0.1), device="cpu")


def test_a_nad_estimate_holds_one_stored_chunk_at_a_time(tmp_path, monkeypatch):
    """Memory is bounded by one chunk: a chunk's moments are freed once the next one is merged."""
    import weakref

    full = estimate_kw("logreg", 500, results_dir=tmp_path, progress=False)   # 4 chunks, stored
    refs, alive = [], []
    real = nads.chunks.Ledger.read

    def watched(self, *args):
        for c in real(self, *args):
            alive.append(sum(r() is not None for r in refs))   # earlier chunks still in memory
            refs.append(weakref.ref(c["m2"]))
            yield c

    monkeypatch.setattr(nads.chunks.Ledger, "read", watched)   # as nads.estimator reads the stored chunks
    again = estimate_kw("logreg", 500, results_dir=tmp_path, progress=False)
    assert len(refs) == 4 and max(alive) <= 1                  # only the chunk being merged
    np.testing.assert_array_equal(full.eigenvalues, again.eigenvalues)   # bitwise: same order of merging


@pytest.mark.parametrize("name, kwargs", [("sigma", {"sigma": 1e39}), ("eps", {"eps": 1e39}),
                                          ("sigma", {"sigma": 1e38}), ("sigma", {"sigma": np.float64(1e39)})])
def test_sigma_and_eps_must_fit_float32(name, kwargs):
    """Issue 41 item 8: the samples are float32; sigma=1e39 gave all-inf data, eps=1e39 a RuntimeError."""
    args = {"sigma": 1.0, "eps": 1.0, **kwargs}
    with pytest.raises(ValueError, match=f"^{name} must be .*float32"):
        data.directional_dataset(V, 10, **args)


def test_numpy_scalars_are_accepted_wherever_python_numbers_are(tmp_path):
    """Issue 41 item 8: `n=np.int64(10)` and `sigma=np.float32(3)` were refused at the doors that
    check for Python's int and float (fourier_direction accepted numpy integers)."""
    from nadcore import models, pooling, sweeps
    from nadcore.experiments import ch5_underspec

    i, f = np.int64, np.float32
    x, y = data.directional_dataset(V, i(10), sigma=f(3), eps=np.float64(1), seed=i(4))
    x0, y0 = data.directional_dataset(V, 10, sigma=3.0, eps=1.0, seed=4)
    assert torch.equal(x, x0) and torch.equal(y, y0)
    assert pooling.check_factor(i(32), i(4)) == 8
    m_hat = pooling.prefilter("average", i(32), i(4))
    assert pooling.bayes_accuracy(m_hat, i(4), f(1), f(0.5)) == pytest.approx(pooling.bayes_accuracy(
        pooling.prefilter("average", 32, 4), 4, 1.0, 0.5))
    gamma = pooling.snr_gamma(pooling.prefilter("average", i(8), i(2), dims=i(2)), i(2), cells=[(i(1), i(2))])
    assert torch.equal(gamma, pooling.snr_gamma(pooling.prefilter("average", 8, 2, dims=2), 2, cells=[(1, 2)]))
    assert torch.equal(pooling.pooling_matrix("binomial3_x2", i(4), i(8), dims=i(2)),
                       pooling.pooling_matrix("binomial3_x2", 4, 8, dims=2))
    assert torch.equal(models.binomial_filter(i(3)), models.binomial_filter(3))
    blur = models.BlurPool2d(size=i(3), stride=i(2))
    assert blur(torch.ones(1, 1, 8, 8)).shape == (1, 1, 4, 4)
    assert models.build("lenet", in_channels=i(1), num_classes=i(2))(torch.zeros(1, 1, 32, 32)).shape == (1, 2)
    cells = [{"k": 0}, {"k": 1}]
    out = sweeps.sweep("t", cells, lambda cs: [{"a": np.zeros(1)} for _ in cs], {"seed": 0}, tmp_path,
                       batch=i(1), shard=i(0), num_shards=i(1), progress=False)
    assert len(out) == 2
    net = models.build("lenet", in_channels=2)
    classes, coords = ch5_underspec.cross_section(net, V, V, extent=f(2), resolution=i(3), device="cpu")
    assert classes.shape == (3, 3) and len(coords) == 3


@pytest.mark.parametrize("kwargs, names", [({"step": 1e-30}, "step"),
                                           ({"eval_point": torch.full((1, 32, 32), 1e30)}, "eval_point")])
def test_all_zero_gradients_say_so_and_name_what_to_change(kwargs, names):
    """Issue 41 item 7: `step=1e-30` said 'model factory returned the same network twice'; the cause is
    that every gradient is zero."""
    with pytest.raises(ValueError, match="gradients of networks 0..3 are all zero") as err:
        estimate_kw("logreg", 4, progress=False, **kwargs)
    assert names in str(err.value) and "same network twice" not in str(err.value)


def test_a_nad_estimate_bounds_its_networks_before_building_chunks():
    """Issue 41 item 6: `nads.estimate("logreg", 10**18)` raised MemoryError building chunk ranges."""
    from nadcore import catalog

    for n in (10 ** 18, catalog.MAX_NETWORKS + 1):
        with pytest.raises(ValueError, match=r"^num_networks must be an integer in \[2, 10000000\]"):
            estimate_kw("logreg", n, progress=False)


@pytest.mark.parametrize("call, message", [
    (lambda d: estimate_kw("logreg", 4, results_dir=d / "file", progress=False), "results_dir must be a folder"),
    (lambda d: estimate_kw("logreg", 4, num_shards=0, results_dir=d, progress=False), "num_shards must be an"),
    (lambda d: estimate_kw("logreg", 4, shard=2, num_shards=2, results_dir=d, progress=False), "shard must be an"),
    (lambda d: estimate_kw("logreg", 4, max_hours=-1, progress=False), "max_hours must be a number > 0"),
    (lambda d: estimate_kw("logreg", 4, max_hours=float("nan"), progress=False), "max_hours must be a number > 0"),
    (lambda d: nads.convergence("logreg", nads.EstimateSettings(), [4], (1, 4096), progress=False),
     "ks must be a non-empty list"),
    (lambda d: nads.convergence("logreg", nads.EstimateSettings(), [2.7], progress=False),
     "sizes must be a non-empty list"),
    (lambda d: nads.convergence("logreg", 100, [4], progress=False), "settings must be a nads.EstimateSettings"),
    (lambda d: nads.eig_decreasing(np.full((3, 3), np.nan)), "matrix must be a square matrix of finite numbers"),
    (lambda d: nads.eig_decreasing(np.ones((3, 2))), "matrix must be a square matrix"),
    (lambda d: store.save(d, {"a": np.zeros(1)}, {"k": 1}), "path must name a file, not a folder"),
    (lambda d: store.save(d / "x.npz", {"a\x00b": np.zeros(1)}, {"k": 1}), "arrays must have names of letters"),
    (lambda d: store.save(d / "x.npz", {"../x": np.zeros(1)}, {"k": 1}), "arrays must have names of letters"),
    (lambda d: pooling.snr_gamma(np.array([None] * 8), 2), "m_hat must be an array of spectral values"),
    (lambda d: pooling.prefilter(None, 8, 2), "prefilter must be an array of spectral values"),
    (lambda d: pooling.expected_hessian(torch.ones(8), 999, 2, 1.0, 1.0), "l must be a frequency in [0, D)"),
    (lambda d: pooling.expected_hessian(torch.ones(8), -1, 2, 1.0, 1.0), "l must be a frequency in [0, D)"),
    (lambda d: pooling.simulated_paper_accuracy(999, torch.ones(8), 2), "l must be a frequency in [0, D)"),
    (lambda d: pooling.lemma1_check(n=1), "n must be an integer >= 10"),
])
def test_library_doors_of_the_third_pass(tmp_path, call, message):
    """The third adversarial pass of issue 58: each was a raw exception, a wrapped index or work done in vain."""
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError) as err:
        call(tmp_path)
    assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)


def test_more_doors_of_the_third_pass(tmp_path):
    """Raw exceptions or garbage accepted at the third pass: a NaN threshold, a negative band, a batch of 0, an
    absurd recipe, a result name that leaves its folder."""
    from nadcore.nads import result_path

    for call, message in ((lambda: train.iterations_to_loss([1, 0.5], float("nan")), "threshold must be"),
                          (lambda: fourier.low_band(8, -1), "band must be an integer >= 0"),
                          (lambda: train.accuracy(build("logreg"), *data.directional_dataset(V, 4, 1.0, 1.0),
                                                  batch_size=0), "batch_size must be an integer >= 1"),
                          (lambda: train.Recipe(epochs=10 ** 9, max_lr=0.1), "epochs must be an integer in [1, "),
                          (lambda: result_path("../../x", {}, tmp_path), "arch must be a file-name-safe name")):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)


def test_the_figures_and_energies_refuse_what_they_cannot_draw():
    """The third pass: `spectrum` of zero eigenvalues and `fig6` of mismatched lengths were an IndexError and a
    matplotlib error; `fourier_energy` of a 1-D array an IndexError, of no image an MKL error."""
    from nadcore.nads import NADResult
    from nadcore.plots import nads as nad_plots

    flat = NADResult(np.zeros(16), np.eye(16, dtype=np.float32), {"input_shape": [1, 4, 4]})
    for call, message in ((lambda: nad_plots.spectrum(flat), "result.eigenvalues must be finite eigenvalues"),
                          (lambda: nad_plots.fig6([0, 1, 2], [50.0], np.ones(4)), "indices and accuracy must be"),
                          (lambda: nad_plots.fig6([0], [50.0], np.zeros(4)), "eigenvalues must be finite"),
                          (lambda: fourier.fourier_energy(np.ones(5)), "nads_images must be images"),
                          (lambda: fourier.fourier_energy(np.ones((0, 1, 4, 4))), "nads_images must be images")):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)


def test_small_doors_of_the_third_pass():
    """`out_side` of a negative side gave -3, `accuracy_range(step=0)` (0, 100), `concat_channels` of lists an
    AttributeError."""
    from nadcore import models
    from nadcore.plots import fourier as fourier_plots

    for call, message in ((lambda: models.out_side([torch.nn.Conv2d(1, 1, 3)], -1), "side must be an image side"),
                          (lambda: fourier_plots.accuracy_range({"a": [60.0]}, step=0), "step must be a number > 0"),
                          (lambda: data.concat_channels(([1], [0]), ([1], [0])), "first must be a dataset (x, y)")):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)


def test_last_doors_of_the_third_pass():
    """`train.fit` on data the model does not take was torch's RuntimeError; `bayes_accuracy` of (kx, ky) cells on a
    1-D spectrum a TypeError; `convergence({})` a KeyError; `fig1_accuracy({})` matplotlib's error."""
    from nadcore.plots import fourier as fourier_plots
    from nadcore.plots import nads as nad_plots

    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3, 2))
    data_ = ((torch.ones(4, 1, 2, 2), torch.tensor([0, 1, 0, 1])),) * 2
    for call, message in ((lambda: train.fit(net, data_, {"epochs": 1, "max_lr": 0.1}), "data must be inputs"),
                          (lambda: pooling.bayes_accuracy(pooling.prefilter("average", 8, 2), 2, 1.0, 1.0,
                                                          cells=[(1, 2)]), "cells must be ints l for a 1-D spectrum"),
                          (lambda: nad_plots.convergence({}), "conv must be what nads.convergence returns"),
                          (lambda: fourier_plots.fig1_accuracy({}, fourier.coarse_grid(8)), "accuracies must hold")):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)


class _FailsOnLargeBatches(torch.nn.Module):
    """Passes the door's checks (batches of 1, 2 and 12), then raises on the secant's probes (the fourth pass)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 1)

    def forward(self, x):
        if len(x) > 20:
            raise KeyError("layer3")
        return self.fc(x.flatten(1))


def test_doors_of_the_fourth_pass(tmp_path):
    """The fourth adversarial pass of issue 58: raw errors at the library's doors and a malformed record."""
    from nadcore import models

    cases = [(lambda: models.binomial_filter(2000), r"^size must be an integer in \[1, 64\]"),
             (lambda: train.lr_schedule(0.1, 10 ** 12), r"^iterations must be an integer in \[1, 100,000,000\]"),
             (lambda: train.lr_schedule(math.nan, 3), "^max_lr must be a finite number"),
             (lambda: train.predict(build("logreg"), torch.zeros(2, 1, 32, 32), batch_size=-1),
              r"^batch_size must be an integer >= 1"),
             (lambda: train.fit(build("logreg"), None, train.Recipe(1, 0.1), seed=[]), "^seed must be an int"),
             (lambda: estimate_kw(_FailsOnLargeBatches, 4, input_shape=(1, 4, 4), progress=False),
              r"^model failed while its networks' gradients were computed \(KeyError: 'layer3'\)"),
             (lambda: estimate_kw(lambda: torch.nn.Linear(16, 1, device="meta"), 4, input_shape=(16,),
                                    progress=False), "^model must build its parameters and buffers on a real device")]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    path = tmp_path / "r.npz"
    for record in ([1, 2], {"format": store.FORMAT, "settings": [], "arrays": {}}):
        np.savez(path, **{store.RECORD_KEY: np.frombuffer(__import__("json").dumps(record).encode(), np.uint8)})
        with pytest.raises(store.StoreError, match="has a malformed record"):
            store.read_record(path)
        with pytest.raises(store.StoreError, match="has a malformed record"):
            nads.NADResult.load(path)


def test_a_timm_that_does_not_import_is_named_so(monkeypatch):
    """Issue 60's newcomer: torchvision built for another torch made `import timm` raise a RuntimeError, which the
    command line blamed on the model's gradients (and on chunks it had not computed)."""
    import importlib

    from nadcore import extras

    def broken(name):
        raise RuntimeError("operator torchvision::nms does not exist")

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ValueError, match=r"^model must be a model of an installed timm \(a timm:NAME model needs "
                                         r"timm, which is installed but does not import \(RuntimeError: operator "
                                         r"torchvision::nms does not exist; torch and torchvision come from "
                                         r"different builds"):
        nads.one_output_factory("timm:convnext_atto")
    assert issubclass(extras.MissingExtra, ImportError)


def test_doors_of_the_fifth_pass(tmp_path):
    """The fifth adversarial pass of issue 58: fig6's indices and recipe_check's direction, checked in one line; a
    stored chunk rebuilt with its own hashes but another shape is refused naming the file."""
    from nadcore import learnability

    factory = lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 1))  # noqa: E731
    rows = np.eye(16, dtype=np.float32)
    for bad in (3, None):
        with pytest.raises(ValueError, match=r"^indices must be a list of NAD indices in \[0, 15\]"):
            learnability.fig6(factory, rows, bad, {"epochs": 1, "max_lr": 0.1}, input_shape=(1, 4, 4))
    for bad in (5, (1,), ("a", 0), (0.5, 0)):
        with pytest.raises(ValueError, match=r"^direction must be a \(kx, ky\) pair of integers"):
            learnability.recipe_check(factory, {"epochs": 1, "max_lr": 0.1}, direction=bad, input_shape=(1, 4, 4))
    kw = dict(input_shape=(1, 4, 4), progress=False, results_dir=tmp_path, name="lin")
    estimate_kw(factory, 4, **kw)
    [path] = (tmp_path / "nad_chunks").glob("*.npz")
    loaded = store.load(path)
    for shape in ((4, 17), (2, 16)):   # another D, fewer networks: each rebuilt with its own hashes
        store.save(path, {"gradients": np.ones(shape, dtype=np.float32)}, loaded.record["settings"])
        with pytest.raises(store.StoreError, match=f"^{path} is no chunk of 4 networks' gradients"):
            estimate_kw(factory, 4, **kw)


def test_a_model_that_cannot_be_copied_estimates_by_the_exact_gradient():
    """The sixth adversarial pass of issue 58: torch's old `weight_norm` makes a module that cannot be deep-copied,
    and the exact gradient's last batch, padded with copies, failed; it now runs that batch one network at a time."""
    import warnings

    def factory():
        m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # deprecated in favour of parametrizations.weight_norm
            torch.nn.utils.weight_norm(m[1])
        return m

    kw = dict(input_shape=(1, 4, 4), progress=False, device="cpu")
    auto, sec = (estimate_kw(factory, 6, method=m, **kw) for m in ("autograd", "secant"))
    np.testing.assert_allclose(auto.eigenvalues[:2], sec.eigenvalues[:2], rtol=1e-4)
